#!/usr/bin/env bash
# Session 13 run 3 (H100): why FP32 constant interleaved batches (N = 64,
# 256: 44-45% of the limit) run at half the rate of contiguous ones (82%)
# with the same constant streaming kernel and launch: Nsight Compute on
# partition_cstream*_f32 for 64x262144 contiguous / interleaved, 256x65536
# interleaved, 1024x16384 contiguous (source counters: stalls and
# executed instructions per SASS line).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SchedulerStats --section InstructionStats --section SourceCounters --import-source no"
for c in 64x262144:const:f32 64x262144:interleaved:const:f32 256x65536:interleaved:const:f32 1024x16384:const:f32; do
  g=${c%:*}; p=${c##*:}; tag=$(echo $c | tr ':x' '__')
  s=$(date +%s)
  timeout 120 ncu $S -k regex:'cstream' -c 1 -o $R/$tag ./bandsolve bench -grid $g -precision $p -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-run-$tag.txt 2>&1; echo "ncu $c rc=$? $(( $(date +%s)-s ))s"
  timeout 60 ncu -i $R/$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  timeout 60 ncu -i $R/$tag.ncu-rep --page source --csv --print-source sass > $R/sass-$tag.csv 2>/dev/null; gzip $R/sass-$tag.csv
  rm -f $R/$tag.ncu-rep
done
cd $OUT && tar czf res.tgz res && rm -rf res
