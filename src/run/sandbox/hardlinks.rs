//! Files of the workspace that are also files outside it: hard links the person's own tools made
//! before any box (issue 25, rt4 R1). Landlock grants writing by path, and a hard link is the
//! same inode as the file outside, so a write, `chmod` or `touch` through it lands there too.
//! The box cannot make such a link itself (what is outside is not in its view, and a link
//! cannot cross mounts), but it finds the ones already there:
//!
//! - `git clone` of a local path hard-links the source repository's `.git/objects` (and
//!   `git submodule` of one, `.git/modules/*/objects`): rewriting an object rewrites the
//!   source's. git never rewrites an object, so the builder gives the workspace its own copy of
//!   each shared one ([`unshare_git_objects`]: same bytes, what `git repack -a -d` does).
//! - pnpm, bun and uv hard-link their stores' files into `node_modules` and `.venv`: one write
//!   reaches every other project using the package. These the box shows copy-on-write
//!   ([`link_farms`]), as it shows the person's caches: its own installs and tests still work,
//!   and what it writes lands in its own copy.
//!
//! Both are looked for when a box is built (once per box, kept for later commands), and within
//! bounds; nothing is added to a command that joins a kept box but the watch on the farms' names.

use super::spec::BoxSpec;
use std::collections::VecDeque;
use std::ffi::{CStr, CString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// At most this many entries of the object directories are looked at (a `statx` each).
const MAX_OBJECTS: usize = 200_000;

/// Where package managers put the files they link from their stores, in a project directory.
pub const FARMS: &[&str] = &["node_modules", ".venv", "venv"];

/// How deep below the workspace a project's farm is looked for (`packages/app/node_modules`).
const FARM_DEPTH: usize = 2;
/// At most this many directories are read looking for farms, and, in each farm, this many
/// directories and regular files looked at; of a directory's files, the first few (a package's
/// files are linked all or none, so a farm is told by a few of each of many packages).
const MAX_PROJECT_DIRS: usize = 256;
const MAX_FARM_DIRS: usize = 1_000;
const MAX_FARM_FILES: usize = 4_000;
const FILES_PER_DIR: usize = 4;

/// What the box about to be built from `spec` must know of hard links in its workspace: the
/// workspace's git objects shared with another repository are made its own first (said once,
/// on standard error: there is nothing to do the next time); the link farms are returned, to
/// be shown copy-on-write (said each time a box is built with them). `Err` where a shared
/// object could not be made the workspace's own.
pub fn prepare(spec: &BoxSpec) -> Result<Vec<PathBuf>, String> {
    let Some(ws) = &spec.workspace else { return Ok(Vec::new()) };
    if let Some(git) = &spec.git_dir {
        let done = unshare_git_objects(git).map_err(|why| {
            format!(
                "{} shares files with another repository (hard links: a `git clone` of a local path), and one \
                 could not be made this one's own: {why}. Run `git repack -a -d` there, or clone again with \
                 --no-hardlinks",
                crate::text::path(git)
            )
        })?;
        if done.files > 0 {
            eprintln!(
                "agentsh: {} shared {} with another repository by hard link (a `git clone` of a local path does \
                 that): a command in the sandbox writing one would have changed that repository too. They are now \
                 this repository's own copies, with the same bytes ({} KiB copied). `git clone --no-hardlinks` \
                 avoids it",
                crate::text::sanitize::sanitize(&crate::text::path(&super::join(git, "objects"))),
                crate::text::count(done.files, "file", "files"),
                done.bytes.div_ceil(1024),
            );
        }
        if done.truncated {
            eprintln!(
                "agentsh: {} holds more than {MAX_OBJECTS} files: those past them were not checked for hard links \
                 to another repository (`git gc` packs them)",
                crate::text::sanitize::sanitize(&crate::text::path(&super::join(git, "objects")))
            );
        }
    }
    let found = farms(ws);
    let untold: Vec<String> = (found.iter())
        .filter(|(_, how)| *how == Sharing::Untold)
        .map(|(f, _)| crate::text::sanitize::sanitize(&crate::text::path(f)))
        .collect();
    if !untold.is_empty() {
        eprintln!(
            "agentsh: {}: too many directories to tell within bounds whether {} files hard-linked from a package \
             store (pnpm, bun and uv link them), so the sandbox shows {} copy-on-write all the same: what a command \
             writes there stays in the sandbox",
            untold.join(", "),
            if untold.len() == 1 { "it holds" } else { "they hold" },
            if untold.len() == 1 { "it" } else { "them" },
        );
    }
    let farms: Vec<PathBuf> = found.iter().filter(|(_, how)| *how == Sharing::Linked).map(|(f, _)| f.clone()).collect();
    if !farms.is_empty() {
        let names: Vec<String> = farms.iter().map(|f| crate::text::sanitize::sanitize(&crate::text::path(f))).collect();
        eprintln!(
            "agentsh: {} {} files hard-linked from a package store outside the workspace (pnpm, bun and uv link \
             them): the sandbox shows {} copy-on-write, so what a command writes there stays in the sandbox and \
             never reaches the store or the other projects sharing it. To have installs in the sandbox land in \
             the project, let the package manager copy (pnpm: package-import-method=copy; uv: UV_LINK_MODE=copy; \
             bun: --backend=copyfile)",
            names.join(", "),
            if farms.len() == 1 { "holds" } else { "hold" },
            if farms.len() == 1 { "it" } else { "them" },
        );
    }
    Ok(found.into_iter().map(|(f, _)| f).collect())
}

/// What [`unshare_git_objects`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unshared {
    /// Objects (loose ones and packs) that were shared and now are the workspace's own.
    pub files: usize,
    /// Bytes copied.
    pub bytes: u64,
    /// There were more entries than [`MAX_OBJECTS`]: the rest was not looked at.
    pub truncated: bool,
}

