//! A fault-injecting MCP server (`serve-faults`) and the demo that probes every scenario.

pub mod auth_faults;
mod call_faults;
pub mod demo;
mod fixtures;
pub mod http;
pub mod replies;
pub mod scenarios;
pub mod server;
mod session_faults;
mod vocab;

pub use server::{FaultServer, ServeLimits};
pub use vocab::{Expect, Reply, Scenario};
