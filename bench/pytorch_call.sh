#!/usr/bin/env bash
# Issue 31's GPU figures in one GPU-machine call (run from the repository root there with .device
# carried, after scripts/device-bundle.sh here; under 600 s):
#   0. the CUDA starting kernels checked against the module at every check set (cuda_starting.txt);
#   1. the twelve problems of tests/data/kernelbench imported at their own sizes (the benchmark
#      set `problem`, KernelBench's sizes for these problems) with .device/kfoundry import;
#   2. `kfoundry suite` over them on --device cuda with a fixed budget (BUDGET evaluations, at
#      most SECONDS of search each): fast_0/1/2 against PyTorch eager and torch.compile, the
#      geometric mean, the roofline fractions, the per-problem table (suite.txt, suite.json);
#   3. every correct problem's winner exported as KernelBench's ModelNew (`kfoundry export RUN
#      --torch`) and checked by bench/kb_eval.py, KernelBench's protocol in our own code (5 trials
#      at atol = rtol = 1e-2, 100 timed calls with CUDA events), its times beside ours
#      (kb_eval.jsonl, compare.txt).
# Usage: bash bench/pytorch_call.sh [BUDGET [SECONDS]]   (defaults 12 and 12)
# Environment: KF_SUITE_DEVICE (default cuda), KF_SUITE_SIZES (default problem: the problems' own
# sizes), KB_DEVICE (PyTorch's for kb_eval.py, default cuda) -- a dry run on PoCL here:
# KF_SUITE_DEVICE=opencl KF_SUITE_SIZES=cpu KB_DEVICE=cpu; KB_PYTHON (a python3 with PyTorch,
# default python3); KF_SUITE_EXTRA (more suite flags, e.g. an LLM proposer's).
set -uo pipefail
# shellcheck source=bench/device_env.sh
source bench/device_env.sh
export KF_TORCH_HELPERS="$PWD/src/torch"
budget=${1:-12}
seconds=${2:-12}
sizes=${KF_SUITE_SIZES:-problem}
device=${KF_SUITE_DEVICE:-cuda}
kb_device=${KB_DEVICE:-cuda}
kb_python=${KB_PYTHON:-python3}
work=${KF_SUITE_WORK:-/tmp/kf-suite}
store="sqlite:$work/kf.db"
rm -rf "$work" && mkdir -p "$work/tasks" "$work/export"
step() {
  echo "== $1 done (rc $2) at $SECONDS s"
}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 || true
  echo "build $(cat .device/commit 2>/dev/null || echo unknown)"
  "${KB_PYTHON:-python3}" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1
} | tee "$OUT/machine.txt"

# 0. The CUDA starting kernels at every check set against the module (the integration tests'
# CudaImport instances; skipped on a machine without a CUDA device).
if [ "$device" = cuda ]; then
  timeout 90 .device/kf_integration_tests --gtest_filter='CudaImport/*' > "$OUT/cuda_starting.txt" 2>&1
  step "CUDA starting kernels" $?
  grep -E '^\[  (FAILED|PASSED|SKIPPED) |Failure' "$OUT/cuda_starting.txt" | head -n 30
fi

