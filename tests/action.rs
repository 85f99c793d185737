//! The GitHub Action (`action/action.yml`) run here, step by step, as a runner would: each
//! step's `run:` script through `bash --noprofile --norc -eo pipefail` (GitHub's `shell: bash`),
//! its `env:` with the `${{ inputs.* }}` and `${{ github.action_path }}` expressions filled in,
//! and `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT` and `RUNNER_TEMP` set to temporary files. The tool
//! is the built binary first on `PATH`; the install step runs against a stand-in `cargo` that
//! records its arguments (building the crate again is no part of a test).
//!
//! The YAML is read by the small reader below (block mappings and sequences, `|` scalars,
//! quoted and plain scalars: all `action.yml` uses); serde_yaml is no dependency.
#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

// --- a small YAML reader -----------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Yaml {
    Str(String),
    Map(Vec<(String, Yaml)>),
    Seq(Vec<Yaml>),
}

impl Yaml {
    fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self) -> &str {
        match self {
            Yaml::Str(s) => s,
            other => panic!("not a scalar: {other:?}"),
        }
    }

    fn map(&self) -> &[(String, Yaml)] {
        match self {
            Yaml::Map(m) => m,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    fn seq(&self) -> &[Yaml] {
        match self {
            Yaml::Seq(s) => s,
            other => panic!("not a sequence: {other:?}"),
        }
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn insignificant(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The next line that is neither blank nor a comment, from `i`.
fn next_line(lines: &[String], mut i: usize) -> Option<usize> {
    while i < lines.len() && insignificant(&lines[i]) {
        i += 1;
    }
    (i < lines.len()).then_some(i)
}

fn parse_yaml(text: &str) -> Yaml {
    assert!(!text.contains('\t'), "tabs in YAML indentation");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut i = 0;
    let doc = block(&mut lines, &mut i, 0);
    assert!(
        next_line(&lines, i).is_none(),
        "unread YAML from line {}",
        i + 1
    );
    doc
}

/// A block mapping or sequence whose lines are indented at least `min`.
fn block(lines: &mut [String], i: &mut usize, min: usize) -> Yaml {
    let Some(first) = next_line(lines, *i) else {
        return Yaml::Str(String::new());
    };
    let n = indent_of(&lines[first]);
    assert!(n >= min, "line {}: indented too little", first + 1);
    if lines[first].trim_start().starts_with('-') {
        let mut items = Vec::new();
        while let Some(at) = next_line(lines, *i) {
            let line = &lines[at];
            if indent_of(line) != n || !line.trim_start().starts_with('-') {
                break;
            }
            let rest = line.trim_start()[1..].trim_start().to_owned();
            if rest.contains(": ") || rest.ends_with(':') {
                // `- key: value` opens a mapping two columns in.
                lines[at] = format!("{}{rest}", " ".repeat(n + 2));
                *i = at;
                items.push(block(lines, i, n + 2));
            } else {
                items.push(Yaml::Str(scalar(&rest)));
                *i = at + 1;
            }
        }
        Yaml::Seq(items)
    } else {
        let mut map = Vec::new();
        while let Some(at) = next_line(lines, *i) {
            let line = lines[at].clone();
            if indent_of(&line) != n {
                assert!(indent_of(&line) < n, "line {}: bad indentation", at + 1);
                break;
            }
            let t = line.trim_start();
            let (key, rest) = match t.split_once(": ") {
                Some((k, r)) => (k, r.trim()),
                None => (
                    t.strip_suffix(':')
                        .unwrap_or_else(|| panic!("line {}: not `key: value`", at + 1)),
                    "",
                ),
            };
            *i = at + 1;
            let value = match rest {
                "|" | "|-" => Yaml::Str(block_scalar(lines, i, n, rest == "|")),
                "" => match next_line(lines, *i) {
                    Some(next) if indent_of(&lines[next]) > n => block(lines, i, n + 1),
                    _ => Yaml::Str(String::new()),
                },
                plain => Yaml::Str(scalar(plain)),
            };
            map.push((key.to_owned(), value));
        }
        Yaml::Map(map)
    }
}

/// The lines of a `|` scalar below a key indented `n`; `keep` keeps the final newline.
fn block_scalar(lines: &[String], i: &mut usize, n: usize, keep: bool) -> String {
    let mut body: Vec<&str> = Vec::new();
    let mut inner = None;
    while *i < lines.len() {
        let line = &lines[*i];
        if !line.trim().is_empty() {
            let ind = indent_of(line);
            if ind <= n {
                break;
            }
            let cut = *inner.get_or_insert(ind);
            assert!(ind >= cut, "line {}: less indented than its block", *i + 1);
            body.push(&line[cut..]);
        } else {
            body.push("");
        }
        *i += 1;
    }
    while body.last() == Some(&"") {
        body.pop();
    }
    let mut text = body.join("\n");
    if keep {
        text.push('\n');
    }
    text
}

fn scalar(text: &str) -> String {
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                }
            } else {
                out.push(c);
            }
        }
        out
    } else if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else {
        match text.find(" #") {
            Some(at) => text[..at].trim_end().to_owned(),
            None => text.to_owned(),
        }
    }
}

