#!/usr/bin/env bash
# Session 13 run 6 (H100): interleaved constant batches whose blocks take
# whole 16-byte units of a row (4d7598b: FP32 N = 1024, FP64 N = 2048) against the
# binary before (bandsolve-4bd28db) in the same call, two rounds each: the
# interleaved constant batches of N = 512 (a control), 1024 and 2048;
# then every test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=512x32768:interleaved:const,1024x16384:interleaved:const,2048x8192:interleaved:const
for round in 1 2; do
  for b in bandsolve-4bd28db bandsolve; do
    s=$(date +%s)
    timeout 100 ./$b bench -grid $G -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
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
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
