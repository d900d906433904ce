// The partition method for batches whose systems are so long that one
// block holds one system and an SM one block (FP32 N ≤ 8192, FP64 N ≤
// 4096, rows first in memory): a persistent grid that loads the next
// system while it solves the current one.
//
// partition_kernel copies its systems, computes, stores; with one block
// an SM nothing is loaded while it computes (FP64 N = 4096 reaches 62% of
// the bandwidth limit that way). Here each block of a grid of at most
// every resident block loops over the systems g = blockIdx.x, +gridDim.x,
// …: after Stage 1 a thread keeps γ_j, α_j, δ_j of its chunk in registers
// (part_eliminate keeps them in shared memory), so the block's four
// arrays A, B, C, D are free at once and the copy of its next system
// (cp.async) runs while the block exchanges the reduced rows (cyclic
// reduction, in a
// fifth array E) and recovers and stores x (through E). The operations
// are partition_kernel's with one system a block (spb = 1) and chunks of
// P = 16, in the same order: the results are partition.Solve's bits.
//
// Launch (tuning.PartitionStreamLaunchFor): blockDim.x = tps, a multiple
// of 32 with tps·16 ≥ n; gridDim.x ≤ G. Shared memory: five arrays of
// ⌈ss/8⌉·8 units of 16 bytes (ss = ⌈n/16⌉·16·sizeof(T)/16), then two int
// keys (tuning.PartitionStreamSharedBytes). A block's key alternates
// between the two from one system to the next, so that resetting the
// next one needs no barrier of its own.
#pragma once
#include "partition.cuh"

template <typename T, int P>
__device__ void partition_stream(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs,
                                 int *status, volatile unsigned int *word, unsigned int seq) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U <= 8, "chunks of whole units");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    const int nch = (n + P - 1) / P;
    const int ss = part_ss<T, P>(n, false);
    const int W = ((ss + 7) & ~7) * R;
    T *SA = sm, *SB = SA + W, *SC = SB + W, *SD = SC + W, *SE = SD + W;
    const V *VA = reinterpret_cast<const V *>(SA), *VB = reinterpret_cast<const V *>(SB);
    const V *VC = reinterpret_cast<const V *>(SC), *VD = reinterpret_cast<const V *>(SD);
    V *VE = reinterpret_cast<V *>(SE);
    int *keys = reinterpret_cast<int *>(SE + W);
    const Coeffs<T> k{a, b, c, T(0), T(0), T(0), 0};
    const int t = threadIdx.x;
    const bool has = t < nch;
    const int m = has ? min(P, n - t * P) : 0;
    const int bu = t * U;
    const int X = part_x(bu);
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);
    const SL sl{SA, SE, SC, SD}; // the exchange uses the B slots only: E's

    int g = blockIdx.x;
    if (t == 0) keys[0] = keys[1] = PART_NONE;
    if (g < G) part_copy<T, P, false>(k, d, SA, SB, SC, SD, ss, n, G, es, bs, 1, g);
    for (int it = 0; g < G; it++, g += gridDim.x) {
        int *key = keys + (it & 1);
#ifndef PART_EMU
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        __syncthreads();
        // The other key: its last readers (the previous system's store and
        // status) are before the barrier above, its next writers after the
        // next one.
        if (t == 0) keys[(it + 1) & 1] = PART_NONE;

        // Stage 1 from A … D (a[0] and c[n−1] read as 0). (Copying the
        // chunk into registers first, so that the next copy overlaps Stage
        // 1 too, measured slower on an H100: 128 registers and spills in
        // FP32, 255 in FP64.)
        T gg[P], al[P], dl[P];
        PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
        V ua, ub, uc, ud; // the unit of a, b, c, d being eliminated
        if (has)
            part_eliminate_regs<T, P>(
                [&](int j, T &aj, T &bj, T &cj, T &dj) {
                    if (j % R == 0) { // a unit's first row (j is a constant: the loop is unrolled)
                        const int h = j / R;
                        ua = VA[X ^ h], ub = VB[X ^ h], uc = VC[X ^ h], ud = VD[X ^ h];
                    }
                    const int w = j % R;
                    aj = PartVec<T>::el(ua, w), bj = PartVec<T>::el(ub, w);
                    cj = PartVec<T>::el(uc, w), dj = PartVec<T>::el(ud, w);
                },
                m, n - 1 - t * P, t == 0, gg, al, dl, F, L, [&](int j) { atomicMin(key, PART_KEY(1, t * P + j)); });
        __syncthreads(); // A … D are read: the next system's copy may go
        if (g + (int)gridDim.x < G)
            part_copy<T, P, false>(k, d, SA, SB, SC, SD, ss, n, G, es, bs, 1, g + (int)gridDim.x);

        // Stage 2: cyclic reduction on the RR reduced rows in E
        // (partition_kernel's shared-memory path), its last five levels in
        // one warp when it has 7 or more (part_cr_tail: one block an SM is
        // bound by the latency of its barriers).
        T xs, xe;
        part_cr_sync<T, true>(
            PartCRSlots<T, P>{sl, bu, U}, t, RR, K, F, L,
            [&](int stage, bool isL) {
                if (has) atomicMin(key, PART_KEY(stage, t * P + (isL ? m - 1 : 0)));
            },
            [&](int stage, int j) { atomicMin(key, PART_KEY(stage, part_red_row(j, n, P))); }, xs, xe);
        if (m < 2) xe = xs;

        // Stage 3 in registers; x through E to the store.
        T xv[P];
        const int bad = part_recover_regs<T, P>(gg, al, dl, m, xs, xe, xv);
        if (has && bad >= 0) atomicMin(key, PART_KEY(K + 3, t * P + bad));
        __syncthreads(); // the last exchange's reads of E are done
        if (has) {
#pragma unroll
            for (int h = 0; h < U; h++) VE[X ^ h] = PartVec<T>::make(xv + h * R);
        }
        __syncthreads();
        part_store<T, P>(SE, key, x, ss, n, G, es, bs, 1, g);
        part_status(key, G, 1, g, status);
    }
    block_done_signal(status, G, word, seq);
}

// partition_stream_p16_*: chunks of 16 rows, at most 512 threads in FP32
// (N ≤ 8192), 256 in FP64 (N ≤ 4096: a thread keeps 42 values of its
// chunk).
#ifndef BS_DEVICE_ONLY
#define PARTITION_STREAM(T, S, P, MAXT)                                                                            \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                            \
        partition_stream_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es,    \
                                    i64 bs, int *status, volatile unsigned int *word, unsigned int seq) {        \
        partition_stream<T, P>(a, b, c, d, x, n, G, es, bs, status, word, seq);                                  \
    }
PARTITION_STREAM(float, f32, 16, 512)
PARTITION_STREAM(double, f64, 16, 256)
#endif
