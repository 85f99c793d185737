#!/usr/bin/env bash
# Interop: judge real exchanges with the reference TypeScript server
# (@modelcontextprotocol/server-everything, Streamable HTTP) on 127.0.0.1.
#
#   bash .ci/interop.sh
#
# Installs the server from the npm registry into a temporary folder, starts it on a free loopback
# port, runs `mcp-verdict probe` for a successful call (echo), a progress-emitting call
# (trigger-long-running-operation, 0.3 s in 3 steps) and an unknown tool, and checks the verdicts
# from `--format jsonl`. With INTEROP_RMCP=1 (the default) it also runs the rmcp example
# (examples/rmcp_client.rs, `--features rmcp`) for the progress call: rmcp sends a progress token,
# so the three progress notifications are on the stream.
#
# With INTEROP_PROXY=1 (the default) it then puts `mcp-verdict proxy` in front of the server and
# runs two real clients of other languages through it: a TypeScript SDK script
# (.ci/clients/client.mjs, with the SDK server-everything depends on) and a Python `mcp` script
# (.ci/clients/client.py, PyPI `mcp` in a virtualenv); each must get its answers, the proxy's
# verdicts must be the expected ones, and `replay` of the proxy's recording must give them again.
#
# Exit 0: all as expected, or skipped because npm could not reach the registry (said clearly).
# Exit 1: a verdict differs, or anything else failed.
#
# Environment: INTEROP_EVERYTHING_VERSION (default pinned below), INTEROP_RMCP (1/0),
# INTEROP_PROXY (1/0), INTEROP_PYTHON_MCP_VERSION (default pinned below).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${INTEROP_EVERYTHING_VERSION:-2026.8.31}"
RMCP="${INTEROP_RMCP:-1}"
PROXY="${INTEROP_PROXY:-1}"
PY_MCP_VERSION="${INTEROP_PYTHON_MCP_VERSION:-2.3.0}"

for tool in node npm python3 cargo; do
  command -v "$tool" >/dev/null || { echo "interop: $tool is required" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-verdict-interop.XXXXXX")"
server_pid=""
proxy_pid=""
cleanup() {
  if [ -n "$proxy_pid" ] && kill -0 "$proxy_pid" 2>/dev/null; then
    kill "$proxy_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- install ---------------------------------------------------------------------------------
echo "interop: installing @modelcontextprotocol/server-everything@$VERSION"
set +e
(cd "$work" && npm init -y >/dev/null 2>&1 &&
  timeout 300 npm install --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$VERSION") >"$work/npm.log" 2>&1
npm_rc=$?
set -e
if [ "$npm_rc" -ne 0 ]; then
  if grep -Eqi 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|socket hang up|getaddrinfo' "$work/npm.log"; then
    echo "interop: SKIPPED: npm could not reach the registry (no network):" >&2
    tail -n 5 "$work/npm.log" >&2
    exit 0
  fi
  echo "interop: npm install failed (rc $npm_rc):" >&2
  cat "$work/npm.log" >&2
  exit 1
fi
entry="$work/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$entry" ] || { echo "interop: $entry not found after install" >&2; exit 1; }

# --- build -----------------------------------------------------------------------------------
# The release binary: `.ci/run` has built it for the quick start already, so this adds no build
# (a debug build without the tests' features would compile every dependency again).
cargo build --locked --quiet --release --bin mcp-verdict
if [ "$RMCP" = 1 ]; then
  cargo build --locked --quiet --features rmcp --example rmcp_client
fi
target="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release/mcp-verdict"
example="$target/debug/examples/rmcp_client"

# --- start the server on 127.0.0.1 -----------------------------------------------------------
# The server listens on every interface at $PORT; this preload binds it to loopback instead, on
# a port the OS picks, and writes that port to $PORT_FILE.
cat >"$work/loopback.cjs" <<'EOF'
const net = require("net");
const fs = require("fs");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object") {
    args[0] = Object.assign({}, args[0], { host: "127.0.0.1" });
  }
  this.once("listening", () => {
    const a = this.address();
    if (process.env.PORT_FILE && a && typeof a === "object") {
      fs.writeFileSync(process.env.PORT_FILE, String(a.port));
    }
  });
  return listen.apply(this, args);
};
EOF
PORT=0 PORT_FILE="$work/port" node -r "$work/loopback.cjs" "$entry" streamableHttp \
  >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  [ -s "$work/port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$work/port" ]; then
  echo "interop: the server did not start listening:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
url="http://127.0.0.1:$(cat "$work/port")/mcp"
echo "interop: server-everything $VERSION listening at $url"

