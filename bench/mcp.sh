#!/usr/bin/env bash
# MCP server benchmark: `toolgate mcp serve` vs the reference Node
# `@modelcontextprotocol/server-filesystem`, on the same directory, driven by
# the same Rust client (bench/mcp_driver.rs), in the same run.
#
#   bench/mcp.sh [CALLS] [RUNS]      (peers from .ci/run, or $TOOLGATE_MCP_PEERS)
#   MCP_CLIENT=rmcp bench/mcp.sh     (drive both through rmcp's client instead
#                                     of the lean one; see bench/mcp_driver.rs)
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS=${1:-5000}
CLIENT=${MCP_CLIENT:-lean}
RUNS=${2:-15}
PEERS=${TOOLGATE_MCP_PEERS:-$PWD/.ci}
NODE_FS="$PEERS/node/node_modules/.bin/mcp-server-filesystem"
[ -x "$NODE_FS" ] || { echo "missing $NODE_FS: run .ci/run first" >&2; exit 1; }

cargo build -q --release --locked -p toolgate-cli
cargo build -q --release --locked -p toolgate-mcp --example mcp_driver
DRIVER=target/release/examples/mcp_driver
TOOLGATE=target/release/toolgate

DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/ws" "$DIR/home"
# A small source-like file (2 KiB).
for i in $(seq 1 64); do echo "line $i: fn main() { println!(\"hello\"); }"; done > "$DIR/ws/hello.txt"

echo "toolgate mcp serve ($CALLS read_file calls, $RUNS cold starts, $CLIENT client)" >&2
TG=$(env -u TOOLGATE_CONFIG HOME="$DIR/home" "$DRIVER" --tool read_file --args '{"path":"hello.txt"}' --client "$CLIENT" \
  --calls "$CALLS" --runs "$RUNS" -- "$TOOLGATE" --workspace "$DIR/ws" mcp serve)
echo "  $TG" >&2
echo "server-filesystem (Node $(node --version)) ($CALLS read_text_file calls)" >&2
NODE=$("$DRIVER" --tool read_text_file --args "{\"path\":\"$DIR/ws/hello.txt\"}" --client "$CLIENT" \
  --calls "$CALLS" --runs "$RUNS" -- "$NODE_FS" "$DIR/ws")
echo "  $NODE" >&2

python3 - "$TG" "$NODE" <<'PY'
import json, sys
tg, node = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{'':28}{'toolgate':>12}{'server-filesystem':>20}{'ratio':>10}")
print(f"{'cold start, median (ms)':28}{tg['cold_start_ms_median']:>12.1f}{node['cold_start_ms_median']:>20.1f}{node['cold_start_ms_median']/tg['cold_start_ms_median']:>9.1f}x")
print(f"{'cold start, best (ms)':28}{tg['cold_start_ms_best']:>12.1f}{node['cold_start_ms_best']:>20.1f}{node['cold_start_ms_best']/tg['cold_start_ms_best']:>9.1f}x")
print(f"{'read_file calls/s':28}{tg['calls_per_sec']:>12.0f}{node['calls_per_sec']:>20.0f}{tg['calls_per_sec']/node['calls_per_sec']:>9.1f}x")
PY
