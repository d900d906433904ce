// Vector kernels of the GPU Krylov space (cuda/krylov.go): the float64
// vector updates and inner products of BiCGStab(2), the float64/float32
// conversions around a float32 preconditioner, and the CSR sparse
// matrix-vector product (spike-gpu-li2014 §3-4: float64 Krylov iterations
// with a float32 preconditioner, CSR SpMV on the GPU).
//
// Conventions:
//   - vectors have n elements (long long); element-wise kernels loop over
//     them grid-stride, so any grid works;
//   - every kernel here runs with VEC_BLOCK threads per block;
//   - the reductions (vec_dots_f64, vec_amax_f64) are deterministic: each
//     thread sums a fixed subset of the elements in index order, then fixed
//     trees (warp shuffles, then over warps, then over blocks in the last
//     block to finish) combine the partial results. No floating-point
//     atomics, so for a given n and grid the results are the same bit for
//     bit on every call. The last block writes the results to out (mapped
//     host memory, typically), resets the block counter and, when word is
//     not null, writes seq to the completion word like signal_done;
//   - with -fmad=false, the element-wise kernels round every product and
//     sum like Go does, so they agree with krylov.HostSpace bit for bit.
#pragma once
#include "common.cuh"

#define VEC_BLOCK 256
#define VEC_WARPS (VEC_BLOCK / 32)
// Inner products per vec_dots_f64 launch: one warp of the block per pair
// in the cross-warp stage.
#define VEC_DOTS_MAX 8

// y = alpha*x + beta*y. beta == 0: y is not read (NaN in y does not
// propagate); beta == 1: y + alpha*x, the axpy.
template <typename T> __device__ __forceinline__ void vec_axpby(i64 n, T alpha, const T *x, T beta, T *y) {
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x;
    if (beta == T(0)) {
        for (; i < n; i += stride) y[i] = alpha * x[i];
    } else if (beta == T(1)) {
        for (; i < n; i += stride) y[i] = y[i] + alpha * x[i];
    } else {
        for (; i < n; i += stride) y[i] = alpha * x[i] + beta * y[i];
    }
}

extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_axpby_f64(i64 n, double alpha, const double *x, double beta, double *y) {
    vec_axpby<double>(n, alpha, x, beta, y);
}
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_axpby_f32(i64 n, float alpha, const float *x, float beta, float *y) {
    vec_axpby<float>(n, alpha, x, beta, y);
}

// y = d .* x, element by element (a diagonal scaling: Jacobi
// preconditioning). y may be x.
template <typename T> __device__ __forceinline__ void vec_mul(i64 n, const T *d, const T *x, T *y) {
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    for (i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x; i < n; i += stride) y[i] = d[i] * x[i];
}

extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_mul_f64(i64 n, const double *d, const double *x, double *y) {
    vec_mul<double>(n, d, x, y);
}
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_mul_f32(i64 n, const float *d, const float *x, float *y) {
    vec_mul<float>(n, d, x, y);
}

// y32 = (float)(x * scale), rounded to nearest, like Go's
// float32(x*scale). When scalep is not null the scale is *scalep (as
// written by vec_amax_f64) instead of the argument.
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_f64_to_f32(i64 n, double scale, const double *scalep, const double *x, float *y) {
    if (scalep != nullptr) scale = *scalep;
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    for (i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x; i < n; i += stride) y[i] = __double2float_rn(x[i] * scale);
}

// y64 = (double)x32 * scale, like Go's float64(x)*scale; scalep as in
// vec_f64_to_f32.
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_f32_to_f64(i64 n, double scale, const double *scalep, const float *x, double *y) {
    if (scalep != nullptr) scale = *scalep;
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    for (i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x; i < n; i += stride) y[i] = (double)x[i] * scale;
}

// Reduction operators: a sum, and the largest magnitude with NaN winning
// (a NaN anywhere gives NaN, as krylov.MixedPrecision's scan does).
struct VecSum {
    static __device__ __forceinline__ double op(double a, double b) { return a + b; }
};
struct VecMax {
    static __device__ __forceinline__ double op(double a, double b) { return (b > a || b != b) ? b : a; }
};

