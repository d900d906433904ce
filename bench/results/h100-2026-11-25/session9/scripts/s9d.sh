#!/usr/bin/env bash
# Session 9 run 4 (rows-first systems of N > 2048 gathered): the partition-family and Auto tests;
# -grid layouts and -grid const, new against the landed 8f2f6a2 (old) in the same run;
# BenchmarkSmallResident (fixed FP64 N = 4096).
set -uo pipefail
mkdir -p .gpu .old && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .old -xJf .gpu-pack/old.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
cd .gpu
run cuda-tests-a 200 ./cuda.test -test.v -test.run 'TestAlgorithms|TestPartition|Transposed' -test.timeout 195s &
run cuda-tests-b 200 ./cuda.test -test.v -test.run 'Const|Segment|Auto|Stream|Lanes|Example' -test.timeout 195s &
wait
for v in new old; do bin=./bandsolve; [ $v = old ] && bin=../.old/old-bandsolve
  timeout 110 $bin bench -grid layouts -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/layouts-$v.csv > $R/layouts-$v.txt 2>&1; echo "layouts-$v rc=$?"
  timeout 60 $bin bench -grid const -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/const-$v.csv > $R/const-$v.txt 2>&1; echo "const-$v rc=$?"
done
timeout 60 ./cuda.test -test.run '^$' -test.bench 'SmallResident' -test.benchtime 2000x > $R/bench-resident.txt 2>&1; echo "resident rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
