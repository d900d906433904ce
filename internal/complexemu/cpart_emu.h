// What the complex partition kernel (ptx/src/cpart.cuh, with the parts of
// partition.cuh it includes) needs beyond emu.h: the rest of the CUDA
// features it names, and __syncthreads over fibers. Every thread of a
// block is a fiber (ucontext, the scheduler of internal/bandemu/fibers.h)
// on its own stack; cpart_emu_launch runs the blocks one after another,
// and within a block every live fiber in turn up to its next barrier or
// its end. The block's dynamic shared memory is
// filled with 0xff bytes (NaN) at its start, so that a read of a slot no
// thread wrote shows. Fibers never run at the same time: atomics are
// plain operations and fences do nothing. Warp operations are not
// emulated (the complex partition kernel has none; partition.cuh's
// kernels that use them are not compiled here).
#pragma once

#include <functional>

#include "emu.h"

#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) alignas(n)

struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }

inline int atomicMin(int *p, int v) {
    const int o = *p;
    if (v < o) *p = v;
    return o;
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    const unsigned o = *p;
    *p = o + v;
    return o;
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    const unsigned long long o = *p;
    *p = o + v;
    return o;
}
inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v) {
    const unsigned long long o = *p;
    if (v > o) *p = v;
    return o;
}
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline void __threadfence() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
// Never called: the kernels that shuffle are not compiled (BS_DEVICE_ONLY).
template <typename T> T __shfl_up_sync(unsigned, T v, int, int = 32) { return v; }
template <typename T> T __shfl_down_sync(unsigned, T v, int, int = 32) { return v; }

unsigned char *emu_dyn_smem();
void emu_syncthreads();
inline void __syncthreads() { emu_syncthreads(); }
void cpart_emu_launch(unsigned grid, unsigned block, size_t smem, const std::function<void()> &body);

#define PART_EMU
#define part_smem (emu_dyn_smem())
