// Batched complex banded solves with partial pivoting, one thread per
// system: the complex twin of band_pivot.cuh. The CPU twin is
// banded.FactorPivot (gbtrf, KL = KU = K, pivot by Cabs1 = |re| + |im| in
// double precision, the first candidate on ties, as zgbtrf's izamax)
// followed by PivotLU.Solve (gbtrs) on each complex system, that is
// banded.SolveBatch with BatchOptions.Pivot. The kernel does the CPU's
// operations in its order, with Go's complex arithmetic (complex.cuh), so
// that the results agree bit for bit:
//   - the factorization goes in pairs of steps j, j+1 as the CPU's does:
//     step j's multipliers update column j+1, step j+1 chooses its pivot
//     and interchanges, step j updates the new row j+1, step j+1's
//     multipliers follow, and both updates reach the rest of the window in
//     one pass, each entry as (y − c1·r1) − c2·r2. The pass covers the
//     rectangle of rows j+2 … j+1+km2 and columns j+2 … ju as the CPU's
//     rank-2 update does, with the CPU's zero padding where step j does
//     not reach (a multiplier or a row of U entry of +0), so that even the
//     signs of zeros agree;
//   - every update is y − (c·r), the product rounded to the element type
//     (complex64 products are computed in double and rounded, as Go
//     does), the subtraction part by part in the element's precision;
//   - multipliers and solution entries divide by Go's complex division.
//
// Batch layout and workspace as band_pivot.cuh's: a, d, x with the strides
// aes, abs, des, dbs (x may alias d); w holds the factors in gbtrf's layout,
// 3K+1 rows of n, interleaved with batch stride Gp (entry (r, j) of system
// g at (r·n + j)·Gp + g), piv the interchanges (row j at j·Gp + g).
// Elements are float2 (complex64) and double2 (complex128), real part
// first.
//
// Status as band_pivot.cuh's: a non-finite entry (either part NaN or Inf;
// BAND_NONFINITE_ENTRY in banded.scanGeneral's order), an all-zero pivot
// column (BAND_SINGULAR at row and column j, banded.ErrSingular), a
// non-finite solution when flags has BAND_CHECK_X; a failed system's x is
// NaN in both parts.
#pragma once
// band_batch.cuh's kernel flag (the same definition), which
// band_pivot.cuh reads.
#ifndef BAND_CHECK_X
#define BAND_CHECK_X 1
#endif
#include "band_pivot.cuh"
// complex.cuh's device arithmetic, without its tridiagonal kernels.
#ifdef BS_DEVICE_ONLY
#include "complex.cuh"
#else
#define BS_DEVICE_ONLY
#include "complex.cuh"
#undef BS_DEVICE_ONLY
#endif

// CBandF addresses entry (r, j) of one system's factors in the workspace.
template <typename C> struct CBandF {
    C *w;
    int n, Gp, g;
    __device__ __forceinline__ C &operator()(int r, int j) const { return w[((i64)r * n + j) * Gp + g]; }
};

// cband_pivot_swap is banded's pivotSwap at step j: the pivot search over
// rows j … j+km of column j by Cabs1 (the first largest), recorded in pv,
// ju widened to the pivot row's reach and the rows interchanged over
// columns j … ju. It returns the pivot row, or -1 when every candidate is
// zero (the system is singular at row j).
template <typename C, int K>
__device__ __forceinline__ int cband_pivot_swap(const CBandF<C> &F, int *pv, int j, int km, int n, int &ju) {
    constexpr int DC = 2 * K;
    int p = j;
    double best = cabs1(F(DC, j));
    for (int t = 1; t <= km; t++) {
        const double v = cabs1(F(DC + t, j));
        if (v > best) p = j + t, best = v;
    }
    pv[(i64)j * F.Gp + F.g] = p;
    if (best == 0) return -1;
    ju = max(ju, min(p + K, n - 1));
    if (p != j)
        for (int c = j; c <= ju; c++) {
            const C u = F(DC + j - c, c);
            F(DC + j - c, c) = F(DC + p - c, c);
            F(DC + p - c, c) = u;
        }
    return p;
}

