// The partition method for large batches with constant coefficients: a
// persistent grid whose blocks compute what depends on the matrix once and
// then stream d through.
//
// With constant a, b, c every system of a batch has the same matrix, so
// everything partition_kernel computes from a, b, c alone is the same in
// every system: Stage 1's reciprocal pivots, γ and α (part_table), the
// a, b, c of the reduced rows, and in each PCR step the factors
// s1 = a·(1/b_left) and s2 = c·(1/b_right) that part_upd applies to the
// neighbours' d. partition_const_p16 (partition_kernel with CONST) still
// recomputes the PCR steps' divisions and exchanges a, c, d and 1/b for
// every system, and loads, computes and stores once per block, so that
// nothing is loaded while a block computes.
//
// Here each block of a grid of at most every resident block first runs
// the matrix part once (part_const_rows, then PCR on a, b, c through its
// exchange array), keeping s1 and s2 of every thread's two reduced rows for
// every step (KMAX steps at most) in a shared-memory table that the
// block's systems share (FTAB), or in each thread's registers, and the
// final b in registers. Then it loops over groups of spb systems, group
// blockIdx.x, +gridDim.x, …:
// Stage 1 on d alone (part_const_d, δ in registers), a barrier, the copy
// of the next group's d into D (cp.async, not waited for), PCR on d alone
// (d' = (d − d_left·s1) − d_right·s2: one value a row exchanged instead
// of four, no division), the final division, Stage 3 in registers
// (part_recover_regs), x through E to the store. Every operation is
// partition_kernel's on the same values in the same order, so the results
// are partition.Solve's bits (chunks of 16) on constant arrays, and the
// breakdowns (all of them the matrix's, so alike in every system, but for
// a non-finite x) are reported at the same rows.
//
// Launch (tuning.PartitionConstStreamLaunchFor): blockDim.x = spb·tps as
// partition_kernel's; WARP kernels for tps ≤ 32 (PCR by shuffles, K ≤ 6),
// the others (tps a multiple of 32) PCR through shared memory, K ≤ KMAX;
// gridDim.x ≤ ⌈G/spb⌉. Shared memory: two arrays (D, E) of spb systems'
// units in whole groups of 8, the Stage 1 table, 3·spb int keys (two sets
// alternating from one group to the next, and the matrix's breakdowns),
// and with FTAB, 16-byte aligned, the factor table: K·tps entries of four
// values (tuning.PartitionConstStreamSharedBytes).
#pragma once
#include "partition.cuh"

// part_const_rows is the matrix part (a, b, c) of a chunk's reduced rows F
// and L for constant coefficients (part_eliminate_const's, d left 0): m,
// last, zeroA as there; the smallest row with a bad pivot goes to report.
template <typename T, int P, typename Bad>
__device__ __forceinline__ void part_const_rows(const PartTable<T, P> &tb, int m, int last, bool zeroA, T ca, T cb,
                                                T cc, PartEq<T> &F, PartEq<T> &L, Bad report) {
    const T a0 = zeroA ? T(0) : ca, c0 = last == 0 ? T(0) : cc;
    if (m == 1) {
        F = {a0, cb, c0, T(0)};
        return;
    }
    const unsigned bad = tb.bad & ((2u << (m - 1)) - 1);
    if (bad) report(__ffs(bad) - 1);
    L = {tb.al[m - 1], T(1), (last == m - 1 ? T(0) : cc) * tb.r[m - 1], T(0)};
    T v = T(0), w = T(-1);
#pragma unroll
    for (int j = P - 2; j >= 1; j--) {
        if (j < m - 1) {
            const T gj = tb.g[j];
            v = tb.al[j] - gj * v;
            w = -(gj * w);
        }
    }
    F = {a0, cb - c0 * v, -(c0 * w), T(0)};
}

