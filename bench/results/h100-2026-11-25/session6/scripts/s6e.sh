#!/usr/bin/env bash
# Session 6: cuda tests (not the slow ones), the segments grid, BenchmarkStream.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -20; }
run cuda-tests 240 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 235s
b() { name=$1; t=$2; shift 2; timeout $t ./bandsolve bench "$@" -peers cusparse -reps 7 -warmup 2 -q -csv $R/$name.csv -plots $R/plots-$name > $R/$name.txt 2>&1; echo "$name rc=$?"; }
b segments 150 -grid segments -algorithms auto
b fp64mid 60 -grid 3072x5461,3584x4681 -precision f64 -algorithms auto
timeout 120 ./cuda.test -test.run '^$' -test.bench Stream -test.benchtime 3x > $R/bench-stream.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark" $R/bench-stream.txt | awk '{print $1, $5, $6, $9}'
grep auto $R/segments.txt $R/fp64mid.txt | cut -c1-140
cd $OUT && tar czf res.tgz res && rm -rf res
