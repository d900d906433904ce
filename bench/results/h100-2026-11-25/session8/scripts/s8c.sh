#!/usr/bin/env bash
# Session 8 run 3 (the auto-choice tests at the current commit; const grid new with cuSPARSE and
# old c3028ba; single systems with segments of 1024/2048/4096 rows; the paper grid with cuSPARSE).
set -uo pipefail
mkdir -p .gpu .old && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .old -xJf .gpu-pack/old.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-auto 60 ./cuda.test -test.v -test.run 'TestSegmentAuto|TestPartitionStreamAuto|TestConstStreamAuto' -test.timeout 55s
timeout 110 ./bandsolve bench -grid const -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$?"
timeout 80 ../.old/old-bandsolve bench -grid const -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/const-old.csv > $R/const-old.txt 2>&1; echo "const-old rc=$?"
timeout 90 ./bandsolve bench -grid large -algorithms auto -segment-rows 2048,4096 -peers none -reps 7 -warmup 2 -q -csv $R/large-seg.csv > $R/large-seg.txt 2>&1; echo "large-seg rc=$?"
timeout 150 ./bandsolve bench -grid paper -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
