// Thomas algorithm, one thread per system (TPR paper §2.1). The CPU twin is
// tri.Thomas: the same operations in the same order, so with -fmad=false
// the results agree bit for bit.
//
// work holds c' in the interleaved layout work[i*G + g], so that a warp's
// accesses to it are coalesced whatever the batch layout.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void thomas_kernel(Coeffs<T> k, const T *d, T *x, T *work, int n, int G, i64 es, i64 bs, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    T piv = k.B(base);
    if (bad_divisor(piv)) { fail_system(x, n, G, es, bs, g, 0, status); return; }
    T cp = k.C(base) / piv;
    T xp = d[base] / piv;
    x[base] = xp;
    work[g] = cp;
    for (int i = 1; i < n; i++) {
        const i64 idx = base + (i64)i * es;
        const T ai = k.A(idx);
        piv = k.B(idx) - ai * cp;
        if (bad_divisor(piv)) { fail_system(x, n, G, es, bs, g, i, status); return; }
        if (i < n - 1) cp = k.C(idx) / piv;
        xp = (d[idx] - ai * xp) / piv;
        x[idx] = xp;
        work[(i64)i * G + g] = cp;
    }
    int bad = isfinite(xp) ? -1 : n - 1;
    for (int i = n - 2; i >= 0; i--) {
        const i64 idx = base + (i64)i * es;
        xp = x[idx] - work[(i64)i * G + g] * xp;
        x[idx] = xp;
        if (!isfinite(xp)) bad = i;
    }
    if (bad >= 0) fail_system(x, n, G, es, bs, g, bad, status);
}

#define THOMAS(T, S)                                                                                         \
    extern "C" __global__ void thomas_##S(const T *a, const T *b, const T *c, const T *d, T *x, T *work, int n, \
                                          int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst, int *status) {  \
        thomas_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, work, n, G, es, bs, status);            \
    }
THOMAS(float, f32)
THOMAS(double, f64)
