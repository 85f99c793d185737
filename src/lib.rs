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
//! The output contract (the JSON form of a verdict, every member and value) is documented on
//! [`Verdict`] and the types it links to.
//!
//! Layers, one folder each (the modules are private; the types above and below are re-exported
//! here):
//!
//! - the sans-IO core: the [`sse`] framer (public, usable alone), the JSON-RPC envelope, the
//!   result layer, retry advice, protocol revisions, the rule catalogue ([`Rule`]), [`Limits`],
//!   the [`Verdict`] types, request facts ([`Request`]), the state machine ([`Exchange`]) and the
//!   context across exchanges ([`Session`]);
//! - captures: [`har`] (read and write HAR files) and [`replay`] (judge their entries);
//! - live adapters (feature `client`): `adapters` (a judged body stream, a reqwest client and,
//!   with feature `rmcp`, a transport for the official Rust SDK);
//! - tools (feature `tools`, enabled by `cli`): `faults` (the fault-injecting server) and `soak`
//!   (sustained load with a verdict per call).
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

/// A closed vocabulary defined once: the enum, each value's doc and wire name (serde writes the
/// same name), `ALL` in declaration order, `as_str` and Display. A row written
/// `Variant => ("wire", "summary"),` also gives `summary()`, the one line `mcp-verdict rules`
/// prints for it. A vocabulary with more columns (see `Outcome`) adds them in its own table and
/// passes the wire names through here.
macro_rules! wire_names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[doc = $doc:literal])* $variant:ident => ($wire:literal, $summary:literal),)*
        }
    ) => {
        wire_names! {
            $(#[$meta])*
            pub enum $name {
                $($(#[doc = $doc])* $variant => $wire,)*
            }
        }

        impl $name {
            /// One line: what the value means (as `mcp-verdict rules` prints it).
            pub fn summary(self) -> &'static str {
                match self {
                    $($name::$variant => $summary,)*
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[doc = $doc:literal])* $variant:ident => $wire:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[doc = $doc])* #[serde(rename = $wire)] $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The wire name (the string serde writes).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

#[cfg(feature = "client")]
pub mod adapters;
mod captures;
mod core;
#[cfg(feature = "tools")]
mod tools;

// The core's modules keep their short crate paths (`crate::sse`, `crate::exchange`, ...) inside
// the crate; only the re-exports below are public.
use crate::core::vocab::{limits, rules, verdict, version};
use crate::core::{
    arrival, auth, call_facts, calls, cancel, client_checks, discovery, driver, entry, error_codes,
    exchange, findings, headers, idle_cut, jsonrpc, lifecycle, meta, origin, request, retry,
    session, task, tool_result, vocab, wire,
};

pub use crate::captures::{har, replay};
pub use crate::core::{redact, shapes, sse};
#[cfg(feature = "proxy")]
pub use crate::tools::proxy;
#[cfg(feature = "tools")]
pub use crate::tools::{diff, faults, soak};
pub use redact::Redaction;

pub use arrival::{Arrivals, MAX_MARKS, Mark};
pub use calls::{
    AUTOMATIC_RETRY_MS, Calls, ExchangeFacts, MAX_CALL_EXCHANGES, OPEN_CALLS,
    POLL_TOLERANCE_PERCENT,
};
pub use driver::{Driver, Finished, Flight, Sent, Skipped, Times, not_mcp};
pub use exchange::{Exchange, Message, Observer, ResponseHead};
pub use idle_cut::{IDLE_CUT_MIN_MS, IDLE_CUT_STREAMS};
pub use limits::{LimitKind, Limits};
pub use request::{Headers, Request};
pub use rules::Rule;
pub use session::Session;
/// A tool's name as [`Verdict::tool`], [`Call::tool`] and a [`Request`]'s `params.name` hold it:
/// a string kept inline up to 23 bytes (so judging a call allocates nothing for its name),
/// read as a `&str`.
pub use smol_str::SmolStr;
pub use verdict::{
    Advice, End, Layer, Level, Location, Outcome, RetryAdvice, ServerRequest, StatusOrigin,
    TaskEnd, TaskReport, Unterminated, Verdict, Violation,
};
pub use version::{ProtocolVersion, VersionSource};
pub use vocab::call::{AuthStep, Call, RetryOrigin};
pub use vocab::kinds::{BodyKind, ExchangeKind, MessageKind};
pub use vocab::task::TaskStatus;

/// The Rust blocks of the README, compiled and run as doctests (so none can go stale).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The library guide's examples (`docs/library.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
struct LibraryGuideDoctests;

/// Internals exposed to the fuzz targets only (`--features fuzzing`): the envelope's fast scan
/// and its serde reference, which must agree on every input.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::jsonrpc::{parse_object_serde, scan_object};
}
