#!/usr/bin/env bash
# Session 14 run 5 (H100): why FP32 interleaved constant batches of N = 256
# and 512 stay at 71% / 63% of the limit with 128-byte rows a block while
# FP64 reaches 81% / 80%: Nsight Compute on the warp rows kernel, FP32 N =
# 256, 512 and FP64 N = 512 interleaved, FP32 N = 512 contiguous (82%, the
# warp kernel) as the reference.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SchedulerStats --section InstructionStats --section SourceCounters --import-source no"
for c in 512x32768:interleaved:const:f32 256x65536:interleaved:const:f32 512x32768:interleaved:const:f64 512x32768:const:f32; do
  g=${c%:*}; p=${c##*:}; tag=$(echo $c | tr ':x' '__')
  s=$(date +%s)
  timeout 120 ncu $S -k regex:'cstream' -c 1 -o $R/$tag ./bandsolve bench -grid $g -precision $p -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-run-$tag.txt 2>&1; echo "ncu $c rc=$? $(( $(date +%s)-s ))s"
  timeout 60 ncu -i $R/$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  timeout 60 ncu -i $R/$tag.ncu-rep --page source --csv --print-source sass > $R/sass-$tag.csv 2>/dev/null; gzip $R/sass-$tag.csv
  rm -f $R/$tag.ncu-rep
done
cd $OUT && tar czf res.tgz res && rm -rf res
