// Tree Partitioning Reduction (TPR paper §3, the three CUDA stages of
// §4.3 / Fig. 11). The CPU twin is package tridiag/tpr (Stage1, Stage2,
// Stage3): every kernel below does the twin's operations in the same order
// (PTX built with -fmad=false), so results agree bit for bit, the large-M
// path of stage 2 included (it runs the twin's own reduction levels, only
// spread over several launches).
//
// Notation as in tridiag/tpr/doc.go: N rows, slice size S = 2^K, M = ⌈N/S⌉
// slices, MP = M rounded up to a power of two, rows ≥ N virtual identity
// rows. Launch parameters come from tuning.TPRLaunchFor.
//
// Workspace (all in global memory, laid out by cuda/tpr.go):
//   keys[G]  unsigned long long, the breakdown key of each system stored
//            inverted (~key, 0 = fine) so that a zeroed workspace means "no
//            failure" and atomicMax keeps the smallest key: the failure the
//            CPU twin meets first (see tpr_fail);
//   cnt[G]   unsigned, stage 3's per-system count of finished slices (the
//            last block of a system NaN-fills it if it failed);
//            keys and cnt are zero between solves: the launcher zeroes them
//            when it first uses a workspace, and the block that finishes a
//            system clears its key and counter for the next solve;
//   bnd      8 planes of G·M: first'_j (a, b, c, d), then last_j (a, b, c, d)
//            of slice j of system g at g·M + j (the twin's bnd[2j], bnd[2j+1]);
//   xb       G·MP: X_j = x_{jS+S−1} of system g at g·MP + j;
//   eq       4 planes (a, b, c, d) of G·eqPitch: the last-level equation of
//            row i (odd local index) of system g at g·eqPitch + (i >> shift);
//            shift = 1 (compact, eqPitch = M·S/2) when stage 1 keeps its
//            slice in shared memory, 0 (eqPitch = M·S) when stage 1 works
//            on its slice in place in eq ("global slices", S too large for
//            shared memory);
//   R        4 planes of G·MP (large-M stage 2 only): the reduced equations,
//            reduced in place level by level;
//   xs       G·M·(S+1) (stage 3 with global slices only): the unknowns of a
//            slice, as the twin's xs.
//
// Stage kernels:
//   tpr_stage1[g]  one slice per tps threads (tps = S/2: P = 2 rows per
//                  thread, up to 1024 threads), spb slices per block (§4.3
//                  kernel 1): step 1 reads rows l−1, l, l+1 straight from
//                  the input (thread lt: rows lt, lt+tps, …; no row updated
//                  in step 1 is read from the slice's storage, so no second
//                  buffer is needed), steps 2 … K in place in the slice's
//                  storage (shared: 4 planes of spb·(padded(S)+1); "g": its
//                  rows of eq), step K+1, then bnd and (shared variant) eq.
//   tpr_stage2     spb systems per block, tps threads each: the
//                  intermediate stage (t0 = 0) or a compact gather of the
//                  equations left after t0 global levels, the CR tree, Eq. 6,
//                  the substitution, X to xb. Shared: 4 planes + X of
//                  spb·padded(MP >> t0).
//   tpr_s2inter, tpr_s2reduce, tpr_s2subst   the large-M path: the
//                  intermediate stage into R and the first t0 reduction and
//                  last t0 substitution levels, one launch per level, one
//                  thread per equation.
//   tpr_stage3[g]  one slice per tps threads, spb slices per block (§4.3
//                  kernel 3): the sliced substitution (unknowns in shared
//                  memory, spb·(padded(S)+1) values then spb ints; "g": in
//                  xs), x,
//                  then the per-system finish (status, NaN fill).
// A failed system is computed on (with NaN/Inf) and NaN-filled at the end
// by the block that finishes its last slice; the row reported is the one
// of the twin's first failure (smallest key).
#pragma once
#include <type_traits>
#include "common.cuh"

extern __shared__ __align__(16) unsigned char tpr_smem[];

typedef unsigned long long u64;

// ---------------------------------------------------------------------------
// Equations and the arithmetic of the twin (tridiag/tpr/stages.go).

template <typename T> struct TEq {
    T a, b, c, d;
};

