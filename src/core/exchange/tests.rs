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
