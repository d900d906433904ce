#!/usr/bin/env bash
# Session 10 run 12 (H100): after the last review commit (lanesSegPlan's self-signalling):
# every test binary, the four slow bit-exact TPR/Wang–Mou tests too, in parallel; then Auto on
# interleaved batches without peers, general and constant.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster'
run() { name=$1; t=$2; shift 2; s=$(date +%s); timeout $t "$@" > $R/$name.txt 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s)-s ))s $(grep -cE '^--- PASS' $R/$name.txt) pass $(grep -cE '^--- FAIL' $R/$name.txt) fail" >> $R/summary.txt; }
cd .gpu
run cuda-slow 420 ./cuda.test -test.v -test.run "$SLOW" -test.timeout 415s &
run cuda-lseg 300 ./cuda.test -test.v -test.run "$L" -test.timeout 295s &
run cuda-a 300 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 295s &
run cuda-b 300 ./cuda.test -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 295s &
for b in *.test; do case $b in cuda.test) ;; *) run ${b%.test} 300 ./$b -test.v -test.timeout 295s & ;; esac; done
wait
cat $R/summary.txt
for f in $R/*.txt; do grep -E -A12 '^--- FAIL|^panic' $f | head -40; done
I=$(for k in 6 8 10 11 12 13 14 15 16; do printf "%dx%d:interleaved," $((1<<k)) $((1<<(24-k))); done)
timeout 60 ./bandsolve bench -grid ${I%,} -algorithms auto -peers none -reps 5 -warmup 2 -q > $R/interleaved.txt 2>&1; echo "interleaved rc=$?"
timeout 60 ./bandsolve bench -grid 4096x4096:interleaved:const,16384x1024:interleaved:const,65536x256:interleaved:const -algorithms auto -peers none -reps 5 -warmup 2 -q > $R/interleaved-const.txt 2>&1; echo "const rc=$?"
sed -n '/^case/,$p' $R/interleaved.txt $R/interleaved-const.txt | cut -c1-80
cd $OUT && tar czf res.tgz res && rm -rf res
