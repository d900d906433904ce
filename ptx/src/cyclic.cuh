// Periodic (cyclic) systems by Sherman–Morrison, for any inner algorithm.
// The CPU twin is solveCyclic in package tridiag: corners alpha = a[0]
// (A[0][n-1]) and beta = c[n-1] (A[n-1][0]); gamma = -b[0] (or -1 when
// b[0] = 0); the inner solver sees b' with b'[0] = b[0] - gamma and
// b'[n-1] = b[n-1] - alpha/gamma*beta (α·β would overflow or underflow
// where α/γ does not), and the two right-hand sides d and
// u = (gamma, 0, ..., 0, beta).
//
// cyclic_prep writes, in the plan's layout, a2/b2/c2 (full coefficient
// arrays, so that constant-coefficient plans can change the ends) and u.
// cyclic_combine turns y (the solution for d, in x) into the solution:
// x = y - z (y0 + alpha/gamma y[n-1]) / (1 + z0 + alpha/gamma z[n-1]).
// For n = 1 and n = 2 the corners fold into the matrix (as the CPU does) and
// only the first inner solve runs.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void cyclic_gamma(Coeffs<T> k, i64 base, i64 last, T &alpha, T &beta, T &gamma) {
    alpha = k.A(base);
    beta = k.C(last);
    gamma = -k.B(base);
    if (gamma == T(0)) gamma = T(-1);
}

template <typename T>
__device__ void cyclic_prep_kernel(Coeffs<T> k, T *a2, T *b2, T *c2, T *u, int n, int G, i64 es, i64 bs) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (i64)n * G) return;
    const int g = (int)(t / n), i = (int)(t % n);
    const i64 base = (i64)g * bs, last = base + (i64)(n - 1) * es, idx = base + (i64)i * es;
    T alpha, beta, gamma;
    cyclic_gamma(k, base, last, alpha, beta, gamma);
    T ai = k.A(idx), bi = k.B(idx), ci = k.C(idx), ui = T(0);
    if (n == 1) {
        // Both corners sit on the diagonal (no Sherman–Morrison).
        bi = ai + bi + ci; ai = T(0); ci = T(0);
    } else if (n == 2) {
        // The corners add to the off-diagonals (no Sherman–Morrison).
        if (i == 0) { ci = ci + ai; ai = T(0); } else { ai = ai + ci; ci = T(0); }
    } else {
        if (i == 0) { ai = T(0); bi = bi - gamma; ui = gamma; }
        if (i == n - 1) { ci = T(0); bi = bi - alpha / gamma * beta; ui = beta; }
    }
    a2[idx] = ai; b2[idx] = bi; c2[idx] = ci; u[idx] = ui;
}

// One thread per system. x holds y; z is the solution for u.
template <typename T>
__device__ void cyclic_combine_kernel(Coeffs<T> k, T *x, const T *z, int n, int G, i64 es, i64 bs, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    if (status[g] != 0) return; // an inner solve already failed
    const i64 base = (i64)g * bs, last = base + (i64)(n - 1) * es;
    T alpha, beta, gamma;
    cyclic_gamma(k, base, last, alpha, beta, gamma);
    const T vy = x[base] + alpha / gamma * x[last];
    const T den = T(1) + z[base] + alpha / gamma * z[last];
    if (bad_divisor(den)) { fail_system(x, n, G, es, bs, g, n - 1, status); return; }
    const T f = vy / den;
    for (int i = 0; i < n; i++) {
        const i64 idx = base + (i64)i * es;
        x[idx] = x[idx] - f * z[idx];
    }
}

#define CYCLIC(T, S)                                                                                              \
    extern "C" __global__ void cyclic_prep_##S(const T *a, const T *b, const T *c, T ca, T cb, T cc, int isConst,   \
                                               T *a2, T *b2, T *c2, T *u, int n, int G, i64 es, i64 bs) {        \
        cyclic_prep_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, a2, b2, c2, u, n, G, es, bs);             \
    }                                                                                                             \
    extern "C" __global__ void cyclic_combine_##S(const T *a, const T *b, const T *c, T ca, T cb, T cc,           \
                                                  int isConst, T *x, const T *z, int n, int G, i64 es, i64 bs,    \
                                                  int *status) {                                                  \
        cyclic_combine_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, x, z, n, G, es, bs, status);           \
    }
CYCLIC(float, f32)
CYCLIC(double, f64)
