// Truncated SPIKE for half-bandwidths beyond the shared-memory kernels of
// band_spike.cuh (tuning.SpikeWideMaxK: 167 in FP64, 238 in FP32 on an
// H100): the blocked path of SPIKE::GPU (Li et al. 2014 §4, "K > 64"),
// where the K×K blocks of the factorization window, of the spikes and of the
// reduced systems live in global memory and are worked on in tiles.
//
// The results are those of package spike bit for bit, as for the other
// kernels: every entry receives the same separately rounded operations in
// the same order as on the CPU (-fmad=false). Blocking only changes when an
// operation happens, never which operations an entry sees or their order:
//
//   band_spike_factor_blocked  LU or UL of the partitions (banded.FactorLURange,
//                        mirrored for UL as band_spike_factor_wide). Right-looking
//                        and blocked by panels of SPIKE_BLK_B steps: the L panel
//                        (columns j … j+b−1, rows j … j+b−1+K) and the U rows
//                        (rows j … j+b−1, columns j+b … j+b−1+K) are factored step
//                        by step in shared memory, then the trailing K×K block
//                        gets the b rank-1 updates of the panel in one pass,
//                        in global memory, step order kept per entry;
//   band_spike_tips_blocked  V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾ (steps 2, 3), SPIKE_TIPS_CW columns
//                        of the K×K block per thread block (grid z), the K×CW
//                        slice in shared memory;
//   band_spike_rform     R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ (step 4) with 32×32 tiles;
//   band_spike_rlu       R̄_i's LU with partial pivoting in place in global
//                        memory (the elimination of band_spike_reduced).
//
// The solves (band_solve_window with K threads and K+1 elements of shared
// memory, band_spike_rsolve with K threads and 3K) take any K ≤ 1024 and
// serve both paths.
#pragma once
#include "band_spike.cuh"

// Steps per panel of band_spike_factor_blocked.
#define SPIKE_BLK_B 16
// spike_blk_skew is the shared-memory slot of entry i of a panel row:
// i + ⌊i/4⌋, so that lanes 4 entries apart (the tiles of spike_blk_tile)
// hit distinct banks.
__device__ __forceinline__ int spike_blk_skew(int i) { return i + (i >> 2); }

// Threads per block of band_spike_factor_blocked.
#define SPIKE_BLK_THREADS 512
// Columns of the spike blocks per thread block of band_spike_tips_blocked,
// and its threads.
#define SPIKE_TIPS_CW 16
#define SPIKE_TIPS_THREADS 256

// spike_blk_tile applies the panel's updates to one tile of the trailing
// block: entries (ro, co) = (co+d, co) of window offsets (relative to the
// panel's first row j) for 4 consecutive diagonals d = d0 … d0+3 and 4
// consecutive columns co = co0 … co0+3 (so that, for each d, the 4 entries
// are contiguous in the band's storage and a warp's loads coalesce). Entry
// (ro, co) receives step k's update a −= l_{ro,k}·u_{k,co} for k = kmin …
// b−1 in increasing k, kmin = max(0, max(ro, co) − K) (the steps whose
// window holds it), exactly the updates and the order of the unblocked
// factorization. Lp[k·LS + skew(ro)] holds l, Up[k·US + skew(co−b)] holds
// u (spike_blk_skew). FULL: every
// entry of the tile is in the trailing block and has kmin = 0.
template <typename T, bool FULL>
__device__ __forceinline__ void spike_blk_tile(const BandIO<T> &io, int K, int j, int b, int E, int d0, int co0,
                                               const T *Lp, int LS, const T *Up, int US) {
    T acc[4][4];
    int ok = 0; // bit 4t+u: entry (t, u) is in the trailing block
#pragma unroll
    for (int t = 0; t < 4; t++)
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int co = co0 + u, ro = co + d0 + t;
            const bool in = FULL || (co >= b && co < E && ro >= b && ro < E);
            if (in) ok |= 1 << (4 * t + u);
            acc[t][u] = in ? *io.at(K + d0 + t, j + co) : T(0);
        }
    const int rbase = co0 + d0;
    if (FULL) {
        for (int k = 0; k < b; k++) {
            T uu[4], ll[7];
#pragma unroll
            for (int u = 0; u < 4; u++) uu[u] = Up[k * US + spike_blk_skew(co0 + u - b)];
#pragma unroll
            for (int m = 0; m < 7; m++) ll[m] = Lp[k * LS + spike_blk_skew(rbase + m)];
#pragma unroll
            for (int t = 0; t < 4; t++)
#pragma unroll
                for (int u = 0; u < 4; u++) acc[t][u] = acc[t][u] - ll[t + u] * uu[u];
        }
    } else {
        // Edge tiles: entry by entry, step k when max(ro, co) ≤ k+K.
        for (int k = 0; k < b; k++)
#pragma unroll
            for (int t = 0; t < 4; t++)
#pragma unroll
                for (int u = 0; u < 4; u++)
                    if (((ok >> (4 * t + u)) & 1) && k >= max(rbase + t + u, co0 + u) - K)
                        acc[t][u] = acc[t][u] - Lp[k * LS + spike_blk_skew(rbase + t + u)] *
                                                        Up[k * US + spike_blk_skew(co0 + u - b)];
    }
