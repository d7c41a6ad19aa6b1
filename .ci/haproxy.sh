#!/usr/bin/env bash
# HAProxy in front of toolgate workers, for the tests and the benchmark:
#   .ci/haproxy.sh config PORT WORKER...        prints the configuration
#   .ci/haproxy.sh run DIR PORT WORKER...       writes DIR/haproxy.cfg, checks
#                                               it, and runs HAProxy in the
#                                               foreground (exec: the caller's
#                                               child is HAProxy itself)
# WORKER is HOST:PORT of a `toolgate mcp serve --http`. HAProxy listens on
# 127.0.0.1:PORT, as the user running this script, with no files outside DIR.
#
# The configuration is the example of docs/deployment.md (its ```haproxy
# block), with only the `bind` line and the `server` lines replaced: the
# tests run what the documentation shows, never a second copy.
#
# HAPROXY_AFFINITY=1 adds stickiness on the `Mcp-Session-Id` header and
# checks workers by TCP instead of `/readyz`, for developing against a
# toolgate whose workers keep MCP sessions in memory and have no `/readyz`;
# the documented deployment has neither.
#
# Needs Debian's `haproxy` package (.ci/run installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
doc="$root/docs/deployment.md"

haproxy_bin() {
  if command -v haproxy >/dev/null 2>&1; then
    command -v haproxy
  elif [ -x /usr/sbin/haproxy ]; then
    echo /usr/sbin/haproxy
  else
    echo "haproxy.sh: haproxy not found; install it (apt-get install haproxy, or run .ci/run)" >&2
    exit 1
  fi
}

config() { # config PORT WORKER...
  local port=$1
  shift
  [ "$#" -gt 0 ] || { echo "haproxy.sh: no workers given" >&2; exit 2; }
  local servers="" i=0
  for worker in "$@"; do
    i=$((i + 1))
    servers+="    server w$i $worker check"$'\n'
  done
  local stick=""
  if [ "${HAPROXY_AFFINITY:-0}" = 1 ]; then
    stick=$'    stick-table type string len 128 size 100k expire 30m\n'
    stick+=$'    stick on req.hdr(mcp-session-id)\n'
    stick+=$'    stick store-response res.hdr(mcp-session-id)\n'
  fi
  PORT="$port" SERVERS="$servers" STICK="$stick" AFFINITY="${HAPROXY_AFFINITY:-0}" awk '
    /^```haproxy$/ { inside = 1; found = 1; next }
    inside && /^```$/ { inside = 0; next }
    !inside { next }
    /^[ \t]*bind / { print "    bind 127.0.0.1:" ENVIRON["PORT"]; binds++; next }
    /^[ \t]*server / {
      if (!servers_done) { printf "%s", ENVIRON["SERVERS"]; servers_done = 1 }
      next
    }
    /^[ \t]*balance / { print; printf "%s", ENVIRON["STICK"]; next }
    ENVIRON["AFFINITY"] == 1 && /^[ \t]*(option httpchk|http-check)([ \t]|$)/ { next }
    { print }
    END {
      if (!found) { print "haproxy.sh: no ```haproxy block in docs/deployment.md" > "/dev/stderr"; exit 1 }
      if (binds != 1 || !servers_done) {
        print "haproxy.sh: the example in docs/deployment.md needs one bind line and server lines" > "/dev/stderr"
        exit 1
      }
    }
  ' "$doc"
}

case "${1:-}" in
  config)
    shift
    [ "$#" -ge 2 ] || { echo "usage: .ci/haproxy.sh config PORT WORKER..." >&2; exit 2; }
    config "$@"
    ;;
  run)
    shift
    [ "$#" -ge 3 ] || { echo "usage: .ci/haproxy.sh run DIR PORT WORKER..." >&2; exit 2; }
    dir=$1
    shift
    bin=$(haproxy_bin)
    mkdir -p "$dir"
    config "$@" >"$dir/haproxy.cfg"
    "$bin" -c -q -f "$dir/haproxy.cfg"
    cd "$dir"
    exec "$bin" -db -f "$dir/haproxy.cfg"
    ;;
  *)
    echo "usage: .ci/haproxy.sh config PORT WORKER... | run DIR PORT WORKER..." >&2
    exit 2
    ;;
esac
