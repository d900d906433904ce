#!/usr/bin/env bash
# Session 11 run 12 (H100): after the last Go changes (GateMaxReps): every
# test binary but the slow four (kernels unchanged since run 11), and the
# paper grid's small cells once more.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
bash .gpu/run.sh $R skip-slow; echo "tests rc=$?"
cd .gpu
timeout 60 ./bandsolve bench -grid 128x1,128x64,1024x8,4096x1,131072x1 -peers cusparse -reps 7 -warmup 2 -q > $R/small-cells.txt 2>&1; echo "cells rc=$?"
grep -E "geometric|^f(32|64) contiguous N" $R/small-cells.txt | cut -c1-120
cd $OUT && tar czf res.tgz res && rm -rf res
