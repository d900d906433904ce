// The partition method with partial pivoting (package tridiag/pivotpart
// is the CPU twin; it documents the method and does these operations in
// the same order, so with -fmad=false the results agree bit for bit).
// Every system is cut into chunks of P rows, one chunk per thread, held in
// shared memory as partition.cuh holds them (the same launch, layout,
// loads and stores; launch: tuning.PivotLaunch).
//
// Stage 1: each thread factors its chunk's own m×m block T by Gaussian
// elimination with partial pivoting (LAPACK gtsv's rule, gtsv.cuh) and
// solves T·[y v w] = [d, a_s·e_0, c_e·e_{m−1}] (a_s couples the chunk to
// the row before it, c_e to the row after it), so that the chunk's
// unknowns are u = y − v·x_left − w·x_right. Two division-free, scaled
// combinations of its first and last rows give the chunk's rows of the
// coarse system, one free of x_right and one free of x_left: a
// tridiagonal system of two rows a chunk (one for a last chunk of one
// row, whose own equation is its row).
// Stage 2: one thread per system solves the coarse system by gtsv's
// elimination with partial pivoting.
// Stage 3: each thread forms u = (y − v·x_left) − w·x_right.
//
// Shared memory as partition.cuh: A, B, C, D of the chunk. Stage 1 keeps
// the factor (du2, dd, du) and y's forward sweep in the A, B, C, D slots
// of a row as it finishes the row (its a, b, c, d are read by then), v's
// in registers; its back substitution leaves y, v, w in the A, B, C
// slots. The coarse rows (sub, diag, super, right side) take D slots
// 0 … 7 of the chunk, then their factor; their solution D slots 8
// (first row) and 9 (last row). x goes to the C slots.
//
// Breakdown keys as partition.cuh's: stage 1 a zero pivot of a chunk's
// block, stage 2 one of the coarse system, stage 3 a non-finite x; a
// failed system gets NaN in every row.
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

