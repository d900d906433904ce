// Parallel cyclic reduction (TPR paper §2.2.2, Eq. 3) and the PCR→Thomas
// hybrid, with each system held in shared memory. The CPU twins are
// pcr.Solve and pcr.SolveHybrid (tridiag/pcr): the same operations in the
// same order (PTX built with -fmad=false), so the results agree bit for
// bit.
//
// Launch (tuning.PCRLaunch): blockDim.x = tps·spb threads, spb systems per
// block, tps threads per system (thread t works on local system t / tps);
// block b holds systems b·spb … b·spb+spb−1 (those ≥ G idle but still
// reach every barrier). Dynamic shared memory, per local system s at
// element offset s·(4n + 4h), h = ⌊n/2⌋:
//
//	a[n] b[n] c[n] d[n]   the current level (x ends in d's place)
//	ha[h] hb[h] hc[h] hd[h]   one step's odd-class rows (see pcr_step)
//
// then spb int keys (breakdown, see red_key). In all: (4n+4h)·sizeof(T)·spb
// + 4·spb bytes (tuning.PCRSharedBytes).
//
// The helpers red_* (load, store, keys, in-place Thomas) are shared with
// the CR kernel (cr.cuh).
#pragma once
#include "common.cuh"

// One dynamic shared-memory array for every reduction kernel; each kernel
// views it as its element type.
extern __shared__ __align__(16) unsigned char red_smem[];

// Breakdown keys. Each system has one int in shared memory, RED_NONE while
// it is fine; a thread that finds a bad divisor (or a non-finite x) at
// stage s (a reduction step or level, the final solve, the last check) in
// row i does atomicMin(key, RED_KEY(s, i)). The smallest key is the first
// stage that failed and, within it, the smallest row, as the CPU twins
// report. Rows are < 2^20 (the kernels hold at most a few ten thousand
// rows in shared memory).
#define RED_NONE 0x7fffffff
#define RED_KEY(stage, row) (((stage) << 20) | (row))
#define RED_ROW(key) ((key) & 0xfffff)

// red_load copies the block's systems into shared memory: row i of local
// system s to sm[s·ss + off + i] for a, b, c, d at off = 0, n, 2n, 3n. The
// unused a[0] and c[n−1] are stored as 0, as the CPU twins load them. The
// flat index runs over systems first when they are closer together in
// memory than rows (bs < es: interleaved), over rows first otherwise, so
// that neighbouring threads read neighbouring addresses.
template <typename T>
__device__ __forceinline__ void red_load(const Coeffs<T> &k, const T *d, T *sm, int ss, int n, int G, i64 es, i64 bs,
                                         int spb, int g0) {
    const int total = spb * n;
    const bool sysFirst = bs < es;
    for (int t = threadIdx.x; t < total; t += blockDim.x) {
        int s, i;
        if (sysFirst) {
            s = t % spb;
            i = t / spb;
        } else {
            s = t / n;
            i = t - s * n;
        }
        const int g = g0 + s;
        if (g >= G) continue;
        const i64 idx = (i64)g * bs + (i64)i * es;
        T *S = sm + s * ss;
        S[i] = i == 0 ? T(0) : k.A(idx);
        S[n + i] = k.B(idx);
        S[2 * n + i] = i == n - 1 ? T(0) : k.C(idx);
        S[3 * n + i] = d[idx];
    }
}

// red_store writes x (sm[s·ss + xoff + i]) back in the batch layout; a
// system whose key is set gets NaN in every row, its status[g] = row+1 (if
// not already set by an earlier kernel of the plan) and status[G] = 1.
// Call after a barrier that follows the last write of keys and x.
template <typename T>
__device__ __forceinline__ void red_store(const T *sm, int ss, int xoff, const int *keys, T *x, int n, int G, i64 es,
                                          i64 bs, int spb, int g0, int *status) {
    const int total = spb * n;
    const bool sysFirst = bs < es;
    const T q = nan_of<T>();
    for (int t = threadIdx.x; t < total; t += blockDim.x) {
        int s, i;
        if (sysFirst) {
            s = t % spb;
            i = t / spb;
        } else {
            s = t / n;
            i = t - s * n;
        }
        const int g = g0 + s;
        if (g >= G) continue;
        const i64 idx = (i64)g * bs + (i64)i * es;
        x[idx] = keys[s] == RED_NONE ? sm[s * ss + xoff + i] : q;
    }
    for (int s = threadIdx.x; s < spb; s += blockDim.x) {
        const int key = keys[s];
        if (g0 + s < G && key != RED_NONE) {
            atomicCAS(&status[g0 + s], 0, RED_ROW(key) + 1);
            status[G] = 1;
        }
    }
}

