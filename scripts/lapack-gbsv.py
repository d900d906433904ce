#!/usr/bin/env python3
"""Times LAPACK dgbsv/sgbsv (through SciPy) on the host, the peer of the
GPU banded solves where cuSPARSE has no general band solver, and prints the
results as records of `bandsolve bench -grid banded -csv` (with a header),
so that they can be appended to a banded baseline.

Usage: python3 scripts/lapack-gbsv.py [-n 1e5,1e6] [-k 2,10,100] [-d 1]
           [-precision f64] [-reps 3] [-commit REV] > lapack.csv

The matrices are those of the bench's banded grids: off-diagonal entries
from U(-1, 1), each diagonal entry d times the sum of the magnitudes of its
row's off-diagonal entries; b from U(-1, 1). The time is the median of
-reps calls of ?gbsv (factor and solve together, the band copied before
each call outside the timed region). resid = ||b - A x||_2 / ||b||_2 in
float64.
"""
import argparse
import csv
import datetime
import platform
import sys
import time

import numpy as np
import scipy
from scipy.linalg import lapack

HEADER = ["precision", "N", "K", "G", "d", "solver", "partitions", "factor_us", "solve_us",
          "total_us", "reps", "iterations", "resid", "mrows_per_s", "fraction", "speedup",
          "speedup_estimated", "speedup_vs_anchor", "estimate_us", "err", "note",
          "grid", "device", "driver", "library", "bandwidth_gbs", "date", "commit"]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def blas_name():
    try:
        import threadpoolctl
        for info in threadpoolctl.threadpool_info():
            if info.get("user_api") == "blas":
                return "%s %s" % (info.get("internal_api", "blas"), info.get("version", ""))
    except Exception:
        pass
    try:
        cfg = scipy.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return "%s %s" % (blas.get("name", "BLAS"), blas.get("version", ""))
    except Exception:
        pass
    return "BLAS unknown"


def band_matrix(n, k, d, dtype, rng):
    """Returns the LAPACK band storage with kl = ku = k (2k extra rows for
    the fill-in of pivoting on top) and a function A @ x."""
    ab = np.zeros((3 * k + 1, n), dtype=np.float64)
    # Row 2k + i - j of ab holds A[i, j] (LAPACK's gbsv layout, kl = ku = k).
    off = rng.uniform(-1.0, 1.0, size=(2 * k + 1, n))
    off[k, :] = 0.0
    rowsum = np.zeros(n)
    for r in range(2 * k + 1):
        j_off = k - r  # A[i, i + j_off] is off[r, i]
        i0, i1 = max(0, -j_off), min(n, n - j_off)
        if j_off == 0:
            continue
        vals = off[r, i0:i1]
        ab[2 * k - j_off, i0 + j_off:i1 + j_off] = vals
        rowsum[i0:i1] += np.abs(vals)
    ab[2 * k, :] = d * rowsum
    ab = ab.astype(dtype)

    def matvec(x):
        y = np.zeros(n)
        a64 = ab.astype(np.float64)
        for r in range(k, 3 * k + 1):
            j_off = 2 * k - r  # row r holds A[i, i + j_off] at column i + j_off
            i0, i1 = max(0, -j_off), min(n, n - j_off)
            y[i0:i1] += a64[r, i0 + j_off:i1 + j_off] * x[i0 + j_off:i1 + j_off]
        return y
    return ab, matvec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", default="1e5,1e6")
    ap.add_argument("-k", default="2,10,100")
    ap.add_argument("-d", default="1")
    ap.add_argument("-precision", default="f64")
    ap.add_argument("-reps", type=int, default=3)
    ap.add_argument("-commit", default="")
    ap.add_argument("-seed", type=int, default=1)
    a = ap.parse_args()
    ns = [int(float(v)) for v in a.n.split(",")]
    ks = [int(v) for v in a.k.split(",")]
    ds = [float(v) for v in a.d.split(",")]
    w = csv.writer(sys.stdout, lineterminator="\n")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lib = "LAPACK ?gbsv (SciPy %s, %s)" % (scipy.__version__, blas_name())
    print("# LAPACK ?gbsv through SciPy %s, NumPy %s, %s on %s; median of %d calls" %
          (scipy.__version__, np.__version__, blas_name(), cpu_name(), a.reps))
    w.writerow(HEADER)
    rng = np.random.default_rng(a.seed)
    for prec in a.precision.split(","):
        dtype = np.float32 if prec == "f32" else np.float64
        gbsv = lapack.sgbsv if prec == "f32" else lapack.dgbsv
        for n in ns:
            for k in ks:
                for d in ds:
                    ab, matvec = band_matrix(n, k, d, dtype, rng)
                    b = rng.uniform(-1.0, 1.0, size=n)
                    times = []
                    x = None
                    for _ in range(a.reps):
                        abc = ab.copy(order="F")
                        bc = b.astype(dtype)
                        t0 = time.perf_counter()
                        _, _, x, info = gbsv(k, k, abc, bc, overwrite_ab=True, overwrite_b=True)
                        times.append(time.perf_counter() - t0)
                        if info != 0:
                            break
                    err = "" if info == 0 else "info %d" % info
                    t = sorted(times)[len(times) // 2]
                    resid = np.linalg.norm(b - matvec(x.astype(np.float64))) / np.linalg.norm(b)
                    w.writerow([prec, n, k, 1, "%g" % d, "lapack:%sgbsv" % prec[1:].replace("64", "d").replace("32", "s"),
                                0, "", "", "%.3f" % (t * 1e6), len(times), "", "%g" % resid,
                                "%g" % (n / t / 1e6), 0, "", "false", "", "", err, "",
                                "lapack", cpu_name(), "", lib, "", date, a.commit])
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
