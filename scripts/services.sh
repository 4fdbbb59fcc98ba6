#!/usr/bin/env bash
# The services a distributed run needs, from Debian's packages, on loopback only, kept in one
# folder: start prints the URL of each, stop stops by pid what start started, status says which
# run. One function per service (postgres_*, rabbitmq_*); DIR defaults to
# /tmp/kfoundry-services-$USER. Run as root, PostgreSQL runs as its own unprivileged user.
#
#   scripts/services.sh start|stop|status [DIR] [postgres|rabbitmq ...]   (default: both)
#
# RabbitMQ: scripts/services-rabbitmq.sh with DIR/rabbitmq (its node, ports, cookie and data
# there; KF_RABBITMQ_PORT, KFOUNDRY_AMQP_PASSWORD as that script says).
#
# PostgreSQL: initdb into DIR/postgres/data (once), a unix socket in DIR/postgres, TCP on
# 127.0.0.1 (the first free port from 5433), fsync and synchronous commit on. The role and database
# are `kfoundry`; its password is generated and kept only in DIR/postgres/pgpass (mode 0600), which
# libpq reads through PGPASSFILE: it is never on a command line. DIR/postgres/url holds the URL.
set -euo pipefail

# Runs a command as the server's user: ourselves, or `postgres` when we are root (the server
# refuses to run as root).
as_service_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$1" -- "${@:2}"; else "${@:2}"; fi
}

# Debian's server binaries (the newest version installed), else pg_ctl on PATH; KF_POSTGRES_BIN
# names the folder instead.
postgres_bin() {
  local dir
  if [ -n "${KF_POSTGRES_BIN:-}" ]; then
    [ -x "$KF_POSTGRES_BIN/pg_ctl" ] && echo "$KF_POSTGRES_BIN"
    return
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && { echo "$dir"; return; }
  done
  command -v pg_ctl >/dev/null && command -v initdb >/dev/null && dirname "$(command -v pg_ctl)"
}

postgres_user() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }

free_port() {
  local port
  for port in $(seq "$1" $(($1 + 200))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
  return 1
}

postgres_start() {
  local dir=$1/postgres bin user port
  bin=$(postgres_bin) || true
  if [ -z "$bin" ]; then
    echo "services: no PostgreSQL server binaries (apt-get install postgresql)" >&2
    return 3
  fi
  user=$(postgres_user)
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ "$(id -u)" -ne 0 ] || chown "$user:" "$dir"
  if ! as_service_user "$user" test -w "$dir"; then
    echo "services: $dir is not reachable by the user '$user' (pick a DIR under /tmp)" >&2
    return 2
  fi
  if as_service_user "$user" "$bin/pg_ctl" status -D "$dir/data" >/dev/null 2>&1; then
    echo "postgres: already running" >&2
    postgres_print "$dir"
    return
  fi
  local fresh=0
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    fresh=1
    local password
    password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
    (umask 077 && printf '%s\n' "$password" >"$dir/pwfile" &&
      printf '127.0.0.1:*:*:kfoundry:%s\n' "$password" >"$dir/pgpass")
    [ "$(id -u)" -ne 0 ] || chown "$user:" "$dir/pwfile"
    as_service_user "$user" "$bin/initdb" -D "$dir/data" -U kfoundry --pwfile="$dir/pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; rm -f "$dir/pwfile"; return 1; }
    rm -f "$dir/pwfile"
  fi
  # Another server may take a free port between our look and its bind: try the next one.
  port=$(free_port 5433)
  local tries=0
  until as_service_user "$user" "$bin/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=on -c synchronous_commit=on" \
    >/dev/null; do
    tries=$((tries + 1))
    if ((tries >= 5)); then
      tail -n 20 "$dir/server.log" >&2
      return 1
    fi
    port=$(free_port $((port + 1)))
  done
  if ((fresh)); then
    as_service_user "$user" "$bin/createdb" -h "$dir" -p "$port" -U kfoundry kfoundry
  fi
  echo "postgresql://kfoundry@127.0.0.1:$port/kfoundry" >"$dir/url"
  postgres_print "$dir"
}

postgres_print() {
  echo "postgres: $(cat "$1/url")  (password: export PGPASSFILE=$1/pgpass)"
}

postgres_stop() {
  local dir=$1/postgres bin
  bin=$(postgres_bin) || true
  [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ] || return 0
  as_service_user "$(postgres_user)" "$bin/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null
  rm -f "$dir/url"
  echo "postgres: stopped" >&2
}

postgres_status() {
  local dir=$1/postgres bin
  bin=$(postgres_bin) || true
  if [ -n "$bin" ] && [ -f "$dir/url" ] &&
    as_service_user "$(postgres_user)" "$bin/pg_ctl" status -D "$dir/data" >/dev/null 2>&1; then
    postgres_print "$dir"
  else
    echo "postgres: not running"
    return 1
  fi
}

rabbitmq() { "$(dirname "$0")/services-rabbitmq.sh" "$1" "$2/rabbitmq"; }
rabbitmq_start() { rabbitmq start "$1"; }
rabbitmq_stop() { rabbitmq stop "$1"; }
rabbitmq_status() { rabbitmq status "$1"; }

usage() {
  echo "usage: scripts/services.sh start|stop|status [DIR] [postgres|rabbitmq ...]" >&2
  exit 2
}
command=${1:-}
case "$command" in start | stop | status) ;; *) usage ;; esac
dir=${2:-/tmp/kfoundry-services-$(id -un)}
shift $(($# < 2 ? $# : 2))
services=("$@")
((${#services[@]})) || services=(postgres rabbitmq)
[ "$command" != start ] || mkdir -p "$dir"
[ ! -d "$dir" ] || dir=$(cd "$dir" && pwd)
rc=0
for service in "${services[@]}"; do
  case "$service" in postgres | rabbitmq) ;; *) usage ;; esac
  "${service}_${command}" "$dir" || rc=$?
done
exit "$rc"
