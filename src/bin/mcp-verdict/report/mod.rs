//! Reports for people and for the tools they already run: a self-contained HTML page
//! ([`html`]) and JUnit XML ([`junit`]). Both read the same model: one [`Trace`] per exchange
//! (the verdict plus what happened when), and a [`Run`] for the whole command.
//!
//! The unit is the exchange: the table, the timelines and JUnit's test cases are per exchange.
//! The page also lists the logical calls (the seed's per-call fields), each linking to the
//! timelines of its exchanges.

pub mod html;
pub mod junit;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(feature = "otel")]
pub mod otel_call;
#[cfg(feature = "otel")]
pub mod otel_live;
#[cfg(feature = "otel")]
pub mod otel_run;
pub mod proxy;
mod trace;

pub use trace::{Clock, PointKind, TIMELINE_MESSAGES, Trace, TraceObserver};

use mcp_verdict::Call;
use mcp_verdict::replay::Skipped;

/// What the whole command came to, as its exit code says it.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The process exit code.
    pub code: u8,
    /// Why, in one sentence.
    pub reason: String,
}

impl Decision {
    /// The decision for replay and probe: 2 unusable input, 1 any incomplete (a legacy-server
    /// probe forgiven, as `replay::Tally` decides), else 0.
    pub fn of(unusable: bool, all_complete: bool, incomplete: usize) -> Decision {
        if unusable {
            Decision {
                code: 2,
                reason: "unusable input (see the error on standard error)".into(),
            }
        } else if all_complete {
            let forgiven = if incomplete > 0 {
                " (a refused server/discover before initialize is how a client detects a legacy server)"
            } else {
                ""
            };
            Decision {
                code: 0,
                reason: format!("every exchange was complete{forgiven}"),
            }
        } else {
            let s = if incomplete == 1 { "" } else { "s" };
            Decision {
                code: 1,
                reason: format!("{incomplete} exchange{s} not complete"),
            }
        }
    }
}

/// One run of `replay` or `probe`: its traces in order, and what was skipped.
#[derive(Debug, Default)]
pub struct Run {
    /// `replay` or `probe`.
    pub command: &'static str,
    /// Captures read, or the URL probed.
    pub sources: Vec<String>,
    /// Every judged exchange, in order.
    pub traces: Vec<Trace>,
    /// Entries that were not MCP exchanges, with their source.
    pub skipped: Vec<(String, Skipped)>,
    /// The exchanges grouped into logical calls (issue 14's model), with their source.
    pub calls: Vec<(String, Call)>,
}

/// Escapes text for HTML and XML (element content and double-quoted attributes).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // XML 1.0 forbids most control characters even escaped: show them as U+FFFD.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A short label for an exchange: `tools/call get_weather`, or `(response)`.
pub fn label(v: &mcp_verdict::Verdict) -> String {
    let method = v.method.as_deref().unwrap_or("(response)");
    match &v.tool {
        Some(tool) => format!("{method} {tool}"),
        None => method.to_owned(),
    }
}

/// Writes `text` to `path`, or says why not on standard error. Returns whether it failed.
pub fn write_file(path: &std::path::Path, text: &str) -> bool {
    match std::fs::write(path, text) {
        Ok(()) => false,
        Err(e) => {
            eprintln!("mcp-verdict: {}: {e}", path.display());
            true
        }
    }
}

/// A trace as an OTLP exchange: span events for the head and every timed message.
#[cfg(feature = "otel")]
pub fn otel_exchange<'a>(t: &'a Trace, url: &str) -> otel::Exchange<'a> {
    let ms = |m: f64| std::time::Duration::from_secs_f64(m.max(0.0) / 1000.0);
    let mut events = Vec::new();
    if let Some(h) = t.head_ms {
        events.push(otel::Event {
            at: ms(h),
            name: "http.response.head",
            method: None,
        });
    }
    for p in &t.points {
        if let Some(at) = p.at_ms {
            events.push(otel::Event {
                at: ms(at),
                name: p.kind.event_name(),
                method: p.method.clone(),
            });
        }
    }
    otel::Exchange {
        verdict: &t.verdict,
        start: t.started.unwrap_or_else(std::time::SystemTime::now),
        duration: ms(t.end_ms.unwrap_or(0.0)),
        events,
        session_id: t.session_id.as_deref(),
        server: otel::server_of(url),
    }
}
