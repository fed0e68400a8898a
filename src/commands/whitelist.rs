//! `agentsh whitelist list|add|rm|clear`: edits `commandWhitelist` in the project's
//! `.agents/terminal.json` (or, with `--user`, the user config), atomically through `store`.

use crate::cli::{Scope, WhitelistCommand};
use crate::config;
use crate::decide::normalize_words;
use crate::sanitize::sanitize;
use crate::store;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

const KEY: &str = "commandWhitelist";

pub fn run(cmd: WhitelistCommand) -> Result<i32> {
    match cmd {
        WhitelistCommand::List { json, scope } => list(&target(scope)?, json),
        WhitelistCommand::Add { entry, scope } => {
            let path = target(scope)?;
            let entry = normalize_entry(&entry.join(" "))?;
            // Loosening: an agent that runs agentsh directly must still find a person.
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let details = vec![format!(
                "adds `{entry}` to the whitelist in {}: commands that start with these words will run without asking",
                path.display()
            )];
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
                let list = store::string_list(m, KEY)?;
                let n = list.len();
                list.clear();
                Ok(n)
            })?;
            eprintln!("removed {n} entries from {}", sanitize(&path.display().to_string()));
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

fn list(path: &Path, json: bool) -> Result<i32> {
    let items = entries(path)?;
    if json {
        let v: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(i, e)| serde_json::json!({"index": i + 1, "entry": e, "file": path.display().to_string()}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    if items.is_empty() {
        println!("The whitelist in {} is empty.", sanitize(&path.display().to_string()));
        println!("Add one with: agentsh whitelist add 'npm test'");
        return Ok(0);
    }
    println!("Whitelist in {}:", sanitize(&path.display().to_string()));
    for (i, e) in items.iter().enumerate() {
        println!("{:>4}  {}", i + 1, sanitize(e));
    }
    Ok(0)
}

/// Adds `entry` unless an equal one (ignoring case and spacing) is there. Returns whether it
/// was added. Used by `whitelist add` and by "always" at the prompt.
pub fn add_entry(path: &Path, entry: &str) -> Result<bool> {
    let wanted = normalize_words(entry);
    write(path, |m| {
        let list = store::string_list(m, KEY)?;
        if list.iter().filter_map(Value::as_str).any(|e| normalize_words(e) == wanted) {
            return Ok(false);
        }
        list.push(Value::String(entry.to_string()));
        Ok(true)
    })
}

/// Every whitelist write: atomic through `store`, and for the project file the trust record
/// follows the new content while the file's lock is still held (see `trust::carry_over`).
fn write<T>(path: &Path, change: impl FnOnce(&mut serde_json::Map<String, Value>) -> Result<T>) -> Result<T> {
    if !path.ends_with(config::PROJECT_FILE) {
        return store::update(path, change);
    }
    let user = crate::trust::user_settings();
    store::update_then(path, change, |old, new| {
        // The file is written by now: a trust store that cannot be written (read-only in a
        // sandbox, say) only means the person must run `agentsh trust` again.
        match crate::trust::carry_over(path, old, new, &user) {
            Ok(None) => {}
            Ok(Some(note)) => eprintln!("agentsh: note: {note}"),
            Err(e) => eprintln!(
                "agentsh: note: the file was saved, but its trust could not be recorded ({}); run `agentsh trust`",
                crate::sanitize::sanitize(&format!("{e:#}"))
            ),
        }
        Ok(())
    })
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
        let list = store::string_list(m, KEY)?;
        let index = match what.parse::<usize>() {
            Ok(n) if n >= 1 && n <= list.len() => Some(n - 1),
            Ok(n) if !list.iter().any(|e| e.as_str() == Some(what.as_str())) => {
                bail!("there is no entry number {n}; `agentsh whitelist list` shows {} entries", list.len())
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
