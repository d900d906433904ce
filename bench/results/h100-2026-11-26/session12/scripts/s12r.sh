#!/usr/bin/env bash
# Session 12 run 18 (H100): the four slow bit-exact TPR/Wang–Mou tests on
# the session's last kernels (run 17 ran every other test).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
s=$(date +%s)
timeout 400 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 395s > $R/cuda-slow.txt 2>&1; echo "slow rc=$? $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/cuda-slow.txt) pass $(grep -cE '^--- FAIL' $R/cuda-slow.txt) fail"
cd $OUT && tar czf res.tgz res && rm -rf res
