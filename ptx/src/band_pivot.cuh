// Batched banded solves with partial pivoting, one thread per system: the
// CPU twin is banded.FactorPivot (gbtrf, KL = KU = K) followed by
// PivotLU.Solve (gbtrs) on each system, whose operations it does in the
// same order (one elimination step at a time, the rounding of the CPU's
// paired steps), so that the results agree bit for bit.
//
// Batch layout as band_batch.cuh's (a, d, x with the strides aes, abs,
// des, dbs; x may alias d). Each thread copies its system into the
// workspace w in gbtrf's layout, 3K+1 rows of n (row 2K + i − j, column j
// holds the factors' entry (i, j); rows 0 … K−1 the fill-in), interleaved
// with batch stride Gp (entry (r, j) of system g at (r·n + j)·Gp + g), the
// interchanges in piv (row j at j·Gp + g), then solves on x.
//
// Status as band_batch.cuh's: a non-finite entry (BAND_NONFINITE_ENTRY, in
// banded.scanGeneral's order), an all-zero pivot column
// (BAND_SINGULAR, banded.ErrSingular at row and column j), a non-finite
// solution when flags has BAND_CHECK_X; a failed system's x is NaN.
#pragma once
#include "band_common.cuh"

#define BAND_SINGULAR 5 // an all-zero pivot column (banded.ErrSingular)

template <typename T, int K>
__device__ void band_batch_pivot_kernel(const T *a, const T *d, T *x, T *w, int *pv, int n, int G, int Gp, i64 aes,
                                        i64 abs_, i64 des, i64 dbs, int flags, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    constexpr int DC = 2 * K;
    const T *ag = a + (i64)g * abs_;
    const T *dg = d + (i64)g * dbs;
    T *xg = x + (i64)g * dbs;
    const auto F = [&](int r, int j) -> T & { return w[((i64)r * n + j) * Gp + g]; };
    const auto X = [&](int i) -> T & { return xg[(i64)i * des]; };
    int kind = BAND_OK, frow = -1, fcol = -1;

    // The matrix into rows K … 3K, the first non-finite entry in
    // scanGeneral's order (storage row by row); rows 0 … K−1 zero.
    for (int s = 0; s <= DC; s++) {
        const int dd = s - K;
        const int j0 = dd < 0 ? -dd : 0, j1 = dd > 0 ? n - dd : n;
        for (int j = 0; j < n; j++) {
            T v = T(0);
            if (j >= j0 && j < j1) {
                v = ag[((i64)s * n + j) * aes];
                if (kind == BAND_OK && !band_finite(v)) kind = BAND_NONFINITE_ENTRY, frow = j + dd, fcol = j;
            }
            F(K + s, j) = v;
        }
    }
    for (int r = 0; r < K; r++)
        for (int j = 0; j < n; j++) F(r, j) = T(0);

    // gbtrf, one step at a time.
    if (kind == BAND_OK) {
        int ju = 0;
        for (int j = 0; j < n; j++) {
            const int km = min(K, n - 1 - j);
            int p = j;
            double best = (double)band_abs(F(DC, j));
            for (int t = 1; t <= km; t++) {
                const double v = (double)band_abs(F(DC + t, j));
                if (v > best) p = j + t, best = v;
            }
            pv[(i64)j * Gp + g] = p;
            if (best == 0) {
                kind = BAND_SINGULAR, frow = j, fcol = j;
                break;
            }
            ju = max(ju, min(p + K, n - 1));
            if (p != j)
                for (int c = j; c <= ju; c++) {
                    const T u = F(DC + j - c, c);
                    F(DC + j - c, c) = F(DC + p - c, c);
                    F(DC + p - c, c) = u;
                }
            const T piv = F(DC, j);
            T l[K] = {};
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t <= km) {
                    l[t - 1] = F(DC + t, j) / piv;
                    F(DC + t, j) = l[t - 1];
                }
            for (int c = j + 1; c <= ju; c++) {
                const T u = F(DC + j - c, c);
#pragma unroll
                for (int t = 1; t <= K; t++)
                    if (t <= km) F(DC + j + t - c, c) = F(DC + j + t - c, c) - l[t - 1] * u;
            }
        }
    }

    // gbtrs: the interchanges and L, then U.
    if (kind == BAND_OK) {
        for (int i = 0; i < n; i++) X(i) = dg[(i64)i * des];
        for (int j = 0; j < n; j++) {
            const int p = pv[(i64)j * Gp + g];
            if (p != j) {
                const T u = X(j);
                X(j) = X(p);
                X(p) = u;
            }
            const T xj = X(j);
            const int km = min(K, n - 1 - j);
#pragma unroll
            for (int t = 1; t <= K; t++)
                if (t <= km) X(j + t) = X(j + t) - F(DC + t, j) * xj;
        }
        int bad = -1;
        for (int j = n - 1; j >= 0; j--) {
            const T xj = X(j) / F(DC, j);
            X(j) = xj;
            if (!band_finite(xj)) bad = j;
            const int km = min(DC, j);
#pragma unroll
            for (int t = 1; t <= DC; t++)
                if (t <= km) X(j - t) = X(j - t) - F(DC - t, j) * xj;
        }
        if (bad >= 0 && (flags & BAND_CHECK_X)) kind = BAND_NONFINITE_X, frow = bad, fcol = -1;
    }
    if (kind != BAND_OK) {
        const T nan = BandLim<T>::nan();
        for (int i = 0; i < n; i++) X(i) = nan;
        status[g] = frow + 1;
        status[G + g] = kind;
        status[2 * G + g] = fcol + 1;
        atomicOr(&status[4 * G], BAND_FLAG_FAIL);
    }
}

// band_batch_pivot_<S>_k<K>: a thread a system, blocks of any size; w
// holds (3K+1)·n·Gp elements, piv n·Gp ints.
#define BAND_BATCH_PIVOT(T, S, K)                                                                                   \
    extern "C" __global__ void band_batch_pivot_##S##_k##K(const T *a, const T *d, T *x, T *w, int *piv, int n,     \
                                                           int G, int Gp, i64 aes, i64 abs_, i64 des, i64 dbs,       \
                                                           int flags, int *status) {                                 \
        band_batch_pivot_kernel<T, K>(a, d, x, w, piv, n, G, Gp, aes, abs_, des, dbs, flags, status);               \
    }
#define BAND_BATCH_PIVOT_ALL_K(T, S)                                                                                \
    BAND_BATCH_PIVOT(T, S, 1)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 2)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 3)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 4)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 5)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 6)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 7)                                                                                       \
    BAND_BATCH_PIVOT(T, S, 8)
BAND_BATCH_PIVOT_ALL_K(float, f32)
BAND_BATCH_PIVOT_ALL_K(double, f64)
