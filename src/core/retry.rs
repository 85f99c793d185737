//! Retry advice: a pure function of what the exchange came to and whether the call is safe to
//! repeat. Kept apart from the outcome on purpose: "it failed" and "send it again" are different
//! decisions, and replaying a non-idempotent `tools/call` is the costliest mistake clients make.

use std::borrow::Cow;

use crate::error_codes;
use crate::origin::Reach;
use crate::verdict::{Advice, Outcome, RetryAdvice};
use crate::version::ProtocolVersion;

/// A failure after which the call may have run: retry only what is safe to repeat. The
/// reasons are fixed text (no allocation) where `what` is.
macro_rules! may_have_run {
    ($f:expr, $what:literal) => {
        may_have_run(
            $f,
            concat!($what, "; the call is safe to repeat as a new request"),
            concat!(
                $what,
                "; the call may already have taken effect and is not known to be idempotent"
            ),
        )
    };
    ($f:expr, $what:expr) => {{
        let what = $what;
        may_have_run(
            $f,
            format!("{what}; the call is safe to repeat as a new request"),
            format!(
                "{what}; the call may already have taken effect and is not known to be idempotent"
            ),
        )
    }};
}

/// Everything the advice depends on.
#[derive(Debug, Clone, Copy)]
pub struct RetryFacts {
    /// The outcome.
    pub outcome: Outcome,
    /// HTTP status, if a head arrived.
    pub status: Option<u16>,
    /// JSON-RPC error code, if any.
    pub error_code: Option<i64>,
    /// Sending the same request again is harmless (not a `tools/call`, or a tool annotated
    /// read-only or idempotent earlier in the capture).
    pub safe_to_repeat: bool,
    /// The SSE stream can be resumed (2025-x with an event id).
    pub resumable: bool,
    /// The request carried a session id.
    pub had_session: bool,
    /// The protocol version.
    pub version: ProtocolVersion,
    /// The delay the server asked for, in milliseconds: a RateLimited error's
    /// `data.retryAfterMs`, else `Retry-After`.
    pub retry_after_ms: Option<u64>,
    /// The SSE `retry:` field, in milliseconds.
    pub sse_retry_ms: Option<u64>,
    /// Whether an intermediary's status shows the request reached the server
    /// ([`crate::origin`]); `Unknown` for the server's own statuses.
    pub reach: Reach,
    /// The auth layer refused the request (a 401, or a 403 with a challenge): it was not run.
    pub auth_refused: bool,
    /// The created task's suggested polling interval, in milliseconds (for `poll`).
    pub poll_interval_ms: Option<u64>,
}

/// Codes that mean "rejected before dispatch because of the request itself" (2026-07-28).
fn is_pre_dispatch_code(code: Option<i64>) -> bool {
    code.is_some_and(crate::wire::is_pre_dispatch)
}