// vec_warp_reduce combines v over the warp by a butterfly; every lane
// gets the same value (each combination is commutative).
template <typename Op> __device__ __forceinline__ double vec_warp_reduce(double v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = Op::op(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// vec_last_block returns true, in every thread of it, in the block that
// counts itself last in *counter; the other blocks' stores made before
// their count are then visible to it.
__device__ __forceinline__ bool vec_last_block(unsigned int *counter) {
    __shared__ bool last;
    __threadfence(); // release this thread's partial results
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) __threadfence(); // acquire the other blocks' results
    return last;
}

// vec_finish ends a reduction in the last block, after its result writers
// fenced their stores: the counter is reset for the next launch and the
// completion word, when given, receives seq.
__device__ __forceinline__ void vec_finish(unsigned int *counter, volatile unsigned int *word, unsigned int seq) {
    __syncthreads();
    if (threadIdx.x == 0) {
        *counter = 0;
        if (word != nullptr) {
            __threadfence_system();
            *word = seq;
            __threadfence_system();
        }
    }
}

// vec_dots computes out[j] = xs[j]·ys[j] for j < K. partial holds
// K*gridDim.x doubles (pair j of block b at j*gridDim.x + b).
template <int K>
__device__ __forceinline__ void vec_dots(i64 n, const double *const *xs, const double *const *ys, double *partial,
                                         unsigned int *counter, double *out, volatile unsigned int *word,
                                         unsigned int seq) {
    double acc[K];
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] = 0.0;
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    for (i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x; i < n; i += stride) {
        // Pairs that share a vector load it again: those loads hit L1.
#pragma unroll
        for (int j = 0; j < K; j++) acc[j] = acc[j] + xs[j][i] * ys[j][i];
    }
    __shared__ double sh[VEC_DOTS_MAX][VEC_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < K; j++) {
        const double v = vec_warp_reduce<VecSum>(acc[j]);
        if (lane == 0) sh[j][warp] = v;
    }
    __syncthreads();
    // Warp j sums pair j over the warps, then, in the last block, over the
    // blocks.
    if (warp < K) {
        double v = vec_warp_reduce<VecSum>(lane < VEC_WARPS ? sh[warp][lane] : 0.0);
        if (lane == 0) partial[(i64)warp * gridDim.x + blockIdx.x] = v;
    }
    if (!vec_last_block(counter)) return;
    if (warp < K) {
        double v = 0.0;
        for (unsigned int b = lane; b < gridDim.x; b += 32) v = v + __ldcg(&partial[(i64)warp * gridDim.x + b]);
        v = vec_warp_reduce<VecSum>(v);
        if (lane == 0) {
            out[warp] = v;
            __threadfence_system();
        }
    }
    vec_finish(counter, word, seq);
}

// vec_dots_f64 computes K ≤ VEC_DOTS_MAX inner products xj·yj in one
// sweep (unused pointers may be null), leaving them in out[0..K).
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_dots_f64(i64 n, int K, const double *x0, const double *y0, const double *x1, const double *y1,
                 const double *x2, const double *y2, const double *x3, const double *y3, const double *x4,
                 const double *y4, const double *x5, const double *y5, const double *x6, const double *y6,
                 const double *x7, const double *y7, double *partial, unsigned int *counter, double *out,
                 volatile unsigned int *word, unsigned int seq) {
    const double *const xs[VEC_DOTS_MAX] = {x0, x1, x2, x3, x4, x5, x6, x7};
    const double *const ys[VEC_DOTS_MAX] = {y0, y1, y2, y3, y4, y5, y6, y7};
    switch (K) {
    case 1: vec_dots<1>(n, xs, ys, partial, counter, out, word, seq); break;
    case 2: vec_dots<2>(n, xs, ys, partial, counter, out, word, seq); break;
    case 3: vec_dots<3>(n, xs, ys, partial, counter, out, word, seq); break;
    case 4: vec_dots<4>(n, xs, ys, partial, counter, out, word, seq); break;
    case 5: vec_dots<5>(n, xs, ys, partial, counter, out, word, seq); break;
    case 6: vec_dots<6>(n, xs, ys, partial, counter, out, word, seq); break;
    case 7: vec_dots<7>(n, xs, ys, partial, counter, out, word, seq); break;
    case 8: vec_dots<8>(n, xs, ys, partial, counter, out, word, seq); break;
    }
}

