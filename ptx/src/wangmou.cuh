// Wang & Mou (TPR paper §2.2.3, Figs. 3–4, Eq. 4). The CPU twin is
// wangmou.Solve (tridiag/wangmou): the same merges of triads in the same
// order and Eq. 4 at the end, so with -fmad=false the results agree bit
// for bit, and a breakdown is reported at the twin's row.
//
// A system of n rows is padded to NP = 2^⌈log2 n⌉ elements; element i
// carries the triad L_i, C_i, R_i (12 values), stored in 12 planes
// (L.a L.b L.c L.d C.a … R.d), plane p of element i at p·plane + i. Step
// k (u = 2^(k−1)) merges the pairs (i, i+u) of each block of 2u elements
// in place: one thread reads both triads and writes both.
//
// WM partitions naturally (§2.3): the first log2 C steps of a chunk of C
// consecutive elements need no other chunk. Launch (tuning.WMLaunchFor):
//   wm_local   cpb chunks of C elements per block, tpc threads per chunk:
//              load the rows (triplicated), the steps u = 1 … C/2 in
//              shared memory (12 planes of cpb·C, then cpb u64 keys).
//              When C = NP (the system fits in shared memory) it also does
//              Eq. 4, writes x (NaN and status for a failed system) and is
//              the only kernel; otherwise it writes the triads to the
//              workspace (12 planes of G·NP) and
//   wm_step    merges one step u ≥ C in the workspace, one thread per pair,
//   wm_final   one thread per row: Eq. 4, x, then the last block of each
//              system (counter cnt) records a failure and NaN-fills it.
// Keys are as in tpr.cuh (stored inverted, the smallest key wins): phase 0
// for the steps (sequence log2(u)·NP + row) and the Eq. 4 divisors
// (log2(NP)·NP + row), phase 3 for a non-finite x (which the twin does not
// check). On the multi-launch path keys[G] and cnt[G] are zero between
// solves: the launcher zeroes them when it first uses a workspace, and
// wm_final's last block of each system clears them.
#pragma once
#include "common.cuh"
#include "tpr.cuh"

// Triads in 12 planes.
template <typename T> struct WTri {
    T *P;
    i64 plane;
    __device__ __forceinline__ TEq<T> get(int part, i64 i) const {
        const T *q = P + 4 * part * plane + i;
        return teq<T>(q[0], q[plane], q[2 * plane], q[3 * plane]);
    }
    __device__ __forceinline__ void put(int part, i64 i, const TEq<T> &e) const {
        T *q = P + 4 * part * plane + i;
        q[0] = e.a;
        q[plane] = e.b;
        q[2 * plane] = e.c;
        q[3 * plane] = e.d;
    }
};

#define WM_L 0
#define WM_C 1
#define WM_R 2

// wm_merge is the twin's merge (Fig. 4) of the triads of elements i
// (block A, last unknown x_mid) and i+u (block B) of W, in place. It
// returns 1 when R_i.b is a bad divisor, 2 when the reduced L_{i+u}.b is,
// 0 otherwise (the triads are written in every case; a failed system is
// NaN-filled at the end).
template <typename T> __device__ __forceinline__ int wm_merge(const WTri<T> &W, i64 i, i64 iu) {
    const TEq<T> rp = W.get(WM_R, i);
    int bad = bad_divisor(rp.b) ? 1 : 0;
    // Part 1: x_mid leaves L_{i+u}, C_{i+u}, R_{i+u}.
    const TEq<T> ql = W.get(WM_L, iu);
    const T m = ql.a / rp.b;
    TEq<T> lq;
    lq.a = -(m * rp.a);
    lq.b = ql.b - m * rp.c;
    lq.c = ql.c;
    lq.d = ql.d - m * rp.d;
    const TEq<T> qc = W.get(WM_C, iu);
    const T mc = qc.a / rp.b;
    TEq<T> cq;
    cq.a = -(mc * rp.a);
    cq.b = qc.b;
    cq.c = qc.c;
    cq.d = qc.d - mc * rp.d;
    const T ec = -(mc * rp.c);
    const TEq<T> qr = W.get(WM_R, iu);
    const T mr = qr.a / rp.b;
    TEq<T> rq;
    rq.a = -(mr * rp.a);
    rq.b = qr.b;
    rq.c = qr.c;
    rq.d = qr.d - mr * rp.d;
    const T er = -(mr * rp.c);
    if (!bad && bad_divisor(lq.b)) bad = 2;
    // Part 2: x_{mid+1} leaves the others, by the new L_{i+u}.
    T f = ec / lq.b;
    cq.a = cq.a - f * lq.a;
    cq.c = cq.c - f * lq.c;
    cq.d = cq.d - f * lq.d;
    f = er / lq.b;
    rq.a = rq.a - f * lq.a;
    rq.c = rq.c - f * lq.c;
    rq.d = rq.d - f * lq.d;
    const TEq<T> pl = W.get(WM_L, i);
    f = pl.c / lq.b;
    TEq<T> lp;
    lp.a = pl.a - f * lq.a;
    lp.b = pl.b;
    lp.c = -(f * lq.c);
    lp.d = pl.d - f * lq.d;
    const TEq<T> pc = W.get(WM_C, i);
    f = pc.c / lq.b;
    TEq<T> cp;
    cp.a = pc.a - f * lq.a;
    cp.b = pc.b;
    cp.c = -(f * lq.c);
    cp.d = pc.d - f * lq.d;
    W.put(WM_L, i, lp);
    W.put(WM_C, i, cp);
    W.put(WM_R, i, rq);
    W.put(WM_L, iu, lp);
    W.put(WM_C, iu, cq);
    W.put(WM_R, iu, rq);
    return bad;
}