# 1. The problems, as task folders.
for p in tests/data/kernelbench/*.py; do
  name=$(basename "$p" .py)
  timeout 60 "$kf" import "$p" -o "$work/tasks/${name%_}" 2>&1 | tail -n 1
done | tee "$OUT/import.txt"
step import $?

# 2. The suite: the text table, then the same as JSON from the store (--resume judges nothing of
# a finished task; a task cut off by the time-out goes on there, within its own limit).
# shellcheck disable=SC2086  # KF_SUITE_EXTRA is several flags
timeout 300 "$kf" suite "$work/tasks" --device "$device" --sizes "$sizes" --budget "$budget" \
  --time-budget "$seconds" --store "$store" --out "$work/out" ${KF_SUITE_EXTRA:-} > "$OUT/suite.txt" 2> "$OUT/suite_err.txt"
step suite $?
cat "$OUT/suite.txt"
tail -n 30 "$OUT/suite_err.txt"
# shellcheck disable=SC2086
timeout 60 "$kf" suite "$work/tasks" --device "$device" --store "$store" --out "$work/out" \
  --resume --json ${KF_SUITE_EXTRA:-} > "$OUT/suite.json" 2> "$OUT/suite_resume_err.txt"
step "suite --json" $?

if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/suite.json" 2>/dev/null; then
  echo "no suite.json (the suite was cut off: see suite_err.txt, suite_resume_err.txt)"
  exit 0
fi

# 3. KernelBench's own check of each correct problem's exported ModelNew, while time is left.
: > "$OUT/kb_eval.jsonl"
if ! "$kf" --help 2>&1 | grep -qE '^ +export'; then
  echo "kfoundry export is not in this build ($(cat .device/commit 2>/dev/null)): KernelBench's eval skipped" |
    tee "$OUT/compare.txt"
  exit 0
fi
python3 - "$OUT/suite.json" > "$work/correct.txt" <<'PY'
import json, os, sys
for r in json.load(open(sys.argv[1]))["problems"]:
    if r["status"] == "correct":
        print(r["run"], os.path.basename(r["task_dir"]), r["problem"])
PY
while read -r run folder problem; do
  if [ "$SECONDS" -gt 540 ]; then
    echo "{\"problem\": \"$problem\", \"reason\": \"not checked: out of time\"}" >> "$OUT/kb_eval.jsonl"
    continue
  fi
  file="$work/export/$folder.py"
  if ! timeout 60 "$kf" export "$run" --torch --store "$store" -o "$file" > "$work/export.log" 2>&1; then
    echo "{\"problem\": \"$problem\", \"exported\": false, \"reason\": $(tail -n 3 "$work/export.log" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}" >> "$OUT/kb_eval.jsonl"
    continue
  fi
  src=tests/data/kernelbench/$folder.py
  [ -e "$src" ] || src=tests/data/kernelbench/${folder}_.py
  timeout 40 "$kb_python" bench/kb_eval.py --problem "$src" --new "$file" --device "$kb_device" \
    >> "$OUT/kb_eval.jsonl" 2>> "$work/kb_eval.log" ||
    echo "{\"problem\": \"$problem\", \"exported\": true, \"reason\": \"kb_eval.py failed or timed out\"}" >> "$OUT/kb_eval.jsonl"
done < "$work/correct.txt"
step "kb_eval" $?
tail -n 20 "$work/kb_eval.log" 2>/dev/null

# Ours beside KernelBench's protocol: our median time and speedups, its mean times and verdict.
python3 - "$OUT/suite.json" "$OUT/kb_eval.jsonl" <<'PY' | tee "$OUT/compare.txt"
import json, os, sys
suite = json.load(open(sys.argv[1]))
kb = {}
for line in open(sys.argv[2]):
    if line.strip():
        j = json.loads(line)
        kb[os.path.basename(j["problem"]).removesuffix(".py").rstrip("_")] = j
def x(v):
    return "-" if v is None else f"{v:.3f}x"
print(f"{'problem':<36} {'ours ms':>9} {'eager':>8} {'compile':>8} | {'kb correct':>10} {'new ms':>9} {'eager ms':>9} {'eager':>8} {'compile':>8}")
for r in suite["problems"]:
    k = kb.get(os.path.basename(r["task_dir"]), {})
    ours_ms = "-" if r["time_ms"] is None else f"{r['time_ms']:.4f}"
    new_ms = k.get("new_ms", {}).get("mean")
    eager_ms = k.get("eager_ms", {}).get("mean")
    verdict = "-" if not k else ("yes" if k.get("correct") else "no")
    print(f"{r['problem']:<36} {ours_ms:>9} {x(r['eager_speedup']):>8} {x(r['compile_speedup']):>8} | "
          f"{verdict:>10} {'-' if new_ms is None else f'{new_ms:.4f}':>9} "
          f"{'-' if eager_ms is None else f'{eager_ms:.4f}':>9} {x(k.get('speedup_vs_eager')):>8} "
          f"{x(k.get('speedup_vs_compile')):>8}"
          + (f"  ({k['reason'][:120]})" if k.get("reason") else ""))
PY
echo "== all done at $SECONDS s"