template <typename T> __device__ __forceinline__ TEq<T> teq(T a, T b, T c, T d) {
    TEq<T> e;
    e.a = a;
    e.b = b;
    e.c = c;
    e.d = d;
    return e;
}
template <typename T> __device__ __forceinline__ TEq<T> tpr_identity() { return teq<T>(T(0), T(1), T(0), T(0)); }
template <typename T> __device__ __forceinline__ TEq<T> tpr_pass_left() { return teq<T>(T(-1), T(1), T(0), T(0)); }
template <typename T> __device__ __forceinline__ TEq<T> tpr_pass_right() { return teq<T>(T(0), T(1), T(-1), T(0)); }

// Eq. 5: m updated with its neighbours l (i−u) and r (i+u).
template <typename T> __device__ __forceinline__ TEq<T> tpr_eq5(const TEq<T> &l, const TEq<T> &m, const TEq<T> &r) {
    const T s1 = m.a / l.b;
    const T s2 = m.c / r.b;
    TEq<T> o;
    o.a = -(l.a * s1);
    o.b = (m.b - l.c * s1) - r.a * s2;
    o.c = -(r.c * s2);
    o.d = (m.d - l.d * s1) - r.d * s2;
    return o;
}

// Eq. 7.
template <typename T> __device__ __forceinline__ T tpr_subst(const TEq<T> &e, T xl, T xr) {
    return ((e.d - e.a * xl) - e.c * xr) / e.b;
}

// Row `row` of a system, at index idx of the batch arrays, as the twin's
// load reads it (a[0] and c[n−1] as 0, rows ≥ n the identity).
template <typename T>
__device__ __forceinline__ TEq<T> tpr_load_at(const Coeffs<T> &k, const T *d, int n, i64 idx, int row) {
    if (row >= n) return tpr_identity<T>();
    TEq<T> e;
    e.a = row == 0 ? T(0) : k.A(idx);
    e.b = k.B(idx);
    e.c = row == n - 1 ? T(0) : k.C(idx);
    e.d = d[idx];
    return e;
}

// Row `row` of the system at offset sys (g·bs).
template <typename T>
__device__ __forceinline__ TEq<T> tpr_load(const Coeffs<T> &k, const T *d, int n, i64 es, i64 sys, int row) {
    return tpr_load_at(k, d, n, sys + (i64)row * es, row);
}

// Shared-memory arrays are padded against bank conflicts: element i is
// stored at i + (i >> ps), ps = 5 for 4-byte and 4 for 8-byte elements, so
// that the strided accesses of the reduction trees (stride 2^k, k ≤ 5)
// fall into distinct banks. tpr_padded(n) is the room n elements take.
// (Keep tuning.TPRPadded in step.)
// Global arrays are not padded (TPR_NOPAD).
template <typename T> struct TPad {
    static constexpr int ps = sizeof(T) == 8 ? 4 : 5;
};
#define TPR_NOPAD 63
template <typename T> __device__ __forceinline__ int tpr_padded(int n) { return n + (n >> TPad<T>::ps); }

// Four planes of equations (shared or global memory): plane p of
// equation i at P[p·plane + i + (i >> PS)]; I is the index type (int for
// shared memory, so that its address arithmetic stays 32-bit).
template <typename T, int PS = TPR_NOPAD, typename I = i64> struct TPlanes {
    T *P;
    I plane;
    __device__ __forceinline__ TEq<T> get(I i) const {
        const T *q = P + (i + (i >> PS));
        return teq<T>(q[0], q[plane], q[2 * plane], q[3 * plane]);
    }
    __device__ __forceinline__ void put(I i, const TEq<T> &e) const {
        T *q = P + (i + (i >> PS));
        q[0] = e.a;
        q[plane] = e.b;
        q[2 * plane] = e.c;
        q[3 * plane] = e.d;
    }
};
template <int PS = TPR_NOPAD, typename I = i64, typename T>
__device__ __forceinline__ TPlanes<T, PS, I> tplanes(T *p, I plane) {
    TPlanes<T, PS, I> q;
    q.P = p;
    q.plane = plane;
    return q;
}

// ---------------------------------------------------------------------------
// Breakdown keys. A key orders the failures of one system as the twin meets
// them: phase (0 stage 1, 1 stage 2, 2 stage 3, 3 a non-finite x, which
// the twin does not check), then a sequence number within the phase that
// follows the twin's loops, then the row to report. Rows < 2^27, sequence
// numbers < 2^35 (tuning.TPRMaxN = 2^26 keeps them there).
#define TPR_ROW_BITS 27
#define TPR_ROW_MASK ((1ULL << TPR_ROW_BITS) - 1)

