// The partition method (Wang 1981, Sun–Zhang–Ni 1989): every system is
// cut into chunks of P consecutive rows, one chunk per thread; each thread
// eliminates its chunk, the chunks' first and last unknowns are found from
// a reduced tridiagonal system of about 2n/P rows by cyclic reduction
// (part_cr_warp, part_cr_sync; PCR before: its backward error grew with
// the reduced system on weakly dominant matrices), and each thread
// recovers its chunk's interior. The formulas are in the documentation of
// the CPU twin, package partition (tridiag/partition), whose operations
// this kernel does in the same order (PTX built with -fmad=false): the
// results agree bit for bit, whatever the launch.
//
// Launch (tuning.PartitionLaunchFor): blockDim.x = tps·spb threads, spb
// systems per block, tps threads per system: thread t of local system s
// (threadIdx.x = s·tps + t) owns chunk t, rows tP … tP+P−1 (threads
// t ≥ ⌈n/P⌉ own none but take part in every exchange). When tps ≤ 32 (a
// power of two) the reduced system is solved with warp shuffles, without
// barriers; otherwise (tps a multiple of 32) through shared memory, with
// one barrier a level of the reduction and one of the substitution (see
// PartSlots).
//
// Global memory is read once and written once. The block copies its spb
// systems into shared memory with cp.async (no registers, every copy of a
// thread in flight at once): 16 bytes per copy when the layout is
// contiguous (es = 1, bs = n, n·sizeof(T) and the pointers 16-byte
// aligned), one element per copy otherwise, neighbouring threads on
// neighbouring addresses (rows first when es ≤ bs, systems first when
// bs < es); x is stored back the same way.
//
// Shared memory: four arrays A, B, C, D (a, b, c, d) of spb·ss units of 16
// bytes (R = 4 FP32 or 2 FP64 rows), rounded up to a multiple of 8 units,
// then spb int keys: 4·⌈spb·ss/8⌉·8·16 + 4·spb bytes
// (tuning.PartitionSharedBytes). Row i of local system s is in logical
// unit u = s·ss + i/R, word i%R; a chunk is U = P/R units. The logical unit u is stored at u ^ ((u/8) mod 8): an
// XOR swizzle inside aligned groups of 8 units, so that a quarter warp
// reading unit h of 8 consecutive chunks (LDS.128) hits 8 distinct bank
// groups, and 8 threads copying 8 consecutive units do too. ss =
// ⌈n/P⌉·U, rounded up to an odd multiple of 8 when the systems are first
// in memory (and ss ≥ 8), so that 8 systems' copies of one row differ in
// their swizzle.
//
// After Stage 1 a thread keeps γ_j, α_j, δ_j of its interior rows
// j = 1 … P−2 in its own C, A, D slots (registers would not hold them for
// P ≥ 8), and x goes to its C slots in Stage 3. The shared-memory
// exchange of the reduced rows uses its other slots (PartSlots).
//
// Breakdown keys as in pcr.cuh: one int per system, the smallest
// (stage, row) of a bad divisor: stage 1 the chunk pivots, 1+k the
// divisors of the rows that level k of the cyclic reduction eliminates,
// K+2 the last row's, K+3 a non-finite x (K = ⌊log2 RR⌋ levels on the RR
// reduced rows). A failed system gets NaN in every row.
//
// With PART_EMU defined (never by nvcc) the sources compile as host C++
// for internal/partemu, which runs segment.cuh's kernel thread by thread
// on the CPU: the includer supplies the CUDA features (part_smem is then
// the running block's own buffer) and the inline PTX has plain C++
// stand-ins (#ifdef PART_EMU … #else, the PTX untouched).
#pragma once
#include "common.cuh"
#include "signal.cuh"

#ifndef PART_EMU
extern __shared__ __align__(16) unsigned char part_smem[];
#endif

#define PART_NONE 0x7fffffff
#define PART_KEY(stage, row) (((stage) << 20) | (row))
#define PART_ROW(key) ((key) & 0xfffff)

// PartVec is the type of one 16-byte unit.
template <typename T> struct PartVec;
template <> struct PartVec<float> {
    typedef float4 V;
    static __device__ __forceinline__ float el(const float4 &v, int w) {
        return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
    }
    static __device__ __forceinline__ float4 make(const float *e) { return make_float4(e[0], e[1], e[2], e[3]); }
    static __device__ __forceinline__ float4 fill(float q) { return make_float4(q, q, q, q); }
};
template <> struct PartVec<double> {
    typedef double2 V;
    static __device__ __forceinline__ double el(const double2 &v, int w) { return w == 0 ? v.x : v.y; }
    static __device__ __forceinline__ double2 make(const double *e) { return make_double2(e[0], e[1]); }
    static __device__ __forceinline__ double2 fill(double q) { return make_double2(q, q); }
};

// part_phys is the stored position of logical unit u.
__device__ __forceinline__ int part_phys(int u) { return u ^ ((u >> 3) & 7); }

// part_ss is the system stride in units (tuning.partitionStride).
template <typename T, int P> __device__ __forceinline__ int part_ss(int n, bool sysFirst) {
    constexpr int U = P * (int)sizeof(T) / 16;
    int ss = ((n + P - 1) / P) * U;
    if (sysFirst && ss >= 8) ss = ((ss + 7) & ~7) | 8;
    return ss;
}

// part_pos is the element index of row i of local system s.
template <typename T> __device__ __forceinline__ int part_pos(int s, int i, int ss) {
    constexpr int R = 16 / (int)sizeof(T);
    return part_phys(s * ss + i / R) * R + i % R;
}

// PartWalk enumerates the block's items (rows, or 16-byte units of rows)
// (s, i) in the order of the batch layout: flat index f = s·ni + i when
// rows are closer together in memory (es ≤ bs), f = i·spb + s otherwise;
// thread k takes f = k, k + blockDim, … The quotient and remainder of f
// by the inner extent, and the item's global index idx, are stepped, not
// recomputed.
struct PartWalk {
    int dv, qa, ra, q, r;
    bool sysFirst;
    i64 idx, dStep, dWrap;
    __device__ __forceinline__ PartWalk(int ni, int spb, i64 es, i64 bs, int g0) {
        sysFirst = bs < es;
        dv = sysFirst ? spb : ni;
        qa = blockDim.x / dv;
        ra = blockDim.x - qa * dv;
        q = threadIdx.x / dv;
        r = threadIdx.x - q * dv;
        idx = (i64)(g0 + s()) * bs + (i64)i() * es;
        // Stepping f by blockDim adds qa to q and ra to r; a wrap of r
        // takes dv from r and adds 1 to q.
        const i64 eq = sysFirst ? es : bs, er = sysFirst ? bs : es;
        dStep = qa * eq + ra * er;
        dWrap = eq - dv * er;
    }
    __device__ __forceinline__ int s() const { return sysFirst ? r : q; }
    __device__ __forceinline__ int i() const { return sysFirst ? q : r; }
    __device__ __forceinline__ void next() {
        q += qa;
        r += ra;
        idx += dStep;
        if (r >= dv) {
            r -= dv;
            q++;
            idx += dWrap;
        }
    }
};

