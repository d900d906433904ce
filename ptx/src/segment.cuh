// The segmented partition method: systems too long for one block (or
// whose one block would leave an SM latency-bound) are cut into Q
// segments of M rows, one block per segment. Its CPU twin is
// partition.SolveSegmented (tridiag/partition/segmented.go), whose
// documentation has the formulas; this kernel does its operations in the
// same order (PTX built with -fmad=false), so the results agree bit for
// bit.
//
// A block holds its segment in shared memory like partition_kernel holds a
// system (spb = 1, tps = M/P threads, the same load, Stage 1 and Stage 3),
// and solves the segment's reduced system by cyclic reduction with three
// right-hand sides (y, v, w), its first and last reduced rows replaced by
// identities: every reduced unknown is then y + v·x_first + w·x_last. The
// segment's two rows of the reduced system of the segments follow (F_σ
// from its first row, L_σ from its last). A thread's F row (a, c, y, v,
// w, 1/b) goes to its B slots 0 … 5 when level 1 eliminates it, its L row
// to 6 … 11 at the level that eliminates it, and the L row's (y, v, w)
// over 6 … 8 in the substitution: one barrier a level.
//
// Modes (the plan, cuda/segment.go, picks them):
//   SEG_ONEPASS: one kernel. Each block takes a ticket (an atomic counter,
//     so that the blocks of a system are started in order: with at most
//     32 segments a system and every started block running to its wait,
//     a block waits only for blocks that are already running or will
//     get an SM); it writes F_σ, L_σ, counts itself in; the last of a
//     system's blocks to arrive solves the 2Q rows by cyclic reduction in
//     one warp (ReducedCR) and posts x_first, x_last of every segment with a
//     flag; the others wait for the flag. Global memory is read once.
//   SEG_REDUCE: writes F_σ, L_σ into the reduced batch (G systems of 2Q
//     rows, contiguous) and ends. The plan solves that batch with another
//     partition plan, then
//   SEG_EXPAND: recomputes the segment (the same bits), reads x_first,
//     x_last from that solution and its status, and finishes.
//
// Control words (u64, the plan's workspace, zeroed once, never reset:
// every launch adds the same amounts): ctl[0] the ticket counter; for
// system g at ctl[1 + 4g]: arrivals, finished blocks, the flag (epoch + 1,
// the epoch being ticket / blocks) and the breakdown key (0: none, else
// ~key, so that atomicMax keeps the smallest key).
//
// Breakdown keys are (stage << 32) | row with the original row and the
// stages of partition.SolveSegmented: 1 the chunk pivots, 1 + k the rows
// level k of a segment's cyclic reduction eliminates, 17 the divisor of
// its last row standing, 18 the reduced system of the segments, 19 a
// non-finite x. The last block of a system to finish
// reads the system's key and, when one is set, fills the system's x with
// NaN and writes its status.
#pragma once
#include "partition.cuh"

#define SEG_ONEPASS 0
#define SEG_REDUCE 1
#define SEG_EXPAND 2
// Flags or-ed into SEG_REDUCE and SEG_EXPAND for a part of systems split
// across GPUs (tridiaggpu.PartPlan: the part's rows are rows r … r + n − 1
// of longer systems). SEG_KEEP_A: the part's row 0 keeps its a, the
// coupling to the row before the part (else read as 0, as for a system's
// first row). SEG_KEEP_C: its row n − 1 keeps its c. SEG_RED_ROWS: reduced
// row j of system g at j·G + g of RA … RD and XR (the rows of every system
// one after the other, so that a part's rows are one block of the reduced
// batch of all parts), instead of g·2Q + j; it also marks a part's
// launch, whose status code for a system that broke down only as a
// consequence (stage SEG_STAGE_REDUCED or later: a non-finite x) is
// negated, −(row + 1), so that the caller can tell it from a breakdown
// within the part.
#define SEG_MODE_MASK 3
#define SEG_KEEP_A 4
#define SEG_KEEP_C 8
#define SEG_RED_ROWS 16

