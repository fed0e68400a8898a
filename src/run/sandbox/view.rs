//! The box's file system view, made once per box by the builder ([`super::holder`]) in the
//! user and mount namespace it has just made, before any command runs there. Mounts made here
//! never reach the person's own view: the namespace is private (`MS_PRIVATE`), and a command in
//! the box can neither mount nor unmount (Landlock refuses a confined process any change to
//! the mounts).
//!
//! Every source is taken (a detached copy of its mount, `open_tree`) before anything is hidden,
//! then the whole tree is made read-only in one call, the hidden places are covered with empty
//! file systems, and what the spec names is put back in them: the private places first, then
//! what is shown read-only, the caches, the writable roots, the workspace's code paths, and the
//! denied paths last, on top of everything.

use super::spec::{BoxSpec, Origin, RUN_VISIBLE, SYSTEM_WALKED};
use super::{join, within};
use rustix::mount::{MountAttrFlags, MoveMountFlags, OpenTreeFlags};
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What making the view found, for the record and `agentsh policy`.
#[derive(Debug, Default)]
pub struct Made {
    /// The code paths bound read-only in the workspace (`.git/config`, `modules/*/hooks`, ...).
    pub code_paths: Vec<PathBuf>,
    /// What could not be shown, and why (a cache whose overlay the file system refused, ...).
    pub notes: Vec<String>,
}

const RO: u64 = MountAttrFlags::MOUNT_ATTR_RDONLY.bits() as u64;
const NOSUID: u64 = MountAttrFlags::MOUNT_ATTR_NOSUID.bits() as u64;

/// Makes the view in this process's (new, private) mount namespace. `Err` leaves it half made:
/// the caller must not run anything in it.
pub fn make(spec: &BoxSpec) -> Result<Made, String> {
    use nix::mount::{MsFlags, mount};
    let none: Option<&str> = None;
    let mut made = Made::default();
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(|e| format!("making / private: {e}"))?;

    // Where the private places are kept, made (or found) while the store is still in sight.
    let store = Store::open(&spec.store)?;

    // Every source, taken while everything is still in sight.
    let privates: Vec<(PathBuf, Option<OwnedFd>)> = spec
        .private
        .iter()
        .map(|p| Ok((p.path.clone(), store.backing(&p.path, &spec.home)?)))
        .collect::<Result<_, String>>()?;
    let mut visible: Vec<(PathBuf, OwnedFd, bool)> = Vec::new();
    for v in &spec.visible {
        for path in expand(&v.path) {
            // What holds secrets is shown as a copy without them ([`super::copies`]).
            let source = match super::copies::copied(&path, &spec.home, &spec.cargo_home) {
                Some(how) if v.from != Origin::Setting => match store.copy(&path, how, &spec.name) {
                    Ok(Some(copy)) => copy,
                    Ok(None) => continue,
                    Err(why) => {
                        made.notes.push(format!("{}: not shown ({why})", path.display()));
                        continue;
                    }
                },
                _ => path.clone(),
            };
            // The directory the command starts in, through an overlay of its own: the kernel
            // connects no path socket through one (rt4 R11: the person's ssh-agent listening in
            // `~/run`, shown as the command's cwd), whenever the socket was made.
            if v.from == Origin::Cwd && source.is_dir() {
                match store.overlay(&source, None) {
                    Ok(fd) => visible.push((path, fd, true)),
                    Err(why) => made.notes.push(format!("{}: not shown ({why})", path.display())),
                }
                continue;
            }
            // A directory of `$PATH` or a toolchain's that the environment names is judged where
            // it really is, on the directory opened: a link on the way (a box of another
            // workspace made `bin` there a link to `~/.ssh`) is followed only to where the
            // spec would show it (rt5 B6).
            if matches!(v.from, Origin::Path | Origin::Toolchain) && source == path && !spec.listed(&path) {
                match take_where(&path, |real| spec.refuses_as_env_dir(real, v.from == Origin::Path)) {
                    Ok(Some((fd, dir))) => visible.push((path, fd, dir)),
                    Ok(None) => {}
                    Err((real, why)) => eprintln!(
                        "agentsh: note: not in the sandbox: {} (a link on the way leads to {}, and {why})",
                        crate::text::sanitize::sanitize(&path.display().to_string()),
                        crate::text::sanitize::sanitize(&real.display().to_string()),
                    ),
                }
                continue;
            }
            if let Some((fd, dir)) = take(&source, true) {
                visible.push((path, fd, dir));
            }
        }
    }
    // What `/run` keeps in sight: the resolver's directory where `/etc/resolv.conf` points into
    // it, and NixOS's profiles.
    let mut run_visible: Vec<PathBuf> = RUN_VISIBLE.iter().map(PathBuf::from).collect();
    if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
        && let Some(dir) = target.parent().filter(|d| within(d, Path::new("/run")) && *d != Path::new("/run"))
    {
        run_visible.push(dir.to_path_buf());
    }
    for path in run_visible {
        if let Some((fd, dir)) = take(&path, true) {
            visible.push((path, fd, dir));
        }
    }
    let mut caches: Vec<(PathBuf, OwnedFd)> = Vec::new();
    for (n, c) in spec.caches.iter().enumerate() {
        if !c.path.is_dir() {
            continue;
        }
        match store.overlay(&c.path, Some(&format!("cache/{n}"))) {
            Ok(fd) => caches.push((c.path.clone(), fd)),
            Err(why) => {
                made.notes.push(format!("{}: not copied on write ({why}); the box has an empty one", c.path.display()))
            }
        }
    }
    let write: Vec<(PathBuf, OwnedFd)> =
        spec.write.iter().filter_map(|w| take(&w.path, false).map(|(fd, _)| (w.path.clone(), fd))).collect();
    // The link farms in the workspace, copy-on-write; one the file system will not overlay is
    // shown read-only rather than written through to the store it shares files with.
    let mut farms: Vec<(PathBuf, OwnedFd)> = Vec::new();
    for path in &spec.linked {
        match store.overlay(path, Some(&format!("linked/{}", path_hash(path)))) {
            Ok(fd) => farms.push((path.clone(), fd)),
            Err(why) => match take(path, true) {
                Some((fd, true)) => {
                    made.notes.push(format!("{}: not copied on write ({why}); read-only", path.display()));
                    farms.push((path.clone(), fd));
                }
                _ => return Err(format!("{}: neither copied on write ({why}) nor read-only", path.display())),
            },
        }
    }
    // Read-only binds: a device is still read and written (the mount's flag does not reach a
    // device's own file operations), but its mode, owner and times, which are the host's, cannot
    // change (`chmod 666` of the person's terminal, `touch /dev/urandom`).
    let devices: Vec<(PathBuf, OwnedFd)> = spec
        .devices
        .iter()
        .chain(&spec.ttys)
        .filter_map(|d| take(&d.path, true).map(|(fd, _)| (d.path.clone(), fd)))
        .collect();
    // Found while everything is in sight: where agentsh's own directories really are, the
    // workspace files home's start-up files link into, and what of the system others may not read.
    let own = own_places(spec, &mut made.notes);
    let linked = linked_from_home(spec);
    let secrets = unreadable_system(spec, &mut made.notes);
    let (in_toolchains, toolchain_copies) = toolchain_secrets(spec, &store, &mut made.notes);

    // Read-only, everything: no write and no change of mode, owner, time or attribute anywhere
    // the spec does not put something writable back (issue 25: `chmod 666 ~/.bashrc`).
    let root = c_path(Path::new("/"))?;
    super::sys::mount_setattr(rustix::fs::CWD, &root, libc::AT_RECURSIVE as libc::c_uint, RO | NOSUID, 0)
        .map_err(|e| format!("making / read-only: {e}"))?;

    // Hidden whole, then filled with what the spec shows there.
    // Each cover's own mount, held to make it read-only once filled (by then something else
    // may be mounted on top of it at the same path: the private home on `/root`).
    let mut covers: Vec<(PathBuf, OwnedFd)> = Vec::new();
    for h in &spec.hidden {
        if h.path.is_dir() {
            tmpfs(&h.path, "mode=0755")?;
            covers.push((h.path.clone(), mount_of(&h.path)?));
        }
    }
    dev(spec, devices)?;
    covers.push((PathBuf::from("/dev"), mount_of(Path::new("/dev"))?));

    let mut privates = privates;
    privates.sort_by_key(|(p, _)| p.as_os_str().len());
    for (path, backing) in privates {
        let Some(()) = mountpoint(&path, true, &made.notes)? else {
            made.notes.push(format!("{}: not made private (it does not exist and cannot be made)", path.display()));
            continue;
        };
        match backing {
            Some(fd) => put(&fd, &path)?,
            None => tmpfs(&path, "mode=0700")?,
        }
    }
    visible.sort_by_key(|(p, ..)| p.as_os_str().len());
    for (path, fd, dir) in visible {
        if mountpoint(&path, dir, &made.notes)?.is_some() {
            put(&fd, &path)?;
        }
    }
    caches.sort_by_key(|(p, _)| p.as_os_str().len());
    for (path, fd) in caches {
        if mountpoint(&path, true, &made.notes)?.is_some() {
            put(&fd, &path)?;
        }
    }
    for (path, fd) in write {
        if mountpoint(&path, true, &made.notes)?.is_some() {
            put(&fd, &path)?;
        }
    }
    // On the workspace's own mount: a directory there, which the box cannot have replaced yet.
    for (path, fd) in farms {
        put(&fd, &path)?;
    }
    let mut pinned = Vec::new();
    if let (Some(_), Some(git)) = (&spec.workspace, &spec.git_dir) {
        made.code_paths = protect_git(git, &mut pinned)?;
    }
    // The rest, the git directory's included (what git settings name there): `.agents`, the
    // `.git` files, what git settings name (`gitcode`). A file bound so cannot be renamed or
    // removed either (EBUSY).
    if let Some(ws) = &spec.workspace {
        for r in &spec.read_only {
            // A submodule's cloned in place (its `.git` a directory) has its `modules` too.
            if !made.code_paths.contains(&r.path) && bind_code_path(ws, &r.path, &mut pinned)? {
                made.code_paths.push(r.path.clone());
            }
        }
    }

    // What home's start-up files link into a writable root, bound read-only as the code paths
    // are; and what holds agentsh's own directories there made mounts, so their covers (last,
    // below) cannot be renamed away with what holds them (`mv config config.old; mkdir config`).
    let roots = writable_roots(spec);
    for path in &linked {
        for root in roots.iter().filter(|w| within(path, w)) {
            if bind_read_only(root, path, &mut pinned)? && !made.code_paths.contains(path) {
                made.code_paths.push(path.clone());
            }
        }
    }
    // A code file that is also a file elsewhere in a writable root, by a hard link (rt6a X5:
    // `ln githooks/pre-commit .git/hooks/pre-commit`): its other names read-only too.
    for path in other_names(&made.code_paths, &roots, MAX_NAMES_WALKED)? {
        for root in roots.iter().filter(|w| within(&path, w)) {
            if bind_read_only(root, &path, &mut pinned)? && !made.code_paths.contains(&path) {
                made.code_paths.push(path.clone());
            }
        }
    }
    for path in &own {
        for root in roots.iter().filter(|w| within(path, w)) {
            pin(root, path, &mut pinned)?;
        }
    }

    let mut cover = Cover::default();
    for d in spec.deny.iter().filter(|d| d.from != Origin::Agentsh) {
        for path in expand(&d.path) {
            cover.cover(&path)?;
        }
    }
    for path in &secrets {
        cover.cover(path)?;
    }
    for (path, fd) in &toolchain_copies {
        put(fd, path)?;
    }
    for path in &in_toolchains {
        cover.cover(path)?;
    }
    // Last, so nothing mounted after reopens them.
    for path in &own {
        cover.cover(path)?;
    }
    // The covers take no new entry from inside the box.
    let empty = CString::default();
    for (path, fd) in &covers {
        super::sys::mount_setattr(fd.as_fd(), &empty, libc::AT_EMPTY_PATH as libc::c_uint, RO | NOSUID, 0)
            .map_err(|e| format!("making {} read-only: {e}", path.display()))?;
    }
    Ok(made)
}

