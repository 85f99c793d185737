//! Captures: reading and writing HAR files, and judging their entries with the core.

pub mod har;
pub mod replay;
