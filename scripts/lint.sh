#!/usr/bin/env bash
# Style checks: the layer arrows (scripts/check_layers.py), clang-format on every C++ file and kernel
# source, clang-tidy (.clang-tidy) on the C++ sources that changed since BASE (default: the previous
# commit). Needs build/compile_commands.json. scripts/hooks/pre-commit runs the first two.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD~1}

scripts/check_layers.py

mapfile -t all < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cl')
if ! clang-format --dry-run -Werror "${all[@]}" 2>/tmp/kf-format.log; then
  grep -m 20 'error:' /tmp/kf-format.log >&2 || true
  echo "lint: files above are not clang-formatted (run: clang-format -i FILE)" >&2
  exit 1
fi

mapfile -t changed < <( (git diff --name-only --diff-filter=AM "$base" -- 'src/*.cpp' 2>/dev/null || git ls-files 'src/*.cpp') | sort -u)
if ((${#changed[@]})) && command -v clang-tidy >/dev/null; then
  out=$(printf '%s\n' "${changed[@]}" | xargs -P "$(nproc)" -n 1 clang-tidy -p build --quiet 2>/dev/null || true)
  if grep -E '^/.*: (warning|error):' <<<"$out" >&2; then
    echo "lint: clang-tidy found the issues above" >&2
    exit 1
  fi
fi
echo "lint: ${#all[@]} files formatted; ${#changed[@]} changed sources clean under clang-tidy"