// part_cp copies one element, part_cp16 16 bytes, from global to shared
// memory asynchronously (cp.async, compute capability ≥ 8.0).
template <typename T> __device__ __forceinline__ void part_cp(T *dst, const T *src) {
#ifdef PART_EMU
    *dst = *src;
#else
    const unsigned a = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(a), "l"(src), "n"(sizeof(T)) : "memory");
#endif
}
__device__ __forceinline__ void part_cp16(void *dst, const void *src) {
#ifdef PART_EMU
    memcpy(dst, src, 16);
#else
    const unsigned a = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(src) : "memory");
#endif
}

__device__ __forceinline__ bool part_aligned(const void *p) { return ((unsigned long long)p & 15) == 0; }

// part_vec says whether the block's rows can be moved in 16-byte units:
// contiguous systems of a multiple of R rows, aligned arrays.
template <typename T>
__device__ __forceinline__ bool part_vec(int n, i64 es, i64 bs, const void *p0, const void *p1, const void *p2,
                                         const void *p3) {
    constexpr int R = 16 / (int)sizeof(T);
    return es == 1 && bs == n && n % R == 0 && part_aligned(p0) && part_aligned(p1) && part_aligned(p2) &&
           part_aligned(p3);
}

// part_copy copies the block's systems' d, and a, b, c unless isConst,
// into D (A, B, C) as they are (a[0] and c[n−1] included: Stage 1 reads
// them as 0), and waits for its copies unless WAIT is false (the caller
// then waits with cp.async.wait_all). ONE says that the block copies one
// system (spb = 1, g0 < G: a segment). The caller synchronises.
template <typename T, int P, bool WAIT = true, bool ONE = false>
__device__ __forceinline__ void part_copy(const Coeffs<T> &k, const T *d, T *SA, T *SB, T *SC, T *SD, int ss, int n,
                                          int G, i64 es, i64 bs, int spb, int g0) {
    constexpr int R = 16 / (int)sizeof(T);
    const int nsys = min(spb, G - g0); // the block's systems that exist
    const bool vec = part_vec<T>(n, es, bs, d, k.isConst ? d : k.a, k.isConst ? d : k.b, k.isConst ? d : k.c);
    // The 16 bytes at row idx of each array into shared unit offset u.
    auto cp16 = [&](int u, i64 idx) {
        if (!k.isConst) {
            part_cp16(SA + u, k.a + idx);
            part_cp16(SB + u, k.b + idx);
            part_cp16(SC + u, k.c + idx);
        }
        part_cp16(SD + u, d + idx);
    };
    if (ONE && vec) {
        // ONE: the block copies one system (a segment), unit i at row
        // g0·n + i·R, without PartWalk's divisions.
        const int nu = n / R;
        const i64 base = (i64)g0 * n;
#pragma unroll 4
        for (int f = threadIdx.x; f < nu; f += blockDim.x) cp16(part_phys(f) * R, base + (i64)f * R);
    } else if (vec) {
        // Units: system s, unit i of n/R, at global row (g0+s)·n + i·R.
        const int nu = n / R;
        PartWalk w(nu, spb, 1, nu, g0);
        const i64 base = (i64)g0 * n;
#pragma unroll 4
        for (int f = threadIdx.x; f < nsys * nu; f += blockDim.x) {
            cp16(part_phys(w.s() * ss + w.i()) * R, base + (i64)f * R);
            w.next();
        }
    } else {
        PartWalk w(n, spb, es, bs, g0);
        const int total = (bs < es ? spb : nsys) * n;
#pragma unroll 4
        for (int f = threadIdx.x; f < total; f += blockDim.x) {
            const int s = w.s();
            if (s < nsys) {
                const int sl = part_pos<T>(s, w.i(), ss);
                if (!k.isConst) {
                    part_cp(SA + sl, k.a + w.idx);
                    part_cp(SB + sl, k.b + w.idx);
                    part_cp(SC + sl, k.c + w.idx);
                }
                part_cp(SD + sl, d + w.idx);
            }
            w.next();
        }
    }
#ifndef PART_EMU
    if (WAIT) asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// part_load copies the block's systems into A, B, C, D (part_copy, ONE
// as there), the constants into A, B, C when isConst. The caller
// synchronises.
template <typename T, int P, bool ONE = false>
__device__ __forceinline__ void part_load(const Coeffs<T> &k, const T *d, T *SA, T *SB, T *SC, T *SD, int ss, int n,
                                          int G, i64 es, i64 bs, int spb, int g0) {
    typedef typename PartVec<T>::V V;
    if (k.isConst) {
        // The coefficients (every unit of the arrays: the swizzle spreads a
        // partial last group of 8 units over the whole group), then d.
        for (int f = threadIdx.x; f < ((spb * ss + 7) & ~7); f += blockDim.x) {
            reinterpret_cast<V *>(SA)[f] = PartVec<T>::fill(k.ca);
            reinterpret_cast<V *>(SB)[f] = PartVec<T>::fill(k.cb);
            reinterpret_cast<V *>(SC)[f] = PartVec<T>::fill(k.cc);
        }
    }
    part_copy<T, P, true, ONE>(k, d, SA, SB, SC, SD, ss, n, G, es, bs, spb, g0);
}

// part_store writes x from X in the batch layout (NaN for a system whose
// key is set), the way part_load read (ONE as in part_copy).
template <typename T, int P, bool ONE = false>
__device__ __forceinline__ void part_store(const T *X, const int *keys, T *x, int ss, int n, int G, i64 es, i64 bs,
                                           int spb, int g0) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    const int nsys = min(spb, G - g0);
    const T nan = nan_of<T>();
    const bool vec = part_vec<T>(n, es, bs, x, x, x, x);
    if (ONE && vec) {
        const int nu = n / R;
        const i64 base = (i64)g0 * n;
        const bool ok = keys[0] == PART_NONE;
#pragma unroll 4
        for (int f = threadIdx.x; f < nu; f += blockDim.x) {
            const V v = reinterpret_cast<const V *>(X)[part_phys(f)];
            *reinterpret_cast<V *>(x + base + (i64)f * R) = ok ? v : PartVec<T>::fill(nan);
        }
    } else if (vec) {
        const int nu = n / R;
        PartWalk w(nu, spb, 1, nu, g0);
        const i64 base = (i64)g0 * n;
#pragma unroll 4
        for (int f = threadIdx.x; f < nsys * nu; f += blockDim.x) {
            const int s = w.s();
            const V v = reinterpret_cast<const V *>(X)[part_phys(s * ss + w.i())];
            *reinterpret_cast<V *>(x + base + (i64)f * R) = keys[s] == PART_NONE ? v : PartVec<T>::fill(nan);
            w.next();
        }
    } else {
        PartWalk w(n, spb, es, bs, g0);
        const int total = (bs < es ? spb : nsys) * n;
#pragma unroll 4
        for (int f = threadIdx.x; f < total; f += blockDim.x) {
            const int s = w.s();
            if (s < nsys) {
                const T v = X[part_pos<T>(s, w.i(), ss)];
                x[w.idx] = keys[s] == PART_NONE ? v : nan;
            }
            w.next();
        }
    }
}