// vec_amax_f64 sets out[0] = max |x_i| (NaN if any x_i is NaN) and, when
// scale is not null, scale[0] = 2^-e and scale[1] = 2^e where
// out[0] = f·2^e with f in [0.5, 1) (both 1 when out[0] is 0 or not
// finite): the scaling of krylov.MixedPrecision, which brings the largest
// entry into [0.5, 1) before rounding to float32. The scales are written
// to out[1] and out[2] too.
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    vec_amax_f64(i64 n, const double *x, double *partial, unsigned int *counter, double *out, double *scale,
                 volatile unsigned int *word, unsigned int seq) {
    double m = 0.0;
    const i64 stride = (i64)gridDim.x * VEC_BLOCK;
    for (i64 i = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x; i < n; i += stride) m = VecMax::op(m, fabs(x[i]));
    __shared__ double sh[VEC_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    m = vec_warp_reduce<VecMax>(m);
    if (lane == 0) sh[warp] = m;
    __syncthreads();
    if (warp == 0) {
        m = vec_warp_reduce<VecMax>(lane < VEC_WARPS ? sh[lane] : 0.0);
        if (lane == 0) partial[blockIdx.x] = m;
    }
    if (!vec_last_block(counter)) return;
    if (warp == 0) {
        m = 0.0;
        for (unsigned int b = lane; b < gridDim.x; b += 32) m = VecMax::op(m, __ldcg(&partial[b]));
        m = vec_warp_reduce<VecMax>(m);
        if (lane == 0) {
            double down = 1.0, up = 1.0;
            if (m > 0.0 && isfinite(m)) {
                int e;
                frexp(m, &e);
                down = ldexp(1.0, -e);
                up = ldexp(1.0, e);
            }
            if (scale != nullptr) {
                scale[0] = down;
                scale[1] = up;
            }
            out[0] = m;
            out[1] = down;
            out[2] = up;
            __threadfence_system();
        }
    }
    vec_finish(counter, word, seq);
}

// csr_spmv computes y = A·x for an n-row CSR matrix (int32 row pointers
// and column indices, columns in any order) with 2^shift threads per row
// (vector CSR): the row's threads stride over its entries, each summing
// its share in order, then combine by a butterfly of shuffles. With one
// thread per row the sum runs in entry order from 0, bit for bit like
// sparse.CSR.MulVec. Rows without entries get 0. y must not alias x.
template <typename T>
__device__ __forceinline__ void csr_spmv(int n, int shift, const int *rowPtr, const int *col, const T *val,
                                         const T *x, T *y) {
    const i64 t = (i64)blockIdx.x * VEC_BLOCK + threadIdx.x;
    const i64 row = t >> shift;
    const unsigned int tpr = 1u << shift, sub = threadIdx.x & (tpr - 1);
    T v = T(0);
    if (row < n) {
        // unsigned: p + tpr cannot overflow for p < 2^31.
        const unsigned int p1 = (unsigned int)rowPtr[row + 1];
        for (unsigned int p = (unsigned int)rowPtr[row] + sub; p < p1; p += tpr) v = v + val[p] * x[col[p]];
    }
    // Every lane takes part in the shuffles (whole warps, no early exit).
    for (unsigned int off = tpr >> 1; off > 0; off >>= 1) v = v + __shfl_xor_sync(0xffffffffu, v, off);
    if (row < n && sub == 0) y[row] = v;
}

extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    csr_spmv_f64(int n, int shift, const int *rowPtr, const int *col, const double *val, const double *x,
                 double *y) {
    csr_spmv<double>(n, shift, rowPtr, col, val, x, y);
}
extern "C" __global__ void __launch_bounds__(VEC_BLOCK)
    csr_spmv_f32(int n, int shift, const int *rowPtr, const int *col, const float *val, const float *x, float *y) {
    csr_spmv<float>(n, shift, rowPtr, col, val, x, y);
}
