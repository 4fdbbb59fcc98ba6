#!/usr/bin/env bash
# Issue 33's table in one GPU-machine call (run from the repository root there with .device
# carried, after scripts/device-bundle.sh here; under 600 s): the vendor anchors at each task's
# size of record (bench/task_anchors.py: SDPA, cuBLAS through torch.matmul with TF32 off,
# cuSPARSE), then `kfoundry optimize` from each task's own templates (bench/task_library_run.sh:
# no hand-picked kernel, the search's best after its re-verification at the check sets, ragged
# ones included, and on fresh inputs), then one line per row: best, anchor, their ratio and the
# issue's mark. Rows: attention_fwd and attention_fwd.bf16 (>= 0.8x SDPA, causal B 4 H 32 S 4096
# D 128), gemm_f16 and gemm_f16.bf16 (>= 0.95x cuBLAS at 4096^3), gemm_f32 (>= 0.9x cuBLAS SGEMM,
# TF32 off), spmv_csr (>= 1.0x cuSPARSE).
# Usage: bash bench/vendor_call.sh [SECONDS_PER_SEARCH]   (default 60; six searches, about 480 s with the anchors)
# Writes $OUT/anchors.txt, library.txt (one JSON line per search), vendor.txt (the table),
# library_best.tgz (the best kernels).
set -uo pipefail
# shellcheck source=bench/device_env.sh
source bench/device_env.sh
secs=${1:-60}
rows="attention_fwd attention_fwd.bf16 gemm_f16 gemm_f16.bf16 gemm_f32 spmv_csr"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUT/machine.txt"
echo "build $(cat .device/commit 2>/dev/null || echo unknown)" | tee -a "$OUT/machine.txt"

# shellcheck disable=SC2086
timeout 120 python3 bench/task_anchors.py $rows | tee "$OUT/anchors.txt"
echo "== anchors done at $(($(date +%s) - start)) s"
: > "$OUT/library.txt"
for task in $rows; do
  timeout $((secs + 40)) bash bench/task_library_run.sh "$secs" "$task"
  echo "== $task done at $(($(date +%s) - start)) s"
done

python3 - "$OUT/anchors.txt" "$OUT/library.txt" <<'PY' | tee "$OUT/vendor.txt"
import json, sys
anchors, found = {}, {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "task" in j:
        anchors[j["task"]] = j["anchors"]
for line in open(sys.argv[2]):
    line = line.strip()
    if line.startswith("{"):
        j = json.loads(line)
        found[j["task"]] = j
    elif line:
        found[line.split(":")[0]] = {"note": line}
marks = {"attention_fwd": ("SDPA (causal)", 0.8), "attention_fwd.bf16": ("SDPA (causal)", 0.8),
         "gemm_f16": ("cuBLAS (torch.matmul)", 0.95), "gemm_f16.bf16": ("cuBLAS (torch.matmul)", 0.95),
         "gemm_f32": ("cuBLAS (torch.matmul)", 0.9),
         "spmv_csr": ("cuSPARSE (torch.sparse_csr @ x)", 1.0)}
print(f"{'row':<20} {'best ms':>9} {'anchor ms':>10} {'ratio':>7} {'mark':>5}  kernel / note")
for task, (anchor_name, mark) in marks.items():
    a = anchors.get(task, {}).get(anchor_name)
    r = found.get(task, {})
    best = r.get("best_ms")
    if best and a:
        ratio = a / best
        verdict = "meets" if ratio >= mark else "below"
        print(f"{task:<20} {best:>9.4f} {a:>10.4f} {ratio:>7.3f} {mark:>5}  {verdict}: "
              f"{r.get('kernel')} {json.dumps(r.get('config'))}")
    else:
        print(f"{task:<20} {'-':>9} {a or '-':>10} {'-':>7} {mark:>5}  "
              f"{r.get('note') or r.get('stop') or 'no best'}; anchor: {anchors.get(task)}")
PY
echo "== $(($(date +%s) - start)) s"