__device__ __forceinline__ void tpr_fail(u64 *keys, int g, int phase, u64 seq, int row) {
    const u64 key = ((u64)phase << 62) | (seq << TPR_ROW_BITS) | (u64)row;
    atomicMax(&keys[g], ~key);
}

// ---------------------------------------------------------------------------
// Slices of stages 1 and 3: block b holds slices b·spb … b·spb+spb−1 of the
// G·M slices of the batch, tps threads each. When the systems are closer
// together in memory than rows (bs < es, e.g. interleaved), consecutive
// slices are the same slice j of consecutive systems and consecutive
// threads work on consecutive slices, so that a warp's loads are
// coalesced; otherwise slices run through a system first and consecutive
// threads work on one slice.
struct TSlice {
    int s, lt, g, j;
    bool live;
};

// The launcher keeps G·M < 2^31, so that slice numbers are ints and their
// divisions 32-bit ones.
__device__ __forceinline__ TSlice tpr_slice_of(int s, int G, int M, int spb, bool sysMinor) {
    TSlice t;
    t.s = s;
    t.lt = 0;
    const unsigned q = blockIdx.x * (unsigned)spb + (unsigned)s;
    t.live = q < (unsigned)G * (unsigned)M;
    if (sysMinor) {
        t.g = (int)(q % (unsigned)G);
        t.j = (int)(q / (unsigned)G);
    } else {
        t.g = (int)(q / (unsigned)M);
        t.j = (int)(q % (unsigned)M);
    }
    return t;
}

__device__ __forceinline__ TSlice tpr_slice(int G, int M, int spb, int tps, bool sysMinor) {
    const int tid = threadIdx.x;
    const int s = sysMinor ? tid % spb : tid / tps;
    TSlice t = tpr_slice_of(s, G, M, spb, sysMinor);
    t.lt = sysMinor ? tid / spb : tid % tps;
    return t;
}

// ---------------------------------------------------------------------------
// Stage 1: sliced forward reduction (twin: Stage1).