// part_status reports the block's failed systems: row+1 in status[g] and
// the flag status[G].
__device__ __forceinline__ void part_status(const int *keys, int G, int spb, int g0, int *status) {
    const int nsys = min(spb, G - g0);
    for (int s = threadIdx.x; s < nsys; s += blockDim.x) {
        const int key = keys[s];
        if (key != PART_NONE) {
            atomicCAS(&status[g0 + s], 0, PART_ROW(key) + 1);
            status[G] = 1;
        }
    }
}

// A reduced equation a·x_left + b·x + c·x_right = d.
template <typename T> struct PartEq {
    T a, b, c, d;
};

// part_upd is one PCR step of e with its neighbours' a, c, d and 1/b
// (l: left, r: right; the identity 0, 0, 0, 1 when missing).
template <typename T>
__device__ __forceinline__ PartEq<T> part_upd(const PartEq<T> &e, T la, T lc, T ld, T lq, T ra, T rc, T rd, T rq) {
    const T s1 = e.a * lq;
    const T s2 = e.c * rq;
    PartEq<T> o;
    o.a = -(la * s1);
    o.b = (e.b - lc * s1) - ra * s2;
    o.c = -(rc * s2);
    o.d = (e.d - ld * s1) - rd * s2;
    return o;
}

// part_upd_left is part_upd's left half (s1 = e.a·lq and the terms with
// it; c passes through), part_upd_right finishes it with the right
// neighbour: the same operations, so that the two neighbours' values need
// not be live at once.
template <typename T>
__device__ __forceinline__ PartEq<T> part_upd_left(const PartEq<T> &e, T la, T lc, T ld, T lq) {
    const T s1 = e.a * lq;
    return {-(la * s1), e.b - lc * s1, e.c, e.d - ld * s1};
}
template <typename T>
__device__ __forceinline__ PartEq<T> part_upd_right(const PartEq<T> &h, T ra, T rc, T rd, T rq) {
    const T s2 = h.c * rq;
    return {h.a, h.b - ra * s2, -(rc * s2), h.d - rd * s2};
}

template <typename T> __device__ __forceinline__ T part_up(T v, int delta, int width) {
    return __shfl_up_sync(0xffffffffu, v, delta, width);
}
template <typename T> __device__ __forceinline__ T part_down(T v, int delta, int width) {
    return __shfl_down_sync(0xffffffffu, v, delta, width);
}

// part_id sets a missing neighbour's values to the identity equation's.
template <typename T> __device__ __forceinline__ void part_id(bool ok, T &a, T &c, T &d, T &q) {
    if (!ok) {
        a = T(0);
        c = T(0);
        d = T(0);
        q = T(1);
    }
}

// PartSlots addresses a thread's chunk slots: element j of its chunk in
// array Y is Y[pos(X, j)], X the swizzled position of its first unit.
// After Stage 1, γ_j, α_j, δ_j of the interior j = 1 … P−2 are in C, A, D,
// and x goes to C in Stage 3; the free slots, numbered q = 0 … P+3, are
// B[0 … P−1], A[0], A[P−1], D[0], D[P−1]. put<Q> and get<Q> write and
// read a row (a, c, d, 1/b) at free slots Q … Q+3: the cyclic reduction's
// exchange (PartCRSlots) puts a thread's F row at Q = 0, its L row at
// Q = 4.
template <typename T, int P> struct PartSlots {
    typedef typename PartVec<T>::V V;
    static constexpr int R = 16 / (int)sizeof(T);
    T *A, *B, *C, *D;
    static __device__ __forceinline__ int pos(int X, int j) { return (X ^ (j / R)) * R + j % R; }
    __device__ __forceinline__ T *at(int q, int X) const {
        if (q < P) return B + pos(X, q);
        switch (q - P) {
        case 0: return A + pos(X, 0);
        case 1: return A + pos(X, P - 1);
        case 2: return D + pos(X, 0);
        default: return D + pos(X, P - 1);
        }
    }
    template <int Q> __device__ __forceinline__ void put(int X, const PartEq<T> &e, T q) const {
        if (Q + 3 < P && Q % R == 0) {
            const T v[4] = {e.a, e.c, e.d, q};
#pragma unroll
            for (int h = 0; h < 4 / R; h++) reinterpret_cast<V *>(B)[X ^ (Q / R + h)] = PartVec<T>::make(v + h * R);
        } else {
            *at(Q, X) = e.a;
            *at(Q + 1, X) = e.c;
            *at(Q + 2, X) = e.d;
            *at(Q + 3, X) = q;
        }
    }
    template <int Q> __device__ __forceinline__ void get(int X, bool ok, T &a, T &c, T &d, T &q) const {
        if (!ok) {
            a = T(0), c = T(0), d = T(0), q = T(1);
        } else if (Q + 3 < P && Q % R == 0) {
            T v[4];
#pragma unroll
            for (int h = 0; h < 4 / R; h++) {
                const V u = reinterpret_cast<const V *>(B)[X ^ (Q / R + h)];
#pragma unroll
                for (int w = 0; w < R; w++) v[h * R + w] = PartVec<T>::el(u, w);
            }
            a = v[0], c = v[1], d = v[2], q = v[3];
        } else {
            a = *at(Q, X);
            c = *at(Q + 1, X);
            d = *at(Q + 2, X);
            q = *at(Q + 3, X);
        }
    }
};

// part_eliminate is Stage 1 for the chunk of m rows at swizzled unit X
// (partition.eliminate): it writes γ, α, δ of the interior over the
// chunk's C, A, D slots and sets F and L (F alone for m = 1). last is the
// local index of the system's row n−1 (its c is read as 0), zeroA says
// that the chunk's row 0 is the system's row 0 (its a is read as 0). The
// smallest local row whose pivot is a bad divisor, if any, goes to
// report(row), before the upward sweep (later, it costs registers).
// UNROLL unrolls the loops over the chunk's units (the same operations:
// fewer instructions, more registers).
template <typename T, int P, bool UNROLL = false, typename Bad>
__device__ __forceinline__ void part_eliminate(const typename PartVec<T>::V *VA, const typename PartVec<T>::V *VB,
                                               typename PartVec<T>::V *VC, const typename PartVec<T>::V *VD, T *SA,
                                               T *SD, int X, int m, int last, bool zeroA, PartEq<T> &F, PartEq<T> &L,
                                               Bad report) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    // FP32 (4 units a chunk of 16) unrolls the forward loop by two and
    // keeps the upward one rolled, within the segment kernel's 80
    // registers; FP64 (8 units, registers to spare) unrolls both.
    constexpr int UF = UNROLL ? (R == 2 ? U : (U < 2 ? U : 2)) : 1;
    constexpr int UB = UNROLL && R == 2 ? U : 1;
    T a0, b0, c0, d0;
    T gp = T(0), ap = T(-1), dp = T(0);
    unsigned bad = 0;
