// Stored factorizations of tridiagonal batches, one thread per system:
// factor once (fac_k*), solve any number of right-hand-side columns with the
// factors (fac_solve_k*_p*_d*; fac_staged_k*_p*_d* for batches whose rows
// are adjacent, a warp per 32 systems), and the one-shot L·D·Lᵀ solve of
// LDLT plans (ptsv). Every sweep loads rows ahead of its recurrence
// (fac_pipe, fac_tiles). The CPU twins are in tridiag/internal/tri (LUFactor/LUSolve,
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

// Software pipelining. Each thread walks its system row by row with a
// dependent recurrence; a row's loads do not depend on the recurrence, but
// issued in the row's turn they leave a warp one load in flight, and since
// x may alias d (and the factors the coefficients' arrays, as far as the
// compiler knows) no load may pass an earlier store: every column of every
// row would wait a full memory latency. fac_pipe issues the loads of the
// next D rows into a ring of D register slots before the recurrence
// consumes them, each row's loads being one instruction group with all
// its columns: D rows of loads are in flight while a row is computed. The
// arithmetic is the recurrence's own, in its order: the results are
// unchanged, bit for bit. Rows prefetched ahead of a store are rows the
// sweep has not written yet, so an in-place solve (x = d) reads what it
// would read without the prefetch.

// FAC_DEPTH is the rows the factor kernels (fac_k*) and ptsv load ahead.
#define FAC_DEPTH 8

// fac_pipe calls use(i, slot) for the count rows i = first, first+step,
// … in order, with the slot that load(i, slot) filled D rows earlier (the
// first D loads before the first use). use returns false to stop: then
// fac_pipe returns that row; otherwise −1. D is a compile-time constant so
// that the ring is held in registers (the loop is unrolled D times).
template <int D, typename S, typename L, typename U>
__device__ __forceinline__ int fac_pipe(int first, int step, int count, const L &load, const U &use) {
    S s[D];
#pragma unroll
    for (int k = 0; k < D; k++)
        if (k < count) load(first + k * step, s[k]);
#pragma unroll 1
    for (int j0 = 0; j0 < count; j0 += D) {
#pragma unroll
        for (int k = 0; k < D; k++) {
            const int j = j0 + k;
            if (j < count) {
                const int i = first + j * step;
                if (!use(i, s[k])) return i;
                if (j + D < count) load(i + D * step, s[k]);
            }
        }
    }
    return -1;
}

// fac_abc is a pipeline slot of the factor kernels: one row's coefficients.
template <typename T> struct fac_abc {
    T a, b, c;
};

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
    const int bad = fac_pipe<FAC_DEPTH, fac_abc<T>>(
        1, 1, n - 1,
        [&](int i, fac_abc<T> &s) {
            const i64 idx = base + (i64)i * es;
            s.a = k.A(idx);
            s.b = k.B(idx);
            s.c = k.C(idx);
        },
        [&](int i, const fac_abc<T> &s) {
            const T ai = s.a, bi = s.b;
            const T f = ai * cprev;
            if (bounded && !(fabs((double)f) <= FAC_GROWTH * fabs((double)bi))) return false;
            const T prev = piv;
            piv = bi - f;
            if (bad_divisor(piv)) return false;
            const i64 w = (i64)i * H + h;
            l[w] = ai / prev;
            r[w] = T(1) / piv;
            cprev = s.c / piv;
            cp[w] = cprev;
            return true;
        });
    if (bad >= 0) return bad;
    cp[(i64)(n - 1) * H + h] = T(0);
    return -1;
}

