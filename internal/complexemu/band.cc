//go:build cudaemu

// The complex pivoting band batch kernel (ptx/src/band_cpivot.cuh) runs on
// the CPU, every thread of the grid in turn.

// No fused multiply-adds (the PTX is built with -fmad=false).
#pragma GCC optimize("fp-contract=off")

#include "band_emu.h"
#include "band_api.h"

// The headers go into a namespace of their own: complex.cuh's out-of-line
// functions are also in emu.cc.
#define BS_DEVICE_ONLY
namespace cband {
#include "band_cpivot.cuh"
}
using cband::band_batch_cpivot_kernel;

template <typename C, int K>
static void run(const void *a, const void *d, void *x, void *w, int *piv, int n, int G, int Gp, long long aes,
                long long abs_, long long des, long long dbs, int flags, int *status) {
    const unsigned block = 32, grid = (G + block - 1) / block;
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned bx = 0; bx < grid; bx++)
        for (unsigned tx = 0; tx < block; tx++) {
            blockIdx = {bx, 0, 0};
            threadIdx = {tx, 0, 0};
            band_batch_cpivot_kernel<C, K>((const C *)a, (const C *)d, (C *)x, (C *)w, piv, n, G, Gp, aes, abs_,
                                           des, dbs, flags, status);
        }
}

template <typename C>
static int dispatch(int k, const void *a, const void *d, void *x, void *w, int *piv, int n, int G, int Gp,
                    long long aes, long long abs_, long long des, long long dbs, int flags, int *status) {
    switch (k) {
#define CASE(K)                                                                                                   \
    case K:                                                                                                       \
        run<C, K>(a, d, x, w, piv, n, G, Gp, aes, abs_, des, dbs, flags, status);                                 \
        return 0;
        CASE(1)
        CASE(2)
        CASE(3)
        CASE(4)
        CASE(5)
        CASE(6)
        CASE(7)
        CASE(8)
#undef CASE
    }
    return -1;
}

extern "C" int emu_band_cpivot(int f64, int k, const void *a, const void *d, void *x, void *w, int *piv, int n,
                               int G, int Gp, long long aes, long long abs_, long long des, long long dbs, int flags,
                               int *status) {
    if (f64) return dispatch<double2>(k, a, d, x, w, piv, n, G, Gp, aes, abs_, des, dbs, flags, status);
    return dispatch<float2>(k, a, d, x, w, piv, n, G, Gp, aes, abs_, des, dbs, flags, status);
}
