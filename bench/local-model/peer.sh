#!/usr/bin/env bash
# The same ten tasks for a peer agent on the same server, by hand (not CI):
#   python3 -m venv /tmp/peer && /tmp/peer/bin/pip install agent-mini
#   bench/local-model/peer.sh LABEL [VAR=value…]
# Knobs (environment): PEER_BIN (default /tmp/peer/bin/agent-mini), TASKS,
# MODEL, BASE_URL, OUT (default /tmp/toolgate-tasks). agent-mini
# (PyPI) talks to any OpenAI-compatible server; each task gets a fresh copy
# of the project (make.sh), a private AGENT_MINI_HOME whose config.json
# points at BASE_URL, one `agent-mini chat -m TASK -y` run in that copy, and
# is judged by check.sh on the reply of its JSON report. Prints the same
# table as run.sh (steps are the peer's model iterations; it reports no
# processed-token count).
set -u
here=$(cd "$(dirname "$0")" && pwd)
label=${1:?usage: peer.sh LABEL [VAR=value…]}; shift
for kv in "$@"; do export "${kv?}"; done
bin=${PEER_BIN:-/tmp/peer/bin/agent-mini}
base=${BASE_URL:-http://127.0.0.1:8091/v1}
model=${MODEL:-qwen2.5-coder-1.5b}
export OUT=${OUT:-/tmp/toolgate-tasks}
mkdir -p "$OUT"
solved=0; grade1=0; grade2=0; count=0
for n in ${TASKS:-1 2 3 4 5 6 7 8 9 10}; do
  "$here/make.sh" "$n"
  home="$OUT/$label-home-$n"; rm -rf "$home"; mkdir -p "$home"
  cat > "$home/config.json" <<JSON
{"provider": "local",
 "providers": {"local": {"baseUrl": "$base", "apiKey": "none", "model": "$model"}},
 "memory": {"enabled": false}}
JSON
  task=$(sed -n "${n}p" "$here/tasks.txt")
  start=$(date +%s)
  AGENT_MINI_HOME="$home" timeout 900 "$bin" chat -m "$task" -y --no-stream --no-markdown \
     --workspace "$OUT/run-$n" --report "$OUT/$label-$n.json" \
     > "$OUT/$label-$n.out" 2> "$OUT/$label-$n.err" < /dev/null
  rc=$?
  secs=$(( $(date +%s) - start ))
  read -r steps sent outcome < <(python3 - "$OUT/$label-$n.json" "$OUT/run-$n/answer.txt" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    r = {}
open(sys.argv[2], "w").write((r.get("reply") or "") + "\n")
u = r.get("usage") or {}
sent = u.get("prompt_tokens", u.get("input_tokens", "?"))
print(r.get("iterations", "?"), sent, r.get("finish_reason", "?"))
PY
)
  if "$here/check.sh" "$n" >/dev/null 2>&1; then
    r=solved; solved=$((solved+1))
    if [ "$n" -le 5 ]; then grade1=$((grade1+1)); else grade2=$((grade2+1)); fi
  else r=unsolved; fi
  count=$((count+1))
  echo "$label task $n: $r ($outcome, exit $rc, $steps steps, ${secs} s, prompt tokens $sent sent)"
done
echo "$label: $solved/$count solved (grade 1: $grade1, grade 2: $grade2)"
