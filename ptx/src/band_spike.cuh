// Truncated SPIKE on the GPU (Li et al. 2014 §2.2, §4): the kernels around
// the window-sliding LU/UL of band_window.cuh that turn the factored
// partitions of one band matrix into the truncated SPIKE factorization and
// apply it. The CPU twin is package spike (spike/doc.go numbers the
// steps; steps.go, dense.go and solve.go hold the loops mirrored here): the
// same operations in the same order, separately rounded (-fmad=false), so
// that the spike blocks, the reduced factors and the solution agree with
// the CPU bit for bit.
//
// Storage as in band_common.cuh: a_ij at (K+i−j)·n + j. K×K blocks (the
// spike blocks V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾, the factored reduced matrices R̄_i) are
// dense and column-major, entry (p, q) at q·K + p, one block per interface
// i = 0 … P−2 (between partitions i and i+1) at offset i·K².
//
// Kernels (the host side is cuda/spike.go):
//   band_spike_copy      copies A into the LU copy (and the UL copy) and
//                        finds A's first non-finite entry (spike.scanFinite);
//   band_spike_ulblock   copies the top-left l×l block of every partition
//                        but the first into a compact band (Options.ULBlock);
//   band_spike_factor_wide  LU or UL of the partitions, for K > 64 (beyond
//                        band_factor_window) and, being the faster, from
//                        K = 16 (banded.FactorLURange/ULRange);
//   band_spike_tips      V_i⁽ᵇ⁾ and W_{i+1}⁽ᵗ⁾ (steps 2, 3);
//   band_spike_reduced   R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾ and its LU with partial
//                        pivoting (step 4);
//   band_spike_vcopy     copies the right-hand side, finding its first
//                        non-finite entry;
//   band_spike_rsolve    the reduced systems (Eq. 11b, 11c) and the
//                        purification of the right-hand side (Eq. 12);
//   band_spike_flags     gathers the status flags of a factorization into
//                        one word.
// Above the shared-memory limits of band_spike_factor_wide, band_spike_tips
// and band_spike_reduced (tuning.SpikeWideMaxK) the plan takes the blocked
// kernels of band_blocked.cuh instead; the copies, the solves and the
// flags serve both paths.
#pragma once
#include "band_common.cuh"

// band_spike_copy: grid (x, 2K+1), storage column s = blockIdx.y. Copies
// src to dst1 and, when dst2 is not null, to dst2; the smallest storage
// index of a non-finite entry inside the matrix (corner slots excluded)
// goes to *bad (kept at ~0 when there is none).
template <typename T>
__device__ void band_spike_copy(const T *src, T *dst1, T *dst2, int n, int K, unsigned long long *bad) {
    const int s = blockIdx.y, d = s - K;
    const i64 base = (i64)s * n;
    const int stride = gridDim.x * blockDim.x;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
        const T v = src[base + j];
        dst1[base + j] = v;
        if (dst2 != nullptr) dst2[base + j] = v;
        const int i = j + d;
        if (i >= 0 && i < n && !band_finite(v)) atomicMin(bad, (unsigned long long)(base + j));
    }
}

// band_spike_ulblock: grid (x, 2K+1). Block q of the compact band (order
// m2 = (P−1)·l, rows [q·l, (q+1)·l)) gets A[r0:r0+l, r0:r0+l] of partition
// q+1 (r0 = bounds[q+1]); entries coupling the compact blocks are zero.
template <typename T>
__device__ void band_spike_ulblock(const T *src, int n, int K, const int *bounds, int l, T *dst, int m2) {
    const int s = blockIdx.y, d = s - K;
    const int stride = gridDim.x * blockDim.x;
    for (int jp = blockIdx.x * blockDim.x + threadIdx.x; jp < m2; jp += stride) {
        const int q = jp / l, jj = jp - q * l, i = jj + d;
        T v = T(0);
        if (i >= 0 && i < l) v = src[(i64)s * n + bounds[q + 1] + jj];
        dst[(i64)s * m2 + jp] = v;
    }
}

