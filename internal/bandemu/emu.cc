//go:build cudaemu

// The fiber scheduler (fibers.h) and the C entry points that package bandemu
// calls: they launch the banded kernels of ptx/src on the CPU.

// No fused multiply-adds (the PTX is built with -fmad=false); x86-64
// without -mfma has none anyway.
#pragma GCC optimize("fp-contract=off")

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "emu.h"

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

#include "fibers.h"

#include "banded.cu"
// The layout kernels of the tridiagonal module (cuda/transpose.go), for
// their index arithmetic: they are plain copies, with no banded code.
#include "transpose.cuh"

// Entry points for Go. Kernels are chosen by precision, K and variant.
extern "C" {

#define EMU_BATCH_CASE(T, S, K)                                                                                     \
    case K:                                                                                                         \
        emu_launch(grid, block, 0,                                                                                  \
                   [&] { band_batch_##S##_k##K(a, d, x, w, n, G, Gp, aes, abs_, des, dbs, tol, flags, status); });     \
        return 0;

#define EMU_BATCH(T, S)                                                                                             \
    int emu_band_batch_##S(int K, const T *a, const T *d, T *x, T *w, int n, int G, int Gp, i64 aes,     \
                           i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads) {           \
        emu_dim3 grid{(unsigned)(Gp / threads), 1, 1}, block{(unsigned)threads, 1, 1};                              \
        switch (K) {                                                                                                \
            EMU_BATCH_CASE(T, S, 1)                                                                                 \
            EMU_BATCH_CASE(T, S, 2)                                                                                 \
            EMU_BATCH_CASE(T, S, 3)                                                                                 \
            EMU_BATCH_CASE(T, S, 4)                                                                                 \
            EMU_BATCH_CASE(T, S, 5)                                                                                 \
            EMU_BATCH_CASE(T, S, 6)                                                                                 \
            EMU_BATCH_CASE(T, S, 7)                                                                                 \
            EMU_BATCH_CASE(T, S, 8)                                                                                 \
        }                                                                                                           \
        return -1;                                                                                                  \
    }                                                                                                               \
    void emu_band_factor_window_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status,  \
                                    int threads) {                                                                  \
        emu_launch(emu_dim3{(unsigned)P, 1, 1}, emu_dim3{(unsigned)threads, 1, 1},                                 \
                   (size_t)(K + 2) * (K + 2) * sizeof(T),                                                           \
                   [&] { band_factor_window_##S(a, n, K, bounds, P, ul, tol, status); });                           \
    }                                                                                                               \
    void emu_band_solve_window_##S(const T *a, int n, int K, const int *bounds, int P, int ul, T *b, int nrhs,      \
                                   i64 ldb, int sweeps, int cpb) {                                                  \
        emu_launch(emu_dim3{(unsigned)P, (unsigned)((nrhs + cpb - 1) / cpb), 1}, emu_dim3{(unsigned)(K * cpb), 1, 1}, \
                   (size_t)(K + 1) * cpb * sizeof(T),                                                               \
                   [&] { band_solve_window_##S(a, n, K, bounds, ul, b, nrhs, ldb, sweeps); });                      \
    }

EMU_BATCH(float, f32)
EMU_BATCH(double, f64)

#define EMU_VARIANT(S, D)                                                                                           \
    case D:                                                                                                         \
        f = [&] { band_batch_##S##_k2_d##D(a, d, x, w, n, G, Gp, aes, abs_, des, dbs, tol, flags, status); };      \
        break;

// The K = 2 kernels of other prefetch depths (v = the depth).
int emu_band_batch_variant_f32(int v, const float *a, const float *d, float *x, float *w, int n, int G, int Gp, i64 aes,
                               i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads) {
    std::function<void()> f;
    switch (v) {
        EMU_VARIANT(f32, 4)
        EMU_VARIANT(f32, 24)
    default:
        return -1;
    }
    emu_launch(emu_dim3{(unsigned)(Gp / threads), 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, 0, f);
    return 0;
}

int emu_band_batch_variant_f64(int v, const double *a, const double *d, double *x, double *w, int n, int G, int Gp,
                               i64 aes, i64 abs_, i64 des, i64 dbs, double tol, int flags, int *status, int threads) {
    std::function<void()> f;
    switch (v) {
        EMU_VARIANT(f64, 4)
    default:
        return -1;
    }
    emu_launch(emu_dim3{(unsigned)(Gp / threads), 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, 0, f);
    return 0;
}

// emu_layout_*: layout_gather_* (gather != 0) or layout_scatter_* over
// count arrays, grid blocks of 32×8 threads (the launch of
// cuda/transpose.go).
#define EMU_LAYOUT(T, S)                                                                                            \
    void emu_layout_##S(int gather, const T *i0, const T *i1, const T *i2, const T *i3, T *o0, T *o1, T *o2, T *o3, \
                        int count, int n, int G, i64 es, i64 bs, int grid) {                                        \
        emu_launch(emu_dim3{(unsigned)grid, 1, (unsigned)count}, emu_dim3{32, 8, 1}, 0, [&] {                        \
            if (gather)                                                                                             \
                layout_gather_##S(i0, i1, i2, i3, o0, o1, o2, o3, n, G, es, bs);                                    \
            else                                                                                                    \
                layout_scatter_##S(i0, i1, i2, i3, o0, o1, o2, o3, n, G, es, bs);                                   \
        });                                                                                                         \
    }
EMU_LAYOUT(float, f32)
EMU_LAYOUT(double, f64)
}
