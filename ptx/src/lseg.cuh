// The segmented partition method with the systems across the lanes: for
// batches whose systems are adjacent in memory (batch stride 1, the
// interleaved layout) and too long for one block of the lanes kernel
// (lanes.cuh). A block takes S adjacent systems (a group; S = 16 in FP32,
// 8 in FP64: 64 bytes a row) and one segment of M rows of each: thread k
// works on system g0 + k mod S and on chunk k div S of the segment (16
// rows, kept in registers from the load to the store), so that every load
// and store of a warp covers 32/S rows of S adjacent systems in whole
// sectors. Its CPU twin is partition.SolveSegmented with chunks of 16 and
// segments of M rows, as for segment.cuh, whose operations this kernel does
// in the same order (PTX built with -fmad=false): the same bits.
//
// A block reduces its segment of each of its systems as segment.cuh's
// seg_reduce does (Stage 1 in registers, cyclic reduction with three
// right-hand sides y, v, w on the segment's reduced rows, the first and
// last replaced by identities, through shared memory with the systems
// across the lanes), and writes each system's two rows F_σ, L_σ of the
// reduced system of the segments. Modes as segment.cuh's:
//   SEG_ONEPASS: tickets order the blocks of a group; the last of the Q
//     blocks of a group to arrive solves the group's S reduced systems of
//     2Q rows (a warp a system, seg_reduced_cr) and posts the solution
//     with a flag; the others wait for it. Global memory is read once.
//   SEG_REDUCE / SEG_EXPAND: the reduced rows into the reduced batch (G
//     systems of 2Q rows, contiguous), solved by a nested plan; then every
//     segment recomputed (the same bits) and finished from that solution.
//
// Control words (u64, zeroed once, never reset: every launch adds the same
// amounts): ctl[0] the ticket counter; for group i at ctl[1 + 4i]:
// arrivals, finished blocks, the flag (epoch + 1), unused; for system g at
// ctl[1 + 4·groups + g] its breakdown key (0: none, else ~key, so that
// atomicMax keeps the smallest key). The last block of a group to finish
// fills the x of its systems that broke down with NaN, writes their status
// and clears their keys. Breakdown keys and stages are segment.cuh's.
//
// Launch (tuning.LanesSegmentLaunchFor): ⌈G/S⌉·Q blocks of S·M/16 threads;
// dynamic shared memory: the exchange (12 values a chunk: an F row's a, c,
// y, v, w, 1/b and an L row's) of M/16 chunks of S systems, then S LsegSys
// and one LsegBlk (LSEG_SHARED_EXTRA bytes a system, LSEG_SHARED_BLOCK).
#pragma once
#include "segment.cuh"
#include "signal.cuh"

// LsegSys is one system's shared values in a block.
template <typename T> struct LsegSys {
    unsigned long long key; // the smallest breakdown key (SEG_NONE: none)
    T row0[4], rowe[4];     // the segment's first and last reduced rows, kept
    T r1[3], re[3];         // (y, v, w) of reduced rows 1 and RR−2
    T x[2];                 // x_first, x_last
    T frow[8];              // F_σ (a, b, c, d), then L_σ
};
// LsegBlk is the block's own shared values.
struct LsegBlk {
    unsigned long long ticket;
    int last, fin; // the last block of its group to arrive, to finish
};
#define LSEG_SHARED_EXTRA(T) (8 + 24 * (int)sizeof(T))
#define LSEG_SHARED_BLOCK 16
static_assert(sizeof(LsegSys<float>) == LSEG_SHARED_EXTRA(float), "LsegSys<float> size");
static_assert(sizeof(LsegSys<double>) == LSEG_SHARED_EXTRA(double), "LsegSys<double> size");
static_assert(sizeof(LsegBlk) == LSEG_SHARED_BLOCK, "LsegBlk size");