// part_const_d is the d part of Stage 1 for constant coefficients
// (part_eliminate_const's): the chunk's d_j from row(j), δ of the interior
// into dl, the d of F (fd) and of L (ld; 0 when m = 1).
template <typename T, int P, typename Row>
__device__ __forceinline__ void part_const_d(Row row, const PartTable<T, P> &tb, int m, int last, T ca, T cc,
                                             T (&dl)[P], T &fd, T &ld) {
    const T d0 = row(0);
    T dp = T(0);
#pragma unroll
    for (int j = 0; j < P; j++) dl[j] = T(0);
#pragma unroll
    for (int j = 1; j < P; j++) {
        const T dj = row(j);
        if (j < m) {
            dp = (dj - ca * dp) * tb.r[j];
            if (j <= P - 2) dl[j] = dp;
        }
    }
    if (m == 1) {
        fd = d0, ld = T(0);
        return;
    }
    ld = dp;
    T y = T(0);
#pragma unroll
    for (int j = P - 2; j >= 1; j--) {
        if (j < m - 1) y = dl[j] - tb.g[j] * y;
    }
    const T c0 = last == 0 ? T(0) : cc;
    fd = d0 - c0 * y;
}

template <typename T, int P, bool WARP, int KMAX, bool FTAB>
__device__ void partition_cstream(const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int *status,
                                  int spb, int tps, volatile unsigned int *word, unsigned int seq) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8, "chunks of whole units, at most 8");

    T *sm = reinterpret_cast<T *>(part_smem);
    const int nch = (n + P - 1) / P;
    const int ss = part_ss<T, P>(n, bs < es);
    const int W = ((spb * ss + 7) & ~7) * R;
    T *SD = sm, *SE = sm + W;
    const V *VD = reinterpret_cast<const V *>(SD);
    V *VE = reinterpret_cast<V *>(SE);
    PartTable<T, P> &tb = *reinterpret_cast<PartTable<T, P> *>(sm + 2 * W);
    int *keys = reinterpret_cast<int *>(&tb + 1); // two sets of spb, then the matrix's
    int *base = keys + 2 * spb;
    // FTAB: the PCR factors of every step in a table after the keys (16-byte
    // aligned), entry st·tps + t holding thread t's s1F, s2F, s1L, s2L;
    // otherwise in registers.
    T *Tab = reinterpret_cast<T *>(reinterpret_cast<char *>(sm) +
                                   ((reinterpret_cast<char *>(base + spb) - reinterpret_cast<char *>(sm) + 15) & ~15));
    const Coeffs<T> k{nullptr, nullptr, nullptr, ca, cb, cc, 1};
    const int s = threadIdx.x / tps, t = threadIdx.x - s * tps;
    const bool has = t < nch;
    const int m = has ? min(P, n - t * P) : 0;
    const int X = part_x(s * ss + t * U);
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = RR <= 1 ? 0 : 32 - __clz(RR - 1);
    const int jf = 2 * t, jl = 2 * t + 1;
    const int groups = (G + spb - 1) / spb;
    int grp = blockIdx.x;

    for (int q = threadIdx.x; q < spb; q += blockDim.x) base[q] = PART_NONE;
    if (threadIdx.x == 0) part_table<T, P>(tb, ca, cb, cc);
    if (grp < groups) part_copy<T, P, false>(k, d, nullptr, nullptr, nullptr, SD, ss, n, G, es, bs, spb, grp * spb);
    __syncthreads();

    // The matrix part, alike in every system: each local system s runs it
    // (the same values) in its own part of E, whose units it owns.
    int *bkey = base + s;
    PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
    if (has)
        part_const_rows<T, P>(tb, m, n - 1 - t * P, t == 0, ca, cb, cc, F, L,
                              [&](int j) { atomicMin(bkey, PART_KEY(1, t * P + j)); });
    T s1F[FTAB ? 1 : KMAX], s2F[FTAB ? 1 : KMAX], s1L[FTAB ? 1 : KMAX], s2L[FTAB ? 1 : KMAX];
    {
        T *Ma = SE + s * ss * R, *Mc = Ma + 2 * nch, *Mq = Mc + 2 * nch; // 6·nch ≤ 16·nch elements
#pragma unroll
        for (int st = 0; st < KMAX; st++) {
            if (!FTAB) s1F[st] = s2F[st] = s1L[st] = s2L[st] = T(0);
            if (st < K) {
                const int u = 1 << st;
                const T qF = T(1) / F.b, qL = T(1) / L.b;
                if (has) part_check_step(bkey, st + 1, u, RR, t, t * P, m, F.b, L.b);
                const bool fl = jf < RR && jf - u >= 0, fr = jf + u < RR, ll = jl < RR && jl - u >= 0,
                           lr = jl + u < RR;
                if (has) {
                    Ma[jf] = F.a, Mc[jf] = F.c, Mq[jf] = qF;
                    Ma[jl] = L.a, Mc[jl] = L.c, Mq[jl] = qL;
                }
                __syncthreads();
                const T la = fl ? Ma[jf - u] : T(0), lc = fl ? Mc[jf - u] : T(0), lq = fl ? Mq[jf - u] : T(1);
                const T ra = fr ? Ma[jf + u] : T(0), rc = fr ? Mc[jf + u] : T(0), rq = fr ? Mq[jf + u] : T(1);
                const T la2 = ll ? Ma[jl - u] : T(0), lc2 = ll ? Mc[jl - u] : T(0), lq2 = ll ? Mq[jl - u] : T(1);
                const T ra2 = lr ? Ma[jl + u] : T(0), rc2 = lr ? Mc[jl + u] : T(0), rq2 = lr ? Mq[jl + u] : T(1);
                __syncthreads();
                const T f1F = F.a * lq, f2F = F.c * rq, f1L = L.a * lq2, f2L = L.c * rq2;
                if (!FTAB) {
                    s1F[st] = f1F, s2F[st] = f2F, s1L[st] = f1L, s2L[st] = f2L;
                } else if (s == 0) {
                    T *e = Tab + 4 * (st * tps + t);
                    e[0] = f1F, e[1] = f2F, e[2] = f1L, e[3] = f2L;
                }
                F = {-(la * f1F), (F.b - lc * f1F) - ra * f2F, -(rc * f2F), T(0)};
                L = {-(la2 * f1L), (L.b - lc2 * f1L) - ra2 * f2L, -(rc2 * f2L), T(0)};
            }
        }
    }
    if (has) part_check_final(bkey, K, RR, t, t * P, m, F.b, L.b);
    const T fb = F.b, lb = L.b;
    __syncthreads(); // the matrix's keys are final
    for (int q = threadIdx.x; q < 2 * spb; q += blockDim.x) keys[q] = base[q % spb];

    for (int it = 0; grp < groups; it++, grp += gridDim.x) {
        const int g0 = grp * spb;
        int *ks = keys + (it & 1) * spb;
        int *key = ks + s;
        const bool live = has && g0 + s < G;
#ifndef PART_EMU
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        __syncthreads();
        // The other set: its last readers (the previous group's store and
        // status) are before the barrier above, its next writers after the
        // next one.
        for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[((it + 1) & 1) * spb + q] = base[q];

        // Stage 1 on d, from D into registers.
        T dl[P], fd = T(0), ld = T(0);
        V ud;
        if (has)
            part_const_d<T, P>(
                [&](int j) -> T {
                    if (j % R == 0) ud = VD[X ^ (j / R)]; // j is a constant: the loop is unrolled
                    return PartVec<T>::el(ud, j % R);
                },
                tb, m, n - 1 - t * P, ca, cc, dl, fd, ld);
        __syncthreads(); // D is read: the next group's copy may go
        if (grp + (int)gridDim.x < groups)
            part_copy<T, P, false>(k, d, nullptr, nullptr, nullptr, SD, ss, n, G, es, bs, spb,
                                   (grp + (int)gridDim.x) * spb);

        // Stage 2: PCR on d alone.
#pragma unroll
        for (int st = 0; st < KMAX; st++) {
            if (st < K) {
                const int u = 1 << st;
                const bool fl = jf < RR && jf - u >= 0, fr = jf + u < RR, ll = jl < RR && jl - u >= 0,
                           lr = jl + u < RR;
                T lF, rF, lL, rL;
                if (WARP) {
                    if (st == 0) {
                        // F: the L row of thread t−1 and its own L; L: its
                        // own F and the F row of thread t+1.
                        lF = part_up(ld, 1, tps), rF = ld;
                        lL = fd, rL = part_down(fd, 1, tps);
                    } else {
                        const int v = u >> 1;
                        lF = part_up(fd, v, tps), rF = part_down(fd, v, tps);
                        lL = part_up(ld, v, tps), rL = part_down(ld, v, tps);
                    }
                } else {
                    // Reduced row j of local system s at EX[j], two buffers
                    // alternating (one barrier a step).
                    T *EX = SE + (st & 1) * (2 * spb * tps) + s * 2 * tps;
                    if (has) {
                        EX[jf] = fd;
                        EX[jl] = ld;
                    }
                    __syncthreads();
                    lF = fl ? EX[jf - u] : T(0), rF = fr ? EX[jf + u] : T(0);
                    lL = ll ? EX[jl - u] : T(0), rL = lr ? EX[jl + u] : T(0);
                }
                if (!fl) lF = T(0);
                if (!fr) rF = T(0);
                if (!ll) lL = T(0);
                if (!lr) rL = T(0);
                T f1F, f2F, f1L, f2L;
                if (FTAB) {
                    const V *e = reinterpret_cast<const V *>(Tab + 4 * (st * tps + t));
                    const V e0 = e[0], e1 = e[R == 4 ? 0 : 1];
                    f1F = PartVec<T>::el(e0, 0), f2F = PartVec<T>::el(e0, 1);
                    f1L = PartVec<T>::el(e1, R == 4 ? 2 : 0), f2L = PartVec<T>::el(e1, R == 4 ? 3 : 1);
                } else {
                    f1F = s1F[st], f2F = s2F[st], f1L = s1L[st], f2L = s2L[st];
                }
                const T nfd = (fd - lF * f1F) - rF * f2F;
                ld = (ld - lL * f1L) - rL * f2L;
                fd = nfd;
            }
        }
        const T xs = fd / fb;
        const T xe = m >= 2 ? ld / lb : xs;

        // Stage 3 in registers; x through E to the store.
        T xv[P];
        const int bad = part_recover_regs<T, P>(tb.g, tb.al, dl, m, xs, xe, xv);
        if (live && bad >= 0) atomicMin(key, PART_KEY(K + 3, t * P + bad));
        if (!WARP) __syncthreads(); // the last exchange's reads of E are done
        if (has) {
#pragma unroll
            for (int h = 0; h < U; h++) VE[X ^ h] = PartVec<T>::make(xv + h * R);
        }
        __syncthreads();
        part_store<T, P>(SE, ks, x, ss, n, G, es, bs, spb, g0);
        part_status(ks, G, spb, g0, status);
    }
    block_done_signal(status, G, word, seq);
}

