#!/usr/bin/env bash
# Session 14 run 1 (H100): commit a80d571's fix (a resident grid that starts
# waits for the legacy default stream) on a GPU for the first time:
# TestResident and TestResidentDevice 30 times, next to every test binary,
# the slow four included.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
(timeout 300 ./cuda.test -test.v -test.run '^TestResident' -test.count 30 -test.timeout 295s > $R/resident-x30.txt 2>&1; echo "resident x30 rc=$? $(grep -c '^--- PASS: TestResident ' $R/resident-x30.txt) pass $(grep -c '^--- FAIL' $R/resident-x30.txt) fail") &
bash ./run.sh $R; echo "tests rc=$?"
wait
cd $OUT && tar czf res.tgz res && rm -rf res
