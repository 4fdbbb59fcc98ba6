#!/usr/bin/env bash
# Issue 12's PoCL figure: evaluations per second of the README's main command (`kfoundry optimize
# rope_llama3 --budget 100` on the first OpenCL device), for two builds one after the other:
#   bench/pocl_main_command.sh BEFORE_KFOUNDRY [AFTER_KFOUNDRY]   (AFTER defaults to this build)
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=${2:-build/src/kfoundry}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for which in before after; do
  bin=${!which}
  KF_CACHE_DIR="$dir/cache-$which" "$bin" optimize rope_llama3 --device opencl --budget 100 \
      --store "sqlite:$dir/kf.db" --run "$which" --out "$dir/out" --json > "$dir/$which.json" 2> "$dir/$which.log"
done
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
rate = {}
for k in ["before", "after"]:
    j = json.load(open(f"{d}/{k}.json")); t = j["totals"]
    rate[k] = t["evaluations_per_second"]
    b = j["best"] or {}
    print(f"{k}: {t['judged_now']} evaluations in {t['seconds']:.1f} s = {rate[k]:.3f}/s; cells {t['cells_filled']}; "
          f"best {b.get('speedup_median')} ({b.get('kernel')}); mean phase ms {t.get('mean_phase_ms')}")
print(f"ratio after/before: {rate['after'] / rate['before']:.2f}")
PY
