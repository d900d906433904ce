// The partition method for large batches with constant coefficients: a
// persistent grid whose blocks compute what depends on the matrix once and
// then stream d through.
//
// With constant a, b, c every system of a batch has the same matrix, so
// everything partition_kernel computes from a, b, c alone is the same in
// every system: Stage 1's reciprocal pivots, γ and α (part_table), the
// a, b, c of the reduced rows, and in each level of the cyclic reduction
// (part_cr_sync) the factors s1 = a·(1/b_left) and s2 = c·(1/b_right)
// that part_upd applies to the neighbours' d, and the a, c, 1/b with
// which the substitution finds an eliminated row's x.
// partition_const_p16 (partition_kernel with CONST) still recomputes the
// divisions and exchanges a, c, d and 1/b for every system, and loads,
// computes and stores once per block, so that nothing is loaded while a
// block computes.
//
// Here each block of a grid of at most every resident block first runs
// the matrix part once (part_const_rows, then the cyclic reduction on a,
// b, c through its exchange array), keeping s1 and s2 of the thread's L
// row at every level it is kept (KMAX levels at most) and the a, c, 1/b of
// its F and L rows where they are eliminated in a shared-memory table
// that the block's systems share, and the last row's b in registers.
// Then it loops over groups of spb systems, group blockIdx.x,
// +gridDim.x, …:
// Stage 1 on d alone (part_const_d, δ in registers), a barrier, the copy
// of the next group's d into D (cp.async, not waited for), the reduction
// on d alone (d' = (d − d_left·s1) − d_right·s2: one value a row
// exchanged instead of four, no division), the last row's division, the
// substitution, Stage 3 in registers (part_recover_regs), x through E to
// the store. Every operation is partition_kernel's on the same values in
// the same order, so the results are partition.Solve's bits (chunks of
// 16) on constant arrays, and the breakdowns (all of them the matrix's,
// so alike in every system, but for a non-finite x) are reported at the
// same rows.
//
// Launch (tuning.PartitionConstStreamLaunchFor): blockDim.x = spb·tps as
// partition_kernel's; WARP kernels for tps ≤ 32 (exchanges by shuffles,
// K ≤ 6 levels), the others (tps a multiple of 32) through shared memory,
// K ≤ KMAX;
// gridDim.x ≤ ⌈G/spb⌉. Shared memory: two arrays (D, E) of spb systems'
// units in whole groups of 8 (or, where the systems are closer together in
// memory than the rows, of the row-major layout cs_rows if larger), the
// Stage 1 table, 3·spb int keys (two sets
// alternating from one group to the next, and the matrix's breakdowns),
// and, 16-byte aligned, the factor table: K·tps entries of four values,
// of which the kernel uses at most three
// (tuning.PartitionConstStreamSharedBytes).
#pragma once
#include "partition.cuh"

// part_const_rows is the matrix part (a, b, c) of a chunk's reduced rows F
// and L for constant coefficients (part_eliminate_const's, d left 0): m,
// last, zeroA as there; the smallest row with a bad pivot goes to report.
template <typename T, int P, typename Bad>
__device__ __forceinline__ void part_const_rows(const PartTable<T, P> &tb, int m, int last, bool zeroA, T ca, T cb,
                                                T cc, PartEq<T> &F, PartEq<T> &L, Bad report) {
    const T a0 = zeroA ? T(0) : ca, c0 = last == 0 ? T(0) : cc;
    if (m == 1) {
        F = {a0, cb, c0, T(0)};
        return;
    }
    const unsigned bad = tb.bad & ((2u << (m - 1)) - 1);
    if (bad) report(__ffs(bad) - 1);
    L = {tb.al[m - 1], T(1), (last == m - 1 ? T(0) : cc) * tb.r[m - 1], T(0)};
    T v = T(0), w = T(-1);
#pragma unroll
    for (int j = P - 2; j >= 1; j--) {
        if (j < m - 1) {
            const T gj = tb.g[j];
            v = tb.al[j] - gj * v;
            w = -(gj * w);
        }
    }
    F = {a0, cb - c0 * v, -(c0 * w), T(0)};
}

