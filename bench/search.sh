#!/usr/bin/env bash
# Times toolgate's search tools against ripgrep on a large real corpus.
#
#   bench/search.sh [--runs N] [--hyperfine] [--no-in-process]
#
# 1. Installs ripgrep from the Debian packages if `rg` is missing
#    (and hyperfine, with --hyperfine).
# 2. Builds the corpus: a copy of the crate sources under
#    ~/.cargo/registry/src (real code, tens of thousands of files, some
#    binary), copied again until it holds at least $MIN_MB megabytes. It
#    lives in /dev/shm when there is room: on VMs the page cache can be
#    reclaimed between runs (DAMON), which times the disk instead of the
#    search; tmpfs keeps every run in memory, for both tools alike.
# 3. Builds `toolgate` in release (the default target dir, or
#    $CARGO_TARGET_DIR).
# 4. Whole process: `toolgate --workspace CORPUS call TOOL ARGS` against `rg`
#    with the same ignore rules (hidden files searched, .git not, ignore
#    files from the corpus root down, also outside git repositories) and
#    the same output: every query has fewer matches than max_results, so
#    both print every match (and the same context lines). Checked before
#    timing: toolgate's total_matches must equal rg's count. Both write to
#    a regular file: ripgrep stops at the first match when stdout is
#    /dev/null, and `| head` would stop either early. The runs alternate
#    (toolgate, rg, toolgate, ...) so that other load on the machine slows
#    both alike; the medians and their ratio are printed. Target: <= 1.3.
# 5. In process: `cargo bench --bench search` runs the same queries as
#    tool calls inside one process against `rg` processes, again
#    alternating. Target: <= 1.1.
#
# Environment: CORPUS (where to build it), MIN_MB (default 200),
# CORPUS_SOURCE (default ~/.cargo/registry/src), RUNS (default 15).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-15}
MIN_MB=${MIN_MB:-200}
CORPUS_SOURCE=${CORPUS_SOURCE:-$HOME/.cargo/registry/src}
HYPERFINE=0
IN_PROCESS=1

while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --hyperfine) HYPERFINE=1; shift ;;
        --no-in-process) IN_PROCESS=0; shift ;;
        -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { echo "==> $*" >&2; }

# ------------------------------------------------------------------ tools
apt_updated=0
need() {
    local cmd=$1 package=$2
    command -v "$cmd" >/dev/null && return
    log "installing $package"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    if [ $apt_updated -eq 0 ]; then
        $sudo apt-get update -qq
        apt_updated=1
    fi
    $sudo apt-get install -y -qq "$package" >/dev/null
}
need rg ripgrep
[ $HYPERFINE -eq 1 ] && need hyperfine hyperfine

# ----------------------------------------------------------------- corpus
if [ -z "${CORPUS:-}" ]; then
    if [ -d /dev/shm ] && [ -w /dev/shm ] &&
        [ "$(df -Pm /dev/shm | awk 'NR==2 {print $4}')" -gt $((MIN_MB * 3)) ]; then
        CORPUS=/dev/shm/toolgate-search-corpus
    else
        CORPUS=$ROOT/target/search-corpus
    fi
fi
size_mb() { du -sm "$1" | cut -f1; }
if [ ! -f "$CORPUS/.complete" ]; then
    [ -d "$CORPUS_SOURCE" ] || { echo "error: no corpus source at $CORPUS_SOURCE (set CORPUS_SOURCE)" >&2; exit 1; }
    log "building the corpus in $CORPUS from $CORPUS_SOURCE ($(size_mb "$CORPUS_SOURCE") MB)"
    rm -rf "$CORPUS"
    mkdir -p "$CORPUS"
    copy=0
    while [ "$(size_mb "$CORPUS")" -lt "$MIN_MB" ]; do
        copy=$((copy + 1))
        cp -r "$CORPUS_SOURCE" "$CORPUS/copy-$copy"
    done
    touch "$CORPUS/.complete"
fi
files=$(find "$CORPUS" -type f | wc -l)
log "corpus: $CORPUS, $(size_mb "$CORPUS") MB, $files files"

# ------------------------------------------------------------------ build
log "building toolgate (release)"
(cd "$ROOT" && cargo build --release --locked -p toolgate-cli)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR=$ROOT/$TARGET_DIR ;; esac
TOOLGATE=$TARGET_DIR/release/toolgate

