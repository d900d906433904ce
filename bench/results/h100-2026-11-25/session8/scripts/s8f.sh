#!/usr/bin/env bash
# Session 8 run 6 (review commit): the partition-family tests (one block, constant, streaming,
# lanes, resident, segments, clusters), bit for bit their twins.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -40; }
cd .gpu
run cuda-partition 150 ./cuda.test -test.v -test.run 'Partition|Const|Stream|Segment|Resident|Lanes|Example' -test.timeout 145s
cd $OUT && tar czf res.tgz res && rm -rf res
