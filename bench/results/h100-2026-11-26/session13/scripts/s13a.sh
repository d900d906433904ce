#!/usr/bin/env bash
# Session 13 run 1 (H100): commit b6a5c7c (short-chunk plans keep their
# chunk-16 plan) on a GPU for the first time: every test binary with the
# slow four, the paper grid against cuSPARSE, and the interleaved 2^24-row
# grid with every algorithm (baseline for this session's work).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
bash ./run.sh $R; echo "tests rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 150 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$? $(( $(date +%s)-s ))s"
grep "geometric" $R/paper.txt
s=$(date +%s)
timeout 150 ./bandsolve bench -grid interleaved -peers cusparse -reps 5 -warmup 2 -q -check=false -csv $R/interleaved.csv > $R/interleaved.txt 2>&1; echo "interleaved rc=$? $(( $(date +%s)-s ))s"
cd $OUT && tar czf res.tgz res && rm -rf res
