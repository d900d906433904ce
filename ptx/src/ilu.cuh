// Incomplete factorizations without fill, ILU(0) and IC(0) (package
// ilu's GPU twins; see its doc), in FP64, scheduled by the level sets of
// the lower triangle of the pattern:
//   - the factors' pattern is a CSR (rowPtr, col ascending, diagPos[i]
//     the position of row i's diagonal entry); val holds A's values in it
//     on entry (ilu_load) and the factors on return: ILU(0) L's strict
//     lower triangle and U, IC(0) L;
//   - the rows of level l are order[levelPtr[l] … levelPtr[l+1]−1]; a
//     row reads only rows of lower levels, which earlier launches or
//     earlier block barriers of a chain have finished;
//   - a thread a row does the CPU's operations in the CPU's order, with
//     merge walks over the two sorted rows in place of the CPU's map of
//     columns, so that the factors are the CPU's bit for bit (the PTX is
//     built without FMA contraction);
//   - a failing pivot (ILU(0): uᵢᵢ zero or not finite; IC(0): lᵢᵢ² not
//     positive or not finite) leaves its value in val[diagPos[i]] and
//     lowers *fail to (level << 32) | row: the smallest is the CPU's
//     error, the first failing row of the first failing level.
#pragma once
#include "common.cuh"

#define ILU_BLOCK 256
#define ILU_CHAIN_BLOCK 1024

// ilu_row factors row i in place and returns whether its pivot is good.
__device__ bool ilu_row(const int *rowPtr, const int *col, const int *diagPos, double *val, int i) {
    const int hi = rowPtr[i + 1], d = diagPos[i];
    for (int p = rowPtr[i]; p < d; p++) {
        const int k = col[p], dk = diagPos[k], end = rowPtr[k + 1];
        const double lik = val[p] / val[dk];
        val[p] = lik;
        int t = p + 1;
        for (int q = dk + 1; q < end; q++) {
            const int j = col[q];
            while (t < hi && col[t] < j) t++;
            if (t < hi && col[t] == j) val[t] = val[t] - lik * val[q];
        }
    }
    const double u = val[d];
    return !bad_divisor(u);
}

// ic_row factors row i of L in place and returns whether its pivot is
// good; lᵢᵢ = √s is written only then, else s.
__device__ bool ic_row(const int *rowPtr, const int *col, const int *diagPos, double *val, int i) {
    const int lo = rowPtr[i], d = diagPos[i];
    for (int p = lo; p < d; p++) {
        const int j = col[p], dj = diagPos[j];
        double s = val[p];
        int t = lo;
        for (int q = rowPtr[j]; q < dj; q++) {
            const int k = col[q];
            while (t < p && col[t] < k) t++;
            if (t < p && col[t] == k) s = s - val[t] * val[q];
        }
        val[p] = s / val[dj];
    }
    double s = val[d];
    for (int p = lo; p < d; p++) s = s - val[p] * val[p];
    const bool ok = s > 0.0 && isfinite(s);
    val[d] = ok ? sqrt(s) : s;
    return ok;
}

__device__ __forceinline__ void ilu_factor_row(const int *rowPtr, const int *col, const int *diagPos, double *val,
                                               int ic, int i, int level, unsigned long long *fail) {
    const bool ok = ic ? ic_row(rowPtr, col, diagPos, val, i) : ilu_row(rowPtr, col, diagPos, val, i);
    if (!ok) atomicMin(fail, ((unsigned long long)level << 32) | (unsigned)i);
}

// One wide level: a thread a row of order[lo … hi−1].
__device__ void ilu_level_body(const int *rowPtr, const int *col, const int *diagPos, double *val, int ic,
                               const int *order, int lo, int hi, int level, unsigned long long *fail) {
    const int q = lo + blockIdx.x * blockDim.x + threadIdx.x;
    if (q < hi) ilu_factor_row(rowPtr, col, diagPos, val, ic, order[q], level, fail);
}

// A chain of narrow levels l0 … l1−1 in one block, a barrier between
// levels.
__device__ void ilu_chain_body(const int *rowPtr, const int *col, const int *diagPos, double *val, int ic,
                               const int *order, const int *levelPtr, int l0, int l1, unsigned long long *fail) {
#pragma unroll 1
    for (int l = l0; l < l1; l++) {
        const int hi = levelPtr[l + 1];
        for (int q = levelPtr[l] + threadIdx.x; q < hi; q += blockDim.x)
            ilu_factor_row(rowPtr, col, diagPos, val, ic, order[q], l, fail);
        __syncthreads();
    }
}

