#!/usr/bin/env bash
# Runs the Python package's tests (python/tests) with /usr/bin/python3,
# whose NumPy and SciPy are Debian's, against libbandsolve: the library
# named by BANDSOLVE_LIB, or the CPU variant built here with Go (add
# --cuda to build the CUDA variant: on a machine with a GPU and CuPy the
# CuPy tests then run too). Skips, with a message and status 0, when
# NumPy or SciPy is not importable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, scipy' 2>/dev/null; then
  echo "test-python: skipped: $py cannot import numpy and scipy (apt-get install python3-numpy python3-scipy)"
  exit 0
fi
if [ -z "${BANDSOLVE_LIB:-}" ]; then
  tags=()
  name=libbandsolve.so
  if [ "${1:-}" = --cuda ]; then tags=(-tags cuda); name=libbandsolve_cuda.so; fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$root" && go build -buildmode=c-shared "${tags[@]}" -o "$tmp/$name" ./capi)
  export BANDSOLVE_LIB=$tmp/$name
fi
cd "$root"
PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} "$py" -m unittest discover -s python/tests -v
