#!/usr/bin/env bash
# The GPU machine's command (run from the repository root there, with .device carried; see
# scripts/device-bundle.sh). Runs the unit and integration tests (CUDA included), then the rope
# evaluations and the PyTorch baselines, writing everything under $OUT. Modes: all (default),
# templates, tune, corpus, optimize [BUDGET [SECONDS]], tests (the CUDA tests alone; the
# integration filter is $KF_GTEST_FILTER, default Cuda*:Cli*:Builder*),
# async SECONDS NAME... (issue 11: optimize at the size of record for SECONDS with the GPU's
# utilisation sampled by nvidia-smi; NAME is before — .device/kfoundry-before, the engine before
# issue 11 —, afterN — this build with --in-flight N — or walkN — the same with the example
# command proposer; beforewalkN: that with kfoundry-before; KF_WALK_ARGS is added to the
# proposer's command). KF_OPTIMIZE_EXTRA is added to each optimize command line.
set -uo pipefail
source bench/device_env.sh

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ldd $kf | grep 'not found'; } 2>&1 | tee "$OUT/machine.txt"
$kf devices 2>&1 | tee -a "$OUT/machine.txt"

if [ "${1:-all}" = tests ]; then
  # Written as they run, test by test, so a call cut off by its time limit still brings back
  # what finished.
  .device/kf_unit_tests --gtest_brief=1 > "$OUT/unit.txt" 2>&1
  tail -n 5 "$OUT/unit.txt"
  .device/kf_integration_tests --gtest_filter="${KF_GTEST_FILTER:-Cuda*:Cli*:Builder*}" > "$OUT/integration.txt" 2>&1
  grep -E '^\[  (FAILED|PASSED|SKIPPED) | ran\. ' "$OUT/integration.txt" | tail -n 60
  exit 0
fi
if [ "${1:-all}" = async ]; then
  secs=${2:-100}
  shift 2
  for name in "$@"; do
    bin=.device/kfoundry extra=()
    case $name in
      before) bin=.device/kfoundry-before ;;
      after*) extra=(--in-flight "${name#after}") ;;
      walk*|beforewalk*) n=${name#before}
                    extra=(--in-flight "${n#walk}" --proposer command
                    --proposer-cmd "python3 examples/proposers/param_walk.py --templates ${KF_WALK_ARGS:-}")
                    [ "$n" = "$name" ] || bin=.device/kfoundry-before ;;
    esac
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$OUT/smi_$name.csv" &
    smi=$!
    # stderr lines stamped with the time they came: the search runs from "starting run" to
    # "re-verifying", in this build and the one before.
    KF_CACHE_DIR="/tmp/kf-cache-$name" $bin optimize rope_llama3 --device cuda --budget 2000 --time-budget "$secs" --store "sqlite:/tmp/kf-$name.db" \
        --run "$name" --top 1 --repeats 1 --out "/tmp/kf-out-$name" --json "${extra[@]}" ${KF_OPTIMIZE_EXTRA:-} > "/tmp/opt_$name.json" \
        2> >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "/tmp/opt_$name.log")
    sleep 1
    kill $smi; wait $smi 2>/dev/null
    python3 - "$name" "/tmp/opt_$name.json" "$OUT/smi_$name.csv" "/tmp/opt_$name.log" <<'PY' | tee -a "$OUT/async.txt"
import json, sys, datetime
name, path, smi, log = sys.argv[1:5]
j = json.load(open(path)); t = j["totals"]
start = end = None
for line in open(log):
    stamp, _, text = line.partition(" ")
    if "starting run" in text and start is None: start = float(stamp)
    if "re-verifying" in text and end is None: end = float(stamp)
samples = []
for line in open(smi):
    parts = [p.strip() for p in line.split(",")]
    try:
        ts = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((ts, float(parts[1])))
    except (ValueError, IndexError):
        pass
