//! `proxy --html FILE` and `proxy --otlp URL`: one sink that exports a span per exchange once
//! grouped and a span per call once closed ([`LiveCalls`](super::otel_live::LiveCalls)), and
//! keeps what the page needs, written when the proxy stops.
//!
//! A proxy runs for days, so memory is bounded: the counts cover every exchange, while only the
//! last [`KEEP`] judged exchanges (each with at most `--max-timeline-messages` timed messages), the last
//! [`KEEP`] logical calls and the last [`KEEP`] requests that were not judged are kept for the
//! tables and the timelines.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mcp_verdict::proxy::{CallSink, Config, ExchangeRecord, Sink};
use mcp_verdict::replay::Skipped;
use mcp_verdict::{Call, Redaction, Verdict};

use super::html::{self, Summary};
use super::trace::Point;
use super::{Decision, PointKind, Run, Trace};

/// Exchanges kept for the page (the most recent), and requests kept that were not judged.
pub const KEEP: usize = html::MAX_TIMELINES;

/// What the proxy keeps for the page.
#[derive(Default)]
struct Kept {
    summary: Summary,
    traces: VecDeque<Trace>,
    skipped: VecDeque<(String, Skipped)>,
    calls: VecDeque<(String, Call)>,
}

/// The proxy's report outputs.
pub struct ProxyReports {
    html: Option<PathBuf>,
    /// The upstream, as shown (no credentials).
    source: String,
    /// What is shown: session ids become stand-ins, as in recordings, unless `--no-redact`.
    redaction: Redaction,
    #[cfg(feature = "otel")]
    otlp: Option<super::otel_live::LiveCalls>,
    kept: Mutex<Kept>,
}

impl ProxyReports {
    /// The outputs asked for, or `None` when neither `--html` nor `--otlp` was given. Fails
    /// before the proxy serves when the page cannot be written or the OTLP URL is unusable.
    pub fn new(
        html: Option<PathBuf>,
        otlp: Option<&str>,
        upstream: &str,
        redaction: Redaction,
    ) -> Result<Option<ProxyReports>, String> {
        if html.is_none() && otlp.is_none() {
            return Ok(None);
        }
        if let Some(path) = &html {
            std::fs::File::create(path).map_err(|e| format!("--html {}: {e}", path.display()))?;
        }
        let source = redaction.url(upstream).into_owned();
        #[cfg(feature = "otel")]
        let otlp = otlp
            .map(super::otel::Otlp::new)
            .transpose()?
            .map(|o| super::otel_live::LiveCalls::new(o, source.clone()));
        #[cfg(not(feature = "otel"))]
        let _ = otlp;
        Ok(Some(ProxyReports {
            html,
            source,
            redaction,
            #[cfg(feature = "otel")]
            otlp,
            kept: Mutex::new(Kept::default()),
        }))
    }

    /// The outputs `proxy --html` / `--otlp` ask for; turns on the message times they draw.
    pub fn for_args(
        args: &crate::args::ProxyArgs,
        config: &mut Config,
    ) -> Result<Option<Arc<ProxyReports>>, String> {
        #[cfg(feature = "otel")]
        let otlp = args.otlp.as_deref();
        #[cfg(not(feature = "otel"))]
        let otlp = None;
        let reports = ProxyReports::new(
            args.html.clone(),
            otlp,
            &config.upstream,
            config.redaction(),
        )?;
        if reports.is_some() {
            config.trace_messages = args.max_timeline_messages;
        }
        Ok(reports.map(Arc::new))
    }

    /// The `Mcp-Session-Id` the request carried (a stand-in when redacting).
    fn session_of(&self, record: &ExchangeRecord<'_>) -> Option<String> {
        let id = record.request?.headers.get("mcp-session-id")?;
        Some(
            self.redaction
                .header_value("mcp-session-id", id)
                .into_owned(),
        )
    }

