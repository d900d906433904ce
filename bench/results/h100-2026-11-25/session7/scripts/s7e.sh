#!/usr/bin/env bash
# Session 7 review commit: every test binary but the four slow cuda tests, the const grid.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
run cuda-tests 270 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 265s
run bench-tests 60 ./bench.test -test.v -test.timeout 55s
run bandsolve-tests 40 ./bandsolve.test -test.v -test.timeout 35s
for e in adi spline stability; do run $e-tests 20 ./$e.test -test.v -test.timeout 15s; done
timeout 100 ./bandsolve bench -grid const -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$?"
grep -E "^f(32|64) .*const " $R/const.txt
cd $OUT && tar czf res.tgz res && rm -rf res