/// The mount at `path` (the one on top now), held by a descriptor that keeps naming it after
/// another is mounted over it.
/// The text of a settings file the box gets a copy of, read as every file of the person's
/// that agentsh does not control: a regular file only, never waited on, at most 4 MiB.
fn settings_text(path: &Path) -> Option<String> {
    let bytes = crate::policy::files::read_capped(path, 4 << 20).ok()?;
    String::from_utf8(bytes).ok()
}

fn mount_of(path: &Path) -> Result<OwnedFd, String> {
    use nix::fcntl::{OFlag, open};
    open(path, OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A detached copy of the mount tree at `path` (and of what is mounted beneath it), read-only
/// when `read_only`; and whether it is a directory. `None` where `path` does not exist.
fn take(path: &Path, read_only: bool) -> Option<(OwnedFd, bool)> {
    let dir = std::fs::metadata(path).ok()?.is_dir();
    let at = rustix::fs::open(path, rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC, rustix::fs::Mode::empty());
    Some((take_at(&at.ok()?, read_only)?, dir))
}

/// [`take`] of the directory `path` (read-only), opened once, following links, and taken only
/// where `refused` has nothing against where it really is: `Err` with that place and why.
fn take_where(
    path: &Path,
    refused: impl Fn(&Path) -> Option<&'static str>,
) -> Result<Option<(OwnedFd, bool)>, (PathBuf, &'static str)> {
    use rustix::fs::{Mode, OFlags};
    let Ok(dir) = rustix::fs::open(path, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) else {
        return Ok(take(path, true));
    };
    let real = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).unwrap_or_else(|_| path.to_path_buf());
    if real != path
        && let Some(why) = refused(&real)
    {
        return Err((real, why));
    }
    let flags = OpenTreeFlags::OPEN_TREE_CLONE
        | OpenTreeFlags::OPEN_TREE_CLOEXEC
        | OpenTreeFlags::AT_RECURSIVE
        | OpenTreeFlags::AT_EMPTY_PATH;
    let Ok(fd) = rustix::mount::open_tree(&dir, "", flags) else { return Ok(None) };
    let empty = CString::default();
    let at = (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint;
    if super::sys::mount_setattr(fd.as_fd(), &empty, at, RO | NOSUID, 0).is_err() {
        return Ok(None);
    }
    Ok(Some((fd, true)))
}

/// Attaches the detached mount `fd` at `path`.
fn put(fd: &OwnedFd, path: &Path) -> Result<(), String> {
    rustix::mount::move_mount(fd.as_fd(), "", rustix::fs::CWD, path, MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH)
        .map_err(|e| format!("mounting at {}: {e}", path.display()))
}

fn tmpfs(path: &Path, options: &str) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(Some("tmpfs"), path, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some(options))
        .map_err(|e| format!("covering {}: {e}", path.display()))
}

fn c_path(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{} holds a NUL byte", p.display()))
}

/// Makes sure `path` exists as a directory (`dir`) or a file, for a mount to be put there:
/// inside a cover or a private place it is made; elsewhere (the read-only system) it must
/// exist already. `Ok(None)`: it cannot be (it is skipped). A symbolic link on the way, which
/// only a box could have left in its private places, is replaced, so nothing is mounted
/// anywhere but where the spec says.
fn mountpoint(path: &Path, dir: bool, _notes: &[String]) -> Result<Option<()>, String> {
    let mut at = PathBuf::from("/");
    let parts: Vec<_> = path.components().skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let last = i + 1 == parts.len();
        let want_dir = !last || dir;
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() || (m.is_dir() != want_dir) => {
                let removed = if m.is_dir() { std::fs::remove_dir(&at) } else { std::fs::remove_file(&at) };
                if removed.is_err() {
                    return Ok(None);
                }
                if !create(&at, want_dir) {
                    return Ok(None);
                }
            }
            Ok(_) => {}
            Err(_) => {
                if !create(&at, want_dir) {
                    return Ok(None);
                }
            }
        }
    }
    Ok(Some(()))
}

