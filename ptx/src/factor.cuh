// Stored factorizations of tridiagonal batches, one thread per system:
// factor once (fac_k*), solve any number of right-hand-side columns with the
// factors (fac_solve_k*_p*), and the one-shot L·D·Lᵀ solve of LDLT plans
// (ptsv). The CPU twins are in tridiag/internal/tri (LUFactor/LUSolve,
// GTTRF/GTTRS, PTTRF/PTTRS, PTSV): the same operations in the same order,
// so that with -fmad=false the factors and solutions agree bit for bit.
//
// Factor storage: planes f0..f3 of n·H elements, row i of held system h at
// i*H + h (H held systems: G, or 1 when every system shares system 0's
// factors), so that a warp's accesses are coalesced whatever the batch
// layout; ipiv one byte at the same index; kind one byte per held system.
//   LU (Thomas, no pivoting): f0 = l (multipliers), f1 = 1/u, f2 = c/u
//   GT (gttrf):               f0 = dl, f1 = d, f2 = du, f3 = du2, ipiv
//   PT (pttrf):               f0 = d (D's diagonal), f1 = e (L's sub-diagonal)
// Right-hand sides: column r of the batch at d[r*cs ...], row i of system g
// at i*es + g*bs within a column (the batch layout), solutions to x the same
// way (x may alias d).
#pragma once
#include "common.cuh"

// Kinds of a held system's factors (the kind array).
#define FAC_NONE 0
#define FAC_LU 1
#define FAC_GT 2
#define FAC_PT 3
#define FAC_FAILED 4

// Factor modes (the k of fac_k*): the plan's factorization.
#define FMODE_LU 0        // Thomas: LU without pivoting
#define FMODE_GT 1        // gttrf: LU with partial pivoting
#define FMODE_PT 2        // pttrf: L·D·Lᵀ
#define FMODE_AUTO 3      // LU where the pivot growth test passes, else gttrf
#define FMODE_AUTONEVER 4 // LU where no pivot is zero, else gttrf

// Pivot growth bound of the Auto test (tri.PivotGrowthBound).
#define FAC_GROWTH 2.0

// positive_pivot: a usable L·D·Lᵀ pivot, > 0 and not +Inf (NaN fails).
template <typename T> __device__ __forceinline__ bool positive_pivot(T v) { return v > T(0) && !isinf(v); }

// fac_lu factors system h (rows at base + i*es) without pivoting into
// l, r, cp; returns -1, or the failing row. bounded applies Auto's pivot
// growth test (in double, as the CPU makes it).
template <typename T>
__device__ int fac_lu(const Coeffs<T> &k, i64 base, i64 es, int n, T *l, T *r, T *cp, i64 h, i64 H, bool bounded) {
    T piv = k.B(base);
    if (bad_divisor(piv)) return 0;
    l[h] = T(0);
    r[h] = T(1) / piv;
    T cprev = k.C(base) / piv;
    cp[h] = cprev;
#pragma unroll 1
    for (int i = 1; i < n; i++) {
        const i64 idx = base + (i64)i * es;
        const T ai = k.A(idx), bi = k.B(idx);
        const T f = ai * cprev;
        if (bounded && !(fabs((double)f) <= FAC_GROWTH * fabs((double)bi))) return i;
        const T prev = piv;
        piv = bi - f;
        if (bad_divisor(piv)) return i;
        const i64 w = (i64)i * H + h;
        l[w] = ai / prev;
        r[w] = T(1) / piv;
        cprev = k.C(idx) / piv;
        cp[w] = cprev;
    }
    cp[(i64)(n - 1) * H + h] = T(0);
    return -1;
}

