#!/usr/bin/env bash
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
timeout 300 ./cuda.test -test.v -test.run 'TestPartitionStream|TestSegmentAuto|TestPartitionBitExact' -test.timeout 290s > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E '^(--- |ok|FAIL|PASS)' $R/tests.txt | head -30; grep -E -A10 '^--- FAIL|panic' $R/tests.txt | head -40
timeout 200 ./cuda.test -test.run '^$' -test.bench Stream -test.benchtime 3x > $R/bench.txt 2>&1; echo "bench rc=$?"
cat $R/bench.txt | grep -v "^goos\|^goarch\|^pkg\|^cpu" | head -60
