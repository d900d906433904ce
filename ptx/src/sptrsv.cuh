// Sparse triangular solves T x = b (package sptrsv's GPU twins; see its
// doc): T is the lower or upper triangle of an n×n CSR matrix (rowPtr,
// col int32; val of the precision), the stored diagonal or a unit one.
//
// Conventions:
//   - "logical order": the order of the dependencies, k = 0 … n−1, row
//     i = k for a lower triangle and i = n−1−k for an upper one; row i
//     depends on the entries of its row strictly inside the triangle
//     (col < i lower, col > i upper); entries on the other side are
//     ignored (the triangle of a general matrix) unless strict, when
//     trsv_rows reports them;
//   - rows of dependants: the in-triangle entries of a row are its
//     in-degree deg[i]; diag[i] is its divisor (1 when unit);
//   - the waiting kernels (trsv_levels, trsv_syncfree, trsv_rowsync) take
//     logical rows in the order of a ticket counter, a warp or a thread a
//     row: every row with a smaller ticket belongs to a thread that has
//     started and waits only on rows with smaller tickets still, so the
//     smallest unfinished row is always ready and no wait lasts forever,
//     whatever order the hardware starts the blocks in. Threads of one
//     warp may wait on each other: independent thread scheduling (compute
//     capability 7.0 and later) lets the waited-on thread run;
//   - errors: err[0] the smallest row with no stored diagonal, err[1] the
//     smallest with a zero or non-finite one, err[2] the smallest row with
//     an entry on the wrong side (strict only); INT_MAX where none.
#pragma once
#include "common.cuh"

#define TRSV_BLOCK 256
#define TRSV_WARPS (TRSV_BLOCK / 32)
#define TRSV_CHAIN_BLOCK 1024
#define TRSV_SCAN_BLOCK 1024

// in_triangle: column j of row i lies strictly inside the triangle.
__device__ __forceinline__ bool trsv_in(int i, int j, int upper) { return upper ? j > i : j < i; }

// Flags are polled with volatile loads. A level is its own flag: it is
// set with a volatile store. A ready flag publishes a row's x: it is set
// with a release store after x, and once a poll has seen it, one acquire
// load of it orders the reads of x after the write.
__device__ __forceinline__ unsigned trsv_peek(const unsigned *p) { return *(const volatile unsigned *)p; }
__device__ __forceinline__ void trsv_set(unsigned *p, unsigned v) { *(volatile unsigned *)p = v; }
__device__ __forceinline__ unsigned trsv_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void trsv_release(unsigned *p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// trsv_wait returns once ready[j] = gen, with the write of x[j] visible.
__device__ __forceinline__ void trsv_wait(const unsigned *ready, int j, unsigned gen) {
    while (trsv_peek(ready + j) != gen) {
    }
    (void)trsv_acquire(ready + j);
}

// trsv_ticket takes the block's ticket (thread 0) and broadcasts it. The
// block that takes the last ticket of the grid sets the counter back to
// zero: every other block has taken its ticket by then, so the next launch
// finds it ready.
__device__ __forceinline__ int trsv_ticket(unsigned *ticket) {
    __shared__ int t;
    if (threadIdx.x == 0) {
        t = (int)atomicAdd(ticket, 1u);
        if (t == (int)gridDim.x - 1) atomicExch(ticket, 0u);
    }
    __syncthreads();
    return t;
}

// One thread a row: the in-degree, the divisor and the checks.
template <typename T>
__device__ void trsv_rows(const int *rowPtr, const int *col, const T *val, int n, int upper, int strict, int unit,
                          int *deg, T *diag, int *err) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int cnt = 0, dpos = -1;
    for (int p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
        const int j = col[p];
        if (j == i)
            dpos = p;
        else if (trsv_in(i, j, upper))
            cnt++;
        else if (strict)
            atomicMin(&err[2], i);
    }
    deg[i] = cnt;
    T d = T(1);
    if (!unit) {
        if (dpos < 0) {
            atomicMin(&err[0], i);
        } else {
            d = val[dpos];
            if (bad_divisor(d)) atomicMin(&err[1], i);
        }
    }
    diag[i] = d;
}