// cs_vload copies P values of a table in shared memory (16-byte aligned)
// into registers by 16-byte loads: the table's values are the same in
// every thread, and loads of one value each would be a twentieth of the
// kernel's instructions (FP32 interleaved N = 512, Nsight Compute).
template <typename T, int P> __device__ __forceinline__ void cs_vload(const T *src, T (&dst)[P]) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
#pragma unroll
    for (int h = 0; h < P / R; h++) {
        const V v = reinterpret_cast<const V *>(src)[h];
#pragma unroll
        for (int w = 0; w < R; w++) dst[h * R + w] = PartVec<T>::el(v, w);
    }
}

// part_const_d is the d part of Stage 1 for constant coefficients
// (part_eliminate_const's): the chunk's d_j from row(j), δ of the interior
// into dl, the d of F (fd) and of L (ld; 0 when m = 1).
template <typename T, int P, bool VTAB, typename Row>
__device__ __forceinline__ void part_const_d(Row row, const PartTable<T, P> &tb, int m, int last, T ca, T cc,
                                             T (&dl)[P], T &fd, T &ld) {
    const T d0 = row(0);
    T dp = T(0), r[P], g[P];
    if (VTAB) cs_vload<T, P>(tb.r, r);
#pragma unroll
    for (int j = 0; j < P; j++) dl[j] = T(0);
#pragma unroll
    for (int j = 1; j < P; j++) {
        const T dj = row(j);
        if (j < m) {
            dp = (dj - ca * dp) * (VTAB ? r[j] : tb.r[j]);
            if (j <= P - 2) dl[j] = dp;
        }
    }
    if (m == 1) {
        fd = d0, ld = T(0);
        return;
    }
    ld = dp;
    if (VTAB) cs_vload<T, P>(tb.g, g);
    T y = T(0);
#pragma unroll
    for (int j = P - 2; j >= 1; j--) {
        if (j < m - 1) y = dl[j] - (VTAB ? g[j] : tb.g[j]) * y;
    }
    const T c0 = last == 0 ? T(0) : cc;
    fd = d0 - c0 * y;
}

// Batches whose systems are closer together in memory than their rows
// (bs < es: the interleaved layout) keep d and x in shared memory row by
// row (cs_rows): row i of local system s at i·spb + (i div P)·R + s (a
// chunk's P rows, then a 16-byte unit of padding, so that the lanes of a
// warp, which read rows of different chunks, fall in more banks), where
// 16-byte units of R adjacent systems of a row lie as in global memory.
// The copy and the store then move whole 16-byte units (rows of whole
// aligned units), or else one element each, and a thread reads its
// chunk's rows one element each. The systems-first layout (part_copy's, a
// system's rows in units) would take a cp.async and a store an element,
// most of the kernel's instructions: FP32 interleaved batches of N = 64
// execute 67.8 M warp instructions that way against 33.4 M contiguous, at
// 45% of the limit against 82% (H100, 2^24 rows, Nsight Compute). (A
// padding of a row and a unit a row takes half as much shared memory again
// and costs FP64 N = 1024 a block an SM.)

// cs_rows_at is the position of row i of local system s, spb systems.
template <typename T, int P> __device__ __forceinline__ int cs_rows_at(int s, int i, int spb) {
    constexpr int R = 16 / (int)sizeof(T);
    return i * spb + (i / P) * R + s;
}

// cs_rows_units is the size of the row-major area in 16-byte units: ⌈n/P⌉
// chunks of P rows of spb elements and R of padding, rounded up to 8
// units (tuning.PartitionConstStreamSharedBytes).
template <typename T, int P> __device__ __forceinline__ int cs_rows_units(int n, int spb) {
    constexpr int R = 16 / (int)sizeof(T);
    const int e = ((n + P - 1) / P) * (P * spb + R);
    return ((e + R - 1) / R + 7) & ~7;
}

// cs_rows_vec says whether the group's rows are whole aligned 16-byte
// units of p: adjacent systems (bs = 1), a full group of a multiple of R
// systems, a row stride of whole units, an aligned first system.
template <typename T>
__device__ __forceinline__ bool cs_rows_vec(const T *p, int G, i64 es, i64 bs, int spb, int g0) {
    constexpr int R = 16 / (int)sizeof(T);
    return bs == 1 && g0 + spb <= G && spb % R == 0 && es % R == 0 && part_aligned(p + g0);
}

