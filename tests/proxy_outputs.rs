//! The proxy's outputs and its failure mode, with real peers on 127.0.0.1:
//! - fail open: an analysis that fails (a panic injected at each step through the `fuzzing`
//!   hook) changes nothing the client receives, and the proxy says the analysis failed;
//! - the `mcp-verdict proxy` binary: `--metrics-listen` scraped over loopback (counts by outcome,
//!   layer, method and tool equal the `--log` verdicts; histograms consistent), `--calls` equal
//!   to `replay --calls` of its `--record` HAR, `--log` equal to the replay's verdicts.
//!
//! Every test is bounded in time and in requests.
#![cfg(all(feature = "cli", feature = "fuzzing"))]

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_verdict::faults::{FaultServer, demo, scenarios};
use mcp_verdict::har::Entry;
use mcp_verdict::proxy::{AnalysisStep, Config, Metrics, Proxy};
use mcp_verdict::{End, Limits, Verdict};

use support::{ProxyVerdicts, bounded, essence};

/// What a client received: request and response bodies and how each ended.
fn received(entries: &[Entry]) -> Vec<(Vec<u8>, Vec<u8>, End)> {
    entries
        .iter()
        .map(|e| (e.request_body.clone(), e.response_body.clone(), e.end))
        .collect()
}