#define SEG_STAGE_PIVOT 1ull
#define SEG_STAGE_LEVEL 1ull
#define SEG_STAGE_FINAL 17ull
#define SEG_STAGE_REDUCED 18ull
#define SEG_STAGE_RESULT 19ull
#define SEG_NONE 0xffffffffffffffffull
#define SEG_KEY(stage, row) (((unsigned long long)(stage) << 32) | (unsigned long long)(unsigned)(row))

// A reduced equation a·x_left + b·x + c·x_right = y + v·x_first + w·x_last.
template <typename T> struct SegEq {
    T a, b, c, y, v, w;
};

// SegShared is a block's few shared values, after its four arrays in the
// dynamic shared memory (SEG_SHARED_BYTES, tuning.SegmentSharedExtra).
template <typename T> struct SegShared {
    unsigned long long ticket, key; // the block's ticket, its smallest breakdown key
    int last, fin;                  // the last block of its system to arrive, to finish
    int none;                       // part_store's key: never set (the last block fills NaN)
    T row0[4], rowe[4];             // the segment's first and last reduced rows, kept
    T r1[3], re[3];                 // (y, v, w) of reduced rows 1 and RR−2
    T x[2];                         // x_first, x_last
    T frow[8];                      // the segment's rows F_σ, L_σ of the reduced system of the segments
    unsigned long long kmin;        // cluster kernels: the system's smallest key
};
#define SEG_SHARED_BYTES 256
static_assert(sizeof(SegShared<double>) <= SEG_SHARED_BYTES, "SegShared fits its reserve");

// seg_upd is one reduction step of e with its neighbours l, r (their a, c, y, v,
// w) and their reciprocals lq, rq (a missing one: zeros and 1).
template <typename T>
__device__ __forceinline__ SegEq<T> seg_upd(const SegEq<T> &e, const SegEq<T> &l, T lq, const SegEq<T> &r, T rq) {
    const T s1 = e.a * lq;
    const T s2 = e.c * rq;
    SegEq<T> o;
    o.a = -(l.a * s1);
    o.b = (e.b - l.c * s1) - r.a * s2;
    o.c = -(r.c * s2);
    o.y = (e.y - l.y * s1) - r.y * s2;
    o.v = (e.v - l.v * s1) - r.v * s2;
    o.w = (e.w - l.w * s1) - r.w * s2;
    return o;
}

// seg_slot is free slot j of the chunk at swizzled unit X in B.
template <typename T> __device__ __forceinline__ T &seg_slot(T *B, int X, int j) {
    constexpr int R = 16 / (int)sizeof(T);
    return B[(X ^ (j / R)) * R + j % R];
}

// seg_put stores a thread's F (O = 0) or L (O = 6) row for the exchange
// in its B slots O … O+5: a, c, y, v, w, 1/b.
template <typename T, int O> __device__ __forceinline__ void seg_put(T *B, int X, const SegEq<T> &e, T q) {
    seg_slot(B, X, O) = e.a, seg_slot(B, X, O + 1) = e.c, seg_slot(B, X, O + 2) = e.y;
    seg_slot(B, X, O + 3) = e.v, seg_slot(B, X, O + 4) = e.w, seg_slot(B, X, O + 5) = q;
}

// SegX is a reduced unknown's (y, v, w): x = (y + v·x_first) + w·x_last.
template <typename T> struct SegX {
    T y, v, w;
};

// seg_put_x stores e's (y, v, w) over its L row's slots 6 … 8 (the
// substitution's); seg_get_x reads those of the thread whose chunk starts
// at logical unit u, or zeros when !ok (a missing neighbour).
template <typename T> __device__ __forceinline__ void seg_put_x(T *B, int X, const SegEq<T> &e) {
    seg_slot(B, X, 6) = e.y, seg_slot(B, X, 7) = e.v, seg_slot(B, X, 8) = e.w;
}
template <typename T> __device__ __forceinline__ SegX<T> seg_get_x(T *B, int u, bool ok) {
    if (!ok) return {T(0), T(0), T(0)};
    const int X = part_x(u);
    return {seg_slot(B, X, 6), seg_slot(B, X, 7), seg_slot(B, X, 8)};
}