// Level sets (Naumov): level[i] = 1 + the largest level of the rows i
// depends on (1 with none), a group of 1 << lg lanes a logical row (lg 0:
// a thread, 5: a warp) in ticket order, each lane waiting on its share of
// the dependencies; the level is the row's ready flag (level zero on
// entry). maxLevel gets the number of levels (one atomic a block).
__device__ void trsv_levels_body(const int *rowPtr, const int *col, int n, int upper, int lg, int *level,
                                 unsigned *ticket, int *maxLevel) {
    __shared__ int bmax;
    if (threadIdx.x == 0) bmax = 0;
    const int t = trsv_ticket(ticket);
    const int g = 1 << lg, k = t * ((int)blockDim.x >> lg) + ((int)threadIdx.x >> lg), r = threadIdx.x & (g - 1);
    int m = 0, i = 0;
    if (k < n) {
        i = upper ? n - 1 - k : k;
        for (int p = rowPtr[i] + r; p < rowPtr[i + 1]; p += g) {
            const int j = col[p];
            if (!trsv_in(i, j, upper)) continue;
            unsigned l;
            while ((l = trsv_peek((const unsigned *)level + j)) == 0) {
            }
            m = max(m, (int)l);
        }
    }
    for (int o = g >> 1; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (k < n && r == 0) {
        trsv_set((unsigned *)level + i, (unsigned)(m + 1));
        atomicMax(&bmax, m + 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(maxLevel, bmax);
}

// count[level[i] − 1] += 1 for every row (count zero on entry); the rows
// of a warp with the same level add together.
__device__ void trsv_level_count_body(const int *level, int n, int *count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    const int l = i < n ? level[i] - 1 : -1;
    const unsigned same = __match_any_sync(0xffffffffu, l);
    if (l >= 0 && lane == __ffs(same) - 1) atomicAdd(&count[l], __popc(same));
}

// perm: the rows sorted by level, levelPtr[l] … levelPtr[l+1] − 1 holding
// level l + 1 (fill zero on entry). The rows of a warp with the same level
// take consecutive places in ascending order; the order of the warps'
// shares is the order their atomics happen to take. A solve's bits do not
// depend on it.
__device__ void trsv_level_scatter_body(const int *level, int n, const int *levelPtr, int *fill, int *perm) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    const int l = i < n ? level[i] - 1 : -1;
    const unsigned same = __match_any_sync(0xffffffffu, l);
    const int leader = __ffs(same) - 1;
    int base = 0;
    if (l >= 0 && lane == leader) base = atomicAdd(&fill[l], __popc(same));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (l >= 0) perm[levelPtr[l] + base + __popc(same & ((1u << lane) - 1))] = i;
}

// The depth of the windows of logical rows: block b takes logical rows
// b·window … (b+1)·window − 1 and adds the number of levels they span
// (largest − smallest + 1) to *sum. A window of few levels keeps a grid of
// warps busy; a deep one (the long chains of a naturally ordered mesh)
// wants more rows in flight.
__device__ void trsv_level_depth_body(const int *level, int n, int upper, int window, unsigned long long *sum) {
    __shared__ int lo, hi;
    if (threadIdx.x == 0) {
        lo = 0x7fffffff;
        hi = 0;
    }
    __syncthreads();
    const int k0 = blockIdx.x * window, k1 = min(n, k0 + window);
    int a = 0x7fffffff, b = 0;
    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        const int l = level[upper ? n - 1 - k : k];
        a = min(a, l);
        b = max(b, l);
    }
    a = __reduce_min_sync(0xffffffffu, a);
    b = __reduce_max_sync(0xffffffffu, b);
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&lo, a);
        atomicMax(&hi, b);
    }
    __syncthreads();
    if (threadIdx.x == 0 && hi >= lo) atomicAdd(sum, (unsigned long long)(hi - lo + 1));
}