/// Decides what to do next.
pub fn advise(f: &RetryFacts) -> RetryAdvice {
    use Outcome::*;
    match f.outcome {
        ToolSuccess | Success | ToolError | NotificationAccepted | Listening
        | SessionTerminated | MethodNotAllowed | Cancelled | StreamOpen | NotCaptured => {
            advice(Advice::None, None, settled_reason(f.outcome))
        }
        // Sending the call again would start the work twice: the task holds the answer.
        Deferred => advice(
            Advice::Poll,
            f.poll_interval_ms,
            "a task was created: never send the call again; poll tasks/get with its taskId until it is terminal, waiting pollIntervalMs between polls",
        ),
        InputRequired => advice(
            Advice::ResubmitWithInput,
            None,
            "send a new request (new id) with inputResponses and requestState",
        ),
        JsonrpcError | HttpError if error_codes::is_rate_limited(f.error_code, f.version) => {
            rate_limited(f)
        }
        JsonrpcError if is_pre_dispatch_code(f.error_code) => advice(
            Advice::FixRequest,
            None,
            "rejected before dispatch (header, capability or version); fix the request",
        ),
        JsonrpcError => advice(Advice::None, None, "complete answer: a JSON-RPC error"),
        LimitExceeded => advice(
            Advice::DoNotRetry,
            None,
            "the reply exceeded a configured limit and would again; raise the limit",
        ),
        HttpError => http_advice(f),
        StreamAborted | TimedOut if f.resumable && f.version.has_resumption() => advice(
            Advice::Resume,
            f.sse_retry_ms,
            "the stream carried an event id: GET with Last-Event-ID to resume",
        ),
        StreamAborted => may_have_run!(f, "the stream ended before the response"),
        TimedOut => may_have_run!(f, "no response before the deadline"),
        ConnectionFailed => may_have_run!(f, "the connection failed"),
        UnexpectedContentType => may_have_run!(f, "the reply was not JSON or SSE"),
        UnexpectedAccepted => may_have_run!(f, "a request was answered 202 with no response"),
        MalformedJson => may_have_run!(f, "the reply was not valid JSON"),
        InvalidEnvelope => may_have_run!(f, "the reply was not a valid response to this request"),
        InvalidToolResult => may_have_run!(f, "the tool result broke the schema"),
    }
}

/// A RateLimited error (`-32023`): refused before dispatch, so nothing ran and sending it again
/// after the delay is safe whatever the tool and whatever the HTTP status that carried it.
fn rate_limited(f: &RetryFacts) -> RetryAdvice {
    advice(
        Advice::Retry,
        f.retry_after_ms,
        "rate limited before dispatch (-32023); send it again after the delay",
    )
}

/// Why an outcome that needs nothing more (an answer, or nothing to retry) gets no advice.
fn settled_reason(outcome: Outcome) -> &'static str {
    use Outcome::*;
    match outcome {
        ToolError => "the tool ran and reported an error; show it to the model rather than resend",
        NotificationAccepted => "accepted; nothing to wait for",
        Listening => "a server-message stream; it answers no request of its own",
        SessionTerminated => "the session was ended",
        MethodNotAllowed => "the server offers no GET stream or DELETE here (allowed)",
        Cancelled => {
            "the client closed the stream on purpose; send a new request if it still wants the answer"
        }
        StreamOpen => "the capture ended while the stream was open; the outcome is unknown",
        NotCaptured => "the capture did not keep the response body; the outcome is unknown",
        _ => "complete answer",
    }
}

fn advice(
    advice: Advice,
    after_ms: Option<u64>,
    reason: impl Into<Cow<'static, str>>,
) -> RetryAdvice {
    RetryAdvice {
        advice,
        after_ms,
        reason: reason.into(),
    }
}

/// [`may_have_run!`]: the reason if the call is safe to repeat, and if not.
fn may_have_run(
    f: &RetryFacts,
    safe: impl Into<Cow<'static, str>>,
    unsafe_: impl Into<Cow<'static, str>>,
) -> RetryAdvice {
    if f.safe_to_repeat {
        advice(Advice::Retry, f.retry_after_ms, safe)
    } else {
        advice(Advice::DoNotRetry, None, unsafe_)
    }
}

fn http_advice(f: &RetryFacts) -> RetryAdvice {
    let status = f.status.unwrap_or(0);
    if is_pre_dispatch_code(f.error_code) {
        return advice(
            Advice::FixRequest,
            None,
            "rejected before dispatch (header, capability or version); fix the request",
        );
    }
    match (f.reach, status) {
        // The intermediary could not hand the request on: nothing ran, whatever the tool does.
        (Reach::Never, 500..=599) => advice(
            Advice::Retry,
            f.retry_after_ms,
            format!(
                "HTTP {status} from an intermediary that never reached the server; safe to send again, even a call that is not idempotent"
            ),
        ),
        // Handed on, then the intermediary gave up waiting: the server may still have run it.
        (Reach::Forwarded, 500..=599) => may_have_run!(
            f,
            format!("HTTP {status}: an intermediary's timeout after it forwarded the request")
        ),
        _ => http_status_advice(f, status),
    }
}

