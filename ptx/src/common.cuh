// Shared helpers of bandsolve's kernels.
//
// Conventions of every tridiagonal kernel:
//   - a batch of G systems of n rows; row i of system g is at
//     i*es + g*bs (element stride es, batch stride bs, both long long);
//   - a (sub-diagonal, a[0] ignored), b (diagonal), c (super-diagonal,
//     c[n-1] ignored), d (right-hand side), x (solution, may alias d);
//   - isConst != 0: the coefficient arrays are not read, every row uses
//     ca, cb, cc instead;
//   - status: G int codes then one flag; a system that breaks down (zero
//     pivot, or a non-finite solution) writes row+1 to status[g] (the
//     smallest such row when the kernel can tell), sets status[G] = 1 and
//     fills its rows of x with NaN.
//   - extern "C" names end in _f32 or _f64;
//   - a translation unit that defines BS_DEVICE_ONLY before including a
//     header gets its device functions without its kernels (cluster.cu).
#pragma once

typedef long long i64;

template <typename T> __device__ __forceinline__ T nan_of();
template <> __device__ __forceinline__ float nan_of<float>() { return __int_as_float(0x7fffffff); }
template <> __device__ __forceinline__ double nan_of<double>() { return __longlong_as_double(0x7fffffffffffffffLL); }

// bad_divisor: zero, NaN or infinite.
template <typename T> __device__ __forceinline__ bool bad_divisor(T v) { return v == T(0) || !isfinite(v); }

// Coefficient access that folds in the constant-coefficient case.
template <typename T> struct Coeffs {
    const T *a, *b, *c;
    T ca, cb, cc;
    int isConst;
    __device__ __forceinline__ T A(i64 k) const { return isConst ? ca : a[k]; }
    __device__ __forceinline__ T B(i64 k) const { return isConst ? cb : b[k]; }
    __device__ __forceinline__ T C(i64 k) const { return isConst ? cc : c[k]; }
};

// fail marks system g as broken down at row and fills its x with NaN.
// Call from one thread per system.
template <typename T>
__device__ void fail_system(T *x, int n, int G, i64 es, i64 bs, int g, int row, int *status) {
    atomicCAS(&status[g], 0, row + 1);
    status[G] = 1;
    const T q = nan_of<T>();
    for (int i = 0; i < n; i++) x[i * es + g * bs] = q;
}

// prefetch_l2 asks L2 for the 128-byte lines of elements first … end−1 (of
// elem bytes) of base, a line a thread of the block.
__device__ __forceinline__ void prefetch_l2(const void *base, int first, int end, int elem) {
    const unsigned lo = (unsigned)(((unsigned long long)first * elem) >> 7);
    const unsigned hi = (unsigned)(((unsigned long long)end * elem + 127) >> 7);
#pragma unroll 1
    for (unsigned line = lo + threadIdx.x; line < hi; line += blockDim.x)
        asm volatile("prefetch.global.L2 [%0];" ::"l"((const char *)base + ((unsigned long long)line << 7)));
}