// ppart_chunk is Stage 1 for a chunk of m ≥ 2 rows whose row j's a, b, c,
// d are at(j, 0 … 3): aS and cE are the couplings to the rows before and
// after the chunk (0 at the system's ends). The factor (du2, the pivot's
// reciprocal, du) and y's forward sweep go over at(j, 0 … 3) as row j is
// finished; the back substitution leaves y, v, w in at(j, 0 … 2). It
// returns y, v, w of the chunk's first (…0) and last (…l) rows and
// reports the first local row whose pivot is a bad divisor.
template <typename T, int P, typename At, typename Bad>
__device__ __forceinline__ void ppart_chunk(At at, int m, T aS, T cE, T &y0, T &v0, T &w0, T &yl, T &vl, T &wl,
                                            Bad report) {
    T rv[P];
    T cdd = at(0, 1), cdu = at(0, 2), cy = at(0, 3), cv = aS, cw = T(0);
    T rw2 = T(0), rwl = T(0); // w's forward sweep in rows m−2 and m−1 (zero above)
    int bad = -1;
#pragma unroll
    for (int i = 0; i < P - 1; i++) {
        if (i < m - 1) {
            const int j = i + 1;
            const T dl = at(j, 0);
            T ndd = at(j, 1);
            T ndu = j < m - 1 ? at(j, 2) : T(0);
            T ny = at(j, 3), nv = T(0), nw = j == m - 1 ? cE : T(0);
            T du2, q, f;
            bool b;
            const bool swap = ppart_step(cdd, cdu, dl, ndd, ndu, j < m - 1, q, f, du2, b);
            if (b && bad < 0) bad = i;
            ppart_rhs(swap, f, cy, ny);
            ppart_rhs(swap, f, cv, nv);
            ppart_rhs(swap, f, cw, nw);
            at(i, 0) = du2;
            at(i, 1) = q;
            at(i, 2) = cdu;
            at(i, 3) = cy;
            rv[i] = cv;
            if (j == m - 1) {
                rw2 = cw;
                rwl = nw;
                rv[j] = nv;
                at(j, 1) = T(1) / ndd;
                at(j, 3) = ny;
                if (bad_divisor(ndd) && bad < 0) bad = j;
            }
            cdd = ndd;
            cdu = ndu;
            cy = ny;
            cv = nv;
            cw = nw;
        }
    }
    if (bad >= 0) report(bad);
    // Back substitution of the three right sides, rows m−1 … 0, with the
    // pivots' reciprocals (in the B slots).
    T y1 = T(0), y2 = T(0), v1 = T(0), v2 = T(0), w1 = T(0), w2 = T(0);
#pragma unroll
    for (int i = P - 1; i >= 0; i--) {
        if (i < m) {
            const T q = at(i, 1);
            const T ry = at(i, 3), rvi = rv[i];
            const T rwi = i == m - 1 ? rwl : i == m - 2 ? rw2 : T(0);
            T yi, vi, wi;
            if (i == m - 1) {
                yi = ry * q;
                vi = rvi * q;
                wi = rwi * q;
                yl = yi, vl = vi, wl = wi;
            } else if (i == m - 2) {
                const T du = at(i, 2);
                yi = (ry - du * y1) * q;
                vi = (rvi - du * v1) * q;
                wi = (rwi - du * w1) * q;
            } else {
                const T du = at(i, 2), du2 = at(i, 0);
                yi = ((ry - du * y1) - du2 * y2) * q;
                vi = ((rvi - du * v1) - du2 * v2) * q;
                wi = ((rwi - du * w1) - du2 * w2) * q;
            }
            at(i, 0) = yi;
            at(i, 1) = vi;
            at(i, 2) = wi;
            y2 = y1, y1 = yi;
            v2 = v1, v1 = vi;
            w2 = w1, w1 = wi;
        }
    }
    y0 = y1, v0 = v1, w0 = w1;
}

// ppart_coarse writes the chunk's two coarse rows (sub, diag, super,
// right side) at D slots 0 … 3 (its first row, free of x_right) and 4 … 7
// (its last row, free of x_left).
// ppart_rows forms the chunk's two coarse rows (a on the previous coarse
// unknown, b on its own, c on the next, d the right side): F, its first
// row, free of x_right, and L, its last row, free of x_left. The system's
// first coarse row (first chunk) and its last (last chunk) stand for
// unknowns no chunk reads: they are the identity rows 0, 1, 0, 0, which
// leave the others' elimination as it is.
template <typename T>
__device__ __forceinline__ void ppart_rows(bool first, bool last, T y0, T v0, T w0, T yl, T vl, T wl, PartEq<T> &F,
                                           PartEq<T> &L) {
    T al = T(1), be = T(0);
    const T sg = fmax(fabs(w0), fabs(wl));
    if (sg != T(0)) {
        al = wl / sg;
        be = -(w0 / sg);
    }
    F = first ? PartEq<T>{T(0), T(1), T(0), T(0)} : PartEq<T>{al * v0 + be * vl, al, be, al * y0 + be * yl};
    T ga = T(0), de = T(1);
    const T ta = fmax(fabs(v0), fabs(vl));
    if (ta != T(0)) {
        ga = vl / ta;
        de = -(v0 / ta);
    }
    L = last ? PartEq<T>{T(0), T(1), T(0), T(0)} : PartEq<T>{ga, de, ga * w0 + de * wl, ga * y0 + de * yl};
}

// ppart_write writes coarse row r (sub, diag, super, right side) to
// row(r, 0 … 3).
template <typename T, typename Row> __device__ __forceinline__ void ppart_write(Row row, int r, const PartEq<T> &e) {
    row(r, 0) = e.a;
    row(r, 1) = e.b;
    row(r, 2) = e.c;
    row(r, 3) = e.d;
}