// The programmed factorization: the host's analysis writes, for the rows
// in level order (row position q), a program of int32 words prog[progPtr[q]
// … progPtr[q+1]−1] over the values in level order (valL: the entries of
// the rows of level 0, then level 1, …, each row's entries together):
//   ILU(0): d, then for every strict-lower entry p of the row (column k
//           ascending): p, dk (the pivot of row k), m, and m pairs (t, u)
//           with val[t] −= l·val[u] for the columns j > k that rows i and
//           k share;
//   IC(0):  d, the count of strict-lower entries, then for every one, p
//           (column j ascending): p, dj, m, and m pairs (t, u) with s −=
//           val[t]·val[u] for the columns k < j that rows i and j share.
// The pairs are in the CPU's order, so that the factors are the CPU's bit
// for bit. A level's program pointers, words and values are contiguous:
// the chain prefetches those of the level ILU_AHEAD levels on into L2
// while it factors one, so that only the values of the rows just finished
// are read at the latency of a dependency.
#define ILU_AHEAD 2

template <int IC> __device__ bool ilu_prog_row(const int *prog, double *val) {
    const int d = prog[0];
    if (!IC) {
        const int nl = prog[1];
        int w = 2;
#pragma unroll 1
        for (int e = 0; e < nl; e++) {
            const int p = prog[w], dk = prog[w + 1], m = prog[w + 2];
            w += 3;
            const double l = val[p] / val[dk];
            val[p] = l;
#pragma unroll 1
            for (int r = 0; r < m; r++, w += 2) val[prog[w]] = val[prog[w]] - l * val[prog[w + 1]];
        }
        return !bad_divisor(val[d]);
    }
    const int nl = prog[1];
    int w = 2, first = 0;
#pragma unroll 1
    for (int e = 0; e < nl; e++) {
        const int p = prog[w], dj = prog[w + 1], m = prog[w + 2];
        if (e == 0) first = p;
        w += 3;
        double s = val[p];
#pragma unroll 1
        for (int r = 0; r < m; r++, w += 2) s = s - val[prog[w]] * val[prog[w + 1]];
        val[p] = s / val[dj];
    }
    // The strict-lower entries of a row are contiguous in valL, before d.
    double s = val[d];
#pragma unroll 1
    for (int e = 0; e < nl; e++) s = s - val[first + e] * val[first + e];
    const bool ok = s > 0.0 && isfinite(s);
    val[d] = ok ? sqrt(s) : s;
    return ok;
}

template <int IC>
__device__ __forceinline__ void ilu_prog_factor(const int *progPtr, const int *prog, double *val, const int *order,
                                                int q, int level, unsigned long long *fail) {
    if (!ilu_prog_row<IC>(prog + progPtr[q], val))
        atomicMin(fail, ((unsigned long long)level << 32) | (unsigned)order[q]);
}

// ilu_prefetch_level asks L2 for what level l's rows read first: their
// program pointers, program words and values. levelPtr, progLevel
// (progPtr at each level's first row) and valPtr are small arrays read in
// order, so that the addresses cost no dependent load from memory.
__device__ __forceinline__ void ilu_prefetch_level(const int *progPtr, const int *prog, const double *val,
                                                   const int *levelPtr, const int *progLevel, const int *valPtr,
                                                   int l) {
    prefetch_l2(progPtr, levelPtr[l], levelPtr[l + 1] + 1, 4);
    prefetch_l2(prog, progLevel[l], progLevel[l + 1], 4);
    prefetch_l2(val, valPtr[l], valPtr[l + 1], 8);
}

// A chain of narrow levels l0 … l1−1 in one block, prefetching ahead.
// levelPtr: rows; progLevel: program words; valPtr: values of each level
// in valL.
template <int IC>
__device__ void ilu_prog_chain_body(const int *progPtr, const int *prog, double *val, const int *order,
                                    const int *levelPtr, const int *progLevel, const int *valPtr, int nLevels,
                                    int l0, int l1, unsigned long long *fail) {
#pragma unroll 1
    for (int l = l0; l < l1; l++) {
        if (l + ILU_AHEAD < nLevels)
            ilu_prefetch_level(progPtr, prog, val, levelPtr, progLevel, valPtr, l + ILU_AHEAD);
        const int hi = levelPtr[l + 1];
        for (int q = levelPtr[l] + threadIdx.x; q < hi; q += blockDim.x)
            ilu_prog_factor<IC>(progPtr, prog, val, order, q, l, fail);
        __syncthreads();
    }
}

