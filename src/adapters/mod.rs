//! Live adapters: the only code that touches tokio, futures and reqwest. The core stays sans-IO.

pub mod body;
pub mod client;
#[cfg(feature = "tools")]
pub mod h1;
#[cfg(feature = "rmcp")]
pub mod rmcp;

pub use body::{Deadlines, Frame, JudgedBody, ServerMessage, SharedSession, Timings, VerdictSink};
pub use client::{Call, Client, ClientBuilder, Handshake, Prepared};
