#!/usr/bin/env bash
# Session 12 run 8 (H100): chunk latencies of interleaved batches of
# 128 … 512 systems of 1024 … 4096 rows (three counts).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 200 ./cuda.test -test.run '^$' -test.bench 'ChunkLatencyInterleavedLargerG' -test.benchtime 1x -test.count 3 -test.timeout 195s > $R/chunk-interleaved-larger-g.txt 2>&1; echo "rc=$? $(( $(date +%s)-s ))s"
grep -E "^Benchmark" $R/chunk-interleaved-larger-g.txt | awk '{n=$1; sub(/-16$/,"",n); sub(/BenchmarkChunkLatency[A-Za-z]*\//,"",n); v[n]=v[n]" "$5} END {for (k in v) print k, v[k]}' | sort -V
cd $OUT && tar czf res.tgz res && rm -rf res
