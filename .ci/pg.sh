#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests of the PostgreSQL store:
#   .ci/pg.sh start   initdb + pg_ctl in a temporary directory, on 127.0.0.1
#                     and a free port; prints the URL (idempotent)
#   .ci/pg.sh url     prints the URL of the running server
#   .ci/pg.sh stop    stops it and deletes its directory
# The tests read the URL from TOOLGATE_TEST_PG_URL:
#   export TOOLGATE_TEST_PG_URL=$(.ci/pg.sh start)
# Needs Debian's `postgresql` package (initdb, pg_ctl). initdb refuses to
# run as root: as root, the server runs as the unprivileged user
# `toolgate-pg`, created if missing. Authentication is `trust`, on
# 127.0.0.1 only: a test server, never a real one.
set -euo pipefail

dir="${TOOLGATE_PG_DIR:-${TMPDIR:-/tmp}/toolgate-pg-$(id -u)}"
user=toolgate-pg

bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return
  fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
    echo "pg.sh: initdb not found; install PostgreSQL (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "$found"
}

as_owner() { # run a command as the user owning the server
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

running() {
  [ -f "$dir/url" ] && as_owner "$(bindir)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case "${1:-}" in
  start)
    if running; then
      cat "$dir/url"
      exit 0
    fi
    bin=$(bindir)
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then
      if ! id "$user" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
      fi
      chown "$user" "$dir"
      chmod 0700 "$dir"
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U toolgate --auth=trust -E UTF8 --no-locale \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(free_port)
    # fsync off: the data is thrown away; the tests measure behaviour, not
    # durability. Many tests run at once, each with its own database.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://toolgate@127.0.0.1:$port/postgres" | as_owner tee "$dir/url" >/dev/null
    cat "$dir/url"
    ;;
  url)
    if ! running; then
      echo "pg.sh: no test server is running; start one with .ci/pg.sh start" >&2
      exit 1
    fi
    cat "$dir/url"
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: .ci/pg.sh start|url|stop" >&2
    exit 2
    ;;
esac
