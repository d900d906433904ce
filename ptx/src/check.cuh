// The accuracy check of a solve whose data stay on the device
// (tridiag.Options.Check on a GPU plan's device-buffer solves): one block
// per system measures, in double precision, ‖d − A·x‖∞, ‖A‖∞ (the largest
// row sum of |a|, |b|, |c|), ‖x‖∞ and ‖d‖∞, as tridiag's host check does
// (the corners a_0 and c_{n−1} when cyclic), into out[4g … 4g+3]; a
// non-finite x makes the residual +Inf. The host forms the normwise
// backward error from them.
#pragma once
#include "common.cuh"

template <typename T>
__device__ void tri_backward_kernel(Coeffs<T> k, const T *d, const T *x, int n, int G, i64 es, i64 bs, int cyclic,
                                    double *out) {
    __shared__ double red[4][32];
    const int g = blockIdx.x;
    if (g >= G) return;
    const i64 base = (i64)g * bs;
    double res = 0, na = 0, nx = 0, nd = 0;
    bool bad = false;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const i64 idx = base + (i64)i * es;
        const bool left = i > 0 || cyclic, right = i < n - 1 || cyclic;
        const double xi = x[idx], di = d[idx], bi = k.B(idx);
        const double ai = left ? (double)k.A(idx) : 0.0, ci = right ? (double)k.C(idx) : 0.0;
        const double xl = left ? (double)x[i > 0 ? idx - es : base + (i64)(n - 1) * es] : 0.0;
        const double xr = right ? (double)x[i < n - 1 ? idx + es : base] : 0.0;
        const double r = di - ((ai * xl + bi * xi) + ci * xr);
        res = fmax(res, fabs(r));
        na = fmax(na, (fabs(ai) + fabs(bi)) + fabs(ci));
        nx = fmax(nx, fabs(xi));
        nd = fmax(nd, fabs(di));
        if (!isfinite(xi)) bad = true;
    }
    if (bad) res = __longlong_as_double(0x7ff0000000000000LL);
    // Block maxima: warp shuffles, then the warps' maxima in shared memory.
    double v[4] = {res, na, nx, nd};
    for (int q = 0; q < 4; q++)
        for (int o = 16; o > 0; o >>= 1) v[q] = fmax(v[q], __shfl_down_sync(0xffffffffu, v[q], o));
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    if (lane == 0)
        for (int q = 0; q < 4; q++) red[q][w] = v[q];
    __syncthreads();
    if (threadIdx.x < 4) {
        double m = 0;
        for (int j = 0; j < nw; j++) m = fmax(m, red[threadIdx.x][j]);
        out[4 * (i64)g + threadIdx.x] = m;
    }
}

#ifndef BS_DEVICE_ONLY
#define TRI_BACKWARD(T, S)                                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        tri_backward_##S(const T *a, const T *b, const T *c, const T *d, const T *x, int n, int G, i64 es, i64 bs, \
                         T ca, T cb, T cc, int isConst, int cyclic, double *out) {                                 \
        tri_backward_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, cyclic, out);          \
    }
TRI_BACKWARD(float, f32)
TRI_BACKWARD(double, f64)
#endif

// The condition estimate of the same check: one thread per system runs
// tridiag's host estimator (tridiag/check.go, internal/condest) with the
// same operations in the same order, so that κ̂ is the host's bit for bit:
// ‖A‖∞ times the Hager–Higham estimate of ‖A⁻¹‖∞ from LU with partial
// pivoting of A (gttrf) and at most eleven solves with A and Aᵀ; a
// periodic A = T + u·vᵀ is solved through T's factors by Sherman–Morrison.
// Systems g0 … g0+gc−1 share the workspace work (cond_planes planes of
// n·gc doubles: row i of plane p of system s at (p·n + i)·gc + s, so that
// a warp's accesses are adjacent) and sw (n·gc bytes: the row swaps).
// out[2g] = κ̂ (+Inf when A is singular or a solve overflowed) and
// out[2g+1] = 1 when the factorization met an exactly zero pivot.
enum { cond_dl, cond_dd, cond_du, cond_du2, cond_x, cond_xi, cond_z, cond_zt, cond_planes };

