// The partition method for complex systems (complex64 as float2,
// complex128 as double2), without pivoting: the twin of
// partition.SolveC and partition.SolveBoundedC (tridiag/partition), whose
// operations it does in the same order with Go's complex arithmetic
// (complex.cuh: cmul, cdiv; the PTX is built with -fmad=false), so that
// the results agree bit for bit.
//
// Launch: blockDim.x = spb·tps threads, spb systems a block, tps threads a
// system (tps ≥ ⌈n/P⌉): thread t of local system s (threadIdx.x = s·tps +
// t) owns chunk t, rows tP … tP+P−1; threads without a chunk take part in
// the barriers only. The block copies its systems into shared memory
// (cp.async, one element a copy, neighbouring threads on neighbouring
// addresses: rows first when es ≤ bs, systems first otherwise), so that
// contiguous and interleaved batches are read and written coalesced.
//
// Shared memory: four arrays A, B, C, D of spb·ss elements, then spb int
// keys (tridiaggpu.cpartSharedBytes). Row i of local system s is at
// s·ss + i + ⌊i/P⌋: a chunk takes P+1 slots (one unused), and ss =
// ⌈n/P⌉·(P+1) rounded up to an odd number, so that the threads of a warp
// reading row j of their chunks, or one row of neighbouring systems, hit
// distinct banks. Stage 1 leaves γ_j, α_j, δ_j of the chunk's rows in its
// C, A, D slots; the reduced rows go to the chunk's B slots (F row at 0 …
// 5, L row at 6 … 11: a, b, c, d, 1/b, x), read by the other threads of
// the system behind barriers: Stage 2 is the cyclic reduction of
// partition.reducedCRC, one barrier after each level's reciprocals,
// updates and substitutions. Stage 3 writes x over the C slots, which the
// block then stores.
//
// Breakdown keys as in partition.cuh (PART_KEY): one int per system, the
// smallest (stage, row): stage 1 Stage 1's failed rows (a bad pivot, or a
// fill that fails the growth test when bounded), 2k the divisors of level
// k's eliminated rows, 2k+1 the growth test of level k's kept rows, 2K+2
// the last row's divisor, 2K+3 a non-finite x (K = ⌊log2 RR⌋ levels of
// the RR reduced rows). A failed system gets NaN in every row and its row
// + 1 in status, or, when redo is not null, keeps x as it was and is
// flagged in redo[g] for complex_redo (a GTSV solve of the flagged
// systems: Auto's fallback).
#pragma once
#include "common.cuh"
#include "complex.cuh"
#include "partition.cuh"

#define CPART_P 16

// cpart_ss is the system stride in elements.
__device__ __forceinline__ int cpart_ss(int n, int P) { return (((n + P - 1) / P) * (P + 1)) | 1; }

// cpart_grows says whether the fill f fails the growth test against the
// diagonal entry e (partition.grows).
template <typename C> __device__ __forceinline__ bool cpart_grows(C f, C e) {
    return !(cabs1(f) <= 2.0 * cabs1(e));
}

template <typename C> __device__ __forceinline__ bool cpart_bad(C v) { return czero(v) || !cfinite(v); }

// CPartWalk enumerates the block's rows (s, i) of its nsys systems in the
// order of the batch layout, thread k taking the flat indices k, k +
// blockDim, …: f = s·n + i when es ≤ bs, f = i·nsys + s otherwise.
struct CPartWalk {
    int n, nsys;
    bool sysFirst;
    i64 es, bs;
    int g0;
    __device__ __forceinline__ void at(int f, int &s, int &i, i64 &idx) const {
        if (sysFirst) {
            i = f / nsys;
            s = f - i * nsys;
        } else {
            s = f / n;
            i = f - s * n;
        }
        idx = (i64)(g0 + s) * bs + (i64)i * es;
    }
};

