#!/usr/bin/env bash
# Session 9 run 5 (final code): every test binary (the slow four excepted: kernels they test
# unchanged since run 1); interleaved batches of 2^24 rows, N = 64 … 65536, and -grid const, with cuSPARSE.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
A='TestAlgorithms|TestPartition|Transposed|Const|Segment'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-tests-a 280 ./cuda.test -test.v -test.run "$A" -test.timeout 275s &
run cuda-tests-b 280 ./cuda.test -test.v -test.skip "$SLOW|$A" -test.timeout 275s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 250 ./$b -test.v -test.timeout 245s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A8 '^--- FAIL|^panic' $f | head -30; done
I=$(for k in 6 8 10 11 12 13 14 15 16; do printf "%dx%d:interleaved," $((1<<k)) $((1<<(24-k))); done)
timeout 200 ./bandsolve bench -grid ${I%,} -algorithms auto -peers cusparse -reps 5 -warmup 2 -q -csv $R/interleaved.csv -plots $R/plots-interleaved > $R/interleaved.txt 2>&1; echo "interleaved rc=$?"
timeout 120 ./bandsolve bench -grid const -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