// seg_subst is the substitution of row e on each of y, v, w:
// ((d − a·x_left) − c·x_right)·(1/b).
template <typename T>
__device__ __forceinline__ void seg_subst(SegEq<T> &e, const SegX<T> &l, const SegX<T> &r, T q) {
    e.y = ((e.y - e.a * l.y) - e.c * r.y) * q;
    e.v = ((e.v - e.a * l.v) - e.c * r.v) * q;
    e.w = ((e.w - e.a * l.w) - e.c * r.w) * q;
}

// seg_get reads the F (O = 0) or L (O = 6) row of the thread at swizzled
// unit X, or the missing row when !ok.
template <typename T, int O>
__device__ __forceinline__ void seg_get(const T *B, int X, bool ok, SegEq<T> &e, T &q) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int h0 = O / R, h1 = (O + 5) / R;
    if (!ok) {
        e.a = e.c = e.y = e.v = e.w = T(0);
        q = T(1);
        return;
    }
    T v[(h1 - h0 + 1) * R];
#pragma unroll
    for (int h = h0; h <= h1; h++) {
        const V u = reinterpret_cast<const V *>(B)[X ^ h];
#pragma unroll
        for (int w = 0; w < R; w++) v[(h - h0) * R + w] = PartVec<T>::el(u, w);
    }
    constexpr int o = O - h0 * R;
    e.a = v[o], e.c = v[o + 1], e.y = v[o + 2], e.v = v[o + 3], e.w = v[o + 4];
    q = v[o + 5];
}

// seg_row is the original row of reduced row j of the segments' system.
__device__ __forceinline__ int seg_row(int j, int n, int M) {
    const int s0 = (j >> 1) * M;
    return (j & 1) ? s0 + min(M, n - s0) - 1 : s0;
}

// seg_reduced_cr solves one system's reduced system of R2 = 2Q rows by
// cyclic reduction in one warp (part_cr_warp): lane l holds rows 2l (F)
// and 2l+1 (L), Q ≤ 32 (lanes l ≥ Q pass identities), as partition.Solve
// with chunks of one row: breakdowns at the smallest (level, row), the
// last row's division last. Lane l < Q gets x of its two rows in xF, xL.
// It returns the breakdown's row of that system, or −1. Call from a whole
// warp.
template <typename T> __device__ int seg_reduced_cr(PartEq<T> F, PartEq<T> L, int Q, T &xF, T &xL) {
    const int l = threadIdx.x & 31;
    const int R2 = 2 * Q;
    unsigned key = 0xffffffffu; // (stage << 16) | row
    part_cr_warp<T>(
        F, L, l, 32, R2, part_cr_levels(R2),
        [&](int stage, bool isL) { key = min(key, (unsigned)(stage << 16 | (2 * l + (isL ? 1 : 0)))); }, xF, xL);
    key = __reduce_min_sync(0xffffffffu, key);
    return key == 0xffffffffu ? -1 : (int)(key & 0xffff);
}

// SegSlots is seg_reduce's exchange of the reduced rows in B: chunk u's
// slots at swizzled unit part_x(u·U).
template <typename T> struct SegSlots {
    T *B;
    int U;
    template <int O> __device__ __forceinline__ void put(int u, const SegEq<T> &e, T q) const {
        seg_put<T, O>(B, part_x(u * U), e, q);
    }
    template <int O> __device__ __forceinline__ void get(int u, bool ok, SegEq<T> &e, T &q) const {
        seg_get<T, O>(B, part_x(u * U), ok, e, q);
    }
    __device__ __forceinline__ void putX(int u, const SegEq<T> &e) const { seg_put_x(B, part_x(u * U), e); }
    __device__ __forceinline__ SegX<T> getX(int u, bool ok) const { return seg_get_x(B, u * U, ok); }
};

