#!/usr/bin/env bash
# Session 6 review commit: the four slow cuda tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
timeout 540 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 535s > $R/cuda-slow.txt 2>&1; echo "slow rc=$? $(grep -cE '^--- PASS' $R/cuda-slow.txt) pass $(grep -cE '^--- FAIL' $R/cuda-slow.txt) fail"
cd $OUT && tar czf res.tgz res && rm -rf res
