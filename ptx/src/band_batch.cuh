// Batched banded solves, one thread per system: LU without pivoting with
// diagonal boosting, then the forward and backward sweeps, fused into one
// kernel. The CPU twin is banded.FactorLURange followed by
// banded.SolveLURange on each system: the same operations in the same
// order, so the results agree bit for bit.
//
// Batch layout: element e of system g's tall-and-thin storage (e = s·n + j
// for storage column s, row j) is at a[e·aes + g·abs]; row i of system g's
// right-hand side and solution at d[i·des + g·dbs], x[i·des + g·dbs]
// (interleaved: aes = des = G, abs = dbs = 1; contiguous: aes = des = 1,
// abs = (2K+1)·n, dbs = n). x may alias d; a is only read.
//
// The forward sweep keeps the active (K+1)×(K+1) window of the matrix,
// rows and columns j…j+K, in registers: at step j it eliminates below the
// pivot a_jj, then slides the window down and to the right by one, reading
// the 2K+1 entries that enter it (row j+K+1 and column j+K+1). Every entry
// of the band is read exactly once and the entries of L are never stored:
// the right-hand side is eliminated in the same sweep. Row j of U and the
// eliminated right-hand side y_j go to the workspace (interleaved, batch
// stride Gp = G rounded up to 32, K+1 planes per row): u_jj, u_{j,j+1} …
// u_{j,j+K−1} and y_j; the last super-diagonal of U is the matrix's own
// (u_{j,j+K} = a_{j,j+K}: no pivot touches it), which the backward sweep
// reads again from a instead of storing it. Loads are issued D steps ahead
// into a ring of D register slots (the sweeps are unrolled D times), so
// that the memory latency overlaps D steps of elimination; every stream of
// loads and stores is one pointer moved by a stride per step. Per row the
// kernel moves 4K+6 elements (2K+3 is the floor): it is memory-bound for
// batches that fill the GPU and latency-bound for small ones.
//
// Boosting needs τ = tol·‖A_g‖_max, known only once the whole system has
// been read. The first forward sweep therefore does not boost: it tracks
// the smallest |pivot| and the max-abs norm. A system whose smallest pivot
// is below τ (or that met a zero or non-finite pivot or entry) is done
// again by its thread on a slow path with banded's exact semantics: a scan
// for non-finite entries in banded.scanBlock's order, then the sweep with
// boosting. Systems that need no boost (the common case) move only the
// floor traffic plus the workspace.
//
// Status (zero between solves; the host clears what it read): for system
// g, status[g] = failing row+1, status[G+g] = kind (BAND_*),
// status[2G+g] = failing column+1, status[3G+g] = boosted pivots; then
// status[4G] holds BAND_FLAG_* bits. A failed system's rows of x hold NaN.
//
// flags: bit 0 reports a non-finite solution as BAND_NONFINITE_X.
#pragma once
#include "band_common.cuh"

#define BAND_CHECK_X 1

template <typename T, int K> struct BatchIO {
    const T *a; // system g's storage (already offset by g·abs)
    const T *d; // system g's right-hand side
    T *x;       // system g's solution
    T *w;       // workspace, offset by g
    int n;
    i64 aes, des, wG;
    __device__ __forceinline__ const T *A(int s, int j) const { return a + ((i64)s * n + j) * aes; }
    __device__ __forceinline__ const T *D(int i) const { return d + (i64)i * des; }
    __device__ __forceinline__ T *X(int i) const { return x + (i64)i * des; }
    __device__ __forceinline__ T *W(int j, int p) const { return w + ((i64)j * (K + 1) + p) * wG; }
};

