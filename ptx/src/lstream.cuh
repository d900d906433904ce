// The lanes kernel (lanes.cuh) as a persistent grid that loads the next
// group of systems while it solves the current one: for batches of
// adjacent systems (batch stride 1, the interleaved layout) that one block
// holds. lanes.cuh keeps a thread's 16 rows in registers from the load to
// the store, so nothing is loaded while a block computes, and a block of
// 16 warps an SM is all its registers allow: on an H200 it reaches 58% of
// the bandwidth limit at N = 256 and 40% at N = 1024 (FP32, 2^24 rows; go
// test -tags cuda -run '^$' -bench LanesStream ./cuda). Here a block
// copies its group of S systems into shared memory (cp.async), Stage 1
// reads each thread's chunk from there, and as soon as every chunk is
// read the copy of the block's next group starts and runs during the
// cyclic reduction, the recovery and the store, as partition_stream does
// for contiguous systems.
//
// Thread k works on system g0 + k mod S and chunk k div S (lanes.cuh); the
// operations are partition_lanes_kernel's in its order: the results are
// partition.Solve's bits with chunks of P rows, the lanes kernel's.
//
// Launch (tuning.PartitionLanesStreamLaunchFor): grid of at most ⌈G/S⌉
// blocks, a block takes the groups blockIdx.x, +gridDim.x, …; block: S·⌈n/P⌉
// threads; dynamic shared memory: four arrays (a, b, c, d) of ⌈n/P⌉ chunks
// of P+1 rows (a chunk's rows then one of padding, so that the lanes of a
// warp, which read rows of different chunks, fall in different banks) of S
// systems, then the exchange of the cyclic reduction (LanesCR: four values
// of 2⌈n/P⌉ rows of S systems), then two sets of 32 keys, alternating
// from one group to the next.
#pragma once
#include "lanes.cuh"

// lstream_row is the position of row r of local system s in an array.
template <int P> __device__ __forceinline__ int lstream_row(int r, int S, int s) { return (r + r / P) * S + s; }

// lstream_copy starts the copy of the group of systems from g0 (the ones
// that exist) into SA … SD (d alone when isConst): 16-byte units where
// rows of S systems are whole aligned units, else element by element.
template <typename T, int P>
__device__ __forceinline__ void lstream_copy(const Coeffs<T> &k, const T *d, T *SA, T *SB, T *SC, T *SD, int n, int G,
                                             i64 es, int S, int g0) {
    constexpr int R = 16 / (int)sizeof(T);
    const bool full = g0 + S <= G;
    const bool vec = full && S % R == 0 && (es * (i64)sizeof(T)) % 16 == 0 &&
                     (((unsigned long long)(d + g0)) & 15) == 0 &&
                     (k.isConst || ((((unsigned long long)(k.a + g0)) | ((unsigned long long)(k.b + g0)) |
                                     ((unsigned long long)(k.c + g0))) & 15) == 0);
    if (vec) {
        const int U = S / R; // units a row
        for (int f = threadIdx.x; f < n * U; f += blockDim.x) {
            const int r = f / U, u = f % U;
            const int sl = lstream_row<P>(r, S, u * R);
            const i64 gi = (i64)g0 + (i64)r * es + u * R;
            if (!k.isConst) {
                part_cp16(SA + sl, k.a + gi);
                part_cp16(SB + sl, k.b + gi);
                part_cp16(SC + sl, k.c + gi);
            }
            part_cp16(SD + sl, d + gi);
        }
        return;
    }
    for (int f = threadIdx.x; f < n * S; f += blockDim.x) {
        const int r = f / S, s = f % S;
        if (g0 + s >= G) continue;
        const int sl = lstream_row<P>(r, S, s);
        const i64 gi = (i64)(g0 + s) + (i64)r * es;
        if (!k.isConst) {
            part_cp(SA + sl, k.a + gi);
            part_cp(SB + sl, k.b + gi);
            part_cp(SC + sl, k.c + gi);
        }
        part_cp(SD + sl, d + gi);
    }
}

