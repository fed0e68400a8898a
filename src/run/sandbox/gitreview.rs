//! What a boxed command did to hide its edits from the person's git review (issue 25, rt3 G3,
//! rt4 R2 and R12):
//! - a skip-worktree or assume-unchanged bit set in `.git/index` (the file's changes then show
//!   in neither `git status` nor `git diff`);
//! - an index entry naming another object than its file holds, with the file's own size and
//!   times: git trusts the entry and never reads the file ([`stale`]);
//! - a replacement ref (`refs/replace/*`, loose or in `packed-refs`: `git show` and `git log -p`
//!   then show another object than the one checked out);
//! - a `.gitignore` that ignores itself, hiding a directory's new files from `git status`
//!   (`gitignore::self_ignoring`);
//! - a `.git` made in a directory below the top level (rt7 A7): a repository of its own to the
//!   person's git run there, which `git status` never shows (`gitignore::self_ignoring`);
//! - an untracked cache or fsmonitor data added to the index or changed (rt6 X3: git trusts a
//!   directory's cached list of new files while the directory's times match);
//! - in a linked worktree outside the workspace, whose files the box cannot write but whose
//!   index and branch are in the workspace's git directory, a moved branch or `HEAD` (rt6 X2);
//! - a git directory made in `.git/modules/` (where the binds could not keep it from being made)
//!   or in `.git/worktrees/` other than as `git worktree add` makes it (rt7 A1).
//!
//! In the workspace's repository and in each other one whose index is in its git directory, as
//! `gitcode` finds them: submodules of both kinds (rt6 X7) and linked worktrees.
//!
//! The box writes the index, the refs and the tree, so none of this can be refused; it is found
//! when the command ends, for the person to be told. It must not print or change anything.
//!
//! Cheap where nothing changed: the index is opened as the command starts (the old file stays
//! readable after git renames a new one over it), and after it, three `statx` calls say
//! whether the index, `packed-refs` or `refs/replace/` changed; only then are the refs read and
//! the files whose entries changed hashed. The index itself is read on every command for the
//! directories git tracks, and each of those is `statx`ed (see `gitignore`).

use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// An index larger than this is not read (a monorepo's can be tens of megabytes).
const MAX_INDEX: u64 = 64 * 1024 * 1024;

/// An index larger than this (about 200 files) is not read where it did not change: only the
/// top level is then looked at for a `.gitignore` that hides itself. Reading it, and a `statx`
/// of each directory it names, is a cost on every boxed command: with 3,200 files in 420
/// directories they made `-c /bin/true` 1.75 ms slower, with 400 files read and 64 of their
/// directories 0.2 ms (docs/BENCHMARKS.md, "Session 16").
const MAX_INDEX_EVERY_COMMAND: u64 = 16 * 1024;

/// How many submodules' and linked worktrees' git directories are checked as the workspace's
/// is (rt5 A14, rt6 X2, X7); past these, a change to another's index is told as not checked.
pub const MAX_SUBMODULES: usize = 8;

/// The index and refs as the command started: the workspace's, and its submodules'.
pub struct Before {
    repos: Vec<Repo>,
    /// Submodules' and worktrees' git directories past [`MAX_SUBMODULES`]: only whether their
    /// index changed.
    more: Vec<PathBuf>,
    /// When the command started, less a margin for coarse file-system clocks (seconds).
    since: i64,
    /// Where what is checked again after later commands is kept ([`Later`]), in agentsh's
    /// records, and what it held as the command started.
    later: Option<(PathBuf, Later)>,
    /// The change times of the workspace's git directory's `modules/` and `worktrees/` as the
    /// command started ([`made_git_dirs`]).
    git_dirs: [Option<(i64, i64)>; 2],
}

/// One repository whose worktree is in the workspace.
struct Repo {
    git: PathBuf,
    /// The workspace's top level (paths are told from there).
    top: PathBuf,
    /// The worktree the index describes.
    root: PathBuf,
    /// The index as it was, open, with its identity and change time then (`None`: there was
    /// none).
    index: Option<(File, Stamp)>,
    /// A linked worktree outside the workspace (rt6 X2): its files are out of the box's reach,
    /// its index and what it has checked out are not. What it had checked out as the command
    /// started.
    outside: Option<Checkout>,
}

/// What a linked worktree outside the workspace had checked out as the command started: git
/// refuses to move a branch another worktree has checked out, and a box that moves it (and
/// gives that worktree's index the new commit's objects) has the person's next commit there
/// carry its files, with `git status` showing nothing (rt6 X2).
struct Checkout {
    /// Its `HEAD`: identity and change time, and what it held.
    head: Option<(Stamp, Vec<u8>)>,
    /// The branch `HEAD` named.
    branch: Option<Branch>,
}

struct Branch {
    /// `refs/heads/...`.
    name: String,
    /// Its loose file in the repository's common git directory: identity and change time, and
    /// what it held.
    loose: Option<(Stamp, Vec<u8>)>,
    /// Where there was no loose file: `packed-refs`, open (the old file stays readable after
    /// git renames a new one over it), with its identity and change time.
    packed: Option<(File, Stamp)>,
}

/// One thing found: what hides, and the file or ref it hides.
#[derive(Debug, PartialEq, Eq)]
pub enum Hidden {
    /// A file with the skip-worktree or assume-unchanged bit: `git status` and `git diff`
    /// skip its changes.
    Bit { path: String, skip_worktree: bool },
    /// `refs/replace/<object>`: git shows another object in its place.
    Replaced(String),
    /// A file whose index entry names another object than it holds, with its stat data: git
    /// does not read it, and shows none of its changes.
    Stale(String),
    /// A file whose index entry the command wrote with a change time later than the clock:
    /// git writes the time it read from the file, so this entry is made to match an edit to
    /// come (rt5 A2).
    Ahead(String),
    /// How many files whose entries the command changed were too large to check ([`stale`]).
    Unchecked(usize),
    /// The command changed an index split in two: what its shared part names is not checked.
    Split,
    /// The command left an index agentsh does not read (too large, or of a form it does not
    /// know): nothing in it is checked.
    Unreadable,
    /// How many submodules' or linked worktrees' indexes the command changed past those agentsh
    /// checks.
    SubmodulesUnchecked(usize),
    /// A branch checked out in a linked worktree outside the workspace (`worktree`), moved by
    /// the command (git refuses to): the person's next commit there builds on what it names.
    BranchMoved { branch: String, worktree: String, from: String, to: String },
    /// What a linked worktree outside the workspace has checked out (its `HEAD`), changed.
    HeadChanged { worktree: String, from: String, to: String },
    /// An index extension that has git's `status` trust what it says instead of the files,
    /// added or changed by the command (rt6 X3): the untracked cache (`UNTR`: a directory's list
    /// of new files, trusted while the directory's times match) or fsmonitor's data (`FSMN`).
    /// `repo`: the repository's top level, from the workspace's (`.`: the workspace's own);
    /// `hides`: a file (or a directory holding one) the untracked cache leaves out of
    /// `git status`, where it was checked (`None`: it was not read whole, or fsmonitor's).
    IndexCache { fsmonitor: bool, repo: String, hides: Option<String> },
    /// A directory (relative to the workspace, `.` for itself) hidden from `git status` by a
    /// `.gitignore` in it that the command made or changed and that ignores itself.
    SelfIgnored(String),
    /// The command changed more of the tree than is read for such `.gitignore` files.
    IgnoresUnchecked,
    /// A directory the command made in the workspace's git directory's `modules/` (a
    /// submodule's git directory, which the person's `git submodule update --init` adopts, hooks
    /// and all: rt7 A1; the box binds `modules/` read-only, so only where that could not be
    /// done), or in its `worktrees/` a linked worktree's git directory that is not what
    /// `git worktree add` makes (its `commondir` names another repository, or it has a
    /// `config.worktree`): git run where its `.git` file names it runs that repository's hooks.
    /// `path`: from the workspace's top level.
    GitDirMade { path: String, worktree: bool },
    /// A directory (relative to the workspace) in which the command made or changed a `.git`
    /// (rt7 A7): git never lists it, and git run there takes it for a repository of its own,
    /// running what its config and hooks name.
    NestedRepository(String),
}