// seg_cr3 is the cyclic reduction of a segment's RR reduced rows with three
// right-hand sides y, v, w (part_cr_sync's steps), its first and last rows
// identities: thread t holds reduced rows 2t (F) and 2t+1 (L) when has,
// and exchanges them through ex (chunk t's slots: an F row's a, c, y, v,
// w, 1/b in slots 0 … 5 at level 1, an L row's in 6 … 11 at the level that
// eliminates it, its (y, v, w) over slots 6 … 8 in the substitution); F
// and L end holding their unknowns' (y, v, w), x = (y + v·x_first) +
// w·x_last. A bad divisor calls note with its key (rowOf: a reduced row's
// original row). Every thread of the block calls it (barriers).
template <typename T, typename Ex, typename Note, typename RowOf>
__device__ __forceinline__ void seg_cr3(const Ex &ex, int t, int RR, bool has, SegEq<T> &F, SegEq<T> &L, Note note,
                                        RowOf rowOf) {
    const int jf = 2 * t, jl = 2 * t + 1;
    const int K = part_cr_levels(RR);
    const bool hasF = has && jf < RR, hasL = has && jl < RR;
    T qF = T(1), qL = T(1);
    if (K >= 1) {
        qF = T(1) / F.b;
        if (hasF) {
            if (bad_divisor(F.b)) note(SEG_KEY(SEG_STAGE_LEVEL + 1, rowOf(jf)));
            ex.template put<0>(t, F, qF);
        }
        __syncthreads();
        if (hasL) {
            SegEq<T> r;
            T rq;
            ex.template get<0>(t + 1, jl + 1 < RR, r, rq);
            L = seg_upd(L, F, qF, r, rq);
        }
    }
    for (int k = 2; k <= K; k++) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        if (hasL && r == v) {
            qL = T(1) / L.b;
            if (bad_divisor(L.b)) note(SEG_KEY(SEG_STAGE_LEVEL + k, rowOf(jl)));
            ex.template put<6>(t, L, qL);
        }
        __syncthreads();
        if (hasL && r == 0) {
            SegEq<T> l, rr;
            T lq, rq;
            ex.template get<6>(t - v, true, l, lq);
            ex.template get<6>(t + v, jl + 2 * v < RR, rr, rq);
            L = seg_upd(L, l, lq, rr, rq);
        }
    }
    if (K == 0) {
        if (hasF && bad_divisor(F.b)) note(SEG_KEY(SEG_STAGE_FINAL, rowOf(jf)));
        F.y = F.y / F.b, F.v = F.v / F.b, F.w = F.w / F.b;
        return;
    }
    if (hasL && jl == (1 << K) - 1) {
        if (bad_divisor(L.b)) note(SEG_KEY(SEG_STAGE_FINAL, rowOf(jl)));
        L.y = L.y / L.b, L.v = L.v / L.b, L.w = L.w / L.b;
        ex.putX(t, L);
    }
    __syncthreads();
    for (int k = K; k >= 2; k--) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        if (hasL && r == v) {
            const SegX<T> xl = ex.getX(t - v, t >= v);
            const SegX<T> xr = ex.getX(t + v, jl + 2 * v < RR);
            seg_subst(L, xl, xr, qL);
            ex.putX(t, L);
        }
        __syncthreads();
    }
    if (hasF) {
        const SegX<T> xl = ex.getX(t - 1, t > 0);
        const SegX<T> xr = hasL ? SegX<T>{L.y, L.v, L.w} : SegX<T>{T(0), T(0), T(0)};
        seg_subst(F, xl, xr, qF);
    }
}