template <typename T, bool GL>
__device__ void tpr_stage1_body(Coeffs<T> k, const T *d, T *eq, T *bnd, u64 *keys, int n, int G, i64 es, i64 bs,
                                int S, int M, int spb, int tps, i64 eqPitch, i64 eqPlane, i64 bndPlane) {
    const bool sysMinor = bs < es;
    const TSlice sl = tpr_slice(G, M, spb, tps, sysMinor);
    const int K = __ffs(S) - 1;
    const int base = sl.j * S;
    const i64 sys = (i64)sl.g * bs;
    // The slice's storage: its rows of eq, or shared memory (padded, 32-bit
    // indices; the launcher keeps 4·spb·(padded(S)+1) < 2^31).
    constexpr int PS = GL ? TPR_NOPAD : TPad<T>::ps;
    typedef typename std::conditional<GL, i64, int>::type I;
    TPlanes<T, PS, I> E;
    if (GL) {
        E = tplanes<PS, I>(eq + (i64)sl.g * eqPitch + base, (I)eqPlane);
    } else {
        T *sm = reinterpret_cast<T *>(tpr_smem);
        const int ss = tpr_padded<T>(S) + 1; // per slice; odd
        E = tplanes<PS, I>(sm + sl.s * ss, (I)(spb * ss));
    }
    // Step 1 (u = 1): every row l, from the input rows l−1, l, l+1 (the
    // odd tree's rows are the even l, the even tree's the odd l); rows
    // outside the slice are the pass-through equations.
    if (sl.live) {
#pragma unroll 1
        for (int l = sl.lt; l < S; l += tps) {
            const int row = base + l;
            const i64 idx = sys + (i64)row * es;
            const TEq<T> left = l > 0 ? tpr_load_at(k, d, n, idx - es, row - 1) : tpr_pass_left<T>();
            const TEq<T> right = l + 1 < S ? tpr_load_at(k, d, n, idx + es, row + 1) : tpr_pass_right<T>();
            if (bad_divisor(left.b) || bad_divisor(right.b)) {
                const u64 seq = ((u64)sl.j * K * 2 + (l & 1)) * S + l;
                if (bad_divisor(left.b)) tpr_fail(keys, sl.g, 0, seq * 2 + 0, row - 1);
                if (bad_divisor(right.b)) tpr_fail(keys, sl.g, 0, seq * 2 + 1, row + 1);
            }
            E.put(l, tpr_eq5(left, tpr_load_at(k, d, n, idx, row), right));
        }
    }
    __syncthreads();
    // Steps 2 … K (u = 2^(k−1)): the odd tree's rows l ≡ 0 and the even
    // tree's rows l ≡ 2^k − 1 (mod 2^k). For k ≥ 2 no row updated in a step
    // is read by another update of the same step, so the update is in place.
    for (int kk = 2; kk <= K; kk++) {
        const int u = 1 << (kk - 1), cnt = S >> kk;
        if (sl.live) {
#pragma unroll 1
            for (int q = sl.lt; q < 2 * cnt; q += tps) {
                const int tree = q >= cnt;
                const int l = tree ? ((q - cnt) << kk) + (1 << kk) - 1 : q << kk;
                const TEq<T> left = l - u >= 0 ? E.get(l - u) : tpr_pass_left<T>();
                const TEq<T> right = l + u < S ? E.get(l + u) : tpr_pass_right<T>();
                const u64 seq = ((u64)sl.j * K + (kk - 1)) * 2 + tree;
                if (bad_divisor(left.b)) tpr_fail(keys, sl.g, 0, (seq * S + l) * 2 + 0, base + l - u);
                if (bad_divisor(right.b)) tpr_fail(keys, sl.g, 0, (seq * S + l) * 2 + 1, base + l + u);
                E.put(l, tpr_eq5(left, E.get(l), right));
            }
        }
        __syncthreads();
    }
    if (!sl.live) return;
    // Step K+1: the first row eliminates x_{jS+S} with the last row; then
    // the two boundary equations go to bnd.
    if (sl.lt == 0) {
        const TEq<T> first = E.get(0), last = E.get(S - 1);
        T r = T(0);
        if (last.c != T(0)) r = first.c / last.c;
        const i64 q = (i64)sl.g * M + sl.j;
        bnd[q] = first.a - r * last.a;
        bnd[bndPlane + q] = first.b;
        bnd[2 * bndPlane + q] = -(r * last.b);
        bnd[3 * bndPlane + q] = first.d - r * last.d;
        bnd[4 * bndPlane + q] = last.a;
        bnd[5 * bndPlane + q] = last.b;
        bnd[6 * bndPlane + q] = last.c;
        bnd[7 * bndPlane + q] = last.d;
    }
    // Rows with odd l: their last-level equation (compact: row >> 1).
    if (!GL) {
        const TPlanes<T> out = tplanes(eq + (i64)sl.g * eqPitch, eqPlane);
        for (int p = sl.lt; p < S / 2; p += tps) {
            const int l = 2 * p + 1;
            if (base + l < n) out.put((base + l) >> 1, E.get(l));
        }
    }
}

// ---------------------------------------------------------------------------
// Stage 2 (twin: Stage2).

// row of R_j: the last row of slice j (the last real row for the last slice).
__device__ __forceinline__ int tpr_rrow(int j, int S, int n) { return min(j * S + S - 1, n - 1); }

// The intermediate stage for R_j (j < M): last_j updated with first'_{j+1}.
template <typename T>
__device__ __forceinline__ TEq<T> tpr_inter(const T *bnd, i64 bndPlane, u64 *keys, int g, int j, int n, int S, int M) {
    const i64 q = (i64)g * M + j;
    TEq<T> right = tpr_identity<T>();
    if (j + 1 < M) {
        right = teq<T>(bnd[q + 1], bnd[bndPlane + q + 1], bnd[2 * bndPlane + q + 1], bnd[3 * bndPlane + q + 1]);
        if (bad_divisor(right.b)) tpr_fail(keys, g, 1, (u64)j * 2, (j + 1) * S);
    }
    const TEq<T> last = teq<T>(bnd[4 * bndPlane + q], bnd[5 * bndPlane + q], bnd[6 * bndPlane + q], bnd[7 * bndPlane + q]);
    return tpr_eq5(tpr_pass_left<T>(), last, right);
}

