#!/usr/bin/env bash
# scripts/check_layers.py passes this tree and fails a copy of it with one breach of each kind,
# naming the file and line: a layer linking upward, a header including a layer its target does
# not link, a source folder that is no layer's.
set -uo pipefail
root=${1:?usage: check_layers_test.sh REPO_ROOT}
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(python3 "$root/scripts/check_layers.py" "$root" 2>&1) || fail "this tree: $out"
echo "$out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/src" "$tmp/src"
sed -i 's/LAYERS kf_core LIBS ${KF_COMMON} SQLiteCpp sqlite3/LAYERS kf_search kf_core LIBS ${KF_COMMON} SQLiteCpp sqlite3/' \
  "$tmp/src/CMakeLists.txt"
grep -q 'LAYERS kf_search kf_core LIBS ${KF_COMMON} SQLiteCpp' "$tmp/src/CMakeLists.txt" ||
  fail "the planted link did not take (src/CMakeLists.txt's kf_store changed?)"
line=$(($(wc -l < "$tmp/src/core/kernel.hpp") + 1))
echo '#include "search/archive.hpp"' >> "$tmp/src/core/kernel.hpp"
mkdir "$tmp/src/stray" && touch "$tmp/src/stray/stray.cpp"

out=$(python3 "$root/scripts/check_layers.py" "$tmp" 2>&1) && fail "breaches passed: $out"
echo "$out"
grep -q '^src/CMakeLists.txt:[0-9]*: kf_store links kf_search' <<<"$out" || fail "upward link not named"
grep -q "^src/core/kernel.hpp:$line: includes search/" <<<"$out" || fail "upward include not named"
grep -q '^src/stray: a folder of sources' <<<"$out" || fail "stray folder not named"
echo "PASS"
