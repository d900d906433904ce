#!/usr/bin/env bash
# Session 8 run 5 (final commit): the constant-kernel and Auto tests, the const grid with cuSPARSE.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-const 120 ./cuda.test -test.v -test.run 'Const|Auto|Partition|Stream|Segment' -test.timeout 115s
timeout 110 ./bandsolve bench -grid const -algorithms auto -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
