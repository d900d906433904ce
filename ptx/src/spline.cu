// bandsolve's spline kernels: one translation unit, one PTX module
// (ptx/spline.ptx): batched evaluation and integration of fitted cubic
// splines, and the rows and right-hand sides of their moment systems for a
// fit on the device (spline.cuh).
#include "spline.cuh"

#define SPLINE_KERNELS(T, SUF)                                                                                 \
    extern "C" __global__ void __launch_bounds__(SPLINE_EVAL_MAX_BLOCK)                                        \
        spline_eval_##SUF(const T *x, i64 xs, const T *y, const T *m, const T *t, i64 ts, int n, int count,    \
                          int P, int periodic, int cpk, T *val, T *der, T *der2, unsigned *flags) {            \
        spline_eval<T>(x, xs, y, m, t, ts, n, count, P, periodic, cpk, val, der, der2, flags);                 \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(SPLINE_BLOCK)                                                 \
        spline_integrate_##SUF(const T *x, i64 xs, const T *y, const T *m, int n, int count, int periodic,     \
                               const T *lower, const T *upper, i64 bs, T *out, unsigned *flags) {              \
        spline_integrate<T>(x, xs, y, m, n, count, periodic, lower, upper, bs, out, flags);                    \
    }

SPLINE_KERNELS(float, f32)
SPLINE_KERNELS(double, f64)

#define SPLINE_FIT_KERNELS(T, SUF)                                                                             \
    extern "C" __global__ void __launch_bounds__(SPLINE_FIT_BLOCK)                                             \
        spline_fit_knots_##SUF(const T *x, int n, unsigned *info, T *h) {                                      \
        spline_fit_knots<T>(x, n, info, h);                                                                    \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(SPLINE_ROWS_MAX_BLOCK)                                        \
        spline_fit_rows_##SUF(const T *x, i64 xs, const T *y, int n, int count, int kind, const T *d0,         \
                              const T *dn, i64 ss, T *a, T *b, T *c, T *d, unsigned *flags) {                  \
        spline_fit_rows<T>(x, xs, y, n, count, kind, d0, dn, ss, a, b, c, d, flags);                           \
    }                                                                                                          \
    extern "C" __global__ void __launch_bounds__(SPLINE_FIT_BLOCK) spline_fit_wrap_##SUF(T *m, int n, int count) { \
        spline_fit_wrap<T>(m, n, count);                                                                       \
    }

SPLINE_FIT_KERNELS(float, f32)
SPLINE_FIT_KERNELS(double, f64)