// fac_gt factors system h with partial pivoting as gttrf (tri.GTTRF);
// returns -1, or the first row whose pivot is zero.
template <typename T>
__device__ int fac_gt(const Coeffs<T> &k, i64 base, i64 es, int n, T *dl, T *dd, T *du, T *du2, unsigned char *ipiv, i64 h,
                      i64 H) {
    // Row i being eliminated: cdd = dd[i], cdu = du[i]; the next row's
    // ndd = dd[i+1], ndu = du[i+1] as earlier steps left them. The slot of
    // step i holds row i+1's coefficients.
    T cdd = k.B(base);
    T cdu = n > 1 ? k.C(base) : T(0);
    const int bad = fac_pipe<FAC_DEPTH, fac_abc<T>>(
        0, 1, n - 1,
        [&](int i, fac_abc<T> &s) {
            const i64 nidx = base + (i64)(i + 1) * es;
            s.a = k.A(nidx);
            s.b = k.B(nidx);
            s.c = (i + 1 < n - 1) ? k.C(nidx) : T(0);
        },
        [&](int i, const fac_abc<T> &s) {
            const T dli = s.a;
            T ndd = s.b;
            T ndu = s.c;
            T du2i = T(0);
            T f = T(0);
            unsigned char p = 0;
            if (fabs(cdd) >= fabs(dli)) {
                if (cdd == T(0)) return false;
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
            return true;
        });
    if (bad >= 0) return bad;
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
    // The slot of step i holds c[i] and b[i+1] (a is not read).
    const int bad = fac_pipe<FAC_DEPTH, fac_abc<T>>(
        0, 1, n - 1,
        [&](int i, fac_abc<T> &s) {
            const i64 idx = base + (i64)i * es;
            s.a = T(0);
            s.c = k.C(idx);
            s.b = k.B(idx + es);
        },
        [&](int i, const fac_abc<T> &s) {
            if (!positive_pivot(p)) return false;
            const T ei = s.c;
            const T q = ei / p;
            const i64 w = (i64)i * H + h;
            dd[w] = p;
            e[w] = q;
            p = s.b - q * ei;
            return true;
        });
    if (bad >= 0) return bad;
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
// g, loading D rows ahead (fac_pipe): the factors of each row are read
// once for the group, and a row's loads of every column are issued
// together. bad[c] gets the smallest row of column c whose solution is
// not finite (-1: none). Column c's rows are at base + c*cs + i*es of d
// and x.

// fac_slot is a pipeline slot of the solves: F factors of a row and the
// row's value in each of CB columns.
template <typename T, int F, int CB> struct fac_slot {
    T f[F];
    T v[CB];
};

// fac_load_cols loads row idx of the m live columns of src into v.
template <typename T, int CB>
__device__ __forceinline__ void fac_load_cols(T *v, const T *src, i64 idx, i64 cs, int m) {
#pragma unroll
    for (int c = 0; c < CB; c++) v[c] = c < m ? src[idx + c * cs] : T(0);
}

template <typename T, int CB, int D>
__device__ void fac_solve_lu(const T *l, const T *r, const T *cp, i64 h, i64 H, const T *d, T *x, i64 base, i64 es, i64 cs, int m,
                             int n, int *bad) {
    T y[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) {
        y[c] = T(0);
        bad[c] = -1;
    }
    // Forward: y_0 = d_0, y_i = d_i − l_i·y_{i−1}.
    fac_pipe<D, fac_slot<T, 1, CB>>(
        0, 1, n,
        [&](int i, fac_slot<T, 1, CB> &s) {
            s.f[0] = i > 0 ? l[(i64)i * H + h] : T(0);
            fac_load_cols<T, CB>(s.v, d, base + (i64)i * es, cs, m);
        },
        [&](int i, const fac_slot<T, 1, CB> &s) {
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    y[c] = i > 0 ? s.v[c] - s.f[0] * y[c] : s.v[c];
                    x[idx + c * cs] = y[c];
                }
            }
            return true;
        });
    // Backward: x_{n−1} = y_{n−1}·r_{n−1}, x_i = y_i·r_i − cp_i·x_{i+1}.
    fac_pipe<D, fac_slot<T, 2, CB>>(
        n - 1, -1, n,
        [&](int i, fac_slot<T, 2, CB> &s) {
            const i64 w = (i64)i * H + h;
            s.f[0] = r[w];
            s.f[1] = i < n - 1 ? cp[w] : T(0);
            fac_load_cols<T, CB>(s.v, x, base + (i64)i * es, cs, m);
        },
        [&](int i, const fac_slot<T, 2, CB> &s) {
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    y[c] = i < n - 1 ? s.v[c] * s.f[0] - s.f[1] * y[c] : s.v[c] * s.f[0];
                    x[idx + c * cs] = y[c];
                    if (!isfinite(y[c])) bad[c] = i;
                }
            }
            return true;
        });
}