// LsegEx is the exchange of one system's reduced rows: value v of chunk u
// of local system s at E[(v·nch + u)·S + s], a warp's lanes on adjacent
// words. Slots 0 … 5: the F row's a, c, y, v, w, 1/b; 6 … 11 the L row's;
// the L row's (y, v, w) over 6 … 8 in the substitution.
template <typename T> struct LsegEx {
    T *E;
    int nch, S, s;
    __device__ __forceinline__ T &at(int v, int u) const { return E[(v * nch + u) * S + s]; }
    template <int O> __device__ __forceinline__ void put(int u, const SegEq<T> &e, T q) const {
        at(O, u) = e.a, at(O + 1, u) = e.c, at(O + 2, u) = e.y;
        at(O + 3, u) = e.v, at(O + 4, u) = e.w, at(O + 5, u) = q;
    }
    template <int O> __device__ __forceinline__ void get(int u, bool ok, SegEq<T> &e, T &q) const {
        if (!ok) {
            e.a = e.c = e.y = e.v = e.w = T(0);
            q = T(1);
            return;
        }
        e.a = at(O, u), e.c = at(O + 1, u), e.y = at(O + 2, u);
        e.v = at(O + 3, u), e.w = at(O + 4, u), q = at(O + 5, u);
    }
    __device__ __forceinline__ void putX(int u, const SegEq<T> &e) const {
        at(6, u) = e.y, at(7, u) = e.v, at(8, u) = e.w;
    }
    __device__ __forceinline__ SegX<T> getX(int u, bool ok) const {
        if (!ok) return {T(0), T(0), T(0)};
        return {at(6, u), at(7, u), at(8, u)};
    }
};

// LsegArgs are a launch's arguments.
template <typename T> struct LsegArgs {
    Coeffs<T> k;
    const T *d;
    T *x;
    int n, G, M, Q, S;
    i64 es, bs;
    int *status;
    unsigned long long *ctl;
    T *RA, *RB, *RC, *RD, *XR;
    int *nst;
    int flags; // SEG_KEEP_A, SEG_KEEP_C, SEG_RED_ROWS (segment.cuh)
    __device__ __forceinline__ int groups() const { return (G + S - 1) / S; }
    // gw is group grp's control words: arrivals, finished blocks, flag.
    __device__ __forceinline__ unsigned long long *gw(int grp) const { return ctl + 1 + 4 * (i64)grp; }
    // gkey is system g's breakdown key word.
    __device__ __forceinline__ unsigned long long *gkey(int g) const { return ctl + 1 + 4 * (i64)groups() + g; }
};

// LsegItem is a block's item, segment sg of group grp, with its thread's
// system and chunk.
struct LsegItem {
    int grp, sg, g0, g;    // group, segment, the group's first system, the thread's
    int s0, ns, cn, RR;    // the segment's first row, rows, chunks, reduced rows
    int lastm, m;          // the last chunk's rows, the thread's chunk's
    bool live, has;        // the thread's system exists; it owns a chunk
    i64 base;              // the chunk's first row in global memory
};

template <int P>
__device__ __forceinline__ LsegItem lseg_item(int idx, int n, int G, int M, int Q, int S, int s, int t, i64 es, i64 bs) {
    LsegItem it;
    it.grp = idx / Q, it.sg = idx % Q;
    it.g0 = it.grp * S, it.g = it.g0 + s;
    it.live = it.g < G;
    it.s0 = it.sg * M, it.ns = min(M, n - it.s0);
    it.cn = (it.ns + P - 1) / P;
    it.has = t < it.cn;
    it.m = it.has ? min(P, it.ns - t * P) : 0;
    it.lastm = it.ns - (it.cn - 1) * P;
    it.RR = 2 * it.cn - (it.lastm == 1 ? 1 : 0);
    it.base = (i64)it.g * bs + (i64)(it.s0 + t * P) * es;
    return it;
}

