#!/usr/bin/env bash
# Session 11 run 3 (H100): chunk sizes on the small batches (gated event
# times), then every test binary (the gate kernel is new GPU code), the slow
# four too, in parallel.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 200 ./cuda.test -test.run '^$' -test.bench 'ChunkLatency' -test.benchtime 1x -test.timeout 195s > $R/chunk-latency.txt 2>&1; echo "chunk rc=$? $(( $(date +%s)-s ))s"
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
run cuda-slow 380 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 375s &
run cuda-lseg 300 ./cuda.test -test.v -test.run "$L" -test.timeout 295s &
run cuda-a 300 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 295s &
run cuda-b 300 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 295s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 300 ./$b -test.v -test.timeout 295s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
cd $OUT && tar czf res.tgz res && rm -rf res
