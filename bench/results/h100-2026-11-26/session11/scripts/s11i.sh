#!/usr/bin/env bash
# Session 11 run 9 (H100): one pass for small FP64 batches of N = 131072;
# the paper grid again (gated), then the cuda tests but the slow four.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$? $(( $(date +%s)-s ))s"
grep "geometric" $R/paper.txt
grep "gpu:auto" $R/paper.txt | grep "f64.*131072" | cut -c1-150
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster|TestAuto'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
run cuda-lseg 280 ./cuda.test -test.v -test.run "$L" -test.timeout 275s &
run cuda-a 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 275s &
run cuda-b 280 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 275s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 280 ./$b -test.v -test.timeout 275s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
cd $OUT && tar czf res.tgz res && rm -rf res
