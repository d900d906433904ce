// A host C++ stand-in for the CUDA features of ptx/src/complex.cuh, so
// that its kernels compile for the CPU and run thread by thread: they use
// no barriers, shared memory or warp operations, so each thread runs to
// its end in turn. Floating-point contraction is off (-ffp-contract=off),
// as in the PTX (-fmad=false).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

using std::copysign;
using std::fabs;
using std::isfinite;
using std::isinf;
using std::isnan;

#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))

struct emu_dim3 {
    unsigned int x, y, z;
};
extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct float2 {
    float x, y;
};
struct double2 {
    double x, y;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }
inline float __double2float_rn(double v) { return (float)v; }

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
inline int atomicCAS(int *p, int cmp, int v) {
    int o = *p;
    if (o == cmp) *p = v;
    return o;
}
