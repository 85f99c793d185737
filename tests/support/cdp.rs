//! A lean Chrome DevTools Protocol driver for the browser tests: Debian's Chromium, headless,
//! driven over `--remote-debugging-pipe` (JSON messages ended by a NUL byte; the browser reads
//! its fd 3 and writes its fd 4). No websocket and no crate: `sh` moves the child's piped
//! stdin and stdout onto fds 3 and 4 before it execs the browser, so no `unsafe` is needed.
//!
//! Every wait is bounded ([`CALL_BOUND`]); the browser is closed, else killed, on drop.
//! Included by path (`#[path = "support/cdp.rs"] mod cdp;`): it needs nothing of
//! `support/mod.rs`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long the browser may take to answer any one command.
pub const CALL_BOUND: Duration = Duration::from_secs(20);

/// The largest message read from the browser (a screenshot is the biggest, well under this).
const MESSAGE_MAX: u64 = 64 << 20;

/// Console messages, exceptions and log entries kept; more are counted, not kept.
const CONSOLE_MAX: usize = 100;

/// A headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    /// The page's flat-mode session id (every page command carries it).
    session: String,
    next: u64,
    /// What the page reported: console calls, uncaught exceptions, log entries (a CSP refusal
    /// or a failed load is one). A page that logs nothing leaves this empty.
    pub console: Vec<String>,
}

impl Browser {
    /// Starts `chromium` headless with a `width`×`height` viewport and a fresh profile under
    /// `dir`, its standard error in `dir/chromium.stderr`, and attaches to a blank page.
    pub fn launch(chromium: &Path, width: u32, height: u32, dir: &Path) -> Browser {
        let profile = dir.join("chromium-profile");
        let _ = std::fs::remove_dir_all(&profile);
        let log = std::fs::File::create(dir.join("chromium.stderr")).expect("a log file");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("sh and chromium start");
        let to = child.stdin.take().expect("the browser's fd 3");
        let out = child.stdout.take().expect("the browser's fd 4");
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut out = BufReader::new(out);
            loop {
                let mut msg = Vec::new();
                match (&mut out).take(MESSAGE_MAX).read_until(0, &mut msg) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if msg.pop() != Some(0) {
                    break; // cut short: the browser died or the message was too big
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&msg)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut b = Browser {
            child,
            to,
            from,
            session: String::new(),
            next: 0,
            console: Vec::new(),
        };
        let target = b.browser_call("Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].clone();
        let attached = b.browser_call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        b.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        // Headless windows are never the focused one; keyboard focus must still behave.
        b.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        );
        b
    }

    /// Loads `url` and waits (bounded) until its document is complete.
    pub fn navigate(&mut self, url: &str) {
        let r = self.call("Page.navigate", json!({"url": url}));
        assert!(r.get("errorText").is_none(), "{url}: {r}");
        assert!(
            self.wait_until("document.readyState === 'complete'", CALL_BOUND)
                .is_some(),
            "{url} did not finish loading"
        );
    }

    /// The value of `js` evaluated in the page (promises awaited); an exception fails the test.
    pub fn evaluate(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{js}: {e}");
        }
        r["result"].get("value").cloned().unwrap_or(Value::Null)
    }

    /// Evaluates `js` every 20 ms until it is truthy or `bound` passes: the instant it was
    /// first seen truthy, or `None`.
    pub fn wait_until(&mut self, js: &str, bound: Duration) -> Option<Instant> {
        let start = Instant::now();
        loop {
            let v = self.evaluate(js);
            let truthy =
                !matches!(v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return Some(Instant::now());
            }
            if start.elapsed() > bound {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Presses and releases one key, as a user would: `Tab`, `Enter`, `Space`, `Escape`;
    /// `Shift+` before a name holds Shift down with it (`Shift+Tab`).
    pub fn key(&mut self, name: &str) {
        let (modifiers, name) = match name.strip_prefix("Shift+") {
            Some(rest) => (8, rest),
            None => (0, name),
        };
        let (key, code, vk, text) = match name {
            "Tab" => ("Tab", "Tab", 9, ""),
            "Enter" => ("Enter", "Enter", 13, "\r"),
            "Space" => (" ", "Space", 32, " "),
            "Escape" => ("Escape", "Escape", 27, ""),
            "ArrowDown" => ("ArrowDown", "ArrowDown", 40, ""),
            "ArrowUp" => ("ArrowUp", "ArrowUp", 38, ""),
            other => panic!("no key {other} in this driver"),
        };
        let mut down = json!({"type": if text.is_empty() { "rawKeyDown" } else { "keyDown" },
            "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk,
            "modifiers": modifiers});
        if !text.is_empty() {
            down["text"] = json!(text);
            down["unmodifiedText"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "modifiers": modifiers,
                "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}),
        );
    }

    /// Writes a PNG of the viewport to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64_decode(r["data"].as_str().expect("screenshot data"))
            .expect("the screenshot is base64");
        std::fs::write(path, png).expect("the screenshot is written");
    }

    /// Closes the browser and waits (bounded) for it to exit; killed if it does not.
    pub fn close(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = self.send("Browser.close", json!({}), None);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A command to the page's session.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.roundtrip(method, params, Some(&session))
    }

    /// A command to the browser itself.
    fn browser_call(&mut self, method: &str, params: Value) -> Value {
        self.roundtrip(method, params, None)
    }

    fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> std::io::Result<u64> {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg)?;
        bytes.push(0);
        self.to.write_all(&bytes)?;
        self.to.flush()?;
        Ok(self.next)
    }

    fn roundtrip(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        let id = self
            .send(method, params, session)
            .unwrap_or_else(|e| panic!("{method}: the browser's pipe: {e}"));
        let deadline = Instant::now() + CALL_BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("{method}: no answer within {CALL_BOUND:?}: {e}"));
            if msg["id"] == json!(id) {
                if let Some(err) = msg.get("error") {
                    panic!("{method}: {err}");
                }
                return msg["result"].clone();
            }
            self.note(&msg);
        }
    }

    /// Keeps what the page reported (events arrive between answers).
    fn note(&mut self, msg: &Value) {
        let p = &msg["params"];
        let line = match msg["method"].as_str() {
            Some("Runtime.consoleAPICalled") => format!("console.{}: {}", p["type"], p["args"]),
            Some("Runtime.exceptionThrown") => format!("exception: {}", p["exceptionDetails"]),
            Some("Log.entryAdded") => format!(
                "log {} {}: {} ({})",
                p["entry"]["source"], p["entry"]["level"], p["entry"]["text"], p["entry"]["url"]
            ),
            _ => return,
        };
        if self.console.len() < CONSOLE_MAX {
            self.console.push(line);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.shut();
    }
}

/// Standard base64 (with padding, as DevTools sends it); `None` on a byte outside it.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        // 2 chars → 1 byte, 3 → 2, 4 → 3; a lone char is not base64.
        match chunk.len() {
            1 => return None,
            len => out.extend_from_slice(&bytes[1..len]),
        }
    }
    Some(out)
}

#[test]
fn base64_decodes_every_padding() {
    assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
    assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
    assert_eq!(base64_decode("TQ==").unwrap(), b"M");
    assert_eq!(base64_decode("").unwrap(), b"");
    assert!(base64_decode("T").is_none());
    assert!(base64_decode("TW!u").is_none());
}
