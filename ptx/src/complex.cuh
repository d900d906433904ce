// Complex tridiagonal systems, one thread per system: Thomas, Gaussian
// elimination with partial pivoting (gtsv) and Auto's choice between them,
// with constant coefficients and periodic (cyclic) systems. The CPU twins
// are tri.ThomasC, tri.ThomasBoundedC, tri.GTSVC and the complex solver of
// package tridiag (cpuComplexSolver: solveOne, solveCyclic): the kernels do
// their operations in the same order, with Go's complex arithmetic, so that
// the results agree bit for bit:
//   - addition, subtraction and negation part by part in the element's
//     precision;
//   - (a+bi)(c+di) = (ac − bd) + (ad + bc)i, each product and sum rounded
//     (no fused multiply-add: the PTX is built with -fmad=false), in double
//     precision also for complex64, rounded to float at the end (Go widens
//     complex64 products to float64);
//   - division by Smith's algorithm with the C99 corrections for infinite
//     and zero operands, as Go's runtime does it (complex128div), in double
//     precision also for complex64 (Go converts complex64 operands to
//     complex128, divides and rounds back);
//   - Cabs1(v) = |re v| + |im v| in double precision: gtsv's pivot choice
//     and Auto's growth test |a_i c'_{i-1}| ≤ 2|b_i| (tri.PivotGrowthBound).
// Elements are float2 (complex64) and double2 (complex128), real part first.
//
// Layout and status codes follow common.cuh. The work array holds planes of
// n*G elements in the interleaved layout (row i of system g at i*G + g):
// Thomas's c' (plane 0) and forward solution (plane 1), gtsv's upper factor
// dd, du, du2 (planes 0, 1, 2), and, for a cyclic system, the solution z
// of the second right-hand side (plane 3).
//
// Kernel parameters: the constant coefficients as real and imaginary parts
// (ca_real, ca_imag, ...); bounded: Auto's growth test (0: Auto falls back
// to gtsv only where Thomas meets a zero or non-finite pivot, PivotNever);
// cyclic: periodic systems (corners a[0] and c[n-1]) by Sherman–Morrison
// as the CPU does, with γ = −b[0] (−1 where b[0] = 0). A system that breaks down
// reports the twin's row: the pivot's row, the first non-finite row of x,
// or n−1 where the Sherman–Morrison denominator is zero or not finite.
#pragma once
#include "common.cuh"

// go_cdiv_fix is the end of Go's complex128div for a quotient whose parts
// are both NaN: the C99 corrections to infinities and zeros (out of line:
// it is rare, and every division would otherwise carry it).
__device__ __noinline__ double2 go_cdiv_fix(double2 n, double2 m, double e, double f) {
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    double a = n.x, b = n.y, c = m.x, d = m.y;
    if (c == 0.0 && d == 0.0 && (!isnan(a) || !isnan(b))) {
        e = copysign(inf, c) * a;
        f = copysign(inf, c) * b;
    } else if ((isinf(a) || isinf(b)) && isfinite(c) && isfinite(d)) {
        a = copysign(isinf(a) ? 1.0 : 0.0, a);
        b = copysign(isinf(b) ? 1.0 : 0.0, b);
        e = inf * (a * c + b * d);
        f = inf * (b * c - a * d);
    } else if ((isinf(c) || isinf(d)) && isfinite(a) && isfinite(b)) {
        c = copysign(isinf(c) ? 1.0 : 0.0, c);
        d = copysign(isinf(d) ? 1.0 : 0.0, d);
        e = 0.0 * (a * c + b * d);
        f = 0.0 * (b * c - a * d);
    }
    return make_double2(e, f);
}

