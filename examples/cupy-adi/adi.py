#!/usr/bin/env python3
"""The 2-D ADI heat step (Peaceman–Rachford, zero boundaries) in CuPy, with
the implicit sweeps solved by bandsolve in place on CuPy arrays, and the
same step with cuSPARSE through CuPy's bindings; prints steps/s of each for
every grid, FP64.

A step on an m×m grid of interior unknowns u[y, x], r = Δt/h²:

    (I − ½r·δx²)·w = (I + ½r·δy²)·u      explicit along y, implicit along x
    (I − ½r·δy²)·u = (I + ½r·δx²)·w      explicit along x, implicit along y

Each half-step is one CuPy ElementwiseKernel (the explicit part) and one
batch of m tridiagonal solves of m rows with constant coefficients.

  bandsolve      the kernel writes the right-hand side in place of the
                 field's layout; the solves run along x (rows, stride 1)
                 and along y (columns, stride m: the interleaved layout)
                 with one bandsolve.Plan per axis, in place, without a
                 transpose.
  cusparse-T     the kernel writes the right-hand side transposed, so that
                 the lines to solve are always contiguous, then
                 gtsv2StridedBatch (the field alternates between u[y, x]
                 and u[x, y] from half-step to half-step).
  cusparse-I     gtsv2StridedBatch along x, gtsvInterleavedBatch along y
                 (no transpose).

Usage: python3 examples/cupy-adi/adi.py [--sizes 1024,2048] [--steps 200]
           [--check] [--methods bandsolve,cusparse-T,cusparse-I]
Set BANDSOLVE_LIB to the CUDA variant of libbandsolve when the package is
not installed with it (see docs/interop.md).
"""

import argparse
import math
import os
import sys
import time

import cupy as cp

try:
    import bandsolve
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import bandsolve

# out = u + h·(u[−1] − 2u + u[+1]) along the axis of stride s (1 for x,
# m for y), zero outside the grid; idx is the index of u's element.
_explicit = cp.ElementwiseKernel(
    "raw T u, int64 m, int64 s, T h", "T out",
    """
    const long long e = i;
    const long long pos = (s == 1) ? (e % m) : (e / m);
    const T c = u[e];
    const T lo = pos > 0 ? u[e - s] : (T)0;
    const T hi = pos < m - 1 ? u[e + s] : (T)0;
    out = c + h * (lo - (T)2 * c + hi);
    """, "bandsolve_adi_explicit")

# The same, the contiguous axis of u (stride 1), written transposed:
# out[q, p] = (I + h·δ²)u[p, q].
_explicit_t = cp.ElementwiseKernel(
    "raw T u, int64 m, T h", "T out",
    """
    const long long q = i / m, p = i % m;
    const long long e = p * m + q;
    const T c = u[e];
    const T lo = q > 0 ? u[e - 1] : (T)0;
    const T hi = q < m - 1 ? u[e + 1] : (T)0;
    out = c + h * (lo - (T)2 * c + hi);
    """, "bandsolve_adi_explicit_t")


def initial(m):
    """sin πx·sin πy on the interior points, h = 1/(m+1)."""
    x = cp.arange(1, m + 1, dtype=cp.float64) / (m + 1)
    s = cp.sin(math.pi * x)
    return cp.ascontiguousarray(s[:, None] * s[None, :])


class Bandsolve:
    name = "bandsolve"

    def __init__(self, m, r):
        self.m, self.h = m, r / 2
        self.px = bandsolve.Plan(m, m, layout="strided", strides=(1, m), device="cuda")
        self.py = bandsolve.Plan(m, m, layout="strided", strides=(m, 1), device="cuda")
        self.w = cp.empty((m, m))

    def start(self, u):
        self.u = u.copy()

    def step(self):
        m, h, u, w = self.m, self.h, self.u, self.w
        _explicit(u, m, m, h, w)  # explicit along y
        self.px.solve_const(-h, 1 + 2 * h, -h, w, out=w)
        _explicit(w, m, 1, h, u)  # explicit along x
        self.py.solve_const(-h, 1 + 2 * h, -h, u, out=u)

    def field(self):
        return self.u

    def describe(self):
        return f"x: {self.px.describe()}; y: {self.py.describe()}"


