#!/usr/bin/env bash
# Builds the GPU test and bench binaries (-tags cuda: the cuda, gpu,
# internal/gpu/..., internal/nccl, bench, spline, examples and
# cmd/bandsolve test binaries, and the bandsolve command) into
# .gpu/ with scripts/gpu-run.sh as .gpu/run.sh, and packs them into one
# archive, .gpu-pack/gpu.tar.xz (both ignored by git), to copy to a machine
# with an NVIDIA GPU. That machine needs the NVIDIA driver (the binaries
# link libcuda.so.1 dynamically), not Go. There:
#   mkdir -p .gpu && tar -C .gpu -xJf gpu.tar.xz && bash .gpu/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p .gpu
flags=(-tags cuda -trimpath -ldflags=-s\ -w)
for pkg in $(go list -tags cuda -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | grep -E '/cuda$|/gpu$|/internal/gpu/|/internal/nccl$|/bench$|/examples/|/cmd/bandsolve$|/spline$' || true); do
  name=$(basename "$pkg")
  # The examples' binaries are example_NAME: examples/spline and spline
  # would both be spline.test.
  case $pkg in */examples/*) name=example_$name ;; esac
  go test -c "${flags[@]}" -o ".gpu/$name.test" "$pkg"
  # The package's folder: run.sh runs the binary there, as go test does,
  # so that tests reading files of the repository (docs, baselines) find them.
  go list -tags cuda -f '{{.Dir}}' "$pkg" | sed "s|^$root/||" > ".gpu/$name.dir"
done
if [ -d cmd/bandsolve ]; then
  # -buildvcs: the bench records the commit in its CSV records.
  go build "${flags[@]}" -buildvcs=true -o .gpu/bandsolve ./cmd/bandsolve
fi
# The CUDA variant of the C library, for the Python tests on CuPy there:
#   BANDSOLVE_LIB=$PWD/.gpu/libbandsolve_cuda.so PYTHON=python3 bash scripts/test-python.sh
go build -buildmode=c-shared "${flags[@]}" -o .gpu/libbandsolve_cuda.so ./capi
rm -f .gpu/libbandsolve_cuda.h
cp scripts/gpu-run.sh .gpu/run.sh
cp scripts/baseline.sh scripts/lapack-gbsv.py .gpu/
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
echo "$commit" > .gpu/commit.txt
du -sh .gpu
# The binaries share most of their code: xz with a 64 MiB dictionary (-9e)
# finds it across files, and the archive is about a fifteenth of their size.
mkdir -p .gpu-pack
tar -C .gpu -cf - . | xz -T0 -9e > .gpu-pack/gpu.tar.xz
du -sh .gpu-pack/gpu.tar.xz
