#!/usr/bin/env bash
# Session 6: every non-slow GPU test binary, then BenchmarkStream.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -20; }
run cuda-tests 230 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 225s
run bench-tests 60 ./bench.test -test.v -test.timeout 55s
run bandsolve-tests 40 ./bandsolve.test -test.v -test.timeout 35s
for e in adi spline stability; do run $e-tests 20 ./$e.test -test.v -test.timeout 15s; done
timeout 150 ./cuda.test -test.run '^$' -test.bench Stream -test.benchtime 3x > $R/bench-stream.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark" $R/bench-stream.txt | awk '{print $1, $5, $6, $9}'
cd $OUT && tar czf res.tgz res && rm -rf res
