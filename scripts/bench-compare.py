#!/usr/bin/env python3
"""Compares `bandsolve bench -csv` files of two binaries run in the same
device call: for each case (precision, layout, N, G, constant) the median
µs and fraction of the limit of every round, before and after, and the
gain (best before / best after).

Usage: python3 bench-compare.py DIR BEFORE AFTER ROUNDS
  reads DIR/BEFORE-r.csv and DIR/AFTER-r.csv for r = 1 … ROUNDS
  (the device scripts write them as $R/$binary-$round.csv).
"""
import collections
import csv
import sys


def main():
    out, before, after, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    d = collections.defaultdict(dict)
    for b in (before, after):
        for r in range(1, rounds + 1):
            with open(f"{out}/{b}-{r}.csv") as f:
                for row in csv.DictReader(l for l in f if not l.startswith("#")):
                    if not row["solver"].startswith("gpu:"):
                        continue
                    k = (row["precision"], row["layout"], int(row["N"]), int(row["G"]), row["constant"], row["solver"])
                    d[k].setdefault(b, []).append((float(row["median_us"]), float(row["fraction"])))
    fmt = lambda v: " ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f in v)
    for k in sorted(d, key=lambda k: (k[1], k[0], k[4], k[2] * k[3], k[2], k[5])):
        o, n = d[k].get(before), d[k].get(after)
        if not o or not n:
            continue
        gain = min(t for t, _ in o) / min(t for t, _ in n)
        const = " const" if k[4] == "true" else ""
        print(f"{k[0]} {k[1]}{const} N={k[2]} G={k[3]} {k[5]} before {fmt(o)} after {fmt(n)} gain {gain:.3f}")


if __name__ == "__main__":
    main()
