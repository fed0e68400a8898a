//! The sandbox's namespaces, kept between commands.
//!
//! Making a user and mount namespace and its mounts costs about 1 ms per command (the
//! namespaces, the uid and gid maps, a dozen mounts, and tearing them all down at exit), more
//! than agentsh's whole budget for the box (docs/BENCHMARKS.md). So the first boxed command in
//! a place leaves a holder process in the namespaces it made (`agentsh` asleep, in a session of
//! its own, holding no file but the ruleset below), and later commands with the same box join
//! them with one `setns` call (both namespaces, through a pidfd) instead. The holder exits after
//! [`LIFETIME`]; the next command then makes them again.
//!
//! The first command also leaves the holder a copy of its finished Landlock ruleset, and later
//! commands take it (`pidfd_getfd`) and restrict themselves with it instead of opening every
//! root and adding its rule again (`super::landlock_fd`).
//!
//! The record's name hashes everything the box is built from ([`Key`]), so it also carries the
//! box's roots as text: a joining command takes them for the judge and the audit record instead
//! of building the box (`super::sandbox::BoxPlan`).
//!
//! A record in agentsh's state directory (which no boxed command can read or write) names the
//! holder and what the mounts and rules were made from ([`Watch`]): the roots of the rules (the
//! ruleset holds their inodes), the code paths bound read-only (`.git/hooks`, `.git/config`,
//! `.agents`), and the denied paths, through the nearest directory above each that exists. A
//! command joins only when those are unchanged, so a denied path made since (a new `~/.aws`, a
//! new key in `~/.ssh`), a file replaced by rename (git rewrites `.git/config` so, which
//! detaches the mount on the old one), or a workspace removed and made again makes the
//! namespaces and the rules again. It also joins only the holder the record names (its pidfd's
//! inode, or its mount namespace's), never another process that reused the holder's ID.

use std::ffi::OsString;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub(crate) use super::sandbox::RootsText;
pub use crate::model::HOLD_MARKER;

/// How long a holder keeps its namespaces. Commands already in them keep them as long as they
/// run; a holder only saves the next command the cost of making them.
pub const LIFETIME: Duration = Duration::from_secs(120);

/// Where the records of kept namespaces are: `box/` in agentsh's state directory, which no
/// boxed command can read or write. `None` without a home directory.
pub fn records_dir() -> Option<PathBuf> {
    crate::policy::dirs::state_dir().map(|d| d.join("box"))
}

/// The namespaces a box would join or keep: where their record is.
pub(crate) struct Kept {
    dir: PathBuf,
    name: String,
}

/// What joining gave: the holder's finished Landlock ruleset, ready for `restrict_self`.
pub(crate) struct Joined {
    /// `None` where the holder cannot be told from a process that took its ID (before pidfs):
    /// the caller adds the rules itself.
    pub ruleset: Option<OwnedFd>,
    /// How many rules it holds (for `Entered`).
    pub rules: usize,
}

impl Kept {
    /// The record named `name` in `dir` (see [`Key`]).
    pub(crate) fn new(dir: PathBuf, name: String) -> Kept {
        Kept { dir, name }
    }

    /// `None` when the spec keeps nothing (no records directory, or no name for the record).
    pub(crate) fn of(spec: &super::sandbox::BoxSpec) -> Option<Kept> {
        Some(Kept::new(spec.keep.clone()?, spec.kept_as.clone()?))
    }

    /// The record, when there is one (whether what it vouches for is unchanged is
    /// [`Record::unchanged`]).
    pub(crate) fn record(&self) -> Option<Record> {
        Record::at(&self.dir, &self.name)
    }

    /// Joins the kept namespaces and takes the holder's ruleset when there is a record and
    /// everything it vouches for is unchanged; `None` leaves this process as it was. Joining
    /// moves the working directory to `/`: the caller changes back, by path. Single-threaded
    /// callers only (a user namespace cannot be joined otherwise).
    pub(crate) fn join(&self) -> Option<(Joined, Record)> {
        let record = self.record().filter(Record::unchanged)?;
        Some((Kept::join_record(&record)?, record))
    }