impl Before {
    /// `git`: the workspace's git directory; `root`: the workspace (its worktree); `later`: a
    /// file where what must be checked again after later commands is kept (`None`: nothing is).
    pub fn take(git: &Path, root: &Path, later: Option<PathBuf>) -> Before {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64) - 2;
        let mut kept = later.as_deref().map(Later::read).unwrap_or_default();
        let mut repos = vec![Repo::take(git, root, root, &mut kept)];
        let mut more = Vec::new();
        for (g, wt) in submodules_kept(git, root, &mut kept) {
            if repos.len() <= MAX_SUBMODULES {
                repos.push(Repo::take(&g, &wt, root, &mut kept));
            } else {
                more.push(g);
            }
        }
        // What is kept of worktrees no longer found is let go.
        let heads = kept.heads.len();
        kept.heads.retain(|g, _| repos.iter().any(|r| r.git == *g));
        kept.dirty |= kept.heads.len() != heads;
        let git_dirs = GIT_DIRS.map(|(name, _)| changed_at(&super::join(git, name)));
        Before { repos, more, since, later: later.map(|path| (path, kept)), git_dirs }
    }

    /// What the command added: bits set in the index, entries that name another object than
    /// their file holds, replacement refs made, `.gitignore` files that hide themselves; in the
    /// workspace's repository and in its submodules'.
    pub fn finish(self) -> Vec<Hidden> {
        let mut found = Vec::new();
        let clock = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let (path, mut later) = self.later.map_or((None, Later::default()), |(p, l)| (Some(p), l));
        later.check(clock, &mut found);
        for repo in &self.repos {
            repo.finish(self.since, clock, &mut later, &mut found);
        }
        let changed =
            |g: &PathBuf| std::fs::symlink_metadata(super::join(g, "index")).is_ok_and(|m| m.ctime() >= self.since);
        if let Some(repo) = self.repos.first() {
            made_git_dirs(&repo.git, &repo.top, self.since, self.git_dirs, &mut found);
        }
        let unchecked = self.more.iter().filter(|g| changed(g)).count();
        if unchecked > 0 {
            found.push(Hidden::SubmodulesUnchecked(unchecked));
        }
        if let Some(path) = &path {
            later.write(path);
        }
        found
    }
}

/// How many directories made in `modules/` or `worktrees/` are told at most.
const MAX_MADE: usize = 16;

/// Where in a git directory [`made_git_dirs`] looks, and whether it holds worktrees' git
/// directories.
const GIT_DIRS: [(&str, bool); 2] = [("modules", false), ("worktrees", true)];

/// A directory's change time (seconds, nanoseconds): one `statx`.
fn changed_at(dir: &Path) -> Option<(i64, i64)> {
    std::fs::symlink_metadata(dir).ok().filter(|m| m.is_dir()).map(|m| (m.ctime(), m.ctime_nsec()))
}

/// The git directories the command made in `modules/` and `worktrees/` of the git directory
/// `git` (in the workspace `top`) that the person's git would adopt or run the hooks of
/// ([`Hidden::GitDirMade`]). Two `statx` calls where neither changed from `then` (their
/// change times as the command started); only the top level of each is read, and there what
/// was made since `since`.
fn made_git_dirs(git: &Path, top: &Path, since: i64, then: [Option<(i64, i64)>; 2], out: &mut Vec<Hidden>) {
    if !super::within(git, top) {
        return;
    }
    for ((name, worktree), then) in GIT_DIRS.into_iter().zip(then) {
        let dir = super::join(git, name);
        if changed_at(&dir).is_none_or(|now| Some(now) == then || now.0 < since) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let made = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path());
        for p in made.filter(|p| born_since(p, since) && !(worktree && worktree_add_made(git, p))).take(MAX_MADE) {
            let path = p.strip_prefix(top).map_or_else(|_| crate::text::path(&p), crate::text::path);
            out.push(Hidden::GitDirMade { path, worktree });
        }
    }
}

/// Whether `path` was made since `since` (seconds): its birth time, where the file system keeps
/// one; else its change time (a directory changed since counts).
fn born_since(path: &Path, since: i64) -> bool {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    match statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BTIME | StatxFlags::CTIME) {
        Ok(s) if s.stx_mask & StatxFlags::BTIME.bits() != 0 => s.stx_btime.tv_sec >= since,
        Ok(s) => s.stx_ctime.tv_sec >= since,
        Err(_) => false,
    }
}

/// Whether the linked worktree's git directory `wt` (in `git`'s `worktrees/`) is as
/// `git worktree add` makes it: its `commondir` names `git`, and it has no `config.worktree`.
fn worktree_add_made(git: &Path, wt: &Path) -> bool {
    // Read as every file a box can write is (rt7 A9: a FIFO would hang agentsh).
    let Some(common) = super::gitcode::small_text(&super::join(wt, "commondir")) else { return false };
    let common = super::normalize(&wt.join(common.trim_end_matches(['\n', '\r'])));
    let same =
        |a: &Path, b: &Path| std::fs::canonicalize(a).is_ok_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b));
    same(&common, git) && std::fs::symlink_metadata(super::join(wt, "config.worktree")).is_err()
}

/// The repositories besides the workspace's own whose index is in `git` or below it, as
/// `gitcode` finds them ([`super::gitcode::repositories`]): submodules checked out in `root`
/// (absorbed in `modules/*`, or with their own `.git` directory, rt6 X7) and linked worktrees
/// (`worktrees/*`, in `root` or not, rt6 X2); and what they were found from, each with its
/// [`key`], so a later command reuses them while those are unchanged ([`Later`]). A few
/// `openat` where there are none.
fn submodules(git: &Path, root: &Path) -> Modules {
    let found = super::gitcode::repositories(root, git);
    let mut list = found.list;
    list.truncate(4 * MAX_SUBMODULES);
    // None: nothing is kept, and the next command looks again (a few `openat`).
    let looked = if list.is_empty() { Vec::new() } else { found.looked };
    let keys = looked.into_iter().map(|(p, kind)| {
        let k = if kind { identity(&p) } else { key(&p) };
        (p, k)
    });
    Modules { list, keys: keys.collect() }
}

/// What [`submodules`] found, and from what.
#[derive(Default, Clone, PartialEq, Eq)]
struct Modules {
    list: Vec<(PathBuf, PathBuf)>,
    keys: Vec<(PathBuf, String)>,
}

/// A path's identity and change time (`-` where it is not there): one `statx`.
fn key(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!("{}.{}.{}.{}", m.dev(), m.ino(), m.ctime(), m.ctime_nsec()),
        Err(_) => "-".into(),
    }
}

/// A path's identity and kind (`i-` where it is not there): one `statx`. For a submodule's
/// `.git`, a directory whose change time moves with every index git writes in it.
fn identity(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!("i{}.{}.{}", m.dev(), m.ino(), m.mode() >> 12),
        Err(_) => "i-".into(),
    }
}

/// Whether `path` is as `was` ([`key`] or [`identity`]) says.
fn unchanged(path: &Path, was: &str) -> bool {
    if was.starts_with('i') { identity(path) == was } else { key(path) == was }
}

/// The submodules of `git`, as [`submodules`] finds them, or as `later` kept them while what
/// they were found from is unchanged (a `statx` each, not a directory read and a config parsed).
fn submodules_kept(git: &Path, root: &Path, later: &mut Later) -> Vec<(PathBuf, PathBuf)> {
    if let Some(kept) = later.modules.get(root)
        && kept.keys.iter().all(|(p, k)| unchanged(p, k))
    {
        return kept.list.clone();
    }
    let found = submodules(git, root);
    let list = found.list.clone();
    if list.is_empty() {
        later.dirty |= later.modules.remove(root).is_some();
    } else {
        later.dirty = true;
        later.modules.insert(root.to_path_buf(), found);
    }
    list
}

impl Repo {
    fn take(git: &Path, root: &Path, top: &Path, later: &mut Later) -> Repo {
        let index = open_stamped(&super::join(git, "index"));
        let outside = (!super::within(root, top)).then(|| Checkout::take(git, later));
        Repo { git: git.to_path_buf(), top: top.to_path_buf(), root: root.to_path_buf(), index, outside }
    }

    /// What the command did in this repository, added to `found` with paths from the
    /// workspace's top level.
    fn finish(&self, since: i64, clock: i64, later: &mut Later, out: &mut Vec<Hidden>) {
        let mut found = Vec::new();
        self.review(since, clock, later, &mut found);
        // Told from the workspace's top level; a worktree outside it by its own path.
        let top = match &self.outside {
            Some(_) => Some(crate::text::path(&self.root)),
            None => self.root.strip_prefix(&self.top).ok().filter(|p| !p.as_os_str().is_empty()).map(crate::text::path),
        };
        let Some(top) = top else {
            out.extend(found);
            return;
        };
        let from_top = |p: String| if p == "." { top.clone() } else { format!("{top}/{p}") };
        out.extend(found.into_iter().map(|h| match h {
            Hidden::Bit { path, skip_worktree } => Hidden::Bit { path: from_top(path), skip_worktree },
            Hidden::Stale(p) => Hidden::Stale(from_top(p)),
            Hidden::Ahead(p) => Hidden::Ahead(from_top(p)),
            Hidden::SelfIgnored(p) => Hidden::SelfIgnored(from_top(p)),
            Hidden::NestedRepository(p) => Hidden::NestedRepository(from_top(p)),
            Hidden::IndexCache { fsmonitor, repo, hides } => {
                Hidden::IndexCache { fsmonitor, repo: from_top(repo), hides: hides.map(from_top) }
            }
            other => other,
        }));
    }

