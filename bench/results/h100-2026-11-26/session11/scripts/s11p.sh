#!/usr/bin/env bash
# Session 11 run 16 (H100): chunk latencies for small interleaved batches
# (gated): Auto (lanes kernel, lanes segments) against the shared-memory
# partition kernel with chunks of 4, 8, 16.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 150 ./cuda.test -test.run '^$' -test.bench 'ChunkLatencyInterleaved' -test.benchtime 1x -test.timeout 145s > $R/chunk-latency-interleaved.txt 2>&1; echo "rc=$?"
grep -E "^Benchmark" $R/chunk-latency-interleaved.txt | awk '{print $1, $5}' | sed 's/BenchmarkChunkLatencyInterleaved\///; s/-16 / /'
cd $OUT && tar czf res.tgz res && rm -rf res
