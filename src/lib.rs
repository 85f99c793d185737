//! # mcp-verdict
//!
//! Tells, for every MCP Streamable-HTTP exchange, **which layer failed and whether the reply is
//! complete**. An HTTP 200 says neither "no JSON-RPC error" nor "`isError` is false", and with
//! `text/event-stream` it only says the stream began. This crate judges, in order, the HTTP
//! transport, the SSE stream, the JSON-RPC envelope and the result, and gives separate retry
//! advice.
//!
//! The core is a sans-IO state machine ([`Exchange`]): feed it the request, the response head,
//! the body in any chunking and how the body ended; read a [`Verdict`]. It does no I/O and keeps
//! no clocks, so the same code serves live clients, proxies and capture replay. A [`Session`]
//! carries what one exchange needs from earlier ones (negotiated version, tool annotations).
//!
//! ```
//! use mcp_verdict::{End, Headers, Outcome, Request, ResponseHead, Session};
//!
//! let mut session = Session::default();
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
//! let mut exchange = session.begin(Request::new("POST", Headers::new(), body));
//! let headers = Headers::from_iter([("Content-Type", "text/event-stream")]);
//! exchange.on_head(ResponseHead { status: 200, headers });
//! exchange.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"resu");
//! exchange.feed(b"lt\":{\"content\":[],\"isError\":true}}\n\n");
//! let verdict = session.finish(&mut exchange, End::Eof);
//! assert_eq!(verdict.outcome, Outcome::ToolError);
//! assert!(verdict.complete);
//! ```
//!
//! Modules, one job each: [`sse`] (WHATWG framer), [`jsonrpc`] (envelope), [`tool_result`]
//! (result layer), [`retry`] (advice), [`version`] (revisions), [`rules`] (the rule catalogue),
//! [`exchange`] (the state machine), [`session`] (context), [`har`] and [`replay`] (captures).
#![deny(missing_docs)]

/// Visitor methods for every JSON scalar, each giving `$value`: for serde visitors that read
/// objects (and arrays) and let any other value through as "nothing to read here".
macro_rules! scalars_give {
    ($ty:ty, $value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_str<E>(self, _: &str) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_unit<E>(self) -> Result<$ty, E> {
            Ok($value)
        }
    };
}

#[cfg(feature = "client")]
pub mod adapters;
pub mod calls;
mod client_checks;
pub mod exchange;
#[cfg(feature = "client")]
pub mod faults;
mod findings;
pub mod har;
pub mod jsonrpc;
pub mod lifecycle;
pub mod limits;
pub mod replay;
pub mod request;
pub mod retry;
pub mod rules;
pub mod session;
#[cfg(feature = "client")]
pub mod soak;
pub mod sse;
pub mod tool_result;
pub mod verdict;
pub mod version;

pub use calls::{Call, Calls, RetryOrigin};
pub use exchange::{Exchange, Message, Observer, ResponseHead};
pub use lifecycle::{ExchangeKind, ServerRequest};
pub use limits::{LimitKind, Limits};
pub use request::{BodyKind, Headers, Request};
pub use session::Session;
pub use verdict::{Advice, End, Layer, Level, Outcome, RetryAdvice, Verdict, Violation};
pub use version::{ProtocolVersion, VersionSource};
