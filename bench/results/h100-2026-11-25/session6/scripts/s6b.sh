#!/usr/bin/env bash
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R
timeout 200 ./cuda.test -test.v -test.run 'TestPartitionStream' -test.timeout 190s > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E '^(--- |ok|FAIL|PASS)' $R/tests.txt | head -30; grep -E -A10 '^--- FAIL|panic' $R/tests.txt | head -40
timeout 200 ./cuda.test -test.run '^$' -test.bench Stream -test.benchtime 3x > $R/bench.txt 2>&1; echo "bench rc=$?"
grep -E "^Benchmark|partition:" $R/bench.txt | sed -e 's/ns\/op.*%limit/%limit/' | awk '/^Benchmark/{print $1, $3, $4} !/^Benchmark/{print "   ", $0}' | head -90
for n in 6000 8192; do
timeout 100 /usr/local/cuda/bin/ncu --kernel-name regex:partition_stream_p16 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy ./cuda.test -test.run '^$' -test.bench "Stream/f32/N=$n/stream\$" -test.benchtime 1x > $R/ncu-$n.txt 2>&1
grep -E "DRAM Throughput|Duration|Memory Throughput|Stall|Achieved Occ|Registers|Warp Cycles" $R/ncu-$n.txt | head -20
done
