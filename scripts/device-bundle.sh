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
# The build's commit (and whether the tree had changes), for the figures' "build" line there.
git describe --always --dirty > .device/commit 2>/dev/null || echo unknown > .device/commit
if [ -n "${KF_BEFORE_BINARY:-}" ]; then strip -o .device/kfoundry-before "$KF_BEFORE_BINARY"; fi
# Every shared library the binaries load but the C runtime's own (libcurl brings a dozen the GPU
# machine may lack or have in other versions; built against Debian 12's glibc, they run on newer).
ldd build/src/kfoundry build/tests/kf_integration_tests | awk '/=> \//{print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
  grep -Ev '/libOpenCL\.so' |
  while read -r lib; do cp -L "$lib" .device/lib/; done
du -sh .device