    /// One judged exchange as a live trace: the proxy's timings and its messages' arrivals.
    fn trace_of(&self, record: &ExchangeRecord<'_>, verdict: &Verdict) -> Trace {
        let mut trace = Trace::bare(&self.source, verdict.clone());
        trace.points = record
            .messages
            .iter()
            .map(|a| Point {
                at_ms: None,
                offset: a.offset,
                kind: PointKind::of(a.kind, a.terminal),
                method: a.method.clone(),
            })
            .collect();
        trace.messages_dropped = record.messages_dropped;
        let took = record.timings.end.unwrap_or_default();
        trace.started = SystemTime::now().checked_sub(took);
        trace.session_id = self.session_of(record);
        let arrivals: Vec<Duration> = record.messages.iter().map(|a| a.at).collect();
        trace.live(&record.timings, &arrivals)
    }

    /// The proxy stopped: flushes the telemetry and writes the page. Returns whether something
    /// failed (said on standard error).
    pub fn finish(&self) -> bool {
        let mut failed = false;
        #[cfg(feature = "otel")]
        if let Some(otlp) = &self.otlp
            && let Err(e) = otlp.shutdown()
        {
            eprintln!("mcp-verdict: {e}");
            failed = true;
        }
        if let Some(path) = &self.html {
            failed |= super::write_file(path, &self.page());
        }
        failed
    }

    fn page(&self) -> String {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let s = &kept.summary;
        let run = Run {
            command: "proxy",
            sources: vec![self.source.clone()],
            traces: kept.traces.iter().cloned().collect(),
            skipped: kept.skipped.iter().cloned().collect(),
            calls: kept.calls.iter().cloned().collect(),
        };
        let reason = match s.incomplete {
            0 => "the proxy stopped; every exchange it judged was complete".to_owned(),
            n => format!(
                "the proxy stopped; {n} of {} exchanges were not complete (the proxy's exit code does not gate on them)",
                s.total
            ),
        };
        let decision = Decision { code: 0, reason };
        let note = if s.total as usize > run.traces.len() || s.skipped as usize > run.skipped.len()
        {
            format!(
                "The counts cover all {} judged exchanges; the table and the timelines show the last {} (a running proxy keeps at most {KEEP}).",
                s.total,
                run.traces.len()
            )
        } else {
            String::new()
        };
        html::exchanges_page_with(&run, s, &decision, &note)
    }
}

impl Sink for ProxyReports {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        let Some(verdict) = record.verdict else {
            let skipped = Skipped {
                index: record.index,
                reason: format!(
                    "{} {}",
                    record.http_method,
                    record.note.unwrap_or("not judged")
                ),
            };
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.summary.skipped += 1;
            push_bounded(&mut kept.skipped, (self.source.clone(), skipped));
            return;
        };
        let trace = self.trace_of(record, verdict);
        // The exporter takes the trace; the page a copy when it wants one too.
        #[cfg(feature = "otel")]
        let trace = match &self.otlp {
            Some(live) => {
                // The call grouping takes exactly the judged exchanges with a request.
                let grouped = record.request.is_some();
                let page = self.html.is_some().then(|| trace.clone());
                live.exchange(record.index, trace, grouped);
                page
            }
            None => Some(trace),
        };
        #[cfg(not(feature = "otel"))]
        let trace = Some(trace);
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.summary.add(verdict);
        if self.html.is_some()
            && let Some(trace) = trace
        {
            push_bounded(&mut kept.traces, trace);
        }
    }
}

impl CallSink for ProxyReports {
    fn call(&self, call: &Call) {
        #[cfg(feature = "otel")]
        if let Some(live) = &self.otlp {
            live.call(call);
        }
        if self.html.is_none() {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        push_bounded(&mut kept.calls, (self.source.clone(), call.clone()));
    }

    #[cfg(feature = "otel")]
    fn joined(&self, index: u64, call: u64) {
        if let Some(live) = &self.otlp {
            live.joined(index, call);
        }
    }
}

fn push_bounded<T>(list: &mut VecDeque<T>, item: T) {
    if list.len() == KEEP {
        list.pop_front();
    }
    list.push_back(item);
}