    /// [`Kept::join`] with a record already read, whose [`Record::unchanged`] said yes.
    pub(crate) fn join_record(record: &Record) -> Option<Joined> {
        let pid = rustix::process::Pid::from_raw(record.pid)?;
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
        // The process behind that ID, pinned by the pidfd, is the holder only if it is the one
        // recorded: another may have reused the ID. Where pidfds have inodes of their own
        // (pidfs, Linux 6.9), the inode names the process for the whole boot; elsewhere the
        // holder is the process in the recorded mount namespace.
        let holder = if record.pid_ino != 0 {
            nix::sys::stat::fstat(&pidfd).is_ok_and(|s| s.st_ino == record.pid_ino)
        } else {
            std::fs::metadata(format!("/proc/{}/ns/mnt", record.pid)).is_ok_and(|m| m.ino() == record.mnt)
        };
        if !holder {
            return None;
        }
        // The ruleset, only from a holder known by its pidfd's inode. Without pidfs, the process
        // in the recorded namespace could be a boxed command that outlived the holder and took
        // its ID, holding a ruleset of its own making at that number: the rules are then made
        // again. Taken before joining: after it, this process is no longer in the holder's
        // parent user namespace, which the kernel's ptrace check for pidfd_getfd looks at.
        let ruleset = if record.pid_ino != 0 {
            let flags = rustix::process::PidfdGetfdFlags::empty();
            Some(rustix::process::pidfd_getfd(&pidfd, record.ruleset_fd, flags).ok()?)
        } else {
            None
        };
        // Both namespaces at once, or neither (setns with a pidfd is atomic).
        use rustix::thread::ThreadNameSpaceType as Ns;
        let join = || {
            rustix::thread::move_into_thread_name_spaces(pidfd.as_fd(), Ns::USER | Ns::MOUNT)
                .map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error()))
        };
        super::sandbox::alone(join).ok()?;
        // Left open: pidfds are close-on-exec, and a close costs the command a system call.
        let _ = std::os::fd::IntoRawFd::into_raw_fd(pidfd);
        Some(Joined { ruleset, rules: record.rules })
    }

    /// Opens the records directory before the mounts cover it (it is one of agentsh's own).
    pub(crate) fn store(&self) -> Option<OwnedFd> {
        use nix::fcntl::OFlag;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir).ok()?;
        nix::fcntl::open(
            &self.dir,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .ok()
    }

    /// Leaves a holder in this process's (new) namespaces, holding `ruleset` (finished: no rule
    /// is added after this), and records it with `watch`, taken before the mounts. Best effort:
    /// without a holder the next command makes its own namespaces.
    pub(crate) fn keep(&self, store: OwnedFd, watch: &Watch, roots: &RootsText, ruleset: BorrowedFd<'_>, rules: usize) {
        let _ = self.try_keep(store, watch, roots, ruleset, rules);
    }

    fn try_keep(
        &self,
        store: OwnedFd,
        watch: &Watch,
        roots: &RootsText,
        ruleset: BorrowedFd<'_>,
        rules: usize,
    ) -> Option<()> {
        use nix::fcntl::OFlag;
        use std::io::Write;
        let mnt = std::fs::metadata("/proc/self/ns/mnt").ok()?.ino();
        // The record's file first: where it cannot be written (a full disk, a records directory
        // made read-only, as SECURITY.md advises when the agent runs in a box), no holder is
        // started, rather than one per command that nothing will ever join.
        let tmp = format!("{}.{}.tmp", self.name, std::process::id());
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        let mut file = File::from(nix::fcntl::openat(&store, tmp.as_str(), flags, mode).ok()?);
        let written = self.start_holder(ruleset, rules, mnt, watch, roots).and_then(|text| file.write_all(&text).ok());
        match written {
            Some(()) => nix::fcntl::renameat(&store, tmp.as_str(), &store, self.name.as_str()).ok(),
            None => {
                let _ = nix::unistd::unlinkat(&store, tmp.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
                None
            }
        }
    }

    /// Starts a holder with a copy of `ruleset` and returns the record that names it.
    fn start_holder(
        &self,
        ruleset: BorrowedFd<'_>,
        rules: usize,
        mnt: u64,
        watch: &Watch,
        roots: &RootsText,
    ) -> Option<Vec<u8>> {
        use nix::fcntl::{FcntlArg, FdFlag};
        #[cfg(test)]
        tests::HOLDERS_STARTED.with(|n| n.set(n.get() + 1));
        // What it vouches for first: a path that cannot be recorded starts no holder either.
        let mut watched = Vec::new();
        write_roots(roots, &mut watched)?;
        watch.write(&mut watched)?;
        // A copy the holder inherits (no close-on-exec), at a number the record names.
        let inherited = ruleset.try_clone_to_owned().ok()?;
        nix::fcntl::fcntl(&inherited, FcntlArg::F_SETFD(FdFlag::empty())).ok()?;
        let fd = inherited.as_raw_fd().to_string();
        // Through a middle process that exits at once, so the holder is nobody's child: not the
        // command's, which could otherwise reap it with its own.
        let out = Command::new("/proc/self/exe")
            .args([HOLD_MARKER, "start", &fd])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        drop(inherited);
        let (pid, pid_ino) = std::str::from_utf8(&out.stdout).ok()?.trim().split_once(' ')?;
        let (pid, pid_ino): (i32, u64) = (pid.parse().ok()?, pid_ino.parse().ok()?);
        let mut text = format!("{pid} {mnt} {pid_ino} {fd} {rules}\n").into_bytes();
        text.append(&mut watched);
        Some(text)
    }
}

