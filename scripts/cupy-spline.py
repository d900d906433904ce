#!/usr/bin/env python3
"""Times natural cubic-spline fit + evaluate on the GPU with CuPy, the peer
of `./splinegpu.test -test.run '^$' -test.bench 'EvalShared|FitEval'`
(internal/gpu/splinegpu): C curves of N shared knots, evaluated at P
unsorted points shared by every curve, FP64, everything on the device.

Two pipelines, each timed when it is available:
  cupyx    cupyx.scipy.interpolate.CubicSpline(x, y, axis=1,
           bc_type='natural') and its call at the points;
  cusparse the moment systems (interior rows, N-2 per curve) solved by
           cuSPARSE gtsv2StridedBatch, their rows and right-hand sides
           formed with CuPy array operations, and the values evaluated by
           an ElementwiseKernel (a binary search per curve and point).
Prints, per pipeline, the median fit, evaluate and fit+evaluate times of
-reps runs after one warm-up (CUDA events), the evaluation rate in
MPoints/s, and the largest difference between the pipelines' values.

The cuSPARSE pipeline runs first; -pipelines picks either or both. Lines
are flushed as they are printed, so that a run cut short by a time limit
keeps what it measured.

Usage: python3 scripts/cupy-spline.py [-n 1000] [-curves 10000] [-points 10000] [-reps 5] [-pipelines cusparse,cupyx]
"""
import argparse
import functools

import cupy as cp
import numpy as np

EVAL_SRC = r"""
const long long k = i / P, j = i % P;
const double *yk = &y[k * n], *mk = &m[k * n];
const double tj = t[j];
int base = 0, size = n - 1;
while (size > 1) {
    const int half = size >> 1;
    if (x[base + half] <= tj) base += half;
    size -= half;
}
const double x0 = x[base], x1 = x[base + 1], h = x1 - x0;
const double a = (x1 - tj) / h, b = (tj - x0) / h;
out = a * yk[base] + b * yk[base + 1]
    + ((a * a * a - a) * mk[base] + (b * b * b - b) * mk[base + 1]) * (h * h) / 6.0;
"""


print = functools.partial(print, flush=True)


def data(n, c, p, seed=31):
    r = np.random.default_rng(seed)
    x = np.arange(n, dtype=np.float64) + 0.4 * r.random(n)
    i = np.arange(n)
    y = np.sin(0.01 * i[None, :] * (1 + np.arange(c)[:, None] % 7)) + 0.1 * r.random((c, n))
    t = x[0] + (x[-1] - x[0]) * r.random(p)
    return cp.asarray(x), cp.asarray(y), cp.asarray(t)


def timed(fn):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    res = fn()
    stop.record()
    stop.synchronize()
    return res, cp.cuda.get_elapsed_time(start, stop) / 1e3


class Cusparse:
    """Natural cubic splines of curves sharing their knots, fitted with
    cuSPARSE gtsv2StridedBatch and evaluated with an ElementwiseKernel."""

    def __init__(self, x, c):
        from cupy_backends.cuda.libs import cusparse

        self.lib = cusparse
        self.handle = cp.cuda.device.get_cusparse_handle()
        self.x, self.c = x, c
        n = x.size
        h = cp.diff(x)
        self.h = h
        m = n - 2
        # The rows of every system (the knots are shared): broadcast, as
        # gtsv2StridedBatch takes one stride for all its arrays.
        dl = cp.concatenate([cp.zeros(1), h[1:m]])
        du = cp.concatenate([h[1:m], cp.zeros(1)])
        d = 2 * (h[:-1] + h[1:])
        self.dl = cp.ascontiguousarray(cp.broadcast_to(dl, (c, m)))
        self.d = cp.ascontiguousarray(cp.broadcast_to(d, (c, m)))
        self.du = cp.ascontiguousarray(cp.broadcast_to(du, (c, m)))
        self.rhs = cp.empty((c, m))
        size = cusparse.dgtsv2StridedBatch_bufferSizeExt(
            self.handle, m, self.dl.data.ptr, self.d.data.ptr, self.du.data.ptr, self.rhs.data.ptr, c, m)
        self.buf = cp.empty(max(int(size), 1), dtype=cp.uint8)
        self.eval_kernel = cp.ElementwiseKernel(
            "raw float64 x, raw float64 y, raw float64 m, raw float64 t, int32 n, int64 P",
            "float64 out", EVAL_SRC, "natural_spline_eval")

    def fit(self, y):
        n, c = self.x.size, self.c
        s = cp.diff(y, axis=1) / self.h  # slopes
        self.rhs[...] = 6 * (s[:, 1:] - s[:, :-1])
        self.lib.dgtsv2StridedBatch(
            self.handle, n - 2, self.dl.data.ptr, self.d.data.ptr, self.du.data.ptr, self.rhs.data.ptr,
            c, n - 2, self.buf.data.ptr)
        m = cp.zeros((c, n))
        m[:, 1:-1] = self.rhs
        return m

    def evaluate(self, y, m, t, out):
        self.eval_kernel(self.x, y, m, t, np.int32(self.x.size), np.int64(t.size), out)
        return out


