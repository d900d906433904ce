#!/usr/bin/env python3
"""Times CuPy's conjugate gradients (cupyx.scipy.sparse.linalg.cg, no
preconditioner) on the 2-D 5-point Laplacian m x m (FP64, b = A*1, relative
residual 1e-8), the peer of `go test -tags cuda ./gpu -bench PCGPoisson1000`.
Prints the iterations, the total time and the time per iteration (median of
-reps solves after one warm-up).

Usage: python3 scripts/cupy-cg.py [-m 1000] [-tol 1e-8] [-reps 3]
"""
import argparse
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as cla


def laplacian(m):
    n = m * m
    main = 4 * cp.ones(n)
    side = -cp.ones(n - 1)
    side[cp.arange(1, n) % m == 0] = 0  # no coupling across grid lines
    far = -cp.ones(n - m)
    return csp.diags([far, side, main, side, far], [-m, -1, 0, 1, m], format="csr")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-m", type=int, default=1000)
    ap.add_argument("-tol", type=float, default=1e-8)
    ap.add_argument("-reps", type=int, default=3)
    args = ap.parse_args()
    a = laplacian(args.m)
    b = a @ cp.ones(a.shape[0])
    runs = []
    for rep in range(args.reps + 1):
        its = [0]

        def count(_):
            its[0] += 1

        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        try:
            x, info = cla.cg(a, b, rtol=args.tol, maxiter=10000, callback=count)
        except TypeError:  # CuPy before 14 names it tol
            x, info = cla.cg(a, b, tol=args.tol, maxiter=10000, callback=count)
        cp.cuda.Device().synchronize()
        took = time.perf_counter() - start
        if rep > 0:
            runs.append((took, its[0], info))
    runs.sort()
    took, its, info = runs[len(runs) // 2]
    res = float(cp.linalg.norm(b - a @ x) / cp.linalg.norm(b))
    print(f"cupy {cp.__version__} cg m={args.m}: {its} iterations, {took * 1e3:.1f} ms, "
          f"{took * 1e3 / its:.3f} ms/iteration, info {info}, relative residual {res:.2e}")


if __name__ == "__main__":
    main()
