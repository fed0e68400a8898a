//! The private places kept for a terminal that has closed (rt8 A4). A box that keeps a terminal
//! has its own (`spec::store_key` names them by the terminal as the kernel made it), and that
//! terminal never comes back: its store is marked with the terminals it is for as it is made
//! ([`mark`]), and removed by the next box made after they closed, once no box uses it
//! ([`prune`]). It removes only what is below agentsh's state directory, and follows no link
//! the box made there.

use super::Terminal;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, fchmod, openat, statat, unlinkat};
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The file in a store that names the terminals it is kept for, a line each.
const MARK: &str = "terminals";

/// At most this many entries are removed by one [`prune`], so that making a box stays quick: what
/// is left goes with the next.
const BUDGET: usize = 20_000;

/// A tree deeper than this is left (it costs the person disk, nothing else).
const MAX_DEPTH: usize = 256;

/// Marks `store` as kept for `terminals` (none: for no terminal, kept for good). Made with the
/// store, once.
pub(crate) fn mark(store: &Path, terminals: &[Terminal]) {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if terminals.is_empty() || std::fs::DirBuilder::new().recursive(true).mode(0o700).create(store).is_err() {
        return;
    }
    let mut text = Vec::new();
    for t in terminals {
        let [dev, ino, sec, nsec] = t.made;
        text.extend_from_slice(format!("{dev} {ino} {sec} {nsec} ").as_bytes());
        text.extend_from_slice(t.path.as_os_str().as_bytes());
        text.push(b'\n');
    }
    let open = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(super::join(store, MARK));
    if let Ok(mut f) = open {
        let _ = f.write_all(&text);
    }
}

/// The terminals a store's mark names; `None` where it has none, or one not as [`mark`] writes.
fn marked(store: &Path) -> Option<Vec<Terminal>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = String::new();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(super::join(store, MARK));
    f.ok()?.take(4096).read_to_string(&mut text).ok()?;
    text.lines()
        .map(|line| {
            let mut parts = line.splitn(5, ' ');
            let mut made = [0i64; 4];
            for n in &mut made {
                *n = parts.next()?.parse().ok()?;
            }
            let path = PathBuf::from(parts.next()?);
            path.starts_with("/dev/pts/").then_some(Terminal { path, made })
        })
        .collect::<Option<Vec<_>>>()
        .filter(|t| !t.is_empty())
}

/// Removes the stores in `records` kept for a terminal that has closed, but those of `live`
/// (the boxes that still run): no box is made for them again. A `stat` per terminal a store is
/// kept for; then its removal, to [`BUDGET`] entries.
pub(crate) fn prune(records: &Path, live: &[PathBuf]) {
    let Ok(dir) = openat(
        rustix::fs::CWD,
        records,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(records) else { return };
    let mut budget = BUDGET;
    for e in entries.flatten() {
        let name = e.file_name();
        let store = e.path();
        if !name.to_string_lossy().starts_with("w-")
            || live.contains(&store)
            || !e.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        let Some(terminals) = marked(&store) else { continue };
        if terminals.iter().all(Terminal::still_open) {
            continue;
        }
        let Ok(name) = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name.as_os_str())) else { continue };
        if budget == 0 || !remove_tree(dir.as_fd(), &name, 0, &mut budget) {
            return;
        }
    }
}

/// Removes `name` in `parent` and all below it, following no link: a directory made
/// unwritable or unreadable is made the person's to change first. `false` where something is
/// left (the budget ran out, too deep, not the person's).
fn remove_tree(parent: BorrowedFd<'_>, name: &CStr, depth: usize, budget: &mut usize) -> bool {
    let Ok(st) = statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) else { return false };
    *budget = budget.saturating_sub(1);
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return unlinkat(parent, name, AtFlags::empty()).is_ok();
    }
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(dir) = open_dir(parent, name) else { return false };
    let _ = fchmod(&dir, Mode::from_raw_mode(0o700));
    let Ok(mut entries) = Dir::read_from(&dir) else { return false };
    let mut names = Vec::new();
    while let Some(Ok(e)) = entries.next() {
        let n = e.file_name();
        if n != c"." && n != c".." {
            names.push(n.to_owned());
        }
    }
    for n in names {
        if *budget == 0 || !remove_tree(dir.as_fd(), &n, depth + 1, budget) {
            return false;
        }
    }
    unlinkat(parent, name, AtFlags::REMOVEDIR).is_ok()
}

/// The directory `name` in `parent`, opened to read, not through a link; one the box made
/// unreadable is made readable by its owner first (through a descriptor, not its name).
fn open_dir(parent: BorrowedFd<'_>, name: &CStr) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => Some(fd),
        Err(rustix::io::Errno::ACCESS) => {
            let path = openat(
                parent,
                name,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            use std::os::fd::AsRawFd;
            let by_fd = format!("/proc/self/fd/{}", path.as_raw_fd());
            std::fs::set_permissions(&by_fd, std::os::unix::fs::PermissionsExt::from_mode(0o700)).ok()?;
            openat(parent, name, flags, Mode::empty()).ok()
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store kept for a terminal that has closed goes, links in it not followed and a
    /// directory the box made unreadable and unwritable included; one for an open terminal, one
    /// a live box uses and one kept for no terminal stay.
    #[test]
    fn a_closed_terminals_store_is_removed_and_nothing_it_links_to() {
        use std::os::unix::fs::PermissionsExt;
        let records = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("kept"), "x").unwrap();
        let pty = nix::pty::openpty(None, None).unwrap();
        let path = nix::unistd::ttyname(&pty.slave).unwrap();
        let open = Terminal::of(pty.slave.as_fd(), path.clone());
        let closed = Terminal { path: path.clone(), made: [open.made[0], open.made[1], open.made[2] - 60, 0] };
        let store = |n: &str| records.path().join(n);
        mark(&store("w-closed"), std::slice::from_ref(&closed));
        mark(&store("w-open"), std::slice::from_ref(&open));
        mark(&store("w-live"), std::slice::from_ref(&closed));
        std::fs::create_dir_all(store("w-none/home")).unwrap();
        mark(&store("w-none"), &[]);
        let home = store("w-closed/home");
        std::fs::create_dir_all(home.join("a/b")).unwrap();
        std::fs::write(home.join("a/b/f"), "f").unwrap();
        std::os::unix::fs::symlink(outside.path(), home.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("kept"), home.join("a/file-link")).unwrap();
        std::fs::set_permissions(home.join("a/b"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(home.join("a"), std::fs::Permissions::from_mode(0o500)).unwrap();
        prune(records.path(), &[store("w-live")]);
        assert!(!store("w-closed").exists(), "the closed terminal's store is left");
        for kept in ["w-open", "w-live", "w-none/home"] {
            assert!(store(kept).exists(), "{kept} removed");
        }
        assert_eq!(std::fs::read_to_string(outside.path().join("kept")).unwrap(), "x");
        // The same terminal, read back as marked.
        assert_eq!(marked(&store("w-open")), Some(vec![open]));
    }
}
