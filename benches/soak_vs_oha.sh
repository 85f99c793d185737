#!/usr/bin/env bash
# Requests per second of `mcp-verdict soak` against `oha` at equal concurrency, side by side in one
# run, against the same loopback server and the same tools/call POST. oha counts HTTP statuses;
# soak judges every body. Needs oha on PATH (cargo install oha --locked).
# The two take turns, ROUNDS times (default 5), and the median ratio is printed last: on a shared
# machine whose speed drifts, single runs vary by ±20 %.
# Usage: benches/soak_vs_oha.sh [requests] [concurrency] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
C=${2:-16}
ROUNDS=${3:-5}
RATIOS=()
command -v oha >/dev/null || { echo "oha not found: cargo install oha --locked" >&2; exit 2; }
cargo build --release --quiet
BIN=target/release/mcp-verdict
PORT=$((20000 + RANDOM % 20000))
$BIN serve-faults --listen 127.0.0.1:$PORT 2>/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
sleep 0.5
URL=http://127.0.0.1:$PORT/mcp
BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
for round in $(seq 1 "$ROUNDS"); do
  oha_rps=$(oha -n "$N" -c "$C" --no-tui --output-format json -m POST \
      -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
      -d "$BODY" "$URL" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["summary"]["requestsPerSec"]))')
  soak_rps=$($BIN soak "$URL" --tool echo --args '{"message":"hi"}' --requests "$N" --concurrency "$C" \
      --report-out /dev/stdout 2>/dev/null | python3 -c 'import sys,json; t=sys.stdin.read(); print(round(json.loads(t[t.index("{"):])["throughput"]))')
  ratio=$(python3 -c "print(f'{$soak_rps/$oha_rps:.2f}')")
  RATIOS+=("$ratio")
  echo "round $round: oha ${oha_rps} req/s, soak ${soak_rps} req/s, soak/oha $ratio"
done
echo "median soak/oha over $ROUNDS rounds: $(printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