// partition_cstream_p16_*: PCR through shared memory (tps a multiple of
// 32, K ≤ 9: N ≤ 4096); partition_cstream_warp_p16_*: by shuffles (tps ≤
// 32, K ≤ 6). Both keep the factors in a shared-memory table (FTAB), at
// most 256 threads a block, and leave registers for three blocks of 256
// threads an SM in FP32, two in FP64 (85 and 128 registers; no spills).
// partition_cstream_regs_p16_f64 keeps the factors in registers (one block
// of 256 threads an SM): FP64 N > 2048, where the table of 9 steps would
// take 73 KB (tuning.PartitionConstStreamTable).
#ifndef BS_DEVICE_ONLY
#define PARTITION_CSTREAM(T, S, NAME, WARP, KMAX, FTAB, MAXT, MINB)                                                    \
    extern "C" __global__ void __launch_bounds__(MAXT, MINB)                                                      \
        partition_##NAME##_p16_##S(const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int *status, \
                                   int spb, int tps, volatile unsigned int *word, unsigned int seq) {            \
        partition_cstream<T, 16, WARP, KMAX, FTAB>(d, x, n, G, es, bs, ca, cb, cc, status, spb, tps, word, seq); \
    }
PARTITION_CSTREAM(float, f32, cstream, false, 9, true, 256, 3)
PARTITION_CSTREAM(float, f32, cstream_warp, true, 6, true, 256, 3)
PARTITION_CSTREAM(double, f64, cstream, false, 9, true, 256, 2)
PARTITION_CSTREAM(double, f64, cstream_warp, true, 6, true, 256, 2)
PARTITION_CSTREAM(double, f64, cstream_regs, false, 9, false, 256, 1)
#endif
