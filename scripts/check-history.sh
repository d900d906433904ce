#!/usr/bin/env bash
# Fails when the product speaks of how it was developed. History belongs in
# commit messages; code, comments, help texts, docs, test names and file
# names state rules, and where a measurement justifies a rule, the benchmark
# command that shows it and the figure.
#
# It scans the tracked *.go, *.cuh, *.cu, *.md, *.sh and *.py files for
#   - development rounds: the word session, run or round (any case, plural
#     too) followed by a number, with or without a space before it;
#   - dates: four-digit year, month and day joined by hyphens;
#   - commit hashes in prose: a word of 7 to 40 lowercase hexadecimal
#     characters holding a digit and a letter (not part of a 0x literal, an
#     identifier or a floating-point literal such as 51200e6);
# and every tracked path name for a date. Each finding is listed as
# file:line: text; the exit status is 1 when there is one.
#
# Usage: scripts/check-history.sh [--self-test]
#   --self-test: runs the check on a scratch repository holding each kind of
#   finding and the look-alikes it must let pass.
set -euo pipefail

# Paths the check skips: a file, or a folder when the entry ends in "/".
allowlist() {
  cat <<'EOF'
# generated from bench/baselines: the date and commit of each grid's
# measurement are provenance, as data
docs/performance.md
EOF
}

rounds='sessions? ?[0-9]|runs? [0-9]|rounds? [0-9]'
dates='20[0-9][0-9]-[01][0-9]-[0-3][0-9]'
hashes='(?<![0-9A-Za-z_.])(?![0-9]+e[0-9]+(?![0-9A-Za-z_]))(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9A-Za-z_])'

# allowed PATH: whether the allowlist names PATH or a folder above it.
allowed() {
  local entry
  while IFS= read -r entry; do
    case $entry in
    '' | '#'*) continue ;;
    */) [[ $1 == "$entry"* ]] && return 0 ;;
    *) [[ $1 == "$entry" ]] && return 0 ;;
    esac
  done < <(allowlist)
  return 1
}

# check DIR: lists the findings in the git work tree DIR; status 1 if any.
check() {
  local dir=$1 found=0 f
  local -a files=()
  while IFS= read -r -d '' f; do
    allowed "$f" || files+=("$f")
  done < <(git -C "$dir" ls-files -z -- '*.go' '*.cuh' '*.cu' '*.md' '*.sh' '*.py')
  if ((${#files[@]})); then
    if (cd "$dir" && grep -EIin -e "$rounds" -e "$dates" -- "${files[@]}"); then found=1; fi
    if (cd "$dir" && grep -PIn -e "$hashes" -- "${files[@]}"); then found=1; fi
  fi
  while IFS= read -r -d '' f; do
    if ! allowed "$f" && grep -Eq "$dates" <<<"$f"; then
      echo "$f: a date in a path name"
      found=1
    fi
  done < <(git -C "$dir" ls-files -z)
  if ((found)); then
    echo "check-history: development history in the product (above): state the rule, and the benchmark and figure that justify it; history belongs in commit messages" >&2
    return 1
  fi
  echo "check-history: no development history in ${#files[@]} files"
}

# fixture TEXT: TEXT with its placeholders filled in, so that this script
# holds none of the findings its self-test plants: {S}, {R}, {O} the words
# of development rounds, {Y} a year, {H} a commit hash.
fixture() {
  local y=20 h=57aa
  y+=26 h+=1a3
  sed -e "s/{S}/sess""ion/g; s/{R}/r""un/g; s/{O}/ro""und/g; s/{Y}/$y/g; s/{H}/$h/g" <<<"$1"
}

self_test() {
  local out dated
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git -C "$tmp" init -q
  dated=$(fixture 'a/b-{Y}-11-22')
  mkdir -p "$tmp/$dated" "$tmp/docs"
  cat >"$tmp/ok.go" <<'EOF'
// Look-alikes that are not history: 0x9e3779b97f4a7c15, 3.4028235677973366e38,
// 51200e6, deadbeef, 12345678, abc_1234567, a run of 10 rows, rerun it.
package ok
EOF
  printf 'x\n' >"$tmp/ok.csv"
  fixture '{Y}-11-22,{H}' >"$tmp/data.csv"
  fixture '{S} 3 is fine here: allowlisted' >"$tmp/docs/performance.md"
  fixture 'package bad

// as measured in {S} 13 {R} 8
// see {R}s 2-4
// {O} 2 of tuning
// measured on {Y}-11-24
// fixed in {H}
// {S}14/{R}3' >"$tmp/bad.go"
  printf 'x\n' >"$tmp/$dated/c.txt"
  git -C "$tmp" add -A
  if out=$(check "$tmp" 2>&1); then
    echo "check-history self-test: the check passed a tree with history" >&2
    return 1
  fi
  local want
  for want in 'bad.go:3:' 'bad.go:4:' 'bad.go:5:' 'bad.go:6:' 'bad.go:7:' 'bad.go:8:' \
    "$dated/c.txt: a date in a path name"; do
    if ! grep -qF "$want" <<<"$out"; then
      printf 'check-history self-test: want %s in:\n%s\n' "$want" "$out" >&2
      return 1
    fi
  done
  if grep -qE '^(ok\.go|ok\.csv|data\.csv|docs/)' <<<"$out"; then
    printf 'check-history self-test: a look-alike or allowlisted file was flagged:\n%s\n' "$out" >&2
    return 1
  fi
  git -C "$tmp" rm -rqf bad.go a
  if ! out=$(check "$tmp" 2>&1); then
    printf 'check-history self-test: the check failed a clean tree:\n%s\n' "$out" >&2
    return 1
  fi
  echo "check-history self-test: ok"
}

case ${1:-} in
--self-test) self_test ;;
'') check "$(cd "$(dirname "$0")/.." && pwd)" ;;
*)
  echo "usage: scripts/check-history.sh [--self-test]" >&2
  exit 2
  ;;
esac
