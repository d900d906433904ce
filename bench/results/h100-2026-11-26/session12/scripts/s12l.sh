#!/usr/bin/env bash
# Session 12 run 12 (H100): the lanes, segments, clusters, residency and
# Auto group of cuda.test after SetResident's change (the only code
# changed since run 11, whose binaries all passed).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster|TestAuto'
timeout 300 ./cuda.test -test.v -test.run "$L" -test.timeout 295s > $R/cuda-lseg.txt 2>&1; echo "rc=$?"
echo "$(grep -cE '^--- PASS' $R/cuda-lseg.txt) pass $(grep -cE '^--- FAIL' $R/cuda-lseg.txt) fail"
grep -E -A12 '^--- FAIL|^panic' $R/cuda-lseg.txt | head -30
cd $OUT && tar czf res.tgz res && rm -rf res
