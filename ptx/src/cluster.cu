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
// F_σ, L_σ in its shared memory; after a cluster barrier every block reads
// the Q blocks' rows through distributed shared memory and solves the
// reduced system of the segments itself in one warp (ReducedPCR: every
// block computes the same bits, so no block waits for another's answer),
// recovers its segment, and the blocks exchange their breakdown keys at a
// second barrier: a system with a breakdown gets NaN in every row and its
// status from block 0. A third barrier, split into arrive and wait around
// the store, keeps every block's shared memory alive until its siblings
// have read it. The results are partition.SolveSegmented's with
// ReducedPCR, bit for bit.
#include <cooperative_groups.h>

#define BS_DEVICE_ONLY // the headers' device functions, not their kernels
#include "segment.cuh"

namespace cg = cooperative_groups;

__device__ __forceinline__ void seg_cluster_arrive() { asm volatile("barrier.cluster.arrive;" ::: "memory"); }
__device__ __forceinline__ void seg_cluster_wait() { asm volatile("barrier.cluster.wait;" ::: "memory"); }

template <typename T, int P, int Q>
__device__ void segment_cluster(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int M,
                                volatile unsigned int *word, unsigned int seq) {
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

    cl.sync(); // every block's F_σ, L_σ are in its shared memory
    if (t < 32) {
        PartEq<T> Fr = {T(0), T(1), T(0), T(0)}, Lr = {T(0), T(1), T(0), T(0)};
        if (t < Q) {
            const SegShared<T> *r = cl.map_shared_rank(b.sh, t);
            Fr = {r->frow[0], r->frow[1], r->frow[2], r->frow[3]};
            Lr = {r->frow[4], r->frow[5], r->frow[6], r->frow[7]};
        }
        T xF = T(0), xL = T(0);
        const int j = seg_reduced_pcr<T>(Fr, Lr, Q, xF, xL);
        xF = __shfl_sync(0xffffffffu, xF, b.sg);
        xL = __shfl_sync(0xffffffffu, xL, b.sg);
        if (t == 0) {
            sh.x[0] = xF, sh.x[1] = xL;
            if (j >= 0) atomicMin(&sh.key, SEG_KEY(SEG_STAGE_REDUCED, seg_row(j, n, M)));
        }
    }
    __syncthreads();
    seg_finish<T, P>(b, F, L, sh.x[0], sh.x[1]);

    cl.sync(); // every key is final; no block reads a sibling's rows any more
    if (t == 0) {
        unsigned long long kmin = SEG_NONE;
        for (int r = 0; r < Q; r++) kmin = min(kmin, cl.map_shared_rank(b.sh, r)->key);
        sh.kmin = kmin;
    }
    __syncthreads();
    seg_cluster_arrive(); // done with the siblings' shared memory
    const unsigned long long kmin = sh.kmin;
    if (kmin == SEG_NONE) {
        part_store<T, P>(b.SC, &sh.none, x + b.off, b.ss, b.ns, 1, es, b.sbs, 1, 0);
    } else {
        seg_fill_nan(x, b.g, b.s0, b.s0 + b.ns, es, bs);
        if (b.sg == 0 && t == 0) {
            status[b.g] = (int)(kmin & 0xffffffffull) + 1;
            status[G] = 1;
        }
    }
    seg_cluster_wait(); // the siblings are done with this block's shared memory
    block_done_signal(status, G, word, seq);
}

#define SEGMENT_CLUSTER(T, S, P, Q)                                                                               \
    extern "C" __global__ void __launch_bounds__(256, 1) __cluster_dims__(Q, 1, 1)                               \
        segc##Q##_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, \
                             T ca, T cb, T cc, int isConst, int *status, int M, volatile unsigned int *word,     \
                             unsigned int seq) {                                                                 \
        segment_cluster<T, P, Q>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, M, word,   \
                                 seq);                                                                           \
    }
SEGMENT_CLUSTER(float, f32, 16, 2)
SEGMENT_CLUSTER(float, f32, 16, 4)
SEGMENT_CLUSTER(float, f32, 16, 8)
SEGMENT_CLUSTER(float, f32, 16, 16)
SEGMENT_CLUSTER(double, f64, 16, 2)
SEGMENT_CLUSTER(double, f64, 16, 4)
SEGMENT_CLUSTER(double, f64, 16, 8)
SEGMENT_CLUSTER(double, f64, 16, 16)
