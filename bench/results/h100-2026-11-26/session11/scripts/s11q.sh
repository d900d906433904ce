#!/usr/bin/env bash
# Session 11 run 17 (H100): short chunks for small interleaved batches of
# at most 128 rows: every test binary but the slow four (no kernel changed).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
bash .gpu/run.sh $R skip-slow; echo "tests rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