template <typename C, int K>
__device__ void band_batch_cpivot_kernel(const C *a, const C *d, C *x, C *w, int *pv, int n, int G, int Gp, i64 aes,
                                         i64 abs_, i64 des, i64 dbs, int flags, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    typedef typename CTraits<C>::R R;
    constexpr int DC = 2 * K;
    const C zero = czeroval<C>();
    const C *ag = a + (i64)g * abs_;
    const C *dg = d + (i64)g * dbs;
    C *xg = x + (i64)g * dbs;
    const CBandF<C> F{w, n, Gp, g};
    const auto X = [&](int i) -> C & { return xg[(i64)i * des]; };
    int kind = BAND_OK, frow = -1, fcol = -1;

    // The matrix into rows K … 3K, the first non-finite entry in
    // scanGeneral's order (storage row by row); rows 0 … K−1 zero.
    for (int s = 0; s <= DC; s++) {
        const int dd = s - K;
        const int j0 = dd < 0 ? -dd : 0, j1 = dd > 0 ? n - dd : n;
        for (int j = 0; j < n; j++) {
            C v = zero;
            if (j >= j0 && j < j1) {
                v = ag[((i64)s * n + j) * aes];
                if (kind == BAND_OK && !cfinite(v)) kind = BAND_NONFINITE_ENTRY, frow = j + dd, fcol = j;
            }
            F(K + s, j) = v;
        }
    }
    for (int r = 0; r < K; r++)
        for (int j = 0; j < n; j++) F(r, j) = zero;

    // gbtrf in the CPU's pairs of steps j, j1 = j+1.
    if (kind == BAND_OK) {
        int ju = 0;
        for (int j = 0; j < n;) {
            const int km = min(K, n - 1 - j);
            if (cband_pivot_swap<C, K>(F, pv, j, km, n, ju) < 0) {
                kind = BAND_SINGULAR, frow = j, fcol = j;
                break;
            }
            // c1: step j's multipliers, zero from index km on.
            const C piv = F(DC, j);
            C c1[K + 1];
#pragma unroll
            for (int t = 0; t <= K; t++) c1[t] = zero;
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t <= km) {
                    const C l = cdiv(F(DC + t, j), piv);
                    F(DC + t, j) = l;
                    c1[t - 1] = l;
                }
            if (km == 0) { // j = n−1
                j++;
                continue;
            }
            const int ju1 = ju; // the reach of U's row j (≥ j+1)
            // Step j on column j+1 (rows j+1 … j+km).
            const C r10 = F(DC - 1, j + 1);
#pragma unroll
            for (int s = 0; s < K; s++)
                if (s < km) F(DC + s, j + 1) = csub(F(DC + s, j + 1), cmul(c1[s], r10));
            const int j1 = j + 1;
            const int km2 = min(K, n - 1 - j1);
            const int p2 = cband_pivot_swap<C, K>(F, pv, j1, km2, n, ju);
            if (p2 < 0) {
                kind = BAND_SINGULAR, frow = j1, fcol = j1;
                break;
            }
            // The interchanged rows carry their pending step-j multipliers:
            // c1[0] ↔ c1[p2 − j1] (selects, so that c1 stays in registers).
            const int e = p2 - j1;
            C ce = c1[0];
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t == e) ce = c1[t];
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t == e) c1[t] = c1[0];
            c1[0] = ce;
            // Step j on the new row j+1 (columns j+2 … ju1; U's row j is
            // read where it stays, row j of the factors).
            for (int c = j1 + 1; c <= ju1; c++)
                F(DC + j1 - c, c) = csub(F(DC + j1 - c, c), cmul(c1[0], F(DC + j - c, c)));
            // c2: step j+1's multipliers.
            const C piv2 = F(DC, j1);
            C c2[K];
#pragma unroll
            for (int t = 1; t <= K; t++) {
                c2[t - 1] = zero;
                if (t <= km2) {
                    const C l = cdiv(F(DC + t, j1), piv2);
                    F(DC + t, j1) = l;
                    c2[t - 1] = l;
                }
            }
            // Both updates on rows j+2 … j+1+km2, columns j+2 … ju: U's
            // row j (zero beyond ju1) and row j+1.
            if (km2 > 0)
                for (int c = j1 + 1; c <= ju; c++) {
                    const C u1 = c <= ju1 ? F(DC + j - c, c) : zero;
                    const C u2 = F(DC + j1 - c, c);
#pragma unroll
                    for (int t = 1; t <= K; t++)
                        if (t <= km2) {
                            const int r = DC + j1 + t - c;
                            F(r, c) = csub(csub(F(r, c), cmul(c1[t], u1)), cmul(c2[t - 1], u2));
                        }
                }
            j += 2;
        }
    }

    // gbtrs: the interchanges and L, then U.
    if (kind == BAND_OK) {
        for (int i = 0; i < n; i++) X(i) = dg[(i64)i * des];
        for (int j = 0; j < n; j++) {
            const int p = pv[(i64)j * Gp + g];
            if (p != j) {
                const C u = X(j);
                X(j) = X(p);
                X(p) = u;
            }
            const C xj = X(j);
            const int km = min(K, n - 1 - j);
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t <= km) X(j + t) = csub(X(j + t), cmul(F(DC + t, j), xj));
        }
        int bad = -1;
        for (int j = n - 1; j >= 0; j--) {
            const C xj = cdiv(X(j), F(DC, j));
            X(j) = xj;
            if (!cfinite(xj)) bad = j;
            const int km = min(DC, j);
#pragma unroll
            for (int t = 1; t <= DC; t++)
                if (t <= km) X(j - t) = csub(X(j - t), cmul(F(DC - t, j), xj));
        }
        if (bad >= 0 && (flags & BAND_CHECK_X)) kind = BAND_NONFINITE_X, frow = bad, fcol = -1;
    }
    if (kind != BAND_OK) {
        const R q = BandLim<R>::nan();
        const C nan = CTraits<C>::make(q, q);
        for (int i = 0; i < n; i++) X(i) = nan;
        status[g] = frow + 1;
        status[G + g] = kind;
        status[2 * G + g] = fcol + 1;
        atomicOr(&status[4 * G], BAND_FLAG_FAIL);
    }
}

// band_batch_cpivot_<S>_k<K>: complex64 (S = f32, float2) or complex128
// (S = f64, double2); a thread a system, blocks of any size; w holds
// (3K+1)·n·Gp elements, piv n·Gp ints.
#define BAND_BATCH_CPIVOT(C, S, K)                                                                                  \
    extern "C" __global__ void band_batch_cpivot_##S##_k##K(const C *a, const C *d, C *x, C *w, int *piv, int n,    \
                                                            int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs,      \
                                                            int flags, int *status) {                                \
        band_batch_cpivot_kernel<C, K>(a, d, x, w, piv, n, G, Gp, aes, abs_, des, dbs, flags, status);              \
    }
#define BAND_BATCH_CPIVOT_ALL_K(C, S)                                                                               \
    BAND_BATCH_CPIVOT(C, S, 1)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 2)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 3)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 4)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 5)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 6)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 7)                                                                                      \
    BAND_BATCH_CPIVOT(C, S, 8)
#ifndef BS_DEVICE_ONLY
BAND_BATCH_CPIVOT_ALL_K(float2, f32)
BAND_BATCH_CPIVOT_ALL_K(double2, f64)
#endif