template <typename C, int P>
__device__ void cpart_kernel(const C *a, const C *b, const C *c, const C *d, C *x, int n, int G, i64 es, i64 bs,
                             C ca, C cb, C cc, int isConst, int bounded, int *redo, int *status, int spb, int tps) {
    typedef typename CTraits<C>::R Re;
    C *sm = reinterpret_cast<C *>(part_smem);
    const int nch = (n + P - 1) / P;
    const int ss = cpart_ss(n, P);
    const int W = spb * ss;
    C *SA = sm, *SB = SA + W, *SC = SB + W, *SD = SC + W;
    int *keys = reinterpret_cast<int *>(SD + W);
    const int s = threadIdx.x / tps, t = threadIdx.x - s * tps;
    const int g0 = blockIdx.x * spb;
    const int nsys = min(spb, G - g0);
    const bool has = t < nch && s < spb;
    const int m = has ? min(P, n - t * P) : 0;
    const bool live = has && s < nsys;
    const int base = s * ss + t * (P + 1); // the chunk's first slot
    int *key = keys + s;
    const C zero = czeroval<C>(), one = CTraits<C>::make(1, 0);

    for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[q] = PART_NONE;
    const CPartWalk wk{n, nsys, bs < es, es, bs, g0};
    const int total = nsys * n;
#pragma unroll 4
    for (int f = threadIdx.x; f < total; f += blockDim.x) {
        int ls, i;
        i64 idx;
        wk.at(f, ls, i, idx);
        const int sl = ls * ss + i + i / P;
        if (!isConst) {
            part_cp(SA + sl, a + idx);
            part_cp(SB + sl, b + idx);
            part_cp(SC + sl, c + idx);
        }
        part_cp(SD + sl, d + idx);
    }
#ifndef PART_EMU
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
    __syncthreads();

    // Stage 1 (partition.eliminateC).
    C Fa = zero, Fb = one, Fc = zero, Fd = zero, La = zero, Lb = one, Lc = zero, Ld = zero;
    if (live) {
        const int r0 = t * P;
        C a0 = isConst ? ca : SA[base], b0 = isConst ? cb : SB[base], c0 = isConst ? cc : SC[base], d0 = SD[base];
        if (r0 == 0) a0 = zero;
        if (r0 == n - 1) c0 = zero;
        if (m == 1) {
            Fa = a0, Fb = b0, Fc = c0, Fd = d0;
        } else {
            int bad = -1;
            C gp = zero, ap = cneg(one), dp = zero;
#pragma unroll 1
            for (int j = 1; j < m; j++) {
                const C aj = isConst ? ca : SA[base + j], bj = isConst ? cb : SB[base + j];
                C cj = isConst ? cc : SC[base + j];
                if (r0 + j == n - 1) cj = zero;
                const C dj = SD[base + j];
                const C fill = cmul(aj, gp);
                const C piv = csub(bj, fill);
                if (bad < 0) {
                    if (bounded && cpart_grows(fill, bj))
                        bad = j;
                    else if (cpart_bad(piv))
                        bad = j;
                }
                const C r = cdiv(one, piv);
                gp = cmul(cj, r);
                ap = cneg(cmul(cmul(aj, ap), r));
                dp = cmul(csub(dj, cmul(aj, dp)), r);
                SC[base + j] = gp;
                SA[base + j] = ap;
                SD[base + j] = dp;
            }
            La = ap, Lb = one, Lc = gp, Ld = dp;
            C y = zero, v = zero, w = cneg(one);
#pragma unroll 1
            for (int j = m - 2; j >= 1; j--) {
                const C gj = SC[base + j];
                y = csub(SD[base + j], cmul(gj, y));
                v = csub(SA[base + j], cmul(gj, v));
                w = cneg(cmul(gj, w));
            }
            const C fill = cmul(c0, v);
            if (bounded && cpart_grows(fill, b0)) bad = 0;
            Fa = a0, Fb = csub(b0, fill), Fc = cneg(cmul(c0, w)), Fd = csub(d0, cmul(c0, y));
            if (bad >= 0) atomicMin(key, PART_KEY(1, r0 + bad));
        }
    }

    // Stage 2 (partition.reducedCRC): reduced row j is field k of slot
    // rs(j) + k in B.
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);
    const int sb = s * ss;
    auto rs = [&](int j) { return sb + (j >> 1) * (P + 1) + (j & 1) * 6; };
    const int jF = 2 * t, jL = 2 * t + 1;
    const bool hasF = has && jF < RR, hasL = has && jL < RR;
    auto report = [&](int stage, int j) {
        if (live) atomicMin(key, PART_KEY(stage, part_red_row(j, n, P)));
    };
    if (hasF) {
        const int o = rs(jF);
        SB[o] = Fa, SB[o + 1] = Fb, SB[o + 2] = Fc, SB[o + 3] = Fd;
    }
    if (hasL) {
        const int o = rs(jL);
        SB[o] = La, SB[o + 1] = Lb, SB[o + 2] = Lc, SB[o + 3] = Ld;
    }
    __syncthreads();
