// Shared helpers of bandsolve's banded kernels (ptx/banded.ptx). They do not
// include the tridiagonal module's common.cuh, so the two modules can change
// apart.
//
// Storage: a band matrix of order n and half-bandwidth K is held "tall and
// thin" (SPIKE::GPU, Li et al. 2014 §4; banded.Band): storage column s
// (0 ≤ s ≤ 2K) holds the diagonal of offset K−s and
//
//     a_ij is element (K+i−j)·n + j        for |i−j| ≤ K,
//
// so storage row j holds column j of A from a_{j−K,j} to a_{j+K,j}.
//
// Every operation is a separately rounded IEEE operation (the PTX is built
// with -fmad=false, division and square root are IEEE round-to-nearest), in
// the order of the CPU twins in package banded, so that the results agree
// bit for bit.
//
// The sources also compile as host C++ with BAND_EMU defined (see
// internal/bandemu), which runs the kernels thread by thread on the CPU to
// test their logic without a GPU.
#pragma once

#ifdef BAND_EMU
#include "emu.h"
#endif

typedef long long i64;

// BAND_DYN_SMEM declares the kernel's dynamic shared memory.
#ifndef BAND_DYN_SMEM
#define BAND_DYN_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

// Status codes (kind) of a failed system or partition; they mirror the
// errors of package banded.
#define BAND_OK 0
#define BAND_NONFINITE_ENTRY 1 // a NaN/Inf entry of the matrix (banded.ErrNonFinite)
#define BAND_NONFINITE_PIVOT 2 // a pivot that became NaN/Inf (banded.ErrNonFinite)
#define BAND_ZERO_PIVOT 3      // a zero pivot with boosting off (banded.ErrZeroPivot)
#define BAND_NONFINITE_X 4     // a NaN/Inf in the solution (optional check)

// Bits of the flag word that follows the per-system status arrays.
#define BAND_FLAG_FAIL 1
#define BAND_FLAG_BOOST 2

template <typename T> struct BandLim;
template <> struct BandLim<float> {
    static __device__ __forceinline__ float maxv() { return 3.40282346638528859812e+38f; }
    static __device__ __forceinline__ float nan() { return __int_as_float(0x7fffffff); }
};
template <> struct BandLim<double> {
    static __device__ __forceinline__ double maxv() { return 1.79769313486231570815e+308; }
    static __device__ __forceinline__ double nan() { return __longlong_as_double(0x7fffffffffffffffLL); }
};

__device__ __forceinline__ float band_abs(float v) { return fabsf(v); }
__device__ __forceinline__ double band_abs(double v) { return fabs(v); }
__device__ __forceinline__ float band_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double band_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float band_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double band_min(double a, double b) { return fmin(a, b); }

// band_finite: neither NaN nor ±Inf.
template <typename T> __device__ __forceinline__ bool band_finite(T v) { return band_abs(v) <= BandLim<T>::maxv(); }

// band_boost is banded.pivotAt's boosting of a pivot p with |p| < tau:
// sign(p)·τ rounded to T (+τ for p = ±0), or the smallest float32
// subnormal when τ underflows in T.
template <typename T> __device__ __forceinline__ T band_boost(T p, double tau) {
    T t = (T)tau;
    if (t == T(0)) t = (T)1.40129846432481707092e-45f;
    if (p < T(0)) t = -t;
    return t;
}

// band_tau is banded.boostTau: tol·‖A‖_max (‖A‖_max = 1 for an all-zero
// block), or 0 when boosting is off (tol < 0). tol is already resolved
// (the host turns 0 into the machine epsilon of T).
__device__ __forceinline__ double band_tau(double tol, double norm) {
    if (tol < 0) return 0;
    if (norm == 0) norm = 1;
    return tol * norm;
}

// band_factor_status writes what a block factorization of partition p
// (rows r0…r1−1) ended with, from thread 0: on a failure its kind
// (BAND_ZERO_PIVOT, BAND_NONFINITE_PIVOT) and row+1 (as the pivot's column
// too; frow counts from the block's start, mirrored for UL) in status[4p…],
// the number of boosted pivots in status[4p+3], and the flags in
// status[4P].
__device__ __forceinline__ void band_factor_status(int *status, int p, int P, int kind, int frow, int nboost, int ul,
                                                   int r0, int r1) {
    int bits = 0;
    if (kind != BAND_OK) {
        const int row = (ul ? r0 + r1 - 1 - frow : frow) + 1;
        status[4 * p] = kind;
        status[4 * p + 1] = row;
        status[4 * p + 2] = row;
        bits |= BAND_FLAG_FAIL;
    }
    if (nboost > 0) {
        status[4 * p + 3] = nboost;
        bits |= BAND_FLAG_BOOST;
    }
    if (bits) atomicOr(&status[4 * P], bits);
}