// Sequence number of a merge of step u failing at row: steps in order, rows
// ascending within a step (every pair of a block reports the same row).
__device__ __forceinline__ u64 wm_seq(int u, int NP, int row) { return (u64)(__ffs(u) - 1) * NP + row; }

template <typename T>
__device__ void wm_local_body(Coeffs<T> k, const T *d, T *x, T *Wg, u64 *keys, int *status, int n, int G, i64 es,
                              i64 bs, int NP, int C, int cpb, int tpc, i64 wPlane) {
    const bool single = C == NP;
    const int lnch = __ffs(NP) - __ffs(C); // log2 of the chunks per system
    const unsigned nchunks = (unsigned)G << lnch;
    T *sm = reinterpret_cast<T *>(tpr_smem);
    const i64 plane = (i64)cpb * C;
    u64 *skeys = reinterpret_cast<u64 *>(sm + 12 * plane);
    const bool sysFirst = bs < es && single;
    if (single) {
        for (int s = threadIdx.x; s < cpb; s += blockDim.x) skeys[s] = 0;
    }
    // Load: the rows of the block's chunks, each triplicated.
    for (int t = threadIdx.x; t < cpb * C; t += blockDim.x) {
        const int s = sysFirst ? t % cpb : t / C, i = sysFirst ? t / cpb : t % C;
        const unsigned q = blockIdx.x * (unsigned)cpb + s;
        if (q >= nchunks) continue;
        const int g = (int)(q >> lnch), row = (int)(q & ((1u << lnch) - 1)) * C + i;
        const TEq<T> e = tpr_load(k, d, n, es, (i64)g * bs, row);
        const i64 at = (i64)s * C + i;
        const WTri<T> W = {sm, plane};
        W.put(WM_L, at, e);
        W.put(WM_C, at, e);
        W.put(WM_R, at, e);
    }
    __syncthreads();
    const int s = threadIdx.x / tpc, lt = threadIdx.x % tpc;
    const unsigned q = blockIdx.x * (unsigned)cpb + s;
    const bool live = q < nchunks;
    const int g = (int)(q >> lnch), cbase = (int)(q & ((1u << lnch) - 1)) * C;
    u64 *kp = single ? &skeys[s] : &keys[g];
    const WTri<T> W = {sm + (i64)s * C, plane};
    for (int u = 1; u < C; u *= 2) {
        if (live) {
            for (int pr = lt; pr < C / 2; pr += tpc) {
                const int lo = (pr & ~(u - 1)) << 1, i = lo + (pr & (u - 1));
                const int bad = wm_merge(W, i, i + u);
                if (bad) {
                    const int row = cbase + lo + u - 1 + bad - 1;
                    atomicMax(kp, ~(((wm_seq(u, NP, row)) << TPR_ROW_BITS) | (u64)row));
                }
            }
        }
        __syncthreads();
    }
    if (!single) {
        // Triads to the workspace for the global steps.
        const WTri<T> Wo = {Wg, wPlane};
        const WTri<T> Ws = {sm, plane};
        for (int t = threadIdx.x; t < cpb * C; t += blockDim.x) {
            const int s2 = t / C, i = t % C;
            const unsigned q2 = blockIdx.x * (unsigned)cpb + s2;
            if (q2 >= nchunks) continue;
            const i64 at = ((i64)(q2 >> lnch) << (__ffs(NP) - 1)) + (i64)(q2 & ((1u << lnch) - 1)) * C + i;
            const i64 from = (i64)s2 * C + i;
            Wo.put(WM_L, at, Ws.get(WM_L, from));
            Wo.put(WM_C, at, Ws.get(WM_C, from));
            Wo.put(WM_R, at, Ws.get(WM_R, from));
        }
        return;
    }
    // Eq. 4 (the whole system is in the chunk): x over C.d.
    const int lnp = __ffs(NP) - 1;
    if (live) {
        T *Cb = W.P + 5 * plane, *Cd = W.P + 7 * plane;
        for (int i = lt; i < n; i += tpc) {
            const T b = Cb[i];
            if (bad_divisor(b)) atomicMax(kp, ~(((u64)lnp * NP + i) << TPR_ROW_BITS | (u64)i));
            const T v = Cd[i] / b;
            if (!isfinite(v)) atomicMax(kp, ~((3ULL << 62) | ((u64)i << TPR_ROW_BITS) | (u64)i));
            Cd[i] = v;
        }
    }
    __syncthreads();
    const T nan = nan_of<T>();
    for (int t = threadIdx.x; t < cpb * n; t += blockDim.x) {
        const int s2 = sysFirst ? t % cpb : t / n, i = sysFirst ? t / cpb : t % n;
        const unsigned g2 = blockIdx.x * (unsigned)cpb + s2;
        if (g2 >= nchunks) continue;
        x[(i64)g2 * bs + (i64)i * es] = skeys[s2] == 0 ? sm[7 * plane + (i64)s2 * C + i] : nan;
    }
    for (int s2 = threadIdx.x; s2 < cpb; s2 += blockDim.x) {
        const unsigned g2 = blockIdx.x * (unsigned)cpb + s2;
        const u64 inv = skeys[s2];
        if (g2 < nchunks && inv != 0) {
            atomicCAS(&status[g2], 0, (int)(~inv & TPR_ROW_MASK) + 1);
            status[G] = 1;
        }
    }
}