// band_spike_factor_wide is band_factor_window for any K that the shared
// memory holds: LU (ul = 0) or UL (ul = 1) of each partition [bounds[p],
// bounds[p+1]) in place, one block per partition, the same status words.
// The window of rows and columns j … j+K lives in a circular buffer of
// (K+2)×(K+2) entries of shared memory (slot = index mod K+2), followed by
// the multipliers of the step. The block has G·K threads (G ≥ 3 groups of
// K): thread (g, c) = (t / K, t mod K + 1) owns column c of the window
// relative to the pivot and rows g+1, g+1+G, … of it, so the row of U it
// needs is one value and its column's loads and stores are contiguous
// across the warp. Per step: the first w threads compute the multipliers
// l_{j+r,j} (a division each) into shared memory and global memory,
// barrier, the update a_{j+r,j+c} −= l_{j+r,j}·u_{j,j+c} of the w×w window,
// and 2K+1 loader threads put row and column j+1+K (read from global
// memory one step ahead) into the buffer's spare row and column (slot
// ≡ j−1), which the update does not touch; barrier. Dynamic shared memory:
// max(((K+2)² + K+1)·sizeof(T), 8·blockDim.x) bytes (the scan's reduction
// uses it before the window does).
template <typename T>
__device__ void band_spike_factor_wide(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status) {
    BAND_DYN_SMEM(spike_wide_smem);
    __shared__ unsigned long long firstbad;
    const int p = blockIdx.x;
    const int r0 = bounds[p], r1 = bounds[p + 1];
    if (r1 <= r0) return;
    const int t = threadIdx.x, nt = blockDim.x;
    const int M = K + 2;
    const int G = nt / K;
    T *S = (T *)spike_wide_smem;
    T *Lsh = S + M * M;
    double *red = (double *)spike_wide_smem;
    BandIO<T> io{a, n, K, r0 + r1 - 1, ul != 0};

    // 1. Non-finite entries (the first in storage order) and the max-abs
    // norm of the block, in the real storage (banded.scanBlock).
    if (!band_scan_block(a, n, K, r0, r1, p, P, status, red, firstbad)) return;
    const bool boost = tol >= 0;
    const double tau = band_tau(tol, red[0]);
    __syncthreads(); // red aliases the window

    // 2. The first window, rows and columns r0 … r0+K, and the loader
    // threads' entries of row and column r0+1+K.
    BandWindow<T> win;
    win.load_first(io, S, r0, r1, t, nt);
    const bool worker = t < G * K;
    const int g = t / K, c = t % K + 1;
    __syncthreads();

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
        if (t < w) {
            const int r = t + 1;
            int sr = jm + r;
            if (sr >= M) sr -= M;
            const T l = S[sr * M + jm] / piv;
            Lsh[r] = l;
            *io.at(K + r, j) = l;
        }
        if (t == 0) *io.at(K, j) = piv;
        __syncthreads();
        if (worker && c <= w) {
            int sc = jm + c;
            if (sc >= M) sc -= M;
            const T u = S[jm * M + sc];
            if (g == 0) *io.at(K - c, j + c) = u;
            int sr = jm + g + 1;
            if (sr >= M) sr -= M;
            for (int r = g + 1; r <= w; r += G) {
                S[sr * M + sc] = S[sr * M + sc] - Lsh[r] * u;
                sr += G;
                while (sr >= M) sr -= M;
            }
        }
        // Row and column j+1+K into the spare row and column.
        win.advance(io, j, jm, r1);
        jm = jm + 1 == M ? 0 : jm + 1;
        __syncthreads();
    }
    if (t == 0) band_factor_status(status, p, P, kind, frow, nboost, ul, r0, r1);
}