    fn review(&self, since: i64, clock: i64, later: &mut Later, found: &mut Vec<Hidden>) {
        let changed =
            |rel: &str| std::fs::symlink_metadata(super::join(&self.git, rel)).ok().filter(|m| m.ctime() >= since);
        let now = changed("index").filter(|m| self.index.as_ref().is_none_or(|(_, was)| *was != stamp(m)));
        // The index the command started with, where it can still be read: not where the
        // command wrote it in place (the same file), which leaves nothing of what it held.
        // Read on every command (for the directories git tracks, `gitignore`) only while small.
        let before = self
            .index
            .as_ref()
            .filter(|(_, was)| now.as_ref().is_none_or(|m| (was.0, was.1) != (m.dev(), m.ino())))
            .filter(|(f, _)| {
                now.is_some()
                    || self.outside.is_none() && f.metadata().is_ok_and(|m| m.len() <= MAX_INDEX_EVERY_COMMAND)
            })
            .and_then(|(f, _)| read_capped(f).ok())
            .and_then(|bytes| Index::parse(&bytes));
        let after = now
            .as_ref()
            .and_then(|_| open_file(&super::join(&self.git, "index")))
            .and_then(|f| read_capped(&f).ok())
            .and_then(|bytes| Index::parse(&bytes));
        if let (Some(m), Some(after)) = (&now, &after) {
            let was = before.as_ref().map(bits).unwrap_or_default();
            for (path, skip_worktree) in bits(after) {
                if !was.iter().any(|(p, s)| *p == path && *s == skip_worktree) {
                    found.push(Hidden::Bit { path, skip_worktree });
                }
            }
            // git writes an entry's change time as it read it from the file: never later than
            // the clock, nor than the index's own change time (the kernel's, on the same disk).
            let clock = clock.max(m.ctime());
            let times = Times { index_mtime: (m.mtime(), m.mtime_nsec()), clock };
            stale(&self.root, before.as_ref(), after, times, later, found);
            if after.split {
                found.push(Hidden::Split);
            }
            // Added or changed: git trusts them over the files (rt6 X3). The untracked cache is
            // checked against the directories whose entry changed; fsmonitor's data, which
            // ordinary work changes only where the repository uses fsmonitor, is told.
            let was = before.as_ref().map(|b| &b.untracked);
            if let Some(cache) = &after.untracked
                && was != Some(&after.untracked)
            {
                let old = was.and_then(Option::as_deref);
                match super::gitignore::untracked_cache(&self.root, &self.git, after, (old, cache), clock) {
                    Ok(None) => {}
                    Ok(Some(path)) => {
                        found.push(Hidden::IndexCache { fsmonitor: false, repo: ".".into(), hides: Some(path) })
                    }
                    Err(()) => found.push(Hidden::IndexCache { fsmonitor: false, repo: ".".into(), hides: None }),
                }
            }
            if after.fsmonitor.is_some() && before.as_ref().map(|b| &b.fsmonitor) != Some(&after.fsmonitor) {
                found.push(Hidden::IndexCache { fsmonitor: true, repo: ".".into(), hides: None });
            }
        }
        // Changed, a file, and not read as an index: git may read what agentsh cannot (rt5 A1).
        if now.as_ref().is_some_and(std::fs::Metadata::is_file) && after.is_none() {
            found.push(Hidden::Unreadable);
        }
        if let Some(checkout) = &self.outside {
            // The rest is of the workspace's tree and refs, neither of them in this one.
            checkout.finish(&self.git, &self.root, since, found);
            return;
        }
        if changed("refs/replace").is_some()
            && let Ok(entries) = std::fs::read_dir(super::join(&self.git, "refs/replace"))
        {
            for e in entries.flatten().take(1000) {
                if e.metadata().is_ok_and(|m| m.ctime() >= since) {
                    found.push(Hidden::Replaced(format!("refs/replace/{}", e.file_name().to_string_lossy())));
                }
            }
        }
        if changed("packed-refs").is_some()
            && let Some(f) = open_file(&super::join(&self.git, "packed-refs"))
            && let Ok(bytes) = read_capped(&f)
        {
            for line in String::from_utf8_lossy(&bytes).lines() {
                if let Some((_, name)) = line.split_once(' ')
                    && name.starts_with("refs/replace/")
                    && !found.iter().any(|h| *h == Hidden::Replaced(name.to_string()))
                {
                    found.push(Hidden::Replaced(name.to_string()));
                }
            }
        }
        let tracked = after.as_ref().or(before.as_ref());
        let mut watched = later.ignores.remove(&self.root).unwrap_or_default();
        let was = watched.clone();
        let dirs =
            if self.root == self.top { super::gitignore::MAX_DIRS } else { super::gitignore::MAX_SUBMODULE_DIRS };
        found.extend(super::gitignore::self_ignoring(&self.root, &self.git, tracked, since, &mut watched, dirs));
        later.dirty |= watched != was;
        if !watched.is_empty() {
            later.ignores.insert(self.root.clone(), watched);
        }
    }
}

impl Checkout {
    /// `git`: the worktree's git directory, `<common>/worktrees/<name>`. A `statx` of its
    /// `HEAD` and of the branch's loose file: what they hold is read only where they changed
    /// since an earlier command kept it in `later` (or `packed-refs` opened, where the branch has
    /// no loose file).
    fn take(git: &Path, later: &mut Later) -> Checkout {
        let mut kept = later.heads.remove(git).unwrap_or_default();
        let read = |path: &Path, kept: &mut Option<(Stamp, Vec<u8>)>, dirty: &mut bool| {
            let now = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file).map(|m| stamp(&m));
            if now != kept.as_ref().map(|(s, _)| *s) {
                *kept = now.and_then(|_| open_stamped(path)).map(|(f, st)| (st, small(&f)));
                *dirty = true;
            }
            kept.clone()
        };
        let head = read(&super::join(git, "HEAD"), &mut kept.head, &mut later.dirty);
        let name = head.as_ref().and_then(|(_, h)| branch_named(h));
        let branch = name.zip(common_of(git)).map(|(name, common)| {
            let loose = read(&super::join(&common, &name), &mut kept.loose, &mut later.dirty);
            let packed = if loose.is_none() { open_stamped(&super::join(&common, "packed-refs")) } else { None };
            Branch { name, loose, packed }
        });
        if kept.head.is_some() {
            later.heads.insert(git.to_path_buf(), kept);
        }
        Checkout { head, branch }
    }

    /// What the command changed of what the worktree at `root` has checked out: `statx` calls,
    /// and reads only where something changed.
    fn finish(&self, git: &Path, root: &Path, since: i64, found: &mut Vec<Hidden>) {
        let worktree = crate::text::path(root);
        let shown = |b: &[u8]| String::from_utf8_lossy(b.trim_ascii()).into_owned();
        if let Some((was, old)) = &self.head {
            let path = super::join(git, "HEAD");
            if std::fs::symlink_metadata(&path).ok().map(|m| stamp(&m)) != Some(*was) {
                let new = open_file(&path).map(|f| small(&f)).unwrap_or_default();
                if new != *old {
                    found.push(Hidden::HeadChanged { worktree: worktree.clone(), from: shown(old), to: shown(&new) });
                }
            }
        }
        let (Some(b), Some(common)) = (&self.branch, common_of(git)) else { return };
        let path = super::join(&common, &b.name);
        let packed = super::join(&common, "packed-refs");
        let now = std::fs::symlink_metadata(&path).ok().map(|m| stamp(&m));
        let packed_now = std::fs::symlink_metadata(&packed).ok();
        let packed_changed = packed_now.as_ref().is_some_and(|m| m.ctime() >= since);
        if now == b.loose.as_ref().map(|(s, _)| *s) && !packed_changed {
            return;
        }
        let old = match &b.loose {
            Some((_, held)) => Some(held.clone()),
            // Rewritten in place (git renames a new one over it): what it held is gone.
            None => b.packed.as_ref().and_then(|(f, was)| {
                let same = packed_now.as_ref().is_some_and(|m| (m.dev(), m.ino()) == (was.0, was.1));
                if same && packed_now.as_ref().map(stamp) != Some(*was) { None } else { packed_ref(f, &b.name) }
            }),
        };
        let new = match open_file(&path) {
            Some(f) => Some(small(&f)),
            None => open_file(&packed).and_then(|f| packed_ref(&f, &b.name)),
        };
        let (old, new) = (old.map(|o| shown(&o)), new.map(|n| shown(&n)));
        if old != new {
            let branch = b.name.strip_prefix("refs/heads/").unwrap_or(&b.name).to_string();
            let unknown = || "(not known: rewritten in place)".to_string();
            let (from, to) = (old.unwrap_or_else(unknown), new.unwrap_or_else(|| "(none)".into()));
            found.push(Hidden::BranchMoved { branch, worktree, from, to });
        }
    }
}

