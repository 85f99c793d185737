//! The README is the guide a newcomer follows (issue 33): it must stay short, keep the quick
//! start and install commands that `.ci/run` and users type, show output the binary really
//! prints, and link only to pages and headings that exist. The reference lives in `docs/`.
//!
//! The markdown reading here is deliberately small (fences, inline links, headings); the last
//! tests run it on broken input, so a check that cannot fail would show.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The README's size limit in bytes (issue 33: "at most 30 KB").
const README_LIMIT: usize = 30_000;
/// The quick start: one command runs the main job on built-in data, one runs the tests. The
/// second is also what `.ci/run` runs ("the README's test command").
const QUICK_START: [&str; 2] = [
    "cargo run --release -- demo",
    "cargo test --locked --features rmcp",
];
/// How the `mcp-verdict` command gets onto a machine: from the clone, and once published.
const INSTALL: [&str; 2] = [
    "cargo install --locked --path .",
    "cargo install mcp-verdict --locked",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn readme() -> String {
    read(&root().join("README.md"))
}

/// The markdown pages whose links are checked: the README and every page in `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "docs/ holds no .md page");
    pages.extend(docs);
    pages
}

// ---- a small markdown reader ----------------------------------------------------------------

/// A fenced code block: its info string (`sh`, `text`, `rust`) and its lines.
struct Fence {
    info: String,
    lines: Vec<String>,
}

/// Each line of `md` with whether it lies inside a fenced code block (fence lines count as
/// inside).
fn lines_with_fence_state(md: &str) -> Vec<(&str, bool)> {
    let mut inside = false;
    md.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                inside = !inside;
                (line, true)
            } else {
                (line, inside)
            }
        })
        .collect()
}

fn fences(md: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut current: Option<Fence> = None;
    for line in md.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match current.take() {
                Some(fence) => out.push(fence),
                None => {
                    current = Some(Fence {
                        info: info.trim().to_string(),
                        lines: Vec::new(),
                    })
                }
            }
        } else if let Some(fence) = current.as_mut() {
            fence.lines.push(line.to_string());
        }
    }
    assert!(current.is_none(), "an unclosed code fence");
    out
}

/// The section under the heading whose text is `title` (any level), up to the next heading of
/// the same or a higher level; its subsections are included.
fn section<'a>(md: &'a str, title: &str) -> Option<&'a str> {
    let mut start = None;
    let mut level = 0;
    let mut offset = 0;
    for (line, in_fence) in lines_with_fence_state(md) {
        if !in_fence && let Some((l, text)) = heading(line) {
            match start {
                None if text == title => {
                    start = Some(offset + line.len() + 1);
                    level = l;
                }
                Some(s) if l <= level => return Some(&md[s..offset]),
                _ => {}
            }
        }
        offset += line.len() + 1;
    }
    start.map(|s| &md[s.min(md.len())..])
}

/// `## Text` → (2, "Text").
fn heading(line: &str) -> Option<(usize, &str)> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some((hashes, line[hashes..].trim()))
    } else {
        None
    }
}

/// GitHub's anchor for a heading: lower case; letters, digits, `-` and `_` kept, spaces become
/// `-`, everything else (backticks, brackets, punctuation) dropped.
fn slug(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a page offers, with GitHub's `-1`, `-2` suffixes for repeated headings.
fn anchors(md: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (line, in_fence) in lines_with_fence_state(md) {
        if in_fence {
            continue;
        }
        if let Some((_, text)) = heading(line) {
            let base = slug(text);
            let mut anchor = base.clone();
            let mut n = 0;
            while seen.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            seen.insert(anchor);
        }
    }
    seen
}

/// The line with its code spans (`` `…` ``) removed: a link written inside code is no link. A
/// code span may go on over the next lines of its paragraph: `in_code` carries that over.
fn without_code_spans(line: &str, in_code: &mut bool) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c == '`' {
            *in_code = !*in_code;
        } else if !*in_code {
            out.push(c);
        }
    }
    out
}