// lseg_reduce is the first part of an item: Stage 1 in registers (γ, α, δ
// of the chunk's interior in sgm, sal, sdl), the cyclic reduction with
// three right-hand sides through E (F, L end holding the (y, v, w) of the
// thread's reduced rows), the segment's rows F_σ, L_σ of each system in
// its LsegSys (SY[s]), written to the reduced batch when write (and
// fenced). Breakdowns go to SY[s].key. No barrier at its end.
template <typename T, int P>
__device__ __forceinline__ void lseg_reduce(const LsegArgs<T> &a, const LsegItem &it, int t, int s, LsegSys<T> *SY,
                                            T *E, bool write, T (&sgm)[P], T (&sal)[P], T (&sdl)[P], SegEq<T> &F,
                                            SegEq<T> &L) {
    const Coeffs<T> &k = a.k;
    const int nch = a.M / P, n = a.n;
    LsegSys<T> &sy = SY[s];
    const LsegEx<T> X{E, nch, a.S, s};
    auto note = [&](unsigned long long key) {
        if (it.live) atomicMin(&sy.key, key);
    };
    const int s0 = it.s0, ns = it.ns, cn = it.cn, lastm = it.lastm;
    auto rowOf = [&](int j) { return s0 + ((j & 1) ? min((j >> 1) * P + P, ns) - 1 : (j >> 1) * P); };

    // Stage 1: the chunk's rows, loaded at once, eliminated in registers.
    PartEq<T> F0 = {T(0), T(1), T(0), T(0)}, L0 = {T(0), T(1), T(0), T(0)};
    if (it.has && it.live) {
        T ra[P], rb[P], rc[P], rd[P];
#pragma unroll
        for (int j = 0; j < P; j++) {
            ra[j] = rc[j] = rd[j] = T(0), rb[j] = T(1);
            if (j < it.m) {
                const i64 i = it.base + (i64)j * a.es;
                rd[j] = a.d[i];
                if (k.isConst) {
                    ra[j] = k.ca, rb[j] = k.cb, rc[j] = k.cc;
                } else {
                    ra[j] = k.a[i], rb[j] = k.b[i], rc[j] = k.c[i];
                }
            }
        }
        part_eliminate_regs<T, P>([&](int j, T &aj, T &bj, T &cj, T &dj) { aj = ra[j], bj = rb[j], cj = rc[j], dj = rd[j]; },
                                  it.m, (a.flags & SEG_KEEP_C) ? -1 : n - 1 - (s0 + t * P),
                                  s0 == 0 && t == 0 && !(a.flags & SEG_KEEP_A), sgm, sal, sdl, F0, L0,
                                  [&](int j) { note(SEG_KEY(SEG_STAGE_PIVOT, s0 + t * P + j)); });
    }
    seg_rows<T>(sy, X, t, cn, lastm, it.RR, it.has, F0, L0, F, L, note, rowOf);
    if (t == 0 && write && it.live) {
        i64 step;
        const i64 f = seg_red_at(a.flags, it.g, it.sg, a.G, a.Q, step);
        seg_put_rows(sy.frow, a.RA, a.RB, a.RC, a.RD, f, step);
    }
}

// lseg_arrive counts the block's item in; the last block of the group to
// arrive solves the group's reduced systems (a warp a system; breakdowns
// into SY[w].key) and posts the flag epoch + 1. It returns whether this
// block was the last. Call from the whole block after lseg_reduce wrote
// the rows.
template <typename T>
__device__ __forceinline__ bool lseg_arrive(const LsegArgs<T> &a, const LsegItem &it, LsegSys<T> *SY, LsegBlk &bk,
                                            unsigned long long epoch) {
    const int tid = threadIdx.x;
    unsigned long long *gw = a.gw(it.grp);
    __syncthreads(); // every system's rows written and fenced
    if (tid == 0) {
        bk.last = (atomicAdd(gw, 1ull) + 1) % (unsigned long long)a.Q == 0;
        __threadfence(); // the other blocks' rows are read after the count
    }
    __syncthreads();
    if (!bk.last) return false;
    const int lane = tid & 31, R2 = 2 * a.Q;
    for (int w = tid / 32; w < a.S; w += blockDim.x / 32) {
        const int gg = it.g0 + w;
        if (gg >= a.G) break;
        const i64 jf2 = (i64)gg * R2 + 2 * lane, jl2 = jf2 + 1;
        PartEq<T> Fr = {T(0), T(1), T(0), T(0)}, Lr = {T(0), T(1), T(0), T(0)};
        if (lane < a.Q) {
            Fr = {__ldcg(a.RA + jf2), __ldcg(a.RB + jf2), __ldcg(a.RC + jf2), __ldcg(a.RD + jf2)};
            Lr = {__ldcg(a.RA + jl2), __ldcg(a.RB + jl2), __ldcg(a.RC + jl2), __ldcg(a.RD + jl2)};
        }
        T xF, xL;
        const int j = seg_reduced_cr<T>(Fr, Lr, a.Q, xF, xL);
        if (lane < a.Q) __stcg(a.XR + jf2, xF), __stcg(a.XR + jl2, xL);
        __threadfence();
        if (lane == 0 && j >= 0) atomicMin(&SY[w].key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(j, a.n, a.M)));
    }
    __syncthreads(); // every warp's solution written and fenced
    if (tid == 0) part_st_release_gpu(gw + 2, epoch + 1);
    return true;
}

