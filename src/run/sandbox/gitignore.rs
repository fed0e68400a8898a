//! `.gitignore` files a boxed command made or changed that hide their own directory from the
//! person's `git status` (issue 25, rt4 R12): `tests/_fixtures/.gitignore` holding `*` ignores
//! itself and the `conftest.py` beside it, so the review shows nothing, and the person's
//! `pytest` then runs that file. Nothing of git's changes (index, refs); `git status --ignored`
//! shows such a directory. Found when the command ends ([`self_ignoring`]), for the person to
//! be told; nothing is changed.
//!
//! What is read: every directory git tracks (from the index) is `statx`ed for its change time;
//! only those changed during the command are listed, and below them only the directories that
//! are new, that git does not ignore and that hold no repository of their own. A directory git
//! does not track that was there before the command is not looked into, nor a tracked one past
//! the [`MAX_DIRS`] shallowest, nor any below the top level where the index is too large to be
//! read on every command (`gitreview`).

use super::gitreview::{Hidden, Index};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags, StatxFlags};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How many tracked directories are looked at, at most (the shallowest first): each costs
/// every command one `statx` (1 to 4 µs here), and a monorepo has tens of thousands.
pub(crate) const MAX_DIRS: usize = 16;
/// The same in each submodule's checkout.
pub(crate) const MAX_SUBMODULE_DIRS: usize = 4;

/// Directories that tools make with a `.gitignore` of `*` in them, holding data no tool runs
/// by name: pytest's, mypy's and ruff's caches. Not told.
const TOOL_CACHES: &[&[u8]] = &[b".pytest_cache", b".mypy_cache", b".ruff_cache"];

/// How many directory entries are read at most below the changed directories.
const MAX_ENTRIES: usize = 20_000;

/// A `.gitignore` larger than this is read only this far.
const MAX_IGNORE_FILE: u64 = 256 * 1024;

