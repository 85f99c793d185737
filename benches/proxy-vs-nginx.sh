#!/usr/bin/env bash
# mcp-verdict's proxy against the proxies a user would otherwise put there, side by side in one
# run: the same serve-faults upstream, `soak` as the client, and in each round the four paths
# take turns (order rotated): direct, nginx (`proxy_buffering off`, upstream keepalive),
# HAProxy (`http-reuse always`) and `mcp-verdict proxy` judging every exchange (`--log`,
# `--calls`, `--metrics-listen`; with RECORD=1 `--record` as well).
#
# For each reply kind (JSON: the `ok` scenario; SSE: `sse-progress`, two progress events and
# the result) and concurrency (1, 16, 64) it prints the medians over the rounds: req/s, the
# ratio to nginx and to direct, the latency each path adds to direct (mean and p99 of the time
# to the terminal response), the CPU each intermediary process spent per request (from
# /proc/<pid>/stat, all its threads and nginx's/HAProxy's workers), and syscalls per request
# (one extra run per path under `strace -c -f`, not timed). A second table splits each
# intermediary's time per request by thread, from /proc/<tid>/schedstat (nanosecond clocks): on
# a CPU (the proxy's forwarding threads, its judging thread and its line writers apart) and
# waiting in the run queue for a CPU.
#
# Needs a release build (`cargo build --release --locked`); installs nginx-light and haproxy
# from Debian's packages when missing (root or sudo). Everything listens on 127.0.0.1.
# Usage: benches/proxy-vs-nginx.sh [ROUNDS=5] [CALLS=5000]
# Environment: CONCURRENCY="1 16 64", KINDS="json sse", RECORD=1, NO_STRACE=1, BIN=path,
# PROXY_ARGS="--threads 2" (more flags for the proxy), BASE_BIN=path (a second mcp-verdict
# binary, e.g. an earlier commit's release build, run as one more path `proxy-base` in the same
# rounds with the same flags: before and after in one run), UPSTREAM_TLS=1 (the upstream is HTTPS: a
# second nginx terminates TLS in front of serve-faults with a certificate from a CA made here
# with openssl; each intermediary verifies it against that CA and keeps its connections; the
# direct path is soak over HTTPS with --cacert), FLOOR=1 (one more path `floor`: the example
# `forward_floor`, a single-threaded tokio HTTP/1.1 forwarder that judges nothing and copies
# nothing, built by `cargo build --release --example forward_floor`; HTTP upstream only).
set -euo pipefail
ROUNDS=${1:-5}
CALLS=${2:-5000}
CONCURRENCY=${CONCURRENCY:-"1 16 64"}
KINDS=${KINDS:-"json sse"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/target/release/mcp-verdict}
[ -x "$BIN" ] || { echo "no release build at $BIN: run cargo build --release --locked" >&2; exit 2; }

need() { # binary, Debian package
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "$2" >/dev/null
}
need nginx nginx-light
need haproxy haproxy
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)

TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }

UP=$(free_port); NG=$(free_port); HA=$(free_port); PX=$(free_port); MX=$(free_port)
PXB=$(free_port); MXB=$(free_port); FL=$(free_port)
"$BIN" serve-faults --listen "127.0.0.1:$UP" --max-connections 1024 >"$TMP/faults.log" 2>&1 &
PIDS+=($!)

mkdir -p "$TMP/nginx/logs"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
error_log $TMP/nginx/error.log warn;
pid $TMP/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/body; proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fcgi; uwsgi_temp_path $TMP/nginx/uwsgi; scgi_temp_path $TMP/nginx/scgi;
  upstream mcp { server 127.0.0.1:$UP; keepalive 128; }
  server {
    listen 127.0.0.1:$NG;
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:$UP;
      proxy_buffering off;
      proxy_read_timeout 60s;
    }
  }
}
EOF
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -g 'daemon off;' &
PIDS+=($!); NGINX_PID=$!

cat >"$TMP/haproxy.cfg" <<EOF
global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  http-reuse always
frontend mcp
  bind 127.0.0.1:$HA
  default_backend up
backend up
  http-request set-header Host 127.0.0.1:$UP
  server s1 127.0.0.1:$UP
EOF
"$HAPROXY" -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1 &
PIDS+=($!); HAPROXY_PID=$!

# UPSTREAM_TLS=1: the intermediaries' upstream is HTTPS, a TLS terminator (nginx) in front of
# serve-faults; SCHEME, UPORT and the TLS flags below point every path at it.
SCHEME=http; UPORT=$UP
if [ "${UPSTREAM_TLS:-0}" = 1 ]; then
  TL=$(free_port)
  (cd "$TMP" &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >leaf.ext &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=bench CA" &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout leaf.key -out leaf.csr -subj /CN=127.0.0.1 &&
    openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 -extfile leaf.ext) >/dev/null 2>&1
  mkdir -p "$TMP/tls/logs"
  cat >"$TMP/tls/nginx.conf" <<EOF