// CsRowsIdx is a thread's share of the row-major copy and store, the
// same for every group (computed once, out of the group loop: the
// divisions by spb/R and spb are not by constants): in the 16-byte path
// its unit u of a row and its first row i0 stepping by di; in the element
// path its system s and first row ei0 stepping by edi.
struct CsRowsIdx {
    int u, i0, di, s, ei0, edi;
};

template <typename T> __device__ __forceinline__ CsRowsIdx cs_rows_idx(int spb) {
    constexpr int R = 16 / (int)sizeof(T);
    const int U = max(spb / R, 1);
    return {(int)threadIdx.x % U, (int)threadIdx.x / U, (int)blockDim.x / U, (int)threadIdx.x % spb,
            (int)threadIdx.x / spb, (int)blockDim.x / spb};
}

// cs_rows_copy starts the copy of the group of spb systems from g0 (those
// that exist) into SD, row-major (not waited for). A thread keeps its unit
// (or system) of a row and steps rows by blockDim.x / units a row (ix).
template <typename T, int P>
__device__ __forceinline__ void cs_rows_copy(const T *d, T *SD, int n, int G, i64 es, i64 bs, int spb, int g0,
                                             const CsRowsIdx &ix) {
    constexpr int R = 16 / (int)sizeof(T);
    if (cs_rows_vec<T>(d, G, es, bs, spb, g0)) {
        for (int i = ix.i0; i < n; i += ix.di)
            part_cp16(SD + cs_rows_at<T, P>(ix.u * R, i, spb), d + (i64)g0 + (i64)i * es + ix.u * R);
        return;
    }
    if (g0 + ix.s >= G) return;
    for (int i = ix.ei0; i < n; i += ix.edi)
        part_cp(SD + cs_rows_at<T, P>(ix.s, i, spb), d + (i64)(g0 + ix.s) * bs + (i64)i * es);
}

// cs_rows_store writes the group's x from SX (row-major) in the batch
// layout, NaN for a system whose key is set.
template <typename T, int P>
__device__ __forceinline__ void cs_rows_store(const T *SX, const int *keys, T *x, int n, int G, i64 es, i64 bs,
                                              int spb, int g0, const CsRowsIdx &ix) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    const T nan = nan_of<T>();
    if (cs_rows_vec<T>(x, G, es, bs, spb, g0)) {
        const int u = ix.u;
        bool all = true;
#pragma unroll
        for (int e = 0; e < R; e++) all = all && keys[u * R + e] == PART_NONE;
        for (int i = ix.i0; i < n; i += ix.di) {
            const T *src = SX + cs_rows_at<T, P>(u * R, i, spb);
            V v = *reinterpret_cast<const V *>(src);
            if (!all) {
                T e[R];
#pragma unroll
                for (int q = 0; q < R; q++) e[q] = keys[u * R + q] == PART_NONE ? src[q] : nan;
                v = PartVec<T>::make(e);
            }
            *reinterpret_cast<V *>(x + (i64)g0 + (i64)i * es + u * R) = v;
        }
        return;
    }
    const int s = ix.s;
    if (g0 + s >= G) return;
    const bool ok = keys[s] == PART_NONE;
    for (int i = ix.ei0; i < n; i += ix.edi)
        x[(i64)(g0 + s) * bs + (i64)i * es] = ok ? SX[cs_rows_at<T, P>(s, i, spb)] : nan;
}

