#!/usr/bin/env bash
# Times two bandsolve binaries on the same cases in one device call,
# alternating them round by round, and compares them (bench-compare.py):
# the before/after measurement of the device scripts under bench/results.
# scripts/build-gpu.sh copies it into .gpu/ with bench-compare.py.
# Usage (in .gpu/): bash bench-ab.sh OUT BEFORE AFTER ROUNDS GRID [bench flags]
#   OUT: where BEFORE-r.csv, AFTER-r.csv, their tables and compare.txt go;
#   BEFORE, AFTER: binaries in this folder (e.g. bandsolve-57aa1a3 bandsolve);
#   GRID: bandsolve bench -grid (e.g. 512x32768:interleaved:const,...);
#   further flags replace the defaults after them (-peers none -algorithms
#   auto -reps 7 -warmup 2 -q -check=false), e.g. -reps 11; AB_TIMEOUT
#   (default 120) is the seconds one binary may take a round.
# Prints each run's exit status and seconds, then compare.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 before=$2 after=$3 rounds=$4 grid=$5
shift 5
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  for b in "$before" "$after"; do
    s=$(date +%s)
    timeout "${AB_TIMEOUT:-120}" "$here/$b" bench -grid "$grid" -peers none -algorithms auto -reps 7 -warmup 2 -q -check=false "$@" \
      -csv "$out/$b-$round.csv" > "$out/$b-$round.txt" 2>&1
    echo "$b round $round rc=$? $(($(date +%s) - s))s"
  done
done
python3 "$here/bench-compare.py" "$out" "$before" "$after" "$rounds" > "$out/compare.txt"
cat "$out/compare.txt"