/// Keeps the test output readable: the injected panics are expected; others still print.
fn quiet_injected_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        if !text.starts_with("injected analysis failure") {
            default(info);
        }
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_analysis_forwards_unchanged_and_says_so() {
    quiet_injected_panics();
    bounded(async {
        let server = FaultServer::start("127.0.0.1:0").await.unwrap();
        let names = [
            "sse-progress",
            "sse-drip",
            "sse-cut-mid-event",
            "tcp-reset",
            "malformed-json",
        ];
        let all = scenarios::all();
        let mut failures = Vec::new();
        for name in names {
            let s = all.iter().find(|s| s.name == name).expect(name).clone();
            let upstream = server.url(Some(s.name));
            let direct = demo::probe(&upstream, &s).await;
            for step in [
                AnalysisStep::Begin,
                AnalysisStep::Head,
                AnalysisStep::Chunk,
                AnalysisStep::Finish,
            ] {
                let mut config = Config::new(&upstream, "127.0.0.1:0".parse().unwrap());
                config.inject_panic = Some(step);
                let seen = Arc::new(ProxyVerdicts::default());
                let metrics = Arc::new(Metrics::default());
                let proxy = Proxy::builder(config)
                    .sink(seen.clone())
                    .sink(metrics.clone())
                    .start()
                    .await
                    .unwrap();
                let through = demo::probe(&proxy.url(), &s).await;
                tokio::time::sleep(Duration::from_millis(200)).await;
                let what = format!("{name} with the analysis failing at {step:?}");
                // The client cannot tell: same verdicts, same bytes, same ends.
                let (a, b): (Vec<_>, Vec<_>) = (
                    direct.verdicts.iter().cloned().map(essence).collect(),
                    through.verdicts.iter().cloned().map(essence).collect(),
                );
                if a != b {
                    failures.push(format!("{what}: client verdicts differ:\n  {a:?}\n  {b:?}"));
                }
                if received(&direct.recorded) != received(&through.recorded) {
                    failures.push(format!("{what}: the client received other bytes"));
                }
                // The proxy says so, for every exchange whose analysis reached the step.
                let unjudged = seen.unjudged();
                let failed = unjudged.iter().filter(|u| u.2).count();
                if failed == 0 || unjudged.iter().any(|u| !u.2) {
                    failures.push(format!("{what}: proxy records {unjudged:?}"));
                }
                if unjudged.iter().any(|u| !u.1.starts_with("analysis failed")) {
                    failures.push(format!("{what}: notes {unjudged:?}"));
                }
                if step == AnalysisStep::Begin && !seen.sorted().is_empty() {
                    failures.push(format!("{what}: verdicts without an analysis"));
                }
                let count = format!("mcp_verdict_proxy_analysis_failures_total {failed}\n");
                if !metrics.render().contains(&count) {
                    failures.push(format!("{what}: metrics lack {count:?}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    })
    .await;
}

// --- the binary ------------------------------------------------------------------------------

/// A port free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Prometheus text as `name{labels}` → value (comments dropped).
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_metrics_and_writes_calls_log_and_recording() {
    use mcp_verdict::adapters::{Client, Deadlines, Handshake};
    use serde_json::json;
    bounded(async {
        let server = support::rmcp_server(support::Mode::Legacy).await;
        let dir = std::env::temp_dir().join(format!("mcp-verdict-proxy-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (log, calls, har) = (dir.join("log.jsonl"), dir.join("calls.jsonl"), dir.join("rec.har"));
        let (listen, metrics) = (free_port(), free_port());
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(["proxy", "--upstream", &server.url, "--quiet"])
            .args(["--listen", &format!("127.0.0.1:{listen}")])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics}")])
            .arg("--log")
            .arg(&log)
            .arg("--calls")
            .arg(&calls)
            .arg("--record")
            .arg(&har)
            .spawn()
            .unwrap();
        let path = reqwest::Url::parse(&server.url).unwrap().path().to_owned();
        let url = format!("http://127.0.0.1:{listen}{path}");
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", listen)).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let client = Client::builder(&url)
            .deadlines(Deadlines {
                overall: Some(Duration::from_secs(10)),
                ..Default::default()
            })
            .build()
            .unwrap();
        let mut verdicts = client.handshake(Handshake::Auto).await;
        let fail = json!({"name": "fail", "arguments": {}});
        for params in [
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            fail.clone(),
            fail,
            json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        ] {
            verdicts.push(client.request("tools/call", params).await.verdict().await);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;

        let text = reqwest::get(format!("http://127.0.0.1:{metrics}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let _ = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let status = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
        assert!(status.success(), "the proxy exits 0 at Ctrl-C: {status:?}");

        // The log: one verdict per judged exchange, equal to the replay of the recording.
        let logged: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(logged.len() >= verdicts.len(), "{logged:?}");
        let mut again = Vec::new();
        let file = std::fs::File::open(&har).unwrap();
        mcp_verdict::replay::replay_har(std::io::BufReader::new(file), Limits::default(), &mut |item| {
            if let mcp_verdict::replay::Item::Verdict(v) = item {
                again.push(serde_json::to_value(&*v).unwrap());
            }
        })
        .unwrap();
        let verdict_only = |v: &serde_json::Value| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("file");
            v
        };
        let mut live: Vec<_> = logged.iter().map(verdict_only).collect();
        live.sort_by_key(|v| v["index"].as_u64());
        assert_eq!(live, again, "--log vs replay of --record");

        // Metrics: the counts by outcome, layer, method and tool are the log's.
        let got = samples(&text);
        let mut want: BTreeMap<String, f64> = BTreeMap::new();
        for v in &logged {
            let key = format!(
                "mcp_verdict_proxy_exchanges_total{{outcome=\"{}\",layer=\"{}\",method=\"{}\",tool=\"{}\"}}",
                v["outcome"].as_str().unwrap(),
                v["layer"].as_str().unwrap(),
                v["method"].as_str().unwrap_or(""),
                v["tool"].as_str().unwrap_or("")
            );
            *want.entry(key).or_default() += 1.0;
        }
        let counted: BTreeMap<String, f64> = got
            .iter()
            .filter(|(k, _)| k.starts_with("mcp_verdict_proxy_exchanges_total{"))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(counted, want, "metrics counts vs the log\n{text}");
        assert_eq!(
            got["mcp_verdict_proxy_exchanges_total{outcome=\"TOOL_ERROR\",layer=\"application\",method=\"tools/call\",tool=\"fail\"}"],
            2.0,
            "{text}"
        );
        // Histograms: buckets never decrease, +Inf is the count, the final answer of every
        // judged call with an answer is observed.
        for phase in ["head", "first_event", "final"] {
            let buckets: Vec<f64> = text
                .lines()
                .filter(|l| l.starts_with(&format!("mcp_verdict_proxy_latency_seconds_bucket{{phase=\"{phase}\"")))
                .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
                .collect();
            assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{phase}: {buckets:?}");
            let count = got[&format!("mcp_verdict_proxy_latency_seconds_count{{phase=\"{phase}\"}}")];
            assert_eq!(buckets.last().copied(), Some(count), "{phase}");
        }
        let answered = logged.iter().filter(|v| v["complete"] == true && v["kind"] == "request").count();
        let finals = got["mcp_verdict_proxy_latency_seconds_count{phase=\"final\"}"];
        assert!(finals >= answered as f64 && answered >= 5, "{answered} answered, {finals} final");
        assert!(got["mcp_verdict_proxy_latency_seconds_count{phase=\"first_event\"}"] >= 1.0, "{text}");

        // Calls: equal to `replay --calls` of the recording; the re-sent `fail` (after its
        // complete answer) is a call of its own, flagged.
        let live_calls: Vec<serde_json::Value> = std::fs::read_to_string(&calls)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut replayed_calls = Vec::new();
        let file = std::fs::File::open(&har).unwrap();
        mcp_verdict::replay::replay_calls(std::io::BufReader::new(file), Limits::default(), &mut |c| {
            replayed_calls.push(serde_json::to_value(&c).unwrap())
        })
        .unwrap();
        assert_eq!(live_calls, replayed_calls, "--calls vs replay --calls of --record");
        // Both logs' lines are byte for byte serde_json's of the records they carry (they are
        // written by hand, `jsonl.rs`).
        for line in std::fs::read_to_string(&log).unwrap().lines() {
            let v: Verdict = serde_json::from_str(line).unwrap();
            let file = serde_json::from_str::<serde_json::Value>(line).unwrap()["file"].clone();
            let object = serde_json::to_string(&v).unwrap();
            assert_eq!(line, format!("{{\"file\":{file},{}", &object[1..]));
        }
        for line in std::fs::read_to_string(&calls).unwrap().lines() {
            let c: mcp_verdict::Call = serde_json::from_str(line).unwrap();
            assert_eq!(line, serde_json::to_string(&c).unwrap());
        }
        let fails: Vec<&serde_json::Value> = live_calls.iter().filter(|c| c["tool"] == "fail").collect();
        assert_eq!(fails.len(), 2, "{live_calls:?}");
        assert_eq!(fails[0]["violations"], serde_json::json!([]), "{live_calls:?}");
        assert_eq!(
            fails[1]["violations"][0]["rule"], "call.resent_after_complete",
            "{live_calls:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}