template <typename T, int P, bool WARP, bool ROWS, int KMAX>
__device__ void partition_cstream(const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int *status,
                                  int spb, int tps, volatile unsigned int *word, unsigned int seq) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8, "chunks of whole units, at most 8");

    T *sm = reinterpret_cast<T *>(part_smem);
    const int nch = (n + P - 1) / P;
    // The system stride of the matrix part in E, and of D and E but in the
    // ROWS kernels (d and x row-major, cs_rows), which package cuda
    // launches for the batches whose systems are closer together in memory
    // than their rows (constStreamLaunch): tuning.PartitionConstStreamSharedBytes
    // sizes D and E for those, so the kernels without ROWS are not launched
    // for them.
    const int ss = part_ss<T, P>(n, !ROWS && bs < es);
    const int W = max((spb * ss + 7) & ~7, ROWS ? cs_rows_units<T, P>(n, spb) : 0) * R;
    T *SD = sm, *SE = sm + W;
    const V *VD = reinterpret_cast<const V *>(SD);
    V *VE = reinterpret_cast<V *>(SE);
    PartTable<T, P> &tb = *reinterpret_cast<PartTable<T, P> *>(sm + 2 * W);
    int *keys = reinterpret_cast<int *>(&tb + 1); // two sets of spb, then the matrix's
    int *base = keys + 2 * spb;
    // The matrix part's values in a table after the keys (16-byte
    // aligned), entries of four values (see below).
    T *Tab = reinterpret_cast<T *>(reinterpret_cast<char *>(sm) +
                                   ((reinterpret_cast<char *>(base + spb) - reinterpret_cast<char *>(sm) + 15) & ~15));
    const Coeffs<T> k{nullptr, nullptr, nullptr, ca, cb, cc, 1};
    const int s = threadIdx.x / tps, t = threadIdx.x - s * tps;
    const int rb = cs_rows_at<T, P>(s, t * P, spb); // the thread's chunk's first row (cs_rows)
    const bool has = t < nch;
    const int m = has ? min(P, n - t * P) : 0;
    const int X = part_x(s * ss + t * U);
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);
    const int jf = 2 * t, jl = 2 * t + 1;
    const bool hasF = jf < RR, hasL = jl < RR;
    const int groups = (G + spb - 1) / spb;
    int grp = blockIdx.x;

    for (int q = threadIdx.x; q < spb; q += blockDim.x) base[q] = PART_NONE;
    if (threadIdx.x == 0) part_table<T, P>(tb, ca, cb, cc);
    // The group's d into D (not waited for).
    const CsRowsIdx rix = cs_rows_idx<T>(ROWS ? spb : 1);
    const auto copy = [&](int g0) {
        if (ROWS)
            cs_rows_copy<T, P>(d, SD, n, G, es, bs, spb, g0, rix);
        else
            part_copy<T, P, false>(k, d, nullptr, nullptr, nullptr, SD, ss, n, G, es, bs, spb, g0);
    };
    if (grp < groups) copy(grp * spb);
    __syncthreads();

    // The matrix part, alike in every system: each local system s runs it
    // (the same values) in its own part of E, whose units it owns.
    int *bkey = base + s;
    PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
    if (has)
        part_const_rows<T, P>(tb, m, n - 1 - t * P, t == 0, ca, cb, cc, F, L,
                              [&](int j) { atomicMin(bkey, PART_KEY(1, t * P + j)); });
    // Cyclic reduction on a, b, c (part_cr_sync's operations, d left
    // out): level 1 eliminates the F rows into the L rows, level k ≥ 2 the
    // L rows of threads with (t+1) mod 2v = v into those with (t+1) mod 2v
    // = 0 (v = 2^(k−2)). A row's a, c, 1/b when it is eliminated (F's c,
    // 1/b: fc, fq; L's a, c, 1/b: la, lc, lq) serve the substitution; the
    // factors s1 = a·(1/b_left), s2 = c·(1/b_right) of the L row at each
    // level it is kept, the reduction of d; tbb is the last row's b. The
    // table entry st·tps + t holds s1, s2 of level st+1 in its values 0,
    // 1; entry t (level 1) fc, fq in 2, 3; entry ste·tps + t, ste =
    // ffs(t+1) (the level that eliminates the L row, less one: it has no
    // factors there), la, lc, lq in 0, 1, 2. F's a is the constant a (0
    // for thread 0). The block's local system 0 writes the table.
    T fc = T(0), fq = T(1), la = T(0), lc = T(0), lq = T(1), tbb = F.b;
    T *Ma = SE + s * ss * R, *Mc = Ma + 2 * nch, *Mq = Mc + 2 * nch; // 6·nch ≤ 16·nch elements
    const int ste = __ffs(t + 1);
    {
        const auto keep = [&](int st, T f1, T f2) {
            if (s == 0) {
                T *e = Tab + 4 * (st * tps + t);
                e[0] = f1, e[1] = f2;
            }
        };
        if (K >= 1) {
            fc = F.c, fq = T(1) / F.b;
            if (has && hasF && bad_divisor(F.b)) atomicMin(bkey, PART_KEY(2, t * P));
            if (has && hasF) Ma[jf] = F.a, Mc[jf] = F.c, Mq[jf] = fq;
            __syncthreads();
            const bool ok = jl + 1 < RR;
            const T ra = ok ? Ma[jf + 2] : T(0), rc = ok ? Mc[jf + 2] : T(0), rq = ok ? Mq[jf + 2] : T(1);
            const T f1 = L.a * fq, f2 = L.c * rq;
            keep(0, f1, f2);
            if (s == 0) Tab[4 * t + 2] = fc, Tab[4 * t + 3] = fq;
            L = {-(F.a * f1), (L.b - F.c * f1) - ra * f2, -(rc * f2), T(0)};
        }
#pragma unroll
        for (int st = 1; st < KMAX; st++) {
            if (st < K) {
                const int v = 1 << (st - 1), r = (t + 1) & (2 * v - 1);
                if (has && hasL && r == v) {
                    la = L.a, lc = L.c, lq = T(1) / L.b;
                    if (bad_divisor(L.b)) atomicMin(bkey, PART_KEY(2 + st, t * P + m - 1));
                    if (s == 0) {
                        T *e = Tab + 4 * (st * tps + t); // st = ste
                        e[0] = la, e[1] = lc, e[2] = lq;
                    }
                    Ma[jl] = L.a, Mc[jl] = L.c, Mq[jl] = lq;
                }
                __syncthreads();
                if (has && hasL && r == 0) {
                    const int jr = jl + 2 * v;
                    const bool ok = jr < RR;
                    const T a0 = Ma[jl - 2 * v], c0 = Mc[jl - 2 * v], q0 = Mq[jl - 2 * v];
                    const T ra = ok ? Ma[jr] : T(0), rc = ok ? Mc[jr] : T(0), rq = ok ? Mq[jr] : T(1);
                    const T f1 = L.a * q0, f2 = L.c * rq;
                    keep(st, f1, f2);
                    L = {-(a0 * f1), (L.b - c0 * f1) - ra * f2, -(rc * f2), T(0)};
                }
            }
        }
        if (K == 0) {
            if (has && hasF && bad_divisor(F.b)) atomicMin(bkey, PART_KEY(2, t * P));
        } else if (has && jl == (1 << K) - 1) {
            tbb = L.b;
            if (bad_divisor(L.b)) atomicMin(bkey, PART_KEY(K + 2, t * P + m - 1));
        }
    }
    __syncthreads(); // the matrix's keys are final
    for (int q = threadIdx.x; q < 2 * spb; q += blockDim.x) keys[q] = base[q % spb];

    // The L row's factor i (0: s1, 1: s2) of level st+1.
    const auto factor = [&](int st, int i) -> T { return Tab[4 * (st * tps + t) + i]; };
    const T fa = t == 0 ? T(0) : ca;
    for (int it = 0; grp < groups; it++, grp += gridDim.x) {
        const int g0 = grp * spb;
        int *ks = keys + (it & 1) * spb;
        int *key = ks + s;
        const bool live = has && g0 + s < G;
#ifndef PART_EMU
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        __syncthreads();
        // The other set: its last readers (the previous group's store and
        // status) are before the barrier above, its next writers after the
        // next one.
        for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[((it + 1) & 1) * spb + q] = base[q];

        // Stage 1 on d, from D into registers.
        T dl[P], fd = T(0), ld = T(0);
        V ud;
        if (has)
            part_const_d<T, P, WARP>(
                [&](int j) -> T {
                    if (ROWS) return SD[rb + j * spb]; // rows t·P + j of the chunk
                    if (j % R == 0) ud = VD[X ^ (j / R)]; // j is a constant: the loop is unrolled
                    return PartVec<T>::el(ud, j % R);
                },
                tb, m, n - 1 - t * P, ca, cc, dl, fd, ld);
        __syncthreads(); // D is read: the next group's copy may go
        if (grp + (int)gridDim.x < groups)
            copy((grp + (int)gridDim.x) * spb);

        // Stage 2: cyclic reduction on d alone, then the substitution
        // (part_cr_sync's operations on d). The shared-memory path puts a
        // row's d in EX when the row is eliminated, an L row's x over it.
        T *EX = SE + s * 2 * tps;
        T xs, xe = T(0);
        if (K == 0) {
            xs = fd / tbb;
        } else {
            {
                T rF;
                if (WARP) {
                    rF = part_down(fd, 1, tps);
                } else {
                    if (hasF) EX[jf] = fd;
                    __syncthreads();
                    rF = jl + 1 < RR ? EX[jf + 2] : T(0);
                }
                if (jl + 1 >= RR) rF = T(0);
                const T f1 = factor(0, 0), f2 = factor(0, 1);
                if (hasL) ld = (ld - fd * f1) - rF * f2;
            }
#pragma unroll
            for (int st = 1; st < KMAX; st++) {
                if (st < K) {
                    const int v = 1 << (st - 1), r = (t + 1) & (2 * v - 1);
                    const bool ok = jl + 2 * v < RR;
                    T lD = T(0), rD = T(0);
                    if (WARP) {
                        lD = part_up(ld, v, tps), rD = part_down(ld, v, tps);
                    } else {
                        if (hasL && r == v) EX[jl] = ld;
                        __syncthreads();
                        if (hasL && r == 0) lD = EX[jl - 2 * v], rD = ok ? EX[jl + 2 * v] : T(0);
                    }
                    if (!ok) rD = T(0);
                    if (hasL && r == 0) {
                        const T f1 = factor(st, 0), f2 = factor(st, 1);
                        ld = (ld - lD * f1) - rD * f2;
                    }
                }
            }
            if (jl == (1 << K) - 1) {
                xe = ld / tbb;
                if (!WARP) EX[jl] = xe;
            }
            if (!WARP) __syncthreads();
#pragma unroll
            for (int st = KMAX - 1; st >= 1; st--) {
                if (st < K) {
                    const int v = 1 << (st - 1), r = (t + 1) & (2 * v - 1);
                    T xl = T(0), xr = T(0);
                    if (WARP) {
                        xl = part_up(xe, v, tps), xr = part_down(xe, v, tps);
                    } else if (hasL && r == v) {
                        xl = t >= v ? EX[jl - 2 * v] : T(0);
                        xr = jl + 2 * v < RR ? EX[jl + 2 * v] : T(0);
                    }
                    if (hasL && r == v) {
                        if (t < v) xl = T(0);
                        if (jl + 2 * v >= RR) xr = T(0);
                        const T *e = Tab + 4 * (ste * tps + t);
                        xe = ((ld - e[0] * xl) - e[1] * xr) * e[2];
                        if (!WARP) EX[jl] = xe;
                    }
                    if (!WARP) __syncthreads();
                }
            }
            T xl;
            if (WARP) {
                xl = part_up(xe, 1, tps);
            } else {
                xl = t > 0 && hasF ? EX[jl - 2] : T(0);
            }
            if (t == 0) xl = T(0);
            xs = ((fd - fa * xl) - Tab[4 * t + 2] * (hasL ? xe : T(0))) * Tab[4 * t + 3];
        }
        if (m < 2) xe = xs;

        // Stage 3 in registers; x through E to the store.
        T xv[P];
        T tg[P], tal[P];
        if (WARP) cs_vload<T, P>(tb.g, tg), cs_vload<T, P>(tb.al, tal);
        const int bad = WARP ? part_recover_regs<T, P>(tg, tal, dl, m, xs, xe, xv)
                             : part_recover_regs<T, P>(tb.g, tb.al, dl, m, xs, xe, xv);
        if (live && bad >= 0) atomicMin(key, PART_KEY(K + 3, t * P + bad));
        if (!WARP) __syncthreads(); // the last exchange's reads of E are done
        if (has && ROWS) {
#pragma unroll
            for (int j = 0; j < P; j++) SE[rb + j * spb] = xv[j];
        } else if (has) {
#pragma unroll
            for (int h = 0; h < U; h++) VE[X ^ h] = PartVec<T>::make(xv + h * R);
        }
        __syncthreads();
        if (ROWS)
            cs_rows_store<T, P>(SE, ks, x, n, G, es, bs, spb, g0, rix);
        else
            part_store<T, P>(SE, ks, x, ss, n, G, es, bs, spb, g0);
        part_status(ks, G, spb, g0, status);
    }
    block_done_signal(status, G, word, seq);
}

