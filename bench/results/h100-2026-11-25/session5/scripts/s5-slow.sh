#!/usr/bin/env bash
# Session 5: the slow TPR / Wang–Mou bit-exact tests that did not finish in s5-tests.sh.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
timeout 560 ./cuda.test -test.v -test.run 'TestTPRSolveBitExact|TestWMBitExact' -test.timeout 550s > $R/cuda-slow-tests-2.txt 2>&1; echo "rc=$? $(grep -cE '^--- PASS' $R/cuda-slow-tests-2.txt) pass $(grep -cE '^--- FAIL' $R/cuda-slow-tests-2.txt) fail"
cd $OUT && tar czf res.tgz res && rm -rf res