# ---------------------------------------------------------------- queries
# Each query: a name, the toolgate tool and arguments, and the rg arguments
# (after RG_RULES) that ask for the same matches and context.
RG_RULES=(--no-config --hidden --glob '!.git' --no-ignore-parent --no-ignore-global --no-require-git --line-number)
NAMES=("regex, context 2" "regex, no context" "literal" "literal, ignore case")
TOOLS=(search_code search_code grep grep)
ARGS=(
    '{"pattern": "impl\\s+Drop\\s+for\\s+\\w+Guard", "context_lines": 2, "max_results": 1000}'
    '{"pattern": "#\\[derive\\([^)]*Hash[^)]*Ord", "context_lines": 0, "max_results": 1000}'
    '{"pattern": "unwrap_or_default()", "max_results": 1000}'
    '{"pattern": "deprecated since", "case_sensitive": false, "max_results": 1000}'
)
rg_args() {
    case $1 in
        0) RGA=(--context 2 -e 'impl\s+Drop\s+for\s+\w+Guard') ;;
        1) RGA=(-e '#\[derive\([^)]*Hash[^)]*Ord') ;;
        2) RGA=(--fixed-strings -e 'unwrap_or_default()') ;;
        3) RGA=(--fixed-strings --ignore-case -e 'deprecated since') ;;
    esac
}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Microseconds, without forking when bash has EPOCHREALTIME (5.0+).
if [ -n "${EPOCHREALTIME:-}" ]; then
    now_us() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t)); }
else
    now_us() { echo $(($(date +%s%N) / 1000)); }
fi
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

run_toolgate() { "$TOOLGATE" --workspace "$CORPUS" call "$1" "$2" >"$OUT/tg" 2>&1 || true; }
run_rg() { rg "${RG_RULES[@]}" "${RGA[@]}" "$CORPUS" >"$OUT/rg" 2>&1 || true; }

printf '\nwhole process on %s, %s runs each, alternating, medians\n' "$CORPUS" "$RUNS"
printf '%-22s %9s %9s %7s %8s\n' query toolgate rg ratio matches
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]} tool=${TOOLS[$i]} args=${ARGS[$i]}
    rg_args "$i"

    # Same matches, or the comparison means nothing.
    ours=$("$TOOLGATE" --workspace "$CORPUS" --json call "$tool" "$args" |
        sed -n 's/.*"total_matches": *\([0-9]*\).*/\1/p' | head -1)
    theirs=$(rg "${RG_RULES[@]}" "${RGA[@]}" --count "$CORPUS" | awk -F: '{s += $NF} END {print s + 0}')
    if [ "$ours" != "$theirs" ]; then
        echo "error: $name: toolgate found ${ours:-?} matching lines, rg $theirs" >&2
        exit 1
    fi

    run_toolgate "$tool" "$args"
    run_rg
    : >"$OUT/t_tg"
    : >"$OUT/t_rg"
    for _ in $(seq "$RUNS"); do
        t0=$(now_us); run_toolgate "$tool" "$args"; t1=$(now_us)
        echo $((t1 - t0)) >>"$OUT/t_tg"
        t0=$(now_us); run_rg; t1=$(now_us)
        echo $((t1 - t0)) >>"$OUT/t_rg"
    done
    tg=$(median <"$OUT/t_tg")
    rgm=$(median <"$OUT/t_rg")
    awk -v n="$name" -v a="$tg" -v b="$rgm" -v m="$ours" \
        'BEGIN {printf "%-22s %7.1fms %7.1fms %6.2fx %8s\n", n, a / 1000, b / 1000, a / b, m}'

    if [ $HYPERFINE -eq 1 ]; then
        printf -v tg_cmd '%q ' "$TOOLGATE" --workspace "$CORPUS" call "$tool" "$args"
        printf -v rg_cmd '%q ' rg "${RG_RULES[@]}" "${RGA[@]}" "$CORPUS"
        hyperfine --warmup 2 --runs "$RUNS" --ignore-failure --style basic \
            "$tg_cmd > $OUT/tg" "$rg_cmd > $OUT/rg" >&2
    fi
done

if [ $IN_PROCESS -eq 1 ]; then
    printf '\n'
    log "in-process benchmark (cargo bench --bench search)"
    (cd "$ROOT" && cargo bench --locked -p toolgate-tools --bench search -- "$CORPUS" "$RUNS")
fi
