// Gaussian elimination with partial pivoting, one thread per system, LAPACK
// gtsv semantics. The CPU twin is tri.GTSV: the same operations in the same
// order (with -fmad=false the results agree bit for bit). The thread keeps
// the row being eliminated in registers and streams the next one from
// global memory; the finished rows of the upper factor (dd, du, du2) go to
// the workspace in the interleaved layout work[k*n*G + i*G + g], the
// partially solved right-hand side to x.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void gtsv_kernel(Coeffs<T> k, const T *d, T *x, T *work, int n, int G, i64 es, i64 bs, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    const i64 plane = (i64)n * G;
    T *wdd = work, *wdu = work + plane, *wdu2 = work + 2 * plane;
    // Row i of the factor being built: dd, du and the right-hand side.
    T cdd = k.B(base);
    T cdu = n > 1 ? k.C(base) : T(0);
    T cx = d[base];
    for (int i = 0; i < n - 1; i++) {
        const i64 nidx = base + (i64)(i + 1) * es;
        const T dl = k.A(nidx);
        T ndd = k.B(nidx);
        T ndu = (i + 1 < n - 1) ? k.C(nidx) : T(0);
        T nx = d[nidx];
        T du2 = T(0);
        if (fabs(cdd) >= fabs(dl)) {
            // No interchange.
            if (cdd == T(0)) { fail_system(x, n, G, es, bs, g, i, status); return; }
            const T f = dl / cdd;
            ndd = ndd - f * cdu;
            nx = nx - f * cx;
        } else {
            // Interchange rows i and i+1.
            const T f = cdd / dl;
            const T tmp = ndd;
            ndd = cdu - f * tmp;
            if (i < n - 2) {
                du2 = ndu;
                ndu = -f * du2;
            }
            cdd = dl;
            cdu = tmp;
            const T xi = nx;
            nx = cx - f * nx;
            cx = xi;
        }
        const i64 w = (i64)i * G + g;
        wdd[w] = cdd;
        wdu[w] = cdu;
        wdu2[w] = du2;
        x[base + (i64)i * es] = cx;
        cdd = ndd;
        cdu = ndu;
        cx = nx;
    }
    if (cdd == T(0)) { fail_system(x, n, G, es, bs, g, n - 1, status); return; }
    // Back substitution with the upper factor (dd, du, du2).
    T x2 = cx / cdd; // x[n-1]
    x[base + (i64)(n - 1) * es] = x2;
    int bad = isfinite(x2) ? -1 : n - 1;
    if (n > 1) {
        const i64 w = (i64)(n - 2) * G + g, idx = base + (i64)(n - 2) * es;
        T x1 = (x[idx] - wdu[w] * x2) / wdd[w];
        x[idx] = x1;
        if (!isfinite(x1)) bad = n - 2;
        for (int i = n - 3; i >= 0; i--) {
            const i64 wi = (i64)i * G + g, ii = base + (i64)i * es;
            const T x0 = (x[ii] - wdu[wi] * x1 - wdu2[wi] * x2) / wdd[wi];
            x[ii] = x0;
            if (!isfinite(x0)) bad = i;
            x2 = x1;
            x1 = x0;
        }
    }
    if (bad >= 0) fail_system(x, n, G, es, bs, g, bad, status);
}

#define GTSV(T, S)                                                                                           \
    extern "C" __global__ void gtsv_##S(const T *a, const T *b, const T *c, const T *d, T *x, T *work, int n,  \
                                        int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst, int *status) {    \
        gtsv_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, work, n, G, es, bs, status);              \
    }
GTSV(float, f32)
GTSV(double, f64)
