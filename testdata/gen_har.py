#!/usr/bin/env python3
"""Generates the mcp-verdict HAR corpus.

For every case below this writes testdata/har/<case>.har (HAR 1.2) and
testdata/har/<case>.expect.json (the verdicts the contract, the rustdoc of Verdict in src/core/vocab/verdict.rs, demands).
Python 3.11, stdlib only, deterministic: running it twice gives the same bytes.

    python3 testdata/gen_har.py

A case is one function decorated with @case. It builds exchanges with `c.x(request, response,
outcome=..., advice=..., ...)`. Facts of the input (method, id, tool, status, content_type, end)
are copied from the request/response given; every judgement (outcome, advice, after_ms,
violations, event_count, ...) is written out by hand in the case.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "har"

URL = "https://mcp.example.test/mcp"
V0326, V0618, V1125, V26 = "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"
ACCEPT_BOTH = "application/json, text/event-stream"
SESSION = "5f1c2a9e-7b3d-4c11-9a0e-2d6f8b4e1a73"
AUTO = ...  # "derive it" sentinel; None means "leave it out"

# ---------------------------------------------------------------------------------------------
# JSON-RPC and MCP message builders


def js(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def rpc(id_, method, params=None):
    d = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        d["params"] = params
    return d


def notif(method, params=None):
    d = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        d["params"] = params
    return d


def ok(id_, result):
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def err(id_, code, message, data=None):
    e = {"code": code, "message": message}
    if data is not None:
        e["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": e}


def tool_result(text="ok", rt="complete", is_error=False, **extra):
    """A CallToolResult. rt=None leaves resultType out (2025-x servers)."""
    r = {}
    if rt is not None:
        r["resultType"] = rt
    r["content"] = [{"type": "text", "text": text}]
    r["isError"] = is_error
    r.update(extra)
    return r


def progress(p, total=3, token="pt-1", message=None):
    params = {"progressToken": token, "progress": p, "total": total}
    if message:
        params["message"] = message
    return notif("notifications/progress", params)


def log_message(text):
    return notif("notifications/message", {"level": "info", "logger": "tool", "data": text})


TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
    },
    {
        "name": "delete_file",
        "description": "Delete a file from the workspace",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
    },
    {
        "name": "set_flag",
        "description": "Set a feature flag to a value",
        "inputSchema": {
            "type": "object",
            "properties": {"flag": {"type": "string"}, "on": {"type": "boolean"}},
            "required": ["flag", "on"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    },
]

# ---------------------------------------------------------------------------------------------
# Requests. A request is a dict: body (JSON value, str or bytes), headers [(name, value)], http.

NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
         "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def meta26(caps=None, more=None):
    m = {
        "io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientInfo": {"name": "corpus-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
    }
    m.update(more or {})
    return m


def req26(id_, method, params=None, *, caps=None, meta_more=None, meta=AUTO, accept=ACCEPT_BOTH,
          version=V26, mcp_method=AUTO, mcp_name=AUTO, extra_headers=()):
    """A 2026-07-28 POST: Accept, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name, _meta."""
    p = {}
    if meta is AUTO:
        p["_meta"] = meta26(caps, meta_more)
    elif meta is not None:
        p["_meta"] = meta
    p.update(params or {})
    key = NAMED.get(method)
    if mcp_name is AUTO:
        mcp_name = p.get(key) if key else None
    if mcp_method is AUTO:
        mcp_method = method
    headers = [("Accept", accept), ("Content-Type", "application/json"), ("MCP-Protocol-Version", version),
               ("Mcp-Method", mcp_method), ("Mcp-Name", mcp_name)]
    headers = [(n, v) for n, v in headers if v is not None] + list(extra_headers)
    return {"body": rpc(id_, method, p), "headers": headers}


def call26(id_, tool, arguments=None, **kw):
    return req26(id_, "tools/call", {"name": tool, "arguments": arguments or {}}, **kw)


def h25(version, *, session=SESSION, send_version=AUTO, accept=ACCEPT_BOTH):
    """Headers of a 2025-x POST after initialize. 2025-03-26 has no MCP-Protocol-Version header."""
    if send_version is AUTO:
        send_version = version != V0326
    headers = [("Accept", accept), ("Content-Type", "application/json")]
    if send_version:
        headers.append(("MCP-Protocol-Version", version))
    if session:
        headers.append(("Mcp-Session-Id", session))
    return headers


def req25(version, id_, method, params=None, **kw):
    return {"body": rpc(id_, method, params if params is not None else {}), "headers": h25(version, **kw)}


def call25(version, id_, tool, arguments=None, meta=None, **kw):
    params = {"name": tool, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return req25(version, id_, "tools/call", params, **kw)


def notif25(version, method, params=None, **kw):
    return {"body": notif(method, params), "headers": h25(version, **kw)}


# ---------------------------------------------------------------------------------------------
# Responses


def resp(status, body=b"", headers=(), ctype=None, *, error=None, mcp_end=None, b64=False):
    if isinstance(body, (dict, list)):
        body = js(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    hs = []
    if ctype is not None:
        hs.append(("Content-Type", ctype))
    hs += list(headers)
    return {"status": status, "body": body, "headers": hs, "ctype": ctype, "error": error,
            "mcp_end": mcp_end, "b64": b64}


def jresp(obj, status=200, headers=(), ctype="application/json", **kw):
    return resp(status, obj, headers, ctype, **kw)


def sse(body: bytes, status=200, headers=(), ctype="text/event-stream", **kw):
    hs = [("Cache-Control", "no-cache, no-transform"), ("X-Accel-Buffering", "no")] + list(headers)
    return resp(status, body, hs, ctype, **kw)


def accepted(status=202, body=b"", ctype=None):
    return resp(status, body, (), ctype)


def no_response(error):
    return {"status": 0, "body": b"", "headers": [], "ctype": None, "error": error, "mcp_end": None,
            "b64": False}


def ev(msg=None, *, event="message", id=None, retry=None, data=None, space=True, nl="\n"):
    """One SSE event as bytes. data (str) overrides msg; a data str with '\n' becomes several
    data: lines. event=None leaves the event: line out."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    payload = data if data is not None else js(msg)
    for part in payload.split("\n"):
        lines.append(("data: " if space else "data:") + part)
    return (nl.join(lines) + nl + nl).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Cases

OUTCOMES = {  # outcome -> (layer, complete)
    "HTTP_ERROR": ("transport", False),
    "CONNECTION_FAILED": ("transport", False),
    "UNEXPECTED_CONTENT_TYPE": ("transport", False),
    "NOTIFICATION_ACCEPTED": ("transport", True),
    "UNEXPECTED_ACCEPTED": ("transport", False),
    "STREAM_ABORTED": ("stream", False),
    "STREAM_OPEN": ("stream", False),
    "LIMIT_EXCEEDED": ("stream", False),
    "MALFORMED_JSON": ("protocol", False),
    "INVALID_ENVELOPE": ("protocol", False),
    "JSONRPC_ERROR": ("protocol", True),
    "CANCELLED": ("stream", False),
    "INVALID_TOOL_RESULT": ("protocol", False),
    "INPUT_REQUIRED": ("interaction", True),
    "DEFERRED": ("interaction", True),
    "TOOL_ERROR": ("application", True),
    "TOOL_SUCCESS": ("application", True),
    "SUCCESS": ("application", True),
    "LISTENING": ("stream", True),
    "SESSION_TERMINATED": ("transport", True),
    "METHOD_NOT_ALLOWED": ("transport", True),
}
ADVICE = {"none", "retry", "do_not_retry", "resume", "resubmit_with_input", "reinitialize", "fix_request",
          "reauthenticate", "poll"}
TASK_STATUSES = {None, "working", "input_required", "completed", "failed", "cancelled"}
SOURCES = {"header", "meta", "initialize", "earlier", "default"}
VERSIONS = {V0326, V0618, V1125, V26}

