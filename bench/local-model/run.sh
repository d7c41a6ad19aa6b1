#!/usr/bin/env bash
# Five small repository tasks for a real local model, by hand (not CI):
#   ../../shared/tools/local-model.sh up          # llama.cpp + Qwen2.5-Coder-1.5B on :8091
#   bench/local-model/run.sh LABEL [VAR=value…]    # e.g. TOOLGATE_LLM__TEMPERATURE=0
# Each task gets a fresh copy of a tiny Python project (make.sh), runs
# `toolgate run` in yolo mode, and is judged by check.sh. Prints one line
# per task and "LABEL: N/5 solved". Logs: $OUT/LABEL-N.jsonl (default /tmp/toolgate-tasks).
set -u
here=$(cd "$(dirname "$0")" && pwd)
label=${1:?usage: run.sh LABEL [VAR=value…]}; shift
bin=${TOOLGATE_BIN:-$here/../../target/debug/toolgate}
base=${BASE_URL:-http://127.0.0.1:8091/v1}
export OUT=${OUT:-/tmp/toolgate-tasks}
mkdir -p "$OUT"
solved=0
for n in 1 2 3 4 5; do
  "$here/make.sh" "$n"
  task=$(sed -n "${n}p" "$here/tasks.txt")
  start=$(date +%s)
  env "$@" "$bin" --workspace "$OUT/run-$n" --mode yolo run "$task" \
     --base-url "$base" --model qwen2.5-coder-1.5b --max-steps 12 --timeout 900 \
     --json > "$OUT/$label-$n.jsonl" 2> "$OUT/$label-$n.err"
  rc=$?
  python3 -c 'import json,sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") == "done": print(e.get("final_text", ""))' "$OUT/$label-$n.jsonl" > "$OUT/run-$n/answer.txt"
  if "$here/check.sh" "$n" >/dev/null 2>&1; then r=solved; solved=$((solved+1)); else r=unsolved; fi
  steps=$(grep -c '"type":"step"' "$OUT/$label-$n.jsonl")
  rec=$(grep -c '"recovered":true' "$OUT/$label-$n.jsonl")
  echo "$label task $n: $r (exit $rc, $steps steps, $rec recovered calls, $(( $(date +%s) - start )) s)"
done
echo "$label: $solved/5 solved"
