#!/usr/bin/env bash
# Session 7: the constant streaming kernel's tests, BenchmarkConstStream, the const grid.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
run cuda-tests-cstream 200 ./cuda.test -test.v -test.run 'TestConstStream|TestPartitionConst|TestSegmentAuto|TestPartitionStreamAuto|TestPartitionLaunchOnDevice|TestResident' -test.timeout 195s
timeout 150 ./cuda.test -test.run '^$' -test.bench ConstStream -test.benchtime 3x > $R/bench-cstream.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark" $R/bench-cstream.txt | awk '{print $1, $5, $6, $9}'
timeout 150 ./bandsolve bench -grid const -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$?"
grep auto $R/const.txt | cut -c1-200
cd $OUT && tar czf res.tgz res && rm -rf res
