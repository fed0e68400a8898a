//! The source tree's layering, kept by a test (issue 13). Each folder of `src/` is a stage of
//! the pipeline, and stages depend downward only:
//!
//! `cli` -> `run` -> `ask` -> `record` -> `policy` -> `judge` -> `model`, `text`
//!
//! `commands` may use any stage; no stage uses `commands`. The judge and the shared vocabulary
//! (`model`, `text`) are pure: no files, no environment, no clock, no threads, no processes, no
//! terminal. This test reads every `crate::` path of every file under `src/` (not only `use`
//! lines: an inline `crate::run::exec::X` is an import too) and names each file and import that
//! breaks the order.

use std::path::{Path, PathBuf};

/// The stages, lowest first. A file may import from its own folder or from a lower rank.
const RANKS: &[(&str, u8)] = &[
    ("model", 0),
    ("text", 0),
    ("judge", 1),
    ("policy", 2),
    ("record", 3),
    ("ask", 4),
    ("run", 5),
    ("cli", 6),
    ("commands", 7),
];

/// Stages that must do no I/O, and what they must not touch.
const PURE: &[&str] = &["judge", "model", "text"];
const IMPURE: &[(&str, &str)] = &[
    ("std::fs", "files"),
    ("std::env", "the environment"),
    ("std::time", "the clock"),
    ("std::thread", "threads"),
    ("std::process", "processes"),
    ("std::net", "the network"),
    ("std::os::", "the operating system"),
    ("std::io::stdin", "a terminal or standard input"),
    ("std::io::stdout", "standard output"),
    ("std::io::stderr", "standard error"),
    ("println!", "standard output"),
    ("eprintln!", "standard error"),
    ("nix::", "system calls (a terminal, signals, processes)"),
    ("directories::", "the user's directories"),
];

fn rank(stage: &str) -> Option<u8> {
    RANKS.iter().find(|(s, _)| *s == stage).map(|(_, r)| *r)
}

/// The stage a file belongs to: its folder under `src/`, or its name for a top-level file.
/// `main.rs` and `lib.rs` sit above every stage.
fn stage_of(rel: &Path) -> Option<String> {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let first = parts.next()?;
    if rel.components().count() == 1 {
        let name = first.strip_suffix(".rs")?.to_string();
        return (name != "main" && name != "lib").then_some(name);
    }
    Some(first)
}

/// The first path segment after each `crate::` in `code`, with the line it is on. Grouped
/// imports (`crate::{a::b, c}`) give each of their first segments.
fn crate_imports(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                for item in top_level_items(group) {
                    found.push((n + 1, first_segment(item.trim())));
                }
            } else {
                found.push((n + 1, first_segment(after)));
            }
            rest = after;
        }
    }
    found.retain(|(_, s)| !s.is_empty());
    found
}

/// The comma-separated items of a `{ … }` group (the text after the `{`), nested groups kept
/// whole.
fn top_level_items(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0usize, 0usize, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

fn first_segment(path: &str) -> String {
    path.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Every broken rule in one file, as messages naming the file, the line and the import.
fn check_file(rel: &Path, code: &str) -> Vec<String> {
    let Some(stage) = stage_of(rel) else { return Vec::new() };
    let shown = format!("src/{}", rel.display());
    let mut problems = Vec::new();
    let Some(own) = rank(&stage) else {
        return vec![format!("{shown}: `{stage}` is not a known stage; add it to RANKS in tests/layering.rs")];
    };
    for (line, target) in crate_imports(code) {
        if target == stage {
            continue;
        }
        match rank(&target) {
            Some(r) if r < own => {}
            Some(_) => problems.push(format!(
                "{shown}:{line}: `{stage}` imports `crate::{target}`, a stage at or above it \
                 (stages depend downward: cli -> run -> ask -> record -> policy -> judge -> model, text)"
            )),
            None => problems.push(format!("{shown}:{line}: `crate::{target}` is not a known stage")),
        }
    }
    if PURE.contains(&stage.as_str()) {
        for (n, text) in code.lines().enumerate() {
            if text.trim_start().starts_with("//") {
                continue;
            }
            for (needle, what) in IMPURE {
                if text.contains(needle) {
                    problems
                        .push(format!("{shown}:{}: `{stage}` must be pure, but touches {what} (`{needle}`)", n + 1));
                }
            }
        }
    }
    problems
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_stage_imports_only_from_the_stages_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 30, "found only {} files under {}", files.len(), src.display());
    let problems: Vec<String> = files
        .iter()
        .flat_map(|f| check_file(f.strip_prefix(&src).unwrap(), &std::fs::read_to_string(f).unwrap()))
        .collect();
    assert!(problems.is_empty(), "the layering is broken:\n{}", problems.join("\n"));
}

#[test]
fn every_folder_is_a_known_stage() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && path.join("mod.rs").exists() {
            assert!(rank(&name).is_some(), "src/{name}/ is not a stage in tests/layering.rs");
        }
    }
}