fn create(at: &Path, dir: bool) -> bool {
    if dir {
        std::fs::DirBuilder::new().mode(0o755).create(at).is_ok()
    } else {
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).open(at).is_ok()
    }
}

use std::os::unix::fs::OpenOptionsExt;

/// `/dev`, rebuilt: the devices the spec lists (bound from the real ones, so they work though
/// the new file system is `nodev`), the command's own terminals in `/dev/pts`, a private
/// `/dev/shm`, and the usual links. No disk, no `/dev/mem`, no other terminal, no `/dev/log`.
fn dev(spec: &BoxSpec, devices: Vec<(PathBuf, OwnedFd)>) -> Result<(), String> {
    tmpfs(Path::new("/dev"), "mode=0755")?;
    for d in ["/dev/pts", "/dev/shm"] {
        std::fs::DirBuilder::new().mode(0o755).create(d).map_err(|e| format!("{d}: {e}"))?;
    }
    for (link, to) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
        ("/dev/ptmx", "pts/ptmx"),
    ] {
        std::os::unix::fs::symlink(to, link).map_err(|e| format!("{link}: {e}"))?;
    }
    for (path, fd) in devices {
        if create(&path, false) {
            put(&fd, &path)?;
        }
    }
    tmpfs(Path::new("/dev/shm"), "mode=1777")?;
    let _ = spec;
    Ok(())
}

/// The workspace's git directory, made a mount of its own (a mount point cannot be renamed or
/// removed: `mv .git .old && git init` cannot swap it for one the command wrote, issue 25), and
/// every file or directory in it that git runs code from or reads its settings from, bound
/// read-only: `config`, `hooks`, `info`, `commondir`, `config.worktree`, the store's
/// `objects/info/alternates` and `http-alternates` (rt8 A2: [`alternates`]), and the same of each
/// submodule's and worktree's git directory under it. A missing `hooks` or `info` is made empty
/// first (as `git init` makes them), or a command could create `.git/hooks/pre-commit` or
/// `.git/info/exclude`. Its `modules` (and each submodule's) is bound read-only too, made
/// empty first where missing, and each git directory in it put back writable, a mount of its
/// own (its code paths then read-only as the workspace's): the box works in the submodules
/// there are, and cannot make the git directory of one the person has not initialised yet,
/// which their `git submodule update --init` would adopt and run the hooks of (rt7 A1).
fn protect_git(git: &Path, pinned: &mut Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    // Reached through a link (rt8 A1: a box of the workspace it is in made one on the way), it
    // is not the workspace's own: the box is not made.
    let at = match super::beneath::dir(git) {
        Ok(at) => at,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e} (a symbolic link on the way to it?)", git.display())),
    };
    let Some(fd) = take_at(&at, false) else { return Ok(Vec::new()) };
    put_at(&fd, &at, git)?;
    pinned.push(git.to_path_buf());
    let mut found = Vec::new();
    code_paths(git, &mut found, 0);
    let mut bound = Vec::new();
    for p in found {
        if bind_code_path(git, &p, pinned)? {
            bound.push(p);
        }
    }
    Ok(bound)
}

/// [`bind_read_only`], where `path` is a git directory's `modules` ([`is_modules`]) with each
/// git directory in it put back writable, a mount of its own.
fn bind_code_path(top: &Path, path: &Path, pinned: &mut Vec<PathBuf>) -> Result<bool, String> {
    // Taken before the read-only bind, which they would be copied from.
    let mut kept = Vec::new();
    if is_modules(path) {
        let mut dirs = Vec::new();
        super::gitcode::git_dirs_under(path, &mut dirs, 0);
        // One that cannot be taken stays read-only: the box cannot work in that submodule.
        // Taken and put back by descriptors opened with no link on the way (rt8 A1): a box
        // left running that puts one in place of a submodule's git directory meanwhile gets
        // nothing outside made writable.
        kept = dirs.into_iter().filter_map(|d| Some((take_at(&super::beneath::dir(&d).ok()?, false)?, d))).collect();
    }
    let bound = bind_read_only(top, path, pinned)?;
    for (fd, d) in kept.into_iter().filter(|_| bound) {
        let at = super::beneath::dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        put_at(&fd, &at, &d)?;
        // It, `modules` and the levels of a name with a slash (`modules/third_party/zlib`)
        // stay as they are now: mounts, or part of the read-only `modules`.
        pinned.extend(d.ancestors().take_while(|a| Some(*a) != path.parent()).map(Path::to_path_buf));
    }
    Ok(bound)
}

/// Whether `path`, one of [`code_paths`], is a git directory's `modules`: a directory (a link
/// is bound as itself, and what it names read-only whole, [`super::gitcode`]) beside a `HEAD`
/// (else it is read-only whole: a `core.hooksPath = modules` is no git directory's).
pub(crate) fn is_modules(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "modules")
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && path.parent().is_some_and(|g| g.join("HEAD").is_file())
}

