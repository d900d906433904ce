#!/usr/bin/env bash
# Session 10 run 6 (H100): after the review (seg_cr3 shared by the segment kernels and the lanes
# segment kernel; the segment plans' Go helpers): every test binary but the slow bit-exact
# TPR/Wang–Mou ones; the lanes segments' benchmark; Auto on the contiguous segments grid (the
# segment kernels' PTX changed), without peers.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-lseg 200 ./cuda.test -test.v -test.run "$L" -test.timeout 195s &
run cuda-a 200 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 195s &
run cuda-b 200 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 195s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 200 ./$b -test.v -test.timeout 195s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
timeout 60 ./cuda.test -test.run '^$' -test.bench 'LanesSegments/f(32|64)/N=(2048|65536)/general/(lseg-M512|lseg-M128)$' -test.benchtime 3x > $R/bench-lseg.txt 2>&1; echo "bench-lseg rc=$?"
grep -E "^Benchmark" $R/bench-lseg.txt | awk '{print $1, $(NF-5), $(NF-3)}'
timeout 120 ./bandsolve bench -grid segments -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/segments.csv > $R/segments.txt 2>&1; echo "segments rc=$?"
sed -n '/^prec/,$p' $R/segments.txt | cut -c1-120 | head -30
cd $OUT && tar czf res.tgz res && rm -rf res
