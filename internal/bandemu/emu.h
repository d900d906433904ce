// A small emulation of the CUDA features that bandsolve's banded kernels use
// (ptx/src/band_*.cuh), so that they compile as host C++ and run on the CPU
// for testing their logic without a GPU. Each thread of a block is a fiber
// (ucontext); __syncthreads switches back to the block's scheduler, which
// runs every live fiber up to its next barrier in turn. Fibers never run at
// the same time, so atomics are plain operations. Warp-level features are
// no-ops (__syncwarp) or absent; cache hints are plain loads and stores.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

using std::max;
using std::min;

#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static
#define __restrict__

struct emu_dim3 {
    unsigned int x, y, z;
};
extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

unsigned char *emu_dyn_smem();
void emu_syncthreads();
#define BAND_DYN_SMEM(name) unsigned char *name = emu_dyn_smem()

inline void __syncthreads() { emu_syncthreads(); }
inline void __syncwarp(unsigned int = 0xffffffffu) {}

template <typename T> inline T __ldg(const T *p) { return *p; }
template <typename T> inline T __ldcs(const T *p) { return *p; }
template <typename T> inline void __stcs(T *p, T v) { *p = v; }

inline float __int_as_float(int v) {
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}
inline double __longlong_as_double(long long v) {
    double f;
    std::memcpy(&f, &v, 8);
    return f;
}

inline int atomicOr(int *p, int v) {
    int o = *p;
    *p = o | v;
    return o;
}
inline int atomicCAS(int *p, int cmp, int v) {
    int o = *p;
    if (o == cmp) *p = v;
    return o;
}
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    unsigned long long o = *p;
    if (v < o) *p = v;
    return o;
}

// emu_launch runs body for every thread of the grid, block after block;
// smem bytes of dynamic shared memory are zero-filled before each block.
void emu_launch(emu_dim3 grid, emu_dim3 block, size_t smem, const std::function<void()> &body, unsigned char fill = 0);
