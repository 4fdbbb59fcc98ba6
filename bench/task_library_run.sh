#!/usr/bin/env bash
# The task library on the GPU machine (issue 15): `kfoundry optimize TASK` at each task's size of
# record, one task after another, and one line per task with the baseline, the best time, the
# speedup and the achieved bandwidth and FLOP/s. Run from the repository root there with .device
# carried (scripts/device-bundle.sh); writes $OUT/library.txt and $OUT/library_best.tgz (the best
# kernels). Usage: bash bench/task_library_run.sh SECONDS TASK... (KF_OPTIMIZE_EXTRA: more flags)
set -uo pipefail
source bench/device_env.sh
mkdir -p /tmp/kf-library
secs=$1
shift
for task in "$@"; do
  rm -rf "/tmp/kf-library/$task"
  .device/kfoundry optimize "$task" --device cuda --budget 400 --time-budget "$secs" --top 1 \
      --repeats 1 --store "sqlite:/tmp/kf-library/$task.db" --out "/tmp/kf-library/$task" --json ${KF_OPTIMIZE_EXTRA:-} \
      > "/tmp/kf-library/$task.json" 2> "/tmp/kf-library/$task.log"
  python3 - "$task" "/tmp/kf-library/$task.json" <<'PY' | tee -a "$OUT/library.txt"
import json, sys, tomllib
task, path = sys.argv[1:3]
try:
    j = json.load(open(path))
except ValueError:
    print(f"{task}: no result (see its log)"); sys.exit()
b, t = j.get("best") or {}, j["totals"]
base = j.get("run_baseline_ms")
best = (b.get("time_ms") or {}).get("median")
print(json.dumps({"task": task, "baseline_ms": base, "best_ms": best,
                  "speedup": b.get("speedup_median"), "roofline_fraction": b.get("roofline_fraction"),
                  "bandwidth_gbs": b.get("bandwidth_gbs"),
                  "kernel": b.get("origin"), "config": (j.get("final") or [{}])[0].get("config"),
                  "evaluations": t.get("judged_now"), "seconds": t.get("seconds"),
                  "verdicts": t.get("verdicts"), "stop": j.get("stop_reason")}))
PY
done
tar czf "$OUT/library_best.tgz" -C /tmp/kf-library $(cd /tmp/kf-library && ls -d */ 2>/dev/null) 2>/dev/null