def report(name, fits, evals, totals, c, p):
    fit, ev, tot = (float(np.median(v)) for v in (fits, evals, totals))
    print(f"{name:9s} fit {fit * 1e3:8.2f} ms  evaluate {ev * 1e3:8.2f} ms  fit+evaluate {tot * 1e3:8.2f} ms"
          f"  evaluate {c * p / ev / 1e6:9.0f} MPoints/s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-curves", type=int, default=10000)
    ap.add_argument("-points", type=int, default=10000)
    ap.add_argument("-reps", type=int, default=5)
    ap.add_argument("-pipelines", default="cusparse,cupyx")
    args = ap.parse_args()
    pipelines = args.pipelines.split(",")
    n, c, p = args.n, args.curves, args.points
    x, y, t = data(n, c, p)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(f"# {props['name'].decode()}, CuPy {cp.__version__}: {c} curves x {n} shared knots, {p} shared unsorted points, FP64, natural")
    results = {}

    if "cusparse" in pipelines:
        pipe = Cusparse(x, c)
        out = cp.empty((c, p))
        fits, evals, totals = [], [], []
        for rep in range(args.reps + 1):
            m, tf = timed(lambda: pipe.fit(y))
            v, te = timed(lambda: pipe.evaluate(y, m, t, out))
            if rep > 0:
                fits.append(tf)
                evals.append(te)
                totals.append(tf + te)
        results["cusparse"] = v
        report("cusparse", fits, evals, totals, c, p)

    if "cupyx" in pipelines:
        try:
            from cupyx.scipy.interpolate import CubicSpline
        except ImportError:
            CubicSpline = None
        if CubicSpline is None:
            print("cupyx     cupyx.scipy.interpolate.CubicSpline is not in this CuPy")
        else:
            fits, evals, totals = [], [], []
            for rep in range(args.reps + 1):
                cs, tf = timed(lambda: CubicSpline(x, y, axis=1, bc_type="natural"))
                v, te = timed(lambda: cs(t))
                print(f"# cupyx repetition {rep}: fit {tf:.3f} s, evaluate {te:.3f} s")
                if rep > 0:
                    fits.append(tf)
                    evals.append(te)
                    totals.append(tf + te)
            results["cupyx"] = v  # (c, p)
            report("cupyx", fits, evals, totals, c, p)
            del cs

    if len(results) == 2:
        a, b = results["cupyx"], results["cusparse"]
        scale = float(cp.abs(a).max())
        print(f"# largest difference between the pipelines' values: {float(cp.abs(a - b).max()) / scale:.2e} (relative to the largest value)")
    bytes_ = 8 * (2 * n * c + p + c * p)
    print(f"# evaluation floor: {bytes_ / 1e9:.3f} GB (read y and M of every curve and the points, write C*P values)")


if __name__ == "__main__":
    main()
