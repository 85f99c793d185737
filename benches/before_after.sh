#!/usr/bin/env bash
# Two builds of the tool side by side in one run: BEFORE and AFTER are checkouts (git worktrees)
# whose release binaries and examples are built already (`cargo build --release --bin
# mcp-verdict --example gen_big_har --example core_cost` in each). Prints, for each:
#   1. instructions (valgrind --tool=callgrind; machine load cannot move them):
#      - per exchange of the bare core (`core_cost`, the difference of 2,000 and 1,000 rounds);
#      - `replay` of a 1 MiB realistic capture (`gen_big_har`'s), whole process;
#      - `replay` of 5,000 small `tools/call` exchanges (JSON and SSE replies), whole process;
#   2. wall time in interleaved rounds (BEFORE and AFTER take turns, order rotated; median):
#      - `replay` of 20 copies of the 1 MiB capture (-j1);
#      - `replay` of a 64 MiB SSE body (the `replay` bench's big_sse input);
#   3. the proxy bench (`cargo bench --bench proxy`) in each, alternately, ROUNDS times: its
#      proxied/direct req/s ratio (which normalizes load drift within each run) and the proxy
#      thread's CPU per request. SKIP_PROXY=1 leaves it out.
# Instruction counts need no symbols, so the release builds serve. To see where the
# instructions go (callgrind_annotate, perf report), build with `--profile profiling` instead:
# the release build with line tables and symbols, in target/profiling/ (docs/building.md).
# Usage: benches/before_after.sh BEFORE_DIR AFTER_DIR [rounds]
set -euo pipefail
A=$(cd "$1" && pwd); B=$(cd "$2" && pwd); ROUNDS=${3:-5}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
"$A/target/release/examples/gen_big_har" "$TMP/one.har" 1 >/dev/null
mkdir "$TMP/many"; for i in $(seq 1 20); do cp "$TMP/one.har" "$TMP/many/$i.har"; done
python3 - "$TMP/sse.har" <<'PY'
import json, sys
call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}, "_meta": {"progressToken": 1}}}
note = 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}\n\n'
parts, size, i = [], 0, 0
while size < 64 << 20:
    s = note % i; parts.append(s); size += len(s); i += 1
parts.append('data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}\n\n')
entry = {"request": {"method": "POST", "url": "http://127.0.0.1/mcp", "headers": [{"name": "Content-Type", "value": "application/json"}, {"name": "MCP-Protocol-Version", "value": "2025-11-25"}], "postData": {"mimeType": "application/json", "text": json.dumps(call)}},
         "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}], "content": {"mimeType": "text/event-stream", "text": "".join(parts)}}}
json.dump({"log": {"version": "1.2", "entries": [entry]}}, open(sys.argv[1], "w"))
PY
python3 - "$TMP/small.har" <<'PY'
import json, sys
entries = []
for i in range(5000):
    call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}
    reply = {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False}}
    sse = i % 2 == 1
    text = "event: message\ndata: %s\n\n" % json.dumps(reply) if sse else json.dumps(reply)
    entries.append({"request": {"method": "POST", "url": "http://127.0.0.1/mcp", "headers": [
        {"name": "Content-Type", "value": "application/json"}, {"name": "Accept", "value": "application/json, text/event-stream"},
        {"name": "MCP-Protocol-Version", "value": "2025-11-25"}, {"name": "Mcp-Session-Id", "value": "s-1"}],
        "postData": {"mimeType": "application/json", "text": json.dumps(call)}},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream" if sse else "application/json"}],
                     "content": {"mimeType": "x", "text": text}}})
json.dump({"log": {"version": "1.2", "entries": entries}}, open(sys.argv[1], "w"))
PY
instr() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }
echo "== instructions (callgrind)"
for side in "$A" "$B"; do
  one=$(instr "$side/target/release/examples/core_cost" 1000 json)
  two=$(instr "$side/target/release/examples/core_cost" 2000 json)
  sone=$(instr "$side/target/release/examples/core_cost" 1000 sse)
  stwo=$(instr "$side/target/release/examples/core_cost" 2000 sse)
  rep=$(instr "$side/target/release/mcp-verdict" replay "$TMP/one.har" --format jsonl || true)
  small=$(instr "$side/target/release/mcp-verdict" replay "$TMP/small.har" --format jsonl || true)
  echo "$(basename "$side"): per exchange json $(( (two - one) / 1000 )), sse $(( (stwo - sone) / 1000 )); replay 1 MiB capture $rep; replay 5,000 small exchanges $small"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { local s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; echo $(( ($(date +%s%N) - s) / 1000000 )); }
echo "== wall time, interleaved ($ROUNDS rounds, median ms)"
for what in many sse; do
  : > "$TMP/a"; : > "$TMP/b"
  for r in $(seq 1 "$ROUNDS"); do
    input="$TMP/many"; [ "$what" = sse ] && input="$TMP/sse.har"
    if (( r % 2 )); then
      run "$A/target/release/mcp-verdict" replay "$input" --format jsonl -j1 >> "$TMP/a"
      run "$B/target/release/mcp-verdict" replay "$input" --format jsonl -j1 >> "$TMP/b"
    else
      run "$B/target/release/mcp-verdict" replay "$input" --format jsonl -j1 >> "$TMP/b"
      run "$A/target/release/mcp-verdict" replay "$input" --format jsonl -j1 >> "$TMP/a"
    fi
  done
  echo "replay $what: $(basename "$A") $(median < "$TMP/a") ms, $(basename "$B") $(median < "$TMP/b") ms"
done
if [ "${SKIP_PROXY:-}" = "" ]; then
  echo "== proxy bench, alternately ($ROUNDS runs each; proxied/direct req/s)"
  for r in $(seq 1 "$ROUNDS"); do
    for side in "$A" "$B"; do
      (cd "$side" && cargo bench --quiet --bench proxy 2>/dev/null | grep -E "^(json|sse) |CPU us/request proxied" | sed "s|^|$(basename "$side") run $r: |")
    done
  done
fi