// go_max is Go's max of two float64: NaN when either is NaN.
__device__ __forceinline__ double go_max(double x, double y) {
    if (x != x || y != y) return __longlong_as_double(0x7ff8000000000001LL);
    return x > y ? x : y;
}

__device__ __forceinline__ double inf_f64() { return __longlong_as_double(0x7ff0000000000000LL); }

template <typename T> struct CondSystem {
    Coeffs<T> k;
    i64 base, es;
    int n;
    bool periodic;  // the input setting (before small systems fold)
    bool cyclic;    // periodic with n ≥ 3: solved by Sherman–Morrison
    double *w;
    unsigned char *sw;
    i64 gc;
    int s;
    // Sherman–Morrison: u = (γ, 0, …, 0, β), v = (1, 0, …, 0, α/γ) and
    // 1 + vᵀT⁻¹u.
    double gamma, beta, aog, den;

    __device__ __forceinline__ double &at(int p, int i) const { return w[((i64)p * n + i) * gc + s]; }
    __device__ __forceinline__ unsigned char &swp(int i) const { return sw[(i64)i * gc + s]; }

    // abc gives row i's coefficients in float64 as tridiag's foldCorners
    // leaves them: a periodic system of one or two rows folds its corners,
    // a system that is not periodic has a_0 = c_{n−1} = 0.
    __device__ __forceinline__ void abc(int i, double &a, double &b, double &c) const {
        const i64 idx = base + (i64)i * es;
        a = (double)k.A(idx);
        b = (double)k.B(idx);
        c = (double)k.C(idx);
        if (periodic && n == 1) {
            b += a + c;
            a = c = 0;
        } else if (periodic && n == 2) {
            if (i == 0) {
                c += a;
                a = 0;
            } else {
                a += c;
                c = 0;
            }
        } else if (!periodic) {
            if (i == 0) a = 0;
            if (i == n - 1) c = 0;
        }
    }

    // factor is tridiag's gttrf of T with gamma subtracted from b_0 and
    // delta from b_{n−1}; false when a pivot is exactly zero.
    __device__ __forceinline__ bool factor(double gam, double delta) {
        for (int i = 0; i < n; i++) {
            double a, b, c;
            abc(i, a, b, c);
            at(cond_dd, i) = b;
            if (i > 0) at(cond_dl, i - 1) = a;
            if (i < n - 1) {
                at(cond_du, i) = c;
                at(cond_du2, i) = 0;
            }
        }
        at(cond_dd, 0) -= gam;
        at(cond_dd, n - 1) -= delta;
        for (int i = 0; i < n - 1; i++) {
            const double ddi = at(cond_dd, i), dli = at(cond_dl, i);
            if (fabs(ddi) >= fabs(dli)) {
                swp(i) = 0;
                if (ddi != 0) {
                    const double f = dli / ddi;
                    at(cond_dl, i) = f;
                    at(cond_dd, i + 1) -= f * at(cond_du, i);
                }
            } else {
                swp(i) = 1;
                const double f = ddi / dli;
                at(cond_dd, i) = dli;
                at(cond_dl, i) = f;
                const double t = at(cond_du, i), dd1 = at(cond_dd, i + 1);
                at(cond_du, i) = dd1;
                at(cond_dd, i + 1) = t - f * dd1;
                if (i < n - 2) {
                    const double du1 = at(cond_du, i + 1);
                    at(cond_du2, i) = du1;
                    at(cond_du, i + 1) = -f * du1;
                }
            }
        }
        bool ok = true;
        for (int i = 0; i < n; i++)
            if (at(cond_dd, i) == 0) ok = false;
        return ok;
    }

    // solveT0 overwrites plane p with T⁻¹·p, or T⁻ᵀ·p when trans (gtts2).
    __device__ __forceinline__ void solveT0(int p, bool trans) {
        if (!trans) {
            for (int i = 0; i < n - 1; i++) {
                const double dli = at(cond_dl, i);
                if (!swp(i)) {
                    at(p, i + 1) -= dli * at(p, i);
                } else {
                    const double t = at(p, i), w1 = at(p, i + 1);
                    at(p, i) = w1;
                    at(p, i + 1) = t - dli * w1;
                }
            }
            at(p, n - 1) /= at(cond_dd, n - 1);
            if (n > 1) at(p, n - 2) = (at(p, n - 2) - at(cond_du, n - 2) * at(p, n - 1)) / at(cond_dd, n - 2);
            for (int i = n - 3; i >= 0; i--)
                at(p, i) = (at(p, i) - at(cond_du, i) * at(p, i + 1) - at(cond_du2, i) * at(p, i + 2)) / at(cond_dd, i);
            return;
        }
        at(p, 0) /= at(cond_dd, 0);
        if (n > 1) at(p, 1) = (at(p, 1) - at(cond_du, 0) * at(p, 0)) / at(cond_dd, 1);
        for (int i = 2; i < n; i++)
            at(p, i) = (at(p, i) - at(cond_du, i - 1) * at(p, i - 1) - at(cond_du2, i - 2) * at(p, i - 2)) / at(cond_dd, i);
        for (int i = n - 2; i >= 0; i--) {
            const double dli = at(cond_dl, i);
            if (!swp(i)) {
                at(p, i) -= dli * at(p, i + 1);
            } else {
                const double t = at(p, i + 1);
                at(p, i + 1) = at(p, i) - dli * t;
                at(p, i) = t;
            }
        }
    }

    // dot is Σ e_i·w_i over plane p with e = (e0, 0, …, 0, en), summed
    // over every row as tridiag's dot does (a non-finite w_i makes it NaN).
    __device__ __forceinline__ double dot(double e0, double en, int p) const {
        double sum = 0;
        for (int i = 0; i < n; i++) sum += (i == 0 ? e0 : (i == n - 1 ? en : 0.0)) * at(p, i);
        return sum;
    }

    // solve overwrites plane p with A⁻¹·p, or A⁻ᵀ·p when trans.
    __device__ __forceinline__ void solve(int p, bool trans) {
        solveT0(p, trans);
        if (!cyclic) return;
        const double f = (trans ? dot(gamma, beta, p) : dot(1, aog, p)) / den;
        const int zp = trans ? cond_zt : cond_z;
        for (int i = 0; i < n; i++) at(p, i) -= f * at(zp, i);
    }

    __device__ __forceinline__ double norm1(int p) const {
        double sum = 0;
        for (int i = 0; i < n; i++) sum += fabs(at(p, i));
        return sum;
    }

    __device__ __forceinline__ int argmax_abs(int p) const {
        int j = 0;
        double m = -1;
        for (int i = 0; i < n; i++) {
            const double a = fabs(at(p, i));
            if (a > m) {
                j = i;
                m = a;
            }
        }
        return j;
    }

    static __device__ __forceinline__ double sign(double v) { return v < 0 ? -1.0 : 1.0; }
    static __device__ __forceinline__ double finite_or_inf(double v) { return isfinite(v) ? v : inf_f64(); }

    // inv_norm_inf is condest.InvNormInf with solve and its transpose.
    __device__ __forceinline__ double inv_norm_inf() {
        for (int i = 0; i < n; i++) at(cond_x, i) = 1 / (double)n;
        solve(cond_x, true);
        if (n == 1) return finite_or_inf(fabs(at(cond_x, 0)));
        double est = norm1(cond_x);
        if (!isfinite(est)) return inf_f64();
        for (int i = 0; i < n; i++) {
            const double xi = sign(at(cond_x, i));
            at(cond_xi, i) = xi;
            at(cond_x, i) = xi;
        }
        solve(cond_x, false);
        int j = argmax_abs(cond_x);
        for (int iter = 2;; iter++) {
            for (int i = 0; i < n; i++) at(cond_x, i) = 0;
            at(cond_x, j) = 1;
            solve(cond_x, true);
            const double old = est;
            est = norm1(cond_x);
            if (!isfinite(est)) return inf_f64();
            bool same = true;
            for (int i = 0; i < n; i++)
                if (sign(at(cond_x, i)) != at(cond_xi, i)) {
                    same = false;
                    break;
                }
            if (same || est <= old) {
                est = go_max(est, old);
                break;
            }
            for (int i = 0; i < n; i++) {
                const double xi = sign(at(cond_x, i));
                at(cond_xi, i) = xi;
                at(cond_x, i) = xi;
            }
            solve(cond_x, false);
            const int jlast = j;
            j = argmax_abs(cond_x);
            if (fabs(at(cond_x, jlast)) == fabs(at(cond_x, j)) || iter >= 5) break;
        }
        for (int i = 0; i < n; i++) {
            const double sg = (i % 2 == 1) ? -1.0 : 1.0;
            at(cond_x, i) = sg * (1 + (double)i / (double)(n - 1));
        }
        solve(cond_x, true);
        const double alt = 2 * norm1(cond_x) / (double)(3 * (i64)n);
        if (alt > est || !isfinite(alt)) est = alt;
        return finite_or_inf(est);
    }

    // cond is tridiag's checker.cond: κ̂∞ and whether A is singular.
    __device__ __forceinline__ double cond(bool &singular) {
        singular = false;
        double an = 0;
        for (int i = 0; i < n; i++) {
            double a, b, c;
            abc(i, a, b, c);
            an = go_max(an, (fabs(a) + fabs(b)) + fabs(c));
        }
        if (an == 0) {
            singular = true;
            return inf_f64();
        }
        if (!isfinite(an)) return inf_f64();
        if (!cyclic) {
            if (!factor(0, 0)) {
                singular = true;
                return inf_f64();
            }
            return an * inv_norm_inf();
        }
        double a0, b0, c0, an1, bn1, cn1;
        abc(0, a0, b0, c0);
        abc(n - 1, an1, bn1, cn1);
        const double alpha = a0;
        beta = cn1;
        for (int q = 0; q < 4; q++) {
            gamma = q == 0 ? -b0 : (q == 1 ? -an : (q == 2 ? b0 + an : 0.5 * an));
            if (gamma == 0) continue;
            aog = alpha / gamma;
            if (!factor(gamma, aog * beta)) continue;
            for (int i = 0; i < n; i++) {
                at(cond_z, i) = i == 0 ? gamma : (i == n - 1 ? beta : 0.0);
                at(cond_zt, i) = i == 0 ? 1.0 : (i == n - 1 ? aog : 0.0);
            }
            solveT0(cond_z, false);
            solveT0(cond_zt, true);
            den = 1 + dot(1, aog, cond_z);
            if (den == 0 || !isfinite(den)) {
                singular = den == 0;
                return inf_f64();
            }
            return an * inv_norm_inf();
        }
        singular = true;
        return inf_f64();
    }
};

