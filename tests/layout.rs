//! The module graph of `src/`, read from its `use` declarations and the paths named in code:
//!
//! - no import circle between files (a circle means neither file can be understood, tested or
//!   moved without the other, and it is how vocabulary ends up owned by behaviour);
//! - the binary's commands are siblings: none imports another, and the modules they share
//!   import none of them (so a command can be changed or removed alone);
//! - nothing imports from a crate root (`lib.rs`, `main.rs`): the root is the top;
//! - vocabulary (a module named `vocab`) imports only vocabulary, so it can sit under every
//!   layer without tying any two together;
//! - the top folders of `src/` (core, captures, adapters, tools) form no circle.
//!
//! This is a reader of the text, not the compiler: it resolves `crate::`, `super::`, `self::`,
//! child modules and `use` bindings (re-exports included, so `crate::verdict::X` reaches the
//! file behind `lib.rs`'s `use crate::core::verdict`), which is enough for this crate's style.
//! A parent module using its own children is ownership, not a dependency, and is not counted;
//! neither are `#[cfg(test)]` modules (a test may drive the whole crate).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path with its crate first: `["lib", "core", "verdict"]`, `["bin:mcp-verdict", "probe"]`.
type ModPath = Vec<String>;

#[derive(Clone, Debug, PartialEq)]
enum T {
    Ident(String),
    /// `::`
    Sep,
    P(char),
}

struct Tok {
    t: T,
    line: usize,
}

/// Tokens of Rust source with comments, strings, chars and lifetimes left out: what remains is
/// enough to find `mod`, `use` and paths.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1, &mut line);
        } else if ch == '\'' {
            i = skip_quote(&c, i);
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_prefix && (at(i) == '"' || (at(i) == '#' && matches!(at(i + 1), '"' | '#'))) {
                let mut hashes = 0;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                i = skip_raw(&c, i + 1, hashes, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_string(&c, i + 1, &mut line);
            } else if word == "b" && at(i) == '\'' {
                i = skip_quote(&c, i);
            } else if word == "r" && at(i) == '#' {
                i += 1; // a raw identifier: the word after `r#` follows as an identifier
            } else {
                out.push(Tok {
                    t: T::Ident(word),
                    line,
                });
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Tok { t: T::Sep, line });
            i += 2;
        } else {
            out.push(Tok { t: T::P(ch), line });
            i += 1;
        }
    }
    out
}

/// Past a `"…"` string whose body starts at `i`.
fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < c.len() && c[i] != '"' {
        if c[i] == '\\' {
            i += 1;
        }
        if c.get(i) == Some(&'\n') {
            *line += 1;
        }
        i += 1;
    }
    i + 1
}

/// Past a raw string whose body starts at `i`, closed by `"` and `hashes` `#`.
fn skip_raw(c: &[char], mut i: usize, hashes: usize, line: &mut usize) -> usize {
    while i < c.len() {
        if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        *line += usize::from(c[i] == '\n');
        i += 1;
    }
    i
}

/// Past a char literal or a lifetime starting with the `'` at `i`.
fn skip_quote(c: &[char], mut i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        i += 2;
        while i < c.len() && c[i] != '\'' {
            i += 1;
        }
        return i + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    i += 1; // a lifetime or label: its name is no path
    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
        i += 1;
    }
    i
}

#[derive(Default, Debug)]
struct Module {
    /// The file the module's text is in (inline modules share their parent's).
    file: String,
    children: BTreeSet<String>,
    /// Children declared under `#[cfg(test)]`.
    test_children: BTreeSet<String>,
    /// `use` bindings: the local name and the path as written.
    bindings: Vec<(String, Vec<String>, usize)>,
    /// `use …::*`: the module paths as written.
    globs: Vec<(Vec<String>, usize)>,
    /// Paths of two or more segments named in code.
    named: Vec<(Vec<String>, usize)>,
}

/// An import of one file by another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    /// `line: path`, the first place it is made.
    why: String,
}

struct Graph {
    modules: BTreeMap<ModPath, Module>,
}

/// The module path of a file under `src/` (`/`-separated).
fn module_of(rel: &str) -> Option<ModPath> {
    let rel = rel.strip_suffix(".rs")?;
    let parts: Vec<&str> = rel.split('/').collect();
    let (krate, rest) = match parts.as_slice() {
        ["bin", name] => (format!("bin:{name}"), &[][..]),
        ["bin", name, rest @ ..] => (format!("bin:{name}"), rest),
        rest => ("lib".to_owned(), rest),
    };
    let mut path = vec![krate];
    path.extend(rest.iter().map(|s| s.to_string()));
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) && path.len() > 1
    {
        path.pop();
    }
    Some(path)
}

