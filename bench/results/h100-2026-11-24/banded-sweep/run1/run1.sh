#!/usr/bin/env bash
# Run 1 (validation): GPU tests of the banded sweep, the pentadiag grid, a
# reduced banded sweep. Run from the unpacked directory; logs to $OUT.
cd "$(dirname "$0")"
out=${OUT:-out}; mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; nproc; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
echo "== tests"
timeout 70 ./bench.test -test.run 'TestBandedSweepGPU|TestPentadiagGPU' -test.v -test.timeout 65s > "$out/tests.txt" 2>&1; echo "rc=$?"
grep -E '^(--- |PASS|FAIL|ok|panic)|Error|error' "$out/tests.txt" | head -30
echo "== pentadiag"
timeout 45 ./bandsolve bench -grid pentadiag -anchors banded-h200.csv -csv "$out/pentadiag.csv" > "$out/pentadiag.txt" 2> "$out/pentadiag.err"; echo "rc=$?"
cat "$out/pentadiag.txt" | grep -v '^#' ; tail -3 "$out/pentadiag.err"
echo "== banded (reduced)"
timeout 160 ./bandsolve bench -grid banded -band-n 1e5,1e6 -band-k 2,10,100,200 -band-d 0.2,1 -host-d 1 -host-cap 60s -time-limit 90s \
  -anchors banded-h200.csv -csv "$out/banded1.csv" -plots "$out" > "$out/banded1.txt" 2> "$out/banded1.err"; echo "rc=$?"
cat "$out/banded1.txt" | grep -v '^#'; tail -30 "$out/banded1.err"
