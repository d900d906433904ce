#!/usr/bin/env bash
# Session 12 run 3 (H100): the streaming reduce and expand kernels of
# three-pass segment plans: BenchmarkSegmentStream (streamed against the
# segment kernel, same binary), the singles grid with Auto, then every
# test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./cuda.test -test.run '^$' -test.bench 'SegmentStream' -test.benchtime 3x -test.timeout 145s > $R/segment-stream.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s ))s"
grep -E "^Benchmark" $R/segment-stream.txt | awk '{print $1, $3, $4, $5, $6, $7, $8}' | sed 's/BenchmarkSegmentStream\///; s/-16 / /'
grep -E "streamed by" $R/segment-stream.txt | sort -u | head -8
s=$(date +%s)
timeout 100 ./bandsolve bench -grid 4194304x1,8388608x1,16777216x1,33554432x1,65536x256,131072x128 -algorithms auto -peers none -reps 7 -warmup 2 -q -check=true -csv $R/singles.csv > $R/singles.txt 2>&1; echo "singles rc=$? $(( $(date +%s)-s ))s"
grep -E "^(f32|f64) " $R/singles.txt | cut -c1-175
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
