//! The sans-IO core: framing, envelope, result, retry advice, the rule catalogue and the
//! per-exchange state machine. No I/O, no clocks, no async; everything else builds on it.

pub(crate) mod arrival;
pub(crate) mod auth;
pub(crate) mod call_facts;
pub(crate) mod calls;
pub(crate) mod cancel;
pub(crate) mod client_checks;
pub(crate) mod discovery;
pub(crate) mod driver;
pub(crate) mod entry;
pub(crate) mod error_codes;
pub(crate) mod exchange;
pub(crate) mod findings;
pub(crate) mod headers;
pub(crate) mod idle_cut;
pub(crate) mod jsonrpc;
pub(crate) mod lifecycle;
pub(crate) mod meta;
pub(crate) mod origin;
pub mod redact;
pub(crate) mod request;
pub(crate) mod retry;
pub(crate) mod session;
pub mod shapes;
pub mod sse;
pub(crate) mod task;
pub(crate) mod tool_result;
pub(crate) mod vocab;
pub(crate) mod wire;