/// The checker itself: each kind of break is found, named, and placed on its line.
#[test]
fn the_checker_finds_each_kind_of_break() {
    let judge = Path::new("judge/assess.rs");
    let found = check_file(judge, "use crate::model::Risk;\nfn f() { crate::run::exec::plan(); }\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("src/judge/assess.rs:2: `judge` imports `crate::run`"), "{found:?}");

    let grouped = check_file(judge, "use crate::{model::Risk, ask::{prompt, tty}};\n");
    assert_eq!(grouped.len(), 1, "{grouped:?}");
    assert!(grouped[0].contains("`crate::ask`"), "{grouped:?}");

    let impure = check_file(judge, "fn f() { let _ = std::fs::read(\"x\"); }\n// std::env is fine in a comment\n");
    assert_eq!(impure.len(), 1, "{impure:?}");
    assert!(impure[0].contains("touches files"), "{impure:?}");

    // Nothing may use `commands`, and siblings of one rank may not use each other.
    assert_eq!(check_file(Path::new("run/gate.rs"), "use crate::commands::whitelist;").len(), 1);
    assert_eq!(check_file(Path::new("model.rs"), "use crate::text::sanitize;").len(), 1);
    // Downward and same-folder imports are fine, and so is anything `commands` uses.
    assert!(check_file(Path::new("run/gate.rs"), "use crate::run::exec;\nuse crate::judge::decide;").is_empty());
    assert!(check_file(Path::new("commands/check.rs"), "use crate::cli::Scope;\nuse crate::run::gate;").is_empty());
    assert!(check_file(Path::new("main.rs"), "use crate::commands;").is_empty());
}

/// `unsafe` lives in three small places (STYLE.md), each with SAFETY comments: the binary's entry
/// point (`main.rs`: the C `main` and ignoring SIGPIPE), `run/sandbox/sys.rs` (the system calls
/// the box makes without a safe wrapper) and `run/crash_guard.rs` (the signal handler that turns
/// a crash while judging into a refusal). Both crates deny it everywhere else, and this keeps an
/// `#[allow]` from spreading.
#[test]
fn unsafe_code_is_only_where_it_is_needed() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let allowed = [Path::new("run/sandbox/sys.rs"), Path::new("run/crash_guard.rs"), Path::new("main.rs")];
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let code = std::fs::read_to_string(f).unwrap();
        for (n, line) in code.lines().enumerate() {
            let code_part = line.split("//").next().unwrap_or("");
            let opts_out = line.contains("allow(unsafe_code)");
            if (code_part.contains("unsafe ") || code_part.contains("unsafe{") || opts_out) && !allowed.contains(&rel) {
                found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "unsafe outside main.rs, run/sandbox/sys.rs and run/crash_guard.rs:\n{}",
        found.join("\n")
    );
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]"), "lib.rs no longer denies unsafe code");
}
