#!/usr/bin/env bash
# Session 9 run 6 (resident plans of gathered rows-first systems solved in place): the resident,
# gathering and Auto tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
cd .gpu
run cuda-resident 150 ./cuda.test -test.v -test.run 'Resident|Transposed|TooLarge|TestAlgorithms|Auto|Example' -test.timeout 145s
timeout 60 ./cuda.test -test.run '^$' -test.bench 'SmallResident' -test.benchtime 2000x > $R/bench-resident.txt 2>&1; echo "resident rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
