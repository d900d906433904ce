#!/usr/bin/env bash
# Fetches the SuiteSparse (Harwell-Boeing collection) matrices that Debian
# packages ship, for the real-matrix cases of the SpTRSV suite
# (sptrsv/suite.Real):
#
#   libsuperlu-dist-dev  (SuperLU_DIST's EXAMPLE folder)
#       big.rua    add32     4960 x 4960,  23884 entries (Hamm, 32-bit adder)
#       g20.rua    g20        400 x 400,    1920 entries
#       g4.rua     g4          16 x 16,       64 entries
#   r-cran-matrix        (the Matrix package's external folder)
#       utm300.rua utm300     300 x 300,    3155 entries
#       lund_a.rsa lund_a     147 x 147,    1298 stored (symmetric)
#       lund_a.mtx the same matrix in Matrix Market form
#       pores_1.mtx pores_1    30 x 30,      180 entries
#       jgl009.mtx jgl009       9 x 9,        50 entries (pattern)
#
# Usage: scripts/fetch-suitesparse.sh DIR
#
# The packages are downloaded with `apt-get download` into a temporary
# folder (no root needed, nothing is installed: r-cran-matrix would pull
# in R) and unpacked there with `dpkg -x`; the matrix files (gunzipped
# where a release ships them compressed) are copied into DIR. When DIR
# already holds every file, nothing is downloaded. It prints each file it
# has and exits non-zero, saying why, when apt cannot download a package
# or a package lacks a file.
#
# Environment:
#   SUPERLU_DIST_PKG   package with SuperLU_DIST's examples (default
#                      libsuperlu-dist-dev)
#   R_MATRIX_PKG       package with R Matrix's external files (default
#                      r-cran-matrix)
#   SUITESPARSE_DEBS   a folder of already downloaded .deb files of these
#                      packages, used instead of apt-get download
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dest=$1

superlu=${SUPERLU_DIST_PKG:-libsuperlu-dist-dev}
rmatrix=${R_MATRIX_PKG:-r-cran-matrix}

# file:package pairs, in the order they are reported.
wanted=(
  "big.rua:$superlu"
  "g20.rua:$superlu"
  "g4.rua:$superlu"
  "utm300.rua:$rmatrix"
  "lund_a.rsa:$rmatrix"
  "lund_a.mtx:$rmatrix"
  "pores_1.mtx:$rmatrix"
  "jgl009.mtx:$rmatrix"
)

mkdir -p "$dest"

report() {
  local f
  for w in "${wanted[@]}"; do
    f=${w%%:*}
    printf '  %-12s %8d bytes\n' "$f" "$(wc -c <"$dest/$f")"
  done
}

missing=()
for w in "${wanted[@]}"; do
  f=${w%%:*}
  [ -s "$dest/$f" ] || missing+=("$f")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "fetch-suitesparse: all ${#wanted[@]} matrix files already in $dest:"
  report
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

debs=()
for pkg in "$superlu" "$rmatrix"; do
  if [ -n "${SUITESPARSE_DEBS:-}" ]; then
    deb=$(find "$SUITESPARSE_DEBS" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
    if [ -z "$deb" ]; then
      echo "fetch-suitesparse: no ${pkg}_*.deb in SUITESPARSE_DEBS=$SUITESPARSE_DEBS" >&2
      exit 1
    fi
  else
    if ! command -v apt-get >/dev/null; then
      echo "fetch-suitesparse: apt-get not found: this script needs a Debian or Ubuntu system (or SUITESPARSE_DEBS)" >&2
      exit 1
    fi
    # As root, apt's download sandbox user cannot write to the private
    # temporary folder; download as root there instead of warning.
    opts=()
    if [ "$(id -u)" -eq 0 ]; then
      opts=(-o APT::Sandbox::User=root)
    fi
    if ! (cd "$tmp" && apt-get download "${opts[@]}" "$pkg" >"$tmp/apt-$pkg.log" 2>&1); then
      cat "$tmp/apt-$pkg.log" >&2
      echo "fetch-suitesparse: apt-get download $pkg failed: no network, stale package lists (run apt-get update)," >&2
      echo "  or no package $pkg in this release (find the one holding the files with apt-file search big.rua;" >&2
      echo "  set SUPERLU_DIST_PKG or R_MATRIX_PKG)" >&2
      exit 1
    fi
    deb=$(find "$tmp" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
    if [ -z "$deb" ]; then
      echo "fetch-suitesparse: apt-get download $pkg left no ${pkg}_*.deb" >&2
      exit 1
    fi
  fi
  dpkg -x "$deb" "$tmp/root"
  debs+=("$pkg $(dpkg-deb -f "$deb" Version)")
done

echo "fetch-suitesparse: unpacked $(printf '%s; ' "${debs[@]}" | sed 's/; $//') into a temporary folder"
absent=()
for w in "${wanted[@]}"; do
  f=${w%%:*}
  pkg=${w#*:}
  src=$(find "$tmp/root" -type f \( -name "$f" -o -name "$f.gz" \) | sort | head -n 1)
  if [ -z "$src" ]; then
    absent+=("$f ($pkg)")
    continue
  fi
  if [ "${src%.gz}" != "$src" ]; then
    gunzip -c "$src" >"$dest/.$f.part"
  else
    cp "$src" "$dest/.$f.part"
  fi
  mv "$dest/.$f.part" "$dest/$f"
done

if [ ${#absent[@]} -gt 0 ]; then
  echo "fetch-suitesparse: not in the packages: ${absent[*]}" >&2
  exit 1
fi
echo "fetch-suitesparse: ${#wanted[@]} matrix files in $dest:"
report
