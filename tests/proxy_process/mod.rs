//! `mcp-verdict proxy` as a real process for the report tests: started on a free loopback
//! port, stopped with SIGTERM as a service manager would, with deadlines so a hang fails.
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running proxy and the URL clients use.
pub struct ProxyProcess {
    child: Child,
    /// The endpoint to point clients at.
    pub url: String,
    /// Where its standard output goes.
    pub stdout: PathBuf,
    /// Where its standard error goes (the address line, the human lines).
    pub stderr: PathBuf,
}

impl ProxyProcess {
    /// Starts `mcp-verdict proxy --upstream UPSTREAM --listen 127.0.0.1:0 ARGS` with `env`,
    /// its output in `dir/proxy.stdout` and `dir/proxy.stderr`.
    pub fn start(upstream: &str, args: &[&str], env: &[(&str, &str)], dir: &Path) -> Self {
        Self::start_named(upstream, args, env, dir, "proxy")
    }

    /// [`start`](Self::start) with its output in `dir/NAME.stdout` and `dir/NAME.stderr`.
    pub fn start_named(
        upstream: &str,
        args: &[&str],
        env: &[(&str, &str)],
        dir: &Path,
        name: &str,
    ) -> Self {
        let (stdout, stderr) = (
            dir.join(format!("{name}.stdout")),
            dir.join(format!("{name}.stderr")),
        );
        let child = Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        // The proxy says where it listens on its first line of standard error (a file, so a
        // long run never blocks on a full pipe).
        let start = Instant::now();
        let url = loop {
            let text = std::fs::read_to_string(&stderr).unwrap_or_default();
            if let Some(url) = text
                .split("point the client at ")
                .nth(1)
                .and_then(|rest| rest.split(';').next())
            {
                break url.to_owned();
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the proxy did not start: {text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        ProxyProcess {
            child,
            url,
            stdout,
            stderr,
        }
    }

    /// SIGTERM, then waits (at most 30 s) for it to exit.
    pub fn stop(mut self) -> ExitStatus {
        // The shell's own `kill`: no procps needed on a slim machine.
        let term = format!("kill -TERM {}", self.child.id());
        let killed = Command::new("sh").args(["-c", &term]).status().unwrap();
        assert!(killed.success());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("the proxy did not stop within 30 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a client command (probe, soak) to completion, at most 120 s; returns its exit code.
pub fn client(mut cmd: Command) -> i32 {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{cmd:?} took longer than 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The verdicts of a `--log` file, one JSON object per line.
pub fn log_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The log's lines once the running proxy has written them out: its lines wait in a buffer
/// for at most 50 ms (`FLUSH_AFTER`), so this polls until the file has lines and has not
/// changed for four times that (at most 10 s).
pub fn settled_log_lines(path: &Path) -> Vec<serde_json::Value> {
    let start = Instant::now();
    let (mut last, mut since) = (None, Instant::now());
    loop {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if last != Some(len) {
            (last, since) = (Some(len), Instant::now());
        }
        let quiet = since.elapsed() > Duration::from_millis(200);
        if (len > 0 && quiet) || start.elapsed() > Duration::from_secs(10) {
            return log_lines(path);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes a soak mix to `dir/mix.json`: `echo_weight` echo calls to every call cut off between
/// SSE events, so a run has failures to report. Returns the file's path.
pub fn write_mix(dir: &Path, echo_weight: u32) -> PathBuf {
    let mix = dir.join("mix.json");
    std::fs::write(
        &mix,
        format!(
            r#"[{{"tool":"echo","args":{{"message":"hi"}},"weight":{echo_weight}}},
                {{"tool":"pay","args":{{"_fault":"sse-cut-between-events"}},"weight":1}}]"#
        ),
    )
    .unwrap();
    mix
}