// band_spike_tips: grid (P−1, 2), K threads, K²·sizeof(T) bytes of dynamic
// shared memory holding the K×K block being solved for (row t, column c
// at t·K + c: thread c works on column c, so a warp's accesses are
// contiguous). blockIdx.y = 0 computes V_i⁽ᵇ⁾ of interface i (boundary
// r1 = bounds[i+1]) from B_i and the bottom K×K blocks of the LU factors
// in lu (spike.couplingB, rightSpikeBottom: forward sweep with the unit
// lower L_bb, backward with U_bb); blockIdx.y = 1 computes W_{i+1}⁽ᵗ⁾ from
// C_{i+1} (read from lu, where the coupling entries are A's) and the top
// K×K blocks of the UL factors of partition i+1 (spike.couplingC,
// leftSpikeTop: backward sweep with the unit upper Ũ_tt, forward with
// L̃_tt). The UL factors are in ulf, a band of order nul: the partition
// itself (l = 0, rows from r1) or block i of the compact band of
// band_spike_ulblock (l > 0, rows from i·l). Columns skip the updates of a
// zero entry, as the CPU loops do.
template <typename T>
__device__ void band_spike_tips(const T *lu, int n, int K, const int *bounds, const T *ulf, int nul, int l, T *vout,
                                T *wout) {
    BAND_DYN_SMEM(spike_tips_smem);
    T *Y = (T *)spike_tips_smem;
    const int i = blockIdx.x, c = threadIdx.x;
    const int r1 = bounds[i + 1];
    const i64 kk = (i64)K * K;
    T *out;
    if (blockIdx.y == 0) {
        const int base = r1 - K;
        // B_i: (t, c) = a_{r1−K+t, r1+c}, in the band when c ≤ t.
        for (int t = 0; t < K; t++) Y[t * K + c] = t >= c ? lu[(i64)(t - c) * n + r1 + c] : T(0);
        // Forward with L_bb: l_{base+t, base+j} at (K+t−j)·n + base+j.
        for (int j = 0; j < K; j++) {
            const T x = Y[j * K + c];
            if (x == T(0)) continue;
            const T *lj = lu + (i64)K * n + base + j;
            for (int t = j + 1; t < K; t++) Y[t * K + c] = Y[t * K + c] - __ldg(lj + (i64)(t - j) * n) * x;
        }
        // Backward with U_bb.
        for (int j = K - 1; j >= 0; j--) {
            const T *uj = lu + (i64)K * n + base + j;
            const T x = Y[j * K + c] / __ldg(uj);
            Y[j * K + c] = x;
            if (x == T(0)) continue;
            for (int t = 0; t < j; t++) Y[t * K + c] = Y[t * K + c] - __ldg(uj - (i64)(j - t) * n) * x;
        }
        out = vout + i * kk;
    } else {
        const int r0 = r1;
        const int off = l > 0 ? i * l : r0;
        // C_{i+1}: (t, c) = a_{r0+t, r0−K+c}, in the band when t ≤ c.
        for (int t = 0; t < K; t++) Y[t * K + c] = t <= c ? lu[(i64)(2 * K + t - c) * n + r0 - K + c] : T(0);
        // Backward with the unit upper Ũ_tt: ũ_{r0+t, r0+j} at
        // (K+t−j)·nul + off+j.
        for (int j = K - 1; j >= 0; j--) {
            const T x = Y[j * K + c];
            if (x == T(0)) continue;
            const T *uj = ulf + (i64)K * nul + off + j;
            for (int t = 0; t < j; t++) Y[t * K + c] = Y[t * K + c] - __ldg(uj - (i64)(j - t) * nul) * x;
        }
        // Forward with L̃_tt.
        for (int j = 0; j < K; j++) {
            const T *lj = ulf + (i64)K * nul + off + j;
            const T x = Y[j * K + c] / __ldg(lj);
            Y[j * K + c] = x;
            if (x == T(0)) continue;
            for (int t = j + 1; t < K; t++) Y[t * K + c] = Y[t * K + c] - __ldg(lj + (i64)(t - j) * nul) * x;
        }
        out = wout + i * kk;
    }
    __syncthreads();
    // Column-major out: thread c writes row c of every column (coalesced).
    for (int q = 0; q < K; q++) out[(i64)q * K + c] = Y[c * K + q];
}

