//! The person's "take over" switch: `agentsh pause [--deny]` and `agentsh resume`. It owns the
//! pause file; it must not wait or judge (the approval step does that).
//!
//! The state lives in `~/.local/state/agentsh/paused.json` (`$XDG_STATE_HOME`), not the runtime
//! directory, so it survives a logout or reboot until the person resumes. The gate forbids
//! commands that touch that directory, so an agent cannot lift a pause through agentsh.

use anyhow::{Context, Result};
use serde_json::Value;
use std::path::PathBuf;

/// What a paused agent's commands do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Wait, shown as pending in `agentsh approvals`, until `agentsh resume` (or an answer).
    Wait,
    /// Refused at once: the person has taken over.
    Deny,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pause {
    pub mode: Mode,
    /// Seconds since the epoch, when known.
    pub since: Option<u64>,
}

pub fn file() -> Option<PathBuf> {
    crate::policy::dirs::state_dir().map(|state| state.join("paused.json"))
}

/// The pause in force, if any. A pause file that cannot be read counts as `pause --deny`:
/// a person meant to stop the agent, and a broken file must not let it go on.
pub fn current() -> Option<Pause> {
    let path = file()?;
    // A regular file, never through a link, never blocking (a FIFO planted in its place would
    // hang every command), read only so far: a pause file is a few bytes.
    let read = crate::policy::files::open(&path, crate::policy::files::Links::Refuse).and_then(|f| f.read_capped(4096));
    let bytes = match read {
        Ok(b) => b,
        // No such file, or its directory is not a directory: then there is no pause file.
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => return None,
        Err(_) => return Some(Pause { mode: Mode::Deny, since: None }),
    };
    Some(parse(&String::from_utf8_lossy(&bytes)))
}

fn parse(text: &str) -> Pause {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let mode = match v.get("mode").and_then(Value::as_str) {
        Some("wait") => Mode::Wait,
        _ => Mode::Deny,
    };
    Pause { mode, since: v.get("since").and_then(Value::as_u64) }
}

/// Pauses the agent (or changes how it is paused). Atomic through `atomic_file`.
pub fn set(mode: Mode) -> Result<PathBuf> {
    let path = file().context("cannot find the state directory (is HOME set?)")?;
    crate::policy::atomic_file::update(&path, |m| {
        m.clear();
        m.insert("mode".into(), Value::from(if mode == Mode::Wait { "wait" } else { "deny" }));
        m.insert("since".into(), Value::from(crate::ask::queue::now_secs()));
        Ok(())
    })?;
    Ok(path)
}

/// Lifts the pause. Returns whether there was one.
pub fn clear() -> Result<bool> {
    let path = file().context("cannot find the state directory (is HOME set?)")?;
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_pause_files_refuse() {
        assert_eq!(parse(r#"{"mode":"wait","since":5}"#), Pause { mode: Mode::Wait, since: Some(5) });
        assert_eq!(parse(r#"{"mode":"deny"}"#).mode, Mode::Deny);
        assert_eq!(parse("{ broken").mode, Mode::Deny);
        assert_eq!(parse(r#"{"mode":"run"}"#).mode, Mode::Deny);
    }
}