/// [`http_advice`] by status alone (the server's statuses, and an intermediary's that tell
/// nothing of whether the request reached the server).
fn http_status_advice(f: &RetryFacts, status: u16) -> RetryAdvice {
    match status {
        // The auth layer refused it before dispatch: whatever the tool, safe after re-auth.
        401 | 403 if f.auth_refused => advice(
            Advice::Reauthenticate,
            None,
            format!(
                "HTTP {status}: refused by authorization before dispatch; authorize again (a new or refreshed token, or the scope the challenge names), then send it again"
            ),
        ),
        429 => advice(
            Advice::Retry,
            f.retry_after_ms,
            "rate limited before dispatch; retry after the delay",
        ),
        404 if f.had_session && f.version.has_sessions() => advice(
            Advice::Reinitialize,
            None,
            "the session is gone (404 with a session id): initialize again",
        ),
        408 => may_have_run!(f, "HTTP 408"),
        // A redirect is the server's answer, not something to follow silently: the call was
        // not dispatched here, and following could hand secret headers to another origin.
        300..=399 => advice(
            Advice::FixRequest,
            None,
            format!("HTTP {status}: a redirect, not followed; check the target and change the URL"),
        ),
        500..=599 => may_have_run!(f, format!("HTTP {status}")),
        400..=499 => advice(
            Advice::FixRequest,
            None,
            format!("HTTP {status}: rejected before dispatch; change the request"),
        ),
        _ => may_have_run!(f, format!("HTTP {status}")),
    }
}