// seg_rows is the rest of a segment's reduction after Stage 1 (F0, L0: the
// thread's reduced rows; cn chunks, the last of lastm rows, RR reduced
// rows): the first and last reduced rows kept in sh (row0, rowe) and
// identities in their place, the cyclic reduction with three right-hand
// sides through ex (seg_cr3; F, L end holding the (y, v, w) of the
// thread's rows), and, in the thread of chunk 0, the segment's rows F_σ,
// L_σ of the reduced system of the segments in sh.frow. sh is a SegShared
// or an LsegSys. It has a barrier before the rows, none after.
template <typename T, typename Sh, typename Ex, typename Note, typename RowOf>
__device__ __forceinline__ void seg_rows(Sh &sh, const Ex &ex, int t, int cn, int lastm, int RR, bool has,
                                         const PartEq<T> &F0, const PartEq<T> &L0, SegEq<T> &F, SegEq<T> &L,
                                         Note note, RowOf rowOf) {
    F = {F0.a, F0.b, F0.c, F0.d, T(0), T(0)}, L = {L0.a, L0.b, L0.c, L0.d, T(0), T(0)};
    if (t == 0) {
        sh.row0[0] = F0.a, sh.row0[1] = F0.b, sh.row0[2] = F0.c, sh.row0[3] = F0.d;
        F = {T(0), T(1), T(0), T(0), T(1), T(0)};
    }
    if (t == cn - 1) {
        const PartEq<T> &e = lastm >= 2 ? L0 : F0;
        sh.rowe[0] = e.a, sh.rowe[1] = e.b, sh.rowe[2] = e.c, sh.rowe[3] = e.d;
        if (lastm >= 2)
            L = {T(0), T(1), T(0), T(0), T(0), T(1)};
        else
            F = {T(0), T(1), T(0), T(0), T(0), T(1)};
    }
    seg_cr3<T>(ex, t, RR, has, F, L, note, rowOf);
    // (y, v, w) of reduced rows 1 and RR−2.
    if (t == 0) sh.r1[0] = L.y, sh.r1[1] = L.v, sh.r1[2] = L.w;
    if (lastm >= 2 ? t == cn - 1 : t == cn - 2) {
        const SegEq<T> &e = lastm >= 2 ? F : L;
        sh.re[0] = e.y, sh.re[1] = e.v, sh.re[2] = e.w;
    }
    __syncthreads();
    if (t == 0) {
        // The segment's rows of the reduced system of the segments: its
        // first row with row 1 substituted, its last with row RR−2.
        const T a0 = sh.row0[0], b0 = sh.row0[1], c0 = sh.row0[2], d0 = sh.row0[3];
        const T ae = sh.rowe[0], be = sh.rowe[1], ce = sh.rowe[2], de = sh.rowe[3];
        sh.frow[0] = a0, sh.frow[1] = b0 + c0 * sh.r1[1], sh.frow[2] = c0 * sh.r1[2], sh.frow[3] = d0 - c0 * sh.r1[0];
        sh.frow[4] = ae * sh.re[1], sh.frow[5] = be + ae * sh.re[2], sh.frow[6] = ce, sh.frow[7] = de - ae * sh.re[0];
    }
}

// seg_put_rows writes a segment's rows F_σ, L_σ (frow) to the reduced
// batch at rows f, f+1 and fences them.
template <typename T>
__device__ __forceinline__ void seg_put_rows(const T *frow, T *RA, T *RB, T *RC, T *RD, i64 f, i64 step = 1) {
    const i64 l = f + step;
    __stcg(RA + f, frow[0]), __stcg(RB + f, frow[1]), __stcg(RC + f, frow[2]), __stcg(RD + f, frow[3]);
    __stcg(RA + l, frow[4]), __stcg(RB + l, frow[5]), __stcg(RC + l, frow[6]), __stcg(RD + l, frow[7]);
    __threadfence();
}

// seg_red_at is the index of segment sg's first reduced row of system g
// (the last is one step further) and the step, for flags' layout.
__device__ __forceinline__ i64 seg_red_at(int flags, int g, int sg, int G, int Q, i64 &step) {
    if (flags & SEG_RED_ROWS) {
        step = G;
        return (i64)(2 * sg) * G + g;
    }
    step = 1;
    return (i64)g * (2 * Q) + 2 * sg;
}

// SegBlock is one block's segment: which it is, where it lives in global
// and shared memory, and its thread's chunk.
template <typename T> struct SegBlock {
    int g, sg, s0, ns;          // system, segment, first row, rows
    i64 off, sbs;               // global offset of row s0; the segment's batch stride for part_load
    int ss;                     // units of a system (part_ss of M)
    T *SA, *SB, *SC, *SD;       // the four arrays
    SegShared<T> *sh;           // the block's shared values
    int nch, m, X, lastm, RR;   // chunks, this thread's chunk rows and unit, the last chunk's rows, reduced rows
    bool has;                   // this thread owns a chunk
};

// seg_shared returns the block's SegShared, after the four arrays of a
// segment of M rows.
template <typename T, int P> __device__ __forceinline__ SegShared<T> *seg_shared(int M) {
    constexpr int R = 16 / (int)sizeof(T);
    const int W = ((part_ss<T, P>(M, false) + 7) & ~7) * R;
    return reinterpret_cast<SegShared<T> *>(reinterpret_cast<T *>(part_smem) + 4 * W);
}

