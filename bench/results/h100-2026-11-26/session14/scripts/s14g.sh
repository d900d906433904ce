#!/usr/bin/env bash
# Session 14 run 7 (H100): the rows constant streaming kernels for tps > 32
# with up to 512 threads a block (FP32 interleaved N ≤ 1024 take the
# kernel, FP64 reads 64 bytes of a row) against the binary before
# (bandsolve-57aa1a3) in the same call, two rounds each, interleaved
# constant batches of 2^24 rows, N = 512 (a control), 768, 1024, and FP64
# 2048; then every test binary but the slow four (the TPR / Wang–Mou code is
# unchanged since run 6, where they passed).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=512x32768:interleaved:const,768x21845:interleaved:const,1024x16384:interleaved:const,2048x8192:interleaved:const
for round in 1 2; do
  for b in bandsolve-57aa1a3 bandsolve; do
    s=$(date +%s)
    timeout 60 ./$b bench -grid $G -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
python3 ./bench-compare.py $R bandsolve-57aa1a3 bandsolve 2 > $R/compare.txt; cat $R/compare.txt
grep -h "gpu:auto" $R/bandsolve-2.txt | cut -c1-400
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