#[test]
fn the_reader_reads_what_action_yml_uses() {
    let doc = parse_yaml(
        "# comment\na: 1\nb:\n  c: \"x: y\"\n  d: 'it''s'\nsteps:\n  - name: one\n    run: |\n      echo a\n\n      # kept\n      echo b\n  - plain\ne: z # note\n",
    );
    assert_eq!(doc.get("a").unwrap().str(), "1");
    assert_eq!(doc.get("b").unwrap().get("c").unwrap().str(), "x: y");
    assert_eq!(doc.get("b").unwrap().get("d").unwrap().str(), "it's");
    let steps = doc.get("steps").unwrap().seq();
    assert_eq!(steps[0].get("name").unwrap().str(), "one");
    assert_eq!(
        steps[0].get("run").unwrap().str(),
        "echo a\n\n# kept\necho b\n"
    );
    assert_eq!(steps[1].str(), "plain");
    assert_eq!(doc.get("e").unwrap().str(), "z");
}

// --- running the action ------------------------------------------------------------------------

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Yaml {
    parse_yaml(&std::fs::read_to_string(root().join("action/action.yml")).unwrap())
}

fn temp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-verdict-action-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a run of the action left.
#[derive(Debug)]
struct Ran {
    /// The exit code of the step that ended the run (the last one, or the first that failed).
    code: i32,
    /// Standard output and error of every step.
    log: String,
    /// `$GITHUB_STEP_SUMMARY`.
    summary: String,
    /// `$GITHUB_OUTPUT` as name → value.
    outputs: BTreeMap<String, String>,
    /// Names of the steps that ran.
    steps: Vec<String>,
}

/// Fills `${{ … }}` in `text` from the inputs (their defaults when not given).
fn expand(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let value = if let Some(name) = expr.strip_prefix("inputs.") {
            inputs
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone()
        } else if expr == "github.action_path" {
            root().join("action").display().to_string()
        } else {
            panic!("an expression this runner does not know: {expr}")
        };
        out.push_str(&value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `if:` conditions of the form `inputs.NAME != 'VALUE'` or `inputs.NAME == 'VALUE'`.
fn condition(expr: &str, inputs: &BTreeMap<String, String>) -> bool {
    let (lhs, op, rhs) = if let Some((l, r)) = expr.split_once("!=") {
        (l, false, r)
    } else if let Some((l, r)) = expr.split_once("==") {
        (l, true, r)
    } else {
        panic!("a condition this runner does not know: {expr}");
    };
    let name = lhs.trim().strip_prefix("inputs.").expect("an input");
    let want = rhs.trim().trim_matches('\'');
    (inputs[name] == want) == op
}

/// Runs the action's steps with `given` inputs, in `dir`, with `path_first` first on `PATH`.
fn run_action(given: &[(&str, &str)], dir: &Path, path_first: &[&Path]) -> Ran {
    let doc = action();
    let mut inputs: BTreeMap<String, String> = doc
        .get("inputs")
        .unwrap()
        .map()
        .iter()
        .map(|(k, v)| {
            let default = v.get("default").map_or("", Yaml::str);
            (k.clone(), default.to_owned())
        })
        .collect();
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "the action has no input {k}");
        inputs.insert((*k).to_owned(), (*v).to_owned());
    }
    let summary = dir.join("summary.md");
    let output = dir.join("output.txt");
    let runner_temp = dir.join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .parent()
        .unwrap();
    let mut path: Vec<PathBuf> = path_first.iter().map(|p| p.to_path_buf()).collect();
    path.push(bin.to_path_buf());
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).unwrap();

    let mut ran = Ran {
        code: 0,
        log: String::new(),
        summary: String::new(),
        outputs: BTreeMap::new(),
        steps: Vec::new(),
    };
    let steps = doc.get("runs").unwrap().get("steps").unwrap().seq();
    for (n, step) in steps.iter().enumerate() {
        if let Some(cond) = step.get("if")
            && !condition(cond.str(), &inputs)
        {
            continue;
        }
        assert_eq!(step.get("shell").map(Yaml::str), Some("bash"));
        let script = dir.join(format!("step-{n}.sh"));
        std::fs::write(&script, step.get("run").unwrap().str()).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(root())
            .env("PATH", &path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output)
            .env("RUNNER_TEMP", &runner_temp)
            .env("NO_COLOR", "1");
        if let Some(env) = step.get("env") {
            for (k, v) in env.map() {
                cmd.env(k, expand(v.str(), &inputs));
            }
        }
        let out = cmd.output().unwrap();
        ran.log.push_str(&String::from_utf8_lossy(&out.stdout));
        ran.log.push_str(&String::from_utf8_lossy(&out.stderr));
        ran.steps
            .push(step.get("name").map_or("", Yaml::str).to_owned());
        ran.code = out.status.code().unwrap_or(-1);
        if ran.code != 0 {
            break;
        }
    }
    ran.summary = std::fs::read_to_string(&summary).unwrap_or_default();
    ran.outputs = std::fs::read_to_string(&output)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    ran
}