template <typename T, int CB, int D>
__device__ void fac_solve_gt(const T *dl, const T *dd, const T *du, const T *du2, const unsigned char *ipiv, i64 h, i64 H,
                             const T *d, T *x, i64 base, i64 es, i64 cs, int m, int n, int *bad) {
    T cur[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) bad[c] = -1;
    fac_load_cols<T, CB>(cur, d, base, cs, m);
    // Forward: the interchanges and L. Row i is final after step i; the
    // pending row i+1 is carried in cur. The slot of step i holds dl_i,
    // the interchange (f[1] ≠ 0) and row i+1 of d.
    fac_pipe<D, fac_slot<T, 2, CB>>(
        0, 1, n - 1,
        [&](int i, fac_slot<T, 2, CB> &s) {
            const i64 w = (i64)i * H + h;
            s.f[0] = dl[w];
            s.f[1] = ipiv[w] != 0 ? T(1) : T(0);
            fac_load_cols<T, CB>(s.v, d, base + (i64)(i + 1) * es, cs, m);
        },
        [&](int i, const fac_slot<T, 2, CB> &s) {
            const T f = s.f[0];
            const bool p = s.f[1] != T(0);
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    const T nxt = s.v[c];
                    const T keep = p ? cur[c] : nxt;
                    const T done = p ? nxt : cur[c];
                    x[idx + c * cs] = done;
                    cur[c] = keep - f * done;
                }
            }
            return true;
        });
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
    // Rows n−2 … 0: the slot holds d_i, du_i, du2_i and row i of x.
    fac_pipe<D, fac_slot<T, 3, CB>>(
        n - 2, -1, n - 1,
        [&](int i, fac_slot<T, 3, CB> &s) {
            const i64 w = (i64)i * H + h;
            s.f[0] = dd[w];
            s.f[1] = du[w];
            s.f[2] = i < n - 2 ? du2[w] : T(0);
            fac_load_cols<T, CB>(s.v, x, base + (i64)i * es, cs, m);
        },
        [&](int i, const fac_slot<T, 3, CB> &s) {
            const T di = s.f[0], ui = s.f[1], u2 = s.f[2];
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    const T x0 = i < n - 2 ? (s.v[c] - ui * x1[c] - u2 * x2[c]) / di : (s.v[c] - ui * x1[c]) / di;
                    x2[c] = x1[c];
                    x1[c] = x0;
                    x[idx + c * cs] = x0;
                    if (!isfinite(x0)) bad[c] = i;
                }
            }
            return true;
        });
}