impl Graph {
    fn new(files: &[(String, String)]) -> Graph {
        let mut modules: BTreeMap<ModPath, Module> = BTreeMap::new();
        for (rel, src) in files {
            let Some(path) = module_of(rel) else { continue };
            read_file(&mut modules, path, rel, src);
        }
        Graph { modules }
    }

    /// Whether `m` or a module it is inside is a `#[cfg(test)]` module.
    fn is_test(&self, m: &[String]) -> bool {
        (1..m.len()).any(|k| {
            self.modules
                .get(&m[..k])
                .is_some_and(|p| p.test_children.contains(&m[k]))
        })
    }

    /// The module a path names from module `from`: the module itself, or the one defining the
    /// item it ends in. `None` for other crates, std and local items.
    fn resolve(&self, from: &[String], path: &[String], depth: usize) -> Option<ModPath> {
        if depth > 24 || path.is_empty() {
            return None;
        }
        let (mut cur, rest): (ModPath, &[String]) = match path[0].as_str() {
            "crate" => (vec![from[0].clone()], &path[1..]),
            "self" => (from.to_vec(), &path[1..]),
            "super" => {
                let mut cur = from.to_vec();
                let mut k = 0;
                while path.get(k).map(String::as_str) == Some("super") {
                    if cur.len() > 1 {
                        cur.pop();
                    }
                    k += 1;
                }
                (cur, &path[k..])
            }
            _ => {
                let here = self.modules.get(from)?;
                if here.children.contains(&path[0]) {
                    let mut cur = from.to_vec();
                    cur.push(path[0].clone());
                    (cur, &path[1..])
                } else {
                    return self.through(from, path, depth).flatten();
                }
            }
        };
        for (i, seg) in rest.iter().enumerate() {
            let m = self.modules.get(&cur)?;
            if m.children.contains(seg) {
                cur.push(seg.clone());
            } else {
                // An item of `cur`, unless `cur` only brings it in from elsewhere.
                return self.through(&cur, &rest[i..], depth).unwrap_or(Some(cur));
            }
        }
        Some(cur)
    }

    /// `path[0]` is no child of module `m`: follow a `use` binding or glob of `m` that has it.
    /// `None` when none has it (an item of `m` itself, or unknown); `Some(None)` when it comes
    /// from another crate.
    fn through(&self, m: &[String], path: &[String], depth: usize) -> Option<Option<ModPath>> {
        let here = self.modules.get(m)?;
        if let Some((_, target, _)) = here.bindings.iter().find(|(n, ..)| *n == path[0]) {
            let mut full = target.clone();
            full.extend(path[1..].iter().cloned());
            return Some(self.resolve(m, &full, depth + 1));
        }
        for (glob, _) in &here.globs {
            let Some(g) = self.resolve(m, glob, depth + 1) else {
                continue;
            };
            let Some(gm) = self.modules.get(&g) else {
                continue;
            };
            if g.as_slice() != m
                && (gm.children.contains(&path[0]) || gm.bindings.iter().any(|b| b.0 == path[0]))
            {
                return Some(self.resolve(&g, path, depth + 1));
            }
        }
        None
    }

    /// Every import between two files, but not a parent's of its own children and not from a
    /// test module.
    fn edges(&self) -> BTreeSet<Edge> {
        let mut out: BTreeMap<(String, String), String> = BTreeMap::new();
        for (mpath, m) in &self.modules {
            if m.file.is_empty() || self.is_test(mpath) {
                continue;
            }
            let named = m.bindings.iter().map(|(_, p, l)| (p, *l));
            let named = named.chain(m.globs.iter().map(|(p, l)| (p, *l)));
            let named = named.chain(m.named.iter().map(|(p, l)| (p, *l)));
            for (path, line) in named {
                let Some(target) = self.resolve(mpath, path, 0) else {
                    continue;
                };
                if target.starts_with(mpath) {
                    continue; // a parent owns its children
                }
                let Some(to) = self.modules.get(&target).map(|t| t.file.clone()) else {
                    continue;
                };
                if to.is_empty() || to == m.file {
                    continue;
                }
                out.entry((m.file.clone(), to))
                    .or_insert_with(|| format!("{}:{line}: {}", m.file, path.join("::")));
            }
        }
        out.into_iter()
            .map(|((from, to), why)| Edge { from, to, why })
            .collect()
    }

