#!/usr/bin/env bash
# Session 11 run 14 (H100): short chunks for the reduced systems of
# three-pass plans. The three-pass paper cells, then every test binary but
# the slow four (no kernel changed).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
cd .gpu
timeout 90 ./bandsolve bench -grid 262144x1,262144x8,524288x1,524288x8,4194304x1 -peers cusparse -reps 7 -warmup 2 -q > $R/three-pass.txt 2>&1; echo "cells rc=$?"
grep -E "geometric|^f(32|64) contiguous N" $R/three-pass.txt | cut -c1-120
grep "gpu:auto" $R/three-pass.txt | grep -o "reduced systems: [^;]*" | sort | uniq -c
cd ..
bash .gpu/run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
