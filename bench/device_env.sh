# Sourced by the GPU machine's scripts (bench/device_run.sh, task_library_run.sh,
# library_call.sh), run from the repository root there with .device carried
# (scripts/device-bundle.sh): $OUT made, the carried libraries and binaries found, and the
# binaries (built here, with this checkout's paths baked in) pointed at this tree.
OUT=${OUT:-/tmp/kf-out}
mkdir -p "$OUT"
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi  # the tests' paths
export OUT LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KF_CACHE_DIR=/tmp/kf-cache KF_TEST_BINARY="$PWD/.device/kfoundry"
export KF_TASKS_DIR="$PWD/tasks" KF_RULES_DIR="$PWD/rules" KF_DESCRIPTORS="$PWD/descriptors/default.toml"
export kf=.device/kfoundry
