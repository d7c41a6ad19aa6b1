#!/usr/bin/env bash
# Gateway benchmark: `toolgate mcp serve --http` workers, 1 and 3 of them
# behind HAProxy (the configuration of docs/deployment.md, .ci/haproxy.sh),
# with the SQLite store and with PostgreSQL, beside the Node
# `@modelcontextprotocol/server-everything` over streamable HTTP, in the same
# run, all driven by the same Rust client (bench/gateway_driver.rs) with
# CLIENTS concurrent MCP sessions.
#
#   bench/gateway.sh [TOOLGATE_BINARY] [CALLS_PER_CLIENT]
#       TOOLGATE_BINARY   default target/release/toolgate (build it first:
#                         cargo build --release --locked -p toolgate-cli)
#       CALLS_PER_CLIENT  default 300
#   CLIENTS=32            concurrent clients (default 32)
#   ROUNDS=3              rounds; each measures every row once, in turn, so
#                         a slow spell on a shared machine hits all rows;
#                         the table shows medians over the rounds
#   GATEWAY_DRIVER=path   the driver binary (default: the release example,
#                         built when missing)
#
# Needs python3, Debian's postgresql and haproxy, and the Node peers
# (.ci/run installs them all). Each toolgate worker serves `read_file` of a
# 2 KiB file; server-everything serves `echo`: both the cheapest real call
# of their server. One SQLite store is shared by the SQLite workers (one
# machine, one file); the PostgreSQL workers share a database on a
# throw-away server (.ci/pg.sh, fsync off). Workers without /readyz (a
# toolgate before stateless workers) are put behind HAProxy with session
# affinity instead, and the table says so.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
TOOLGATE=${1:-$TARGET/release/toolgate}
CALLS=${2:-300}
CLIENTS=${CLIENTS:-32}
ROUNDS=${ROUNDS:-3}
DRIVER=${GATEWAY_DRIVER:-$TARGET/release/examples/gateway_driver}
PEERS=${TOOLGATE_MCP_PEERS:-$PWD/.ci}
EVERYTHING="$PEERS/node/node_modules/.bin/mcp-server-everything"
TOKEN=bench-token-0123456789abcdef

