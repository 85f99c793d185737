//! What ships: the release profile (no debug info, one codegen unit with fat LTO, so the binary
//! stays under 16 MB) and the `profiling` profile beside it, the package (metadata, licenses, the
//! files `cargo package` takes), and the `Dockerfile` (multi-stage; every file it copies exists
//! and is not ignored).
//!
//! Two checks build things and are `#[ignore]`d (minutes on a small machine): the release
//! binary's size, and the image (only where a Docker engine runs; elsewhere it says it skipped):
//! `cargo test --test shipping -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `key = value` lines of one `[section]` of a TOML file (no nesting needed here).
fn section(toml: &str, name: &str) -> Vec<(String, String)> {
    let header = format!("[{name}]");
    let mut lines = toml.lines().skip_while(|l| l.trim() != header);
    assert!(lines.next().is_some(), "no {header}");
    lines
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The most a release binary may weigh.
const MAX_BINARY_BYTES: u64 = 16_000_000;

#[test]
fn release_has_no_debug_info_and_profiling_keeps_symbols() {
    let toml = read("Cargo.toml");
    let release = section(&toml, "profile.release");
    assert_eq!(value(&release, "debug"), Some("false"), "{release:?}");
    assert_eq!(
        value(&release, "strip"),
        Some("\"debuginfo\""),
        "{release:?}"
    );
    // What keeps the binary under MAX_BINARY_BYTES (16.9 MB without them).
    assert_eq!(value(&release, "lto"), Some("\"fat\""), "{release:?}");
    assert_eq!(value(&release, "codegen-units"), Some("1"), "{release:?}");
    let profiling = section(&toml, "profile.profiling");
    assert_eq!(value(&profiling, "inherits"), Some("\"release\""));
    assert_eq!(value(&profiling, "debug"), Some("1"));
    assert_eq!(value(&profiling, "strip"), Some("\"none\""));
}

#[test]
#[ignore = "builds the release binary (minutes): cargo test --test shipping -- --ignored"]
fn the_release_binary_is_at_most_16_mb() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--locked", "--bin", "mcp-verdict"])
        .current_dir(root())
        .status()
        .unwrap();
    assert!(status.success());
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let bin = target.join("release/mcp-verdict");
    let size = std::fs::metadata(&bin).unwrap().len();
    eprintln!("{}: {size} bytes", bin.display());
    assert!(
        size <= MAX_BINARY_BYTES,
        "{size} bytes > {MAX_BINARY_BYTES}"
    );
}

#[test]
fn the_package_has_its_metadata_and_both_licenses() {
    let toml = read("Cargo.toml");
    let package = section(&toml, "package");
    for key in [
        "description",
        "license",
        "readme",
        "keywords",
        "categories",
        "rust-version",
    ] {
        assert!(value(&package, key).is_some(), "[package] {key}");
    }
    assert_eq!(value(&package, "license"), Some("\"MIT OR Apache-2.0\""));
    // crates.io: at most five keywords of at most 20 characters.
    let keywords: Vec<&str> = value(&package, "keywords")
        .unwrap()
        .trim_matches(['[', ']'])
        .split(',')
        .map(|k| k.trim().trim_matches('"'))
        .collect();
    assert!(keywords.len() <= 5, "{keywords:?}");
    assert!(
        keywords.iter().all(|k| !k.is_empty() && k.len() <= 20),
        "{keywords:?}"
    );
    assert!(read("LICENSE-MIT").starts_with("MIT License"));
    let apache = read("LICENSE-APACHE");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    // No path dependency outside the crate: the only `path =` is the crate's own dev-dependency
    // (cargo drops it from the published manifest).
    for line in toml
        .lines()
        .filter(|l| l.contains("path =") && l.contains('{'))
    {
        assert!(line.starts_with("mcp-verdict = { path = \".\""), "{line}");
    }
}

/// The files `cargo package` takes: the crate, the licenses, the testdata the tests read; not
/// the fuzz crate, the CI scripts, the action or the Dockerfile.
#[test]
fn cargo_package_takes_the_crate_and_its_testdata() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = String::from_utf8(out.stdout).unwrap();
    let files: Vec<&str> = list.lines().collect();
    for want in [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "src/lib.rs",
        "src/bin/mcp-verdict/main.rs",
        "testdata/har/connection_failed.har",
        "tests/action.rs",
    ] {
        assert!(files.contains(&want), "{want} is packaged");
    }
    for file in &files {
        for left_out in [
            "fuzz/",
            ".ci/",
            "action/",
            "notes/",
            "target/",
            "Dockerfile",
        ] {
            assert!(!file.starts_with(left_out), "{file} is packaged");
        }
    }
    // Every file a test names under testdata/ is packaged.
    let testdata = std::fs::read_dir(root().join("testdata/har"))
        .unwrap()
        .count();
    let packaged = files
        .iter()
        .filter(|f| f.starts_with("testdata/har/"))
        .count();
    assert_eq!(packaged, testdata);
}

