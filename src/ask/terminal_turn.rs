//! One prompt per terminal at a time. Two prompts drawn at once race for the same keys, and the
//! person's `y` approves the command they were not reading (issue 14: Claude Code's two start-up
//! commands both prompted, and the person's answer went to the snapshot script). A prompt holds
//! its terminal's lock file in agentsh's runtime directory while it is drawn. It owns the lock
//! files only; it must not draw or decide anything.

use std::fs::{File, TryLockError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The turn on one terminal: held until dropped (or until exec, which closes it).
#[must_use]
#[derive(Debug)]
pub struct Turn {
    _lock: File,
}

/// Takes the turn on the terminal named `key` (from `terminal_owner::Found::key`) if no other
/// prompt holds it: `Ok(None)` while one does. `dir` is the checked runtime directory
/// (`queue::dir`). The lock files are never removed: removing a lock file lets two holders lock
/// two different files of the same name.
pub fn try_take(dir: &Path, key: &str) -> io::Result<Option<Turn>> {
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a terminal key"));
    }
    let file = crate::ask::queue::open_lock_file(&dir.join(format!("turn-{key}.lock")))?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "the terminal's lock file is not this user's"));
    }
    match file.try_lock() {
        Ok(()) => Ok(Some(Turn { _lock: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_per_terminal_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_take(dir.path(), "pts-1a-3").unwrap().expect("free");
        assert!(try_take(dir.path(), "pts-1a-3").unwrap().is_none(), "two prompts on one terminal");
        let other = try_take(dir.path(), "pts-1a-4").unwrap();
        assert!(other.is_some(), "another terminal waits for nothing");
        drop(first);
        assert!(try_take(dir.path(), "pts-1a-3").unwrap().is_some());
        assert!(try_take(dir.path(), "../x").is_err());
        assert!(try_take(dir.path(), "").is_err());
    }
}
