#!/usr/bin/env bash
# KernelBench problems with starting kernels on PoCL (issue 31, part 3): each problem imported,
# `kfoundry optimize` with the built-in proposer from its starting kernels (a small budget), then
# the best kernel evaluated by `kfoundry eval` at the CPU size set, which times it and PyTorch eager
# (the task's external baseline, on the CPU) in the same process, so the ratio is one command's.
# Usage: bash bench/kernelbench_cpu.sh [KFOUNDRY] [WORK_DIR] [BUDGET] [PROBLEM...]
set -uo pipefail
kf=${1:-build/src/kfoundry}
work=${2:-/tmp/kernelbench_cpu}
budget=${3:-24}
shift 3 2>/dev/null || shift $#
problems="${*:-19_ReLU 23_Softmax 36_RMSNorm_ 40_LayerNorm 47_Sum_reduction_over_a_dimension
          1_Square_matrix_multiplication_ 89_cumsum}"
rm -rf "$work" && mkdir -p "$work"
echo "| problem | op class | cpu set | evaluations | best (its origin) | config | best ms | torch eager ms | eager / best |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for p in $problems; do
  d="$work/$p"
  "$kf" import "tests/data/kernelbench/$p.py" -o "$d/task" > /dev/null || { echo "| $p | import failed |"; continue; }
  "$kf" optimize "$d/task" --device opencl --proposer builtin --budget "$budget" --tune-budget 4 \
    --top 2 --repeats 2 --store "sqlite:$d/kf.db" --out "$d/out" --json > "$d/optimize.json" \
    2> "$d/optimize.err" || { echo "| $p | optimize failed: $(tail -c 200 "$d/optimize.err") |"; continue; }
  best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['best']['kernel_file'])" "$d/optimize.json")
  "$kf" eval "$d/task" "$best" --device opencl --json --runs 100 --warmup 5 > "$d/eval.json" 2> "$d/eval.err"
  python3 - "$p" "$d/task/task.toml" "$d/optimize.json" "$d/eval.json" <<'PY'
import json, re, sys
p, toml, opt, ev = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
op_class = re.search(r'^op_class = "(\w+)"', toml, re.M).group(1)
cpu = re.search(r'name = "cpu"\ndevice_class = "cpu"\n((?:\w+ = \d+\n)+)', toml).group(1).split()
cpu = " ".join(f"{cpu[i]}={cpu[i + 2]}" for i in range(0, len(cpu), 3))
best = opt["best"]
eager = next(b for b in ev["external_baselines"] if b["name"] == "torch eager")
ms, ems = ev["time_ms"]["median"], eager["time_ms"]["median"]
print(f"| {p} | {op_class} | {cpu} | {opt['totals'].get('evaluations', '?')} | "
      f"{best['kernel']} ({best['origin']}) | {json.dumps(best['config'])} | {ev['status']} {ms:.4g} | "
      f"{ems:.4g} | {ems / ms:.2f} |")
PY
done
