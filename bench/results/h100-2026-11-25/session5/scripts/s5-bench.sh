#!/usr/bin/env bash
# Session 5: benchmarks at the commit in commit.txt.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
cd .gpu
R=$OUT/res; mkdir -p $R; cp ../.gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
b() { name=$1; t=$2; shift 2; timeout $t ./bandsolve bench "$@" -peers cusparse -reps 7 -warmup 2 -q -csv $R/$name.csv -plots $R/plots-$name > $R/$name.txt 2>&1; echo "$name rc=$?"; }
b layouts 200 -grid layouts -algorithms auto
b large 90 -grid large -algorithms auto
timeout 200 ./cuda.test -test.run '^$' -test.bench 'Interleaved/.*/N=(64|128|256|512|1024|2048|4096)/(auto|shared|lanes.*)$' -test.benchtime 3x > $R/bench-interleaved.txt 2>&1; echo "interleaved rc=$?"
cd $OUT && tar czf res.tgz res && rm -rf res