#pragma unroll 1
    for (int k = 1; k <= K; k++) {
        const int u = 1 << (k - 1);
        // The reciprocals of the rows this level eliminates.
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int j = jF + e;
            if ((e ? hasL : hasF) && ((j + 1) & (2 * u - 1)) == u) {
                const int o = rs(j);
                const C bj = SB[o + 1];
                if (cpart_bad(bj)) report(2 * k, j);
                SB[o + 4] = cdiv(one, bj);
            }
        }
        __syncthreads();
        // The kept rows.
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int j = jF + e;
            if ((e ? hasL : hasF) && ((j + 1) & (2 * u - 1)) == 0) {
                const int o = rs(j), ol = rs(j - u);
                C ar = zero, cr = zero, dr = zero, qr = one;
                if (j + u < RR) {
                    const int orr = rs(j + u);
                    ar = SB[orr], cr = SB[orr + 2], dr = SB[orr + 3], qr = SB[orr + 4];
                }
                const C aj = SB[o], bj = SB[o + 1], cj = SB[o + 2], dj = SB[o + 3];
                const C s1 = cmul(aj, SB[ol + 4]);
                const C s2 = cmul(cj, qr);
                const C f1 = cmul(SB[ol + 2], s1);
                const C f2 = cmul(ar, s2);
                if (bounded && (cpart_grows(f1, bj) || cpart_grows(f2, bj))) report(2 * k + 1, j);
                SB[o] = cneg(cmul(SB[ol], s1));
                SB[o + 1] = csub(csub(bj, f1), f2);
                SB[o + 2] = cneg(cmul(cr, s2));
                SB[o + 3] = csub(csub(dj, cmul(SB[ol + 3], s1)), cmul(dr, s2));
            }
        }
        __syncthreads();
    }
    {
        const int top = (1 << K) - 1;
        if ((hasF && jF == top) || (hasL && jL == top)) {
            const int o = rs(top);
            const C bt = SB[o + 1];
            if (cpart_bad(bt)) report(2 * K + 2, top);
            SB[o + 5] = cdiv(SB[o + 3], bt);
        }
    }
    __syncthreads();
#pragma unroll 1
    for (int k = K; k >= 1; k--) {
        const int u = 1 << (k - 1);
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int j = jF + e;
            if ((e ? hasL : hasF) && ((j + 1) & (2 * u - 1)) == u) {
                const int o = rs(j);
                const C xl = j - u >= 0 ? SB[rs(j - u) + 5] : zero;
                const C xn = j + u < RR ? SB[rs(j + u) + 5] : zero;
                SB[o + 5] = cmul(csub(csub(SB[o + 3], cmul(SB[o], xl)), cmul(SB[o + 2], xn)), SB[o + 4]);
            }
        }
        __syncthreads();
    }

    // Stage 3: x over the C slots; the chunk's first non-finite row.
    if (live) {
        const C xs = SB[rs(jF) + 5];
        SC[base] = xs;
        if (m > 1) {
            const C xe = SB[rs(jL) + 5];
            C xn = xe;
#pragma unroll 1
            for (int j = m - 2; j >= 1; j--) {
                const C xi = csub(csub(SD[base + j], cmul(SA[base + j], xs)), cmul(SC[base + j], xn));
                SC[base + j] = xi;
                xn = xi;
            }
            SC[base + m - 1] = xe;
        }
#pragma unroll 1
        for (int j = 0; j < m; j++) {
            if (!cfinite(SC[base + j])) {
                atomicMin(key, PART_KEY(2 * K + 3, t * P + j));
                break;
            }
        }
    }
    __syncthreads();

    const Re nan = nan_of<Re>();
    const C cnan = CTraits<C>::make(nan, nan);
