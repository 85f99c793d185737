//! A real nginx between a test's client and an upstream on loopback, for the tests of which box
//! made a status (issue 32). Debian's `/usr/sbin/nginx`, or `nginx` on PATH; `.ci/run` installs
//! it. Included by path (`#[path = "support/nginx.rs"] mod nginx;`): it needs nothing of
//! `support/mod.rs`.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use mcp_verdict::faults::FaultServer;
use serde_json::Value;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// How long nginx may take to accept connections.
const READY: Duration = Duration::from_secs(5);

/// A real nginx (Debian's `/usr/sbin/nginx`, or `nginx` on PATH) between a test's client and an
/// upstream on loopback, run in the foreground (`-g 'daemon off;'`, `-p <tempdir>`,
/// `-c <tempdir>/nginx.conf`, error log and pid file in the temp dir; `worker_processes 1`),
/// listening on 127.0.0.1:<free port>.
pub struct Nginx {
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

/// The nginx binary: Debian's path first (root's PATH may lack /usr/sbin), then PATH.
fn binary() -> Option<PathBuf> {
    let debian = Path::new("/usr/sbin/nginx");
    if debian.is_file() {
        return Some(debian.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
}

/// A port nothing listens on now (the OS picks it; nginx binds it right after).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A new empty directory under the system temp dir, writable by nginx's workers (which may run
/// as another user when the test runs as root).
fn temp_dir() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcp-verdict-nginx-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tmp")).expect("nginx temp dir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for d in [dir.clone(), dir.join("tmp")] {
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777));
        }
    }
    dir
}

impl Nginx {
    /// `location / { proxy_pass http://127.0.0.1:{upstream}; proxy_http_version 1.1;
    /// proxy_set_header Connection ""; {extra} }`.
    /// `None` (after `eprintln!("SKIP: nginx is not installed ...")`) when nginx is missing; a
    /// panic instead when the env var MCP_VERDICT_CI is set (CI installs it). Waits (bounded,
    /// ≤ 5 s) until the port accepts.
    pub fn start(upstream: u16, extra: &str) -> Option<Nginx> {
        Nginx::start_with(upstream, extra, None)
    }

    /// As [`Nginx::start`], listening with TLS: `leaf.pem` and `leaf.key` in `certs` (see
    /// `support/certs.rs`).
    pub fn start_tls(upstream: u16, extra: &str, certs: &Path) -> Option<Nginx> {
        Nginx::start_with(upstream, extra, Some(certs))
    }

    fn start_with(upstream: u16, extra: &str, certs: Option<&Path>) -> Option<Nginx> {
        let Some(bin) = binary() else {
            assert!(
                std::env::var_os("MCP_VERDICT_CI").is_none(),
                "nginx is not installed, and MCP_VERDICT_CI is set: .ci/run installs it"
            );
            eprintln!(
                "SKIP: nginx is not installed (apt-get install nginx-light); the nginx tests did not run"
            );
            return None;
        };
        let port = free_port();
        let dir = temp_dir();
        let d = dir.display();
        let ssl = match certs {
            Some(c) => format!(
                " ssl;\n        ssl_certificate {0}/leaf.pem;\n        ssl_certificate_key {0}/leaf.key",
                c.display()
            ),
            None => String::new(),
        };
        let conf = format!(
            r#"worker_processes 1;
error_log {d}/error.log info;
pid {d}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port}{ssl};
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            {extra}
        }}
    }}
}}
"#
        );
        std::fs::write(dir.join("nginx.conf"), conf).expect("write nginx.conf");
        let child = Command::new(&bin)
            .arg("-g")
            .arg("daemon off;")
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut nginx = Nginx { port, child, dir };
        let until = Instant::now() + READY;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Some(nginx);
            }
            if let Ok(Some(status)) = nginx.child.try_wait() {
                panic!(
                    "nginx exited ({status}) before it listened: {}",
                    nginx.log()
                );
            }
            assert!(
                Instant::now() < until,
                "nginx did not listen on {addr} within {READY:?}: {}",
                nginx.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `http://127.0.0.1:{port}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// nginx's error log so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    /// SIGTERM first (the master then stops its worker; a SIGKILLed master would leave the
    /// worker holding the port), SIGKILL after 2 s.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Any one probe must end within this (the slowest waits for nginx's 1 s timeout).
pub const PROBE_BOUND: Duration = Duration::from_secs(30);

/// Runs `mcp-verdict probe <url> <args> --format jsonl`, bounded, and gives its verdicts.
pub fn probe(url: &str, args: &[&str]) -> (Output, Vec<Value>) {
    let mut child = Command::new(BIN)
        .arg("probe")
        .arg(url)
        .args(args)
        .args(["--format", "jsonl", "--timeout", "10s"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-verdict");
    let until = Instant::now() + PROBE_BOUND;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("probe {url} did not end within {PROBE_BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("probe output");
    let verdicts = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("outcome").is_some())
        .collect();
    (out, verdicts)
}

/// The fault server on a loopback port of its own runtime (the probe is a blocking process).
pub fn fault_server() -> (tokio::runtime::Runtime, FaultServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt
        .block_on(FaultServer::start("127.0.0.1:0"))
        .expect("fault server");
    (rt, server)
}