[ -x "$TOOLGATE" ] || { echo "no toolgate binary at $TOOLGATE (cargo build --release --locked -p toolgate-cli)" >&2; exit 1; }
[ -x "$EVERYTHING" ] || { echo "missing $EVERYTHING: run .ci/run first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }
if [ ! -x "$DRIVER" ]; then
  if [ -n "${GATEWAY_DRIVER:-}" ]; then
    echo "no driver at $DRIVER" >&2
    exit 1
  fi
  cargo build -q --release --locked -p toolgate-cli --example gateway_driver
fi

DIR=$(mktemp -d)
# Beside DIR, not in it: as root, .ci/pg.sh runs the server as an
# unprivileged user, who cannot enter mktemp's private directory.
PG_DIR="${TMPDIR:-/tmp}/toolgate-pg-bench-$$"
PIDS=()
stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}
cleanup() {
  stop_all
  TOOLGATE_PG_DIR="$PG_DIR" .ci/pg.sh stop || true
  rm -rf "$DIR"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for FILE TEXT: until FILE holds TEXT (a process's readiness line).
wait_for() {
  local i
  for i in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "gateway.sh: no \"$2\" in $1 within 30 s:" >&2
  tail -n 20 "$1" >&2
  exit 1
}

# The throw-away PostgreSQL and its database.
PG_URL=$(TOOLGATE_PG_DIR="$PG_DIR" .ci/pg.sh start)
psql -q "$PG_URL" -c "CREATE DATABASE toolgate_bench" >/dev/null
PG_DB="${PG_URL%/*}/toolgate_bench"

for i in $(seq 1 64); do echo "line $i: fn main() { println!(\"hello\"); }"; done > "$DIR/hello.txt"
for store in sqlite postgres; do
  mkdir -p "$DIR/$store/ws" "$DIR/$store/home"
  cp "$DIR/hello.txt" "$DIR/$store/ws/"
done
printf 'store:\n  url: %s\n  password_env: BENCH_PG_PASSWORD\n' "$PG_DB" > "$DIR/postgres/ws/toolgate.yaml"

# toolgate as a worker of STORE runs it: that store's workspace and home,
# nothing from the caller's environment.
tg() { # tg STORE ARGS...
  local store=$1
  shift
  env -i PATH="$PATH" HOME="$DIR/$store/home" TOOLGATE_TRUST_WORKSPACE=1 \
    BENCH_TOKEN="$TOKEN" BENCH_PG_PASSWORD=unused \
    "$TOOLGATE" --workspace "$DIR/$store/ws" "$@"
}
tg postgres store migrate >/dev/null 2>"$DIR/migrate.log" || { cat "$DIR/migrate.log" >&2; exit 1; }

# start_workers STORE N: N workers; their addresses in WORKERS.
start_workers() {
  local store=$1 n=$2 i port log
  WORKERS=()
  for i in $(seq 1 "$n"); do
    port=$(free_port)
    log="$DIR/$store-w$i-$n.log"
    # exec: the pid kept is the worker's own, so SIGTERM reaches it.
    (exec env -i PATH="$PATH" HOME="$DIR/$store/home" TOOLGATE_TRUST_WORKSPACE=1 \
      BENCH_TOKEN="$TOKEN" BENCH_PG_PASSWORD=unused \
      "$TOOLGATE" --workspace "$DIR/$store/ws" \
      mcp serve --http "127.0.0.1:$port" --token-env BENCH_TOKEN) 2>"$log" &
    PIDS+=($!)
    wait_for "$log" "listening on"
    WORKERS+=("127.0.0.1:$port")
  done
}

# Stateless workers serve /readyz; older ones need affinity.
AFFINITY=0
start_workers sqlite 1
if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://${WORKERS[0]}/readyz")" != 200 ]; then
  AFFINITY=1
  echo "gateway.sh: this toolgate's workers have no /readyz (MCP sessions in memory): HAProxy gets session affinity" >&2
fi
stop_all

# behind_haproxy NAME: HAProxy in front of WORKERS; its URL in URL.
behind_haproxy() {
  local front
  front=$(free_port)
  HAPROXY_AFFINITY=$AFFINITY .ci/haproxy.sh run "$DIR/haproxy-$1" "$front" "${WORKERS[@]}" \
    >/dev/null 2>"$DIR/haproxy-$1.log" &
  PIDS+=($!)
  URL="http://127.0.0.1:$front/mcp"
}

RESULTS=()
measure() { # measure NAME URL TOOL ARGS
  local out
  out=$("$DRIVER" --url "$2" --token "$TOKEN" --tool "$3" --args "$4" \
    --clients "$CLIENTS" --calls "$CALLS")
  echo "  $1: $out" >&2
  RESULTS+=("$1" "$out")
}

READ='{"path":"hello.txt"}'
echo "gateway benchmark: $CLIENTS clients x $CALLS calls, $ROUNDS rounds, $TOOLGATE" >&2

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round of $ROUNDS" >&2
  start_workers sqlite 1
  measure "toolgate, 1 worker, SQLite, direct" "http://${WORKERS[0]}/mcp" read_file "$READ"
  behind_haproxy sqlite-1
  measure "toolgate, 1 worker, SQLite, HAProxy" "$URL" read_file "$READ"
  stop_all

  start_workers sqlite 3
  behind_haproxy sqlite-3
  measure "toolgate, 3 workers, SQLite, HAProxy" "$URL" read_file "$READ"
  stop_all

  start_workers postgres 1
  behind_haproxy postgres-1
  measure "toolgate, 1 worker, PostgreSQL, HAProxy" "$URL" read_file "$READ"
  stop_all

  start_workers postgres 3
  behind_haproxy postgres-3
  measure "toolgate, 3 workers, PostgreSQL, HAProxy" "$URL" read_file "$READ"
  stop_all

  port=$(free_port)
  PORT=$port "$EVERYTHING" streamableHttp >"$DIR/everything.log" 2>&1 &
  PIDS+=($!)
  measure "server-everything (Node $(node --version)), direct" "http://127.0.0.1:$port/mcp" echo '{"message":"hi"}'
  stop_all
done

python3 - "$AFFINITY" "$(nproc)" "$ROUNDS" "${RESULTS[@]}" <<'PY'
import json, statistics, sys
affinity, cores, rounds = sys.argv[1] == "1", sys.argv[2], int(sys.argv[3])
pairs = sys.argv[4:]
names, runs = [], {}
for i in range(0, len(pairs), 2):
    name = pairs[i]
    if name not in runs:
        names.append(name)
        runs[name] = []
    runs[name].append(json.loads(pairs[i + 1]))
def med(name, key):
    return statistics.median(r[key] for r in runs[name])
base, node = med(names[0], "calls_per_sec"), med(names[-1], "calls_per_sec")
fmt = "{:52}{:>10}{:>9}{:>9}{:>8}{:>10}{:>9}"
print(fmt.format("", "calls/s", "p50 ms", "p99 ms", "errors", "vs first", "vs Node"))
for name in names:
    rate = med(name, "calls_per_sec")
    errors = sum(r["errors"] for r in runs[name])
    print(fmt.format(name, f"{rate:.0f}", f"{med(name, 'p50_ms'):.2f}", f"{med(name, 'p99_ms'):.2f}",
                     errors, f"{rate / base:.2f}x", f"{rate / node:.2f}x"))
first = runs[names[0]][0]
print(f"medians of {rounds} rounds; {first['clients']} clients, {first['calls']} timed calls per row "
      f"and round; {cores} cores"
      + ("; HAProxy with session affinity (workers without /readyz)" if affinity else "; HAProxy without affinity"))
PY
