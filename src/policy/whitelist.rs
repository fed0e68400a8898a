//! Writing a whitelist entry into a config file: atomic (`atomic_file`), and for the project
//! file its trust record follows the new content. Used by `agentsh whitelist` and by an
//! "always" answer to a prompt.

use crate::judge::decide::normalize_words;
use crate::policy::{atomic_file, config};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// The config key of the whitelist.
pub const KEY: &str = "commandWhitelist";

/// Adds `entry` unless an equal one (ignoring case and spacing) is there. Returns whether it
/// was added. Used by `whitelist add` and by "always" at the prompt.
pub fn add_entry(path: &Path, entry: &str) -> Result<bool> {
    let wanted = normalize_words(entry);
    write(path, |m| {
        let list = atomic_file::string_list(m, KEY)?;
        if list.iter().filter_map(Value::as_str).any(|e| normalize_words(e) == wanted) {
            return Ok(false);
        }
        list.push(Value::String(entry.to_string()));
        Ok(true)
    })
}

/// Where "always" writes an entry for a command run in `cwd`: the project's own file when it
/// is trusted (its whitelist applies), else the user config's `projectWhitelist` for this
/// project (an untrusted project file's whitelist is ignored, so an entry there would do
/// nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    ProjectFile(std::path::PathBuf),
    UserForProject { file: std::path::PathBuf, root: std::path::PathBuf },
}

impl Destination {
    pub fn for_cwd(cwd: &Path) -> Option<Destination> {
        if let Some(project) = config::find_project_file(cwd)
            && let Ok(bytes) = std::fs::read(&project)
            && crate::policy::trust::state(&project, &config::Content::new(bytes, None))
                == crate::policy::trust::State::Trusted
        {
            return Some(Destination::ProjectFile(project));
        }
        let file = config::user_file()?;
        let root = config::project_root(cwd);
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        Some(Destination::UserForProject { file, root })
    }

    /// For the person: where the entry goes.
    pub fn describe(&self) -> String {
        match self {
            Destination::ProjectFile(p) => p.display().to_string(),
            Destination::UserForProject { file, root } => {
                format!("{} (projectWhitelist, for {})", file.display(), root.display())
            }
        }
    }

    /// Adds `entry` there; whether it was added (not already present).
    pub fn add(&self, entry: &str) -> Result<bool> {
        match self {
            Destination::ProjectFile(p) => add_entry(p, entry),
            Destination::UserForProject { file, root } => {
                let wanted = normalize_words(entry);
                let root = root.display().to_string();
                atomic_file::update(file, |m| {
                    let projects = m
                        .entry("projectWhitelist".to_string())
                        .or_insert_with(|| Value::Object(serde_json::Map::new()));
                    let Value::Object(projects) = projects else {
                        anyhow::bail!("projectWhitelist in {} is not an object; fix it first", file.display())
                    };
                    let list = atomic_file::string_list(projects, &root)?;
                    if list.iter().filter_map(Value::as_str).any(|e| normalize_words(e) == wanted) {
                        return Ok(false);
                    }
                    list.push(Value::String(entry.to_string()));
                    Ok(true)
                })
            }
        }
    }
}

/// Every whitelist write: atomic through `atomic_file`, and for the project file the trust record
/// follows the new content while the file's lock is still held (see `trust::carry_over`).
pub fn write<T>(path: &Path, change: impl FnOnce(&mut serde_json::Map<String, Value>) -> Result<T>) -> Result<T> {
    if !path.ends_with(config::PROJECT_FILE) {
        return atomic_file::update(path, change);
    }
    let user = crate::policy::trust::user_settings();
    atomic_file::update_then(path, change, |old, new| {
        // The file is written by now: a trust store that cannot be written (read-only in a
        // sandbox, say) only means the person must run `agentsh trust` again.
        match crate::policy::trust::carry_over(path, old, new, &user) {
            Ok(None) => {}
            Ok(Some(note)) => eprintln!("agentsh: note: {note}"),
            Err(e) => eprintln!(
                "agentsh: note: the file was saved, but its trust could not be recorded ({}); run `agentsh trust`",
                crate::text::sanitize::sanitize(&format!("{e:#}"))
            ),
        }
        Ok(())
    })
}
