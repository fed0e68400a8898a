//! Opening what a box could have written, for agentsh's own unconfined work there (rt8 A1): the
//! workspace's git directory and everything below it (`objects/`, `modules/*`, each submodule's
//! store). A box can put a symbolic link in place of any directory it may write, so a walk that
//! follows one (`read_dir`, `create_dir`, `rename` by path) reads, makes or rewrites files
//! anywhere the person can: agentsh's builder unshared every hard-linked file of a directory a
//! submodule's `objects` was made a link to, and made `modules` in every repository of home that
//! a nested repository's `modules` led to. Here a path is opened with no link followed anywhere
//! on the way (`openat2`'s `RESOLVE_NO_SYMLINKS`), and what is below it only beneath it
//! (`RESOLVE_BENEATH`): a link fails to open (`ELOOP`), and nothing outside is reached. It opens;
//! it neither judges nor prints.

use rustix::fs::{Mode, OFlags, ResolveFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// The directory at the absolute `path`, opened with no link followed on the way: agentsh's
/// paths of the workspace are real ones (the current directory is), so one that is not met a
/// link a box put there.
pub(crate) fn dir(path: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS)
}

/// `rel` below the directory `at`, opened with `flags`, no link followed (the last component's
/// neither) and nothing outside `at` reached.
pub(crate) fn open<P: rustix::path::Arg>(at: impl AsFd, rel: P, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    rustix::fs::openat2(at, rel, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty(), resolve)
}

/// [`open`] of a directory, to read.
pub(crate) fn subdir<P: rustix::path::Arg>(at: impl AsFd, rel: P) -> rustix::io::Result<OwnedFd> {
    open(at, rel, OFlags::RDONLY | OFlags::DIRECTORY)
}

/// Whether `name` exists in the directory `at`, as itself (a link is not followed).
pub(crate) fn exists<P: rustix::path::Arg>(at: impl AsFd, name: P) -> bool {
    use rustix::fs::{AtFlags, StatxFlags};
    rustix::fs::statx(at, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE).is_ok()
}

/// Makes the directory `name` in `at` where nothing is there (an existing link is left, and not
/// followed): `mkdirat` never follows the name it makes.
pub(crate) fn make_dir<P: rustix::path::Arg>(at: impl AsFd, name: P) {
    let _ = rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o755));
}

/// Makes the directory `dir` below `root` where it is missing, with the levels on the way
/// (`mode` each), one level at a time, each opened with no link followed: a link a box left on
/// the way fails it.
pub(crate) fn make_dirs(root: &Path, dir: &Path, mode: u32) -> rustix::io::Result<()> {
    let rel = dir.strip_prefix(root).map_err(|_| rustix::io::Errno::XDEV)?;
    let mut at = self::dir(root)?;
    for part in rel.components() {
        let name = part.as_os_str();
        match rustix::fs::mkdirat(&at, name, Mode::from_raw_mode(mode)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
        at = subdir(&at, name)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_link_is_followed_on_the_way_or_at_the_end() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("ws/.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("elsewhere/d")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("ws/.git/modules")).unwrap();
        let git = dir(&root.join("ws/.git")).unwrap();
        assert!(subdir(&git, "objects").is_ok());
        for rel in ["modules", "modules/d", "../../elsewhere", "/tmp"] {
            assert!(subdir(&git, rel).is_err(), "{rel}");
        }
        assert!(dir(&root.join("ws/.git/modules/d")).is_err());
        assert!(exists(&git, "modules") && subdir(&git, "objects").is_ok());
        make_dir(&git, "modules");
        make_dir(&git, "hooks");
        assert!(make_dirs(&root.join("ws"), &root.join("ws/.git/modules/x"), 0o700).is_err());
        make_dirs(&root.join("ws"), &root.join("ws/a/b"), 0o700).unwrap();
        assert!(subdir(dir(&root.join("ws")).unwrap(), "a/b").is_ok());
        assert!(subdir(&git, "hooks").is_ok() && std::fs::read_dir(root.join("elsewhere")).unwrap().count() == 1);
    }
}
