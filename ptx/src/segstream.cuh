// The reduce and expand passes of the segmented partition method
// (segment.cuh's SEG_REDUCE and SEG_EXPAND) on a persistent grid that
// copies its next segment while it works on the current one.
//
// segment_kernel runs one block a segment: a block loads its segment,
// computes, and ends, and with 13 blocks an SM (FP32, 1024-row segments)
// the grid of a single system of 2^22 rows is 2.4 waves whose last is
// partly empty; the passes reached 43–50% of the DRAM bandwidth (Nsight
// Compute, bench/results/h100-2026-11-26/session11 run 13). Here each
// block of a grid of at most the resident blocks loops over the segments
// idx = blockIdx.x, +gridDim.x, … (the expand pass over them in reverse,
// as segment_kernel: the segments the reduce pass read last are the
// likeliest still in L2). Stage 1 keeps γ, α, δ of a thread's chunk in
// registers in the expand pass (part_eliminate_regs, as partition_stream;
// the reduce pass needs no γ, α, δ after Stage 1 and eliminates in place,
// as segment_kernel), so the four arrays A … D are free once Stage 1 has
// read them and the copy of the next segment (cp.async) runs while the
// block reduces the current one's rows (seg_rows, in a fifth array E)
// and, in the expand pass, recovers and stores x (through E).
//
// The operations are segment_kernel's, in the same order: the reduced
// rows and x are the same bits (partition.SolveSegmented's). Control
// words, keys and statuses are segment_kernel's too (seg_count_out).
//
// Launch (cuda/segment.go, tuning.SegmentStreamSharedBytes): blockDim.x =
// M/16, gridDim.x ≤ G·Q; shared memory of five arrays of a segment, then
// SEG_SHARED_BYTES.
#pragma once
#include "segment.cuh"

