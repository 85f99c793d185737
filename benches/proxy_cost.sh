#!/usr/bin/env bash
# CPU cost of `mcp-verdict proxy` per request, measured so that the machine's load does not
# matter: user-space instructions under callgrind, and syscalls under `strace -c`.
#
# The proxy is started as benches/proxy-vs-nginx.sh starts it (--quiet, --log, --calls,
# --metrics-listen) in front of `serve-faults`, and driven by `soak` (c=16, tool echo).
# Instructions per request: the proxy runs under `valgrind --tool=callgrind` twice, once for
# N and once for 2N requests (each run also has the same start-up, warm-up and shutdown), and
# (Ir(2N) - Ir(N)) / N is what one more request costs. Syscalls per request: one run of N
# requests with `strace -c -f` attached to the (native) proxy, total calls / N.
# Each run is deterministic in what it counts, but how requests batch (wake-ups, polls) varies a
# little from run to run: repeated runs of one binary differ by about 1-2k instructions, and two
# builds of the same code can too (inlining in other modules moves); compare beyond that.
#
# Usage: benches/proxy_cost.sh [N=1000]
# Environment: KINDS="json sse" (json: scenario `ok`; sse: `sse-progress`), C=16,
# RECORD=1 (the proxy also keeps a HAR recording, `--record`),
# BIN=path (default target/release/mcp-verdict), OUT=dir (keeps the callgrind files there;
# read them with `callgrind_annotate --inclusive=no|yes FILE`), NO_STRACE=1, NO_CALLGRIND=1.
# Needs valgrind and strace, and a release build (`cargo build --release --locked`).
set -euo pipefail
N=${1:-1000}
C=${C:-16}
KINDS=${KINDS:-"json sse"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/target/release/mcp-verdict}
[ -x "$BIN" ] || { echo "no release build at $BIN" >&2; exit 2; }
TMP=$(mktemp -d)
OUT=${OUT:-$TMP}
mkdir -p "$OUT"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }
declare -A SCENARIO=([json]=ok [sse]=sse-progress)

UP=$(free_port)
"$BIN" serve-faults --listen "127.0.0.1:$UP" --max-connections 1024 >"$TMP/faults.log" 2>&1 &
PIDS+=($!)
wait_port "$UP"

soak() { # port kind calls
  "$BIN" soak "http://127.0.0.1:$1/mcp/${SCENARIO[$2]}" --tool echo -c "$C" -n "$3" --timeout 60s \
    -o "$TMP/soak.json" >/dev/null 2>"$TMP/soak.err" || { cat "$TMP/soak.err" >&2; exit 1; }
}

proxy_args() { # kind port metrics-port
  echo proxy --upstream "http://127.0.0.1:$UP/mcp/${SCENARIO[$1]}" --listen "127.0.0.1:$2" --quiet \
    --log "$TMP/verdicts.jsonl" --calls "$TMP/calls.jsonl" --metrics-listen "127.0.0.1:$3" \
    ${RECORD:+--record "$TMP/recording.$1.$2.har"}
}

# Instructions (Ir) of one proxy run under callgrind serving `calls` requests.
ir() { # kind calls
  local px mx pid file
  px=$(free_port); mx=$(free_port); file="$OUT/callgrind.$1.$2"
  # shellcheck disable=SC2046
  valgrind --tool=callgrind --callgrind-out-file="$file" "$BIN" $(proxy_args "$1" "$px" "$mx") \
    2>"$TMP/valgrind.log" &
  pid=$!
  wait_port "$px"
  soak "$px" "$1" 50 # warm-up: connections, first-use allocations
  soak "$px" "$1" "$2"
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  awk '/^(summary|totals):/{print $2; exit}' "$file"
}

syscalls() { # kind calls
  local px mx pid
  px=$(free_port); mx=$(free_port)
  # shellcheck disable=SC2046
  "$BIN" $(proxy_args "$1" "$px" "$mx") 2>"$TMP/proxy.log" &
  pid=$!
  PIDS+=($pid)
  wait_port "$px"
  soak "$px" "$1" 50
  strace -c -f -o "$TMP/strace" -p "$pid" &
  local tracer=$!
  sleep 0.5
  soak "$px" "$1" "$2"
  kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  awk '$NF=="total"{print $4}' "$TMP/strace"
  [ -n "${VERBOSE:-}" ] && cat "$TMP/strace" >&2 || true
}

echo "| reply | c | instructions/request | syscalls/request |"
echo "|---|---:|---:|---:|"
for kind in $KINDS; do
  per_ir="—"; per_sys="—"
  if [ "${NO_CALLGRIND:-0}" != 1 ]; then
    one=$(ir "$kind" "$N"); two=$(ir "$kind" $((2 * N)))
    per_ir=$(( (two - one) / N ))
  fi
  if [ "${NO_STRACE:-0}" != 1 ]; then
    per_sys=$(python3 -c "print(round($(syscalls "$kind" "$N") / $N, 2))")
  fi
  echo "| $kind | $C | $per_ir | $per_sys |"
done
[ "$OUT" != "$TMP" ] && echo "callgrind files in $OUT (callgrind.KIND.CALLS)" >&2 || true