def _cusparse():
    from cupy_backends.cuda.libs import cusparse
    return cusparse


class CusparseT:
    """gtsv2StridedBatch on contiguous lines; the explicit kernel writes
    transposed."""

    name = "cusparse-T"

    def __init__(self, m, r):
        self.sp = _cusparse()
        self.handle = cp.cuda.device.get_cusparse_handle()
        self.m, self.h = m, r / 2
        h = self.h
        n = m * m
        self.dl, self.d, self.du = cp.full(n, -h), cp.full(n, 1 + 2 * h), cp.full(n, -h)
        self.dl[::m] = 0  # the padded corners of each system
        self.du[m - 1::m] = 0
        self.w = cp.empty((m, m))
        x = self.w
        size = self.sp.dgtsv2StridedBatch_bufferSizeExt(self.handle, m, self.dl.data.ptr, self.d.data.ptr,
                                                         self.du.data.ptr, x.data.ptr, m, m)
        self.buf = cp.empty(max(size, 1), dtype=cp.uint8)

    def start(self, u):
        self.v = cp.ascontiguousarray(u.T)  # u[x, y]: y contiguous

    def solve(self, x):
        self.sp.setStream(self.handle, cp.cuda.get_current_stream().ptr)
        self.sp.dgtsv2StridedBatch(self.handle, self.m, self.dl.data.ptr, self.d.data.ptr, self.du.data.ptr,
                                   x.data.ptr, self.m, self.m, self.buf.data.ptr)

    def step(self):
        m, h = self.m, self.h
        _explicit_t(self.v, m, h, self.w)  # explicit along y, to w[y, x]
        self.solve(self.w)                 # along x
        _explicit_t(self.w, m, h, self.v)  # explicit along x, to v[x, y]
        self.solve(self.v)                 # along y

    def field(self):
        return self.v.T

    def describe(self):
        return "ElementwiseKernel writing transposed + gtsv2StridedBatch"


class CusparseI:
    """gtsv2StridedBatch along x and gtsvInterleavedBatch along y, no
    transpose."""

    name = "cusparse-I"

    def __init__(self, m, r):
        self.sp = _cusparse()
        if not hasattr(self.sp, "dgtsvInterleavedBatch"):
            raise RuntimeError("this CuPy has no cusparse.dgtsvInterleavedBatch")
        self.handle = cp.cuda.device.get_cusparse_handle()
        self.m, self.h = m, r / 2
        h = self.h
        n = m * m
        # Strided (x): system g at g·m; interleaved (y): row i of system g at i·m + g.
        self.xs = [cp.full(n, -h), cp.full(n, 1 + 2 * h), cp.full(n, -h)]
        self.xs[0][::m] = 0
        self.xs[2][m - 1::m] = 0
        self.ys = [cp.full(n, -h), cp.full(n, 1 + 2 * h), cp.full(n, -h)]
        self.ys[0][:m] = 0
        self.ys[2][n - m:] = 0
        self.ys0 = [v.copy() for v in self.ys]
        self.restore = None  # whether gtsvInterleavedBatch overwrites its coefficients
        self.w = cp.empty((m, m))
        p = [v.data.ptr for v in self.xs]
        sx = self.sp.dgtsv2StridedBatch_bufferSizeExt(self.handle, m, *p, self.w.data.ptr, m, m)
        q = [v.data.ptr for v in self.ys]
        sy = self.sp.dgtsvInterleavedBatch_bufferSizeExt(self.handle, 0, m, *q, self.w.data.ptr, m)
        self.buf = cp.empty(max(sx, sy, 1), dtype=cp.uint8)

    def start(self, u):
        self.u = u.copy()

    def step(self):
        m, h, u, w = self.m, self.h, self.u, self.w
        s = cp.cuda.get_current_stream().ptr
        self.sp.setStream(self.handle, s)
        _explicit(u, m, m, h, w)
        self.sp.dgtsv2StridedBatch(self.handle, m, *(v.data.ptr for v in self.xs), w.data.ptr, m, m,
                                   self.buf.data.ptr)
        _explicit(w, m, 1, h, u)
        self.sp.dgtsvInterleavedBatch(self.handle, 0, m, *(v.data.ptr for v in self.ys), u.data.ptr, m,
                                      self.buf.data.ptr)
        if self.restore is None:
            self.restore = any(not bool(cp.array_equal(a, b)) for a, b in zip(self.ys, self.ys0))
            if self.restore:
                print("  note: gtsvInterleavedBatch overwrote its coefficients; they are restored every step",
                      file=sys.stderr)
        if self.restore:
            for a, b in zip(self.ys, self.ys0):
                a[...] = b

    def field(self):
        return self.u

    def describe(self):
        return "ElementwiseKernel + gtsv2StridedBatch (x) + gtsvInterleavedBatch algo 0 (y)"


