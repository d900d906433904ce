// Window-sliding LU and UL factorization of the diagonal blocks of one
// banded matrix (Li et al. 2014 §4, K ≤ 64), in place in its tall-and-thin
// storage, and the forward/backward sweeps with the factors: the building
// blocks of truncated SPIKE. One thread block per partition [r0, r1)
// (bounds[p], bounds[p+1]). The CPU twins are banded.FactorLURange,
// FactorULRange, SolveLURangeMulti and SolveULRangeMulti: the same
// operations in the same order, so the results agree bit for bit.
//
// UL is LU of the block with rows and columns reversed: with R = r0+r1−1,
// entry (s, j) of the mirrored storage is entry (2K−s, R−j) of the real
// one and row j of a right-hand side is row R−j. Every kernel takes ul and
// runs the LU code through that mapping.
//
// Factorization: the block's threads first scan the block for non-finite
// entries and its max-abs norm (banded.scanBlock; τ = tol·norm). Then the
// active window, rows and columns j…j+K, lives in a circular buffer of
// (K+2)×(K+2) entries of shared memory indexed by (row mod K+2, column
// mod K+2). At step j, K² threads (min(K², 1024) with up to four entries
// each) apply the rank-1 update of the K×K window below and right of the
// pivot; the multiplier l_{j+r,j} is computed by each thread of row r for
// small K, and for K ≥ BAND_WIN_SPLIT_K once by thread r−1 into shared
// memory before a barrier (a division is dearer than a barrier there).
// The multipliers, the thread of the first row its u_{j,j+c}, and thread 0
// the (boosted) pivot go back to global memory.
// Meanwhile 2K+1 loader threads write the entries of row and column
// j+1+K, read from global memory one step ahead, into the buffer's spare
// row and column (index ≡ j−1), which no thread touches at step j: one
// __syncthreads per step (two for large K).
//
// status[4p…4p+3] of partition p: kind (BAND_*), row+1, column+1 of the
// failure, number of boosted pivots; status[4P] the BAND_FLAG_* bits.
#pragma once
#include "band_common.cuh"

#define BAND_WIN_MAXT 1024
#define BAND_WIN_MAXK 64
#define BAND_WIN_MAXE 4 // entries per thread: K² / min(K², 1024) ≤ 4 for K ≤ 64
// From this K on, the multipliers are computed once each before the update
// (one more barrier per step) instead of by every thread of their row.
#define BAND_WIN_SPLIT_K 12

template <typename T>
__device__ void band_factor_window(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status) {
    BAND_DYN_SMEM(band_win_smem);
    T *S = (T *)band_win_smem;
    __shared__ double red[BAND_WIN_MAXT];
    __shared__ unsigned long long firstbad;
    __shared__ T Lsh[BAND_WIN_MAXK + 1];
    const int p = blockIdx.x;
    const int r0 = bounds[p], r1 = bounds[p + 1];
    if (r1 <= r0) return;
    const int t = threadIdx.x, nt = blockDim.x;
    const int M = K + 2;
    BandIO<T> io{a, n, K, r0 + r1 - 1, ul != 0};

    // 1. Scan the block in the real storage (banded.scanBlock).
    if (!band_scan_block(a, n, K, r0, r1, p, P, status, red, firstbad)) return;
    const bool boost = tol >= 0;
    const double tau = band_tau(tol, red[0]);

    // 2. Load the first window, rows and columns r0…r0+K, and the loader
    // threads' entries of row and column r0+1+K.
    BandWindow<T> win;
    win.load_first(io, S, r0, r1, t, nt);
    __syncthreads();

    // This thread's entries of the K×K update, (row, column) relative to
    // the pivot: e = t, t+nt, … < K².
    int er[BAND_WIN_MAXE], ec[BAND_WIN_MAXE], ne = 0;
#pragma unroll
    for (int m = 0; m < BAND_WIN_MAXE; m++) {
        const int e = t + m * nt;
        er[m] = e / K + 1;
        ec[m] = e % K + 1;
        if (e < K * K) ne = m + 1;
    }
    const bool split = K >= BAND_WIN_SPLIT_K;
    int jm = 0, nboost = 0, kind = BAND_OK, frow = 0;
    for (int j = r0; j < r1; j++) {
        T piv = S[jm * M + jm];
        if (!band_finite(piv)) {
            kind = BAND_NONFINITE_PIVOT;
            frow = j;
            break;
        }
        if (boost) {
            if ((double)band_abs(piv) < tau) {
                piv = band_boost(piv, tau);
                nboost++;
            }
        } else if (piv == T(0)) {
            kind = BAND_ZERO_PIVOT;
            frow = j;
            break;
        }
        const int w = min(K, r1 - 1 - j);
        if (split) {
            // The K multipliers first, once each (a division per entry
            // costs more than the extra barrier for large K).
            if (t < w) {
                const int r = t + 1;
                const int sr = jm + r >= M ? jm + r - M : jm + r;
                const T l = S[sr * M + jm] / piv;
                Lsh[r] = l;
                *io.at(K + r, j) = l;
            }
            __syncthreads();
        }
#pragma unroll
        for (int m = 0; m < BAND_WIN_MAXE; m++) {
            if (m >= ne) break;
            const int r = er[m], c = ec[m];
            if (r > w || c > w) continue;
            const int sr = jm + r >= M ? jm + r - M : jm + r;
            const int sc = jm + c >= M ? jm + c - M : jm + c;
            const T l = split ? Lsh[r] : S[sr * M + jm] / piv;
            const T u = S[jm * M + sc];
            S[sr * M + sc] = S[sr * M + sc] - l * u;
            if (!split && c == 1) *io.at(K + r, j) = l;
            if (r == 1) *io.at(K - c, j + c) = u;
        }
        if (t == 0) *io.at(K, j) = piv;
        // Row and column j+1+K into the spare row and column.
        win.advance(io, j, jm, r1);
        jm = jm + 1 == M ? 0 : jm + 1;
        __syncthreads();
    }
    if (t == 0) band_factor_status(status, p, P, kind, frow, nboost, ul, r0, r1);
}

