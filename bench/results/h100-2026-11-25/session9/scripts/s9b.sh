#!/usr/bin/env bash
# Session 9 run 2: small calls (BenchmarkSmallCall/SmallResident/Completion); the merged
# cstream-warp-tail (tail) against main in the same run: -grid const and FP32 streaming batches.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .gpu -xJf .gpu-pack/tail.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
timeout 120 ./cuda.test -test.run '^$' -test.bench 'SmallCall|SmallResident|Completion' -test.benchtime 2000x > $R/bench-small.txt 2>&1; echo "small rc=$?"
B="1024x16384,2048x8192,4096x4096,8192x2048"
for r in 1 2; do for v in main tail; do
  bin=./bandsolve; [ $v = tail ] && bin=./tail-bandsolve
  timeout 60 $bin bench -grid const -algorithms auto -peers none -reps 7 -warmup 2 -q -csv $R/const-$v-$r.csv > $R/const-$v-$r.txt 2>&1; echo "const-$v-$r rc=$?"
  timeout 60 $bin bench -grid $B -precision f32 -algorithms auto -peers none -reps 7 -warmup 2 -q -csv $R/stream-$v-$r.csv > $R/stream-$v-$r.txt 2>&1; echo "stream-$v-$r rc=$?"
done; done
cd $OUT && tar czf res.tgz res && rm -rf res
