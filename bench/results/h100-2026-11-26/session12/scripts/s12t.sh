#!/usr/bin/env bash
# Session 12 run 20 (H100): every test binary but the slow four after
# part_copy's refactor (the PTX differs from aebb64f's in register numbers
# only).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
bash .gpu/run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
