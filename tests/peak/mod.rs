//! A child process run to its end with its peak resident set: `VmHWM` in `/proc/<pid>/status`,
//! sampled every 5 ms until it exits, under a deadline (past it the child is killed and the test
//! fails). The hostile-peer and memory-bound tests measure the binary this way.
// Each test binary that includes this module uses part of it.
#![allow(dead_code)]

use std::io::Read;
use std::process::Child;
use std::time::{Duration, Instant};

/// What a finished child left.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Peak resident set, in KiB.
    pub peak_kib: u64,
    pub took: Duration,
}

/// The peak resident set of process `pid` so far, in KiB (`None` once it is gone).
pub fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reads all of `pipe` (when there is one) on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    })
}

/// Waits for `child` (its output piped or not), sampling its peak RSS until it exits; `what`
/// names it if it runs past `deadline`.
pub fn measure(mut child: Child, deadline: Duration, what: &str) -> Run {
    let started = Instant::now();
    let pid = child.id();
    let readers = (drain(child.stdout.take()), drain(child.stderr.take()));
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran past {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code: status.code(),
        stdout: readers.0.join().unwrap(),
        stderr: readers.1.join().unwrap(),
        peak_kib: peak,
        took: started.elapsed(),
    }
}

/// SIGTERM to `child`, as a service manager stops it (the shell's own `kill`: no procps needed).
pub fn sigterm(child: &Child) {
    let term = format!("kill -TERM {}", child.id());
    let sent = std::process::Command::new("sh")
        .args(["-c", &term])
        .status()
        .unwrap();
    assert!(sent.success());
}
