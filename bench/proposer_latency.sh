#!/usr/bin/env bash
# Issue 11's criterion: does a slow proposer leave the device idle? `kfoundry optimize` on the
# first OpenCL device with the example command proposer (examples/proposers/param_walk.py)
# answering at once, then after DELAY seconds, both with --in-flight 8, the same binary, one run
# after the other; prints each run's evaluations per second and the ratio.
#   bench/proposer_latency.sh [BUDGET [DELAY [IN_FLIGHT]]]      (defaults 60, 2, 8)
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-60} delay=${2:-2} in_flight=${3:-8}
kf=build/src/kfoundry
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for d in 0 "$delay"; do
  $kf optimize rope_llama3 --device opencl --budget "$budget" --in-flight "$in_flight" \
      --proposer command --proposer-cmd "python3 examples/proposers/param_walk.py --delay $d" \
      --store "sqlite:$dir/kf.db" --run "delay$d" --top 1 --repeats 1 --out "$dir/out" --json \
      > "$dir/delay$d.json" 2> "$dir/delay$d.log"
done
python3 - "$dir" "$delay" <<'PY'
import json, sys
d, delay = sys.argv[1], sys.argv[2]
rate = {}
for k in ["0", delay]:
    j = json.load(open(f"{d}/delay{k}.json"))
    t = j["totals"]
    rate[k] = t["evaluations_per_second"]
    print(f"proposer delay {k} s: {t['judged_now']} evaluations in {t['seconds']:.1f} s = "
          f"{rate[k]:.3f}/s; proposals {t['proposal_states']}; device busy "
          f"{j['devices'][0]['busy_fraction']:.2f}; best {j['best']['speedup_median'] if j['best'] else None}")
print(f"ratio (delay {delay} s / instant): {rate[delay] / rate['0']:.3f}")
PY