#pragma unroll UF
    for (int h = 0; h < U; h++) {
        const V va = VA[X ^ h], vb = VB[X ^ h], vc = VC[X ^ h], vd = VD[X ^ h];
        T sg[R], sa[R], sd[R];
#pragma unroll
        for (int w = 0; w < R; w++) {
            const int j = h * R + w;
            const T aj = PartVec<T>::el(va, w), bj = PartVec<T>::el(vb, w),
                    cj = last == j ? T(0) : PartVec<T>::el(vc, w), dj = PartVec<T>::el(vd, w);
            sg[w] = sa[w] = sd[w] = T(0);
            if (j == 0) {
                a0 = zeroA ? T(0) : aj, b0 = bj, c0 = cj, d0 = dj;
            } else if (j < m) {
                const T piv = bj - aj * gp;
                if (bad_divisor(piv)) bad |= 1u << j;
                const T r = T(1) / piv;
                gp = cj * r;
                ap = -((aj * ap) * r);
                dp = (dj - aj * dp) * r;
                sg[w] = gp, sa[w] = ap, sd[w] = dp;
            }
        }
        if (h * R + R > 1 && h * R < P - 1) { // the unit holds interior rows
            VC[X ^ h] = PartVec<T>::make(sg);
            reinterpret_cast<V *>(SA)[X ^ h] = PartVec<T>::make(sa);
            reinterpret_cast<V *>(SD)[X ^ h] = PartVec<T>::make(sd);
        }
    }
    if (m == 1) {
        F = {a0, b0, c0, d0};
        return;
    }
    if (bad) report(__ffs(bad) - 1);
    L = {ap, T(1), gp, dp};
    T y = T(0), v = T(0), w = T(-1);
#pragma unroll UB
    for (int h = U - 1; h >= 0; h--) {
        if (h * R + R > 1 && h * R < P - 1) {
            const V vg = VC[X ^ h], va = VA[X ^ h], vd = VD[X ^ h];
#pragma unroll
            for (int e = R - 1; e >= 0; e--) {
                const int j = h * R + e;
                if (j >= 1 && j <= P - 2 && j < m - 1) {
                    const T gj = PartVec<T>::el(vg, e), aj = PartVec<T>::el(va, e), dj = PartVec<T>::el(vd, e);
                    y = dj - gj * y;
                    v = aj - gj * v;
                    w = -(gj * w);
                }
            }
        }
    }
    F = {a0, b0 - c0 * v, -(c0 * w), d0 - c0 * y};
}

// part_recover is Stage 3 for the chunk of m rows at swizzled unit X: the
// interior from x_s and x_e over γ, α, δ, x into the chunk's C slots. It
// returns the last local row (the smallest in the order written) whose x
// is not finite, or −1. UNROLL as in part_eliminate.
template <typename T, int P, bool UNROLL = false>
__device__ __forceinline__ int part_recover(typename PartVec<T>::V *VC, const typename PartVec<T>::V *VA,
                                            const typename PartVec<T>::V *VD, int X, int m, T xs, T xe) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    constexpr int UF = UNROLL ? U : 1;
    int bad = -1;
    T xn = xe;
#pragma unroll UF
    for (int h = U - 1; h >= 0; h--) {
        const V vg = VC[X ^ h], va = VA[X ^ h], vd = VD[X ^ h];
        T xv[R];
#pragma unroll
        for (int e = R - 1; e >= 0; e--) {
            const int j = h * R + e;
            T xj = T(0);
            if (j == 0) {
                xj = xs;
            } else if (j == m - 1) {
                xj = xe;
            } else if (j <= P - 2 && j < m - 1) {
                const T gj = PartVec<T>::el(vg, e), aj = PartVec<T>::el(va, e), dj = PartVec<T>::el(vd, e);
                xj = (dj - aj * xs) - gj * xn;
                xn = xj;
            }
            xv[e] = xj;
            if (j < m && !isfinite(xj)) bad = j;
        }
        VC[X ^ h] = PartVec<T>::make(xv);
    }
    return bad;
}

// part_eliminate_regs is Stage 1 (part_eliminate's operations) for a
// chunk whose rows row(j, a, b, c, d) gives, with γ, α, δ of the interior
// in g, al, dl (index j: the chunk's row) instead of shared memory, for
// the lanes and streaming kernels; m, last, zeroA, F, L and report as in
// part_eliminate.
template <typename T, int P, typename Row, typename Bad>
__device__ __forceinline__ void part_eliminate_regs(Row row, int m, int last, bool zeroA, T (&g)[P], T (&al)[P],
                                                    T (&dl)[P], PartEq<T> &F, PartEq<T> &L, Bad report) {
    T a0, b0, c0, d0;
    T gp = T(0), ap = T(-1), dp = T(0);
    unsigned bad = 0;
#pragma unroll
    for (int j = 0; j < P; j++) {
        T aj, bj, cj, dj;
        row(j, aj, bj, cj, dj);
        if (last == j) cj = T(0);
        if (j == 0) {
            a0 = zeroA ? T(0) : aj, b0 = bj, c0 = cj, d0 = dj;
        } else if (j < m) {
            const T piv = bj - aj * gp;
            if (bad_divisor(piv)) bad |= 1u << j;
            const T r = T(1) / piv;
            gp = cj * r;
            ap = -((aj * ap) * r);
            dp = (dj - aj * dp) * r;
            if (j <= P - 2) g[j] = gp, al[j] = ap, dl[j] = dp;
        }
    }
    if (m == 1) {
        F = {a0, b0, c0, d0};
        return;
    }
    if (bad) report(__ffs(bad) - 1);
    L = {ap, T(1), gp, dp};
    T y = T(0), v = T(0), w = T(-1);
#pragma unroll
    for (int j = P - 2; j >= 1; j--) {
        if (j < m - 1) {
            y = dl[j] - g[j] * y;
            v = al[j] - g[j] * v;
            w = -(g[j] * w);
        }
    }
    F = {a0, b0 - c0 * v, -(c0 * w), d0 - c0 * y};
}

// part_recover_regs is part_recover over registers (γ, α, δ of the
// interior in g, al, dl, index j the chunk's row): x of the chunk's rows
// in xv (the lanes and streaming kernels); it returns the smallest local
// row whose x is not finite, or −1.
template <typename T, int P>
__device__ __forceinline__ int part_recover_regs(const T (&g)[P], const T (&al)[P], const T (&dl)[P], int m, T xs,
                                                 T xe, T (&xv)[P]) {
    int bad = -1;
    T xn = xe;
#pragma unroll
    for (int j = P - 1; j >= 0; j--) {
        T xj = T(0);
        if (j == 0) {
            xj = xs;
        } else if (j == m - 1) {
            xj = xe;
        } else if (j <= P - 2 && j < m - 1) {
            xj = (dl[j] - al[j] * xs) - g[j] * xn;
            xn = xj;
        }
        xv[j] = xj;
        if (j < m && !isfinite(xj)) bad = j;
    }
    return bad;
}

// PartTable is, for constant coefficients, what Stage 1 computes alike in
// every chunk: for local rows j = 1 … P−1 the reciprocal pivot r_j, γ_j
// (with c, for rows other than the system's last), α_j, and the bit mask
// of the rows whose pivot is a bad divisor (part_table).
template <typename T, int P> struct PartTable {
    T r[P], g[P], al[P];
    unsigned bad;
};

// part_table computes the table from γ_0 = 0, α_0 = −1 as part_eliminate
// does row by row (the same operations, so the same bits). One thread.
template <typename T, int P> __device__ __forceinline__ void part_table(PartTable<T, P> &tb, T ca, T cb, T cc) {
    T gp = T(0), ap = T(-1);
    unsigned bad = 0;
    for (int j = 1; j < P; j++) {
        const T piv = cb - ca * gp;
        if (bad_divisor(piv)) bad |= 1u << j;
        const T r = T(1) / piv;
        gp = cc * r;
        ap = -((ca * ap) * r);
        tb.r[j] = r, tb.g[j] = gp, tb.al[j] = ap;
    }
    tb.bad = bad;
}