// ppart_reduce is Stage 1 for a chunk of m ≥ 1 rows, row j's a, b, c, d
// at at(j, 0 … 3) (ppart_chunk), the system's first chunk where first and
// its last where last (a[0] and c[n−1] read as 0): its coarse rows, F and
// L (it returns 2), or for a chunk of one row its own row, F (it returns
// 1).
template <typename T, int P, typename At, typename Bad>
__device__ __forceinline__ int ppart_reduce(At at, int m, bool first, bool last, PartEq<T> &F, PartEq<T> &L,
                                            Bad report) {
    const T aS = first ? T(0) : at(0, 0);
    if (m == 1) {
        F = PartEq<T>{aS, at(0, 1), T(0), at(0, 3)};
        return 1;
    }
    const T cE = last ? T(0) : at(m - 1, 2);
    T y0, v0, w0, yl, vl, wl;
    ppart_chunk<T, P>(at, m, aS, cE, y0, v0, w0, yl, vl, wl, report);
    ppart_rows<T>(first, last, y0, v0, w0, yl, vl, wl, F, L);
    return 2;
}

// ppart_combine is Stage 3 for a chunk of m ≥ 2 rows after ppart_reduce:
// x_j = (y_j − v_j·xl) − w_j·xr to out(j, x_j). It returns the first row
// whose x is not finite, or −1.
template <typename T, int P, typename At, typename Out>
__device__ __forceinline__ int ppart_combine(At at, int m, T xl, T xr, Out out) {
    int bad = -1;
#pragma unroll
    for (int j = 0; j < P; j++) {
        if (j < m) {
            const T xj = (at(j, 0) - at(j, 1) * xl) - at(j, 2) * xr;
            out(j, xj);
            if (!isfinite(xj) && bad < 0) bad = j;
        }
    }
    return bad;
}

// ppart_gtsv solves R rows of a tridiagonal system, row r's sub, diag,
// super and right side at(r, 0 … 3), by gtsv's elimination with partial
// pivoting (divisions by a pivot as products by its reciprocal), its
// factor over at(r, 0 … 3) (du2, reciprocal, du, right side), row r's
// solution to xo(r) once the row is read. report(r) gets the first row
// whose pivot is a bad divisor. One thread.
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

// PPART_DIRECT is the largest coarse system a block solves by one thread
// (ppart_gtsv); a larger one is itself cut into chunks of P coarse rows,
// one thread each, whose coarse system one thread solves. Cutting the
// coarse system costs accuracy on the suite's ill-conditioned types (FP64
// N = 512, type 14: 10⁴× gtsv's error with coarse systems of 64 rows cut,
// 11× solved by one thread; go test -tags cuda -run PartitionPivotSuite
// ./internal/gpu/tridiaggpu -v) and the one thread costs time beyond
// (FP32 N = 4096: 7.7% of the limit solved by one thread, 24.8% cut;
// bandsolve bench -device cuda -grid layouts -algorithms partition-pivot).
#define PPART_DIRECT 64

