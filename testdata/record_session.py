#!/usr/bin/env python3
"""Drives one whole MCP session against a live Streamable-HTTP server and records it as HAR 1.2.

`probe --record` runs a handshake and calls; it never opens a GET stream, cuts a stream, resumes
or DELETEs. This script does, so that a capture of the real thing can be judged entry by entry:

    initialize, notifications/initialized, tools/list,
    GET (standalone stream, read briefly, closed by the client),
    tools/call trigger-long-running-operation with a progress token, cut by the client after
      the first progress event that carries an event id,
    GET with Last-Event-ID (the rest of the stream and the final response),
    tools/call trigger-elicitation-request: the server asks (elicitation/create on the POST
      stream), the client answers with a response POST, the final follows,
    DELETE of the session,
    tools/call echo with the deleted session id.

The tool names are those of the TypeScript reference server (@modelcontextprotocol/server-everything).
Python 3.11, stdlib only, loopback only:

    python3 testdata/record_session.py http://127.0.0.1:PORT/mcp testdata/har/everything_session.har
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import time
from datetime import datetime, timezone
from urllib.parse import urlsplit

VERSION = "2025-11-25"


class Recorder:
    def __init__(self, url: str):
        self.url = url
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port or 80, parts.path or "/"
        self.entries = []
        self.session = None

    def headers(self, accept="application/json, text/event-stream", body=True, extra=()):
        h = [("Accept", accept)]
        if body:
            h.append(("Content-Type", "application/json"))
        if self.session:
            h += [("MCP-Protocol-Version", VERSION), ("Mcp-Session-Id", self.session)]
        return h + list(extra)

    def open(self, method, headers, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        started = time.time()
        conn.request(method, self.path, body=data, headers=dict(headers))
        resp = conn.getresponse()
        return conn, resp, started, data

    def record(self, method, headers, data, resp, raw, started, end=None, error=None):
        rh = resp.getheaders() if resp is not None else []
        ctype = next((v for n, v in rh if n.lower() == "content-type"), "")
        entry = {
            "startedDateTime": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "time": round((time.time() - started) * 1000, 1),
            "request": {"method": method, "url": self.url, "httpVersion": "HTTP/1.1",
                        "headers": [{"name": n, "value": v} for n, v in headers],
                        "queryString": [], "cookies": [], "headersSize": -1,
                        "bodySize": len(data) if data else 0},
            "response": {"status": resp.status if resp is not None else 0,
                         "statusText": resp.reason if resp is not None else "",
                         "httpVersion": "HTTP/1.1",
                         "headers": [{"name": n, "value": v} for n, v in rh],
                         "cookies": [], "content": {"size": len(raw), "mimeType": ctype,
                                                    "text": raw.decode("utf-8", "replace")},
                         "redirectURL": "", "headersSize": -1, "bodySize": len(raw)},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0},
        }
        if data:
            entry["request"]["postData"] = {"mimeType": "application/json", "text": data.decode()}
        if end:
            entry["_mcp_end"] = end
        if error:
            entry["_error"] = error
        self.entries.append(entry)

    def post(self, body, read_sse=None):
        """POSTs `body`; reads the whole reply, or hands an SSE reply to `read_sse`."""
        headers = self.headers()
        conn, resp, started, data = self.open("POST", headers, body)
        if read_sse and resp.getheader("content-type", "").startswith("text/event-stream"):
            raw, end, error = read_sse(conn, resp)
        else:
            raw, end, error = resp.read(), None, None
        self.record("POST", headers, data, resp, raw, started, end, error)
        conn.close()
        return resp, raw

    def har(self):
        return {"log": {"version": "1.2", "creator": {"name": "mcp-verdict testdata/record_session.py",
                                                      "version": "1"},
                        "pages": [], "entries": self.entries}}


def events(resp):
    """Yields (raw bytes of one event, its id, its parsed data or None) from an SSE reply."""
    buf, eid, data = b"", None, []
    while True:
        line = resp.readline()
        if not line:
            return
        buf += line
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if text == "":
            parsed = json.loads("\n".join(data)) if data and "".join(data).strip() else None
            yield buf, eid, parsed
            buf, eid, data = b"", None, []
        elif text.startswith("id:"):
            eid = text[3:].strip()
        elif text.startswith("data:"):
            data.append(text[5:].lstrip(" ") if text[5:6] == " " else text[5:])


def main():
    url, out = sys.argv[1], sys.argv[2]
    r = Recorder(url)
    caps = {"elicitation": {}}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": caps,
                       "clientInfo": {"name": "record-session", "version": "1.0.0"}}}
    resp, raw = r.post(init, read_sse=lambda c, s: (s.read(), None, None))
    r.session = resp.getheader("mcp-session-id")
    r.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    r.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
           read_sse=lambda c, s: (s.read(), None, None))

    # A standalone GET stream, read for a moment, then closed by the client.
    headers = r.headers(accept="text/event-stream", body=False)
    conn, resp, started, _ = r.open("GET", headers)
    conn.sock.settimeout(0.5)
    raw = b""
    try:
        while chunk := resp.read1(65536):
            raw += chunk
    except (socket.timeout, TimeoutError):
        pass
    r.record("GET", headers, None, resp, raw, started, end="cancelled")
    conn.close()

    # A long-running call with progress, cut by the client after the first event with an id.
    last = {}

    def cut_after_first_id(conn, resp):
        body = b""
        for ev, eid, msg in events(resp):
            body += ev
            if eid and msg and msg.get("method") == "notifications/progress":
                last["id"] = eid
                conn.sock.shutdown(socket.SHUT_RDWR)
                return body, None, "client cut the connection"
        return body, None, None

    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "trigger-long-running-operation", "arguments": {"duration": 1.5, "steps": 3},
                       "_meta": {"progressToken": "pt-3"}}}
    r.post(call, read_sse=cut_after_first_id)
    # server-everything's InMemoryEventStore returns an event id where the SDK expects a stream
    # id, so a resumed GET gets only the events stored before it: wait for the operation to end.
    time.sleep(2.0)

    # Resume with Last-Event-ID: the rest of the stream, up to the final response.
    headers = r.headers(accept="text/event-stream", body=False, extra=[("Last-Event-ID", last.get("id", "0"))])
    conn, resp, started, _ = r.open("GET", headers)
    body, end = b"", "eof"
    if resp.status == 200:
        conn.sock.settimeout(5)
        for ev, eid, msg in events(resp):
            body += ev
            if msg and msg.get("id") == 3 and ("result" in msg or "error" in msg):
                end = "open"  # the client stops reading once the answer is complete
                break
    else:
        body = resp.read()
    r.record("GET", headers, None, resp, body, started, end=end)
    conn.close()

    # A server request on the POST stream, answered by a response POST.
    def answer_elicitation(conn, resp):
        body = b""
        for ev, eid, msg in events(resp):
            body += ev
            if msg and msg.get("method") == "elicitation/create":
                answer = {"jsonrpc": "2.0", "id": msg["id"],
                          "result": {"action": "decline"}}
                r.post(answer)
            if msg and msg.get("id") == 4 and ("result" in msg or "error" in msg):
                break
        rest = resp.read()
        return body + rest, None, None

    elicit = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "trigger-elicitation-request", "arguments": {}}}
    # The tools/call entry goes first in the HAR (it started first), its answer after it.
    before = len(r.entries)
    r.post(elicit, read_sse=answer_elicitation)
    if len(r.entries) == before + 2:
        r.entries[before], r.entries[before + 1] = r.entries[before + 1], r.entries[before]

    # DELETE, then a call with the deleted session id.
    headers = r.headers(body=False)
    conn, resp, started, _ = r.open("DELETE", headers)
    r.record("DELETE", headers, None, resp, resp.read(), started)
    conn.close()
    r.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "still there?"}}})

    with open(out, "w", encoding="utf-8") as f:
        json.dump(r.har(), f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"recorded {len(r.entries)} entries to {out}")


if __name__ == "__main__":
    sys.exit(main())
