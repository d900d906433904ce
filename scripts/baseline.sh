#!/usr/bin/env bash
# Measures the performance baselines of a GPU (bench/baselines/): every
# case of the grids that docs/performance.md shows, this module's solvers
# next to their peers in the same run. Runs on the GPU machine, from the
# binaries that scripts/build-gpu.sh packs (bandsolve, lapack-gbsv.py).
#
# Usage: bash .gpu/baseline.sh OUTDIR [PART …]
#   PART: paper contiguous interleaved large const layouts (tridiagonal,
#   against cuSPARSE), banded pentadiag (against the host's banded LU and
#   cuSPARSE gpsvInterleavedBatch), lapack (LAPACK ?gbsv through SciPy on
#   the host); default: all of them. Each part writes OUTDIR/PART.csv.
# Then, here: bash scripts/baseline-merge.sh OUTDIR h100 (or the GPU's
# name) makes bench/baselines/h100.csv and h100-banded.csv, and
# go run ./cmd/bandsolve bench -report docs regenerates the docs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: baseline.sh OUTDIR [PART …]}
shift
parts=${*:-paper contiguous interleaved large const layouts banded pentadiag lapack}
mkdir -p "$out"
bs="$here/bandsolve"
commit=$(cat "$here/commit.txt" 2>/dev/null || echo unknown)
for p in $parts; do
  s=$(date +%s)
  case $p in
    paper)  "$bs" bench -q -table=false -grid paper -algorithms all -peers cusparse -csv "$out/$p.csv" ;;
    contiguous|interleaved|large|const|layouts)
            "$bs" bench -q -table=false -grid "$p" -algorithms auto -peers cusparse -csv "$out/$p.csv" ;;
    banded) "$bs" bench -q -grid banded -band-n 1e5,1e6 -band-k 2,10,100,200 -band-d 1,0.6 -host-d 1 -host-cap 15s -csv "$out/$p.csv" ;;
    pentadiag) "$bs" bench -q -grid pentadiag -csv "$out/$p.csv" ;;
    lapack) python3 "$here/lapack-gbsv.py" -n 1e5,1e6 -k 2,10,100 -d 1 -reps 3 -commit "$commit" > "$out/$p.csv" ;;
    *) echo "baseline: unknown part $p" >&2; exit 2 ;;
  esac > "$out/$p.txt" 2>&1 || { echo "baseline: $p failed (rc=$?), see $out/$p.txt" >&2; tail -5 "$out/$p.txt" >&2; }
  echo "$p: $(( $(date +%s) - s )) s"
done
