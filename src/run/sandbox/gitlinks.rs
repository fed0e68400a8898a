//! Links a box makes in the workspace's git directory, removed (issue 25, rt3 G1). Git opens
//! several files there with a plain `open`, which follows a link: `COMMIT_EDITMSG`,
//! `FETCH_HEAD`, `MERGE_MSG`, `SQUASH_MSG`, `TAG_EDITMSG`, `NOTES_EDITMSG`, the reflogs under
//! `logs/` (appended to), the state of a rebase or a cherry-pick. A link a boxed command puts
//! there would have the person's next `git commit` or `git fetch`, outside the box, write any
//! file the person can (`~/.bashrc`, agentsh's own config). Landlock cannot withhold making
//! links below a directory it lets a command write, so the links are taken away:
//! - when a boxed command ends, by the agentsh that waited for it ([`Sweep`]): every link made
//!   in the git directory's top level during the command, and every link in `logs/` and in
//!   `rebase-merge/`, `rebase-apply/` and `sequencer/`, where git makes none;
//! - as they are made, by the box's holder ([`Watcher`], inotify), for a process left running
//!   in a kept box; it notes what it removed in the box's lock in agentsh's records
//!   (`NAME.lock`), which the next [`Sweep`] of that box reports;
//! - where the holder could have no watch (the person's inotify instances used up, rt4 R3), or
//!   its watch cannot cover every directory (rt5 B2: [`Watcher::complete`]), by the holder as
//!   the box ends, once every process in it has ended ([`last_sweep`]).
//!
//! It must not judge or print: the caller tells the person.

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, StatxFlags, openat, statx, unlinkat};
use std::ffi::{CStr, OsStr};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The directories of a git directory where git itself never makes a link: every link found
/// in them (at any depth) is the box's.
const LINKLESS: &[&str] = &["logs", "rebase-merge", "rebase-apply", "sequencer"];

/// What [`Sweep::finish`] looks at first: where git keeps what it writes through `open`. When
/// none of them changed during the command (most commands run no git), nothing more is read. A
/// directory below these that existed before (`logs/refs/remotes/origin`) is left to the
/// holder's watch.
const GATE: &[&str] = &[".", "logs", "logs/refs", "logs/refs/heads", "rebase-merge", "rebase-apply", "sequencer"];

/// How far a file system's change time may lag the clock agentsh reads: a coarse clock (a
/// jiffy), one-second time stamps (ext4 with small inodes).
const SLACK: Duration = Duration::from_secs(2);

/// How many entries a command's sweep reads at most, and how many directories a holder's watch
/// takes at most: a box that makes a million directories in `logs/` slows no one but itself.
const MAX_ENTRIES: usize = 20_000;

/// How many entries a holder reads at most as it watches a tree: a repository with many
/// branches has a reflog for each; past it the watch is not complete ([`Watcher::complete`]).
const MAX_WATCH_READ: usize = 200_000;

/// One removed link: its path, and what it named.
pub type Removed = String;

/// The check for links a boxed command made in the git directory, started as it starts and
/// finished once it ended.
pub struct Sweep {
    git: PathBuf,
    /// When the command started, less [`SLACK`] (seconds and nanoseconds since the epoch):
    /// what changed since is the command's.
    since: Stamp,
    /// The holder's notes of what it removed: the box's lock (`NAME.lock` in agentsh's
    /// records).
    notes: PathBuf,
    /// The holder had noted something as the command started.
    noted: bool,
    /// What the holder noted beside the links: why it ended the box (`holder::end_box`).
    messages: std::cell::RefCell<Vec<String>>,
    /// The links in the top level as the command started, where it changed within [`SLACK`]
    /// before (a link the person made a second before, `ln -s ../githooks .git/hooks`, rt6a
    /// K2): theirs, never removed as the command's.
    before: Vec<(std::ffi::CString, u64)>,
}

impl Sweep {
    /// `git`: the workspace's git directory, as the box grants it; `records` and `name`: the
    /// box's record, where its holder notes what it removed; `noted`: it had noted something
    /// as the command started (`BoxPlan::holder_noted`).
    pub fn start(git: &Path, records: &Path, name: &str, noted: bool) -> Sweep {
        let since = stamp(SystemTime::now().checked_sub(SLACK).unwrap_or(UNIX_EPOCH));
        let notes = super::join(records, &format!("{name}.lock"));
        // One `statx`; the top level read only where it changed within SLACK of now.
        let recent = statx(rustix::fs::CWD, git, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME)
            .is_ok_and(|s| changed(&s) >= since);
        let mut before = Vec::new();
        if recent && let Ok(dir) = open_dir(rustix::fs::CWD, git) {
            let mut budget = MAX_ENTRIES;
            read_entries(dir, &mut budget, |fd, name, kind| {
                if kind == FileType::Symlink
                    && let Ok(s) = statx(fd, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::INO)
                {
                    before.push((name.to_owned(), s.stx_ino));
                }
            });
        }
        Sweep { git: git.to_path_buf(), since, notes, noted, messages: Default::default(), before }
    }

    /// Removes the links the command made, and returns them with those the box's holder
    /// removed (noted before the command started, or as it ran where the git directory
    /// changed). Seven `statx` calls where nothing changed.
    pub fn finish(&self) -> Vec<Removed> {
        let changed = GATE.iter().any(|name| {
            statx(rustix::fs::CWD, super::join(&self.git, name), AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME)
                .is_ok_and(|s| changed(&s) >= self.since)
        });
        let mut out = Out { list: Vec::new(), notes: None };
        if changed && let Ok(dir) = open_dir(rustix::fs::CWD, self.git.as_os_str()) {
            let mut budget = MAX_ENTRIES;
            top_level(dir, &self.git, Some(self.since), &self.before, &mut out, &mut budget, false);
        }
        // After the sweep: a link the holder removed first was noted before it was removed. The
        // holder notes an object written in place (rt7 A5) whatever else changed: one `statx`.
        let noted = || {
            statx(rustix::fs::CWD, &self.notes, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::SIZE)
                .is_ok_and(|s| s.stx_size > 0)
        };
        if self.noted || changed || noted() {
            for n in taken_notes(&self.notes) {
                if !n.starts_with('/') {
                    self.messages.borrow_mut().push(n);
                } else if !out.list.contains(&n) {
                    out.list.push(n);
                }
            }
        }
        out.list
    }

