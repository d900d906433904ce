#!/usr/bin/env bash
# Session 10 run 8 (H100): the streaming segment kernel (three passes): every test binary but the
# slow bit-exact TPR/Wang–Mou ones; BenchmarkSegmentStream; Auto on single systems of 2^20 … 2^24
# rows (-grid large) with cuSPARSE.
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
timeout 120 ./cuda.test -test.run '^$' -test.bench 'SegmentStream' -test.benchtime 3x > $R/bench-segstream.txt 2>&1; echo "bench-segstream rc=$?"
grep -E "^Benchmark" $R/bench-segstream.txt | awk '{print $1, $(NF-5), $(NF-3)}'
timeout 150 ./bandsolve bench -grid large -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/large.csv -plots $R/plots-large > $R/large.txt 2>&1; echo "large rc=$?"
sed -n '/^case/,$p' $R/large.txt | head -14
cd $OUT && tar czf res.tgz res && rm -rf res
