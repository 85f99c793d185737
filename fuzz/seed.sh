#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds:
#   har_reader  every testdata/har/*.har, whole;
#   sse_framer  every decoded response body, behind a 0x00 header byte (fed whole and then one
#               byte at a time; see fuzz_targets/sse_framer.rs);
#   exchange    every decoded response body behind the six header bytes that describe its entry
#               (status, content type, end, request kind, version header; see
#               fuzz_targets/exchange.rs).
# plus a few built-in bodies, so the corpus is useful even without testdata.
# Usage: fuzz/seed.sh [HAR_DIR]   (default: testdata/har next to fuzz/)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
har_dir="${1:-$here/../testdata/har}"
command -v python3 >/dev/null || { echo "seed.sh needs python3" >&2; exit 1; }
mkdir -p "$here/corpus/har_reader" "$here/corpus/sse_framer" "$here/corpus/exchange"

python3 - "$har_dir" "$here/corpus" <<'PY'
import base64, glob, hashlib, json, os, shutil, sys

har_dir, corpus = sys.argv[1], sys.argv[2]

# Keep in step with the tables in fuzz_targets/exchange.rs.
STATUSES = [200, 200, 200, 202, 204, 400, 404, 500, 429, 0]
CONTENT_TYPES = ["text/event-stream", "application/json", "text/event-stream; charset=utf-8",
                 "Application/JSON; charset=utf-8", "application/vnd.api+json", "text/plain", "",
                 "text/html"]
ENDS = ["eof", "reset", "open", "timeout", "cancelled"]
REQUESTS = {"tools/call": 0, "initialize": 1, "tools/list": 2, "ping": 5}
VERSIONS = [None, "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

def put(target, data, tag=""):
    name = hashlib.sha1(data).hexdigest()[:16] + tag
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(data)

def header(name, headers):
    for h in headers or []:
        if h.get("name", "").lower() == name:
            return h.get("value")
    return None

def exchange_head(status, content_type, end, method, version):
    s = STATUSES.index(status) if status in STATUSES else (0 if 200 <= status < 300 else 7)
    ct = (content_type or "").strip()
    if ct in CONTENT_TYPES:
        c = CONTENT_TYPES.index(ct)
    elif "event-stream" in ct.lower():
        c = 0
    elif "json" in ct.lower():
        c = 1
    else:
        c = 6 if not ct else 5
    e = ENDS.index(end) if end in ENDS else 0
    if method is None:
        r = 8
    elif method.startswith("notifications/"):
        r = 3
    else:
        r = REQUESTS.get(method, 0)
    v = VERSIONS.index(version) if version in VERSIONS else 0
    return bytes([s, c, e, r, v, 0])

def decode(text, encoding):
    text = text or ""
    if (encoding or "").lower() == "base64":
        return base64.b64decode(text.strip())
    return text.encode("utf-8")

hars = sorted(glob.glob(os.path.join(har_dir, "*.har")))
bodies = 0
for path in hars:
    shutil.copyfile(path, os.path.join(corpus, "har_reader", os.path.basename(path)))
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
        entries = doc["log"]["entries"]
    except Exception as err:  # a deliberately broken capture is still a har_reader seed
        print(f"seed.sh: {path}: {err}", file=sys.stderr)
        continue
    for entry in entries:
        try:
            req = entry.get("request") or {}
            resp = entry.get("response") or {}
            content = resp.get("content") or {}
            body = decode(content.get("text"), content.get("encoding"))
            post = (req.get("postData") or {}).get("text") or ""
            try:
                method = json.loads(post).get("method") if post.strip().startswith("{") else None
            except ValueError:
                method = None
            end = entry.get("_mcp_end") or ("reset" if entry.get("_error") else "eof")
            status = resp.get("status") or 0
            head = exchange_head(status, header("content-type", resp.get("headers")), end,
                                 method, header("mcp-protocol-version", req.get("headers")))
        except Exception as err:
            print(f"seed.sh: {path}: entry skipped: {err}", file=sys.stderr)
            continue
        if body:
            put("sse_framer", b"\x00" + body)
        put("exchange", head + body)
        bodies += 1

# Built-in bodies: the shapes that matter, whatever testdata holds.
progress = b"".join(
    b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d,"total":3}}\n\n' % n
    for n in (1, 2, 3))
result = b'data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}\n\n'
builtin = {
    "progress_then_result": progress + result,
    "bom_crlf": b"\xef\xbb\xbf" + result.replace(b"\n", b"\r\n"),
    "cr_only": b"id: 7\r" + result.replace(b"\n", b"\r"),
    "cut_short": progress + result[:40],
    "priming_retry": b"id: 0\ndata:\n\nretry: 1000\n\n" + result,
    "comments_fields": b": ping\n\nevent: other\ndata: x\n\ndata\ndata:  y\n\nid: a\0b\nretry: 1x\n\n" + result,
}
for name, body in builtin.items():
    put("sse_framer", b"\x00" + body, "-" + name)
    put("sse_framer", b"\x0b\x07\x00\x02\x10" + body, "-" + name + "-chunked")  # limit 29, sizes 1,3,17
    put("exchange", bytes([0, 0, 0, 0, 3, 0]) + body, "-" + name)
put("exchange", bytes([0, 1, 0, 0, 2, 0]) + result[6:-2], "-json_result")
put("exchange", bytes([7, 1, 0, 0, 2, 0]) + b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}', "-http_500")
put("har_reader", json.dumps({"log": {"version": "1.2", "entries": [{
    "request": {"method": "POST", "url": "http://x/mcp",
                "headers": [{"name": "Content-Type", "value": "application/json"},
                            {"name": "Accept", "value": "application/json, text/event-stream"}],
                "postData": {"mimeType": "application/json",
                             "text": '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}'}},
    "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                 "content": {"mimeType": "text/event-stream",
                             "text": base64.b64encode(progress + result).decode(), "encoding": "base64"}}},
]}}).encode(), "-builtin.har")

counts = {t: len(os.listdir(os.path.join(corpus, t))) for t in ("har_reader", "sse_framer", "exchange")}
print(f"seed.sh: {len(hars)} HAR files, {bodies} bodies; corpus sizes {counts}")
PY