search = [u for ts, u in samples if start is not None and end is not None and start <= ts <= end]
busy = sum(search) / len(search) / 100 if search else float("nan")
b = j.get("best") or {}
print(f"{name}: {t['judged_now']} evaluations in {t['seconds']:.1f} s = {t['evaluations_per_second']:.3f}/s; "
      f"GPU busy {busy:.3f} (mean nvidia-smi utilization over {len(search)} samples in the search's "
      f"{(end or 0) - (start or 0):.0f} s); proposals {t.get('proposals')}; cells {t.get('cells_filled')}; "
      f"best {b.get('speedup_median')} roofline {b.get('roofline_fraction')}; stop {j.get('stop_reason')}; "
      f"mean phase ms {t.get('mean_phase_ms')}; verdicts {t.get('verdicts')}")
PY
    cp "/tmp/opt_$name.log" "$OUT/opt_$name.log"
    cp "/tmp/opt_$name.json" "$OUT/opt_$name.json"
  done
  exit 0
fi
if [ "${1:-all}" = templates ]; then  # every CUDA template: verdict, cell and time at the size of record
  .device/kf_integration_tests --gtest_filter='Cuda/Corpus.EveryBundled*' 2>&1 | grep -E 'template|OK|FAILED|Failure' | tee "$OUT/templates_test.txt"
  for k in baseline rope_elem rope_vec4 rope_vec8 rope_heads rope_lds rope_shfl; do
    $kf eval rope_llama3 $k --device cuda --json > "$OUT/t_$k.json" 2>> "$OUT/eval.log"
  done
  python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for k in ["baseline", "rope_elem", "rope_vec4", "rope_vec8", "rope_heads", "rope_lds", "rope_shfl"]:
    j = json.load(open(os.path.join(out, f"t_{k}.json")))
    t = j.get("time_ms") or {}
    print(f"{k:11} {j['status']:8} cell={j['descriptor']} cfg={j['config']} median={t.get('median')} min={t.get('min')} max={t.get('max')} "
          f"base={(j.get('baseline_time_ms') or {}).get('median')} speedup={j.get('speedup')} roof={j.get('roofline_fraction')} {j['reason'][:60]}")
PY
  exit 0
fi
if [ "${1:-all}" = tune ]; then  # issue 4: exhaustive vs a quarter of the space, live
  rope=tasks/rope_llama3/rope_vec8.cu
  $kf tune rope_llama3 $rope --device cuda --strategy exhaustive --no-rules --budget 1000 --record "$OUT/rope_vec8_h200.json" --json > "$OUT/tune_exhaustive.json" 2>> "$OUT/tune.log"
  for seed in 1 2 3; do
    $kf tune rope_llama3 $rope --device cuda --budget 4 --seed $seed --json > "$OUT/tune_quarter_$seed.json" 2>> "$OUT/tune.log"
  done
  python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for f in ["tune_exhaustive.json", "tune_quarter_1.json", "tune_quarter_2.json", "tune_quarter_3.json"]:
    j = json.load(open(os.path.join(out, f))); b = j["best"]
    print(f, "space", j["space_size"], "evals", j["evaluations"], "rules", j["rules"], "best", b["config"], b["time_ms"],
          "baseline", b["baseline_time_ms"]["median"], "speedup", b["speedup"])
    print("  ", sorted([(t["time_ms"], t["config"]) for t in j["trace"] if t["time_ms"]], key=lambda x: x[0]))
PY
  exit 0
fi
if [ "${1:-all}" = optimize ]; then  # issue 5: the search at the size of record, then PyTorch and our best in one process
  budget=${2:-120}
  $kf optimize rope_llama3 --device cuda --budget "$budget" --store "sqlite:/tmp/kf-h200.db" --run h200 --time-budget "${3:-300}" \
      --out "$OUT/out" --json > "$OUT/optimize.json" 2> "$OUT/optimize.log"
  best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['best']['kernel_file'])" "$OUT/optimize.json")
  cp "$best" "$OUT/best.cu"
  $kf eval rope_llama3 "$best" --device cuda --json > "$OUT/best_eval.json" 2>> "$OUT/optimize.log"
  PYTHONUNBUFFERED=1 python3 bench/rope_torch.py --kernel "$best" > "$OUT/torch.json" 2>> "$OUT/torch.log"
  rm -rf "$OUT/out"
  python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
