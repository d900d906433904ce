#!/usr/bin/env bash
# Session 6: the tests changed since s6c, then the segments grid.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -20; }
run cuda-tests-fixed 150 ./cuda.test -test.v -test.run 'TestPartitionLaunchOnDevice|TestSegmentLargeBatch|TestSegmentAuto|TestPartitionStream|TestPartitionBitExact|TestPartitionConst|TestResident' -test.timeout 145s
b() { name=$1; t=$2; shift 2; timeout $t ./bandsolve bench "$@" -peers cusparse -reps 7 -warmup 2 -q -csv $R/$name.csv -plots $R/plots-$name > $R/$name.txt 2>&1; echo "$name rc=$?"; }
b segments 300 -grid segments -algorithms auto
grep -E "contiguous|N " $R/segments.txt | head -60
cd $OUT && tar czf res.tgz res && rm -rf res
