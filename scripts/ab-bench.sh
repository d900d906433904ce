#!/usr/bin/env bash
# Times two builds of the bandsolve command against each other on one GPU:
# a fixed set of cases from the paper, batch, interleaved, const, segments,
# banded and pentadiagonal grids (both precisions, this module's solvers
# only), the two binaries run alternately (A B, then B A, ...) ROUNDS
# times, so that drift of the machine falls on both. scripts/ab-compare.py
# then gives each case's median ratio. A change that must not lose speed
# passes when no ratio is below 0.97 (or a second round shows it was noise).
#
# Usage: bash scripts/ab-bench.sh A_BIN B_BIN OUTDIR [ROUNDS (default 5)]
set -euo pipefail
a=${1:?usage: ab-bench.sh A_BIN B_BIN OUTDIR [ROUNDS]}
b=${2:?}
out=${3:?}
rounds=${4:-5}
mkdir -p "$out"
# grid and -cases (numbers of bandsolve bench -grid G -list).
sets=(
  "paper 1,2,11,12,25,26,37,38"
  "batch 5,6,13,14,21,22"
  "interleaved 1,2,5,6,13,14,21,22"
  "const 3,4,7,8,15,16"
  "segments 11,12,17,18,23,24"
  "banded-quick 2,3,14,15,17,18"
  "pentadiag 1-6"
)
one() { # side bin round
  local side=$1 bin=$2 r=$3 set grid cases
  for set in "${sets[@]}"; do
    read -r grid cases <<<"$set"
    "$bin" bench -q -table=false -grid "$grid" -cases "$cases" -algorithms auto -peers none \
      -check=false -reps 10 -warmup 3 -csv "$out/$side-$grid-$r.csv" >"$out/$side-$grid-$r.txt" 2>&1 ||
      { echo "ab-bench: $side $grid round $r failed, see $out/$side-$grid-$r.txt" >&2; tail -3 "$out/$side-$grid-$r.txt" >&2; }
  done
}
for r in $(seq 1 "$rounds"); do
  start=$(date +%s)
  if (( r % 2 )); then one A "$a" "$r"; one B "$b" "$r"; else one B "$b" "$r"; one A "$a" "$r"; fi
  echo "round $r: $(( $(date +%s) - start )) s"
done
