#!/usr/bin/env bash
# Ten small repository tasks of two grades for a real local model, by hand
# (not CI):
#   ../../shared/tools/local-model.sh up        # llama.cpp + Qwen2.5-Coder-1.5B on :8091
#   bench/local-model/run.sh LABEL [VAR=value…]  # e.g. PROFILE=small CONSTRAIN=off
# Knobs (environment):
#   PROFILE=auto|small|standard   agents.build.profile (default: auto)
#   CONSTRAIN=auto|off            llm.constrain (default: auto)
#   CHECKS=true|false             agents.build.task_checks (default: true)
#   TASKS="1 2 3"                 which tasks (default: all ten)
#   MODEL, BASE_URL, TOOLGATE_BIN, OUT (logs; default /tmp/toolgate-tasks)
# Each task gets a fresh copy of a tiny Python project (make.sh) with a
# toolgate.yaml holding the knobs, runs `toolgate run` in yolo mode, and is
# judged by check.sh. Prints one line per task (steps, seconds, prompt tokens
# sent and processed by the server) and "LABEL: N/10 solved (grade 1: …,
# grade 2: …)". Logs: $OUT/LABEL-N.jsonl and .err. peer.sh runs the same
# tasks for a peer agent (agent-mini) on the same server, same table.
# Runs that share the server (or the CPU) at once slow each other: compare
# seconds only between runs made under the same load.
set -u
here=$(cd "$(dirname "$0")" && pwd)
label=${1:?usage: run.sh LABEL [VAR=value…]}; shift
for kv in "$@"; do export "${kv?}"; done
bin=${TOOLGATE_BIN:-$here/../../target/debug/toolgate}
base=${BASE_URL:-http://127.0.0.1:8091/v1}
model=${MODEL:-qwen2.5-coder-1.5b}
export OUT=${OUT:-/tmp/toolgate-tasks}
mkdir -p "$OUT"
solved=0; grade1=0; grade2=0; count=0
for n in ${TASKS:-1 2 3 4 5 6 7 8 9 10}; do
  "$here/make.sh" "$n"
  cat > "$OUT/run-$n/toolgate.yaml" <<YAML
llm:
  constrain: ${CONSTRAIN:-auto}
agents:
  build:
    profile: ${PROFILE:-auto}
    task_checks: ${CHECKS:-true}
YAML
  task=$(sed -n "${n}p" "$here/tasks.txt")
  start=$(date +%s)
  "$bin" --workspace "$OUT/run-$n" --mode yolo run "$task" \
     --base-url "$base" --model "$model" --max-steps 12 --timeout 900 \
     --json > "$OUT/$label-$n.jsonl" 2> "$OUT/$label-$n.err"
  rc=$?
  secs=$(( $(date +%s) - start ))
  python3 - "$OUT/$label-$n.jsonl" "$OUT/run-$n/answer.txt" "$OUT/$label-$n.tokens" <<'PY'
import json, sys
done = {}
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("type") == "done":
        done = e
# Only a run that ended on its answer has one: a guard's summary built
# from the log ("6 made, 2 ran") is no answer to "how many".
answer = done.get("final_text", "") if done.get("outcome") == "completed" else ""
open(sys.argv[2], "w").write(answer + "\n")
t = done.get("tokens", {})
open(sys.argv[3], "w").write(f"{t.get('input', '?')} {t.get('processed') or '?'} {done.get('outcome', '?')}\n")
PY
  read -r sent processed outcome < "$OUT/$label-$n.tokens"
  if "$here/check.sh" "$n" >/dev/null 2>&1; then
    r=solved; solved=$((solved+1))
    if [ "$n" -le 5 ]; then grade1=$((grade1+1)); else grade2=$((grade2+1)); fi
  else r=unsolved; fi
  count=$((count+1))
  steps=$(grep -c '"type":"step"' "$OUT/$label-$n.jsonl")
  rec=$(grep -c '"recovered":true' "$OUT/$label-$n.jsonl")
  echo "$label task $n: $r ($outcome, exit $rc, $steps steps, $rec recovered calls, ${secs} s, prompt tokens $sent sent / $processed processed)"
done
echo "$label: $solved/$count solved (grade 1: $grade1, grade 2: $grade2)"