// BandEnter walks the 2K+2 streams of values that enter the window when
// its last row and column become e: q = 0…K is a_{e, e−K+q} (the new row
// up to the diagonal), q = K+1…2K is a_{e−K+r, e} with r = q−K−1 (the new
// column above the diagonal), q = 2K+1 is d_e. Value q of e is at
// base_q + e·stride. For K ≤ 4 each stream is one pointer moved by one
// stride per step (few instructions); for larger K the addresses are
// computed from e at each load (few registers).
template <typename T, int K, bool PTR = (K <= 4)> struct BandEnter;

template <typename T, int K> struct BandEnter<T, K, true> {
    const T *p[2 * K + 2];
    i64 sa, sd;
    __device__ __forceinline__ void init(const BatchIO<T, K> &io, int e) {
        sa = io.aes;
        sd = io.des;
#pragma unroll
        for (int q = 0; q <= K; q++) p[q] = io.a + ((i64)(2 * K - q) * io.n - K + q + e) * sa;
#pragma unroll
        for (int r = 0; r < K; r++) p[K + 1 + r] = io.a + ((i64)r * io.n + e) * sa;
        p[2 * K + 1] = io.d + (i64)e * sd;
    }
    __device__ __forceinline__ void advance() {
#pragma unroll
        for (int q = 0; q <= 2 * K; q++) p[q] += sa;
        p[2 * K + 1] += sd;
    }
    __device__ __forceinline__ void load(T (&R)[2 * K + 1], T &Dv) const {
#pragma unroll
        for (int q = 0; q <= 2 * K; q++) R[q] = __ldg(p[q]);
        Dv = __ldg(p[2 * K + 1]);
    }
};

template <typename T, int K> struct BandEnter<T, K, false> {
    const BatchIO<T, K> *io;
    int e;
    __device__ __forceinline__ void init(const BatchIO<T, K> &o, int e0) {
        io = &o;
        e = e0;
    }
    __device__ __forceinline__ void advance() { e++; }
    __device__ __forceinline__ void load(T (&R)[2 * K + 1], T &Dv) const {
#pragma unroll
        for (int q = 0; q <= K; q++) R[q] = __ldg(io->A(2 * K - q, e - K + q));
#pragma unroll
        for (int r = 0; r < K; r++) R[K + 1 + r] = __ldg(io->A(r, e));
        Dv = __ldg(io->D(e));
    }
};