// band_scan_block is banded.scanBlock on the GPU: it scans rows r0…r1−1 of
// the band a (tall-and-thin storage of n columns, half-bandwidth K), the
// diagonal block of partition p, for its first non-finite entry in storage
// order and its max-abs norm. Every thread of the block calls it; red holds
// blockDim.x doubles and firstbad is a __shared__ word, both the caller's.
// On a non-finite entry thread 0 writes partition p's status words (kind
// BAND_NONFINITE_ENTRY, row+1, column+1) and raises BAND_FLAG_FAIL in
// status[4P], and every thread gets false (the kernel then returns);
// otherwise true, with the norm in red[0] (the caller syncs before reusing
// red).
template <typename T>
__device__ __noinline__ bool band_scan_block(const T *a, int n, int K, int r0, int r1, int p, int P, int *status, double *red,
                                unsigned long long &firstbad) {
    const int t = threadIdx.x, nt = blockDim.x;
    const unsigned long long none = ~0ULL;
    if (t == 0) firstbad = none;
    __syncthreads();
    double mx = 0;
    for (int s = 0; s <= 2 * K; s++) {
        const int d = s - K;
        const int j0 = max(r0, r0 - d), j1 = min(r1, r1 - d);
        for (int j = j0 + t; j < j1; j += nt) {
            const T v = a[(i64)s * n + j];
            if (!band_finite(v)) atomicMin(&firstbad, (unsigned long long)((i64)s * n + j));
            else mx = fmax(mx, (double)band_abs(v));
        }
    }
    red[t] = mx;
    __syncthreads();
    for (int h = 1; h < nt; h *= 2) { // tree reduction over any block size
        double o = 0;
        const bool take = (t % (2 * h)) == 0 && t + h < nt;
        if (take) o = red[t + h];
        __syncthreads();
        if (take) red[t] = fmax(red[t], o);
        __syncthreads();
    }
    if (firstbad == none) return true;
    if (t == 0) {
        const i64 key = (i64)firstbad;
        const int s = (int)(key / n), j = (int)(key % n);
        status[4 * p] = BAND_NONFINITE_ENTRY;
        status[4 * p + 1] = j + s - K + 1;
        status[4 * p + 2] = j + 1;
        atomicOr(&status[4 * P], BAND_FLAG_FAIL);
    }
    return false;
}

// BandIO addresses entry (s, j) of a band's storage (storage column s,
// storage row j: a + s·n + j), or of its mirror image when ul is set: with
// R = r0+r1−1 for the block [r0, r1), entry (s, j) of the mirror is entry
// (2K−s, R−j) of the band, so that a UL factorization of the block is the
// LU code run on the mirror (its rows and columns reversed).
template <typename T> struct BandIO {
    T *a;
    int n, K, R;
    bool ul;
    __device__ __forceinline__ T *at(int s, int j) const {
        return ul ? a + (i64)(2 * K - s) * n + (R - j) : a + (i64)s * n + j;
    }
};

// BandWindow loads the active window of a window-sliding factorization of
// the block [r0, r1), rows and columns j … j+K of the (mirrored) band at
// step j, into a circular buffer S of M×M entries of shared memory, M =
// K+2: entry a_{x,y} at S[(x mod M)·M + (y mod M)], counting x and y from
// r0, so that the pivot a_{j,j} is at slot (jm, jm), jm = (j−r0) mod M.
//
// load_first (every thread of the block, a stride loop over t < nt) puts
// rows and columns r0 … r0+K into slots 0 … K, the entries inside the
// block; then the 2K+1 loader threads t ≤ 2K read their entry of row and
// column r0+1+K into nxt. The caller puts a barrier before the window is
// read.
//
// Loader thread q of row and column e = j+1+K holds one entry:
//   q ≤ K:  a_{e, e−K+q} (row e),        storage (2K−q, e+q−K), window
//           (row K, column q) relative to e−K;
//   q > K:  a_{e−K+r, e}, r = q−K−1 (column e), storage (r, e), window
//           (row r, column K) relative to e−K.
// advance, called by every thread at step j (pivot slot jm) after the
// step's update and before its closing barrier, has each loader thread of
// a row e = j+1+K < r1 store nxt into the buffer's spare row and column
// (slot ≡ e ≡ j−1 mod M, which step j does not touch; slot e−K = j+1 is
// jm+1 mod M) and read its entry of row and column e+1 into nxt when
// e+1 < r1.
template <typename T> struct BandWindow {
    T *S;
    int M;
    bool loader;
    int ls, lo, lr, lc; // storage column, storage row − e, window row, window column
    T nxt;

    __device__ __forceinline__ void load_first(const BandIO<T> &io, T *s, int r0, int r1, int t, int nt) {
        const int K = io.K;
        S = s;
        M = K + 2;
        for (int idx = t; idx < (K + 1) * (K + 1); idx += nt) {
            const int r = idx / (K + 1), c = idx % (K + 1);
            if (r0 + r < r1 && r0 + c < r1) S[r * M + c] = *io.at(K + r - c, r0 + c);
        }
        loader = t < 2 * K + 1;
        ls = t <= K ? 2 * K - t : t - K - 1;
        lo = t <= K ? t - K : 0;
        lr = t <= K ? K : t - K - 1;
        lc = t <= K ? t : K;
        nxt = T(0);
        if (loader && r0 + 1 + K < r1) nxt = *io.at(ls, r0 + 1 + K + lo);
    }

    __device__ __forceinline__ void advance(const BandIO<T> &io, int j, int jm, int r1) {
        const int e = j + 1 + io.K;
        if (loader && e < r1) {
            // Slots are reduced mod M by one subtraction (every index is
            // below 2M).
            int e0 = jm + 1;
            if (e0 >= M) e0 -= M;
            int sr = e0 + lr, sc = e0 + lc;
            if (sr >= M) sr -= M;
            if (sc >= M) sc -= M;
            S[sr * M + sc] = nxt;
            if (e + 1 < r1) nxt = *io.at(ls, e + 1 + lo);
        }
    }
};
