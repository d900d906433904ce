#!/usr/bin/env bash
# Session 12 run 5 (H100): chunk latencies with repetitions for the rules
# still open: FP32/FP64 N = 4096 with G = 128 … 1024 (rows first), and
# interleaved batches of N = 1024 … 4096 with G = 8, 64 (5 counts each).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./cuda.test -test.run '^$' -test.bench 'ChunkLatencyLargerG/f../N=4096/' -test.benchtime 1x -test.count 3 -test.timeout 145s > $R/chunk-larger-g-4096.txt 2>&1; echo "rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 200 ./cuda.test -test.run '^$' -test.bench 'ChunkLatencyInterleaved/f../N=(1024|2048|4096)/' -test.benchtime 1x -test.count 5 -test.timeout 195s > $R/chunk-interleaved.txt 2>&1; echo "rc=$? $(( $(date +%s)-s ))s"
for f in $R/chunk-larger-g-4096.txt $R/chunk-interleaved.txt; do
  grep -E "^Benchmark" $f | awk '{n=$1; sub(/-16$/,"",n); sub(/BenchmarkChunkLatency[A-Za-z]*\//,"",n); v[n]=v[n]" "$5} END {for (k in v) print k, v[k]}' | sort -V
done
cd $OUT && tar czf res.tgz res && rm -rf res