#pragma unroll 4
    for (int f = threadIdx.x; f < total; f += blockDim.x) {
        int ls, i;
        i64 idx;
        wk.at(f, ls, i, idx);
        const bool ok = keys[ls] == PART_NONE;
        if (ok)
            x[idx] = SC[ls * ss + i + i / P];
        else if (!redo)
            x[idx] = cnan;
    }
    for (int q = threadIdx.x; q < nsys; q += blockDim.x) {
        const int kq = keys[q];
        if (kq == PART_NONE) continue;
        if (redo) {
            redo[g0 + q] = 1;
        } else {
            atomicCAS(&status[g0 + q], 0, PART_ROW(kq) + 1);
            status[G] = 1;
        }
    }
}

// complex_redo solves by GTSV (complex_kernel's) the systems flagged in
// redo, and clears their flags: Auto's fallback after cpart with redo.
template <typename C>
__device__ void complex_redo(const C *a, const C *b, const C *c, const C *d, C *x, C *work, int n, int G, i64 es,
                             i64 bs, C ca, C cb, C cc, int isConst, int *redo, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G || redo[g] == 0) return;
    redo[g] = 0;
    complex_kernel<C, CALG_GTSV>(a, b, c, d, x, work, n, G, es, bs, ca, cb, cc, isConst, 0, 0, status);
}

// cpart_p16_*: the complex partition method with chunks of 16 rows.
// Grid: ⌈G/spb⌉ blocks of spb·tps threads (at most 512), dynamic shared
// memory tridiaggpu.cpartSharedBytes. complex_redo_*: one thread a
// system.
#ifndef BS_DEVICE_ONLY
#define CPART(C, R, S, P)                                                                                         \
    extern "C" __global__ void __launch_bounds__(512, 1)                                                          \
        cpart_p##P##_##S(const C *a, const C *b, const C *c, const C *d, C *x, int n, int G, i64 es, i64 bs,     \
                         R ca_real, R ca_imag, R cb_real, R cb_imag, R cc_real, R cc_imag, int isConst,         \
                         int bounded, int *redo, int *status, int spb, int tps) {                               \
        cpart_kernel<C, P>(a, b, c, d, x, n, G, es, bs, CTraits<C>::make(ca_real, ca_imag),                      \
                           CTraits<C>::make(cb_real, cb_imag), CTraits<C>::make(cc_real, cc_imag), isConst,      \
                           bounded, redo, status, spb, tps);                                                     \
    }
CPART(float2, float, f32, 16)
CPART(double2, double, f64, 16)

#define COMPLEX_REDO(C, R, S)                                                                                     \
    extern "C" __global__ void complex_redo_##S(const C *a, const C *b, const C *c, const C *d, C *x, C *work,  \
                                                int n, int G, i64 es, i64 bs, R ca_real, R ca_imag, R cb_real,  \
                                                R cb_imag, R cc_real, R cc_imag, int isConst, int *redo,        \
                                                int *status) {                                                  \
        complex_redo<C>(a, b, c, d, x, work, n, G, es, bs, CTraits<C>::make(ca_real, ca_imag),                  \
                        CTraits<C>::make(cb_real, cb_imag), CTraits<C>::make(cc_real, cc_imag), isConst, redo,  \
                        status);                                                                                \
    }
COMPLEX_REDO(float2, float, f32)
COMPLEX_REDO(double2, double, f64)
#endif
