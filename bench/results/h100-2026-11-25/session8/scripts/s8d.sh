#!/usr/bin/env bash
# Session 8 run 4 (final code): the non-slow cuda tests; BenchmarkConstStream (block sizes with cyclic
# reduction); Nsight Compute on the constant streaming kernel, FP32 N = 1024 (why it lost to PCR there).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-tests 280 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 275s
timeout 170 ./cuda.test -test.run '^$' -test.bench 'BenchmarkConstStream' -test.benchtime 5x > $R/bench-cstream.txt 2>&1; echo "bench-cstream rc=$?"
timeout 90 /usr/local/cuda/bin/ncu --kernel-name regex:partition_cstream --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats ./cuda.test -test.run '^$' -test.bench 'BenchmarkConstStream/f32/N=1024/contiguous/auto$' -test.benchtime 1x > $R/ncu-cstream-f32-1024.txt 2>&1; echo "ncu rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