/// Every link target of a page, with its line number: inline links and images
/// (`[text](target)`, `![alt](target "title")`) and reference definitions (`[id]: target`),
/// outside code.
fn links(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (n, (line, in_fence)) in lines_with_fence_state(md).into_iter().enumerate() {
        if in_fence || line.trim().is_empty() {
            in_code = false;
            continue;
        }
        let line = without_code_spans(line, &mut in_code);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n + 1, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
        if let Some(def) = line.trim_start().strip_prefix('[')
            && let Some((_, target)) = def.split_once("]:")
        {
            out.push((n + 1, target.trim().to_string()));
        }
    }
    out
}

/// What is wrong with the relative links of `page` (at `path`): a file that does not exist, or
/// an anchor no heading of the linked page (or of this page, for `#anchor`) gives.
fn broken_links(path: &Path, page: &str) -> Vec<String> {
    let dir = path.parent().unwrap();
    let mut errors = Vec::new();
    for (line, target) in links(page) {
        let external = ["http://", "https://", "mailto:"]
            .iter()
            .any(|s| target.starts_with(s));
        if external || target.is_empty() {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let at = format!("{}:{line}: `{target}`", path.display());
        // `#anchor` alone is a heading of this page.
        let (linked, text) = if file.is_empty() {
            (path.to_path_buf(), Some(page.to_string()))
        } else {
            let linked = dir.join(file);
            if !linked.exists() {
                errors.push(format!("{at}: no such file {}", linked.display()));
                continue;
            }
            let is_markdown = linked.extension().is_some_and(|x| x == "md");
            let text = is_markdown.then(|| read(&linked));
            (linked, text)
        };
        if let (Some(anchor), Some(text)) = (anchor, text)
            && !anchors(&text).contains(anchor)
        {
            errors.push(format!(
                "{at}: no heading in {} gives #{anchor}",
                linked.display()
            ));
        }
    }
    errors
}

/// Whether `actual` output is shown by `sample`: its lines in order, a line `…` standing for any
/// number of left-out lines; without a `…` at the end the sample shows the output to its end.
fn shows(sample: &[String], actual: &[String]) -> Result<(), String> {
    let mut pos = 0;
    let mut gap = false;
    for expected in sample {
        if expected == "…" {
            gap = true;
            continue;
        }
        let found = if gap {
            actual[pos..]
                .iter()
                .position(|a| a == expected)
                .map(|i| pos + i)
        } else {
            (actual.get(pos) == Some(expected)).then_some(pos)
        };
        match found {
            Some(i) => pos = i + 1,
            None => {
                return Err(format!(
                    "the sample line {expected:?} is not what the binary prints there \
                     (next line printed: {:?})",
                    actual.get(pos)
                ));
            }
        }
        gap = false;
    }
    if !gap && pos < actual.len() {
        return Err(format!(
            "the binary prints more after the sample's last line: {:?}",
            actual[pos]
        ));
    }
    Ok(())
}

/// The lines of `text` without trailing spaces and trailing blank lines.
fn trimmed_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

// ---- the README's promises ----------------------------------------------------------------

#[test]
fn readme_stays_under_the_size_limit() {
    let size = readme().len();
    assert!(
        size <= README_LIMIT,
        "README.md is {size} bytes, over the limit of {README_LIMIT}: move reference material \
         into docs/ and link to it"
    );
}

/// The first column of the README table whose header row starts with `| {first} |`.
fn table_keys(md: &str, first: &str) -> Vec<String> {
    let header = format!("| {first} |");
    let mut rows = md.lines().skip_while(|l| !l.starts_with(&header)).skip(2);
    std::iter::from_fn(|| rows.next().filter(|l| l.starts_with('|')))
        .filter_map(|l| l.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_owned())
        .collect()
}

#[test]
fn the_verdict_tables_list_every_layer_and_advice() {
    let md = readme();
    // Each vocabulary once, in any order (the README lists layers in judging order).
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let layers = sorted(
        mcp_verdict::Layer::ALL
            .iter()
            .map(|l| l.to_string())
            .collect(),
    );
    let advice = sorted(
        mcp_verdict::Advice::ALL
            .iter()
            .map(|a| a.to_string())
            .collect(),
    );
    assert_eq!(
        sorted(table_keys(&md, "layer")),
        layers,
        "the README's layer table"
    );
    assert_eq!(
        sorted(table_keys(&md, "retry advice")),
        advice,
        "the README's advice table"
    );
    for word in [
        "status_origin",
        "origin_reason",
        "task_status",
        "sse.buffered",
        "sse.idle_cut",
    ] {
        assert!(
            md.contains(&format!("`{word}`")),
            "the README never names {word}"
        );
    }
    for rule in mcp_verdict::Rule::ALL
        .iter()
        .filter(|r| r.id().starts_with("auth."))
    {
        assert!(
            md.contains(&format!("`{}`", rule.id())),
            "the README never names {}",
            rule.id()
        );
    }
}

/// The table of what this round added: every row is a real rule id (from the catalogue) or a
/// field the verdict or call JSON carries, and each rule and field the 2026-07-28, tasks,
/// intermediary and auth work introduced has a row.
#[test]
fn the_added_vocabulary_table_is_real_and_complete() {
    let md = readme();
    let rows = table_keys(&md, "field or rule");
    let rules: Vec<&str> = mcp_verdict::Rule::ALL.iter().map(|r| r.id()).collect();
    // The keys of a verdict line and of a call line, as the binary writes them.
    let mut keys: Vec<String> = Vec::new();
    for extra in [&[][..], &["--calls"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args([
                "replay",
                "testdata/har/sse_progress_then_final.har",
                "--format",
                "jsonl",
            ])
            .args(extra)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout);
        let first: serde_json::Value =
            serde_json::from_str(line.lines().next().expect("a line")).unwrap();
        keys.extend(first.as_object().unwrap().keys().cloned());
    }
    for row in &rows {
        if row.contains('.') {
            assert!(rules.contains(&row.as_str()), "{row} is not a rule id");
        } else {
            assert!(
                keys.contains(row),
                "{row} is no field of a verdict or call line"
            );
        }
    }
    let introduced = [
        "task_status",
        "status_origin",
        "origin_reason",
        "client_error",
        "auth_step",
        "request.removed_method",
        "jsonrpc.retired_code",
        "jsonrpc.reserved_code",
        "request.fallback_on_transient_error",
        "server.discover_version_refused",
        "call.retry_too_soon",
        "call.resent_after_complete",
        "session.request_after_delete",
    ];
    for word in introduced {
        assert!(rows.iter().any(|r| r == word), "no row for {word}");
    }
    for rule in rules.iter().filter(|r| r.starts_with("auth.")) {
        assert!(rows.iter().any(|r| r == rule), "no row for {rule}");
    }
}

#[test]
fn quick_start_is_two_commands_and_install_follows() {
    let readme = readme();
    let quick = section(&readme, "Quick start").expect("a `## Quick start` section");
    let blocks: Vec<Fence> = fences(quick)
        .into_iter()
        .filter(|f| f.info == "sh")
        .collect();
    let commands = |fence: &Fence| -> Vec<String> {
        fence
            .lines
            .iter()
            .map(|l| l.split(" #").next().unwrap().trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let first = blocks.first().expect("a sh block in the quick start");
    assert_eq!(
        commands(first),
        QUICK_START,
        "the quick start's first block must be exactly the two commands"
    );
    let all: Vec<String> = blocks.iter().flat_map(commands).collect();
    for line in INSTALL {
        assert!(
            all.iter().any(|c| c == line),
            "the quick start does not show the install command `{line}` in a sh block"
        );
    }
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.lines().any(|l| l.trim() == QUICK_START[1]),
        ".ci/run no longer runs the README's test command `{}`",
        QUICK_START[1]
    );
}

#[test]
fn relative_links_point_at_files_and_headings_that_exist() {
    let errors: Vec<String> = pages()
        .iter()
        .flat_map(|p| broken_links(p, &read(p)))
        .collect();
    assert!(errors.is_empty(), "broken links:\n{}", errors.join("\n"));
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let readme = readme();
    let linked: HashSet<String> = links(&readme)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap().to_string())
        .collect();
    for page in pages().iter().skip(1) {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(linked.contains(&name), "README.md does not link to {name}");
    }
}

/// The sample near the top of the README is what the binary prints: each `$ mcp-verdict …`
/// line is run from the crate root and its output compared with the lines shown.
#[cfg(feature = "cli")]
#[test]
fn sample_output_is_what_the_binary_prints() {
    let readme = readme();
    let top = &readme[..readme.find("## Quick start").expect("a quick start")];
    let sample = fences(top)
        .into_iter()
        .find(|f| f.info == "text")
        .expect("a ```text sample of terminal output before the quick start");
    let mut runs: Vec<(String, Vec<String>)> = Vec::new();
    for line in &sample.lines {
        if let Some(command) = line.strip_prefix("$ ") {
            runs.push((command.to_string(), Vec::new()));
        } else {
            let (_, shown) = runs.last_mut().expect("the sample starts with a `$ ` line");
            shown.push(line.trim_end().to_string());
        }
    }
    assert!(!runs.is_empty(), "the sample shows no command");
    for (command, mut shown) in runs {
        while shown.last().is_some_and(|l| l.is_empty()) {
            shown.pop();
        }
        let mut words = command.split_whitespace();
        assert_eq!(
            words.next(),
            Some("mcp-verdict"),
            "sample command `{command}`"
        );
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(words)
            .current_dir(root())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let printed = trimmed_lines(&String::from_utf8_lossy(&output.stdout));
        if let Err(e) = shows(&shown, &printed) {
            panic!(
                "README sample `$ {command}`: {e}\nThe binary printed:\n{}",
                printed.join("\n")
            );
        }
    }
}

// ---- the checks can fail ----------------------------------------------------------------------

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Quick start"), "quick-start");
    assert_eq!(slug("Logical calls (`--calls`)"), "logical-calls---calls");
    assert_eq!(
        slug("Reports: HTML, JUnit, OpenTelemetry"),
        "reports-html-junit-opentelemetry"
    );
    assert_eq!(
        slug("Watch any client: the proxy"),
        "watch-any-client-the-proxy"
    );
    let twice = anchors("# A\n## Flags\n## Flags\n```sh\n# not a heading\n```\n");
    let expected: HashSet<String> = ["a", "flags", "flags-1"].map(String::from).into();
    assert_eq!(twice, expected);
}