// fac_gt factors system h with partial pivoting as gttrf (tri.GTTRF);
// returns -1, or the first row whose pivot is zero.
template <typename T>
__device__ int fac_gt(const Coeffs<T> &k, i64 base, i64 es, int n, T *dl, T *dd, T *du, T *du2, unsigned char *ipiv, i64 h,
                      i64 H) {
    // Row i being eliminated: cdd = dd[i], cdu = du[i]; the next row's
    // ndd = dd[i+1], ndu = du[i+1] as earlier steps left them.
    T cdd = k.B(base);
    T cdu = n > 1 ? k.C(base) : T(0);
#pragma unroll 1
    for (int i = 0; i < n - 1; i++) {
        const i64 nidx = base + (i64)(i + 1) * es;
        const T dli = k.A(nidx);
        T ndd = k.B(nidx);
        T ndu = (i + 1 < n - 1) ? k.C(nidx) : T(0);
        T du2i = T(0);
        T f = T(0);
        unsigned char p = 0;
        if (fabs(cdd) >= fabs(dli)) {
            if (cdd == T(0)) return i;
            f = dli / cdd;
            ndd = ndd - f * cdu;
        } else {
            f = cdd / dli;
            cdd = dli;
            const T tmp = ndd;
            ndd = cdu - f * tmp;
            if (i < n - 2) {
                du2i = ndu;
                ndu = -f * du2i;
            }
            cdu = tmp;
            p = 1;
        }
        const i64 w = (i64)i * H + h;
        dl[w] = f;
        dd[w] = cdd;
        du[w] = cdu;
        du2[w] = du2i;
        ipiv[w] = p;
        cdd = ndd;
        cdu = ndu;
    }
    if (cdd == T(0)) return n - 1;
    const i64 w = (i64)(n - 1) * H + h;
    dl[w] = T(0);
    dd[w] = cdd;
    du[w] = T(0);
    du2[w] = T(0);
    ipiv[w] = 0;
    return -1;
}

// fac_pt factors the symmetric system h (diagonal b, off-diagonal c) as
// pttrf (tri.PTTRF); returns -1, or the first row whose pivot is not
// positive.
template <typename T>
__device__ int fac_pt(const Coeffs<T> &k, i64 base, i64 es, int n, T *dd, T *e, i64 h, i64 H) {
    T p = k.B(base);
#pragma unroll 1
    for (int i = 0; i < n - 1; i++) {
        if (!positive_pivot(p)) return i;
        const i64 idx = base + (i64)i * es;
        const T ei = k.C(idx);
        const T q = ei / p;
        const i64 w = (i64)i * H + h;
        dd[w] = p;
        e[w] = q;
        p = k.B(idx + es) - q * ei;
    }
    if (!positive_pivot(p)) return n - 1;
    const i64 w = (i64)(n - 1) * H + h;
    dd[w] = p;
    e[w] = T(0);
    return -1;
}

// fac_kernel factors the H systems of the batch with mode M: kind[h] gets
// the factors' kind (FAC_FAILED for a breakdown, and status[h] = row+1).
template <typename T, int M>
__device__ void fac_kernel(Coeffs<T> k, T *f0, T *f1, T *f2, T *f3, unsigned char *ipiv, unsigned char *kind, int n, int H,
                           i64 es, i64 bs, int *status) {
    const int h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= H) return;
    const i64 base = (i64)h * bs;
    int bad = -1;
    unsigned char kd = FAC_NONE;
    if (M == FMODE_LU) {
        bad = fac_lu<T>(k, base, es, n, f0, f1, f2, h, H, false);
        kd = FAC_LU;
    } else if (M == FMODE_GT) {
        bad = fac_gt<T>(k, base, es, n, f0, f1, f2, f3, ipiv, h, H);
        kd = FAC_GT;
    } else if (M == FMODE_PT) {
        bad = fac_pt<T>(k, base, es, n, f0, f1, h, H);
        kd = FAC_PT;
    } else {
        bad = fac_lu<T>(k, base, es, n, f0, f1, f2, h, H, M == FMODE_AUTO);
        kd = FAC_LU;
        if (bad >= 0) {
            bad = fac_gt<T>(k, base, es, n, f0, f1, f2, f3, ipiv, h, H);
            kd = FAC_GT;
        }
    }
    if (bad >= 0) {
        kd = FAC_FAILED;
        status[h] = bad + 1;
    }
    kind[h] = kd;
}

