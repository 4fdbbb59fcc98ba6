#!/usr/bin/env bash
# One GPU-machine call for issue 34 and this build's CUDA suite (~450 s on an H100; run from the
# repository root there with .device carried, after scripts/device-bundle.sh here):
#   1. the unit tests (NVRTC builds every CUDA corpus kernel, ghost kernel and peak kernel);
#   2. the CUDA corpus: every verdict, issue 34's attacks included (copy_reference.cu must be
#      `incorrect`, not `crash`; tf32_mma.cu and fp16_inputs.cu must name the precision), and the
#      ghost replay against a leaking harness;
#   3. the rest of the CUDA integration tests (the library's short optimizes and attention's
#      100 s eval test left out: bench/library_call.sh 2 and bench/attention_call.sh run them);
#   4. gemm_f16's wgmma templates at the size of record must stay `ok` under the FLOP floor
#      (wgmma may beat the mma.sync peak the floor is measured with);
#   5. the device's measured peak FLOP/s per class, as cached by the executor.
# Writes $OUT/unit.txt, corpus.txt, integration.txt, evals.txt, peaks.txt.
set -uo pipefail
source bench/device_env.sh
step() {
  local limit=$1
  shift
  timeout "$limit" "$@"
  echo "== step done (rc $?) at $SECONDS s"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUT/machine.txt"
echo "build $(cat .device/commit 2>/dev/null || echo unknown)" | tee -a "$OUT/machine.txt"

step 60 sh -c '.device/kf_unit_tests --gtest_brief=1 > "$OUT/unit.txt" 2>&1'
tail -n 3 "$OUT/unit.txt"
step 130 sh -c ".device/kf_integration_tests --gtest_filter='Cuda/Corpus.*' > \"\$OUT/corpus.txt\" 2>&1"
grep -E '^\[  (FAILED|PASSED|SKIPPED|     OK) |Failure|verdict' "$OUT/corpus.txt" | tail -n 40
step 220 sh -c ".device/kf_integration_tests --gtest_filter='Cuda*:-Cuda/Corpus.*:Cuda/TaskLibrary.ShortOptimize*:Cuda/TaskLibrary.ReferenceBaselineAndEveryTemplatePassEval/attention_fwd' > \"\$OUT/integration.txt\" 2>&1"
grep -E '^\[  (FAILED|PASSED|SKIPPED) | ran\. ' "$OUT/integration.txt" | tail -n 40
for k in gemm_wgmma gemm_wgmma_ws; do
  step 60 $kf eval gemm_f16 "tasks/gemm_f16/$k.cu" --device cuda --sizes record --runs 10 --json \
      > "$OUT/eval.json" 2> "$OUT/eval_err.txt"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); t=j.get('time_ms') or {};
print('$k', j['status'], t.get('median'), j.get('reason', '')[:300])" "$OUT/eval.json"
done 2>&1 | tee "$OUT/evals.txt"
for f in /tmp/kf-cache/compute-*.json; do echo "$f"; cat "$f"; echo; done 2>&1 | tee "$OUT/peaks.txt"
