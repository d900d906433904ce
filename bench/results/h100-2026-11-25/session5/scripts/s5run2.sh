#!/usr/bin/env bash
# Session 5, device run 2: reversed expand, nested choice for single systems, interleaved rule, profile of N=64 interleaved.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R
timeout 100 ./bandsolve bench -grid large -algorithms auto -segment-rows 1024 -peers none -reps 7 -warmup 2 -q > $R/large-rev.txt 2>&1; echo "large rc=$?"
timeout 100 ./bandsolve bench -grid 4096x1,8192x1,16384x1,32768x1 -algorithms auto -segment-rows 1024,2048,4096,8192,16384 -peers none -reps 9 -warmup 3 -q > $R/small-single.txt 2>&1; echo "small rc=$?"
timeout 150 ./cuda.test -test.run '^$' -test.bench 'Interleaved/.*/N=(1024|2048|4096)/auto' -test.benchtime 3x > $R/bench-interleaved.txt 2>&1; echo "interleaved rc=$?"
timeout 120 ./cuda.test -test.run 'TestSegment|TestPartition' -test.v > $R/tests-seg.txt 2>&1; echo "tests rc=$?"; tail -3 $R/tests-seg.txt
NCU=/usr/local/cuda/bin/ncu
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section LaunchStats --clock-control none"
timeout 90 $NCU $S -k regex:partition_p16_f32 -c 1 ./cuda.test -test.run '^$' -test.bench 'Interleaved/f32/N=64/spb=32' -test.benchtime 1x > $R/ncu-ilv64.txt 2>&1; echo "ncu1 rc=$?"
timeout 90 $NCU $S -k regex:partition_p16_f32 -c 1 ./cuda.test -test.run '^$' -test.bench 'Batch/f32/N=64/partition$' -test.benchtime 1x > $R/ncu-contig64.txt 2>&1; echo "ncu2 rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res && ls -la
