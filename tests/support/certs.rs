//! A test CA and a server certificate for 127.0.0.1 signed by it (`ca.pem`, `leaf.pem`,
//! `leaf.key`), made with `openssl`, for the tests of HTTPS servers and upstreams. Included by
//! path (`#[path = "support/certs.rs"] mod certs;`).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};

/// A CA and a server certificate for 127.0.0.1 signed by it, made with `openssl`; `None` when
/// there is no `openssl` on PATH.
pub fn make_certificates(dir: &Path) -> Option<()> {
    let openssl = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
    };
    let Ok(version) = openssl(&["version"]) else {
        return None;
    };
    if !version.status.success() {
        return None;
    }
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509"][..],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=mcp-verdict test CA",
            ],
        ]
        .concat(),
        [
            &["req"][..],
            &ec[..],
            &[
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    ];
    for step in &steps {
        let out = openssl(step).unwrap();
        assert!(
            out.status.success(),
            "openssl {step:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Some(())
}
