//! The one exit rule of every command (replay, probe, soak, demo, report merge).
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every exchange complete (a tool or JSON-RPC error is a complete answer) |
//! | 1 | any exchange incomplete or invalid, or a threshold broken |
//! | 2 | unusable input: bad flags, unreadable or empty file, no server to start on |
//! | 130 | interrupted (Ctrl-C); the partial report was printed |
//!
//! A broken pipe on standard output (`| head`) is not an error: the reader left.

use std::process::ExitCode;

/// What a run came to, in the order that decides the code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Run {
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
    /// Some input could not be used.
    pub unusable: bool,
    /// Some exchange was incomplete (after any threshold that replaces this rule).
    pub incomplete: bool,
    /// A `--max-*` threshold was broken.
    pub threshold_broken: bool,
    /// Standard output was closed by the reader.
    pub broken_pipe: bool,
}

impl Run {
    /// The process exit code.
    pub fn code(self) -> ExitCode {
        ExitCode::from(self.number())
    }

    fn number(self) -> u8 {
        if self.interrupted {
            130
        } else if self.unusable {
            2
        } else if self.broken_pipe {
            0
        } else if self.incomplete || self.threshold_broken {
            1
        } else {
            0
        }
    }
}

/// Exit code for unusable input, after printing `msg` on standard error.
pub fn unusable(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("mcp-verdict: {msg}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_in_order() {
        let run = |f: fn(&mut Run)| {
            let mut r = Run::default();
            f(&mut r);
            r.number()
        };
        assert_eq!(run(|_| {}), 0);
        assert_eq!(run(|r| r.incomplete = true), 1);
        assert_eq!(run(|r| r.threshold_broken = true), 1);
        assert_eq!(run(|r| r.unusable = true), 2);
        assert_eq!(
            run(|r| {
                r.unusable = true;
                r.interrupted = true
            }),
            130
        );
        assert_eq!(
            run(|r| {
                r.incomplete = true;
                r.broken_pipe = true
            }),
            0
        );
    }
}
