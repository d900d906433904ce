//go:build cudaemu

// C entry points that run the truncated SPIKE kernels of
// ptx/src/band_spike.cuh (and the window kernels they build on) on the CPU
// with the fiber emulation of internal/bandemu, which this file includes
// whole (its scheduler and the banded kernels).

#pragma GCC optimize("fp-contract=off")

#include "../bandemu/emu.cc"
#include "band_spike.cuh"
#include "band_blocked.cuh"

namespace {
unsigned blocks(long long n, unsigned per) { return (unsigned)std::max(1LL, (n + per - 1) / per); }
} // namespace

extern "C" {

#define SPIKE_EMU(T, S)                                                                                             \
    void emu_spike_copy_##S(const T *src, T *dst1, T *dst2, int n, int K, unsigned long long *bad) {                \
        emu_launch(emu_dim3{blocks(n, 64), (unsigned)(2 * K + 1), 1}, emu_dim3{64, 1, 1}, 0,                        \
                   [&] { band_spike_copy_##S(src, dst1, dst2, n, K, bad); });                                       \
    }                                                                                                               \
    void emu_spike_ulblock_##S(const T *src, int n, int K, const int *bounds, int l, T *dst, int m2) {              \
        emu_launch(emu_dim3{blocks(m2, 64), (unsigned)(2 * K + 1), 1}, emu_dim3{64, 1, 1}, 0,                       \
                   [&] { band_spike_ulblock_##S(src, n, K, bounds, l, dst, m2); });                                 \
    }                                                                                                               \
    void emu_spike_factor_wide_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status,    \
                                   int threads, int shmem) {                                                        \
        emu_launch(emu_dim3{(unsigned)P, 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, (size_t)shmem,                   \
                   [&] { band_spike_factor_wide_##S(a, n, K, bounds, P, ul, tol, status); });                       \
    }                                                                                                               \
    void emu_spike_tips_##S(const T *lu, int n, int K, const int *bounds, int nI, const T *ulf, int nul, int l,     \
                            T *v, T *w) {                                                                           \
        emu_launch(emu_dim3{(unsigned)nI, 2, 1}, emu_dim3{(unsigned)K, 1, 1}, (size_t)K * K * sizeof(T),            \
                   [&] { band_spike_tips_##S(lu, n, K, bounds, ulf, nul, l, v, w); });                              \
    }                                                                                                               \
    void emu_spike_reduced_##S(const T *v, const T *w, int K, int nI, T *r, int *piv, double tau, int *rstat,       \
                               int threads) {                                                                       \
        emu_launch(emu_dim3{(unsigned)nI, 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, (size_t)K * K * sizeof(T),      \
                   [&] { band_spike_reduced_##S(v, w, K, nI, r, piv, tau, rstat); });                               \
    }                                                                                                               \
    void emu_spike_vcopy_##S(const T *src, T *dst, int n, unsigned long long *bad, int *flag) {                     \
        emu_launch(emu_dim3{blocks(n, 64), 1, 1}, emu_dim3{64, 1, 1}, 0,                                            \
                   [&] { band_spike_vcopy_##S(src, dst, n, bad, flag); });                                          \
    }                                                                                                               \
    void emu_spike_rsolve_##S(const T *lu, int n, int K, const int *bounds, int nI, const T *v, const T *w,         \
                              const T *r, const int *piv, const T *g, T *x) {                                       \
        emu_launch(emu_dim3{(unsigned)nI, 1, 1}, emu_dim3{(unsigned)K, 1, 1}, (size_t)3 * K * sizeof(T),            \
                   [&] { band_spike_rsolve_##S(lu, n, K, bounds, v, w, r, piv, g, x); });                           \
    }

SPIKE_EMU(float, f32)
SPIKE_EMU(double, f64)

// The blocked path (band_blocked.cuh), launched as cuda.SpikePlan does.
#define SPIKE_BLOCKED_EMU(T, S)                                                                                     \
    void emu_spike_factor_blocked_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status, \
                                      int threads, int shmem) {                                                     \
        emu_launch(emu_dim3{(unsigned)P, 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, (size_t)shmem,                   \
                   [&] { band_spike_factor_blocked_##S(a, n, K, bounds, P, ul, tol, status); });                    \
    }                                                                                                               \
    void emu_spike_tips_blocked_##S(const T *lu, int n, int K, const int *bounds, int nI, const T *ulf, int nul,     \
                                    int l, T *v, T *w) {                                                            \
        emu_launch(emu_dim3{(unsigned)nI, 2, blocks(K, SPIKE_TIPS_CW)}, emu_dim3{SPIKE_TIPS_THREADS, 1, 1},           \
                   (size_t)K * SPIKE_TIPS_CW * sizeof(T),                                                           \
                   [&] { band_spike_tips_blocked_##S(lu, n, K, bounds, ulf, nul, l, v, w); });                      \
    }                                                                                                               \
    void emu_spike_rform_##S(const T *v, const T *w, int K, int nI, T *r) {                                         \
        emu_launch(emu_dim3{blocks(K, 32), blocks(K, 32), (unsigned)nI}, emu_dim3{256, 1, 1}, 0,                    \
                   [&] { band_spike_rform_##S(v, w, K, r); });                                                      \
    }                                                                                                               \
    void emu_spike_rlu_##S(T *r, int K, int nI, int *piv, double tau, int *rstat, int threads) {                    \
        emu_launch(emu_dim3{(unsigned)nI, 1, 1}, emu_dim3{(unsigned)threads, 1, 1}, 0,                              \
                   [&] { band_spike_rlu_##S(r, K, nI, piv, tau, rstat); });                                         \
    }

SPIKE_BLOCKED_EMU(float, f32)
SPIKE_BLOCKED_EMU(double, f64)

void emu_spike_flags(const int *lust, int PL, const int *ulst, int PU, const int *rst, int nI,
                     const unsigned long long *bad, int *hdr) {
    emu_launch(emu_dim3{1, 1, 1}, emu_dim3{1, 1, 1}, 0, [&] { band_spike_flags(lust, PL, ulst, PU, rst, nI, bad, hdr); });
}
}