// part_eliminate_const is part_eliminate for constant coefficients a, b, c
// over the table: δ_j over the chunk's D slots (the interior's), F and L
// (F alone for m = 1); last, zeroA and report as there.
template <typename T, int P, typename Bad>
__device__ __forceinline__ void part_eliminate_const(typename PartVec<T>::V *VD, const PartTable<T, P> &tb, int X,
                                                     int m, int last, bool zeroA, T ca, T cb, T cc, PartEq<T> &F,
                                                     PartEq<T> &L, Bad report) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    T d0;
    T dp = T(0);
#pragma unroll 1
    for (int h = 0; h < U; h++) {
        const V vd = VD[X ^ h];
        T sd[R];
#pragma unroll
        for (int w = 0; w < R; w++) {
            const int j = h * R + w;
            const T dj = PartVec<T>::el(vd, w);
            sd[w] = T(0);
            if (j == 0) {
                d0 = dj;
            } else if (j < m) {
                dp = (dj - ca * dp) * tb.r[j];
                sd[w] = dp;
            }
        }
        if (h * R + R > 1 && h * R < P - 1) VD[X ^ h] = PartVec<T>::make(sd);
    }
    const T a0 = zeroA ? T(0) : ca, c0 = last == 0 ? T(0) : cc;
    if (m == 1) {
        F = {a0, cb, c0, d0};
        return;
    }
    const unsigned bad = tb.bad & ((2u << (m - 1)) - 1);
    if (bad) report(__ffs(bad) - 1);
    L = {tb.al[m - 1], T(1), (last == m - 1 ? T(0) : cc) * tb.r[m - 1], dp};
    T y = T(0), v = T(0), w = T(-1);
#pragma unroll 1
    for (int h = U - 1; h >= 0; h--) {
        if (h * R + R > 1 && h * R < P - 1) {
            const V vd = VD[X ^ h];
#pragma unroll
            for (int e = R - 1; e >= 0; e--) {
                const int j = h * R + e;
                if (j >= 1 && j <= P - 2 && j < m - 1) {
                    const T gj = tb.g[j];
                    y = PartVec<T>::el(vd, e) - gj * y;
                    v = tb.al[j] - gj * v;
                    w = -(gj * w);
                }
            }
        }
    }
    F = {a0, cb - c0 * v, -(c0 * w), d0 - c0 * y};
}

// part_recover_const is part_recover for constant coefficients: x over the
// chunk's D slots (δ_j there, γ_j and α_j from the table).
template <typename T, int P>
__device__ __forceinline__ int part_recover_const(typename PartVec<T>::V *VD, const PartTable<T, P> &tb, int X, int m,
                                                  T xs, T xe) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T);
    constexpr int U = P / R;
    int bad = -1;
    T xn = xe;
#pragma unroll 1
    for (int h = U - 1; h >= 0; h--) {
        const V vd = VD[X ^ h];
        T xv[R];
#pragma unroll
        for (int e = R - 1; e >= 0; e--) {
            const int j = h * R + e;
            T xj = T(0);
            if (j == 0) {
                xj = xs;
            } else if (j == m - 1) {
                xj = xe;
            } else if (j <= P - 2 && j < m - 1) {
                xj = (PartVec<T>::el(vd, e) - tb.al[j] * xs) - tb.g[j] * xn;
                xn = xj;
            }
            xv[e] = xj;
            if (j < m && !isfinite(xj)) bad = j;
        }
        VD[X ^ h] = PartVec<T>::make(xv);
    }
    return bad;
}

// part_x is the swizzled position of the first unit of the chunk at
// logical unit bu.
__device__ __forceinline__ int part_x(int bu) { return bu ^ ((bu >> 3) & 7); }

// part_cr_levels is the number of cyclic-reduction levels of RR reduced
// rows, ⌊log2 RR⌋ (partition.Levels).
__device__ __forceinline__ int part_cr_levels(int RR) { return RR <= 1 ? 0 : 31 - __clz(RR); }

// Stage 2 by cyclic reduction (partition.Solve's reducedCR), thread t
// holding reduced rows F = 2t and L = 2t+1 of the RR rows (none beyond
// RR). Level k = 1 … K (u = 2^(k−1) rows) eliminates the rows j ≡ u−1
// (mod 2u) into the rows j ≡ 2u−1 (mod 2u): level 1 every F row (the L
// row of thread t takes the F rows of threads t and t+1, its left and
// right neighbours); level k ≥ 2 the L rows
// of threads t with (t+1) mod 2v = v, v = 2^(k−2), into those with
// (t+1) mod 2v = 0, from threads t ± v. An eliminated row keeps its
// equation and reciprocal 1/b; the last row standing, 2^K − 1, is x =
// d/b; then level K … 1 substitutes back, x = ((d − a·x_left) − c·x_right)
// ·(1/b), a missing neighbour's x read as 0. bad(stage, isL) reports a
// bad divisor of the thread's F or L row: stage 1+k for a row eliminated
// at level k, K+2 for the last row. The results are xF (F's unknown) and
// xL (L's, when the thread has an L row).
//
// part_cr_last is the last row's division: with K = 0 the one reduced
// row, thread 0's F (xF; it returns true: nothing is left to do), else
// the L row 2^K − 1 (xL, in its thread; xL = 0 elsewhere).
template <typename T, typename Bad>
__device__ __forceinline__ bool part_cr_last(const PartEq<T> &F, const PartEq<T> &L, bool hasF, int jl, int K, Bad bad,
                                             T &xF, T &xL) {
    xL = T(0);
    if (K == 0) {
        if (hasF && bad_divisor(F.b)) bad(2, false);
        xF = F.d / F.b;
        return true;
    }
    if (jl == (1 << K) - 1) {
        if (bad_divisor(L.b)) bad(K + 2, true);
        xL = L.d / L.b;
    }
    return false;
}

// part_cr_warp exchanges by shuffles among the lanes of warp segments of
// `width` lanes, without barriers.
template <typename T, typename Bad>
__device__ __forceinline__ void part_cr_warp(PartEq<T> F, PartEq<T> L, int t, int width, int RR, int K, Bad bad,
                                             T &xF, T &xL) {
    const int jl = 2 * t + 1;
    const bool hasF = 2 * t < RR, hasL = jl < RR;
    T qF = T(1), qL = T(1);
    if (K >= 1) {
        qF = T(1) / F.b;
        if (hasF && bad_divisor(F.b)) bad(2, false);
        T a = part_down(F.a, 1, width), c = part_down(F.c, 1, width), d = part_down(F.d, 1, width),
          q = part_down(qF, 1, width);
        part_id(jl + 1 < RR, a, c, d, q);
        if (hasL) L = part_upd(L, F.a, F.c, F.d, qF, a, c, d, q);
    }
    for (int k = 2; k <= K; k++) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        if (hasL && r == v) {
            qL = T(1) / L.b;
            if (bad_divisor(L.b)) bad(1 + k, true);
        }
        const PartEq<T> h = part_upd_left(L, part_up(L.a, v, width), part_up(L.c, v, width),
                                          part_up(L.d, v, width), part_up(qL, v, width));
        T a2 = part_down(L.a, v, width), c2 = part_down(L.c, v, width), d2 = part_down(L.d, v, width),
          q2 = part_down(qL, v, width);
        part_id(jl + 2 * v < RR, a2, c2, d2, q2);
        if (hasL && r == 0) L = part_upd_right(h, a2, c2, d2, q2);
    }
    if (part_cr_last(F, L, hasF, jl, K, bad, xF, xL)) return;