template <typename T>
__device__ void tri_cond_kernel(Coeffs<T> k, int n, int G, i64 es, i64 bs, int cyclic, int g0, int gc, double *work,
                                unsigned char *sw, double *out) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= gc || g0 + s >= G) return;
    const int g = g0 + s;
    CondSystem<T> sys;
    sys.k = k;
    sys.base = (i64)g * bs;
    sys.es = es;
    sys.n = n;
    sys.periodic = cyclic != 0;
    sys.cyclic = cyclic != 0 && n >= 3;
    sys.w = work;
    sys.sw = sw;
    sys.gc = gc;
    sys.s = s;
    sys.gamma = sys.beta = sys.aog = sys.den = 0;
    bool singular;
    const double c = sys.cond(singular);
    out[2 * (i64)g] = c;
    out[2 * (i64)g + 1] = singular ? 1.0 : 0.0;
}

#ifndef BS_DEVICE_ONLY
#define TRI_COND(T, S)                                                                                              \
    extern "C" __global__ void __launch_bounds__(256, 1)                                                            \
        tri_cond_##S(const T *a, const T *b, const T *c, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int isConst, \
                     int cyclic, int g0, int gc, double *work, unsigned char *sw, double *out) {                    \
        tri_cond_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, n, G, es, bs, cyclic, g0, gc, work, sw, out);   \
    }
TRI_COND(float, f32)
TRI_COND(double, f64)
#endif
