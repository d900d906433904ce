// A host C++ stand-in for the CUDA features of ptx/src/spline.cuh, so that
// its kernels compile for the CPU and run thread by thread: the kernels
// use no shared memory or warp operations, so each thread runs to its end
// in turn. The one barrier, __syncthreads_or of spline_fit_rows, is its
// own thread's value: that kernel's emulation runs blocks of one thread. Floating-point contraction is off (-ffp-contract=off),
// as in the PTX (-fmad=false).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

using std::fmod;
using std::isfinite;
using std::isinf;
using std::max;
using std::min;
using std::round;

#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct emu_dim3 {
    unsigned int x, y, z;
};
extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

template <typename T> inline T __ldg(const T *p) { return *p; }
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
inline unsigned atomicOr(unsigned *p, unsigned v) {
    const unsigned o = *p;
    *p = o | v;
    return o;
}
// Blocks of one thread only (see above).
inline int __syncthreads_or(int p) { return p != 0; }
inline int atomicCAS(int *p, int cmp, int v) {
    int o = *p;
    if (o == cmp) *p = v;
    return o;
}