// partition_cstream_p16_*: exchanges through shared memory (tps a multiple
// of 32, K ≤ 9: N ≤ 4096); partition_cstream_warp_p16_*: by shuffles (tps ≤
// 32, K ≤ 6). Both keep the factors in a shared-memory table, at most 256
// threads a block but for the _rows_ kernels (below), with registers for a
// number of blocks an SM without spills (the launch bounds' second value).
// FP64 takes N ≤ 2048, where the table fits two blocks an SM
// (tuning.PartitionConstStreamMaxN; the factors in registers for FP64
// N ≤ 4096, one block an SM, lose to the one-shot constant kernel: 56.7%
// of the limit against 61.2% on an H100). The _rows_ kernels keep d and x
// row-major (cs_rows), for batches whose systems are closer together in
// memory than their rows (bs < es); their blocks are larger
// (tuning.PartitionConstStreamMaxThreadsFor), because the fraction of the
// limit follows the bytes of a row a block reads (32 bytes 58–62%, 64
// bytes 68–74%, 128 bytes 75–85%, whatever N): the warp rows kernels take
// up to 1024 threads in FP32 (64 registers) and 640 in FP64 (96
// registers), the others 512 (one block an SM).
//
// The bounds below are the fastest measured (H100, 2^24 rows,
// go test -tags cuda -run '^$' -bench ConstStream ./cuda, and bandsolve bench
// -device cuda -grid with :const cases): partition_cstream FP32 takes 4
// blocks of 256 threads (64 registers; 80 registers are 1–3% slower at
// contiguous N = 1024 / 4096); FP64 warp rows 128-byte rows (81% / 80% of
// the limit at N = 256 / 512, 1.11× / 1.32× the speed of 5 blocks of 128
// threads); the other rows kernels 512 threads (FP32 N = 1024 1.43×,
// FP64 N = 1024 / 2048 1.07× / 1.46× the speed of the plans without
// them). The FP32 warp kernel for contiguous batches keeps 3 blocks (80
// registers): with 4, N = 64 … 512 are 2–4% slower.
#ifndef BS_DEVICE_ONLY
#define PARTITION_CSTREAM(T, S, NAME, WARP, ROWS, KMAX, MAXT, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(MAXT, MINB)                                                      \
        partition_##NAME##_p16_##S(const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int *status, \
                                   int spb, int tps, volatile unsigned int *word, unsigned int seq) {            \
        partition_cstream<T, 16, WARP, ROWS, KMAX>(d, x, n, G, es, bs, ca, cb, cc, status, spb, tps, word, seq); \
    }
PARTITION_CSTREAM(float, f32, cstream, false, false, 9, 256, 4)
PARTITION_CSTREAM(float, f32, cstream_warp, true, false, 6, 256, 3)
PARTITION_CSTREAM(double, f64, cstream, false, false, 9, 256, 2)
PARTITION_CSTREAM(double, f64, cstream_warp, true, false, 6, 256, 2)
PARTITION_CSTREAM(float, f32, cstream_rows, false, true, 9, 512, 1)
PARTITION_CSTREAM(float, f32, cstream_warp_rows, true, true, 6, 1024, 1)
PARTITION_CSTREAM(double, f64, cstream_rows, false, true, 9, 512, 1)
PARTITION_CSTREAM(double, f64, cstream_warp_rows, true, true, 6, 640, 1)
#endif