#pragma unroll 1
    for (int k = K; k >= 2; k--) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        T xl = part_up(xL, v, width), xr = part_down(xL, v, width);
        if (hasL && r == v) {
            if (t < v) xl = T(0);
            if (jl + 2 * v >= RR) xr = T(0);
            xL = ((L.d - L.a * xl) - L.c * xr) * qL;
        }
    }
    T xl = part_up(xL, 1, width);
    if (t == 0) xl = T(0);
    xF = ((F.d - F.a * xl) - F.c * (hasL ? xL : T(0))) * qF;
}

// part_cr_sync exchanges through shared memory by ex (PartCRSlots,
// LanesCR): putF/putL publish the thread's F or L row (a, c, d, 1/b),
// getF/getL(dt, ok, …) read the F or L row of thread t+dt (the identity
// when !ok), putX publishes the x of the thread's L row, getX(dt) reads
// thread t+dt's. Each row is published once, when it is eliminated, so
// one barrier a level; the substitution's x goes where the reduction's
// reads are done (behind the barrier after the last row's division), one
// barrier a level. Every thread of the block calls it.
template <typename T, typename Ex, typename BadRow>
__device__ __forceinline__ void part_cr_tail(const Ex &ex, int t, int RR, int K, int k0, const PartEq<T> &L, bool hasL,
                                             BadRow badRow);

template <typename T, bool TAIL, typename Ex, typename Bad, typename BadRow>
__device__ __forceinline__ void part_cr_sync(const Ex &ex, int t, int RR, int K, PartEq<T> F, PartEq<T> L, Bad bad,
                                             BadRow badRow, T &xF, T &xL) {
    const int jl = 2 * t + 1;
    const bool hasF = 2 * t < RR, hasL = jl < RR;
    // TAIL: with 7 levels or more (64 threads a system or more), levels
    // k0+1 … K and their substitution run in the system's first warp
    // (part_cr_tail); the others through shared memory.
    const int k0 = TAIL && K >= 7 ? K - 5 : K;
    T qF = T(1), qL = T(1);
    if (K >= 1) {
        qF = T(1) / F.b;
        if (hasF) {
            if (bad_divisor(F.b)) bad(2, false);
            ex.putF(F, qF);
        }
        __syncthreads();
        if (hasL) {
            T a, c, d, q;
            ex.getF(1, jl + 1 < RR, a, c, d, q);
            L = part_upd(L, F.a, F.c, F.d, qF, a, c, d, q);
        }
    }
    for (int k = 2; k <= k0; k++) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        if (hasL && r == v) {
            qL = T(1) / L.b;
            if (bad_divisor(L.b)) bad(1 + k, true);
            ex.putL(L, qL);
        }
        __syncthreads();
        if (hasL && r == 0) {
            T a, c, d, q;
            ex.getL(-v, true, a, c, d, q);
            const PartEq<T> h = part_upd_left(L, a, c, d, q);
            ex.getL(v, jl + 2 * v < RR, a, c, d, q);
            L = part_upd_right(h, a, c, d, q);
        }
    }
    if (k0 < K) {
        part_cr_tail<T>(ex, t, RR, K, k0, L, hasL, badRow);
        xL = T(0);
        if (hasL && ((t + 1) & ((1 << (k0 - 1)) - 1)) == 0) xL = ex.getX(0);
    } else {
        if (part_cr_last(F, L, hasF, jl, K, bad, xF, xL)) return;
        if (jl == (1 << K) - 1) ex.putX(xL);
        __syncthreads();
    }
    for (int k = k0; k >= 2; k--) {
        const int v = 1 << (k - 2), r = (t + 1) & (2 * v - 1);
        if (hasL && r == v) {
            const T xl = t >= v ? ex.getX(-v) : T(0);
            const T xr = jl + 2 * v < RR ? ex.getX(v) : T(0);
            xL = ((L.d - L.a * xl) - L.c * xr) * qL;
            ex.putX(xL);
        }
        __syncthreads();
    }
    const T xl = t > 0 && hasF ? ex.getX(-1) : T(0);
    xF = ((F.d - F.a * xl) - F.c * (hasL ? xL : T(0))) * qF;
}

// part_cr_tail is part_cr_sync's levels k0+1 … K and their substitution in
// the system's first warp. After level k0 the rows left are j_i =
// (i+1)·2^k0 − 1, i = 0 … Rk−1, Rk = ⌊RR/2^k0⌋ ≤ 63: the L rows of
// threads (i+1)·2^(k0−1) − 1, which put their equation (a, c, d and b in
// the place of 1/b) in their L slots (a barrier); lane l takes rows 2l and
// 2l+1 and solves them by part_cr_warp, which does the levels' operations
// in the same order, so the same bits; their x go to the rows' x slots (a
// barrier). badRow(stage, j) reports a bad divisor of reduced row j. Every
// thread of the block calls it.
template <typename T, typename Ex, typename BadRow>
__device__ __forceinline__ void part_cr_tail(const Ex &ex, int t, int RR, int K, int k0, const PartEq<T> &L, bool hasL,
                                             BadRow badRow) {
    const int w0 = 1 << (k0 - 1); // thread spacing of the rows left
    if (hasL && ((t + 1) & (w0 - 1)) == 0) ex.putL(L, L.b);
    __syncthreads();
    if (t < 32) {
        const int l = t, Rk = RR >> k0;
        const int tF = (2 * l + 1) * w0 - 1, tL = (2 * l + 2) * w0 - 1; // the rows' threads
        PartEq<T> Fs, Ls;
        ex.getL(tF - l, 2 * l < Rk, Fs.a, Fs.c, Fs.d, Fs.b);
        ex.getL(tL - l, 2 * l + 1 < Rk, Ls.a, Ls.c, Ls.d, Ls.b);
        T xFs, xLs;
        part_cr_warp<T>(
            Fs, Ls, l, 32, Rk, K - k0,
            [&](int stage, bool isL) { badRow(stage + k0, 2 * (isL ? tL : tF) + 1); }, xFs, xLs);
        if (2 * l < Rk) ex.putXAt(tF - l, xFs);
        if (2 * l + 1 < Rk) ex.putXAt(tL - l, xLs);
    }
    __syncthreads();
}