/// The directories below `root` (the workspace) hidden from `git status` by a `.gitignore` in
/// them that ignores itself and changed since `since` (seconds), with [`Hidden::IgnoresUnchecked`]
/// where the tree changed more than is read. `index`: the workspace's index (`None`: none, or
/// unreadable: only the top level is looked at); `git`: its git directory, for `info/exclude`.
///
/// `watched`: the untracked `.gitignore` files (relative to `root`) earlier commands made or
/// changed that did not ignore themselves then: each is `statx`ed, and read again where it
/// changed since, as one rewritten in place changes no directory's change time (rt5 A3). Those
/// this command made or changed are added; those git now tracks, or gone, are let go.
pub(crate) fn self_ignoring(
    root: &Path,
    git: &Path,
    index: Option<&Index>,
    since: i64,
    watched: &mut Vec<Vec<u8>>,
    max_dirs: usize,
) -> Vec<Hidden> {
    let (files, dirs) = tracked(index);
    let Some(mut walk) = Walk::new(root, git, &files, &dirs, since) else { return Vec::new() };
    watched.retain(|rel| {
        let Ok(st) = rustix::fs::statx(walk.top.as_fd(), rel.as_slice(), AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME)
        else {
            return false;
        };
        if files.contains(rel.as_slice()) {
            return false;
        }
        if st.stx_ctime.tv_sec >= since && walk.ignored(rel, false) {
            let dir = rel.rsplit_once_dir();
            walk.found.push(Hidden::SelfIgnored(if dir.is_empty() {
                ".".into()
            } else {
                String::from_utf8_lossy(dir).into_owned()
            }));
        }
        true
    });
    let mut shallow: Vec<&[u8]> = dirs.iter().copied().collect();
    shallow.sort_by_key(|d| (d.iter().filter(|c| **c == b'/').count() + usize::from(!d.is_empty()), *d));
    let changed: Vec<&[u8]> =
        shallow.into_iter().take(max_dirs).filter(|d| walk.changed(walk.top.as_fd(), d)).collect();
    for d in changed {
        walk.scan(d, true, 0);
    }
    // The index not read: the top level's directories stand for the tracked ones, for a `.git`
    // made in one (rt7 A7).
    if index.is_none() {
        walk.git_below_top(max_dirs);
    }
    for rel in walk.seen {
        if !watched.contains(&rel) {
            watched.push(rel);
        }
    }
    if watched.len() > MAX_WATCHED {
        watched.drain(..watched.len() - MAX_WATCHED);
        walk.cut = true;
    }
    if walk.cut {
        walk.found.push(Hidden::IgnoresUnchecked);
    }
    let mut out: Vec<Hidden> = Vec::with_capacity(walk.found.len());
    for h in walk.found {
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// The paths the index holds, and the directories they are in (`""`: the top level).
fn tracked(index: Option<&Index>) -> (HashSet<&[u8]>, BTreeSet<&[u8]>) {
    let mut files: HashSet<&[u8]> = HashSet::new();
    let mut dirs: BTreeSet<&[u8]> = BTreeSet::new();
    dirs.insert(b"");
    for e in index.map(|ix| ix.entries.as_slice()).unwrap_or_default() {
        files.insert(&e.path);
        let mut p = e.path.as_slice();
        while let Some(i) = p.iter().rposition(|c| *c == b'/') {
            p = &p[..i];
            if !dirs.insert(p) {
                break;
            }
        }
    }
    (files, dirs)
}

/// A directory entry's name and kind.
type Named = (Vec<u8>, FileType);

/// How many of an untracked cache's directories are read at most ([`untracked_cache`]).
const MAX_CACHED_DIRS: usize = 64;

/// What the untracked cache `new` (the `UNTR` extension of `index`, the index of the worktree
/// `root` with its git directory `git`) hides (rt6 X3): of each directory git would trust it for
/// (its stat data as recorded is the directory's now) whose entry is not as in `old` (the cache
/// the command started with), an entry that the index does not hold, the cache does not list
/// and git does not ignore. `Ok(Some(path))`: the first such file (or directory holding one);
/// `Err(())`: the cache was not read whole (it does not read as one, or past the bounds), and
/// nothing can be said, or an entry was written to match a directory as a later command will
/// leave it (its recorded change time is of this second or the last, or ahead of the `clock`,
/// and not the directory's now: rt5 A2's two steps). The person's global excludes are not
/// read: a file only they ignore is told. A `statx` and a directory read for each directory
/// whose entry changed.
pub(crate) fn untracked_cache(
    root: &Path,
    git: &Path,
    index: &Index,
    (old, new): (Option<&[u8]>, &[u8]),
    clock: i64,
) -> Result<Option<String>, ()> {
    let new = super::untracked::read(new, index.hash).ok_or(())?;
    let old = old.and_then(|o| super::untracked::read(o, index.hash)).unwrap_or_default();
    let was: HashMap<&[u8], [u8; 36]> = old.iter().filter_map(|d| Some((d.path.as_slice(), d.stat?))).collect();
    let changed: Vec<_> =
        new.iter().filter(|d| d.stat.is_some_and(|s| was.get(d.path.as_slice()) != Some(&s))).collect();
    if changed.len() > MAX_CACHED_DIRS {
        return Err(());
    }
    let (files, dirs) = tracked(Some(index));
    let Some(mut walk) = Walk::new(root, git, &files, &dirs, 0) else { return Ok(None) };
    let be32 = |s: &[u8; 36], at: usize| u32::from_be_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
    for d in changed {
        let Some(recorded) = d.stat else { continue };
        let Ok(fd) = beneath(walk.top.as_fd(), &d.path, OFlags::RDONLY | OFlags::DIRECTORY) else { continue };
        let Ok(st) = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS) else { continue };
        // git reads the directory again where these differ (dir.c `match_stat_data`).
        let now = [
            (0, st.stx_ctime.tv_sec as u32),
            (8, st.stx_mtime.tv_sec as u32),
            (20, st.stx_ino as u32),
            (32, st.stx_size as u32),
        ];
        if now.iter().any(|(at, v)| be32(&recorded, *at) != *v) {
            if i64::from(be32(&recorded, 0)) >= clock - 1 {
                return Err(());
            }
            continue;
        }
        let listed = |name: &[u8]| d.listed.iter().any(|l| l.strip_suffix(b"/").unwrap_or(l) == name);
        for (name, kind) in walk.entries(fd).ok_or(())?.0 {
            let rel = join(&d.path, &name);
            if files.contains(rel.as_slice()) || dirs.contains(rel.as_slice()) || listed(&name) {
                continue;
            }
            let is_dir = kind == FileType::Directory;
            if walk.ignored(&rel, is_dir) {
                continue;
            }
            // git lists no directory that holds nothing it would show (`--untracked-files`
            // hides empty ones): one whose entries are all ignored files.
            if is_dir {
                let inner = beneath(walk.top.as_fd(), &rel, OFlags::RDONLY | OFlags::DIRECTORY).ok();
                let entries = inner.and_then(|fd| walk.entries(fd)).ok_or(())?.0;
                let shows =
                    entries.into_iter().any(|(n, k)| k == FileType::Directory || !walk.ignored(&join(&rel, &n), false));
                if !shows {
                    continue;
                }
            }
            return Ok(Some(String::from_utf8_lossy(&rel).into_owned()));
        }
        if walk.cut {
            return Err(());
        }
    }
    Ok(None)
}

/// How many untracked `.gitignore` files are watched for a later rewrite, at most: one `statx`
/// each on every boxed command. Past them, the oldest are let go, and that is told.
const MAX_WATCHED: usize = 32;

trait DirOf {
    /// The directory part of a relative path (`""`: the top level).
    fn rsplit_once_dir(&self) -> &[u8];
}

impl DirOf for Vec<u8> {
    fn rsplit_once_dir(&self) -> &[u8] {
        self.iter().rposition(|c| *c == b'/').map_or(&self[..0], |i| &self[..i])
    }
}

struct Walk<'a> {
    /// The workspace, open, and its path.
    top: OwnedFd,
    root: &'a Path,
    git: &'a Path,
    /// The paths the index holds, and the directories they are in (`""`: the top level).
    files: &'a HashSet<&'a [u8]>,
    dirs: &'a BTreeSet<&'a [u8]>,
    since: i64,
    budget: usize,
    /// Each directory's `.gitignore`, read once.
    patterns: HashMap<Vec<u8>, Vec<Pattern>>,
    /// `info/exclude`, read once.
    exclude: Option<Vec<Pattern>>,
    found: Vec<Hidden>,
    /// Not everything was read.
    cut: bool,
    /// Untracked `.gitignore` files changed during the command that do not ignore themselves:
    /// watched after it.
    seen: Vec<Vec<u8>>,
}

