// The partition method with the systems across a warp's lanes, for
// batches whose systems are adjacent in memory (batch stride 1: the
// interleaved layout). A block takes S adjacent systems (S = 32, 16 or 8:
// spb): thread k works on system g0 + k mod S (g0 = S·blockIdx.x) and on
// its chunk k div S, rows tP … tP+P−1, so that each load and store of a
// warp touches one row of S adjacent systems (S·sizeof(T) bytes, 32/S
// rows), and a thread's chunk stays in its registers from the load to the
// store. partition_kernel instead stages the block's systems through
// shared memory one element per copy, and in this layout it is bound by
// those copies and by the L2 requests of the few systems that fit a block
// (go test -tags cuda -run '^$' -bench Interleaved ./cuda).
//
// The operations are partition.Solve's (tridiag/partition), in its order,
// as in partition_kernel (PTX built with -fmad=false): the same bits. Only
// the reduced rows (two a chunk: F = 2t, L = 2t+1; the last chunk of one
// row has no L) go through shared memory, for the cyclic reduction
// (part_cr_sync).
//
// Launch (tuning.PartitionLanesLaunch): ⌈G/S⌉ blocks of S·T threads, T =
// ⌈n/P⌉ chunks a system; dynamic shared memory E: two buffers of four
// values (a, c, d, 1/b) of 2T rows of S systems, 2·4·2T·S·sizeof(T)
// bytes, of which the cyclic reduction uses the first (the second is
// unused: the launch keeps the size that the tuning's residency figures
// assume). Breakdown keys, NaN fill and status as in
// partition_kernel.
#pragma once
#include "common.cuh"
#include "partition.cuh"
#include "signal.cuh"

// lanes_at is the position of value v (0 a, 1 c, 2 d, 3 1/b) of reduced
// row j of local system s in buffer buf, S systems a block: a warp's lanes
// on S adjacent words per row.
__device__ __forceinline__ int lanes_at(int buf, int v, int j, int rows, int S, int s) {
    return ((buf * 4 + v) * rows + j) * S + s;
}

// lanes_get reads row j's a, c, d, 1/b of buffer buf, the identity when
// the row does not exist (ok false).
template <typename T>
__device__ __forceinline__ void lanes_get(const T *E, int buf, int j, int rows, int S, int s, bool ok, T &a, T &c,
                                          T &d, T &q) {
    if (!ok) {
        a = T(0), c = T(0), d = T(0), q = T(1);
        return;
    }
    a = E[lanes_at(buf, 0, j, rows, S, s)];
    c = E[lanes_at(buf, 1, j, rows, S, s)];
    d = E[lanes_at(buf, 2, j, rows, S, s)];
    q = E[lanes_at(buf, 3, j, rows, S, s)];
}

template <typename T>
__device__ __forceinline__ void lanes_put(T *E, int buf, int j, int rows, int S, int s, const PartEq<T> &e, T q) {
    E[lanes_at(buf, 0, j, rows, S, s)] = e.a;
    E[lanes_at(buf, 1, j, rows, S, s)] = e.c;
    E[lanes_at(buf, 2, j, rows, S, s)] = e.d;
    E[lanes_at(buf, 3, j, rows, S, s)] = q;
}

// LanesCR is part_cr_sync's exchange through E (buffer 0): reduced row j
// of local system s at lanes_at(0, ·, j, …), thread t's F row 2t, its L
// row 2t+1, an L row's x over its a.
template <typename T> struct LanesCR {
    T *E;
    int t, rows, S, s;
    __device__ __forceinline__ void putF(const PartEq<T> &e, T q) const { lanes_put(E, 0, 2 * t, rows, S, s, e, q); }
    __device__ __forceinline__ void putL(const PartEq<T> &e, T q) const {
        lanes_put(E, 0, 2 * t + 1, rows, S, s, e, q);
    }
    __device__ __forceinline__ void getF(int dt, bool ok, T &a, T &c, T &d, T &q) const {
        lanes_get(E, 0, 2 * (t + dt), rows, S, s, ok, a, c, d, q);
    }
    __device__ __forceinline__ void getL(int dt, bool ok, T &a, T &c, T &d, T &q) const {
        lanes_get(E, 0, 2 * (t + dt) + 1, rows, S, s, ok, a, c, d, q);
    }
    __device__ __forceinline__ void putX(T x) const { E[lanes_at(0, 0, 2 * t + 1, rows, S, s)] = x; }
    __device__ __forceinline__ void putXAt(int dt, T x) const {
        E[lanes_at(0, 0, 2 * (t + dt) + 1, rows, S, s)] = x;
    }
    __device__ __forceinline__ T getX(int dt) const { return E[lanes_at(0, 0, 2 * (t + dt) + 1, rows, S, s)]; }
};