// One merge step u (≥ C) on the workspace, one thread per pair.
template <typename T> __device__ void wm_step_body(T *Wg, u64 *keys, int G, int NP, int u, i64 wPlane) {
    const int lh = __ffs(NP) - 2; // log2 of the pairs per system
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= ((i64)G << lh)) return;
    const int g = (int)(id >> lh), pr = (int)(id & ((1 << lh) - 1));
    const int lo = (pr & ~(u - 1)) << 1, i = lo + (pr & (u - 1));
    const WTri<T> W = {Wg + (i64)g * NP, wPlane};
    const int bad = wm_merge(W, i, i + u);
    if (bad) {
        const int row = lo + u - 1 + bad - 1;
        atomicMax(&keys[g], ~((wm_seq(u, NP, row) << TPR_ROW_BITS) | (u64)row));
    }
}

#define WM_FINAL_BLOCK 256

// Eq. 4 on the workspace: block b is rows part·256 … of system g
// (b = g·parts + part), then the per-system finish.
template <typename T>
__device__ void wm_final_body(const T *Wg, T *x, u64 *keys, unsigned *cnt, int *status, int n, int G, i64 es, i64 bs,
                              int NP, i64 wPlane) {
    __shared__ int last;
    const unsigned parts = ((unsigned)n + WM_FINAL_BLOCK - 1) / WM_FINAL_BLOCK;
    const int g = (int)(blockIdx.x / parts), part = (int)(blockIdx.x % parts);
    const int i = part * WM_FINAL_BLOCK + threadIdx.x;
    const int lnp = __ffs(NP) - 1;
    if (i < n) {
        const i64 at = (i64)g * NP + i;
        const T b = Wg[5 * wPlane + at];
        if (bad_divisor(b)) atomicMax(&keys[g], ~((((u64)lnp * NP + i) << TPR_ROW_BITS) | (u64)i));
        const T v = Wg[7 * wPlane + at] / b;
        if (!isfinite(v)) atomicMax(&keys[g], ~((3ULL << 62) | ((u64)i << TPR_ROW_BITS) | (u64)i));
        x[(i64)g * bs + (i64)i * es] = v;
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = 0;
        if (atomicAdd(&cnt[g], 1u) == parts - 1) {
            __threadfence();
            cnt[g] = 0; // zero for the next solve, as the key
            const u64 inv = atomicExch(&keys[g], 0ULL);
            if (inv != 0) {
                last = 1;
                atomicCAS(&status[g], 0, (int)(~inv & TPR_ROW_MASK) + 1);
                status[G] = 1;
            }
        }
    }
    __syncthreads();
    if (last) {
        const T nan = nan_of<T>();
        for (int r = threadIdx.x; r < n; r += blockDim.x) x[(i64)g * bs + (i64)r * es] = nan;
    }
}

#define WM_KERNELS(T, SUF)                                                                                             \
    extern "C" __global__ void __launch_bounds__(512, 1)                                                               \
        wm_local_##SUF(const T *a, const T *b, const T *c, const T *d, T ca, T cb, T cc, int isConst, T *x, T *W,      \
                       u64 *keys, int *status, int n, int G, i64 es, i64 bs, int NP, int C, int cpb, int tpc,          \
                       i64 wPlane) {                                                                                   \
        wm_local_body<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, W, keys, status, n, G, es, bs, NP, C, cpb,     \
                         tpc, wPlane);                                                                                 \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(256, 1)                                                               \
        wm_step_##SUF(T *W, u64 *keys, int G, int NP, int u, i64 wPlane) {                                             \
        wm_step_body<T>(W, keys, G, NP, u, wPlane);                                                                    \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(WM_FINAL_BLOCK, 1)                                                    \
        wm_final_##SUF(const T *W, T *x, u64 *keys, unsigned *cnt, int *status, int n, int G, i64 es, i64 bs, int NP,  \
                       i64 wPlane) {                                                                                   \
        wm_final_body<T>(W, x, keys, cnt, status, n, G, es, bs, NP, wPlane);                                           \
    }

WM_KERNELS(float, f32)
WM_KERNELS(double, f64)
