#!/usr/bin/env bash
# Builds here and gathers what the GPU machine (Ubuntu 24.04, no package registry) needs into
# .device/: the stripped kfoundry and test binaries, and the shared libraries it may lack.
# bench/device_run.sh runs there with `.device` carried. With KF_BEFORE_BINARY=PATH, that
# kfoundry (an earlier build, for before/after figures) goes along as .device/kfoundry-before.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target kfoundry kf_unit_tests kf_integration_tests
rm -rf .device && mkdir -p .device/lib
for b in build/src/kfoundry build/tests/kf_unit_tests build/tests/kf_integration_tests; do
  strip -o ".device/$(basename "$b")" "$b"
done
if [ -n "${KF_BEFORE_BINARY:-}" ]; then strip -o .device/kfoundry-before "$KF_BEFORE_BINARY"; fi
for lib in libfmt.so.9 libtomlplusplus.so.3 libxxhash.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" .device/lib/
done
du -sh .device
