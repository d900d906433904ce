#!/usr/bin/env bash
# Session 12 run 11 (H100): Auto before (bandsolve built at ae7bff3, the
# session's start) and after (HEAD) the small-batch rule's extension, in
# the same device call, with constant solves on chunks of 16 only beyond 1024 rows an SM (tuning.LatencyConstChunk16): ADI-sized and small interleaved batches, general
# and constant coefficients.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=""
for c in 128x1024 512x256 1024x128 1024x512 2048x256 2048x512 1024x1024 4096x128 4096x256 1024x8:interleaved 2048x8:interleaved 2048x64:interleaved 4096x8:interleaved; do
  G="$G,$c,$c:const"
done
G=${G#,}
for round in 1 2; do  # two rounds of both binaries
  for b in bandsolve-ae7bff3 bandsolve; do
    s=$(date +%s)
    timeout 120 ./$b bench -grid "$G" -peers none -algorithms auto -reps 15 -warmup 3 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
cd .. && (cd $R && python3 $OLDPWD/bench/results/h100-2026-11-26/session12/run9/compare.py > compare.txt 2>&1; cat compare.txt)
bash .gpu/run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