worker_processes 1;
error_log $TMP/tls/error.log warn;
pid $TMP/tls/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $TMP/tls/body; proxy_temp_path $TMP/tls/proxy;
  fastcgi_temp_path $TMP/tls/fcgi; uwsgi_temp_path $TMP/tls/uwsgi; scgi_temp_path $TMP/tls/scgi;
  upstream mcp { server 127.0.0.1:$UP; keepalive 128; }
  server {
    listen 127.0.0.1:$TL ssl;
    ssl_certificate $TMP/leaf.pem; ssl_certificate_key $TMP/leaf.key;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://mcp; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:$UP;
      proxy_buffering off; proxy_read_timeout 60s;
    }
  }
}
EOF
  "$NGINX" -p "$TMP/tls" -c "$TMP/tls/nginx.conf" -g 'daemon off;' &
  PIDS+=($!)
  wait_port "$TL"
  SCHEME=https; UPORT=$TL
  sed -i "s|proxy_pass http://mcp;|proxy_pass https://tlsup; proxy_ssl_trusted_certificate $TMP/ca.pem; proxy_ssl_verify on; proxy_ssl_name localhost; proxy_ssl_session_reuse on;|; s|upstream mcp { server 127.0.0.1:$UP; keepalive 128; }|upstream tlsup { server 127.0.0.1:$TL; keepalive 128; }|; s|proxy_set_header Host 127.0.0.1:$UP;|proxy_set_header Host 127.0.0.1:$TL;|" "$TMP/nginx/nginx.conf"
  sed -i "s|server s1 127.0.0.1:$UP|server s1 127.0.0.1:$TL ssl verify required ca-file $TMP/ca.pem|; s|set-header Host 127.0.0.1:$UP|set-header Host 127.0.0.1:$TL|" "$TMP/haproxy.cfg"
  kill -HUP "$NGINX_PID"
  kill "$HAPROXY_PID"; wait "$HAPROXY_PID" 2>/dev/null || true
  "$HAPROXY" -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1 &
  PIDS+=($!); HAPROXY_PID=$!
  sleep 0.5
fi

for p in "$UP" "$NG" "$HA"; do wait_port "$p"; done

declare -A PORT=([direct]=$UPORT [nginx]=$NG [haproxy]=$HA [proxy]=$PX [proxy-base]=$PXB [floor]=$FL)
declare -A PID=([nginx]=$NGINX_PID [haproxy]=$HAPROXY_PID)
declare -A SCENARIO=([json]=ok [sse]=sse-progress)

