// The partition method with partial pivoting (package tridiag/pivotpart
// is the CPU twin; it documents the method and does these operations in
// the same order, so with -fmad=false the results agree bit for bit).
// Every system is cut into partitions (chunks) of P rows, one chunk per
// thread, held in shared memory as partition.cuh holds them (the same
// launch, layout, loads and stores; launch: tuning.PivotLaunch).
//
// Stage 1 (ppart_rows): two sweeps over the chunk's rows eliminate its
// interior unknowns with partial pivoting and leave its two rows of the
// coarse system (one for a last chunk of one row). Stage 2: the coarse
// system, by gtsv's elimination with partial pivoting in one thread
// (ppart_gtsv) up to PPART_DIRECT rows, above by Stages 1–3 once more on
// chunks of P coarse rows, whose own coarse system one thread solves.
// Stage 3 (ppart_part): each thread finds its chunk's interior unknowns
// from all the chunk's rows and the coarse solution, by elimination with
// scaled partial pivoting. Stage 4 (when the launch asks for it): every
// row's residual formed to twice the working precision (ppart_residual),
// Stages 1–3 once more on it, x plus the correction.
//
// Shared memory: the four arrays A, B, C, D of partition.cuh (a, b, c, d;
// D then takes the residual and the correction), then E (the solution of
// Stages 1–3), U, V, Q (scratch), each of the same size, then two ints a
// system (the breakdown key, and whether a residual was not finite):
// tuning.PivotSharedBytes. Scratch slots of chunk c (slot j: its row j):
//   - coarse row 2c at U 0…3, coarse row 2c+1 at V 0…3 (a, b, c, d);
//   - their solution at Q 0 and Q P−1;
//   - Stage 3's pivot rows (u1, r, 1/u0) of the interior unknown of row j
//     at U j, V j, Q j (j = 1 … P−2; u2 comes from row j+1's c, a bit a
//     row saying which);
//   - the coarse chunk of coarse rows 16c' … (the coarse system solved by
//     chunks): its coarse rows at U 4…7, V 4…7 of chunk 8c', their
//     solution at Q 4, 5 of chunk 8c'; the pivot rows of coarse row r at
//     U, V, Q slot 8 + r mod 2 of chunk r/2.
//
// Breakdown keys (PART_KEY, the smallest kept): 1 Stage 1 of the system,
// 2–4 Stages 1–3 of a coarse system solved by chunks (3 also one solved
// directly), 5 Stage 3, 6 a non-finite x (of a refined launch: a coarse
// system's is left to the system it belongs to); rows are the system's (a
// coarse row stands for the row pivotpart.CoarseRow names). A failed
// system gets NaN in every row and no refinement.
#pragma once
#include "partition.cuh"

// ppart_step is a step of gtsv's elimination with partial pivoting: the
// current row's diagonal cdd and super-diagonal cdu, the next row's
// sub-diagonal dl, diagonal ndd and super-diagonal ndu (more: the next row
// is not the last, so an interchange fills du2). The rows are interchanged
// when |dl| > |cdd|; it returns whether they were, the pivot's reciprocal
// q, the multiplier f and the fill du2, updates ndd, ndu and cdu, and sets
// bad where the pivot is a bad divisor. ppart_rhs then eliminates a right
// side's current and next entries.
template <typename T>
__device__ __forceinline__ bool ppart_step(T cdd, T &cdu, T dl, T &ndd, T &ndu, bool more, T &q, T &f, T &du2,
                                           bool &bad) {
    du2 = T(0);
    if (!(fabs(dl) > fabs(cdd))) {
        bad = bad_divisor(cdd);
        q = T(1) / cdd;
        f = dl * q;
        ndd = ndd - f * cdu;
        return false;
    }
    bad = bad_divisor(dl);
    q = T(1) / dl;
    f = cdd * q;
    const T tmp = ndd;
    ndd = cdu - f * tmp;
    if (more) {
        du2 = ndu;
        ndu = -f * du2;
    }
    cdu = tmp;
    return true;
}

template <typename T> __device__ __forceinline__ void ppart_rhs(bool swap, T f, T &c, T &n) {
    if (!swap) {
        n = n - f * c;
        return;
    }
    const T u = n;
    n = c - f * n;
    c = u;
}

