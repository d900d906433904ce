#!/usr/bin/env python3
"""Compares the two sides of scripts/ab-bench.sh: for every case and solver,
the median over rounds of each side's per-round median time, and their
ratio (speed of B relative to A: A's time / B's time, so < 1 means B is
slower). Banded cases compare factor and solve times apart (a batch's
solve, which has none, its total).

Usage: python3 scripts/ab-compare.py OUTDIR [THRESHOLD (default 0.97)]
Exit status 1 when a ratio is below the threshold.
"""
import csv, glob, os, statistics, sys

def rows(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith('#')))

def collect(out, side):
    t = {}
    for path in sorted(glob.glob(os.path.join(out, f'{side}-*.csv'))):
        grid = os.path.basename(path)[2:].rsplit('-', 1)[0]
        for r in rows(path):
            if 'factor_us' in r:  # banded
                case = f"{grid} {r['precision']} N={r['N']} K={r['K']} G={r['G']} d={r['d']} {r['solver']}"
                parts = [p for p in ('factor_us', 'solve_us') if r.get(p)] or ['total_us']
                for part in parts:
                    if r.get(part):
                        t.setdefault(f'{case} {part[:-3]}', []).append(float(r[part]))
            else:
                const = ' const' if r['constant'] == 'true' else ''
                case = f"{grid} {r['precision']} {r['layout']} N={r['N']} G={r['G']}{const} {r['solver']}"
                if r.get('median_us'):
                    t.setdefault(case, []).append(float(r['median_us']))
    return t

def main():
    out = sys.argv[1]
    thr = float(sys.argv[2]) if len(sys.argv) > 2 else 0.97
    a, b = collect(out, 'A'), collect(out, 'B')
    bad = 0
    ratios = []
    print(f"{'case':<72} {'A µs':>10} {'B µs':>10} {'A/B':>6} runs")
    for case in sorted(set(a) | set(b)):
        if case not in a or case not in b:
            print(f'{case:<72} missing on side {"B" if case in a else "A"}')
            bad += 1
            continue
        ma, mb = statistics.median(a[case]), statistics.median(b[case])
        r = ma / mb if mb > 0 else float('inf')
        ratios.append(r)
        flag = '  SLOWER' if r < thr else ''
        bad += r < thr
        print(f'{case:<72} {ma:10.2f} {mb:10.2f} {r:6.3f} {len(a[case])}/{len(b[case])}{flag}')
    if ratios:
        g = statistics.geometric_mean(ratios)
        print(f'{len(ratios)} cases: geometric mean A/B {g:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; below {thr}: {bad}')
    sys.exit(1 if bad else 0)

main()