// Exclusive prefix sums of int arrays in three steps: the blocks' own
// sums (in place, TRSV_SCAN_BLOCK elements a block, totals to sums), the
// totals' (one block), and their addition.
__device__ int trsv_block_scan(int v, int *total) {
    __shared__ int ws[32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int s = v;
    for (int o = 1; o < 32; o <<= 1) {
        const int u = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += u;
    }
    if (lane == 31) ws[w] = s;
    __syncthreads();
    if (w == 0) {
        int q = lane < (blockDim.x >> 5) ? ws[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int u = __shfl_up_sync(0xffffffffu, q, o);
            if (lane >= o) q += u;
        }
        ws[lane] = q;
    }
    __syncthreads();
    const int before = (w > 0 ? ws[w - 1] : 0) + s - v;
    *total = ws[(blockDim.x >> 5) - 1];
    __syncthreads();
    return before;
}

__device__ void trsv_scan_local_body(int *v, int len, int *sums) {
    const int i = blockIdx.x * TRSV_SCAN_BLOCK + threadIdx.x;
    int total;
    const int e = trsv_block_scan(i < len ? v[i] : 0, &total);
    if (i < len) v[i] = e;
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

__device__ void trsv_scan_sums_body(int *sums, int nb) {
    int carry = 0;
    for (int base = 0; base < nb; base += TRSV_SCAN_BLOCK) {
        const int i = base + threadIdx.x;
        int total;
        const int e = trsv_block_scan(i < nb ? sums[i] : 0, &total);
        if (i < nb) sums[i] = carry + e;
        carry += total;
    }
}

__device__ void trsv_scan_add_body(int *v, int len, const int *sums) {
    const int i = blockIdx.x * TRSV_SCAN_BLOCK + threadIdx.x;
    if (i < len) v[i] += sums[blockIdx.x];
}

// The off-diagonal entries of the triangle by column (Liu's CSC): first
// the count of every column (cnt zero on entry), then, after the prefix
// sum gives cscPtr, the entries (fill zero on entry), in the order the
// atomics take.
__device__ void trsv_csc_count_body(const int *rowPtr, const int *col, int n, int upper, int *cnt) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int p = rowPtr[i]; p < rowPtr[i + 1]; p++)
        if (trsv_in(i, col[p], upper)) atomicAdd(&cnt[col[p]], 1);
}

template <typename T>
__device__ void trsv_csc_fill(const int *rowPtr, const int *col, const T *val, int n, int upper, const int *cscPtr,
                              int *fill, int *cscRow, T *cscVal) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
        const int j = col[p];
        if (!trsv_in(i, j, upper)) continue;
        const int q = cscPtr[j] + atomicAdd(&fill[j], 1);
        cscRow[q] = i;
        cscVal[q] = val[p];
    }
}

// One row of a level-set solve by a group of g lanes (g a power of two
// ≤ 32, the group's lanes consecutive): lane r of the group sums
// val·x over the row's in-triangle entries r, r+g, …; the group's sums
// are added by a butterfly; x[i] = (b[i] − sum) / diag[i]. With g = 1
// the row is solved as sptrsv's sequential reference solves it, bit for
// bit: s = b[i], s −= val·x entry by entry, x[i] = s / diag[i].
template <typename T>
__device__ __forceinline__ void trsv_row(const int *rowPtr, const int *col, const T *val, const T *diag, int i,
                                         int upper, int g, int r, const T *b, T *x, bool active) {
    if (g == 1) {
        if (!active) return;
        T s = b[i];
        for (int p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
            const int j = col[p];
            if (trsv_in(i, j, upper)) s -= val[p] * ((volatile T *)x)[j];
        }
        x[i] = s / diag[i];
        return;
    }
    T s = T(0);
    if (active)
        for (int p = rowPtr[i] + r; p < rowPtr[i + 1]; p += g) {
            const int j = col[p];
            if (trsv_in(i, j, upper)) s += val[p] * ((volatile T *)x)[j];
        }
    for (int o = g >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (active && r == 0) x[i] = (b[i] - s) / diag[i];
}

// One wide level: rows perm[lo … hi−1], a group of 1 << lg lanes a row.
template <typename T>
__device__ void trsv_level_solve(const int *rowPtr, const int *col, const T *val, const T *diag, const int *perm,
                                 int lo, int hi, int upper, int lg, const T *b, T *x) {
    const int g = 1 << lg;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int q = lo + (t >> lg);
    const bool active = q < hi;
    if (!__any_sync(0xffffffffu, active)) return;
    trsv_row(rowPtr, col, val, diag, active ? perm[q] : 0, upper, g, t & (g - 1), b, x, active);
}

// The level-ordered copy of a level-set plan's triangle: the rows in the
// order of perm (position q holds row perm[q]) with their entries in the
// CSR's order, so that the rows of a level and their entries are
// contiguous (rowPtrL, colL, valL, diagL by position; levelEnt[l] the
// first entry of level l). The chain prefetches the arrays of the level
// TRSV_AHEAD levels on into L2 while it solves one, so that only x of the
// rows just solved is read at the latency of a dependency; b is gathered
// into level order (bL) before each solve for the same reason.
#define TRSV_AHEAD 2

__device__ void trsv_lo_len_body(const int *rowPtr, const int *perm, int n, int *len) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n) len[q] = rowPtr[perm[q] + 1] - rowPtr[perm[q]];
    if (q == n) len[q] = 0;
}

