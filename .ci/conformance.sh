#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) on both sides:
#
#   server side: `mcp-verdict serve-faults` (its correct endpoint /mcp) on an ephemeral
#                127.0.0.1 port, each scenario run by the suite's client;
#   client side: `mcp-verdict probe --all-tools` run by the suite against its mock servers.
#
#   shapes:      the shape table (src/core/shapes.rs) against the suite's wire-schema-valid
#                checker, message by message (tests/shapes_differential.rs).
#
#   bash .ci/conformance.sh [server|client|shapes|all]      (default: all)
#
# Fails (exit 1) on any FAILURE or WARNING in the listed scenarios, on a scenario that reports
# no SUCCESS (a SKIPPED pair), or on a suite exit code other than 0. Prints the pass counts.
#
# Environment:
#   CONFORMANCE_VERSION  the suite's version (default pinned below)
#   CONFORMANCE_HOME     where the suite (and Node 22 when the system's Node is older) is
#                        installed; default: a cache folder kept between runs
#   MCP_VERDICT          the binary to test (default: built here with `cargo build --release`)
#   CONFORMANCE_KEEP     1: keep the results folder and print its path
#   CLIENT_RUNS_ONLY     client side: these scenario@revision pairs instead of the list below
set -euo pipefail
cd "$(dirname "$0")/.."

SIDE="${1:-all}"
VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
HOME_DIR="${CONFORMANCE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-verdict/conformance-$VERSION}"

# The scenarios the issue names: server side at 2025-11-25 (stateful) and 2026-07-28 (stateless),
# client side as scenario@revision.
# Every server scenario the suite lists for the revision, except input-required-result-* and
# the tasks-* extension (their own lists).
SERVER_STATEFUL="server-initialize server-session-lifecycle logging-set-level ping
  completion-complete tools-list tools-call-simple-text tools-call-image tools-call-audio
  tools-call-embedded-resource tools-call-mixed-content tools-call-with-logging tools-call-error
  tools-call-with-progress tools-call-sampling tools-call-elicitation json-schema-2020-12
  elicitation-sep1034-defaults server-sse-polling server-sse-multiple-streams
  elicitation-sep1330-enums resources-list resources-read-text resources-read-binary
  resources-templates-read resources-subscribe resources-unsubscribe prompts-list
  prompts-get-simple prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image
  dns-rebinding-protection"
SERVER_STATELESS="server-stateless completion-complete tools-list tools-call-simple-text
  tools-call-image tools-call-audio tools-call-embedded-resource tools-call-mixed-content
  tools-call-error tools-call-with-progress json-schema-2020-12 server-sse-multiple-streams
  resources-list resources-read-text resources-read-binary resources-templates-read
  sep-2164-resource-not-found prompts-list prompts-get-simple prompts-get-with-args
  prompts-get-embedded-resource prompts-get-with-image dns-rebinding-protection caching
  http-header-validation http-custom-header-server-validation"
# The tasks extension's scenarios are not on the spec timeline: run at 2026-07-28 with --force.
SERVER_TASKS="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
  tasks-request-state-removal tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope
  tasks-required-task-error tasks-mrtr-composition tasks-status-notifications"
# Runs the suite itself reports only as SKIPPED at this version (tasks-status-notifications: its
# harness awaits a subscriptions/listen rewrite and never contacts the server). They run; when
# the suite reports nothing but SKIPPED they are listed as "SUITE-SKIP", neither passed nor
# failed; as soon as the suite checks anything there, they pass or fail like any other run.
SUITE_SKIPS="tasks-status-notifications@2026-07-28"
SERVER_INPUT_REQUIRED="basic-elicitation basic-sampling basic-list-roots request-state
  multiple-input-requests multi-round missing-input-response non-tool-request result-type
  unsupported-methods tampered-state capability-check ignore-extra-params validate-input"
