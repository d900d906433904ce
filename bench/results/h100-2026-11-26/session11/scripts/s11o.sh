#!/usr/bin/env bash
# Session 11 run 15 (H100): the three-pass paper cells with Auto only (run
# 14's bench ran every algorithm and hit its time limit), against cuSPARSE.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 150 ./bandsolve bench -grid 262144x1,262144x8,524288x1,524288x8,131072x1 -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/three-pass.csv > $R/three-pass.txt 2>&1; echo "cells rc=$?"
grep -E "geometric|^f(32|64) contiguous N" $R/three-pass.txt | cut -c1-120
grep "gpu:auto" $R/three-pass.txt | grep -o "reduced systems: [^;]*" | sort | uniq -c
cd $OUT && tar czf res.tgz res && rm -rf res
