// The accuracy check of a solve whose data stay on the device
// (tridiag.Options.Check on a GPU plan's device-buffer solves): one block
// per system measures, in double precision, ‖d − A·x‖∞, ‖A‖∞ (the largest
// row sum of |a|, |b|, |c|), ‖x‖∞ and ‖d‖∞, as tridiag's host check does
// (the corners a_0 and c_{n−1} when cyclic), into out[4g … 4g+3]; a
// non-finite x makes the residual +Inf. The host forms the normwise
// backward error from them.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void tri_backward_kernel(Coeffs<T> k, const T *d, const T *x, int n, int G, i64 es, i64 bs, int cyclic,
                                    double *out) {
    __shared__ double red[4][32];
    const int g = blockIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    double res = 0, na = 0, nx = 0, nd = 0;
    bool bad = false;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const i64 idx = base + (i64)i * es;
        const bool left = i > 0 || cyclic, right = i < n - 1 || cyclic;
        const double xi = x[idx], di = d[idx], bi = k.B(idx);
        const double ai = left ? (double)k.A(idx) : 0.0, ci = right ? (double)k.C(idx) : 0.0;
        const double xl = left ? (double)x[i > 0 ? idx - es : base + (i64)(n - 1) * es] : 0.0;
        const double xr = right ? (double)x[i < n - 1 ? idx + es : base] : 0.0;
        const double r = di - ((ai * xl + bi * xi) + ci * xr);
        res = fmax(res, fabs(r));
        na = fmax(na, (fabs(ai) + fabs(bi)) + fabs(ci));
        nx = fmax(nx, fabs(xi));
        nd = fmax(nd, fabs(di));
        if (!isfinite(xi)) bad = true;
    }
    if (bad) res = __longlong_as_double(0x7ff0000000000000LL);
    // Block maxima: warp shuffles, then the warps' maxima in shared memory.
    double v[4] = {res, na, nx, nd};
    for (int q = 0; q < 4; q++)
        for (int o = 16; o > 0; o >>= 1) v[q] = fmax(v[q], __shfl_down_sync(0xffffffffu, v[q], o));
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    if (lane == 0)
        for (int q = 0; q < 4; q++) red[q][w] = v[q];
    __syncthreads();
    if (threadIdx.x < 4) {
        double m = 0;
        for (int j = 0; j < nw; j++) m = fmax(m, red[threadIdx.x][j]);
        out[4 * (i64)g + threadIdx.x] = m;
    }
}

#ifndef BS_DEVICE_ONLY
#define TRI_BACKWARD(T, S)                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        tri_backward_##S(const T *a, const T *b, const T *c, const T *d, const T *x, int n, int G, i64 es, i64 bs, \
                         T ca, T cb, T cc, int isConst, int cyclic, double *out) {                                 \
        tri_backward_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, cyclic, out);          \
    }
TRI_BACKWARD(float, f32)
TRI_BACKWARD(double, f64)
#endif
