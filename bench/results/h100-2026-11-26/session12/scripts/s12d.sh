#!/usr/bin/env bash
# Session 12 run 4 (H100): short chunks for batches of more systems
# (tuning.LatencyChunk by rows an SM) against cuSPARSE on ADI-sized
# batches, then every test binary but the slow four (the streaming
# segment kernels reverted; the resident fallback to chunks of 16).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 120 ./bandsolve bench -grid 128x1024,256x512,512x256,1024x128,1024x512,2048x256,2048x512,1024x1024 -peers cusparse -algorithms auto -reps 15 -warmup 3 -q -csv $R/adi-sizes.csv > $R/adi-sizes.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s ))s"
sed -n '/^case/,$p' $R/adi-sizes.txt
grep -E "^(f32|f64) .*gpu:auto" $R/adi-sizes.txt | awk '{print $1,$3,$4,$6}'
bash ./run.sh $R skip-slow; echo "tests rc=$?"
grep -A3 "resident/fallback" $R/cuda-lseg.txt | head -8
cd $OUT && tar czf res.tgz res && rm -rf res