template <typename T, int P, int MODE>
__device__ void segment_stream(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int M, int Q,
                               unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, const T *XR, int *nst) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8 && P >= 12, "chunks of whole units with 12 exchange slots");
    static_assert(MODE == SEG_REDUCE || MODE == SEG_EXPAND, "the reduce or the expand pass");
    const int t = threadIdx.x;
    const int ss = part_ss<T, P>(M, false);
    const int W = ((ss + 7) & ~7) * R;
    T *SA = reinterpret_cast<T *>(part_smem), *SB = SA + W, *SC = SB + W, *SD = SC + W, *SE = SD + W;
    const V *VA = reinterpret_cast<const V *>(SA), *VB = reinterpret_cast<const V *>(SB);
    const V *VD = reinterpret_cast<const V *>(SD);
    V *VC = reinterpret_cast<V *>(SC), *VE = reinterpret_cast<V *>(SE);
    SegShared<T> &sh = *reinterpret_cast<SegShared<T> *>(SE + W);
    const int total = G * Q;
    const int R2 = 2 * Q;
    // The segment of the i-th step (the expand pass in reverse).
    auto segOf = [&](int i) { return MODE == SEG_EXPAND ? total - 1 - i : i; };
    // seg_setup's description of segment idx (its arrays are segment_kernel's
    // four, unused here: SA … SD above are the same addresses, E follows).
    auto setup = [&](int idx) { return seg_setup<T, P>(n, M, idx / Q, idx % Q, es, bs); };
    // cp.async copy of segment idx into A … D (d only for constant
    // coefficients), not waited for.
    auto copy = [&](const SegBlock<T> &b) {
        Coeffs<T> ks = k;
        if (!k.isConst) ks.a = k.a + b.off, ks.b = k.b + b.off, ks.c = k.c + b.off;
        part_copy<T, P, false>(ks, d + b.off, SA, SB, SC, SD, ss, b.ns, 1, es, b.sbs, 1, 0);
    };

    if (k.isConst) {
        // The constants fill A, B, C once (part_load's fill): nothing
        // else writes them.
        for (int f = t; f < ((ss + 7) & ~7); f += blockDim.x) {
            reinterpret_cast<V *>(SA)[f] = PartVec<T>::fill(k.ca);
            reinterpret_cast<V *>(SB)[f] = PartVec<T>::fill(k.cb);
            reinterpret_cast<V *>(SC)[f] = PartVec<T>::fill(k.cc);
        }
    }
    if (t == 0) {
        sh.key = SEG_NONE;
        sh.none = PART_NONE;
    }
    int i = blockIdx.x;
    if (i < total) copy(setup(segOf(i)));
    for (; i < total; i += gridDim.x) {
        const SegBlock<T> b = setup(segOf(i));
        const int g = b.g, sg = b.sg, s0 = b.s0, ns = b.ns;
#ifndef PART_EMU
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        __syncthreads(); // the segment is in A … D; sh.key is reset

        // Stage 1 from A … D (a[0] of the system's row 0 and c of its last
        // row read as 0), γ, α, δ into registers.
        T gg[P], al[P], dl[P];
        PartEq<T> F0 = {T(0), T(1), T(0), T(0)}, L0 = {T(0), T(1), T(0), T(0)};
        const int last = n - 1 - (s0 + t * P);
        const bool zeroA = s0 == 0 && t == 0;
        auto pivot = [&](int j) { atomicMin(&sh.key, SEG_KEY(SEG_STAGE_PIVOT, s0 + t * P + j)); };
        if (b.has && MODE == SEG_REDUCE && !k.isConst) {
            // γ, α, δ are not needed after F0, L0: part_eliminate over
            // A … D in place, as seg_reduce (fewer registers; constant
            // coefficients keep A, B, C filled for every segment).
            part_eliminate<T, P>(VA, VB, VC, VD, SA, SD, b.X, b.m, last, zeroA, F0, L0, pivot);
        } else if (b.has) {
            V ua, ub, uc, ud; // the unit of a, b, c, d being eliminated
            part_eliminate_regs<T, P>(
                [&](int j, T &aj, T &bj, T &cj, T &dj) {
                    if (j % R == 0) { // a unit's first row (j is a constant: the loop is unrolled)
                        const int h = j / R;
                        ua = VA[b.X ^ h], ub = VB[b.X ^ h], uc = VC[b.X ^ h], ud = VD[b.X ^ h];
                    }
                    const int w = j % R;
                    aj = PartVec<T>::el(ua, w), bj = PartVec<T>::el(ub, w);
                    cj = PartVec<T>::el(uc, w), dj = PartVec<T>::el(ud, w);
                },
                b.m, last, zeroA, gg, al, dl, F0, L0, pivot);
        }
        __syncthreads(); // A … D are read: the next segment's copy may go
        if (i + (int)gridDim.x < total) copy(setup(segOf(i + (int)gridDim.x)));

        // The segment's reduced rows by cyclic reduction in E, its rows of
        // the reduced system of the segments in sh.frow (seg_reduce's).
        auto rowOf = [&](int j) { return s0 + ((j & 1) ? min((j >> 1) * P + P, ns) - 1 : (j >> 1) * P); };
        SegEq<T> F, L;
        seg_rows<T>(sh, SegSlots<T>{SE, U}, t, b.nch, b.lastm, b.RR, b.has, F0, L0, F, L,
                    [&](unsigned long long key) { atomicMin(&sh.key, key); }, rowOf);
        __syncthreads();

        if (MODE == SEG_REDUCE) {
            // The next segment's rows overwrite sh only after the next
            // step's first barrier; thread 0 alone reads frow here. The
            // keys are the expand pass's to report: reset for the next.
            if (t == 0) {
                seg_put_rows(sh.frow, RA, RB, RC, RD, (i64)g * R2 + 2 * sg);
                sh.key = SEG_NONE;
            }
            continue;
        }

        // The expand pass: x_first, x_last of the segment from the nested
        // solve (a failed nested system keys its row), Stage 3 in
        // registers, x through E to the store, the segment counted out.
        if (t == 0) {
            const i64 f = (i64)g * R2 + 2 * sg;
            sh.x[0] = __ldcg(XR + f), sh.x[1] = __ldcg(XR + f + 1);
            if (nst[g] != 0) atomicMin(&sh.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(nst[g] - 1, n, M)));
        }
        __syncthreads();
        if (b.has) {
            const T xf = sh.x[0], xl = sh.x[1];
            const T xs = (F.y + F.v * xf) + F.w * xl;
            const T xe = b.m >= 2 ? (L.y + L.v * xf) + L.w * xl : xs;
            T xv[P];
            const int bad = part_recover_regs<T, P>(gg, al, dl, b.m, xs, xe, xv);
            if (bad >= 0) atomicMin(&sh.key, SEG_KEY(SEG_STAGE_RESULT, s0 + t * P + bad));
#pragma unroll
            for (int h = 0; h < U; h++) VE[b.X ^ h] = PartVec<T>::make(xv + h * R);
        }
        __syncthreads();
        part_store<T, P>(SE, &sh.none, x + b.off, ss, ns, 1, es, b.sbs, 1, 0);
        seg_count_out(sh, ctl + 1 + 4 * (i64)g, Q, g, n, G, es, bs, x, status, nst); // ends with a barrier
        if (t == 0) sh.key = SEG_NONE;
    }
}

// segstream_{reduce,expand}_p16_*: chunks of 16 rows; blocks of M/16
// threads, 64 to 256 (tuning.SegmentThreads).
#ifndef BS_DEVICE_ONLY
#define SEGMENT_STREAM(T, S, P, NAME, MODE, MAXT)                                                                 \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                            \
        segstream_##NAME##_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, \
                                      i64 bs, T ca, T cb, T cc, int isConst, int *status, int M, int Q,           \
                                      unsigned long long *ctl, T *RA, T *RB, T *RC, T *RD, const T *XR,          \
                                      int *nst) {                                                                \
        segment_stream<T, P, MODE>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, M, Q,   \
                                   ctl, RA, RB, RC, RD, XR, nst);                                                \
    }
SEGMENT_STREAM(float, f32, 16, reduce, SEG_REDUCE, 256)
SEGMENT_STREAM(float, f32, 16, expand, SEG_EXPAND, 256)
SEGMENT_STREAM(double, f64, 16, reduce, SEG_REDUCE, 256)
SEGMENT_STREAM(double, f64, 16, expand, SEG_EXPAND, 256)
#endif