    /// What the box's holder said beside the links, taken by [`Sweep::finish`]: why it ended
    /// the box (a line each, agentsh's own words).
    pub fn messages(&self) -> Vec<String> {
        self.messages.take()
    }
}

/// A time as a file system's change time is compared: seconds and nanoseconds since the epoch.
type Stamp = (i64, u32);

fn stamp(t: SystemTime) -> Stamp {
    t.duration_since(UNIX_EPOCH).map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
}

fn changed(s: &rustix::fs::Statx) -> Stamp {
    (s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec)
}

/// The notes the holder left in the box's lock, taken (the lock emptied: it is a lock by
/// `flock`, whatever it holds).
fn taken_notes(notes: &Path) -> Vec<Removed> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(notes)
    else {
        return Vec::new();
    };
    if !file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0) {
        return Vec::new();
    }
    let mut text = String::new();
    let _ = (&file).take(64 * 1024).read_to_string(&mut text);
    let _ = file.set_len(0);
    let mut out: Vec<Removed> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if !out.iter().any(|o| o == line) {
            out.push(line.to_string());
        }
    }
    out
}

fn open_dir<P: rustix::path::Arg>(at: impl AsFd, path: P) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    openat(at, path, flags, Mode::empty())
}

/// The git directory's own entries: a link made since `since` (all of them where `since` is
/// `None`) is removed; the [`LINKLESS`] directories are swept whole: within `budget` and 32
/// levels, or, `whole`, every directory git could name ([`every_link_below`]).
/// `spare`: links (name and inode) that were there before, left.
fn top_level(
    dir: OwnedFd,
    path: &Path,
    since: Option<Stamp>,
    spare: &[(std::ffi::CString, u64)],
    out: &mut Out,
    budget: &mut usize,
    whole: bool,
) {
    let mut linkless = Vec::new();
    let Some(entries) = read_entries(dir, budget, |fd, name, kind| match kind {
        FileType::Symlink => {
            let new = since.is_none_or(|s| {
                statx(fd, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME | StatxFlags::INO).is_ok_and(|st| {
                    changed(&st) >= s && !spare.iter().any(|(n, ino)| n.as_c_str() == name && *ino == st.stx_ino)
                })
            });
            if new {
                remove(fd, name, path, out);
            }
        }
        FileType::Directory if LINKLESS.iter().any(|l| l.as_bytes() == name.to_bytes()) => {
            linkless.push(name.to_owned());
        }
        _ => {}
    }) else {
        return;
    };
    for name in linkless {
        if whole {
            if let Ok(fd) = entries.fd() {
                every_link_below(fd, &name, path, out);
            }
        } else if let Ok(sub) = entries.fd().and_then(|fd| open_dir(fd, name.as_c_str())) {
            every_link(sub, &path.join(OsStr::from_bytes(name.to_bytes())), out, budget, 0);
        }
    }
}

/// Removes every link in `top`'s directory `name` and below it, however many and however deep,
/// one directory open at a time: each is opened by its path from `top`, which git's own path
/// to a file there is longer than (a directory past `PATH_MAX` is none git opens). For the box's
/// last sweep, once nothing in it runs (rt5 B2: a box made more directories than a watch or a
/// sweep within a budget covers).
fn every_link_below(top: BorrowedFd<'_>, name: &CStr, path: &Path, out: &mut Out) {
    use rustix::fs::ResolveFlags;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut todo = vec![PathBuf::from(OsStr::from_bytes(name.to_bytes()))];
    while let Some(rel) = todo.pop() {
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
        let Ok(fd) = rustix::fs::openat2(top, &rel, flags, Mode::empty(), resolve) else { continue };
        let here = path.join(&rel);
        let mut budget = usize::MAX;
        read_entries(fd, &mut budget, |fd, name, kind| match kind {
            FileType::Symlink => remove(fd, name, &here, out),
            FileType::Directory => todo.push(rel.join(OsStr::from_bytes(name.to_bytes()))),
            _ => {}
        });
    }
}

/// Removes every link in `dir` and below it.
fn every_link(dir: OwnedFd, path: &Path, out: &mut Out, budget: &mut usize, depth: usize) {
    if depth > 32 {
        return;
    }
    let mut subdirs = Vec::new();
    let Some(entries) = read_entries(dir, budget, |fd, name, kind| match kind {
        FileType::Symlink => remove(fd, name, path, out),
        FileType::Directory => subdirs.push(name.to_owned()),
        _ => {}
    }) else {
        return;
    };
    for name in subdirs {
        if let Ok(sub) = entries.fd().and_then(|fd| open_dir(fd, name.as_c_str())) {
            every_link(sub, &path.join(OsStr::from_bytes(name.to_bytes())), out, budget, depth + 1);
        }
    }
}

/// Reads `dir`'s entries but `.` and `..`, each with its type, while `budget` lasts (`None`
/// once it is spent); returns the directory, to open what was found in it.
fn read_entries(
    dir: OwnedFd,
    budget: &mut usize,
    mut each: impl FnMut(BorrowedFd<'_>, &CStr, FileType),
) -> Option<Dir> {
    let mut entries = Dir::new(dir).ok()?;
    while let Some(Ok(e)) = entries.read() {
        *budget = budget.checked_sub(1)?;
        let name = e.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        let fd = entries.fd().ok()?;
        each(fd, name, kind(fd, name, e.file_type()));
    }
    Some(entries)
}

/// An entry's type, asked of the file system where the directory does not say.
fn kind(dir: BorrowedFd<'_>, name: &CStr, said: FileType) -> FileType {
    if said != FileType::Unknown {
        return said;
    }
    statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE)
        .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.stx_mode.into()))
}

/// Where removed links go: the list to tell, and for the holder, the box's lock and name, to
/// note each in before it is unlinked (a command that finds it gone then finds it noted).
pub(crate) struct Out {
    list: Vec<Removed>,
    notes: Option<(OwnedFd, String)>,
}

/// Unlinks the link `name` in `dir` (at `path`), with what it named in `out`.
fn remove(dir: BorrowedFd<'_>, name: &CStr, path: &Path, out: &mut Out) {
    let target = rustix::fs::readlinkat(dir, name, Vec::new()).ok();
    let at = path.join(OsStr::from_bytes(name.to_bytes()));
    let to = target.map(|t| String::from_utf8_lossy(t.as_bytes()).into_owned()).unwrap_or_default();
    let entry = format!("{} -> {to}", crate::text::path(&at));
    if let Some((records, box_name)) = &out.notes {
        note(records.as_fd(), box_name, std::slice::from_ref(&entry));
    }
    if unlinkat(dir, name, AtFlags::empty()).is_ok() {
        out.list.push(entry);
    }
}