// band_solve_window solves with the factors of band_factor_window, for nrhs
// right-hand sides b (column c of the whole matrix at b + c·ldb, row i at
// b[c·ldb + i]; partition p solves its rows [r0, r1) of each column), in
// place. Block (K·cpb threads): cpb columns, K threads each; thread t of a
// column owns the update of the row t below (forward) or above (backward)
// the current one, with the column's K+1 latest values in a circular
// buffer of shared memory: one __syncthreads per step. sweeps: bit 0 the
// forward sweep with the unit lower factor, bit 1 the backward sweep with
// the upper factor (LU; mirrored for UL, where that is banded's backward
// sweep with the unit upper factor, then the forward one with L).
template <typename T>
__device__ void band_solve_window(const T *a, int n, int K, const int *bounds, int ul, T *b, int nrhs, i64 ldb,
                                  int sweeps) {
    BAND_DYN_SMEM(band_win_smem);
    const int p = blockIdx.x;
    const int r0 = bounds[p], r1 = bounds[p + 1];
    if (r1 <= r0) return;
    const int cpb = blockDim.x / K;
    const int cl = threadIdx.x / K, tt = threadIdx.x % K + 1;
    const int col = blockIdx.y * cpb + cl;
    const bool act = col < nrhs;
    const int M = K + 1;
    T *ring = (T *)band_win_smem + cl * M;
    const int R = r0 + r1 - 1;
    BandIO<T> io{(T *)a, n, K, R, ul != 0};
    T *bc = b + (i64)(act ? col : 0) * ldb;
    auto B = [&](int j) -> T * { return ul ? bc + (R - j) : bc + j; };

    if (sweeps & 1) {
        // Forward: y_{j+t} −= l_{j+t,j}·y_j, columns j = r0, r0+1, …
        if (act && r0 + tt - 1 < r1) ring[(tt - 1) % M] = *B(r0 + tt - 1);
        T l = T(0), bn = T(0);
        if (act && tt <= min(K, r1 - 1 - r0)) l = *io.at(K + tt, r0);
        if (act && tt == K && r0 + K < r1) bn = *B(r0 + K);
        __syncthreads();
        int jm = 0;
        for (int j = r0; j < r1; j++) {
            const T xv = ring[jm];
            const int w = min(K, r1 - 1 - j);
            if (act && tt <= w) {
                const int s = jm + tt >= M ? jm + tt - M : jm + tt;
                ring[s] = (tt == K ? bn : ring[s]) - l * xv;
            }
            if (act && tt == 1) *B(j) = xv;
            if (act && tt <= min(K, r1 - 2 - j)) l = *io.at(K + tt, j + 1);
            if (act && tt == K && j + 1 + K < r1) bn = *B(j + 1 + K);
            jm = jm + 1 == M ? 0 : jm + 1;
            __syncthreads();
        }
    }
    if (sweeps & 2) {
        // Backward: x_j = b_j / u_jj, then b_{j−t} −= u_{j−t,j}·x_j,
        // columns j = r1−1, r1−2, …
        if (act && r1 - tt >= r0) ring[(r1 - tt - r0) % M] = *B(r1 - tt);
        T u = T(0), bn = T(0), piv = T(0);
        if (act) piv = *io.at(K, r1 - 1);
        if (act && tt <= min(K, r1 - 1 - r0)) u = *io.at(K - tt, r1 - 1);
        if (act && tt == K && r1 - 1 - K >= r0) bn = *B(r1 - 1 - K);
        __syncthreads();
        int jm = (r1 - 1 - r0) % M;
        for (int j = r1 - 1; j >= r0; j--) {
            const T xv = ring[jm] / piv;
            const int w = min(K, j - r0);
            if (act && tt <= w) {
                const int s = jm - tt < 0 ? jm - tt + M : jm - tt;
                ring[s] = (tt == K ? bn : ring[s]) - u * xv;
            }
            if (act && tt == 1) *B(j) = xv;
            if (act && j > r0) piv = *io.at(K, j - 1);
            if (act && tt <= min(K, j - 1 - r0)) u = *io.at(K - tt, j - 1);
            if (act && tt == K && j - 1 - K >= r0) bn = *B(j - 1 - K);
            jm = jm == 0 ? M - 1 : jm - 1;
            __syncthreads();
        }
    }
}

#define BAND_WINDOW_KERNELS(T, S)                                                                                  \
    extern "C" __global__ void __launch_bounds__(BAND_WIN_MAXT)                                                    \
        band_factor_window_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status) {    \
        band_factor_window<T>(a, n, K, bounds, P, ul, tol, status);                                                \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(BAND_WIN_MAXT)                                                    \
        band_solve_window_##S(const T *a, int n, int K, const int *bounds, int ul, T *b, int nrhs, i64 ldb,        \
                              int sweeps) {                                                                        \
        band_solve_window<T>(a, n, K, bounds, ul, b, nrhs, ldb, sweeps);                                           \
    }

BAND_WINDOW_KERNELS(float, f32)
BAND_WINDOW_KERNELS(double, f64)