// go_cdiv is Go's complex128 division (runtime complex128div): Smith's
// algorithm, then go_cdiv_fix where both parts are NaN.
__device__ __forceinline__ double2 go_cdiv(double2 n, double2 m) {
    double e, f;
    if (fabs(m.x) >= fabs(m.y)) {
        const double ratio = m.y / m.x;
        const double denom = m.x + ratio * m.y;
        e = (n.x + n.y * ratio) / denom;
        f = (n.y - n.x * ratio) / denom;
    } else {
        const double ratio = m.x / m.y;
        const double denom = m.y + ratio * m.x;
        e = (n.x * ratio + n.y) / denom;
        f = (n.y * ratio - n.x) / denom;
    }
    if (isnan(e) && isnan(f)) return go_cdiv_fix(n, m, e, f);
    return make_double2(e, f);
}

// Go's complex arithmetic on double2 (complex128) and float2 (complex64).
__device__ __forceinline__ double2 cadd(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 csub(double2 a, double2 b) { return make_double2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ double2 cneg(double2 a) { return make_double2(-a.x, -a.y); }
__device__ __forceinline__ double2 cmul(double2 a, double2 b) {
    return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ double2 cdiv(double2 a, double2 b) { return go_cdiv(a, b); }
__device__ __forceinline__ double cabs1(double2 a) { return fabs(a.x) + fabs(a.y); }
__device__ __forceinline__ bool czero(double2 a) { return a.x == 0.0 && a.y == 0.0; }
__device__ __forceinline__ bool cfinite(double2 a) { return isfinite(a.x) && isfinite(a.y); }

__device__ __forceinline__ float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 cneg(float2 a) { return make_float2(-a.x, -a.y); }
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
    const double ar = a.x, ai = a.y, br = b.x, bi = b.y;
    return make_float2(__double2float_rn(ar * br - ai * bi), __double2float_rn(ar * bi + ai * br));
}
__device__ __forceinline__ float2 cdiv(float2 a, float2 b) {
    const double2 q = go_cdiv(make_double2(a.x, a.y), make_double2(b.x, b.y));
    return make_float2(__double2float_rn(q.x), __double2float_rn(q.y));
}
__device__ __forceinline__ double cabs1(float2 a) { return fabs((double)a.x) + fabs((double)a.y); }
__device__ __forceinline__ bool czero(float2 a) { return a.x == 0.0f && a.y == 0.0f; }
__device__ __forceinline__ bool cfinite(float2 a) { return isfinite(a.x) && isfinite(a.y); }

template <typename C> struct CTraits;
template <> struct CTraits<float2> {
    typedef float R;
    static __device__ __forceinline__ float2 make(float re, float im) { return make_float2(re, im); }
};
template <> struct CTraits<double2> {
    typedef double R;
    static __device__ __forceinline__ double2 make(double re, double im) { return make_double2(re, im); }
};

template <typename C> __device__ __forceinline__ C czeroval() { return CTraits<C>::make(0, 0); }

// CSystem is one system's coefficients as the inner solvers see them: the
// stored (or constant) ones, with the ends a periodic system changes.
// mod 2: the corners folded into the off-diagonals (n = 2), c[0] → c0,
// a[1] → a1, a[0] = c[1] = 0; mod 3: Sherman–Morrison's matrix (n ≥ 3),
// a[0] = c[n-1] = 0, b[0] → b0, b[n-1] → bn.
template <typename C> struct CSystem {
    const C *a, *b, *c;
    C ca, cb, cc;
    int isConst;
    i64 base, es;
    int n;
    int mod;
    C c0, a1, b0, bn;
    __device__ __forceinline__ C rawA(int i) const { return isConst ? ca : a[base + (i64)i * es]; }
    __device__ __forceinline__ C rawB(int i) const { return isConst ? cb : b[base + (i64)i * es]; }
    __device__ __forceinline__ C rawC(int i) const { return isConst ? cc : c[base + (i64)i * es]; }
    __device__ __forceinline__ C A(int i) const {
        if (mod == 3 && i == 0) return czeroval<C>();
        if (mod == 2) return i == 0 ? czeroval<C>() : a1;
        return rawA(i);
    }
    __device__ __forceinline__ C B(int i) const {
        if (mod == 3 && i == 0) return b0;
        if (mod == 3 && i == n - 1) return bn;
        return rawB(i);
    }
    __device__ __forceinline__ C Cc(int i) const {
        if (mod == 3 && i == n - 1) return czeroval<C>();
        if (mod == 2) return i == 0 ? c0 : czeroval<C>();
        return rawC(i);
    }
};

// CVec is a vector of one system: element i at p[base + i*stride]; with
// p = 0 it is Sherman–Morrison's u = (γ, 0, …, 0, β), read only.
template <typename C> struct CVec {
    C *p;
    i64 base, stride;
    int n;
    C u0, un;
    __device__ __forceinline__ C get(int i) const {
        if (p) return p[base + (i64)i * stride];
        if (i == 0) return u0;
        if (i == n - 1) return un;
        return czeroval<C>();
    }
    __device__ __forceinline__ void set(int i, C v) const { p[base + (i64)i * stride] = v; }
};

// cthomas solves the system (tri.ThomasC, or tri.ThomasBoundedC with
// bounded) for rhs into out, with c' in w0 and the forward solution in w1;
// out is written only by the back substitution, so that a failed solve
// leaves it (and an aliased rhs) untouched. It returns the row of the first
// failed test or zero or non-finite pivot, else -1; *bad is the first row
// of out that is not finite (-1: none).
template <typename C>
__device__ int cthomas(const CSystem<C> &s, const CVec<C> &rhs, const CVec<C> &out, const CVec<C> &w0,
                       const CVec<C> &w1, bool bounded, int *bad) {
    const int n = s.n;
    C piv = s.B(0);
    if (czero(piv) || !cfinite(piv)) return 0;
    C cp = cdiv(s.Cc(0), piv);
    C xp = cdiv(rhs.get(0), piv);
    w0.set(0, cp);
    w1.set(0, xp);
    for (int i = 1; i < n; i++) {
        const C ai = s.A(i), bi = s.B(i);
        const C f = cmul(ai, cp);
        if (bounded && !(cabs1(f) <= 2.0 * cabs1(bi))) return i;
        piv = csub(bi, f);
        if (czero(piv) || !cfinite(piv)) return i;
        if (i < n - 1) {
            cp = cdiv(s.Cc(i), piv);
            w0.set(i, cp);
        }
        xp = cdiv(csub(rhs.get(i), cmul(ai, xp)), piv);
        w1.set(i, xp);
    }
    out.set(n - 1, xp);
    int b = cfinite(xp) ? -1 : n - 1;
    for (int i = n - 2; i >= 0; i--) {
        xp = csub(w1.get(i), cmul(w0.get(i), xp));
        out.set(i, xp);
        if (!cfinite(xp)) b = i;
    }
    *bad = b;
    return -1;
}

// cgtsv solves the system by Gaussian elimination with partial pivoting
// by Cabs1 (tri.GTSVC): the row being eliminated stays in registers, the
// upper factor's rows go to wdd, wdu, wdu2 and the partly solved
// right-hand side to out. It returns the row of an exactly zero pivot, else
// -1; *bad is the first row of out that is not finite (-1: none).
template <typename C>
__device__ int cgtsv(const CSystem<C> &s, const CVec<C> &rhs, const CVec<C> &out, const CVec<C> &wdd,
                     const CVec<C> &wdu, const CVec<C> &wdu2, int *bad) {
    const int n = s.n;
    const C zero = czeroval<C>();
    C cdd = s.B(0);
    C cdu = n > 1 ? s.Cc(0) : zero;
    C cx = rhs.get(0);
    for (int i = 0; i < n - 1; i++) {
        const C dl = s.A(i + 1);
        C ndd = s.B(i + 1);
        C ndu = (i + 1 < n - 1) ? s.Cc(i + 1) : zero;
        C nx = rhs.get(i + 1);
        C du2 = zero;
        if (cabs1(cdd) >= cabs1(dl)) {
            if (czero(cdd)) return i;
            const C f = cdiv(dl, cdd);
            ndd = csub(ndd, cmul(f, cdu));
            nx = csub(nx, cmul(f, cx));
        } else {
            const C f = cdiv(cdd, dl);
            const C tmp = ndd;
            ndd = csub(cdu, cmul(f, tmp));
            if (i < n - 2) {
                du2 = ndu;
                ndu = cmul(cneg(f), du2);
            }
            cdd = dl;
            cdu = tmp;
            const C xi = nx;
            nx = csub(cx, cmul(f, nx));
            cx = xi;
        }
        wdd.set(i, cdd);
        wdu.set(i, cdu);
        wdu2.set(i, du2);
        out.set(i, cx);
        cdd = ndd;
        cdu = ndu;
        cx = nx;
    }
    if (czero(cdd)) return n - 1;
    C x2 = cdiv(cx, cdd);
    out.set(n - 1, x2);
    int b = cfinite(x2) ? -1 : n - 1;
    if (n > 1) {
        C x1 = cdiv(csub(out.get(n - 2), cmul(wdu.get(n - 2), x2)), wdd.get(n - 2));
        out.set(n - 2, x1);
        if (!cfinite(x1)) b = n - 2;
        for (int i = n - 3; i >= 0; i--) {
            const C x0 = cdiv(csub(csub(out.get(i), cmul(wdu.get(i), x1)), cmul(wdu2.get(i), x2)), wdd.get(i));
            out.set(i, x0);
            if (!cfinite(x0)) b = i;
            x2 = x1;
            x1 = x0;
        }
    }
    *bad = b;
    return -1;
}

// Algorithms of the complex kernels.
#define CALG_THOMAS 0
#define CALG_GTSV 1
#define CALG_AUTO 2

// csolve_one is solveOne of the CPU's complex solver.
template <typename C, int ALG>
__device__ int csolve_one(const CSystem<C> &s, const CVec<C> &rhs, const CVec<C> &out, C *work, int G, int g,
                          bool bounded, int *bad) {
    const i64 plane = (i64)s.n * G;
    const CVec<C> w0{work, g, G, s.n}, w1{work + plane, g, G, s.n}, w2{work + 2 * plane, g, G, s.n};
    if (ALG == CALG_THOMAS) return cthomas(s, rhs, out, w0, w1, false, bad);
    if (ALG == CALG_AUTO) {
        if (cthomas(s, rhs, out, w0, w1, bounded, bad) < 0) return -1;
    }
    return cgtsv(s, rhs, out, w0, w1, w2, bad);
}

template <typename C> __device__ void cfail_system(C *x, int n, int G, i64 es, i64 bs, int g, int row, int *status) {
    atomicCAS(&status[g], 0, row + 1);
    status[G] = 1;
    typedef typename CTraits<C>::R R;
    const R q = nan_of<R>();
    for (int i = 0; i < n; i++) x[(i64)i * es + (i64)g * bs] = CTraits<C>::make(q, q);
}

template <typename C, int ALG>
__device__ void complex_kernel(const C *a, const C *b, const C *c, const C *d, C *x, C *work, int n, int G, i64 es,
                               i64 bs, C ca, C cb, C cc, int isConst, int bounded, int cyclic, int *status) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    const C zero = czeroval<C>();
    CSystem<C> s{a, b, c, ca, cb, cc, isConst, base, es, n, 0, zero, zero, zero, zero};
    const CVec<C> rhs{const_cast<C *>(d), base, es, n, zero, zero};
    const CVec<C> out{x, base, es, n, zero, zero};
    int fail = -1, bad = -1;
    if (!cyclic || n > 2) {
        C alpha = zero, beta = zero, gamma = zero;
        if (cyclic) {
            alpha = s.rawA(0);
            beta = s.rawC(n - 1);
            gamma = cneg(s.rawB(0));
            if (czero(gamma)) gamma = CTraits<C>::make(-1, 0);
            s.b0 = csub(s.rawB(0), gamma);
            s.bn = csub(s.rawB(n - 1), cmul(cdiv(alpha, gamma), beta));
            s.mod = 3;
        }
        fail = csolve_one<C, ALG>(s, rhs, out, work, G, g, bounded != 0, &bad);
        if (cyclic && fail < 0) {
            const CVec<C> u{0, 0, 0, n, gamma, beta};
            const CVec<C> z{work + 3 * (i64)n * G, g, G, n, zero, zero};
            fail = csolve_one<C, ALG>(s, u, z, work, G, g, bounded != 0, &bad);
            if (fail < 0) {
                const C ag = cdiv(alpha, gamma);
                const C vy = cadd(out.get(0), cmul(ag, out.get(n - 1)));
                const C den = cadd(cadd(CTraits<C>::make(1, 0), z.get(0)), cmul(ag, z.get(n - 1)));
                if (czero(den) || !cfinite(den)) {
                    fail = n - 1;
                } else {
                    const C f = cdiv(vy, den);
                    bad = -1;
                    for (int i = 0; i < n; i++) {
                        const C xi = csub(out.get(i), cmul(f, z.get(i)));
                        out.set(i, xi);
                        if (bad < 0 && !cfinite(xi)) bad = i;
                    }
                }
            }
        }
    } else if (n == 1) {
        // Both corners sit on the diagonal.
        const C p = cadd(cadd(s.rawA(0), s.rawB(0)), s.rawC(0));
        if (czero(p)) {
            fail = 0;
        } else {
            const C x0 = cdiv(rhs.get(0), p);
            out.set(0, x0);
            bad = cfinite(x0) ? -1 : 0;
        }
    } else {
        // n = 2: the corners add to the off-diagonals.
        s.c0 = cadd(s.rawC(0), s.rawA(0));
        s.a1 = cadd(s.rawA(1), s.rawC(1));
        s.mod = 2;
        fail = csolve_one<C, ALG>(s, rhs, out, work, G, g, bounded != 0, &bad);
    }
    if (fail < 0) fail = bad;
    if (fail >= 0) cfail_system(x, n, G, es, bs, g, fail, status);
}

#ifndef BS_DEVICE_ONLY
#define COMPLEX_KERNEL(NAME, ALG, C, R, S)                                                                      \
    extern "C" __global__ void NAME##_##S(const C *a, const C *b, const C *c, const C *d, C *x, C *work, int n, \
                                          int G, i64 es, i64 bs, R ca_real, R ca_imag, R cb_real, R cb_imag,    \
                                          R cc_real, R cc_imag, int isConst, int bounded, int cyclic,           \
                                          int *status) {                                                        \
        complex_kernel<C, ALG>(a, b, c, d, x, work, n, G, es, bs, CTraits<C>::make(ca_real, ca_imag),           \
                               CTraits<C>::make(cb_real, cb_imag), CTraits<C>::make(cc_real, cc_imag), isConst, \
                               bounded, cyclic, status);                                                        \
    }
COMPLEX_KERNEL(complex_thomas, CALG_THOMAS, float2, float, f32)
COMPLEX_KERNEL(complex_thomas, CALG_THOMAS, double2, double, f64)
COMPLEX_KERNEL(complex_gtsv, CALG_GTSV, float2, float, f32)
COMPLEX_KERNEL(complex_gtsv, CALG_GTSV, double2, double, f64)
COMPLEX_KERNEL(complex_auto, CALG_AUTO, float2, float, f32)
COMPLEX_KERNEL(complex_auto, CALG_AUTO, double2, double, f64)
#endif
