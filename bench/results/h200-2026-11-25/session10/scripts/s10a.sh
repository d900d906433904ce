#!/usr/bin/env bash
# Session 10 run 1 (main 2071fd1): every test binary except the four slow bit-exact
# TPR/Wang–Mou tests (kernels unchanged since session 9's run 1), in parallel processes.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-a 420 ./cuda.test -test.v -test.skip "$SLOW" -test.run 'Test[A-O]|Example' -test.timeout 415s &
run cuda-b 420 ./cuda.test -test.v -test.skip "$SLOW" -test.run 'Test[P-Z]' -test.timeout 415s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 400 ./$b -test.v -test.timeout 395s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A8 '^--- FAIL|^panic' $f | head -30; done
cd $OUT && tar czf res.tgz res && rm -rf res
