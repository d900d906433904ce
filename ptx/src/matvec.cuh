// y = α·T·x + β·y for a batch of tridiagonal matrices T in the plan's
// layout: one thread per row (y is not read when β = 0, so it may hold
// anything, NaN included). Row i of system g: y_i = a_i x_{i-1} + b_i x_i + c_i x_{i+1},
// with x_{-1} = x_{n-1} and x_n = x_0 when cyclic (the corners a_0 and
// c_{n-1}), and those terms dropped otherwise. The explicit half-steps of
// ADI schemes and residual checks use it. y must not alias x.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void matvec_kernel(Coeffs<T> k, const T *x, T *y, int n, int G, i64 es, i64 bs, int cyclic, T alpha,
                              T beta) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (i64)n * G) return;
    // Rows of one system are adjacent in t when the rows are the
    // fastest-varying index (es = 1), systems otherwise: coalesced either way.
    int g, i;
    if (es <= bs) { g = (int)(t / n); i = (int)(t % n); }
    else { i = (int)(t / G); g = (int)(t % G); }
    const i64 base = (i64)g * bs, idx = base + (i64)i * es;
    T v = k.B(idx) * x[idx];
    if (i > 0) v = v + k.A(idx) * x[idx - es];
    else if (cyclic) v = v + k.A(idx) * x[base + (i64)(n - 1) * es];
    if (i < n - 1) v = v + k.C(idx) * x[idx + es];
    else if (cyclic) v = v + k.C(idx) * x[base];
    if (alpha != T(1)) v = alpha * v;
    if (beta != T(0)) v = v + beta * y[idx];
    y[idx] = v;
}

#define MATVEC(T, S)                                                                                         \
    extern "C" __global__ void matvec_##S(const T *a, const T *b, const T *c, T ca, T cb, T cc, int isConst,   \
                                          const T *x, T *y, int n, int G, i64 es, i64 bs, int cyclic,        \
                                          T alpha, T beta) {                                                  \
        matvec_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, x, y, n, G, es, bs, cyclic, alpha, beta);  \
    }
MATVEC(float, f32)
MATVEC(double, f64)