// The solves of one group of up to CB columns (m of them live) of system
// g: the factors of each row are read once for the group. bad[c] gets the
// smallest row of column c whose solution is not finite (-1: none).
// Column c's rows are at base + c*cs + i*es of d and x.

template <typename T, int CB>
__device__ void fac_solve_lu(const T *l, const T *r, const T *cp, i64 h, i64 H, const T *d, T *x, i64 base, i64 es, i64 cs, int m,
                             int n, int *bad) {
    T y[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) {
        y[c] = T(0);
        bad[c] = -1;
        if (c < m) {
            y[c] = d[base + c * cs];
            x[base + c * cs] = y[c];
        }
    }
#pragma unroll 1
    for (int i = 1; i < n; i++) {
        const T li = l[(i64)i * H + h];
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = d[idx + c * cs] - li * y[c];
                x[idx + c * cs] = y[c];
            }
        }
    }
    {
        const T ri = r[(i64)(n - 1) * H + h];
        const i64 idx = base + (i64)(n - 1) * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = x[idx + c * cs] * ri;
                x[idx + c * cs] = y[c];
                if (!isfinite(y[c])) bad[c] = n - 1;
            }
        }
    }
#pragma unroll 1
    for (int i = n - 2; i >= 0; i--) {
        const i64 w = (i64)i * H + h;
        const T ri = r[w], ci = cp[w];
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = x[idx + c * cs] * ri - ci * y[c];
                x[idx + c * cs] = y[c];
                if (!isfinite(y[c])) bad[c] = i;
            }
        }
    }
}

template <typename T, int CB>
__device__ void fac_solve_gt(const T *dl, const T *dd, const T *du, const T *du2, const unsigned char *ipiv, i64 h, i64 H,
                             const T *d, T *x, i64 base, i64 es, i64 cs, int m, int n, int *bad) {
    T cur[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) {
        cur[c] = T(0);
        bad[c] = -1;
        if (c < m) cur[c] = d[base + c * cs];
    }
    // Forward: the interchanges and L. Row i is final after step i; the
    // pending row i+1 is carried.
#pragma unroll 1
    for (int i = 0; i < n - 1; i++) {
        const i64 w = (i64)i * H + h;
        const T f = dl[w];
        const bool p = ipiv[w] != 0;
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                const T nxt = d[idx + es + c * cs];
                const T keep = p ? cur[c] : nxt;
                const T done = p ? nxt : cur[c];
                x[idx + c * cs] = done;
                cur[c] = keep - f * done;
            }
        }
    }
    // Back substitution with U: x1 is row i+1, x2 row i+2.
    T x1[CB], x2[CB];
    {
        const T di = dd[(i64)(n - 1) * H + h];
        const i64 idx = base + (i64)(n - 1) * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            x1[c] = T(0);
            x2[c] = T(0);
            if (c < m) {
                x1[c] = cur[c] / di;
                x[idx + c * cs] = x1[c];
                if (!isfinite(x1[c])) bad[c] = n - 1;
            }
        }
    }
    if (n > 1) {
        const i64 w = (i64)(n - 2) * H + h;
        const T di = dd[w], ui = du[w];
        const i64 idx = base + (i64)(n - 2) * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                x2[c] = x1[c];
                x1[c] = (x[idx + c * cs] - ui * x2[c]) / di;
                x[idx + c * cs] = x1[c];
                if (!isfinite(x1[c])) bad[c] = n - 2;
            }
        }
    }
#pragma unroll 1
    for (int i = n - 3; i >= 0; i--) {
        const i64 w = (i64)i * H + h;
        const T di = dd[w], ui = du[w], u2 = du2[w];
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                const T x0 = (x[idx + c * cs] - ui * x1[c] - u2 * x2[c]) / di;
                x2[c] = x1[c];
                x1[c] = x0;
                x[idx + c * cs] = x0;
                if (!isfinite(x0)) bad[c] = i;
            }
        }
    }
}

