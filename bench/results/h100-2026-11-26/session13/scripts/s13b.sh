#!/usr/bin/env bash
# Session 13 run 2 (H100): why interleaved batches of N >= 1024 stay at
# 32-52% of the limit. Nsight Compute (launch, occupancy, speed of light,
# warp states, memory, scheduler) on the lanes segment kernel: FP32 and
# FP64 N = 2048 (one pass) and FP32 N = 16384 (three passes); the segment
# sizes 128/256/512 against Auto on the interleaved grid's N >= 1024; the
# constant-coefficient grid.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section ComputeWorkloadAnalysis"
for c in 2048x8192:interleaved:f32 2048x8192:interleaved:f64 16384x1024:interleaved:f32 1024x16384:interleaved:f32; do
  g=${c%:*}; p=${c##*:}; tag=$(echo $c | tr ':x' '__')
  s=$(date +%s)
  timeout 120 ncu $S -k regex:'^lseg' -c 3 ./bandsolve bench -grid $g -precision $p -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-$tag.txt 2>&1; echo "ncu $c rc=$? $(( $(date +%s)-s ))s"
done
s=$(date +%s)
G=1024x16384:interleaved,2048x8192:interleaved,4096x4096:interleaved,8192x2048:interleaved,16384x1024:interleaved,65536x256:interleaved
timeout 150 ./bandsolve bench -grid $G -peers none -algorithms auto -segment-rows 128,256,512 -reps 5 -warmup 2 -q -check=false -csv $R/lseg-rows.csv > $R/lseg-rows.txt 2>&1; echo "rows rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ./bandsolve bench -grid const -peers cusparse -algorithms auto -reps 5 -warmup 2 -q -check=false -csv $R/const.csv > $R/const.txt 2>&1; echo "const rc=$? $(( $(date +%s)-s ))s"
cd $OUT && tar czf res.tgz res && rm -rf res