#pragma unroll
    for (int t = 0; t < 4; t++)
#pragma unroll
        for (int u = 0; u < 4; u++)
            if ((ok >> (4 * t + u)) & 1) *io.at(K + d0 + t, j + co0 + u) = acc[t][u];
}

// band_spike_factor_blocked: LU (ul = 0) or UL (ul = 1) of each partition
// [bounds[p], bounds[p+1]) in place, one block of any size (a multiple of
// 32; SPIKE_BLK_THREADS) per partition, the status words of
// band_spike_factor_wide. Dynamic shared memory: max(B·(skew(K+B)+1) +
// B·(skew(K)+1) elements, 8·blockDim.x bytes), B = SPIKE_BLK_B, skew(i) =
// i + ⌊i/4⌋. Per panel of b ≤ B steps
// starting at row j (window offsets ro, co relative to j, E = min(K+b,
// r1−j) the window's extent):
//   1. load the L panel Lp (columns co < b, rows ro < E) and the U rows Up
//      (rows ro < b, columns b ≤ co < E) from the band;
//   2. for s = 0 … b−1: the pivot (finite check, boosting or the zero-pivot
//      stop, as banded.pivotAt), the multipliers of column s, then step s's
//      update of the entries of the panel and of the U rows (the trailing
//      entries, ro ≥ b and co ≥ b, wait);
//   3. write the panel and the U rows back, and apply the b steps to the
//      trailing block [b, E)² in tiles (spike_blk_tile), reading the
//      multipliers and U rows from shared memory.
template <typename T>
__device__ void band_spike_factor_blocked(T *a, int n, int K, const int *bounds, int P, int ul, double tol,
                                          int *status) {
    BAND_DYN_SMEM(spike_blk_smem);
    __shared__ unsigned long long firstbad;
    const int p = blockIdx.x;
    const int r0 = bounds[p], r1 = bounds[p + 1];
    if (r1 <= r0) return;
    const int t = threadIdx.x, nt = blockDim.x;
    // Row s of the L panel at Lp + s·LS, row ro of the U rows at Up +
    // ro·US, entries at their skewed slots (spike_blk_skew).
    const int LS = spike_blk_skew(K + SPIKE_BLK_B) + 1, US = spike_blk_skew(K) + 1;
    T *Lp = (T *)spike_blk_smem;
    T *Up = Lp + SPIKE_BLK_B * LS;
#define LPX(s, r) Lp[(s) * LS + spike_blk_skew(r)]
#define UPX(r, c) Up[(r) * US + spike_blk_skew(c)]
    double *red = (double *)spike_blk_smem;
    BandIO<T> io{a, n, K, r0 + r1 - 1, ul != 0};

    // 1. Non-finite entries and the max-abs norm (banded.scanBlock).
    if (!band_scan_block(a, n, K, r0, r1, p, P, status, red, firstbad)) return;
    const bool boost = tol >= 0;
    const double tau = band_tau(tol, red[0]);
    __syncthreads(); // red aliases the panels

    int nboost = 0, kind = BAND_OK, frow = 0;
    for (int j = r0; j < r1 && kind == BAND_OK; j += SPIKE_BLK_B) {
        const int b = min(SPIKE_BLK_B, r1 - j);
        const int E = min(K + b, r1 - j);
        const int M = E - b; // trailing block [b, E)²
        // 1. Load. Lp: column s, row ro (a_{j+ro, j+s}, in the band when
        // |ro−s| ≤ K). Up: row ro, column co (in the band when co−ro ≤ K).
        for (int idx = t; idx < b * E; idx += nt) {
            const int s = idx / E, ro = idx - s * E;
            LPX(s, ro) = ro - s <= K && s - ro <= K ? *io.at(K + ro - s, j + s) : T(0);
        }
        for (int idx = t; idx < b * M; idx += nt) {
            const int ro = idx / M, co = b + idx - ro * M;
            UPX(ro, co - b) = co - ro <= K ? *io.at(K + ro - co, j + co) : T(0);
        }
        __syncthreads();
        // 2. The panel's steps.
        for (int s = 0; s < b; s++) {
            const int jj = j + s;
            T piv = LPX(s, s);
            if (!band_finite(piv)) {
                kind = BAND_NONFINITE_PIVOT;
                frow = jj;
                break;
            }
            if (boost) {
                if ((double)band_abs(piv) < tau) {
                    piv = band_boost(piv, tau);
                    nboost++;
                }
            } else if (piv == T(0)) {
                kind = BAND_ZERO_PIVOT;
                frow = jj;
                break;
            }
            const int w = min(K, r1 - 1 - jj);
            for (int r = 1 + t; r <= w; r += nt) LPX(s, s + r) = LPX(s, s + r) / piv;
            __syncthreads();
            if (t == 0) LPX(s, s) = piv;
            // Step s on the panel's columns s+1 … b−1 (rows s+1 … s+w)
            // and on the U rows s+1 … b−1 (columns b … s+w).
            const int nA = (b - s - 1) * w;
            const int wB = max(0, s + w - b + 1);
            const int nB = (b - s - 1) * wB;
            for (int idx = t; idx < nA + nB; idx += nt) {
                if (idx < nA) {
                    const int co = s + 1 + idx / w, ro = s + 1 + idx % w;
                    LPX(co, ro) = LPX(co, ro) - LPX(s, ro) * LPX(co, s);
                } else {
                    const int q = idx - nA;
                    const int ro = s + 1 + q / wB, cq = q % wB; // column b + cq
                    UPX(ro, cq) = UPX(ro, cq) - LPX(s, ro) * UPX(s, cq);
                }
            }
            __syncthreads();
        }
        if (kind != BAND_OK) break;
        // 3. Write back, then the trailing block.
        for (int idx = t; idx < b * E; idx += nt) {
            const int s = idx / E, ro = idx - s * E;
            if (ro - s <= K && s - ro <= K) *io.at(K + ro - s, j + s) = LPX(s, ro);
        }
        for (int idx = t; idx < b * M; idx += nt) {
            const int ro = idx / M, co = b + idx - ro * M;
            if (co - ro <= K) *io.at(K + ro - co, j + co) = UPX(ro, co - b);
        }
        if (M > 0) {
            // Diagonal tiles: d = ro − co in [−(M−1), M−1] by 4, columns by
            // 4 from the first column that holds an entry of the tile.
            const int nd = (2 * M - 1 + 3) / 4, nc = (M + 3 + 3) / 4;
            for (int idx = t; idx < nd * nc; idx += nt) {
                const int dt = idx / nc, ct = idx - dt * nc;
                const int d0 = -(M - 1) + 4 * dt;
                const int cs = max(b, b - d0 - 3), ce = min(E, E - d0);
                const int co0 = cs + 4 * ct;
                if (co0 >= ce) continue;
                const bool full = d0 + 3 <= M - 1 && co0 >= b - d0 && co0 + 3 < min(E, E - d0 - 3) &&
                                  co0 + d0 + 6 <= K && co0 + 3 <= K;
                if (full) spike_blk_tile<T, true>(io, K, j, b, E, d0, co0, Lp, LS, Up, US);
                else spike_blk_tile<T, false>(io, K, j, b, E, d0, co0, Lp, LS, Up, US);
            }
        }
        __syncthreads();
    }
#undef LPX
#undef UPX
    if (t == 0) band_factor_status(status, p, P, kind, frow, nboost, ul, r0, r1);
}

