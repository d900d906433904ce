//go:build cudaemu

// The spline kernels (ptx/src/spline.cuh) run on the CPU, every thread of
// the grid in turn.

// No fused multiply-adds (the PTX is built with -fmad=false).
#pragma GCC optimize("fp-contract=off")

#include "emu.h"
#include "spline.cuh"
#include "emu_api.h"

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

template <typename F> static void run(unsigned gx, unsigned gy, unsigned bd, F body) {
    gridDim = {gx, gy, 1};
    blockDim = {bd, 1, 1};
    for (unsigned by = 0; by < gy; by++)
        for (unsigned bx = 0; bx < gx; bx++)
            for (unsigned tx = 0; tx < bd; tx++) {
                blockIdx = {bx, by, 0};
                threadIdx = {tx, 0, 0};
                body();
            }
}

#define EMU_EVAL(T, SUF)                                                                                            \
    void emu_spline_eval_##SUF(unsigned gx, unsigned gy, unsigned bd, const T *x, long long xs, const T *y, const T *m,          \
                               const T *t, long long ts, int n, int count, int P, int periodic, int cpk, T *val,   \
                               T *der, T *der2, unsigned *flags) {                                                 \
        run(gx, gy, bd, [&] { spline_eval<T>(x, xs, y, m, t, ts, n, count, P, periodic, cpk, val, der, der2, flags); }); \
    }                                                                                                               \
    void emu_spline_integrate_##SUF(unsigned gx, const T *x, long long xs, const T *y, const T *m, int n,          \
                                    int count, int periodic, const T *lo, const T *hi, long long bs, T *out,       \
                                    unsigned *flags) {                                                             \
        run(gx, 1, SPLINE_BLOCK, [&] { spline_integrate<T>(x, xs, y, m, n, count, periodic, lo, hi, bs, out, flags); });         \
    }

// spline_fit_rows runs blocks of one thread (its barrier, emu.h).
#define EMU_FIT(T, SUF)                                                                                             \
    void emu_spline_fit_knots_##SUF(unsigned gx, unsigned bd, const T *x, int n, unsigned *info, T *h) {           \
        run(gx, 1, bd, [&] { spline_fit_knots<T>(x, n, info, h); });                                                \
    }                                                                                                               \
    void emu_spline_fit_rows_##SUF(unsigned gx, const T *x, long long xs, const T *y, int n, int count, int kind,  \
                                   const T *d0, const T *dn, long long ss, T *a, T *b, T *c, T *d,                 \
                                   unsigned *flags) {                                                              \
        run(gx, 1, 1, [&] { spline_fit_rows<T>(x, xs, y, n, count, kind, d0, dn, ss, a, b, c, d, flags); });        \
    }                                                                                                               \
    void emu_spline_fit_wrap_##SUF(unsigned gx, unsigned bd, T *m, int n, int count) {                              \
        run(gx, 1, bd, [&] { spline_fit_wrap<T>(m, n, count); });                                                   \
    }

extern "C" {
EMU_EVAL(float, f32)
EMU_EVAL(double, f64)
EMU_FIT(float, f32)
EMU_FIT(double, f64)
}