/// Binds `path`, beneath `top` (a mount), read-only, where it exists; each directory between
/// them is first made a mount of its own (writable, as it was). A mount point cannot be renamed
/// or removed, nor can a directory on the way to one: else `mv .git/worktrees/wt x` (or
/// `mv .husky x`) and a fresh `commondir` (or `.husky/_/pre-commit`) in its place would sidestep
/// the bind (issue 25, rt-files F9). `pinned`: the directories made mounts so far.
fn bind_read_only(top: &Path, path: &Path, pinned: &mut Vec<PathBuf>) -> Result<bool, String> {
    if !within(path, top) || path == top || in_root(top, path)?.is_none() {
        return Ok(false);
    }
    pin(top, path, pinned)?;
    // Opened again below what `pin` mounted. A link (`.git/hooks -> ../githooks`, rt6a K3) is
    // bound as itself, a mount on the link that cannot be removed or replaced; what it names in
    // the workspace is bound apart ([`super::gitcode`]).
    let Some(at) = in_root(top, path)? else { return Ok(false) };
    let Some(fd) = take_at(&at, true) else { return Ok(false) };
    put_at(&fd, &at, path)?;
    Ok(true)
}

/// `path` in the root `top` (a writable root, or the git directory), opened (`O_PATH`) with no
/// link followed from `top` on, a link at the end itself: the builder takes and mounts what is
/// in a place a box may write by descriptor (rt8 A1), so a link a box left running in another
/// kept box puts on the way between a look and a mount has nothing bound elsewhere (a secret
/// shown in the box, a code path left writable). `Ok(None)` where it is not there; `Err` (no
/// box) where a link is on the way.
fn in_root(top: &Path, path: &Path) -> Result<Option<OwnedFd>, String> {
    let Ok(rel) = path.strip_prefix(top) else { return Ok(None) };
    let opened = super::beneath::dir(top).and_then(|root| {
        if rel.as_os_str().is_empty() { Ok(root) } else { super::beneath::open(&root, rel, rustix::fs::OFlags::PATH) }
    });
    match opened {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(format!("{}: {e} (a symbolic link on the way to it?)", path.display())),
    }
}

/// A detached copy of the mount tree at the descriptor `at` (what [`in_root`] opened; a link
/// itself), read-only when `read_only`.
fn take_at(at: &OwnedFd, read_only: bool) -> Option<OwnedFd> {
    let flags = OpenTreeFlags::OPEN_TREE_CLONE
        | OpenTreeFlags::OPEN_TREE_CLOEXEC
        | OpenTreeFlags::AT_RECURSIVE
        | OpenTreeFlags::AT_EMPTY_PATH;
    let fd = rustix::mount::open_tree(at, "", flags).ok()?;
    if read_only {
        let empty = CString::default();
        let flags = (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint;
        super::sys::mount_setattr(fd.as_fd(), &empty, flags, RO | NOSUID, 0).ok()?;
    }
    Some(fd)
}

/// Attaches the detached mount `fd` on what the descriptor `at` names (`path`, to tell).
fn put_at(fd: &OwnedFd, at: &OwnedFd, path: &Path) -> Result<(), String> {
    let flags = MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH;
    rustix::mount::move_mount(fd.as_fd(), "", at.as_fd(), "", flags)
        .map_err(|e| format!("mounting at {}: {e}", path.display()))
}

/// Each directory between `top` and `path` (inside it) made a mount of its own, writable as it
/// was: a mount point cannot be renamed or removed, so what is bound or covered at `path` stays
/// where the spec put it. `pinned`: the directories made mounts so far.
fn pin(top: &Path, path: &Path, pinned: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut on_the_way: Vec<&Path> = path.ancestors().skip(1).take_while(|a| *a != top && within(a, top)).collect();
    on_the_way.reverse();
    for dir in on_the_way {
        if pinned.iter().any(|p| p == dir) {
            continue;
        }
        if let Some(at) = in_root(top, dir)?
            && rustix::fs::fstat(&at).is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_dir())
            && let Some(fd) = take_at(&at, false)
        {
            put_at(&fd, &at, dir)?;
        }
        pinned.push(dir.to_path_buf());
    }
    Ok(())
}

/// What git reads as code or settings in the git directory `git`, and in the git directories
/// of its submodules (`modules/*`, nested) and worktrees (`worktrees/*`); and its `modules`
/// directory, where git finds (and adopts) a submodule's git directory: bound read-only with
/// the git directories in it kept writable ([`protect_git`], [`is_modules`]). Each git
/// directory is reached, and what is missing in it made, with no link followed on the way (rt8
/// A1: a `modules` a box made a link to home had a `modules` made in every repository there).
pub(crate) fn code_paths(git: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    use super::beneath;
    if depth > 8 {
        return;
    }
    let Ok(dir) = beneath::dir(git) else { return };
    // A linked worktree's git directory (it has a `commondir`) keeps its submodules in the
    // common one.
    let modules = !beneath::exists(&dir, "commondir");
    let head = beneath::open(&dir, "HEAD", rustix::fs::OFlags::PATH)
        .ok()
        .and_then(|fd| rustix::fs::fstat(&fd).ok())
        .is_some_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode) == rustix::fs::FileType::RegularFile);
    // Made empty where missing, as `git init` makes them: else the box could make
    // `hooks/pre-commit`, or `info/exclude` to hide its files from `git status` (rt5 A13), or
    // `modules/<name>` for a submodule the person has not initialised yet, whose hooks the
    // person's `git submodule update --init` runs as it adopts it (rt7 A1). An empty `modules`
    // is as none to git.
    for name in ["hooks", "info", "modules"] {
        if (name != "modules" || modules) && head && !beneath::exists(&dir, name) {
            beneath::make_dir(&dir, name);
        }
    }
    if modules && beneath::exists(&dir, "modules") {
        out.push(join(git, "modules"));
    }
    for name in ["config", "hooks", "info", "commondir", "config.worktree", "gitdir"] {
        if beneath::exists(&dir, name) {
            out.push(join(git, name));
        }
    }
    alternates(&dir, git, head, out);
    // A submodule named with a slash has its git directory deeper (`modules/third_party/zlib`).
    let mut dirs = Vec::new();
    super::gitcode::git_dirs_under(&join(git, "modules"), &mut dirs, 0);
    if let Ok(worktrees) = beneath::subdir(&dir, "worktrees")
        && let Ok(mut entries) = rustix::fs::Dir::new(worktrees)
    {
        while let Some(Ok(e)) = entries.read() {
            let name = e.file_name().to_bytes();
            if e.file_type() == rustix::fs::FileType::Directory && name != b"." && name != b".." {
                dirs.push(join(git, "worktrees").join(std::ffi::OsStr::from_bytes(name)));
            }
        }
    }
    for d in dirs {
        code_paths(&d, out, depth + 1);
    }
}

/// The files that send git to another object store (rt8 A2): `objects/info/alternates` (git
/// looks up there every object the store lacks, so a box that removes an object and names a
/// store of its own there has `git show` and every repository borrowing this one give its
/// content) and `objects/info/http-alternates` (the same for a fetch over HTTP from it). Bound
/// read-only as the hooks are, made empty first where missing (git reads an empty one as
/// none), in a git directory's own store (one that is a link, `repo`'s layout, is not).
fn alternates(dir: &OwnedFd, git: &Path, head: bool, out: &mut Vec<PathBuf>) {
    use super::beneath;
    use rustix::fs::OFlags;
    let Ok(objects) = beneath::subdir(dir, "objects") else { return };
    if head {
        beneath::make_dir(&objects, "info");
    }
    let Ok(info) = beneath::subdir(&objects, "info") else { return };
    for name in ["alternates", "http-alternates"] {
        if head && !beneath::exists(&info, name) {
            let _ = rustix::fs::openat(
                &info,
                name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                rustix::fs::Mode::from_raw_mode(0o644),
            );
        }
        if beneath::exists(&info, name) {
            out.push(join(git, &format!("objects/info/{name}")));
        }
    }
}

