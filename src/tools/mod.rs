//! The tools built on the library (feature `tools`, enabled by `cli`): the fault-injecting
//! server, soak mode and the proxy (feature `proxy`). Library users who only judge their own
//! traffic never compile these.

pub mod diff;
pub mod faults;
#[cfg(feature = "proxy")]
pub mod proxy;
pub mod soak;