template <typename T>
__device__ void trsv_lo_fill(const int *rowPtr, const int *col, const T *val, const T *diag, const int *perm, int n,
                             const int *rowPtrL, int *colL, T *valL, T *diagL) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n) return;
    const int i = perm[q], p0 = rowPtr[i], m = rowPtr[i + 1] - p0, o = rowPtrL[q];
#pragma unroll 1
    for (int k = 0; k < m; k++) {
        colL[o + k] = col[p0 + k];
        valL[o + k] = val[p0 + k];
    }
    diagL[q] = diag[i];
}

__device__ void trsv_lo_levels_body(const int *rowPtrL, const int *levelPtr, int nLevels, int *levelEnt) {
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l <= nLevels) levelEnt[l] = rowPtrL[levelPtr[l]];
}

template <typename T> __device__ void trsv_gather(const T *b, const int *perm, int n, T *bL) {
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n) bL[q] = b[perm[q]];
}

// trsv_row_lo is trsv_row on the level-ordered copy: the same operations
// in the same order.
template <typename T>
__device__ __forceinline__ void trsv_row_lo(const int *rowPtrL, const int *colL, const T *valL, const T *diagL,
                                            const int *perm, int q, int upper, int g, int r, const T *bL, T *x,
                                            bool active) {
    const int i = active ? perm[q] : 0;
    if (g == 1) {
        if (!active) return;
        T s = bL[q];
        for (int p = rowPtrL[q]; p < rowPtrL[q + 1]; p++) {
            const int j = colL[p];
            if (trsv_in(i, j, upper)) s -= valL[p] * ((volatile T *)x)[j];
        }
        x[i] = s / diagL[q];
        return;
    }
    T s = T(0);
    if (active)
        for (int p = rowPtrL[q] + r; p < rowPtrL[q + 1]; p += g) {
            const int j = colL[p];
            if (trsv_in(i, j, upper)) s += valL[p] * ((volatile T *)x)[j];
        }
    for (int o = g >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (active && r == 0) x[i] = (bL[q] - s) / diagL[q];
}

// A chain of narrow levels l0 … l1−1 in one block (Naumov's chain), on
// the level-ordered copy, prefetching ahead: the levels one after another
// with a block barrier between them; each level's rows in groups of g =
// min(gmax, 32, the largest power of two with rows·g ≤ blockDim) lanes,
// the block looping over the rows when a level has more rows than groups.
template <typename T>
__device__ void trsv_chain_solve_lo(const int *rowPtrL, const int *colL, const T *valL, const T *diagL,
                                    const int *perm, const int *levelPtr, const int *levelEnt, int nLevels, int l0,
                                    int l1, int upper, int lgmax, const T *bL, T *x) {
#pragma unroll 1
    for (int l = l0; l < l1; l++) {
        const int a = l + TRSV_AHEAD;
        if (a < nLevels) {
            const int q0 = levelPtr[a], q1 = levelPtr[a + 1];
            prefetch_l2(perm, q0, q1, 4);
            prefetch_l2(rowPtrL, q0, q1 + 1, 4);
            prefetch_l2(diagL, q0, q1, sizeof(T));
            prefetch_l2(bL, q0, q1, sizeof(T));
            prefetch_l2(colL, levelEnt[a], levelEnt[a + 1], 4);
            prefetch_l2(valL, levelEnt[a], levelEnt[a + 1], sizeof(T));
        }
        const int lo = levelPtr[l], hi = levelPtr[l + 1], rows = hi - lo;
        int lg = 0;
        while (lg < lgmax && lg < 5 && (rows << (lg + 1)) <= (int)blockDim.x) lg++;
        const int g = 1 << lg, groups = blockDim.x >> lg;
        for (int base = lo; base < hi; base += groups) {
            const int q = base + (threadIdx.x >> lg);
            const bool active = q < hi;
            if (__any_sync(0xffffffffu, active))
                trsv_row_lo(rowPtrL, colL, valL, diagL, perm, q, upper, g, threadIdx.x & (g - 1), bL, x, active);
        }
        __syncthreads();
    }
}

// Synchronization-free solve (Liu et al.): one warp a logical row in
// ticket order; lane 0 waits until done[i] = deg[i], then x[i] = (b[i] −
// left[i]) / diag[i]; the lanes add cscVal·x[i] into the partial sums of
// the rows that depend on i, then, after a fence, count themselves in
// those rows' done. left and done are zero on entry and again on return:
// lane 0 clears row i's once it has read them, when every row i depends
// on has added its share.
template <typename T>
__device__ void trsv_syncfree(const int *cscPtr, const int *cscRow, const T *cscVal, const T *diag, const int *deg,
                              int n, int upper, const T *b, T *x, T *left, int *done, unsigned *ticket) {
    const int t = trsv_ticket(ticket);
    const int k = t * TRSV_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (k >= n) return;
    const int i = upper ? n - 1 - k : k;
    T xi = T(0);
    if (lane == 0) {
        const int need = deg[i];
        while (((volatile int *)done)[i] < need) {
        }
        __threadfence();
        xi = (b[i] - ((volatile T *)left)[i]) / diag[i];
        x[i] = xi;
        left[i] = T(0);
        done[i] = 0;
    }
    xi = __shfl_sync(0xffffffffu, xi, 0);
    const int p0 = cscPtr[i], p1 = cscPtr[i + 1];
    for (int p = p0 + lane; p < p1; p += 32) atomicAdd(&left[cscRow[p]], cscVal[p] * xi);
    __threadfence();
    for (int p = p0 + lane; p < p1; p += 32) atomicAdd(&done[cscRow[p]], 1);
}

// Synchronization-free solve on the rows (CSR): a group of 1 << lg lanes
// a logical row in ticket order; each lane waits for the ready flag of
// each of its share of the row's dependencies (ready[j] = gen once x[j]
// is written) and sums val·x[j]; then x[i] and, released after it, its
// flag. With lg = 0 the row is solved as sptrsv's sequential reference
// solves it, bit for bit; with lg > 0 the lanes' sums are added by a
// butterfly and x[i] = (b[i] − sum) / diag[i]. A new generation gen a
// solve leaves the flags of the last one standing: no reset is needed.
template <typename T>
__device__ void trsv_rowsync(const int *rowPtr, const int *col, const T *val, const T *diag, int n, int upper, int lg,
                             const T *b, T *x, unsigned *ready, unsigned gen, unsigned *ticket) {
    const int t = trsv_ticket(ticket);
    const int g = 1 << lg, k = t * ((int)blockDim.x >> lg) + ((int)threadIdx.x >> lg), r = threadIdx.x & (g - 1);
    if (lg == 0) {
        if (k >= n) return;
        const int i = upper ? n - 1 - k : k;
        T s = b[i];
        for (int p = rowPtr[i]; p < rowPtr[i + 1]; p++) {
            const int j = col[p];
            if (!trsv_in(i, j, upper)) continue;
            trsv_wait(ready, j, gen);
            s -= val[p] * __ldcg(x + j);
        }
        x[i] = s / diag[i];
        trsv_release(ready + i, gen);
        return;
    }
    T s = T(0);
    int i = 0;
    if (k < n) {
        i = upper ? n - 1 - k : k;
        for (int p = rowPtr[i] + r; p < rowPtr[i + 1]; p += g) {
            const int j = col[p];
            if (!trsv_in(i, j, upper)) continue;
            trsv_wait(ready, j, gen);
            s += val[p] * __ldcg(x + j);
        }
    }
    for (int o = g >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (k < n && r == 0) {
        x[i] = (b[i] - s) / diag[i];
        trsv_release(ready + i, gen);
    }
}

// Picciau et al.'s locality-aware solve (sptrsv.LocalityPlan): one launch
// a sub-graph level, block g0 + blockIdx.x the sub-graph, its rows' x in
// shared memory (xl, capacity elements): the loads, the external slots,
// then the steps (divide the step's rows, apply its slot of internal
// edges), then the stores, with a block barrier after each. No two edges
// of a slot write one row, so each row's terms are subtracted in the
// slots' order: the CPU twin's (sptrsv.SolveLocality) bits.
template <typename T>
__device__ void trsv_locality(int g0, const int *rowPtr, const int *rows, const T *diag, const int *extSlotPtr,
                              const int *extPtr, const int *extCol, const int *extDst, const T *extVal,
                              const int *stepPtr, const int *stepRowPtr, const int *edgePtr, const int *edgeSrc,
                              const int *edgeDst, const T *edgeVal, const T *b, T *x) {
    extern __shared__ unsigned char trsv_shared[];
    T *xl = reinterpret_cast<T *>(trsv_shared);
    const int g = g0 + blockIdx.x;
    const int r0 = rowPtr[g], nr = rowPtr[g + 1] - r0;
    for (int p = threadIdx.x; p < nr; p += blockDim.x) xl[p] = b[rows[r0 + p]];
    __syncthreads();
    for (int sl = extSlotPtr[g]; sl < extSlotPtr[g + 1]; sl++) {
        for (int e = extPtr[sl] + threadIdx.x; e < extPtr[sl + 1]; e += blockDim.x)
            xl[extDst[e]] -= extVal[e] * x[extCol[e]];
        __syncthreads();
    }
    for (int st = stepPtr[g]; st < stepPtr[g + 1]; st++) {
        for (int q = stepRowPtr[st] + threadIdx.x; q < stepRowPtr[st + 1]; q += blockDim.x)
            xl[q - r0] = xl[q - r0] / diag[q];
        __syncthreads();
        if (edgePtr[st + 1] > edgePtr[st]) {
            for (int e = edgePtr[st] + threadIdx.x; e < edgePtr[st + 1]; e += blockDim.x)
                xl[edgeDst[e]] -= edgeVal[e] * xl[edgeSrc[e]];
            __syncthreads();
        }
    }
    for (int p = threadIdx.x; p < nr; p += blockDim.x) x[rows[r0 + p]] = xl[p];
}

#ifndef BS_DEVICE_ONLY
#define TRSV_TYPED(T, S)                                                                                          \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_rows_##S(const int *rowPtr, const int *col, const T *val, int n, int upper, int strict, int unit,    \
                      int *deg, T *diag, int *err) {                                                              \
        trsv_rows<T>(rowPtr, col, val, n, upper, strict, unit, deg, diag, err);                                   \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_csc_fill_##S(const int *rowPtr, const int *col, const T *val, int n, int upper, const int *cscPtr,   \
                          int *fill, int *cscRow, T *cscVal) {                                                    \
        trsv_csc_fill<T>(rowPtr, col, val, n, upper, cscPtr, fill, cscRow, cscVal);                               \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_level_solve_##S(const int *rowPtr, const int *col, const T *val, const T *diag, const int *perm,     \
                             int lo, int hi, int upper, int lg, const T *b, T *x) {                               \
        trsv_level_solve<T>(rowPtr, col, val, diag, perm, lo, hi, upper, lg, b, x);                               \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_syncfree_##S(const int *cscPtr, const int *cscRow, const T *cscVal, const T *diag, const int *deg,   \
                          int n, int upper, const T *b, T *x, T *left, int *done, unsigned *ticket) {             \
        trsv_syncfree<T>(cscPtr, cscRow, cscVal, diag, deg, n, upper, b, x, left, done, ticket);                  \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_locality_##S(int g0, const int *rowPtr, const int *rows, const T *diag, const int *extSlotPtr,       \
                          const int *extPtr, const int *extCol, const int *extDst, const T *extVal,               \
                          const int *stepPtr, const int *stepRowPtr, const int *edgePtr, const int *edgeSrc,      \
                          const int *edgeDst, const T *edgeVal, const T *b, T *x) {                               \
        trsv_locality<T>(g0, rowPtr, rows, diag, extSlotPtr, extPtr, extCol, extDst, extVal, stepPtr, stepRowPtr, \
                         edgePtr, edgeSrc, edgeDst, edgeVal, b, x);                                               \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_rowsync_##S(const int *rowPtr, const int *col, const T *val, const T *diag, int n, int upper, int lg, \
                         const T *b, T *x, unsigned *ready, unsigned gen, unsigned *ticket) {                     \
        trsv_rowsync<T>(rowPtr, col, val, diag, n, upper, lg, b, x, ready, gen, ticket);                          \
    }
#define TRSV_LO_TYPED(T, S)                                                                                       \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)                                                      \
        trsv_lo_fill_##S(const int *rowPtr, const int *col, const T *val, const T *diag, const int *perm, int n,   \
                         const int *rowPtrL, int *colL, T *valL, T *diagL) {                                      \
        trsv_lo_fill<T>(rowPtr, col, val, diag, perm, n, rowPtrL, colL, valL, diagL);                             \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_BLOCK) trsv_gather_##S(const T *b, const int *perm, int n, \
                                                                             T *bL) {                             \
        trsv_gather<T>(b, perm, n, bL);                                                                           \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(TRSV_CHAIN_BLOCK, 1)                                             \
        trsv_chain_solve_lo_##S(const int *rowPtrL, const int *colL, const T *valL, const T *diagL,               \
                                const int *perm, const int *levelPtr, const int *levelEnt, int nLevels, int l0,   \
                                int l1, int upper, int lgmax, const T *bL, T *x) {                                \
        trsv_chain_solve_lo<T>(rowPtrL, colL, valL, diagL, perm, levelPtr, levelEnt, nLevels, l0, l1, upper,      \
                               lgmax, bL, x);                                                                     \
    }