/// The built binary is on `PATH`: the install step is skipped.
const PREBUILT: (&str, &str) = ("install", "false");

#[test]
fn action_yml_is_a_composite_action_whose_scripts_take_inputs_from_the_environment() {
    let doc = action();
    assert!(!doc.get("name").unwrap().str().is_empty());
    assert!(!doc.get("description").unwrap().str().is_empty());
    assert_eq!(
        doc.get("runs").unwrap().get("using").unwrap().str(),
        "composite"
    );
    let inputs = doc.get("inputs").unwrap();
    for name in [
        "command", "files", "url", "junit", "args", "version", "install",
    ] {
        let input = inputs.get(name).unwrap_or_else(|| panic!("input {name}"));
        assert!(
            !input.get("description").unwrap().str().is_empty(),
            "{name}"
        );
    }
    assert_eq!(
        inputs.get("command").unwrap().get("default").unwrap().str(),
        "replay"
    );
    let outputs = doc.get("outputs").unwrap();
    assert_eq!(
        outputs
            .get("exit-code")
            .unwrap()
            .get("value")
            .unwrap()
            .str(),
        "${{ steps.run.outputs.exit-code }}"
    );
    let steps = doc.get("runs").unwrap().get("steps").unwrap().seq();
    assert!(
        steps
            .iter()
            .any(|s| s.get("id").map(Yaml::str) == Some("run"))
    );
    for step in steps {
        let run = step.get("run").unwrap().str();
        // No expression spliced into a script: inputs cannot inject shell.
        assert!(!run.contains("${{"), "{run}");
        assert_eq!(step.get("shell").unwrap().str(), "bash");
    }
}

