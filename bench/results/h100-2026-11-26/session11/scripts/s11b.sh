#!/usr/bin/env bash
# Session 11 run 2 (H100): Nsight Compute on small paper-grid cells (ours and
# cuSPARSE's kernels: durations, and the full set for ours) and on the
# interleaved FP32 N = 1024 batch.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
B="./bandsolve bench -reps 1 -warmup 0 -q -check=false"
s=$(date +%s)
timeout 120 ncu --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__cycles_active.avg --csv $B -grid 128x1,1024x1,1024x64,4096x1 -precision f32,f64 -algorithms auto -peers cusparse > $R/ncu-durations.csv 2>$R/ncu-durations.err; echo "durations rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ncu --set full -k regex:'^partition' -c 4 $B -grid 128x1,1024x64 -precision f32 -algorithms auto -peers none > $R/ncu-small-full.txt 2>&1; echo "small full rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ncu --set full -k regex:'^(partition|lseg|lanes)' -c 2 $B -grid 1024x16384:interleaved -precision f32 -algorithms auto -peers none > $R/ncu-il1024-full.txt 2>&1; echo "il1024 rc=$? $(( $(date +%s)-s ))s"
grep -E "partition|gtsv|lanes|lseg|Duration" $R/ncu-small-full.txt | head -20
cd $OUT && tar czf res.tgz res && rm -rf res
