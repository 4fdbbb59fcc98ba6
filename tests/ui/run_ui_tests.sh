#!/usr/bin/env bash
# The report and the dashboard in headless Chromium, on a real PoCL run (ctest: ReportUi):
#   1. `kfoundry report` of a finished run opens offline: no console error, no request but its
#      own file, the archive's cells in the heat map, a clicked cell shows that kernel's source,
#      a screenshot that is not blank;
#   2. `kfoundry serve` shows the store's runs and the same page for the run, its kernels'
#      sources fetched from /api/;
#   3. a gemm_f32 run's roofline draws both ceilings (copy bandwidth, compute peak);
#   4. while a second run is going, its page refreshes as its evaluations land.
# Usage: run_ui_tests.sh KFOUNDRY WORKDIR. Exits 77 (skipped) without Chromium, its driver or
# selenium.
set -euo pipefail
kf=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
ui() { "$here/report_ui.py" "$@"; }

for need in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$need" ] || { echo "skipped: $need is not installed (scripts/setup.sh installs it)" >&2; exit 77; }
done
/usr/bin/python3 -c "import selenium" 2>/dev/null ||
  { echo "skipped: python3-selenium is not installed (scripts/setup.sh installs it)" >&2; exit 77; }

rm -rf "$work" && mkdir -p "$work"
store="sqlite:$work/kf.db"
"$kf" optimize rope_llama3 --device opencl --budget 12 --tune-budget 3 --top 2 --repeats 1 \
  --store "$store" --run r1 --out "$work/out" --json >"$work/r1.json" 2>"$work/r1.err" ||
  { cat "$work/r1.err" >&2; exit 1; }
cells=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['archive']))" "$work/r1.json")
echo "run r1: $cells archive cells"

echo "== the report, offline"
"$kf" report r1 --store "$store" -o "$work/r1.html"
ui "file://$work/r1.html" --offline --expect-cells "$cells" --screenshot "$work/report.png"

echo "== the roofline of a task with FLOPs: bandwidth and compute ceilings"
"$kf" optimize gemm_f32 --device opencl --budget 4 --tune-budget 1 --top 1 --repeats 1 \
  --store "$store" --run g1 --out "$work/out" --json >"$work/g1.json" 2>"$work/g1.err" ||
  { cat "$work/g1.err" >&2; exit 1; }
"$kf" report g1 --store "$store" -o "$work/g1.html"
ui "file://$work/g1.html" --offline --expect-ceilings --screenshot "$work/roofline.png"

echo "== the dashboard"
"$kf" serve --store "$store" --port 0 >"$work/serve.out" 2>"$work/serve.err" &
serve=$!
trap 'kill $serve 2>/dev/null || true; kill $run2 2>/dev/null || true' EXIT
run2=""
for _ in $(seq 100); do
  grep -q "http://" "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.out") ||
  { echo "serve did not start:" >&2; cat "$work/serve.err" >&2; exit 1; }
ui "$base/" --expect-runs 2 --expect-cells 0 --screenshot "$work/index.png"
ui "$base/runs/r1" --api "$base" --run r1 --expect-cells "$cells" --screenshot "$work/serve.png"

echo "== a run that is going"
# A proposer that takes a second a proposal keeps the run going while the page watches it.
"$kf" optimize rope_llama3 --device opencl --budget 40 --tune-budget 2 --top 1 --repeats 1 \
  --store "$store" --run r2 --out "$work/out" --proposer command \
  --proposer-cmd "/usr/bin/python3 $here/../../examples/proposers/param_walk.py --delay 1 --templates" \
  >"$work/r2.out" 2>"$work/r2.err" &
run2=$!
# Once its archive has a cell (the baseline's), the page has something to click.
for _ in $(seq 600); do
  /usr/bin/python3 -c "import json,sys,urllib.request as u; sys.exit(not any(r['name'] == 'r2' and r['best_speedup'] for r in json.load(u.urlopen(sys.argv[1]))['runs']))" "$base/api/runs" 2>/dev/null && break
  sleep 0.1
done
ui "$base/runs/r2" --api "$base" --run r2 --expect-growth 60 --screenshot "$work/live.png"
wait "$run2" || { echo "run r2 failed:" >&2; tail -20 "$work/r2.err" >&2; exit 1; }
echo "ui: all passed"
