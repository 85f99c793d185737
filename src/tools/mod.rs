//! The tools built on the library (feature `tools`, enabled by `cli`): the fault-injecting
//! server and soak mode. Library users who only judge their own traffic never compile these.

pub mod faults;
pub mod soak;
