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