// red_thomas solves the subsystem of rows r, r+p, r+2p, … < n of the
// level in A, B, C, D by the Thomas algorithm in place (c' over C, x over
// D): the operations of tri.Thomas on the gathered subsystem. A bad pivot
// sets the key at stage `stage` and that row; a non-finite x at stage+1
// and the smallest such row.
template <typename T>
__device__ void red_thomas(const T *A, const T *B, T *C, T *D, int n, int r, int p, int *key, int stage) {
    T piv = B[r];
    if (bad_divisor(piv)) {
        atomicMin(key, RED_KEY(stage, r));
        return;
    }
    T cp = C[r] / piv;
    T xp = D[r] / piv;
    C[r] = cp;
    D[r] = xp;
    int last = r;
    for (int i = r + p; i < n; i += p) {
        const T ai = A[i];
        piv = B[i] - ai * cp;
        if (bad_divisor(piv)) {
            atomicMin(key, RED_KEY(stage, i));
            return;
        }
        if (i + p < n) {
            cp = C[i] / piv;
            C[i] = cp;
        }
        xp = (D[i] - ai * xp) / piv;
        D[i] = xp;
        last = i;
    }
    int bad = isfinite(xp) ? -1 : last;
    for (int i = last - p; i >= r; i -= p) {
        xp = D[i] - C[i] * xp;
        D[i] = xp;
        if (!isfinite(xp)) bad = i;
    }
    if (bad >= 0) atomicMin(key, RED_KEY(stage + 1, bad));
}

// pcr_update computes row i of the next level from rows i−u, i, i+u of
// the current one (A, B, C, D): Eq. 1 as pcr.reduce writes it, a missing
// neighbour read as the identity equation (a = c = d = 0, b = 1).
template <typename T>
__device__ __forceinline__ void pcr_update(const T *A, const T *B, const T *C, const T *D, int n, int i, int u, T &na,
                                           T &nb, T &nc, T &nd) {
    T al = T(0), bl = T(1), cl = T(0), dl = T(0);
    if (i - u >= 0) {
        al = A[i - u];
        bl = B[i - u];
        cl = C[i - u];
        dl = D[i - u];
    }
    T ar = T(0), br = T(1), cr = T(0), dr = T(0);
    if (i + u < n) {
        ar = A[i + u];
        br = B[i + u];
        cr = C[i + u];
        dr = D[i + u];
    }
    const T s1 = A[i] / bl;
    const T s2 = C[i] / br;
    na = -(al * s1);
    nb = (B[i] - cl * s1) - ar * s2;
    nc = -(cr * s2);
    nd = (D[i] - dl * s1) - dr * s2;
}

// pcr_check: b_j is a divisor of step `step` (stride u) when E_j is the
// E_{i−u} or E_{i+u} of an existing equation i.
template <typename T>
__device__ __forceinline__ void pcr_check(const T *B, int n, int j, int u, int step, int *key) {
    if ((j - u >= 0 || j + u < n) && bad_divisor(B[j])) atomicMin(key, RED_KEY(step, j));
}

// pcr_step performs reduction step `step` (stride u = 2^(step−1)) on the
// level in S = (A, B, C, D) in place, for one system, by its tps threads
// (lt = 0 … tps−1). The rows split into the odd class (i & u: rows
// [u, 2u), [3u, 4u), …) and the even class; the neighbours i ± u of a row
// are in the other class, and the odd class has at most ⌊n/2⌋ rows.
//   1. every odd row is computed from S into the half buffer H (its q-th
//      odd row at H[q]); barrier;
//   2. every even row is computed from S and written over itself in S (it
//      reads only itself and odd rows, which nobody writes now); barrier;
//   3. the odd rows are copied from H into S.
// Every thread of the block calls it (live: the thread's system exists),
// so that the barriers are uniform; it ends with a barrier.
template <typename T>
__device__ __forceinline__ void pcr_step(T *A, T *B, T *C, T *D, T *HA, T *HB, T *HC, T *HD, int n, int step,
                                         int lt, int tps, bool live, int *key) {
    const int u = 1 << (step - 1);
    const int lo = u - 1; // bits of the position inside a run of u rows
    if (live) {
        for (int q = lt;; q += tps) {
            const int i = ((q & ~lo) << 1) | u | (q & lo); // q-th odd row
            if (i >= n) break;
            pcr_check(B, n, i, u, step, key);
            T na, nb, nc, nd;
            pcr_update(A, B, C, D, n, i, u, na, nb, nc, nd);
            HA[q] = na;
            HB[q] = nb;
            HC[q] = nc;
            HD[q] = nd;
        }
    }
    __syncthreads();
    if (live) {
        for (int q = lt;; q += tps) {
            const int i = ((q & ~lo) << 1) | (q & lo); // q-th even row
            if (i >= n) break;
            pcr_check(B, n, i, u, step, key);
            T na, nb, nc, nd;
            pcr_update(A, B, C, D, n, i, u, na, nb, nc, nd);
            A[i] = na;
            B[i] = nb;
            C[i] = nc;
            D[i] = nd;
        }
    }
    __syncthreads();
    if (live) {
        for (int q = lt;; q += tps) {
            const int i = ((q & ~lo) << 1) | u | (q & lo);
            if (i >= n) break;
            A[i] = HA[q];
            B[i] = HB[q];
            C[i] = HC[q];
            D[i] = HD[q];
        }
    }
    __syncthreads();
}

