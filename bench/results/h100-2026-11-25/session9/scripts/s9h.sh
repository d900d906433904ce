#!/usr/bin/env bash
# Session 9 run 8 (constant streaming blocks: FP32 N >= 1024 128 threads, FP64 N = 2048 two systems):
# the constant kernels' tests; -grid const and 1024/2048 constant batches, Auto.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
cd .gpu
run cuda-const 100 ./cuda.test -test.v -test.run 'TestConstStream|TestPartitionConst' -test.timeout 95s
timeout 60 ./bandsolve bench -grid const,1024x16384:const,2048x8192:const -algorithms auto -peers none -reps 7 -warmup 2 -q -csv $R/const.csv > $R/const.txt 2>&1; echo "const rc=$?"
sed -n '/^case/,$p' $R/const.txt | head -20
cd $OUT && tar czf res.tgz res && rm -rf res