#[test]
fn replay_on_testdata_writes_junit_and_the_summary_and_fails_the_job() {
    let dir = temp("replay");
    let junit = dir.join("reports/junit.xml");
    let ran = run_action(
        &[
            ("command", "replay"),
            // A glob and a plain path; bash expands the glob in the workspace.
            (
                "files",
                "testdata/har/connection_*.har testdata/har/batch_rows_0326.har",
            ),
            ("junit", junit.to_str().unwrap()),
            // Shell words with quotes, as a workflow author writes them.
            ("args", "--max-body-bytes '64MiB' --max-events unlimited"),
            PREBUILT,
        ],
        &dir,
        &[],
    );
    assert_eq!(
        ran.code, 1,
        "some exchanges incomplete: exit 1\n{}",
        ran.log
    );
    assert_eq!(
        ran.steps,
        ["Run mcp-verdict"],
        "the install step is skipped"
    );
    assert_eq!(ran.outputs["exit-code"], "1");
    assert!(
        ran.log.contains("::error title=mcp-verdict::"),
        "{}",
        ran.log
    );
    // The summary: a heading, one table per file, failures first, the exit code.
    let s = &ran.summary;
    assert!(s.starts_with("## mcp-verdict replay\n"), "{s}");
    let failed = s.find("### `testdata/har/connection_failed.har`").expect(s);
    let fine = s.find("### `testdata/har/batch_rows_0326.har`").expect(s);
    assert!(failed < fine, "files in the order given");
    assert!(s.contains("| ❌ CONNECTION_FAILED |"), "{s}");
    assert_eq!(s.matches("| # | method | status |").count(), 2, "{s}");
    assert!(
        s.contains("**7 exchanges, 6 complete, 1 incomplete**"),
        "{s}"
    );
    assert!(s.contains("Exit code 1: some exchanges incomplete."), "{s}");
    // The markdown file the step names is the same text.
    let printed = std::fs::read_to_string(&ran.outputs["summary"]).unwrap();
    assert!(s.contains(&printed));
    // JUnit: one test case per exchange, the failure counted.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains(r#"tests="7" failures="1""#), "{xml}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_of_complete_captures_passes() {
    let dir = temp("pass");
    let ran = run_action(
        &[
            ("command", "replay"),
            ("files", "testdata/har/batch_rows_0326.har"),
            ("junit", ""),
            PREBUILT,
        ],
        &dir,
        &[],
    );
    assert_eq!(ran.code, 0, "{}", ran.log);
    assert_eq!(ran.outputs["exit-code"], "0");
    assert!(
        ran.summary
            .contains("Exit code 0: every exchange complete.")
    );
    assert!(!ran.summary.contains("❌"), "{}", ran.summary);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn probe_against_a_live_server() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(mcp_verdict::faults::FaultServer::start("127.0.0.1:0"))
        .unwrap();
    let dir = temp("probe");
    let junit = dir.join("probe.xml");
    let url = server.url(None);
    let ran = run_action(
        &[
            ("command", "probe"),
            ("url", &url),
            ("junit", junit.to_str().unwrap()),
            ("args", "--timeout 10s"),
            PREBUILT,
        ],
        &dir,
        &[],
    );
    assert_eq!(ran.code, 0, "{}\n{}", ran.log, ran.summary);
    assert!(ran.summary.starts_with("## mcp-verdict probe\n"));
    assert!(
        ran.summary.contains(&format!("### `{url}`")),
        "{}",
        ran.summary
    );
    assert!(ran.summary.contains("| tools/list |"), "{}", ran.summary);
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .contains("<testsuites")
    );

    // The same server gone: no server is exit 2, and the job fails with it.
    drop(server);
    let ran = run_action(
        &[("command", "probe"), ("url", &url), ("junit", ""), PREBUILT],
        &dir,
        &[],
    );
    assert_ne!(ran.code, 0, "{}", ran.log);
    assert_eq!(ran.outputs["exit-code"], ran.code.to_string());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_inputs_fail_with_exit_2_and_a_reason() {
    let dir = temp("bad");
    for (given, why) in [
        (
            vec![("command", "replay"), ("files", "")],
            "needs the files input",
        ),
        (
            vec![("command", "probe"), ("url", "")],
            "needs the url input",
        ),
        (
            vec![("command", "soak"), ("url", "x")],
            "must be replay or probe",
        ),
    ] {
        let mut given = given;
        given.push(PREBUILT);
        let ran = run_action(&given, &dir, &[]);
        assert_eq!(ran.code, 2, "{given:?}: {}", ran.log);
        assert!(ran.log.contains(why), "{}", ran.log);
        assert_eq!(ran.outputs["exit-code"], "2");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_install_step_installs_this_checkout_or_the_version_asked() {
    let dir = temp("install");
    let fake = dir.join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    let calls = dir.join("cargo-calls.txt");
    let cargo = fake.join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\n", calls.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let files = ("files", "testdata/har/batch_rows_0326.har");
    let ran = run_action(&[files, ("junit", "")], &dir, &[&fake]);
    assert_eq!(ran.code, 0, "{}", ran.log);
    assert_eq!(ran.steps, ["Install mcp-verdict", "Run mcp-verdict"]);
    assert!(
        ran.log.contains("mcp-verdict 0.1.0"),
        "the step shows the version"
    );
    let ran = run_action(
        &[files, ("junit", ""), ("version", "0.1.0")],
        &dir,
        &[&fake],
    );
    assert_eq!(ran.code, 0, "{}", ran.log);
    let called = std::fs::read_to_string(&calls).unwrap();
    let action_dir = root().join("action");
    assert_eq!(
        called.lines().collect::<Vec<_>>(),
        [
            format!("install --locked --path {}/..", action_dir.display()),
            "install --locked mcp-verdict --version 0.1.0".to_owned(),
        ]
    );
    // `..` of the action's folder is the crate: `cargo install --path` finds Cargo.toml there.
    assert!(action_dir.join("../Cargo.toml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