/// Gives the git directory `git` (and its submodules' under `modules/`) its own copy of every
/// regular file in its object directories that has another name (`st_nlink > 1`): a copy in the
/// same directory, renamed over the shared name, with the same bytes, mode and times. `Err`
/// where one cannot be made: the box must not be built with it still shared.
pub fn unshare_git_objects(git: &Path) -> Result<Unshared, String> {
    let mut done = Unshared::default();
    // Copied first, made durable with one `syncfs` (a `fsync` each cost seconds for a clone's
    // thousands of objects), then renamed over the shared names, in the directories as opened.
    let mut copies: Vec<(Rc<OwnedFd>, CString, CString, PathBuf)> = Vec::new();
    let walked = shared_objects(git, |f| match copy(f) {
        Ok(tmp) => {
            copies.push((f.dir.clone(), tmp, f.name.to_owned(), f.path.clone()));
            done.bytes += f.size;
            Ok(())
        }
        // Removed meanwhile (the person's `git gc`): nothing left to share.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(why) => Err(format!("{}: {why}", f.path.display())),
    });
    let renamed = walked.and_then(|truncated| {
        if let Some((dir, ..)) = copies.first() {
            rustix::fs::syncfs(&**dir).map_err(|e| format!("{}: syncfs: {e}", git.display()))?;
        }
        for (dir, tmp, name, path) in &copies {
            rustix::fs::renameat(&**dir, tmp.as_c_str(), &**dir, name.as_c_str())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            done.files += 1;
        }
        Ok(truncated)
    });
    match renamed {
        Ok(truncated) => {
            done.truncated = truncated;
            Ok(done)
        }
        Err(why) => {
            for (dir, tmp, ..) in &copies {
                let _ = rustix::fs::unlinkat(&**dir, tmp.as_c_str(), rustix::fs::AtFlags::empty());
            }
            Err(why)
        }
    }
}

/// How many files of the git directory `git`'s object directories (and its submodules') are
/// shared with another repository, without changing them (`agentsh doctor`); `None` past
/// [`MAX_OBJECTS`] entries.
pub fn count_shared_git_objects(git: &Path) -> Option<usize> {
    let mut n = 0;
    let truncated = shared_objects(git, |_| {
        n += 1;
        Ok(())
    })
    .ok()?;
    (!truncated).then_some(n)
}

