// bandsolve's kernels that use Hopper's thread-block clusters: one
// translation unit built for compute_90 (ptx/cluster.ptx), loaded by
// package cuda on devices of compute capability ≥ 9.0 only.
//
// segc<Q>_p16_*: the segmented partition method (segment.cuh) with one
// cluster of Q blocks per system, Q fixed at compile time
// (__cluster_dims__, so that a plain launch forms the clusters). The
// blocks of a cluster are scheduled together on one GPC, where the
// global-memory kernel's blocks wait for siblings that other SMs start
// later. Each block reduces its segment (seg_reduce) and leaves its rows
// F_σ, L_σ and its breakdown key in its shared memory. After a cluster
// barrier every block reads the Q blocks' rows and keys through
// distributed shared memory and solves the reduced system of the segments
// itself in one warp (ReducedCR: every block computes the same bits, so
// no block waits for another's answer); a key of those stages fails the
// system in every block at once. Otherwise each block recovers and stores
// its segment between the arrival at and the wait for a second barrier
// (which also keeps its shared memory alive for the siblings' reads); a
// non-finite x (the last stage) goes to the system's word gkey in global
// memory, tagged with the launch's epoch (so that the word needs no reset),
// and every block reads the word after the barrier: the system's rows are
// then overwritten with NaN. Block 0 writes the status. The results are
// partition.SolveSegmented's with ReducedCR, bit for bit.
#include <cooperative_groups.h>

#define BS_DEVICE_ONLY // the headers' device functions, not their kernels
#include "segment.cuh"

namespace cg = cooperative_groups;

__device__ __forceinline__ void seg_cluster_arrive() { asm volatile("barrier.cluster.arrive;" ::: "memory"); }
__device__ __forceinline__ void seg_cluster_wait() { asm volatile("barrier.cluster.wait;" ::: "memory"); }

template <typename T, int P, int Q>
__device__ void segment_cluster(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int M,
                                unsigned long long *gkey, unsigned int epoch, volatile unsigned int *word,
                                unsigned int seq) {
    cg::cluster_group cl = cg::this_cluster();
    const int t = threadIdx.x;
    const SegBlock<T> b = seg_setup<T, P>(n, M, blockIdx.x / Q, (int)cl.block_rank(), es, bs);
    SegShared<T> &sh = *b.sh;
    if (t == 0) {
        sh.key = SEG_NONE;
        sh.none = PART_NONE;
    }
    SegEq<T> F, L;
    seg_reduce<T, P>(k, d, n, es, b, F, L); // begins with a barrier after the load

    cl.sync(); // every block's F_σ, L_σ and key (stages ≤ 17) are in its shared memory
    if (t < 32) {
        PartEq<T> Fr = {T(0), T(1), T(0), T(0)}, Lr = {T(0), T(1), T(0), T(0)};
        unsigned long long key = SEG_NONE;
        if (t < Q) {
            const SegShared<T> *r = cl.map_shared_rank(b.sh, t);
            Fr = {r->frow[0], r->frow[1], r->frow[2], r->frow[3]};
            Lr = {r->frow[4], r->frow[5], r->frow[6], r->frow[7]};
            key = r->key;
        }
        T xF = T(0), xL = T(0);
        const int j = seg_reduced_cr<T>(Fr, Lr, Q, xF, xL);
        xF = __shfl_sync(0xffffffffu, xF, b.sg);
        xL = __shfl_sync(0xffffffffu, xL, b.sg);
        // The smallest key of the cluster (64-bit: two 32-bit reductions).
        const unsigned hi = __reduce_min_sync(0xffffffffu, (unsigned)(key >> 32));
        const unsigned lo = __reduce_min_sync(0xffffffffu, (unsigned)(key >> 32) == hi ? (unsigned)key : 0xffffffffu);
        if (t == 0) {
            sh.x[0] = xF, sh.x[1] = xL;
            unsigned long long kmin = (unsigned long long)hi << 32 | lo;
            if (j >= 0) kmin = min(kmin, SEG_KEY(SEG_STAGE_REDUCED, seg_row(j, n, M)));
            sh.kmin = kmin;
        }
    }
    __syncthreads();
    const unsigned long long kmin = sh.kmin; // the same in every block of the cluster
    unsigned long long *gk = gkey + b.g;
    if (kmin == SEG_NONE) {
        seg_finish<T, P>(b, F, L, sh.x[0], sh.x[1]);
        if (t == 0 && sh.key != SEG_NONE) // a non-finite x: the only key seg_finish sets
            atomicMax(gk, (unsigned long long)epoch << 32 | (0xffffffffu - (unsigned)(sh.key & 0xffffffffu)));
        seg_cluster_arrive(); // done with the siblings' shared memory; gk posted
        part_store<T, P, true>(b.SC, &sh.none, x + b.off, b.ss, b.ns, 1, es, b.sbs, 1, 0);
        seg_cluster_wait();
        if (t == 0) {
            const unsigned long long w = __ldcg(gk);
            sh.kmin = (unsigned)(w >> 32) == epoch ? SEG_KEY(SEG_STAGE_RESULT, 0xffffffffu - (unsigned)w) : SEG_NONE;
        }
        __syncthreads();
    } else {
        seg_cluster_arrive();
        seg_cluster_wait();
    }
    const unsigned long long fail = sh.kmin;
    if (fail != SEG_NONE) {
        seg_fill_nan(x, b.g, b.s0, b.s0 + b.ns, es, bs);
        if (b.sg == 0 && t == 0) {
            status[b.g] = (int)(fail & 0xffffffffull) + 1;
            status[G] = 1;
        }
    }
    block_done_signal(status, G, word, seq);
}

#define SEGMENT_CLUSTER(T, S, P, Q, MINB)                                                                         \
    extern "C" __global__ void __launch_bounds__(256, MINB) __cluster_dims__(Q, 1, 1)                            \
        segc##Q##_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, \
                             T ca, T cb, T cc, int isConst, int *status, int M, unsigned long long *gkey,        \
                             unsigned int epoch, volatile unsigned int *word, unsigned int seq) {                \
        segment_cluster<T, P, Q>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, M, gkey,   \
                                 epoch, word, seq);                                                              \
    }
// FP32: at most 80 registers (3 blocks of 256 threads), so that 2048-row
// segments keep 6 blocks per SM; FP64 is held by its shared memory anyway.
SEGMENT_CLUSTER(float, f32, 16, 2, 3)
SEGMENT_CLUSTER(float, f32, 16, 4, 3)
SEGMENT_CLUSTER(float, f32, 16, 8, 3)
SEGMENT_CLUSTER(double, f64, 16, 2, 1)
SEGMENT_CLUSTER(double, f64, 16, 4, 1)
SEGMENT_CLUSTER(double, f64, 16, 8, 1)
