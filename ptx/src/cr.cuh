// Cyclic reduction (TPR paper §2.2.1, Fig. 1, Eq. 1–2, and Eq. 6 for the
// last two equations), each system held in shared memory. The CPU twin is
// cr.Solve (tridiag/cr): the same operations in the same order (PTX built
// with -fmad=false), so the results agree bit for bit.
//
// cr.Solve stores each level compactly; here every level lives in place
// in one set of arrays indexed by the original row: compact index m of
// level k is row (m+1)·2^k − 1. A step of the forward reduction rewrites
// the kept rows (odd compact indices) at their own index and only reads
// the eliminated ones (even compact indices), which keep their level-k
// values for the backward substitution; x is written in d's place, row r
// once its neighbours r ± u (solved at higher levels) are known.
//
// Launch (tuning.CRLaunch): blockDim.x = tps·spb threads, spb systems per
// block, tps threads per system. Dynamic shared memory, per local system s
// at element offset 4n·s: a[n] b[n] c[n] d[n]; then spb int keys (see
// red_key in pcr.cuh). In all 4n·sizeof(T)·spb + 4·spb bytes
// (tuning.CRSharedBytes).
#pragma once
#include "common.cuh"
#include "pcr.cuh" // red_smem, red_load, red_store, RED_KEY

template <typename T>
__device__ void cr_kernel(Coeffs<T> k, const T *d, T *x, int n, int G, i64 es, i64 bs, int *status, int spb) {
    T *sm = reinterpret_cast<T *>(red_smem);
    const int ss = 4 * n;
    int *keys = reinterpret_cast<int *>(sm + spb * ss);
    const int tps = blockDim.x / spb;
    const int s = threadIdx.x / tps, lt = threadIdx.x - s * tps;
    const int g0 = blockIdx.x * spb;
    const bool live = s < spb && g0 + s < G;

    for (int t = threadIdx.x; t < spb; t += blockDim.x) keys[t] = RED_NONE;
    red_load(k, d, sm, ss, n, G, es, bs, spb, g0);
    __syncthreads();

    T *A = sm + (live ? s : 0) * ss, *B = A + n, *C = B + n, *D = C + n;
    int *key = keys + (live ? s : 0);

    // Levels: level k has n >> k equations; reduce while a level has more
    // than two. top is the last level.
    int top = 0;
    while ((n >> top) > 2) top++;

    // Forward reduction, Eq. 1, level k → k+1, stride u = 2^k. Thread
    // index j covers the eliminated equation m = 2j (its divisor is
    // checked: stage k+1) and the kept equation 2j+1 (updated from
    // 2j, 2j+1, 2j+2).
    for (int lv = 0; lv < top; lv++) {
        const int u = 1 << lv, cnt = n >> lv;
        if (live) {
            for (int j = lt; 2 * j < cnt; j += tps) {
                const int rl = (2 * j + 1) * u - 1; // row of compact 2j
                if (bad_divisor(B[rl])) atomicMin(key, RED_KEY(lv + 1, rl));
                if (2 * j + 1 >= cnt) continue;
                const int ri = rl + u; // row of compact 2j+1
                const T al = A[rl], bl = B[rl], cl = C[rl], dl = D[rl];
                T ar = T(0), br = T(1), cr = T(0), dr = T(0);
                if (2 * j + 2 < cnt) {
                    const int rr = ri + u;
                    ar = A[rr];
                    br = B[rr];
                    cr = C[rr];
                    dr = D[rr];
                }
                const T s1 = A[ri] / bl;
                const T s2 = C[ri] / br;
                const T na = -(al * s1);
                const T nb = (B[ri] - cl * s1) - ar * s2;
                const T nc = -(cr * s2);
                const T nd = (D[ri] - dl * s1) - dr * s2;
                A[ri] = na;
                B[ri] = nb;
                C[ri] = nc;
                D[ri] = nd;
            }
        }
        __syncthreads();
    }

    // Top level: one or two equations, rows u−1 (and 2u−1), u = 2^top.
    if (live && lt == 0) {
        const int u = 1 << top;
        if ((n >> top) == 1) {
            const int p = u - 1;
            if (bad_divisor(B[p])) atomicMin(key, RED_KEY(top + 1, p));
            const T xp = D[p] / B[p];
            D[p] = xp;
            if (!isfinite(xp)) atomicMin(key, RED_KEY(top + 2, p));
        } else {
            // Eq. 6: the two-unknown system E_p, E_q, q = p + u.
            const int p = u - 1, q = 2 * u - 1;
            const T bp = B[p], cp = C[p], dp = D[p];
            const T aq = A[q], bq = B[q], dq = D[q];
            const T det = bq * bp - cp * aq;
            if (bad_divisor(det)) atomicMin(key, RED_KEY(top + 1, q));
            const T xp = (bq * dp - cp * dq) / det;
            const T xq = (dq * bp - dp * aq) / det;
            D[p] = xp;
            D[q] = xq;
            if (!isfinite(xp)) atomicMin(key, RED_KEY(top + 2, p));
            else if (!isfinite(xq)) atomicMin(key, RED_KEY(top + 2, q));
        }
    }
    __syncthreads();

    // Backward substitution, Eq. 2, levels top−1 … 0: the equations
    // eliminated at level k (compact m = 2j, row (m+1)u − 1) from x of the
    // rows r ± u (a missing neighbour is x = 0).
    for (int lv = top - 1; lv >= 0; lv--) {
        const int u = 1 << lv, cnt = n >> lv;
        if (live) {
            for (int j = lt; 2 * j < cnt; j += tps) {
                const int m = 2 * j, r = (m + 1) * u - 1;
                T xl = T(0), xr = T(0);
                if (m > 0) xl = D[r - u];
                if (m + 1 < cnt) xr = D[r + u];
                const T xi = ((D[r] - A[r] * xl) - C[r] * xr) / B[r];
                D[r] = xi;
                if (!isfinite(xi)) atomicMin(key, RED_KEY(top + 2, r));
            }
        }
        __syncthreads();
    }

    red_store(sm, ss, 3 * n, keys, x, n, G, es, bs, spb, g0, status);
}

// cr_*: grid ⌈G/spb⌉ blocks; block tps·spb threads (≤ 1024).
#define CR(T, S)                                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024)                                                           \
        cr_##S(const T *a, const T *b, const T *c, const T *d, T *x, int n, int G, i64 es, i64 bs, T ca, T cb,   \
               T cc, int isConst, int *status, int spb) {                                                        \
        cr_kernel<T>(Coeffs<T>{a, b, c, ca, cb, cc, isConst}, d, x, n, G, es, bs, status, spb);                   \
    }
CR(float, f32)
CR(double, f64)