/// The name of the record of a box: a hash of everything its spec is built from (the settings,
/// the facts of [`super::sandbox::Place`], agentsh's own directories), with agentsh's version
/// and the user. The spec is a pure function of those (`BoxSpec::build`), so a command whose
/// inputs hash alike gets the same box, and can join kept namespaces without building it.
/// Paths are gathered into a buffer on the stack and hashed a block at a time: a call per path
/// cost more than the bytes (`Path`'s own hash parses components, dearer still).
pub(crate) struct Key {
    h: std::hash::DefaultHasher,
    block: [u8; 1024],
    len: usize,
}

impl Key {
    pub(crate) fn new() -> Key {
        let mut h = std::hash::DefaultHasher::new();
        (env!("CARGO_PKG_VERSION"), nix::unistd::geteuid().as_raw()).hash(&mut h);
        Key { h, block: [0; 1024], len: 0 }
    }

    /// Bytes into the block, hashed when it is full.
    fn bytes(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > self.block.len() {
            self.h.write(&self.block[..self.len]);
            self.len = 0;
        }
        if bytes.len() > self.block.len() {
            self.h.write(bytes);
        } else {
            self.block[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }

    /// A number: a list's length, a flag.
    pub(crate) fn count(&mut self, n: usize) {
        self.bytes(&(n as u64).to_le_bytes());
    }

    /// One item, after its length: items cannot run into each other, whatever bytes they hold.
    pub(crate) fn item(&mut self, bytes: &[u8]) {
        self.count(bytes.len());
        self.bytes(bytes);
    }

    /// A path, or its absence (which differs from every path, the empty one included).
    pub(crate) fn path(&mut self, p: Option<&Path>) {
        use std::os::unix::ffi::OsStrExt;
        match p {
            Some(p) => {
                self.count(1);
                self.item(p.as_os_str().as_bytes());
            }
            None => self.count(0),
        }
    }

    pub(crate) fn finish(mut self) -> String {
        self.h.write(&self.block[..self.len]);
        format!("{:016x}", self.h.finish())
    }
}

/// What a record says.
pub(crate) struct Record {
    pid: i32,
    mnt: u64,
    /// The holder's pidfd inode, or 0 where pidfds share one inode (before pidfs).
    pid_ino: u64,
    /// The ruleset's descriptor number in the holder.
    ruleset_fd: i32,
    rules: usize,
    /// The box's roots as text, for the judge and the audit record of a command that joins
    /// without building the spec. `None` in a record without them.
    pub roots: Option<RootsText>,
    /// The watched paths, as [`Watch::write`] wrote them: checked straight from the bytes
    /// ([`Watched`]), as a command that joins pays for every allocation.
    watched: Watched,
}

impl Record {
    /// Whether the holder is known by its pidfd's inode, so its ruleset can be taken (pidfs).
    pub(crate) fn has_ruleset(&self) -> bool {
        self.pid_ino != 0
    }

    /// Whether everything the record vouches for is as it was: its namespaces may be joined.
    /// Asked right before joining: a path made since (a new `~/.aws`) would not be covered.
    pub(crate) fn unchanged(&self) -> bool {
        self.watched.unchanged()
    }

    /// The record named `name` in the records directory `dir`, when there is one that reads.
    pub(crate) fn at(dir: &Path, name: &str) -> Option<Record> {
        Record::read(&super::sandbox::join(dir, name))
    }

    fn read(path: &Path) -> Option<Record> {
        use std::io::Read;
        // Without an fstat for a size hint (records are about 1 KiB), and without the read that
        // would return 0: a record is replaced whole (written aside, then renamed), and a read
        // of a regular file that leaves room in the buffer has reached the end.
        // Read on the stack first: a fresh heap page costs the command a page fault.
        let mut first = [0u8; 4096];
        let mut file = File::open(path).ok()?;
        let n = file.read(&mut first).ok()?;
        let mut text = first[..n].to_vec();
        if n == first.len() {
            file.read_to_end(&mut text).ok()?;
        }
        // Left open: it is close-on-exec, and a close costs the command a system call.
        let _ = std::os::fd::IntoRawFd::into_raw_fd(file);
        let newline = text.iter().position(|b| *b == b'\n')?;
        let head = std::str::from_utf8(&text[..newline]).ok()?;
        let mut fields = head.split(' ');
        let mut next = || fields.next();
        let (pid, mnt, pid_ino, ruleset_fd, rules) = (
            next()?.parse().ok()?,
            next()?.parse().ok()?,
            next()?.parse().ok()?,
            next()?.parse().ok()?,
            next()?.parse().ok()?,
        );
        // The roots' lines (tags in capitals) come before the watched ones.
        let mut at = newline + 1;
        let mut roots: Option<(Vec<String>, RootsText)> = None;
        while let Some(&tag) = text.get(at)
            && tag.is_ascii_uppercase()
        {
            let end = at + text[at..].iter().position(|b| *b == b'\n')?;
            let line = text.get(at + 2..end).filter(|_| text.get(at + 1) == Some(&b'\t'))?;
            let line = std::str::from_utf8(line).ok()?.to_string();
            let r = roots.get_or_insert_with(|| (Vec::new(), RootsText::default()));
            match tag {
                b'W' => {
                    r.0.push(line);
                    r.1.write_len += 1;
                }
                b'V' => r.0.push(line),
                b'O' => r.1.read_only.push(line),
                b'S' => r.1.workspace = Some(line),
                _ => return None,
            }
            at = end + 1;
        }
        let roots = roots.map(|(writable, r)| RootsText { writable: writable.into(), ..r });
        Some(Record { pid, mnt, pid_ino, ruleset_fd, rules, roots, watched: Watched { text: text.split_off(at) } })
    }
}

/// The roots' lines of a record: `W` a writable root of the spec (in order), `V` another the
/// judge counts writable (devices, outputs), `O` a code path kept read-only, `S` the workspace;
/// a tab, then the text. `None` when one holds a newline: nothing is kept then.
fn write_roots(roots: &RootsText, out: &mut Vec<u8>) -> Option<()> {
    let (write, rest) = roots.writable.split_at(roots.write_len.min(roots.writable.len()));
    let lines = write.iter().map(|t| ('W', t)).chain(rest.iter().map(|t| ('V', t)));
    let lines = lines.chain(roots.read_only.iter().map(|t| ('O', t))).chain(roots.workspace.iter().map(|t| ('S', t)));
    for (tag, text) in lines {
        if text.contains('\n') {
            return None;
        }
        out.extend_from_slice(format!("{tag}\t{text}\n").as_bytes());
    }
    Some(())
}

/// The paths a record vouches for, each with its [`stamp`] taken before the mounts were made: a
/// command joins only while every one is unchanged.
///
/// - `Path`: checked every time: the Landlock rules' roots (the ruleset holds their inodes: a
///   workspace removed and made again is another directory), the code paths bound read-only,
///   and a denied path that is a symbolic link (what it points to can change alone).
/// - `Dir` and its `Name`s: a denied path (and a cache under home) is vouched for by the nearest
///   directory above it that exists: while that directory's change time is the same, no entry
///   in it was made, removed or renamed, so what exists there and what does not is as it was.
///   When it did change (another program saved a file in home), each name is checked on its
///   own, and the namespaces are still joined if those are unchanged.
/// - `Entries`: a directory whose entries are covered one by one (`~/.ssh`): any change to it
///   counts.
#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct Watch {
    lines: Vec<Line>,
}

#[derive(Debug, PartialEq, Eq)]
enum Line {
    Path(PathBuf, String),
    Dir(PathBuf, String, String),
    Name(OsString, String),
    Entries(PathBuf, String),
}

impl Watch {
    /// `path` itself, every time.
    pub(crate) fn path(&mut self, path: &Path) {
        // A directory line checks the identity too.
        if !self.lines.iter().any(|l| matches!(l, Line::Path(p, _) | Line::Dir(p, ..) if p == path)) {
            self.lines.push(Line::Path(path.to_path_buf(), stamp(path, false)));
        }
    }