/// The repository's common git directory of a linked worktree's git directory
/// (`<common>/worktrees/<name>`).
fn common_of(git: &Path) -> Option<PathBuf> {
    git.parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}

/// The branch a `HEAD` names (`ref: refs/heads/x`), where it is a plain one.
fn branch_named(head: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(head).ok()?.strip_prefix("ref:")?.trim();
    let plain = name.starts_with("refs/") && name.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
    plain.then(|| name.to_string())
}

/// A small file's first 4 KiB (a ref, a `HEAD`), read from its start.
fn small(f: &File) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut b = vec![0u8; 4096];
    let n = f.read_at(&mut b, 0).unwrap_or(0);
    b.truncate(n);
    b
}

/// The object `packed-refs` (open) gives the ref `name`.
fn packed_ref(f: &File, name: &str) -> Option<Vec<u8>> {
    let text = read_capped(f).ok()?;
    text.split(|c| *c == b'\n').find_map(|line| {
        let i = line.iter().position(|c| *c == b' ')?;
        (line[i + 1..].trim_ascii_end() == name.as_bytes()).then(|| line[..i].to_vec())
    })
}

/// A file's identity and change time: device, inode, seconds, nanoseconds.
type Stamp = (u64, u64, i64, i64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    (m.dev(), m.ino(), m.ctime(), m.ctime_nsec())
}

/// A regular file, opened without following a link or waiting: the box could put a FIFO in
/// the index's place, and a plain open would wait for a writer.
pub(super) fn open_file(path: &Path) -> Option<File> {
    open_stamped(path).map(|(f, _)| f)
}

/// [`open_file`], with the file's identity and change time.
fn open_stamped(path: &Path) -> Option<(File, Stamp)> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
    let m = f.metadata().ok().filter(std::fs::Metadata::is_file)?;
    Some((f, stamp(&m)))
}

fn read_capped(f: &File) -> std::io::Result<Vec<u8>> {
    // Sized first: read in one call, not grown in many.
    let len = f.metadata().map_or(0, |m| m.len().min(MAX_INDEX));
    let mut out = Vec::with_capacity(len as usize + 1);
    let mut f = f;
    (&mut f).take(MAX_INDEX).read_to_end(&mut out)?;
    Ok(out)
}

/// One entry of an index, as far as this module reads it.
pub(crate) struct Entry {
    pub(crate) path: Vec<u8>,
    /// The stat data git keeps (ctime, mtime, dev, ino, mode, uid, gid, size), as stored.
    stat: [u8; 40],
    /// The object it names (SHA-1's 20 bytes, then zeros, or SHA-256's 32).
    id: [u8; 32],
    /// The merge stage (0 where there is no conflict).
    stage: u16,
    assume_unchanged: bool,
    skip_worktree: bool,
}

impl Entry {
    fn be32(&self, at: usize) -> u32 {
        u32::from_be_bytes([self.stat[at], self.stat[at + 1], self.stat[at + 2], self.stat[at + 3]])
    }
    /// Modification time (seconds, nanoseconds) and size, as git recorded them.
    fn mtime(&self) -> (u32, u32) {
        (self.be32(8), self.be32(12))
    }
    fn mode(&self) -> u32 {
        self.be32(24)
    }
    fn size(&self) -> u32 {
        self.be32(36)
    }
}

/// An index read: its entries, and the length of its object names (20: SHA-1, 32: SHA-256).
pub(crate) struct Index {
    pub(crate) entries: Vec<Entry>,
    pub(crate) hash: usize,
    /// Split in two (`git update-index --split-index`, a `link` extension): most entries are
    /// in a shared index file, and those here may have no name.
    split: bool,
    /// The untracked cache (`UNTR` extension), as stored.
    untracked: Option<Vec<u8>>,
    /// fsmonitor's data (`FSMN` extension), as stored.
    fsmonitor: Option<Vec<u8>>,
}

impl Index {
    /// An index (`DIRC`, versions 2 to 4, SHA-1 or SHA-256 object names); `None` where it does
    /// not read as one.
    pub(crate) fn parse(b: &[u8]) -> Option<Index> {
        parse(b, 20).or_else(|| parse(b, 32))
    }
}

/// The entries of an index that have the skip-worktree bit (`true`) or the assume-unchanged bit
/// (`false`). Empty where it does not read as an index.
#[cfg(test)]
fn hidden_bits(index: &[u8]) -> Vec<(String, bool)> {
    Index::parse(index).map(|ix| bits(&ix)).unwrap_or_default()
}

fn bits(ix: &Index) -> Vec<(String, bool)> {
    ix.entries
        .iter()
        .filter(|e| e.assume_unchanged || e.skip_worktree)
        .map(|e| (String::from_utf8_lossy(&e.path).into_owned(), e.skip_worktree))
        .collect()
}

/// The entries and the extensions read, with object names `hash` bytes long.
fn parse(b: &[u8], hash: usize) -> Option<Index> {
    let be32 = |at: usize| b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(8)? as usize;
    let mut at = 12;
    let mut out = Vec::with_capacity(count.min(1 << 20));
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(at + 24)?;
        // A file, a link, a gitlink or a sparse index's directory: anything else means the
        // object names are longer.
        if !matches!(mode >> 12, 0o10 | 0o12 | 0o16 | 0o04) {
            return None;
        }
        let stat: [u8; 40] = b.get(at..at + 40)?.try_into().ok()?;
        let mut id = [0u8; 32];
        id[..hash].copy_from_slice(b.get(at + 40..at + 40 + hash)?);
        at += 40 + hash;
        let flags = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
        at += 2;
        let mut extended = 0u16;
        // git reads the second flags word wherever the first says there is one, whatever the
        // header's version (read-cache.c `create_from_disk`; rt5 A1).
        if flags & 0x4000 != 0 {
            extended = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
            at += 2;
        }
        let path = if version == 4 {
            // A varint of bytes to drop from the previous path, then the rest, NUL-ended.
            let mut strip = 0usize;
            loop {
                let c = *b.get(at)?;
                at += 1;
                strip = (strip << 7) | usize::from(c & 0x7f);
                if c & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let mut p = previous.get(..previous.len().checked_sub(strip)?)?.to_vec();
            p.extend_from_slice(&b[at..end]);
            at = end + 1;
            p
        } else {
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let p = b[at..end].to_vec();
            // Padded with one to eight NULs to a multiple of eight.
            at = start + (end - start + 8) / 8 * 8;
            p
        };
        previous.clone_from(&path);
        out.push(Entry {
            path,
            stat,
            id,
            stage: (flags >> 12) & 3,
            assume_unchanged: flags & 0x8000 != 0,
            skip_worktree: extended & 0x4000 != 0,
        });
    }
    // The extensions, each a signature and a length, up to the checksum.
    let mut ix = Index { entries: out, hash, split: false, untracked: None, fsmonitor: None };
    while at + 8 + hash <= b.len() {
        let len = be32(at + 4)? as usize;
        let body = || b.get(at + 8..at + 8 + len).map(<[u8]>::to_vec);
        match &b[at..at + 4] {
            b"link" => ix.split = true,
            b"UNTR" => ix.untracked = Some(body()?),
            b"FSMN" => ix.fsmonitor = Some(body()?),
            _ => {}
        }
        at += 8 + len;
    }
    Some(ix)
}

/// How much of the worktree [`stale`] reads at most after one command: a `git add -A` of a
/// large new project is not read again whole.
const MAX_HASHED: u64 = 64 * 1024 * 1024;

/// The clocks [`stale`] reads entries against.
struct Times {
    /// The new index's modification time: an entry as new as it is "racily clean", and git
    /// reads that file itself.
    index_mtime: (i64, i64),
    /// Seconds: no entry git writes has a later change time.
    clock: i64,
}

