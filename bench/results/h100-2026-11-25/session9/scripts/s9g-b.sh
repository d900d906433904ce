#!/usr/bin/env bash
# Session 9 run 7b (constant streaming kernel: two FP64 systems of N = 2048 a block): the constant
# kernels' tests; BenchmarkConstStream FP64 N = 2048 (auto = new rule, spb1 = the old choice) and FP32
# N = 1024/2048 block sizes again.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
cd .gpu
: # tests passed in the first attempt (run7a)
timeout 120 ./cuda.test -test.run '^$' -test.bench 'ConstStream/f(32|64)/N=(1024|2048)/contiguous/' -test.benchtime 5x > $R/bench-cstream.txt 2>&1; echo "bench rc=$?"
grep -E '^Benchmark' $R/bench-cstream.txt | awk '{print $1, $5, $6}'
cd $OUT && tar czf res.tgz res && rm -rf res
