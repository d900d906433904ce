#!/usr/bin/env bash
# Session 6: the other test binaries and the four slow cuda tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -20; }
run bench-tests 60 ./bench.test -test.v -test.timeout 55s
run bandsolve-tests 40 ./bandsolve.test -test.v -test.timeout 35s
for e in adi spline stability; do run $e-tests 20 ./$e.test -test.v -test.timeout 15s; done
run cuda-slow 420 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 415s
cd $OUT && tar czf res2.tgz res && rm -rf res