/// `path` with every link on the way followed, as far as it exists; the rest as written.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    for (n, dir) in path.ancestors().enumerate() {
        if let Ok(real) = std::fs::canonicalize(dir) {
            let rest: PathBuf = path.components().skip(dir.components().count()).collect();
            return if n == 0 { real } else { real.join(rest) };
        }
    }
    path.to_path_buf()
}

/// The writable roots (the workspace, `sandbox.writable`) where they really are.
fn writable_roots(spec: &BoxSpec) -> Vec<PathBuf> {
    spec.write.iter().filter_map(|w| std::fs::canonicalize(&w.path).ok()).collect()
}

/// agentsh's own directories ([`Origin::Agentsh`] in the spec's denied paths), as the spec names
/// them and where they really are: `$XDG_CONFIG_HOME` in a dotfiles repository, or
/// `~/.config -> dotfiles/config`, puts the config inside a workspace. One that is missing
/// inside a writable root, where a command could make it and write a config agentsh would read,
/// is made now (empty, 0700, as agentsh makes it), so that it is covered too.
fn own_places(spec: &BoxSpec, notes: &mut Vec<String>) -> Vec<PathBuf> {
    let roots = writable_roots(spec);
    let mut out: Vec<PathBuf> = Vec::new();
    for d in spec.deny.iter().filter(|d| d.from == Origin::Agentsh) {
        let real = resolve(&d.path);
        // Made with no link followed (rt8 A1): the root is one a box writes.
        if std::fs::symlink_metadata(&real).is_err()
            && let Some(root) = roots.iter().find(|w| within(&real, w))
            && let Err(e) = super::beneath::make_dirs(root, &real, 0o700)
        {
            notes.push(format!("{}: not made, so not covered: {e}", real.display()));
        }
        for p in [d.path.clone(), real] {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// What the person's shell and tools read from a workspace: the targets of home's top-level
/// entries (`~/.zshrc -> dotfiles/zshrc`) and of `~/.config`'s (`~/.config/fish ->
/// ../dotfiles/fish`) that are inside a writable root, not the root itself or what holds it.
/// Bound read-only, a command cannot change what the person's next shell runs. Two directory
/// reads, and a few calls for each link.
pub(crate) fn linked_from_home(spec: &BoxSpec) -> Vec<PathBuf> {
    let roots = writable_roots(spec);
    let mut out: Vec<PathBuf> = Vec::new();
    if roots.is_empty() {
        return out;
    }
    for dir in [spec.home.clone(), join(&spec.home, ".config")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            let Ok(target) = std::fs::canonicalize(e.path()) else { continue };
            if roots.iter().any(|w| within(&target, w) && target != *w) && !out.contains(&target) {
                out.push(target);
            }
        }
    }
    out
}

/// How many entries of the writable roots [`other_names`] reads at most.
const MAX_NAMES_WALKED: usize = 500_000;

/// The other names, in the writable `roots`, of the regular files among `code_paths` (and in
/// those that are directories, `.git/hooks`) that have more than one (hard links): the box
/// would write the code through them (rt6a X5). Looked for only where there is such a file
/// (rare: most hooks are files or symbolic links): a walk of the roots that reads directories
/// alone (an entry's inode is in it), and a `lstat` for an entry of the same inode, until every
/// name is found. A name outside the roots is read-only in the box; a name inside a code path
/// is bound already. `Err` (no box) where the walk reads `max` entries before it has them all.
fn other_names(code_paths: &[PathBuf], roots: &[PathBuf], max: usize) -> Result<Vec<PathBuf>, String> {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    // (device, inode, names in all, one code path it is, names found).
    let mut wanted: Vec<(u64, u64, u64, PathBuf, u64)> = Vec::new();
    let mut consider = |p: &Path| {
        if let Ok(m) = std::fs::symlink_metadata(p)
            && m.is_file()
            && m.nlink() > 1
            && !wanted.iter().any(|w| (w.0, w.1) == (m.dev(), m.ino()))
        {
            wanted.push((m.dev(), m.ino(), m.nlink(), p.to_path_buf(), 0));
        }
    };
    for path in code_paths {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => {
                for e in std::fs::read_dir(path).into_iter().flatten().flatten().take(256) {
                    consider(&e.path());
                }
            }
            Ok(_) => consider(path),
            Err(_) => {}
        }
    }
    let mut out = Vec::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    let mut todo: Vec<PathBuf> = roots.to_vec();
    let (mut read, mut seen) = (0usize, Vec::new());
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            read += 1;
            if read > max {
                let (_, _, names, path, found) = wanted.iter().find(|w| w.4 < w.2).expect("one is left");
                return Err(format!(
                    "{} is a hard link ({names} names), and agentsh found {found} of them in the writable places \
                     before giving up (more than {max} entries): a command in the sandbox could change it \
                     through another; make it a copy (cp --remove-destination) or a symbolic link (ln -sf), which \
                     the sandbox binds read-only with what it names",
                    path.display()
                ));
            }
            let ino = e.ino();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            } else if let Some(w) = wanted.iter_mut().find(|w| w.1 == ino) {
                let p = e.path();
                // Counted once, though two roots hold it.
                if std::fs::symlink_metadata(&p).is_ok_and(|m| (m.dev(), m.ino()) == (w.0, w.1)) && !seen.contains(&p) {
                    w.4 += 1;
                    seen.push(p.clone());
                    if !code_paths.iter().any(|c| within(&p, c)) {
                        out.push(p);
                    }
                    if wanted.iter().all(|w| w.4 >= w.2) {
                        return Ok(out);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What the box could read of the system that others may not: in [`SYSTEM_WALKED`], every file
/// without `o+r` and every directory without `o+x` (not entered further) that is not the
/// person's own; of the other top-level directories, the directory itself. The box runs as the
/// person, and a box of root's is root: where the person is root nothing in the system is their
/// own, and what root alone may read is the system's secret (`/etc/ssl/private`,
/// `/var/cache/debconf/passwords.dat`, a database's data). What the box could not read anyway
/// (another user's, for a person who is not root) needs no cover. Nothing the spec shows or
/// hides otherwise is looked at, and no mount beneath a tree is entered. About 10,000 `statx`
/// on a Debian machine.
fn unreadable_system(spec: &BoxSpec, notes: &mut Vec<String>) -> Vec<PathBuf> {
    use rustix::fs::{Access, AtFlags, CWD, accessat};
    use std::os::unix::fs::MetadataExt;
    const MAX_ENTRIES: usize = 200_000;
    let euid = nix::unistd::geteuid().as_raw();
    let elsewhere: Vec<&Path> = [&spec.write, &spec.private, &spec.caches, &spec.visible, &spec.hidden]
        .into_iter()
        .flatten()
        .map(|r| r.path.as_path())
        .chain(spec.deny.iter().map(|d| d.path.as_path()))
        .chain(["/proc", "/sys", "/dev"].map(Path::new))
        .collect();
    let excluded = |p: &Path| elsewhere.iter().any(|e| within(p, e));
    let secret = |p: &Path, m: &std::fs::Metadata| {
        let (others, access) =
            if m.is_dir() { (m.mode() & 0o001, Access::EXEC_OK) } else { (m.mode() & 0o004, Access::READ_OK) };
        others == 0 && (euid == 0 || m.uid() != euid) && accessat(CWD, p, access, AtFlags::EACCESS).is_ok()
    };
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/") {
        for e in entries.flatten() {
            let p = e.path();
            if SYSTEM_WALKED.iter().any(|w| Path::new(w) == p) || excluded(&p) {
                continue;
            }
            if let Ok(m) = e.metadata()
                && m.is_dir()
                && secret(&p, &m)
            {
                out.push(p);
            }
        }
    }
    let mut seen = 0;
    for root in SYSTEM_WALKED.iter().map(Path::new) {
        let Ok(m) = std::fs::symlink_metadata(root) else { continue };
        let dev = m.dev();
        if !m.is_dir() || excluded(root) {
            continue;
        }
        if secret(root, &m) {
            out.push(root.to_path_buf());
            continue;
        }
        let walked = walk([root.to_path_buf()], MAX_ENTRIES, &mut seen, |_, e| {
            let p = e.path();
            let Ok(m) = e.metadata() else { return false };
            if m.file_type().is_symlink() || excluded(&p) {
                return false;
            }
            if secret(&p, &m) {
                out.push(p);
                false
            } else {
                m.is_dir() && m.dev() == dev
            }
        });
        if let Err(dir) = walked {
            notes.push(format!(
                "the system's trees hold more than {MAX_ENTRIES} entries: what others may not read below {} is not \
                 covered",
                dir.display()
            ));
            return out;
        }
    }
    out
}

/// Walks the trees at `roots` breadth first: `visit` is shown each entry with its directory,
/// and says whether to enter it. `Err` with the directory it was in where `seen` (counted
/// across calls) passed `max`.
fn walk(
    roots: impl IntoIterator<Item = PathBuf>,
    max: usize,
    seen: &mut usize,
    mut visit: impl FnMut(&Path, &std::fs::DirEntry) -> bool,
) -> Result<(), PathBuf> {
    let mut queue: std::collections::VecDeque<PathBuf> = roots.into_iter().collect();
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            *seen += 1;
            if *seen > max {
                return Err(dir);
            }
            if visit(&dir, &e) {
                queue.push_back(e.path());
            }
        }
    }
    Ok(())
}

/// What the toolchains the box shows hold of the person's credentials (rt5 A11): in every
/// directory shown as a toolchain's or `$PATH`'s, the files and directories
/// [`super::copies::in_toolchain`] names by their names. Returns what to cover (credential and
/// key stores: `.netrc`, `x509stores`, `*.pfx`, a `*.pem` with a private key) and, for each
/// settings file (`etc/npmrc`, `pip.conf`, ...), its copy without its credentials, taken (a
/// detached read-only mount) to be put over it. Symbolic links are not followed. Read while
/// everything is in sight, once per box: a walk of the toolchains' directories (names and
/// types; a file is read where its name says it may hold a key or settings, and the first KiB
/// of a file under 64 KiB of any other name for a private key's header (rt6 X8), but where its
/// name is a format no key is kept in, [`super::copies::may_hold_key`]).
fn toolchain_secrets(
    spec: &BoxSpec,
    store: &Store,
    notes: &mut Vec<String>,
) -> (Vec<PathBuf>, Vec<(PathBuf, OwnedFd)>) {
    use super::copies::{self, Copied, InToolchain, in_toolchain};
    const MAX_ENTRIES: usize = 500_000;
    // The first `len` bytes of the file at `p`, where it is smaller than `below`.
    let head = |p: &Path, len: u64, below: u64| -> Option<Vec<u8>> {
        // Never waited on: a FIFO of the person's in a toolchain would hang the box's build.
        let f = crate::policy::files::open(p, crate::policy::files::Links::Follow).ok()?;
        if f.meta.len() >= below {
            return None;
        }
        f.read_prefix(len).ok()
    };
    let (mut hide, mut copies) = (Vec::new(), Vec::new());
    // A settings file: shown as a copy without what holds a credential, made now (so a token
    // written there later is not seen in this box, as with cargo's config); not at all where it
    // cannot be copied.
    let mut settings = |p: PathBuf, hide: &mut Vec<PathBuf>| match store.copy(&p, Copied::Settings, &spec.name) {
        Ok(Some(copy)) => match take(&copy, true) {
            Some((fd, false)) => copies.push((p, fd)),
            _ => hide.push(p),
        },
        _ => hide.push(p),
    };
    let roots = spec.visible.iter().filter(|v| matches!(v.from, Origin::Toolchain | Origin::Path));
    let walked = walk(roots.map(|r| r.path.clone()), MAX_ENTRIES, &mut 0, |dir, e| {
        let Ok(kind) = e.file_type() else { return false };
        let name = e.file_name();
        match in_toolchain(name.as_bytes(), kind.is_dir()) {
            _ if kind.is_symlink() => {}
            Some(InToolchain::Hidden) => hide.push(e.path()),
            Some(InToolchain::KeyIfPrivate) if kind.is_file() => {
                if head(&e.path(), copies::JUDGED_SIZE, u64::MAX).is_some_and(|h| copies::holds_key_or_logins(&h)) {
                    hide.push(e.path());
                }
            }
            // A private key under any other name (rt6 X8: `deploy_key`, `server.key`): read
            // the first KiB of a small file whose name is not a format no key is kept in.
            None if kind.is_file() && copies::may_hold_key(name.as_bytes()) => {
                let small = head(&e.path(), copies::HEAD_SIZE as u64, copies::JUDGED_SIZE);
                if small.is_some_and(|h| copies::private_key_head(&h)) {
                    hide.push(e.path());
                }
            }
            Some(InToolchain::Filtered) if kind.is_file() => settings(e.path(), &mut hide),
            // Packages' own code is not walked (no tool reads its settings there, and a few
            // Pythons' hold 100,000 entries: 150 ms a box); but npm's own settings file, which
            // is in its package (`lib/node_modules/npm/npmrc`).
            _ if kind.is_dir() && package_code(dir, name.as_bytes()) => {
                let builtin = e.path().join("npm/npmrc");
                if builtin.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    settings(builtin, &mut hide);
                }
            }
            _ => return kind.is_dir(),
        }
        false
    });
    if let Err(dir) = walked {
        notes.push(format!(
            "the toolchains hold more than {MAX_ENTRIES} entries: credentials below {} are not looked for",
            dir.display()
        ));
    }
    (hide, copies)
}

