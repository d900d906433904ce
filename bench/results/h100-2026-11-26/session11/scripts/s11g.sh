#!/usr/bin/env bash
# Session 11 run 7 (H100): final code. The paper grid (gated, with the
# geometric-mean lines), large batches gated and host-paced (the gate
# changes nothing there), then every test binary but the slow four (GPU
# code as run 6, which passed them).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 150 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper.csv -plots $R/plots-paper > $R/paper.txt 2>&1; echo "paper rc=$? $(( $(date +%s)-s ))s"
grep "geometric" $R/paper.txt
G=64x262144,4096x4096,65536x256,1024x16384:interleaved,8192x2048:interleaved
timeout 60 ./bandsolve bench -grid $G -algorithms auto -peers none -reps 5 -warmup 2 -q > $R/large-gated.txt 2>&1; echo "large gated rc=$?"
timeout 60 ./bandsolve bench -grid $G -algorithms auto -peers none -reps 5 -warmup 2 -q -host-paced > $R/large-paced.txt 2>&1; echo "large paced rc=$?"
sed -n '/^case/,$p' $R/large-gated.txt $R/large-paced.txt | cut -c1-90
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
