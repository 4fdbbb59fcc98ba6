#!/usr/bin/env bash
# Issue 32's comparison on PoCL: `optimize TASK --budget 300 --seed 7` with the search before
# deeper tuning (BEFORE: a kfoundry built at 81c3f6d, the commit before 1147a7c) and with today's
# (AFTER), one after the other on the same seed (side by side on 2 cores, each disturbed the other's
# timings). Prints, for each side, the evaluations spent, the stop reason, the budget's split and
# the run's own re-verified best; then the two bests timed against each other by AFTER's `eval`,
# alternately, ROUNDS times each (default 3): the median time of each and after/before.
# Usage: bench/search_depth.sh BEFORE_KFOUNDRY AFTER_KFOUNDRY WORKDIR TASK...
# RETIME_ONLY=1 skips the runs and times the bests of an earlier call's WORKDIR again.
set -uo pipefail
before=$1 after=$2 work=$3
shift 3
rounds=${ROUNDS:-3}
mkdir -p "$work"
for task in "$@"; do
  for side in before after; do
    [ -n "${RETIME_ONLY:-}" ] && continue  # the runs' JSON in WORKDIR already: time the bests again
    bin=$before
    [ "$side" = after ] && bin=$after
    rm -f "$work/$task-$side.db"*
    "$bin" optimize "$task" --device opencl --budget 300 --seed 7 --store "sqlite:$work/$task-$side.db" \
      --out "$work/out-$side" --run "$task" --json > "$work/$task-$side.json" 2> "$work/$task-$side.err"
    python3 - "$work/$task-$side.json" "$task" "$side" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
best = j.get("best") or {}
t = j.get("totals", {})
print(f"{sys.argv[2]:14s} {sys.argv[3]:6s} evaluations {j.get('evaluations')} "
      f"stop: {j.get('stop_reason')!r} budget {t.get('budget')} cells {t.get('cells_filled')} "
      f"re-verified best {best.get('speedup_median')} ({best.get('origin')})")
PY
  done
  # The two bests against each other: the same eval, alternately.
  for round in $(seq "$rounds"); do
    for side in before after; do
      file=$(python3 -c "import json,sys; print((json.load(open(sys.argv[1])).get('best') or {}).get('kernel_file',''))" "$work/$task-$side.json")
      [ -n "$file" ] || continue
      "$after" eval "$task" "$file" --device opencl --json > "$work/$task-$side-eval$round.json" 2>/dev/null
    done
  done
  python3 - "$work" "$task" "$rounds" <<'PY'
import json, statistics, sys
work, task, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
med = {}
for side in ("before", "after"):
    times = []
    for r in range(1, rounds + 1):
        try:
            j = json.load(open(f"{work}/{task}-{side}-eval{r}.json"))
            times.append(j["time_ms"]["median"])
        except Exception:
            pass
    med[side] = statistics.median(times) if times else None
    print(f"{task:14s} {side:6s} best timed {rounds}x alternately: median {med[side]} ms ({times})")
if med["before"] and med["after"]:
    print(f"{task:14s} after/before time {med['after'] / med['before']:.3f} (below 1: after's best is faster)")
PY
done