// band_spike_tips_blocked: grid (P−1, 2, ⌈K/CW⌉), CW = SPIKE_TIPS_CW,
// blockDim.x a multiple of CW (SPIKE_TIPS_THREADS), K·CW·sizeof(T) bytes
// of dynamic shared memory. Block (i, y, z) computes columns z·CW …
// z·CW+CW−1 of V_i⁽ᵇ⁾ (y = 0) or W_{i+1}⁽ᵗ⁾ (y = 1), the same sweeps as
// band_spike_tips (spike.rightSpikeBottom, leftSpikeTop) with the rows of
// each step spread over the blockDim.x/CW thread rows (one barrier per
// step). Slice Y: row t, column cc at t·CW + cc.
template <typename T>
__device__ void band_spike_tips_blocked(const T *lu, int n, int K, const int *bounds, const T *ulf, int nul, int l,
                                        T *vout, T *wout) {
    BAND_DYN_SMEM(spike_tipsb_smem);
    T *Y = (T *)spike_tipsb_smem;
    const int CW = SPIKE_TIPS_CW;
    const int i = blockIdx.x, c0 = blockIdx.z * CW;
    const int tid = threadIdx.x, cc = tid % CW, rg = tid / CW, RG = blockDim.x / CW;
    const int c = c0 + cc;
    const bool act = c < K;
    const int r1 = bounds[i + 1];
    const i64 kk = (i64)K * K;
    T *out;
    if (blockIdx.y == 0) {
        const int base = r1 - K;
        for (int t = rg; t < K; t += RG) Y[t * CW + cc] = act && t >= c ? lu[(i64)(t - c) * n + r1 + c] : T(0);
        __syncthreads();
        for (int j = 0; j < K; j++) { // forward with L_bb
            const T x = Y[j * CW + cc];
            if (act && x != T(0)) {
                const T *lj = lu + (i64)K * n + base + j;
                for (int t = j + 1 + rg; t < K; t += RG) Y[t * CW + cc] = Y[t * CW + cc] - __ldg(lj + (i64)(t - j) * n) * x;
            }
            __syncthreads();
        }
        for (int j = K - 1; j >= 0; j--) { // backward with U_bb
            const T *uj = lu + (i64)K * n + base + j;
            const T x = Y[j * CW + cc] / __ldg(uj);
            if (act && x != T(0))
                for (int t = rg; t < j; t += RG) Y[t * CW + cc] = Y[t * CW + cc] - __ldg(uj - (i64)(j - t) * n) * x;
            __syncthreads();
            if (rg == 0) Y[j * CW + cc] = x; // nobody reads row j again
        }
        out = vout + i * kk;
    } else {
        const int r0 = r1;
        const int off = l > 0 ? i * l : r0;
        for (int t = rg; t < K; t += RG)
            Y[t * CW + cc] = act && t <= c ? lu[(i64)(2 * K + t - c) * n + r0 - K + c] : T(0);
        __syncthreads();
        for (int j = K - 1; j >= 0; j--) { // backward with the unit upper Ũ_tt
            const T x = Y[j * CW + cc];
            if (act && x != T(0)) {
                const T *uj = ulf + (i64)K * nul + off + j;
                for (int t = rg; t < j; t += RG) Y[t * CW + cc] = Y[t * CW + cc] - __ldg(uj - (i64)(j - t) * nul) * x;
            }
            __syncthreads();
        }
        for (int j = 0; j < K; j++) { // forward with L̃_tt
            const T *lj = ulf + (i64)K * nul + off + j;
            const T x = Y[j * CW + cc] / __ldg(lj);
            if (act && x != T(0))
                for (int t = j + 1 + rg; t < K; t += RG)
                    Y[t * CW + cc] = Y[t * CW + cc] - __ldg(lj + (i64)(t - j) * nul) * x;
            __syncthreads();
            if (rg == 0) Y[j * CW + cc] = x;
        }
        out = wout + i * kk;
    }
    __syncthreads();
    // Column-major out, column c0+q, row r: contiguous rows per column.
    const int w = min(CW, K - c0);
    for (int e = tid; e < w * K; e += blockDim.x) {
        const int q = e / K, r = e - q * K;
        out[(i64)(c0 + q) * K + r] = Y[r * CW + q];
    }
}

