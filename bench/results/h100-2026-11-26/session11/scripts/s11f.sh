#!/usr/bin/env bash
# Session 11 run 6 (H100): small calls host to host (launched Auto, resident
# P16 and Auto), then every test binary, the slow four too, in parallel.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./cuda.test -test.run '^$' -test.bench 'SmallCall/N=.*/G=.*/auto$|SmallResident|LatencyFloor/(c-poll$|event)' -test.benchtime 2000x -test.timeout 145s > $R/smallcall.txt 2>&1; echo "smallcall rc=$? $(( $(date +%s)-s ))s"
grep Benchmark $R/smallcall.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster|TestAuto'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
run cuda-slow 280 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 275s &
run cuda-lseg 280 ./cuda.test -test.v -test.run "$L" -test.timeout 275s &
run cuda-a 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 275s &
run cuda-b 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 275s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 280 ./$b -test.v -test.timeout 275s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
cd $OUT && tar czf res.tgz res && rm -rf res
