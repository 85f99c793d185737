//! A fault-injecting MCP server (`serve-faults`) and the demo that probes every scenario.

pub mod auth_faults;
mod call_faults;
pub mod demo;
mod extension_faults;
mod fixtures;
pub mod http;
mod input_required;
pub mod replies;
mod routing;
pub mod scenarios;
pub mod server;
mod session_faults;
mod tasks;
mod vocab;

pub use server::{FaultServer, ServeLimits};
pub use vocab::{Expect, Reply, Scenario};