# mcp-verdict's proxy forwards to its upstream's own path, so each reply kind gets its own
# proxy (started fresh, so its CPU counts only that kind's runs).
RECORD_ARGS=()
[ "${RECORD:-0}" = 1 ] && RECORD_ARGS=(--record "$TMP/proxy.har")
start_one() { # path binary port metrics-port kind
  [ -n "${PID[$1]:-}" ] && { kill "${PID[$1]}"; wait "${PID[$1]}" 2>/dev/null || true; }
  local ca=() rec=()
  [ "$SCHEME" = https ] && ca=(--upstream-cacert "$TMP/ca.pem")
  [ ${#RECORD_ARGS[@]} -gt 0 ] && rec=(--record "$TMP/$1.har")
  "$2" proxy --upstream "$SCHEME://127.0.0.1:$UPORT/mcp/${SCENARIO[$5]}" --listen "127.0.0.1:$3" --quiet "${ca[@]}" \
    --log "$TMP/$1.verdicts.jsonl" --calls "$TMP/$1.calls.jsonl" --metrics-listen "127.0.0.1:$4" \
    "${rec[@]}" ${PROXY_ARGS:-} 2>>"$TMP/$1.log" &
  PID[$1]=$!
  PIDS+=($!)
  wait_port "$3"
}
start_proxy() { # kind
  start_one proxy "$BIN" "$PX" "$MX" "$1"
  [ -n "${BASE_BIN:-}" ] && start_one proxy-base "$BASE_BIN" "$PXB" "$MXB" "$1"
  return 0
}
PATHS=(direct nginx haproxy proxy)
INTERMEDIARIES=(nginx haproxy proxy)
[ -n "${BASE_BIN:-}" ] && PATHS+=(proxy-base) && INTERMEDIARIES+=(proxy-base)
if [ "${FLOOR:-0}" = 1 ]; then
  [ "$SCHEME" = http ] || { echo "FLOOR=1 forwards to an HTTP upstream only" >&2; exit 2; }
  FLOOR_BIN=$ROOT/target/release/examples/forward_floor
  [ -x "$FLOOR_BIN" ] || { echo "no $FLOOR_BIN: cargo build --release --example forward_floor" >&2; exit 2; }
  "$FLOOR_BIN" "127.0.0.1:$FL" "127.0.0.1:$UPORT" 2>"$TMP/floor.log" &
  PID[floor]=$!; PIDS+=($!)
  wait_port "$FL"
  PATHS+=(floor); INTERMEDIARIES+=(floor)
fi

# CPU seconds (user + system) of a process and its children threads/workers, in clock ticks.
ticks() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" || true); do
    for t in /proc/"$p"/task/*/stat; do
      [ -r "$t" ] || continue
      total=$((total + $(awk '{print $14 + $15}' "$t")))
    done
  done
  echo "$total"
}
HZ=$(getconf CLK_TCK)

# Nanoseconds on a CPU and waiting for one (/proc/<tid>/schedstat), of a process and its
# children, by thread: the judging thread, the line writers, and the rest (forwarding: the
# runtime's threads, nginx's or HAProxy's workers). Prints "run wait" for each of the three.
sched() {
  local p t name i run wait
  local -a sum=(0 0 0 0 0 0)
  for p in $1 $(pgrep -P "$1" || true); do
    for t in /proc/"$p"/task/*; do
      [ -r "$t/schedstat" ] || continue
      name=$(cat "$t/comm" 2>/dev/null || echo "?")
      read -r run wait _ <"$t/schedstat" || continue
      case "$name" in
        mcp-verdict-jud*) i=2 ;;
        mcp-verdict-lin*) i=4 ;;
        *) i=0 ;;
      esac
      sum[i]=$((sum[i] + run)); sum[i + 1]=$((sum[i + 1] + wait))
    done
  done
  echo "${sum[*]}"
}

run() { # path kind concurrency out.json
  local scheme=http tls=()
  [ "$1" = direct ] && [ "$SCHEME" = https ] && { scheme=https; tls=(--cacert "$TMP/ca.pem"); }
  "$BIN" soak "$scheme://127.0.0.1:${PORT[$1]}/mcp/${SCENARIO[$2]}" "${tls[@]}" --tool echo -c "$3" -n "$CALLS" \
    --timeout 30s -o "$4" >/dev/null 2>"$4.err" || { echo "soak through $1 failed:" >&2; cat "$4.err" >&2; exit 1; }
}

RESULTS="$TMP/rows.tsv"
: >"$RESULTS"
STRACE="$TMP/strace.tsv"
: >"$STRACE"
for kind in $KINDS; do
  start_proxy "$kind"
  for c in $CONCURRENCY; do
    for p in "${PATHS[@]}"; do run "$p" "$kind" "$c" "$TMP/warm.json"; done
    for r in $(seq 1 "$ROUNDS"); do
      n=${#PATHS[@]}
      for i in $(seq 0 $((n - 1))); do
        p=${PATHS[$(((i + r) % n))]}
        before=0; s0="0 0 0 0 0 0"
        [ "$p" != direct ] && { before=$(ticks "${PID[$p]}"); s0=$(sched "${PID[$p]}"); }
        run "$p" "$kind" "$c" "$TMP/r.json"
        after=0; s1="0 0 0 0 0 0"
        [ "$p" != direct ] && { after=$(ticks "${PID[$p]}"); s1=$(sched "${PID[$p]}"); }
        python3 - "$TMP/r.json" "$kind" "$c" "$p" "$r" $((after - before)) "$HZ" "$s0" "$s1" >>"$RESULTS" <<'PY'
import json, sys
path, kind, c, side, rnd, ticks, hz, s0, s1 = sys.argv[1:]
d = json.load(open(path))
buckets = d["terminal_us"]["buckets"]
n = sum(k for _, k in buckets)
mean = sum(v * k for v, k in buckets) / n
acc, p99 = 0, buckets[-1][0]
for v, k in buckets:
    acc += k
    if acc >= 0.99 * n:
        p99 = v
        break
cpu = int(ticks) / int(hz) * 1e6 / d["requests"]
# Per request, in µs: [forwarding run, wait, judging run, wait, lines run, wait].
sched = [(int(b) - int(a)) / 1000 / d["requests"] for a, b in zip(s0.split(), s1.split())]
print("\t".join(map(str, [kind, c, side, rnd, d["throughput"], mean, p99, cpu, d["incomplete"],
                          ",".join(f"{x:.2f}" for x in sched)])))
PY
      done
    done
  done
  if [ "${NO_STRACE:-0}" != 1 ] && command -v strace >/dev/null; then
    for p in "${INTERMEDIARIES[@]}"; do
      targets=()
      for q in ${PID[$p]} $(pgrep -P "${PID[$p]}" || true); do
        for t in /proc/"$q"/task/*; do targets+=(-p "${t##*/}"); done
      done
      strace -c -f -o "$TMP/strace.$p" "${targets[@]}" &
      tracer=$!
      sleep 0.5
      run "$p" "$kind" 16 "$TMP/s.json"
      kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
      calls=$(awk '$NF=="total"{print $4}' "$TMP/strace.$p")
      echo -e "$kind\t$p\t$(python3 -c "print(round(${calls:-0}/$CALLS, 2))")" >>"$STRACE"
    done
  fi
done

python3 - "$RESULTS" "$STRACE" "$ROUNDS" "$CALLS" <<'PY'
import statistics as st, sys
from collections import defaultdict
rows, strace_file, rounds, calls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
by = defaultdict(list)
incomplete = 0
for line in open(rows):
    kind, c, side, rnd, rps, mean, p99, cpu, inc, sched = line.split("\t")
    by[(kind, int(c), side, int(rnd))] = (float(rps), float(mean), float(p99), float(cpu),
                                          [float(x) for x in sched.split(",")])
    incomplete += int(inc)
sys_per = {}
for line in open(strace_file):
    kind, side, n = line.split("\t")
    sys_per[(kind, side)] = n.strip()
import os
up = "HTTPS upstream (nginx terminating TLS)" if os.environ.get("UPSTREAM_TLS") == "1" else "HTTP upstream"
print(f"# {up}; {rounds} interleaved rounds of {calls} calls per path; medians (per-round ratios)")
print("| reply | c | path | req/s | ÷ nginx | ÷ direct | added mean | added p99 | CPU µs/request | syscalls/request (c=16) |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
keys = sorted({(k, c) for k, c, _, _ in by}, key=lambda x: (x[0], x[1]))
for kind, c in keys:
    rnds = sorted({r for k, cc, _, r in by if (k, cc) == (kind, c)})
    sides = [s for s in ["direct", "nginx", "haproxy", "proxy", "proxy-base", "floor"]
             if (kind, c, s, rnds[0]) in by]
    for side in sides:
        rps = [by[(kind, c, side, r)][0] for r in rnds]
        to_ng = [by[(kind, c, side, r)][0] / by[(kind, c, "nginx", r)][0] for r in rnds]
        to_dir = [by[(kind, c, side, r)][0] / by[(kind, c, "direct", r)][0] for r in rnds]
        add_mean = [by[(kind, c, side, r)][1] - by[(kind, c, "direct", r)][1] for r in rnds]
        add_p99 = [by[(kind, c, side, r)][2] - by[(kind, c, "direct", r)][2] for r in rnds]
        cpu = [by[(kind, c, side, r)][3] for r in rnds]
        rng = f" ({min(to_ng):.2f}–{max(to_ng):.2f})" if side not in ("nginx", "direct") else ""
        added = lambda xs: "—" if side == "direct" else f"{st.median(xs) / 1000:.3f} ms"
        print(f"| {kind} | {c} | {side} | {st.median(rps):,.0f} | {st.median(to_ng):.2f}{rng} | "
              f"{st.median(to_dir):.2f} | {added(add_mean)} | {added(add_p99)} | "
              f"{'—' if side == 'direct' else f'{st.median(cpu):.1f}'} | {sys_per.get((kind, side), '—')} |")
# Where the intermediary's time went, from /proc/<tid>/schedstat (nanosecond clocks, not ticks):
# µs per request on a CPU and waiting in the run queue for one, by thread.
print()
print("| reply | c | path | on CPU: forwarding | judging | line writers | all | waited for a CPU: forwarding | all |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
for kind, c in keys:
    rnds = sorted({r for k, cc, _, r in by if (k, cc) == (kind, c)})
    for side in ["nginx", "haproxy", "proxy", "proxy-base", "floor"]:
        if (kind, c, side, rnds[0]) not in by:
            continue
        med = [st.median(by[(kind, c, side, r)][4][i] for r in rnds) for i in range(6)]
        total = st.median(sum(by[(kind, c, side, r)][4][0::2]) for r in rnds)
        waited = st.median(sum(by[(kind, c, side, r)][4][1::2]) for r in rnds)
        own = side.startswith("proxy")
        cell = lambda x: f"{x:.1f}" if own else "—"
        print(f"| {kind} | {c} | {side} | {med[0]:.1f} | {cell(med[2])} | {cell(med[4])} | "
              f"{total:.1f} | {med[1]:.1f} | {waited:.1f} |")
if incomplete:
    print(f"\nwarning: {incomplete} incomplete calls in the timed runs", file=sys.stderr)
PY