CLIENT_RUNS="${CLIENT_RUNS_ONLY:-initialize@2025-11-25 tools_call@2025-11-25 tools_call@2026-07-28
  elicitation-sep1034-client-defaults@2025-11-25 sse-retry@2025-11-25
  request-metadata@2026-07-28 sep-2322-client-request-state@2026-07-28
  http-standard-headers@2026-07-28 http-custom-headers@2026-07-28
  http-invalid-tool-headers@2026-07-28 json-schema-ref-no-deref@2026-07-28
  json-schema-2020-12-preservation@2025-11-25 json-schema-2020-12-preservation@2026-07-28}"
# Client runs that are known to fail, run and reported (XFAIL) without failing the script (an
# unexpected pass says XPASS: take it off the list). Empty: every run must pass.
# json-schema-2020-12-preservation asks the client to send one tool's inputSchema back to an
# echo tool; the probe wrapper below scripts that from a recorded listing (probe itself has no
# scenario-specific code).
CLIENT_XFAIL="${CLIENT_XFAIL:-}"

for tool in npm node; do
  command -v "$tool" >/dev/null || { echo "conformance: $tool is required" >&2; exit 1; }
done

# --- install ---------------------------------------------------------------------------------
# The suite declares Node >= 22 (it dies at load time on Node 20): when the system's Node is
# older, Node 22 comes from the npm registry's `node` package into the same folder.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
packages=("@modelcontextprotocol/conformance@$VERSION")
[ "$node_major" -ge 22 ] || packages+=("node@22")
cli="$HOME_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
stamp="$HOME_DIR/.installed"
if [ ! -f "$cli" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${packages[*]}" ]; then
  echo "conformance: installing ${packages[*]} into $HOME_DIR"
  mkdir -p "$HOME_DIR"
  (cd "$HOME_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    timeout 300 npm install --no-audit --no-fund --loglevel=error "${packages[@]}") \
    >"$HOME_DIR/npm.log" 2>&1 || {
    echo "conformance: npm install failed:" >&2; cat "$HOME_DIR/npm.log" >&2; exit 1; }
  echo "${packages[*]}" > "$stamp"
fi
NODE=node
[ "$node_major" -ge 22 ] || NODE="$HOME_DIR/node_modules/node/bin/node"
"$NODE" --version >/dev/null

# The suite's mock servers (client side) listen on all interfaces: this preload binds every
# host-less listen() to 127.0.0.1.
cat > "$HOME_DIR/loopback.cjs" <<'EOF'
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a = args[0];
  if (a !== null && typeof a === 'object' && !Array.isArray(a)) {
    if (a.path === undefined && a.host === undefined && a.fd === undefined && a.handle === undefined) {
      args[0] = { ...a, host: '127.0.0.1' };
    }
  } else if (a === undefined || typeof a === 'function') {
    args.unshift(0, '127.0.0.1');
  } else if ((typeof a === 'number' || /^\d+$/.test(String(a))) && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1');
  }
  // A listen with a host looks it up first (asynchronously, even for an IP literal), so a
  // scenario that reads address() right after listen(0) would find none: the lookup of the
  // loopback literal answers at once while this listen runs.
  const dns = require('dns');
  const lookup = dns.lookup;
  dns.lookup = function (host, ...rest) {
    const cb = rest[rest.length - 1];
    if (host === '127.0.0.1' && typeof cb === 'function') {
      const all = rest.length > 1 && rest[0] && rest[0].all;
      all ? cb(null, [{ address: host, family: 4 }]) : cb(null, host, 4);
      return {};
    }
    return lookup.call(this, host, ...rest);
  };
  try { return listen.apply(this, args); } finally { dns.lookup = lookup; }
};
EOF
suite() { "$NODE" --require "$HOME_DIR/loopback.cjs" "$cli" "$@"; }

# --- the binary under test -------------------------------------------------------------------
BIN="${MCP_VERDICT:-}"
if [ -z "$BIN" ]; then
  cargo build --locked --release --quiet
  BIN="$PWD/target/release/mcp-verdict"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-verdict-conformance.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "${CONFORMANCE_KEEP:-0}" = 1 ]; then echo "conformance: results in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Reads every checks.json under $1 and prints "success failure warning" counts and, on stderr,