#[test]
fn broken_links_are_found_and_code_is_not_read_as_links() {
    let dir = root().join("docs");
    let page = "# Page\n\n## Here\n\n[ok](../README.md#quick-start) [self](#here) \
                [web](https://example.com/x)\n[gone](nowhere.md) [bad anchor](../README.md#no-such)\n\
                [bad self](#elsewhere) `[code](nowhere.md)` and `code over\n[two](nowhere.md) \
                lines`\n\n```sh\n[fenced](nowhere.md)\n```\n[ref]: missing/page.md\n";
    let errors = broken_links(&dir.join("page.md"), page);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    for broken in ["nowhere.md`", "#no-such", "#elsewhere", "missing/page.md"] {
        assert!(
            errors.iter().any(|e| e.contains(broken)),
            "{broken} not found in {errors:#?}"
        );
    }
}

#[test]
fn a_sample_that_differs_from_the_output_is_refused() {
    let lines = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    let printed = lines("a\nb\nc\nd");
    assert!(shows(&lines("a\nb\nc\nd"), &printed).is_ok());
    assert!(shows(&lines("a\n…\nd"), &printed).is_ok());
    assert!(shows(&lines("a\nb\n…"), &printed).is_ok());
    assert!(
        shows(&lines("a\nc\nd"), &printed).is_err(),
        "a left-out line needs `…`"
    );
    assert!(
        shows(&lines("a\nb\nc"), &printed).is_err(),
        "a cut end needs `…`"
    );
    assert!(
        shows(&lines("a\n…\nx"), &printed).is_err(),
        "a line the binary never prints"
    );
}

#[test]
fn sections_end_at_the_next_heading_of_their_level() {
    let md = "# T\n## Quick start\nx\n### Install\ny\n## Next\nz\n";
    assert_eq!(section(md, "Quick start"), Some("x\n### Install\ny\n"));
    assert_eq!(section(md, "Next"), Some("z\n"));
    assert_eq!(section(md, "Missing"), None);
}