// pcr_total_steps is ⌈log2 n⌉ (pcr.Steps).
__device__ __forceinline__ int pcr_total_steps(int n) { return n <= 1 ? 0 : 32 - __clz(n - 1); }

// pcr_kernel: `steps` PCR steps (clamped to [0, ⌈log2 n⌉]); then, if the
// system is fully reduced, x_i = d_i/b_i (pcr.Solve's divide), else 2^steps
// interleaved subsystems solved by Thomas, subsystem r by local thread
// r mod tps (pcr.SolveHybrid).
template <typename T>
__device__ void pcr_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int spb,
                           int steps) {
    T *sm = reinterpret_cast<T *>(red_smem);
    const int h = n / 2;
    const int ss = 4 * n + 4 * h;
    int *keys = reinterpret_cast<int *>(sm + spb * ss);
    const int tps = blockDim.x / spb;
    const int s = threadIdx.x / tps, lt = threadIdx.x - s * tps;
    const int g0 = blockIdx.x * spb;
    const bool live = s < spb && g0 + s < G;

    for (int t = threadIdx.x; t < spb; t += blockDim.x) keys[t] = RED_NONE;
    red_load(k, d, sm, ss, n, G, es, bs, spb, g0);
    __syncthreads();

    T *A = sm + (live ? s : 0) * ss, *B = A + n, *C = B + n, *D = C + n;
    T *HA = D + n, *HB = HA + h, *HC = HB + h, *HD = HC + h;
    int *key = keys + (live ? s : 0);

    const int total = pcr_total_steps(n);
    steps = max(0, min(steps, total));
    for (int step = 1; step <= steps; step++) pcr_step(A, B, C, D, HA, HB, HC, HD, n, step, lt, tps, live, key);

    const int fin = steps + 1;
    if (live) {
        if (steps == total) {
            // pcr.divide: every divisor checked, then x_i = d_i/b_i.
            for (int i = lt; i < n; i += tps) {
                const T bi = B[i];
                if (bad_divisor(bi)) atomicMin(key, RED_KEY(fin, i));
                const T xi = D[i] / bi;
                D[i] = xi;
                if (!isfinite(xi)) atomicMin(key, RED_KEY(fin + 1, i));
            }
        } else {
            const int p = 1 << steps;
            for (int r = lt; r < p && r < n; r += tps) red_thomas(A, B, C, D, n, r, p, key, fin);
        }
    }
    __syncthreads();
    red_store(sm, ss, 3 * n, keys, x, n, G, es, bs, spb, g0, status);
}

// pcr_*: plain PCR (pcr.Solve). pcr_hybrid_*: `steps` PCR steps, then
// Thomas on the 2^steps subsystems (pcr.SolveHybrid; steps ≥ ⌈log2 n⌉ is
// plain PCR). Grid: ⌈G/spb⌉ blocks; block: tps·spb threads (≤ 1024).
#define PCR(T, S)                                                                                                 \
    extern "C" __global__ void __launch_bounds__(1024)                                                           \
        pcr_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb,  \
                T cc, int isConst, int *status, int spb) {                                                       \
        pcr_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb, 1 << 30);         \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(1024)                                                           \
        pcr_hybrid_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, \
                       T cb, T cc, int isConst, int *status, int spb, int steps) {                               \
        pcr_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb, steps);           \
    }
PCR(float, f32)
PCR(double, f64)