# --- probe -----------------------------------------------------------------------------------
# probe exits 1 when any exchange is incomplete; the 2026 discover probe of this 2025 server
# always is, so the exit code is checked only where it is unusable input (2): a tool the server
# does not list is not called.
probe() { # name tool args
  local rc=0
  "$bin" probe "$url" --tool "$2" --args "$3" --timeout 20 --format jsonl >"$work/$1.jsonl" || rc=$?
  echo "$rc" >"$work/$1.rc"
}
probe echo echo '{"message":"hi"}'
probe progress trigger-long-running-operation '{"duration":0.3,"steps":3}'
probe unknown no-such-tool '{}'
if [ "$RMCP" = 1 ]; then
  timeout 60 "$example" "$url" trigger-long-running-operation '{"duration":0.3,"steps":3}' \
    >"$work/rmcp-progress.jsonl" 2>"$work/rmcp-progress.err" || {
    echo "interop: the rmcp example failed:" >&2
    cat "$work/rmcp-progress.err" >&2
    exit 1
  }
fi

# --- check -----------------------------------------------------------------------------------
python3 - "$work" "$RMCP" <<'EOF'
import json, sys

work, rmcp = sys.argv[1], sys.argv[2] == "1"

def handshake():
    # The 2026-07-28 probe is refused the 2025 way (no session yet), then initialize.
    return [
        ("server/discover", None, "HTTP_ERROR", dict(status=400, error_code=-32000, complete=False)),
        ("initialize", None, "SUCCESS", dict(protocol_version="2025-11-25", status=200)),
        ("notifications/initialized", None, "NOTIFICATION_ACCEPTED", dict(status=202)),
        ("tools/list", None, "SUCCESS", dict(protocol_version="2025-11-25")),
    ]

tail = dict(protocol_version="2025-11-25", status=200, content_type="text/event-stream",
            complete=True, violations=[])
cases = {
    "echo": handshake() + [("tools/call", "echo", "TOOL_SUCCESS", dict(tail, event_count=1))],
    # probe sends a progress token, so the three progress notifications precede the result.
    "progress": handshake() + [("tools/call", "trigger-long-running-operation", "TOOL_SUCCESS",
                                dict(tail, event_count=4))],
    # A tool tools/list does not name is not called (probe exits 2: unusable input).
    "unknown": handshake(),
}
exit_codes = {"unknown": 2}
if rmcp:
    # rmcp puts a progress token on every request: 3 progress notifications, then the result.
    cases["rmcp-progress"] = handshake() + [("tools/call", "trigger-long-running-operation",
                                             "TOOL_SUCCESS", dict(tail, event_count=4))]

failures = 0
for name, expected in cases.items():
    with open(f"{work}/{name}.jsonl") as f:
        seen = sorted((json.loads(l) for l in f if l.strip()), key=lambda v: v["index"])
    print(f"interop: {name}")
    for v in seen:
        what = v['method'] or f"({v.get('http_method') or '?'} {v.get('kind') or ''})"
        print(f"  {v['index']} {what:<26} {str(v['tool'] or ''):<31} {v['outcome']:<22}"
              f" status={v['status']} events={v['event_count']} advice={v['retry']['advice']}"
              f" violations={[x['rule'] for x in v['violations']]}")
    # rmcp opens the standalone GET stream after initialize and DELETEs the session on close;
    # probe opens the session's GET stream while it calls tools (server requests may come
    # there). Their timing is the client's, so they are checked apart.
    extra = [v for v in seen if v.get("http_method") in ("GET", "DELETE")]
    seen = [v for v in seen if v.get("http_method") not in ("GET", "DELETE")]
    if name in ("echo", "progress") and [v["outcome"] for v in extra] != ["LISTENING"]:
        print(f"  MISMATCH: probe's own GET stream: {[v['outcome'] for v in extra]}, expected ['LISTENING']")
        failures += 1
    for v in extra:
        if v["outcome"] not in ("LISTENING", "SESSION_TERMINATED", "METHOD_NOT_ALLOWED") \
                or v["violations"]:
            print(f"  MISMATCH at index {v['index']}: {v['http_method']} gave {v['outcome']}"
                  f" {[x['rule'] for x in v['violations']]}")
            failures += 1
    if name in exit_codes:
        with open(f"{work}/{name}.rc") as f:
            rc = int(f.read().strip() or "0")
        if rc != exit_codes[name]:
            print(f"  MISMATCH: probe exited {rc}, expected {exit_codes[name]}")
            failures += 1
    if len(seen) != len(expected):
        print(f"  MISMATCH: {len(seen)} verdicts, expected {len(expected)}")
        failures += 1
        continue
    for v, (method, tool, outcome, fields) in zip(seen, expected):
        want = dict(fields, method=method, outcome=outcome)
        if tool is not None:
            want["tool"] = tool
        for key, value in want.items():
            if v.get(key) != value:
                print(f"  MISMATCH at index {v['index']}: {key} = {v.get(key)!r}, expected {value!r}")
                failures += 1

if failures:
    print(f"interop: {failures} mismatch(es)")
    sys.exit(1)
print("interop: ok")
EOF

[ "$PROXY" = 1 ] || exit 0

