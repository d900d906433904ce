#!/usr/bin/env bash
# Run 2 (full sweep): GPU tests of the banded sweep, then the banded grid
# with the host solvers at d = 0.6 and 1. Run from the unpacked directory;
# at most 8 files to $OUT.
cd "$(dirname "$0")"
out=${OUT:-out}; mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; nproc; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== tests"
timeout 45 ./bench.test -test.run 'TestBandedSweepGPU|TestPentadiagGPU' -test.v -test.timeout 44s > "$out/tests.txt" 2>&1; echo "rc=$?"
grep -E '^(--- |PASS|FAIL|ok|panic)|Error' "$out/tests.txt" | head -30
echo "== banded"
timeout 235 ./bandsolve bench -grid banded -host-d 0.6,1 -host-cap 12s -reps 5 -warmup 1 -time-limit 190s \
  -anchors banded-h200.csv -csv "$out/banded.csv" -plots "$out" > "$out/banded.txt" 2> "$out/banded.err"; echo "rc=$?"
grep -v '^#' "$out/banded.txt" | grep -A200 '^case'; tail -5 "$out/banded.err"