// lseg_wait waits (the block's first thread) for group grp's flag to read
// epoch + 1.
template <typename T> __device__ __forceinline__ void lseg_wait(const LsegArgs<T> &a, int grp, unsigned long long epoch) {
    if (threadIdx.x != 0) return;
    // Back off: the flag comes after the group's last block and its
    // solves, microseconds away; every poll is an L2 access.
    unsigned ns = 64;
    while (part_ld_acquire_gpu(a.gw(grp) + 2) != epoch + 1) {
        __nanosleep(ns);
        ns = min(2 * ns, 1024u);
    }
}

// lseg_fetch_x reads the item's x_first, x_last of each system into its
// LsegSys (and, in the expand pass, the nested solve's breakdown). The
// caller synchronises before and after.
template <typename T>
__device__ __forceinline__ void lseg_fetch_x(const LsegArgs<T> &a, const LsegItem &it, int t, LsegSys<T> &sy, int mode) {
    if (t != 0 || !it.live) return;
    i64 step;
    const i64 f = seg_red_at(a.flags, it.g, it.sg, a.G, a.Q, step);
    sy.x[0] = __ldcg(a.XR + f), sy.x[1] = __ldcg(a.XR + f + step);
    if (mode == SEG_EXPAND && a.nst[it.g] != 0)
        atomicMin(&sy.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(a.nst[it.g] - 1, a.n, a.M)));
}

// lseg_recover is Stage 3 of the thread's chunk (part_recover_regs) from
// x_first, x_last in its LsegSys and the (y, v, w) of its reduced rows F,
// L; x is found over δ (sdl: part_recover_regs reads δ_j before it writes
// x_j) and stored; a non-finite x keyed.
template <typename T, int P>
__device__ __forceinline__ void lseg_recover(const LsegArgs<T> &a, const LsegItem &it, int t, LsegSys<T> &sy,
                                             const SegEq<T> &F, const SegEq<T> &L, const T (&sgm)[P],
                                             const T (&sal)[P], T (&sdl)[P]) {
    if (!it.has || !it.live) return;
    const T xf = sy.x[0], xl = sy.x[1];
    const T xs = (F.y + F.v * xf) + F.w * xl;
    const T xe = it.m >= 2 ? (L.y + L.v * xf) + L.w * xl : xs;
    const int bad = part_recover_regs<T, P>(sgm, sal, sdl, it.m, xs, xe, sdl);
    if (bad >= 0) atomicMin(&sy.key, SEG_KEY(SEG_STAGE_RESULT, it.s0 + t * P + bad));
#pragma unroll
    for (int j = 0; j < P; j++)
        if (j < it.m) a.x[it.base + (i64)j * a.es] = sdl[j];
}

