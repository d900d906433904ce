#!/usr/bin/env python3
"""Time SciPy's CubicSpline on the batch that package spline's benchmarks use.

The batch: CURVES curves of KNOTS random knots shared by every curve (spacing
0.2 + U(0, 1), scaled to [0, 1]), standard normal values, FP64; evaluated at
POINTS points shared by every curve, uniform on [0, 1], shuffled or ascending.
SciPy fits all the curves in one call (CubicSpline(x, Y.T): the curves along
the second axis) and evaluates them all at the points in one call (the result
is points × curves).

Usage:
    /usr/bin/python3 scripts/spline-scipy.py                      # 10^4 x 10^3 x 10^4
    /usr/bin/python3 scripts/spline-scipy.py --curves 1000 --repeat 5

It prints, for each step, the best and the mean time of --repeat runs (the
first run of each step also maps its output's memory) and the rate at the
best time in millions of points evaluated (knots fitted, curves integrated)
per second, to compare with the Mpoints/s of

    go test ./spline -run '^$' -bench 'Eval|Fit|Integrate' -benchtime 3x

run on the same machine. Nothing else in the repository calls this script;
it needs numpy and scipy.
"""

import argparse
import time

import numpy as np
from scipy.interpolate import CubicSpline


def random_knots(rng, n):
    steps = 0.2 + rng.random(n)
    x = np.concatenate(([0.0], np.cumsum(steps[:-1])))
    x /= x[-1]
    return x


def timed(repeat, f):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
        del out
    return min(times), sum(times) / len(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--curves", type=int, default=10000)
    ap.add_argument("--knots", type=int, default=1000)
    ap.add_argument("--points", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()

    rng = np.random.default_rng(1)
    x = random_knots(rng, a.knots)
    Y = rng.standard_normal((a.curves, a.knots))
    t = rng.random(a.points)
    ts = np.sort(t)
    values = a.curves * a.points

    print(f"scipy {__import__('scipy').__version__}, numpy {np.__version__}: "
          f"{a.curves} curves x {a.knots} shared knots, {a.points} shared points, FP64, best/mean of {a.repeat}")

    def report(name, best, mean, n):
        print(f"  {name:24s} best {best:8.4f} s  mean {mean:8.4f} s  {n / best / 1e6:10.4g} M/s (best)")

    for bc in ("natural", "clamped", "periodic"):
        Yb = Y
        kw = {"bc_type": bc}
        if bc == "clamped":
            kw["bc_type"] = ((1, np.zeros(a.curves)), (1, np.ones(a.curves)))
        if bc == "periodic":
            Yb = Y.copy()
            Yb[:, -1] = Yb[:, 0]
        best, mean = timed(a.repeat, lambda: CubicSpline(x, Yb.T, **kw))
        report(f"fit {bc}", best, mean, a.curves * a.knots)

    s = CubicSpline(x, Y.T, bc_type="natural")
    for name, f in (
        ("eval unsorted value", lambda: s(t)),
        ("eval sorted value", lambda: s(ts)),
        ("eval unsorted deriv", lambda: s(t, 1)),
        ("eval unsorted deriv2", lambda: s(t, 2)),
    ):
        best, mean = timed(a.repeat, f)
        report(name, best, mean, values)
    best, mean = timed(a.repeat, lambda: s.integrate(0.01, 0.99))
    report("integrate", best, mean, a.curves)


if __name__ == "__main__":
    main()
