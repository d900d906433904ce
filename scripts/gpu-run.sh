#!/usr/bin/env bash
# Runs every GPU test binary on a machine with an NVIDIA GPU (copied to
# .gpu/run.sh by scripts/build-gpu.sh), in parallel processes (the whole
# suite takes about four minutes on an H100): the tridiagonal GPU tests
# (tridiaggpu.test) in four groups (the four slow bit-exact TPR/Wang–Mou tests; lanes, segments,
# clusters, residency and Auto; the other tests A–O with the examples; P–Z),
# every other binary in one process each.
# Usage: bash .gpu/run.sh [out-dir] [skip-slow]
#   out-dir: where the logs and summary.txt go (default .gpu/out, or
#   $OUT/res when the environment sets OUT); skip-slow: any value leaves
#   the slow four out.
# Exit status: 0 when every process passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:+$OUT/res}}
out=${out:-$here/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt"
SLOW='TestTPRLargePaths|TestTPRStagesBitExact|TestTPRSolveBitExact|TestWMBitExact'
L='TestLanes|TestPartitionTooLarge|TestPartitionLanes|Transposed|TestConstStreamAuto|TestResident|TestSegment|TestCluster|TestAuto'
: > "$out/summary.txt"
# Each binary runs in its package's folder of the checkout beside .gpu/
# (NAME.dir, written by build-gpu.sh), as go test runs it, when that folder
# is there; else in .gpu/.
pkgdir() {
  local d
  d=$(cat "$here/$1.dir" 2>/dev/null) && [ -d "$here/../$d" ] && { echo "$here/../$d"; return; }
  echo "$here"
}
run() {
  local name=$1 t=$2 s rc
  shift 2
  s=$(date +%s)
  (cd "$(pkgdir "${name%%-*}")" && timeout "$t" "$@") > "$out/$name.txt" 2>&1
  rc=$?
  echo "$name rc=$rc $(($(date +%s) - s))s $(grep -cE '^--- PASS' "$out/$name.txt") pass $(grep -cE '^--- FAIL' "$out/$name.txt") fail" >> "$out/summary.txt"
}
big=tridiaggpu
if [ -x "$here/$big.test" ]; then
  [ -n "${2:-}" ] || run $big-slow 400 "$here/$big.test" -test.v -test.run "$SLOW" -test.timeout 395s &
  run $big-lseg 300 "$here/$big.test" -test.v -test.run "$L" -test.timeout 295s &
  run $big-a 300 "$here/$big.test" -test.v -test.skip "$SLOW|$L" -test.run 'Test[A-O]|Example' -test.timeout 295s &
  run $big-b 300 "$here/$big.test" -test.v -test.skip "$SLOW|$L" -test.run 'Test[P-Z]' -test.timeout 295s &
fi
for b in "$here"/*.test; do
  name=$(basename "$b" .test)
  [ "$name" = $big ] || run "$name" 300 "$here/$name.test" -test.v -test.timeout 295s &
done
wait
cat "$out/summary.txt"
status=0
for f in "$out"/*.txt; do
  if grep -qE '^--- FAIL|^panic' "$f"; then
    status=1
    grep -E -A12 '^--- FAIL|^panic' "$f" | head -40
  fi
done
grep -q ' rc=[^0]' "$out/summary.txt" && status=1
exit $status