// PartCRSlots is part_cr_sync's exchange through the free slots of the
// thread's chunk (PartSlots; bu its first logical unit, U the units of a
// chunk, thread t+dt's chunk at bu + dt·U): an F row in slots 0 … 3, an
// L row in 4 … 7, an L row's x over its slot 4.
template <typename T, int P> struct PartCRSlots {
    const PartSlots<T, P> &sl;
    int bu, U;
    __device__ __forceinline__ int X(int dt) const { return part_x(bu + dt * U); }
    __device__ __forceinline__ void putF(const PartEq<T> &e, T q) const { sl.template put<0>(X(0), e, q); }
    __device__ __forceinline__ void putL(const PartEq<T> &e, T q) const { sl.template put<4>(X(0), e, q); }
    __device__ __forceinline__ void getF(int dt, bool ok, T &a, T &c, T &d, T &q) const {
        sl.template get<0>(X(dt), ok, a, c, d, q);
    }
    __device__ __forceinline__ void getL(int dt, bool ok, T &a, T &c, T &d, T &q) const {
        sl.template get<4>(X(dt), ok, a, c, d, q);
    }
    __device__ __forceinline__ void putX(T x) const { *sl.at(4, X(0)) = x; }
    __device__ __forceinline__ void putXAt(int dt, T x) const { *sl.at(4, X(dt)) = x; }
    __device__ __forceinline__ T getX(int dt) const { return *sl.at(4, X(dt)); }
};

// part_red_row is the original row of reduced row j of an n-row system in
// chunks of P rows: its chunk's first row (even j) or last (odd j).
__device__ __forceinline__ int part_red_row(int j, int n, int P) {
    const int s = (j >> 1) * P;
    return (j & 1) ? min(s + P, n) - 1 : s;
}

// partition_kernel<T, P, CONST>: with CONST the coefficients are the
// constants k.ca, k.cb, k.cc (k.isConst set): the block holds only d (the D
// array, where Stage 1 leaves δ and Stage 3 x) and an exchange array E for
// the reduced rows (its slots in place of the B slots), and Stage 1 takes
// the reciprocal pivots, γ and α from a table made once per block
// (part_table): the same operations as without CONST, so the same bits.
template <typename T, int P, bool CONST = false>
__device__ void partition_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int spb,
                                 int tps, volatile unsigned int *word, unsigned int seq) {
    typedef typename PartVec<T>::V V;
    constexpr int R = 16 / (int)sizeof(T); // rows per 16-byte unit
    constexpr int U = P / R;               // units per chunk
    static_assert(P % R == 0 && U >= 1 && U <= 8, "chunks of whole units, at most 8");
    typedef PartSlots<T, P> SL;

    T *sm = reinterpret_cast<T *>(part_smem);
    const int nch = (n + P - 1) / P;
    const int ss = part_ss<T, P>(n, bs < es);
    const int W = ((spb * ss + 7) & ~7) * R; // elements per array: whole groups of 8 units
    // CONST: D, E, the table, keys; else A, B, C, D, keys.
    T *SA = sm, *SB = SA + W, *SC = SB + W, *SD = CONST ? sm : SC + W;
    const V *VA = reinterpret_cast<const V *>(SA), *VB = reinterpret_cast<const V *>(SB);
    const V *VD = reinterpret_cast<const V *>(SD);
    V *VC = reinterpret_cast<V *>(SC);
    PartTable<T, P> &tb = *reinterpret_cast<PartTable<T, P> *>(sm + 2 * W);
    int *keys = CONST ? reinterpret_cast<int *>(&tb + 1) : reinterpret_cast<int *>(SD + W);
    const int s = threadIdx.x / tps, t = threadIdx.x - s * tps;
    const int g0 = blockIdx.x * spb;
    const bool has = t < nch; // the thread owns a chunk (its slots exist)
    const int m = has ? min(P, n - t * P) : 0;
    const bool live = has && g0 + s < G;
    const int bu = s * ss + t * U; // the chunk's first logical unit
    const int X = part_x(bu);
    int *key = keys + s;

    for (int q = threadIdx.x; q < spb; q += blockDim.x) keys[q] = PART_NONE;
    if (CONST) {
        if (threadIdx.x == 0) part_table<T, P>(tb, k.ca, k.cb, k.cc);
        part_copy<T, P>(k, d, nullptr, nullptr, nullptr, SD, ss, n, G, es, bs, spb, g0);
    } else {
        part_load<T, P>(k, d, SA, SB, SC, SD, ss, n, G, es, bs, spb, g0);
    }
    __syncthreads();

    // Stage 1: eliminate the chunk (partition.eliminate); γ, α, δ of the
    // interior over the chunk's own c, a, d.
    PartEq<T> F = {T(0), T(1), T(0), T(0)}, L = {T(0), T(1), T(0), T(0)};
    if (live) {
        // a[0] and c[n−1] are read as 0 (their slots hold whatever the
        // batch has there).
        if (CONST)
            part_eliminate_const<T, P>(reinterpret_cast<V *>(SD), tb, X, m, n - 1 - t * P, t == 0, k.ca, k.cb, k.cc,
                                       F, L, [&](int j) { atomicMin(key, PART_KEY(1, t * P + j)); });
        else
            part_eliminate<T, P>(VA, VB, VC, VD, SA, SD, X, m, n - 1 - t * P, t == 0, F, L,
                                 [&](int j) { atomicMin(key, PART_KEY(1, t * P + j)); });
    }

    // Stage 2: cyclic reduction on the RR reduced rows; this thread's F is
    // row 2t, its L row 2t+1.
    const int lastm = n - (nch - 1) * P;
    const int RR = 2 * nch - (lastm == 1 ? 1 : 0);
    const int K = part_cr_levels(RR);
    const auto bad2 = [&](int stage, bool isL) {
        if (live) atomicMin(key, PART_KEY(stage, t * P + (isL ? m - 1 : 0)));
    };
    T xs, xe;
    if (tps <= 32) {
        part_cr_warp<T>(F, L, t, tps, RR, K, bad2, xs, xe);
    } else {
        const SL sl{SA, SB, SC, SD}; // CONST: SB is E (after D), whose slots are the B slots
        // No warp tail here (part_cr_tail): its registers (FP64 56 → 98)
        // would cost this kernel its blocks an SM.
        part_cr_sync<T, false>(PartCRSlots<T, P>{sl, bu, U}, t, RR, K, F, L, bad2, [](int, int) {}, xs, xe);
    }
    if (m < 2) xe = xs;

    // Stage 3: the interior, x_j over γ_j (C), which no exchange touches.
    if (live) {
        const int bad = CONST ? part_recover_const<T, P>(reinterpret_cast<V *>(SD), tb, X, m, xs, xe)
                              : part_recover<T, P>(VC, VA, VD, X, m, xs, xe);
        if (bad >= 0) atomicMin(key, PART_KEY(K + 3, t * P + bad));
    }
    __syncthreads();
    part_store<T, P>(CONST ? SD : SC, keys, x, ss, n, G, es, bs, spb, g0);
    part_status(keys, G, spb, g0, status);
    block_done_signal(status, G, word, seq);
}

// partition_p<P>_*: the partition method with chunks of P rows. Grid:
// ⌈G/spb⌉ blocks; block: tps·spb threads, tps ≤ 32 a power of two (warp
// shuffles) or a multiple of 32 (shared memory), tps·P ≥ n; at most 1024
// threads in FP32, 512 in FP64 (whose 64-bit reduced rows need more than
// 64 registers; tuning.partitionKernelThreads).
#ifndef BS_DEVICE_ONLY
#define PARTITION(T, S, P, MAXT)                                                                                  \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                           \
        partition_p##P##_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs,  \
                             T ca, T cb, T cc, int isConst, int *status, int spb, int tps,                       \
                             volatile unsigned int *word, unsigned int seq) {                                     \
        partition_kernel<T, P>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb, tps, word, \
                               seq);                                                                               \
    }
