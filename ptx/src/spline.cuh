// Batched evaluation and integration of fitted cubic splines (package
// spline), and the moment systems of a fit on the device (at the end of
// this file): the values, first and second derivatives of many curves at many
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

// spline_eval_one writes the results at index o of the point p located
// in the interval whose values are y0, y1 and moments m0, m1, and reports
// whether any is NaN or infinite.
template <typename T>
__device__ __forceinline__ bool spline_eval_one(const SplinePoint<T> &p, T y0, T y1, T m0, T m1, i64 o, T *val, T *der,
                                                T *der2) {
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
    return bad;
}

// spline_point_zero clears p.
template <typename T> __device__ __forceinline__ void spline_point_zero(SplinePoint<T> &p) {
    p.i = 0;
    p.t = p.a = p.b = T(0);
    p.wv[0] = p.wv[1] = p.wv[2] = p.wv[3] = T(0);
    p.wd[0] = p.wd[1] = p.wd[2] = T(0);
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
    spline_point_zero(p);
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
            const bool bad = spline_eval_one(p, __ldg(&yk[0]), __ldg(&yk[1]), __ldg(&mk[0]), __ldg(&mk[1]),
                                             (i64)k * P + j, val, der, der2);
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

// ---------------------------------------------------------------------------
// Fitting on the device (internal/gpu/splinegpu's Fitter): the moment
// systems' rows and right-hand sides of spline/spline.go (rows, rhs with
// the scale 1) and the data checks of checkData, so that the tridiagonal
// plans solve them in device memory. Every operation is the CPU's, in its
// order: the moments come out bit for bit the CPU's where the solve is the
// CPU's algorithm.
//
// The checks are conservative: a curve whose knots, values or periodic
// ends the CPU would refuse, or whose right-hand side is not finite (the
// CPU then solves for its values scaled down), is flagged, flags[k] = 1
// and flags[count] = 1, and the host finishes it with package spline.

// The end conditions (spline.Kind).
#define SPLINE_NATURAL 0
#define SPLINE_CLAMPED 1
#define SPLINE_PERIODIC 2

// Threads per block of spline_fit_knots.
#define SPLINE_FIT_BLOCK 256
// Most threads per block of spline_fit_rows (one curve a block).
#define SPLINE_ROWS_MAX_BLOCK 256

// The largest finite number of T, halved: knots may span at most that.
template <typename T> __device__ __forceinline__ T spline_half_max();
template <> __device__ __forceinline__ float spline_half_max<float>() { return __int_as_float(0x7effffff); }
template <> __device__ __forceinline__ double spline_half_max<double>() {
    return __longlong_as_double(0x7fdfffffffffffffLL);
}

// 64 machine epsilons of T, the tolerance of a periodic curve's ends.
template <typename T> __device__ __forceinline__ double spline_end_tol();
template <> __device__ __forceinline__ double spline_end_tol<float>() { return 0x1p-17; }
template <> __device__ __forceinline__ double spline_end_tol<double>() { return 0x1p-46; }

// spline_fit_knots checks the n knots shared by every curve as checkKnots
// does (finite, strictly increasing, spanning at most half the largest
// finite T) and whether their spans are all equal (uniform knots: the
// moment systems have constant coefficients). Grid-stride over the knots:
// info[0] |= 1 for bad knots, info[1] |= 1 for unequal spans; h[0] is the
// first span.
template <typename T> __device__ __forceinline__ void spline_fit_knots(const T *x, int n, unsigned *info, T *h) {
    const T h0 = x[1] - x[0];
    const i64 stride = (i64)gridDim.x * blockDim.x;
    bool bad = false, uneven = false;
#pragma unroll 1
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T v = x[i];
        bad = bad || spline_bad(v);
        if (i > 0) {
            const T p = x[i - 1];
            bad = bad || !(v > p);
            uneven = uneven || !(v - p == h0);
        } else {
            bad = bad || !(x[n - 1] - v <= spline_half_max<T>());
            h[0] = h0;
        }
    }
    if (bad) atomicOr(&info[0], 1u);
    if (uneven) atomicOr(&info[1], 1u);
}

// spline_fit_slope is the CPU's slope(i) of rhs at the scale 1.
template <typename T> __device__ __forceinline__ T spline_fit_slope(const T *x, const T *y, int i) {
    return (y[i + 1] - y[i]) / (x[i + 1] - x[i]);
}