// ppart_gtsv solves R rows of a tridiagonal system, row r's sub, diag,
// super and right side at(r, 0 … 3), by gtsv's elimination with partial
// pivoting (divisions by a pivot as products by its reciprocal;
// pivotpart.SolveDirect), its factor over at(r, 0 … 3) (du2, reciprocal,
// du, right side), row r's solution to xo(r) once the row is read.
// report(r) gets the first row whose pivot is a bad divisor. One thread.
template <typename T, typename At, typename Xo, typename Bad>
__device__ __forceinline__ void ppart_gtsv(int R, At at, Xo xo, Bad report) {
    T cdd = at(0, 1), cdu = R > 1 ? at(0, 2) : T(0), cx = at(0, 3);
    int bad = -1;
    for (int r = 0; r < R - 1; r++) {
        const T dl = at(r + 1, 0);
        T ndd = at(r + 1, 1);
        T ndu = r + 1 < R - 1 ? at(r + 1, 2) : T(0);
        T nx = at(r + 1, 3);
        T du2, q, f;
        bool b;
        const bool swap = ppart_step(cdd, cdu, dl, ndd, ndu, r + 1 < R - 1, q, f, du2, b);
        if (b && bad < 0) bad = r;
        ppart_rhs(swap, f, cx, nx);
        at(r, 0) = du2;
        at(r, 1) = q;
        at(r, 2) = cdu;
        at(r, 3) = cx;
        cdd = ndd;
        cdu = ndu;
        cx = nx;
    }
    if (bad_divisor(cdd) && bad < 0) bad = R - 1;
    if (bad >= 0) report(bad);
    T x1 = cx * (T(1) / cdd), x2 = T(0);
    xo(R - 1) = x1;
    for (int r = R - 2; r >= 0; r--) {
        const T x0 = r == R - 2 ? (at(r, 3) - at(r, 2) * x1) * at(r, 1)
                                : ((at(r, 3) - at(r, 2) * x1) - at(r, 0) * x2) * at(r, 1);
        xo(r) = x0;
        x2 = x1;
        x1 = x0;
    }
}

// PPSweep is the carried row of a Stage 1 sweep: e on the kept coarse
// unknown, p on the unknown the next step eliminates, q on the one after
// it, r the right side.
template <typename T> struct PPSweep {
    T e, p, q, r;
};

// ppart_sweep is one elimination of Stage 1 (pivotpart's sweep) over the
// chunk's rows first, first+dir, … (count rows, 1 ≤ count ≤ P−1), row j's
// a, b, c, d at at(j, 0 … 3), read in the sweep's direction (lo: a for
// dir = +1, c for dir = −1; hi the other), hi of the last row hiLast. bad
// gets the first row whose step met a non-finite pivot, if none before.
template <typename T, int P, typename At>
__device__ __forceinline__ PPSweep<T> ppart_sweep(At at, int first, int count, int dir, T hiLast, int &bad) {
    const int lo = dir > 0 ? 0 : 2, hi = 2 - lo;
    int i = first;
    PPSweep<T> S{at(i, lo), at(i, 1), count > 1 ? at(i, hi) : hiLast, at(i, 3)};
#pragma unroll 1
    for (int j = 1; j < count; j++) {
        {
            i += dir;
            const T q0 = at(i, lo), q1 = at(i, 1), q2 = j < count - 1 ? at(i, hi) : hiLast, qr = at(i, 3);
            if (fabs(q0) > fabs(S.p)) {
                // The new row is the pivot: the carried row takes −S.p/q0 of it.
                if (bad < 0 && !isfinite(q0)) bad = i - dir;
                const T f = S.p / q0;
                S = PPSweep<T>{S.e, S.q - f * q1, -(f * q2), S.r - f * qr};
            } else {
                // The carried row is the pivot: the new row takes −q0/S.p of it.
                T f = T(0);
                if (S.p != T(0)) {
                    if (bad < 0 && !isfinite(S.p)) bad = i - dir;
                    f = q0 / S.p;
                }
                S = PPSweep<T>{-(f * S.e), q1 - f * S.q, q2, qr - f * S.r};
            }
        }
    }
    return S;
}

// ppart_rows is Stage 1 for a chunk of m ≥ 1 rows (pivotpart's
// PartitionRows), row j's a, b, c, d at at(j, 0 … 3); prev and next say
// whether rows come before and after the chunk in its system (a of the
// first row and c of the last are read only then). It writes the chunk's
// first coarse row (on x_{s−1}, x_s, x_{e−1}) to F and, for m ≥ 2, its
// last (on x_s, x_{e−1}, x_e) to L, and returns the chunk's first row
// whose elimination met a non-finite pivot, or −1. A chunk of one row has
// its own row as its coarse row.
template <typename T, int P, typename At>
__device__ __forceinline__ int ppart_rows(At at, int m, bool prev, bool next, PartEq<T> &F, PartEq<T> &L) {
    const T as = prev ? at(0, 0) : T(0);
    if (m == 1) {
        F = PartEq<T>{as, at(0, 1), T(0), at(0, 3)};
        return -1;
    }
    const T ce = next ? at(m - 1, 2) : T(0);
    int bu = -1, bl = -1;
    const PPSweep<T> up = ppart_sweep<T, P>(at, m - 2, m - 1, -1, as, bu);
    const PPSweep<T> lo = ppart_sweep<T, P>(at, 1, m - 1, +1, ce, bl);
    F = PartEq<T>{up.q, up.p, up.e, up.r};
    L = PartEq<T>{lo.e, lo.p, lo.q, lo.r};
    return bl >= 0 && (bu < 0 || bl < bu) ? bl : bu;
}

// ppart_scale is the reciprocal of a row's scale: 1/max(|u|, |v|, |w|),
// 1 for a zero row.
template <typename T> __device__ __forceinline__ T ppart_scale(T u, T v, T w) {
    const T s = fmax(fmax(fabs(u), fabs(v)), fabs(w));
    return s == T(0) ? T(1) : T(1) / s;
}

// PPTall is a row of Stage 3 not yet a pivot row: p on the unknown the
// next step eliminates, q on the one after it, r the right side, w the
// reciprocal of its row's scale.
template <typename T> struct PPTall {
    T p, q, r, w;
};