STATUS_TEXT = {0: "", 200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
               404: "Not Found", 405: "Method Not Allowed",
               429: "Too Many Requests",
               500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def header(headers, name):
    for n, v in headers:
        if n.lower() == name.lower():
            return v
    return None


class Case:
    def __init__(self, name, about, pv=V26, src="header", limits=None):
        self.name, self.about, self.pv, self.src, self.limits = name, about, pv, src, limits
        self.entries, self.verdicts, self.skipped = [], [], []
        self.calls = None  # expected logical calls (replay --calls), when the case states them
        self.exit_code = None  # stated by hand where the run forgives an incomplete exchange

    # -- HAR ------------------------------------------------------------------------------
    def _entry(self, req, rsp, http="POST", url=URL, at=None):
        """at: seconds after 10:00:00 when the request started (default: one second per entry)."""
        i = len(self.entries)
        ms = round((i if at is None else at) * 1000)
        stamp = f"2026-12-02T10:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"
        e = {"startedDateTime": stamp, "time": rsp.get("time", 13)}
        rq = {"method": http, "url": url, "httpVersion": "HTTP/1.1",
              "headers": [{"name": n, "value": v} for n, v in req["headers"]],
              "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0}
        body = req.get("body")
        if body is not None:
            text = body if isinstance(body, str) else js(body)
            rq["postData"] = {"mimeType": header(req["headers"], "Content-Type") or "application/json",
                              "text": text}
            rq["bodySize"] = len(text.encode("utf-8"))
        e["request"] = rq
        raw = rsp["body"]
        content = {"size": len(raw), "mimeType": rsp["ctype"] or ("x-unknown" if rsp["status"] == 0 else "")}
        if raw or rsp["status"] != 0:
            try:
                text = raw.decode("utf-8")
                valid = True
            except UnicodeDecodeError:
                valid = False
            if rsp["b64"] or not valid:
                content["text"] = base64.b64encode(raw).decode("ascii")
                content["encoding"] = "base64"
            else:
                content["text"] = text
        e["response"] = {"status": rsp["status"], "statusText": STATUS_TEXT.get(rsp["status"], ""),
                         "httpVersion": "HTTP/1.1" if rsp["status"] else "",
                         "headers": [{"name": n, "value": v} for n, v in rsp["headers"]],
                         "cookies": [], "content": content, "redirectURL": "",
                         "headersSize": -1, "bodySize": len(raw) if rsp["status"] else -1}
        e["cache"] = {}
        e["timings"] = {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 1, "wait": 10, "receive": 2}
        if rsp["error"]:
            e["_error"] = rsp["error"]
        if rsp["mcp_end"]:
            e["_mcp_end"] = rsp["mcp_end"]
        if rsp.get("timings"):
            e["timings"].update(rsp["timings"])
        if rsp.get("arrivals"):
            e["_mcp_arrivals"] = rsp["arrivals"]
        self.entries.append(e)
        return i

    def skip(self, req, rsp, http="GET", url=URL):
        self.skipped.append(self._entry(req, rsp, http, url))

    def x(self, req, rsp, *, outcome, advice, pv=None, src=None, after_ms=None, error_code=None,
          result_type=None, event_count=None, last_event_id=None, resumable=False, violations=(),
          unterminated=None, http="POST", at=None, server_requests=(), batch_position=None, of=None,
          layer=None, task_status=AUTO):
        """Adds one MCP exchange and its expected verdict. `of`: the request whose answer a linked
        resumption GET is (its method/id/tool are reported); `batch_position`: a further row of the
        previous entry (a batch), for its request at that position. `layer`: when not the
        outcome's (`auth` for a refused 401/403)."""
        if batch_position is not None and batch_position > 0:
            i = len(self.entries) - 1
        else:
            i = self._entry(req, rsp, http, at=at)
        body = req.get("body")
        first = of["body"] if of else body
        if isinstance(first, list):
            reqs = [m for m in first if "method" in m and "id" in m]
            first = reqs[batch_position or 0] if reqs else first[0]
        method = first.get("method") if isinstance(first, dict) else None
        id_ = first.get("id") if isinstance(first, dict) and "method" in first and "id" in first else None
        tool = first["params"].get("name") if method == "tools/call" else None
        if http == "GET":
            kind = "resume" if header(req["headers"], "Last-Event-ID") else "listen"
        elif http == "DELETE":
            kind = "terminate"
        elif isinstance(body, list):
            kind = "request" if any("method" in m and "id" in m for m in body) else "notification"
        elif isinstance(body, dict) and "method" in body:
            kind = "request" if "id" in body else "notification"
        elif isinstance(body, dict) and ("result" in body or "error" in body):
            kind = "response"
            id_ = body.get("id")
        else:
            kind = "request"
        ctype = rsp["ctype"].split(";")[0].strip().lower() if rsp["ctype"] else None
        outcome_layer, complete = OUTCOMES[outcome]
        layer = layer or outcome_layer
        assert advice in ADVICE, advice
        assert task_status is AUTO or task_status in TASK_STATUSES, task_status
        stated = {} if task_status is AUTO else {"task_status": task_status}
        self.verdicts.append({
            "index": i,
            "http_method": http,
            "kind": kind,
            "batch_position": batch_position,
            "server_requests": [{"method": m, "id": d} for m, d in server_requests],
            "method": method,
            "id": id_,
            "tool": tool,
            "protocol_version": pv or self.pv,
            "protocol_version_source": src or self.src,
            "outcome": outcome,
            "layer": layer,
            "complete": complete,
            "status": rsp["status"] or None,
            "content_type": ctype,
            "error_code": error_code,
            "result_type": result_type,
            "event_count": event_count,
            "last_event_id": last_event_id,
            "resumable": resumable,
            "end": rsp["mcp_end"] or ("reset" if rsp["error"] else "eof"),
            "retry": {"advice": advice, "after_ms": after_ms},
            "violations": sorted(set(violations)),
            "unterminated": None if unterminated is None else {"looked_final": unterminated},
            **stated,
        })
        return i

    # -- 2025-x handshake -------------------------------------------------------------------
    def handshake(self, version, initialized_resp=None, initialized_outcome="NOTIFICATION_ACCEPTED",
                  initialized_violations=(), init_violations=()):
        """initialize (version from its params and result; session id minted) then
        notifications/initialized answered 202. 2025-06-18+ clients send MCP-Protocol-Version on
        the notification (source `header`); 2025-03-26 has no such header (source `initialize`)."""
        caps = {"elicitation": {}} if version != V0326 else {}
        init = {"body": rpc(1, "initialize", {"protocolVersion": version, "capabilities": caps,
                                              "clientInfo": {"name": "corpus-client", "version": "1.0.0"}}),
                "headers": [("Accept", ACCEPT_BOTH), ("Content-Type", "application/json")]}
        server_caps = {"tools": {"listChanged": False}}
        if version == V1125:
            server_caps["tasks"] = {"requests": {"tools": {"call": {}}}}
        result = {"protocolVersion": version, "capabilities": server_caps,
                  "serverInfo": {"name": "corpus-server", "version": "2.1.0"}}
        self.x(init, jresp(ok(1, result), headers=[("Mcp-Session-Id", SESSION)]),
               outcome="SUCCESS", advice="none", pv=version, src="initialize", violations=init_violations)
        self.x(notif25(version, "notifications/initialized"), initialized_resp or accepted(),
               outcome=initialized_outcome, advice="none", pv=version,
               src="initialize" if version == V0326 else "header", violations=initialized_violations)

    def tools_list26(self, id_=1):
        self.x(req26(id_, "tools/list"), jresp(ok(id_, {"resultType": "complete", "cacheScope": "public",
                                                         "ttlMs": 0, "tools": TOOLS})),
               outcome="SUCCESS", advice="none", result_type="complete")

    # -- output -------------------------------------------------------------------------------
    def har(self):
        return {"log": {"version": "1.2",
                        "creator": {"name": "mcp-verdict testdata/gen_har.py", "version": "1"},
                        "pages": [],
                        "entries": self.entries}}

    def call(self, entries, *, outcome, post_count=None, statuses=None, ids=(), retry_origin="none",
             risk=False, violations=(), **more):
        """An expected logical call: the exchanges it groups, and its judgement written by hand.
        `complete` is the outcome's unless stated (a call following a task: DEFERRED, and a
        poll answered -32602, are incomplete)."""
        if self.calls is None:
            self.calls = []
        rows = {v["index"]: v for v in self.verdicts}
        first = rows[entries[0]]
        c = {"call": len(self.calls), "entries": list(entries), "method": first["method"], "tool": first["tool"],
             "post_count": post_count if post_count is not None else
             sum(1 for e in entries if self.entries[e]["request"]["method"] == "POST"),
             "http_statuses": statuses if statuses is not None else
             [self.entries[e]["response"]["status"] or None for e in entries],
             "ids": list(ids), "outcome": outcome, "complete": OUTCOMES[outcome][1],
             "retry_origin": retry_origin, "double_execution_risk": risk, "violations": sorted(set(violations))}
        c.update(more)
        self.calls.append(c)

    def expect(self):
        return {"about": self.about,
                "limits": self.limits,
                "exit_code": self.exit_code if self.exit_code is not None else
                0 if all(v["complete"] for v in self.verdicts) else 1,
                "skipped": self.skipped,
                "verdicts": self.verdicts}


CASES = []


def case(about, pv=V26, src="header", limits=None, handshake=False):
    """Declares a corpus case: the decorated function's name is the case's name and `about` its
    description; the function fills a fresh Case, begun with the handshake of `pv` when asked."""
    def register(fill):
        def make():
            c = Case(fill.__name__, about, pv=pv, src=src, limits=limits)
            if handshake:
                c.handshake(pv)
            fill(c)
            return c
        CASES.append(make)
        return fill
    return register


SSE_OK = dict(outcome="TOOL_SUCCESS", advice="none", result_type="complete")

# ============================================================================================
# The eleven synthetic cases of the seed article (Node.js classifier near its end), written as
# spec-correct 2026-07-28 exchanges (the article: complete requests also need _meta and the
# required headers). Tool "synthetic", id 1, as in its onePost().

GOOD = tool_result("ok")


@case("Seed article case 'baseline complete -> TOOL_SUCCESS': HTTP 200, application/json, "
      "resultType complete, isError false. A clean 2026-07-28 exchange with no violations.")
def seed_baseline(c):
    c.x(call26(1, "synthetic"), jresp(ok(1, GOOD)), outcome="TOOL_SUCCESS", advice="none", result_type="complete")


@case("Seed article case '503 then 200 requires explicit second POST': two entries. "
      "The 503 is HTTP_ERROR decided before the body; tool 'synthetic' has no annotations in the capture, so "
      "it is not safe to repeat (do_not_retry). The second, explicit POST (new id) succeeds. Exit 1 because "
      "one exchange is incomplete.")
def seed_503_then_200(c):
    c.x(call26(1, "synthetic"), jresp({"note": "synthetic outage"}, status=503),
        outcome="HTTP_ERROR", advice="do_not_retry")
    c.x(call26(2, "synthetic"), jresp(ok(2, GOOD)), **SSE_OK)


@case("Seed article case 'HTTP 200 + JSON-RPC error': a complete answer at the protocol "
      "layer (JSONRPC_ERROR, error_code -32602 kept); -32602 is not a pre-dispatch code, so advice none.")
def seed_jsonrpc_error(c):
    c.x(call26(1, "synthetic"), jresp(err(1, -32602, "synthetic invalid params")),
        outcome="JSONRPC_ERROR", advice="none", error_code=-32602)


@case("Seed article case 'HTTP 200 + tool isError': isError true is a tool execution "
      "error, a complete answer (TOOL_ERROR, advice none: show it to the model, do not resend).")
def seed_tool_is_error(c):
    c.x(call26(1, "synthetic"), jresp(ok(1, tool_result("failed", is_error=True))),
        outcome="TOOL_ERROR", advice="none", result_type="complete")


@case("Seed article case 'transport_precedence': HTTP 500 with a success-looking "
      "body is HTTP_ERROR (transport decides before the body); the body is no JSON-RPC error so error_code "
      "is null; an unannotated tools/call may have run, so do_not_retry.")
def seed_http500_success_body(c):
    c.x(call26(1, "synthetic"), jresp(ok(1, GOOD), status=500), outcome="HTTP_ERROR", advice="do_not_retry")


@case("Seed article case 'malformed JSON': body '{unclosed' on 200 application/json is "
      "MALFORMED_JSON with jsonrpc.malformed; may have run, tool unknown, so do_not_retry.")
def seed_malformed_json(c):
    c.x(call26(1, "synthetic"), resp(200, "{unclosed", ctype="application/json"),
        outcome="MALFORMED_JSON", advice="do_not_retry", violations=["jsonrpc.malformed"])


@case("Seed article case 'conflicting_envelope': result and error together is "
      "INVALID_ENVELOPE (jsonrpc.result_and_error). Judgement: an invalid envelope reports neither its "
      "error_code nor its resultType (both null).")
def seed_result_and_error(c):
    body = ok(1, GOOD)
    body["error"] = {"code": -32602, "message": "synthetic invalid params"}
    c.x(call26(1, "synthetic"), jresp(body), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.result_and_error"])


@case("Seed article case 'wrong_response_id': a JSON body answering id 99 to request "
      "id 1 is INVALID_ENVELOPE (jsonrpc.id_mismatch); result_type null because the result is not ours.")
def seed_wrong_response_id(c):
    c.x(call26(1, "synthetic"), jresp(ok(99, GOOD)), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.id_mismatch"])


@case("Seed article case 'input_required is not successful completion': MRTR "
      "InputRequiredResult with inputRequests on tools/call -> INPUT_REQUIRED (complete exchange, "
      "unfinished operation), advice resubmit_with_input.")
def seed_input_required(c):
    result = {"resultType": "input_required", "inputRequests": {"approval": {
        "method": "elicitation/create", "params": {"mode": "form", "message": "synthetic input",
                                                  "requestedSchema": {"type": "object", "properties": {}}}}}}
    c.x(call26(1, "synthetic", caps={"elicitation": {"form": {}}}), jresp(ok(1, result)),
        outcome="INPUT_REQUIRED", advice="resubmit_with_input", result_type="input_required")


@case("Seed article case 'legacy result without resultType': a 2025-11-25 server "
      "sends no resultType (the field does not exist before 2026-07-28); absent means complete, so plain "
      "TOOL_SUCCESS with no violation. Version from initialize, later calls from the header.", pv=V1125, handshake=True)
def seed_legacy_no_result_type(c):
    c.x(call25(V1125, 2, "synthetic"), jresp(ok(2, tool_result("legacy ok", rt=None))),
        outcome="TOOL_SUCCESS", advice="none")


@case("Seed article case 'invalid tool content shape': content is the string "
      "'not-an-array' -> INVALID_TOOL_RESULT (tool.content_not_array); result_type is still reported as sent.")
def seed_content_not_array(c):
    result = {"resultType": "complete", "content": "not-an-array", "isError": False}
    c.x(call26(1, "synthetic"), jresp(ok(1, result)), outcome="INVALID_TOOL_RESULT", advice="do_not_retry",
        result_type="complete", violations=["tool.content_not_array"])


# ============================================================================================
# SSE framing (WHATWG event-stream parsing)

WEATHER = {"city": "Berlin"}
PT = {"progressToken": "pt-1"}


def weather_call(id_=1, **kw):
    kw.setdefault("meta_more", PT)
    return call26(id_, "get_weather", WEATHER, **kw)


def final(id_=1, text="12°C, light rain", **kw):
    return ok(id_, tool_result(text, **kw))


@case("SSE with CR-only line ends (WHATWG allows CR, LF and CRLF). A progress "
      "notification, a keepalive comment and the final response: TOOL_SUCCESS, 2 counted events.")
def sse_cr_line_ends(c):
    body = ev(progress(1), nl="\r") + b": keepalive\r\r" + ev(final(), nl="\r")
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("SSE with CRLF line ends: progress then final response -> TOOL_SUCCESS, "
      "2 counted events.")
def sse_crlf_line_ends(c):
    body = ev(progress(1), nl="\r\n") + ev(final(), nl="\r\n")
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("The body's very last byte is a CR that ends the final event's blank line "
      "('...}\\r\\r' at EOF). A lone CR is a complete line end (WHATWG), so the final event is dispatched at "
      "EOF without waiting for an LF: TOOL_SUCCESS, nothing unterminated.")
def sse_final_cr_at_eof(c):
    body = ev(progress(1)) + ev(final(), nl="\r")
    assert body.endswith(b"}\r\r")
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("A leading UTF-8 BOM before the first 'data:' line; WHATWG strips one leading BOM, so the "
      "line is still a data field and the response is found: TOOL_SUCCESS.")
def sse_bom(c):
    body = b"\xef\xbb\xbf" + ev(final(), event=None)
    c.x(weather_call(), sse(body), event_count=1, **SSE_OK)


@case("Comment lines (': keepalive') before, between and inside events are ignored and not "
      "counted (HTTP-26: clients must ignore SSE comments): TOOL_SUCCESS, 2 counted events.")
def sse_comments(c):
    body = (b": keepalive\n\n" + ev(progress(1)) + b": keepalive\n\n"
            + b"event: message\n: inline comment\ndata: " + js(final()).encode() + b"\n\n")
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("'data:' without a space (progress) and 'data: ' with one (final): WHATWG "
      "strips at most one leading space, both parse as JSON. TOOL_SUCCESS.")
def sse_data_colon_space(c):
    body = ev(progress(1), space=False) + ev(final(), space=True)
    assert b"data:{" in body and b"data: {" in body
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("The final response is split over two 'data:' lines; WHATWG joins them with LF, "
      "and JSON allows a newline between tokens, so it parses: TOOL_SUCCESS, 1 event.")
def sse_multiline_data(c):
    text = js(final())
    cut = text.index(',"result"') + 1
    body = ev(data=text[:cut] + "\n" + text[cut:])
    assert body.count(b"data: ") == 2
    c.x(weather_call(), sse(body), event_count=1, **SSE_OK)


@case("A progress event with no 'event:' line and the final with 'event: message': "
      "both are message events (absent type means message). TOOL_SUCCESS, no violation.")
def sse_event_field_optional(c):
    body = ev(progress(1), event=None) + ev(final())
    c.x(weather_call(), sse(body), event_count=2, **SSE_OK)


@case("An 'event: heartbeat' event (SDK clients ignore non-message events) then the "
      "final: sse.non_message_event (should), TOOL_SUCCESS. Judgement: the heartbeat is dispatched with "
      "non-empty data, so event_count counts it (2), but its data is not judged as JSON-RPC.")
def sse_non_message_event(c):
    body = ev(event="heartbeat", data='{"ts":1796205600}') + ev(final())
    c.x(weather_call(), sse(body), event_count=2, violations=["sse.non_message_event"], **SSE_OK)


@case("2025-06-18 stream with an id-only event ('id: 8' then a blank line): it dispatches "
      "nothing but sets the last event id (WHATWG), and the final has no id line, so last_event_id is '8'; "
      "resumable because an id was seen. TOOL_SUCCESS.", pv=V0618, handshake=True)
def sse_id_only_event(c):
    body = ev(progress(1), id="7") + b"id: 8\n\n" + ev(final(2, rt=None))
    c.x(call25(V0618, 2, "get_weather", WEATHER, meta=PT), sse(body), event_count=2, last_event_id="8",
        resumable=True, outcome="TOOL_SUCCESS", advice="none")


@case("2025-11-25 priming event 'id: 1\\ndata:\\n\\n' (empty data, SEP-1699) then the "
      "final with id 2: the priming event is not JSON-parsed and not counted (event_count 1); ids seen, so "
      "resumable, last_event_id '2'. TOOL_SUCCESS.", pv=V1125, handshake=True)
def sse_priming_event_1125(c):
    body = ev(event=None, id="1", data="", space=False) + ev(final(2, rt=None), id="2")
    assert body.startswith(b"id: 1\ndata:\n\n")
    c.x(call25(V1125, 2, "get_weather", WEATHER), sse(body), event_count=1, last_event_id="2", resumable=True,
        outcome="TOOL_SUCCESS", advice="none")


@case("An event 'data: \\n' (one space stripped -> empty data) on a 2026-07-28 stream "
      "is skipped, never flagged as bad JSON and not counted; then the final. TOOL_SUCCESS, event_count 1.")
def sse_empty_data_event(c):
    body = b"data: \n\n" + ev(final())
    c.x(weather_call(), sse(body), event_count=1, **SSE_OK)


@case("A 'retry: 3000' field on a 2025-06-18 stream (no id): the parser takes it as the "
      "reconnection time, not as data; the final follows. TOOL_SUCCESS, no violation, not resumable (no id).", pv=V0618, handshake=True)
def sse_retry_field(c):
    body = b"retry: 3000\n\n" + ev(final(2, rt=None))
    c.x(call25(V0618, 2, "get_weather", WEATHER), sse(body), event_count=1, outcome="TOOL_SUCCESS", advice="none")


@case("The final event holds invalid UTF-8 bytes (0xE9, 0xFF) inside a JSON string; SSE "
      "decodes with U+FFFD replacement so the JSON still parses: TOOL_SUCCESS. Body stored base64 in the HAR.")
def sse_invalid_utf8(c):
    text = js(final(text="caf@ r@sum@"))
    raw = text.encode().replace(b"caf@", b"caf\xe9").replace(b"r@sum@", b"r\xffsum\xe9")
    body = b"event: message\ndata: " + raw + b"\n\n"
    c.x(weather_call(), sse(body), event_count=1, **SSE_OK)


@case("The final response's 'data:' line ends but the blank line never comes before "
      "EOF: WHATWG discards an unterminated event, so no response was dispatched -> STREAM_ABORTED with "
      "unterminated.looked_final true, sse.unterminated_event and sse.closed_before_response (2026).")
def sse_unterminated_final(c):
    body = ev(progress(1)) + b"event: message\ndata: " + js(final()).encode() + b"\n"
    c.x(weather_call(), sse(body), outcome="STREAM_ABORTED", advice="do_not_retry", event_count=1,
        violations=["sse.closed_before_response", "sse.unterminated_event"], unterminated=True)


@case("resources/read stream: one progress event, then a second progress "
      "event cut before its blank line at EOF. STREAM_ABORTED, unterminated.looked_final false; not a "
      "tools/call, so safe to repeat -> retry.")
def sse_unterminated_notification(c):
    req = req26(1, "resources/read", {"uri": "file:///notes/todo.md"}, meta_more=PT)
    body = ev(progress(1)) + b"event: message\ndata: " + js(progress(2)).encode() + b"\n"
    c.x(req, sse(body), outcome="STREAM_ABORTED", advice="retry", event_count=1,
        violations=["sse.closed_before_response", "sse.unterminated_event"], unterminated=False)


@case("Clean 2026-07-28 stream: increasing progress for the request's token and a "
      "notifications/message allowed by _meta logLevel, then the final: TOOL_SUCCESS, 4 events, no violation.")
def sse_progress_then_final(c):
    req = weather_call(meta_more={"progressToken": "pt-1", "io.modelcontextprotocol/logLevel": "info"})
    body = ev(progress(1)) + ev(log_message("fetching forecast")) + ev(progress(2)) + ev(final())
    c.x(req, sse(body), event_count=4, **SSE_OK)


@case("tools/list marks get_weather readOnlyHint; its call streams only progress "
      "and the stream ends: STREAM_ABORTED, sse.closed_before_response (2026: closing loses the request). "
      "Read-only tool, so retry as a new request; no Retry-After, after_ms null.")
def sse_notifications_only_eof(c):
    c.tools_list26(1)
    body = ev(progress(1)) + ev(progress(2))
    c.x(weather_call(2), sse(body), outcome="STREAM_ABORTED", advice="retry", event_count=2,
        violations=["sse.closed_before_response"])


@case("A response for id 99 arrives on the stream of request 1 (sse.foreign_id_response; "
      "the wait goes on), then ours: TOOL_SUCCESS, 2 events.")
def sse_foreign_then_ours(c):
    body = ev(ok(99, tool_result("not for you"))) + ev(final())
    c.x(weather_call(), sse(body), event_count=2, violations=["sse.foreign_id_response"], **SSE_OK)


@case("A progress notification after the final response (2026: the final response "
      "SHOULD terminate the stream): sse.after_final, still TOOL_SUCCESS. Judgement: the trailing event is "
      "counted (dispatched, non-empty data): event_count 3.")
def sse_events_after_final(c):
    body = ev(progress(1)) + ev(final()) + ev(progress(3))
    c.x(weather_call(), sse(body), event_count=3, violations=["sse.after_final"], **SSE_OK)


@case("A server->client request (sampling/createMessage with an id) on a 2026-07-28 "
      "POST stream: 'MUST NOT send independent JSON-RPC requests' -> sse.server_request; not terminal; the "
      "final follows: TOOL_SUCCESS.")
def sse_server_request_2026(c):
    srv = rpc("srv-1", "sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text",
                                                  "text": "Summarize"}}], "maxTokens": 100})
    body = ev(srv) + ev(final())
    c.x(weather_call(), sse(body), event_count=2, violations=["sse.server_request"],
        server_requests=[("sampling/createMessage", "srv-1")], **SSE_OK)