    /// A path whose absence or identity the mounts depend on (a denied path, a cache under
    /// home): through the nearest directory above it that exists.
    pub(crate) fn beneath(&mut self, path: &Path, entries: bool) {
        let link = std::fs::symlink_metadata(path).ok().map(|m| m.file_type().is_symlink());
        if link == Some(true) {
            self.path(path);
        }
        if entries && link.is_some() {
            self.lines.push(Line::Entries(path.to_path_buf(), stamp(path, true)));
        }
        let Some(dir) = path.ancestors().skip(1).find(|a| a.is_dir()) else { return };
        let Some(name) = path.strip_prefix(dir).ok().and_then(|r| r.iter().next()).map(OsString::from) else { return };
        let line = Line::Name(name.clone(), stamp(&dir.join(&name), false));
        // Names follow their directory's line.
        let at = self.lines.iter().position(|l| matches!(l, Line::Dir(d, ..) if d == dir));
        let at = match at {
            Some(at) => at,
            None => {
                let (id, changed) = dir_stamp(dir);
                self.lines.retain(|l| !matches!(l, Line::Path(p, _) if p == dir));
                self.lines.push(Line::Dir(dir.to_path_buf(), id, changed));
                self.lines.len() - 1
            }
        };
        let names = self.lines[at + 1..].iter().take_while(|l| matches!(l, Line::Name(..))).count();
        if !self.lines[at + 1..at + 1 + names].iter().any(|l| matches!(l, Line::Name(n, _) if *n == name)) {
            self.lines.insert(at + 1 + names, line);
        }
    }

