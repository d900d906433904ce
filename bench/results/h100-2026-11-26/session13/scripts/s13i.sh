#!/usr/bin/env bash
# Session 13 run 9 (H100): a resident grid that starts waits for the legacy
# default stream (the stale first solve of run 8's TestResident): TestResident
# and TestResidentDevice 30 times, next to every test binary but the slow
# four (those ran on the same kernels in run 8, 4 PASS).
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/device.txt
cd .gpu
(timeout 200 ./cuda.test -test.run '^TestResident' -test.count 30 -test.timeout 195s > $R/resident-x30.txt 2>&1; echo "resident x30 rc=$? $(grep -c '^--- PASS: TestResident ' $R/resident-x30.txt) pass $(grep -c '^--- FAIL' $R/resident-x30.txt) fail") &
bash ./run.sh $R skip-slow; echo "tests rc=$?"
wait
cd $OUT && tar czf res.tgz res && rm -rf res
