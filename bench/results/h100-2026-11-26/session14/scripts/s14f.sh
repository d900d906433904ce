#!/usr/bin/env bash
# Session 14 run 6 (H100): the constant streaming kernels with the copy's
# and store's divisions out of the group loop and 16-byte loads of the
# constant table (warp kernels) against the binary before (bandsolve-78d5a60)
# in the same call, two rounds each, constant batches of 2^24 rows; the
# constant grid against cuSPARSE (and interleaved N = 128, 512) with plots;
# then every test binary, the slow four included.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
G=""
for n in 64 256 512 1024 4096; do G="$G,${n}x$((16777216 / n)):contiguous:const"; done
for n in 64 128 256 512 1024; do G="$G,${n}x$((16777216 / n)):interleaved:const"; done
G=${G#,}
for round in 1 2; do
  for b in bandsolve-78d5a60 bandsolve; do
    s=$(date +%s)
    timeout 100 ./$b bench -grid $G -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false -csv $R/$b-$round.csv > $R/$b-$round.txt 2>&1; echo "$b round $round rc=$? $(( $(date +%s)-s ))s"
  done
done
python3 ./bench-compare.py $R bandsolve-78d5a60 bandsolve 2 > $R/compare.txt; cat $R/compare.txt
s=$(date +%s)
timeout 150 ./bandsolve bench -grid const,128x131072:interleaved:const,512x32768:interleaved:const -peers cusparse -reps 7 -warmup 2 -q -csv $R/const.csv -plots $R/plots-const > $R/const.txt 2>&1; echo "const rc=$? $(( $(date +%s)-s ))s"
grep -E "gpu:auto|cusparse" $R/const.txt | head -80
s=$(date +%s)
bash ./run.sh $R; echo "tests rc=$? $(( $(date +%s)-s ))s"
cd $OUT && tar czf res.tgz res && rm -rf res
