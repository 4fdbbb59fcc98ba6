#!/usr/bin/env bash
# Sets up a fresh machine, builds kfoundry, and runs the main job on the default device (the
# first CUDA device, else the first OpenCL device): `kfoundry optimize rope_llama3`, the search
# over the task's kernel templates and their mutations, each tuned, with a budget that finishes in
# a few minutes on a laptop CPU. The best kernel is re-verified, re-timed against the baseline and
# written to kfoundry-out/RUN/best.cu|.cl; the run is recorded in kfoundry.db (resumable).
# Extra arguments go to `kfoundry optimize` (e.g. --device opencl:0 --budget 200).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target kfoundry
build/src/kfoundry devices
echo
build/src/kfoundry optimize rope_llama3 --budget 100 "$@"