/// The files of the worktree `root` whose entries in the index `new` changed during the
/// command (all of them where `old`, the index it started with, is unknown) and that git will
/// trust without reading them, their size and modification time being what the entry says,
/// but that do not hold the object the entry names (rt4 R2: the box kept HEAD's object in the
/// entry of an edited file, with the file's stat data; `git status`, `git diff`, even
/// `git checkout -- f` then show nothing).
///
/// Over two commands (rt5 A2): an entry written first with the stat the file will have, the
/// file edited to it later. git compares the change time too (`core.trustctime`), which no
/// command can set: an entry whose change time is later than the clock is told at once; one
/// that does not match its file now, with a change time of this second or the last, could be
/// matched by an edit within the second, and is kept in `later` to be checked after the next
/// commands, until its second is past.
fn stale(root: &Path, old: Option<&Index>, new: &Index, times: Times, later: &mut Later, found: &mut Vec<Hidden>) {
    use rustix::fs::{Mode, OFlags};
    let was: std::collections::HashMap<&[u8], &Entry> = old
        .map(|o| o.entries.iter().filter(|e| e.stage == 0).map(|e| (e.path.as_slice(), e)).collect())
        .unwrap_or_default();
    let mut touched: Vec<&Entry> = new
        .entries
        .iter()
        .filter(|e| e.stage == 0 && !e.assume_unchanged && !e.skip_worktree && matches!(e.mode() >> 12, 0o10 | 0o12))
        .filter(|e| was.get(e.path.as_slice()).is_none_or(|o| o.stat != e.stat || o.id != e.id))
        .filter(|e| {
            let (s, ns) = e.mtime();
            (i64::from(s), i64::from(ns)) < times.index_mtime
        })
        .collect();
    if touched.is_empty() {
        return;
    }
    // The entries whose object did not change first (the attack's): they are checked whatever
    // the others cost.
    touched.sort_by_key(|e| was.get(e.path.as_slice()).is_none_or(|o| o.id != e.id));
    let Ok(dir) =
        rustix::fs::openat(rustix::fs::CWD, root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
    else {
        return;
    };
    let mut budget = MAX_HASHED;
    let mut unchecked = 0;
    for e in touched {
        let ctime = i64::from(e.be32(0));
        if ctime > times.clock {
            found.push(Hidden::Ahead(String::from_utf8_lossy(&e.path).into_owned()));
            continue;
        }
        let link = e.mode() >> 12 == 0o12;
        let Some(file) = worktree_file(&dir, &e.path, link, e.size(), &mut budget) else {
            continue;
        };
        // git sees the stat data differ, and reads the file itself.
        if file.size as u32 != e.size() || file.mtime as u32 != e.mtime().0 {
            // Not where git takes the entry for racily clean by the second (as it is built
            // without nanoseconds), and reads the file anyway.
            if ctime >= times.clock - 1 && i64::from(e.mtime().0) < times.index_mtime.0 {
                later.keep(root, e, new.hash);
            }
            continue;
        }
        let Some(content) = file.content else {
            unchecked += 1;
            continue;
        };
        if !holds(&content, &e.id[..new.hash], new.hash) {
            found.push(Hidden::Stale(String::from_utf8_lossy(&e.path).into_owned()));
        }
    }
    if unchecked > 0 {
        found.push(Hidden::Unchecked(unchecked));
    }
}

/// What is checked again when later commands end: index entries that do not match their file
/// yet but could within the second they were written ([`stale`]). Kept in a file of agentsh's
/// records, which exists only for the seconds it holds anything: one `openat` a command
/// otherwise.
#[derive(Default)]
struct Later {
    entries: Vec<LaterEntry>,
    /// Each worktree's untracked `.gitignore` files watched for a rewrite
    /// (`gitignore::self_ignoring`).
    ignores: std::collections::BTreeMap<PathBuf, Vec<Vec<u8>>>,
    /// Each workspace's submodules, and what they were found from ([`submodules_kept`]).
    modules: std::collections::BTreeMap<PathBuf, Modules>,
    /// What each linked worktree outside the workspace had checked out as a command started
    /// (by its git directory): its `HEAD` and its branch's loose file, as read, with their
    /// identity and change time ([`Checkout::take`]).
    heads: std::collections::BTreeMap<PathBuf, Heads>,
    /// Changed since it was read: to be written.
    dirty: bool,
}

/// A linked worktree's `HEAD` and its branch's loose file, as read ([`Later::heads`]).
#[derive(Default, Clone)]
struct Heads {
    head: Option<(Stamp, Vec<u8>)>,
    loose: Option<(Stamp, Vec<u8>)>,
}

struct LaterEntry {
    root: PathBuf,
    path: Vec<u8>,
    link: bool,
    hash: usize,
    id: Vec<u8>,
    size: u32,
    mtime: u32,
    ctime: u32,
}

/// At most this many entries are kept: past them, the rest are told as not checked.
const MAX_LATER: usize = 256;

impl Later {
    fn read(path: &Path) -> Later {
        let Some(f) = open_file(path) else { return Later::default() };
        let bytes = read_capped(&f).unwrap_or_default();
        let mut later = Later::default();
        for line in bytes.split(|b| *b == b'\n') {
            let path_of =
                |b: &[u8]| unhex(&String::from_utf8_lossy(b)).map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(&p)));
            if let Some(rest) = line.strip_prefix(b"m\t").or_else(|| line.strip_prefix(b"k\t")) {
                let f: Vec<&[u8]> = rest.split(|b| *b == b'\t').collect();
                if let [root, a, b] = f.as_slice()
                    && let (Some(root), Some(a)) = (path_of(root), path_of(a))
                {
                    let m = later.modules.entry(root).or_default();
                    if line[0] == b'm' {
                        m.list.extend(path_of(b).map(|b| (a, b)));
                    } else {
                        m.keys.push((a, String::from_utf8_lossy(b).into_owned()));
                    }
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix(b"h\t") {
                let f: Vec<String> =
                    rest.split(|b| *b == b'\t').map(|f| String::from_utf8_lossy(f).into_owned()).collect();
                let stamped = |st: &str, held: &str| Some((unstamp(st)?, unhex(held)?));
                if let [git, hs, h, ls, l] = f.as_slice()
                    && let (Some(git), Some(head)) = (unhex(git), stamped(hs, h))
                {
                    let git = PathBuf::from(std::ffi::OsStr::from_bytes(&git));
                    later.heads.insert(git, Heads { head: Some(head), loose: stamped(ls, l) });
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix(b"g\t") {
                let mut fields = rest.splitn(2, |b| *b == b'\t').map(|f| unhex(&String::from_utf8_lossy(f)));
                if let (Some(Some(root)), Some(Some(rel))) = (fields.next(), fields.next()) {
                    let root = PathBuf::from(std::ffi::OsStr::from_bytes(&root));
                    later.ignores.entry(root).or_default().push(rel);
                }
                continue;
            }
            let mut fields = line.splitn(8, |b| *b == b'\t');
            let mut next = || fields.next().map(|f| String::from_utf8_lossy(f).into_owned());
            let parsed = (|| {
                let (link, size, mtime, ctime) =
                    (next()? == "l", next()?.parse().ok()?, next()?.parse().ok()?, next()?.parse().ok()?);
                let id: Vec<u8> = hex(&next()?)?;
                let root = PathBuf::from(std::ffi::OsStr::from_bytes(&unhex(&next()?)?));
                let path = unhex(&next()?)?;
                Some(LaterEntry { root, path, link, hash: id.len(), id, size, mtime, ctime })
            })();
            later.entries.extend(parsed);
        }
        later
    }

    fn keep(&mut self, root: &Path, e: &Entry, hash: usize) {
        if self.entries.len() < MAX_LATER {
            self.dirty = true;
            self.entries.push(LaterEntry {
                root: root.to_path_buf(),
                path: e.path.clone(),
                link: e.mode() >> 12 == 0o12,
                hash,
                id: e.id[..hash].to_vec(),
                size: e.size(),
                mtime: e.mtime().0,
                ctime: e.be32(0),
            });
        }
    }

    /// The kept entries whose file now matches their stat data: told where it does not hold
    /// their object, and let go, as are those whose second is past.
    fn check(&mut self, clock: i64, found: &mut Vec<Hidden>) {
        use rustix::fs::{Mode, OFlags};
        let mut budget = MAX_HASHED;
        let before = self.entries.len();
        self.entries.retain(|k| {
            let Ok(dir) = rustix::fs::openat(
                rustix::fs::CWD,
                &k.root,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                return false;
            };
            let file = worktree_file(&dir, &k.path, k.link, k.size, &mut budget);
            if let Some(f) =
                file.filter(|f| (f.size as u32, f.mtime as u32, f.ctime as u32) == (k.size, k.mtime, k.ctime))
            {
                let path = String::from_utf8_lossy(&k.path).into_owned();
                match f.content {
                    Some(c) if holds(&c, &k.id, k.hash) => {}
                    Some(_) => found.push(Hidden::Stale(path)),
                    None => found.push(Hidden::Unchecked(1)),
                }
                return false;
            }
            clock <= i64::from(k.ctime) + 2
        });
        self.dirty |= self.entries.len() != before;
    }

    /// Kept for the next command, or removed where nothing is left.
    fn write(&self, path: &Path) {
        if !self.dirty {
            return;
        }
        if self.entries.is_empty() && self.ignores.is_empty() && self.modules.is_empty() && self.heads.is_empty() {
            let _ = std::fs::remove_file(path);
            return;
        }
        let hexed = |b: &[u8]| b.iter().map(|c| format!("{c:02x}")).collect::<String>();
        let mut text = String::new();
        let hexed_path = |p: &Path| hexed(p.as_os_str().as_bytes());
        for (root, m) in &self.modules {
            for (g, wt) in &m.list {
                text.push_str(&format!("m\t{}\t{}\t{}\n", hexed_path(root), hexed_path(g), hexed_path(wt)));
            }
            for (p, k) in &m.keys {
                text.push_str(&format!("k\t{}\t{}\t{k}\n", hexed_path(root), hexed_path(p)));
            }
        }
        let stamped = |s: &Option<(Stamp, Vec<u8>)>| match s {
            Some(((dev, ino, sec, ns), held)) => format!("{dev}.{ino}.{sec}.{ns}\t{}", hexed(held)),
            None => "-\t-".to_string(),
        };
        for (git, h) in &self.heads {
            text.push_str(&format!("h\t{}\t{}\t{}\n", hexed_path(git), stamped(&h.head), stamped(&h.loose)));
        }
        for (root, rels) in &self.ignores {
            for rel in rels {
                text.push_str(&format!("g\t{}\t{}\n", hexed(root.as_os_str().as_bytes()), hexed(rel)));
            }
        }
        for k in &self.entries {
            text.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                if k.link { "l" } else { "f" },
                k.size,
                k.mtime,
                k.ctime,
                hexed(&k.id),
                hexed(k.root.as_os_str().as_bytes()),
                hexed(&k.path)
            ));
        }
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
}

/// A [`Stamp`] as [`Later::write`] writes it (`dev.ino.sec.nsec`).
fn unstamp(s: &str) -> Option<Stamp> {
    let mut f = s.split('.');
    let stamp = (f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.parse().ok()?);
    f.next().is_none().then_some(stamp)
}

fn hex(s: &str) -> Option<Vec<u8>> {
    unhex(s).filter(|b| b.len() == 20 || b.len() == 32)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// A worktree file as [`worktree_file`] found it.
struct WorktreeFile {
    size: u64,
    mtime: i64,
    ctime: i64,
    content: Option<Vec<u8>>,
}

/// The worktree's file at `path` below `dir` (no link followed on the way; a link itself where
/// `link`): its size, modification time (seconds) and, while `budget` lasts and its size is
/// `expected`, its content (a link's target); its change time too. `None` where it is not there as a file (or a link):
/// git sees that.
fn worktree_file(
    dir: &impl std::os::fd::AsFd,
    path: &[u8],
    link: bool,
    expected: u32,
    budget: &mut u64,
) -> Option<WorktreeFile> {
    use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
    let path = std::ffi::OsStr::from_bytes(path);
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let flags =
        OFlags::NOFOLLOW | OFlags::CLOEXEC | if link { OFlags::PATH } else { OFlags::RDONLY | OFlags::NONBLOCK };
    let fd = rustix::fs::openat2(dir, path, flags, Mode::empty(), resolve).ok()?;
    let st = rustix::fs::statx(
        &fd,
        "",
        AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
        rustix::fs::StatxFlags::BASIC_STATS,
    )
    .ok()?;
    let kind = rustix::fs::FileType::from_raw_mode(st.stx_mode.into());
    if kind != if link { rustix::fs::FileType::Symlink } else { rustix::fs::FileType::RegularFile } {
        return None;
    }
    let (size, mtime, ctime) = (st.stx_size, st.stx_mtime.tv_sec, st.stx_ctime.tv_sec);
    if size != u64::from(expected) || size > *budget {
        return Some(WorktreeFile { size, mtime, ctime, content: None });
    }
    *budget -= size;
    let content = if link {
        rustix::fs::readlinkat(&fd, "", Vec::new()).ok().map(std::ffi::CString::into_bytes)
    } else {
        let mut out = Vec::with_capacity(size as usize);
        std::fs::File::from(fd).take(size + 1).read_to_end(&mut out).ok().map(|_| out)
    };
    Some(WorktreeFile { size, mtime, ctime, content })
}

/// Whether `content` is the blob `id` names, as git would have stored it: as it is, with its
/// line ends made LF (core.autocrlf, `text eol=crlf`), or as Git LFS's pointer to it.
fn holds(content: &[u8], id: &[u8], hash: usize) -> bool {
    if blob_id(content, hash) == id {
        return true;
    }
    if content.windows(2).any(|w| w == b"\r\n") {
        let mut lf = Vec::with_capacity(content.len());
        for (i, c) in content.iter().enumerate() {
            if !(*c == b'\r' && content.get(i + 1) == Some(&b'\n')) {
                lf.push(*c);
            }
        }
        if blob_id(&lf, hash) == id {
            return true;
        }
    }
    let oid = ring::digest::digest(&ring::digest::SHA256, content);
    let hex: String = oid.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let pointer = format!("version https://git-lfs.github.com/spec/v1\noid sha256:{hex}\nsize {}\n", content.len());
    blob_id(pointer.as_bytes(), hash) == id
}

/// The name git gives `content` as a blob: the hash of `blob <length>\0` and the content (SHA-1,
/// or SHA-256 where the repository's object names are that long).
fn blob_id(content: &[u8], hash: usize) -> Vec<u8> {
    let algorithm = if hash == 32 { &ring::digest::SHA256 } else { &ring::digest::SHA1_FOR_LEGACY_USE_ONLY };
    let mut c = ring::digest::Context::new(algorithm);
    c.update(format!("blob {}\0", content.len()).as_bytes());
    c.update(content);
    c.finish().as_ref().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        git(t.path(), &["init", "-q"]);
        for (f, body) in [("a", "1\n"), ("dir/b", "2\n"), ("dir/c", "3\n"), (".husky/pre-commit", "npm test\n")] {
            std::fs::create_dir_all(t.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(f), body).unwrap();
        }
        git(t.path(), &["add", "-A"]);
        git(t.path(), &["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "x"]);
        t
    }

    #[test]
    fn the_bits_git_sets_are_read_from_every_index_version() {
        for version in ["2", "3", "4"] {
            let t = repo();
            git(t.path(), &["update-index", "--index-version", version]);
            git(t.path(), &["update-index", "--assume-unchanged", "dir/c"]);
            let before = std::fs::read(t.path().join(".git/index")).unwrap();
            assert_eq!(hidden_bits(&before), vec![("dir/c".to_string(), false)], "version {version}");
            git(t.path(), &["update-index", "--skip-worktree", ".husky/pre-commit"]);
            let after = std::fs::read(t.path().join(".git/index")).unwrap();
            assert_eq!(
                hidden_bits(&after),
                vec![(".husky/pre-commit".to_string(), true), ("dir/c".to_string(), false)],
                "version {version}"
            );
        }
        assert!(hidden_bits(b"not an index").is_empty());
    }

    #[test]
    fn only_what_the_command_added_is_found() {
        let t = repo();
        let git_dir = t.path().join(".git");
        // The person's own bit, set before the command.
        git(t.path(), &["update-index", "--assume-unchanged", "a"]);
        let before = Before::take(&git_dir, t.path(), None);
        git(t.path(), &["update-index", "--skip-worktree", ".husky/pre-commit"]);
        git(t.path(), &["replace", "-f", "HEAD:a", "HEAD:dir/b"]);
        let found = before.finish();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], Hidden::Bit { path: ".husky/pre-commit".into(), skip_worktree: true });
        assert!(matches!(&found[1], Hidden::Replaced(r) if r.starts_with("refs/replace/")), "{found:?}");
        // The index unchanged since: no bit is new (refs are told new by their change time,
        // with a margin of two seconds, so the ref just made would be found again).
        let again = Before::take(&git_dir, t.path(), None).finish();
        assert!(!again.iter().any(|h| matches!(h, Hidden::Bit { .. })), "{again:?}");
    }

    #[test]
    fn a_fifo_in_the_index_place_does_not_hold_agentsh() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let before = Before::take(&git_dir, t.path(), None);
        std::fs::remove_file(git_dir.join("index")).unwrap();
        std::fs::remove_file(git_dir.join("packed-refs")).ok();
        for f in ["index", "packed-refs"] {
            let made = Command::new("mkfifo").arg(git_dir.join(f)).status().unwrap();
            assert!(made.success());
        }
        assert!(before.finish().is_empty());
        assert!(Before::take(&git_dir, t.path(), None).finish().is_empty());
    }

    /// Rewrites the object `path`'s entry names in the index at `index` (version 2, SHA-1), with
    /// a new checksum: what rt4's `forge.py` did.
    fn forge(index: &Path, path: &str, id: &[u8]) {
        rewrite(index, path, |e| e[40..60].copy_from_slice(id));
    }

    /// rt4 R2 in the repository at `dir` (its git directory `git_dir`): `dir/b` edited, added
    /// with its stat data, and its entry given HEAD's object again.
    fn edit_and_forge(dir: &Path, git_dir: &Path, head: &Path) {
        let b = dir.join("dir/b");
        std::fs::write(&b, "2\necho HIDDEN\n").unwrap();
        an_hour_ago(&b);
        git(dir, &["add", "dir/b"]);
        forge(&git_dir.join("index"), "dir/b", &object(head, "HEAD:dir/b"));
    }

    fn object(dir: &Path, rev: &str) -> Vec<u8> {
        let out = Command::new("git").args(["rev-parse", rev]).current_dir(dir).output().unwrap();
        let hex = String::from_utf8(out.stdout).unwrap();
        (0..40).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }

    fn an_hour_ago(path: &Path) {
        let then = SystemTime::now() - std::time::Duration::from_secs(3600);
        File::options().write(true).open(path).unwrap().set_modified(then).unwrap();
    }

    #[test]
    fn an_entry_naming_heads_object_for_an_edited_file_is_found() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let before = Before::take(&git_dir, t.path(), None);
        edit_and_forge(t.path(), &git_dir, t.path());
        let status = Command::new("git").args(["status", "--short"]).current_dir(t.path()).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&status.stdout), "", "git is blinded");
        assert_eq!(before.finish(), vec![Hidden::Stale("dir/b".into())]);
        // Written in place (nothing of the index before is left to compare): found all the same.
        let before = Before::take(&git_dir, t.path(), None);
        let bytes = std::fs::read(git_dir.join("index")).unwrap();
        std::fs::OpenOptions::new().write(true).open(git_dir.join("index")).unwrap().write_all(&bytes).unwrap();
        assert_eq!(before.finish(), vec![Hidden::Stale("dir/b".into())]);
    }

    #[test]
    fn what_git_itself_writes_in_the_index_is_not_told() {
        let t = repo();
        let git_dir = t.path().join(".git");
        git(t.path(), &["config", "core.autocrlf", "true"]);
        let before = Before::take(&git_dir, t.path(), None);
        // Touched and refreshed; edited and added; edited and checked out again; a new file
        // with CRLF line ends added (stored with LF); a link.
        for f in ["a", "dir/c"] {
            an_hour_ago(&t.path().join(f));
        }
        std::fs::write(t.path().join("dir/b"), "22\n").unwrap();
        std::fs::write(t.path().join(".husky/pre-commit"), "npm run lint\n").unwrap();
        std::fs::write(t.path().join("crlf"), "one\r\ntwo\r\n").unwrap();
        std::os::unix::fs::symlink("dir/b", t.path().join("link")).unwrap();
        git(t.path(), &["add", "dir/b", "crlf", "link"]);
        git(t.path(), &["checkout", "--", ".husky/pre-commit"]);
        git(t.path(), &["update-index", "--refresh"]);
        // Older than the index: git would trust the entries, so they are hashed.
        for f in ["dir/b", "crlf", ".husky/pre-commit"] {
            an_hour_ago(&t.path().join(f));
        }
        git(t.path(), &["update-index", "--really-refresh"]);
        assert_eq!(before.finish(), vec![]);
    }

    #[test]
    fn a_split_index_is_told_as_not_checked() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let before = Before::take(&git_dir, t.path(), None);
        git(t.path(), &["update-index", "--split-index"]);
        std::fs::write(t.path().join("a"), "changed\n").unwrap();
        git(t.path(), &["add", "a"]);
        assert_eq!(before.finish(), vec![Hidden::Split]);
        let before = Before::take(&git_dir, t.path(), None);
        git(t.path(), &["update-index", "--no-split-index"]);
        assert_eq!(before.finish(), vec![]);
    }

    /// Rewrites `path`'s entry in the version-2 index at `index` with `edit` (given the entry's
    /// 62 bytes of stat data, object and flags), and re-sums it.
    fn rewrite(index: &Path, path: &str, edit: impl FnOnce(&mut [u8])) {
        let mut b = std::fs::read(index).unwrap();
        let count = u32::from_be_bytes(b[8..12].try_into().unwrap());
        let mut at = 12;
        for _ in 0..count {
            let len = usize::from(u16::from_be_bytes([b[at + 60], b[at + 61]]) & 0xfff);
            if &b[at + 62..at + 62 + len] == path.as_bytes() {
                edit(&mut b[at..at + 62]);
                let body = b.len() - 20;
                let sum = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &b[..body]);
                b[body..].copy_from_slice(sum.as_ref());
                return std::fs::write(index, b).unwrap();
            }
            at += (62 + len + 8) / 8 * 8;
        }
        panic!("{path} is not in the index");
    }

    /// The version-2 index at `index` with every entry given the extended-flags word (zero),
    /// as git 2.47 reads it whatever the version (rt5 A1's forge).
    fn extend_all(index: &Path) {
        let b = std::fs::read(index).unwrap();
        let count = u32::from_be_bytes(b[8..12].try_into().unwrap());
        let mut out = b[..12].to_vec();
        let mut at = 12;
        for _ in 0..count {
            let len = usize::from(u16::from_be_bytes([b[at + 60], b[at + 61]]) & 0xfff);
            let start = out.len();
            out.extend_from_slice(&b[at..at + 62]);
            out[start + 60] |= 0x40;
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&b[at + 62..at + 62 + len]);
            out.resize(start + (64 + len + 8) / 8 * 8, 0);
            at += (62 + len + 8) / 8 * 8;
        }
        out.extend_from_slice(&b[at..b.len() - 20]);
        let sum = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &out);
        out.extend_from_slice(sum.as_ref());
        std::fs::write(index, out).unwrap();
    }

    #[test]
    fn a_version_2_index_with_extended_flags_is_read_as_git_reads_it() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let before = Before::take(&git_dir, t.path(), None);
        edit_and_forge(t.path(), &git_dir, t.path());
        extend_all(&git_dir.join("index"));
        let status = Command::new("git").args(["status", "--short"]).current_dir(t.path()).output().unwrap();
        assert!(status.status.success(), "git reads it: {}", String::from_utf8_lossy(&status.stderr));
        assert_eq!(String::from_utf8_lossy(&status.stdout), "", "git is blinded");
        assert_eq!(before.finish(), vec![Hidden::Stale("dir/b".into())]);
        // An index agentsh cannot read at all, left by the command: said, not passed over.
        let before = Before::take(&git_dir, t.path(), None);
        let mut bytes = std::fs::read(git_dir.join("index")).unwrap();
        bytes[4..8].copy_from_slice(&9u32.to_be_bytes());
        std::fs::write(git_dir.join("index"), bytes).unwrap();
        assert_eq!(before.finish(), vec![Hidden::Unreadable]);
    }

    fn seconds() -> u32 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as u32
    }

    #[test]
    fn an_entry_written_ahead_of_its_files_edit_is_found() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let b = t.path().join("dir/b");
        let edit = b"2\necho TWO-STEP\n";
        let then = an_hour_ago_seconds();
        let head = object(t.path(), "HEAD:dir/b");
        // The entry made to match the edit to come, with a change time in the future.
        let before = Before::take(&git_dir, t.path(), None);
        rewrite(&git_dir.join("index"), "dir/b", |e| {
            e[0..4].copy_from_slice(&(seconds() + 6).to_be_bytes());
            e[8..12].copy_from_slice(&then.to_be_bytes());
            e[36..40].copy_from_slice(&(edit.len() as u32).to_be_bytes());
            e[40..60].copy_from_slice(&head);
        });
        assert_eq!(before.finish(), vec![Hidden::Ahead("dir/b".into())]);
        // With this second's change time, the edit in a later command within it: found then.
        let records = tempfile::tempdir().unwrap();
        let later = records.path().join("w-review-box");
        for attempt in 0.. {
            // Early in a second, so both commands end within it.
            while !(20..=100).contains(&SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_millis()) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            std::fs::write(&b, "2\n").unwrap();
            git(t.path(), &["read-tree", "HEAD"]);
            git(t.path(), &["add", "dir/b"]);
            let before = Before::take(&git_dir, t.path(), Some(later.clone()));
            let now = seconds();
            rewrite(&git_dir.join("index"), "dir/b", |e| {
                e[0..4].copy_from_slice(&now.to_be_bytes());
                e[4..8].fill(0);
                e[8..12].copy_from_slice(&then.to_be_bytes());
                e[12..16].fill(0);
                e[36..40].copy_from_slice(&(edit.len() as u32).to_be_bytes());
                e[40..60].copy_from_slice(&head);
            });
            assert_eq!(before.finish(), vec![]);
            assert!(later.exists(), "kept to be checked again");
            // The next command: the edit, its time set back.
            let before = Before::take(&git_dir, t.path(), Some(later.clone()));
            std::fs::write(&b, edit).unwrap();
            File::options()
                .write(true)
                .open(&b)
                .unwrap()
                .set_modified(UNIX_EPOCH + std::time::Duration::from_secs(then.into()))
                .unwrap();
            if std::fs::metadata(&b).unwrap().ctime() != i64::from(now) {
                assert!(attempt < 3, "the second ran out each time");
                std::fs::remove_file(&later).ok();
                continue;
            }
            let status = Command::new("git").args(["status", "--short"]).current_dir(t.path()).output().unwrap();
            assert_eq!(String::from_utf8_lossy(&status.stdout), "", "git is blinded");
            assert_eq!(before.finish(), vec![Hidden::Stale("dir/b".into())]);
            assert!(!later.exists(), "nothing left to check");
            break;
        }
    }

    fn an_hour_ago_seconds() -> u32 {
        seconds() - 3600
    }

    #[test]
    fn a_submodules_index_is_reviewed_too() {
        let lib = repo();
        let t = repo();
        let out = Command::new("git")
            .args(["-c", "protocol.file.allow=always", "submodule", "add", "-q"])
            .arg(lib.path())
            .arg("vendor/lib")
            .current_dir(t.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let module = t.path().join(".git/modules/vendor/lib");
        assert!(module.join("index").is_file());
        git(t.path(), &["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "lib"]);
        // Found once, then kept: the next command reads them from agentsh's records.
        let records = tempfile::tempdir().unwrap();
        let later = records.path().join("w-review-box");
        assert!(Before::take(&t.path().join(".git"), t.path(), Some(later.clone())).finish().is_empty());
        assert!(std::fs::read_to_string(&later).unwrap().starts_with("m\t"), "kept");
        let before = Before::take(&t.path().join(".git"), t.path(), Some(later.clone()));
        edit_and_forge(&t.path().join("vendor/lib"), &module, lib.path());
        std::fs::create_dir_all(t.path().join("vendor/lib/t")).unwrap();
        std::fs::write(t.path().join("vendor/lib/t/.gitignore"), "*\n").unwrap();
        let status = Command::new("git").args(["status", "--short"]).current_dir(t.path()).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&status.stdout), "", "git is blinded");
        assert_eq!(
            before.finish(),
            vec![Hidden::Stale("vendor/lib/dir/b".into()), Hidden::SelfIgnored("vendor/lib/t".into())]
        );
    }

    /// rt6 X2: a branch a linked worktree outside the workspace has checked out, moved by the
    /// command, whether it is a loose ref or only in `packed-refs`; `git pack-refs` and a commit
    /// in the workspace are not told. What it had checked out is kept between commands.
    #[test]
    fn a_branch_checked_out_in_a_worktree_outside_is_told_when_moved() {
        let t = repo();
        let outside = tempfile::tempdir().unwrap();
        let wt = outside.path().join("wt");
        git(t.path(), &["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "feature"]);
        let git_dir = t.path().join(".git");
        let records = tempfile::tempdir().unwrap();
        let later = records.path().join("w-review-box");
        let take = || Before::take(&git_dir, t.path(), Some(later.clone()));
        let ci = ["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x"];
        assert!(take().finish().is_empty());
        assert!(std::fs::read_to_string(&later).unwrap().contains("\nh\t"), "kept");
        // Ordinary work in the workspace, and packing the refs: nothing said.
        let before = take();
        git(t.path(), &ci);
        git(t.path(), &["pack-refs", "--all"]);
        assert!(!git_dir.join("refs/heads/feature").exists());
        assert_eq!(before.finish(), vec![]);
        for how in ["packed", "loose"] {
            let hex = |rev: &str| object(t.path(), rev).iter().map(|b| format!("{b:02x}")).collect::<String>();
            let (was, from) = (hex("HEAD"), hex("feature"));
            let before = take();
            git(t.path(), &["update-ref", "refs/heads/feature", &was]);
            let found = before.finish();
            let worktree = crate::text::path(&wt);
            assert_eq!(
                found,
                vec![Hidden::BranchMoved { branch: "feature".into(), worktree, from, to: was.clone() }],
                "{how}"
            );
            git(t.path(), &ci);
        }
    }

    /// rt6 X3 over two commands: an untracked cache whose entry for `dir` is written with a
    /// change time ahead of the clock, for a later command's new file to match it. Not the
    /// directory's now, so git would read it again today: told all the same.
    #[test]
    fn an_untracked_cache_entry_written_ahead_is_told() {
        let t = repo();
        let git_dir = t.path().join(".git");
        git(t.path(), &["update-index", "--untracked-cache"]);
        git(t.path(), &["status", "--short"]);
        std::thread::sleep(std::time::Duration::from_millis(1100));
        git(t.path(), &["status", "--short"]);
        let m = std::fs::metadata(t.path().join("dir")).unwrap();
        let stat = |ctime: u32| {
            let words = [
                ctime,
                m.ctime_nsec() as u32,
                m.mtime() as u32,
                m.mtime_nsec() as u32,
                m.dev() as u32,
                m.ino() as u32,
                m.uid(),
                m.gid(),
                m.size() as u32,
            ];
            words.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<u8>>()
        };
        let mut b = std::fs::read(git_dir.join("index")).unwrap();
        let at = b.windows(36).position(|w| w == stat(m.ctime() as u32)).expect("dir's entry");
        let before = Before::take(&git_dir, t.path(), None);
        // Ordinary: nothing changed, nothing said.
        git(t.path(), &["update-index", "--refresh"]);
        b[at..at + 36].copy_from_slice(&stat(seconds() + 5));
        let body = b.len() - 20;
        let sum = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &b[..body]);
        b[body..].copy_from_slice(sum.as_ref());
        std::fs::write(git_dir.join("index.new"), &b).unwrap();
        std::fs::rename(git_dir.join("index.new"), git_dir.join("index")).unwrap();
        assert_eq!(before.finish(), vec![Hidden::IndexCache { fsmonitor: false, repo: ".".into(), hides: None }]);
    }

    #[test]
    fn git_lfs_pointers_and_crlf_are_what_the_file_holds() {
        let lf = blob_id(b"one\ntwo\n", 20);
        assert!(holds(b"one\r\ntwo\r\n", &lf, 20));
        assert!(!holds(b"one\r\ntwo\r\nthree\r\n", &lf, 20));
        let big = vec![7u8; 1000];
        let oid: String =
            ring::digest::digest(&ring::digest::SHA256, &big).as_ref().iter().map(|b| format!("{b:02x}")).collect();
        let pointer = format!("version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 1000\n");
        assert!(holds(&big, &blob_id(pointer.as_bytes(), 20), 20));
        // git's own name for a blob: `git hash-object` of "hello\n".
        let hello: String = blob_id(b"hello\n", 20).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hello, "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    /// rt7 A1: a directory made in `modules/` is told, and one in `worktrees/` unless it is as
    /// `git worktree add` makes it; nothing where neither changed since the command started.
    #[test]
    fn git_directories_made_where_git_adopts_them_are_told() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let git = top.join(".git");
        let w = |rel: &str, body: &str| {
            let p = git.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w("modules/lib/HEAD", "");
        w("worktrees/feature/commondir", "../..\n");
        w("worktrees/elsewhere/commondir", "../../../evil\n");
        w("worktrees/settings/commondir", "../..\n");
        w("worktrees/settings/config.worktree", "[core]\n\tfsmonitor = x\n");
        w("worktrees/none/HEAD", "");
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let mut found = Vec::new();
        made_git_dirs(&git, &top, now + 10, [None, None], &mut found);
        assert_eq!(found, [], "made before the command");
        let then = GIT_DIRS.map(|(name, _)| changed_at(&git.join(name)));
        made_git_dirs(&git, &top, now - 2, then, &mut found);
        assert_eq!(found, [], "neither changed during the command");
        made_git_dirs(&git, &top, now - 2, [None, None], &mut found);
        found.sort_by_key(|h| format!("{h:?}"));
        let made = |p: &str, worktree| Hidden::GitDirMade { path: p.into(), worktree };
        assert_eq!(
            found,
            [
                made(".git/modules/lib", false),
                made(".git/worktrees/elsewhere", true),
                made(".git/worktrees/none", true),
                made(".git/worktrees/settings", true),
            ]
        );
    }
}