// One wide level l: a thread a row; the first block prefetches the next
// level.
template <int IC>
__device__ void ilu_prog_level_body(const int *progPtr, const int *prog, double *val, const int *order,
                                    const int *levelPtr, const int *progLevel, const int *valPtr, int nLevels, int l,
                                    unsigned long long *fail) {
    if (blockIdx.x == 0 && l + 1 < nLevels)
        ilu_prefetch_level(progPtr, prog, val, levelPtr, progLevel, valPtr, l + 1);
    const int q = levelPtr[l] + blockIdx.x * blockDim.x + threadIdx.x;
    if (q < levelPtr[l + 1]) ilu_prog_factor<IC>(progPtr, prog, val, order, q, l, fail);
}

// dst[perm[k]] = src[k]: the factors from level order back to the CSR's.
__device__ void ilu_scatter_body(const double *src, const int *perm, int nnz, double *dst) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nnz) dst[perm[k]] = src[k];
}

// val[k] = aval[src[k]] (aval[k] without src): A's values in the
// factors' pattern.
__device__ void ilu_gather_body(const double *aval, const int *src, int nnz, double *val) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nnz) val[k] = src ? aval[src[k]] : aval[k];
}

// val[diagPos[i]] *= scale (scale = 1 + shift): A + shift·diag(A).
__device__ void ilu_scale_body(const int *diagPos, int n, double scale, double *val) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) val[diagPos[i]] = val[diagPos[i]] * scale;
}

// dst[k] = src[gather[k]] (src[k] without gather) in T: the factors'
// values in the order and precision of a triangular solve's matrix.
template <typename T> __device__ void ilu_values_body(const double *src, const int *gather, int nnz, T *dst) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nnz) dst[k] = T(gather ? src[gather[k]] : src[k]);
}

#ifndef BS_DEVICE_ONLY
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_level(const int *rowPtr, const int *col, const int *diagPos, double *val, int ic, const int *order, int lo,
              int hi, int level, unsigned long long *fail) {
    ilu_level_body(rowPtr, col, diagPos, val, ic, order, lo, hi, level, fail);
}
extern "C" __global__ void __launch_bounds__(ILU_CHAIN_BLOCK)
    ilu_chain(const int *rowPtr, const int *col, const int *diagPos, double *val, int ic, const int *order,
              const int *levelPtr, int l0, int l1, unsigned long long *fail) {
    ilu_chain_body(rowPtr, col, diagPos, val, ic, order, levelPtr, l0, l1, fail);
}
#define ILU_PROG(IC, S)                                                                                           \
    extern "C" __global__ void __launch_bounds__(ILU_CHAIN_BLOCK, 1)                                              \
        ilu_prog_chain_##S(const int *progPtr, const int *prog, double *val, const int *order, const int *levelPtr, \
                           const int *progLevel, const int *valPtr, int nLevels, int l0, int l1,                  \
                           unsigned long long *fail) {                                                            \
        ilu_prog_chain_body<IC>(progPtr, prog, val, order, levelPtr, progLevel, valPtr, nLevels, l0, l1, fail);  \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(ILU_BLOCK)                                                       \
        ilu_prog_level_##S(const int *progPtr, const int *prog, double *val, const int *order, const int *levelPtr, \
                           const int *progLevel, const int *valPtr, int nLevels, int l, unsigned long long *fail) { \
        ilu_prog_level_body<IC>(progPtr, prog, val, order, levelPtr, progLevel, valPtr, nLevels, l, fail);       \
    }
ILU_PROG(0, ilu)
ILU_PROG(1, ic)
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_scatter(const double *src, const int *perm, int nnz, double *dst) {
    ilu_scatter_body(src, perm, nnz, dst);
}
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_gather(const double *aval, const int *src, int nnz, double *val) {
    ilu_gather_body(aval, src, nnz, val);
}
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_scale(const int *diagPos, int n, double scale, double *val) {
    ilu_scale_body(diagPos, n, scale, val);
}
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_values_f32(const double *src, const int *gather, int nnz, float *dst) {
    ilu_values_body<float>(src, gather, nnz, dst);
}
extern "C" __global__ void __launch_bounds__(ILU_BLOCK)
    ilu_values_f64(const double *src, const int *gather, int nnz, double *dst) {
    ilu_values_body<double>(src, gather, nnz, dst);
}
#endif