PARTITION(float, f32, 4, 1024)
PARTITION(float, f32, 8, 1024)
PARTITION(float, f32, 16, 1024)
PARTITION(float, f32, 32, 1024)
PARTITION(double, f64, 4, 512)
PARTITION(double, f64, 8, 512)
PARTITION(double, f64, 16, 512)

// partition_const_p16_*: the partition method for constant coefficients
// (partition_kernel with CONST), chunks of 16 rows. Dynamic shared memory:
// two arrays (D, E) of spb systems' units, the table, one int key a system
// (tuning.PartitionConstSharedBytes).
#define PARTITION_CONST(T, S, P, MAXT)                                                                            \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                           \
        partition_const_p##P##_##S(const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb, T cc, int *status, \
                                   int spb, int tps, volatile unsigned int *word, unsigned int seq) {             \
        partition_kernel<T, P, true>(Coeffs<T>{nullptr, nullptr, nullptr, ca, cb, cc, 1}, d, x, n, G, es, bs,     \
                                     status, spb, tps, word, seq);                                               \
    }
PARTITION_CONST(float, f32, 16, 1024)
PARTITION_CONST(double, f64, 16, 512)
#endif

// Resident solves (cuda/resident.go): a persistent grid of the partition
// launch that waits for solves instead of being launched for each, which
// takes the launch (about 3.4 µs of host time and more of the GPU's on an
// H100) out of a small call's latency. The host writes a solve into a
// mailbox of mapped, page-locked host memory (mbox, 128 bytes):
//   mbox[0]: the command: bits 0–31 the solve's sequence number (even)
//            with bit 0 set when the arguments changed, bit 32 stop;
//   mbox[1 … 9]: a, b, c, d, x (device addresses), ca, cb, cc (float64
//            bits), isConst: read only when bit 0 is set.
// Thread 0 of block 0 alone polls mbox[0] over PCIe, with a system-scope
// acquire load, until its low word differs from the last one served or
// stop is set; it copies the command and the arguments to a device
// mailbox (dbox, same layout, in device memory), which thread 0 of every
// other block polls with a GPU-scope acquire load. (One poller of host
// memory: with 64 blocks each polling the host, a solve took over a
// millisecond on an H100 and slowed other kernels' memory accesses.)
// The acquire loads also invalidate the SM's L1, so that the solve reads
// what other kernels wrote since the last solve. Each block then runs
// partition_kernel with the solve's sequence number, which counts the
// blocks in and writes the completion word like a launched solve. Stop
// ends the grid after any solve posted with it. The host clears dbox[0]
// before it launches a grid (a stale stop there would end it at once).
// No block waits for another within a solve, and a solve is posted only
// after every block served the last one, so every block sees every
// command.
__device__ __forceinline__ unsigned long long part_ld_acquire_sys(const unsigned long long *p) {
#ifdef PART_EMU
    return *reinterpret_cast<const volatile unsigned long long *>(p);
#else
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#endif
}
__device__ __forceinline__ unsigned long long part_ld_acquire_gpu(const unsigned long long *p) {
#ifdef PART_EMU
    return *reinterpret_cast<const volatile unsigned long long *>(p);
#else
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#endif
}
__device__ __forceinline__ void part_st_release_gpu(unsigned long long *p, unsigned long long v) {
#ifdef PART_EMU
    *reinterpret_cast<volatile unsigned long long *>(p) = v;
#else
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#endif
}

template <typename T, int P>
__device__ void partition_resident(int n, int G, i64 es, i64 bs, int *status, int spb, int tps,
                                   volatile unsigned int *word, const unsigned long long *mbox,
                                   unsigned long long *dbox, unsigned int last) {
    __shared__ unsigned long long res_args[9];
    __shared__ unsigned long long res_cmd;
    const bool leader = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    const bool many = gridDim.x * gridDim.y * gridDim.z > 1;
    for (;;) {
        if (threadIdx.x == 0) {
            unsigned long long c;
            if (leader) {
                do {
                    c = part_ld_acquire_sys(mbox);
                } while ((unsigned int)c == last && (c >> 32) == 0);
                if ((unsigned int)c != last && (c & 1)) {
                    const volatile unsigned long long *m = mbox;
#pragma unroll
                    for (int i = 0; i < 9; i++) res_args[i] = m[1 + i];
                    if (many) {
                        volatile unsigned long long *db = dbox;
#pragma unroll
                        for (int i = 0; i < 9; i++) db[1 + i] = res_args[i];
                    }
                }
                if (many) part_st_release_gpu(dbox, c);
            } else {
                do {
                    c = part_ld_acquire_gpu(dbox);
                } while ((unsigned int)c == last && (c >> 32) == 0);
                if ((unsigned int)c != last && (c & 1)) {
                    const volatile unsigned long long *m = dbox;
#pragma unroll
                    for (int i = 0; i < 9; i++) res_args[i] = m[1 + i];
                }
            }
            res_cmd = c;
        }
        __syncthreads();
        const unsigned long long c = res_cmd;
        if ((unsigned int)c != last) {
            last = (unsigned int)c;
            const Coeffs<T> k{reinterpret_cast<const T *>(res_args[0]),
                              reinterpret_cast<const T *>(res_args[1]),
                              reinterpret_cast<const T *>(res_args[2]),
                              T(__longlong_as_double((long long)res_args[5])),
                              T(__longlong_as_double((long long)res_args[6])),
                              T(__longlong_as_double((long long)res_args[7])),
                              (int)res_args[8]};
            partition_kernel<T, P>(k, reinterpret_cast<const T *>(res_args[3]), reinterpret_cast<T *>(res_args[4]),
                                   n, G, es, bs, status, spb, tps, word, last & ~1u);
        }
        if (c >> 32) return;
        __syncthreads(); // res_cmd and res_args are read before thread 0 writes them again
    }
}

// partition_resident_p<P>_*: the resident grid for chunks of 16 rows
// (partition.DefaultChunk, the chunk of tridiag.Partition and of Auto's
// large batches) and of 4 and 8 rows (Auto's small batches,
// tuning.LatencyChunk), at most 512 threads a block in both precisions
// (FP32 spills at 1024).
#ifndef BS_DEVICE_ONLY
#define PARTITION_RESIDENT(T, S, P, MAXT)                                                                        \
    extern "C" __global__ void __launch_bounds__(MAXT, 1)                                                           \
        partition_resident_p##P##_##S(int n, int G, i64 es, i64 bs, int *status, int spb, int tps,               \
                                      volatile unsigned int *word, const unsigned long long *mbox,              \
                                      unsigned long long *dbox, unsigned int last) {                            \
        partition_resident<T, P>(n, G, es, bs, status, spb, tps, word, mbox, dbox, last);                        \
    }
PARTITION_RESIDENT(float, f32, 16, 512)
PARTITION_RESIDENT(double, f64, 16, 512)
PARTITION_RESIDENT(float, f32, 8, 512)
PARTITION_RESIDENT(double, f64, 8, 512)
PARTITION_RESIDENT(float, f32, 4, 512)
PARTITION_RESIDENT(double, f64, 4, 512)
#endif
