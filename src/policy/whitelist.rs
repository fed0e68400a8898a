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
