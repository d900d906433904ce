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

template <typename T, int P>
__device__ void lseg_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int M, int Q,
                            int S, int mode, unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, T *XR, int *nst,
                            volatile unsigned int *word, unsigned int seq) {
    const int nch = M / P; // blockDim.x = S·nch
    T *E = reinterpret_cast<T *>(part_smem);
    LsegSys<T> *SY = reinterpret_cast<LsegSys<T> *>(E + 12 * nch * S);
    LsegBlk &bk = *reinterpret_cast<LsegBlk *>(SY + S);
    const int tid = threadIdx.x, s = tid % S, t = tid / S;
    if (tid == 0) {
        // The expand pass takes the segments in reverse: those the reduce
        // pass read last are the likeliest still in L2.
        bk.ticket = mode == SEG_ONEPASS ? atomicAdd(ctl, 1ull)
                    : mode == SEG_EXPAND ? (unsigned long long)(gridDim.x - 1 - blockIdx.x)
                                         : (unsigned long long)blockIdx.x;
    }
    if (tid < S) SY[tid].key = SEG_NONE;
    __syncthreads();
    const unsigned long long nb = gridDim.x;
    const unsigned long long epoch = bk.ticket / nb;
    const int idx = (int)(bk.ticket % nb);
    const int grp = idx / Q, sg = idx % Q;
    const int groups = (G + S - 1) / S;
    const int g0 = grp * S, g = g0 + s;
    const bool live = g < G;
    unsigned long long *gw = ctl + 1 + 4 * (i64)grp;       // arrivals, finished, flag
    unsigned long long *gkeys = ctl + 1 + 4 * (i64)groups; // a key a system
    const int s0 = sg * M, ns = min(M, n - s0);
    const int cn = (ns + P - 1) / P; // the segment's chunks
    const bool has = t < cn;
    const int m = has ? min(P, ns - t * P) : 0;
    const int lastm = ns - (cn - 1) * P;
    const int RR = 2 * cn - (lastm == 1 ? 1 : 0);
    const int R2 = 2 * Q;
    LsegSys<T> &sy = SY[s];
    const LsegEx<T> X{E, nch, S, s};
    auto note = [&](unsigned long long key) {
        if (live) atomicMin(&sy.key, key);
    };
    auto rowOf = [&](int j) { return s0 + ((j & 1) ? min((j >> 1) * P + P, ns) - 1 : (j >> 1) * P); };

    // Stage 1: the chunk's rows, loaded at once, eliminated in registers.
    T sgm[P], sal[P], sdl[P], rd[P];
    const i64 base = (i64)g * bs + (i64)(s0 + t * P) * es;
    PartEq<T> F0 = {T(0), T(1), T(0), T(0)}, L0 = {T(0), T(1), T(0), T(0)};
    if (has && live) {
        T ra[P], rb[P], rc[P];
#pragma unroll
        for (int j = 0; j < P; j++) {
            ra[j] = rc[j] = rd[j] = T(0), rb[j] = T(1);
            if (j < m) {
                const i64 i = base + (i64)j * es;
                rd[j] = d[i];
                if (k.isConst) {
                    ra[j] = k.ca, rb[j] = k.cb, rc[j] = k.cc;
                } else {
                    ra[j] = k.a[i], rb[j] = k.b[i], rc[j] = k.c[i];
                }
            }
        }
        part_eliminate_regs<T, P>([&](int j, T &aj, T &bj, T &cj, T &dj) { aj = ra[j], bj = rb[j], cj = rc[j], dj = rd[j]; },
                                  m, n - 1 - (s0 + t * P), s0 == 0 && t == 0, sgm, sal, sdl, F0, L0,
                                  [&](int j) { note(SEG_KEY(SEG_STAGE_PIVOT, s0 + t * P + j)); });
    }
    // The first and last reduced rows kept, identities in their place.
    SegEq<T> F = {F0.a, F0.b, F0.c, F0.d, T(0), T(0)}, L = {L0.a, L0.b, L0.c, L0.d, T(0), T(0)};
    if (t == 0) {
        sy.row0[0] = F0.a, sy.row0[1] = F0.b, sy.row0[2] = F0.c, sy.row0[3] = F0.d;
        F = {T(0), T(1), T(0), T(0), T(1), T(0)};
    }
    if (t == cn - 1) {
        const PartEq<T> &e = lastm >= 2 ? L0 : F0;
        sy.rowe[0] = e.a, sy.rowe[1] = e.b, sy.rowe[2] = e.c, sy.rowe[3] = e.d;
        if (lastm >= 2)
            L = {T(0), T(1), T(0), T(0), T(0), T(1)};
        else
            F = {T(0), T(1), T(0), T(0), T(0), T(1)};
    }

    // Cyclic reduction on the segment's RR reduced rows, three right-hand
    // sides, through E (as seg_reduce through B).
    seg_cr3<T>(X, t, RR, has, F, L, note, rowOf);
    // (y, v, w) of reduced rows 1 and RR−2.
    if (t == 0) sy.r1[0] = L.y, sy.r1[1] = L.v, sy.r1[2] = L.w;
    if (lastm >= 2 ? t == cn - 1 : t == cn - 2) {
        const SegEq<T> &e = lastm >= 2 ? F : L;
        sy.re[0] = e.y, sy.re[1] = e.v, sy.re[2] = e.w;
    }
    __syncthreads();
    if (t == 0) {
        // The segment's rows of the reduced system of the segments.
        const T a0 = sy.row0[0], b0 = sy.row0[1], c0 = sy.row0[2], d0 = sy.row0[3];
        const T ae = sy.rowe[0], be = sy.rowe[1], ce = sy.rowe[2], de = sy.rowe[3];
        sy.frow[0] = a0, sy.frow[1] = b0 + c0 * sy.r1[1], sy.frow[2] = c0 * sy.r1[2], sy.frow[3] = d0 - c0 * sy.r1[0];
        sy.frow[4] = ae * sy.re[1], sy.frow[5] = be + ae * sy.re[2], sy.frow[6] = ce, sy.frow[7] = de - ae * sy.re[0];
        if (mode != SEG_EXPAND && live) {
            const i64 f = (i64)g * R2 + 2 * sg;
            __stcg(RA + f, sy.frow[0]), __stcg(RB + f, sy.frow[1]), __stcg(RC + f, sy.frow[2]),
                __stcg(RD + f, sy.frow[3]);
            __stcg(RA + f + 1, sy.frow[4]), __stcg(RB + f + 1, sy.frow[5]), __stcg(RC + f + 1, sy.frow[6]),
                __stcg(RD + f + 1, sy.frow[7]);
            __threadfence();
        }
    }
    if (mode == SEG_REDUCE) return;
    if (mode == SEG_ONEPASS) {
        __syncthreads(); // every system's rows written and fenced
        if (tid == 0) {
            bk.last = (atomicAdd(gw, 1ull) + 1) % (unsigned long long)Q == 0;
            __threadfence(); // the other blocks' rows are read after the count
        }
        __syncthreads();
        if (bk.last) {
            // A warp a system solves the group's reduced systems.
            const int lane = tid & 31;
            for (int w = tid / 32; w < S; w += blockDim.x / 32) {
                const int gg = g0 + w;
                if (gg >= G) break;
                const i64 jf2 = (i64)gg * R2 + 2 * lane, jl2 = jf2 + 1;
                PartEq<T> Fr = {T(0), T(1), T(0), T(0)}, Lr = {T(0), T(1), T(0), T(0)};
                if (lane < Q) {
                    Fr = {__ldcg(RA + jf2), __ldcg(RB + jf2), __ldcg(RC + jf2), __ldcg(RD + jf2)};
                    Lr = {__ldcg(RA + jl2), __ldcg(RB + jl2), __ldcg(RC + jl2), __ldcg(RD + jl2)};
                }
                T xF, xL;
                const int j = seg_reduced_cr<T>(Fr, Lr, Q, xF, xL);
                if (lane < Q) __stcg(XR + jf2, xF), __stcg(XR + jl2, xL);
                __threadfence();
                if (lane == 0 && j >= 0) atomicMin(&SY[w].key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(j, n, M)));
            }
            __syncthreads(); // every warp's solution written and fenced
            if (tid == 0) part_st_release_gpu(gw + 2, epoch + 1);
        } else if (tid == 0) {
            // Back off: the flag comes after the group's last block and its
            // solves, microseconds away; every poll is an L2 access.
            unsigned ns2 = 64;
            while (part_ld_acquire_gpu(gw + 2) != epoch + 1) {
                __nanosleep(ns2);
                ns2 = min(2 * ns2, 1024u);
            }
        }
    }
    __syncthreads();
    if (t == 0 && live) {
        const i64 f = (i64)g * R2 + 2 * sg;
        sy.x[0] = __ldcg(XR + f), sy.x[1] = __ldcg(XR + f + 1);
        if (mode == SEG_EXPAND && nst[g] != 0) atomicMin(&sy.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(nst[g] - 1, n, M)));
    }
    __syncthreads();

    // Stage 3: x of the chunk from its reduced rows' (y, v, w).
    if (has && live) {
        const T xf = sy.x[0], xl = sy.x[1];
        const T xs = (F.y + F.v * xf) + F.w * xl;
        const T xe = m >= 2 ? (L.y + L.v * xf) + L.w * xl : xs;
        const int bad = part_recover_regs<T, P>(sgm, sal, sdl, m, xs, xe, rd);
        if (bad >= 0) note(SEG_KEY(SEG_STAGE_RESULT, s0 + t * P + bad));
#pragma unroll
        for (int j = 0; j < P; j++)
            if (j < m) x[base + (i64)j * es] = rd[j];
    }

    // Count the block out; the group's last block reports breakdowns.
    __syncthreads();
    if (tid < S && live && sy.key != SEG_NONE) {
        atomicMax(gkeys + g, ~sy.key);
        __threadfence();
    }
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        bk.fin = (atomicAdd(gw + 1, 1ull) + 1) % (unsigned long long)Q == 0;
    }
    __syncthreads();
    if (bk.fin) {
        __threadfence();
        // Every system's key into its LsegSys (0: none), read by all.
        if (tid < S) sy.key = live ? *reinterpret_cast<volatile unsigned long long *>(gkeys + g) : 0ull;
        __syncthreads();
        const T nan = nan_of<T>();
        for (int w = 0; w < S && g0 + w < G; w++) {
            if (SY[w].key == 0) continue;
            for (int i = tid; i < n; i += blockDim.x) x[(i64)(g0 + w) * bs + (i64)i * es] = nan;
        }
        if (tid < S && live) {
            const unsigned long long kk = sy.key;
            if (kk != 0) {
                status[g] = (int)(~kk & 0xffffffffull) + 1;
                status[G] = 1;
                gkeys[g] = 0;
            }
            // The nested solve's status is kept zero between solves.
            if (mode == SEG_EXPAND && nst[g] != 0) nst[g] = 0, nst[G] = 0;
        }
    }
    block_done_signal(status, G, word, seq); // word is null but in one pass
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
        lseg_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, M, Q, spb, mode,  \
                          ctl, RA, RB, RC, RD, XR, nst, word, seq);                                               \
    }
LSEG(float, f32, 16, 512)
LSEG(double, f64, 16, 256)
#endif
