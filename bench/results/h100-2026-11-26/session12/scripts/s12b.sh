#!/usr/bin/env bash
# Session 12 run 2 (H100), same binaries as run 1 (ae7bff3): segment sizes
# for single systems of 2^22 … 2^25 rows and for large batches of long
# systems (-segment-rows), then Nsight Compute on the cluster kernel of
# FP32 N = 16384, G = 1024.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 200 ./bandsolve bench -grid 4194304x1,8388608x1,16777216x1,33554432x1 -algorithms auto -segment-rows 256,512,1024,2048,4096 -peers none -reps 7 -warmup 2 -q -check=false -csv $R/singles.csv > $R/singles.txt 2>&1; echo "singles rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 200 ./bandsolve bench -grid 8192x2048,16384x1024,32768x512,65536x256,131072x128 -algorithms auto -segment-rows 1024,2048,4096 -peers none -reps 5 -warmup 2 -q -check=false -csv $R/large.csv > $R/large.txt 2>&1; echo "large rc=$? $(( $(date +%s)-s ))s"
grep -E "^(f32|f64) " $R/singles.txt $R/large.txt | head -5
s=$(date +%s)
timeout 150 ncu --set full --import-source no -k regex:'^segc' -c 1 ./bandsolve bench -grid 16384x1024 -precision f32 -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-segc-16384-f32.txt 2>&1; echo "ncu rc=$? $(( $(date +%s)-s ))s"
grep -E "segc|Duration|DRAM Throughput|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Block Limit|Theoretical Occ" $R/ncu-segc-16384-f32.txt | head -30
cd $OUT && tar czf res.tgz res && rm -rf res
