//! The exchange's one order of calls: request rules always apply, and misuse is caught in debug
//! builds.

use crate::{End, Headers, Outcome, Request, ResponseHead, Rule, Session};

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
const ANSWER: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}";

fn json_head() -> ResponseHead {
    ResponseHead {
        status: 200,
        headers: Headers::from_iter([("Content-Type", "application/json")]),
    }
}

/// The only way to an `Exchange` is `Session::begin`, so a request without the Accept header
/// MCP requires is reported whatever the response was.
#[test]
fn request_rules_always_apply() {
    let mut session = Session::default();
    let headers = Headers::from_iter([("Content-Type", "application/json")]);
    let mut exchange = session.begin(Request::new("POST", headers, CALL));
    exchange.on_head(json_head());
    exchange.feed(ANSWER);
    let verdict = session.finish(&mut exchange, End::Eof);
    assert_eq!(verdict.outcome, Outcome::ToolSuccess);
    assert!(verdict.breaks(Rule::RequestAccept), "{verdict:?}");
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "finished twice"))]
fn a_second_finish_is_a_bug() {
    let mut session = Session::default();
    let mut exchange = session.begin(Request::new("POST", Headers::new(), CALL));
    exchange.on_head(json_head());
    exchange.feed(ANSWER);
    let first = session.finish(&mut exchange, End::Eof);
    assert_eq!(first.outcome, Outcome::ToolSuccess);
    // Release builds do not check (see the `Exchange` docs): the spent exchange has no head.
    let second = session.finish(&mut exchange, End::Eof);
    assert_eq!(second.outcome, Outcome::ConnectionFailed);
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "before Exchange::on_head"))]
fn feed_before_on_head_is_a_bug() {
    let mut session = Session::default();
    let mut exchange = session.begin(Request::new("POST", Headers::new(), CALL));
    exchange.feed(ANSWER);
    let verdict = session.finish(&mut exchange, End::Eof);
    assert_eq!(verdict.outcome, Outcome::ConnectionFailed);
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "on_head called twice"))]
fn a_second_head_is_a_bug() {
    let mut session = Session::default();
    let mut exchange = session.begin(Request::new("POST", Headers::new(), CALL));
    exchange.on_head(json_head());
    exchange.on_head(json_head());
    let _ = session.finish(&mut exchange, End::Eof);
}