template <typename T, int P>
__device__ void partition_pivot_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status,
                                       int spb, int tps, volatile unsigned int *word, unsigned int seq) {
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8 && P >= 10, "chunks of whole units, room for the coarse slots");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    const int nch = (n + P - 1) / P;
    const int ss = part_ss<T, P>(n, bs < es);
    const int W = ((spb * ss + 7) & ~7) * R;
    T *SA = sm, *SB = SA + W, *SC = SB + W, *SD = SC + W;
    int *keys = reinterpret_cast<int *>(SD + W);
    const int s = threadIdx.x / tps, t = threadIdx.x - s * tps;
    const int g0 = blockIdx.x * spb;
    const bool has = t < nch;
    const int m = has ? min(P, n - t * P) : 0;
    const bool live = has && g0 + s < G;
    const int X = part_x(s * ss + t * U);
    int *key = keys + s;
    const auto slots = [&](int j, int q) -> T & {
        return (q == 0 ? SA : q == 1 ? SB : q == 2 ? SC : SD)[SL::pos(X, j)];
    };

    for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[q] = PART_NONE;
    part_load<T, P>(k, d, SA, SB, SC, SD, ss, n, G, es, bs, spb, g0);
    __syncthreads();

    // Coarse row r of the system: D slots 4·(r mod 2) … of chunk r/2; its
    // solution: D slot 8 + r mod 2.
    const int RR = 2 * nch - (n - (nch - 1) * P == 1 ? 1 : 0);
    const auto cx = [&](int r) -> T & { return SD[SL::pos(part_x(s * ss + (r >> 1) * U), 8 + (r & 1))]; };
    const auto crow = [&](int r, int q) -> T & {
        return SD[SL::pos(part_x(s * ss + (r >> 1) * U), (r & 1) * 4 + q)];
    };

    // Stage 1: the chunk's block and its coarse rows.
    if (live) {
        PartEq<T> F, L;
        if (ppart_reduce<T, P>(slots, m, t == 0, t == nch - 1, F, L,
                               [&](int j) { atomicMin(key, PART_KEY(1, t * P + j)); }) == 2)
            ppart_write(crow, 2 * t + 1, L);
        ppart_write(crow, 2 * t, F);
    }
    __syncthreads();

    // Stage 2: the coarse system of RR rows.
    const auto crowOf = [&](int r) {
        const int c = r >> 1;
        return c * P + ((r & 1) ? min(P, n - c * P) - 1 : 0);
    };
    if (RR <= PPART_DIRECT) {
        // One thread.
        if (t == 0 && g0 + s < G)
            ppart_gtsv<T>(RR, crow, cx, [&](int r) { atomicMin(key, PART_KEY(2, crowOf(r))); });
    } else {
        // Chunks of P coarse rows, thread t the rows P·t …: their spikes
        // over the rows' slots 0 … 2, their own coarse rows (two a chunk,
        // one for a last chunk of one row) in D slots 8 … 15 of chunk
        // 8t's first coarse row's chunk (P/2 chunks a coarse chunk), those
        // solved by one thread with the solution over their right side.
        const int n2 = (RR + P - 1) / P, m2 = t < n2 ? min(P, RR - t * P) : 0;
        const bool live2 = m2 > 0 && g0 + s < G;
        const int R2 = 2 * n2 - (RR - (n2 - 1) * P == 1 ? 1 : 0);
        const auto row2 = [&](int r2, int q) -> T & {
            return SD[SL::pos(part_x(s * ss + (r2 >> 1) * (P / 2) * U), 8 + (r2 & 1) * 4 + q)];
        };
        const auto at2 = [&](int j, int q) -> T & { return crow(t * P + j, q); };
        if (live2) {
            PartEq<T> F, L;
            if (ppart_reduce<T, P>(at2, m2, t == 0, t == n2 - 1, F, L,
                                   [&](int j) { atomicMin(key, PART_KEY(2, crowOf(t * P + j))); }) == 2)
                ppart_write(row2, 2 * t + 1, L);
            ppart_write(row2, 2 * t, F);
        }
        __syncthreads();
        if (t == 0 && g0 + s < G)
            ppart_gtsv<T>(
                R2, row2, [&](int r2) -> T & { return row2(r2, 3); },
                [&](int r2) {
                    const int c2 = r2 >> 1;
                    atomicMin(key, PART_KEY(2, crowOf(c2 * P + ((r2 & 1) ? min(P, RR - c2 * P) - 1 : 0))));
                });
        __syncthreads();
        if (live2) {
            if (m2 == 1) {
                cx(t * P) = row2(2 * t, 3);
            } else {
                const T xl = t > 0 ? row2(2 * t - 1, 3) : T(0);
                const T xr = t < n2 - 1 ? row2(2 * t + 2, 3) : T(0);
                ppart_combine<T, P>(at2, m2, xl, xr, [&](int j, T v) { cx(t * P + j) = v; });
            }
        }
    }
    __syncthreads();

    // Stage 3: the chunk's unknowns from its neighbours' coarse unknowns.
    if (live) {
        int bad = -1;
        if (m == 1) {
            const T xj = cx(2 * t);
            SC[SL::pos(X, 0)] = xj;
            if (!isfinite(xj)) bad = 0;
        } else {
            bad = ppart_combine<T, P>(slots, m, t > 0 ? cx(2 * t - 1) : T(0), t < nch - 1 ? cx(2 * t + 2) : T(0),
                                      [&](int j, T v) { slots(j, 2) = v; });
        }
        if (bad >= 0) atomicMin(key, PART_KEY(3, t * P + bad));
    }
    __syncthreads();
    part_store<T, P>(SC, keys, x, ss, n, G, es, bs, spb, g0);
    part_status(keys, G, spb, g0, status);
    block_done_signal(status, G, word, seq);
}

