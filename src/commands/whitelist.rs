//! `agentsh whitelist list|add|rm|clear`: edits `commandWhitelist` in the project's
//! `.agents/terminal.json` (or, with `--user`, the user config), atomically through `atomic_file`.

use crate::cli::{Scope, WhitelistCommand};
use crate::judge::decide::normalize_words;
use crate::policy::atomic_file;
use crate::policy::config;
use crate::text::sanitize::sanitize;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::policy::whitelist::{KEY, add_entry, write};

pub fn run(cmd: WhitelistCommand) -> Result<i32> {
    match cmd {
        WhitelistCommand::List { json, scope } => list(&target(scope)?, json, scope.user),
        WhitelistCommand::Add { entry, scope } => {
            let path = target(scope)?;
            let entry = normalize_entry(&entry.join(" "))?;
            // Loosening: an agent that runs agentsh directly must still find a person.
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let mut details = vec![format!(
                "adds `{entry}` to the whitelist in {}: commands that start with these words will run without asking",
                path.display()
            )];
            if let Some(warning) = crate::run::gate::entry_warning(&entry) {
                crate::ask::tty::eprint_fitted(&format!("agentsh: {}\n", sanitize(&warning)));
                details.push(warning);
            }
            super::confirm::by_person(&format!("agentsh whitelist add {entry}"), details, &cwd)?;
            if add_entry(&path, &entry)? {
                eprintln!("added `{}` to {}", sanitize(&entry), sanitize(&path.display().to_string()));
            } else {
                eprintln!("`{}` is already in {}", sanitize(&entry), sanitize(&path.display().to_string()));
            }
            Ok(0)
        }
        WhitelistCommand::Rm { entry, scope } => remove(&target(scope)?, &entry.join(" ")),
        WhitelistCommand::Clear { scope } => {
            let path = target(scope)?;
            let n = write(&path, |m| {
                let list = atomic_file::string_list(m, KEY)?;
                let n = list.len();
                list.clear();
                Ok(n)
            })?;
            eprintln!(
                "removed {} from {}",
                crate::text::count(n, "entry", "entries"),
                sanitize(&path.display().to_string())
            );
            Ok(0)
        }
    }
}

fn target(scope: Scope) -> Result<PathBuf> {
    if scope.user {
        return config::user_file().context("cannot find the user config directory (is HOME set?)");
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(config::project_file_for_writing(&cwd))
}

/// Trims and collapses white space; refuses entries that would allow anything at all.
pub fn normalize_entry(text: &str) -> Result<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        bail!("the entry is empty");
    }
    if normalize_words(text).is_empty() {
        bail!("the entry `{}` has no words", sanitize(text));
    }
    Ok(words.join(" "))
}

fn entries(path: &Path) -> Result<Vec<String>> {
    let settings = config::read_file(path);
    if !path.exists() {
        return Ok(Vec::new());
    }
    if let Some(w) = settings.warnings.first() {
        bail!("{w}");
    }
    Ok(settings.whitelist.to_vec())
}

/// The other lists in force here, beside the file listed: `(title, file, entries, applies)`.
/// For the project file: the user's whitelist and its `projectWhitelist` entries for this
/// project. For the user file: nothing more.
fn also_in_force(user_scope: bool) -> Vec<(String, String, Vec<String>, bool)> {
    let (Some(user), Ok(cwd)) = (config::user_file(), std::env::current_dir()) else { return Vec::new() };
    if user_scope || !user.is_file() {
        return Vec::new();
    }
    let settings = config::read_file(&user);
    let root = std::fs::canonicalize(config::project_root(&cwd)).unwrap_or_else(|_| config::project_root(&cwd));
    let mut out = vec![("your user config".to_string(), user.display().to_string(), settings.whitelist.to_vec(), true)];
    for (r, entries) in settings.project_whitelist.iter().filter(|(r, _)| cwd.starts_with(r) || root.starts_with(r)) {
        out.push((format!("your user config, for {r}"), user.display().to_string(), entries.clone(), true));
    }
    out
}

/// Whether the project file's whitelist applies (it is trusted), and why not when it does not.
fn project_applies(path: &Path) -> (bool, String) {
    if !path.ends_with(config::PROJECT_FILE) {
        return (true, String::new());
    }
    let Ok(bytes) = std::fs::read(path) else { return (true, String::new()) };
    match crate::policy::trust::state(path, &config::Content::new(bytes, None)) {
        crate::policy::trust::State::Trusted => (true, "trusted".to_string()),
        _ => (false, "NOT trusted: these entries are ignored until you run `agentsh trust`".to_string()),
    }
}