    /// One line each: a tag, the stamp, a tab and the path. `None` when a path holds a newline
    /// (it could not be read back): nothing is kept then.
    fn write(&self, out: &mut Vec<u8>) -> Option<()> {
        use std::os::unix::ffi::OsStrExt;
        for line in &self.lines {
            let (tag, stamp, path) = match line {
                Line::Path(p, s) => ("p", s.clone(), p.as_os_str()),
                Line::Dir(p, id, changed) => ("d", format!("{id} {changed}"), p.as_os_str()),
                Line::Name(n, s) => ("n", s.clone(), n.as_os_str()),
                Line::Entries(p, s) => ("e", s.clone(), p.as_os_str()),
            };
            if path.as_bytes().contains(&b'\n') {
                return None;
            }
            out.extend_from_slice(format!("{tag} {stamp}\t").as_bytes());
            out.extend_from_slice(path.as_bytes());
            out.push(b'\n');
        }
        Some(())
    }
}

/// A record's watched paths, as written: each line a tag (`p` a path, `d` a directory, `n` a
/// name in the directory above it, `e` a directory whose entries count), a stamp, a tab and the
/// path (see [`Watch`]).
pub(crate) struct Watched {
    text: Vec<u8>,
}

impl Watched {
    fn lines(&self) -> impl Iterator<Item = Option<(u8, &str, &Path)>> {
        use std::os::unix::ffi::OsStrExt;
        self.text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|line| {
            let tab = line.iter().position(|b| *b == b'\t')?;
            let head = std::str::from_utf8(line.get(2..tab)?).ok()?;
            Some((line[0], head, Path::new(std::ffi::OsStr::from_bytes(&line[tab + 1..]))))
        })
    }

