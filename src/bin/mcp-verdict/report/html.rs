//! `--html FILE`: one self-contained page (inline CSS, inline SVG, a few lines of inline JS, no
//! network). Everything that matters is plain HTML and SVG drawn here, so the page reads the same
//! without JavaScript; the script only sorts the exchange table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcp_verdict::soak::{Latency, Report};
use mcp_verdict::{End, Layer, Outcome, Verdict};

use super::{Clock, Decision, PointKind, Run, Trace, escape as esc, label};

/// Timelines drawn at most (the table lists every exchange); keeps the page small.
pub const MAX_TIMELINES: usize = 500;

const STYLE: &str = r#"
:root{--ok:#1e7b34;--bad:#b3261e;--warn:#8a5a00;--mute:#667;--line:#d6d8de;--bg:#fafbfc}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1b1d22;background:#fff}
header{padding:18px 28px;background:#16202e;color:#fff}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c6cfdc}
main{padding:8px 28px 40px;max-width:1200px}h2{font-size:17px;margin:26px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.decision{font-size:16px;padding:10px 14px;border-radius:6px;margin:14px 0;border:1px solid}
.decision.pass{background:#e9f6ec;border-color:#9fd3ac;color:var(--ok)}.decision.fail{background:#fdecea;border-color:#f1aaa4;color:var(--bad)}.decision.warn{background:#fff5e0;border-color:#e9c46a;color:var(--warn)}
.stats{display:flex;gap:14px;flex-wrap:wrap;margin:0;padding:0}.stats div{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:120px}
.stats dt{color:var(--mute);font-size:12px}.stats dd{margin:0;font-size:22px;font-weight:600}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--bg);position:sticky;top:0;white-space:nowrap}.wide{overflow-x:auto}#exchanges td,#calls td{white-space:nowrap}th.sort{cursor:pointer}th.sort:after{content:" \2195";color:#aab;font-size:10px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 6px;border-radius:4px;font-size:12px;font-weight:600}.badge.ok{background:#e3f4e7;color:var(--ok)}.badge.bad{background:#fbe3e1;color:var(--bad)}
.layer-transport{color:#7b3fa0}.layer-stream{color:#b35c00}.layer-protocol{color:#0b6e8a}.layer-interaction{color:#5b6b00}.layer-application{color:#334}
.trace{border:1px solid var(--line);border-radius:6px;padding:8px 14px;margin:12px 0}.trace h3{margin:4px 0;font-size:14px}
.trace ul{margin:4px 0;padding-left:18px}.trace .why{color:var(--mute)}.viol{color:var(--warn)}.must{font-weight:600}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .axis{stroke:#99a;stroke-width:1}svg .lane{stroke:#c8ccd4;stroke-width:6;stroke-linecap:round}
svg .body{stroke:#7aa7d9;stroke-width:6}svg .notification{fill:#3b7dd8}svg .server-request{fill:#9b59b6}svg .terminal{fill:var(--ok)}svg .other-response{fill:#999}
svg .pos{fill-opacity:.35;stroke-width:1.5}svg .pos.notification{stroke:#3b7dd8}svg .pos.server-request{stroke:#9b59b6}svg .pos.terminal{stroke:var(--ok)}svg .pos.other-response{stroke:#999}
svg .head{stroke:#16202e;stroke-width:2}svg .end-ok{stroke:var(--ok);stroke-width:2}svg .end-bad{stroke:var(--bad);stroke-width:2}svg .missing{stroke:var(--bad);stroke-dasharray:3 3;stroke-width:2;fill:none}
svg .grid{stroke:#eceef2}svg .s0{stroke:#3b7dd8;fill:none;stroke-width:2}svg .s1{stroke:#9b59b6;fill:none;stroke-width:2}svg .s2{stroke:#1e7b34;fill:none;stroke-width:2}
svg .bar-ok{fill:#8fcf9d}svg .bar-bad{fill:#e57368}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:-1px}
.note{color:var(--mute);font-size:12px}
"#;

/// Sorts the exchange table on a header click; marks the page so a test can see the script ran.
const SCRIPT: &str = r#"
(function(){
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('th').forEach(function(th,col){
      th.classList.add('sort');
      th.addEventListener('click',function(){
        var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
        var num=th.classList.contains('num'),dir=th.dataset.dir==='asc'?-1:1;
        th.dataset.dir=dir===1?'asc':'desc';
        rows.sort(function(a,b){
          var x=a.cells[col].dataset.v||a.cells[col].textContent,y=b.cells[col].dataset.v||b.cells[col].textContent;
          if(num){x=parseFloat(x);y=parseFloat(y);if(isNaN(x))x=-1;if(isNaN(y))y=-1;return (x-y)*dir;}
          return x.localeCompare(y)*dir;
        });
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  document.documentElement.setAttribute('data-js','ok');
})();
"#;

fn page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<title>{t}</title><style>{STYLE}</style></head>\n<body><header><h1>{t}</h1><p>{s}</p></header><main>\n{body}</main>\
<script>{SCRIPT}</script></body></html>\n",
        t = esc(title),
        s = esc(subtitle),
    )
}

/// The exit decision; amber when it passes although some calls were not complete.
fn decision_html(d: &Decision, incomplete: u64) -> String {
    let class = match (d.code, incomplete) {
        (0, 0) => "pass",
        (0, _) => "warn",
        _ => "fail",
    };
    format!(
        "<p class=\"decision {class}\" id=\"decision\" data-exit=\"{}\">Exit {}: {}</p>\n",
        d.code,
        d.code,
        esc(&d.reason)
    )
}

fn stat(id: &str, name: &str, value: impl std::fmt::Display) -> String {
    format!("<div><dt>{name}</dt><dd id=\"{id}\">{value}</dd></div>")
}

/// Outcomes grouped by layer, in judging order: plain HTML, one row per outcome seen.
fn outcomes_table(counts: &BTreeMap<Outcome, u64>) -> String {
    let mut s = String::from(
        "<table id=\"outcomes\"><thead><tr><th>layer</th><th>outcome</th><th>complete</th><th class=\"num\">count</th></tr></thead><tbody>\n",
    );
    for layer in [
        Layer::Transport,
        Layer::Stream,
        Layer::Protocol,
        Layer::Interaction,
        Layer::Application,
    ] {
        for o in Outcome::ALL.iter().filter(|o| o.layer() == layer) {
            let Some(n) = counts.get(o) else { continue };
            let badge = if o.is_complete() {
                "<span class=\"badge ok\">complete</span>"
            } else {
                "<span class=\"badge bad\">incomplete</span>"
            };
            let _ = writeln!(
                s,
                "<tr data-outcome=\"{o}\"><td class=\"layer-{l}\">{l}</td><td>{o}</td><td>{badge}</td><td class=\"num count\">{n}</td></tr>",
                l = layer.as_str()
            );
        }
    }
    s.push_str("</tbody></table>\n");
    s
}

fn badge(v: &Verdict) -> String {
    let class = if v.complete { "ok" } else { "bad" };
    format!("<span class=\"badge {class}\">{}</span>", v.outcome)
}

/// How the body ended, as the verdict's JSON names it.
pub fn end_word(v: &Verdict) -> &'static str {
    match v.end {
        End::Eof => "eof",
        End::Reset => "reset",
        End::Open => "open",
        End::Timeout => "timeout",
        End::Cancelled => "cancelled",
        End::NotCaptured => "not_captured",
    }
}

fn fmt_ms(ms: Option<f64>) -> String {
    ms.map(|m| format!("{m:.1}")).unwrap_or_else(|| "-".into())
}

fn retry_text(v: &Verdict) -> String {
    match v.retry.after_ms {
        Some(ms) => format!("{} after {ms} ms", v.retry.advice.as_str()),
        None => v.retry.advice.as_str().to_owned(),
    }
}

/// What the summary counts: every judged exchange, even when only some are kept (the proxy).
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Exchanges judged, by outcome.
    pub counts: BTreeMap<Outcome, u64>,
    /// Exchanges judged.
    pub total: u64,
    /// Of which not complete.
    pub incomplete: u64,
    /// Entries that were not MCP exchanges.
    pub skipped: u64,
}

impl Summary {
    /// Counts one judged exchange.
    pub fn add(&mut self, v: &Verdict) {
        *self.counts.entry(v.outcome).or_insert(0) += 1;
        self.total += 1;
        self.incomplete += u64::from(!v.complete);
    }

    /// The summary of a run that kept everything.
    pub fn of(run: &Run) -> Summary {
        let mut s = Summary {
            skipped: run.skipped.len() as u64,
            ..Summary::default()
        };
        for t in &run.traces {
            s.add(&t.verdict);
        }
        s
    }
}

/// The page for `replay` and `probe`.
pub fn exchanges_page(run: &Run, decision: &Decision) -> String {
    exchanges_page_with(run, &Summary::of(run), decision, "")
}

/// The page for a run whose `summary` counts more than `run` keeps; `kept` says what was kept.
pub fn exchanges_page_with(
    run: &Run,
    summary: &Summary,
    decision: &Decision,
    kept: &str,
) -> String {
    let mut b = summary_section(summary, decision);
    b.push_str(&calls_table(run));
    b.push_str("<h2>Exchanges</h2>\n");
    if !kept.is_empty() {
        let _ = writeln!(b, "<p class=\"note\" id=\"kept\">{}</p>", esc(kept));
    }
    b.push_str(
        "<p class=\"note\">Click a column to sort. Times in ms from the request being sent.</p>\n",
    );
    b.push_str(&exchange_table(run));
    b.push_str(&skipped_list(run));
    b.push_str(&timelines(run));
    let title = format!("mcp-verdict {}", run.command);
    page(&title, &run.sources.join(", "), &b)
}

fn summary_section(s: &Summary, decision: &Decision) -> String {
    let mut b = String::from("<h2>Summary</h2>\n");
    b.push_str(&decision_html(decision, s.incomplete));
    b.push_str("<dl class=\"stats\">");
    b.push_str(&stat("n-total", "exchanges", s.total));
    b.push_str(&stat("n-complete", "complete", s.total - s.incomplete));
    b.push_str(&stat("n-incomplete", "incomplete", s.incomplete));
    b.push_str(&stat("n-skipped", "skipped (not MCP)", s.skipped));
    b.push_str("</dl>\n<h3>Outcomes by layer</h3>\n");
    b.push_str(&outcomes_table(&s.counts));
    b
}

/// The sortable table, one row per kept exchange; the first [`MAX_TIMELINES`] link to their
/// timelines.
fn exchange_table(run: &Run) -> String {
    let mut b = String::from(
        "<div class=\"wide\"><table id=\"exchanges\" class=\"sortable\"><thead><tr><th class=\"num\">#</th><th>source</th><th>exchange</th><th class=\"num\">status</th><th>outcome</th><th>layer</th><th>complete</th><th class=\"num\">events</th><th>end</th><th class=\"num\">head ms</th><th class=\"num\">total ms</th><th>retry</th><th class=\"num\">rules broken</th></tr></thead><tbody>\n",
    );
    for (i, t) in run.traces.iter().enumerate() {
        b.push_str(&exchange_row(i, t));
    }
    b.push_str("</tbody></table></div>\n");
    b
}

fn exchange_row(i: usize, t: &Trace) -> String {
    let v = &t.verdict;
    let link = if i < MAX_TIMELINES {
        format!("<a href=\"#x-{i}\">{}</a>", esc(&label(v)))
    } else {
        esc(&label(v))
    };
    let or_dash = |n: Option<String>| n.unwrap_or_else(|| "-".into());
    format!(
        "<tr data-outcome=\"{o}\" data-complete=\"{c}\"><td class=\"num\">{idx}</td><td>{src}</td><td>{link}</td><td class=\"num\">{st}</td><td data-v=\"{o}\">{badge}</td><td class=\"layer-{l}\">{l}</td><td>{cw}</td><td class=\"num\">{ev}</td><td>{end}</td><td class=\"num\">{head}</td><td class=\"num\">{tot}</td><td>{retry}</td><td class=\"num\">{nv}</td></tr>\n",
        o = v.outcome,
        c = v.complete,
        idx = v.index,
        src = esc(&short_source(&t.source)),
        st = or_dash(v.status.map(|s| s.to_string())),
        badge = badge(v),
        l = v.layer.as_str(),
        cw = if v.complete { "yes" } else { "no" },
        ev = or_dash(v.event_count.map(|e| e.to_string())),
        end = end_word(v),
        head = fmt_ms(t.head_ms),
        tot = fmt_ms(t.end_ms),
        retry = esc(&retry_text(v)),
        nv = v.violations.len(),
    )
}

/// The logical calls, one row each with the seed's per-call fields; its exchanges link to their
/// timelines.
fn calls_table(run: &Run) -> String {
    if run.calls.is_empty() {
        return String::new();
    }
    // Where each (source, entry) is drawn, for the links.
    let drawn: std::collections::HashMap<(&str, u64), usize> = run
        .traces
        .iter()
        .enumerate()
        .take(MAX_TIMELINES)
        .map(|(i, t)| ((t.source.as_str(), t.verdict.index), i))
        .rev()
        .collect();
    let mut b = String::from(
        "<h2>Logical calls</h2>\n<p class=\"note\">Exchanges grouped into calls (retries, resumed streams, answers to server requests, task polls), a guess from traffic. The outcome is the final exchange's; for a call that became a task, the task's end.</p>\n",
    );
    b.push_str("<div class=\"wide\"><table id=\"calls\" class=\"sortable\"><thead><tr><th class=\"num\">call</th><th>source</th><th>client</th><th>version</th><th>method / tool</th><th class=\"num\">POSTs</th><th>HTTP</th><th>ids</th><th class=\"num\">error</th><th>result type</th><th>outcome</th><th>complete</th><th>retry origin</th><th>double execution risk</th><th>call rules broken</th><th>exchanges</th></tr></thead><tbody>\n");
    for (source, c) in &run.calls {
        b.push_str(&call_row(source, c, &drawn));
    }
    b.push_str("</tbody></table></div>\n");
    b
}

/// One call: its fields, and its exchanges linked to their timelines where drawn.
fn call_row(
    source: &str,
    c: &mcp_verdict::Call,
    drawn: &std::collections::HashMap<(&str, u64), usize>,
) -> String {
    let label = match (&c.method, &c.tool) {
        (Some(m), Some(t)) => format!("{m} {t}"),
        (Some(m), None) => m.to_string(),
        (None, _) => "(response)".into(),
    };
    let list = |items: Vec<String>| items.join(", ");
    let statuses = list(
        c.http_statuses
            .iter()
            .map(|s| s.map_or("-".into(), |s| s.to_string()))
            .collect(),
    );
    let ids = list(c.ids.iter().map(|i| i.to_string()).collect());
    let rules = list(
        c.violations
            .iter()
            .map(|v| v.rule.id().to_owned())
            .collect(),
    );
    let exchanges = list(
        c.entries
            .iter()
            .map(|e| match drawn.get(&(source, *e)) {
                Some(i) => format!("<a href=\"#x-{i}\">#{e}</a>"),
                None => format!("#{e}"),
            })
            .collect(),
    );
    let class = if c.complete { "ok" } else { "bad" };
    format!(
        "<tr data-outcome=\"{o}\" data-complete=\"{cm}\"><td class=\"num\">{n}</td><td>{src}</td><td>{client}</td><td>{ver}</td><td>{label}</td><td class=\"num\">{posts}</td><td>{statuses}</td><td>{ids}</td><td class=\"num\">{err}</td><td>{rt}</td><td data-v=\"{o}\"><span class=\"badge {class}\">{o}</span></td><td>{cw}</td><td>{origin}</td><td>{risk}</td><td>{rules}</td><td>{exchanges}</td></tr>\n",
        o = c.outcome,
        cm = c.complete,
        n = c.call,
        src = esc(&short_source(source)),
        client = esc(c.client.as_deref().unwrap_or("-")),
        ver = c.protocol_version.map_or("-", |v| v.as_str()),
        label = esc(&label),
        posts = c.post_count,
        statuses = esc(&statuses),
        ids = esc(&ids),
        err = c.error_code.map_or("-".into(), |e| e.to_string()),
        rt = esc(c.result_type.as_deref().unwrap_or("-")),
        cw = if c.complete { "yes" } else { "no" },
        origin = c.retry_origin.map_or("-", |r| r.as_str()),
        risk = if c.double_execution_risk { "yes" } else { "no" },
        rules = esc(&rules),
    )
}

fn skipped_list(run: &Run) -> String {
    if run.skipped.is_empty() {
        return String::new();
    }
    let mut b = String::from("<h3>Skipped entries</h3><ul>\n");
    for (src, s) in &run.skipped {
        let _ = writeln!(
            b,
            "<li>{} #{}: {}</li>",
            esc(&short_source(src)),
            s.index,
            esc(&s.reason)
        );
    }
    b.push_str("</ul>\n");
    b
}

fn timelines(run: &Run) -> String {
    let mut b = String::from("<h2>Timelines</h2>\n");
    b.push_str(LEGEND);
    let total = run.traces.len();
    if total > MAX_TIMELINES {
        let _ = writeln!(
            b,
            "<p class=\"note\">The first {MAX_TIMELINES} of {total} exchanges are drawn; the table lists all.</p>"
        );
    }
    for (i, t) in run.traces.iter().take(MAX_TIMELINES).enumerate() {
        b.push_str(&trace_section(i, t));
    }
    b
}

const LEGEND: &str = "<p class=\"legend\"><span><i style=\"background:#3b7dd8\"></i>notification</span>\
<span><i style=\"background:#9b59b6\"></i>server request</span><span><i style=\"background:#1e7b34\"></i>terminal response</span>\
<span><i style=\"background:#999\"></i>other response</span><span><i style=\"border:2px dashed #b3261e\"></i>where the answer was expected</span></p>\n\
<p class=\"note\">Live runs (probe, proxy) draw one lane in milliseconds, every message at its measured arrival time. \
HAR captures record send / wait / receive per entry but no per-event times: the top lane is time (sent, the head at send + wait, the end), \
and the lane below is the body by bytes, every message at the byte where its SSE event starts. Without timings, the axis is the body's bytes.</p>\n";

/// The file name of a path, or the whole source (a URL).
fn short_source(source: &str) -> String {
    if source.contains("://") {
        return source.to_owned();
    }
    std::path::Path::new(source)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_owned())
}

fn trace_section(i: usize, t: &Trace) -> String {
    let v = &t.verdict;
    let mut s = format!(
        "<section class=\"trace\" id=\"x-{i}\" data-outcome=\"{}\"><h3>#{} {} &middot; {} <span class=\"layer-{l}\">{l}</span></h3>\n",
        v.outcome,
        v.index,
        esc(&label(v)),
        badge(v),
        l = v.layer.as_str()
    );
    s.push_str(&timeline_svg(t));
    s.push_str("<ul>");
    let _ = write!(
        s,
        "<li>retry advice: <b>{}</b> <span class=\"why\">({})</span></li>",
        esc(&retry_text(v)),
        esc(&v.retry.reason)
    );
    let _ = write!(s, "<li>body ended: <b>{}</b>", end_word(v));
    if let Some(u) = &v.unterminated {
        let _ = write!(
            s,
            "; an event was cut off after {} bytes{}",
            u.bytes,
            if u.looked_final {
                ", and it was the answer"
            } else {
                ""
            }
        );
    }
    s.push_str("</li>");
    if let Some(code) = v.error_code {
        let _ = write!(
            s,
            "<li>JSON-RPC error {code}: {}</li>",
            esc(v.error_message.as_deref().unwrap_or(""))
        );
    }
    if let Some(limit) = &v.limit {
        let _ = write!(s, "<li>limit hit: {}</li>", esc(&limit.to_string()));
    }
    if let Some(session) = &t.session_id {
        let _ = write!(s, "<li>session: <code>{}</code></li>", esc(session));
    }
    if t.messages_dropped > 0 {
        let _ = write!(
            s,
            "<li>messages: the first {} of {} are drawn (<code>--max-timeline-messages</code>)</li>",
            t.points.len(),
            t.points.len() as u64 + t.messages_dropped
        );
    }
    for viol in &v.violations {
        let level = match viol.level {
            mcp_verdict::Level::Must => "<span class=\"must\">MUST</span>",
            mcp_verdict::Level::Should => "SHOULD",
        };
        let _ = write!(
            s,
            "<li class=\"viol\">{level} <code>{}</code>: {}</li>",
            viol.rule.id(),
            esc(&viol.detail)
        );
    }
    s.push_str("</ul>\n");
    if !t.points.is_empty() {
        s.push_str("<ol class=\"note\" start=\"0\">");
        for p in &t.points {
            let at = p.at_ms.map(|a| format!("+{a:.1} ms, ")).unwrap_or_default();
            let _ = write!(
                s,
                "<li>{at}byte {}: {} {}</li>",
                p.offset,
                p.kind.as_str(),
                esc(p.method.as_deref().unwrap_or(""))
            );
        }
        s.push_str("</ol>\n");
    }
    s.push_str("</section>\n");
    s
}

const W: f64 = 760.0;
const X0: f64 = 60.0;
const X1: f64 = 640.0;

/// Where a trace is drawn: its time scale, its byte scale and which lane carries the messages.
struct Axes<'a> {
    t: &'a Trace,
    /// The time axis' length in ms (the latest thing known, at least 1 µs).
    span: f64,
    /// Whether any time is known.
    timed: bool,
    /// Live traces draw messages on the time lane; others on a body lane by bytes.
    live: bool,
    /// A second lane for the body by bytes (HAR and untimed traces with a response).
    body_lane: bool,
    /// Where the time lane ends.
    end_a: f64,
}

/// The time lane's and the body lane's heights.
const YA: f64 = 34.0;
const YB: f64 = 96.0;

impl<'a> Axes<'a> {
    fn of(t: &'a Trace) -> Self {
        let last_point = t.points.iter().filter_map(|p| p.at_ms).fold(0.0, f64::max);
        let span = [
            t.end_ms.unwrap_or(0.0),
            t.head_ms.unwrap_or(0.0),
            last_point,
        ]
        .into_iter()
        .fold(0.0, f64::max)
        .max(0.001);
        let live = t.clock == Clock::Live;
        let mut axes = Axes {
            t,
            span,
            timed: t.end_ms.is_some() || t.head_ms.is_some(),
            live,
            body_lane: !live && t.verdict.status.is_some(),
            end_a: X1,
        };
        if axes.timed {
            axes.end_a = axes.tx(t.end_ms.unwrap_or(span));
        }
        axes
    }

    /// x of a time in ms.
    fn tx(&self, ms: f64) -> f64 {
        X0 + (X1 - X0) * (ms / self.span).clamp(0.0, 1.0)
    }

    /// x of a byte offset in the body.
    fn bx(&self, offset: u64) -> f64 {
        let bytes = (self.t.body_bytes as f64).max(1.0);
        X0 + (X1 - X0) * (offset as f64 / bytes).clamp(0.0, 1.0)
    }

    /// The lane that carries messages, and where the body ends on it.
    fn message_lane(&self) -> (f64, f64) {
        if self.body_lane {
            (YB, X1)
        } else {
            (YA, self.end_a)
        }
    }
}

/// The timeline. Live traces: one lane on the time axis, messages at their arrival times. HAR
/// and untimed traces: a time lane (sent, head, end) and below it the body zoomed out to its
/// bytes, messages at their byte positions, since captures record no per-event times.
fn timeline_svg(t: &Trace) -> String {
    let axes = Axes::of(t);
    let missing = missing_answer(&axes);
    let height = match (axes.body_lane, missing.is_empty()) {
        (true, _) => 140.0,
        (false, true) => 80.0,
        (false, false) => 96.0,
    };
    let mut s = format!(
        "<svg class=\"timeline\" viewBox=\"0 0 {W} {height}\" width=\"{W}\" height=\"{height}\" role=\"img\" aria-label=\"timeline of exchange {}\">",
        t.verdict.index
    );
    s.push_str(&time_lane(&axes));
    if axes.body_lane {
        s.push_str(&body_lane(&axes));
    }
    s.push_str(&message_points(&axes));
    s.push_str(&body_end(&axes));
    s.push_str(&missing);
    s.push_str("</svg>\n");
    s
}

/// Lane A: sent, the response head, the end, and the time scale's words.
fn time_lane(a: &Axes<'_>) -> String {
    let (t, end_a) = (a.t, a.end_a);
    let mut s = format!(
        "<line class=\"lane\" x1=\"{X0}\" y1=\"{YA}\" x2=\"{end_a:.1}\" y2=\"{YA}\"/>\
<path d=\"M{X0} {} l8 6 l-8 6z\" fill=\"#16202e\"/><text x=\"6\" y=\"{}\">sent</text>",
        YA - 6.0,
        YA + 4.0
    );
    if let Some(h) = t.head_ms {
        let hx = a.tx(h);
        let _ = write!(
            s,
            "<line class=\"body\" x1=\"{hx:.1}\" y1=\"{YA}\" x2=\"{end_a:.1}\" y2=\"{YA}\"/><line class=\"head\" x1=\"{hx:.1}\" y1=\"{}\" x2=\"{hx:.1}\" y2=\"{}\"/><text x=\"{hx:.1}\" y=\"{}\" text-anchor=\"middle\">head {} at {h:.1} ms</text>",
            YA - 14.0,
            YA + 14.0,
            YA - 18.0,
            t.verdict.status.map(|s| s.to_string()).unwrap_or_default()
        );
    }
    let unit = match t.clock {
        Clock::Live => "measured",
        Clock::Har if t.head_ms.is_some() => "HAR timings",
        Clock::Har => "total time only",
        Clock::Untimed => "no times recorded",
    };
    if a.timed {
        let _ = write!(
            s,
            "<text x=\"{X0}\" y=\"{}\">0 ms</text><text x=\"{end_a:.1}\" y=\"{}\" text-anchor=\"middle\">{:.1} ms ({unit})</text>",
            YA + 24.0,
            YA + 24.0,
            t.end_ms.unwrap_or(a.span)
        );
    } else {
        let _ = write!(s, "<text x=\"{X0}\" y=\"{}\">{unit}</text>", YA + 24.0);
    }
    s
}

/// Lane B: the body by bytes, joined to the time lane's head and end by dashed "zoom" lines.
fn body_lane(a: &Axes<'_>) -> String {
    format!(
        "<line class=\"grid\" stroke-dasharray=\"2 3\" x1=\"{:.1}\" y1=\"{}\" x2=\"{X0}\" y2=\"{}\"/><line class=\"grid\" stroke-dasharray=\"2 3\" x1=\"{end_a:.1}\" y1=\"{}\" x2=\"{X1}\" y2=\"{}\"/>\
<line class=\"body\" x1=\"{X0}\" y1=\"{YB}\" x2=\"{X1}\" y2=\"{YB}\"/><text x=\"6\" y=\"{}\">body</text>\
<text x=\"{X0}\" y=\"{}\">byte 0</text><text x=\"{X1}\" y=\"{}\" text-anchor=\"middle\">{} bytes</text>",
        a.t.head_ms.map(|h| a.tx(h)).unwrap_or(X0),
        YA + 4.0,
        YB - 8.0,
        YA + 4.0,
        YB - 8.0,
        YB + 4.0,
        YB + 24.0,
        YB + 24.0,
        a.t.body_bytes,
        end_a = a.end_a,
    )
}

/// Every message: at its arrival time (live) or its byte offset.
fn message_points(a: &Axes<'_>) -> String {
    let (y, _) = a.message_lane();
    let mut s = String::new();
    for p in &a.t.points {
        let px = match (a.live, p.at_ms) {
            (true, Some(at)) => a.tx(at),
            _ => a.bx(p.offset),
        };
        let tip = format!(
            "{} {} at byte {}",
            p.kind.as_str(),
            p.method.as_deref().unwrap_or(""),
            p.offset
        );
        let _ = write!(
            s,
            "<circle class=\"{}\" cx=\"{px:.1}\" cy=\"{y}\" r=\"5\"><title>{}</title></circle>",
            p.kind.as_str(),
            esc(&tip)
        );
    }
    s
}

/// How the body ended, red when the reply is not complete.
fn body_end(a: &Axes<'_>) -> String {
    let (y, end_x) = a.message_lane();
    let v = &a.t.verdict;
    let end_class = if v.complete { "end-ok" } else { "end-bad" };
    format!(
        "<line class=\"{end_class}\" x1=\"{end_x:.1}\" y1=\"{}\" x2=\"{end_x:.1}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
        y - 12.0,
        y + 12.0,
        end_x + 12.0,
        y + 4.0,
        end_word(v)
    )
}

/// Where the answer was expected, when a stream left it missing (cut off, or never sent). Only
/// a stream can; a transport failure never promised one.
fn missing_answer(a: &Axes<'_>) -> String {
    let (y, end_x) = a.message_lane();
    let (t, v) = (a.t, &a.t.verdict);
    let has_terminal = t.points.iter().any(|p| p.kind == PointKind::Terminal);
    if v.layer != Layer::Stream || has_terminal {
        return String::new();
    }
    let (mx, why) = match &v.unterminated {
        Some(u) if u.looked_final && a.body_lane => (
            a.bx(t.body_bytes.saturating_sub(u.bytes)),
            "the answer began here and was cut off",
        ),
        _ => (end_x, "answer expected by here; none arrived"),
    };
    // On the time lane the head's label is above: this one goes below, under the time scale.
    let ty = if a.body_lane { y - 13.0 } else { y + 38.0 };
    format!(
        "<circle class=\"missing\" cx=\"{mx:.1}\" cy=\"{y}\" r=\"9\"/><text x=\"{:.1}\" y=\"{ty}\" text-anchor=\"end\" fill=\"#b3261e\">{why}</text>",
        mx + 8.0,
    )
}

/// One soak sample: cumulative counts at a moment of the run.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Milliseconds since the load started.
    pub t_ms: u64,
    /// Calls judged so far.
    pub requests: u64,
    /// Of which not complete.
    pub incomplete: u64,
}

fn outcome_counts(report: &Report) -> BTreeMap<Outcome, u64> {
    report
        .outcomes
        .iter()
        .filter_map(|(name, n)| {
            Outcome::ALL
                .iter()
                .find(|o| o.as_str() == name)
                .map(|o| (*o, *n))
        })
        .collect()
}

const QUANTILES: [f64; 10] = [0.0, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1.0];

/// Position on the percentile axis: log10(1 / (1 - q)), so 90 %, 99 %, 99.9 % are evenly spaced.
fn q_axis(q: f64) -> f64 {
    (1.0 / (1.0 - q).max(1e-5)).log10()
}

/// The page for `soak`.
pub fn soak_page(url: &str, report: &Report, samples: &[Sample], decision: &Decision) -> String {
    let mut b = String::new();
    b.push_str("<h2>Summary</h2>\n");
    b.push_str(&decision_html(decision, report.incomplete));
    b.push_str("<dl class=\"stats\">");
    b.push_str(&stat("n-total", "calls", report.requests));
    b.push_str(&stat(
        "n-complete",
        "complete",
        report.requests - report.incomplete,
    ));
    b.push_str(&stat("n-incomplete", "incomplete", report.incomplete));
    b.push_str(&stat(
        "throughput",
        "calls/s",
        format!("{:.1}", report.throughput),
    ));
    b.push_str(&stat(
        "p99",
        "p99 to answer (ms)",
        format!("{:.2}", report.terminal_us.quantile(0.99) as f64 / 1000.0),
    ));
    b.push_str(&stat(
        "elapsed",
        "elapsed (s)",
        format!("{:.1}", report.elapsed_ms as f64 / 1000.0),
    ));
    b.push_str("</dl>\n<h3>Outcomes by layer</h3>\n");
    b.push_str(&outcomes_table(&outcome_counts(report)));
    if !report.violations.is_empty() {
        b.push_str("<h3>Broken rules</h3><table><thead><tr><th>rule</th><th class=\"num\">calls</th></tr></thead><tbody>");
        for (rule, n) in &report.violations {
            let _ = write!(
                b,
                "<tr><td><code>{}</code></td><td class=\"num\">{n}</td></tr>",
                esc(rule)
            );
        }
        b.push_str("</tbody></table>\n");
    }
    b.push_str("<h2>Latency distribution</h2>\n");
    let series: [(&str, &Latency); 3] = [
        ("response head", &report.head_us),
        ("first SSE event", &report.first_event_us),
        ("terminal response", &report.terminal_us),
    ];
    b.push_str(&percentile_svg(&series));
    b.push_str("<table id=\"percentiles\"><thead><tr><th>time to</th>");
    for q in QUANTILES {
        let _ = write!(b, "<th class=\"num\">{}</th>", q_name(q));
    }
    b.push_str("<th class=\"num\">count</th></tr></thead><tbody>");
    for (name, h) in series {
        let _ = write!(b, "<tr><td>{name}</td>");
        for q in QUANTILES {
            let _ = write!(
                b,
                "<td class=\"num\">{:.2}</td>",
                h.quantile(q) as f64 / 1000.0
            );
        }
        let _ = write!(b, "<td class=\"num\">{}</td></tr>", h.count());
    }
    b.push_str("</tbody></table><p class=\"note\">Milliseconds, from HdrHistograms (3 significant digits).</p>\n");
    b.push_str("<h2>Throughput and outcomes over time</h2>\n");
    b.push_str(&over_time_svg(samples));
    page("mcp-verdict soak", url, &b)
}

fn q_name(q: f64) -> String {
    match q {
        0.0 => "min".into(),
        1.0 => "max".into(),
        q => format!("p{}", (q * 10000.0).round() / 100.0),
    }
}

fn percentile_svg(series: &[(&str, &Latency)]) -> String {
    let (w, h, l, r, top, bottom) = (760.0, 260.0, 60.0, 740.0, 16.0, 220.0);
    let max_ms = series
        .iter()
        .map(|(_, s)| s.max() as f64 / 1000.0)
        .fold(0.0, f64::max)
        .max(0.001);
    let x_max = q_axis(0.9999) + 0.6; // room for "max"
    let x = |q: f64| {
        let a = if q >= 1.0 { x_max } else { q_axis(q) };
        l + (r - l) * a / x_max
    };
    let y = |ms: f64| bottom - (bottom - top) * (ms / max_ms);
    let mut s = format!(
        "<svg id=\"hdr\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"latency by percentile\">"
    );
    for q in [0.0, 0.9, 0.99, 0.999, 0.9999, 1.0] {
        let gx = x(q);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{gx:.1}\" y1=\"{top}\" x2=\"{gx:.1}\" y2=\"{bottom}\"/><text x=\"{gx:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            q_name(q)
        );
    }
    for frac in [0.0, 0.5, 1.0] {
        let gy = y(max_ms * frac);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{l}\" y1=\"{gy:.1}\" x2=\"{r}\" y2=\"{gy:.1}\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.1} ms</text>",
            l - 4.0,
            gy + 4.0,
            max_ms * frac
        );
    }
    for (i, (name, hist)) in series.iter().enumerate() {
        if hist.count() == 0 {
            continue;
        }
        // A dense walk of quantiles, so the curve shows the tail's shape.
        let mut pts = Vec::new();
        let mut a = 0.0;
        while a <= q_axis(0.9999) + 1e-9 {
            let q = 1.0 - 10f64.powf(-a);
            pts.push(format!(
                "{:.1},{:.1}",
                x(q),
                y(hist.quantile(q) as f64 / 1000.0)
            ));
            a += 0.05;
        }
        pts.push(format!(
            "{:.1},{:.1}",
            x(1.0),
            y(hist.max() as f64 / 1000.0)
        ));
        let _ = write!(
            s,
            "<polyline class=\"s{i}\" points=\"{}\"/><text x=\"{}\" y=\"{}\" style=\"fill:{}\">{name}</text>",
            pts.join(" "),
            l + 10.0,
            top + 14.0 + 14.0 * i as f64,
            ["#3b7dd8", "#9b59b6", "#1e7b34"][i % 3]
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{r}\" y=\"{}\" text-anchor=\"end\">percentile (log scale of 1/(1-q))</text></svg>",
        h - 4.0
    );
    // Legend colours as text, for readers without SVG styling.
    s.push_str("<p class=\"legend\"><span><i style=\"background:#3b7dd8\"></i>response head</span><span><i style=\"background:#9b59b6\"></i>first SSE event</span><span><i style=\"background:#1e7b34\"></i>terminal response</span></p>\n");
    s
}

fn over_time_svg(samples: &[Sample]) -> String {
    if samples.len() < 2 {
        return "<p class=\"note\">The run was too short for samples over time (one per second).</p>\n".into();
    }
    let (w, h, l, r, top, bottom) = (760.0, 220.0, 60.0, 700.0, 16.0, 180.0);
    // Per interval: its end (s), calls per second, and incomplete calls per second.
    let steps: Vec<(f64, f64, f64, u64, u64)> = samples
        .windows(2)
        .map(|p| {
            let dt = (p[1].t_ms.saturating_sub(p[0].t_ms) as f64 / 1000.0).max(0.001);
            let n = p[1].requests.saturating_sub(p[0].requests);
            let bad = p[1].incomplete.saturating_sub(p[0].incomplete);
            (
                p[1].t_ms as f64 / 1000.0,
                n as f64 / dt,
                bad as f64 / dt,
                n,
                bad,
            )
        })
        .collect();
    let max_rate = steps.iter().map(|s| s.1).fold(0.0, f64::max).max(0.001);
    let t_end = steps.last().map(|s| s.0).unwrap_or(1.0).max(0.001);
    let mut s = format!(
        "<svg id=\"over-time\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"throughput and outcomes over time\">"
    );
    let mut t0 = 0.0;
    for (t, rate, bad_rate, n, bad) in &steps {
        let x0 = l + (r - l) * t0 / t_end;
        let bw = ((r - l) * (t - t0) / t_end - 1.0).max(1.0);
        let hn = (bottom - top) * rate / max_rate;
        let hb = (bottom - top) * bad_rate / max_rate;
        let _ = write!(
            s,
            "<rect class=\"bar-ok\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\"><title>{t0:.1}-{t:.1} s: {n} calls, {bad} incomplete</title></rect>",
            bottom - hn,
            hn - hb
        );
        if *bad > 0 {
            let _ = write!(
                s,
                "<rect class=\"bar-bad\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{hb:.1}\"/>",
                bottom - hb
            );
        }
        t0 = *t;
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{l}\" y1=\"{bottom}\" x2=\"{r}\" y2=\"{bottom}\"/><line class=\"grid\" x1=\"{l}\" y1=\"{top}\" x2=\"{r}\" y2=\"{top}\"/>\
<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{max_rate:.0}/s</text><text x=\"{}\" y=\"{bottom}\" text-anchor=\"end\">0</text><text x=\"{l}\" y=\"{}\">0 s</text><text x=\"{r}\" y=\"{}\" text-anchor=\"end\">{t_end:.1} s</text></svg>",
        l - 4.0,
        top + 4.0,
        l - 4.0,
        bottom + 16.0,
        bottom + 16.0
    );
    s.push_str("<p class=\"legend\"><span><i style=\"background:#8fcf9d\"></i>complete calls per second</span><span><i style=\"background:#e57368\"></i>incomplete calls per second</span> (one bar per sampling interval of about a second)</p>\n");
    s
}