// seg_setup describes segment sg of system g.
template <typename T, int P>
__device__ __forceinline__ SegBlock<T> seg_setup(int n, int M, int g, int sg, i64 es, i64 bs) {
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    SegBlock<T> b;
    b.g = g, b.sg = sg, b.s0 = sg * M, b.ns = min(M, n - b.s0);
    b.off = (i64)g * bs + (i64)b.s0 * es;
    b.sbs = es == 1 ? (i64)b.ns : (i64)b.ns * es; // rows first, vector copies when es = 1
    b.ss = part_ss<T, P>(M, false);
    const int W = ((b.ss + 7) & ~7) * R;
    b.SA = reinterpret_cast<T *>(part_smem), b.SB = b.SA + W, b.SC = b.SB + W, b.SD = b.SC + W;
    b.sh = reinterpret_cast<SegShared<T> *>(b.SD + W);
    const int t = threadIdx.x;
    b.nch = (b.ns + P - 1) / P;
    b.has = t < b.nch;
    b.m = b.has ? min(P, b.ns - t * P) : 0;
    b.X = part_x(t * U);
    b.lastm = b.ns - (b.nch - 1) * P;
    b.RR = 2 * b.nch - (b.lastm == 1 ? 1 : 0);
    return b;
}

// seg_reduce loads the segment and reduces it: Stage 1, cyclic reduction with three
// right-hand sides on its reduced rows (the first and last replaced by
// identities), the breakdown keys into sh->key; this thread's reduced rows
// are left in F, L and the segment's two rows of the reduced system of the
// segments in sh->frow (F_σ: a, b, c, d; then L_σ). The block's
// sh->key must be SEG_NONE before; it ends with a barrier. flags: the
// SEG_KEEP_A and SEG_KEEP_C of a part.
template <typename T, int P>
__device__ __forceinline__ void seg_reduce(const Coeffs<T> &k, const T *d, int n, i64 es, const SegBlock<T> &b,
                                           SegEq<T> &F, SegEq<T> &L, int flags = 0) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8 && P >= 12, "chunks of whole units with 12 exchange slots");
    SegShared<T> &sh = *b.sh;
    Coeffs<T> ks = k;
    if (!k.isConst) ks.a = k.a + b.off, ks.b = k.b + b.off, ks.c = k.c + b.off;
    part_load<T, P, true>(ks, d + b.off, b.SA, b.SB, b.SC, b.SD, b.ss, b.ns, 1, es, b.sbs, 1, 0);
    __syncthreads();

    const V *VA = reinterpret_cast<const V *>(b.SA), *VB = reinterpret_cast<const V *>(b.SB);
    const V *VD = reinterpret_cast<const V *>(b.SD);
    V *VC = reinterpret_cast<V *>(b.SC);
    const int t = threadIdx.x, s0 = b.s0, ns = b.ns, nch = b.nch, lastm = b.lastm, RR = b.RR, X = b.X;
    auto rowOf = [&](int j) { return s0 + ((j & 1) ? min((j >> 1) * P + P, ns) - 1 : (j >> 1) * P); };

    // Stage 1.
    PartEq<T> F0 = {T(0), T(1), T(0), T(0)}, L0 = {T(0), T(1), T(0), T(0)};
    if (b.has) {
        part_eliminate<T, P, true>(VA, VB, VC, VD, b.SA, b.SD, X, b.m, (flags & SEG_KEEP_C) ? -1 : n - 1 - (s0 + t * P),
                                   s0 == 0 && t == 0 && !(flags & SEG_KEEP_A), F0, L0,
                             [&](int j) { atomicMin(&sh.key, SEG_KEY(SEG_STAGE_PIVOT, s0 + t * P + j)); });
    }
    seg_rows<T>(sh, SegSlots<T>{b.SB, U}, t, nch, lastm, RR, b.has, F0, L0, F, L,
                [&](unsigned long long key) { atomicMin(&sh.key, key); }, rowOf);
    __syncthreads();
}