    /// What is wrong with the graph, one line each (empty: nothing).
    fn problems(&self) -> Vec<String> {
        let edges = self.edges();
        let mut out = circle_problems("", &edges);
        let roots: BTreeSet<&str> = self
            .modules
            .iter()
            .filter(|(p, _)| p.len() == 1)
            .map(|(_, m)| m.file.as_str())
            .collect();
        for e in &edges {
            if roots.contains(e.to.as_str()) {
                out.push(format!(
                    "{} imports from the crate root ({})",
                    e.from, e.why
                ));
            }
        }
        // Vocabulary (a `vocab` folder or file) is a leaf: it names other words, nothing else.
        let vocab = |file: &str| {
            file.split('/')
                .any(|seg| seg == "vocab" || seg == "vocab.rs")
        };
        for e in &edges {
            if vocab(&e.from) && !vocab(&e.to) {
                out.push(format!(
                    "{} is vocabulary but imports {} ({})",
                    e.from, e.to, e.why
                ));
            }
        }
        // The layers (src/'s top folders: core, captures, adapters, tools) form no circle either.
        let layer = |file: &str| file.split_once('/').map(|(top, _)| top.to_owned());
        let mut layers: BTreeMap<(String, String), String> = BTreeMap::new();
        for e in &edges {
            if let (Some(a), Some(b)) = (layer(&e.from), layer(&e.to))
                && a != b
                && a != "bin"
                && b != "bin"
            {
                layers.entry((a, b)).or_insert_with(|| e.why.clone());
            }
        }
        let layers: BTreeSet<Edge> = layers
            .into_iter()
            .map(|((from, to), why)| Edge { from, to, why })
            .collect();
        out.extend(circle_problems("the folders ", &layers));
        out.extend(self.command_problems(&edges));
        out
    }

    /// The binary's commands: the modules `main.rs` hands work to (all it names but `args`,
    /// where the flags are defined). None may import another; the modules they share may
    /// import none.
    fn command_problems(&self, edges: &BTreeSet<Edge>) -> Vec<String> {
        let mut out = Vec::new();
        for (root, main) in self
            .modules
            .iter()
            .filter(|(p, _)| p[0].starts_with("bin:"))
        {
            if root.len() != 1 {
                continue;
            }
            let mut commands = BTreeSet::new();
            let uses = main.bindings.iter().map(|(_, p, _)| p);
            for path in uses.chain(main.named.iter().map(|(p, _)| p)) {
                if let Some(t) = self.resolve(root, path, 0)
                    && t.len() > 1
                    && t[1] != "args"
                {
                    commands.insert(t[1].clone());
                }
            }
            let top = |file: &str| -> Option<String> {
                let m = module_of(file)?;
                (m[0] == root[0] && m.len() > 1).then(|| m[1].clone())
            };
            for e in edges {
                let (Some(a), Some(b)) = (top(&e.from), top(&e.to)) else {
                    continue;
                };
                if a == b || !commands.contains(&b) {
                    continue;
                }
                if commands.contains(&a) {
                    out.push(format!("command `{a}` imports command `{b}` ({})", e.why));
                } else {
                    out.push(format!(
                        "`{a}`, shared by the commands, imports command `{b}` ({})",
                        e.why
                    ));
                }
            }
        }
        out
    }
}

/// One line per circle among `edges`, with the imports that close it.
fn circle_problems(what: &str, edges: &BTreeSet<Edge>) -> Vec<String> {
    circles(edges)
        .into_iter()
        .map(|circle| {
            let inside: Vec<String> = edges
                .iter()
                .filter(|e| circle.contains(&e.from) && circle.contains(&e.to))
                .map(|e| format!("    {} -> {}  ({})", e.from, e.to, e.why))
                .collect();
            format!(
                "import circle between {what}{}:\n{}",
                circle.join(", "),
                inside.join("\n")
            )
        })
        .collect()
}

