#!/usr/bin/env bash
# Session 9 run 1 (main 8f2f6a2 and the merged cstream-warp-tail c9d05e0): every test binary,
# in parallel processes (correctness only; no timings in this run).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .gpu -xJf .gpu-pack/tail.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-tests 420 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 415s &
run cuda-slow 420 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 415s &
for b in *.test; do case $b in cuda.test|tail-*) ;; *) run ${b%.test} 400 ./$b -test.v -test.timeout 395s & ;; esac; done
run tail-tests 400 ./tail-cuda.test -test.v -test.run 'Const|Stream|Partition|Auto' -test.timeout 395s &
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A8 '^--- FAIL|^panic' $f | head -30; done
cd $OUT && tar czf res.tgz res && rm -rf res
