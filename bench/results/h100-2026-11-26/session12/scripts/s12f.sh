#!/usr/bin/env bash
# Session 12 run 6 (H100): the extended small-batch rule (interleaved
# N = 1024 … 4096, FP64 N = 4096 with G ≤ 264) against cuSPARSE in the
# same run, then every test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 120 ./bandsolve bench -grid 1024x8:interleaved,1024x64:interleaved,2048x8:interleaved,2048x64:interleaved,4096x8:interleaved,4096x128,4096x256 -peers cusparse -algorithms auto -reps 15 -warmup 3 -q -csv $R/small-rule.csv > $R/small-rule.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s ))s"
sed -n '/^case/,$p' $R/small-rule.txt
grep -E "^(f32|f64) .*gpu:auto" $R/small-rule.txt | awk '{print $1,$2,$3,$4,$6,$12,$13,$14,$15,$16,$17,$18}'
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