// spike_dense_lu factors the K×K column-major matrix R (shared or global
// memory) of interface i in place by Gaussian elimination with partial
// pivoting (spike.denseLU: pivot = the first entry of largest magnitude,
// or the first NaN; an all-zero pivot column gets the pivot tau, counted
// as a boost; a NaN/Inf pivot stops the factorization), with the whole
// block (≥ 32 threads). Out: the interchanges in piv[i·K …], and in
// rstat[2i] the failed step + 1, rstat[2i+1] the number of boosts,
// rstat[2·nI] the BAND_FLAG_* bits.
template <typename T>
__device__ __forceinline__ void spike_dense_lu(T *R, int K, int i, int nI, int *piv, double tau, int *rstat) {
    __shared__ double cv[32];
    __shared__ int ci[32];
    __shared__ int spiv, sfail;
    const int t = threadIdx.x, nt = blockDim.x;
    int nboost = 0, fail = 0;
    for (int j = 0; j < K; j++) {
        T *col = R + j * K;
        if (t < 32) {
            // This lane's rows j+t, j+t+32, …: the first NaN, else the
            // first of largest magnitude.
            double best = 0;
            int bi = -1;
            bool bnan = false;
            for (int r = j + t; r < K; r += 32) {
                const double x = (double)band_abs(col[r]);
                const bool xnan = x != x;
                if (bi < 0 || (!bnan && (xnan || x > best))) {
                    best = x;
                    bi = r;
                    bnan = xnan;
                }
            }
            cv[t] = best;
            ci[t] = bi;
        }
        __syncthreads();
        if (t == 0) {
            double best = 0;
            int bi = -1;
            for (int q = 0; q < 32; q++) {
                const int r = ci[q];
                if (r < 0) continue;
                const double x = cv[q];
                bool take;
                if (bi < 0) take = true;
                else if (best != best) take = x != x && r < bi;
                else if (x != x) take = true;
                else take = x > best || (x == best && r < bi);
                if (take) {
                    best = x;
                    bi = r;
                }
            }
            spiv = bi;
            sfail = !(best <= BandLim<double>::maxv());
        }
        __syncthreads();
        if (sfail) {
            fail = j + 1;
            break;
        }
        const int pr = spiv;
        if (pr != j)
            for (int c = t; c < K; c += nt) {
                const T x = R[c * K + j];
                R[c * K + j] = R[c * K + pr];
                R[c * K + pr] = x;
            }
        __syncthreads();
        if (t == 0) {
            piv[i * K + j] = pr;
            if (col[j] == T(0)) {
                col[j] = (T)tau;
                nboost++;
            }
        }
        __syncthreads();
        const T d = col[j];
        for (int r = j + 1 + t; r < K; r += nt) col[r] = col[r] / d;
        __syncthreads();
        const int m = K - 1 - j;
        for (int e = t; e < m * m; e += nt) {
            const int rr = j + 1 + e % m, cc = j + 1 + e / m;
            const T u = R[cc * K + j];
            if (u != T(0)) R[cc * K + rr] = R[cc * K + rr] - col[rr] * u;
        }
        __syncthreads();
    }
    if (t == 0) {
        int bits = 0;
        if (fail) {
            rstat[2 * i] = fail;
            bits |= BAND_FLAG_FAIL;
        }
        if (nboost) {
            rstat[2 * i + 1] = nboost;
            bits |= BAND_FLAG_BOOST;
        }
        if (bits) atomicOr(&rstat[2 * nI], bits);
    }
}

