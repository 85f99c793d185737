#![cfg(feature = "cli")]
//! The interactive parts, through a real terminal: tmux runs the binary in a pseudo-terminal,
//! `send-keys` types Ctrl-C, `capture-pane -e` reads the screen with its colours. Pipes cannot
//! show these: the progress line and colour are only drawn on a terminal.
//!
//! tmux comes from Debian's package (`.ci/run` installs it). Without it the test fails under
//! CI and says so elsewhere.

use std::process::Command;
use std::time::{Duration, Instant};

use mcp_verdict::faults::FaultServer;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// A tmux server of this test's own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, command: &str) -> Option<Tmux> {
        let socket = format!("mcp-verdict-{name}-{}", std::process::id());
        let ok = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", "200", "-y", "50", command])
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .status()
            .ok()?;
        assert!(ok.success(), "tmux new-session failed");
        Some(Tmux { socket })
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen, with escape sequences for colours.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "t"])
    }

    /// Waits until the screen shows `what` (bounded).
    fn wait_for(&self, what: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(what) || start.elapsed() > limit {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn have_tmux() -> bool {
    let found = Command::new("tmux").arg("-V").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is required under CI (.ci/run installs it)"
        );
        eprintln!("skipped: tmux is not installed (apt-get install tmux)");
    }
    found
}

#[test]
fn progress_line_colours_and_ctrl_c_in_a_real_terminal() {
    const NAME: &str = "soak";
    if !have_tmux() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    // Slow enough to still be running when Ctrl-C comes; the shell prints the exit code and
    // keeps the pane open for reading.
    let command = format!(
        "{BIN} soak {} --tool echo -n 100000 --rate 40 --timeout 20s; echo EXIT=$?; sleep 60",
        server.url(None)
    );
    let Some(term) = Tmux::start(NAME, &command) else {
        return;
    };
    let running = term.wait_for("calls", Duration::from_secs(20));
    assert!(
        running.contains("calls") && running.contains("TOOL_SUCCESS"),
        "the progress line is drawn on a terminal: {running:?}"
    );
    term.tmux(&["send-keys", "-t", "t", "C-c"]);
    let done = term.wait_for("EXIT=", Duration::from_secs(10));
    assert!(done.contains("EXIT=130"), "{done:?}");
    assert!(
        done.contains("interrupted (Ctrl-C): partial report"),
        "{done:?}"
    );
    assert!(
        done.contains("\x1b[31m"),
        "the summary is coloured on a terminal: {done:?}"
    );
    // The progress line was erased, not left behind above the report.
    let report_at = done.find("interrupted (Ctrl-C)").unwrap();
    assert!(
        !done[..report_at].contains("calls  "),
        "no stale progress line: {done:?}"
    );
}

#[test]
fn replay_colours_on_a_terminal_and_not_with_no_color() {
    const NAME: &str = "replay";
    if !have_tmux() {
        return;
    }
    let har = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/har");
    let first = std::fs::read_dir(har)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .min()
        .unwrap();
    let command = format!(
        "{BIN} replay {p}; echo EXIT=$?; NO_COLOR=1 {BIN} replay {p}; echo EXIT2=$?; sleep 60",
        p = first.display()
    );
    let Some(term) = Tmux::start(NAME, &command) else {
        return;
    };
    let screen = term.wait_for("EXIT2=", Duration::from_secs(20));
    let (coloured, plain) = screen.split_once("EXIT=").unwrap();
    assert!(
        coloured.contains("\x1b[32m") || coloured.contains("\x1b[31m"),
        "{coloured:?}"
    );
    assert!(
        !plain.split_once('\n').unwrap().1.contains("\x1b[3"),
        "NO_COLOR is honoured: {plain:?}"
    );
}
