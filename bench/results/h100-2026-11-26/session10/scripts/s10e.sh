#!/usr/bin/env bash
# Session 10 run 5 (H100): every test binary but the slow bit-exact TPR/Wang–Mou ones, in parallel;
# BenchmarkLanesSegments (lanes segments against the gathering plan) and BenchmarkLanesStream;
# Auto on interleaved batches of 2^24 rows with cuSPARSE (the README's table, H100 as before).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-lseg 150 ./cuda.test -test.v -test.run "$L" -test.timeout 145s &
run cuda-a 200 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 195s &
run cuda-b 200 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 195s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 200 ./$b -test.v -test.timeout 195s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
timeout 150 ./cuda.test -test.run '^$' -test.bench 'LanesSegments/f(32|64)/N=[0-9]+/general/(lseg-M512|lseg-M128|gathered|in-place)$' -test.benchtime 3x > $R/bench-lseg.txt 2>&1; echo "bench-lseg rc=$?"
grep -E "^Benchmark" $R/bench-lseg.txt | awk '{print $1, $(NF-5), $(NF-3)}'
timeout 60 ./cuda.test -test.run '^$' -test.bench 'LanesStream' -test.benchtime 3x > $R/bench-lstream.txt 2>&1; echo "bench-lstream rc=$?"
grep -E "^Benchmark" $R/bench-lstream.txt | awk '{print $1, $(NF-5), $(NF-3)}'
I=$(for k in 6 8 10 11 12 13 14 15 16; do printf "%dx%d:interleaved," $((1<<k)) $((1<<(24-k))); done)
timeout 200 ./bandsolve bench -grid ${I%,} -algorithms auto -peers cusparse -reps 5 -warmup 2 -q -csv $R/interleaved.csv -plots $R/plots-interleaved > $R/interleaved.txt 2>&1; echo "interleaved rc=$?"
sed -n '/^prec  layout/,$p' $R/interleaved.txt | grep -v "gpu:auto\|cusparse:" | head -30
cd $OUT && tar czf res.tgz res && rm -rf res