// seg_finish is Stage 3 from the segment's boundary values x_first,
// x_last (a non-finite x keyed into sh->key); x ends in the C array.
template <typename T, int P>
__device__ __forceinline__ void seg_finish(const SegBlock<T> &b, const SegEq<T> &F, const SegEq<T> &L, T xf, T xl) {
    typedef typename PartVec<T>::V V;
    if (b.has) {
        const T xs = (F.y + F.v * xf) + F.w * xl;
        const T xe = b.m >= 2 ? (L.y + L.v * xf) + L.w * xl : xs;
        const int bad = part_recover<T, P, true>(reinterpret_cast<V *>(b.SC), reinterpret_cast<const V *>(b.SA),
                                           reinterpret_cast<const V *>(b.SD), b.X, b.m, xs, xe);
        if (bad >= 0) atomicMin(&b.sh->key, SEG_KEY(SEG_STAGE_RESULT, b.s0 + threadIdx.x * P + bad));
    }
    __syncthreads();
}

// seg_code is the status code of breakdown key kk (stored as ~key): row +
// 1, negated for a part's (flags with SEG_RED_ROWS) consequential stages.
__device__ __forceinline__ int seg_code(unsigned long long kk, int flags) {
    const int code = (int)(~kk & 0xffffffffull) + 1;
    return (flags & SEG_RED_ROWS) && (~kk >> 32) >= SEG_STAGE_REDUCED ? -code : code;
}

// seg_fill_nan writes NaN over rows lo … hi−1 of system g.
template <typename T> __device__ __forceinline__ void seg_fill_nan(T *x, int g, int lo, int hi, i64 es, i64 bs) {
    const T nan = nan_of<T>();
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) x[(i64)g * bs + (i64)i * es] = nan;
}

// seg_count_out counts the block's segment of system g out (its key into
// sys[3]); the system's last block fills x with NaN if a key is set,
// writes the status and clears the key, and clears the nested status nst
// (the expand pass's; null otherwise). Call from the whole block.
template <typename T>
__device__ __forceinline__ void seg_count_out(SegShared<T> &sh, unsigned long long *sys, int Q, int g, int n, int G,
                                              i64 es, i64 bs, T *x, int *status, int *nst, int flags = 0) {
    const int t = threadIdx.x;
    __syncthreads();
    if (t == 0) {
        if (sh.key != SEG_NONE) atomicMax(sys + 3, ~sh.key);
        __threadfence();
        sh.fin = (atomicAdd(sys + 1, 1ull) + 1) % (unsigned long long)Q == 0;
    }
    __syncthreads();
    if (!sh.fin) return;
    __threadfence();
    const unsigned long long kk = *reinterpret_cast<volatile unsigned long long *>(sys + 3);
    if (kk != 0) {
        seg_fill_nan(x, g, 0, n, es, bs);
        if (t == 0) {
            status[g] = seg_code(kk, flags);
            status[G] = 1;
        }
    }
    // The nested solve's status is kept zero between solves.
    if (nst != nullptr && t == 0 && nst[g] != 0) nst[g] = 0, nst[G] = 0;
    __syncthreads(); // every thread has read the key (sh.fin is the block's)
    if (t == 0 && kk != 0) sys[3] = 0;
}

