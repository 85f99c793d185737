//! A fault-injecting MCP server (`serve-faults`) and the demo that probes every scenario.

pub mod auth_faults;
mod call_faults;
mod completion;
pub mod demo;
mod extension_faults;
mod fixtures;
pub mod http;
mod input_required;
mod method_faults;
mod methods;
mod prompts;
pub mod replies;
mod request_checks;
mod resources;
pub mod scenarios;
pub mod server;
mod session_faults;
mod tasks;
mod vocab;

pub use server::{FaultServer, ServeLimits};
pub use vocab::{Expect, Reply, Scenario};