// lseg_count_out counts the block's item out of its group; the group's
// last block to finish fills the x of its systems that broke down with
// NaN, writes their status and clears their keys (and, in the expand
// pass, the nested status). Call from the whole block.
template <typename T>
__device__ __forceinline__ void lseg_count_out(const LsegArgs<T> &a, const LsegItem &it, int s, LsegSys<T> *SY,
                                               LsegBlk &bk, int mode) {
    const int tid = threadIdx.x;
    LsegSys<T> &sy = SY[s];
    __syncthreads();
    if (tid < a.S && it.live && sy.key != SEG_NONE) {
        atomicMax(a.gkey(it.g), ~sy.key);
        __threadfence();
    }
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        bk.fin = (atomicAdd(a.gw(it.grp) + 1, 1ull) + 1) % (unsigned long long)a.Q == 0;
    }
    __syncthreads();
    if (!bk.fin) return;
    __threadfence();
    // Every system's key into its LsegSys (0: none), read by all.
    if (tid < a.S) sy.key = it.live ? *reinterpret_cast<volatile unsigned long long *>(a.gkey(it.g)) : 0ull;
    __syncthreads();
    const T nan = nan_of<T>();
    for (int w = 0; w < a.S && it.g0 + w < a.G; w++) {
        if (SY[w].key == 0) continue;
        for (int i = tid; i < a.n; i += blockDim.x) a.x[(i64)(it.g0 + w) * a.bs + (i64)i * a.es] = nan;
    }
    if (tid < a.S && it.live) {
        const unsigned long long kk = sy.key;
        if (kk != 0) {
            a.status[it.g] = seg_code(kk, a.flags);
            a.status[a.G] = 1;
            *a.gkey(it.g) = 0;
        }
        // The nested solve's status is kept zero between solves.
        if (mode == SEG_EXPAND && a.nst[it.g] != 0) a.nst[it.g] = 0, a.nst[a.G] = 0;
    }
    __syncthreads(); // SY is read before the block's next item writes it
}

template <typename T, int P>
__device__ void lseg_kernel(const LsegArgs<T> &a, int mode, volatile unsigned int *word, unsigned int seq) {
    const int nch = a.M / P; // blockDim.x = S·nch
    T *E = reinterpret_cast<T *>(part_smem);
    LsegSys<T> *SY = reinterpret_cast<LsegSys<T> *>(E + 12 * nch * a.S);
    LsegBlk &bk = *reinterpret_cast<LsegBlk *>(SY + a.S);
    const int tid = threadIdx.x, s = tid % a.S, t = tid / a.S;
    if (tid == 0) {
        // The expand pass takes the segments in reverse: those the reduce
        // pass read last are the likeliest still in L2.
        bk.ticket = mode == SEG_ONEPASS ? atomicAdd(a.ctl, 1ull)
                    : mode == SEG_EXPAND ? (unsigned long long)(gridDim.x - 1 - blockIdx.x)
                                         : (unsigned long long)blockIdx.x;
    }
    if (tid < a.S) SY[tid].key = SEG_NONE;
    __syncthreads();
    const unsigned long long nb = gridDim.x;
    const unsigned long long epoch = bk.ticket / nb;
    const LsegItem it = lseg_item<P>((int)(bk.ticket % nb), a.n, a.G, a.M, a.Q, a.S, s, t, a.es, a.bs);

    T sgm[P], sal[P], sdl[P];
    SegEq<T> F, L;
    lseg_reduce<T, P>(a, it, t, s, SY, E, mode != SEG_EXPAND, sgm, sal, sdl, F, L);
    if (mode == SEG_REDUCE) return;
    if (mode == SEG_ONEPASS && !lseg_arrive<T>(a, it, SY, bk, epoch)) lseg_wait<T>(a, it.grp, epoch);
    __syncthreads();
    lseg_fetch_x<T>(a, it, t, SY[s], mode);
    __syncthreads();
    lseg_recover<T, P>(a, it, t, SY[s], F, L, sgm, sal, sdl);
    lseg_count_out<T>(a, it, s, SY, bk, mode);
    block_done_signal(a.status, a.G, word, seq); // word is null but in one pass
}

// lseg_p16_*: the segmented partition method with the systems across the
// lanes, chunks of 16 rows. Grid: ⌈G/S⌉·Q blocks; block: S·M/16 threads,
// at most MAXT; the parameters of segment_p16_* and S (spb).
#ifndef BS_DEVICE_ONLY
#define LSEG(T, SFX, P, MAXT)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                             \
        lseg_p##P##_##SFX(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs,      \
                          T ca, T cb, T cc, int isConst, int *status, int M, int Q, int spb, int mode,           \
                          unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, T *XR, int *nst,                   \
                          volatile unsigned int *word, unsigned int seq) {                                        \
        lseg_kernel<T, P>(LsegArgs<T>{Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, M, Q, spb, es, bs,   \
                                      status, ctl, RA, RB, RC, RD, XR, nst, mode & ~SEG_MODE_MASK},              \
                          mode & SEG_MODE_MASK, word, seq);                                                       \
    }
LSEG(float, f32, 16, 512)
LSEG(double, f64, 16, 256)
#endif
