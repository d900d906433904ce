#!/usr/bin/env bash
# Session 14 run 4 (H100): the warp rows constant streaming kernels with
# blocks that read 128 bytes of each row (FP32 up to 1024 threads, FP64 up
# to 640) against the binary before (bandsolve-0cd6564) in the same call,
# three rounds each, interleaved constant batches of 2^24 rows (contiguous
# N = 64, 1024: a control); the blocks the kernels take for interleaved N =
# 64 … 512 (BenchmarkConstStream); then every test binary but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=""
for n in 64 1024; do G="$G,${n}x$((16777216 / n)):contiguous:const"; done
for n in 64 128 256 512 1024; do G="$G,${n}x$((16777216 / n)):interleaved:const"; done
G=${G#,}
for round in 1 2 3; do
  for b in bandsolve-0cd6564 bandsolve; do
    s=$(date +%s)
    timeout 120 ./$b bench -grid $G -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
python3 ./bench-compare.py $R bandsolve-0cd6564 bandsolve 3 > $R/compare.txt; cat $R/compare.txt
s=$(date +%s)
timeout 150 ./cuda.test -test.run '^$' -test.bench 'ConstStream/f(32|64)/N=(64|128|256|512)/interleaved' -test.benchtime 5x -test.timeout 145s > $R/bench-cstream-spb.txt 2>&1; echo "spb sweep rc=$? $(( $(date +%s)-s ))s"
grep -E '^Benchmark' $R/bench-cstream-spb.txt | awk '{print $1, $3, $4, $5, $6, $7, $8}'
bash ./run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
