#!/usr/bin/env bash
# Session 8 run 2 (e91cad5: every partition kernel by cyclic reduction): the non-slow cuda tests;
# the segments grid (N >= 2048 batches, single systems) new with cuSPARSE, old (c3028ba) without peers.
set -uo pipefail
mkdir -p .gpu .old && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz && tar -C .old -xJf .gpu-pack/old.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-tests 280 ./cuda.test -test.v -test.skip "$SLOW" -test.timeout 275s
timeout 170 ./bandsolve bench -grid segments -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/segments.csv -plots $R/plots-segments > $R/segments.txt 2>&1; echo "segments rc=$?"
timeout 120 ../.old/old-bandsolve bench -grid segments -algorithms auto -peers none -reps 5 -warmup 2 -q -csv $R/segments-old.csv > $R/segments-old.txt 2>&1; echo "segments-old rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
