#!/usr/bin/env bash
# A RabbitMQ broker of our own on loopback, from Debian's rabbitmq-server, for the distributed
# roles and the `dist` tests: its node name, ports, data, logs and Erlang cookie all live in DIR,
# so it runs beside any system broker and as any user (root included: it never switches user).
#
#   scripts/services-rabbitmq.sh start|stop|status [DIR]     (DIR: default .services/rabbitmq)
#
# Environment: KF_RABBITMQ_PORT (AMQP port, default 5672; the Erlang distribution port is it +
# 20000 and epmd's it + 10000, so two brokers on different ports share nothing), KF_RABBITMQ_USER
# (default kfoundry), KFOUNDRY_AMQP_PASSWORD (that user's password; generated at the first start
# when unset and kept in DIR/password, mode 600). The password is never printed: `start` prints
# the URL without it and where it is kept.
set -euo pipefail

cmd=${1:-}
dir=${2:-.services/rabbitmq}
bin=/usr/lib/rabbitmq/bin  # the scripts themselves: /usr/sbin's wrappers switch to the rabbitmq user
port=${KF_RABBITMQ_PORT:-5672}
user=${KF_RABBITMQ_USER:-kfoundry}

usage() { echo "usage: scripts/services-rabbitmq.sh start|stop|status [DIR]" >&2; exit 2; }
[ -n "$cmd" ] || usage

[ "$cmd" = start ] && mkdir -p "$dir/log" "$dir/mnesia"
[ -d "$dir" ] && dir=$(cd "$dir" && pwd)
# A started broker remembers its port in DIR/port, so stop and status need only DIR.
if [ "$cmd" != start ] && [ -f "$dir/port" ]; then port=$(cat "$dir/port"); fi
node="kf$port@localhost"
export HOME="$dir"  # the Erlang cookie (DIR/.erlang.cookie) is shared by the server and rabbitmqctl
export RABBITMQ_NODENAME="$node" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$port"
export RABBITMQ_DIST_PORT=$((port + 20000)) ERL_EPMD_PORT=$((port + 10000)) ERL_EPMD_ADDRESS=127.0.0.1
export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" RABBITMQ_MNESIA_BASE="$dir/mnesia"
export RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/pid" ERL_CRASH_DUMP="$dir/erl_crash.dump"

ctl() { "$bin/rabbitmqctl" --node "$node" "$@"; }

running() { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }

start() {
  if [ ! -x "$bin/rabbitmq-server" ]; then
    echo "services-rabbitmq: rabbitmq-server is not installed (scripts/setup.sh --tests)" >&2
    exit 1
  fi
  if running; then echo "services-rabbitmq: already running (pid $(cat "$dir/pid"))" >&2; exit 1; fi
  umask 077
  local password=${KFOUNDRY_AMQP_PASSWORD:-}
  if [ -z "$password" ]; then
    [ -f "$dir/password" ] || head -c 18 /dev/urandom | base64 | tr '+/' '-_' >"$dir/password"
    password=$(cat "$dir/password")
  fi
  echo "$port" >"$dir/port"
  : >"$dir/rabbitmq-env.conf"
  echo "[]." >"$dir/enabled_plugins"
  # The default user is created at the first boot only; later starts keep the stored one.
  cat >"$dir/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$port
default_user = $user
default_pass = $password
loopback_users = none
disk_free_limit.absolute = 50MB
log.console = false
log.file.level = warning
EOF
  # epmd first, on our port, and answering: a node that starts it itself may register before it
  # listens (seen: "nodistribution" at the first boot).
  epmd -daemon -port "$ERL_EPMD_PORT" -address 127.0.0.1
  for _ in $(seq 50); do epmd -port "$ERL_EPMD_PORT" -names >/dev/null 2>&1 && break; sleep 0.1; done
  setsid "$bin/rabbitmq-server" >"$dir/log/startup.log" 2>&1 </dev/null &
  local server=$!
  # The pid file appears once the VM runs; the broker accepts clients when `ping` answers.
  for _ in $(seq 120); do
    if ! kill -0 "$server" 2>/dev/null; then
      echo "services-rabbitmq: the broker exited at start; see $dir/log/startup.log:" >&2
      tail -n 20 "$dir/log/startup.log" >&2
      epmd -port "$ERL_EPMD_PORT" -kill >/dev/null 2>&1 || true
      exit 1
    fi
    running && ctl await_startup --timeout 60 >/dev/null 2>&1 && break
    sleep 0.5
  done
  ctl ping >/dev/null 2>&1 || { echo "services-rabbitmq: the broker did not start in time" >&2; exit 1; }
  echo "amqp://$user@127.0.0.1:$port/  (password: KFOUNDRY_AMQP_PASSWORD or $dir/password)"
}

stop() {
  if ! running; then echo "services-rabbitmq: not running ($dir)" >&2; return 0; fi
  ctl stop "$dir/pid" >/dev/null 2>&1 || kill "$(cat "$dir/pid")"
  # The epmd this broker started listens on our own port; end it too (only it: by its port).
  epmd -port "$ERL_EPMD_PORT" -kill >/dev/null 2>&1 || true
  rm -f "$dir/pid"
  echo "services-rabbitmq: stopped $node"
}

status() {
  if running && ctl ping >/dev/null 2>&1; then
    echo "rabbitmq: running, amqp://$user@127.0.0.1:$port/ (pid $(cat "$dir/pid"))"
  else
    echo "rabbitmq: not running ($dir)"
    return 3
  fi
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
