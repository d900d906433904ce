#!/usr/bin/env bash
# Session 11 run 8 (H100): segment sizes for long single systems and small
# batches of them (gated): Auto against forced segment sizes, to see whether
# one pass with one block per SM beats three passes when every block of the
# launch is resident at once.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 120 ./bandsolve bench -grid 65536x1,131072x1,131072x4,131072x8,98304x1 -precision f64 -algorithms auto -segment-rows 1024,2048,3072,4096 -peers none -reps 7 -warmup 2 -q > $R/seg-f64.txt 2>&1; echo "f64 rc=$?"
timeout 120 ./bandsolve bench -grid 131072x1,262144x1,524288x1,262144x8 -precision f32 -algorithms auto -segment-rows 1024,2048,4096 -peers none -reps 7 -warmup 2 -q > $R/seg-f32.txt 2>&1; echo "f32 rc=$?"
sed -n '/^case/,$p' $R/seg-f64.txt $R/seg-f32.txt | cut -c1-100
grep -E "gpu:" $R/seg-f64.txt $R/seg-f32.txt | awk '{print $1,$3,$4,$6,$7,$11}' | cut -c1-150
cd $OUT && tar czf res.tgz res && rm -rf res
