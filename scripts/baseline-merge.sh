#!/usr/bin/env bash
# Makes bench/baselines/NAME.csv (tridiagonal grids) and NAME-banded.csv
# (banded grids and LAPACK) from the part files that scripts/baseline.sh
# wrote on a GPU machine. A part that is missing keeps the baseline's rows
# of that grid.
# Usage: bash scripts/baseline-merge.sh OUTDIR NAME   (e.g. NAME = h100)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
in=${1:?usage: baseline-merge.sh OUTDIR NAME}
name=${2:?usage: baseline-merge.sh OUTDIR NAME}
go run "$root/cmd/bandsolve" bench -merge "$root/bench/baselines/$name" -parts "$in"