TRSV_LO_TYPED(float, f32)
TRSV_LO_TYPED(double, f64)
TRSV_TYPED(float, f32)
TRSV_TYPED(double, f64)

extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)
    trsv_levels(const int *rowPtr, const int *col, int n, int upper, int lg, int *level, unsigned *ticket,
                int *maxLevel) {
    trsv_levels_body(rowPtr, col, n, upper, lg, level, ticket, maxLevel);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK) trsv_lo_len(const int *rowPtr, const int *perm, int n,
                                                                     int *len) {
    trsv_lo_len_body(rowPtr, perm, n, len);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)
    trsv_lo_levels(const int *rowPtrL, const int *levelPtr, int nLevels, int *levelEnt) {
    trsv_lo_levels_body(rowPtrL, levelPtr, nLevels, levelEnt);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK) trsv_level_count(const int *level, int n, int *count) {
    trsv_level_count_body(level, n, count);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)
    trsv_level_scatter(const int *level, int n, const int *levelPtr, int *fill, int *perm) {
    trsv_level_scatter_body(level, n, levelPtr, fill, perm);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)
    trsv_level_depth(const int *level, int n, int upper, int window, unsigned long long *sum) {
    trsv_level_depth_body(level, n, upper, window, sum);
}
extern "C" __global__ void __launch_bounds__(TRSV_SCAN_BLOCK) trsv_scan_local(int *v, int len, int *sums) {
    trsv_scan_local_body(v, len, sums);
}
extern "C" __global__ void __launch_bounds__(TRSV_SCAN_BLOCK) trsv_scan_sums(int *sums, int nb) {
    trsv_scan_sums_body(sums, nb);
}
extern "C" __global__ void __launch_bounds__(TRSV_SCAN_BLOCK) trsv_scan_add(int *v, int len, const int *sums) {
    trsv_scan_add_body(v, len, sums);
}
extern "C" __global__ void __launch_bounds__(TRSV_BLOCK)
    trsv_csc_count(const int *rowPtr, const int *col, int n, int upper, int *cnt) {
    trsv_csc_count_body(rowPtr, col, n, upper, cnt);
}
#endif
