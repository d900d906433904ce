#!/usr/bin/env bash
# Session 8 run 1 (69fa8af, Stage 2 by cyclic reduction): the non-slow cuda tests; Auto on contiguous
# batches and the layouts grid, new against the landed c3028ba (old) in the same run.
set -uo pipefail
mkdir -p .gpu .old && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .old -xJf .gpu-pack/old.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-tests 280 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 275s
B="64x262144,256x65536,1024x16384,2048x8192,4096x4096,8192x2048"
for v in new old; do
  bin=./bandsolve; [ $v = old ] && bin=../.old/old-bandsolve
  timeout 90 $bin bench -grid $B -algorithms auto -peers none -reps 7 -warmup 2 -q -csv $R/batch-$v.csv > $R/batch-$v.txt 2>&1; echo "batch-$v rc=$?"
done
for v in new old; do
  bin=./bandsolve; [ $v = old ] && bin=../.old/old-bandsolve
  timeout 100 $bin bench -grid layouts -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/layouts-$v.csv > $R/layouts-$v.txt 2>&1; echo "layouts-$v rc=$?"
done
cd $OUT && tar czf res.tgz res && rm -rf res
