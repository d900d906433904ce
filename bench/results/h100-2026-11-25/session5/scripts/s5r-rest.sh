#!/usr/bin/env bash
# Session 5 (review): bench tests again (the first call's JIT on a fresh machine ate their time limit), then the slow bit-exact tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
timeout 120 ./bench.test -test.v -test.timeout 115s > $R/bench-tests.txt 2>&1; echo "bench rc=$? $(grep -cE '^--- PASS' $R/bench-tests.txt) pass $(grep -cE '^--- FAIL' $R/bench-tests.txt) fail"
timeout 330 ./cuda.test -test.v -test.run 'TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact' -test.timeout 325s > $R/cuda-slow-tests.txt 2>&1; echo "slow rc=$? $(grep -cE '^--- PASS' $R/cuda-slow-tests.txt) pass $(grep -cE '^--- FAIL' $R/cuda-slow-tests.txt) fail"
cd $OUT && tar czf res.tgz res && rm -rf res