/// The strongly connected sets of two or more nodes (Tarjan).
fn circles(edges: &BTreeSet<Edge>) -> Vec<Vec<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in edges {
        adj.entry(&e.from).or_default().push(&e.to);
        adj.entry(&e.to).or_default();
    }
    struct State<'a> {
        adj: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn strong<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for &w in &s.adj[v] {
            if !s.index.contains_key(w) {
                strong(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        adj: &adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in adj.keys() {
        if !s.index.contains_key(v) {
            strong(&mut s, v);
        }
    }
    s.out
}

/// Reads one file's modules, bindings and paths into `modules`.
fn read_file(modules: &mut BTreeMap<ModPath, Module>, path: ModPath, rel: &str, src: &str) {
    let toks = tokens(src);
    modules.entry(path.clone()).or_default().file = rel.to_owned();
    // (module, brace depth at which it closes)
    let mut scopes: Vec<(ModPath, usize)> = vec![(path, 0)];
    let (mut depth, mut test_attr, mut i) = (0usize, false, 0usize);
    let ident = |k: usize| match toks.get(k).map(|t| &t.t) {
        Some(T::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let is = |k: usize, t: T| toks.get(k).map(|x| &x.t) == Some(&t);
    while i < toks.len() {
        let cur = scopes.last().unwrap().0.clone();
        match &toks[i].t {
            T::P('#') => {
                let open = if is(i + 1, T::P('!')) { i + 2 } else { i + 1 };
                if is(open, T::P('[')) {
                    let (mut j, mut nest, mut words) = (open, 0, Vec::new());
                    while j < toks.len() {
                        match &toks[j].t {
                            T::P('[') => nest += 1,
                            T::P(']') => {
                                nest -= 1;
                                if nest == 0 {
                                    break;
                                }
                            }
                            T::Ident(w) => words.push(w.as_str()),
                            _ => {}
                        }
                        j += 1;
                    }
                    test_attr |= words == ["cfg", "test"];
                    i = j + 1;
                    continue;
                }
            }
            T::Ident(w) if w == "pub" && is(i + 1, T::P('(')) => {
                while i < toks.len() && !is(i, T::P(')')) {
                    i += 1; // `pub(in crate::x)` names no dependency
                }
            }
            T::Ident(w) if w == "mod" && ident(i + 1).is_some() => {
                let name = ident(i + 1).unwrap().to_owned();
                let m = modules.entry(cur.clone()).or_default();
                m.children.insert(name.clone());
                if test_attr {
                    m.test_children.insert(name.clone());
                }
                test_attr = false;
                if is(i + 2, T::P('{')) {
                    depth += 1;
                    let mut inner = cur.clone();
                    inner.push(name);
                    modules.entry(inner.clone()).or_default().file = rel.to_owned();
                    scopes.push((inner, depth));
                }
                i += 3;
                continue;
            }
            T::Ident(w) if w == "use" && !is(i + 1, T::P('<')) => {
                let line = toks[i].line;
                let mut j = i + 1;
                while j < toks.len() && !is(j, T::P(';')) {
                    j += 1;
                }
                let tree: Vec<T> = toks[i + 1..j].iter().map(|t| t.t.clone()).collect();
                let m = modules.entry(cur.clone()).or_default();
                let mut pos = 0;
                use_tree(&tree, &mut pos, Vec::new(), m, line);
                test_attr = false;
                i = j + 1;
                continue;
            }
            T::Ident(_) if !is(i.wrapping_sub(1), T::Sep) || i == 0 => {
                let line = toks[i].line;
                let mut segs = vec![ident(i).unwrap().to_owned()];
                let mut j = i + 1;
                while is(j, T::Sep) && ident(j + 1).is_some() {
                    segs.push(ident(j + 1).unwrap().to_owned());
                    j += 2;
                }
                if segs.len() > 1 {
                    modules
                        .entry(cur.clone())
                        .or_default()
                        .named
                        .push((segs, line));
                }
                i = j;
                continue;
            }
            T::P('{') => {
                depth += 1;
                test_attr = false;
            }
            T::P('}') => {
                if scopes.len() > 1 && scopes.last().unwrap().1 == depth {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
                test_attr = false;
            }
            T::P(';') => test_attr = false,
            _ => {}
        }
        i += 1;
    }
}

/// One `use` tree (after `use`, up to `;`) into `m`'s bindings and globs.
fn use_tree(t: &[T], pos: &mut usize, mut path: Vec<String>, m: &mut Module, line: usize) {
    if t.get(*pos) == Some(&T::Sep) {
        *pos += 1;
    }
    loop {
        match t.get(*pos) {
            Some(T::Ident(s)) => {
                path.push(s.clone());
                *pos += 1;
                if t.get(*pos) == Some(&T::Sep) {
                    *pos += 1;
                    continue;
                }
                let name = if t.get(*pos) == Some(&T::Ident("as".into())) {
                    *pos += 2;
                    match t.get(*pos - 1) {
                        Some(T::Ident(alias)) => alias.clone(),
                        _ => "_".into(),
                    }
                } else {
                    path.last().unwrap().clone()
                };
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                }
                let name = if name == "self" {
                    path.last().cloned().unwrap_or_default()
                } else {
                    name
                };
                m.bindings.push((name, path, line));
                return;
            }
            Some(T::P('*')) => {
                *pos += 1;
                m.globs.push((path, line));
                return;
            }
            Some(T::P('{')) => {
                *pos += 1;
                loop {
                    match t.get(*pos) {
                        Some(T::P('}')) | None => {
                            *pos += 1;
                            return;
                        }
                        Some(T::P(',')) => *pos += 1,
                        _ => use_tree(t, pos, path.clone(), m, line),
                    }
                }
            }
            _ => {
                *pos += 1;
                return;
            }
        }
    }
}

/// Every `.rs` file under `dir`, as (path relative to `dir` with `/`, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(dir).unwrap();
                let rel: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into()).collect();
                out.push((rel.join("/"), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn src_has_no_import_circle_and_commands_are_siblings() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = Graph::new(&sources(&src));
    // The reader must see the crate, not an empty graph.
    let edges = graph.edges();
    assert!(edges.len() > 150, "only {} imports found", edges.len());
    assert!(
        edges
            .iter()
            .any(|e| e.from == "core/session.rs" && e.to.ends_with("/rules.rs")),
        "the reader no longer follows lib.rs's short paths (crate::rules)"
    );
    let problems = graph.problems();
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// The checks on small made-up trees: each must find what it is for.
#[test]
fn the_checks_find_what_they_are_for() {
    let tree = |files: &[(&str, &str)]| {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        Graph::new(&files).problems()
    };
    // Two files importing each other, one through a short path the root gives.
    let p = tree(&[
        ("lib.rs", "mod core; use crate::core::{a, b};"),
        ("core/mod.rs", "pub mod a; pub mod b;"),
        ("core/a.rs", "use crate::b::B; pub struct A;"),
        (
            "core/b.rs",
            "pub struct B; fn f() -> crate::a::A { todo!() }",
        ),
    ]);
    assert!(
        p.len() == 1 && p[0].contains("core/a.rs, core/b.rs"),
        "{p:?}"
    );
    // A re-export does not hide who defines the item; a test module and a parent do not count.
    let p = tree(&[
        ("lib.rs", "mod x; mod y; pub use x::X;"),
        (
            "x.rs",
            "pub struct X; #[cfg(test)] mod tests { use crate::y::Y; }",
        ),
        (
            "y.rs",
            "/* crate::x::X */ pub struct Y(crate::X); const S: &str = \"crate::x\";",
        ),
    ]);
    assert!(p.is_empty(), "{p:?}");
    let p = tree(&[
        ("lib.rs", "mod x; mod y; pub use x::X;"),
        ("x.rs", "pub struct X; fn f(_: super::y::Y) {}"),
        ("y.rs", "pub struct Y(crate::X);"),
    ]);
    assert!(p.len() == 1 && p[0].contains("x.rs, y.rs"), "{p:?}");
    // Vocabulary that reaches into behaviour, and two layers that lean on each other.
    let p = tree(&[
        ("lib.rs", "mod core; mod tools;"),
        ("core/mod.rs", "pub mod vocab; pub mod judge;"),
        ("core/vocab/mod.rs", "pub mod words;"),
        (
            "core/vocab/words.rs",
            "use crate::core::judge::judge; pub enum Word {}",
        ),
        ("core/judge.rs", "pub fn judge() { crate::tools::run() }"),
        (
            "tools/mod.rs",
            "pub fn run() {} pub fn words() -> crate::core::vocab::words::Word { todo!() }",
        ),
    ]);
    let want = [
        "core/vocab/words.rs is vocabulary but imports core/judge.rs",
        "import circle between the folders core, tools",
    ];
    for w in want {
        assert!(p.iter().any(|l| l.contains(w)), "no {w:?} in {p:?}");
    }
    // Commands importing each other, a shared module importing a command, and the root.
    let p = tree(&[
        (
            "bin/t/main.rs",
            "mod args; mod cli; mod one; mod two; fn main() { match args::parse() { _ => one::run() } two::run(); }",
        ),
        ("bin/t/args.rs", "pub fn parse() {}"),
        ("bin/t/cli.rs", "pub fn help() { crate::two::run() }"),
        (
            "bin/t/one.rs",
            "use crate::two::run as other; pub fn run() { other(); crate::cli::help() }",
        ),
        ("bin/t/two.rs", "pub fn run() { let _ = crate::Flag; }"),
    ]);
    let want = [
        "bin/t/two.rs imports from the crate root",
        "command `one` imports command `two`",
        "`cli`, shared by the commands, imports command `two`",
    ];
    for w in want {
        assert!(p.iter().any(|l| l.contains(w)), "no {w:?} in {p:?}");
    }
}
