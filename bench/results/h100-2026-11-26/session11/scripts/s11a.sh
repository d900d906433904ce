#!/usr/bin/env bash
# Session 11 run 1 (H100): gated timing. Gate tests, the latency floors, the
# paper grid gated and host-paced (same machine, same binary), bench tests.
set -uo pipefail
mkdir -p .gpu && tar -C .gpu -xJf .gpu-pack/gpu.tar.xz
R=$OUT/res; mkdir -p $R; cp .gpu-pack/commit.txt $R/
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $R/device.txt
cd .gpu
s=$(date +%s)
timeout 90 ./cuda.test -test.v -test.run 'TestGate|TestTimeGated' -test.timeout 85s > $R/cuda-gate.txt 2>&1; echo "gate tests rc=$? $(( $(date +%s)-s ))s"; tail -3 $R/cuda-gate.txt
timeout 60 ./cuda.test -test.run '^$' -test.bench 'LatencyFloor/event' -test.benchtime 20x > $R/latency.txt 2>&1; echo "latency rc=$?"; grep Benchmark $R/latency.txt
s=$(date +%s)
timeout 240 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -csv $R/paper-gated.csv -plots $R/plots-paper-gated > $R/paper-gated.txt 2>&1; echo "paper gated rc=$? $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 240 ./bandsolve bench -grid paper -peers cusparse -reps 7 -warmup 2 -q -host-paced -csv $R/paper-paced.csv > $R/paper-paced.txt 2>&1; echo "paper paced rc=$? $(( $(date +%s)-s ))s"
grep -c "gate expired" $R/paper-gated.txt
cd $OUT && tar czf res.tgz res && rm -rf res
