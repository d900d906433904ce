#!/usr/bin/env bash
# Session 12 run 13 (H100): Nsight Compute source counters (per SASS
# instruction: executed instructions, stall samples) of the reduce and
# expand passes of the FP32 single system of 2^22 rows, to find where the
# segment kernel's instructions go.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
ncu --version > $R/ncu-version.txt 2>&1
s=$(date +%s)
timeout 200 ncu --section SourceCounters --section InstructionStats --section WarpStateStats --section SpeedOfLight --import-source no -k regex:'^segment_p16' -c 2 -o $R/seg2p22 ./bandsolve bench -grid 4194304x1 -precision f32 -algorithms auto -peers none -reps 1 -warmup 0 -q -check=false > $R/ncu-run.txt 2>&1; echo "ncu rc=$? $(( $(date +%s)-s ))s"
timeout 100 ncu -i $R/seg2p22.ncu-rep --page source --csv --print-source sass > $R/seg-sass.csv 2> $R/seg-sass.err; echo "source page rc=$?"
timeout 60 ncu -i $R/seg2p22.ncu-rep --page details > $R/seg-details.txt 2>&1; echo "details rc=$?"
wc -c $R/seg-sass.csv; head -c 600 $R/seg-sass.csv; head -5 $R/seg-sass.err
cd $OUT && tar czf res.tgz res && rm -rf res
