# Summarises a per-SASS-instruction counter export of Nsight Compute
# (`ncu -i REP --page source --csv --print-source sass | gzip`): the
# dynamic instruction mix of one kernel by opcode and its hottest
# straight-line runs of code (executed instructions, stall samples).
# Usage: python3 scripts/sass-profile.py KERNEL-INDEX FILE.csv.gz
#   KERNEL-INDEX: which of the report's kernels (0: the first); FILE: the
#   gzipped export above, e.g. of one bandsolve bench case profiled with
#   ncu --set full -o report ./bandsolve bench -device cuda -grid 64x262144:interleaved:const
import csv, sys, collections, gzip
k = int(sys.argv[1]) if len(sys.argv) > 1 else 0
kernels, hdr = [], None
with gzip.open(sys.argv[2], 'rt') as f:
    for line in csv.reader(f):
        if line and line[0] == "Kernel Name":
            kernels.append([]); hdr = None; continue
        if line and line[0] == "Address":
            hdr = line; continue
        if hdr and line:
            kernels[-1].append(dict(zip(hdr, line)))
rows = kernels[k]
ex = lambda r: int(r["Instructions Executed"] or 0)
st = lambda r: int(r["Warp Stall Sampling (All Samples)"] or 0)
tot, stot = sum(map(ex, rows)), sum(map(st, rows))
print(f"kernel {k}: {tot} warp instructions, {stot} stall samples")
mix = collections.Counter()
for r in rows:
    op = r["Source"].split()[0]
    if op.startswith("@"):
        op = r["Source"].split()[1]
    mix[op.split(".")[0]] += ex(r)
print("opcode mix (% of executed):")
print("  " + ", ".join(f"{o} {100*c/tot:.1f}" for o, c in mix.most_common(25)))
# Straight-line runs: a new run starts where the execution count changes.
runs, cur = [], None
for i, r in enumerate(rows):
    e = ex(r)
    if cur is None or e != cur[2]:
        cur = [i, i, e, 0, 0]; runs.append(cur)
    cur[1] = i; cur[3] += e; cur[4] += st(r)
print("hottest runs (first..last row, count each, % instructions, % stalls, first opcodes):")
for a, b, e, s, ss in sorted(runs, key=lambda x: -x[3])[:30]:
    ops = " ".join(rows[j]["Source"].split()[0] if not rows[j]["Source"].startswith("@") else rows[j]["Source"].split()[1] for j in range(a, min(b + 1, a + 8)))
    print(f"  {a:4d}..{b:4d} x{e:<8d} {100*s/tot:5.1f}% {100*ss/max(stot,1):5.1f}%  {ops}")
