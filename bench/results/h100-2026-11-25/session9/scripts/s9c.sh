#!/usr/bin/env bash
# Session 9 run 3 (5417eb5: streaming kernel warp tail, rows-first systems gathered into contiguous
# ones): the non-slow cuda tests (two processes); interleaved batches beyond one block with cuSPARSE,
# next to TPR (what Auto took before); FP64 streaming tail; BenchmarkInterleaved gathered.
set -uo pipefail
mkdir -p .gpu .old && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .old -xJf .gpu-pack/old.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
A='TestAlgorithms|TestPartition|Transposed'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
cd .gpu
run cuda-tests-a 280 ./cuda.test -test.v -test.run "$A" -test.timeout 275s &
run cuda-tests-b 280 ./cuda.test -test.v -test.skip "$SLOW|$A" -test.timeout 275s &
wait
I="8192x2048:interleaved,16384x1024:interleaved,32768x512:interleaved,65536x256:interleaved,16384x1024:interleaved:const,65536x256:interleaved:const"
timeout 150 ./bandsolve bench -grid $I -algorithms auto,tpr -peers cusparse -reps 5 -warmup 2 -q -csv $R/interleaved.csv -plots $R/plots-interleaved > $R/interleaved.txt 2>&1; echo "interleaved rc=$?"
for v in new old; do bin=./bandsolve; [ $v = old ] && bin=../.old/old-bandsolve
  timeout 40 $bin bench -grid 1024x16384,2048x8192,4096x4096 -precision f64 -algorithms auto -peers none -reps 7 -warmup 2 -q > $R/stream-f64-$v.txt 2>&1; echo "stream-f64-$v rc=$?"; done
timeout 100 ./cuda.test -test.run '^$' -test.bench 'Interleaved/f(32|64)/N=(1024|2048|4096)/(auto|transposed)$' -test.benchtime 5x > $R/bench-interleaved.txt 2>&1; echo "bench-interleaved rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
