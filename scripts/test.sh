#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs the whole test suite:
#   1. unit + integration tests (real kernels on PoCL; CUDA tests skip without an NVIDIA GPU),
#   2. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer,
#   3. the style checks (clang-format everywhere, clang-tidy on changed sources).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKF_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKF_SANITIZE=ON -DKF_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build-asan -j "$jobs" --target kf_unit_tests
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
(cd build-asan && ctest -L unit --output-on-failure -j "$jobs")

scripts/lint.sh