impl<'a> Walk<'a> {
    fn new(
        root: &'a Path,
        git: &'a Path,
        files: &'a HashSet<&'a [u8]>,
        dirs: &'a BTreeSet<&'a [u8]>,
        since: i64,
    ) -> Option<Walk<'a>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let top = rustix::fs::openat(rustix::fs::CWD, root, flags, Mode::empty()).ok()?;
        Some(Walk {
            top,
            root,
            git,
            files,
            dirs,
            since,
            budget: MAX_ENTRIES,
            patterns: HashMap::new(),
            exclude: None,
            found: Vec::new(),
            cut: false,
            seen: Vec::new(),
        })
    }

    /// The entries of the open directory `fd` but `.`, `..` and `.git`, with their kind, while
    /// the budget lasts (`None` past it); and the directory, still open.
    fn entries(&mut self, fd: OwnedFd) -> Option<(Vec<Named>, Dir)> {
        let mut entries = Dir::new(fd).ok()?;
        let mut names = Vec::new();
        while let Some(Ok(e)) = entries.read() {
            let Some(left) = self.budget.checked_sub(1) else {
                self.cut = true;
                return None;
            };
            self.budget = left;
            let name = e.file_name().to_bytes();
            if name != b"." && name != b".." && name != b".git" {
                names.push((name.to_vec(), e.file_type()));
            }
        }
        let at = entries.fd().ok()?;
        for (name, kind) in &mut names {
            if *kind == FileType::Unknown {
                *kind = rustix::fs::statx(at, name.as_slice(), AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE)
                    .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.stx_mode.into()));
            }
        }
        Some((names, entries))
    }

    /// Whether `name` (below `at`; `""`: `at` itself) changed since the command started.
    fn changed(&self, at: impl AsFd, name: &[u8]) -> bool {
        let name = if name.is_empty() { b"." } else { name };
        rustix::fs::statx(at, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::CTIME)
            .is_ok_and(|s| s.stx_ctime.tv_sec >= self.since)
    }

    /// Reads the directory `dir` (relative to the workspace): a `.gitignore` that is no tracked
    /// file, changed during the command and ignores itself is found; the new directories git
    /// would look into are read in turn. `tracked`: `dir` is one git tracks (an untracked
    /// directory in it that was there before is left alone).
    fn scan(&mut self, dir: &[u8], tracked: bool, depth: usize) {
        if depth > 64 {
            self.cut = true;
            return;
        }
        let Ok(fd) = beneath(self.top.as_fd(), dir, OFlags::RDONLY | OFlags::DIRECTORY) else { return };
        let Some((names, entries)) = self.entries(fd) else { return };
        let Ok(at) = entries.fd() else { return };
        for (name, kind) in names {
            let rel = join(dir, &name);
            if name == b".gitignore"
                && kind == FileType::RegularFile
                && !self.files.contains(rel.as_slice())
                && self.changed(at, &name)
                && !TOOL_CACHES.iter().any(|c| dir.rsplit(|b| *b == b'/').next() == Some(*c))
            {
                if self.ignored(&rel, false) {
                    let shown = if dir.is_empty() { ".".into() } else { String::from_utf8_lossy(dir).into_owned() };
                    self.found.push(Hidden::SelfIgnored(shown));
                } else {
                    self.seen.push(rel.clone());
                }
            }
            if kind == FileType::Directory
                && !self.dirs.contains(rel.as_slice())
                && (!tracked || self.changed(at, &name))
            {
                // A repository of its own: git shows it as one entry, or not at all.
                if self.repository(&rel) || self.ignored(&rel, true) {
                    self.made_git(&rel);
                } else {
                    self.scan(&rel, false, depth + 1);
                }
            }
        }
        if !dir.is_empty() {
            self.made_git(dir);
        }
    }

    /// [`Walk::made_git`] in each of the first `max` directories of the top level that changed
    /// during the command: a `getdents` and a `statx` each.
    fn git_below_top(&mut self, max: usize) {
        let Ok(fd) = beneath(self.top.as_fd(), b"", OFlags::RDONLY | OFlags::DIRECTORY) else { return };
        let Some((names, entries)) = self.entries(fd) else { return };
        let Ok(at) = entries.fd() else { return };
        let dirs = names.into_iter().filter(|(_, kind)| *kind == FileType::Directory).take(max);
        let changed: Vec<Vec<u8>> = dirs.filter(|(name, _)| self.changed(at, name)).map(|(name, _)| name).collect();
        for name in changed {
            self.made_git(&name);
        }
    }

    /// Finds a `.git` (of any kind) in the directory `rel` (not the top level) that was made or
    /// changed during the command (rt7 A7): git never lists one, not even `--ignored`, and git
    /// run in that directory (a git-aware prompt on `cd`) takes it for a repository of its own
    /// and runs what its config names. One `statx`.
    /// A `.git` file that names a submodule's git directory in the repository's own (`modules/*`,
    /// as `git submodule update --init` makes it) is git's: what is in `modules/` is reviewed
    /// as the submodules are.
    fn made_git(&mut self, rel: &[u8]) {
        let dot_git = join(rel, b".git");
        if !self.changed(self.top.as_fd(), &dot_git) {
            return;
        }
        let dot_git = self.root.join(std::ffi::OsStr::from_bytes(&dot_git));
        let text = small_file(&dot_git);
        let named = text.strip_prefix(b"gitdir:").and_then(|t| t.split(|c| *c == b'\n').next()).map(<[u8]>::trim_ascii);
        let modules = std::fs::canonicalize(super::join(self.git, "modules"));
        let submodule = named.zip(dot_git.parent()).and_then(|(named, at)| {
            let named = std::fs::canonicalize(at.join(std::ffi::OsStr::from_bytes(named))).ok()?;
            Some(modules.as_ref().is_ok_and(|m| named.starts_with(m) && named != *m))
        });
        if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_file()) && submodule == Some(true) {
            return;
        }
        self.found.push(Hidden::NestedRepository(String::from_utf8_lossy(rel).into_owned()));
    }

    /// Whether git ignores `rel` (relative to the workspace) by the `.gitignore` files of the
    /// directories above it and `info/exclude`: the deepest file with a pattern that matches
    /// decides, by its last such pattern. The person's global excludes are not read (a
    /// directory they ignore is read here, not skipped).
    fn ignored(&mut self, rel: &[u8], is_dir: bool) -> bool {
        let base = rel.iter().rposition(|c| *c == b'/').map_or(&rel[..0], |i| &rel[..i]);
        let name = &rel[base.len() + usize::from(!base.is_empty())..];
        let mut dir = base;
        loop {
            if !self.patterns.contains_key(dir) {
                let read = self.read(dir);
                self.patterns.insert(dir.to_vec(), read);
            }
            let below = &rel[dir.len() + usize::from(!dir.is_empty())..];
            if let Some(verdict) = decide(&self.patterns[dir], below, name, is_dir) {
                return verdict;
            }
            if dir.is_empty() {
                break;
            }
            dir = dir.iter().rposition(|c| *c == b'/').map_or(&dir[..0], |i| &dir[..i]);
        }
        if self.exclude.is_none() {
            let read = super::gitreview::open_file(&super::join(self.git, "info/exclude"));
            let exclude = read.map(|f| self.patterns_of(f)).unwrap_or_default();
            self.exclude = Some(exclude);
        }
        decide(self.exclude.as_deref().unwrap_or_default(), rel, name, is_dir).unwrap_or(false)
    }

    /// Whether the directory `rel` holds a repository of its own, as git decides it
    /// (`is_nonbare_repository_dir`): git shows it as one entry, or not at all, and does not
    /// look in. Anything else named `.git` there (an empty file, rt5 A3) and git looks into the
    /// directory. One `statx` where there is no `.git`.
    fn repository(&self, rel: &[u8]) -> bool {
        let dot_git = join(rel, b".git");
        if rustix::fs::statx(self.top.as_fd(), dot_git.as_slice(), AtFlags::SYMLINK_NOFOLLOW, StatxFlags::TYPE).is_err()
        {
            return false;
        }
        let dot_git = self.root.join(std::ffi::OsStr::from_bytes(&dot_git));
        // Links followed, as git's `stat` does.
        let Ok(meta) = std::fs::metadata(&dot_git) else { return false };
        if meta.is_dir() {
            return git_directory(&dot_git);
        }
        let text = small_file(&dot_git);
        let named = text.strip_prefix(b"gitdir:").map(|t| t.split(|c| *c == b'\n').next().unwrap_or_default());
        let Some(named) = named.map(<[u8]>::trim_ascii).filter(|n| !n.is_empty()) else { return false };
        // Relative to the directory the `.git` file is in.
        dot_git.parent().is_some_and(|d| git_directory(&d.join(std::ffi::OsStr::from_bytes(named))))
    }

    /// The patterns of `dir`'s `.gitignore` (none where it has none, or it is a link: git does
    /// not follow one there).
    fn read(&mut self, dir: &[u8]) -> Vec<Pattern> {
        let path = join(dir, b".gitignore");
        let Ok(fd) = beneath(self.top.as_fd(), &path, OFlags::RDONLY | OFlags::NONBLOCK) else { return Vec::new() };
        let file = std::fs::File::from(fd);
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Vec::new();
        }
        self.patterns_of(file)
    }

    /// The patterns of an ignore file: where it is larger than is read, or holds a line
    /// longer than is matched, not everything is read, and that is told (rt5 A3).
    fn patterns_of(&mut self, file: std::fs::File) -> Vec<Pattern> {
        use std::io::Read;
        let mut text = Vec::new();
        let _ = file.take(MAX_IGNORE_FILE + 1).read_to_end(&mut text);
        if text.len() as u64 > MAX_IGNORE_FILE {
            self.cut = true;
        }
        let (out, whole) = patterns(&text);
        self.cut |= !whole;
        out
    }
}

