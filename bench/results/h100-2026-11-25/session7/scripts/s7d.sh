#!/usr/bin/env bash
# Session 7: the constant-coefficient tests at the final code, Nsight Compute on the constant streaming kernel.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
run() { name=$1; t=$2; shift 2; timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail"; grep -E -A8 '^--- FAIL|^panic' $R/$name.txt | head -30; }
run cuda-tests-const 200 ./cuda.test -test.v -test.run 'TestConstStream|TestPartitionConst|TestPartitionLanes|TestResident|TestSegmentAuto|TestPartitionStream|TestConstAndCyclic|Example' -test.timeout 195s
for c in f32/N=64/contiguous/auto f32/N=1024/contiguous/auto f32/N=4096/contiguous/auto f64/N=1024/contiguous/auto f64/N=4096/contiguous/auto f32/N=256/interleaved/auto; do
  n=$(echo $c | tr '/=' '__')
  timeout 60 /usr/local/cuda/bin/ncu --kernel-name regex:partition_cstream --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats ./cuda.test -test.run '^$' -test.bench "ConstStream/$c\$" -test.benchtime 1x > $R/ncu-$n.txt 2>&1
  echo "== $c"; grep -E "DRAM Throughput|Duration|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Warp Cycles Per Issued|Stall|Block Size|Grid Size" $R/ncu-$n.txt | head -14
done
cd $OUT && tar czf res.tgz res && rm -rf res
