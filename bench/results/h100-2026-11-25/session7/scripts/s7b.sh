#!/usr/bin/env bash
# Session 7 experiment: factor table in shared memory (cstreamt*), launch bounds, spb sweep.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
BS_CSTREAM_FAMILY=cstreamt2 run tests-t2 120 ./cuda.test -test.v -test.run 'TestConstStream$' -test.timeout 115s
BS_CSTREAM_FAMILY=cstreamt3 run tests-t3 120 ./cuda.test -test.v -test.run 'TestConstStream$' -test.timeout 115s
timeout 280 ./cuda.test -test.run '^$' -test.bench ConstStream -test.benchtime 3x > $R/bench-cstream-exp.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark" $R/bench-cstream-exp.txt | awk '{print $1, $5}' | sed 's/BenchmarkConstStream.//'
cd $OUT && tar czf res.tgz res && rm -rf res