// ppart_part is Stage 3 for a chunk of m ≥ 2 rows (pivotpart's
// SolvePartition): row j's a, b, c, d at at(j, 0 … 3) (prev, next as in
// ppart_rows), the coarse solution's xl = x_{s−1}, xs = x_s, xe = x_{e−1},
// xr = x_e. The interior unknowns are eliminated with scaled partial
// pivoting, the pivot row of row j's unknown kept at piv(j, 0 … 2) (u1,
// r, 1/u0; u2 is row j+1's c where the bit j of a mask says so), and back
// substitution writes out(j) for j = m−2 … 1, then out(0) = xs and
// out(m−1) = xe: every d of the chunk is read before out is written. It
// returns the first row whose pivot is a bad divisor (out then partly
// written), or −1.
template <typename T, int P, typename At, typename Piv, typename Out>
__device__ __forceinline__ int ppart_part(At at, int m, bool prev, bool next, T xl, T xs, T xe, T xr, Piv piv,
                                          Out out) {
    if (m == 2) {
        out(0) = xs;
        out(1) = xe;
        return -1;
    }
    const T as = prev ? at(0, 0) : T(0);
    T r0 = at(0, 3);
    if (prev) r0 = r0 - at(0, 0) * xl;
    r0 = r0 - at(0, 1) * xs;
    PPTall<T> l1{at(0, 2), T(0), r0, ppart_scale(as, at(0, 1), at(0, 2))};
    T r1 = at(1, 3) - at(1, 0) * xs, q1 = at(1, 2);
    if (m == 3) {
        r1 = r1 - at(1, 2) * xe;
        q1 = T(0);
    }
    PPTall<T> l2{at(1, 1), q1, r1, ppart_scale(at(1, 0), at(1, 1), at(1, 2))};
    int bad = -1;
    unsigned mask = 0; // bit j: the pivot of row j's unknown is row j+1, its u2 that row's c
#pragma unroll 1
    for (int j = 1; j < m - 1; j++) {
        {
            const int i = j + 1;
            const T ci = (i < m - 1 || next) ? at(i, 2) : T(0);
            const T w = ppart_scale(at(i, 0), at(i, 1), ci);
            // Row j+1 is the chunk's last (its x_{j+1} = xe and x_e = xr
            // known) or the one before it (x_{j+2} = xe known).
            const bool last = i == m - 1, penult = i + 1 == m - 1;
            T nr = at(i, 3);
            if (last) {
                nr = nr - at(i, 1) * xe;
                if (next) nr = nr - at(i, 2) * xr;
            } else if (penult) {
                nr = nr - at(i, 2) * xe;
            }
            const T nu0 = at(i, 0), nu1 = last ? T(0) : at(i, 1), nu2 = last || penult ? T(0) : ci;
            const T g1 = fabs(l1.p) * l1.w, g2 = fabs(l2.p) * l2.w, g3 = fabs(nu0) * w;
            T u0 = T(0), u1 = T(0), u2 = T(0), pr = T(0);
            PPTall<T> o1{}, o2{};
            T o1u2 = T(0), o2u2 = T(0);
            if (g3 > g1 && g3 > g2) {
                u0 = nu0, u1 = nu1, u2 = nu2, pr = nr;
                o1 = l1, o2 = l2;
                if (i < m - 2) mask |= 1u << j;
            } else if (g2 > g1) {
                u0 = l2.p, u1 = l2.q, pr = l2.r;
                o1 = l1, o2 = PPTall<T>{nu0, nu1, nr, w};
                o2u2 = nu2;
            } else {
                u0 = l1.p, u1 = l1.q, pr = l1.r;
                o1 = l2, o2 = PPTall<T>{nu0, nu1, nr, w};
                o2u2 = nu2;
            }
            T q = T(0);
            if (bad_divisor(u0)) {
                if (bad < 0) bad = j;
            } else {
                q = T(1) / u0;
            }
            piv(j, 0) = u1;
            piv(j, 1) = pr;
            piv(j, 2) = q;
            const T f1 = o1.p * q, f2 = o2.p * q;
            l1 = PPTall<T>{o1.q - f1 * u1, o1u2 - f1 * u2, o1.r - f1 * pr, o1.w};
            l2 = PPTall<T>{o2.q - f2 * u1, o2u2 - f2 * u2, o2.r - f2 * pr, o2.w};
        }
    }
    if (bad >= 0) return bad;
    T x1 = T(0), x2 = T(0);
#pragma unroll 1
    for (int j = m - 2; j >= 1; j--) {
        {
            const T u2 = (mask >> j) & 1u ? at(j + 1, 2) : T(0);
            const T v = ((piv(j, 1) - piv(j, 0) * x1) - u2 * x2) * piv(j, 2);
            out(j) = v;
            x2 = x1, x1 = v;
        }
    }
    out(0) = xs;
    out(m - 1) = xe;
    return -1;
}