// --- Dockerfile --------------------------------------------------------------------------------

/// One `FROM` stage: image, name, and its instructions (continuation lines joined).
#[derive(Debug)]
struct Stage {
    image: String,
    name: Option<String>,
    instructions: Vec<String>,
}

fn dockerfile() -> Vec<Stage> {
    let text = read("Dockerfile");
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let t = line.trim();
        if current.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(t);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stages: Vec<Stage> = Vec::new();
    for ins in joined {
        let words: Vec<&str> = ins.split_whitespace().collect();
        if words[0].eq_ignore_ascii_case("FROM") {
            let name = (words.len() == 4 && words[2].eq_ignore_ascii_case("AS"))
                .then(|| words[3].to_owned());
            stages.push(Stage {
                image: words[1].to_owned(),
                name,
                instructions: Vec::new(),
            });
        } else {
            stages
                .last_mut()
                .expect("an instruction before FROM")
                .instructions
                .push(ins);
        }
    }
    stages
}

/// Whether `.dockerignore` leaves `path` out of the build context (its plain `dir/` and name
/// lines: all it uses).
fn docker_ignored(path: &str) -> bool {
    read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .any(|pattern| {
            let p = pattern.trim_end_matches('/');
            path == p || path.starts_with(&format!("{p}/"))
        })
}

#[test]
fn the_dockerfile_is_multi_stage_and_copies_only_what_exists() {
    let stages = dockerfile();
    assert!(stages.len() >= 2, "multi-stage: {stages:?}");
    let build = &stages[0];
    assert!(build.image.starts_with("rust:"), "{}", build.image);
    let runtime = stages.last().unwrap();
    assert!(
        runtime.image.contains("distroless") || runtime.image.contains("slim"),
        "a small runtime image: {}",
        runtime.image
    );
    assert!(
        build
            .instructions
            .iter()
            .any(|i| i.starts_with("RUN cargo build --release --locked --bin mcp-verdict")),
        "{:?}",
        build.instructions
    );
    let mut copied = Vec::new();
    for (n, stage) in stages.iter().enumerate() {
        for ins in stage.instructions.iter().filter(|i| i.starts_with("COPY ")) {
            let words: Vec<&str> = ins.split_whitespace().skip(1).collect();
            let (flags, paths): (Vec<&str>, Vec<&str>) =
                words.iter().partition(|w| w.starts_with("--"));
            let (sources, _dest) = paths.split_at(paths.len() - 1);
            match flags.iter().find_map(|f| f.strip_prefix("--from=")) {
                // From an earlier stage, by name.
                Some(from) => assert!(
                    stages[..n].iter().any(|s| s.name.as_deref() == Some(from)),
                    "COPY --from={from}: no earlier stage of that name"
                ),
                None => {
                    for src in sources {
                        assert!(root().join(src).exists(), "COPY {src}: no such file");
                        assert!(
                            !docker_ignored(src),
                            "COPY {src}: .dockerignore leaves it out"
                        );
                        copied.push(src.trim_end_matches('/').to_owned());
                    }
                }
            }
        }
    }
    // Cargo reads every target the manifest names: their folders must be in the image.
    let toml = read("Cargo.toml");
    for (table, dir) in [("[[bench]]", "benches"), ("[[example]]", "examples")] {
        if toml.contains(table) {
            assert!(
                copied.iter().any(|c| c == dir),
                "{dir} is copied for {table}"
            );
        }
    }
    for needed in ["Cargo.toml", "Cargo.lock", "src"] {
        assert!(copied.iter().any(|c| c == needed), "{needed} is copied");
    }
    assert!(
        docker_ignored("target"),
        "the build context leaves target/ out"
    );
}

#[test]
#[ignore = "builds the image with Docker (minutes): cargo test --test shipping -- --ignored"]
fn the_image_builds_and_runs() {
    let docker_here = Command::new("docker")
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success());
    if !docker_here {
        eprintln!(
            "SKIPPED: no Docker engine here; the Dockerfile is checked by the test above only"
        );
        return;
    }
    let tag = "mcp-verdict:shipping-test";
    let built = Command::new("docker")
        .args(["build", "-t", tag, "."])
        .current_dir(root())
        .status()
        .unwrap();
    assert!(built.success());
    let har = Path::new("/work/connection_failed.har");
    let mount = format!(
        "{}:/work/connection_failed.har:ro",
        root().join("testdata/har/connection_failed.har").display()
    );
    let out = Command::new("docker")
        .args(["run", "--rm", "-v", &mount, tag, "replay"])
        .arg(har)
        .output()
        .unwrap();
    // The sample is a failed connection: exit 1, its verdict on stdout.
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("CONNECTION_FAILED"));
}