// Sequence number of a stage-2 check: level index (0 the intermediate
// stage, t the reduction step t, levels the top, 2·levels − t the
// substitution at step t), then j, then the side.
__device__ __forceinline__ u64 tpr_s2seq(int idx, int MP, int j, int side) {
    return ((u64)idx * MP + j) * 2 + side;
}

template <typename T>
__device__ void tpr_stage2_body(const T *bnd, const T *R, T *xb, u64 *keys, int n, int G, int S, int M, int MP, int t0,
                                int spb, int tps, i64 bndPlane, i64 rPlane) {
    const int s = threadIdx.x / tps, lt = threadIdx.x % tps;
    const i64 gl = (i64)blockIdx.x * spb + s;
    const bool live = gl < G;
    const int g = (int)gl;
    const int MPc = MP >> t0;
    const int levels = __ffs(MP) - 1, Lc = levels - t0;
    const int off = (1 << t0) - 1; // compact m is j = (m << t0) + off
    T *sm = reinterpret_cast<T *>(tpr_smem);
    constexpr int ps = TPad<T>::ps;
    const int cs = tpr_padded<T>(MPc); // per system
    const int plane = spb * cs;
    const TPlanes<T, ps, int> E = tplanes<ps, int>(sm + s * cs, plane);
    T *Xs = sm + 4 * plane + s * cs;
#define X(m) Xs[(m) + ((m) >> ps)]
    if (live) {
        if (t0 == 0) {
            for (int j = lt; j < MP; j += tps) E.put(j, j < M ? tpr_inter(bnd, bndPlane, keys, g, j, n, S, M) : tpr_identity<T>());
        } else {
            const TPlanes<T> Rg = tplanes(const_cast<T *>(R) + (i64)g * MP, rPlane);
            for (int m = lt; m < MPc; m += tps) E.put(m, Rg.get(((i64)m << t0) + off));
        }
    }
    __syncthreads();
    // Reduction steps t = t0+1 … levels−1 (compact tc = t − t0).
    for (int tc = 1; tc < Lc; tc++) {
        const int uc = 1 << (tc - 1), stc = 1 << tc, cnt = MPc >> tc;
        const int t = tc + t0, u = uc << t0;
        if (live) {
            for (int q = lt; q < cnt; q += tps) {
                const int m = q * stc + stc - 1;
                const int j = (m << t0) + off;
                const TEq<T> left = E.get(m - uc);
                const TEq<T> right = m + uc < MPc ? E.get(m + uc) : tpr_identity<T>();
                if (bad_divisor(left.b)) tpr_fail(keys, g, 1, tpr_s2seq(t, MP, j, 0), tpr_rrow(j - u, S, n));
                if (bad_divisor(right.b)) tpr_fail(keys, g, 1, tpr_s2seq(t, MP, j, 1), tpr_rrow(j + u, S, n));
                E.put(m, tpr_eq5(left, E.get(m), right));
            }
        }
        __syncthreads();
    }
    // Top: Eq. 6 on the two remaining equations (one equation: x = d/b).
    if (live && lt == 0) {
        if (MPc == 1) {
            const TEq<T> e = E.get(0);
            if (bad_divisor(e.b)) tpr_fail(keys, g, 1, tpr_s2seq(levels, MP, 0, 0), tpr_rrow(off, S, n));
            X(0) = e.d / e.b;
        } else {
            const int i = MPc / 2 - 1, i2 = MPc - 1;
            const TEq<T> e1 = E.get(i), e2 = E.get(i2);
            const T den = e2.b * e1.b - e1.c * e2.a;
            if (bad_divisor(den)) {
                const int j2 = (i2 << t0) + off;
                const i64 r = (i64)j2 * S + S - 1;
                tpr_fail(keys, g, 1, tpr_s2seq(levels, MP, 0, 0), r < n ? (int)r : tpr_rrow((i << t0) + off, S, n));
            }
            X(i) = (e2.b * e1.d - e1.c * e2.d) / den;
            X(i2) = (e2.d * e1.b - e1.d * e2.a) / den;
        }
    }
    __syncthreads();
    // Substitution steps t = levels−1 … t0+1.
    for (int tc = Lc - 1; tc >= 1; tc--) {
        const int uc = 1 << (tc - 1), cnt = MPc >> tc;
        const int t = tc + t0;
        if (live) {
            for (int q = lt; q < cnt; q += tps) {
                const int m = q * 2 * uc + uc - 1;
                const TEq<T> e = E.get(m);
                if (bad_divisor(e.b)) {
                    const int j = (m << t0) + off;
                    tpr_fail(keys, g, 1, tpr_s2seq(2 * levels - t, MP, j, 0), tpr_rrow(j, S, n));
                }
                const T xl = m - uc >= 0 ? X(m - uc) : T(0);
                X(m) = tpr_subst(e, xl, X(m + uc));
            }
        }
        __syncthreads();
    }
    if (live) {
        for (int m = lt; m < MPc; m += tps) xb[(i64)g * MP + ((i64)m << t0) + off] = X(m);
    }
#undef X
}