// band_batch_forward factors system g and eliminates its right-hand side.
// The values entering the window are loaded D steps ahead into a ring of D
// register slots: step j uses slot j mod D, then refills it for step j+D
// (the loop is unrolled D times, so every slot index is a constant).
// SLOW = false: no boosting; pmin gets the smallest |pivot|, norm the
// max-abs of the entries, pbad whether a pivot was not finite. SLOW = true:
// boosting with tau (boost false: off) as banded.pivotAt does, counting
// boosts; it returns BAND_OK or the kind of the failure at row *frow.
template <typename T, int K, int D, bool SLOW>
__device__ __forceinline__ int band_batch_forward(const BatchIO<T, K> &io, double tau, bool boost, T &pmin, T &norm,
                                                  bool &pbad, int &nboost, int &frow) {
    const int n = io.n;
    T W[K + 1][K + 1], Y[K + 1];
#pragma unroll
    for (int r = 0; r <= K; r++) {
#pragma unroll
        for (int c = 0; c <= K; c++) {
            if (r < n && c < n) {
                W[r][c] = __ldg(io.A(K + r - c, c));
                if (!SLOW) norm = band_max(norm, band_abs(W[r][c]));
            } else {
                W[r][c] = r == c ? T(1) : T(0);
            }
        }
        Y[r] = r < n ? __ldg(io.D(r)) : T(0);
    }
    // D = 0: no ring; each step loads what enters at its end.
    const int DD = D > 0 ? D : 1;
    T Rs[DD][2 * K + 1], Ds[DD];
    BandEnter<T, K> ep;
    ep.init(io, 1 + K);
#pragma unroll
    for (int s = 0; s < D; s++) {
        if (s + 1 + K < n) ep.load(Rs[s], Ds[s]);
        ep.advance();
    }
    const i64 wstep = (i64)(K + 1) * io.wG;
    T *wp = io.w;
    for (int j0 = 0; j0 < n; j0 += DD) {
#pragma unroll
        for (int s = 0; s < DD; s++) {
            const int j = j0 + s;
            if (j >= n) break;
            T p = W[0][0];
            if (SLOW) {
                if (!band_finite(p)) {
                    frow = j;
                    return BAND_NONFINITE_PIVOT;
                }
                if (boost) {
                    if ((double)band_abs(p) < tau) {
                        p = band_boost(p, tau);
                        nboost++;
                    }
                } else if (p == T(0)) {
                    frow = j;
                    return BAND_ZERO_PIVOT;
                }
            } else {
                const T ap = band_abs(p);
                pbad = pbad || !(ap <= BandLim<T>::maxv());
                pmin = band_min(pmin, ap);
            }
            T L[K + 1];
#pragma unroll
            for (int r = 1; r <= K; r++) L[r] = W[r][0] / p;
#pragma unroll
            for (int r = 1; r <= K; r++) {
#pragma unroll
                for (int c = 1; c <= K; c++) W[r][c] = W[r][c] - L[r] * W[0][c];
                Y[r] = Y[r] - L[r] * Y[0];
            }
            wp[0] = p;
#pragma unroll
            for (int c = 1; c < K; c++) wp[c * io.wG] = W[0][c];
            wp[K * io.wG] = Y[0];
            wp += wstep;
            // Slide the window and take in row and column e = j+1+K.
#pragma unroll
            for (int r = 0; r < K; r++) {
#pragma unroll
                for (int c = 0; c < K; c++) W[r][c] = W[r + 1][c + 1];
                Y[r] = Y[r + 1];
            }
            if (D == 0 && j + 1 + K < n) ep.load(Rs[s], Ds[s]);
            if (j + 1 + K < n) {
#pragma unroll
                for (int c = 0; c <= K; c++) W[K][c] = Rs[s][c];
#pragma unroll
                for (int r = 0; r < K; r++) W[r][K] = Rs[s][K + 1 + r];
                Y[K] = Ds[s];
                if (!SLOW) {
#pragma unroll
                    for (int q = 0; q < 2 * K + 1; q++) norm = band_max(norm, band_abs(Rs[s][q]));
                }
            } else {
                // Beyond the matrix the window is padded with the identity
                // and a zero right-hand side.
#pragma unroll
                for (int c = 0; c < K; c++) W[K][c] = W[c][K] = T(0);
                W[K][K] = T(1);
                Y[K] = T(0);
            }
            // Refill the slot for step j+D.
            if (D > 0 && j + D + 1 + K < n) ep.load(Rs[s], Ds[s]);
            ep.advance();
        }
    }
    return BAND_OK;
}