// ppart_residual is Stage 4's residual of a row (pivotpart.Residual):
// d − b·x − a·xp − c·xn (a·xp only where prev, c·xn only where next),
// formed to twice the working precision and rounded once: FP32 in FP64;
// FP64 with every product split by a fused multiply-add and every
// difference made exact (TwoSum), the errors added at the end.
__device__ __forceinline__ float ppart_residual(float a, float b, float c, float d, float xp, float x, float xn,
                                                bool prev, bool next) {
    double v = (double)d - (double)b * (double)x;
    if (prev) v = v - (double)a * (double)xp;
    if (next) v = v - (double)c * (double)xn;
    return (float)v;
}

__device__ __forceinline__ void ppart_sub2(double &s, double &err, double u, double v) {
    const double p = u * v;
    const double pe = fma(u, v, -p);
    const double t = s - p;
    const double z = t - s;
    const double te = (s - (t - z)) + (-p - z);
    s = t;
    err = err + (te - pe);
}

__device__ __forceinline__ double ppart_residual(double a, double b, double c, double d, double xp, double x,
                                                 double xn, bool prev, bool next) {
    double s = d, err = 0.0;
    ppart_sub2(s, err, b, x);
    if (prev) ppart_sub2(s, err, a, xp);
    if (next) ppart_sub2(s, err, c, xn);
    return s + err;
}

// PPART_DIRECT is the largest coarse system a block solves in one thread
// (ppart_gtsv); a larger one (at most 2·16·PPART_DIRECT/2 rows: systems of
// up to 4096 rows, tuning.PivotMaxN) is solved by chunks of P coarse rows
// whose coarse system one thread solves. One thread on the whole coarse
// system of N = 4096 costs two thirds of the time (FP32 N = 4096: 7.7% of
// the limit against 24.8%, bandsolve bench -device cuda -grid layouts
// -algorithms partition-pivot).
#define PPART_DIRECT 64

// PPartBlock holds the shared arrays and the thread's place of
// partition_pivot_kernel.
template <typename T, int P> struct PPartBlock {
    typedef PartSlots<T, P> SL;
    static constexpr int U = P * (int)sizeof(T) / 16;
    T *SA, *SB, *SC, *SD, *SE, *SU, *SV, *SQ;
    int *key, *nonfinite;
    int s, t, ss, n, nch, m, RR;
    bool live, sysLive;
    __device__ __forceinline__ int X(int c) const { return part_x(s * ss + c * U); }
    // Row j of chunk c in array q: a, b, c, rhs.
    __device__ __forceinline__ T &row(const T *rhs, int c, int j, int q) const {
        T *arr = q == 0 ? SA : q == 1 ? SB : q == 2 ? SC : const_cast<T *>(rhs);
        return arr[SL::pos(X(c), j)];
    }
    // Coarse row r: a, b, c, d at U or V slots 0 … 3 of chunk r/2.
    __device__ __forceinline__ T &crow(int r, int q) const { return ((r & 1) ? SV : SU)[SL::pos(X(r >> 1), q)]; }
    // The coarse solution of coarse row r: Q slot 0 or P−1 of chunk r/2.
    __device__ __forceinline__ T &cx(int r) const { return SQ[SL::pos(X(r >> 1), (r & 1) ? P - 1 : 0)]; }
    // The system's row that coarse row r stands for.
    __device__ __forceinline__ int crowOf(int r) const {
        const int c = r >> 1;
        return c * P + ((r & 1) ? min(P, n - c * P) - 1 : 0);
    }
    __device__ __forceinline__ void report(int stage, int row) const { atomicMin(key, PART_KEY(stage, row)); }
};