// Systems longer than a block holds run in three passes over segments of
// S rows (S a multiple of P; block b takes segment b mod Q of system
// b / Q, Q = ⌈n/S⌉, one thread a chunk): REDUCE does Stage 1 and writes
// every chunk's coarse rows to the coarse system in global memory (RA,
// RB, RC, RD: G systems of RR rows, contiguous), another plan solves it
// into RX, EXPAND does Stage 1 again (the same bits) and Stage 3 with the
// coarse unknowns from RX, and partition_pivot_finish reports. Breakdown
// keys are 64-bit, stage << 40 | row, the smallest kept per system in
// keys[g] (all ones: none).
#define PPART_NONE 0xffffffffffffffffull
#define PPART_KEY(stage, row) (((unsigned long long)(stage) << 40) | (unsigned long long)(row))

template <typename T, int P, bool EXPAND>
__device__ void partition_pivot_seg_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int S, T *RA,
                                           T *RB, T *RC, T *RD, const T *RX, unsigned long long *keys) {
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    static_assert(P % R == 0 && U >= 1 && U <= 8, "chunks of whole units");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    const int Q = (n + S - 1) / S;
    const int g = blockIdx.x / Q, q = blockIdx.x - g * Q;
    const int ns = min(S, n - q * S); // the segment's rows
    const i64 off = (i64)g * bs + (i64)q * S * es;
    Coeffs<T> ks = k;
    if (!k.isConst) ks.a = k.a + off, ks.b = k.b + off, ks.c = k.c + off;
    const int ss = part_ss<T, P>(ns, false);
    const int W = ((ss + 7) & ~7) * R;
    T *SA = sm, *SB = SA + W, *SC = SB + W, *SD = SC + W;
    int *skey = reinterpret_cast<int *>(SD + W);
    const int t = threadIdx.x;
    const int nch = (n + P - 1) / P;  // the system's chunks
    const int cg = q * (S / P) + t;   // this thread's chunk in the system
    const bool live = t * P < ns;
    const int m = live ? min(P, ns - t * P) : 0;
    const int X = part_x(t * U);
    const auto slots = [&](int j, int q) -> T & {
        return (q == 0 ? SA : q == 1 ? SB : q == 2 ? SC : SD)[SL::pos(X, j)];
    };
    const int RR = 2 * nch - (n - (nch - 1) * P == 1 ? 1 : 0);
    const i64 cb = (i64)g * RR + 2 * cg; // the chunk's first coarse row

    if (t == 0) skey[0] = PART_NONE;
    part_load<T, P>(ks, d + off, SA, SB, SC, SD, ss, ns, 1, es, (i64)ns * es, 1, 0);
    __syncthreads();
    if (live) {
        // EXPAND forms the rows again (a few operations a chunk) and does
        // not keep them.
        PartEq<T> F, L;
        const int rows = ppart_reduce<T, P>(slots, m, cg == 0, cg == nch - 1, F, L, [&](int j) {
            if (!EXPAND) atomicMin(keys + g, PPART_KEY(1, (i64)cg * P + j));
        });
        if (EXPAND) {
            const int bad = rows == 1 ? (SC[SL::pos(X, 0)] = RX[cb], -1)
                                      : ppart_combine<T, P>(slots, m, cg > 0 ? RX[cb - 1] : T(0),
                                                            cg < nch - 1 ? RX[cb + 2] : T(0),
                                                            [&](int j, T v) { slots(j, 2) = v; });
            if (bad >= 0) atomicMin(keys + g, PPART_KEY(3, (i64)cg * P + bad));
        } else {
            const auto row = [&](int r, int q) -> T & {
                return (q == 0 ? RA : q == 1 ? RB : q == 2 ? RC : RD)[cb + r];
            };
            ppart_write(row, 0, F);
            if (rows == 2) ppart_write(row, 1, L);
        }
    }
    if (EXPAND) {
        __syncthreads();
        part_store<T, P>(SC, skey, x + off, ss, ns, 1, es, (i64)ns * es, 1, 0);
    }
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
// chunks of P rows, the parameters of partition_p<P>_* and its launch
// rules within this kernel's bound (tuning.PivotLaunch): 512 threads,
// whose 128 registers a thread hold a chunk's spikes without spills on
// sm_80 and sm_90.
#ifndef BS_DEVICE_ONLY
#define PARTITION_PIVOT(T, S, P, MAXT)                                                                            \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                           \
        partition_pivot_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es,    \
                                   i64 bs, T ca, T cb, T cc, int isConst, int *status, int spb, int tps,         \
                                   volatile unsigned int *word, unsigned int seq) {                              \
        partition_pivot_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb,    \
                                     tps, word, seq);                                                            \
    }
