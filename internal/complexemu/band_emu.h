// The CUDA stand-ins that the banded headers (ptx/src/band_common.cuh,
// band_pivot.cuh) need beyond emu.h, so that band_cpivot.cuh compiles as
// host C++: its kernel runs thread by thread with no barriers, shared
// memory or warp operations (the barrier below serves only functions of
// band_common.cuh that the kernel does not call).
#pragma once

#include <algorithm>
#include <cmath>

#include "emu.h"

using std::fmax;
using std::fmin;
using std::max;
using std::min;

#define __host__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static
#define __restrict__

inline void __syncthreads() {}
inline void __syncwarp(unsigned int = 0xffffffffu) {}

inline int atomicOr(int *p, int v) {
    int o = *p;
    *p = o | v;
    return o;
}
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    unsigned long long o = *p;
    if (v < o) *p = v;
    return o;
}
