//! The docs name only what exists.
//!
//! `ARCHITECTURE.md` names crates and modules instead of linking them, so nothing else
//! notices when a move leaves a name behind. These tests read it from the repository
//! and check every path it names in backticks: a `crates/...` path must be a file or
//! directory of the tree, and a module path `memchan_foo::bar::baz` must resolve to
//! `crates/memchan-foo/src/bar.rs`, `bar/mod.rs` or `bar/`, or to a `mod bar` (or, for
//! its last segment, a `fn` or `macro_rules!`) in the parent module's file. They also
//! check that every relative Markdown link in `README.md`, `ARCHITECTURE.md` and
//! `docs/**/*.md` points at a file or directory that exists.
//!
//! A failure lists every dangling name at once, with the file it came from.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `crates/memchan`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The text outside fenced code blocks (diagrams and examples are not names).
fn prose(md: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Every inline code span of `md`'s prose.
fn code_spans(md: &str) -> Vec<String> {
    prose(md)
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The `crates/...` paths in one code span.
fn crate_paths(span: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = span;
    while let Some(i) = rest.find("crates/") {
        let before = rest[..i].chars().next_back();
        let tail = &rest[i..];
        let end = tail.find(|c| !is_path_char(c)).unwrap_or(tail.len());
        if before.is_none_or(|c| !is_path_char(c)) {
            found.push(tail[..end].trim_end_matches(['.', '/']).to_owned());
        }
        rest = &tail[end..];
    }
    found
}

/// The module paths (`memchan_foo::bar...`, at least one `::`) in one code span.
fn module_paths(span: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = span;
    while let Some(i) = rest.find("memchan") {
        let before = rest[..i].chars().next_back();
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(is_ident_char(c) || c == ':'))
            .unwrap_or(tail.len());
        let path = &tail[..end];
        if before.is_none_or(|c| !is_ident_char(c)) && path.contains("::") {
            found.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
        rest = &tail[end.max(1)..];
    }
    found
}

/// Whether `file` declares `mod name` (inline or not), or, when `item` holds, a
/// function or macro of that name.
fn declares(file: &Path, name: &str, item: bool) -> bool {
    let Ok(text) = fs::read_to_string(file) else {
        return false;
    };
    let has = |keyword: &str| {
        text.match_indices(keyword).any(|(i, _)| {
            let after = &text[i + keyword.len()..];
            after.starts_with(name) && !after[name.len()..].starts_with(is_ident_char)
        })
    };
    has("mod ") || (item && (has("fn ") || has("macro_rules! ")))
}

/// Why the module path `segments` (crate first) does not resolve, if it does not.
fn check_module(root: &Path, segments: &[String]) -> Option<String> {
    let krate = segments[0].replace('_', "-");
    let src = root.join("crates").join(&krate).join("src");
    if !src.is_dir() {
        return Some(format!("no crate `crates/{krate}`"));
    }
    let mut file = src.join("lib.rs");
    if !file.is_file() {
        file = src.join("main.rs");
    }
    let mut dir = src;
    for (k, seg) in segments.iter().enumerate().skip(1) {
        // Types, constants and macros end the module part of a path.
        if !seg.starts_with(|c: char| c.is_ascii_lowercase()) {
            return None;
        }
        let last = k + 1 == segments.len();
        let as_file = dir.join(format!("{seg}.rs"));
        let as_mod = dir.join(seg).join("mod.rs");
        if as_file.is_file() {
            file = as_file;
        } else if as_mod.is_file() {
            file = as_mod;
        } else if dir.join(seg).is_dir() || declares(&file, seg, last) {
            // A directory of modules, an inline module or an item: what lies below it
            // is not checked further.
            return None;
        } else {
            return Some(format!("no module `{seg}` in {}", dir.display()));
        }
        dir = dir.join(seg);
    }
    None
}

#[test]
fn architecture_names_only_paths_that_exist() {
    let root = root();
    let doc = read(&root.join("ARCHITECTURE.md"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for span in code_spans(&doc) {
        for path in crate_paths(&span) {
            checked += 1;
            if !root.join(&path).exists() {
                missing.push(format!("`{path}`: no such file or directory"));
            }
        }
        for segments in module_paths(&span) {
            checked += 1;
            if let Some(why) = check_module(&root, &segments) {
                missing.push(format!("`{}`: {why}", segments.join("::")));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        checked > 0,
        "ARCHITECTURE.md names no paths: is the parser right?"
    );
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

/// Every Markdown file the links check covers: the two top-level docs and `docs/`.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The targets of the inline links `[text](target)` in `md`'s prose.
fn link_targets(md: &str) -> Vec<String> {
    let text = prose(md);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("](") {
        let tail = &rest[i + 2..];
        let Some(end) = tail.find(')') else { break };
        let target = tail[..end].split_whitespace().next().unwrap_or("");
        found.push(target.to_owned());
        rest = &tail[end..];
    }
    found
}

#[test]
fn markdown_links_point_at_files_that_exist() {
    let root = root();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in markdown_files(&root) {
        let base = file.parent().expect("a file has a directory");
        for target in link_targets(&read(&file)) {
            let external = ["http://", "https://", "mailto:"]
                .iter()
                .any(|p| target.starts_with(p));
            let path = target.split('#').next().unwrap_or("");
            if external || path.is_empty() {
                continue;
            }
            checked += 1;
            if !base.join(path).exists() {
                let shown = file.strip_prefix(&root).unwrap_or(&file);
                missing.push(format!("{}: ({target})", shown.display()));
            }
        }
    }
    assert!(checked > 0, "no relative links found: is the parser right?");
    assert!(
        missing.is_empty(),
        "Markdown links to files that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_parsers_find_what_they_should() {
    let md = "a `crates/memchan-core/src/order.rs` and `memchan_core::order::OrderPoint`\n\
              ```\n`crates/not-a-name` in a diagram\n```\n\
              [a link](docs/spec.md#targets), [web](https://example.org), [here](#x)\n";
    let spans = code_spans(md);
    assert_eq!(crate_paths(&spans[0]), ["crates/memchan-core/src/order.rs"]);
    assert_eq!(
        module_paths(&spans[1]),
        [["memchan_core", "order", "OrderPoint"]]
    );
    assert_eq!(spans.len(), 2, "fenced blocks are skipped: {spans:?}");
    assert_eq!(
        link_targets(md),
        ["docs/spec.md#targets", "https://example.org", "#x"]
    );
    let root = root();
    let path = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        check_module(&root, &path("memchan_core::order::OrderPoint")),
        None
    );
    assert_eq!(check_module(&root, &path("memchan_core::transport")), None);
    assert!(check_module(&root, &path("memchan_core::no_such_module")).is_some());
    assert!(check_module(&root, &path("memchan_no_such_crate::x")).is_some());
}