template <typename T, int CB>
__device__ void fac_solve_pt(const T *dd, const T *e, i64 h, i64 H, const T *d, T *x, i64 base, i64 es, i64 cs, int m, int n,
                             int *bad) {
    T y[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) {
        y[c] = T(0);
        bad[c] = -1;
        if (c < m) {
            y[c] = d[base + c * cs];
            x[base + c * cs] = y[c];
        }
    }
#pragma unroll 1
    for (int i = 1; i < n; i++) {
        const T ei = e[(i64)(i - 1) * H + h];
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = d[idx + c * cs] - y[c] * ei;
                x[idx + c * cs] = y[c];
            }
        }
    }
    {
        const T di = dd[(i64)(n - 1) * H + h];
        const i64 idx = base + (i64)(n - 1) * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = x[idx + c * cs] / di;
                x[idx + c * cs] = y[c];
                if (!isfinite(y[c])) bad[c] = n - 1;
            }
        }
    }
#pragma unroll 1
    for (int i = n - 2; i >= 0; i--) {
        const i64 w = (i64)i * H + h;
        const T di = dd[w], ei = e[w];
        const i64 idx = base + (i64)i * es;
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m) {
                y[c] = x[idx + c * cs] / di - y[c] * ei;
                x[idx + c * cs] = y[c];
                if (!isfinite(y[c])) bad[c] = i;
            }
        }
    }
}

// fac_fill_nan sets the n rows of column col of system g to NaN.
template <typename T> __device__ void fac_fill_nan(T *x, i64 base, i64 es, int n) {
    const T q = nan_of<T>();
#pragma unroll 1
    for (int i = 0; i < n; i++) x[base + (i64)i * es] = q;
}

// fac_solve_kernel solves system g for nrhs columns, CB at a time, with
// the factors of kind K (FAC_LU, FAC_GT, FAC_PT; FAC_NONE: each system's
// kind, LU or GT, as Auto left them). A system whose factorization failed
// gets NaN in every column; a column whose solution is not finite gets
// NaN, and the first such column of system g is reported: status[g] =
// row+1, status[G+1+g] = the column, status[G] = 1. shared: every system
// uses held system 0's factors.
template <typename T, int K, int CB>
__device__ void fac_solve_kernel(const T *f0, const T *f1, const T *f2, const T *f3, const unsigned char *ipiv,
                                 const unsigned char *kind, const T *d, T *x, int n, int G, int shared, i64 es, i64 bs,
                                 i64 cs, int nrhs, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    const i64 h = shared ? 0 : g;
    const i64 H = shared ? 1 : G;
    const i64 base = (i64)g * bs;
    const unsigned char kd = kind[h];
    if (kd == FAC_FAILED) {
#pragma unroll 1
        for (int j = 0; j < nrhs; j++) fac_fill_nan<T>(x, base + (i64)j * cs, es, n);
        return;
    }
    int badcol = -1, badrow = -1;
#pragma unroll 1
    for (int j0 = 0; j0 < nrhs; j0 += CB) {
        const int m = min(CB, nrhs - j0);
        const i64 b0 = base + (i64)j0 * cs;
        int bad[CB];
        if (K == FAC_LU || (K == FAC_NONE && kd == FAC_LU)) {
            fac_solve_lu<T, CB>(f0, f1, f2, h, H, d, x, b0, es, cs, m, n, bad);
        } else if (K == FAC_PT) {
            fac_solve_pt<T, CB>(f0, f1, h, H, d, x, b0, es, cs, m, n, bad);
        } else {
            fac_solve_gt<T, CB>(f0, f1, f2, f3, ipiv, h, H, d, x, b0, es, cs, m, n, bad);
        }
#pragma unroll
        for (int c = 0; c < CB; c++) {
            if (c < m && bad[c] >= 0) {
                fac_fill_nan<T>(x, b0 + c * cs, es, n);
                if (badcol < 0) {
                    badcol = j0 + c;
                    badrow = bad[c];
                }
            }
        }
    }
    if (badcol >= 0) {
        status[g] = badrow + 1;
        status[G + 1 + g] = badcol;
        status[G] = 1;
    }
}

