//! `proxy`: the summary line at stop (`N exchanges, M complete, K incomplete: …`), the same
//! line `replay` ends with, on standard error and coloured by `--color`.

use std::io;
use std::sync::Mutex;

use mcp_verdict::proxy::{ExchangeRecord, Sink};

use crate::output::{Format, Printer};

/// Counts every judged exchange; [`Summary::print`] writes the line.
pub struct Summary(Mutex<Printer<io::Stderr>>);

impl Summary {
    pub fn new(color: bool) -> Self {
        Summary(Mutex::new(Printer::new(io::stderr(), Format::Human, color)))
    }

    /// The summary line, on standard error.
    pub fn print(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).finish();
    }
}

impl Sink for Summary {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        if let Some(v) = record.verdict {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).count(v);
        }
    }
}
