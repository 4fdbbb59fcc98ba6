#!/usr/bin/env bash
# Runs kf_dist_throughput against a RabbitMQ and a PostgreSQL of its own (scripts/services.sh in a
# temporary folder on loopback, fsync on), stopped afterwards. Arguments go to the benchmark.
#   bench/dist/dist_throughput.sh [--jobs N] [--workers 1,2,4,8] [--window W] [--batch B]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${KF_BUILD_DIR:-$root/build}/bench/dist/kf_dist_throughput
dir=$(mktemp -d /tmp/kf-bench-dist.XXXXXX)
chmod 755 "$dir"
export KF_RABBITMQ_PORT=${KF_RABBITMQ_PORT:-26673}
KFOUNDRY_AMQP_PASSWORD=$(head -c 12 /dev/urandom | base64)
export KFOUNDRY_AMQP_PASSWORD
trap '"$root/scripts/services.sh" stop "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
"$root/scripts/services.sh" start "$dir" >/dev/null
export PGPASSFILE=$dir/postgres/pgpass
KF_TASKS_DIR=$root/tasks "$bench" "amqp://kfoundry@127.0.0.1:$KF_RABBITMQ_PORT/" "$(cat "$dir/postgres/url")" "$@"