// band_batch_backward solves with U: x_j = (y_j − u_{j,j+K}·x_{j+K} − … −
// u_{j,j+1}·x_{j+1}) / u_jj, the subtractions in banded.backward's order
// (it works column by column from the last, so x_j receives the term of
// the farthest column first). Rows are loaded D steps ahead into a ring of
// registers as in the forward sweep. A failed system stores NaN. It
// returns the smallest row whose solution is not finite (−1: none).
template <typename T, int K, int D>
__device__ __forceinline__ int band_batch_backward(const BatchIO<T, K> &io, bool failed, bool store) {
    const int n = io.n;
    T X[K + 1];
#pragma unroll
    for (int c = 0; c <= K; c++) X[c] = T(0);
    int bad = -1;
    // Slot s: P = u_jj, U[c] = u_{j,j+c} (U[K] = a_{j,j+K}), Yv = y_j.
    const int DD = D > 0 ? D : 1;
    T Ps[DD], Us[DD][K + 1], Ys[DD];
    const i64 wstep = (i64)(K + 1) * io.wG;
    const T *wr = io.W(n - 1, 0);  // the row to load next
    const T *ar = io.A(0, n - 1 + K); // a_{j,j+K} of that row
    auto load = [&](int j, T &P, T (&U)[K + 1], T &Yv) {
        P = wr[0];
#pragma unroll
        for (int c = 1; c < K; c++) U[c] = wr[c * io.wG];
        Yv = wr[K * io.wG];
        U[K] = j + K < n ? __ldg(ar) : T(0);
    };
#pragma unroll
    for (int s = 0; s < D; s++) {
        if (n - 1 - s >= 0) load(n - 1 - s, Ps[s], Us[s], Ys[s]);
        wr -= wstep;
        ar -= io.aes;
    }
    T *xp = io.X(n - 1);
    for (int j0 = n - 1; j0 >= 0; j0 -= DD) {
#pragma unroll
        for (int s = 0; s < DD; s++) {
            const int j = j0 - s;
            if (j < 0) break;
            if (D == 0) {
                load(j, Ps[s], Us[s], Ys[s]);
                wr -= wstep;
                ar -= io.aes;
            }
            T v = Ys[s];
#pragma unroll
            for (int c = K; c >= 1; c--) v = v - Us[s][c] * X[c];
            v = v / Ps[s];
            if (failed) v = BandLim<T>::nan();
            if (store) *xp = v;
            xp -= io.des;
            if (!band_finite(v)) bad = j;
#pragma unroll
            for (int c = K; c >= 2; c--) X[c] = X[c - 1];
            X[1] = v;
            if (D > 0) {
                if (j - D >= 0) load(j - D, Ps[s], Us[s], Ys[s]);
                wr -= wstep;
                ar -= io.aes;
            }
        }
    }
    return bad;
}

template <typename T, int K, int D>
__device__ void band_batch_kernel(const T *a, const T *d, T *x, T *w, int n, int G, int Gp, i64 aes, i64 abs_, i64 des,
                                  i64 dbs, double tol, int flags, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= Gp) return; // whole warps: Gp and blockDim are multiples of 32
    // Lanes past the batch run the sweeps on the last system's data (their
    // workspace slots are padding), so that warps stay converged; they
    // store nothing else.
    const bool live = g < G;
    const int gg = live ? g : G - 1;
    BatchIO<T, K> io;
    io.a = a + (i64)gg * abs_;
    io.d = d + (i64)gg * dbs;
    io.x = x + (i64)gg * dbs;
    io.w = w + g;
    io.n = n;
    io.aes = aes;
    io.des = des;
    io.wG = Gp;
    const bool boost = tol >= 0;
    T pmin = BandLim<T>::maxv(), norm = T(0);
    bool pbad = false;
    int nboost = 0, frow = -1, fcol = -1, kind = BAND_OK;
    band_batch_forward<T, K, D, false>(io, 0, false, pmin, norm, pbad, nboost, frow);
    double tau = band_tau(tol, (double)norm);
    const bool slow = !band_finite(norm) || pbad || (boost ? (double)pmin < tau : pmin == T(0));
    if (live && slow) {
        // banded.scanBlock: the first non-finite entry, column by column of
        // the storage, and the max-abs norm.
        double mx = 0;
        for (int s = 0; s <= 2 * K && kind == BAND_OK; s++) {
            const int dd = s - K;
            const int j0 = dd < 0 ? -dd : 0, j1 = dd > 0 ? n - dd : n;
            for (int j = j0; j < j1; j++) {
                const T v = *io.A(s, j);
                if (!band_finite(v)) {
                    kind = BAND_NONFINITE_ENTRY;
                    frow = j + dd;
                    fcol = j;
                    break;
                }
                mx = fmax(mx, (double)band_abs(v));
            }
        }
        if (kind == BAND_OK) {
            tau = band_tau(tol, mx);
            kind = band_batch_forward<T, K, (D > 0 ? 1 : 0), true>(io, tau, boost, pmin, norm, pbad, nboost, frow);
            if (kind != BAND_OK) fcol = frow;
        }
    }
    const int bad = band_batch_backward<T, K, D>(io, kind != BAND_OK, live);
    if (!live) return;
    if (kind == BAND_OK && bad >= 0 && (flags & BAND_CHECK_X)) {
        kind = BAND_NONFINITE_X;
        frow = bad;
        fcol = -1;
    }
    int bits = 0;
    if (kind != BAND_OK) {
        status[g] = frow + 1;
        status[G + g] = kind;
        status[2 * G + g] = fcol + 1;
        bits |= BAND_FLAG_FAIL;
    }
    if (nboost > 0) {
        status[3 * G + g] = nboost;
        bits |= BAND_FLAG_BOOST;
    }
    if (bits) atomicOr(&status[4 * G], bits);
}