# each failing or warning check.
count_checks() {
  "$NODE" -e '
    const fs = require("fs"), path = require("path");
    const n = { SUCCESS: 0, FAILURE: 0, WARNING: 0 };
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "checks.json") for (const c of JSON.parse(fs.readFileSync(p, "utf8"))) {
        if (c.status in n) n[c.status]++;
        if (c.status === "FAILURE" || c.status === "WARNING")
          console.error(`    ${c.status} ${c.id}: ${c.errorMessage || c.name}`);
      } } };
    walk(process.argv[1]);
    console.log(`${n.SUCCESS} ${n.FAILURE} ${n.WARNING}`);' "$1"
}

passed=0
failed=0
suite_skipped=0
xfailed=0
# run LABEL OUTDIR -- suite args...: runs one scenario and judges it.
run() {
  local label="$1" out="$2"; shift 3
  mkdir -p "$out"
  local rc=0
  suite "$@" -o "$out" >"$out/log" 2>&1 || rc=$?
  local counts ok fail warn
  counts="$(count_checks "$out" 2>"$out/problems")"
  read -r ok fail warn <<<"$counts"
  local xfail=0 suite_skip=0
  case " $CLIENT_XFAIL " in *" $label "*) [[ "$out" == "$work/client/"* ]] && xfail=1 ;; esac
  case " $SUITE_SKIPS " in *" $label "*) suite_skip=1 ;; esac
  if [ "$suite_skip" -eq 1 ] && [ "$rc" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$warn" -eq 0 ] && [ "$ok" -eq 0 ] &&
    grep -q '"SKIPPED"' "$out"/*/checks.json 2>/dev/null; then
    suite_skipped=$((suite_skipped + 1))
    printf '  SUITE-SKIP %-44s the suite checks nothing here at this version\n' "$label"
  elif [ "$rc" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$warn" -eq 0 ] && [ "$ok" -gt 0 ]; then
    passed=$((passed + 1))
    printf '  PASS %-50s %3d checks\n' "$label" "$ok"
    [ "$xfail" -eq 0 ] || echo "    XPASS: $label is listed in CLIENT_XFAIL but passes"
  elif [ "$xfail" -eq 1 ]; then
    xfailed=$((xfailed + 1))
    printf '  XFAIL %-49s %d ok, %d failure, %d warning, suite exit %d (known)\n' "$label" "$ok" "$fail" "$warn" "$rc"
  else
    failed=$((failed + 1))
    printf '  FAIL %-50s %d ok, %d failure, %d warning, suite exit %d\n' "$label" "$ok" "$fail" "$warn" "$rc"
    cut -c1-400 "$out/problems"
    [ "$ok" -gt 0 ] || tail -n 5 "$out/log" | sed 's/^/    /'
  fi
}

if [ "$SIDE" = all ] || [ "$SIDE" = server ]; then
  "$BIN" serve-faults --listen 127.0.0.1:0 2>"$work/server.log" &
  server_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url="$(grep -o 'correct endpoint http://[^ ,]*' "$work/server.log" | cut -d' ' -f3 || true)"
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "conformance: serve-faults did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
  echo "conformance: server side, suite $VERSION against $url"
  for s in $SERVER_STATEFUL; do
    run "$s@2025-11-25" "$work/server/$s@2025-11-25" -- server --url "$url" --scenario "$s" --spec-version 2025-11-25
  done
  for s in $SERVER_STATELESS; do
    run "$s@2026-07-28" "$work/server/$s@2026-07-28" -- server --url "$url" --scenario "$s" --spec-version 2026-07-28
  done
  for s in $SERVER_TASKS; do
    run "$s@2026-07-28" "$work/server/$s@2026-07-28" -- server --url "$url" --scenario "$s" --spec-version 2026-07-28 --force
  done
  for s in $SERVER_INPUT_REQUIRED; do
    s="input-required-result-$s"
    run "$s@2026-07-28" "$work/server/$s@2026-07-28" -- server --url "$url" --scenario "$s" --spec-version 2026-07-28
  done
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
fi

if [ "$SIDE" = all ] || [ "$SIDE" = client ]; then
  echo "conformance: client side, suite $VERSION running mcp-verdict probe"
  # The suite appends the mock server's URL; it sets MCP_CONFORMANCE_PROTOCOL_VERSION, and may
  # name tool calls with their arguments in MCP_CONFORMANCE_CONTEXT ({"toolCalls": [{name,
  # arguments}]}): those become --tool-args. Its mock tools carry no annotations (destructive by
  # MCP's defaults): --include-destructive calls them. Its elicitation scenario expects an accept.
  cat > "$work/probe.sh" <<EOF
#!/usr/bin/env bash
tool_args="\$("$NODE" -e '
  const c = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  const m = {};
  for (const t of c.toolCalls || []) if (t && typeof t.name === "string") m[t.name] = t.arguments || {};
  console.log(JSON.stringify(m));')"
if [ "\${MCP_CONFORMANCE_SCENARIO:-}" = json-schema-2020-12-preservation ]; then
  # This scenario's instructions: list the tools, then send the focal tool's inputSchema, as
  # received, to the echo tool. Scripted here from probe's own parts: a recorded listing, the
  # schema read from that recording, then one call with it as the argument.
  har="\$(mktemp)"
  "$BIN" probe --protocol "\$MCP_CONFORMANCE_PROTOCOL_VERSION" --timeout 20 --color never \\
    --record "\$har" "\$@" >/dev/null 2>&1 || true
  args="\$("$NODE" -e '
    const har = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const bodies = har.log.entries.map((e) => (e.response.content || {}).text || "");
    const messages = bodies.flatMap((t) => { try { return [JSON.parse(t)]; } catch { return t.split("\\n")
      .filter((l) => l.startsWith("data:")).flatMap((l) => { try { return [JSON.parse(l.slice(5))]; } catch { return []; } }); } });
    const tools = messages.flatMap((m) => (m && m.result && m.result.tools) || []);
    const focal = tools.find((t) => t.name === "json_schema_2020_12_tool");
    console.log(JSON.stringify({ schema: focal ? focal.inputSchema : {} }));' "\$har")"
  rm -f "\$har"
  exec "$BIN" probe --tool json_schema_echo --args "\$args" --include-destructive \\
    --protocol "\$MCP_CONFORMANCE_PROTOCOL_VERSION" --timeout 20 --color never "\$@"
fi
exec "$BIN" probe --all-tools --include-destructive --elicit accept --tool-args "\$tool_args" \\
  --protocol "\$MCP_CONFORMANCE_PROTOCOL_VERSION" --timeout 20 --color never "\$@"
EOF
  chmod +x "$work/probe.sh"
  probe="$work/probe.sh"
  for pair in $CLIENT_RUNS; do
    s="${pair%@*}" v="${pair#*@}"
    run "$s@$v" "$work/client/$s@$v" -- client --command "$probe" --scenario "$s" --spec-version "$v" --timeout 40000
  done
fi

if [ "$SIDE" = all ] || [ "$SIDE" = shapes ]; then
  # The shape table against the official checker, message by message (tests/shapes_differential.rs).
  echo "conformance: shapes against wire-schema-valid"
  "$NODE" .ci/conformance/schemas.mjs "$cli" "$HOME_DIR/schemas" >/dev/null
  if MCP_VERDICT_CONFORMANCE_HOME="$HOME_DIR" MCP_VERDICT_NODE="$NODE" \
    cargo test --locked --features rmcp --quiet --test shapes_differential -- --nocapture \
    >"$work/shapes.log" 2>&1; then
    passed=$((passed + 1))
    printf '  PASS %-50s %s\n' "shapes vs wire-schema-valid" \
      "$(grep -o '[0-9]* messages, [0-9]* agree' "$work/shapes.log" || true)"
  else
    failed=$((failed + 1))
    echo "  FAIL shapes vs wire-schema-valid"
    tail -n 30 "$work/shapes.log" | cut -c1-400
  fi
fi

echo "conformance: $passed passed, $failed failed, $xfailed known failures (CLIENT_XFAIL), $suite_skipped skipped by the suite itself (SUITE_SKIPS)"
[ "$failed" -eq 0 ]