// band_spike_rform: grid (⌈K/32⌉, ⌈K/32⌉, P−1), 256 threads (32×8).
// R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ into r (column-major), entry (pp, c) as
// band_spike_reduced forms it (products in increasing q, zero entries of V
// skipped), the q loop tiled by 32 through shared memory.
template <typename T> __device__ void band_spike_rform(const T *v, const T *w, int K, T *rout) {
    __shared__ T Ws[32][33], Vs[32][33];
    const int i = blockIdx.z;
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    const int p0 = blockIdx.x * 32, cb = blockIdx.y * 32;
    const i64 kk = (i64)K * K;
    const T *W = w + i * kk, *V = v + i * kk;
    const int pp = p0 + tx;
    T acc[4];
#pragma unroll
    for (int m = 0; m < 4; m++) acc[m] = pp == cb + ty + 8 * m ? T(1) : T(0);
    for (int q0 = 0; q0 < K; q0 += 32) {
#pragma unroll
        for (int m = 0; m < 4; m++) {
            const int r = ty + 8 * m;
            // Ws[q][p] = W(p, q) = W[q·K + p]; Vs[c][q] = V(q, c) = V[c·K + q].
            Ws[r][tx] = q0 + r < K && p0 + tx < K ? W[(i64)(q0 + r) * K + p0 + tx] : T(0);
            Vs[r][tx] = cb + r < K && q0 + tx < K ? V[(i64)(cb + r) * K + q0 + tx] : T(0);
        }
        __syncthreads();
        const int qn = min(32, K - q0);
        for (int q = 0; q < qn; q++) {
            const T wq = Ws[q][tx];
#pragma unroll
            for (int m = 0; m < 4; m++) {
                const T x = Vs[ty + 8 * m][q];
                if (x != T(0)) acc[m] = acc[m] - wq * x;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < 4; m++) {
        const int c = cb + ty + 8 * m;
        if (pp < K && c < K) rout[i * kk + (i64)c * K + pp] = acc[m];
    }
}

// band_spike_rlu: grid P−1, any block size (≥ 32). The LU with partial
// pivoting of the R̄_i that band_spike_rform left in r, in place in global
// memory: band_spike_reduced's elimination (spike_dense_lu), the same
// outputs.
template <typename T> __device__ void band_spike_rlu(T *rout, int K, int nI, int *piv, double tau, int *rstat) {
    const int i = blockIdx.x;
    spike_dense_lu<T>(rout + i * (i64)K * K, K, i, nI, piv, tau, rstat);
}

#define BAND_BLOCKED_KERNELS(T, S)                                                                                  \
    extern "C" __global__ void __launch_bounds__(SPIKE_BLK_THREADS, 1)                                              \
        band_spike_factor_blocked_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol,              \
                                      int *status) {                                                                \
        band_spike_factor_blocked<T>(a, n, K, bounds, P, ul, tol, status);                                          \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(SPIKE_TIPS_THREADS)                                                \
        band_spike_tips_blocked_##S(const T *lu, int n, int K, const int *bounds, const T *ulf, int nul, int l,      \
                                    T *vout, T *wout) {                                                             \
        band_spike_tips_blocked<T>(lu, n, K, bounds, ulf, nul, l, vout, wout);                                      \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(256) band_spike_rform_##S(const T *v, const T *w, int K, T *rout) { \
        band_spike_rform<T>(v, w, K, rout);                                                                         \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(1024)                                                              \
        band_spike_rlu_##S(T *rout, int K, int nI, int *piv, double tau, int *rstat) {                              \
        band_spike_rlu<T>(rout, K, nI, piv, tau, rstat);                                                            \
    }

BAND_BLOCKED_KERNELS(float, f32)
BAND_BLOCKED_KERNELS(double, f64)
