#!/usr/bin/env bash
# Runs on the GPU machine (copied to .gpu/run.sh by scripts/build-gpu.sh).
# Usage: bash .gpu/run.sh [test-regexp]   Logs go to $OUT (or .gpu/out).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
status=0
for t in "$here"/*.test; do
  name=$(basename "$t" .test)
  echo "== $name"
  (cd "$here" && "$t" -test.v -test.run "${1:-.}" -test.timeout 9m) > "$out/$name.log" 2>&1
  rc=$?
  grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/$name.log" | tail -30
  grep -E '^--- FAIL' -A12 "$out/$name.log" | head -80
  [ $rc = 0 ] || status=$rc
done
exit $status
