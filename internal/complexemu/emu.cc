//go:build cudaemu

// The complex kernels (ptx/src/complex.cuh) run on the CPU, every thread
// of the grid in turn; the complex partition kernel (ptx/src/cpart.cuh)
// with every thread of a block a fiber (cpart_emu.h).

// No fused multiply-adds (the PTX is built with -fmad=false).
#pragma GCC optimize("fp-contract=off")

#include <vector>

#include "emu.h"
#include "cpart_emu.h"
#define BS_DEVICE_ONLY
#include "complex.cuh"
#include "cpart.cuh"
#include "emu_api.h"

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

template <typename C, typename R, int ALG>
static void run(const void *a, const void *b, const void *c, const void *d, void *x, void *work, int n, int G,
                long long es, long long bs, const double *ca, const double *cb, const double *cc, int isConst,
                int bounded, int cyclic, int *status) {
    const unsigned block = 128, grid = (G + block - 1) / block;
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned bx = 0; bx < grid; bx++)
        for (unsigned tx = 0; tx < block; tx++) {
            blockIdx = {bx, 0, 0};
            threadIdx = {tx, 0, 0};
            complex_kernel<C, ALG>((const C *)a, (const C *)b, (const C *)c, (const C *)d, (C *)x, (C *)work, n, G,
                                   es, bs, C{(R)ca[0], (R)ca[1]}, C{(R)cb[0], (R)cb[1]}, C{(R)cc[0], (R)cc[1]},
                                   isConst, bounded, cyclic, status);
        }
}

template <typename C, typename R>
static void dispatch(int alg, const void *a, const void *b, const void *c, const void *d, void *x, void *work, int n,
                     int G, long long es, long long bs, const double *ca, const double *cb, const double *cc,
                     int isConst, int bounded, int cyclic, int *status) {
    switch (alg) {
    case 0:
        run<C, R, CALG_THOMAS>(a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, bounded, cyclic, status);
        break;
    case 1:
        run<C, R, CALG_GTSV>(a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, bounded, cyclic, status);
        break;
    default:
        run<C, R, CALG_AUTO>(a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, bounded, cyclic, status);
    }
}

extern "C" void emu_complex_solve(int alg, int f64, const void *a, const void *b, const void *c, const void *d,
                                  void *x, void *work, int n, int G, long long es, long long bs, const double *ca,
                                  const double *cb, const double *cc, int isConst, int bounded, int cyclic,
                                  int *status) {
    if (f64)
        dispatch<double2, double>(alg, a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, bounded, cyclic,
                                  status);
    else
        dispatch<float2, float>(alg, a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, bounded, cyclic, status);
}

// ---- The fibers of the complex partition kernel (cpart_emu.h): bandemu's
// scheduler ----

#include "../bandemu/fibers.h"

void cpart_emu_launch(unsigned grid, unsigned block, size_t smem, const std::function<void()> &f) {
    emu_launch({grid, 1, 1}, {block, 1, 1}, smem, f, 0xff);
}

template <typename C, typename R>
static void cpart_run(const void *a, const void *b, const void *c, const void *d, void *x, int n, int G,
                      long long es, long long bs, const double *ca, const double *cb, const double *cc, int isConst,
                      int bounded, int *redo, int *status, int spb) {
    const int tps = (n + CPART_P - 1) / CPART_P;
    const size_t shared = 4 * (size_t)spb * cpart_ss(n, CPART_P) * sizeof(C) + 4 * (size_t)spb;
    cpart_emu_launch((G + spb - 1) / spb, spb * tps, shared, [&] {
        cpart_kernel<C, CPART_P>((const C *)a, (const C *)b, (const C *)c, (const C *)d, (C *)x, n, G, es, bs,
                                 C{(R)ca[0], (R)ca[1]}, C{(R)cb[0], (R)cb[1]}, C{(R)cc[0], (R)cc[1]}, isConst,
                                 bounded, redo, status, spb, tps);
    });
}

extern "C" void emu_cpart_solve(int f64, const void *a, const void *b, const void *c, const void *d, void *x, int n,
                                int G, long long es, long long bs, const double *ca, const double *cb,
                                const double *cc, int isConst, int bounded, int *redo, int *status, int spb) {
    if (f64)
        cpart_run<double2, double>(a, b, c, d, x, n, G, es, bs, ca, cb, cc, isConst, bounded, redo, status, spb);
    else
        cpart_run<float2, float>(a, b, c, d, x, n, G, es, bs, ca, cb, cc, isConst, bounded, redo, status, spb);
}
