#!/usr/bin/env bash
# Issue 32's comparison on PoCL: `optimize TASK --budget 300` with the search before deeper tuning
# (BEFORE: a kfoundry built at 81c3f6d, the commit before 1147a7c) and with today's, run side by
# side on the same seed; prints evaluations spent, the stop reason, the budget's split and the
# re-verified best speedup of each (speedups are against the baseline timed in the same process).
# Usage: bench/search_depth.sh BEFORE_KFOUNDRY AFTER_KFOUNDRY WORKDIR TASK...
set -uo pipefail
before=$1 after=$2 work=$3
shift 3
mkdir -p "$work"
for task in "$@"; do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    rm -f "$work/$task-$side.db"*
    "$bin" optimize "$task" --device opencl --budget 300 --seed 7 --store "sqlite:$work/$task-$side.db" \
      --out "$work/out-$side" --run "$task" --json > "$work/$task-$side.json" 2> "$work/$task-$side.err" &
  done
  wait
  for side in before after; do
    python3 - "$work/$task-$side.json" "$task" "$side" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
best = j.get("best") or {}
t = j.get("totals", {})
print(f"{sys.argv[2]:14s} {sys.argv[3]:6s} evaluations {j.get('evaluations')} "
      f"stop: {j.get('stop_reason', t.get('stop_reason'))!r} budget {t.get('budget')} "
      f"best {best.get('speedup')} ({best.get('origin')})")
PY
  done
done