@case("2025-11-25 allows server requests on a POST stream: an "
      "elicitation/create then the final, no violation. The client POSTs its answer (a JSON-RPC response, "
      "no method) and gets 202: NOTIFICATION_ACCEPTED, kind response, method null, id 'srv-1' (the id it "
      "answers). The tool call reports the server request; as calls, the answer joins the tool call.", pv=V1125, handshake=True)
def sse_server_request_2025_allowed(c):
    srv = rpc("srv-1", "elicitation/create", {"mode": "form", "message": "Which unit?", "requestedSchema": {
        "type": "object", "properties": {"unit": {"type": "string", "enum": ["C", "F"]}}}})
    c.x(call25(V1125, 2, "get_weather", WEATHER), sse(ev(srv) + ev(final(2, rt=None))), event_count=2,
        outcome="TOOL_SUCCESS", advice="none", server_requests=[("elicitation/create", "srv-1")])
    answer = {"body": {"jsonrpc": "2.0", "id": "srv-1", "result": {"action": "accept", "content": {"unit": "C"}}},
              "headers": h25(V1125)}
    c.x(answer, accepted(), outcome="NOTIFICATION_ACCEPTED", advice="none")
    c.call([0], outcome="SUCCESS", ids=[1], client="corpus-client@1.0.0")
    c.call([1], outcome="NOTIFICATION_ACCEPTED")
    c.call([2, 3], outcome="TOOL_SUCCESS", ids=[2])


@case("tools/list stream whose only event is 'data: hello world' (not JSON) then EOF: "
      "MALFORMED_JSON with sse.event_not_json; the stream also closed without the response "
      "(sse.closed_before_response, judgement: the rule fires whenever a stream reaches EOF without our "
      "response). Not a tools/call -> retry.")
def sse_not_json_then_eof(c):
    c.x(req26(1, "tools/list"), sse(ev(data="hello world")), outcome="MALFORMED_JSON", advice="retry",
        event_count=1, violations=["sse.closed_before_response", "sse.event_not_json"])


@case("The only response on the stream is for id 7, then EOF: INVALID_ENVELOPE "
      "(sse.foreign_id_response, plus sse.closed_before_response as in sse_not_json_then_eof). Unannotated "
      "tools/call -> do_not_retry.")
def sse_foreign_only_eof(c):
    c.x(weather_call(), sse(ev(ok(7, tool_result("not for you")))), outcome="INVALID_ENVELOPE",
        advice="do_not_retry", event_count=1,
        violations=["sse.closed_before_response", "sse.foreign_id_response"])


@case("Status 200 SSE cut by net::ERR_INCOMPLETE_CHUNKED_ENCODING after one complete "
      "progress event: end 'reset', STREAM_ABORTED; unannotated tools/call -> do_not_retry. Judgement: "
      "sse.closed_before_response is not reported for a reset (a broken transfer, not a server close).")
def sse_reset_midstream(c):
    c.x(weather_call(), sse(ev(progress(1)), error="net::ERR_INCOMPLETE_CHUNKED_ENCODING"),
        outcome="STREAM_ABORTED", advice="do_not_retry", event_count=1)


@case("The capture ended with the stream still open (_mcp_end 'open') after one progress "
      "event: STREAM_OPEN, the outcome is unknown, not aborted; advice none, no violation.")
def sse_stream_open(c):
    c.x(weather_call(), sse(ev(progress(1)), mcp_end="open"), outcome="STREAM_OPEN", advice="none",
        event_count=1)


@case("2025-11-25 priming event with id and 'retry: 3000', then the server "
      "closes (SEP-1699 polling, allowed): STREAM_ABORTED but resumable -> resume after the retry value "
      "(after_ms 3000), last_event_id 'ev-1', no violation.", pv=V1125, handshake=True)
def sse_priming_retry_close_1125(c):
    body = ev(event=None, id="ev-1", retry=3000, data="", space=False)
    c.x(call25(V1125, 2, "delete_file", {"path": "/tmp/old.log"}), sse(body), outcome="STREAM_ABORTED",
        advice="resume", after_ms=3000, event_count=0, last_event_id="ev-1", resumable=True)


@case("2025-11-25 priming event with an id but no 'retry:', then close: resumable "
      "(resume, after_ms null) but the server SHOULD have sent retry first: sse.retry_missing. No "
      "closed_before_response: 2025-11-25 may close after an id.", pv=V1125, handshake=True)
def sse_retry_missing_1125(c):
    body = ev(event=None, id="1", data="", space=False)
    c.x(call25(V1125, 2, "get_weather", WEATHER), sse(body), outcome="STREAM_ABORTED", advice="resume",
        event_count=0, last_event_id="1", resumable=True, violations=["sse.retry_missing"])


@case("2026-07-28 prompts/get stream with 'id:' fields, closed before the response: ids "
      "are legacy (sse.legacy_field) and give no resumption, so resumable false, last_event_id null; "
      "prompts/get is safe to repeat -> retry (a new request), not resume.")
def sse_legacy_ids_2026(c):
    req = req26(1, "prompts/get", {"name": "code_review", "arguments": {"lang": "rust"}}, meta_more=PT)
    body = ev(progress(1), id="ev-1")
    c.x(req, sse(body), outcome="STREAM_ABORTED", advice="retry", event_count=1,
        violations=["sse.closed_before_response", "sse.legacy_field"])


@case("2025-06-18 stream with event ids closed before the response: the server SHOULD "
      "NOT close early (sse.closed_before_response), but an id was seen, so resumable -> resume "
      "(GET with Last-Event-ID), after_ms null (no retry field).", pv=V0618, handshake=True)
def sse_ids_closed_0618(c):
    body = ev(progress(1), id="s2-1")
    c.x(call25(V0618, 2, "get_weather", WEATHER, meta=PT), sse(body), outcome="STREAM_ABORTED", advice="resume",
        event_count=1, last_event_id="s2-1", resumable=True, violations=["sse.closed_before_response"])


@case("2025-03-26 session (no MCP-Protocol-Version header exists in that revision, "
      "so every exchange takes its version from initialize). A complete SSE reply with event ids: "
      "TOOL_SUCCESS, resumable true, last_event_id '0326-2'.", pv=V0326, src="initialize", handshake=True)
def sse_ids_complete_0326(c):
    body = ev(progress(1), id="0326-1") + ev(final(2, rt=None), id="0326-2")
    c.x(call25(V0326, 2, "get_weather", WEATHER, meta=PT), sse(body), event_count=2, last_event_id="0326-2",
        resumable=True, outcome="TOOL_SUCCESS", advice="none")


# ============================================================================================
# Progress and notifications


@case("A progress notification carries token 'pt-other' while the request's "
      "_meta.progressToken is 'pt-1': progress.token_mismatch; the final completes: TOOL_SUCCESS.")
def progress_token_mismatch(c):
    body = ev(progress(1, token="pt-other")) + ev(final())
    c.x(weather_call(), sse(body), event_count=2, violations=["progress.token_mismatch"], **SSE_OK)


@case("Progress 50 then 50 again (must increase with each notification): "
      "progress.not_increasing; TOOL_SUCCESS.")
def progress_not_increasing(c):
    body = ev(progress(50, total=100)) + ev(progress(50, total=100)) + ev(final())
    c.x(weather_call(), sse(body), event_count=3, violations=["progress.not_increasing"], **SSE_OK)


@case("2026-07-28 notifications/message although the request _meta has no "
      "io.modelcontextprotocol/logLevel (server MUST NOT send it then): "
      "notification.message_without_log_level; TOOL_SUCCESS.")
def message_without_log_level(c):
    body = ev(log_message("cache miss")) + ev(final())
    c.x(weather_call(), sse(body), event_count=2, violations=["notification.message_without_log_level"], **SSE_OK)


# ============================================================================================
# Limits (the test harness applies the expect file's "limits")


@case("With max_event_bytes 1024, a ~4 KiB final event exceeds the limit: "
      "LIMIT_EXCEEDED, do_not_retry (the same reply would exceed it again). Judgement: the oversized event "
      "is never dispatched, so event_count counts only the progress event (1).", limits={"max_event_bytes": 1024})
def limit_sse_event_bytes(c):
    body = ev(progress(1)) + ev(final(text="x" * 4000))
    c.x(weather_call(), sse(body), outcome="LIMIT_EXCEEDED", advice="do_not_retry", event_count=1)


@case("With max_body_bytes 1024, a ~3 KiB application/json reply exceeds the body "
      "limit: LIMIT_EXCEEDED, do_not_retry; not SSE, so event_count null.", limits={"max_body_bytes": 1024})
def limit_json_body_bytes(c):
    c.x(weather_call(), jresp(final(text="y" * 3000)), outcome="LIMIT_EXCEEDED", advice="do_not_retry")


# ============================================================================================
# HTTP level


@case("tools/list annotates get_weather readOnlyHint: true; its call gets 503 "
      "with Retry-After: 5 -> HTTP_ERROR, safe to repeat -> retry after 5000 ms.")
def http_503_readonly_retry_after(c):
    c.tools_list26(1)
    c.x(weather_call(2), jresp(err(2, -32603, "upstream unavailable"), status=503, headers=[("Retry-After", "5")]),
        outcome="HTTP_ERROR", advice="retry", after_ms=5000, error_code=-32603)


@case("tools/list annotates delete_file destructive, not idempotent; its call gets 503 "
      "(with Retry-After: 5): it may have run -> do_not_retry. Judgement: after_ms stays null, Retry-After "
      "only fills it when the advice is retry.")
def http_503_destructive(c):
    c.tools_list26(1)
    c.x(call26(2, "delete_file", {"path": "/srv/data/report.csv"}),
        resp(503, "Service Unavailable", [("Retry-After", "5")], "text/plain"),
        outcome="HTTP_ERROR", advice="do_not_retry")