PARTITION_PIVOT(float, f32, 16, 512)
PARTITION_PIVOT(double, f64, 16, 512)

// partition_pivot_reduce_p<P>_* and partition_pivot_expand_p<P>_*: the
// first and third passes of a segmented solve (partition_pivot_seg_kernel).
// Grid: G·⌈n/S⌉ blocks of S/P threads (at most 256: segments of up to
// 4096 rows); shared memory as partition_p<P>_*'s for one system of S
// rows.
#define PARTITION_PIVOT_SEG(T, S, P, MAXT)                                                                        \
    extern "C" __global__ void __launch_bounds__(MAXT) partition_pivot_reduce_p##P##_##S(                         \
        const T *a, const T *b, const T *c, const T *d, int n, int G, i64 es, i64 bs, T ca, T cb, T cc,           \
        int isConst, int seg, T *RA, T *RB, T *RC, T *RD, unsigned long long *keys) {                              \
        partition_pivot_seg_kernel<T, P, false>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, nullptr, n, G, es, bs, \
                                                seg, RA, RB, RC, RD, nullptr, keys);                               \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(MAXT) partition_pivot_expand_p##P##_##S(                         \
        const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc,     \
        int isConst, int seg, const T *RX, unsigned long long *keys) {                                             \
        partition_pivot_seg_kernel<T, P, true>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, seg,  \
                                               nullptr, nullptr, nullptr, nullptr, RX, keys);                      \
    }                                                                                                             \
    extern "C" __global__ void partition_pivot_finish_p##P##_##S(T *x, int n, int G, i64 es, i64 bs,                \
                                                                 const unsigned long long *keys,                   \
                                                                 const int *cstatus, int *status) {                \
        partition_pivot_finish<T, P>(x, n, G, es, bs, keys, cstatus, status);                                     \
    }
PARTITION_PIVOT_SEG(float, f32, 16, 256)
PARTITION_PIVOT_SEG(double, f64, 16, 256)
#endif
