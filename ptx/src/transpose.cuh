// Layout changes for batches stored systems first (cuda/transpose.go): a batch
// in any layout (row i of system g at i*es + g*bs) gathered into
// contiguous systems (row i of system g at g*n + i) and back, through
// 32×32 tiles in shared memory so that both sides are read and written
// in whole sectors where their layout allows (the interleaved side along
// g, the contiguous side along i).
//
// layout_gather_*: out_z[g*n + i] = in_z[i*es + g*bs];
// layout_scatter_*: out_z[i*es + g*bs] = in_z[g*n + i];
// for the arrays z = 0 … gridDim.z−1 (at most four: a, b, c, d, or d
// alone, or x). Blocks of 32×8 threads; the grid's x dimension walks the
// tiles (any grid size works).
#pragma once
#include "common.cuh"

#define LT_TILE 32
#define LT_ROWS 8

template <typename T, bool GATHER>
__device__ __forceinline__ void layout_tiles(const T *in, T *out, int n, int G, i64 es, i64 bs) {
    __shared__ T tile[LT_TILE][LT_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const i64 ntile = (n + LT_TILE - 1) / LT_TILE, gtile = (G + LT_TILE - 1) / LT_TILE;
    for (i64 tb = blockIdx.x; tb < ntile * gtile; tb += gridDim.x) {
        const int i0 = (int)(tb % ntile) * LT_TILE, g0 = (int)(tb / ntile) * LT_TILE;
        // Read: tile[p][q] holds (i0+p, g0+q) when gathering (the
        // strided side along g), (g0+p, i0+q) when scattering (the
        // contiguous side along i).
#pragma unroll
        for (int r = 0; r < LT_TILE; r += LT_ROWS) {
            const int p = ty + r;
            if (GATHER) {
                const int i = i0 + p, g = g0 + tx;
                if (i < n && g < G) tile[p][tx] = in[(i64)i * es + (i64)g * bs];
            } else {
                const int g = g0 + p, i = i0 + tx;
                if (i < n && g < G) tile[p][tx] = in[(i64)g * n + i];
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < LT_TILE; r += LT_ROWS) {
            const int p = ty + r;
            if (GATHER) {
                const int g = g0 + p, i = i0 + tx;
                if (i < n && g < G) out[(i64)g * n + i] = tile[tx][p];
            } else {
                const int i = i0 + p, g = g0 + tx;
                if (i < n && g < G) out[(i64)i * es + (i64)g * bs] = tile[tx][p];
            }
        }
        __syncthreads();
    }
}

template <typename T>
__device__ __forceinline__ void layout_pick(int z, const T *i0, const T *i1, const T *i2, const T *i3, T *o0, T *o1,
                                            T *o2, T *o3, const T *&in, T *&out) {
    in = z == 0 ? i0 : z == 1 ? i1 : z == 2 ? i2 : i3;
    out = z == 0 ? o0 : z == 1 ? o1 : z == 2 ? o2 : o3;
}

#define LAYOUT_KERNEL(T, S, NAME, GATHER)                                                                           \
    extern "C" __global__ void __launch_bounds__(LT_TILE *LT_ROWS)                                                \
        layout_##NAME##_##S(const T *i0, const T *i1, const T *i2, const T *i3, T *o0, T *o1, T *o2, T *o3, int n, \
                            int G, i64 es, i64 bs) {                                                              \
        const T *in;                                                                                              \
        T *out;                                                                                                   \
        layout_pick<T>(blockIdx.z, i0, i1, i2, i3, o0, o1, o2, o3, in, out);                                      \
        layout_tiles<T, GATHER>(in, out, n, G, es, bs);                                                           \
    }
#define LAYOUT_KERNELS(T, S)                                                                                        \
    LAYOUT_KERNEL(T, S, gather, true)                                                                             \
    LAYOUT_KERNEL(T, S, scatter, false)

#ifndef BS_DEVICE_ONLY
LAYOUT_KERNELS(float, f32)
LAYOUT_KERNELS(double, f64)
#endif