@case("tools/list annotates set_flag idempotentHint: true (readOnlyHint false); a 502 "
      "on its call -> HTTP_ERROR, safe to repeat -> retry; no Retry-After, after_ms null.")
def http_502_idempotent(c):
    c.tools_list26(1)
    c.x(call26(2, "set_flag", {"flag": "beta", "on": True}), resp(502, "<html>Bad Gateway</html>", (), "text/html"),
        outcome="HTTP_ERROR", advice="retry")


@case("429 is rejected before dispatch, so retry always, even for an "
      "unannotated delete_file; Retry-After is an HTTP date 30 s after the response Date -> after_ms 30000.")
def http_429_retry_after_date(c):
    c.x(call26(1, "delete_file", {"path": "/srv/data/report.csv"}),
        resp(429, "Too Many Requests", [("Date", "Wed, 02 Dec 2026 10:00:00 GMT"),
                                        ("Retry-After", "Wed, 02 Dec 2026 10:00:30 GMT")], "text/plain"),
        outcome="HTTP_ERROR", advice="retry", after_ms=30000)


@case("Mcp-Name says get_weather but params.name is delete_file "
      "(request.mcp_name_header); the server answers 400 with HeaderMismatch -32020: HTTP_ERROR, "
      "error_code -32020 kept, fix_request.")
