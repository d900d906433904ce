#!/usr/bin/env bash
# Session 10 run 7 (H100): where the time of single systems of 2^22 and 2^23 rows goes:
# Nsight Compute's duration of every kernel of one Auto solve (three passes and the nested plan);
# and the lanes segments' tests after lseg.cuh was cut into parts.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
timeout 150 ./cuda.test -test.v -test.run 'TestLanes|TestPartitionTooLarge|TestPartitionLanes' -test.timeout 145s > $R/cuda-lseg.txt 2>&1; echo "cuda-lseg rc=$? $(grep -c '^--- PASS' $R/cuda-lseg.txt) pass $(grep -c '^--- FAIL' $R/cuda-lseg.txt) fail"
for n in 4194304 8388608; do for p in f32 f64; do
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed --csv \
    ./bandsolve bench -grid ${n}x1 -precision $p -algorithms auto -peers none -reps 2 -warmup 1 > $R/ncu-$n-$p.csv 2> $R/ncu-$n-$p.err; echo "ncu $n $p rc=$?"
  grep -E '"gpu__time_duration.sum"|"dram__throughput' $R/ncu-$n-$p.csv | awk -F'","' '{print $5, $(NF-2), $NF}' | tail -12
done; done
timeout 60 ./bandsolve bench -grid 4194304x1,8388608x1 -algorithms auto -peers none -reps 7 -warmup 2 -q > $R/single.txt 2>&1
sed -n '/^prec/,$p' $R/single.txt | head -8
cd $OUT && tar czf res.tgz res && rm -rf res
