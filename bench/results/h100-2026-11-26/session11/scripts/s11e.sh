#!/usr/bin/env bash
# Session 11 run 5 (H100): the tests run 4 failed (Auto's choice for small
# interleaved batches, residency) and the new ones, then all of cuda.test
# but the slow four, and the other binaries.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster|TestAuto'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
run cuda-lseg 280 ./cuda.test -test.v -test.run "$L" -test.timeout 275s &
run cuda-a 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 275s &
run cuda-b 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 275s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 280 ./$b -test.v -test.timeout 275s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
cd $OUT && tar czf res.tgz res && rm -rf res