// ppart_pass runs Stages 1–3 of every live system of the block on the
// right sides rhs (D: d, or the residual) into out (E, or D: the
// correction), where active; every thread of the block calls it (it
// synchronises).
template <typename T, int P>
__device__ __forceinline__ void ppart_pass(const PPartBlock<T, P> &B, const T *rhs, T *out, bool active) {
    typedef PartSlots<T, P> SL;
    const int t = B.t, nch = B.nch, RR = B.RR;
    const auto at = [&](int j, int q) -> T & { return B.row(rhs, t, j, q); };

    // Stage 1: the chunk's coarse rows.
    if (B.live && active) {
        PartEq<T> F{}, L{};
        const int bad = ppart_rows<T, P>(at, B.m, t > 0, t < nch - 1, F, L);
        if (bad >= 0) B.report(1, t * P + bad);
        const auto put = [&](int r, const PartEq<T> &e) {
            B.crow(r, 0) = e.a, B.crow(r, 1) = e.b, B.crow(r, 2) = e.c, B.crow(r, 3) = e.d;
        };
        put(2 * t, F);
        if (B.m > 1) put(2 * t + 1, L);
    }
    __syncthreads();

    // Stage 2: the coarse system of RR rows.
    if (RR <= PPART_DIRECT) {
        if (t == 0 && B.sysLive && active)
            ppart_gtsv<T>(
                RR, [&](int r, int q) -> T & { return B.crow(r, q); }, [&](int r) -> T & { return B.cx(r); },
                [&](int r) { B.report(3, B.crowOf(r)); });
    } else {
        // Chunks of P coarse rows, thread t the coarse rows P·t …: their
        // coarse rows at U, V slots 4 … 7 of chunk (P/2)·t, solution at Q
        // slots 4, 5 there.
        const int n2 = (RR + P - 1) / P, m2 = t < n2 ? min(P, RR - t * P) : 0;
        const bool live2 = m2 > 0 && B.sysLive && active;
        const int R2 = 2 * n2 - (RR - (n2 - 1) * P == 1 ? 1 : 0);
        const auto row2 = [&](int r2, int q) -> T & {
            return ((r2 & 1) ? B.SV : B.SU)[SL::pos(B.X((r2 >> 1) * (P / 2)), 4 + q)];
        };
        const auto x2 = [&](int r2) -> T & { return B.SQ[SL::pos(B.X((r2 >> 1) * (P / 2)), 4 + (r2 & 1))]; };
        const auto crowOf2 = [&](int r2) {
            const int c2 = r2 >> 1;
            return B.crowOf(c2 * P + ((r2 & 1) ? min(P, RR - c2 * P) - 1 : 0));
        };
        const auto at2 = [&](int j, int q) -> T & { return B.crow(t * P + j, q); };
        if (live2) {
            PartEq<T> F{}, L{};
            const int bad = ppart_rows<T, P>(at2, m2, t > 0, t < n2 - 1, F, L);
            if (bad >= 0) B.report(2, B.crowOf(t * P + bad));
            row2(2 * t, 0) = F.a, row2(2 * t, 1) = F.b, row2(2 * t, 2) = F.c, row2(2 * t, 3) = F.d;
            if (m2 > 1) row2(2 * t + 1, 0) = L.a, row2(2 * t + 1, 1) = L.b, row2(2 * t + 1, 2) = L.c, row2(2 * t + 1, 3) = L.d;
        }
        __syncthreads();
        if (t == 0 && B.sysLive && active) ppart_gtsv<T>(R2, row2, x2, [&](int r2) { B.report(3, crowOf2(r2)); });
        __syncthreads();
        if (live2) {
            if (m2 == 1) {
                B.cx(t * P) = x2(2 * t);
            } else {
                const auto piv2 = [&](int j, int q) -> T & {
                    const int r = t * P + j;
                    return (q == 0 ? B.SU : q == 1 ? B.SV : B.SQ)[SL::pos(B.X(r >> 1), 8 + (r & 1))];
                };
                const int bad = ppart_part<T, P>(at2, m2, t > 0, t < n2 - 1, t > 0 ? x2(2 * t - 1) : T(0), x2(2 * t),
                                                 x2(2 * t + 1), t < n2 - 1 ? x2(2 * t + 2) : T(0), piv2,
                                                 [&](int j) -> T & { return B.cx(t * P + j); });
                if (bad >= 0) B.report(4, B.crowOf(t * P + bad));
            }
        }
    }
    __syncthreads();

    // Stage 3: the chunk's interior unknowns from its rows and the coarse
    // solution.
    if (B.live && active) {
        const int X = B.X(t);
        if (B.m == 1) {
            out[SL::pos(X, 0)] = B.cx(2 * t);
        } else {
            const auto piv = [&](int j, int q) -> T & { return (q == 0 ? B.SU : q == 1 ? B.SV : B.SQ)[SL::pos(X, j)]; };
            const int bad = ppart_part<T, P>(at, B.m, t > 0, t < nch - 1, t > 0 ? B.cx(2 * t - 1) : T(0), B.cx(2 * t),
                                             B.cx(2 * t + 1), t < nch - 1 ? B.cx(2 * t + 2) : T(0), piv,
                                             [&](int j) -> T & { return out[SL::pos(X, j)]; });
            if (bad >= 0) B.report(5, t * P + bad);
        }
    }
    __syncthreads();
}

