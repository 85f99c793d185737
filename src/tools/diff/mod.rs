//! `diff`: what changed between two runs of the same traffic (yesterday's capture and
//! today's, or server A and server B).
//!
//! Each side is read into small per-call summaries ([`load`]: a HAR capture is judged and
//! grouped exactly as `replay --calls` does, through the library's replay and [`Calls`]
//! grouping; verdict and call logs are read line by line; bodies are never kept). Calls are
//! paired by method, tool, arguments and order ([`pair`]); each pair is compared and the
//! changes for the worse are named ([`Regression`]). Soak reports have no calls: two of them
//! are compared as whole runs ([`diff_soak`]).
//!
//! Memory: the summaries of both sides (one [`CallSummary`] per call, about 150 bytes plus 2
//! per rule broken) and, while a capture is replayed, what replay itself holds (one entry's
//! request, the open calls of the grouping).
//!
//! [`Calls`]: crate::Calls

mod compare;
mod load;
mod pair;
mod soak_diff;
mod summary;

pub use compare::{Diff, LATENCY_FLOOR_MS, Latency, PairDiff, Regression, Spread, diff_calls};
pub use load::{Kind, LoadError, Side, load};
pub use pair::{Pairing, pair};
pub use soak_diff::{Count, SoakDiff, SoakSide, diff_soak};
pub use summary::CallSummary;
