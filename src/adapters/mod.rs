//! Live adapters: the only code that touches tokio, futures and reqwest. The core stays sans-IO.

pub mod body;
pub(crate) mod cause;
pub mod client;
#[cfg(feature = "tools")]
pub mod h1;
mod negotiate;
#[cfg(feature = "rmcp")]
pub mod rmcp;

pub use body::{
    Deadlines, EntrySink, Frame, HeadTimeout, JudgedBody, ServerMessage, SharedDriver, Timings,
    VerdictSink,
};
/// Locks `m`, taking the data even if another thread panicked while holding it: every value
/// behind these mutexes stays consistent between statements, so a poisoned lock is still usable.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub use client::{BuildError, Call, Client, ClientBuilder, Handshake, Prepared};
