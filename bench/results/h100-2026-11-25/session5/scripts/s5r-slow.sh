#!/usr/bin/env bash
# Session 5 (review): the four slow bit-exact tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
timeout 580 ./cuda.test -test.v -test.run 'TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact' -test.timeout 575s > $R/cuda-slow-tests.txt 2>&1; echo "rc=$? $(grep -cE '^--- PASS' $R/cuda-slow-tests.txt) pass $(grep -cE '^--- FAIL' $R/cuda-slow-tests.txt) fail"
cd $OUT && tar czf res.tgz res && rm -rf res