def http_400_header_mismatch(c):
    c.x(call26(1, "delete_file", {"path": "/srv/data/report.csv"}, mcp_name="get_weather"),
        jresp(err(1, -32020, "Mcp-Name header does not match params.name"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32020, violations=["request.mcp_name_header"])


@case("2026-07-28 server without prompts answers prompts/list with 404 and "
      "-32601 (HTTP-26: unimplemented method). No session id -> fix_request; error_code -32601 kept.")
def http_404_method_not_found(c):
    c.x(req26(1, "prompts/list"), jresp(err(1, -32601, "Method not found"), status=404),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32601)


# ---- the 2026-07-28 surface: removed methods, retired and reserved codes, RateLimited --------

@case("2026-07-28 removed ping and logging/setLevel (changelog Major #5) and tasks/list (Major #6): a "
      "client that still sends them breaks request.removed_method; the server answers each as an "
      "unimplemented method, 404 with -32601 (HTTP-26), so fix_request. A notifications/roots/list_changed "
      "(also removed) accepted with 202 breaks the rule too: the rule is the client's, not the server's.")
def removed_methods_2026(c):
    for id_, method in ((1, "ping"), (2, "logging/setLevel"), (3, "tasks/list")):
        params = {"level": "debug"} if method == "logging/setLevel" else None
        c.x(req26(id_, method, params), jresp(err(id_, -32601, f"Method not found: {method}"), status=404),
            outcome="HTTP_ERROR", advice="fix_request", error_code=-32601,
            violations=["request.removed_method"])
    roots = {"body": notif("notifications/roots/list_changed", {"_meta": meta26()}),
             "headers": [("Accept", ACCEPT_BOTH), ("Content-Type", "application/json"),
                         ("MCP-Protocol-Version", V26), ("Mcp-Method", "notifications/roots/list_changed")]}
    c.x(roots, accepted(), outcome="NOTIFICATION_ACCEPTED", advice="none",
        violations=["request.removed_method"])


@case("The methods 2026-07-28 removed are still part of 2025-11-25: ping and logging/setLevel after the "
      "handshake answer with empty results and break no rule (request.removed_method is 2026-07-28 only).",
      pv=V1125, handshake=True)
def removed_methods_kept_1125(c):
    c.x(req25(V1125, 2, "ping"), jresp(ok(2, {})), outcome="SUCCESS", advice="none")
    c.x(req25(V1125, 3, "logging/setLevel", {"level": "debug"}), jresp(ok(3, {})), outcome="SUCCESS",
        advice="none")


@case("2026-07-28 retired -32002 (resource not found, now -32602) and -32042 (URL elicitation required, "
      "2025-11-25 only): a resources/read answered 200 with -32002 and a tools/call whose stream ends with "
      "-32042 are complete JSON-RPC errors (advice none) that break jsonrpc.retired_code. The same -32002 "
      "from a 2025-11-25 server would be right.")
def retired_codes_2026(c):
    c.x(req26(1, "resources/read", {"uri": "file:///srv/data/missing.csv"}),
        jresp(err(1, -32002, "Resource not found", {"uri": "file:///srv/data/missing.csv"})),
        outcome="JSONRPC_ERROR", advice="none", error_code=-32002, violations=["jsonrpc.retired_code"])
    url = err(2, -32042, "This request requires more information.",
              {"elicitations": [{"mode": "url", "elicitationId": "e-1", "url": "https://auth.example.test/x",
                                 "message": "Authorize access"}]})
    c.x(call26(2, "get_weather", {"city": "Oslo"}), sse(ev(url)),
        outcome="JSONRPC_ERROR", advice="none", error_code=-32042, event_count=1,
        violations=["jsonrpc.retired_code"])


@case("2026-07-28 reserves -32020..-32099 for the codes it defines (-32020, -32021, -32022): a tools/call "
      "answered 200 with -32050 breaks jsonrpc.reserved_code (still a complete JSON-RPC error, advice none); "
      "a 400 with -32010 is in the legacy band -32000..-32019 and breaks nothing (a 4xx: fix_request).")
def reserved_code_2026(c):
    c.x(call26(1, "get_weather", {"city": "Oslo"}), jresp(err(1, -32050, "Upstream quota exhausted")),
        outcome="JSONRPC_ERROR", advice="none", error_code=-32050, violations=["jsonrpc.reserved_code"])
    c.x(call26(2, "get_weather", {"city": "Oslo"}), jresp(err(2, -32010, "Tenant suspended"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32010)


@case("RateLimited -32023 (proposed by the rate-limiting SEP; refused before dispatch): retry whatever the "
      "status and the tool. delete_file (unannotated, not safe to repeat) gets 429 with data.retryAfterMs "
      "1500 and Retry-After 2: retry after 1500 ms (the data wins over the header). Re-sent 2 s later it gets "
      "200 with -32023, no data and Retry-After 3: a complete JSON-RPC error, yet retry after 3000 ms. Re-sent "
      "4 s later it succeeds. One call of three POSTs, automatic, no double_execution_risk and no "
      "call.resent_after_complete (the server asked for the re-sends). -32023 is not reported as an "
      "undefined reserved code.")
def rate_limited_2026(c):
    args = {"path": "/srv/data/report.csv"}
    c.x(call26(1, "delete_file", args),
        jresp(err(1, -32023, "Rate limited", {"retryAfterMs": 1500, "limit": 10, "remaining": 0}), status=429,
              headers=[("Retry-After", "2")]), at=0,
        outcome="HTTP_ERROR", advice="retry", after_ms=1500, error_code=-32023)
    c.x(call26(2, "delete_file", args), jresp(err(2, -32023, "Rate limited"), headers=[("Retry-After", "3")]),
        at=2, outcome="JSONRPC_ERROR", advice="retry", after_ms=3000, error_code=-32023)
    c.x(call26(3, "delete_file", args), jresp(ok(3, tool_result("deleted"))), at=6, **SSE_OK)
    c.call([0, 1, 2], outcome="TOOL_SUCCESS", ids=[1, 2, 3], retry_origin="automatic")


# ---- the discovery probe and the fallback to initialize ----------------------------------------

def discover26(id_=0):
    return req26(id_, "server/discover")


DISCOVERED = {"resultType": "complete", "supportedVersions": [V26, V1125], "capabilities": {"tools": {}},
              "cacheScope": "public", "ttlMs": 0}


@case("A client probes with server/discover; the legacy server answers 404 with an empty body, the signal "
      "HTTP-26 names, and the client falls back to initialize 2025-11-25 and lists tools. The refused probe "
      "is HTTP_ERROR (fix_request) with no violation, and the run forgives it: exit code 0.")
def discover_legacy_404(c):
    c.x(discover26(), resp(404, b""), outcome="HTTP_ERROR", advice="fix_request")
    c.handshake(V1125)
    c.x(req25(V1125, 2, "tools/list"), jresp(ok(2, {"tools": TOOLS})), outcome="SUCCESS", advice="none",
        pv=V1125)
    c.exit_code = 0


@case("A legacy TypeScript-SDK server answers the server/discover probe 400 with its own JSON-RPC error "
      "-32000 ('No valid session ID provided'): not a recognised modern error (those are -32020..-32023), "
      "so still the legacy signal. The fallback to initialize breaks nothing and the run forgives the probe.")
def discover_legacy_400_unrecognised(c):
    c.x(discover26(), jresp(err(None, -32000, "Bad Request: No valid session ID provided"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32000)
    c.handshake(V1125)
    c.exit_code = 0


@case("The server/discover probe meets a 503 from a gateway: no legacy signal, a modern server may be "
      "behind it. The probe is HTTP_ERROR, retry (server/discover is safe to repeat); the client falls back "
      "to initialize anyway, which breaks request.fallback_on_transient_error. The run does not forgive "
      "the probe (exit code 1).")
def discover_transient_fallback(c):
    c.x(discover26(), resp(503, "<html><body>503 Service Temporarily Unavailable</body></html>", (),
                           "text/html"),
        outcome="HTTP_ERROR", advice="retry")
    c.handshake(V1125, init_violations=["request.fallback_on_transient_error"])


@case("server/discover advertises 2026-07-28 and 2025-11-25; the next request, tools/list under 2026-07-28, "
      "gets a plain 400 (no JSON-RPC body): the server refuses a revision it just advertised, "
      "server.discover_version_refused on that request (HTTP_ERROR, fix_request). A later 400 with "
      "HeaderMismatch -32020 is about the request, not the revision: no such finding.")
def discover_version_refused(c):
    c.x(discover26(), jresp(ok(0, DISCOVERED)), outcome="SUCCESS", advice="none", result_type="complete")
    c.x(req26(1, "tools/list"), resp(400, b""), outcome="HTTP_ERROR", advice="fix_request",
        violations=["server.discover_version_refused"])
    c.x(req26(2, "tools/list"), jresp(err(2, -32020, "Mcp-Method header does not match method"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32020)


@case("2025-11-25: a tools/call carrying Mcp-Session-Id gets 404 (session "
      "expired; the client MUST re-initialize) -> HTTP_ERROR, reinitialize; the id-less -32001 body's code "
      "is kept.", pv=V1125, handshake=True)
def http_404_session_expired_1125(c):
    c.x(call25(V1125, 2, "get_weather", WEATHER),
        jresp({"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}, "id": None}, status=404),
        outcome="HTTP_ERROR", advice="reinitialize", error_code=-32001)


@case("A 200 text/html page (a login proxy) answers tools/list: neither JSON nor SSE -> "
      "UNEXPECTED_CONTENT_TYPE, http.content_type; tools/list is safe to repeat -> retry.")
def http_html_on_200(c):
    c.x(req26(1, "tools/list"), resp(200, "<!doctype html><title>Sign in</title>", (), "text/html; charset=utf-8"),
        outcome="UNEXPECTED_CONTENT_TYPE", advice="retry", violations=["http.content_type"])


@case("A tools/call (a request) answered 202 with no body: UNEXPECTED_ACCEPTED, "
      "http.accepted_for_request; the unannotated tool may have run -> do_not_retry.")
def http_202_to_request(c):
    c.x(call26(1, "delete_file", {"path": "/tmp/x"}), accepted(), outcome="UNEXPECTED_ACCEPTED",
        advice="do_not_retry", violations=["http.accepted_for_request"])


@case("2025-06-18 handshake plus notifications/roots/list_changed; every "
      "notification is answered 202 with no body: NOTIFICATION_ACCEPTED (complete, advice none), no "
      "violation.", pv=V0618, handshake=True)
def http_202_notification_0618(c):
    c.x(notif25(V0618, "notifications/roots/list_changed"), accepted(), outcome="NOTIFICATION_ACCEPTED",
        advice="none")


@case("2025-11-25 notifications/initialized answered 202 with a JSON body: "
      "still NOTIFICATION_ACCEPTED, plus http.accepted_with_body (202 carries no body).", pv=V1125)
def http_202_with_body_notification(c):
    c.handshake(V1125, initialized_resp=accepted(body='{"jsonrpc":"2.0","result":{}}', ctype="application/json"),
                initialized_violations=["http.accepted_with_body"])


@case("A 2025-03-26 server answers notifications/initialized with "
      "200 and an empty body: 'any 2xx with empty body' to a notification is NOTIFICATION_ACCEPTED, no "
      "violation.", pv=V0326, src="initialize")
def http_200_empty_to_notification_0326(c):
    c.handshake(V0326, initialized_resp=accepted(status=200))


@case("A 2026-07-28 JSON reply carries Mcp-Session-Id (sessions were "
      "removed; servers SHOULD not mint them): http.session_id_on_stateless, TOOL_SUCCESS.")
def http_session_id_on_stateless(c):
    c.x(weather_call(), jresp(final(), headers=[("Mcp-Session-Id", "sess-legacy-42")]),
        violations=["http.session_id_on_stateless"], **SSE_OK)


@case("No response head (_error net::ERR_CONNECTION_REFUSED, status 0): "
      "CONNECTION_FAILED, status/content_type null; tools/list is safe -> retry. Judgement: end is "
      "'reset' (the transfer failed; there is no body).")
def connection_failed(c):
    c.x(req26(1, "tools/list"), no_response("net::ERR_CONNECTION_REFUSED"), outcome="CONNECTION_FAILED",
        advice="retry")


@case("A browser capture with GET /favicon.ico between two MCP POSTs: that entry is "
      "skipped (index 1) but keeps its index, so the verdicts are at 0 and 2.")
def skip_non_mcp_entry(c):
    c.tools_list26(1)
    c.skip({"headers": [("Accept", "image/avif,image/webp,*/*")]}, resp(404, "Not Found", (), "text/plain"),
           url="https://mcp.example.test/favicon.ico")
    c.x(weather_call(2), jresp(final(2)), **SSE_OK)


# ============================================================================================
# MRTR (2026-07-28)

ELICIT = {"confirm": {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Deploy build 1432 to production?",
    "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}},
                        "required": ["confirmed"]}}}}
STATE = "eyJzdGVwIjoiY29uZmlybSIsImJ1aWxkIjoxNDMyfQ"


def mrtr_case(c, follow_id, follow_violations):
    caps = {"elicitation": {"form": {}}}
    args = {"build": 1432, "env": "prod"}
    c.x(call26(1, "deploy", args, caps=caps),
        jresp(ok(1, {"resultType": "input_required", "inputRequests": ELICIT, "requestState": STATE})),
        outcome="INPUT_REQUIRED", advice="resubmit_with_input", result_type="input_required")
    follow = req26(follow_id, "tools/call", {
        "name": "deploy", "arguments": args,
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirmed": True}}},
        "requestState": STATE}, caps=caps)
    c.x(follow, jresp(ok(follow_id, tool_result("deployed build 1432"))), violations=follow_violations, **SSE_OK)


@case("MRTR done right: tools/call id 1 gets input_required (inputRequests + "
      "requestState) -> INPUT_REQUIRED, resubmit_with_input; the follow-up with inputResponses, the "
      "echoed requestState and a NEW id 2 completes: TOOL_SUCCESS, no violation.")
def mrtr_followup_new_id(c):
    mrtr_case(c, 2, [])


@case("MRTR follow-up reuses id 1 of the input_required request (mrtr.mdx: "
      "the id MUST differ): request.mrtr_reused_id on the follow-up, whose reply is still "
      "TOOL_SUCCESS.")
def mrtr_followup_reused_id(c):
    mrtr_case(c, 1, ["request.mrtr_reused_id"])


@case("input_required answering tools/list (only tools/call, resources/read, "
      "prompts/get may): mrtr.not_allowed. Judgement: the outcome still follows resultType -> INPUT_REQUIRED, "
      "resubmit_with_input.")
def mrtr_not_allowed_tools_list(c):
    c.x(req26(1, "tools/list"), jresp(ok(1, {"resultType": "input_required", "requestState": STATE})),
        outcome="INPUT_REQUIRED", advice="resubmit_with_input", result_type="input_required",
        violations=["mrtr.not_allowed"])


@case("input_required with neither inputRequests nor requestState (MUST carry one): "
      "mrtr.empty; outcome INPUT_REQUIRED, resubmit_with_input.")
def mrtr_empty(c):
    c.x(call26(1, "deploy", {"build": 1432}), jresp(ok(1, {"resultType": "input_required"})),
        outcome="INPUT_REQUIRED", advice="resubmit_with_input", result_type="input_required",
        violations=["mrtr.empty"])


# ============================================================================================
# JSON body and envelope


@case("Request id 1 (number), response id \"1\" (string): ids differ in type -> "
      "INVALID_ENVELOPE, jsonrpc.id_mismatch (stricter than SDKs that coerce ids).")
def envelope_id_type(c):
    c.x(weather_call(), jresp(final(id_="1")), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.id_mismatch"])


@case("jsonrpc \"1.0\" instead of \"2.0\": INVALID_ENVELOPE, jsonrpc.version.")
def envelope_jsonrpc_1_0(c):
    body = final()
    body["jsonrpc"] = "1.0"
    c.x(weather_call(), jresp(body), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.version"])


@case("error.code is a string: not an error object with integer code and string "
      "message -> INVALID_ENVELOPE, jsonrpc.error_object; error_code null (no integer code).")
def envelope_error_object(c):
    body = {"jsonrpc": "2.0", "id": 1, "error": {"code": "E_UPSTREAM", "message": "upstream failed"}}
    c.x(weather_call(), jresp(body), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.error_object"])


@case("A response object with our id but neither result nor error: INVALID_ENVELOPE, "
      "jsonrpc.result_and_error (the rule covers 'both or neither').")
def envelope_neither(c):
    c.x(weather_call(), jresp({"jsonrpc": "2.0", "id": 1}), outcome="INVALID_ENVELOPE", advice="do_not_retry",
        violations=["jsonrpc.result_and_error"])


@case("A valid response object followed by ' trailing': trailing bytes -> "
      "MALFORMED_JSON, jsonrpc.malformed.")
def json_trailing_bytes(c):
    c.x(weather_call(), resp(200, js(final()) + " trailing", (), "application/json"), outcome="MALFORMED_JSON",
        advice="do_not_retry", violations=["jsonrpc.malformed"])


@case("200 application/json with an empty body to a request: MALFORMED_JSON, "
      "jsonrpc.malformed.")
def json_empty_body(c):
    c.x(weather_call(), resp(200, b"", (), "application/json"), outcome="MALFORMED_JSON", advice="do_not_retry",
        violations=["jsonrpc.malformed"])


@case("2025-06-18 removed batches: a JSON array holding our tools/list response "
      "is INVALID_ENVELOPE, jsonrpc.batch_response; tools/list is safe -> retry.", pv=V0618, handshake=True)
def json_array_response_0618(c):
    c.x(req25(V0618, 2, "tools/list"), jresp([ok(2, {"tools": TOOLS})]), outcome="INVALID_ENVELOPE",
        advice="retry", violations=["jsonrpc.batch_response"])


@case("The client POSTs a JSON array (tools/list + prompts/list) on 2025-06-18: "
      "request.batch; method/id are those of the first request. The server rejects it with 400 -32600: "
      "HTTP_ERROR, fix_request; one row per request id (batch_position 0 and 1).", pv=V0618, handshake=True)
def request_batch_0618(c):
    req = {"body": [rpc(2, "tools/list", {}), rpc(3, "prompts/list", {})], "headers": h25(V0618)}
    for k in (0, 1):
        c.x(req, jresp(err(None, -32600, "Invalid Request: batches are not supported"), status=400),
            outcome="HTTP_ERROR", advice="fix_request", error_code=-32600, violations=["request.batch"],
            batch_position=k)


@case("The JSON response body is stored base64 in the HAR (content.encoding 'base64', "
      "as some exporters do): decoded it is a normal TOOL_SUCCESS.")
def json_base64_body(c):
    c.x(weather_call(), jresp(final(), b64=True), **SSE_OK)


@case("Content-Type 'Application/JSON; charset=UTF-8': matched case-insensitively "
      "and reported lowercased without parameters (application/json). TOOL_SUCCESS.")
def json_content_type_params(c):
    c.x(weather_call(), jresp(final(), ctype="Application/JSON; charset=UTF-8"), **SSE_OK)


# ============================================================================================
# Result layer


@case("A 2026-07-28 tools/call result without resultType: servers MUST include it "
      "(result.type_missing) but clients treat absent as complete -> still TOOL_SUCCESS, result_type null.")
def result_type_missing_2026(c):
    c.x(weather_call(), jresp(ok(1, tool_result("12°C", rt=None))), outcome="TOOL_SUCCESS", advice="none",
        violations=["result.type_missing"])


@case("resultType 'banana' on tools/call: an unrecognised resultType MUST be considered "
      "invalid -> INVALID_TOOL_RESULT, result.type_unknown, result_type reported as sent.")
def result_type_banana(c):
    c.x(weather_call(), jresp(ok(1, tool_result("12°C", rt="banana"))), outcome="INVALID_TOOL_RESULT",
        advice="do_not_retry", result_type="banana", violations=["result.type_unknown"])


@case("isError is the string \"yes\", not a boolean: INVALID_TOOL_RESULT, "
      "tool.is_error_not_bool.")
def tool_is_error_yes(c):
    c.x(weather_call(), jresp(ok(1, tool_result("12°C", is_error="yes"))), outcome="INVALID_TOOL_RESULT",
        advice="do_not_retry", result_type="complete", violations=["tool.is_error_not_bool"])


@case("A 2025-06-18 tools/call whose result is the string \"done\": "
      "INVALID_TOOL_RESULT, tool.result_not_object (2025-06-18 chosen so that no resultType rule applies).", pv=V0618, handshake=True)
def tool_result_not_object_0618(c):
    c.x(call25(V0618, 2, "get_weather", WEATHER), jresp(ok(2, "done")), outcome="INVALID_TOOL_RESULT",
        advice="do_not_retry", violations=["tool.result_not_object"])


@case("A 2025-06-18 tools/list whose result is the string \"done\": "
      "INVALID_ENVELOPE, result.not_object (the tools/call form is tool.result_not_object); tools/list "
      "is safe to send again -> retry.", pv=V0618, handshake=True)
def result_not_object_0618(c):
    c.x(req25(V0618, 2, "tools/list"), jresp(ok(2, "done")), outcome="INVALID_ENVELOPE",
        advice="retry", violations=["result.not_object"])


@case("2025-06-18 structuredContent is an array (must be an object in "
      "2025-06-18/2025-11-25): tool.structured_content_not_object. Judgement: that rule is not in the "
      "INVALID_TOOL_RESULT list, so the outcome stays TOOL_SUCCESS.", pv=V0618, handshake=True)
def tool_structured_not_object_0618(c):
    c.x(call25(V0618, 2, "get_weather", WEATHER),
        jresp(ok(2, tool_result("[12, 13]", rt=None, structuredContent=[12, 13]))),
        outcome="TOOL_SUCCESS", advice="none", violations=["tool.structured_content_not_object"])


@case("2026-07-28 allows any JSON value as structuredContent (SEP-2106): the "
      "same array as tool_structured_not_object_0618 is clean here. TOOL_SUCCESS, no violation.")
def tool_structured_array_2026(c):
    c.x(weather_call(), jresp(final(text="[12, 13]", structuredContent=[12, 13])), **SSE_OK)


def task_created(c, poll_ms):
    """tools/call render_video (id 1) turned into task task-7f3a: DEFERRED, advice poll after the
    task's pollInterval."""
    task = {"taskId": "task-7f3a", "status": "working", "createdAt": "2026-12-02T10:00:00Z", "pollInterval": poll_ms}
    c.x(call26(1, "render_video", {"scene": 4}), jresp(ok(1, {"resultType": "task", "task": task})),
        outcome="DEFERRED", advice="poll", after_ms=poll_ms, result_type="task", task_status="working")


@case("resultType 'task' (Tasks extension): the call was turned into a task -> DEFERRED, "
      "complete exchange, advice poll (never re-POST; poll tasks/get after pollInterval). The capture "
      "ends while the task is working: the call is DEFERRED and incomplete.")
def deferred_task_2026(c):
    task_created(c, poll_ms=2000)
    c.call([0], outcome="DEFERRED", ids=[1], complete=False, task_status="working")


@case("2025-11-25 task-augmented tools/call (params.task) answered with a "
      "CreateTaskResult (result.task object, no content): DEFERRED, advice poll after its pollInterval, "
      "result_type null.", pv=V1125, handshake=True)
def deferred_create_task_1125(c):
    task = {"taskId": "786512e2-9e0d-44bd-8f29-789f320fe840", "status": "working",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000,
            "pollInterval": 5000}
    req = req25(V1125, 2, "tools/call", {"name": "render_video", "arguments": {"scene": 4}, "task": {"ttl": 60000}})
    c.x(req, jresp(ok(2, {"task": task})), outcome="DEFERRED", advice="poll", after_ms=5000,
        task_status="working")


@case("200 with JSON-RPC error -32021 (MissingRequiredClientCapability): a "
      "complete JSONRPC_ERROR, but -32020/-32021/-32022 mean 'fix the request' at any status -> fix_request.")
def jsonrpc_error_32021_on_200(c):
    c.x(call26(1, "summarize", {"doc": "q3.pdf"}),
        jresp(err(1, -32021, "Missing required client capability", {"requiredCapabilities": {"sampling": {}}})),
        outcome="JSONRPC_ERROR", advice="fix_request", error_code=-32021)


# ============================================================================================
# Request side and version sources


@case("No MCP-Protocol-Version header, no _meta, no initialize in the capture: "
      "version 2025-03-26 by default (servers SHOULD assume it). Clean TOOL_SUCCESS; the body's trailing "
      "newline is JSON whitespace, not trailing bytes.", pv=V0326, src="default")
def version_source_default(c):
    req = {"body": rpc(1, "tools/call", {"name": "get_weather", "arguments": WEATHER}),
           "headers": [("Accept", ACCEPT_BOTH), ("Content-Type", "application/json")]}
    c.x(req, resp(200, js(final(text="12°C", rt=None)) + "\n", (), "application/json"),
        outcome="TOOL_SUCCESS", advice="none")


@case("Only params._meta gives the version (2026-07-28, source meta); the missing "
      "MCP-Protocol-Version header is request.protocol_version_header, and the server rejects it with 400 "
      "-32020 -> fix_request. Judgement: protocol_version_mismatch needs both values present.", src="meta")
def version_source_meta(c):
    c.x(weather_call(version=None), jresp(err(1, -32020, "Missing MCP-Protocol-Version header"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32020,
        violations=["request.protocol_version_header"])


@case("A 2025-06-18 capture that starts mid-session (no initialize): the first call "
      "has MCP-Protocol-Version (source header), the second omits it and inherits 2025-06-18 from the earlier "
      "exchange (source earlier). No initialize was seen, so no request.protocol_version_header.", pv=V0618)
def version_source_earlier(c):
    c.x(call25(V0618, 7, "get_weather", WEATHER), jresp(ok(7, tool_result("12°C", rt=None))),
        outcome="TOOL_SUCCESS", advice="none")
    c.x(call25(V0618, 8, "get_weather", {"city": "Paris"}, send_version=False),
        jresp(ok(8, tool_result("15°C", rt=None))), outcome="TOOL_SUCCESS", advice="none", src="earlier")


@case("2025-06-18: after initialize the client MUST send "
      "MCP-Protocol-Version; a tools/call without it -> request.protocol_version_header, version taken from "
      "initialize. The reply itself is a clean TOOL_SUCCESS.", pv=V0618, handshake=True)
def request_version_header_missing_0618(c):
    c.x(call25(V0618, 2, "get_weather", WEATHER, send_version=False), jresp(ok(2, tool_result("12°C", rt=None))),
        outcome="TOOL_SUCCESS", advice="none", src="initialize", violations=["request.protocol_version_header"])


@case("Accept lists only application/json (as the seed article's toy client did): "
      "request.accept; the server answers anyway: TOOL_SUCCESS.")
def request_accept_json_only(c):
    c.x(weather_call(accept="application/json"), jresp(final()), violations=["request.accept"], **SSE_OK)


@case("2026-07-28 request whose _meta lacks clientCapabilities: request.meta_missing, "
      "and the schema's shape.missing_member (RequestMetaObject requires it); the server answers 400 with "
      "-32602 (basic/index.mdx) -> HTTP_ERROR, fix_request, error_code -32602.")
def request_meta_missing(c):
    meta = {"io.modelcontextprotocol/protocolVersion": V26}
    c.x(call26(1, "get_weather", WEATHER, meta=meta),
        jresp(err(1, -32602, "Missing _meta io.modelcontextprotocol/clientCapabilities"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32602,
        violations=["request.meta_missing", "shape.missing_member"])


@case("MCP-Protocol-Version 2026-07-28 but _meta protocolVersion 2025-11-25: "
      "request.protocol_version_mismatch (the header decides the version); 400 HeaderMismatch -32020 -> "
      "fix_request.")
def request_version_mismatch(c):
    meta = meta26()
    meta["io.modelcontextprotocol/protocolVersion"] = V1125
    c.x(call26(1, "get_weather", WEATHER, meta=meta),
        jresp(err(1, -32020, "MCP-Protocol-Version header does not match _meta"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32020,
        violations=["request.protocol_version_mismatch"])


@case("2026-07-28 tools/list without the Mcp-Method header "
      "(request.mcp_method_header); a lenient server answers anyway: SUCCESS with the violation.")
def request_mcp_method_missing(c):
    c.x(req26(1, "tools/list", mcp_method=None), jresp(ok(1, {"resultType": "complete", "cacheScope": "public",
                                                              "ttlMs": 0, "tools": TOOLS})),
        outcome="SUCCESS", advice="none", result_type="complete", violations=["request.mcp_method_header"])


@case("2026-07-28 tools/list results checked against the revision's schema: "
      "without the required cacheScope and ttlMs (shape.missing_member), a tool name that is a number "
      "(shape.wrong_type), a cacheScope outside its enum (shape.bad_value). Judgement: violations only, "
      "the outcome stays SUCCESS (only a tools/call result the client cannot read changes the outcome).")
def shape_violations_2607(c):
    listing = {"resultType": "complete", "cacheScope": "public", "ttlMs": 0}
    c.x(req26(1, "tools/list"), jresp(ok(1, {"resultType": "complete", "tools": TOOLS})),
        outcome="SUCCESS", advice="none", result_type="complete", violations=["shape.missing_member"])
    c.x(req26(2, "tools/list"), jresp(ok(2, {**listing, "tools": [{"name": 7, "inputSchema": {"type": "object"}}]})),
        outcome="SUCCESS", advice="none", result_type="complete", violations=["shape.wrong_type"])
    c.x(req26(3, "tools/list"), jresp(ok(3, {**listing, "cacheScope": "everyone", "tools": TOOLS})),
        outcome="SUCCESS", advice="none", result_type="complete", violations=["shape.bad_value"])


# ============================================================================================
# Sessions, streams and logical calls (issue 14): every GET/DELETE/response POST judged, server
# requests, 2025-03-26 batches, and the expected logical calls (<case>.calls.json).


def get25(version, last_event_id=None, session=SESSION):
    """A 2025-x GET: standalone stream, or a resumption with Last-Event-ID."""
    headers = [("Accept", "text/event-stream"), ("MCP-Protocol-Version", version)]
    if session:
        headers.append(("Mcp-Session-Id", session))
    if last_event_id is not None:
        headers.append(("Last-Event-ID", last_event_id))
    return {"body": None, "headers": headers}


def delete25(version, session=SESSION):
    return {"body": None, "headers": [("MCP-Protocol-Version", version), ("Mcp-Session-Id", session)]}


def init_calls(c):
    """The calls of c.handshake(): initialize and notifications/initialized."""
    c.call([0], outcome="SUCCESS", ids=[1], client="corpus-client@1.0.0")
    c.call([1], outcome="NOTIFICATION_ACCEPTED")


SESSION_GONE = err(None, -32001, "Session not found")


@case("A whole 2025-11-25 session: handshake; a standalone GET stream "
      "(LISTENING, kind listen); a tools/call with a progress token whose stream is cut after event id e-2 "
      "(STREAM_ABORTED, resume after 500 ms); the GET with Last-Event-ID e-2 carries the rest and the "
      "final (judged as the tools/call's answer: TOOL_SUCCESS, kind resume); DELETE (SESSION_TERMINATED); "
      "a tools/call after the DELETE gets 404 Session not found: HTTP_ERROR, reinitialize, and "
      "session.request_after_delete (the client's fault, on its call too). Calls: the cut call and its "
      "resumption are one call (retry_origin resume, one POST).", pv=V1125, handshake=True)
def session_listen_resume_delete_1125(c):
    c.x(get25(V1125), sse(ev(notif("notifications/tools/list_changed")), mcp_end="open"), http="GET",
        outcome="LISTENING", advice="none", src="header", event_count=1)
    call = call25(V1125, 2, "long_task", {"seconds": 5}, meta={"progressToken": "pt-2"})
    cut = ev(event=None, id="e-1", retry=500, data="", space=False) + ev(progress(1, 3, "pt-2"), id="e-2")
    c.x(call, sse(cut, error="net::ERR_CONNECTION_RESET"), at=3, outcome="STREAM_ABORTED", advice="resume",
        after_ms=500, event_count=1, last_event_id="e-2", resumable=True, src="header")
    rest = ev(progress(2, 3, "pt-2"), id="e-3") + ev(final(2, rt=None), id="e-4")
    c.x(get25(V1125, "e-2"), sse(rest), http="GET", of=call, at=4, outcome="TOOL_SUCCESS", advice="none",
        event_count=2, last_event_id="e-4", resumable=True, src="header")
    c.x(delete25(V1125), resp(200), http="DELETE", outcome="SESSION_TERMINATED", advice="none", src="header")
    c.x(call25(V1125, 3, "echo", {"message": "hi"}), jresp(SESSION_GONE, status=404), outcome="HTTP_ERROR",
        advice="reinitialize", error_code=-32001, violations=["session.request_after_delete"], src="header")
    init_calls(c)
    c.call([2], outcome="LISTENING")
    c.call([3, 4], outcome="TOOL_SUCCESS", ids=[2], statuses=[200, 200], post_count=1, retry_origin="resume")
    c.call([5], outcome="SESSION_TERMINATED")
    c.call([6], outcome="HTTP_ERROR", ids=[3], error_code=-32001, violations=["session.request_after_delete"])


@case("A 2025-11-25 tools/call stream primes event id e-1 with retry 500 and is cut after progress e-2 "
      "(STREAM_ABORTED, resume); 1 s later the client GETs without Last-Event-ID, so the server opens a standalone "
      "stream (LISTENING) and the answer is lost. Calls: the GET joins the cut call as its (failed) resumption, "
      "call.resume_without_last_event_id; the call stays STREAM_ABORTED.", pv=V1125, handshake=True)
def resume_without_last_event_id_1125(c):
    call = call25(V1125, 2, "long_task", {"seconds": 5}, meta={"progressToken": "pt-2"})
    cut = ev(event=None, id="e-1", retry=500, data="", space=False) + ev(progress(1, 3, "pt-2"), id="e-2")
    c.x(call, sse(cut, error="net::ERR_CONNECTION_RESET"), at=3, outcome="STREAM_ABORTED", advice="resume",
        after_ms=500, event_count=1, last_event_id="e-2", resumable=True, src="header")
    c.x(get25(V1125), sse(ev(notif("notifications/tools/list_changed"))), http="GET", at=4, outcome="LISTENING",
        advice="none", src="header", event_count=1)
    init_calls(c)
    c.call([2, 3], outcome="STREAM_ABORTED", ids=[2], statuses=[200, 200], post_count=1, retry_origin="resume",
           violations=["call.resume_without_last_event_id"])


@case("A 2025-06-18 server without a GET stream and without DELETE answers "
      "both with 405: allowed by the revision, METHOD_NOT_ALLOWED (complete), no violation.", pv=V0618, handshake=True)
def session_get_delete_405_0618(c):
    c.x(get25(V0618), resp(405, headers=[("Allow", "POST")]), http="GET", outcome="METHOD_NOT_ALLOWED",
        advice="none")
    c.x(delete25(V0618), resp(405, headers=[("Allow", "POST")]), http="DELETE", outcome="METHOD_NOT_ALLOWED",
        advice="none")
    init_calls(c)
    c.call([2], outcome="METHOD_NOT_ALLOWED", post_count=0)
    c.call([3], outcome="METHOD_NOT_ALLOWED", post_count=0)


@case("A standalone GET stream that carries a JSON-RPC response (listen.response: "
      "responses belong on the request's stream or a resumption) and a roots/list server request that the "
      "client never answers (server_requests on the verdict; call.server_request_unanswered on the call).", pv=V1125, handshake=True)
def listen_carries_response_1125(c):
    body = ev(rpc("r-1", "roots/list", {})) + ev(ok(7, {"tools": []}))
    c.x(get25(V1125), sse(body), http="GET", outcome="LISTENING", advice="none", src="header", event_count=2,
        violations=["listen.response"], server_requests=[("roots/list", "r-1")])
    init_calls(c)
    c.call([2], outcome="LISTENING", violations=["call.server_request_unanswered"])


@case("elicitation/create with id srv-7 on a tools/call stream; the client "
      "answers with id srv-8: the response POST gets session.response_unknown_id, and the tools/call's call "
      "gets call.server_request_unanswered (srv-7 never answered). The stray answer is a call of its own.", pv=V1125, handshake=True)
def server_request_wrong_id_1125(c):
    srv = rpc("srv-7", "elicitation/create", {"mode": "form", "message": "Which unit?", "requestedSchema": {
        "type": "object", "properties": {"unit": {"type": "string"}}}})
    c.x(call25(V1125, 2, "get_weather", WEATHER), sse(ev(srv) + ev(final(2, rt=None))), event_count=2,
        outcome="TOOL_SUCCESS", advice="none", server_requests=[("elicitation/create", "srv-7")])
    answer = {"body": {"jsonrpc": "2.0", "id": "srv-8", "result": {"action": "accept", "content": {"unit": "C"}}},
              "headers": h25(V1125)}
    c.x(answer, accepted(), outcome="NOTIFICATION_ACCEPTED", advice="none", violations=["session.response_unknown_id"])
    init_calls(c)
    c.call([2], outcome="TOOL_SUCCESS", ids=[2], violations=["call.server_request_unanswered"])
    c.call([3], outcome="NOTIFICATION_ACCEPTED")


@case("2025-03-26 batches: [tools/list 2, a notification, prompts/list 3] answered by a "
      "JSON array in the other order, then [ping 4, tools/list 5] answered on an SSE stream, 5 first. One "
      "row per request id with batch_position; a sibling's response is neither foreign nor after-final.", pv=V0326, src="initialize", handshake=True)
def batch_rows_0326(c):
    batch = {"body": [rpc(2, "tools/list", {}), notif("notifications/roots/list_changed"), rpc(3, "prompts/list", {})],
             "headers": h25(V0326)}
    answer = jresp([ok(3, {"prompts": []}), ok(2, {"tools": TOOLS})])
    for k in (0, 1):
        c.x(batch, answer, outcome="SUCCESS", advice="none", batch_position=k)
    batch2 = {"body": [rpc(4, "ping"), rpc(5, "tools/list", {})], "headers": h25(V0326)}
    stream = sse(ev(ok(5, {"tools": TOOLS})) + ev(ok(4, {})))
    for k in (0, 1):
        c.x(batch2, stream, outcome="SUCCESS", advice="none", batch_position=k, event_count=2)
    init_calls(c)
    c.call([2], outcome="SUCCESS", ids=[2], method="tools/list")
    c.call([2], outcome="SUCCESS", ids=[3], method="prompts/list")
    c.call([3], outcome="SUCCESS", ids=[4], method="ping")
    c.call([3], outcome="SUCCESS", ids=[5], method="tools/list")


@case("Re-sends, grouped into calls and audited. delete_file (destructive) gets 503 and is "
      "re-sent 0.5 s later: automatic, double_execution_risk, call.double_execution_risk. get_weather gets "
      "429 Retry-After: 2 and is re-sent 0.5 s later with the same id: call.retry_too_soon and "
      "call.reused_id. set_flag succeeds and is re-sent 1 s later under a new id: a call of its own, flagged "
      "call.resent_after_complete. get_weather "
      "for another city (read-only) gets 503 and is re-sent 33 s later: manual, no risk.")
def retry_audit_2026(c):
    c.tools_list26(1)
    path = {"path": "/tmp/old.log"}
    c.x(call26(2, "delete_file", path), jresp(err(2, -32603, "upstream down"), status=503), at=1,
        outcome="HTTP_ERROR", advice="do_not_retry", error_code=-32603)
    c.x(call26(3, "delete_file", path), jresp(ok(3, tool_result("deleted"))), at=1.5, **SSE_OK)
    c.x(weather_call(4), resp(429, "", [("Retry-After", "2")]), at=3, outcome="HTTP_ERROR", advice="retry",
        after_ms=2000)
    c.x(weather_call(4), jresp(final(4)), at=3.5, **SSE_OK)
    flag = {"flag": "beta", "on": True}
    c.x(call26(6, "set_flag", flag), jresp(ok(6, tool_result("set"))), at=5, **SSE_OK)
    c.x(call26(7, "set_flag", flag), jresp(ok(7, tool_result("set"))), at=6, **SSE_OK)
    paris = {"city": "Paris"}
    c.x(call26(8, "get_weather", paris), resp(503, ""), at=7, outcome="HTTP_ERROR", advice="retry")
    c.x(call26(9, "get_weather", paris), jresp(final(9)), at=40, **SSE_OK)
    c.call([0], outcome="SUCCESS", ids=[1], client="corpus-client@1.0.0")
    c.call([1, 2], outcome="TOOL_SUCCESS", ids=[2, 3], retry_origin="automatic", risk=True,
           violations=["call.double_execution_risk"])
    c.call([3, 4], outcome="TOOL_SUCCESS", ids=[4, 4], retry_origin="automatic",
           violations=["call.retry_too_soon", "call.reused_id"])
    c.call([5], outcome="TOOL_SUCCESS", ids=[6])
    c.call([6], outcome="TOOL_SUCCESS", ids=[7], violations=["call.resent_after_complete"])
    c.call([7, 8], outcome="TOOL_SUCCESS", ids=[8, 9], retry_origin="manual")


@case("A tools/call turned into a task (DEFERRED), polled twice with tasks/get and "
      "fetched with tasks/result: one call of four POSTs, retry_origin poll; the fetched result decides "
      "the call: TOOL_SUCCESS, task_status completed (the last status a poll reported). tasks/result is the "
      "2025-11-25 form: the 2026-07-28 tasks extension removed it (polling tasks/get gives the result), so "
      "that request breaks request.removed_method.")
def task_polling_2026(c):
    task_created(c, poll_ms=1000)
    for id_, status in ((2, "working"), (3, "completed")):
        c.x(req26(id_, "tasks/get", {"taskId": "task-7f3a"}),
            jresp(ok(id_, {"resultType": "complete", "taskId": "task-7f3a", "status": status})),
            outcome="SUCCESS", advice="none", result_type="complete", task_status=status)
    c.x(req26(4, "tasks/result", {"taskId": "task-7f3a"}), jresp(ok(4, tool_result("rendered"))),
        outcome="SUCCESS", advice="none", result_type="complete", task_status=None,
        violations=["request.removed_method"])
    c.call([0, 1, 2, 3], outcome="TOOL_SUCCESS", ids=[1, 2, 3, 4], retry_origin="poll", method="tools/call",
           tool="render_video", task_status="completed")


# Task-following calls (SEP-2663 shapes: the task's members flat in the result). Each starts with
# tools/call build_report (id 1) answered with a handle for task "job-1"; the polls carry
# Mcp-Name: <taskId> as the extension asks.
JOB = "job-1"


def job_handle(c, status="working"):
    handle = {"resultType": "task", "taskId": JOB, "status": status, "createdAt": "2026-12-02T10:00:00Z",
              "lastUpdatedAt": "2026-12-02T10:00:00Z", "ttlSeconds": 3600, "pollIntervalMilliseconds": 1000}
    c.x(call26(1, "build_report", {"month": "2026-11"}), jresp(ok(1, handle)),
        outcome="DEFERRED", advice="poll", after_ms=1000, result_type="task", task_status=status)


def job_req(id_, method, **more):
    return req26(id_, method, {"taskId": JOB, **more}, mcp_name=JOB)


def job_poll(c, id_, status, at=None, **members):
    task = {"resultType": "complete", "taskId": JOB, "status": status, "createdAt": "2026-12-02T10:00:00Z",
            "lastUpdatedAt": "2026-12-02T10:00:05Z", "ttlSeconds": 3600, "pollIntervalMilliseconds": 1000}
    task.update(members)
    c.x(job_req(id_, "tasks/get"), jresp(ok(id_, task)), at=at,
        outcome="SUCCESS", advice="none", result_type="complete", task_status=status)


def job_ack(c, id_, method, **more):
    c.x(job_req(id_, method, **more), jresp(ok(id_, {"resultType": "complete"})),
        outcome="SUCCESS", advice="none", result_type="complete", task_status=None)


@case("2025-11-25 experimental tasks: a task-augmented tools/call got a CreateTaskResult (DEFERRED, advice "
      "poll after pollInterval), tasks/get (a flat Task, no resultType) said working then completed without "
      "the result, and tasks/result fetched it (isError true): the call is TOOL_ERROR, complete, task_status "
      "completed; before tasks/result it would have been DEFERRED, incomplete.", pv=V1125, handshake=True)
def task_result_1125(c):
    tid = "786512e2-9e0d-44bd-8f29-789f320fe840"
    task = {"taskId": tid, "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 3000}
    req = req25(V1125, 2, "tools/call", {"name": "render_video", "arguments": {"scene": 4}, "task": {"ttl": 60000}})
    c.x(req, jresp(ok(2, {"task": task})), outcome="DEFERRED", advice="poll", after_ms=3000,
        task_status="working")
    for id_, status, at in ((3, "working", 5.1), (4, "completed", 8.2)):
        c.x(req25(V1125, id_, "tasks/get", {"taskId": tid}), jresp(ok(id_, {**task, "status": status})),
            outcome="SUCCESS", advice="none", task_status=status, at=at)
    c.x(req25(V1125, 5, "tasks/result", {"taskId": tid}),
        jresp(ok(5, tool_result("scene too dark", rt=None, is_error=True))),
        outcome="SUCCESS", advice="none", task_status=None, at=9)
    c.call([0], outcome="SUCCESS", ids=[1])
    c.call([1], outcome="NOTIFICATION_ACCEPTED")
    c.call([2, 3, 4, 5], outcome="TOOL_ERROR", ids=[2, 3, 4, 5], retry_origin="poll", task_status="completed")


@case("Task completed: tools/call got a handle (DEFERRED, advice poll after pollIntervalMilliseconds), "
      "tasks/get said working, then completed with the CallToolResult in result: the call takes the tool's "
      "outcome, TOOL_SUCCESS, complete, task_status completed; each poll alone is a SUCCESS.")
def task_completed_2026(c):
    job_handle(c)
    job_poll(c, 2, "working")
    job_poll(c, 3, "completed", result=tool_result("report ready"))
    c.call([0, 1, 2], outcome="TOOL_SUCCESS", ids=[1, 2, 3], retry_origin="poll", task_status="completed")


@case("Task completed with a tool error: the completed task's result has isError true, so the call is "
      "TOOL_ERROR (complete; show it to the model), though every exchange succeeded.")
def task_completed_tool_error_2026(c):
    job_handle(c)
    job_poll(c, 2, "completed", result=tool_result("month not closed yet", is_error=True))
    c.call([0, 1], outcome="TOOL_ERROR", ids=[1, 2], retry_origin="poll", task_status="completed")


@case("Task failed: tasks/get reports status failed with the JSON-RPC error of the execution: the call is "
      "JSONRPC_ERROR with the task's error.code (-32603), complete.")
def task_failed_2026(c):
    job_handle(c)
    job_poll(c, 2, "working")
    job_poll(c, 3, "failed", error={"code": -32603, "message": "report backend unavailable"})
    c.call([0, 1, 2], outcome="JSONRPC_ERROR", ids=[1, 2, 3], retry_origin="poll", error_code=-32603,
           task_status="failed")


@case("Task cancelled: the client sent tasks/cancel (an empty ack, which joins the call but does not end "
      "it), then tasks/get reported cancelled: the call is CANCELLED, incomplete.")
def task_cancelled_2026(c):
    job_handle(c)
    job_ack(c, 2, "tasks/cancel")
    job_poll(c, 3, "cancelled", statusMessage="cancelled by the client")
    c.call([0, 1, 2], outcome="CANCELLED", ids=[1, 2, 3], retry_origin="poll", task_status="cancelled")


@case("Task expired: a later tasks/get is answered -32602 (unknown or expired taskId): that exchange is a "
      "complete JSONRPC_ERROR, but the call never got its answer: JSONRPC_ERROR -32602, incomplete; "
      "task_status stays the last one reported (working).")
def task_expired_2026(c):
    job_handle(c)
    job_poll(c, 2, "working")
    c.x(job_req(3, "tasks/get"), jresp(err(3, -32602, "unknown task job-1")),
        outcome="JSONRPC_ERROR", advice="none", error_code=-32602, task_status=None)
    c.call([0, 1, 2], outcome="JSONRPC_ERROR", ids=[1, 2, 3], retry_origin="poll", error_code=-32602,
           complete=False, task_status="working")


@case("Task still running when the capture ends: tasks/get asked for input (input_required with "
      "inputRequests), the client answered with tasks/update (an ack, joined), the next tasks/get said "
      "working, and the capture stops: the call is DEFERRED, incomplete, task_status working.")
def task_open_at_end_2026(c):
    job_handle(c)
    elicit = {"method": "elicitation/create",
              "params": {"mode": "form", "message": "Which region?",
                         "requestedSchema": {"type": "object", "properties": {"region": {"type": "string"}}}}}
    job_poll(c, 2, "input_required", inputRequests={"region": elicit})
    job_ack(c, 3, "tasks/update", inputResponses={"region": {"action": "accept", "content": {"region": "eu"}}})
    job_poll(c, 4, "working")
    c.call([0, 1, 2, 3], outcome="DEFERRED", ids=[1, 2, 3, 4], retry_origin="poll", complete=False,
           task_status="working")


@case("Polling faster than the task asks: the handle says pollIntervalMilliseconds 1000, the first tasks/get "
      "comes 0.3 s after it and the second 0.4 s after that (both under 90 % of 1000 ms, the tolerance): the "
      "call carries call.retry_too_soon (once); each exchange alone is fine.")
def task_poll_too_soon_2026(c):
    job_handle(c)
    job_poll(c, 2, "working", at=0.3)
    job_poll(c, 3, "completed", at=0.7, result=tool_result("report ready"))
    c.call([0, 1, 2], outcome="TOOL_SUCCESS", ids=[1, 2, 3], retry_origin="poll", task_status="completed",
           violations=["call.retry_too_soon"])


@case("tasks/get routed to the wrong task: Mcp-Name says job-2 but params.taskId is job-1 "
      "(request.mcp_name_header, the client's fault); the server answers 400 with HeaderMismatch -32020: "
      "HTTP_ERROR, fix_request. The poll joins its task's call, which ends with that failed poll: HTTP_ERROR "
      "-32020, incomplete.")
def task_mcp_name_mismatch_2026(c):
    job_handle(c)
    c.x(req26(2, "tasks/get", {"taskId": JOB}, mcp_name="job-2"),
        jresp(err(2, -32020, "Mcp-Name header does not match params.taskId"), status=400),
        outcome="HTTP_ERROR", advice="fix_request", error_code=-32020, violations=["request.mcp_name_header"],
        task_status=None)
    c.call([0, 1], outcome="HTTP_ERROR", ids=[1, 2], retry_origin="poll", error_code=-32020,
           task_status="working")


@case("The same tools/call build_report sent again (new id) while its task still runs: the second handle is "
      "a second task (job-2). Two calls, both DEFERRED and incomplete; the second sets double_execution_risk "
      "(call.double_execution_risk: two tasks now run).")
def task_resent_while_running_2026(c):
    job_handle(c)
    handle = {"resultType": "task", "taskId": "job-2", "status": "working", "pollIntervalMilliseconds": 1000}
    c.x(call26(2, "build_report", {"month": "2026-11"}), jresp(ok(2, handle)),
        outcome="DEFERRED", advice="poll", after_ms=1000, result_type="task", task_status="working")
    c.call([0], outcome="DEFERRED", ids=[1], complete=False, task_status="working", result_type="task")
    c.call([1], outcome="DEFERRED", ids=[2], complete=False, task_status="working", result_type="task",
           risk=True, violations=["call.double_execution_risk"])


@case("Cancellation seen from traffic (2025-11-25). tools/call long_task streams progress with event ids "
      "and retry 500; the client POSTs notifications/cancelled for id 2 (202), and the stream then breaks: "
      "alone the exchange is STREAM_ABORTED (resume), but the call is CANCELLED, incomplete, with nothing to "
      "resume (the cancel joins it: two POSTs). tools/call slow_export is cancelled the same way and the "
      "server answers -32800 Request cancelled on its stream: alone a JSONRPC_ERROR, the call a complete "
      "CANCELLED with error_code -32800.", pv=V1125, handshake=True)
def cancelled_notification_1125(c):
    call = call25(V1125, 2, "long_task", {"seconds": 30}, meta={"progressToken": "pt-2"})
    cut = ev(event=None, id="e-1", retry=500, data="", space=False) + ev(progress(1, 3, "pt-2"), id="e-2")
    c.x(call, sse(cut, error="net::ERR_CONNECTION_RESET"), at=2, outcome="STREAM_ABORTED", advice="resume",
        after_ms=500, event_count=1, last_event_id="e-2", resumable=True)
    cancel = notif25(V1125, "notifications/cancelled", {"requestId": 2, "reason": "user pressed stop"})
    c.x(cancel, accepted(), at=2.5, outcome="NOTIFICATION_ACCEPTED", advice="none")
    export = call25(V1125, 3, "slow_export", {"table": "orders"})
    gone = ev(err(3, -32800, "Request cancelled"))
    c.x(export, sse(gone), at=4, outcome="JSONRPC_ERROR", advice="none", error_code=-32800, event_count=1)
    cancel3 = notif25(V1125, "notifications/cancelled", {"requestId": 3})
    c.x(cancel3, accepted(), at=4.5, outcome="NOTIFICATION_ACCEPTED", advice="none")
    init_calls(c)
    c.call([2, 3], outcome="CANCELLED", ids=[2], statuses=[200, 202])
    c.call([4, 5], outcome="CANCELLED", ids=[3], statuses=[200, 202], error_code=-32800, complete=True)


@case("Task status notification: tasks/get answered with an SSE stream that carries "
      "notifications/tasks/status for the completed task (the full task, result included), then breaks "
      "before the tasks/get response: that exchange is STREAM_ABORTED (tasks/get is safe to repeat: "
      "retry), but the notification carried the terminal status, so the call is TOOL_SUCCESS, complete.")
def task_status_notification_2026(c):
    job_handle(c)
    note = notif("notifications/tasks/status", {
        "taskId": JOB, "status": "completed", "createdAt": "2026-12-02T10:00:00Z",
        "lastUpdatedAt": "2026-12-02T10:00:09Z", "ttlSeconds": 3600, "result": tool_result("report ready")})
    c.x(job_req(2, "tasks/get"), sse(ev(note), error="net::ERR_CONNECTION_RESET"),
        outcome="STREAM_ABORTED", advice="retry", event_count=1, task_status="completed")
    c.call([0, 1], outcome="TOOL_SUCCESS", ids=[1, 2], retry_origin="poll", task_status="completed")


@case("Session lifecycle rules: tools/list before notifications/initialized "
      "(session.before_initialized); MCP-Protocol-Version 2025-06-18 after initialize negotiated 2025-11-25 "
      "(session.version_header; the header decides the rules applied); a different Mcp-Session-Id with no "
      "initialize between (session.id_changed), which the server does not know: 404, reinitialize.", pv=V1125, src="header")
def session_rules_1125(c):
    init = {"body": rpc(1, "initialize", {"protocolVersion": V1125, "capabilities": {},
                                          "clientInfo": {"name": "corpus-client", "version": "1.0.0"}}),
            "headers": [("Accept", ACCEPT_BOTH), ("Content-Type", "application/json")]}
    result = {"protocolVersion": V1125, "capabilities": {"tools": {}},
              "serverInfo": {"name": "corpus-server", "version": "2.1.0"}}
    c.x(init, jresp(ok(1, result), headers=[("Mcp-Session-Id", SESSION)]), outcome="SUCCESS", advice="none",
        src="initialize")
    c.x(req25(V1125, 2, "tools/list"), jresp(ok(2, {"tools": TOOLS})), outcome="SUCCESS", advice="none",
        violations=["session.before_initialized"])
    c.x(notif25(V1125, "notifications/initialized"), accepted(), outcome="NOTIFICATION_ACCEPTED", advice="none")
    c.x(req25(V0618, 3, "tools/list"), jresp(ok(3, {"tools": TOOLS})), outcome="SUCCESS", advice="none",
        pv=V0618, violations=["session.version_header"])
    c.x(req25(V1125, 4, "tools/list", session="0b7e1c55-other"), jresp(SESSION_GONE, status=404),
        outcome="HTTP_ERROR", advice="reinitialize", error_code=-32001, violations=["session.id_changed"])


@case("After its own DELETE (200) the client sends tools/list with the old "
      "session id; the server answers 400 'No valid session ID provided': HTTP_ERROR, but the advice is "
      "reinitialize (not fix_request: the client ended the session itself) and the request carries "
      "session.request_after_delete.", pv=V1125, src="header", handshake=True)
def request_after_delete_400_1125(c):
    c.x(delete25(V1125), resp(200), http="DELETE", outcome="SESSION_TERMINATED", advice="none")
    c.x(req25(V1125, 2, "tools/list"),
        jresp(err(None, -32000, "Bad Request: No valid session ID provided"), status=400),
        outcome="HTTP_ERROR", advice="reinitialize", error_code=-32000, violations=["session.request_after_delete"])
    init_calls(c)
    c.call([2], outcome="SESSION_TERMINATED", post_count=0)
    c.call([3], outcome="HTTP_ERROR", ids=[2], violations=["session.request_after_delete"])


@case("2026-07-28 streams are not resumable: after a cut stream the client GETs with "
      "Last-Event-ID (session.resume_not_supported); the server answers 405 (METHOD_NOT_ALLOWED). The cut "
      "tools/call stays STREAM_ABORTED; the GET is a call of its own.")
def resume_on_2026(c):
    body = ev(progress(1, 3, "pt-1"))
    c.x(weather_call(1), sse(body, error="net::ERR_CONNECTION_RESET"), outcome="STREAM_ABORTED", advice="do_not_retry",
        event_count=1)
    get = {"body": None, "headers": [("Accept", "text/event-stream"), ("MCP-Protocol-Version", V26),
                                     ("Last-Event-ID", "0")]}
    c.x(get, resp(405), http="GET", outcome="METHOD_NOT_ALLOWED", advice="none",
        violations=["session.resume_not_supported"])
    c.call([0], outcome="STREAM_ABORTED", ids=[1])
    c.call([1], outcome="METHOD_NOT_ALLOWED", post_count=0)


# ============================================================================================
# Self-checks: coverage, sizes, and a WHATWG SSE parse of every SSE body


def rule_ids():
    """The rule ids, read from the binary's catalogue (`mcp-verdict rules --format json`) so that
    they are written once, in src/core/vocab/rules.rs. Set MCP_VERDICT to a built binary to skip cargo."""
    binary = os.environ.get("MCP_VERDICT")
    cmd = [binary] if binary else ["cargo", "run", "--quiet", "--locked", "--bin", "mcp-verdict", "--"]
    out = subprocess.run(cmd + ["rules", "--format", "json"], cwd=HERE.parent, check=True,
                         capture_output=True, text=True).stdout
    return [r["rule"] for r in json.loads(out)]


# -- timing: when events arrived (docs/rules.md#timing-ssebuffered-and-sseidle_cut) ----------


def held_sse(body, **kw):
    """An event stream as it leaves a buffering proxy: nginx hides X-Accel-Buffering."""
    return resp(200, body, [("Cache-Control", "no-cache")], "text/event-stream", **kw)


@case("A buffering proxy between client and server: two progress notifications and the final "
      "response all arrive 3010 ms after the request, in the same millisecond (this tool's "
      "_mcp_arrivals marks): sse.buffered on the exchange and on its call; the outcome stands.")
def sse_buffered_burst(c):
    body = ev(progress(1)) + ev(progress(2)) + ev(final())
    rsp = held_sse(body)
    rsp["time"] = 3012
    rsp["arrivals"] = [{"end": len(body), "from_ms": 3010, "to_ms": 3010}]
    c.x(weather_call(), rsp, event_count=3, violations=["sse.buffered"], **SSE_OK)
    c.call([0], outcome="TOOL_SUCCESS", ids=[1], result_type="complete", violations=["sse.buffered"])


@case("The same stream with each event marked when it arrived, 1 s apart: progress streamed as "
      "it was sent, no sse.buffered (the verdict reads when events arrived, not how they were cut).")
def sse_progress_spread_in_time(c):
    events = [ev(progress(1)), ev(progress(2)), ev(final())]
    body = b"".join(events)
    marks, end = [], 0
    for n, e in enumerate(events):
        end += len(e)
        marks.append({"end": end, "from_ms": 1000 * (n + 1), "to_ms": 1000 * (n + 1)})
    rsp = held_sse(body)
    rsp["time"] = 3002
    rsp["arrivals"] = marks
    c.x(weather_call(), rsp, event_count=3, **SSE_OK)


@case("A browser's HAR of a buffered stream (no _mcp_arrivals): time 3004 ms, of which receive "
      "took 3 ms, so every event arrived in those 3 ms after 3 s of waiting: sse.buffered.")
def sse_buffered_from_har_timings(c):
    body = ev(progress(1)) + ev(log_message("working")) + ev(final())
    rsp = held_sse(body)
    rsp["timings"] = {"send": 1, "wait": 3000, "receive": 3}
    rsp["time"] = 3004
    req = weather_call(meta_more={"progressToken": "pt-1", "io.modelcontextprotocol/logLevel": "info"})
    c.x(req, rsp, event_count=3, violations=["sse.buffered"], **SSE_OK)


@case("Three calls whose streams an intermediary cut (reset) after the same 30 s of silence, and "
      "one cut after 4 s: the third cut near 30 s carries sse.idle_cut (once, naming the time and "
      "the fix: heartbeats below it); unknown tool, so do_not_retry.")
def sse_idle_cut_three_streams(c):
    for n, (ms, city) in enumerate([(30010, "Oslo"), (4000, "Rome"), (29980, "Lima"), (30050, "Kyiv")]):
        req = call26(n + 1, "get_weather", {"city": city}, meta_more=PT)
        rsp = sse(ev(progress(1)), mcp_end="reset")
        rsp["time"] = ms
        c.x(req, rsp, outcome="STREAM_ABORTED", advice="do_not_retry", event_count=1, at=n * 31,
            violations=["sse.idle_cut"] if n == 3 else [])


# -- auth: a 401/403 and its WWW-Authenticate challenge (docs/verdicts.md#the-auth-layer) ------

BEARER = [("Authorization", "Bearer corpus-token-1")]
METADATA = "https://mcp.example.test/.well-known/oauth-protected-resource"


def challenge(status, value=None):
    headers = [("WWW-Authenticate", value)] if value is not None else []
    return jresp({"error": "unauthorized"} if status == 401 else {"error": "forbidden"}, status=status,
                 headers=headers)


@case("A 401 without WWW-Authenticate: the auth layer refused the call before dispatch, and the "
      "client has nothing to start discovery from (auth.challenge_missing, the server's fault); "
      "advice reauthenticate, even for a tool not known to be safe to repeat.")
def auth_401_without_challenge(c):
    c.x(call26(1, "synthetic"), challenge(401), outcome="HTTP_ERROR", layer="auth",
        advice="reauthenticate", violations=["auth.challenge_missing"])
    c.call([0], outcome="HTTP_ERROR", ids=[1], auth_step="challenge")


@case("A 401 with a Bearer challenge naming the resource metadata: the normal first step of "
      "authorization, no rule broken; layer auth, reauthenticate, call auth_step token.")
def auth_401_with_challenge(c):
    c.x(call26(1, "synthetic"), challenge(401, f'Bearer resource_metadata="{METADATA}"'),
        outcome="HTTP_ERROR", layer="auth", advice="reauthenticate")
    c.call([0], outcome="HTTP_ERROR", ids=[1], auth_step="token")


@case("A 403 insufficient_scope naming the scope the call needs (step-up authorization): "
      "auth.insufficient_scope; layer auth, reauthenticate, call auth_step scope.")
def auth_403_insufficient_scope(c):
    c.x(call26(1, "synthetic", extra_headers=BEARER),
        challenge(403, 'Bearer error="insufficient_scope", scope="files:write", '
                       f'resource_metadata="{METADATA}"'),
        outcome="HTTP_ERROR", layer="auth", advice="reauthenticate", violations=["auth.insufficient_scope"])
    c.call([0], outcome="HTTP_ERROR", ids=[1], auth_step="scope")


@case("A 403 without a challenge (a bad Origin, say) is not the auth layer's: transport, "
      "fix_request, no auth rule, auth_step null.")
def auth_403_without_challenge(c):
    c.x(call26(1, "synthetic", extra_headers=BEARER), challenge(403), outcome="HTTP_ERROR",
        advice="fix_request")
    c.call([0], outcome="HTTP_ERROR", ids=[1], auth_step=None)


@case("The token worked for tools/list, then a call got 401 invalid_token: the token expired "
      "(auth.token_expired); the call sent again with a fresh token succeeds. The call keeps "
      "auth_step token_expired though it ended in TOOL_SUCCESS.")
def auth_token_expired_then_refreshed(c):
    c.x(req26(1, "tools/list", extra_headers=BEARER),
        jresp(ok(1, {"resultType": "complete", "cacheScope": "public", "ttlMs": 0, "tools": TOOLS})),
        outcome="SUCCESS", advice="none", result_type="complete")
    c.x(call26(2, "synthetic", extra_headers=BEARER),
        challenge(401, 'Bearer error="invalid_token", error_description="The access token expired"'),
        outcome="HTTP_ERROR", layer="auth", advice="reauthenticate", violations=["auth.token_expired"])
    c.x(call26(3, "synthetic", extra_headers=[("Authorization", "Bearer corpus-token-2")]),
        jresp(ok(3, GOOD)), outcome="TOOL_SUCCESS", advice="none", result_type="complete")
    c.call([0], outcome="SUCCESS", ids=[1], result_type="complete", auth_step=None)
    # Refused before dispatch, so the re-send is no double execution.
    c.call([1, 2], outcome="TOOL_SUCCESS", ids=[2, 3], result_type="complete", retry_origin="automatic",
           auth_step="token_expired")


RULES = rule_ids()


def whatwg_events(body: bytes):
    """Minimal WHATWG event-stream parse: (events with non-empty data, last event id, pending data)."""
    text = body.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # the incomplete last line (empty if the body ended with a line end) is never processed
    events, data, last_id, etype = [], [], None, ""
    for line in lines:
        if line == "":
            if data:
                d = "\n".join(data)
                if d:
                    events.append((etype or "message", d))
            data, etype = [], ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            etype = value
        elif name == "id" and "\0" not in value:
            last_id = value
    return events, last_id, data


def check(cases):
    outcomes, advice, rules, versions, sources = set(), set(), set(), set(), set()
    names = set()
    for c in cases:
        assert c.name not in names, c.name
        names.add(c.name)
        for v in c.verdicts:
            outcomes.add(v["outcome"])
            advice.add(v["retry"]["advice"])
            rules.update(v["violations"])
            versions.add(v["protocol_version"])
            sources.add(v["protocol_version_source"])
            assert set(v["violations"]) <= set(RULES), (c.name, v["violations"])
        for k in c.calls or []:
            outcomes.add(k["outcome"])  # CANCELLED: a call whose task was cancelled
            rules.update(k["violations"])
            assert set(k["violations"]) <= set(RULES), (c.name, k["violations"])
        for e, v in zip([c.entries[v["index"]] for v in c.verdicts], c.verdicts):
            content = e["response"]["content"]
            raw = content.get("text", "").encode()
            if content.get("encoding") == "base64":
                raw = base64.b64decode(raw)
            assert len(raw) <= 64 * 1024, c.name
            if v["protocol_version"] != V26:  # resultType does not exist before 2026-07-28
                assert b'"resultType"' not in raw, c.name
            if v["content_type"] == "text/event-stream" and v["outcome"] != "LIMIT_EXCEEDED":
                events, last_id, pending = whatwg_events(raw)
                assert len(events) == v["event_count"], (c.name, len(events), v["event_count"])
                if v["protocol_version"] != V26:
                    assert last_id == v["last_event_id"], (c.name, last_id)
                    assert v["resumable"] == (last_id is not None), c.name
                assert (v["unterminated"] is not None) == bool(pending), c.name
                for etype, d in events:
                    if etype == "message" and c.name != "sse_not_json_then_eof":
                        json.loads(d)
    missing = {
        "outcomes": set(OUTCOMES) - outcomes,
        "advice": ADVICE - advice,
        "rules": set(RULES) - rules,
        "versions": VERSIONS - versions,
        "sources": SOURCES - sources,
    }
    assert not any(missing.values()), missing
    assert len(cases) >= 48, len(cases)


def main():
    cases = [fn() for fn in CASES]
    check(cases)
    OUT.mkdir(exist_ok=True)
    keep = set()
    for c in cases:
        docs = [(".har", c.har()), (".expect.json", c.expect())]
        if c.calls is not None:
            docs.append((".calls.json", {"about": c.about, "calls": c.calls}))
        for suffix, doc in docs:
            path = OUT / f"{c.name}{suffix}"
            path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            keep.add(path.name)
    for stale in OUT.iterdir():  # a renamed or removed case leaves nothing behind
        if stale.name not in keep:
            stale.unlink()
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    sys.exit(main())
