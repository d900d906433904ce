// Batched evaluation and integration of fitted cubic splines (package
// spline): the values, first and second derivatives of many curves at many
// points, and the definite integral of each curve, in one launch each.
//
// Every operation is spline/eval.go's in the same order (search, wrap,
// span.at and guard, ab, valueWeights, derivWeights, value, deriv, the
// second derivative a·M_i + b·M_{i+1}, integrate, integrateRange,
// integratePeriodic, partial, periods, sixthSquare). With -fmad=false each
// product and sum is rounded as Go rounds it, so that a finite result is
// the CPU's bit for bit.
//
// Results the CPU finishes with its careful evaluation (spline/careful.go:
// a NaN or infinite direct result, from a span too small for its weights,
// an overflow, or a NaN or infinite point) are left as the direct result
// and flagged: flags[k] = 1 for each such curve k and flags[count] = 1.
// The host re-evaluates the non-finite results of the flagged curves with
// the CPU's careful path (internal/gpu/splinegpu).
//
// Layout: curve k's values and moments at y[k·n …], m[k·n …]; its knots at
// x[k·xs …] (xs = 0: shared by every curve, xs = n: one set per curve); its
// points at t[k·ts …] (ts = 0: shared, ts = P: one set per curve); its
// results at out[k·P …]. A null output pointer is not computed.
#pragma once
#include "common.cuh"

// Threads per block of spline_integrate.
#define SPLINE_BLOCK 256
// Most threads per block of spline_eval, whose blocks are as wide as the
// host asks (blockDim.x): wider blocks evaluate more points of each curve,
// over which the curve's values and moments are read from L2 once.
#define SPLINE_EVAL_MAX_BLOCK 1024

// 2^-126, the smallest normal float, as T: spans whose h²/6 is below it
// check T's own bound (span.guard).
template <typename T> __device__ __forceinline__ T spline_guard_bound() { return T(__int_as_float(0x00800000)); }

// The smallest positive normal number of T.
template <typename T> __device__ __forceinline__ T spline_min_normal();
template <> __device__ __forceinline__ float spline_min_normal<float>() { return __int_as_float(0x00800000); }
template <> __device__ __forceinline__ double spline_min_normal<double>() {
    return __longlong_as_double(0x0010000000000000LL);
}

// spline_bad: NaN or infinite (Go's v-v != 0).
template <typename T> __device__ __forceinline__ bool spline_bad(T v) { return v - v != T(0); }

// spline_search is search: the largest i ≤ n−2 with x[i] ≤ t, or 0 when
// t < x[0] or t is NaN.
template <typename T> __device__ __forceinline__ int spline_search(const T *x, int n, T t) {
    int base = 0, size = n - 1;
#pragma unroll 1
    while (size > 1) {
        const int half = size >> 1;
        base = __ldg(&x[base + half]) <= t ? base + half : base;
        size -= half;
    }
    return base;
}

// spline_wrap is wrap: t mapped into [x0, xn] by whole periods, in
// double as Go computes it (fmod is exact, as math.Mod is).
template <typename T> __device__ __forceinline__ T spline_wrap(T x0, T xn, T t) {
    if (t >= x0 && t <= xn) return t;
    const double p = double(xn) - double(x0);
    const double d = double(t) - double(x0);
    double s = 0.0;
    if (!isinf(d) || isinf(double(t))) {
        s = fmod(d, p);
    } else {
        s = 2.0 * fmod(double(t) * 0.5 - double(x0) * 0.5, p * 0.5);
    }
    if (s < 0.0) s += p;
    return T(double(x0) + s);
}

// spline_sixth_square is sixthSquare: h²/6, or NaN where it is below the
// smallest normal number of T.
template <typename T> __device__ __forceinline__ T spline_sixth_square(T h) {
    const T h6 = h * h / T(6);
    return (h6 < spline_guard_bound<T>() && !(h6 >= spline_min_normal<T>())) ? nan_of<T>() : h6;
}

// SplinePoint is one point located in its interval: the interval i, the
// (wrapped) point, and its weights: a and b (S″), those of S (wv) and of
// S′ (wd).
template <typename T> struct SplinePoint {
    int i;
    T t, a, b;
    T wv[4];
    T wd[3];
};

