#!/usr/bin/env bash
# Session 12 run 1 (H100): the session-11 review commits (TimeEvents, gate
# internal, allocMapped, LatencyChunk layout rule) on a GPU for the first
# time: the paper grid against cuSPARSE (must reproduce session 11 run 7/9),
# every test binary with the slow four, then BenchmarkChunkLatencyLargerG.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$? $(( $(date +%s)-s ))s"
grep "geometric" $R/paper.txt
s=$(date +%s)
bash ./run.sh $R; echo "tests rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ./cuda.test -test.run '^$' -test.bench 'ChunkLatencyLargerG' -test.benchtime 1x -test.timeout 145s > $R/chunk-latency-larger-g.txt 2>&1; echo "chunk rc=$? $(( $(date +%s)-s ))s"
grep -E "^Benchmark" $R/chunk-latency-larger-g.txt | awk '{print $1, $3, $4, $5, $6}' | sed 's/BenchmarkChunkLatencyLargerG\///; s/-16 / /' | head -140
cd $OUT && tar czf res.tgz res && rm -rf res