template <typename T, int CB, int D>
__device__ void fac_solve_pt(const T *dd, const T *e, i64 h, i64 H, const T *d, T *x, i64 base, i64 es, i64 cs, int m, int n,
                             int *bad) {
    T y[CB];
#pragma unroll
    for (int c = 0; c < CB; c++) {
        y[c] = T(0);
        bad[c] = -1;
    }
    // Forward: y_0 = d_0, y_i = d_i − y_{i−1}·e_{i−1}.
    fac_pipe<D, fac_slot<T, 1, CB>>(
        0, 1, n,
        [&](int i, fac_slot<T, 1, CB> &s) {
            s.f[0] = i > 0 ? e[(i64)(i - 1) * H + h] : T(0);
            fac_load_cols<T, CB>(s.v, d, base + (i64)i * es, cs, m);
        },
        [&](int i, const fac_slot<T, 1, CB> &s) {
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    y[c] = i > 0 ? s.v[c] - y[c] * s.f[0] : s.v[c];
                    x[idx + c * cs] = y[c];
                }
            }
            return true;
        });
    // Backward: x_{n−1} = y_{n−1}/d_{n−1}, x_i = y_i/d_i − x_{i+1}·e_i.
    fac_pipe<D, fac_slot<T, 2, CB>>(
        n - 1, -1, n,
        [&](int i, fac_slot<T, 2, CB> &s) {
            const i64 w = (i64)i * H + h;
            s.f[0] = dd[w];
            s.f[1] = i < n - 1 ? e[w] : T(0);
            fac_load_cols<T, CB>(s.v, x, base + (i64)i * es, cs, m);
        },
        [&](int i, const fac_slot<T, 2, CB> &s) {
            const i64 idx = base + (i64)i * es;
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m) {
                    y[c] = i < n - 1 ? s.v[c] / s.f[0] - y[c] * s.f[1] : s.v[c] / s.f[0];
                    x[idx + c * cs] = y[c];
                    if (!isfinite(y[c])) bad[c] = i;
                }
            }
            return true;
        });
}

// fac_fill_nan sets the n rows of column col of system g to NaN.
template <typename T> __device__ void fac_fill_nan(T *x, i64 base, i64 es, int n) {
    const T q = nan_of<T>();
#pragma unroll 1
    for (int i = 0; i < n; i++) x[base + (i64)i * es] = q;
}

