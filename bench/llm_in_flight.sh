#!/usr/bin/env bash
# Issue 13's figure: does the device stay busy while a slow model answers? The scripted chat server
# (tests/servers/chat_server.py) answers every request after DELAY seconds (default 1) with a kernel
# of its own; the same search runs with --in-flight 1 and --in-flight 8, one after the other, and
# the script prints each run's wall time, evaluations per second, the device's busy share and the
# most requests the server saw at once.
#   bench/llm_in_flight.sh [DELAY] [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/.."
delay=${1:-1} budget=${2:-40}
dir=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$dir"' EXIT
python3 - "$dir" "$delay" <<'PY'
import json, sys
d, delay = sys.argv[1], float(sys.argv[2])
kernel = open("tasks/rope_llama3/rope_vec4.cl").read()
reply = {"content": "```c\n// variant @@N@@\n" + kernel + "```\n", "substitute": True, "delay_s": delay}
json.dump({"default": reply}, open(f"{d}/script.json", "w"))
PY
python3 tests/servers/chat_server.py --script "$dir/script.json" --port-file "$dir/port" \
    --log "$dir/log.jsonl" > /dev/null &
server=$!
while [ ! -s "$dir/port" ]; do sleep 0.1; done
url="http://127.0.0.1:$(cat "$dir/port")/v1"
for n in 1 8; do
  : > "$dir/log.jsonl"
  KF_CACHE_DIR="$dir/cache" build/src/kfoundry optimize rope_llama3 --device opencl \
      --budget "$budget" --tune-budget 2 --top 1 --repeats 1 --store "sqlite:$dir/kf.db" \
      --run "f$n" --out "$dir/out" --proposer llm --llm-base-url "$url" --llm-model scripted \
      --no-meta --in-flight "$n" --json > "$dir/f$n.json" 2> "$dir/f$n.log"
  python3 - "$dir" "$n" <<'PY'
import json, sys
d, n = sys.argv[1], sys.argv[2]
j = json.load(open(f"{d}/f{n}.json")); t = j["totals"]
log = [json.loads(l) for l in open(f"{d}/log.jsonl")]
busy = j["devices"][0]["busy_fraction"]
print(f"--in-flight {n}: {t['judged_now']} evaluations in {t['seconds']:.1f} s = "
      f"{t['evaluations_per_second']:.2f}/s; device busy {100 * busy:.0f}%; "
      f"{len(log)} requests, at most {max(e['concurrent'] for e in log)} at once")
PY
done
