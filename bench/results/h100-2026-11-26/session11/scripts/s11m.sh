#!/usr/bin/env bash
# Session 11 run 13 (H100): Nsight Compute, full set, on the single system
# of 2^22 rows (FP32): the reduce and expand passes of the segment kernel,
# for the next session's work on single systems.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 200 ncu --set full --import-source no -k regex:'^segment_p16' -c 2 ./bandsolve bench -grid 4194304x1 -precision f32 -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-single-2p22-f32.txt 2>&1; echo "ncu rc=$?"
grep -E "segment_p16|Duration|DRAM Throughput|L2 Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Block Limit" $R/ncu-single-2p22-f32.txt | head -40
cd $OUT && tar czf res.tgz res && rm -rf res