// band_spike_reduced: grid P−1, any block size (≥ 32), K²·sizeof(T) bytes
// of dynamic shared memory. Interface i forms R̄_i = I − W_{i+1}⁽ᵗ⁾·V_i⁽ᵇ⁾
// (spike.reducedMatrix: per entry, the products in increasing q, skipping
// zero entries of V) in shared memory, factors it (spike_dense_lu) and
// writes the factors to r.
template <typename T>
__device__ void band_spike_reduced(const T *v, const T *w, int K, int nI, T *rout, int *piv, double tau, int *rstat) {
    BAND_DYN_SMEM(spike_red_smem);
    T *R = (T *)spike_red_smem;
    const int i = blockIdx.x, t = threadIdx.x, nt = blockDim.x;
    const i64 kk = (i64)K * K;
    const T *W = w + i * kk, *V = v + i * kk;
    for (int e = t; e < K * K; e += nt) {
        const int pp = e % K, c = e / K;
        T acc = pp == c ? T(1) : T(0);
        for (int q = 0; q < K; q++) {
            const T x = V[c * K + q];
            if (x != T(0)) acc = acc - W[q * K + pp] * x;
        }
        R[e] = acc;
    }
    __syncthreads();
    spike_dense_lu<T>(R, K, i, nI, piv, tau, rstat);
    for (int e = t; e < K * K; e += nt) rout[i * kk + e] = R[e];
}

// band_spike_vcopy copies src to dst (n elements; dst may be src) and
// records the first non-finite entry in *bad (smallest index) and *flag.
template <typename T> __device__ void band_spike_vcopy(const T *src, T *dst, int n, unsigned long long *bad, int *flag) {
    const int stride = gridDim.x * blockDim.x;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
        const T v = src[j];
        dst[j] = v;
        if (!band_finite(v)) {
            atomicMin(bad, (unsigned long long)j);
            atomicOr(flag, 1);
        }
    }
}

// band_spike_rsolve: grid P−1, K threads (thread p = row p of the K×K
// blocks), 3K·sizeof(T) bytes of dynamic shared memory. With g = D⁻¹·b
// (the partitions' LU solves), interface i solves
//   R̄_i·x_{i+1}⁽ᵗ⁾ = g_{i+1}⁽ᵗ⁾ − W_{i+1}⁽ᵗ⁾·g_i⁽ᵇ⁾     (Eq. 11b)
//   x_i⁽ᵇ⁾ = g_i⁽ᵇ⁾ − V_i⁽ᵇ⁾·x_{i+1}⁽ᵗ⁾                   (Eq. 11c)
// (spike.reducedSolve, denseLUSolve) and purifies x, which holds b:
// rows r1−K+p −= (B_i·x_{i+1}⁽ᵗ⁾)_p and rows r1+p −= (C_{i+1}·x_i⁽ᵇ⁾)_p
// (Eq. 12, spike.purify; B_i and C_{i+1} read from lu). Interfaces touch
// disjoint rows (partitions have ≥ 2K rows).
template <typename T>
__device__ void band_spike_rsolve(const T *lu, int n, int K, const int *bounds, const T *v, const T *w, const T *rf,
                                  const int *piv, const T *g, T *x) {
    BAND_DYN_SMEM(spike_rs_smem);
    T *gb = (T *)spike_rs_smem, *xt = gb + K, *xb = xt + K;
    const int i = blockIdx.x, p = threadIdx.x;
    const int r1 = bounds[i + 1];
    const i64 kk = (i64)K * K;
    const T *W = w + i * kk, *V = v + i * kk, *R = rf + i * kk;
    const int *pv = piv + i * K;
    gb[p] = g[r1 - K + p];
    T acc = g[r1 + p];
    __syncthreads();
    for (int q = 0; q < K; q++) {
        const T y = gb[q];
        if (y != T(0)) acc = acc - W[q * K + p] * y;
    }
    xt[p] = acc;
    __syncthreads();
    if (p == 0)
        for (int j = 0; j < K; j++) {
            const int r = pv[j];
            if (r != j) {
                const T y = xt[j];
                xt[j] = xt[r];
                xt[r] = y;
            }
        }
    __syncthreads();
    for (int j = 0; j < K; j++) { // unit lower L
        const T y = xt[j];
        if (y != T(0) && p > j) xt[p] = xt[p] - R[j * K + p] * y;
        __syncthreads();
    }
    for (int j = K - 1; j >= 0; j--) { // upper U
        const T y = xt[j] / R[j * K + j];
        __syncthreads();
        if (p == j) xt[j] = y;
        else if (p < j) xt[p] = xt[p] - R[j * K + p] * y;
        __syncthreads();
    }
    T b2 = gb[p];
    for (int q = 0; q < K; q++) {
        const T y = xt[q];
        if (y != T(0)) b2 = b2 - V[q * K + p] * y;
    }
    xb[p] = b2;
    __syncthreads();
    // B_i = A[r1−K:r1, r1:r1+K]: (p, q) at (p−q)·n + r1+q, q ≤ p.
    T xr = x[r1 - K + p];
    for (int q = 0; q <= p; q++) {
        const T y = xt[q];
        if (y != T(0)) xr = xr - lu[(i64)(p - q) * n + r1 + q] * y;
    }
    x[r1 - K + p] = xr;
    // C_{i+1} = A[r1:r1+K, r1−K:r1]: (p, q) at (2K+p−q)·n + r1−K+q, q ≥ p.
    T xs = x[r1 + p];
    for (int q = p; q < K; q++) {
        const T y = xb[q];
        if (y != T(0)) xs = xs - lu[(i64)(2 * K + p - q) * n + r1 - K + q] * y;
    }
    x[r1 + p] = xs;
}

