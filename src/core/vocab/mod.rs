//! The vocabulary: the types every layer names (outcomes, layers, levels, advice, kinds, the
//! rule catalogue, limits, revisions, the verdict and call records, a result's members). Data
//! and their fixed tables only: nothing here imports a module that judges, reads or records,
//! so any layer may use these words without depending on another's behaviour, and no import
//! circle can run through them (`tests/layout.rs` holds every `vocab` module to that).

pub(crate) mod call;
pub(crate) mod codes;
mod jsonl;

/// A number in decimal at the end of a byte buffer, as the JSON lines write it.
pub(crate) use jsonl::uint as decimal;
pub(crate) mod kinds;
pub(crate) mod limits;
pub(crate) mod members;
pub(crate) mod methods;
pub(crate) mod rules;
pub(crate) mod task;
pub(crate) mod verdict;
pub(crate) mod version;