// ptsv_kernel solves each symmetric positive definite system (diagonal b,
// off-diagonal c; a is not read) by L·D·Lᵀ as tri.PTSV does: the factor
// and the forward substitution in one sweep, D and L's multipliers kept in
// work (two planes, interleaved), then the back substitution. A pivot that
// is not positive, or a solution that is not finite, fails the system at
// its row (status, NaN in x).
template <typename T>
__device__ void ptsv_kernel(Coeffs<T> k, const T *d, T *x, T *work, int n, int G, i64 es, i64 bs, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    const i64 plane = (i64)n * G;
    T *wd = work, *we = work + plane;
    T p = k.B(base);
    if (!positive_pivot(p)) { fail_system(x, n, G, es, bs, g, 0, status); return; }
    wd[g] = p;
    T y = d[base];
    x[base] = y;
#pragma unroll 1
    for (int i = 1; i < n; i++) {
        const i64 idx = base + (i64)i * es;
        const T ci = k.C(idx - es);
        const T ei = ci / p;
        we[(i64)(i - 1) * G + g] = ei;
        p = k.B(idx) - ei * ci;
        if (!positive_pivot(p)) { fail_system(x, n, G, es, bs, g, i, status); return; }
        wd[(i64)i * G + g] = p;
        y = d[idx] - y * ei;
        x[idx] = y;
    }
    const i64 last = base + (i64)(n - 1) * es;
    T xi = x[last] / p;
    x[last] = xi;
    int bad = isfinite(xi) ? -1 : n - 1;
#pragma unroll 1
    for (int i = n - 2; i >= 0; i--) {
        const i64 idx = base + (i64)i * es;
        const i64 w = (i64)i * G + g;
        xi = x[idx] / wd[w] - xi * we[w];
        x[idx] = xi;
        if (!isfinite(xi)) bad = i;
    }
    if (bad >= 0) fail_system(x, n, G, es, bs, g, bad, status);
}

#define FAC(T, S, M)                                                                                                      \
    extern "C" __global__ void fac_k##M##_##S(const T *a, const T *b, const T *c, T ca, T cb, T cc, int isConst, T *f0,    \
                                              T *f1, T *f2, T *f3, unsigned char *ipiv, unsigned char *kind, int n, int H, \
                                              i64 es, i64 bs, int *status) {                                              \
        fac_kernel<T, M>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, f0, f1, f2, f3, ipiv, kind, n, H, es, bs, status);     \
    }
#define FAC_MODES(T, S) FAC(T, S, 0) FAC(T, S, 1) FAC(T, S, 2) FAC(T, S, 3) FAC(T, S, 4)
FAC_MODES(float, f32)
FAC_MODES(double, f64)

#define FAC_SOLVE(T, S, K, CB)                                                                                              \
    extern "C" __global__ void fac_solve_k##K##_p##CB##_##S(const T *f0, const T *f1, const T *f2, const T *f3,            \
                                                            const unsigned char *ipiv, const unsigned char *kind, const T *d, \
                                                            T *x, int n, int G, int shared, i64 es, i64 bs, i64 cs, int nrhs, \
                                                            int *status) {                                                  \
        fac_solve_kernel<T, K, CB>(f0, f1, f2, f3, ipiv, kind, d, x, n, G, shared, es, bs, cs, nrhs, status);              \
    }
#define FAC_SOLVE_K(T, S, K) FAC_SOLVE(T, S, K, 1) FAC_SOLVE(T, S, K, 4) FAC_SOLVE(T, S, K, 8)
#define FAC_SOLVES(T, S) FAC_SOLVE_K(T, S, 0) FAC_SOLVE_K(T, S, 1) FAC_SOLVE_K(T, S, 2) FAC_SOLVE_K(T, S, 3)
FAC_SOLVES(float, f32)
FAC_SOLVES(double, f64)

#define PTSV(T, S)                                                                                           \
    extern "C" __global__ void ptsv_##S(const T *a, const T *b, const T *c, const T *d, T *x, T *work, int n,  \
                                        int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst, int *status) {    \
        ptsv_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, work, n, G, es, bs, status);              \
    }
PTSV(float, f32)
PTSV(double, f64)
