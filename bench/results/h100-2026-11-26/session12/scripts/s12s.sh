#!/usr/bin/env bash
# Session 12 run 19 (H100): the segment kernels' last five cyclic-reduction levels in one warp
# (HEAD) against the binary before (bandsolve-aebb64f: run 17's kernels),
# in the same call, two rounds each; then the paper grid against cuSPARSE
# and every test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=4194304x1,8388608x1,16777216x1,8192x2048,16384x1024,32768x512,65536x256,131072x128,262144x1,524288x1,131072x8,524288x8
for round in 1 2; do
  for b in bandsolve-aebb64f bandsolve; do
    s=$(date +%s)
    timeout 100 ./$b bench -grid $G -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
python3 - "$R" <<'PY'
import csv, sys, collections
R = sys.argv[1]; d = collections.defaultdict(dict)
for b in ['bandsolve-aebb64f', 'bandsolve']:
    for r in (1, 2):
        for row in csv.DictReader(l for l in open(f'{R}/{b}-{r}.csv') if not l.startswith('#')):
            k = (row['precision'], int(row['N']), int(row['G']))
            d[k].setdefault(b, []).append((float(row['median_us']), float(row['fraction'])))
for k in sorted(d, key=lambda k: (k[0], k[1] * k[2], k[1])):
    o, n = d[k]['bandsolve-aebb64f'], d[k]['bandsolve']
    print("%s N=%d G=%d before %s after %s gain %.3f" % (k + (" ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f in o), " ".join("%.1fus/%.1f%%" % (t, 100 * f) for t, f in n), min(t for t, _ in o) / min(t for t, _ in n))))
PY
s=$(date +%s)
timeout 150 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$? $(( $(date +%s)-s ))s"
grep "geometric" $R/paper.txt
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
