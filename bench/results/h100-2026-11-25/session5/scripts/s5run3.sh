#!/usr/bin/env bash
# Session 5, device run 3: the lanes kernel: tests, then interleaved benchmarks.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R
timeout 200 ./cuda.test -test.run 'TestPartition|TestResident' -test.v > $R/tests-lanes.txt 2>&1; echo "tests rc=$?"; grep -E "^(--- |FAIL|ok|PASS)" $R/tests-lanes.txt | head -30; grep -B2 -A12 -m3 "Error Trace" $R/tests-lanes.txt | head -60
timeout 150 ./cuda.test -test.run '^$' -test.bench 'Interleaved/.*/N=(64|128|256)/(auto|spb=(8|16|32))$' -test.benchtime 3x > $R/bench-interleaved.txt 2>&1; echo "bench rc=$?"; grep Benchmark $R/bench-interleaved.txt
cd $OUT && tar czf res.tgz res && rm -rf res