// fac_solve_kernel solves system g for nrhs columns, CB at a time, with
// the factors of kind K (FAC_LU, FAC_GT, FAC_PT; FAC_NONE: each system's
// kind, LU or GT, as Auto left them), loading D rows ahead. A system whose
// factorization failed gets NaN in every column; a column whose solution
// is not finite gets NaN, and the first such column of system g is
// reported: status[g] = row+1, status[G+1+g] = the column, status[G] = 1.
// shared: every system uses held system 0's factors.
template <typename T, int K, int CB, int D>
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
            fac_solve_lu<T, CB, D>(f0, f1, f2, h, H, d, x, b0, es, cs, m, n, bad);
        } else if (K == FAC_PT) {
            fac_solve_pt<T, CB, D>(f0, f1, h, H, d, x, b0, es, cs, m, n, bad);
        } else {
            fac_solve_gt<T, CB, D>(f0, f1, f2, f3, ipiv, h, H, d, x, b0, es, cs, m, n, bad);
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

// Staged solves for batches whose rows are adjacent (element stride 1:
// contiguous and padded layouts). A thread per system reading its own
// rows makes a warp touch 32 sectors a load for 4 or 8 useful bytes each;
// here a warp handles 32 systems together: it loads a tile of R rows ×
// 32 systems of each column so that a load instruction covers 32/R
// systems × R adjacent rows (whole sectors), transposes it through shared
// memory, runs each system's recurrence on its column of the tile (the
// arithmetic of the row kernels, in their order: the same results, bit
// for bit), and writes the tile back the same way. The next tile's loads
// are issued before the current tile is computed. The factors are read
// by each thread from their interleaved planes (coalesced), R rows
// ahead. Kinds LU, GT and PT (not Auto's mix, whose systems take
// different sweeps).

// FAC_TILE_WARPS is the warps of a block of the staged kernels (blocks of
// FAC_TILE_WARPS·32 threads, tridiaggpu.factorBlock).
#define FAC_TILE_WARPS 4

// fac_tile_pad is the row stride of a tile (in values): 32 systems and
// 32/R more, so that both the transposing stores and the per-system reads
// hit 32 different banks.
template <int R> struct fac_tile_pad {
    static const int value = 32 + 32 / R;
};

// fac_tiles runs use(i, f, v) on each lane's own system (s0 + lane) for
// the count rows i = first, first+step, …, v[c] being row i+off of column
// c of src (staged through tile) and f the F factors that loadf(i, f)
// read for the row; v as use leaves it is written to row i of dst. src
// and dst point at the column group's first column; column c of system s
// at s·bs + c·cs, row i at + i. Every lane of the warp calls it with the
// same arguments but lane (s0 + lane ≥ G: a lane without a system, whose
// loadf must not read and whose v is dropped).
template <typename T, int CB, int R, int F, typename LF, typename U>
__device__ __forceinline__ void fac_tiles(T (*tile)[R][fac_tile_pad<R>::value], int lane, i64 s0, int G, i64 bs, i64 cs,
                                          int m, const T *src, T *dst, int first, int step, int count, int off,
                                          const LF &loadf, const U &use) {
    const int Q = 32 / R; // systems a load instruction covers
    const int rr = lane % R, q = lane / R;
    const int ntiles = (count + R - 1) / R;
    T pre[CB][R];
    T fpre[R][F];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int k = 0; k < F; k++) fpre[r][k] = T(0);
    // load issues the loads of tile t: lane (rr, q) takes row t·R+rr of
    // systems j·Q+q, and its own system's factors of the tile's rows.
    auto load = [&](int t) {
        const int jr = t * R + rr;
        const i64 row = (i64)first + (i64)jr * step + off;
#pragma unroll
        for (int j = 0; j < R; j++) {
            const i64 s = s0 + j * Q + q;
            const bool ok = jr < count && s < G;
            const i64 a = s * bs + row;
#pragma unroll
            for (int c = 0; c < CB; c++) pre[c][j] = (ok && c < m) ? src[a + c * cs] : T(0);
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int jj = t * R + r;
            if (jj < count) loadf(first + jj * step, fpre[r]);
        }
    };
    if (ntiles > 0) load(0);
#pragma unroll 1
    for (int t = 0; t < ntiles; t++) {
#pragma unroll
        for (int c = 0; c < CB; c++)
#pragma unroll
            for (int j = 0; j < R; j++) tile[c][rr][j * Q + q] = pre[c][j];
        T fcur[R][F];
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int k = 0; k < F; k++) fcur[r][k] = fpre[r][k];
        __syncwarp();
        if (t + 1 < ntiles) load(t + 1);
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int jj = t * R + r;
            if (jj < count) {
                T v[CB];
#pragma unroll
                for (int c = 0; c < CB; c++) v[c] = tile[c][r][lane];
                use(first + jj * step, fcur[r], v);
#pragma unroll
                for (int c = 0; c < CB; c++) tile[c][r][lane] = v[c];
            }
        }
        __syncwarp();
        {
            const int jr = t * R + rr;
            const i64 row = (i64)first + (i64)jr * step;
#pragma unroll
            for (int j = 0; j < R; j++) {
                const i64 s = s0 + j * Q + q;
                if (jr < count && s < G) {
#pragma unroll
                    for (int c = 0; c < CB; c++)
                        if (c < m) dst[s * bs + row + c * cs] = tile[c][rr][j * Q + q];
                }
            }
        }
        __syncwarp();
    }
}

