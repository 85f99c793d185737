//! Live adapters: the only code that touches tokio, futures and reqwest. The core stays sans-IO.

pub mod body;
pub mod client;

pub use body::{Deadlines, Frame, JudgedBody, ServerMessage, SharedSession, VerdictSink};
pub use client::{Call, Client, ClientBuilder, Handshake};