fn list(path: &Path, json: bool, user_scope: bool) -> Result<i32> {
    let items = entries(path)?;
    let (applies, state) = project_applies(path);
    let others = also_in_force(user_scope);
    if json {
        let mut v: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(i, e)| {
                serde_json::json!({"index": i + 1, "entry": e, "file": path.display().to_string(), "applies": applies})
            })
            .collect();
        for (title, file, entries, applies) in &others {
            v.extend(entries.iter().map(
                |e| serde_json::json!({"index": null, "entry": e, "file": file, "scope": title, "applies": applies}),
            ));
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    use std::fmt::Write;
    let mut out = String::new();
    let shown = sanitize(&path.display().to_string());
    if items.is_empty() {
        let _ = writeln!(out, "The whitelist in {shown} is empty.");
    } else {
        let state = if state.is_empty() { String::new() } else { format!(" ({state})") };
        let _ = writeln!(out, "Whitelist in {shown}{state}:");
        for (i, e) in items.iter().enumerate() {
            let mark = if applies { "" } else { "   [ignored]" };
            let _ = writeln!(out, "{:>4}  {}{mark}", i + 1, sanitize(e));
        }
    }
    for (title, file, entries, _) in others.iter().filter(|o| !o.2.is_empty()) {
        let _ = writeln!(out, "\nAlso in force here, from {} ({}):", sanitize(title), sanitize(file));
        for e in entries {
            let _ = writeln!(out, "   -  {}", sanitize(e));
        }
    }
    if items.is_empty() && others.iter().all(|o| o.2.is_empty()) {
        let _ = writeln!(out, "Add one with: agentsh whitelist add 'npm test'");
    }
    crate::ask::tty::print_fitted(&out);
    Ok(0)
}

fn remove(path: &Path, what: &str) -> Result<i32> {
    let what = if what.trim().is_empty() {
        match pick(path)? {
            Some(e) => e,
            None => return Ok(0),
        }
    } else {
        what.trim().to_string()
    };
    let removed = write(path, |m| {
        let list = atomic_file::string_list(m, KEY)?;
        let index = match what.parse::<usize>() {
            Ok(n) if n >= 1 && n <= list.len() => Some(n - 1),
            Ok(n) if !list.iter().any(|e| e.as_str() == Some(what.as_str())) => {
                bail!(
                    "there is no entry number {n}; `agentsh whitelist list` shows {}",
                    crate::text::count(list.len(), "entry", "entries")
                )
            }
            _ => {
                let wanted = normalize_words(&what);
                list.iter().position(|e| e.as_str().is_some_and(|s| normalize_words(s) == wanted))
            }
        };
        let Some(i) = index else {
            bail!("`{}` is not in the whitelist; see `agentsh whitelist list`", sanitize(&what))
        };
        Ok(list.remove(i))
    })?;
    eprintln!(
        "removed `{}` from {}",
        sanitize(removed.as_str().unwrap_or_default()),
        sanitize(&path.display().to_string())
    );
    Ok(0)
}

/// The interactive picker for `whitelist rm` with no argument. Management only: it never
/// approves a command, so dialoguer's stdin reading is acceptable here.
fn pick(path: &Path) -> Result<Option<String>> {
    let items = entries(path)?;
    if !nix::unistd::isatty(std::io::stdin()).unwrap_or(false)
        || !nix::unistd::isatty(std::io::stderr()).unwrap_or(false)
    {
        bail!("whitelist rm needs an ENTRY or INDEX when not run on a terminal (see `agentsh whitelist list`)");
    }
    if items.is_empty() {
        eprintln!("The whitelist in {} is empty.", sanitize(&path.display().to_string()));
        return Ok(None);
    }
    let shown: Vec<String> = items.iter().map(|e| sanitize(e)).collect();
    let choice = dialoguer::Select::new()
        .with_prompt("Remove which entry? (Esc to cancel)")
        .items(&shown)
        .default(0)
        .interact_opt()
        .context("the picker failed")?;
    Ok(choice.map(|i| (i + 1).to_string()))
}
