#!/usr/bin/env bash
# Runs kf_amqp_throughput against a broker of its own (scripts/services-rabbitmq.sh in a
# temporary folder on loopback), stopped afterwards. Arguments go to the benchmark.
#   bench/dist/amqp_throughput.sh [--messages N] [--consumers 1,2,4,8] [--prefetch P] [--window W]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${KF_BUILD_DIR:-$root/build}/bench/dist/kf_amqp_throughput
dir=$(mktemp -d /tmp/kf-bench-broker.XXXXXX)
export KF_RABBITMQ_PORT=${KF_RABBITMQ_PORT:-26672}
KFOUNDRY_AMQP_PASSWORD=$(head -c 12 /dev/urandom | base64)
export KFOUNDRY_AMQP_PASSWORD
trap '"$root/scripts/services-rabbitmq.sh" stop "$dir" >/dev/null; rm -rf "$dir"' EXIT
"$root/scripts/services-rabbitmq.sh" start "$dir" >/dev/null
"$bench" "amqp://kfoundry@127.0.0.1:$KF_RABBITMQ_PORT/" "$@"
