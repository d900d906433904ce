#!/usr/bin/env bash
# Session 5, device run 1: exploration (interleaved systems per block, single systems' segment sizes, profiles).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
timeout 200 ./cuda.test -test.run '^$' -test.bench Interleaved -test.benchtime 3x > $R/bench-interleaved.txt 2>&1; echo "interleaved rc=$?"
timeout 120 ./bandsolve bench -grid large -algorithms auto -segment-rows 1024,2048,4096 -peers none -reps 5 -warmup 2 -q > $R/large-segrows.txt 2>&1; echo "large rc=$?"
NCU=/usr/local/cuda/bin/ncu
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --clock-control none"
timeout 90 $NCU $S -k regex:partition_p16_f32 -c 2 ./cuda.test -test.run '^$' -test.bench 'Interleaved/f32/N=1024/(auto|spb=4)$' -test.benchtime 1x > $R/ncu-ilv1024.txt 2>&1; echo "ncu1 rc=$?"
timeout 90 $NCU --section SpeedOfLight --clock-control none -c 8 ./bandsolve bench -grid 4194304x1 -precision f32 -algorithms auto -peers none -reps 1 -warmup 0 -check=false -q > $R/ncu-s22.txt 2>&1; echo "ncu2 rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res && ls -la
