#!/usr/bin/env bash
# Session 11 run 10 (H100): tuning experiments with the existing kernels:
# constant interleaved batches (Auto against the lanes kernel's own
# constant path), and interleaved N = 512 … 2048 (lanes against lanes
# segments of 256 and 512 rows).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
s=$(date +%s)
timeout 200 ./cuda.test -test.run '^$' -test.bench 'InterleavedConst' -test.benchtime 3x -test.timeout 195s > $R/interleaved-const.txt 2>&1; echo "iconst rc=$? $(( $(date +%s)-s ))s"
grep -E "^Benchmark" $R/interleaved-const.txt | awk '{print $1, $(NF-1), $NF, $(NF-3), $(NF-2)}' | head -80
s=$(date +%s)
timeout 120 ./bandsolve bench -grid 512x32768:interleaved,1024x16384:interleaved,2048x8192:interleaved -algorithms auto -segment-rows 256,512 -peers none -reps 5 -warmup 2 -q > $R/interleaved-seg.txt 2>&1; echo "iseg rc=$? $(( $(date +%s)-s ))s"
grep "gpu:" $R/interleaved-seg.txt | cut -c1-110
cd $OUT && tar czf res.tgz res && rm -rf res