/// The box's holder's watch on the git directory (inotify): a link made in its top level, or
/// anywhere in the [`LINKLESS`] directories, is removed as it appears, whoever made it (a
/// process left running in a kept box included). One inotify instance per box; it costs a
/// command nothing.
pub(crate) struct Watcher {
    inotify: nix::sys::inotify::Inotify,
    /// The git directory watched for links; none where the box has only code paths to guard.
    git: Option<PathBuf>,
    /// What each watch is on, and whether every link there is the box's (a [`LINKLESS`]
    /// directory or one below it) or only a new one (the top level).
    dirs: std::collections::HashMap<nix::sys::inotify::WatchDescriptor, (PathBuf, bool)>,
    /// When the watch began: after the queue overflowed, the links made since are removed.
    started: Stamp,
    out: Out,
    /// A directory below a [`LINKLESS`] one went unwatched: past [`MAX_ENTRIES`] directories or
    /// 32 levels, no watch or descriptor left (the box's share of watches, its holder's open
    /// files). A link made there later would stay, so the holder keeps no process then (rt5 B2).
    full: bool,
    /// The code paths the box binds read-only ([`Watcher::guard`]), by the watch on the
    /// directory that holds them: that directory, the names, and each path's identity as bound.
    guards: std::collections::HashMap<nix::sys::inotify::WatchDescriptor, (PathBuf, Vec<std::ffi::OsString>)>,
    bound: Vec<(PathBuf, Option<(u64, u64)>)>,
    /// A guarded code path replaced, removed or renamed away since (see [`Watcher::guard`]).
    replaced: Option<PathBuf>,
    /// The object store's directories watched for objects written in place ([`Objects`]).
    objects: Objects,
}

/// The watch on the git directory's object store (rt7 A5): git never writes an object file once
/// it has its name (it writes a temporary file and links it there), and nothing reads an object
/// back to check it, so a box that rewrites one in place (root in the box may write a read-only
/// file) changes what `git show` gives, and what every repository that borrows this store
/// (`objects/info/alternates`: `git clone --shared`, `--reference`) checks out. The holder
/// watches `objects/`, each of its fan-out directories and `pack/`: a loose object written to
/// under its name or renamed onto it is removed (a missing object is an error in git, a forged
/// one is not) and told; one made again under the name of one removed while the box is kept,
/// and a pack file written to under its name, are told. One watch per directory, made once
/// per box.
#[derive(Default)]
struct Objects {
    /// Each watched directory, and whether it is `objects/` itself (new fan-out directories are
    /// watched as they come) or `pack/`.
    dirs: std::collections::HashMap<nix::sys::inotify::WatchDescriptor, (PathBuf, ObjectDir)>,
    /// The loose objects removed (by anyone) while the box is kept: one made again under the
    /// same name is not git's.
    removed: std::collections::HashSet<PathBuf>,
    /// The loose objects there are, as read when the watch began and seen arrive since (up to
    /// [`MAX_OBJECTS_KNOWN`]): a rename onto one replaces it.
    present: std::collections::HashSet<PathBuf>,
    /// What was told already, to be told once (the many writes of one rewrite), until it is
    /// made again.
    told: std::collections::HashSet<PathBuf>,
    /// The `pack/` directories a pack was written to since the watch began: one removed there
    /// is taken for git's, replaced by the new one (rt8 A2).
    new_packs: std::collections::HashSet<PathBuf>,
}

/// Whether a pack in `pack` (a store's `pack/`) holds the object named `oid` (in hex): each
/// `pack-*.idx` (version 2) read at its fan-out table and searched. One that cannot be read holds
/// nothing.
fn in_a_pack(pack: &Path, oid: &[u8]) -> bool {
    let Some(oid) = unhex(oid) else { return false };
    let Ok(dir) = super::beneath::dir(pack) else { return false };
    let mut names = Vec::new();
    let mut budget = 4096;
    let Some(dir) = read_entries(dir, &mut budget, |_, name, kind| {
        let n = name.to_bytes();
        if kind == FileType::RegularFile && n.starts_with(b"pack-") && n.ends_with(b".idx") {
            names.push(name.to_owned());
        }
    }) else {
        return false;
    };
    let Ok(dir) = dir.fd() else { return false };
    names.iter().any(|name| {
        super::beneath::open(dir, name.as_c_str(), OFlags::RDONLY | OFlags::NONBLOCK)
            .is_ok_and(|fd| idx_holds(&std::fs::File::from(fd), &oid) == Some(true))
    })
}

/// Whether the pack index `idx` (version 2: a header, 256 counts, the sorted names) lists `oid`;
/// `None` where it is no such index.
fn idx_holds(idx: &std::fs::File, oid: &[u8]) -> Option<bool> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 8 + 256 * 4];
    idx.read_exact_at(&mut head, 0).ok()?;
    if head[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
        return None;
    }
    let count = |i: usize| u64::from(u32::from_be_bytes(head[8 + 4 * i..12 + 4 * i].try_into().unwrap_or_default()));
    let first = usize::from(*oid.first()?);
    let (mut lo, mut hi) = (if first == 0 { 0 } else { count(first - 1) }, count(first));
    let mut name = vec![0u8; oid.len()];
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        idx.read_exact_at(&mut name, head.len() as u64 + mid * oid.len() as u64).ok()?;
        match name.as_slice().cmp(oid) {
            std::cmp::Ordering::Equal => return Some(true),
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
        }
    }
    Some(false)
}

/// Lower-case hex to bytes.
fn unhex(hex: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).filter(|_| !c.is_ascii_uppercase());
    (hex.len().is_multiple_of(2) && !hex.is_empty())
        .then(|| hex.chunks(2).map(|p| Some((digit(p[0])? * 16 + digit(p[1])?) as u8)).collect())
        .flatten()
}

/// How many loose objects' names the watch keeps, at most: past them, one replaced by a rename
/// is not told.
const MAX_OBJECTS_KNOWN: usize = 200_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum ObjectDir {
    Top,
    FanOut,
    Pack,
}