/// Whether the directory `name` in `parent` holds packages' own code: `node_modules`,
/// `site-packages`, `dist-packages`, or a Python's standard library (`lib/python3.12`).
fn package_code(parent: &Path, name: &[u8]) -> bool {
    matches!(name, b"node_modules" | b"site-packages" | b"dist-packages")
        || (name.starts_with(b"python") && parent.file_name().is_some_and(|n| n == "lib"))
}

/// `dir/*.suffix`-style patterns in a last component, listed; other paths as they are.
fn expand(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some((prefix, suffix)) = name.split_once('*') else { return vec![path.to_path_buf()] };
    let Some(dir) = path.parent() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.len() > prefix.len() + suffix.len() && n.starts_with(prefix) && n.ends_with(suffix)
        })
        .map(|e| e.path())
        .collect()
}

/// Where a workspace's private places are kept: agentsh's state directory, `box/w-<hash>/`,
/// made 0700 and owned by this user.
struct Store {
    dir: PathBuf,
}

impl Store {
    fn open(dir: &Path) -> Result<Store, String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("the sandbox's private places {}: {e}", dir.display()))?;
        Ok(Store { dir: dir.to_path_buf() })
    }

    /// A detached mount of the directory that backs the private place `path` (home, `/tmp`,
    /// ...), made when missing; `None` for the places kept in memory (`/dev/shm`, the runtime
    /// directory).
    fn backing(&self, path: &Path, home: &Path) -> Result<Option<OwnedFd>, String> {
        let name = if path == home {
            "home".to_string()
        } else if path == Path::new("/tmp") {
            "tmp".to_string()
        } else if path == Path::new("/var/tmp") {
            "var-tmp".to_string()
        } else if within(path, Path::new("/dev")) || within(path, Path::new("/run")) {
            return Ok(None);
        } else {
            format!("dir-{}", path.as_os_str().as_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>())
        };
        let backing = join(&self.dir, &name);
        let mode = if name.ends_with("tmp") { 0o1777 } else { 0o700 };
        if !backing.is_dir() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&backing)
                .map_err(|e| format!("{}: {e}", backing.display()))?;
        }
        let _ = std::fs::set_permissions(&backing, std::fs::Permissions::from_mode(mode));
        let (fd, _) = take(&backing, false).ok_or_else(|| format!("{}: cannot be mounted", backing.display()))?;
        Ok(Some(fd))
    }

    /// A copy of `path` without its secrets ([`super::copies`]), written under
    /// `copies/<box>/` (the box's name: another box of this workspace, built at the same time,
    /// keeps its own), or `None` where there is no `path` to copy.
    fn copy(&self, path: &Path, how: super::copies::Copied, box_name: &str) -> Result<Option<PathBuf>, String> {
        use super::copies::{Copied, cargo_config, git_config, settings_file, snapshot};
        // Named by the path's hash: its hex would pass a name's 255 bytes for a deep one (a
        // toolchain's `candidates/maven/current/conf/settings.xml`).
        let hex = crate::text::sha256::hex(&[path.as_os_str().as_bytes()]);
        let dir = join(&self.dir, &format!("copies/{box_name}"));
        let copy = join(&dir, &hex);
        let fail = |e: std::io::Error| format!("{}: {e}", copy.display());
        let _ = std::fs::remove_dir_all(&copy);
        let _ = std::fs::remove_file(&copy);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(fail)?;
        let write = |to: &Path, text: String| {
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(to)?.write_all(text.as_bytes())
        };
        match how {
            Copied::GitConfig | Copied::CargoConfig | Copied::Settings => {
                let Some(text) = settings_text(path) else { return Ok(None) };
                let filter = match how {
                    Copied::GitConfig => git_config,
                    Copied::CargoConfig => cargo_config,
                    _ => settings_file,
                };
                write(&copy, filter(&text)).map_err(fail)?;
            }
            Copied::Snapshots => {
                let Ok(entries) = std::fs::read_dir(path) else { return Ok(None) };
                std::fs::DirBuilder::new().mode(0o700).create(&copy).map_err(fail)?;
                for e in entries.flatten() {
                    if !e.file_type().is_ok_and(|t| t.is_file()) {
                        continue;
                    }
                    let Some(text) = settings_text(&e.path()) else { continue };
                    write(&copy.join(e.file_name()), snapshot(&text)).map_err(fail)?;
                }
            }
        }
        Ok(Some(copy))
    }

    /// A detached overlay of `lower`. With `upper` (a cache, a link farm): reads see the
    /// person's, writes land in this workspace's copy (`<upper>/upper`), never in theirs.
    /// Without: read-only, over an empty directory of the store's (an overlay without an upper
    /// layer needs two lower ones).
    fn overlay(&self, lower: &Path, upper: Option<&str>) -> Result<OwnedFd, String> {
        use rustix::mount::{
            FsMountFlags, FsOpenFlags, fsconfig_create, fsconfig_set_flag, fsconfig_set_string, fsmount, fsopen,
        };
        let made = |d: &Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .map_err(|e| format!("{}: {e}", d.display()))
        };
        let escaped = |p: &Path| p.to_string_lossy().replace('\\', "\\\\").replace(',', "\\,").replace(':', "\\:");
        let fs = fsopen("overlay", FsOpenFlags::FSOPEN_CLOEXEC).map_err(|e| format!("overlay: {e}"))?;
        let set =
            |key: &str, value: &str| fsconfig_set_string(fs.as_fd(), key, value).map_err(|e| format!("{key}: {e}"));
        let attrs = match upper {
            Some(name) => {
                let base = join(&self.dir, name);
                let (upper, work) = (join(&base, "upper"), join(&base, "work"));
                made(&upper)?;
                made(&work)?;
                set("lowerdir", &escaped(lower))?;
                set("upperdir", &escaped(&upper))?;
                set("workdir", &escaped(&work))?;
                MountAttrFlags::MOUNT_ATTR_NOSUID
            }
            None => {
                let empty = join(&self.dir, "empty");
                made(&empty)?;
                set("lowerdir", &format!("{}:{}", escaped(lower), escaped(&empty)))?;
                MountAttrFlags::MOUNT_ATTR_NOSUID | MountAttrFlags::MOUNT_ATTR_RDONLY
            }
        };
        fsconfig_set_flag(fs.as_fd(), "userxattr").map_err(|e| format!("userxattr: {e}"))?;
        fsconfig_create(fs.as_fd()).map_err(|e| format!("overlay: {e}"))?;
        fsmount(fs.as_fd(), FsMountFlags::FSMOUNT_CLOEXEC, attrs).map_err(|e| format!("overlay: {e}"))
    }
}

