#!/usr/bin/env bash
# Sets up a fresh machine, builds kfoundry, and runs the main job on the default device (the
# first CUDA device, else the first OpenCL device): the bundled rope_llama3 baseline and a
# hand-improved kernel are each compiled, checked against the reference and timed against the
# baseline in the same process. Extra arguments go to `kfoundry eval` (e.g. --device opencl:0).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target kfoundry
build/src/kfoundry devices
echo
build/src/kfoundry eval rope_llama3 baseline "$@"
echo
build/src/kfoundry eval rope_llama3 rope_vec8 "$@"
