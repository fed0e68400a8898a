//! What more than one test file needs.

use std::path::{Path, PathBuf};

/// Where a test's own homes go: outside the temporary directories (the box has its own of them),
/// as a real home is, and outside every git work tree, as a real home is too: agentsh takes a
/// `$HOME` inside one for a place a box can write, and its directories there for no one's
/// (rt6b G5). Cargo's tmp directory is in this checkout's work tree, so beside the checkout
/// (`agentsh-test-homes`, made once), else in `$HOME`.
pub fn home_base() -> PathBuf {
    let temp = |p: &Path| {
        ["/tmp", "/var/tmp", "/dev/shm"].iter().any(|t| p.starts_with(t)) || p.starts_with(std::env::temp_dir())
    };
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let outermost = target.ancestors().filter(|a| a.join(".git").symlink_metadata().is_ok()).last();
    let candidate = match outermost {
        None => Some(target),
        Some(top) => top.parent().map(|p| p.join("agentsh-test-homes")),
    };
    if let Some(base) = candidate.filter(|b| !temp(b))
        && std::fs::create_dir_all(&base).is_ok()
    {
        return base;
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !temp(h))
        .expect("a HOME outside the temp directories")
}