j = json.load(open(os.path.join(out, "optimize.json")))
t = j["totals"]
print("run", j["run"], "stop", j["stop_reason"], "totals", json.dumps(t))
for a in sorted(j["archive"], key=lambda a: -a["speedup"]):
    print("  cell", a["cell"], f'{a["speedup"]:.3f}x', f'{a["time_ms"]:.4f} ms', a["kernel"], a["config"])
for f in j["final"]:
    print("  final", f["kernel"], f["config"], f["verified"], [round(x, 3) for x in f["speedups"]])
b = j["best"]
print("best", b["kernel"], b["config"], b["origin"], "median ms", b["time_ms"]["median"], "baseline", b["baseline_time_ms"]["median"],
      "speedup", b["speedup_median"], b["speedup_range"], "roofline", b["roofline_fraction"])
e = json.load(open(os.path.join(out, "best_eval.json")))
print("independent eval", e["status"], e["config"], e["time_ms"], e["speedup"], e["roofline_fraction"])
print(json.dumps(json.load(open(os.path.join(out, "torch.json")))))
PY
  exit 0
fi
if [ "${1:-all}" = corpus ]; then  # the isolation corpus alone, and the rope kernels timed again
  .device/kf_integration_tests --gtest_filter='Cuda/Corpus*' 2>&1 | grep -E 'stream:|OK|FAILED|Failure|got' | tee "$OUT/corpus.txt"
  for k in baseline rope_vec8; do
    $kf eval rope_llama3 $k --device cuda --json > "$OUT/eval_cuda_${k}_again.json" 2>> "$OUT/eval.log"
  done
  python3 -c "import json,sys; [print(f, json.load(open(f))['status'], json.load(open(f))['time_ms'], json.load(open(f))['speedup']) for f in sys.argv[1:]]" "$OUT"/eval_cuda_*_again.json
  exit 0
fi
.device/kf_unit_tests --gtest_brief=1 2>&1 | tail -n 15 | tee "$OUT/unit.txt"
.device/kf_integration_tests --gtest_filter='Cuda*:Cli*' --gtest_brief=1 2>&1 | tail -n 40 | tee "$OUT/integration.txt"

for k in baseline rope_vec8; do
  $kf eval rope_llama3 $k --device cuda --json > "$OUT/eval_cuda_$k.json" 2>> "$OUT/eval.log"
done
for hpt in 1 2 4 8; do
  $kf eval rope_llama3 rope_vec8 --device cuda --set HPT=$hpt --json > "$OUT/eval_cuda_vec8_hpt$hpt.json" 2>> "$OUT/eval.log"
done
for k in baseline rope_vec8; do  # the same kernels through NVIDIA's OpenCL driver
  $kf eval rope_llama3 $k --device opencl:NVIDIA --json > "$OUT/eval_nvcl_$k.json" 2>> "$OUT/eval.log"
done
PYTHONUNBUFFERED=1 python3 bench/rope_torch.py > "$OUT/torch.json" 2>> "$OUT/torch.log"

python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "eval_*.json"))):
    try:
        j = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); continue
    t, b = j.get("time_ms") or {}, j.get("baseline_time_ms") or {}
    print(f"{os.path.basename(f):32} {j['status']:10} cfg={j['config']} t={t.get('median')} base={b.get('median')} "
          f"speedup={j.get('speedup')} bw={j.get('bandwidth_gbs')} roof={j.get('roofline_fraction')} {j['reason'][:80]}")
try:
    print(json.dumps(json.load(open(os.path.join(out, "torch.json")))))
except Exception as e:
    print("torch.json unreadable:", e)
PY
