#!/usr/bin/env bash
# Start-up cost of one-off commands: the CPU time (user + system) of
# `toolgate tools list` and `toolgate call get_datetime '{}'` against
# `toolgate --version`, whole processes, side by side.
#
#   bench/startup.sh [RUNS]          (default 20; builds the release binary)
#   TOOLGATE_BIN=path bench/startup.sh   (time another binary, no build)
#
# With hyperfine installed, it reports hyperfine's figures as well; the
# medians always come from the kernel's CPU accounting over RUNS runs of
# each command, the commands taking turns so that a slow spell on a shared
# machine hits all three. Each runs in a fresh workspace and home with a
# clean environment, so no user configuration or store is read.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
if [ -z "${TOOLGATE_BIN:-}" ]; then
    cargo build -q --release --locked -p toolgate-cli
    TOOLGATE_BIN=${CARGO_TARGET_DIR:-target}/release/toolgate
fi
[ -x "$TOOLGATE_BIN" ] || { echo "no binary at $TOOLGATE_BIN" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }

DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/ws" "$DIR/home"

# Every run's CPU time comes from the kernel's accounting of the child
# (getrusage(RUSAGE_CHILDREN), microseconds), read by a small Python driver:
# GNU time rounds to 10 ms, as much as the whole --version run.
python3 - "$TOOLGATE_BIN" "$DIR" "$RUNS" <<'PY'
import resource, statistics, subprocess, sys

binary, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = {"PATH": "/usr/bin:/bin", "HOME": f"{tmp}/home"}
commands = [
    ("toolgate --version", ["--version"]),
    ("toolgate tools list", ["tools", "list"]),
    ("toolgate call get_datetime '{}'", ["call", "get_datetime", "{}"]),
]

def cpu(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "--workspace", f"{tmp}/ws", *args], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

for _, args in commands:  # warm the page cache
    cpu(args)
times = {label: [] for label, _ in commands}
for _ in range(runs):  # the commands take turns
    for label, args in commands:
        times[label].append(cpu(args))
base = statistics.median(times[commands[0][0]])
print(f"{'command':<34} {'CPU (ms)':>10} {'ratio':>8}")
for label, _ in commands:
    m = statistics.median(times[label])
    print(f"{label:<34} {m * 1000:>10.1f} {m / base:>7.1f}x")
print(f"(medians of {runs} runs of each, user + system CPU)")
PY

if command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 3 --runs "$RUNS" \
        "$TOOLGATE_BIN --workspace $DIR/ws --version" \
        "$TOOLGATE_BIN --workspace $DIR/ws tools list" \
        "$TOOLGATE_BIN --workspace $DIR/ws call get_datetime {}"
fi