// Large M: the intermediate stage into R, one thread per R_j (j < MP).
template <typename T>
__device__ void tpr_s2inter_body(const T *bnd, T *R, u64 *keys, int n, int G, int S, int M, int MP, i64 bndPlane,
                                 i64 rPlane) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const int lmp = __ffs(MP) - 1;
    if (t >= ((i64)G << lmp)) return;
    const int g = (int)(t >> lmp), j = (int)(t & (MP - 1));
    const TPlanes<T> Rp = tplanes(R, rPlane);
    Rp.put(t, j < M ? tpr_inter(bnd, bndPlane, keys, g, j, n, S, M) : tpr_identity<T>());
}

// Large M: reduction step t in place in R, one thread per updated R_j.
template <typename T> __device__ void tpr_s2reduce_body(T *R, u64 *keys, int n, int G, int S, int MP, int t, i64 rPlane) {
    const int lc = __ffs(MP) - 1 - t; // log2 of the updates per system
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= ((i64)G << lc)) return;
    const int g = (int)(id >> lc), q = (int)(id & ((1 << lc) - 1));
    const int u = 1 << (t - 1), st = 1 << t;
    const int j = q * st + st - 1;
    const TPlanes<T> Rp = tplanes(R + (i64)g * MP, rPlane);
    const TEq<T> left = Rp.get(j - u);
    const TEq<T> right = j + u < MP ? Rp.get(j + u) : tpr_identity<T>();
    if (bad_divisor(left.b)) tpr_fail(keys, g, 1, tpr_s2seq(t, MP, j, 0), tpr_rrow(j - u, S, n));
    if (bad_divisor(right.b)) tpr_fail(keys, g, 1, tpr_s2seq(t, MP, j, 1), tpr_rrow(j + u, S, n));
    Rp.put(j, tpr_eq5(left, Rp.get(j), right));
}

// Large M: substitution step t, one thread per unknown X_j it solves.
template <typename T>
__device__ void tpr_s2subst_body(const T *R, T *xb, u64 *keys, int n, int G, int S, int MP, int t, i64 rPlane) {
    const int levels = __ffs(MP) - 1;
    const int lc = levels - t; // log2 of the unknowns per system
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= ((i64)G << lc)) return;
    const int g = (int)(id >> lc), q = (int)(id & ((1 << lc) - 1));
    const int u = 1 << (t - 1);
    const int j = q * 2 * u + u - 1;
    const TPlanes<T> Rp = tplanes(const_cast<T *>(R) + (i64)g * MP, rPlane);
    T *X = xb + (i64)g * MP;
    const TEq<T> e = Rp.get(j);
    if (bad_divisor(e.b)) tpr_fail(keys, g, 1, tpr_s2seq(2 * levels - t, MP, j, 0), tpr_rrow(j, S, n));
    const T xl = j - u >= 0 ? X[j - u] : T(0);
    X[j] = tpr_subst(e, xl, X[j + u]);
}

// ---------------------------------------------------------------------------
// Stage 3: sliced substitution (twin: Stage3), then the per-system finish.

