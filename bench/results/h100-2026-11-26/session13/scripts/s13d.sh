#!/usr/bin/env bash
# Session 13 run 4 (H100): the constant streaming kernels with d and x
# row-major in shared memory for interleaved batches (partition_cstream_
# [warp_]rows_p16_*) against the binary before (bandsolve-4bd28db) in the
# same call, two rounds each, on the constant grid (contiguous cases: the
# same kernels, a control); then the constant grid against cuSPARSE and
# every test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
bash ./run.sh $R skip-slow; echo "tests rc=$?"
for round in 1 2; do
  for b in bandsolve-4bd28db bandsolve; do
    s=$(date +%s)
    timeout 100 ./$b bench -grid const -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
python3 - "$R" <<'PY'
import csv, sys, collections
R = sys.argv[1]; d = collections.defaultdict(dict)
for b in ['bandsolve-4bd28db', 'bandsolve']:
    for r in (1, 2):
        for row in csv.DictReader(l for l in open(f'{R}/{b}-{r}.csv') if not l.startswith('#')):
            k = (row['precision'], row['layout'], int(row['N']), int(row['G']))
            d[k].setdefault(b, []).append((float(row['median_us']), float(row['fraction'])))
for k in sorted(d, key=lambda k: (k[1], k[0], k[2])):
    o, n = d[k]['bandsolve-4bd28db'], d[k]['bandsolve']
    print("%s %s N=%d G=%d before %s after %s gain %.3f" % (k + (" ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f in o), " ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f in n), min(t for t, _ in o) / min(t for t, _ in n))))
PY
s=$(date +%s)
timeout 150 ./bandsolve bench -grid const -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv > $R/const.txt 2>&1; echo "const rc=$? $(( $(date +%s)-s ))s"
cd $OUT && tar czf res.tgz res && rm -rf res
