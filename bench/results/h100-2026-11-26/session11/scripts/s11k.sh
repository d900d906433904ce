#!/usr/bin/env bash
# Session 11 run 11 (H100): chunk latencies at N = 4096 and 8192 (whole
# blocks against Auto's clusters), then every test binary through
# scripts/gpu-run.sh (the slow four too).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 100 ./cuda.test -test.run '^$' -test.bench 'ChunkLatency/f32/N=(4096|8192)/' -test.benchtime 1x -test.timeout 95s > $R/chunk-latency-8192.txt 2>&1; echo "chunk rc=$?"
grep -E "^Benchmark" $R/chunk-latency-8192.txt | awk '{print $1, $5, $6}'
cd ..
bash .gpu/run.sh $R; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