/// git's `is_git_directory`: `objects/` and `refs/` (in the directory `commondir` names, where
/// there is one), and a `HEAD` that reads as a ref or an object name (`validate_headref`).
fn git_directory(dir: &Path) -> bool {
    let common = small_file(&dir.join("commondir"));
    let common = match common.split(|c| *c == b'\n').next().map(<[u8]>::trim_ascii).filter(|c| !c.is_empty()) {
        Some(c) => dir.join(std::ffi::OsStr::from_bytes(c)),
        None => dir.to_path_buf(),
    };
    if !common.join("objects").is_dir() || !common.join("refs").is_dir() {
        return false;
    }
    let head = dir.join("HEAD");
    if let Ok(target) = std::fs::read_link(&head) {
        return target.starts_with("refs/");
    }
    let text = small_file(&head);
    match text.strip_prefix(b"ref:") {
        Some(rest) => rest.trim_ascii_start().starts_with(b"refs/"),
        None => text.len() >= 40 && text[..40].iter().all(u8::is_ascii_hexdigit),
    }
}

/// The first 4 KiB of the regular file at `path` (links followed; nothing where it is none, and
/// no wait on a FIFO).
fn small_file(path: &Path) -> Vec<u8> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = Vec::new();
    if let Ok(f) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
        && f.metadata().is_ok_and(|m| m.is_file())
    {
        let _ = f.take(4096).read_to_end(&mut out);
    }
    out
}