/// A name for `path`'s copy in the store, the same for every box of this build of agentsh.
fn path_hash(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    path.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Covers denied paths in sight. The first directory gets an empty read-only tmpfs and the
/// first file a sealed `/dev/null` (read-only, nodev: opening it fails); the rest are bound from
/// those: one system call each.
#[derive(Default)]
pub(super) struct Cover {
    dir: Option<PathBuf>,
    file: Option<PathBuf>,
}

impl Cover {
    pub(super) fn cover(&mut self, p: &Path) -> Result<(), String> {
        use nix::errno::Errno;
        use nix::mount::{MsFlags, mount};
        let none: Option<&str> = None;
        let sealed = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        // Mounts follow links: a denied `~/.vault -> elsewhere` covers its target.
        let as_dir = match &self.dir {
            Some(src) => mount(Some(src.as_path()), p, none, MsFlags::MS_BIND, none),
            None => mount(Some("tmpfs"), p, Some("tmpfs"), sealed, Some("size=4k,mode=000")),
        };
        match as_dir {
            Ok(()) => {
                self.dir.get_or_insert_with(|| p.to_path_buf());
                return Ok(());
            }
            Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::ENOTDIR) => {}
            Err(e) => return Err(format!("covering {}: {e}", p.display())),
        }
        let as_file = match &self.file {
            Some(src) => mount(Some(src.as_path()), p, none, MsFlags::MS_BIND, none),
            None => mount(Some("/dev/null"), p, none, MsFlags::MS_BIND, none)
                .and_then(|()| mount(none, p, none, MsFlags::MS_BIND | MsFlags::MS_REMOUNT | sealed, none)),
        };
        as_file.map_err(|e| format!("covering {}: {e}", p.display()))?;
        self.file.get_or_insert_with(|| p.to_path_buf());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_in_a_last_component_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["ssh_host_rsa_key", "ssh_host_rsa_key.pub", "ssh_host_ed25519_key", "other"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let mut found = expand(&dir.path().join("ssh_host_*_key"));
        found.sort();
        assert_eq!(found, [dir.path().join("ssh_host_ed25519_key"), dir.path().join("ssh_host_rsa_key")]);
        assert_eq!(expand(&dir.path().join("other")), [dir.path().join("other")]);
    }

    /// rt6a X5: the other names of a hard-linked code file, in a bound directory or bound
    /// itself, are found in the writable roots; past the bound on what is read, no box.
    #[test]
    fn the_other_names_of_a_hard_linked_code_file_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for d in [".git/hooks", "githooks", "deep/er", "other"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::fs::write(ws.join("githooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::hard_link(ws.join("githooks/pre-commit"), ws.join(".git/hooks/pre-commit")).unwrap();
        std::fs::hard_link(ws.join("githooks/pre-commit"), ws.join("deep/er/pc")).unwrap();
        // Two names, both in the bound directory: nothing more to bind.
        std::fs::write(ws.join(".git/hooks/pre-push"), "").unwrap();
        std::fs::hard_link(ws.join(".git/hooks/pre-push"), ws.join(".git/hooks/pre-push.bak")).unwrap();
        std::fs::write(ws.join(".git/config"), "").unwrap();
        for f in 0..50 {
            std::fs::write(ws.join(format!("other/{f}")), "").unwrap();
        }
        let code = [ws.join(".git/hooks"), ws.join(".git/config")];
        let mut found = other_names(&code, std::slice::from_ref(&ws), 10_000).unwrap();
        found.sort();
        assert_eq!(found, [ws.join("deep/er/pc"), ws.join("githooks/pre-commit")]);
        assert_eq!(
            other_names(&[ws.join(".git/config")], std::slice::from_ref(&ws), 10).unwrap(),
            Vec::<PathBuf>::new()
        );
        let why = other_names(&code, std::slice::from_ref(&ws), 10).unwrap_err();
        assert!(why.contains("is a hard link (") && why.contains("cp --remove-destination"), "{why}");
    }

    #[test]
    fn the_code_paths_of_a_git_directory_and_its_submodules_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        for d in ["hooks", "info", "modules/a/hooks", "modules/a/modules/b", "modules/t/z", "worktrees/w", "objects"] {
            std::fs::create_dir_all(git.join(d)).unwrap();
        }
        for f in [
            "HEAD",
            "config",
            // No HEAD (a command in the box can remove it): its config still makes it one.
            "modules/a/config",
            "modules/a/modules/b/HEAD",
            "modules/a/modules/b/config",
            "modules/t/z/HEAD",
            "modules/t/z/config",
            "worktrees/w/commondir",
        ] {
            std::fs::write(git.join(f), "").unwrap();
        }
        let mut found = Vec::new();
        code_paths(&git, &mut found, 0);
        let rel: Vec<String> =
            found.iter().map(|p| p.strip_prefix(&git).unwrap().to_string_lossy().into_owned()).collect();
        for want in [
            "config",
            "hooks",
            "info",
            "modules/a/config",
            "modules/a/hooks",
            "modules/a/modules/b/config",
            "modules/t/z/config",
            "modules/t/z/hooks",
            "worktrees/w/commondir",
            // rt7 A1: where git finds (and adopts) submodules' git directories, made empty
            // where missing; never in a linked worktree's git directory (its are the common one's).
            "modules",
            "modules/a/modules",
            "modules/t/z/modules",
        ] {
            assert!(rel.contains(&want.to_string()), "{want}: {rel:?}");
        }
        assert!(git.join("modules/t/z/modules").is_dir() && !git.join("worktrees/w/modules").exists());
        assert!(is_modules(&git.join("modules/t/z/modules")) && !is_modules(&git.join("modules/t/z")));
        // No `HEAD` beside it (`modules/a` has only a config): read-only whole.
        assert!(!is_modules(&git.join("modules/a/modules")));
        // rt8 A2: of the store, where git is sent to look up objects elsewhere, made empty.
        let store: Vec<&String> = rel.iter().filter(|r| r.starts_with("objects")).collect();
        assert_eq!(store, ["objects/info/alternates", "objects/info/http-alternates"]);
        assert_eq!(std::fs::read(git.join("objects/info/alternates")).unwrap(), b"");
        // rt8 A1: nothing is made, nor walked, through a link.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(elsewhere.join("sub")).unwrap();
        std::fs::write(elsewhere.join("sub/HEAD"), "").unwrap();
        std::fs::remove_dir_all(git.join("modules/t/z/modules")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, git.join("modules/t/z/modules")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, git.join("modules/t/z/objects")).unwrap();
        let mut found = Vec::new();
        code_paths(&git, &mut found, 0);
        let linked = git.join("modules/t/z/modules");
        assert!(!found.iter().any(|p| p.starts_with(&linked) && *p != linked), "{found:?}");
        assert!(!found.iter().any(|p| p.starts_with(git.join("modules/t/z/objects"))), "{found:?}");
        let made: Vec<_> = std::fs::read_dir(&elsewhere).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(made, ["sub"]);
        assert_eq!(std::fs::read_dir(elsewhere.join("sub")).unwrap().count(), 1, "made in sub/");
        std::fs::remove_file(git.join("modules/t/z/modules")).unwrap();
        // rt5 A13: a repository with no `info` (or `hooks`) has them made, empty, to be bound.
        std::fs::remove_dir_all(git.join("info")).unwrap();
        std::fs::remove_dir_all(git.join("hooks")).unwrap();
        let mut found = Vec::new();
        code_paths(&git, &mut found, 0);
        assert!(found.contains(&git.join("info")) && found.contains(&git.join("hooks")), "{found:?}");
        std::fs::remove_dir_all(git.join("modules")).unwrap();
        let mut found = Vec::new();
        code_paths(&git, &mut found, 0);
        assert!(found.contains(&git.join("modules")) && git.join("modules").is_dir(), "{found:?}");
        assert!(git.join("info").is_dir() && std::fs::read_dir(git.join("info")).unwrap().next().is_none());
    }
}