// tpr_finish: after a block has written its slices' rows of x, the block
// that completes the last slice of a system (the counter cnt reaches M)
// takes the system's key (clearing key and counter); when it is set, the
// block records the row in status and NaN-fills the whole system. flags:
// spb ints of shared memory. Every thread of the block calls it.
template <typename T>
__device__ void tpr_finish(T *x, u64 *keys, unsigned *cnt, int *status, int *flags, int n, int G, int M, i64 es, i64 bs,
                           int spb, bool sysMinor) {
    __threadfence();
    __syncthreads();
    for (int s = threadIdx.x; s < spb; s += blockDim.x) {
        flags[s] = 0;
        const TSlice sl = tpr_slice_of(s, G, M, spb, sysMinor);
        if (!sl.live || atomicAdd(&cnt[sl.g], 1u) != (unsigned)(M - 1)) continue;
        __threadfence();
        // Read the key and leave key and counter zero for the next solve.
        cnt[sl.g] = 0;
        const u64 inv = atomicExch(&keys[sl.g], 0ULL);
        if (inv == 0) continue;
        const int row = (int)(~inv & TPR_ROW_MASK);
        flags[s] = 1;
        atomicCAS(&status[sl.g], 0, row + 1);
        status[G] = 1;
    }
    __syncthreads();
    for (int s = 0; s < spb; s++) {
        if (!flags[s]) continue;
        const i64 sys = (i64)tpr_slice_of(s, G, M, spb, sysMinor).g * bs;
        const T q = nan_of<T>();
        for (int i = threadIdx.x; i < n; i += blockDim.x) x[sys + (i64)i * es] = q;
    }
}

template <typename T, bool GLX>
__device__ void tpr_stage3_body(Coeffs<T> k, const T *d, T *x, const T *eq, const T *xb, T *xsg, u64 *keys,
                                unsigned *cnt, int *status, int n, int G, i64 es, i64 bs, int S, int M, int MP, int spb,
                                int tps, i64 eqPitch, i64 eqPlane, int eqShift) {
    const bool sysMinor = bs < es;
    const TSlice sl = tpr_slice(G, M, spb, tps, sysMinor);
    const int K = __ffs(S) - 1;
    const int base = sl.j * S;
    T *sm = reinterpret_cast<T *>(tpr_smem);
    // Unknowns 0 … S of the slice: shared (padded, tpr_padded(S)+1 per
    // slice, then spb flags) or global (S+1 per slice).
    const int ss = tpr_padded<T>(S) + 1;
    int *flags = reinterpret_cast<int *>(GLX ? tpr_smem : tpr_smem + (size_t)spb * ss * sizeof(T));
    T *xs;
    constexpr int ps = GLX ? 31 : TPad<T>::ps;
    if (GLX) {
        xs = xsg + ((i64)sl.g * M + sl.j) * (S + 1);
    } else {
        xs = sm + (i64)sl.s * ss;
    }
#define XS(p) xs[(p) + ((p) >> ps)]
    const TPlanes<T> Q = tplanes(const_cast<T *>(eq) + (i64)sl.g * eqPitch, eqPlane);
    if (sl.live && sl.lt == 0) {
        XS(0) = sl.j > 0 ? xb[(i64)sl.g * MP + sl.j - 1] : T(0);
        XS(S) = xb[(i64)sl.g * MP + sl.j];
    }
    __syncthreads();
    // Levels k = K−1 … 1: rows l ≡ 2^k − 1 (mod 2^(k+1)) from eq.
    for (int kk = K - 1; kk >= 1; kk--) {
        const int w = 1 << kk, cntl = S >> (kk + 1);
        if (sl.live) {
#pragma unroll 1
            for (int q = sl.lt; q < cntl; q += tps) {
                const int l = w - 1 + q * 2 * w;
                const int row = base + l;
                const TEq<T> e = row < n ? Q.get(row >> eqShift) : tpr_identity<T>();
                if (bad_divisor(e.b)) tpr_fail(keys, sl.g, 2, ((u64)sl.j * K + (K - 1 - kk)) * S + l, row);
                XS(l + 1) = tpr_subst(e, XS(l + 1 - w), XS(l + 1 + w));
            }
        }
        __syncthreads();
    }
    // Last level: every even l from its original equation.
    const i64 sys = (i64)sl.g * bs;
    if (sl.live) {
#pragma unroll 1
        for (int p = sl.lt; p < S / 2; p += tps) {
            const int l = 2 * p;
            const TEq<T> e = tpr_load(k, d, n, es, sys, base + l);
            if (bad_divisor(e.b)) tpr_fail(keys, sl.g, 2, ((u64)sl.j * K + (K - 1)) * S + l, base + l);
            XS(l + 1) = tpr_subst(e, XS(l), XS(l + 2));
        }
    }
    __syncthreads();
    if (sl.live) {
#pragma unroll 1
        for (int l = sl.lt; l < S; l += tps) {
            const int row = base + l;
            if (row >= n) break;
            const T v = XS(l + 1);
            x[sys + (i64)row * es] = v;
            if (!isfinite(v)) tpr_fail(keys, sl.g, 3, (u64)row, row);
        }
    }
#undef XS
    tpr_finish(x, keys, cnt, status, flags, n, G, M, es, bs, spb, sysMinor);
}