/// One file of an object directory that has another name: the directory it is in (opened), its
/// name there, its path (to tell), size, mode and modification time.
struct Shared<'a> {
    dir: &'a Rc<OwnedFd>,
    name: &'a CStr,
    path: PathBuf,
    size: u64,
    mode: u32,
    modified: rustix::fs::StatxTimestamp,
}

/// Calls `each` with every regular file of `git`'s object directories, and its submodules',
/// that has another name; whether there were more entries than [`MAX_OBJECTS`] (the rest not
/// looked at). Every directory is opened beneath `git` with no link followed (rt8 A1: a box
/// made a submodule's `objects` a link to a directory of the person's, and every hard-linked
/// file there was rewritten by this walk), and on `git`'s own file system: what is changed is
/// a name in the workspace's stores, never a file elsewhere.
fn shared_objects(git: &Path, mut each: impl FnMut(&Shared<'_>) -> Result<(), String>) -> Result<bool, String> {
    use rustix::fs::{AtFlags, FileType, StatxFlags, statx};
    let Ok(top) = super::beneath::dir(git) else { return Ok(false) };
    let Ok(dev) = rustix::fs::fstat(&top).map(|s| s.st_dev) else { return Ok(false) };
    let mut stores = vec![PathBuf::from("objects")];
    let mut modules = Vec::new();
    super::gitcode::git_dirs_under(&super::join(git, "modules"), &mut modules, 0);
    stores.extend(modules.iter().filter_map(|m| Some(m.strip_prefix(git).ok()?.join("objects"))));
    let mut seen = 0;
    for store in stores {
        let mut queue = VecDeque::from([store]);
        while let Some(rel) = queue.pop_front() {
            let Ok(fd) = super::beneath::subdir(&top, &rel) else { continue };
            if rustix::fs::fstat(&fd).map_or(true, |s| s.st_dev != dev) {
                continue;
            }
            let Ok(listed) = rustix::io::fcntl_dupfd_cloexec(&fd, 0) else { continue };
            let dir = Rc::new(fd);
            let Ok(mut entries) = rustix::fs::Dir::new(listed) else { continue };
            while let Some(Ok(e)) = entries.read() {
                let name = e.file_name();
                if matches!(name.to_bytes(), b"." | b"..") {
                    continue;
                }
                seen += 1;
                if seen > MAX_OBJECTS {
                    return Ok(true);
                }
                let Ok(st) = statx(&*dir, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BASIC_STATS) else {
                    continue;
                };
                let here = rel.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
                match FileType::from_raw_mode(st.stx_mode.into()) {
                    FileType::Directory => queue.push_back(here),
                    FileType::RegularFile if st.stx_nlink > 1 => each(&Shared {
                        dir: &dir,
                        name,
                        path: git.join(&here),
                        size: st.stx_size,
                        mode: st.stx_mode.into(),
                        modified: st.stx_mtime,
                    })?,
                    _ => {}
                }
            }
        }
    }
    Ok(false)
}

/// A copy of `f` beside it, in its directory, with the same bytes, permissions (no set-user-ID
/// or set-group-ID bit: git's objects have none) and modification time; its name.
fn copy(f: &Shared<'_>) -> std::io::Result<CString> {
    use rustix::fs::{Mode, OFlags, openat};
    let dir = &**f.dir;
    let mut tmp = format!(".agentsh-unshare-{}-", std::process::id()).into_bytes();
    tmp.extend_from_slice(f.name.to_bytes());
    let tmp = CString::new(tmp).map_err(std::io::Error::other)?;
    let from =
        openat(dir, f.name, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())?;
    let mut from = std::fs::File::from(from);
    if !from.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let _ = rustix::fs::unlinkat(dir, tmp.as_c_str(), rustix::fs::AtFlags::empty());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let to = openat(dir, tmp.as_c_str(), flags, Mode::from_raw_mode(0o600))?;
    let mut to = std::fs::File::from(to);
    let made = (|| {
        std::io::copy(&mut from, &mut to)?;
        to.set_permissions(std::fs::Permissions::from_mode(f.mode & 0o777))?;
        let modified =
            std::time::UNIX_EPOCH + std::time::Duration::new(f.modified.tv_sec.max(0) as u64, f.modified.tv_nsec);
        to.set_times(std::fs::FileTimes::new().set_modified(modified))?;
        Ok(())
    })();
    match made {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = rustix::fs::unlinkat(dir, tmp.as_c_str(), rustix::fs::AtFlags::empty());
            Err(e)
        }
    }
}