template <typename T, int P>
__device__ void partition_pivot_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status,
                                       int spb, int tps, int refine, volatile unsigned int *word, unsigned int seq) {
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P == 16 && U >= 1, "chunks of 16 rows: the scratch slots above");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    PPartBlock<T, P> B;
    B.n = n;
    B.nch = (n + P - 1) / P;
    B.ss = part_ss<T, P>(n, bs < es);
    const int W = ((spb * B.ss + 7) & ~7) * R;
    B.SA = sm, B.SB = B.SA + W, B.SC = B.SB + W, B.SD = B.SC + W, B.SE = B.SD + W;
    B.SU = B.SE + W, B.SV = B.SU + W, B.SQ = B.SV + W;
    int *keys = reinterpret_cast<int *>(B.SQ + W), *flags = keys + spb;
    B.s = threadIdx.x / tps, B.t = threadIdx.x - B.s * tps;
    const int g0 = blockIdx.x * spb;
    const bool has = B.t < B.nch;
    B.m = has ? min(P, n - B.t * P) : 0;
    B.sysLive = g0 + B.s < G;
    B.live = has && B.sysLive;
    B.key = keys + B.s;
    B.nonfinite = flags + B.s;
    B.RR = 2 * B.nch - (n - (B.nch - 1) * P == 1 ? 1 : 0);
    const int t = B.t, X = B.X(t);

    for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[q] = PART_NONE, flags[q] = 0;
    part_load<T, P>(k, d, B.SA, B.SB, B.SC, B.SD, B.ss, n, G, es, bs, spb, g0);
    __syncthreads();

    if (n <= P) {
        // A system of at most P rows: gtsv's elimination (SolveDirect), not
        // refined.
        if (t == 0 && B.sysLive)
            ppart_gtsv<T>(
                n, [&](int r, int q) -> T & { return B.row(B.SD, 0, r, q); },
                [&](int r) -> T & { return B.SE[SL::pos(X, r)]; }, [&](int r) { B.report(1, r); });
        __syncthreads();
    } else {
        // Stages 1–3 into E.
        ppart_pass<T, P>(B, B.SD, B.SE, true);
    }

    if (refine && n > P) {
        // Stage 4 for the systems without a breakdown: the residual over d
        // (x_{s−1} and x_e of the neighbouring chunks' E), then, unless a
        // residual is not finite, Stages 1–3 on it into D and x = E + D.
        const bool ok = *B.key == PART_NONE;
        if (B.live && ok) {
            const T xp = t > 0 ? B.SE[SL::pos(B.X(t - 1), P - 1)] : T(0);
            const T xn = t < B.nch - 1 ? B.SE[SL::pos(B.X(t + 1), 0)] : T(0);
            T prevx = xp;
            for (int j = 0; j < B.m; j++) {
                const int pj = SL::pos(X, j);
                const T xj = B.SE[pj];
                const bool nx = j < B.m - 1 || t < B.nch - 1;
                const T xnext = j < B.m - 1 ? B.SE[SL::pos(X, j + 1)] : xn;
                const T r = ppart_residual(B.SA[pj], B.SB[pj], B.SC[pj], B.SD[pj], prevx, xj, xnext, j > 0 || t > 0, nx);
                B.SD[pj] = r;
                if (!isfinite(r)) *B.nonfinite = 1;
                prevx = xj;
            }
        }
        __syncthreads();
        const bool go = ok && *B.nonfinite == 0;
        ppart_pass<T, P>(B, B.SD, B.SD, go);
        if (B.live && go)
            for (int j = 0; j < B.m; j++) {
                const int pj = SL::pos(X, j);
                B.SE[pj] = B.SE[pj] + B.SD[pj];
            }
    }
    // A system's non-finite x fails it; a coarse system's (not refined)
    // is left to the system it belongs to, which then finds its own.
    if (refine && B.live)
        for (int j = 0; j < B.m; j++)
            if (!isfinite(B.SE[SL::pos(X, j)])) {
                B.report(6, t * P + j);
                break;
            }
    __syncthreads();
    part_store<T, P>(B.SE, keys, x, B.ss, n, G, es, bs, spb, g0);
    part_status(keys, G, spb, g0, status);
    block_done_signal(status, G, word, seq);
}

// Systems longer than a block holds run in passes over segments of S rows
// (S a multiple of P; block b takes segment b mod Q of system b / Q,
// Q = ⌈n/S⌉, one thread a chunk), the coarse systems (G systems of RR
// rows, contiguous, in RA, RB, RC, RD; solution RX) solved by another plan
// between them, without refinement:
//   - REDUCE: Stage 1, the chunks' coarse rows to RA … RD;
//   - EXPAND: Stage 3 with the coarse solution RX. Without refinement x
//     to x; with it, the solution of Stages 1–3 to XH (G systems of n
//     rows, contiguous), the residual (x_{s−1}, x_e: RX), a non-finite one
//     flagged in flags[g], and Stage 1 on the residual: the coarse rows of
//     the correction to RA … RD;
//   - CORRECT (refinement only): the residual again (the same bits; x_{s−1},
//     x_e of the segment's neighbours from XH), Stage 3 on it with the
//     correction's coarse solution RX, x = XH + the correction (XH where
//     flags[g] is set).
// partition_pivot_finish then reports. Breakdown keys are 64-bit,
// stage << 40 | row, the smallest kept per system in keys[g] (all ones:
// none): stage 1 Stage 1, 2 the coarse system, 3 Stage 3, 4 a non-finite
// x (with refinement only: a coarse system's is left to its system).
#define PPART_NONE 0xffffffffffffffffull
#define PPART_KEY(stage, row) (((unsigned long long)(stage) << 40) | (unsigned long long)(row))
#define PPART_REDUCE 0
#define PPART_EXPAND 1
#define PPART_CORRECT 2

