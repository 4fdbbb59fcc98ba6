#!/usr/bin/env bash
# Issue 15's table on the GPU machine in calls of at most 600 s each (the device tool's limit
# for one command), so that the optimize runs, the anchors and the tests of one build share a
# machine. Run from the repository root there with .device carried (scripts/device-bundle.sh):
#   bash bench/library_call.sh 1   gemm_f16: its epilogues (EPI 0 and 1) interleaved, its optimize
#                                  (100 s) and cuBLAS; the memory-bound tasks' anchors and optimize
#                                  runs (30 s each)
#   bash bench/library_call.sh 2   the CUDA tests (unit, then integration without the library's
#                                  short optimize runs, which the optimize runs stand for); the
#                                  other library tasks' optimize runs and anchors
#   bash bench/library_call.sh 3   the goals alone (~270 s): the memory-bound tasks' and gemm_f16's
#                                  runs, then their anchors
#   bash bench/library_call.sh 4   attention (~270 s): flash_pipe's configurations beside
#                                  flash_mma's best, interleaved; its optimize (70 s) and SDPA
# Each step has a time limit; when it runs out, what the step started is killed (kfoundry, the
# test binaries and their executors), so the next step has the GPU to itself. Writes under $OUT:
# library.txt and anchors.txt (one JSON line per task), ab.txt, unit.txt, integration.txt.
set -uo pipefail
source bench/device_env.sh
export PYTHONUNBUFFERED=1
start=$(date +%s)

# step SECONDS COMMAND...: COMMAND for at most SECONDS, then nothing it started left running.
step() {
  local secs=$1
  shift
  echo "== $(($(date +%s) - start)) s: $* (limit ${secs} s)" | tee -a "$OUT/steps.txt"
  timeout -k 5 "$secs" "$@"
  local rc=$?
  pkill -9 -f '\.device/(kfoundry|kf_unit_tests|kf_integration_tests)' 2>/dev/null
  sleep 1
  [ $rc -eq 0 ] || echo "   exit $rc" | tee -a "$OUT/steps.txt"
  return 0
}

# One line of `kfoundry eval`'s verdict and median/min/max ms: eval_line LABEL TASK FILE ARGS...
eval_line() {
  local label=$1 task=$2 file=$3
  shift 3
  $kf eval "$task" "$file" --device cuda --json "$@" 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); t=j.get('time_ms') or {};
print('$label', j['status'], t.get('median'), t.get('min'), t.get('max'), j['reason'][:80])"
}

# gemm_wgmma's two epilogues (registers, then C staged in shared memory), interleaved, twice.
ab() {
  for round in 1 2; do
    for epi in 0 1; do
      eval_line "$round EPI=$epi" gemm_f16 tasks/gemm_f16/gemm_wgmma.cu --set BM=256 --set BN=128 \
          --set GROUP_M=1 --set EPI=$epi
    done
  done | tee -a "$OUT/ab.txt"
}

# attention_fwd's tensor-core templates at the size of record, each configuration once per round.
attention_ab() {
  for round in 1 2; do
    for cfg in "flash_mma WARPS=8 BLOCK_N=32" "flash_pipe WARPS=4 BLOCK_N=64 P_SPLIT=1" \
        "flash_pipe WARPS=4 BLOCK_N=64 P_SPLIT=0" "flash_pipe WARPS=8 BLOCK_N=64 P_SPLIT=0" \
        "flash_pipe WARPS=4 BLOCK_N=128 P_SPLIT=0"; do
      set -- $cfg
      eval_line "$round $cfg" attention_fwd "tasks/attention_fwd/$1.cu" --runs 10 --warmup 1 \
          $(shift && printf -- '--set %s ' "$@")
    done
  done | tee -a "$OUT/ab.txt"
}

anchors() { python3 bench/task_anchors.py "$@" | tee -a "$OUT/anchors.txt"; }
export -f eval_line ab attention_ab anchors  # for step's timeout, which runs programs, not functions

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUT/machine.txt"
echo "build $(cat .device/commit 2>/dev/null || echo unknown)" | tee -a "$OUT/machine.txt"
case ${1:-} in
  1)
    step 45 bash -c ab
    step 150 env KF_OPTIMIZE_EXTRA='--tune-budget 24' bash bench/task_library_run.sh 100 gemm_f16
    step 120 bash -c 'anchors "$@"' anchors gemm_f16 rmsnorm layernorm softmax_rows transpose_f32 reduce_sum
    step 215 bash bench/task_library_run.sh 30 rmsnorm layernorm softmax_rows transpose_f32 reduce_sum
    ;;
  2)  # the integration tests took ~350 s on an H100 (attention's eval test alone 119 s)
    step 40 sh -c '.device/kf_unit_tests --gtest_brief=1 > "$OUT/unit.txt" 2>&1'
    step 330 sh -c ".device/kf_integration_tests --gtest_filter='Cuda*:-Cuda/TaskLibrary.ShortOptimize*' \
        > \"\$OUT/integration.txt\" 2>&1"
    step 80 bash bench/task_library_run.sh 20 spmv_csr gemm_f32 ray_sphere
    step 80 env KF_OPTIMIZE_EXTRA='--runs 10' bash bench/task_library_run.sh 35 attention_fwd
    step 45 bash -c 'anchors "$@"' anchors spmv_csr gemm_f32 attention_fwd ray_sphere
    tail -n 3 "$OUT/unit.txt"
    grep -E '^\[  (FAILED|PASSED|SKIPPED) | ran\. ' "$OUT/integration.txt" | tail -n 40
    ;;
  3)
    step 120 bash bench/task_library_run.sh 30 rmsnorm layernorm softmax_rows transpose_f32 reduce_sum
    step 100 env KF_OPTIMIZE_EXTRA='--tune-budget 24' bash bench/task_library_run.sh 85 gemm_f16
    step 45 bash -c 'anchors "$@"' anchors gemm_f16 rmsnorm layernorm softmax_rows transpose_f32 reduce_sum
    ;;
  4)
    step 130 bash -c attention_ab
    step 95 env KF_OPTIMIZE_EXTRA='--runs 10' bash bench/task_library_run.sh 70 attention_fwd
    step 45 bash -c 'anchors "$@"' anchors attention_fwd
    ;;
  *)
    echo "usage: bash bench/library_call.sh 1|2|3|4" >&2
    exit 2
    ;;
esac
echo "== done in $(($(date +%s) - start)) s" | tee -a "$OUT/steps.txt"