/// Whether `name` in a directory of kind `dir` is a file git names once and never writes again.
fn object_file(dir: ObjectDir, name: &[u8]) -> bool {
    let hex = |b: &[u8]| !b.is_empty() && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    match dir {
        ObjectDir::FanOut => matches!(name.len(), 38 | 62) && hex(name),
        ObjectDir::Pack => name.strip_prefix(b"pack-").is_some_and(|rest| {
            [&b".pack"[..], b".idx", b".rev", b".bitmap", b".mtimes"]
                .iter()
                .any(|ext| rest.strip_suffix(*ext).is_some_and(|h| matches!(h.len(), 40 | 64) && hex(h)))
        }),
        ObjectDir::Top => false,
    }
}

impl Watcher {
    /// Watches `git` and its [`LINKLESS`] directories, and removes the links already in those.
    /// `notes`: agentsh's records (opened before the box was made) and the box's name, where
    /// each link is noted before it is removed ([`note`]). An error where inotify cannot be
    /// had (the person's limit of instances or watches reached: they are counted across user
    /// namespaces, rt4 R3): the holder then keeps no process past its command ([`last_sweep`]).
    /// `git` `None`: no git directory, only code paths to [`Watcher::guard`] (a dotfile home
    /// links into a writable root).
    pub(crate) fn new(git: Option<&Path>, notes: Option<(OwnedFd, String)>) -> nix::Result<Watcher> {
        use nix::sys::inotify::{InitFlags, Inotify};
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        let started = stamp(SystemTime::now().checked_sub(SLACK).unwrap_or(UNIX_EPOCH));
        let out = Out { list: Vec::new(), notes };
        let mut w = Watcher {
            inotify,
            git: git.map(Path::to_path_buf),
            dirs: Default::default(),
            started,
            out,
            full: false,
            guards: Default::default(),
            bound: Vec::new(),
            replaced: None,
            objects: Objects::default(),
        };
        if let Some(git) = git {
            w.watch(git.to_path_buf(), false)?;
            for name in LINKLESS {
                w.watch_tree(git.join(name));
            }
            w.watch_objects(git.join("objects"))?;
        }
        Ok(w)
    }

    /// Watches `objects` (the store), each fan-out directory in it and `pack/` ([`Objects`]).
    /// A store that is not a directory of the git directory's own (a link, `repo`'s layout) is
    /// not watched: the box does not write through it.
    fn watch_objects(&mut self, objects: PathBuf) -> nix::Result<()> {
        use nix::sys::inotify::AddWatchFlags as F;
        let flags = F::IN_CREATE | F::IN_MOVED_TO | F::IN_ONLYDIR | F::IN_DONT_FOLLOW;
        let wd = match self.inotify.add_watch(&objects, flags) {
            Ok(wd) => wd,
            Err(e) if gone(e as i32) || e == nix::errno::Errno::ENOTDIR => return Ok(()),
            Err(e) => return Err(e),
        };
        self.objects.dirs.insert(wd, (objects.clone(), ObjectDir::Top));
        let Ok(fd) = beneath(&objects) else { return Ok(()) };
        let mut names = Vec::new();
        let mut budget = 1024;
        read_entries(fd, &mut budget, |_, name, kind| {
            if kind == FileType::Directory {
                names.push(name.to_bytes().to_vec());
            }
        });
        for name in names {
            self.watch_object_dir(&objects, &name)?;
        }
        Ok(())
    }

