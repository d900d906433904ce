#!/usr/bin/env bash
# Session 13 run 8 (H100): after the review (24b9b3a: partitionPlan.constPlan
# in the constant launch, description and residency; PTX unchanged since
# run 7): every test binary, the slow four included; Auto's constant
# interleaved cases and one general one against cuSPARSE.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
bash ./run.sh $R; echo "tests rc=$? $(( $(date +%s)-s ))s"
timeout 60 ./bandsolve bench -grid 64x262144:interleaved:const,512x32768:interleaved:const,1024x16384:interleaved:const,128x1024 -peers cusparse -reps 7 -warmup 2 -q -csv $R/check.csv > $R/check.txt 2>&1; echo "bench rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