/// `rel` below the workspace, opened with no link followed and nothing outside it reached.
fn beneath(top: impl AsFd, rel: &[u8], flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let rel = if rel.is_empty() { b"." } else { rel };
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    rustix::fs::openat2(top, rel, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty(), resolve)
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    let mut out = Vec::with_capacity(dir.len() + 1 + name.len());
    out.extend_from_slice(dir);
    out.push(b'/');
    out.extend_from_slice(name);
    out
}

/// One line of a `.gitignore`, as `gitignore(5)` reads it.
struct Pattern {
    glob: Vec<u8>,
    negated: bool,
    /// Ended with `/`: matches directories only.
    dir_only: bool,
    /// Held a `/` before its end: matched against the path below the `.gitignore`'s directory,
    /// not against the name alone.
    anchored: bool,
}

/// A pattern longer than this is not matched: its memo would cost its length times the path's.
/// git has no such bound; such a line makes the file told as not read whole.
const MAX_PATTERN: usize = 4096;

/// The patterns of an ignore file's text, and whether every line was kept.
fn patterns(text: &[u8]) -> (Vec<Pattern>, bool) {
    let mut out = Vec::new();
    let mut whole = true;
    // git skips a UTF-8 byte-order mark at the start (dir.c `add_patterns_from_buffer`).
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    for line in text.split(|c| *c == b'\n') {
        let mut l = line.strip_suffix(b"\r").unwrap_or(line);
        // Trailing spaces go, but for one escaped with a backslash.
        while l.ends_with(b" ") && !l.ends_with(b"\\ ") {
            l = &l[..l.len() - 1];
        }
        if l.is_empty() || l.starts_with(b"#") {
            continue;
        }
        let negated = l.starts_with(b"!");
        if negated {
            l = &l[1..];
        }
        let dir_only = l.ends_with(b"/");
        if dir_only {
            l = &l[..l.len() - 1];
        }
        let anchored = l.contains(&b'/');
        let l = l.strip_prefix(b"/").unwrap_or(l);
        if l.len() > MAX_PATTERN {
            whole = false;
            continue;
        }
        if l.is_empty() {
            continue;
        }
        out.push(Pattern { glob: l.to_vec(), negated, dir_only, anchored });
    }
    (out, whole)
}

/// What one file's `patterns` say of the path `below` its directory (named `name`): ignored,
/// not ignored (a negated pattern), or nothing.
fn decide(patterns: &[Pattern], below: &[u8], name: &[u8], is_dir: bool) -> Option<bool> {
    patterns
        .iter()
        .rev()
        .find(|p| (is_dir || !p.dir_only) && wildmatch(&p.glob, if p.anchored { below } else { name }))
        .map(|p| !p.negated)
}