template <typename T, int P, int S>
__device__ void lanes_stream_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, int *status,
                                    volatile unsigned int *word, unsigned int seq) {
    const int s = threadIdx.x % S, t = threadIdx.x / S; // S: a power of two ≤ 32, a constant: a variable S
                                                          // would keep the rows' offsets in registers
    const int nch = (n + P - 1) / P;                     // = blockDim.x / S
    const int rows = 2 * nch;                            // rows of the exchange
    const int W = nch * (P + 1) * S;                     // elements of an array
    T *SA = reinterpret_cast<T *>(part_smem), *SB = SA + W, *SC = SB + W, *SD = SC + W, *E = SD + W;
    int *keys2 = reinterpret_cast<int *>(E + 4 * rows * S);
    const int groups = (G + S - 1) / S;
    const int m = min(P, n - t * P); // ≥ 1
    const int last = n - 1 - t * P;  // the local index of row n−1 (its c is 0)
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);

    int grp = blockIdx.x;
    if (threadIdx.x < 64) keys2[threadIdx.x] = PART_NONE;
    if (grp < groups) lstream_copy<T, P>(k, d, SA, SB, SC, SD, n, G, es, S, grp * S);
    for (int it = 0; grp < groups; it++, grp += gridDim.x) {
        int *keys = keys2 + 32 * (it & 1);
        int *key = keys + s;
        const int g0 = grp * S, g = g0 + s;
        const bool live = g < G;
#ifndef PART_EMU
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        __syncthreads();
        // The other set of keys: its last readers (the previous group's
        // store and status) are before the barrier above.
        if (threadIdx.x < 32) keys2[32 * ((it + 1) & 1) + threadIdx.x] = PART_NONE;

        // Stage 1 from shared memory.
        T sg[P], sa[P], sd[P];
        PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
        const int c0 = t * P; // the chunk's first row
        if (live)
            part_eliminate_regs<T, P>(
                [&](int j, T &aj, T &bj, T &cj, T &dj) {
                    // Loads of four rows at a time: hoisting all of them
                    // (64 values) spilled.
                    if (j % 4 == 0) asm volatile("" ::: "memory");
                    const int sl = lstream_row<P>(c0 + j, S, s);
                    dj = j < m ? SD[sl] : T(0);
                    if (k.isConst) {
                        aj = k.ca, bj = k.cb, cj = k.cc;
                    } else {
                        aj = j < m ? SA[sl] : T(0), bj = j < m ? SB[sl] : T(0), cj = j < m ? SC[sl] : T(0);
                    }
                },
                m, last, t == 0, sg, sa, sd, F, L, [&](int j) { atomicMin(key, PART_KEY(1, c0 + j)); });
        __syncthreads(); // every chunk read: the next group's copy may go
        if (grp + (int)gridDim.x < groups)
            lstream_copy<T, P>(k, d, SA, SB, SC, SD, n, G, es, S, (grp + (int)gridDim.x) * S);

        // Stage 2: cyclic reduction through E, as the lanes kernel.
        T xs, xe;
        part_cr_sync<T, false>(
            LanesCR<T>{E, t, rows, S, s}, t, RR, K, F, L,
            [&](int stage, bool isL) {
                if (live) atomicMin(key, PART_KEY(stage, c0 + (isL ? m - 1 : 0)));
            },
            [](int, int) {}, xs, xe);
        if (m < 2) xe = xs;

        // Stage 3 in registers, x over δ (part_recover_regs reads δ_j
        // before it writes x_j), stored from there.
        T(&xv)[P] = sd;
        if (live) {
            const int bad = part_recover_regs<T, P>(sg, sa, sd, m, xs, xe, xv);
            if (bad >= 0) atomicMin(key, PART_KEY(K + 3, c0 + bad));
        }
        __syncthreads();
        if (live) {
            const bool ok = *key == PART_NONE;
            const T nan = nan_of<T>();
            const i64 base = (i64)g + (i64)c0 * es;
#pragma unroll
            for (int j = 0; j < P; j++)
                if (j < m) x[base + (i64)j * es] = ok ? xv[j] : nan;
        }
        part_status(keys, G, S, g0, status);
    }
    block_done_signal(status, G, word, seq);
}

// partition_lanes_stream_p<P>_s<S>_*: S systems a block (spb), the
// parameters of partition_lanes_p16_* (bs must be 1; spb, tps unused).
// Grid: at most ⌈G/S⌉ blocks; block: S·⌈n/P⌉ threads, at most MAXT.
#ifndef BS_DEVICE_ONLY
#define PARTITION_LANES_STREAM(T, SFX, P, S, MAXT, MINB)                                                               \
    extern "C" __global__ void __launch_bounds__(MAXT, MINB)                                                      \
        partition_lanes_stream_p##P##_s##S##_##SFX(const T *a, const T *b, const T *c, const T *d, T *x, int n,   \
                                                   int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst,          \
                                                   int *status, int spb, int tps, volatile unsigned int *word,    \
                                                   unsigned int seq) {                                            \
        lanes_stream_kernel<T, P, S>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, status, word, seq); \
    }
PARTITION_LANES_STREAM(float, f32, 16, 8, 512, 1)
PARTITION_LANES_STREAM(double, f64, 16, 8, 256, 1)
#endif