// spline_locate wraps t (periodic curves), finds its interval among the n
// knots x and computes its weights as span.at, span.guard, ab,
// valueWeights and derivWeights do. The guard applies to every span: it
// changes nothing where h²/6 ≥ 2^−126, which is every span of knots that
// closeKnots lets the CPU skip it on.
template <typename T> __device__ __forceinline__ void spline_locate(const T *x, int n, T t, int periodic, SplinePoint<T> &p) {
    if (periodic) t = spline_wrap(__ldg(&x[0]), __ldg(&x[n - 1]), t);
    const int i = spline_search(x, n, t);
    const T x0 = __ldg(&x[i]), x1 = __ldg(&x[i + 1]);
    const T h = x1 - x0;
    const T ih = T(1) / h;
    T h6 = h * h / T(6);
    T hs = h / T(6);
    if (h6 < spline_guard_bound<T>()) {
        h6 = spline_sixth_square(h);
        hs = hs >= spline_min_normal<T>() ? hs : nan_of<T>();
    }
    T a = (x1 - t) * ih, b = (t - x0) * ih;
    const bool atx0 = t == x0;
    a = atx0 ? T(1) : a;
    b = (!atx0 && t == x1) ? T(1) : b;
    p.i = i;
    p.t = t;
    p.a = a;
    p.b = b;
    p.wv[0] = a;
    p.wv[1] = b;
    p.wv[2] = a * (a * a - T(1)) * h6;
    p.wv[3] = b * (b * b - T(1)) * h6;
    p.wd[0] = ih;
    p.wd[1] = (T(1) - T(3) * a * a) * hs;
    p.wd[2] = (T(3) * b * b - T(1)) * hs;
}

// spline_eval: thread j of the grid's x dimension evaluates point j of
// the curves of its block's groups of cpk curves (the y dimension,
// grid-stride). With shared knots and shared points the point is located
// and weighted once for all of them, as the CPU's prepare does. The
// results are written once and never read: streaming stores (__stcs) keep
// them from evicting the values and moments from L2.
template <typename T>
__device__ __forceinline__ void spline_eval(const T *x, i64 xs, const T *y, const T *m, const T *t, i64 ts, int n,
                                            int count, int P, int periodic, int cpk, T *val, T *der, T *der2,
                                            unsigned *flags) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= P) return;
    const bool shared = xs == 0 && ts == 0;
    SplinePoint<T> p;
    p.i = 0;
    p.t = p.a = p.b = T(0);
    p.wv[0] = p.wv[1] = p.wv[2] = p.wv[3] = T(0);
    p.wd[0] = p.wd[1] = p.wd[2] = T(0);
    if (shared) spline_locate(x, n, __ldg(&t[j]), periodic, p);
#pragma unroll 1
    for (i64 g = blockIdx.y; g * cpk < count; g += gridDim.y) {
        const int k0 = int(g * cpk);
        const int k1 = min(count, k0 + cpk);
#pragma unroll 1
        for (int k = k0; k < k1; k++) {
            if (!shared) spline_locate(x + k * xs, n, __ldg(&t[k * ts + j]), periodic, p);
            const T *yk = y + (i64)k * n + p.i;
            const T *mk = m + (i64)k * n + p.i;
            const T y0 = __ldg(&yk[0]), y1 = __ldg(&yk[1]);
            const T m0 = __ldg(&mk[0]), m1 = __ldg(&mk[1]);
            const i64 o = (i64)k * P + j;
            bool bad = false;
            if (val != nullptr) {
                const T v = p.wv[0] * y0 + p.wv[1] * y1 + p.wv[2] * m0 + p.wv[3] * m1;
                __stcs(&val[o], v);
                bad = bad || spline_bad(v);
            }
            if (der != nullptr) {
                const T v = (y1 - y0) * p.wd[0] + p.wd[1] * m0 + p.wd[2] * m1;
                __stcs(&der[o], v);
                bad = bad || spline_bad(v);
            }
            if (der2 != nullptr) {
                const T v = p.a * m0 + p.b * m1;
                __stcs(&der2[o], v);
                bad = bad || spline_bad(v);
            }
            if (bad) {
                flags[k] = 1u;
                flags[count] = 1u;
            }
        }
    }
}

// spline_partial is partial: the integral from a to b of the cubic of
// interval i.
template <typename T> __device__ __forceinline__ T spline_at(T u, T y0, T c1, T c2, T c3) {
    return u * (y0 + u * (c1 / T(2) + u * (c2 / T(3) + u * (c3 / T(4)))));
}

