#!/usr/bin/env bash
# Fuzzes the task loader and the kernel annotation parser (tests/fuzz/fuzz_parsers.cpp): builds
# the libFuzzer target with clang++ (address and undefined-behaviour sanitizers), copies the seeds
# (the bundled tasks' task.toml and kernel files, and the test tasks') into a corpus, runs for a
# bounded time and prints the runs and the crashes. Crash inputs land in OUT/crashes.
#
#   bench/fuzz_parsers.sh [SECONDS]        default 60; OUT is $KF_FUZZ_DIR or build-fuzz
#
# Exit status: 0 when no crash was found, 1 when one was, 2 when the build failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
out=${KF_FUZZ_DIR:-$root/build-fuzz}
cxx=${CXX_FUZZ:-clang++}
mkdir -p "$out/obj" "$out/corpus" "$out/crashes"

# Build: the five core sources the two parsers need, and the harness. Rebuilt when a source or
# header under src/core, or the harness, is newer than the binary.
bin="$out/fuzz_parsers"
sources=(src/core/expr.cpp src/core/dtype.cpp src/core/kernel.cpp src/core/task.cpp
         src/core/toml_file.cpp tests/fuzz/fuzz_parsers.cpp)
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root/src" $(pkg-config --cflags tomlplusplus fmt)
       -DKF_FUZZ_TASK_DIR="\"$root/tasks/rope_llama3\"")
if [[ ! -x "$bin" ]] || [[ -n "$(find "$root/src/core" "$root/tests/fuzz" -newer "$bin" \
                                  \( -name '*.cpp' -o -name '*.hpp' \) -print -quit)" ]]; then
  echo "building $bin"
  objs=()
  for s in "${sources[@]}"; do
    o="$out/obj/$(basename "$s" .cpp).o"
    "$cxx" "${flags[@]}" -c "$root/$s" -o "$o" || exit 2
    objs+=("$o")
  done
  "$cxx" "${flags[@]}" "${objs[@]}" -o "$bin" $(pkg-config --libs tomlplusplus fmt) || exit 2
fi

# Seeds, copied into the corpus (which keeps what earlier runs found).
shopt -s nullglob
for f in "$root"/tasks/*/task.toml "$root"/tasks/*/*.cl "$root"/tasks/*/*.cu \
         "$root"/tests/data/tasks/*/task.toml "$root"/tests/data/tasks/*/*.cl; do
  cp "$f" "$out/corpus/seed_$(basename "$(dirname "$f")")_$(basename "$f")"
done

before=$(ls "$out/crashes" | wc -l)
log="$out/fuzz.log"
# -fork with -ignore_crashes keeps going after a crash, so one run counts them all.
set +e
"$bin" "$out/corpus" -dict="$root/tests/fuzz/parsers.dict" -max_total_time="$seconds" \
  -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=10 -rss_limit_mb=4096 \
  -max_len=16384 -print_funcs=0 -artifact_prefix="$out/crashes/" -print_final_stats=1 >"$log" 2>&1
status=$?
set -e
after=$(ls "$out/crashes" | wc -l)

# Runs: the fork's last status line counts the executions of all its jobs ("#N: cov: ...").
last=$(grep -E '^#[0-9]+: ' "$log" | tail -1 || true)
runs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"${last:-#0: }")
echo "fuzz_parsers: ${seconds}s, libFuzzer exit $status"
echo "last status line: ${last:-none}"
echo "runs: $runs"
echo "crashes: $((after - before)) new ($after in $out/crashes)"
echo "corpus: $(ls "$out/corpus" | wc -l) inputs; log: $log"
[[ $after -eq $before ]]