// PPSeg is a thread's chunk in a segment kernel: its rows in A, B, C, D
// (D: d or the residual), the solution of Stages 1–3 in E, Stage 3's
// pivot rows in U, V, Q; cb its first coarse row in RA … RD and RX.
template <typename T, int P> struct PPSeg {
    typedef PartSlots<T, P> SL;
    T *SA, *SB, *SC, *SD, *SE, *SU, *SV, *SQ;
    const T *RX;
    int X, m;
    bool prev, next;
    i64 cb;
    __device__ __forceinline__ T &at(int j, int q) const {
        return (q == 0 ? SA : q == 1 ? SB : q == 2 ? SC : SD)[SL::pos(X, j)];
    }
    // rows is Stage 1 over D: the chunk's coarse rows to RA … RD; it
    // returns ppart_rows's bad row.
    __device__ __forceinline__ int rows(T *RA, T *RB, T *RC, T *RD) const {
        PartEq<T> F{}, L{};
        const int bad = ppart_rows<T, P>([&](int j, int q) -> T & { return at(j, q); }, m, prev, next, F, L);
        RA[cb] = F.a, RB[cb] = F.b, RC[cb] = F.c, RD[cb] = F.d;
        if (m > 1) RA[cb + 1] = L.a, RB[cb + 1] = L.b, RC[cb + 1] = L.c, RD[cb + 1] = L.d;
        return bad;
    }
    // stage3 is Stage 3 over D with the coarse solution RX into out; it
    // returns ppart_part's bad row.
    __device__ __forceinline__ int stage3(T *out) const {
        if (m == 1) {
            out[SL::pos(X, 0)] = RX[cb];
            return -1;
        }
        return ppart_part<T, P>([&](int j, int q) -> T & { return at(j, q); }, m, prev, next,
                                prev ? RX[cb - 1] : T(0), RX[cb], RX[cb + 1], next ? RX[cb + 2] : T(0),
                                [&](int j, int q) -> T & { return (q == 0 ? SU : q == 1 ? SV : SQ)[SL::pos(X, j)]; },
                                [&](int j) -> T & { return out[SL::pos(X, j)]; });
    }
    // residual replaces D by the residual of E (xp = x_{s−1}, xn = x_e);
    // it returns whether every residual is finite.
    __device__ __forceinline__ bool residual(T xp, T xn) const {
        bool fin = true;
        T prevx = xp;
        for (int j = 0; j < m; j++) {
            const int pj = SL::pos(X, j);
            const T xj = SE[pj];
            const T xnext = j < m - 1 ? SE[SL::pos(X, j + 1)] : xn;
            const T r = ppart_residual(SA[pj], SB[pj], SC[pj], SD[pj], prevx, xj, xnext, j > 0 || prev,
                                       j < m - 1 || next);
            SD[pj] = r;
            fin = fin && isfinite(r);
            prevx = xj;
        }
        return fin;
    }
};

template <typename T, int P, int MODE>
__device__ void partition_pivot_seg_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int S, T *RA,
                                           T *RB, T *RC, T *RD, const T *RX, T *XH, int *flags,
                                           unsigned long long *keys, int refine) {
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8, "chunks of whole units");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    const int Q = (n + S - 1) / S;
    const int g = blockIdx.x / Q, q = blockIdx.x - g * Q;
    const int ns = min(S, n - q * S); // the segment's rows
    const i64 off = (i64)g * bs + (i64)q * S * es;
    const i64 hoff = (i64)g * n + (i64)q * S; // the segment's first row in XH
    Coeffs<T> ks = k;
    if (!k.isConst) ks.a = k.a + off, ks.b = k.b + off, ks.c = k.c + off;
    const int ss = part_ss<T, P>(ns, false);
    const int W = ((ss + 7) & ~7) * R;
    T *SA = sm, *SB = SA + W, *SC = SB + W, *SD = SC + W, *SE = SD + W, *SU = SE + W, *SV = SU + W, *SQ = SV + W;
    int *skey = reinterpret_cast<int *>(SQ + W);
    const int t = threadIdx.x;
    const int nch = (n + P - 1) / P; // the system's chunks
    const int cg = q * (S / P) + t;  // this thread's chunk in the system
    const bool live = t * P < ns;
    const int m = live ? min(P, ns - t * P) : 0;
    const int X = part_x(t * U);
    const bool prev = cg > 0, next = cg < nch - 1;
    const int RR = 2 * nch - (n - (nch - 1) * P == 1 ? 1 : 0);
    const i64 cb = (i64)g * RR + 2 * cg; // the chunk's first coarse row
    PPSeg<T, P> C{SA, SB, SC, SD, SE, SU, SV, SQ, RX, X, m, prev, next, cb};
    const auto report = [&](int stage, int bad) { atomicMin(keys + g, PPART_KEY(stage, (i64)cg * P + bad)); };
    if (t == 0) skey[0] = PART_NONE;
    part_load<T, P>(ks, d + off, SA, SB, SC, SD, ss, ns, 1, es, (i64)ns * es, 1, 0);
    if (MODE == PPART_CORRECT) {
        // XH's segment into E.
        const Coeffs<T> none{nullptr, nullptr, nullptr, T(0), T(0), T(0), 1};
        part_copy<T, P, true, true>(none, XH + hoff, nullptr, nullptr, nullptr, SE, ss, ns, 1, 1, ns, 1, 0);
    }
    __syncthreads();
    if (MODE == PPART_REDUCE) {
        if (live) {
            const int bad = C.rows(RA, RB, RC, RD);
            if (bad >= 0) report(1, bad);
        }
        return;
    }
    if (MODE == PPART_EXPAND) {
        if (live) {
            const int bad = C.stage3(SE);
            if (bad >= 0) report(3, bad);
        }
        __syncthreads();
        part_store<T, P, true>(SE, skey, refine ? XH + hoff : x + off, ss, ns, 1, refine ? 1 : es,
                               refine ? (i64)ns : (i64)ns * es, 1, 0);
        if (refine && live) {
            if (!C.residual(prev ? RX[cb - 1] : T(0), next ? RX[cb + 2] : T(0))) atomicOr(flags + g, 1);
            C.rows(RA, RB, RC, RD);
        }
        return;
    }
    // PPART_CORRECT.
    if (live) {
        const T xp = !prev ? T(0) : t > 0 ? SE[SL::pos(part_x((t - 1) * U), P - 1)] : XH[hoff - 1];
        const T xn = !next ? T(0) : (t + 1) * P < ns ? SE[SL::pos(part_x((t + 1) * U), 0)] : XH[hoff + ns];
        C.residual(xp, xn);
    }
    __syncthreads();
    if (live && flags[g] == 0) {
        // The correction over D (Stage 3 reads its rows' residuals first).
        C.stage3(SD);
        for (int j = 0; j < m; j++) {
            const int pj = SL::pos(X, j);
            SE[pj] = SE[pj] + SD[pj];
        }
    }
    if (live)
        for (int j = 0; j < m; j++)
            if (!isfinite(SE[SL::pos(X, j)])) {
                report(4, j);
                break;
            }
    __syncthreads();
    part_store<T, P, true>(SE, skey, x + off, ss, ns, 1, es, (i64)ns * es, 1, 0);
}