/// The progress fast path may only skip the shape check where the check finds nothing: every
/// mix of member spellings, in every revision, the fast path says "conforms" only when the full
/// check agrees; and it does say so for the plain progress event of a long stream.
#[test]
fn progress_fast_path_never_hides_a_shape_finding() {
    use crate::ProtocolVersion;
    use crate::jsonrpc::{Payload, parse_payload};
    let jsonrpcs = [r#""jsonrpc":"2.0","#, r#""jsonrpc":"1.0","#, ""];
    let methods = [
        r#""notifications/progress""#,
        r#""notifications\/progress""#,
    ];
    let tokens = [
        r#""progressToken":"t","#,
        r#""progressToken":7,"#,
        r#""progressToken":-7,"#,
        r#""progressToken":1.5,"#,
        r#""progressToken":1.0,"#,
        r#""progressToken":null,"#,
        r#""progressToken":{},"#,
        "",
    ];
    let progress = [r#""progress":3"#, r#""progress":null"#, r#""progress":"x""#];
    let rests = [
        "",
        r#","total":10"#,
        r#","total":"10""#,
        r#","message":"m""#,
        r#","message":1"#,
        r#","message":"a","message":"b""#,
        r#","_meta":{}"#,
        r#","_meta":1"#,
        r#","other":[1]"#,
    ];
    let mut fast = 0;
    for jsonrpc in jsonrpcs {
        for method in methods {
            for token in tokens {
                for p in progress {
                    for rest in rests {
                        let text = format!(
                            r#"{{{jsonrpc}"method":{method},"params":{{{token}{p}{rest}}}}}"#
                        );
                        let Ok(Payload::Single(env)) = parse_payload(&text) else {
                            continue;
                        };
                        if !super::stream::progress_conforms(&env) {
                            continue;
                        }
                        fast += 1;
                        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                        for v in ProtocolVersion::ALL {
                            let found = crate::shapes::problems(*v, &value, None);
                            assert!(found.is_empty(), "{v}: {text}: {found:?}");
                        }
                    }
                }
            }
        }
    }
    // "t", 7, -7 with progress 3 and the plain rests (none, total, message, other).
    assert_eq!(fast, 12);
}

/// One `resources/read` under `version` (by its header), answered with `status`, `headers` and
/// `body`.
fn judge_read(version: &str, status: u16, headers: &[(&str, &str)], body: &[u8]) -> crate::Verdict {
    let mut session = Session::default();
    let request =
        br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}"#;
    let req_headers = Headers::from_iter([("MCP-Protocol-Version", version)]);
    let mut exchange = session.begin(Request::new("POST", req_headers, request));
    exchange.on_head(ResponseHead {
        status,
        headers: Headers::from_iter(headers.iter().copied()),
    });
    exchange.feed(body);
    session.finish(&mut exchange, End::Eof)
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// The code checks read the error wherever it came: a JSON body, an SSE stream's final event,
/// an error status's body; and only under 2026-07-28.
#[test]
fn retired_and_reserved_codes_wherever_the_error_came() {
    let not_found =
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"no such resource"}}"#;
    let v = judge_read("2026-07-28", 200, &[JSON], not_found);
    assert_eq!(v.outcome, Outcome::JsonrpcError);
    assert!(v.breaks(Rule::JsonrpcRetiredCode), "{v:?}");
    assert!(!v.breaks(Rule::JsonrpcReservedCode), "{v:?}");
    let v = judge_read("2025-11-25", 200, &[JSON], not_found);
    assert!(!v.breaks(Rule::JsonrpcRetiredCode), "{v:?}");

    let undefined = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"odd"}}"#;
    let v = judge_read("2026-07-28", 404, &[JSON], undefined);
    assert_eq!(v.outcome, Outcome::HttpError);
    assert_eq!(v.error_code, Some(-32050));
    assert!(v.breaks(Rule::JsonrpcReservedCode), "{v:?}");
    let v = judge_read("2025-11-25", 404, &[JSON], undefined);
    assert!(!v.breaks(Rule::JsonrpcReservedCode), "{v:?}");

    let sse = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32042,\"message\":\"open the URL\"}}\n\n";
    let v = judge_read(
        "2026-07-28",
        200,
        &[("Content-Type", "text/event-stream")],
        sse,
    );
    assert_eq!(v.outcome, Outcome::JsonrpcError);
    assert!(v.breaks(Rule::JsonrpcRetiredCode), "{v:?}");

    for fine in [-32020, -32023, -32000, -32602] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{fine},"message":"m"}}}}"#);
        let v = judge_read("2026-07-28", 400, &[JSON], body.as_bytes());
        assert!(
            !v.breaks(Rule::JsonrpcRetiredCode) && !v.breaks(Rule::JsonrpcReservedCode),
            "{fine}: {v:?}"
        );
    }
}

/// RateLimited: retry at any status, after `data.retryAfterMs` when given (it wins over
/// `Retry-After`), else after `Retry-After`.
#[test]
fn rate_limited_is_retried_after_its_delay() {
    use crate::verdict::Advice;
    let with_data = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":"slow down","data":{"retryAfterMs":1500}}}"#;
    let v = judge_read("2026-07-28", 429, &[JSON, ("Retry-After", "5")], with_data);
    assert_eq!(v.outcome, Outcome::HttpError);
    assert_eq!(
        (v.retry.advice, v.retry.after_ms),
        (Advice::Retry, Some(1500))
    );

    let bare = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":"slow down"}}"#;
    let v = judge_read("2026-07-28", 200, &[JSON, ("Retry-After", "2")], bare);
    assert_eq!(v.outcome, Outcome::JsonrpcError);
    assert_eq!(
        (v.retry.advice, v.retry.after_ms),
        (Advice::Retry, Some(2000))
    );
    let v = judge_read("2026-07-28", 503, &[JSON], with_data);
    assert_eq!(
        (v.retry.advice, v.retry.after_ms),
        (Advice::Retry, Some(1500))
    );

    // A 2025 server's -32023 is its own code: a complete JSON-RPC error, nothing to retry.
    let v = judge_read("2025-11-25", 200, &[JSON], with_data);
    assert_eq!(v.retry.advice, Advice::None);
}