#define BAND_SPIKE_KERNELS(T, S)                                                                                    \
    extern "C" __global__ void band_spike_copy_##S(const T *src, T *dst1, T *dst2, int n, int K,                    \
                                                   unsigned long long *bad) {                                       \
        band_spike_copy<T>(src, dst1, dst2, n, K, bad);                                                             \
    }                                                                                                               \
    extern "C" __global__ void band_spike_ulblock_##S(const T *src, int n, int K, const int *bounds, int l, T *dst,  \
                                                      int m2) {                                                     \
        band_spike_ulblock<T>(src, n, K, bounds, l, dst, m2);                                                       \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(1024, 2)                                                           \
        band_spike_factor_wide_##S(T *a, int n, int K, const int *bounds, int P, int ul, double tol, int *status) { \
        band_spike_factor_wide<T>(a, n, K, bounds, P, ul, tol, status);                                             \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(1024)                                                              \
        band_spike_tips_##S(const T *lu, int n, int K, const int *bounds, const T *ulf, int nul, int l, T *vout,    \
                            T *wout) {                                                                              \
        band_spike_tips<T>(lu, n, K, bounds, ulf, nul, l, vout, wout);                                              \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(1024)                                                              \
        band_spike_reduced_##S(const T *v, const T *w, int K, int nI, T *rout, int *piv, double tau, int *rstat) {  \
        band_spike_reduced<T>(v, w, K, nI, rout, piv, tau, rstat);                                                  \
    }                                                                                                               \
    extern "C" __global__ void band_spike_vcopy_##S(const T *src, T *dst, int n, unsigned long long *bad,           \
                                                    int *flag) {                                                    \
        band_spike_vcopy<T>(src, dst, n, bad, flag);                                                                \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(1024)                                                              \
        band_spike_rsolve_##S(const T *lu, int n, int K, const int *bounds, const T *v, const T *w, const T *rf,    \
                              const int *piv, const T *g, T *x) {                                                   \
        band_spike_rsolve<T>(lu, n, K, bounds, v, w, rf, piv, g, x);                                                \
    }

BAND_SPIKE_KERNELS(float, f32)
BAND_SPIKE_KERNELS(double, f64)

// band_spike_flags (one thread) gathers the flag words of a factorization
// into *hdr: bits 0–1 the LU partitions' BAND_FLAG_*, bits 2–3 the UL
// ones (ulst may be null), bits 4–5 the reduced systems' (rst may be
// null), bit 6 a non-finite entry of A.
extern "C" __global__ void band_spike_flags(const int *lust, int PL, const int *ulst, int PU, const int *rst, int nI,
                                            const unsigned long long *bad, int *hdr) {
    int h = lust[4 * PL];
    if (ulst != nullptr) h |= ulst[4 * PU] << 2;
    if (rst != nullptr) h |= rst[2 * nI] << 4;
    if (*bad != ~0ULL) h |= 64;
    *hdr = h;
}