template <typename T> __device__ T spline_partial(const T *x, const T *y, const T *m, int i, T a, T b) {
    const T xi = x[i];
    const T h = x[i + 1] - xi;
    const T h6 = spline_sixth_square(h);
    const T mi = m[i] * h6, mj = m[i + 1] * h6;
    const T y0 = y[i];
    const T c1 = y[i + 1] - y0 - T(2) * mi - mj, c2 = T(3) * mi, c3 = mj - mi;
    const T ub = spline_at((b - xi) / h, y0, c1, c2, c3);
    const T ua = spline_at((a - xi) / h, y0, c1, c2, c3);
    return h * (ub - ua);
}

// spline_range is integrateRange: the integral from a to b (a ≤ b) of a
// natural or clamped curve.
template <typename T> __device__ T spline_range(const T *x, const T *y, const T *m, int n, T a, T b) {
    const int ia = spline_search(x, n, a), ib = spline_search(x, n, b);
    if (ia == ib) return spline_partial(x, y, m, ia, a, b);
    T s = spline_partial(x, y, m, ia, a, x[ia + 1]);
#pragma unroll 1
    for (int i = ia + 1; i < ib; i++) {
        const T h = x[i + 1] - x[i];
        const T h6 = spline_sixth_square(h);
        s += h * ((y[i] + y[i + 1]) / T(2) - (m[i] * h6 + m[i + 1] * h6) / T(4));
    }
    return s + spline_partial(x, y, m, ib, x[ib], b);
}

// spline_periods is periods: b − a ≥ 0 as whole periods and the rest,
// without overflow in b − a.
__device__ __forceinline__ void spline_periods(double a, double b, double per, double &whole, double &left) {
    double d = b - a;
    if (!isinf(d)) {
        left = fmod(d, per);
        whole = round((d - left) / per);
        return;
    }
    d = b * 0.5 - a * 0.5;
    left = 2.0 * fmod(d, per * 0.5);
    whole = round((d - left * 0.5) / per * 2.0);
}

// spline_periodic is integratePeriodic: the integral from a to b (a ≤ b)
// of a periodic curve.
template <typename T> __device__ T spline_periodic(const T *x, const T *y, const T *m, int n, T a, T b) {
    const T x0 = x[0], xn = x[n - 1];
    double whole = 0.0, left = 0.0;
    spline_periods(double(a), double(b), double(xn) - double(x0), whole, left);
    T s = T(0);
    if (whole > 0.0) s = T(whole) * spline_range(x, y, m, n, x0, xn);
    const T wa = spline_wrap(x0, xn, a);
    const double wb = double(wa) + left;
    if (wb <= double(xn)) {
        s += spline_range(x, y, m, n, wa, T(wb));
    } else {
        s += spline_range(x, y, m, n, wa, xn) + spline_range(x, y, m, n, x0, T(double(x0) + (wb - double(xn))));
    }
    return s;
}

// spline_integrate: thread k (grid-stride) writes the integral of curve k
// from lo[k·bs] to hi[k·bs] (bs = 0: bounds shared by every curve) to
// out[k], as integrate computes it; a NaN or infinite result flags the
// curve for the careful evaluation on the host.
template <typename T>
__device__ __forceinline__ void spline_integrate(const T *x, i64 xs, const T *y, const T *m, int n, int count,
                                                 int periodic, const T *lo, const T *hi, i64 bs, T *out,
                                                 unsigned *flags) {
    const i64 stride = (i64)gridDim.x * SPLINE_BLOCK;
#pragma unroll 1
    for (i64 k = (i64)blockIdx.x * SPLINE_BLOCK + threadIdx.x; k < count; k += stride) {
        const T *xk = x + k * xs;
        const T *yk = y + k * n;
        const T *mk = m + k * n;
        T a = lo[k * bs], b = hi[k * bs];
        T r = T(0);
        if (a == b) {
            r = T(0);
        } else if (a != a || b != b) {
            r = nan_of<T>();
        } else {
            T sign = T(1);
            if (a > b) {
                const T s = a;
                a = b;
                b = s;
                sign = T(-1);
            }
            const T v = periodic ? spline_periodic(xk, yk, mk, n, a, b) : spline_range(xk, yk, mk, n, a, b);
            if (spline_bad(v)) {
                flags[k] = 1u;
                flags[count] = 1u;
            }
            r = sign * v;
        }
        out[k] = r;
    }
}