    /// Whether every path is as it was. A malformed line counts as a change.
    fn unchanged(&self) -> bool {
        let mut dir: Option<(&Path, bool)> = None;
        let mut now = String::with_capacity(64);
        let mut same_stamp = |path: &Path, entries: bool, was: &str| {
            now.clear();
            stamp_into(&mut now, path, entries);
            now == was
        };
        for line in self.lines() {
            let Some((tag, was, path)) = line else { return false };
            let same = match tag {
                b'p' => same_stamp(path, false, was),
                b'e' => same_stamp(path, true, was),
                b'd' => {
                    let Some((id, changed)) = was.split_once(' ') else { return false };
                    let (now_id, now_changed) = dir_stamp(path);
                    dir = Some((path, now_changed == changed));
                    now_id == id
                }
                // Unchanged entries vouch for every name; otherwise each is looked at.
                b'n' => match dir {
                    Some((_, true)) => true,
                    Some((d, false)) => same_stamp(&d.join(path), false, was),
                    None => false,
                },
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

/// A path's identity, followed (mounts and rules follow symbolic links, so the target is what
/// they hold): `-` where it does not exist, else [`stamp_of`]. With `entries`, the change time
/// too: a directory's moves when an entry is made, removed or renamed in it.
fn stamp(p: &Path, entries: bool) -> String {
    let mut out = String::new();
    stamp_into(&mut out, p, entries);
    out
}

fn stamp_into(out: &mut String, p: &Path, entries: bool) {
    use std::fmt::Write;
    let Ok(m) = std::fs::metadata(p) else { return out.push('-') };
    stamp_of(out, &m);
    if entries {
        let _ = write!(out, ".{}.{}", m.ctime(), m.ctime_nsec());
    }
}

/// The inode number and birth time: a path removed and made again may get the same inode
/// number, but not the same birth time (the change time where the file system keeps none).
fn stamp_of(out: &mut String, m: &std::fs::Metadata) {
    use std::fmt::Write;
    let _ = match m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()) {
        // Nanoseconds since the epoch, written as seconds and nine digits (no u128 formatting).
        Some(born) if born.as_secs() > 0 => write!(out, "{}.{}{:09}", m.ino(), born.as_secs(), born.subsec_nanos()),
        Some(born) => write!(out, "{}.{}", m.ino(), born.subsec_nanos()),
        None => write!(out, "{}.c{}.{}", m.ino(), m.ctime(), m.ctime_nsec()),
    };
}

/// A directory's identity and, apart, its change time.
fn dir_stamp(p: &Path) -> (String, String) {
    match std::fs::metadata(p) {
        Ok(m) => {
            let mut id = String::new();
            stamp_of(&mut id, &m);
            (id, format!("{}.{}", m.ctime(), m.ctime_nsec()))
        }
        Err(_) => ("-".into(), "-".into()),
    }
}

/// `agentsh HOLD_MARKER start|hold`: the middle process and the holder (see [`Kept::keep`]).
pub fn hold(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        // The middle process: starts the holder, waits until it is set up (so the record never
        // names a holder still in the agent's session or holding its files), and prints its
        // process ID and pidfd inode (0 where pidfds share one inode, as before pidfs: its own
        // pidfd's is the same then).
        Some("start") => {
            use std::io::Read;
            let holder = Command::new("/proc/self/exe")
                .args([HOLD_MARKER, "hold", args.get(1).map_or("-", String::as_str)])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = holder else { return 1 };
            let mut ready = [0u8; 6];
            let told = child.stdout.take().is_some_and(|mut out| out.read_exact(&mut ready).is_ok());
            if !told || &ready != b"ready\n" {
                return 1;
            }
            let ino = |pid: u32| {
                let pid = rustix::process::Pid::from_raw(pid as i32)?;
                let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
                nix::sys::stat::fstat(&fd).ok().map(|s| s.st_ino)
            };
            let ino = match (ino(child.id()), ino(std::process::id())) {
                (Some(theirs), Some(mine)) if theirs != mine => theirs,
                _ => 0,
            };
            println!("{} {ino}", child.id());
            0
        }
        Some("hold") => {
            // Out of the agent's session and process group, off every directory, and holding
            // no file the agent gave agentsh (one it waits to see closed, say): only the ruleset.
            let keep: Option<i32> = args.get(1).and_then(|fd| fd.parse().ok());
            let _ = nix::unistd::setsid();
            let _ = std::env::set_current_dir("/");
            let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
                .unwrap_or_default();
            for fd in fds.into_iter().filter(|fd| *fd > 2 && Some(*fd) != keep) {
                let _ = nix::unistd::close(fd);
            }
            // Set up: the middle process may now name it. Its standard output, the pipe to the
            // middle process, is closed then.
            use std::io::Write;
            let _ = std::io::stdout().write_all(b"ready\n").and_then(|()| std::io::stdout().flush());
            let _ = nix::unistd::close(1);
            std::thread::sleep(LIFETIME);
            0
        }
        _ => {
            eprintln!("agentsh: internal error: {HOLD_MARKER} needs start or hold");
            126
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// How many holders this test's thread tried to start.
        pub(super) static HOLDERS_STARTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn a_record_that_cannot_be_written_starts_no_holder() {
        // As where the records directory is read-only: a holder started anyway would sleep its
        // two minutes for nothing, one per command.
        let dir = tempfile::tempdir().unwrap();
        let not_a_directory = dir.path().join("box");
        std::fs::write(&not_a_directory, "").unwrap();
        let store = OwnedFd::from(File::open(&not_a_directory).unwrap());
        let ruleset = File::open("/dev/null").unwrap();
        let kept = Kept { dir: not_a_directory, name: "0123456789abcdef".into() };
        kept.keep(store, &Watch::default(), &RootsText::default(), ruleset.as_fd(), 1);
        assert_eq!(HOLDERS_STARTED.with(std::cell::Cell::get), 0);
    }

    fn watched(w: &Watch) -> Watched {
        let mut text = Vec::new();
        w.write(&mut text).unwrap();
        Watched { text }
    }

    #[test]
    fn a_watched_path_that_changes_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let (a, d, missing) = (dir.path().join("a"), dir.path().join("d"), dir.path().join("missing"));
        std::fs::write(&a, "x").unwrap();
        std::fs::create_dir(&d).unwrap();
        let watch = || {
            let mut w = Watch::default();
            w.path(&a);
            w.beneath(&d, true);
            w.path(&missing);
            watched(&w)
        };
        let before = watch();
        assert!(before.unchanged());
        // Written in place: the same file, still covered.
        std::fs::write(&a, "changed").unwrap();
        assert!(before.unchanged());
        // Replaced by rename, as git rewrites .git/config: another file.
        std::fs::write(dir.path().join("a.new"), "y").unwrap();
        std::fs::rename(dir.path().join("a.new"), &a).unwrap();
        assert!(!before.unchanged());
        // Removed and made again: another file, even with the same inode number.
        let before = watch();
        std::fs::remove_file(&a).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(&a, "x").unwrap();
        assert!(!before.unchanged());
        // An entry added where entries count (`~/.ssh`).
        let before = watch();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(d.join("id_new"), "k").unwrap();
        assert!(!before.unchanged());
        // Made since: no longer absent.
        let before = watch();
        std::fs::create_dir(&missing).unwrap();
        assert!(!before.unchanged());
        // A malformed record is a change.
        assert!(!Watched { text: b"p 1.2 no tab\n".to_vec() }.unchanged());
    }

    #[test]
    fn a_path_beneath_a_directory_is_watched_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir(home.join(".config")).unwrap();
        let (aws, gh) = (home.join(".aws"), home.join(".config/gh"));
        let watch = || {
            let mut w = Watch::default();
            w.beneath(&aws, false);
            w.beneath(&home.join(".aws/deeper"), false);
            w.beneath(&gh, false);
            watched(&w)
        };
        let before = watch();
        // Two directories and their names: home (.aws, once) and .config (gh).
        let text = String::from_utf8(before.text.clone()).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        // Another program saves a file in home: home's entries changed, the names did not.
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(home.join(".viminfo"), "x").unwrap();
        assert!(before.unchanged());
        // A denied path made since.
        std::fs::create_dir(&aws).unwrap();
        assert!(!before.unchanged());
        let before = watch();
        std::fs::create_dir(&gh).unwrap();
        assert!(!before.unchanged());
        // A denied path that is a link is watched on its own: its target can change alone.
        let target = home.join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::fs::remove_dir(&aws).unwrap();
        std::os::unix::fs::symlink(&target, &aws).unwrap();
        let before = watch();
        std::fs::remove_dir(&target).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::create_dir(&target).unwrap();
        assert!(!before.unchanged());
    }

    #[test]
    fn a_record_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("r");
        std::fs::write(&record, "12 56 78 6 9\np -\t/nowhere\n").unwrap();
        let r = Record::read(&record).unwrap();
        assert_eq!((r.pid, r.mnt, r.pid_ino, r.ruleset_fd, r.rules), (12, 56, 78, 6, 9));
        assert!(r.watched.unchanged());
        std::fs::write(&record, "12 x\n").unwrap();
        assert!(Record::read(&record).is_none());
    }

    #[test]
    fn the_roots_round_trip_through_a_record() {
        let roots = RootsText {
            writable: vec!["/w".to_string(), "/tmp".into(), "/dev/null".into()].into(),
            write_len: 2,
            read_only: vec!["/w/.git/hooks".into(), "/w/.agents".into()],
            workspace: Some("/w".into()),
        };
        let mut text = b"12 56 78 6 9\n".to_vec();
        write_roots(&roots, &mut text).unwrap();
        text.extend_from_slice(b"p -\t/nowhere\n");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r"), &text).unwrap();
        let r = Record::read(&dir.path().join("r")).unwrap();
        assert_eq!(r.roots.as_ref(), Some(&roots));
        // The watched lines follow, untouched.
        assert_eq!(r.watched.lines().count(), 1);
        // A record without them has none; a root that holds a newline is never written.
        let bare = dir.path().join("bare");
        std::fs::write(&bare, "12 56 78 6 9\np -\t/nowhere\n").unwrap();
        assert_eq!(Record::read(&bare).unwrap().roots, None);
        let odd = RootsText { writable: vec!["/a\nb".to_string()].into(), write_len: 1, ..RootsText::default() };
        assert!(write_roots(&odd, &mut Vec::new()).is_none());
    }

    #[test]
    fn a_record_longer_than_one_read_is_read_whole() {
        // One read fills the first 4 KiB: the rest must still be read, or fewer paths would be
        // vouched for than were recorded.
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("r");
        let lines: String = (0..600).map(|i| format!("p -\t/nowhere/{i:04}\n")).collect();
        assert!(lines.len() > 2 * 4096);
        std::fs::write(&record, format!("12 56 78 6 9\n{lines}")).unwrap();
        let r = Record::read(&record).unwrap();
        assert_eq!(r.watched.lines().count(), 600);
        assert!(r.watched.lines().all(|l| l.is_some()));
    }
}