# --- the proxy, with real clients of other languages -------------------------------------------
echo "interop: installing the Python mcp SDK $PY_MCP_VERSION into a virtualenv"
python3 -m venv "$work/venv" >"$work/venv.log" 2>&1 || {
  echo "interop: python3 -m venv failed (Debian: apt-get install python3-venv):" >&2
  cat "$work/venv.log" >&2
  exit 1
}
timeout 300 "$work/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION" \
  >"$work/pip.log" 2>&1 || {
  echo "interop: pip install mcp failed:" >&2
  cat "$work/pip.log" >&2
  exit 1
}
[ -d "$work/node_modules/@modelcontextprotocol/sdk" ] || {
  echo "interop: @modelcontextprotocol/sdk not installed with server-everything" >&2
  exit 1
}
cp .ci/clients/client.mjs "$work/client.mjs"

"$bin" proxy --upstream "$url" --listen 127.0.0.1:0 --log "$work/proxy.jsonl" \
  --calls "$work/proxy.calls.jsonl" --record "$work/proxy.har" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
proxy_url=""
for _ in $(seq 1 100); do
  proxy_url="$(sed -n 's/.*point the client at \(http[^;]*\);.*/\1/p' "$work/proxy.log")"
  [ -n "$proxy_url" ] && break
  kill -0 "$proxy_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$proxy_url" ]; then
  echo "interop: the proxy did not start:" >&2
  cat "$work/proxy.log" >&2
  exit 1
fi
echo "interop: proxy at $proxy_url"
timeout 60 node "$work/client.mjs" "$proxy_url" >"$work/ts.json" 2>"$work/ts.err" || {
  echo "interop: the TypeScript client failed through the proxy:" >&2
  cat "$work/ts.err" >&2
  exit 1
}
timeout 60 "$work/venv/bin/python" .ci/clients/client.py "$proxy_url" >"$work/py.json" 2>"$work/py.err" || {
  echo "interop: the Python client failed through the proxy:" >&2
  cat "$work/py.err" >&2
  exit 1
}
# Ctrl-C writes the recording.
kill -INT "$proxy_pid"
for _ in $(seq 1 100); do kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
proxy_pid=""
"$bin" replay "$work/proxy.har" --format jsonl >"$work/replayed.jsonl" || true
"$bin" replay "$work/proxy.har" --calls --format jsonl >"$work/replayed.calls.jsonl" || true

python3 - "$work" <<'EOF'
import json, sys

work = sys.argv[1]
failures = 0
for name, lang in (("ts", "typescript"), ("py", "python")):
    with open(f"{work}/{name}.json") as f:
        got = json.loads(f.read().strip().splitlines()[-1])
    print(f"interop: {lang} client through the proxy: {got}")
    want = {"echo": f"Echo: hi from {lang}", "echo_error": False, "long_error": False, "progress": 3}
    for key, value in want.items():
        if got.get(key) != value:
            print(f"  MISMATCH: {key} = {got.get(key)!r}, expected {value!r}")
            failures += 1

def load(path):
    with open(path) as f:
        out = [json.loads(l) for l in f if l.strip()]
    for v in out:
        v.pop("file", None)
    return sorted(out, key=lambda v: v["index"])

live = load(f"{work}/proxy.jsonl")
again = load(f"{work}/replayed.jsonl")
for v in live:
    what = v['method'] or f"({v.get('http_method') or '?'} {v.get('kind') or ''})"
    print(f"  {v['index']:>2} {what:<26} {str(v['tool'] or ''):<31} {v['outcome']:<22}"
          f" status={v['status']} events={v['event_count']}")
for a, b in zip(live, again):
    if a != b:
        diff = {k: (a.get(k), b.get(k)) for k in a if a.get(k) != b.get(k)}
        print(f"  live vs replayed at {a['index']}: {diff}")
if live != again:
    print("  MISMATCH: replay of the proxy's recording differs from its live verdicts")
    failures += 1
with open(f"{work}/proxy.calls.jsonl") as f:
    live_calls = [json.loads(l) for l in f if l.strip()]
with open(f"{work}/replayed.calls.jsonl") as f:
    again_calls = [json.loads(l) for l in f if l.strip()]
print(f"interop: the proxy's --calls: {len(live_calls)} calls")
if not live_calls or live_calls != again_calls:
    print("  MISMATCH: the proxy's --calls differ from replay --calls of its recording")
    failures += 1
calls = [(v["tool"], v["outcome"], v["event_count"]) for v in live if v["method"] == "tools/call"]
expected = [("echo", "TOOL_SUCCESS", 1), ("trigger-long-running-operation", "TOOL_SUCCESS", 4)] * 2
if calls != expected:
    print(f"  MISMATCH: tools/call verdicts {calls}, expected {expected}")
    failures += 1
if not all(v["complete"] for v in live):
    print("  MISMATCH: an exchange through the proxy was incomplete")
    failures += 1
if failures:
    print(f"interop: proxy: {failures} mismatch(es)")
    sys.exit(1)
print("interop: proxy ok")
EOF
