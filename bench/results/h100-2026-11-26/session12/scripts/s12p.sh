#!/usr/bin/env bash
# Session 12 run 16 (H100): the FP32 segment kernel with Stage 1 unrolled
# whole and __launch_bounds__(256, 2) (bandsolve-unr2, an uncommitted
# variant) against HEAD (Stage 1's forward loop unrolled by two within 80
# registers), same call, two rounds each: single systems and large batches.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=4194304x1,8388608x1,16777216x1,65536x256,131072x128,262144x1,524288x1,131072x8,524288x8
for round in 1 2; do
  for b in bandsolve bandsolve-unr2; do
    timeout 100 ./$b bench -grid $G -precision f32 -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$?"
  done
done
python3 - "$R" <<'PY'
import csv, sys, collections
R = sys.argv[1]; d = collections.defaultdict(dict)
for b in ['bandsolve', 'bandsolve-unr2']:
    for r in (1, 2):
        for row in csv.DictReader(l for l in open(f'{R}/{b}-{r}.csv') if not l.startswith('#')):
            k = (row['precision'], int(row['N']), int(row['G']))
            d[k].setdefault(b, []).append((float(row['median_us']), float(row['fraction']), row['note'][:60]))
for k in sorted(d, key=lambda k: (k[0], k[1] * k[2], k[1])):
    o, n = d[k]['bandsolve'], d[k]['bandsolve-unr2']
    print("%s N=%d G=%d head %s unr2 %s gain %.3f | %s | %s" % (k + (" ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f, _ in o), " ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f, _ in n), min(t for t, _, _ in o) / min(t for t, _, _ in n), o[0][2], n[0][2])))
PY
cd $OUT && tar czf res.tgz res && rm -rf res