/// git's `wildmatch` with `WM_PATHNAME`: `*` and `?` and `[...]` never match `/`, `**` matches
/// across directories (`**/` also none), `\` escapes. Memoized: a pattern of many stars costs
/// its length times the text's.
fn wildmatch(p: &[u8], t: &[u8]) -> bool {
    let width = t.len() + 1;
    let mut memo = vec![None; (p.len() + 1) * width];
    matches_at(p, t, 0, 0, &mut memo, width)
}

fn matches_at(p: &[u8], t: &[u8], i: usize, j: usize, memo: &mut [Option<bool>], width: usize) -> bool {
    if let Some(v) = memo[i * width + j] {
        return v;
    }
    let v = match p.get(i) {
        None => j == t.len(),
        Some(b'*') if p.get(i + 1) == Some(&b'*') => {
            let rest = i + 2;
            (p.get(rest) == Some(&b'/') && matches_at(p, t, rest + 1, j, memo, width))
                || (j..=t.len()).any(|k| matches_at(p, t, rest, k, memo, width))
        }
        Some(b'*') => {
            let mut k = j;
            loop {
                if matches_at(p, t, i + 1, k, memo, width) {
                    break true;
                }
                if k == t.len() || t[k] == b'/' {
                    break false;
                }
                k += 1;
            }
        }
        Some(b'?') => t.get(j).is_some_and(|c| *c != b'/') && matches_at(p, t, i + 1, j + 1, memo, width),
        Some(b'[') => match (class(p, i + 1), t.get(j)) {
            (Some((hit, next)), Some(c)) if *c != b'/' && hit(*c) => matches_at(p, t, next, j + 1, memo, width),
            (Some(_), _) => false,
            // No closing `]`: a plain `[`.
            (None, c) => c == Some(&b'[') && matches_at(p, t, i + 1, j + 1, memo, width),
        },
        Some(b'\\') if i + 1 < p.len() => t.get(j) == Some(&p[i + 1]) && matches_at(p, t, i + 2, j + 1, memo, width),
        Some(c) => t.get(j) == Some(c) && matches_at(p, t, i + 1, j + 1, memo, width),
    };
    memo[i * width + j] = Some(v);
    v
}

