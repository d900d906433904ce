#!/usr/bin/env bash
# Banded GPU tests and benchmarks (run on the GPU machine from the repo root).
cd "$(dirname "$0")"
out=${OUT:-out}; mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== tests"
timeout 200 ./cuda.test -test.run 'Band' -test.v -test.timeout 190s > "$out/band-tests.txt" 2>&1; echo "rc=$?"
grep -E '^(--- |PASS|FAIL|ok|panic)' "$out/band-tests.txt" | head -40
grep -E -A8 '^--- FAIL' "$out/band-tests.txt" | grep -vE '^\s*$' | head -40
echo "== bandsolve vs gpsvInterleavedBatch"
timeout 110 ./bench.test -test.run '^$' -test.bench 'BandBatch' -test.benchtime 1x > "$out/band-vs-gpsv.txt" 2>&1; echo "rc=$?"
grep -E 'BANDBATCH|^#|FAIL|panic|Error' "$out/band-vs-gpsv.txt" | head -30
echo "== kernel variants"
timeout 150 ./cuda.test -test.run '^$' -test.bench 'BandBatch' -test.benchtime 1x > "$out/band-kernels.txt" 2>&1; echo "rc=$?"
grep -E '^Benchmark|^#|FAIL|panic' "$out/band-kernels.txt" | sed -E 's/BenchmarkBandBatch\///; s/-16 +\t +1\t +[0-9]+ ns\/op\t//; s/\t/ /g; s/ +/ /g' | head -120
echo "== partitions"
timeout 100 ./cuda.test -test.run '^$' -test.bench 'BandPartitions' -test.benchtime 3x > "$out/band-partitions.txt" 2>&1; echo "rc=$?"
grep -E '^Benchmark|FAIL|panic' "$out/band-partitions.txt" | sed -E 's/\t/ /g; s/ +/ /g'