// partition_pivot_finish ends a segmented solve, one block a system: the
// smallest of the system's key and its coarse system's breakdown
// (cstatus: row+1 of the coarse row, 0 none; stage 2 at the row that
// coarse row stands for) goes to status as row+1, with the flag
// status[G], and the system's x becomes NaN.
template <typename T, int P>
__device__ void partition_pivot_finish(T *x, int n, int G, i64 es, i64 bs, const unsigned long long *keys,
                                       const int *cstatus, int *status) {
    const int g = blockIdx.x;
    unsigned long long key = keys[g];
    const int cs = cstatus[g];
    if (cs != 0) {
        const int r = cs - 1, c = r >> 1;
        const long long row = (i64)c * P + ((r & 1) ? min(P, n - c * P) - 1 : 0);
        key = min(key, PPART_KEY(2, row));
    }
    if (key == PPART_NONE) return;
    if (threadIdx.x == 0) {
        atomicCAS(&status[g], 0, (int)(key & 0xffffffffffull) + 1);
        status[G] = 1;
    }
    const T q = nan_of<T>();
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) x[(i64)g * bs + i * es] = q;
}

// partition_pivot_p<P>_*: the partition method with partial pivoting,
// chunks of P rows, the parameters of partition_p<P>_* (refine: Stage 4)
// and its launch rules within this kernel's bound (tuning.PivotLaunch).
#ifndef BS_DEVICE_ONLY
#define PARTITION_PIVOT(T, S, P, MAXT)                                                                            \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                           \
        partition_pivot_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es,    \
                                   i64 bs, T ca, T cb, T cc, int isConst, int *status, int spb, int tps,         \
                                   int refine, volatile unsigned int *word, unsigned int seq) {                  \
        partition_pivot_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb,    \
                                     tps, refine, word, seq);                                                    \
    }
PARTITION_PIVOT(float, f32, 16, 512)
PARTITION_PIVOT(double, f64, 16, 512)

// partition_pivot_{reduce,expand,correct}_p<P>_*: the passes of a
// segmented solve (partition_pivot_seg_kernel). Grid: G·⌈n/S⌉ blocks of
// S/P threads (at most 256: segments of up to 4096 rows); shared memory
// tuning.PivotSharedBytes for one system of S rows.
#define PARTITION_PIVOT_SEG(T, S, P, MAXT)                                                                        \
    extern "C" __global__ void __launch_bounds__(MAXT) partition_pivot_reduce_p##P##_##S(                         \
        const T *a, const T *b, const T *c, const T *d, int n, int G, i64 es, i64 bs, T ca, T cb, T cc,           \
        int isConst, int seg, T *RA, T *RB, T *RC, T *RD, unsigned long long *keys) {                              \
        partition_pivot_seg_kernel<T, P, PPART_REDUCE>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, nullptr, n, G,  \
                                                       es, bs, seg, RA, RB, RC, RD, nullptr, nullptr, nullptr,     \
                                                       keys, 0);                                                   \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(MAXT) partition_pivot_expand_p##P##_##S(                         \
        const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc,     \
        int isConst, int seg, T *RA, T *RB, T *RC, T *RD, const T *RX, T *XH, int *flags,                        \
        unsigned long long *keys, int refine) {                                                                    \
        partition_pivot_seg_kernel<T, P, PPART_EXPAND>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es,    \
                                                       bs, seg, RA, RB, RC, RD, RX, XH, flags, keys, refine);      \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(MAXT) partition_pivot_correct_p##P##_##S(                        \
        const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc,     \
        int isConst, int seg, const T *RX, T *XH, int *flags, unsigned long long *keys) {                          \
        partition_pivot_seg_kernel<T, P, PPART_CORRECT>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es,   \
                                                        bs, seg, nullptr, nullptr, nullptr, nullptr, RX, XH,       \
                                                        flags, keys, 1);                                           \
    }                                                                                                             \
    extern "C" __global__ void partition_pivot_finish_p##P##_##S(T *x, int n, int G, i64 es, i64 bs,                \
                                                                 const unsigned long long *keys,                   \
                                                                 const int *cstatus, int *status) {                \
        partition_pivot_finish<T, P>(x, n, G, es, bs, keys, cstatus, status);                                     \
    }
PARTITION_PIVOT_SEG(float, f32, 16, 256)
PARTITION_PIVOT_SEG(double, f64, 16, 256)
#endif