/// The bracket expression starting after `[` at `from`: what it matches, and where the pattern
/// goes on; `None` where it has no closing `]`.
fn class(p: &[u8], from: usize) -> Option<(impl Fn(u8) -> bool + use<>, usize)> {
    let mut i = from;
    let negated = matches!(p.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    let mut first = true;
    loop {
        let c = *p.get(i)?;
        if c == b']' && !first {
            break;
        }
        first = false;
        let c = if c == b'\\' {
            i += 1;
            *p.get(i)?
        } else {
            c
        };
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|e| *e != b']') {
            ranges.push((c, p[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    Some((move |c: u8| ranges.iter().any(|(a, b)| (*a..=*b).contains(&c)) != negated, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignores(text: &str, below: &str, is_dir: bool) -> Option<bool> {
        let name = below.rsplit('/').next().unwrap();
        decide(&patterns(text.as_bytes()).0, below.as_bytes(), name.as_bytes(), is_dir)
    }

    #[test]
    fn patterns_are_read_as_git_reads_them() {
        for (text, path, dir, want) in [
            ("*\n", ".gitignore", false, Some(true)),
            ("*\r\n", ".gitignore", false, Some(true)),
            (".*\n", ".gitignore", false, Some(true)),
            ("[.]git*\n", ".gitignore", false, Some(true)),
            ("/.gitign?re\n", ".gitignore", false, Some(true)),
            ("**\n", ".gitignore", false, Some(true)),
            ("**/.gitignore\n", ".gitignore", false, Some(true)),
            ("*\n!.gitignore\n", ".gitignore", false, Some(false)),
            ("# *\n", ".gitignore", false, None),
            ("/target\n", ".gitignore", false, None),
            ("*/\n", ".gitignore", false, None),
            ("*/\n", "sub", true, Some(true)),
            ("\\!x\n", "!x", false, Some(true)),
            ("a/*.py\n", "a/b/c.py", false, None),
            ("a/**/c.py\n", "a/b/c.py", false, Some(true)),
            ("a/**/c.py\n", "a/c.py", false, Some(true)),
            ("[a-c]x\n", "bx", false, Some(true)),
            ("[!a-c]x\n", "bx", false, None),
            ("[\n", "[", false, Some(true)),
        ] {
            assert_eq!(ignores(text, path, dir), want, "{text:?} on {path}");
        }
        // Many stars cost the pattern's length times the text's, not more.
        let stars = "*a".repeat(200) + "b";
        assert_eq!(ignores(&stars, &"a".repeat(250), false), None);
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn write(root: &Path, rel: &str, body: &str) {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(rel), body).unwrap();
    }

    fn found(root: &Path, since: i64) -> Vec<Hidden> {
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        let index = Index::parse(&bytes).unwrap();
        self_ignoring(root, &root.join(".git"), Some(&index), since, &mut Vec::new(), MAX_DIRS)
    }

    #[test]
    fn a_new_directory_that_ignores_itself_is_found() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q"]);
        write(root, ".gitignore", "/target\n");
        write(root, "tests/test_a.py", "def test_a(): pass\n");
        write(root, "target/debug/x", "");
        git(root, &["add", "-A"]);
        assert!(found(root, 0).is_empty(), "nothing hides");
        // Made by the command: a self-ignoring directory two levels below a tracked one, a new
        // project's `.gitignore` (which shows), and one in a directory git ignores anyway.
        write(root, "tests/_a/_b/.gitignore", "*\n");
        write(root, "tests/_a/_b/conftest.py", "import os\n");
        write(root, "newproj/.gitignore", "/target\n");
        write(root, "target/debug/y/.gitignore", "*\n");
        write(root, ".gitignore.d/.gitignore", "*\n!.gitignore\n");
        write(root, "tests/.pytest_cache/.gitignore", "# Created by pytest automatically.\n*\n");
        assert_eq!(found(root, 0), vec![Hidden::SelfIgnored("tests/_a/_b".into())]);
        let status = std::process::Command::new("git").args(["status", "--short"]).current_dir(root).output().unwrap();
        let status = String::from_utf8_lossy(&status.stdout);
        assert!(!status.contains("tests/_a"), "git status does not show it: {status}");
        // In a tracked directory: it hides what is new there (and git looks no further in).
        write(root, "tests/.gitignore", "*\n");
        assert_eq!(found(root, 0), vec![Hidden::SelfIgnored("tests".into())]);
        // Older than the command: not the command's.
        assert!(found(root, i64::MAX).is_empty());
    }

    /// rt5 A3: ignore files git reads otherwise than a plain reading would: a byte-order mark,
    /// a file past what is read, a line past what is matched, an empty `.git` file beside it
    /// (no repository to git), and one rewritten in place by a later command.
    #[test]
    fn self_ignoring_files_are_read_as_git_reads_them_or_told_unread() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q"]);
        write(root, "tests/test_a.py", "def test_a(): pass\n");
        git(root, &["add", "-A"]);
        let long = format!("{}*\n", "**/".repeat(400));
        let big = format!("{}\n*\n", "#".repeat(270_000));
        for (dir, body, want) in [
            ("tests/fx1", "\u{feff}*\n", Hidden::SelfIgnored("tests/fx1".into())),
            ("tests/fx2", big.as_str(), Hidden::IgnoresUnchecked),
            ("tests/fx3", long.as_str(), Hidden::SelfIgnored("tests/fx3".into())),
            ("tests/fx3b", &format!("{}*\n", "**/".repeat(1400)), Hidden::IgnoresUnchecked),
        ] {
            write(root, &format!("{dir}/.gitignore"), body);
            write(root, &format!("{dir}/conftest.py"), "import os\n");
            assert_eq!(found(root, 0), vec![want], "{dir}");
            std::fs::remove_dir_all(root.join(dir)).unwrap();
        }
        // git reads the first three whole: each hides its directory.
        for (dir, body) in [("tests/g1", "\u{feff}*\n"), ("tests/g3", long.as_str())] {
            write(root, &format!("{dir}/.gitignore"), body);
            write(root, &format!("{dir}/conftest.py"), "import os\n");
            let status = std::process::Command::new("git")
                .args(["status", "--short", "-uall"])
                .current_dir(root)
                .output()
                .unwrap();
            assert!(!String::from_utf8_lossy(&status.stdout).contains(dir), "{dir}");
            std::fs::remove_dir_all(root.join(dir)).unwrap();
        }
        // An empty `.git` file is no repository: git looks in, and so is this read.
        write(root, "tests/fx4/.gitignore", "*\n");
        write(root, "tests/fx4/.git", "");
        // (And the `.git` told as one made: rt7 A7.)
        let made = |d: &str| Hidden::NestedRepository(d.into());
        assert_eq!(found(root, 0), vec![Hidden::SelfIgnored("tests/fx4".into()), made("tests/fx4")]);
        std::fs::remove_dir_all(root.join("tests/fx4")).unwrap();
        // Nor is a `.git` directory with a `HEAD` and no objects, or a link to nothing.
        write(root, "tests/fx6/.gitignore", "*\n");
        write(root, "tests/fx6/.git/HEAD", "ref: refs/heads/main\n");
        assert_eq!(found(root, 0), vec![Hidden::SelfIgnored("tests/fx6".into()), made("tests/fx6")]);
        std::fs::remove_dir_all(root.join("tests/fx6")).unwrap();
        write(root, "tests/fx7/.gitignore", "*\n");
        std::os::unix::fs::symlink("/nonexistent", root.join("tests/fx7/.git")).unwrap();
        assert_eq!(found(root, 0), vec![Hidden::SelfIgnored("tests/fx7".into()), made("tests/fx7")]);
        std::fs::remove_dir_all(root.join("tests/fx7")).unwrap();
        // A real one is: a submodule's checkout is its own repository's to review.
        write(root, "tests/sub/.gitignore", "*\n");
        git(&root.join("tests/sub"), &["init", "-q"]);
        assert_eq!(found(root, 0), vec![made("tests/sub")]);
        // And so is a `.git` file naming one.
        std::fs::rename(root.join("tests/sub/.git"), root.join("subgit")).unwrap();
        write(root, "tests/sub/.git", "gitdir: ../../subgit\n");
        assert_eq!(found(root, 0), vec![made("tests/sub")]);
        std::fs::remove_dir_all(root.join("tests/sub")).unwrap();
        // Rewritten in place by a later command: watched since it was made.
        write(root, "tests/fx5/.gitignore", "*.tmp\n");
        write(root, "tests/fx5/conftest.py", "import os\n");
        let index = Index::parse(&std::fs::read(root.join(".git/index")).unwrap()).unwrap();
        let mut watched = Vec::new();
        assert_eq!(self_ignoring(root, &root.join(".git"), Some(&index), 0, &mut watched, MAX_DIRS), vec![]);
        assert_eq!(watched, vec![b"tests/fx5/.gitignore".to_vec()]);
        let seconds = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let made = seconds();
        while seconds() == made {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let since = seconds();
        // Past the file system's coarse clock's tick too.
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::write(root.join("tests/fx5/.gitignore"), "*\n").unwrap();
        // The later command changed no directory: only the watch finds it.
        assert_eq!(self_ignoring(root, &root.join(".git"), Some(&index), since, &mut Vec::new(), MAX_DIRS), vec![]);
        assert_eq!(
            self_ignoring(root, &root.join(".git"), Some(&index), since, &mut watched, MAX_DIRS),
            vec![Hidden::SelfIgnored("tests/fx5".into())]
        );
    }

    /// rt7 A7: a `.git` made below the top level, in a tracked directory, a new one, an ignored
    /// one, or a directory git takes for a repository, is found; the workspace's own and one
    /// older than the command are not.
    #[test]
    fn a_git_made_below_the_top_level_is_found() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q"]);
        write(root, ".gitignore", "/build\n");
        write(root, "src/a.py", "x = 1\n");
        write(root, "src/deep/b.py", "x = 1\n");
        git(root, &["add", "-A"]);
        assert!(found(root, 0).is_empty(), "the workspace's own .git");
        write(root, "src/.git/HEAD", "ref: refs/heads/main\n");
        write(root, "src/deep/new/.git", "gitdir: /elsewhere\n");
        write(root, "build/.git/config", "");
        std::fs::create_dir(root.join("pkg")).unwrap();
        git(&root.join("pkg"), &["init", "-q"]);
        let nested = |d: &str| Hidden::NestedRepository(d.into());
        let mut got = found(root, 0);
        got.sort_by_key(|h| format!("{h:?}"));
        assert_eq!(got, vec![nested("build"), nested("pkg"), nested("src"), nested("src/deep/new")]);
        assert!(found(root, i64::MAX).is_empty(), "older than the command");
        // A `.git` file naming the repository's own `modules/*` is git's submodule; not one that
        // goes out of it.
        write(root, ".git/modules/lib/HEAD", "ref: refs/heads/main\n");
        write(root, "lib/.git", "gitdir: ../.git/modules/lib\n");
        write(root, "lib2/.git", "gitdir: ../.git/modules/../../evil\n");
        let mut got = found(root, 0);
        got.sort_by_key(|h| format!("{h:?}"));
        assert_eq!(got[..2], [nested("build"), nested("lib2")]);
        std::fs::remove_dir_all(root.join("lib")).unwrap();
        std::fs::remove_dir_all(root.join("lib2")).unwrap();
        let mut got = found(root, 0);
        got.sort_by_key(|h| format!("{h:?}"));
        // The index not read: the top level's directories in place of the tracked ones (here,
        // all changed since 0, the top level too, so all is read).
        let mut none = self_ignoring(root, &root.join(".git"), None, 0, &mut Vec::new(), MAX_DIRS);
        none.sort_by_key(|h| format!("{h:?}"));
        assert_eq!(none, got);
    }

    #[test]
    fn a_fifo_for_info_exclude_does_not_hold_agentsh() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q"]);
        write(root, "a/f", "x\n");
        git(root, &["add", "-A"]);
        let _ = std::fs::remove_file(root.join(".git/info/exclude"));
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(root.join(".git/info/exclude")).status().unwrap().success());
        // Nothing in the workspace's own files decides: info/exclude is asked.
        write(root, "a/new/.gitignore", "other\n");
        assert!(found(root, 0).is_empty());
    }
}