// fac_staged_kernel is fac_solve_kernel for kinds K = FAC_LU, FAC_GT,
// FAC_PT on a batch of element stride 1, a warp per 32 systems
// (fac_tiles, tiles of R rows); the same results and status.
template <typename T, int K, int CB, int R>
__device__ void fac_staged_kernel(const T *f0, const T *f1, const T *f2, const T *f3, const unsigned char *ipiv,
                                  const unsigned char *kind, const T *d, T *x, int n, int G, int shared, i64 bs, i64 cs,
                                  int nrhs, int *status) {
    __shared__ T tiles[FAC_TILE_WARPS][CB][R][fac_tile_pad<R>::value];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const i64 s0 = ((i64)blockIdx.x * FAC_TILE_WARPS + w) * 32;
    if (s0 >= G) return; // the whole warp
    T(*tile)[R][fac_tile_pad<R>::value] = tiles[w];
    const i64 g = s0 + lane;
    const bool valid = g < G;
    const i64 h = shared ? 0 : (valid ? g : 0);
    const i64 H = shared ? 1 : G;
    const unsigned char kd = valid ? kind[h] : FAC_FAILED;
    const i64 base = g * bs;
    int badcol = -1, badrow = -1;
#pragma unroll 1
    for (int j0 = 0; j0 < nrhs; j0 += CB) {
        const int m = min(CB, nrhs - j0);
        const i64 c0 = (i64)j0 * cs;
        const T *dc = d + c0;
        T *xc = x + c0;
        int bad[CB];
#pragma unroll
        for (int c = 0; c < CB; c++) bad[c] = -1;
        if (K == FAC_LU || K == FAC_PT) {
            // LU: y_i = d_i − l_i·y_{i−1}, x_i = y_i·r_i − cp_i·x_{i+1};
            // PT: y_i = d_i − y_{i−1}·e_{i−1}, x_i = y_i/d_i − x_{i+1}·e_i.
            T y[CB];
#pragma unroll
            for (int c = 0; c < CB; c++) y[c] = T(0);
            fac_tiles<T, CB, R, 1>(
                tile, lane, s0, G, bs, cs, m, dc, xc, 0, 1, n, 0,
                [&](int i, T *f) {
                    if (valid && i > 0) f[0] = K == FAC_LU ? f0[(i64)i * H + h] : f1[(i64)(i - 1) * H + h];
                },
                [&](int i, const T *f, T *v) {
#pragma unroll
                    for (int c = 0; c < CB; c++) {
                        if (K == FAC_LU)
                            y[c] = i > 0 ? v[c] - f[0] * y[c] : v[c];
                        else
                            y[c] = i > 0 ? v[c] - y[c] * f[0] : v[c];
                        v[c] = y[c];
                    }
                });
            fac_tiles<T, CB, R, 2>(
                tile, lane, s0, G, bs, cs, m, xc, xc, n - 1, -1, n, 0,
                [&](int i, T *f) {
                    if (!valid) return;
                    const i64 wi = (i64)i * H + h;
                    if (K == FAC_LU) {
                        f[0] = f1[wi];
                        f[1] = i < n - 1 ? f2[wi] : T(0);
                    } else {
                        f[0] = f0[wi];
                        f[1] = i < n - 1 ? f1[wi] : T(0);
                    }
                },
                [&](int i, const T *f, T *v) {
#pragma unroll
                    for (int c = 0; c < CB; c++) {
                        if (K == FAC_LU)
                            y[c] = i < n - 1 ? v[c] * f[0] - f[1] * y[c] : v[c] * f[0];
                        else
                            y[c] = i < n - 1 ? v[c] / f[0] - y[c] * f[1] : v[c] / f[0];
                        v[c] = y[c];
                        if (c < m && !isfinite(y[c])) bad[c] = i;
                    }
                });
        } else {
            // GT (gttrs): the forward sweep's step i takes row i+1 of d
            // (off = 1) and finishes row i; rows n−1 and n−2 of U as in
            // fac_solve_gt.
            T cur[CB];
#pragma unroll
            for (int c = 0; c < CB; c++) cur[c] = (valid && c < m) ? dc[base + c * cs] : T(0);
            fac_tiles<T, CB, R, 2>(
                tile, lane, s0, G, bs, cs, m, dc, xc, 0, 1, n - 1, 1,
                [&](int i, T *f) {
                    if (!valid) return;
                    const i64 wi = (i64)i * H + h;
                    f[0] = f0[wi];
                    f[1] = ipiv[wi] != 0 ? T(1) : T(0);
                },
                [&](int i, const T *f, T *v) {
                    const bool p = f[1] != T(0);
#pragma unroll
                    for (int c = 0; c < CB; c++) {
                        const T nxt = v[c];
                        const T keep = p ? cur[c] : nxt;
                        const T done = p ? nxt : cur[c];
                        v[c] = done;
                        cur[c] = keep - f[0] * done;
                    }
                });
            T x1[CB], x2[CB];
            {
                const T di = valid ? f1[(i64)(n - 1) * H + h] : T(1);
                const i64 idx = base + (i64)(n - 1);
#pragma unroll
                for (int c = 0; c < CB; c++) {
                    x1[c] = T(0);
                    x2[c] = T(0);
                    if (c < m) {
                        x1[c] = cur[c] / di;
                        if (valid) xc[idx + c * cs] = x1[c];
                        if (!isfinite(x1[c])) bad[c] = n - 1;
                    }
                }
            }
            __syncwarp();
            fac_tiles<T, CB, R, 3>(
                tile, lane, s0, G, bs, cs, m, xc, xc, n - 2, -1, n - 1, 0,
                [&](int i, T *f) {
                    if (!valid) return;
                    const i64 wi = (i64)i * H + h;
                    f[0] = f1[wi];
                    f[1] = f2[wi];
                    f[2] = i < n - 2 ? f3[wi] : T(0);
                },
                [&](int i, const T *f, T *v) {
#pragma unroll
                    for (int c = 0; c < CB; c++) {
                        const T x0 = i < n - 2 ? (v[c] - f[1] * x1[c] - f[2] * x2[c]) / f[0] : (v[c] - f[1] * x1[c]) / f[0];
                        x2[c] = x1[c];
                        x1[c] = x0;
                        v[c] = x0;
                        if (c < m && !isfinite(x0)) bad[c] = i;
                    }
                });
        }
        if (valid && kd != FAC_FAILED) {
#pragma unroll
            for (int c = 0; c < CB; c++) {
                if (c < m && bad[c] >= 0) {
                    fac_fill_nan<T>(x, base + c0 + c * cs, 1, n);
                    if (badcol < 0) {
                        badcol = j0 + c;
                        badrow = bad[c];
                    }
                }
            }
        }
        __syncwarp();
    }
    if (!valid) return;
    if (kd == FAC_FAILED) {
#pragma unroll 1
        for (int j = 0; j < nrhs; j++) fac_fill_nan<T>(x, base + (i64)j * cs, 1, n);
        return;
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
// work (two planes, interleaved), then the back substitution, both sweeps
// loading FAC_DEPTH rows ahead (fac_pipe). A pivot that is not positive,
// or a solution that is not finite, fails the system at its row (status,
// NaN in x).
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
    // Rows 1 … n−1: the slot holds c_{i−1}, b_i and d_i.
    const int stop = fac_pipe<FAC_DEPTH, fac_abc<T>>(
        1, 1, n - 1,
        [&](int i, fac_abc<T> &s) {
            const i64 idx = base + (i64)i * es;
            s.c = k.C(idx - es);
            s.b = k.B(idx);
            s.a = d[idx];
        },
        [&](int i, const fac_abc<T> &s) {
            const T ci = s.c;
            const T ei = ci / p;
            we[(i64)(i - 1) * G + g] = ei;
            p = s.b - ei * ci;
            if (!positive_pivot(p)) return false;
            wd[(i64)i * G + g] = p;
            y = s.a - y * ei;
            x[base + (i64)i * es] = y;
            return true;
        });
    if (stop >= 0) { fail_system(x, n, G, es, bs, g, stop, status); return; }
    const i64 last = base + (i64)(n - 1) * es;
    T xi = x[last] / p;
    x[last] = xi;
    int bad = isfinite(xi) ? -1 : n - 1;
    // Rows n−2 … 0: the slot holds x_i, D_i and e_i.
    fac_pipe<FAC_DEPTH, fac_abc<T>>(
        n - 2, -1, n - 1,
        [&](int i, fac_abc<T> &s) {
            const i64 w = (i64)i * G + g;
            s.a = x[base + (i64)i * es];
            s.b = wd[w];
            s.c = we[w];
        },
        [&](int i, const fac_abc<T> &s) {
            xi = s.a / s.b - xi * s.c;
            x[base + (i64)i * es] = xi;
            if (!isfinite(xi)) bad = i;
            return true;
        });
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

// The solve kernels fac_solve_k<K>_p<CB>_d<D>: factors of kind K, CB
// columns at a time, D rows loaded ahead. tridiaggpu.solveVariants lists
// them and solveDepth picks the default D of each CB; every kind has the
// defaults (p1_d4, p4_d4, p8_d2), the single kinds the variants that
// BenchmarkFactor compares too (deeper ones, 16 rows for one column or 8
// for four, spill gttrf's FP64 solve). No launch bounds: with them ptxas
// aims at fewer registers and spills; without, every kernel here
// assembles spill-free within 255 registers (scripts/check-ptx.sh).
#define FAC_SOLVE(T, S, K, CB, D)                                                                                          \
    extern "C" __global__ void fac_solve_k##K##_p##CB##_d##D##_##S(const T *f0, const T *f1, const T *f2, const T *f3,      \
                                                                   const unsigned char *ipiv, const unsigned char *kind,    \
                                                                   const T *d, T *x, int n, int G, int shared, i64 es,      \
                                                                   i64 bs, i64 cs, int nrhs, int *status) {                 \
        fac_solve_kernel<T, K, CB, D>(f0, f1, f2, f3, ipiv, kind, d, x, n, G, shared, es, bs, cs, nrhs, status);            \
    }
#define FAC_SOLVE_DEFAULTS(T, S, K) FAC_SOLVE(T, S, K, 1, 4) FAC_SOLVE(T, S, K, 4, 4) FAC_SOLVE(T, S, K, 8, 2)
#define FAC_SOLVE_VARIANTS(T, S, K)                                                                                        \
    FAC_SOLVE_DEFAULTS(T, S, K)                                                                                            \
    FAC_SOLVE(T, S, K, 1, 8) FAC_SOLVE(T, S, K, 4, 2) FAC_SOLVE(T, S, K, 8, 4)
#define FAC_SOLVES(T, S) FAC_SOLVE_DEFAULTS(T, S, 0) FAC_SOLVE_VARIANTS(T, S, 1) FAC_SOLVE_VARIANTS(T, S, 2) FAC_SOLVE_VARIANTS(T, S, 3)
FAC_SOLVES(float, f32)
FAC_SOLVES(double, f64)

// The staged solve kernels fac_staged_k<K>_p<CB>_d<R> (element stride 1;
// es is not read): kinds LU, GT, PT, CB columns at a time, tiles of R
// rows (32 bytes or more of a system's column a tile).
#define FAC_STAGED(T, S, K, CB, R)                                                                                         \
    extern "C" __global__ void fac_staged_k##K##_p##CB##_d##R##_##S(const T *f0, const T *f1, const T *f2, const T *f3,     \
                                                                    const unsigned char *ipiv, const unsigned char *kind,   \
                                                                    const T *d, T *x, int n, int G, int shared, i64 es,     \
                                                                    i64 bs, i64 cs, int nrhs, int *status) {                \
        fac_staged_kernel<T, K, CB, R>(f0, f1, f2, f3, ipiv, kind, d, x, n, G, shared, bs, cs, nrhs, status);              \
    }
#define FAC_STAGED_K(T, S, K) FAC_STAGED(T, S, K, 1, 8) FAC_STAGED(T, S, K, 4, 8) FAC_STAGED(T, S, K, 8, 4)
#define FAC_STAGEDS(T, S) FAC_STAGED_K(T, S, 1) FAC_STAGED_K(T, S, 2) FAC_STAGED_K(T, S, 3)
FAC_STAGEDS(float, f32)
FAC_STAGEDS(double, f64)

#define PTSV(T, S)                                                                                           \
    extern "C" __global__ void ptsv_##S(const T *a, const T *b, const T *c, const T *d, T *x, T *work, int n,  \
                                        int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst, int *status) {    \
        ptsv_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, work, n, G, es, bs, status);              \
    }
PTSV(float, f32)
PTSV(double, f64)