// ---------------------------------------------------------------------------
// Entry points.

#define TPR_KERNELS(T, SUF)                                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                                 \
        tpr_stage1_##SUF(const T *a, const T *b, const T *c, const T *d, T ca, T cb, T cc, int isConst, T *eq,         \
                         T *bnd, u64 *keys, int n, int G, i64 es, i64 bs, int S, int M, int spb, int tps, i64 eqPitch, \
                         i64 eqPlane, i64 bndPlane) {                                                                  \
        tpr_stage1_body<T, false>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, eq, bnd, keys, n, G, es, bs, S, M, spb,  \
                                  tps, eqPitch, eqPlane, bndPlane);                                                    \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                                 \
        tpr_stage1g_##SUF(const T *a, const T *b, const T *c, const T *d, T ca, T cb, T cc, int isConst, T *eq,        \
                          T *bnd, u64 *keys, int n, int G, i64 es, i64 bs, int S, int M, int spb, int tps,             \
                          i64 eqPitch, i64 eqPlane, i64 bndPlane) {                                                    \
        tpr_stage1_body<T, true>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, eq, bnd, keys, n, G, es, bs, S, M, spb,   \
                                 tps, eqPitch, eqPlane, bndPlane);                                                     \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                                 \
        tpr_stage2_##SUF(const T *bnd, const T *R, T *xb, u64 *keys, int n, int G, int S, int M, int MP, int t0,       \
                         int spb, int tps, i64 bndPlane, i64 rPlane) {                                                 \
        tpr_stage2_body<T>(bnd, R, xb, keys, n, G, S, M, MP, t0, spb, tps, bndPlane, rPlane);                          \
    }                                                                                                                  \
    extern "C" __global__ void tpr_s2inter_##SUF(const T *bnd, T *R, u64 *keys, int n, int G, int S, int M, int MP,    \
                                                 i64 bndPlane, i64 rPlane) {                                           \
        tpr_s2inter_body<T>(bnd, R, keys, n, G, S, M, MP, bndPlane, rPlane);                                           \
    }                                                                                                                  \
    extern "C" __global__ void tpr_s2reduce_##SUF(T *R, u64 *keys, int n, int G, int S, int MP, int t, i64 rPlane) {   \
        tpr_s2reduce_body<T>(R, keys, n, G, S, MP, t, rPlane);                                                         \
    }                                                                                                                  \
    extern "C" __global__ void tpr_s2subst_##SUF(const T *R, T *xb, u64 *keys, int n, int G, int S, int MP, int t,     \
                                                 i64 rPlane) {                                                         \
        tpr_s2subst_body<T>(R, xb, keys, n, G, S, MP, t, rPlane);                                                      \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                                 \
        tpr_stage3_##SUF(const T *a, const T *b, const T *c, const T *d, T ca, T cb, T cc, int isConst, T *x,          \
                         const T *eq, const T *xb, T *xs, u64 *keys, unsigned *cnt, int *status, int n, int G, i64 es, \
                         i64 bs, int S, int M, int MP, int spb, int tps, i64 eqPitch, i64 eqPlane, int eqShift) {      \
        tpr_stage3_body<T, false>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, eq, xb, xs, keys, cnt, status, n, G,  \
                                  es, bs, S, M, MP, spb, tps, eqPitch, eqPlane, eqShift);                              \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                                 \
        tpr_stage3g_##SUF(const T *a, const T *b, const T *c, const T *d, T ca, T cb, T cc, int isConst, T *x,         \
                          const T *eq, const T *xb, T *xs, u64 *keys, unsigned *cnt, int *status, int n, int G,        \
                          i64 es, i64 bs, int S, int M, int MP, int spb, int tps, i64 eqPitch, i64 eqPlane,            \
                          int eqShift) {                                                                               \
        tpr_stage3_body<T, true>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, eq, xb, xs, keys, cnt, status, n, G,   \
                                 es, bs, S, M, MP, spb, tps, eqPitch, eqPlane, eqShift);                               \
    }

TPR_KERNELS(float, f32)
TPR_KERNELS(double, f64)
