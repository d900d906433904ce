#!/usr/bin/env bash
# Session 13 run 7 (H100): the session's last code (7d350de: run 5's
# kernels) with every test binary, the slow four included; the constant
# grid against cuSPARSE (and interleaved constant N = 128, 512) with
# plots.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
bash ./run.sh $R; echo "tests rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ./bandsolve bench -grid const,128x131072:interleaved:const,512x32768:interleaved:const -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$? $(( $(date +%s)-s ))s"
cd $OUT && tar czf res.tgz res && rm -rf res