template <typename T, int P>
__device__ void partition_lanes_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status,
                                       int S, volatile unsigned int *word, unsigned int seq) {
    __shared__ int keys[32];
    T *E = reinterpret_cast<T *>(part_smem);
    const int s = threadIdx.x % S, t = threadIdx.x / S; // S: a power of two ≤ 32
    const int nch = (n + P - 1) / P; // = blockDim.x / S
    const int rows = 2 * nch;        // rows of a buffer
    const int g0 = blockIdx.x * S, g = g0 + s;
    const bool live = g < G;
    const int m = min(P, n - t * P); // ≥ 1: warp t owns a chunk
    const int last = n - 1 - t * P;  // the local index of row n−1 (its c is 0)
    int *key = keys + s;
    if (threadIdx.x < S) keys[threadIdx.x] = PART_NONE;

    // Stage 1 (partition.eliminate): the chunk's rows, loaded at once.
    T ra[P], rb[P], rc[P], rd[P];
    const i64 base = (i64)g * bs + (i64)(t * P) * es;
#pragma unroll
    for (int j = 0; j < P; j++) {
        ra[j] = rb[j] = rc[j] = rd[j] = T(0);
        if (live && j < m) {
            const i64 idx = base + (i64)j * es;
            rd[j] = d[idx];
            if (k.isConst) {
                ra[j] = k.ca, rb[j] = k.cb, rc[j] = k.cc;
            } else {
                ra[j] = k.a[idx], rb[j] = k.b[idx], rc[j] = k.c[idx];
            }
        }
    }
    __syncthreads(); // keys set
    T sg[P], sa[P], sd[P]; // γ, α, δ of the interior (j = 1 … P−2)
    PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
    if (live)
        part_eliminate_regs<T, P>([&](int j, T &aj, T &bj, T &cj, T &dj) { aj = ra[j], bj = rb[j], cj = rc[j], dj = rd[j]; },
                                  m, last, t == 0, sg, sa, sd, F, L,
                                  [&](int j) { atomicMin(key, PART_KEY(1, t * P + j)); });

    // Stage 2: cyclic reduction on the RR reduced rows of each system,
    // through E.
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);
    T xs, xe;
    part_cr_sync<T, false>(
        LanesCR<T>{E, t, rows, S, s}, t, RR, K, F, L,
        [&](int stage, bool isL) {
            if (live) atomicMin(key, PART_KEY(stage, t * P + (isL ? m - 1 : 0)));
        },
        [](int, int) {}, xs, xe);
    if (m < 2) xe = xs;

    // Stage 3 (partition's recoverChunk): x over rd.
    if (live) {
        const int bad = part_recover_regs<T, P>(sg, sa, sd, m, xs, xe, rd);
        if (bad >= 0) atomicMin(key, PART_KEY(K + 3, t * P + bad));
    }
    __syncthreads();
    if (live) {
        const bool ok = *key == PART_NONE;
        const T nan = nan_of<T>();
#pragma unroll
        for (int j = 0; j < P; j++)
            if (j < m) x[base + (i64)j * es] = ok ? rd[j] : nan;
    }
    part_status(keys, G, S, g0, status);
    block_done_signal(status, G, word, seq);
}

// partition_lanes_p<P>_*: the partition method with chunks of P rows and
// the systems across the lanes. Grid: ⌈G/spb⌉ blocks; block: spb·⌈n/P⌉
// threads, at most MAXT (tuning.PartitionLanesMaxThreads), spb = 32, 16
// or 8; the parameters of partition_p<P>_* (tps = ⌈n/P⌉, unused).
#ifndef BS_DEVICE_ONLY
#define PARTITION_LANES(T, S, P, MAXT)                                                                            \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                           \
        partition_lanes_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es,    \
                                   i64 bs, T ca, T cb, T cc, int isConst, int *status, int spb, int tps,          \
                                   volatile unsigned int *word, unsigned int seq) {                               \
        partition_lanes_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb,    \
                                     word, seq);                                                                   \
    }
PARTITION_LANES(float, f32, 16, 512)
PARTITION_LANES(double, f64, 16, 256)
#endif