METHODS = {c.name: c for c in (Bandsolve, CusparseT, CusparseI)}


def exact(m, r, steps):
    """The exact solution after steps of Δt = r·h²: e^(−2π²t)·sin πx·sin πy."""
    h = 1.0 / (m + 1)
    return math.exp(-2 * math.pi ** 2 * steps * r * h * h) * initial(m)


def run(method, u0, steps, reps):
    method.start(u0)
    for _ in range(5):
        method.step()
    cp.cuda.get_current_stream().synchronize()
    best = math.inf
    for _ in range(reps):
        method.start(u0)
        cp.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            method.step()
        cp.cuda.get_current_stream().synchronize()
        best = min(best, time.perf_counter() - t0)
    return steps / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1024,2048", help="interior unknowns per side, comma-separated")
    ap.add_argument("--steps", type=int, default=200, help="steps per timed run")
    ap.add_argument("--reps", type=int, default=3, help="timed runs (the best counts)")
    ap.add_argument("--r", type=float, default=4.0, help="Δt/h²")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated: " + ", ".join(METHODS))
    ap.add_argument("--check", action="store_true",
                    help="compare the fields of the methods after --steps steps (and with the exact solution)")
    ap.add_argument("--stream", action="store_true", help="run on a non-blocking CuPy stream, not the default one")
    args = ap.parse_args()
    print(f"bandsolve {bandsolve.version()}, CuPy {cp.__version__}, "
          f"{cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)['name'].decode()}, FP64, r = {args.r}")
    stream = cp.cuda.Stream(non_blocking=True) if args.stream else cp.cuda.Stream.null
    failed = False
    with stream:
        for m in (int(s) for s in args.sizes.split(",")):
            u0 = initial(m)
            print(f"\n{m}×{m} grid, {args.steps} steps per run")
            results, fields = {}, {}
            for name in args.methods.split(","):
                try:
                    meth = METHODS[name](m, args.r)
                except Exception as e:  # a CuPy without the binding
                    print(f"  {name:<11} unavailable: {e}")
                    continue
                sps = run(meth, u0, args.steps, args.reps)
                results[name] = sps
                print(f"  {name:<11} {sps:10.1f} steps/s   {meth.describe()}")
                if args.check:
                    meth.start(u0)
                    for _ in range(args.steps):
                        meth.step()
                    fields[name] = meth.field().copy()
            others = {k: v for k, v in results.items() if k != "bandsolve"}
            if "bandsolve" in results and others:
                best = max(others, key=others.get)
                print(f"  bandsolve / fastest cuSPARSE ({best}): {results['bandsolve'] / others[best]:.2f}×")
            if args.check and fields:
                ref = exact(m, args.r, args.steps)
                scale = float(cp.abs(ref).max())
                names = list(fields)
                for name in names:
                    err = float(cp.abs(fields[name] - ref).max()) / scale
                    print(f"  check {name:<11} relative error to the exact solution {err:.3e}")
                for name in names[1:]:
                    diff = float(cp.abs(fields[name] - fields[names[0]]).max()) / scale
                    ok = diff <= 1e-10
                    failed |= not ok
                    print(f"  check {name} vs {names[0]}: max relative difference {diff:.3e} "
                          f"{'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
