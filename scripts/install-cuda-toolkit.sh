#!/usr/bin/env bash
# Installs the pinned CUDA toolkit (nvcc, ptxas, cuda.h, libcuda stubs) from
# Debian's non-free section. Used by developers and by CI. Idempotent.
#
# Pinned: Debian bookworm nvidia-cuda-toolkit 11.8 (nvcc "release 11.8").
set -euo pipefail

want="release 11.8"
if command -v nvcc >/dev/null 2>&1 && nvcc --version | grep -q "$want"; then
  exit 0
fi

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"

src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
  $sudo sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
elif [ -f /etc/apt/sources.list ] && ! grep -q 'non-free' /etc/apt/sources.list; then
  $sudo sed -i 's/ main$/ main contrib non-free non-free-firmware/' /etc/apt/sources.list
fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev >/dev/null
nvcc --version | grep -q "$want" || { echo "install-cuda-toolkit: nvcc is not $want" >&2; nvcc --version >&2; exit 1; }
