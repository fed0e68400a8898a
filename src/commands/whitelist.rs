//! `agentsh whitelist list|add|rm|clear`. `add` writes `commandWhitelist` in the project's
//! `.agents/terminal.json` (or, with `--user`, the user config); `list`, `rm` and `clear` work on
//! every list agentsh writes for this project (with `--user`: for the user), numbered as one:
//! the project file's, and the user config's `projectWhitelist` entries that "always" writes
//! (`policy::whitelist::lists`). Every write is atomic (`atomic_file`).

use crate::cli::WhitelistCommand;
use crate::judge::decide::normalize_words;
use crate::policy::config;
use crate::policy::whitelist::{List, Place, add_entry, lists};
use crate::text::sanitize::sanitize;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::PathBuf;

pub fn run(cmd: WhitelistCommand) -> Result<i32> {
    match cmd {
        WhitelistCommand::List { json, user } => list(&lists(&cwd()?, user)?, json, user),
        WhitelistCommand::Add { entry, user } => {
            let path = target(user)?;
            let entry = normalize_entry(&entry.join(" "))?;
            // Loosening: an agent that runs agentsh directly must still find a person.
            let cwd = cwd()?;
            let mut details = vec![format!(
                "adds `{entry}` to the whitelist in {}: commands that start with these words will run without asking",
                path.display()
            )];
            if let Some(warning) = crate::policy::whitelist::entry_warning(&entry) {
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
        WhitelistCommand::Rm { entry, user } => remove(&lists(&cwd()?, user)?, &entry.join(" "), user),
        WhitelistCommand::Clear { user } => {
            let all = lists(&cwd()?, user)?;
            let mut removed = 0;
            for l in all.iter().filter(|l| !l.entries.is_empty()) {
                let gone = l.place.remove(|_| true)?;
                crate::ask::tty::eprint_fitted(&format!(
                    "removed {} from {}\n",
                    crate::text::count(gone.len(), "entry", "entries"),
                    sanitize(&l.place.describe())
                ));
                removed += gone.len();
            }
            if removed == 0 {
                eprintln!("{}: nothing to remove", what(user));
            }
            Ok(0)
        }
    }
}

fn cwd() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// What a scope's lists are, in a person's words.
fn what(user: bool) -> &'static str {
    if user { "the whitelist in your user config" } else { "this project's whitelist" }
}

/// Where `whitelist add` writes.
fn target(user: bool) -> Result<PathBuf> {
    if user {
        return config::user_file().context("cannot find the user config directory (is HOME set?)");
    }
    Ok(config::project_file_for_writing(&cwd()?))
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

/// Every entry of `lists` with its number, as `list` shows it and `rm N` takes it.
fn numbered(lists: &[List]) -> Vec<(usize, &List, &String)> {
    lists
        .iter()
        .flat_map(|l| l.entries.iter().map(move |e| (l, e)))
        .enumerate()
        .map(|(i, (l, e))| (i + 1, l, e))
        .collect()
}

/// The user config's own list, shown beside a project's (it applies here too).
fn user_list_in_force() -> Vec<String> {
    let Some(user) = config::user_file().filter(|u| u.is_file()) else { return Vec::new() };
    config::read_file(&user).whitelist.to_vec()
}

fn list(lists: &[List], json: bool, user: bool) -> Result<i32> {
    let items = numbered(lists);
    let global = if user { Vec::new() } else { user_list_in_force() };
    if json {
        let mut v: Vec<Value> = items
            .iter()
            .map(|(n, l, e)| {
                serde_json::json!({"index": n, "entry": e, "file": file_of(&l.place), "scope": scope_of(&l.place),
                                   "applies": l.ignored.is_none()})
            })
            .collect();
        let file = config::user_file().map(|f| f.display().to_string());
        v.extend(
            global.iter().map(
                |e| serde_json::json!({"index": null, "entry": e, "file": file, "scope": "user", "applies": true}),
            ),
        );
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    use std::fmt::Write;
    let mut out = String::new();
    if items.is_empty() {
        let _ = writeln!(out, "{} is empty.", capitalized(what(user)));
    }
    let mut number = 1;
    for l in lists.iter().filter(|l| !l.entries.is_empty()) {
        let state = l.ignored.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        let _ = writeln!(out, "{}{state}:", sanitize(&l.place.describe()));
        for e in &l.entries {
            let mark = if l.ignored.is_some() { "   [ignored]" } else { "" };
            let _ = writeln!(out, "{number:>4}  {}{mark}", sanitize(e));
            number += 1;
        }
    }
    if !global.is_empty() {
        let file = config::user_file().map(|f| f.display().to_string()).unwrap_or_default();
        let _ = writeln!(out, "\nAlso in force here, from your user config ({}):", sanitize(&file));
        for e in &global {
            let _ = writeln!(out, "   -  {}", sanitize(e));
        }
        let _ = writeln!(out, "(agentsh whitelist list --user numbers these)");
    }
    if items.is_empty() && global.is_empty() {
        let _ = writeln!(out, "Add one with: agentsh whitelist add 'npm test'");
    } else if !items.is_empty() {
        let flag = if user { " --user" } else { "" };
        let _ = writeln!(out, "Remove one with: agentsh whitelist rm{flag} NUMBER (or its text)");
    }
    crate::ask::tty::print_fitted(&out);
    Ok(0)
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

fn file_of(place: &Place) -> String {
    match place {
        Place::ProjectFile(p) | Place::User(p) | Place::UserForProject { file: p, .. } => p.display().to_string(),
    }
}

fn scope_of(place: &Place) -> String {
    match place {
        Place::ProjectFile(_) => "project".into(),
        Place::User(_) => "user".into(),
        Place::UserForProject { root, .. } => format!("user, for {root}"),
    }
}

/// `rm N` removes that entry; `rm TEXT` removes every entry equal to it (ignoring case and
/// spacing) in the scope's lists, so it no longer applies here; with no argument, a picker.
fn remove(lists: &[List], what_arg: &str, user: bool) -> Result<i32> {
    let items = numbered(lists);
    let what_arg = if what_arg.trim().is_empty() {
        match pick(&items, user)? {
            Some(n) => n.to_string(),
            None => return Ok(0),
        }
    } else {
        what_arg.trim().to_string()
    };
    let wanted = normalize_words(&what_arg);
    let by_text: Vec<&(usize, &List, &String)> =
        items.iter().filter(|(_, _, e)| normalize_words(e) == wanted).collect();
    let chosen: Vec<(&List, &String)> = match what_arg.parse::<usize>() {
        Ok(n) if by_text.is_empty() => match items.iter().find(|(i, _, _)| *i == n) {
            Some((_, l, e)) => vec![(*l, *e)],
            None => bail!(
                "there is no entry number {n}; `agentsh whitelist list{}` shows {}",
                if user { " --user" } else { "" },
                crate::text::count(items.len(), "entry", "entries")
            ),
        },
        _ => by_text.iter().map(|(_, l, e)| (*l, *e)).collect(),
    };
    if chosen.is_empty() {
        let elsewhere = !user && user_list_in_force().iter().any(|e| normalize_words(e) == wanted);
        if elsewhere {
            return Err(super::Hinted {
                message: format!("`{}` is in your user config's whitelist, not this project's", sanitize(&what_arg)),
                hint: format!("agentsh whitelist rm --user {}", quoted(&what_arg)),
            }
            .into());
        }
        bail!(
            "`{}` is not in {}; see `agentsh whitelist list{}`",
            sanitize(&what_arg),
            what(user),
            if user { " --user" } else { "" }
        );
    }
    for (l, entry) in chosen {
        let mut once = false;
        let gone = l.place.remove(|e| {
            // By number: that one entry; by text: every equal one.
            let hit =
                !once && e == entry.as_str() || what_arg.parse::<usize>().is_err() && normalize_words(e) == wanted;
            once |= hit;
            hit
        })?;
        for e in gone {
            crate::ask::tty::eprint_fitted(&format!(
                "removed `{}` from {}\n",
                sanitize(&e),
                sanitize(&l.place.describe())
            ));
        }
    }
    Ok(0)
}

fn quoted(text: &str) -> String {
    shlex::try_quote(text).map(|q| q.into_owned()).unwrap_or_else(|_| text.to_string())
}

/// The interactive picker for `whitelist rm` with no argument. Management only: it never
/// approves a command, so dialoguer's stdin reading is acceptable here.
fn pick(items: &[(usize, &List, &String)], user: bool) -> Result<Option<usize>> {
    if !nix::unistd::isatty(std::io::stdin()).unwrap_or(false)
        || !nix::unistd::isatty(std::io::stderr()).unwrap_or(false)
    {
        bail!("whitelist rm needs an ENTRY or INDEX when not run on a terminal (see `agentsh whitelist list`)");
    }
    if items.is_empty() {
        eprintln!("{} is empty.", capitalized(what(user)));
        return Ok(None);
    }
    let shown: Vec<String> =
        items.iter().map(|(_, l, e)| format!("{}   ({})", sanitize(e), sanitize(&l.place.describe()))).collect();
    let choice = dialoguer::Select::new()
        .with_prompt("Remove which entry? (Esc to cancel)")
        .items(&shown)
        .default(0)
        .interact_opt()
        .context("the picker failed")?;
    Ok(choice.map(|i| items[i].0))
}
