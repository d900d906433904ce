#!/usr/bin/env bash
# Session 6 review commit: every test binary but the slow cuda tests, and the lanes/stream benchmarks.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -20; }
run cuda-tests 250 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 245s
run bench-tests 60 ./bench.test -test.v -test.timeout 55s
run bandsolve-tests 40 ./bandsolve.test -test.v -test.timeout 35s
for e in adi spline stability; do run $e-tests 20 ./$e.test -test.v -test.timeout 15s; done
timeout 120 ./cuda.test -test.run '^$' -test.bench 'Interleaved/.*/N=(64|256|1024)/auto$|Stream/.*/N=(2048|4096)/stream$' -test.benchtime 3x > $R/bench-review.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark" $R/bench-review.txt | awk '{print $1, $5, $6, $9}'
cd $OUT && tar czf res.tgz res && rm -rf res