use std::os::unix::fs::PermissionsExt;

/// The link farms in the workspace `ws`: each [`FARMS`] directory of it or of a project
/// directory below it (to [`FARM_DEPTH`]) that holds a regular file with another name, or that
/// could not be told within the bounds (shown copy-on-write all the same: fail closed). Neither
/// a link nor another file system is followed.
pub fn link_farms(ws: &Path) -> Vec<PathBuf> {
    farms(ws).into_iter().map(|(p, _)| p).collect()
}

/// [`link_farms`], each with whether it was told ([`Sharing::Linked`]) or not
/// ([`Sharing::Untold`]).
pub fn farms(ws: &Path) -> Vec<(PathBuf, Sharing)> {
    let Ok(top) = std::fs::symlink_metadata(ws) else { return Vec::new() };
    let dev = top.dev();
    let mut out = Vec::new();
    let mut queue = VecDeque::from([(ws.to_path_buf(), 0)]);
    let mut read = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        read += 1;
        if read > MAX_PROJECT_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name();
            let p = e.path();
            if FARMS.iter().any(|f| name == *f) {
                if e.metadata().is_ok_and(|m| m.dev() == dev) {
                    match shares_a_file(&p, dev) {
                        Sharing::Unshared => {}
                        found => out.push((p, found)),
                    }
                }
            } else if depth < FARM_DEPTH && !name.as_encoded_bytes().starts_with(b".") && name != "target" {
                queue.push_back((p, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// What a package directory is to the box.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sharing {
    /// A file in it has another name: a store's hard link.
    Linked,
    /// None of the files looked at has, and they were enough to tell.
    Unshared,
    /// The bounds ran out before enough files were looked at to tell (rt5 A10): taken as linked.
    Untold,
}

/// Of a directory, at most this many subdirectories are walked, spread over all of them: a
/// package store's layout (`node_modules/.pnpm/<pkg>@<v>/node_modules/<pkg>/`, files four
/// levels down under 500 or more siblings) is reached within the bounds however wide it is.
const SUBDIRS_PER_DIR: usize = 16;
/// A farm none of whose files looked at is linked is unshared only once this many were looked
/// at, in this many directories, or it was walked whole.
const ENOUGH_FILES: usize = 64;
const ENOUGH_DIRS: usize = 16;

/// Whether the directory `farm` holds a regular file with another name: walked breadth first,
/// a few files of each directory and at most [`SUBDIRS_PER_DIR`] of its subdirectories, within
/// bounds. A package's files are linked all or none, so a farm is told by a few files of each of
/// several packages; where the bounds end before enough were looked at, it is [`Sharing::Untold`].
fn shares_a_file(farm: &Path, dev: u64) -> Sharing {
    let mut queue = VecDeque::from([farm.to_path_buf()]);
    let (mut dirs, mut files, mut dirs_with_files) = (0, 0, 0);
    let mut whole = true;
    while let Some(dir) = queue.pop_front() {
        dirs += 1;
        if dirs > MAX_FARM_DIRS {
            whole = false;
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let (mut here, mut subdirs) = (0, Vec::new());
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                subdirs.push(e.path());
            } else if t.is_file() && here < FILES_PER_DIR {
                here += 1;
                files += 1;
                if e.metadata().is_ok_and(|m| m.nlink() > 1 && m.dev() == dev) {
                    return Sharing::Linked;
                }
            }
        }
        dirs_with_files += usize::from(here > 0);
        if files >= MAX_FARM_FILES {
            whole = false;
            break;
        }
        if subdirs.len() > SUBDIRS_PER_DIR {
            whole = false;
            // Spread over the whole listing, not its first few: what a directory lists first
            // says nothing of the rest.
            let step = subdirs.len() as f64 / SUBDIRS_PER_DIR as f64;
            queue.extend((0..SUBDIRS_PER_DIR).map(|i| subdirs[(i as f64 * step) as usize].clone()));
        } else {
            queue.extend(subdirs);
        }
    }
    if whole || (files >= ENOUGH_FILES && dirs_with_files >= ENOUGH_DIRS) { Sharing::Unshared } else { Sharing::Untold }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linked(from: &Path, to: &Path, body: &str) {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if !from.exists() {
            std::fs::create_dir_all(from.parent().unwrap()).unwrap();
            std::fs::write(from, body).unwrap();
        }
        std::fs::hard_link(from, to).unwrap();
    }

    #[test]
    fn shared_git_objects_become_the_workspaces_own_with_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (src, git) = (dir.path().join("src/.git/objects"), dir.path().join("ws/.git"));
        linked(&src.join("ab/cdef"), &git.join("objects/ab/cdef"), "blob");
        linked(&src.join("pack/p.pack"), &git.join("objects/pack/p.pack"), "pack");
        linked(&src.join("cd/0123"), &git.join("modules/sub/objects/cd/0123"), "sub blob");
        std::fs::write(git.join("modules/sub/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("objects/ab/own"), "own").unwrap();
        std::fs::set_permissions(git.join("objects/ab/cdef"), std::fs::Permissions::from_mode(0o444)).unwrap();
        assert_eq!(count_shared_git_objects(&git), Some(3));
        let done = unshare_git_objects(&git).unwrap();
        assert_eq!(done, Unshared { files: 3, bytes: 16, truncated: false });
        for (f, body) in
            [("objects/ab/cdef", "blob"), ("objects/pack/p.pack", "pack"), ("modules/sub/objects/cd/0123", "sub blob")]
        {
            let m = std::fs::metadata(git.join(f)).unwrap();
            assert_eq!(m.nlink(), 1, "{f}");
            assert_eq!(std::fs::read_to_string(git.join(f)).unwrap(), body);
        }
        assert_eq!(std::fs::metadata(git.join("objects/ab/cdef")).unwrap().mode() & 0o777, 0o444);
        assert_eq!(count_shared_git_objects(&git), Some(0));
        // The source's own are untouched, and alone now.
        assert_eq!(std::fs::metadata(src.join("ab/cdef")).unwrap().nlink(), 1);
        std::fs::write(git.join("objects/ab/cdef"), "changed").unwrap_or_else(|_| {
            std::fs::set_permissions(git.join("objects/ab/cdef"), std::fs::Permissions::from_mode(0o644)).unwrap();
            std::fs::write(git.join("objects/ab/cdef"), "changed").unwrap();
        });
        assert_eq!(std::fs::read_to_string(src.join("ab/cdef")).unwrap(), "blob");
        // Nothing left over, and nothing more to do.
        assert!(
            std::fs::read_dir(git.join("objects/ab"))
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().starts_with(".agentsh"))
        );
        assert_eq!(unshare_git_objects(&git).unwrap().files, 0);
    }

    /// rt8 A1: a store (or `modules`) a box made a link to a directory of the person's is not
    /// walked: the files there keep their other names.
    #[test]
    fn a_store_that_is_a_link_is_not_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (victim, git) = (root.join("victim"), root.join("ws/.git"));
        linked(&victim.join("a"), &victim.join("b"), "the person's");
        linked(&victim.join("a"), &victim.join("d/c"), "");
        std::fs::create_dir_all(git.join("objects")).unwrap();
        std::fs::create_dir_all(git.join("modules/sub")).unwrap();
        std::fs::write(git.join("modules/sub/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink(&victim, git.join("modules/sub/objects")).unwrap();
        std::fs::create_dir_all(root.join("nested/.git")).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("nested/.git/objects")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("nested/.git/modules")).unwrap();
        let ino = |p: &str| std::fs::metadata(victim.join(p)).unwrap().ino();
        let before = [ino("a"), ino("b"), ino("d/c")];
        for g in [git, root.join("nested/.git")] {
            assert_eq!(count_shared_git_objects(&g), Some(0));
            assert_eq!(unshare_git_objects(&g).unwrap(), Unshared::default());
        }
        assert_eq!([ino("a"), ino("b"), ino("d/c")], before);
        assert_eq!(std::fs::metadata(victim.join("a")).unwrap().nlink(), 3);
    }

    /// rt8 A5: a job in a kept box swapped a hard-linked object for a link to a secret of the
    /// person's between the walk's look and the copy's open, and the builder copied the secret
    /// into the workspace. The copy opens the name in the directory it walked, following no
    /// link: a name swapped meanwhile is refused, and nothing of what it points to is copied.
    #[test]
    fn a_name_swapped_for_a_link_after_the_look_is_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (secret, git) = (root.join("home/.ssh/id_ed25519"), root.join("ws/.git"));
        std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
        std::fs::write(&secret, "PRIVATE KEY A5").unwrap();
        linked(&root.join("src/objects/ab/cdef"), &git.join("objects/ab/cdef"), "blob");
        let mut tried = 0;
        let walked = shared_objects(&git, |f| {
            // The swap, in the moment between the walk's `statx` and the copy.
            std::fs::remove_file(&f.path).unwrap();
            std::os::unix::fs::symlink(&secret, &f.path).unwrap();
            tried += 1;
            match copy(f) {
                Ok(tmp) => Err(format!("copied through the link: {tmp:?}")),
                Err(_) => Ok(()),
            }
        });
        assert_eq!(walked, Ok(false));
        assert_eq!(tried, 1);
        let left: Vec<_> =
            std::fs::read_dir(git.join("objects/ab")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, ["cdef"], "no copy made beside it");
    }

    #[test]
    fn a_farm_is_a_package_directory_holding_a_file_linked_from_outside() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ws) = (dir.path().join("store"), dir.path().join("ws"));
        linked(&store.join("a"), &ws.join("node_modules/.pnpm/left@1/node_modules/left/index.js"), "x");
        linked(&store.join("b"), &ws.join("packages/api/.venv/lib/python3/site-packages/m/__init__.py"), "y");
        linked(&store.join("c"), &ws.join("a/b/c/node_modules/too-deep.js"), "z");
        std::fs::create_dir_all(ws.join("web/node_modules/plain")).unwrap();
        std::fs::write(ws.join("web/node_modules/plain/index.js"), "copied").unwrap();
        std::fs::write(ws.join("node_modules/.modules.yaml"), "own").unwrap();
        assert_eq!(link_farms(&ws), [ws.join("node_modules"), ws.join("packages/api/.venv")]);
    }

    /// rt5 A10: pnpm puts every file four levels down, under one directory per package; with
    /// 500 or more packages the walk used up its directories before it reached a file, and the
    /// farm was written through to the store. Now it is told at any width; a copied tree as wide
    /// is told unshared, and one the bounds cannot tell is taken as a farm.
    #[test]
    fn a_wide_pnpm_farm_is_told_and_what_cannot_be_told_is_taken_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let (store, ws) = (dir.path().join("store"), dir.path().join("ws"));
        let dev = std::fs::metadata(dir.path()).unwrap().dev();
        for n in 0..600 {
            let pkg = format!("node_modules/.pnpm/pkg{n:04}@1.0.0/node_modules/pkg{n:04}");
            linked(&store.join(format!("{n}")), &ws.join(format!("{pkg}/index.js")), "x");
        }
        assert_eq!(shares_a_file(&ws.join("node_modules"), dev), Sharing::Linked);
        for n in 0..600 {
            let pkg = ws.join(format!("copied/node_modules/pkg{n:04}"));
            std::fs::create_dir_all(pkg.join("lib")).unwrap();
            for f in ["package.json", "index.js", "README.md", "LICENSE"] {
                std::fs::write(pkg.join(f), "own").unwrap();
            }
        }
        assert_eq!(shares_a_file(&ws.join("copied/node_modules"), dev), Sharing::Unshared);
        // Directories only, wider and deeper than the bounds: nothing to tell by.
        for a in 0..20 {
            for b in 0..20 {
                for c in 0..4 {
                    std::fs::create_dir_all(ws.join(format!("empty/node_modules/{a}/{b}/{c}"))).unwrap();
                }
            }
        }
        assert_eq!(shares_a_file(&ws.join("empty/node_modules"), dev), Sharing::Untold);
        let found = farms(&ws);
        assert_eq!(
            found,
            [(ws.join("empty/node_modules"), Sharing::Untold), (ws.join("node_modules"), Sharing::Linked),]
        );
    }
}
