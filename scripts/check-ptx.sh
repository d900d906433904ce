#!/usr/bin/env bash
# Checks that the committed PTX matches the sources, and assembles it for
# sm_80 and sm_90, failing on register spills of any kernel.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bash "$root/scripts/gen-ptx.sh" "$tmp"
for f in "$tmp"/*.ptx; do
  name=$(basename "$f")
  if ! cmp -s "$f" "$root/ptx/$name"; then
    echo "check-ptx: ptx/$name is stale: run 'go generate ./ptx' and commit" >&2
    diff "$f" "$root/ptx/$name" | head -20 >&2
    exit 1
  fi
  archs="sm_80 sm_90"
  [ "$name" = cluster.ptx ] && archs=sm_90 # thread-block clusters: Hopper only
  for arch in $archs; do
    ptxas -arch=$arch -v -o /dev/null "$f" > "$tmp/$name.$arch.log" 2>&1 || { cat "$tmp/$name.$arch.log" >&2; exit 1; }
    if grep -E 'bytes spill (stores|loads)' "$tmp/$name.$arch.log" | grep -vq ' 0 bytes spill stores, 0 bytes spill loads'; then
      echo "check-ptx: register spills in ptx/$name on $arch:" >&2
      grep -B2 -E '[1-9][0-9]* bytes spill' "$tmp/$name.$arch.log" >&2
      exit 1
    fi
  done
  echo "check-ptx: ptx/$name up to date; assembles for $archs without spills"
done
