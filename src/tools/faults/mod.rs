//! A fault-injecting MCP server (`serve-faults`) and the demo that probes every scenario.

pub mod demo;
mod fixtures;
pub mod http;
pub mod scenarios;
pub mod server;

pub use scenarios::{Expect, Scenario};
pub use server::{FaultServer, ServeLimits};