// spline_fit_rows: block b (grid-stride) forms the rows of curve k = b:
// its right-hand sides into d[k·n …] (rhs), and, where a is not null, its
// rows a, b, c at the same places (rows), and checks its data. The knots
// of curve k are at x[k·xs …] (xs = 0: shared, checked by
// spline_fit_knots). The clamped end derivatives, as T, are d0[k·ss] and
// dn[k·ss] (ss = 0: shared). A batch of two knots that is not clamped has
// zero moments (the CPU's early return): d is zero and only the data are
// checked.
template <typename T>
__device__ __forceinline__ void spline_fit_rows(const T *x, i64 xs, const T *y, int n, int count, int kind,
                                                const T *d0, const T *dn, i64 ss, T *a, T *b, T *c, T *d,
                                                unsigned *flags) {
    const bool zero = n == 2 && kind != SPLINE_CLAMPED;
    // The rows the kind solves for.
    const int lo = kind == SPLINE_NATURAL ? 1 : 0;
    const int hi = kind == SPLINE_CLAMPED ? n - 1 : n - 2;
#pragma unroll 1
    for (i64 k = blockIdx.x; k < count; k += gridDim.x) {
        const T *xk = x + k * xs;
        const T *yk = y + k * n;
        T *dk = d + k * n;
        bool bad = false;
        // Periodic ends: the CPU refuses |y[n−1] − y[0]| > 64ε·max(1, max|y|);
        // 64ε is a power of two, so the curve passes when the difference is
        // within 64ε or within 64ε·|y_i| for some i.
        const double ends = fabs(double(yk[n - 1]) - double(yk[0]));
        bool endsOK = kind != SPLINE_PERIODIC || ends <= spline_end_tol<T>();
#pragma unroll 1
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const T yi = yk[i];
            bad = bad || spline_bad(yi);
            if (xs != 0) {
                const T xi = xk[i];
                bad = bad || spline_bad(xi);
                if (i > 0) {
                    bad = bad || !(xi > xk[i - 1]);
                } else {
                    bad = bad || !(xk[n - 1] - xi <= spline_half_max<T>());
                }
            }
            endsOK = endsOK || ends <= spline_end_tol<T>() * fabs(double(yi));
            // Row i's right-hand side is 6·(right − left): interior rows
            // the slopes on either side; a clamped end the slope and the
            // given derivative; a periodic row 0 the first and last slopes.
            // ir and il are the slopes' intervals, −1 for a derivative.
            T di = T(0);
            if (!zero && i >= lo && i <= hi) {
                int ir = i, il = i - 1;
                if (i == 0) il = kind == SPLINE_PERIODIC ? n - 2 : -1;
                if (i == n - 1) ir = -1, il = n - 2;
                const T right = ir >= 0 ? spline_fit_slope(xk, yk, ir) : dn[k * ss];
                const T left = il >= 0 ? spline_fit_slope(xk, yk, il) : d0[k * ss];
                di = T(6) * (right - left);
                bad = bad || spline_bad(di);
            }
            dk[i] = di;
            if (a != nullptr) {
                T ai = T(0), bi = T(1), ci = T(0);
                if (i >= 1 && i <= n - 2) {
                    const T hl = xk[i] - xk[i - 1], hr = xk[i + 1] - xk[i];
                    ai = hl;
                    bi = T(2) * (hl + hr);
                    ci = hr;
                }
                if (kind == SPLINE_NATURAL) {
                    // M_0 = M_{n−1} = 0, uncoupled from the interior.
                    if (i == 0 || i == n - 1) {
                        ai = T(0);
                        bi = T(1);
                        ci = T(0);
                    }
                    if (i == 1) ai = T(0);
                    if (i == n - 2) ci = T(0);
                } else if (kind == SPLINE_CLAMPED) {
                    if (i == 0) {
                        const T h0 = xk[1] - xk[0];
                        ai = T(0);
                        bi = T(2) * h0;
                        ci = h0;
                    } else if (i == n - 1) {
                        const T hn = xk[n - 1] - xk[n - 2];
                        ai = hn;
                        bi = T(2) * hn;
                        ci = T(0);
                    }
                } else if (i == 0) {
                    // Row 0 wraps around: its left neighbour is M_{n−2}.
                    const T hl = xk[n - 1] - xk[n - 2], hr = xk[1] - xk[0];
                    ai = hl;
                    bi = T(2) * (hl + hr);
                    ci = hr;
                } else if (i == n - 1) {
                    ai = T(0);
                    bi = T(1);
                    ci = T(0);
                }
                const i64 o = k * n + i;
                a[o] = ai;
                b[o] = bi;
                c[o] = ci;
            }
        }
        // endsOK is each thread's: the curve's ends pass when any thread's
        // values let them.
        const bool anyBad = __syncthreads_or(bad);
        const bool anyEnds = __syncthreads_or(endsOK);
        if (threadIdx.x == 0 && (anyBad || !anyEnds)) {
            flags[k] = 1u;
            flags[count] = 1u;
        }
    }
}

// spline_fit_wrap sets the last moment of each periodic curve to its
// first, as the CPU does after the cyclic solve: thread k, grid-stride.
template <typename T> __device__ __forceinline__ void spline_fit_wrap(T *m, int n, int count) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
#pragma unroll 1
    for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += stride) {
        m[k * n + n - 1] = m[k * n];
    }
}