    /// Watches `name` in the store `objects` where it is a fan-out directory or `pack/`.
    fn watch_object_dir(&mut self, objects: &Path, name: &[u8]) -> nix::Result<()> {
        use nix::sys::inotify::AddWatchFlags as F;
        let kind = match name {
            b"pack" => ObjectDir::Pack,
            n if n.len() == 2 && n.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) => ObjectDir::FanOut,
            _ => return Ok(()),
        };
        let dir = objects.join(OsStr::from_bytes(name));
        let flags = F::IN_MODIFY
            | F::IN_CLOSE_WRITE
            | F::IN_MOVED_TO
            | F::IN_CREATE
            | F::IN_DELETE
            | F::IN_MOVED_FROM
            | F::IN_ONLYDIR
            | F::IN_DONT_FOLLOW;
        match self.inotify.add_watch(&dir, flags) {
            Ok(wd) => {
                // Read after the watch is made: what arrives meanwhile is seen either way.
                if kind == ObjectDir::FanOut
                    && let Ok(fd) = beneath(&dir)
                {
                    let room = MAX_OBJECTS_KNOWN.saturating_sub(self.objects.present.len());
                    let mut budget = room.min(MAX_WATCH_READ);
                    let present = &mut self.objects.present;
                    read_entries(fd, &mut budget, |_, name, kind| {
                        if kind == FileType::RegularFile && object_file(ObjectDir::FanOut, name.to_bytes()) {
                            present.insert(dir.join(OsStr::from_bytes(name.to_bytes())));
                        }
                    });
                }
                self.objects.dirs.insert(wd, (dir, kind));
                Ok(())
            }
            Err(e) if gone(e as i32) || e == nix::errno::Errno::ENOTDIR => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// One event on the object store ([`Objects`]).
    fn object_event(&mut self, ev: &nix::sys::inotify::InotifyEvent) {
        use nix::sys::inotify::AddWatchFlags as F;
        let Some((dir, kind)) = self.objects.dirs.get(&ev.wd).cloned() else { return };
        if ev.mask.contains(F::IN_IGNORED) {
            self.objects.dirs.remove(&ev.wd);
            return;
        }
        let Some(name) = ev.name.as_ref() else { return };
        let name = name.as_bytes();
        if kind == ObjectDir::Top {
            if ev.mask.contains(F::IN_ISDIR) {
                self.full |= self.watch_object_dir(&dir, name).is_err();
            }
            return;
        }
        if !object_file(kind, name) {
            return;
        }
        let path = dir.join(OsStr::from_bytes(name));
        let objects = &mut self.objects;
        if kind == ObjectDir::Pack && ev.mask.intersects(F::IN_CREATE | F::IN_MOVED_TO) && name.ends_with(b".pack") {
            objects.new_packs.insert(dir.clone());
        }
        let removed = ev.mask.intersects(F::IN_DELETE | F::IN_MOVED_FROM);
        if kind == ObjectDir::FanOut && removed {
            objects.present.remove(&path);
            // Removed by anyone but this watch (which removes what it tells).
            if !objects.told.contains(&path) {
                objects.removed.insert(path.clone());
                // rt8 A2: git looks up a missing object elsewhere (an alternate store, a pack
                // written since), and removes a loose one only once a pack holds it (`git gc`)
                // or no commit uses it (`git prune`).
                let oid = dir.file_name().map(|f| [f.as_bytes(), name].concat()).unwrap_or_default();
                let pack = dir.parent().map(|o| o.join("pack")).unwrap_or_default();
                if !in_a_pack(&pack, &oid) {
                    let said = format!(
                        "agentsh: a process in the sandbox removed the git object {}, which no pack of the store \
                         holds: unless it was `git prune` removing what no commit uses, git now fails on it, or \
                         finds it where the sandbox put another; check: git fsck",
                        crate::text::path(&path)
                    );
                    self.tell(path, said);
                }
            }
            return;
        }
        if kind == ObjectDir::Pack && removed && (name.ends_with(b".pack") || name.ends_with(b".idx")) {
            // rt8 A2: git removes a pack once it wrote another that holds its objects (`git gc`,
            // `git repack -d`).
            let stem = path.with_extension("pack");
            if !objects.new_packs.contains(&dir) && !objects.told.contains(&stem) {
                let said = format!(
                    "agentsh: a process in the sandbox removed the git pack {} without writing another (git does \
                     not): git now fails on the objects it held, or finds them where the sandbox put others; \
                     check: git fsck",
                    crate::text::path(&stem)
                );
                self.tell(stem, said);
            }
            return;
        }
        let arrived = kind == ObjectDir::FanOut && ev.mask.intersects(F::IN_CREATE | F::IN_MOVED_TO);
        // libgit2, gitoxide and dulwich rename a temporary file to a new object's name: onto
        // one there, it replaces it.
        let written = ev.mask.intersects(F::IN_MODIFY | F::IN_CLOSE_WRITE)
            || kind == ObjectDir::FanOut && ev.mask.contains(F::IN_MOVED_TO) && objects.present.contains(&path);
        let again = arrived && !written && objects.removed.remove(&path);
        if arrived && !written {
            // Made again (the person's `git hash-object -w`): told again if written again.
            objects.told.remove(&path);
            if objects.present.len() < MAX_OBJECTS_KNOWN {
                objects.present.insert(path.clone());
            }
        }
        if !written && !again {
            return;
        }
        let at = crate::text::path(&path);
        let said = if kind == ObjectDir::FanOut && written {
            let _ = std::fs::remove_file(&path);
            self.objects.present.remove(&path);
            format!(
                "agentsh: a process in the sandbox rewrote the git object {at} under its name (git never does), so it was \
                 removed: git would have shown its new content as the object's, here and in every repository that \
                 borrows these objects (objects/info/alternates); check: git fsck"
            )
        } else if kind == ObjectDir::FanOut {
            format!(
                "agentsh: a process in the sandbox removed the git object {at} and made it again (git does not, \
                 but where a `git gc` loosens it): if it holds other content, git shows that as the object's, here \
                 and in every repository that borrows these objects (objects/info/alternates); check: git fsck"
            )
        } else {
            format!(
                "agentsh: a process in the sandbox wrote to the git pack {at} in place (git never does): `git show` \
                 and `git log -p` may show forged content, here and in every repository that borrows these objects \
                 (objects/info/alternates); check: git fsck --full"
            )
        };
        self.tell(path, said);
    }

    /// Notes `said` of `path` for the next command's [`Sweep`] to tell, once.
    fn tell(&mut self, path: PathBuf, said: String) {
        if self.objects.told.insert(path)
            && let Some((records, box_name)) = &self.out.notes
        {
            note(records.as_fd(), box_name, &[said]);
        }
    }

    /// Watches the directory holding each of `bound`, the code paths the box binds read-only
    /// (issue 25, rt6b G2): a read-only bind is a mount on the file of the moment, and a rename
    /// over it or its removal outside the box (git rewrites `.git/config` by renaming
    /// `config.lock` over it; an editor saves a file so) detaches that mount in the box too,
    /// where a process left running could then write the new file. Such an event makes
    /// [`Watcher::replaced`] say so, and the holder ends the box. An error where a directory
    /// cannot be watched (the box's share of watches used up): the box is not kept then.
    pub(crate) fn guard(&mut self, bound: &[PathBuf]) -> nix::Result<()> {
        use nix::sys::inotify::AddWatchFlags as F;
        let flags = F::IN_MOVED_TO | F::IN_MOVED_FROM | F::IN_CREATE | F::IN_DELETE | F::IN_ONLYDIR;
        // Added to what the directory is watched for already (the git directory, for links).
        let flags = flags | F::from_bits_retain(libc::IN_MASK_ADD);
        for path in bound {
            let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { continue };
            let wd = match self.inotify.add_watch(dir, flags) {
                Ok(wd) => wd,
                // Gone since it was bound (and the bind with it): the box is ended as a command
                // next finds it (`holder::build_past`).
                Err(e) if gone(e as i32) => {
                    self.replaced.get_or_insert_with(|| path.clone());
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (_, names) = self.guards.entry(wd).or_insert_with(|| (dir.to_path_buf(), Vec::new()));
            names.push(name.to_owned());
            self.bound.push((path.clone(), identity(path)));
        }
        Ok(())
    }

    /// A code path [`Watcher::guard`] watches that was replaced, removed or renamed away since
    /// it was bound: the box's read-only bind of it no longer holds.
    pub(crate) fn replaced(&self) -> Option<&Path> {
        self.replaced.as_deref()
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.inotify.as_fd()
    }

    /// Whether every directory below the [`LINKLESS`] ones is watched (see `full`).
    pub(crate) fn complete(&self) -> bool {
        !self.full
    }

    fn watch(&mut self, dir: PathBuf, linkless: bool) -> nix::Result<()> {
        use nix::sys::inotify::AddWatchFlags as F;
        let flags = F::IN_CREATE | F::IN_MOVED_TO | F::IN_ONLYDIR | F::IN_DONT_FOLLOW;
        let wd = self.inotify.add_watch(&dir, flags)?;
        self.dirs.insert(wd, (dir, linkless));
        Ok(())
    }

    /// Watches `dir` and every directory below it (each before it is read, so nothing made
    /// meanwhile is missed), removing every link there.
    fn watch_tree(&mut self, dir: PathBuf) {
        let mut todo = vec![(dir, 0)];
        let mut budget = MAX_WATCH_READ;
        while let Some((dir, depth)) = todo.pop() {
            if depth > 32 || self.dirs.len() >= MAX_ENTRIES {
                self.full = true;
                return;
            }
            if let Err(e) = self.watch(dir.clone(), true) {
                // Gone again (or replaced by a link, whose own event removes it): nothing to watch.
                self.full |= !gone(e as i32);
                continue;
            }
            let fd = match beneath(&dir) {
                Ok(fd) => fd,
                Err(e) => {
                    self.full |= !gone(e.raw_os_error());
                    continue;
                }
            };
            let out = &mut self.out;
            let read = read_entries(fd, &mut budget, |fd, name, kind| match kind {
                FileType::Symlink => remove(fd, name, &dir, out),
                FileType::Directory => todo.push((dir.join(OsStr::from_bytes(name.to_bytes())), depth + 1)),
                _ => {}
            });
            if read.is_none() && budget == 0 {
                self.full = true;
                return;
            }
        }
    }

    /// Reads what inotify saw, and removes each link made; returns what was removed since the
    /// last call.
    pub(crate) fn handle(&mut self) -> Vec<Removed> {
        use nix::sys::inotify::AddWatchFlags as F;
        while let Ok(events) = self.inotify.read_events() {
            for ev in events {
                if ev.mask.contains(F::IN_Q_OVERFLOW) {
                    self.rescan();
                    // Events lost: each guarded path is looked at, as bound and as it is now.
                    if let Some((p, _)) = self.bound.iter().find(|(p, was)| identity(p) != *was) {
                        self.replaced.get_or_insert_with(|| p.clone());
                    }
                    continue;
                }
                if let Some((dir, names)) = self.guards.get(&ev.wd) {
                    let moved = F::IN_MOVED_TO | F::IN_MOVED_FROM | F::IN_CREATE | F::IN_DELETE;
                    if ev.mask.contains(F::IN_IGNORED) {
                        // The directory itself is gone: so is what was bound in it.
                        self.replaced.get_or_insert_with(|| dir.clone());
                    } else if ev.mask.intersects(moved)
                        && let Some(name) = ev.name.as_ref().filter(|n| names.contains(n))
                    {
                        self.replaced.get_or_insert_with(|| dir.join(name));
                    }
                }
                if self.objects.dirs.contains_key(&ev.wd) {
                    self.object_event(&ev);
                    continue;
                }
                if ev.mask.contains(F::IN_IGNORED) {
                    self.dirs.remove(&ev.wd);
                    continue;
                }
                let (Some(name), Some((dir, linkless))) = (ev.name, self.dirs.get(&ev.wd).cloned()) else { continue };
                let fd = match beneath(&dir) {
                    Ok(fd) => fd,
                    Err(e) => {
                        self.full |= !gone(e.raw_os_error());
                        continue;
                    }
                };
                let Ok(cname) = std::ffi::CString::new(name.as_bytes()) else { continue };
                match kind(fd.as_fd(), &cname, FileType::Unknown) {
                    FileType::Symlink => remove(fd.as_fd(), &cname, &dir, &mut self.out),
                    FileType::Directory if linkless || LINKLESS.iter().any(|l| l.as_bytes() == name.as_bytes()) => {
                        self.watch_tree(dir.join(&name));
                    }
                    _ => {}
                }
            }
        }
        std::mem::take(&mut self.out.list)
    }

    /// After events were lost: the [`LINKLESS`] directories swept and watched again, and the
    /// links made in the top level since the watch began removed.
    fn rescan(&mut self) {
        let Some(git) = self.git.clone() else { return };
        for name in LINKLESS {
            self.watch_tree(git.join(name));
        }
        if let Ok(fd) = beneath(&git) {
            let mut budget = MAX_ENTRIES;
            top_level(fd, &git, Some(self.started), &[], &mut self.out, &mut budget, false);
        }
    }
}

/// What a box's holder that has no [`Watcher`] (or one that could not cover the git directory,
/// [`Watcher::complete`]) does as it leaves, once no other process is left in the box: removes
/// every link made in the git directory's top level since `since` (when the box was made) and
/// every link in the [`LINKLESS`] directories, however many they hold, noting each as the watch
/// does.
/// With the command's own [`Sweep`] before it, it leaves no link a process of the box made.
pub(crate) fn last_sweep(git: &Path, since: SystemTime, notes: Option<(OwnedFd, String)>) -> Vec<Removed> {
    let mut out = Out { list: Vec::new(), notes };
    if let Ok(fd) = beneath(git) {
        let mut budget = usize::MAX;
        let since = Some(stamp(since.checked_sub(SLACK).unwrap_or(UNIX_EPOCH)));
        top_level(fd, git, since, &[], &mut out, &mut budget, true);
    }
    out.list
}

/// What `path` names now (a link itself: a link is bound as one): its device and inode.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether a watch or an open failed because the directory is no longer there (removed, or a
/// link put in its place, which is removed on its own event): not a directory left unwatched.
fn gone(errno: i32) -> bool {
    matches!(errno, libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
}

/// A directory opened with no link followed on the way (the box could put one in place of a
/// directory between an event and its handling).
fn beneath(dir: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat2(rustix::fs::CWD, dir, flags, Mode::empty(), rustix::fs::ResolveFlags::NO_SYMLINKS)
}

/// Appends what the holder removes to the box's lock (`NAME.lock` in agentsh's records,
/// `records` being that directory, opened before the box was made), for the next command's
/// [`Sweep`] to report: a command holds that lock open anyway, so it tells whether there is
/// anything to report with one `fstat`.
pub(crate) fn note(records: BorrowedFd<'_>, name: &str, removed: &[Removed]) {
    if removed.is_empty() {
        return;
    }
    let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = openat(records, format!("{name}.lock"), flags, Mode::empty()) else { return };
    let mut text = String::new();
    for r in removed {
        text.push_str(&r.replace('\n', " "));
        text.push('\n');
    }
    let _ = rustix::io::write(&fd, text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A git directory with git's own layout: `logs/refs/heads/main`, `logs/HEAD`.
    fn git_dir() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join(".git");
        std::fs::create_dir_all(git.join("logs/refs/heads")).unwrap();
        std::fs::create_dir_all(git.join("logs/refs/remotes/origin")).unwrap();
        for f in ["HEAD", "logs/HEAD", "logs/refs/heads/main", "logs/refs/remotes/origin/main"] {
            std::fs::write(git.join(f), "x\n").unwrap();
        }
        (tmp, git)
    }

    fn sweep(git: &Path, since: Stamp) -> Sweep {
        Sweep {
            git: git.to_path_buf(),
            since,
            notes: git.join("no-notes"),
            noted: false,
            messages: Default::default(),
            before: Vec::new(),
        }
    }

    fn ctime(p: &Path) -> Stamp {
        changed(&statx(rustix::fs::CWD, p, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME).unwrap())
    }

    fn is_link(p: &Path) -> bool {
        p.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
    }

    #[test]
    fn links_made_during_the_command_are_removed() {
        let (_tmp, git) = git_dir();
        let s = Sweep::start(&git, &git, "box", false);
        std::fs::remove_file(git.join("logs/refs/remotes/origin/main")).unwrap();
        for (at, to) in [
            ("COMMIT_EDITMSG", "/home/u/.bashrc"),
            ("FETCH_HEAD", "/home/u/.ssh/authorized_keys"),
            ("logs/refs/remotes/origin/main", "/etc/shadow"),
        ] {
            symlink(to, git.join(at)).unwrap();
        }
        std::fs::create_dir_all(git.join("rebase-merge/deep")).unwrap();
        symlink("/home/u/.profile", git.join("rebase-merge/deep/message")).unwrap();
        let mut removed = s.finish();
        removed.sort();
        let at = |rel: &str, to: &str| format!("{} -> {to}", git.join(rel).display());
        assert_eq!(
            removed,
            vec![
                at("COMMIT_EDITMSG", "/home/u/.bashrc"),
                at("FETCH_HEAD", "/home/u/.ssh/authorized_keys"),
                at("logs/refs/remotes/origin/main", "/etc/shadow"),
                at("rebase-merge/deep/message", "/home/u/.profile"),
            ]
        );
        for rel in ["COMMIT_EDITMSG", "FETCH_HEAD", "logs/refs/remotes/origin/main", "rebase-merge/deep/message"] {
            assert!(!is_link(&git.join(rel)), "{rel}");
        }
        assert!(git.join("logs/refs/heads/main").is_file() && git.join("HEAD").is_file(), "git's own files stay");
    }

    #[test]
    fn old_links_in_the_top_level_stay_and_every_link_in_logs_goes() {
        // A git directory some tools make of links (`repo`, git-new-workdir): links older than
        // the command are the person's. In `logs/`, git makes none: every link goes.
        let (_tmp, git) = git_dir();
        symlink("/elsewhere/objects", git.join("objects")).unwrap();
        symlink("/home/u/.bashrc", git.join("logs/refs/heads/old")).unwrap();
        let made = ctime(&git.join("objects")).max(ctime(&git.join("logs/refs/heads")));
        let after = (made.0, made.1 + 1);
        let removed = sweep(&git, after).finish();
        assert!(removed.is_empty(), "nothing changed since the command started: nothing read ({removed:?})");
        // The top level changes during the command (git's `index`), after the links were made
        // (a clock tick later: a file system's time stamps may be that coarse).
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(git.join("index"), "i").unwrap();
        let removed = sweep(&git, after).finish();
        assert!(is_link(&git.join("objects")), "an old link in the top level stays");
        assert_eq!(removed, vec![format!("{} -> /home/u/.bashrc", git.join("logs/refs/heads/old").display())]);
    }

    #[test]
    fn the_holders_notes_are_reported_once() {
        let (_tmp, git) = git_dir();
        let records = rustix::fs::open(&git, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        std::fs::write(git.join("box.lock"), "").unwrap();
        note(records.as_fd(), "box", &["/w/.git/FETCH_HEAD -> /etc".into()]);
        note(records.as_fd(), "box", &["/w/.git/FETCH_HEAD -> /etc".into(), "/w/.git/x -> /y".into()]);
        // Nothing changed in the git directory during the command: told because the holder had
        // noted it as the command started.
        let s = Sweep { noted: true, notes: git.join("box.lock"), ..sweep(&git, (i64::MAX, 0)) };
        assert_eq!(s.finish(), vec!["/w/.git/FETCH_HEAD -> /etc".to_string(), "/w/.git/x -> /y".to_string()]);
        assert!(s.finish().is_empty(), "taken once");
        assert!(git.join("box.lock").is_file(), "the lock stays");
    }

    #[test]
    fn the_last_sweep_removes_every_link_made_since_the_box_was() {
        let (_tmp, git) = git_dir();
        symlink("/home/u/.bashrc", git.join("FETCH_HEAD")).unwrap();
        symlink("/home/u/.profile", git.join("logs/refs/heads/x")).unwrap();
        // A box made after both: the top level's link is older and stays; logs/ has none of git's.
        let later = SystemTime::now() + Duration::from_secs(3600);
        let removed = last_sweep(&git, later, None);
        assert_eq!(removed, vec![format!("{} -> /home/u/.profile", git.join("logs/refs/heads/x").display())]);
        assert!(is_link(&git.join("FETCH_HEAD")));
        // A box made before: the top level's link is its own.
        let removed = last_sweep(&git, UNIX_EPOCH, None);
        assert_eq!(removed, vec![format!("{} -> /home/u/.bashrc", git.join("FETCH_HEAD").display())]);
        assert!(!is_link(&git.join("FETCH_HEAD")) && git.join("HEAD").is_file());
    }

    /// rt6b G2: a guarded code path renamed over, removed or renamed away is told; another
    /// name in its directory, or a write in place, is not.
    #[test]
    fn the_watcher_tells_a_guarded_code_path_replaced() {
        let (_tmp, git) = git_dir();
        let ws = git.parent().unwrap().to_path_buf();
        std::fs::write(git.join("config"), "[core]\n").unwrap();
        std::fs::create_dir_all(ws.join("dotfiles")).unwrap();
        std::fs::write(ws.join("dotfiles/zshrc"), "# rc\n").unwrap();
        let Ok(mut w) = Watcher::new(Some(&git), None) else { return eprintln!("skipped: no inotify here") };
        w.guard(&[git.join("config"), ws.join("dotfiles/zshrc")]).unwrap();
        std::fs::write(git.join("index.lock"), "i").unwrap();
        std::fs::rename(git.join("index.lock"), git.join("index")).unwrap();
        std::fs::write(ws.join("dotfiles/other"), "").unwrap();
        std::fs::OpenOptions::new().append(true).open(git.join("config")).unwrap();
        w.handle();
        assert_eq!(w.replaced(), None);
        std::fs::write(git.join("config.lock"), "[core]\n\tx = y\n").unwrap();
        std::fs::rename(git.join("config.lock"), git.join("config")).unwrap();
        w.handle();
        assert_eq!(w.replaced(), Some(git.join("config").as_path()));
        // A watch with no git directory, for a dotfile alone: removed.
        let mut w = Watcher::new(None, None).unwrap();
        w.guard(&[ws.join("dotfiles/zshrc")]).unwrap();
        std::fs::remove_file(ws.join("dotfiles/zshrc")).unwrap();
        w.handle();
        assert_eq!(w.replaced(), Some(ws.join("dotfiles/zshrc").as_path()));
    }

    #[test]
    fn the_watcher_removes_links_as_they_are_made() {
        let (_tmp, git) = git_dir();
        symlink("/home/u/.bashrc", git.join("logs/refs/heads/before")).unwrap();
        symlink("/elsewhere/objects", git.join("objects")).unwrap();
        let Ok(mut w) = Watcher::new(Some(&git), None) else { return eprintln!("skipped: no inotify here") };
        assert!(!is_link(&git.join("logs/refs/heads/before")), "a link in logs/ goes as the watch starts");
        assert!(is_link(&git.join("objects")), "an old link in the top level stays");
        symlink("/home/u/.bashrc", git.join("COMMIT_EDITMSG")).unwrap();
        std::fs::create_dir_all(git.join("logs/refs/heads/feature/deep")).unwrap();
        symlink("/home/u/.bashrc", git.join("logs/refs/heads/feature/deep/x")).unwrap();
        std::fs::create_dir(git.join("sequencer")).unwrap();
        symlink("/home/u/.bashrc", git.join("sequencer/todo")).unwrap();
        let removed = w.handle();
        for rel in ["COMMIT_EDITMSG", "logs/refs/heads/feature/deep/x", "sequencer/todo"] {
            assert!(!is_link(&git.join(rel)), "{rel}: {removed:?}");
        }
        assert!(git.join("logs/refs/heads/main").is_file());
    }

    /// rt8 A2: whether a pack holds an object, as git's index says, for a removed loose one.
    #[test]
    fn a_pack_index_is_searched_for_an_object() {
        let t = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(t.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q", "."]);
        for n in 0..40 {
            std::fs::write(t.path().join(format!("f{n}")), format!("{n}\n")).unwrap();
        }
        git(&["add", "."]);
        git(&["commit", "-qm", "c"]);
        let pack = t.path().join(".git/objects/pack");
        let blob = git(&["rev-parse", "HEAD:f7"]);
        assert!(!in_a_pack(&pack, blob.as_bytes()), "all loose yet");
        git(&["gc", "-q"]);
        for f in ["f0", "f7", "f39"] {
            let oid = git(&["rev-parse", &format!("HEAD:{f}")]);
            assert!(in_a_pack(&pack, oid.as_bytes()), "{f}");
        }
        assert!(in_a_pack(&pack, git(&["rev-parse", "HEAD"]).as_bytes()));
        for absent in ["0".repeat(40), "f".repeat(40), format!("{}0", &blob[..39]), "xyz".into()] {
            assert!(!in_a_pack(&pack, absent.as_bytes()), "{absent}");
        }
    }

    #[test]
    fn object_files_are_told_by_name() {
        let hex38 = "0123456789abcdef0123456789abcdef012345";
        let pack = format!("pack-{}", "ab".repeat(20));
        for (dir, name, want) in [
            (ObjectDir::FanOut, hex38.to_string(), true),
            (ObjectDir::FanOut, "ab".repeat(31), true),
            (ObjectDir::FanOut, format!("tmp_obj_{hex38}"), false),
            (ObjectDir::FanOut, hex38.to_uppercase(), false),
            (ObjectDir::Pack, format!("{pack}.pack"), true),
            (ObjectDir::Pack, format!("{pack}.idx"), true),
            (ObjectDir::Pack, format!("{pack}.rev"), true),
            (ObjectDir::Pack, format!("{pack}.keep"), false),
            (ObjectDir::Pack, format!("{pack}.promisor"), false),
            (ObjectDir::Pack, "tmp_pack_x".to_string(), false),
            (ObjectDir::Top, hex38.to_string(), false),
        ] {
            assert_eq!(object_file(dir, name.as_bytes()), want, "{name}");
        }
    }

    /// rt7 A5: a loose object written in place is removed; git's own way of adding one (a
    /// temporary file linked to its name) and a pack's `.keep` are left.
    #[test]
    fn the_watcher_removes_an_object_written_in_place() {
        let (_tmp, git) = git_dir();
        let fan = git.join("objects/ab");
        std::fs::create_dir_all(&fan).unwrap();
        std::fs::create_dir_all(git.join("objects/pack")).unwrap();
        let old = fan.join("0123456789abcdef0123456789abcdef012345");
        std::fs::write(&old, "old").unwrap();
        let Ok(mut w) = Watcher::new(Some(&git), None) else { return eprintln!("skipped: no inotify here") };
        std::fs::write(fan.join("tmp_obj_1"), "new").unwrap();
        std::fs::hard_link(fan.join("tmp_obj_1"), fan.join("1123456789abcdef0123456789abcdef012345")).unwrap();
        std::fs::remove_file(fan.join("tmp_obj_1")).unwrap();
        std::fs::write(git.join("objects/pack/pack-x.keep"), "keep").unwrap();
        // A fan-out directory made after the watch began is watched too.
        std::fs::create_dir(git.join("objects/cd")).unwrap();
        w.handle();
        // libgit2's way: a temporary file renamed to the name.
        let later = git.join("objects/cd/0123456789abcdef0123456789abcdef012345");
        std::fs::write(git.join("objects/cd/tmp"), "new").unwrap();
        std::fs::rename(git.join("objects/cd/tmp"), &later).unwrap();
        w.handle();
        assert!(old.is_file() && later.is_file(), "nothing written in place yet");
        std::fs::write(&old, "forged").unwrap();
        std::fs::write(&later, "forged").unwrap();
        // Renamed onto one there.
        let linked = fan.join("1123456789abcdef0123456789abcdef012345");
        let renamed = fan.join("2123456789abcdef0123456789abcdef012345");
        std::fs::write(&renamed, "").unwrap();
        w.handle();
        assert!(!renamed.exists(), "made under its name and written: removed");
        std::fs::write(fan.join("tmp"), "forged").unwrap();
        std::fs::rename(fan.join("tmp"), &linked).unwrap();
        w.handle();
        assert!(!old.exists() && !later.exists() && !linked.exists(), "written in place: removed");
    }
}