template <typename T, int P>
__device__ void segment_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int M,
                               int Q, int mode, unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, T *XR,
                               int *nst, volatile unsigned int *word, unsigned int seq) {
    const int flags = mode & ~SEG_MODE_MASK;
    mode &= SEG_MODE_MASK;
    SegShared<T> &sh0 = *seg_shared<T, P>(M);
    const int t = threadIdx.x;
    if (t == 0) {
        // The expand pass takes the segments in reverse: those the reduce
        // pass read last are the likeliest still in L2.
        sh0.ticket = mode == SEG_ONEPASS ? atomicAdd(ctl, 1ull)
                     : mode == SEG_EXPAND ? (unsigned long long)(gridDim.x - 1 - blockIdx.x)
                                          : (unsigned long long)blockIdx.x;
        sh0.key = SEG_NONE;
        sh0.none = PART_NONE;
    }
    __syncthreads();
    const unsigned long long nb = gridDim.x;
    const unsigned long long epoch = sh0.ticket / nb;
    const int idx = (int)(sh0.ticket % nb);
    const SegBlock<T> b = seg_setup<T, P>(n, M, idx / Q, idx % Q, es, bs);
    SegShared<T> &sh = *b.sh;
    const int g = b.g, sg = b.sg;
    const int R2 = 2 * Q;
    unsigned long long *sys = ctl + 1 + 4 * (i64)g; // arrivals, finished, flag, key

    SegEq<T> F, L;
    seg_reduce<T, P>(k, d, n, es, b, F, L, flags);
    i64 rstep;
    const i64 rf = seg_red_at(flags, g, sg, G, Q, rstep);

    if (mode != SEG_EXPAND && t == 0) {
        seg_put_rows(sh.frow, RA, RB, RC, RD, rf, rstep);
        if (mode == SEG_ONEPASS) {
            __threadfence();
            sh.last = (atomicAdd(sys, 1ull) + 1) % (unsigned long long)Q == 0;
            __threadfence(); // the other blocks' rows are read after the count
        }
    }
    if (mode == SEG_REDUCE) return;
    if (mode == SEG_ONEPASS) {
        __syncthreads();
        if (sh.last) {
            if (t < 32) {
                const i64 f = (i64)g * R2;
                const int jf = f + 2 * t, jl = jf + 1;
                PartEq<T> Fr = {T(0), T(1), T(0), T(0)}, Lr = {T(0), T(1), T(0), T(0)};
                if (t < Q) {
                    Fr = {__ldcg(RA + jf), __ldcg(RB + jf), __ldcg(RC + jf), __ldcg(RD + jf)};
                    Lr = {__ldcg(RA + jl), __ldcg(RB + jl), __ldcg(RC + jl), __ldcg(RD + jl)};
                }
                T xF, xL;
                const int j = seg_reduced_cr<T>(Fr, Lr, Q, xF, xL);
                if (t < Q) __stcg(XR + jf, xF), __stcg(XR + jl, xL);
                __threadfence();
                __syncwarp();
                if (t == 0) {
                    if (j >= 0) atomicMin(&sh.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(j, n, M)));
                    part_st_release_gpu(sys + 2, epoch + 1);
                }
            }
        } else if (t == 0) {
            // Back off: the flag comes after the system's last block and
            // its solve, microseconds away; every poll is an L2 access.
            unsigned ns = 64;
            while (part_ld_acquire_gpu(sys + 2) != epoch + 1) {
                __nanosleep(ns);
                ns = min(2 * ns, 1024u);
            }
        }
    }
    if (t == 0) {
        sh.x[0] = __ldcg(XR + rf), sh.x[1] = __ldcg(XR + rf + rstep);
        if (mode == SEG_EXPAND && nst[g] != 0) atomicMin(&sh.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(nst[g] - 1, n, M)));
    }
    __syncthreads();
    seg_finish<T, P>(b, F, L, sh.x[0], sh.x[1]);
    part_store<T, P, true>(b.SC, &sh.none, x + b.off, b.ss, b.ns, 1, es, b.sbs, 1, 0);

    seg_count_out(sh, sys, Q, g, n, G, es, bs, x, status, mode == SEG_EXPAND ? nst : nullptr, flags);
    block_done_signal(status, G, word, seq); // word is null but in one pass
}

// segment_p16_*: the segmented partition method with chunks of 16 rows
// (FP32 at most 80 registers: 3 blocks of 256 threads).
// Grid: G·Q blocks; block: M/16 threads, a multiple of 32 from 64 to 256
// (at 512 threads the FP32 kernel spills); dynamic shared memory of four
// arrays of M elements (tuning.SegmentLaunchFor).
#ifndef BS_DEVICE_ONLY
#define SEGMENT(T, S, P, MAXT, MINB)                                                                              \
    extern "C" __global__ void __launch_bounds__(MAXT, MINB)                                                        \
        segment_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs,    \
                           T ca, T cb, T cc, int isConst, int *status, int M, int Q, int mode,                  \
                           unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, T *XR, int *nst,                \
                           volatile unsigned int *word, unsigned int seq) {                                      \
        segment_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, M, Q, mode,     \
                             ctl, RA, RB, RC, RD, XR, nst, word, seq);                                           \
    }
SEGMENT(float, f32, 16, 256, 3)
SEGMENT(double, f64, 16, 256, 1)
#endif