/// Parses `Retry-After`: delta seconds, or an HTTP date relative to the response's `Date`.
pub fn parse_retry_after(value: &str, date: Option<&str>) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs.saturating_mul(1000));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let now = httpdate::parse_http_date(date?.trim()).ok()?;
    Some(
        at.duration_since(now)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(outcome: Outcome) -> RetryFacts {
        RetryFacts {
            outcome,
            status: Some(200),
            error_code: None,
            safe_to_repeat: false,
            resumable: false,
            had_session: false,
            version: ProtocolVersion::V2026_07_28,
            retry_after_ms: None,
            sse_retry_ms: None,
            reach: Reach::Unknown,
            auth_refused: false,
            poll_interval_ms: None,
        }
    }

    #[test]
    fn a_task_is_polled_never_resent() {
        let mut f = facts(Outcome::Deferred);
        assert_eq!(advise(&f).advice, Advice::Poll);
        assert_eq!(advise(&f).after_ms, None);
        f.poll_interval_ms = Some(2000);
        f.safe_to_repeat = true;
        let a = advise(&f);
        assert_eq!((a.advice, a.after_ms), (Advice::Poll, Some(2000)));
        assert!(a.reason.contains("never send"), "{a:?}");
    }

    #[test]
    fn unsafe_failure_is_not_retried() {
        let mut f = facts(Outcome::HttpError);
        f.status = Some(503);
        assert_eq!(advise(&f).advice, Advice::DoNotRetry);
        f.safe_to_repeat = true;
        f.retry_after_ms = Some(5000);
        assert_eq!(advise(&f).advice, Advice::Retry);
        assert_eq!(advise(&f).after_ms, Some(5000));
    }

    #[test]
    fn http_rejections() {
        let mut f = facts(Outcome::HttpError);
        f.status = Some(429);
        assert_eq!(advise(&f).advice, Advice::Retry);
        f.status = Some(400);
        f.error_code = Some(-32020);
        assert_eq!(advise(&f).advice, Advice::FixRequest);
        f.status = Some(404);
        f.error_code = None;
        f.had_session = true;
        assert_eq!(
            advise(&f).advice,
            Advice::FixRequest,
            "2026 has no sessions"
        );
        f.version = ProtocolVersion::V2025_11_25;
        assert_eq!(advise(&f).advice, Advice::Reinitialize);
    }

    /// The origin's table: never reached → retry whatever the tool; a timeout after forwarding
    /// → only what is safe to repeat; unknown → the status alone.
    #[test]
    fn intermediary_reach_decides_5xx() {
        let mut f = facts(Outcome::HttpError);
        f.status = Some(502);
        f.reach = Reach::Never;
        assert_eq!(
            advise(&f).advice,
            Advice::Retry,
            "destructive, never reached"
        );
        f.status = Some(504);
        f.reach = Reach::Forwarded;
        let a = advise(&f);
        assert_eq!(a.advice, Advice::DoNotRetry, "{a:?}");
        assert!(a.reason.contains("forwarded"), "{a:?}");
        f.safe_to_repeat = true;
        assert_eq!(advise(&f).advice, Advice::Retry, "read-only, forwarded");
        f.safe_to_repeat = false;
        f.reach = Reach::Unknown;
        assert_eq!(advise(&f).advice, Advice::DoNotRetry);
        // A 4xx from an intermediary is still a request to fix.
        f.status = Some(413);
        f.reach = Reach::Never;
        assert_eq!(advise(&f).advice, Advice::FixRequest);
    }

    /// -32023 is a retry after the server's delay, whatever the status and the tool, from
    /// 2026-07-28 on; before, the code is an implementation's own and the status decides.
    #[test]
    fn rate_limited_code_is_retry_at_any_status() {
        for (outcome, status) in [
            (Outcome::JsonrpcError, 200),
            (Outcome::HttpError, 429),
            (Outcome::HttpError, 400),
            (Outcome::HttpError, 503),
        ] {
            let mut f = facts(outcome);
            f.status = Some(status);
            f.error_code = Some(-32023);
            f.retry_after_ms = Some(1500);
            let a = advise(&f);
            assert_eq!(a.advice, Advice::Retry, "{status}: {a:?}");
            assert_eq!(a.after_ms, Some(1500), "{status}");
            assert!(a.reason.contains("-32023"), "{a:?}");
        }
        let mut f = facts(Outcome::JsonrpcError);
        f.error_code = Some(-32023);
        f.version = ProtocolVersion::V2025_11_25;
        assert_eq!(advise(&f).advice, Advice::None, "a 2025 server's own code");
        f.outcome = Outcome::HttpError;
        f.status = Some(400);
        assert_eq!(advise(&f).advice, Advice::FixRequest);
    }

    #[test]
    fn auth_refusal_is_reauthenticate_even_for_unsafe_calls() {
        let mut f = facts(Outcome::HttpError);
        f.status = Some(401);
        f.auth_refused = true;
        assert_eq!(advise(&f).advice, Advice::Reauthenticate);
        f.status = Some(403);
        assert_eq!(advise(&f).advice, Advice::Reauthenticate);
        // A 403 the auth layer did not claim (a bad Origin) is still a request to fix.
        f.auth_refused = false;
        assert_eq!(advise(&f).advice, Advice::FixRequest);
    }

    #[test]
    fn resume_only_with_resumption() {
        let mut f = facts(Outcome::StreamAborted);
        f.resumable = true;
        f.version = ProtocolVersion::V2025_11_25;
        f.sse_retry_ms = Some(3000);
        assert_eq!(advise(&f).advice, Advice::Resume);
        assert_eq!(advise(&f).after_ms, Some(3000));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("5", None), Some(5000));
        assert_eq!(
            parse_retry_after(
                "Wed, 02 Dec 2026 10:00:30 GMT",
                Some("Wed, 02 Dec 2026 10:00:00 GMT")
            ),
            Some(30_000)
        );
        assert_eq!(parse_retry_after("soon", None), None);
    }
}