// Prefetch depth (steps loaded ahead, register slots of the rings) per
// element type and half-bandwidth: as deep as registers allow without
// spills (scripts/check-ptx.sh). On an H100 for K = 2 (go test -tags cuda
// -run '^$' -bench '^BenchmarkBandBatch$' ./cuda): deeper rings win for
// small batches, whose few threads need many loads in flight, and cost
// nothing measurable for batches that fill the GPU (the lower occupancy
// still saturates the memory), so there is one kernel per K.
template <typename T, int K> struct BandDepth;
#define BAND_DEPTH(T, K, D)                                                                                         \
    template <> struct BandDepth<T, K> {                                                                            \
        static const int value = D;                                                                                 \
    };
BAND_DEPTH(float, 1, 24)
BAND_DEPTH(float, 2, 16)
BAND_DEPTH(float, 3, 12)
BAND_DEPTH(float, 4, 8)
BAND_DEPTH(float, 5, 6)
BAND_DEPTH(float, 6, 4)
BAND_DEPTH(float, 7, 4)
BAND_DEPTH(float, 8, 1)
BAND_DEPTH(double, 1, 16)
BAND_DEPTH(double, 2, 8)
BAND_DEPTH(double, 3, 6)
BAND_DEPTH(double, 4, 4)
BAND_DEPTH(double, 5, 3)
BAND_DEPTH(double, 6, 1)
BAND_DEPTH(double, 7, 1)
BAND_DEPTH(double, 8, 0)

#define BAND_BATCH_KERNEL(T, S, K, D, NAME)                                                                         \
    extern "C" __global__ void band_batch_##S##_k##K##NAME(const T *a, const T *d, T *x, T *w, int n, int G, int Gp, \
                                                          i64 aes, i64 abs_, i64 des, i64 dbs, double tol,          \
                                                          int flags, int *status) {                                 \
        band_batch_kernel<T, K, D>(a, d, x, w, n, G, Gp, aes, abs_, des, dbs, tol, flags, status);                  \
    }

#define BAND_BATCH_ALL_K(T, S)                                                                                      \
    BAND_BATCH_KERNEL(T, S, 1, (BandDepth<T, 1>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 2, (BandDepth<T, 2>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 3, (BandDepth<T, 3>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 4, (BandDepth<T, 4>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 5, (BandDepth<T, 5>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 6, (BandDepth<T, 6>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 7, (BandDepth<T, 7>::value), )                                                          \
    BAND_BATCH_KERNEL(T, S, 8, (BandDepth<T, 8>::value), )

BAND_BATCH_ALL_K(float, f32)
BAND_BATCH_ALL_K(double, f64)

// Other prefetch depths of the pentadiagonal kernel, for the benchmarks
// (cuda/banded_bench_test.go).
BAND_BATCH_KERNEL(float, f32, 2, 4, _d4)
BAND_BATCH_KERNEL(float, f32, 2, 24, _d24)
BAND_BATCH_KERNEL(double, f64, 2, 4, _d4)
