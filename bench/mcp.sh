#!/usr/bin/env bash
# MCP server benchmark: `toolgate mcp serve` vs the reference Node
# `@modelcontextprotocol/server-filesystem`, on the same directory, driven by
# the same Rust client (bench/mcp_driver.rs), in the same run.
#
#   bench/mcp.sh [CALLS] [ROUNDS]   (peers from .ci/run, or $TOOLGATE_MCP_PEERS)
#   MCP_CLIENT=rmcp bench/mcp.sh     (drive both through rmcp's client instead
#                                     of the lean one; see bench/mcp_driver.rs)
#
# The two servers take turns: each round measures toolgate, then the Node
# server (3 cold starts and CALLS sequential calls each), so a slow spell on a
# shared machine hits both. Reported: medians over the rounds, and the range
# of the per-round throughput ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS=${1:-5000}
ROUNDS=${2:-5}
CLIENT=${MCP_CLIENT:-lean}
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

echo "toolgate mcp serve vs server-filesystem (Node $(node --version)): $ROUNDS rounds of $CALLS calls, $CLIENT client" >&2
TG_RUNS=() NODE_RUNS=()
for round in $(seq 1 "$ROUNDS"); do
  TG_RUNS+=("$(env -u TOOLGATE_CONFIG HOME="$DIR/home" "$DRIVER" --tool read_file \
    --args '{"path":"hello.txt"}' --client "$CLIENT" --calls "$CALLS" --runs 3 \
    -- "$TOOLGATE" --workspace "$DIR/ws" mcp serve)")
  NODE_RUNS+=("$("$DRIVER" --tool read_text_file --args "{\"path\":\"$DIR/ws/hello.txt\"}" \
    --client "$CLIENT" --calls "$CALLS" --runs 3 -- "$NODE_FS" "$DIR/ws")")
  echo "  round $round: ${TG_RUNS[-1]}" >&2
  echo "           ${NODE_RUNS[-1]}" >&2
done

python3 - "$ROUNDS" "${TG_RUNS[@]}" "${NODE_RUNS[@]}" <<'PY'
import json, statistics, sys
rounds = int(sys.argv[1])
runs = [json.loads(a) for a in sys.argv[2:]]
tg, node = runs[:rounds], runs[rounds:]
def starts(rs): return [s for r in rs for s in r["cold_starts_ms"]]
def rate(rs): return [r["calls_per_sec"] for r in rs]
row = "{:28}{:>12}{:>20}{:>10}"
print(row.format("", "toolgate", "server-filesystem", "ratio"))
for name, f in [("cold start, median (ms)", statistics.median), ("cold start, best (ms)", min)]:
    a, b = f(starts(tg)), f(starts(node))
    print(row.format(name, f"{a:.1f}", f"{b:.1f}", f"{b / a:.1f}x"))
a, b = statistics.median(rate(tg)), statistics.median(rate(node))
print(row.format("read_file calls/s, median", f"{a:.0f}", f"{b:.0f}", f"{a / b:.1f}x"))
ratios = sorted(t / n for t, n in zip(rate(tg), rate(node)))
print(f"per-round throughput ratios: {', '.join(f'{r:.1f}x' for r in ratios)}")
PY
