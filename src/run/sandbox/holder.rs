//! Boxes, made once and kept for the next commands.
//!
//! Making a box (its namespaces, its view, its Landlock ruleset) costs a few milliseconds, far
//! more than agentsh's budget per command. So the first command with a box starts a builder
//! (`agentsh --agentsh-internal-hold-box build`), which makes the namespaces and the view and
//! leaves a holder in them: PID 1 of the box's PID namespace (`agentsh-box` in `ps`), in a
//! session of its own, holding no file of the agent's but the finished ruleset. Every command
//! with the same box then joins it (`setns` through a pidfd) and takes the ruleset
//! (`pidfd_getfd`) instead.
//!
//! A record in agentsh's state directory (`box/`, which no box can see) names the holder, the
//! box's roots (for the judge and the audit record) and what the view was made from
//! ([`Watch`]): the workspace, its git directory and code paths, the git config files read for
//! them, and the person's toolchains and caches, each through the nearest directory above it. A
//! command joins only while those are unchanged: a `.git/config` replaced by rename (which
//! detaches the read-only mount on the old file), a workspace made again, or a toolchain
//! installed since makes a new box.
//!
//! The record's name hashes everything the box is built from ([`super::spec::key`]): one box
//! per workspace and settings, whichever directory of it a command starts in.
//!
//! The holder reaps the box's orphans and lives while any process is left in the box (a dev
//! server in the background keeps its box); after [`LIFETIME`] with nothing left, it removes its
//! record and exits. A box made from what has changed since is ended with what is left in it by
//! the command that makes the box after it ([`build_past`]: other sandbox settings for the same
//! seat, rt5 B8; a code path bound read-only since, B9; a bound one replaced since, rt6b G2):
//! the holder ends its box when agentsh sends it SIGTERM from outside the box (`end_box`), and
//! by itself as a code path it binds read-only is replaced or removed outside the box (its
//! watch, `gitlinks::Watcher::guard`), which detaches that bind in the box too. A holder that could not watch the git
//! directory for links (no inotify instance left: a box may take only its share,
//! [`InotifyLimits`]), or whose watch cannot cover it (rt5 B2), keeps nothing: its box ends with
//! the command it was made for, or as the watch stops covering it (`hold`). A lock beside each record (`NAME.lock`)
//! orders this: a command holds it shared from finding the record until its child is in the
//! box, a builder exclusively while it builds (so commands that start together agree on one
//! box), and the holder exclusively to leave. A record is read only as a small regular file of this user's, opened without
//! following links or blocking (issue 27: a FIFO or `/dev/zero` in its place).

use super::spec::BoxSpec;
use super::{BoxError, RootsText};
use std::ffi::OsString;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub use crate::model::HOLD_MARKER;

/// How long a holder keeps an idle box for the next commands. A box with a process still in
/// it is kept until that process ends.
pub const LIFETIME: Duration = Duration::from_secs(120);

/// A record is a few kilobytes; more is not a record.
const MAX_RECORD: u64 = 256 * 1024;

/// Where the records of kept boxes, and the boxes' private places, are: `box/` in agentsh's
/// state directory, which no box can see. `None` without a home directory.
pub fn records_dir() -> Option<PathBuf> {
    crate::policy::dirs::state().ok().map(|d| d.join("box"))
}

/// A box kept by a live holder, found unchanged: what a command joins.
pub(crate) struct Kept {
    /// `NAME.lock`, held shared: the holder cannot leave before this command's child is in.
    /// What the holder removed from the git directory is noted in it (`gitlinks::note`).
    lock: File,
    record: Record,
    /// The holder, pinned.
    pidfd: OwnedFd,
}

impl Kept {
    /// The box named `name` in `records`, when its holder is alive and what its record vouches
    /// for is unchanged.
    pub(crate) fn find(records: &Path, name: &str) -> Option<Kept> {
        let lock = open_lock(records, name, false).ok()?;
        lock.lock_shared().ok()?;
        Kept::found(lock, records, name)
    }

    /// With `lock` held: the record, if its holder is alive and it is unchanged.
    fn found(lock: File, records: &Path, name: &str) -> Option<Kept> {
        let record = Record::read(&super::join(records, name))?;
        if record.pid_ino == 0 || !record.watched.unchanged() {
            return None;
        }
        let pidfd = record.holder()?;
        Some(Kept { lock, record, pidfd })
    }

    /// Whether the holder noted links it removed from the git directory since they were last
    /// told (one `fstat` of the lock this command holds anyway).
    pub(crate) fn noted(&self) -> bool {
        self.lock.metadata().is_ok_and(|m| m.len() > 0)
    }

    pub(crate) fn roots(&self) -> &RootsText {
        &self.record.roots
    }

    pub(crate) fn pidfd(&self) -> &OwnedFd {
        &self.pidfd
    }

    /// The holder's process ID, as the record names it.
    pub(crate) fn pid(&self) -> i32 {
        self.record.pid
    }

    /// Whether the holder is still running (a pidfd reads as ready once its process ended).
    pub(crate) fn alive(&self) -> bool {
        let mut fds = [rustix::event::PollFd::new(&self.pidfd, rustix::event::PollFlags::IN)];
        rustix::event::poll(&mut fds, Some(&rustix::event::Timespec::default())).is_ok_and(|n| n == 0)
    }

    /// Where the box's private places are kept outside it, as its record says.
    pub(crate) fn store(&self) -> Option<&Path> {
        self.record.store.as_deref()
    }

    /// The holder's pidfd, and a copy of its ruleset (taken now: after this process joins the
    /// box's user namespace it is no longer in the holder's parent one, which the kernel's
    /// ptrace check for `pidfd_getfd` looks at).
    pub(crate) fn join_parts(&self) -> Result<(&OwnedFd, OwnedFd, usize), BoxError> {
        let flags = rustix::process::PidfdGetfdFlags::empty();
        let ruleset = rustix::process::pidfd_getfd(&self.pidfd, self.record.ruleset_fd, flags).map_err(|e| {
            let why = format!("taking the box's ruleset from its holder: {e}");
            if e == rustix::io::Errno::SRCH { BoxError::Gone(why) } else { BoxError::Failed(why) }
        })?;
        Ok((&self.pidfd, ruleset, self.record.rules))
    }
}

/// Whether the box `name`'s lock holds notes of links a holder removed, where no box of that
/// name is kept (one `statx`, on the slow path: a box is made next).
pub(crate) fn noted(records: &Path, name: &str) -> bool {
    std::fs::symlink_metadata(super::join(records, &format!("{name}.lock"))).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// `NAME.lock` in `records`. Only a box being made (`made`) checks the records directory
/// itself: it is in agentsh's state directory, which is checked once per process and which no
/// one else can write, so nobody else can have made it.
fn open_lock(records: &Path, name: &str, made: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if made {
        dir_ok(records)?;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(super::join(records, &format!("{name}.lock")))
        .and_then(|f| {
            let m = f.metadata()?;
            if !m.is_file() || m.uid() != nix::unistd::geteuid().as_raw() {
                return Err(std::io::Error::other("the box's lock is not a file of this user's"));
            }
            Ok(f)
        })
}

/// The records directory, made 0700 when missing; refused when it is a link, another user's,
/// or open to others (issue 27: a shared `XDG_STATE_HOME`), as agentsh's other private ones.
fn dir_ok(records: &Path) -> std::io::Result<()> {
    crate::policy::dirs::private_dir(records).map_err(std::io::Error::other)
}

/// Makes the box `spec` describes (the slow path) and keeps it: a builder makes it, its holder
/// stays, and the record is written for the next commands. Returns it ready to join. Commands
/// that start together wait for one builder and join its box. Where the box's holder `ended` (a
/// PID) was just found gone, its record is not joined again (its process may still be ending,
/// and read as running for an instant).
///
/// `seat`: the box's seat ([`super::spec::seat`]). A box made before this one that is now stale
/// is ended, with what is left running in it ([`end_stale`]): the box of the same seat made from
/// other settings (rt5 B8), and the box of this name whose record this one replaces where it did
/// not bind read-only a code path this one does (rt5 B9). Any other box is left alone: a dev
/// server keeps running in its box.
pub(crate) fn build_past(spec: &BoxSpec, seat: &str, ended: Option<i32>) -> Result<Kept, BoxError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| BoxError::Failed(format!("{what}: {e}"));
    let lock = open_lock(&spec.records, &spec.name, true).map_err(|e| failed("the sandbox's records", &e))?;
    lock.lock().map_err(|e| failed("locking the sandbox's record", &e))?;
    // Another command built it while this one waited. From exclusive to shared without a
    // moment unlocked in between that a holder could use to leave (flock converts in place).
    let copy = lock.try_clone().map_err(|e| failed("lock", &e))?;
    if let Some(k) = Kept::found(copy, &spec.records, &spec.name).filter(|k| Some(k.record.pid) != ended) {
        lock.lock_shared().map_err(|e| failed("lock", &e))?;
        return Ok(k);
    }
    prune(&spec.records);
    super::stores::mark(&spec.store, &spec.store_for);
    // The box this one replaces: its record is of this name, and its holder still runs.
    let replaced = Record::read(&super::join(&spec.records, &spec.name))
        .filter(|r| Some(r.pid) != ended)
        .and_then(|r| Some((r.holder()?, r)));
    // What the person's git runs from the workspace beyond its git directory's own code paths
    // (`.git` files, `core.hooksPath`, includes, programs settings name): bound read-only too.
    let git = git_code(spec, true);
    // Files of the workspace that are also files outside it, hard links the person's tools made
    // (rt4 R1): git's shared objects made the workspace's own, the link farms copied on write.
    let linked = super::hardlinks::prepare(spec).map_err(BoxError::Failed)?;
    let with_git;
    let spec = if git.bind.is_empty() && linked.is_empty() {
        spec
    } else {
        let mut s = spec.clone();
        s.read_only.extend(git.roots());
        s.linked = linked;
        with_git = s;
        &with_git
    };
    if spec.network == super::Network::Proxy {
        let _ = super::proxy::answers_dir();
    }
    let mut watch = watch(spec);
    for file in &git.read {
        watch.content(file);
    }
    let answer = run_builder(spec)?;
    // What the builder bound beyond what was foreseen (a hook's other name, rt6a X5): watched
    // too, from now.
    for p in &answer.code_paths {
        watch.bound(p);
    }
    // What the environment names that the box does not show (rt5 B6, B11): said once, as the
    // box is made, so a program not found there is explained. Not for a directory inside a
    // temporary place the box has its own of (tools installed under /tmp or /var/tmp): the box
    // never showed the person's copy of those, and the note would be in every new box's first
    // command's output; `agentsh policy` lists them.
    let told = |r: &&super::spec::Refused| {
        super::spec::ENV_DIR_REFUSALS.iter().any(|p| r.why.starts_with(p))
            && !r.why.contains(super::spec::INSIDE_HIDDEN)
    };
    for r in spec.refused.iter().filter(told) {
        eprintln!(
            "agentsh: note: not in the sandbox: {} ({})",
            crate::text::sanitize::sanitize(&crate::text::path(&r.path)),
            crate::text::sanitize::sanitize(&r.why)
        );
    }
    let record = Record {
        pid: answer.pid,
        pid_ino: answer.pid_ino,
        ruleset_fd: answer.ruleset_fd,
        rules: answer.rules,
        roots: RootsText::of(spec),
        store: Some(spec.store.clone()),
        watched: Watched { text: Vec::new() },
    };
    let pidfd = record.holder().ok_or_else(|| BoxError::Failed("the sandbox's holder ended as it started".into()))?;
    if let Some((holder, before)) = &replaced {
        let mut now = answer.code_paths.iter().map(|p| crate::text::path(p));
        if let Some(path) = before.watched.unbound() {
            // Its holder ends it as this happens (`hold`); this is for a holder that missed it.
            let why = format!(
                "{} was replaced or removed since it was made (git rewrites its config so), which undid its \
                 read-only bind there, and a process left in it could write what the person's git runs",
                crate::text::sanitize::sanitize(&crate::text::path(path))
            );
            end_stale(holder, before.pid, &why);
        } else if let Some(path) = now.find(|p| !before.roots.read_only.contains(p)) {
            let why = format!(
                "{} is bound read-only in sandboxes from now on (git runs what is there: a `core.hooksPath` or a \
                 program a git setting names, set since that sandbox was made), and a process left in it could \
                 still write there",
                crate::text::sanitize::sanitize(&path)
            );
            end_stale(holder, before.pid, &why);
        }
    }
    end_other_settings(&spec.records, seat, &spec.name);
    // Kept for the next commands only where the holder can be told from a process that took
    // its ID later (pidfs, Linux 6.9); elsewhere every command makes its own box. Nor where the
    // holder has no watch on the git directory: that box ends with this command (`hold`).
    if answer.overfull {
        eprintln!(
            "agentsh: note: the git directory holds more directories below logs/ (or rebase-merge/, rebase-apply/, \
             sequencer/) than the sandbox's watch for links covers (20000, or 32 levels deep); what this command \
             leaves running ends with it, and its sandbox is not kept\nhint: git makes a directory there only for \
             each part of a branch's name: look at what else is there (ls -R .git/logs | head), and remove it"
        );
    } else if !answer.watched {
        eprintln!(
            "agentsh: note: the sandbox has no watch on the git directory for links (no inotify instance or \
             watch was left: the person's fs.inotify.max_user_instances or max_user_watches is reached, \
             maybe by processes left running in other sandboxes); what this command leaves running ends \
             with it, and its sandbox is not kept\nhint: end what holds them, or raise the limit \
             (`sysctl fs.inotify.max_user_instances=1024`)"
        );
    } else if answer.pid_ino != 0 {
        let _ = write_record(&spec.records, &spec.name, &record, &answer.code_paths, &watch);
    }
    lock.lock_shared().map_err(|e| failed("lock", &e))?;
    Ok(Kept { lock, record, pidfd })
}

/// Ends the box the seat `seat` was last taken by, where it is not `name` and its holder still
/// runs: a box of the same workspace and environment made from other settings (the person
/// changed them since). Then records `name` as the seat's box. Where a box is made (the slow
/// path): a read and a write of a small file in agentsh's records (`seats/SEAT`).
fn end_other_settings(records: &Path, seat: &str, name: &str) {
    let seats = super::join(records, SEATS);
    let file = super::join(&seats, seat);
    let before =
        std::fs::read(&file).ok().filter(|b| b.len() <= 64).map(|b| String::from_utf8_lossy(&b).trim().to_string());
    if let Some(before) = before.filter(|b| b != name && !b.is_empty() && b.bytes().all(|c| c.is_ascii_hexdigit()))
        && let Some(record) = Record::read(&super::join(records, &before))
        && let Some(holder) = record.holder()
    {
        end_stale(
            &holder,
            record.pid,
            "the sandbox settings in agentsh's config changed since it was made (a host denied or a file covered \
             since held nothing back from it)",
        );
    }
    let _ = crate::policy::dirs::private_dir(&seats);
    let tmp = super::join(&seats, &format!("{seat}.tmp"));
    if std::fs::write(&tmp, name).is_ok() {
        let _ = std::fs::rename(&tmp, &file);
    }
}

/// Where the seats are, in agentsh's records: for each, the name of the box last made for it.
const SEATS: &str = "seats";

/// Ends a stale box (`holder`, its process ID `pid`): asks its holder to end it (SIGTERM from
/// outside the box: it ends every process in it and sweeps the git directory, `end_box`), or
/// ends it by force after two seconds. Says so where a process was left in it.
fn end_stale(holder: &OwnedFd, pid: i32, why: &str) {
    use rustix::process::{Signal, pidfd_send_signal};
    let ended = |within: Duration| {
        let mut fds = [rustix::event::PollFd::new(holder, rustix::event::PollFlags::IN)];
        let t = rustix::event::Timespec { tv_sec: within.as_secs() as i64, tv_nsec: within.subsec_nanos() as i64 };
        rustix::event::poll(&mut fds, Some(&t)).is_ok_and(|n| n > 0)
    };
    // The holder's children: what was left in the box (its orphans come to it).
    let left =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).map_or(1, |c| c.split_whitespace().count());
    let _ = pidfd_send_signal(holder, Signal::TERM);
    if !ended(Duration::from_secs(2)) {
        let _ = pidfd_send_signal(holder, Signal::KILL);
        ended(Duration::from_secs(1));
    }
    if left > 0 {
        eprintln!(
            "agentsh: note: ended an older sandbox of this workspace and what was left running in it, because {why}\n\
             hint: start again what should keep running (a dev server, a watcher): it runs with what holds now"
        );
    }
}

/// What the builder printed.
struct Answer {
    pid: i32,
    pid_ino: u64,
    ruleset_fd: i32,
    rules: usize,
    code_paths: Vec<PathBuf>,
    /// The holder watches the git directory for links (or there is none to watch).
    watched: bool,
    /// Its watch could not cover the git directory's directories (rt5 B2).
    overfull: bool,
}

/// Starts the builder with the spec on its standard input and reads its answer.
fn run_builder(spec: &BoxSpec) -> Result<Answer, BoxError> {
    let failed = |e: &dyn std::fmt::Display| BoxError::Failed(format!("starting the sandbox's builder: {e}"));
    let json = serde_json::to_vec(spec).map_err(|e| failed(&e))?;
    let exe = std::fs::read_link("/proc/self/exe").map_err(|e| failed(&e))?;
    let mut child = Command::new(&exe)
        .arg0("agentsh")
        .args([HOLD_MARKER, "build"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .current_dir("/")
        .spawn()
        .map_err(|e| failed(&e))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&json).map_err(|e| failed(&e))?;
    }
    let out = child.wait_with_output().map_err(|e| failed(&e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let parsed = match (out.status.success(), head.as_slice()) {
        (true, [pid, ino, fd, rules, watched @ ("watched" | "unwatched" | "overfull")]) => {
            (|| Some((pid.parse().ok()?, ino.parse().ok()?, fd.parse().ok()?, rules.parse().ok()?, *watched)))()
        }
        _ => None,
    };
    let Some((pid, pid_ino, ruleset_fd, rules, said)) = parsed else {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(BoxError::Failed(if why.is_empty() { "the sandbox's builder failed".into() } else { why }));
    };
    // What the builder could not show, found where it looked (a link on the way, rt5 B6): said
    // once, as the box is made.
    for note in
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.starts_with("agentsh: note: not in the sandbox:"))
    {
        eprintln!("{note}");
    }
    let code_paths = lines.map(PathBuf::from).collect();
    Ok(Answer { pid, pid_ino, ruleset_fd, rules, code_paths, watched: said == "watched", overfull: said == "overfull" })
}

use std::os::unix::process::CommandExt;

fn write_record(records: &Path, name: &str, r: &Record, code_paths: &[PathBuf], watch: &Watch) -> Option<()> {
    use nix::fcntl::OFlag;
    let mut text = format!("{} {} {} {}\n", r.pid, r.pid_ino, r.ruleset_fd, r.rules).into_bytes();
    let mut roots = r.roots.clone();
    roots.read_only = code_paths.iter().map(|p| crate::text::path(p)).collect();
    write_roots(&roots, &mut text)?;
    // The store, where a command finds what the box wrote in its private places without
    // building the spec; left out when it cannot be one line of text (then the spec says it).
    if let Some(store) = r.store.as_deref().and_then(Path::to_str).filter(|s| !s.contains('\n')) {
        text.extend_from_slice(format!("K\t{store}\n").as_bytes());
    }
    watch.write(&mut text)?;
    let tmp = super::join(records, &format!("{name}.{}.tmp", std::process::id()));
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let mut file = File::from(nix::fcntl::open(&tmp, flags, mode).ok()?);
    let done = file.write_all(&text).ok().and_then(|()| std::fs::rename(&tmp, super::join(records, name)).ok());
    if done.is_none() {
        // A failed rename leaves no temp file behind (issue 27).
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Removes the records of holders that have ended, temp files older than a minute, locks of
/// records gone for a day, and the private places of terminals that have closed
/// ([`super::stores`]). Only on the slow path (a box is being made).
fn prune(records: &Path) {
    let Ok(entries) = std::fs::read_dir(records) else { return };
    let mut live = Vec::new();
    let now = std::time::SystemTime::now();
    let age = |m: &std::fs::Metadata| m.modified().ok().and_then(|t| now.duration_since(t).ok()).unwrap_or_default();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else { continue };
        if name.starts_with("w-") || m.is_dir() {
            continue;
        }
        if name.ends_with(".tmp") {
            if age(&m) > Duration::from_secs(60) {
                let _ = std::fs::remove_file(&path);
            }
        } else if let Some(record) = name.strip_suffix(".lock") {
            if !records.join(record).exists() && age(&m) > Duration::from_secs(86_400) {
                let _ = std::fs::remove_file(&path);
            }
        } else {
            match Record::read(&path).filter(|_| m.is_file()) {
                Some(r) if r.holder().is_some() => live.extend(r.store),
                _ => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    super::stores::prune(records, &live);
    // Seats (`end_other_settings`) whose box's record is gone, and their temp files.
    let Ok(seats) = std::fs::read_dir(super::join(records, SEATS)) else { return };
    for e in seats.flatten() {
        let named = std::fs::read_to_string(e.path()).ok().filter(|n| !n.is_empty() && !n.contains('/'));
        if named.is_none_or(|n| !records.join(n.trim()).exists()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The program this process runs, as a file (device, inode, size, change time): a rebuilt or
/// reinstalled agentsh of the same version names its boxes anew, and never joins a holder that
/// still runs the code before it (a fix in the holder would otherwise wait for that holder to
/// end, which a busy agent can put off for as long as it works). One `statx`.
fn running_program() -> Option<(u32, u32, u64, u64, i64, u32)> {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    let mask = StatxFlags::INO | StatxFlags::SIZE | StatxFlags::CTIME;
    let s = statx(CWD, "/proc/self/exe", AtFlags::empty(), mask).ok()?;
    Some((s.stx_dev_major, s.stx_dev_minor, s.stx_ino, s.stx_size, s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec))
}

/// The name of a record: a hash of what the box is built from (see `spec::key`), with agentsh's
/// version, the program file it runs ([`running_program`]) and the user. Paths are gathered into a buffer on the stack and hashed a block at a
/// time: a call per path cost more than the bytes.
pub(crate) struct Key {
    h: std::hash::DefaultHasher,
    block: [u8; 1024],
    len: usize,
}

impl Key {
    pub(crate) fn new() -> Key {
        let mut h = std::hash::DefaultHasher::new();
        (env!("CARGO_PKG_VERSION"), nix::unistd::geteuid().as_raw(), running_program()).hash(&mut h);
        Key { h, block: [0; 1024], len: 0 }
    }

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
    /// The holder's pidfd inode (pidfs), which names the process for the whole boot.
    pid_ino: u64,
    /// The ruleset's descriptor number in the holder.
    ruleset_fd: i32,
    rules: usize,
    /// The box's roots as text, for the judge and the audit record.
    roots: RootsText,
    /// Where the box's private places are kept outside it (the spec's `store`), when recorded.
    store: Option<PathBuf>,
    /// The watched paths, as [`Watch::write`] wrote them.
    watched: Watched,
}

impl Record {
    /// The record at `path`: a regular file of this user's, not writable by others, at most
    /// [`MAX_RECORD`] bytes, opened without following a link or blocking on a FIFO.
    fn read(path: &Path) -> Option<Record> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .ok()?;
        let m = file.metadata().ok()?;
        if !m.is_file() || m.uid() != nix::unistd::geteuid().as_raw() || m.mode() & 0o022 != 0 || m.len() > MAX_RECORD {
            return None;
        }
        let mut text = Vec::with_capacity(m.len() as usize);
        (&mut file).take(MAX_RECORD).read_to_end(&mut text).ok()?;
        Record::parse(text)
    }

    fn parse(mut text: Vec<u8>) -> Option<Record> {
        let newline = text.iter().position(|b| *b == b'\n')?;
        let head = std::str::from_utf8(&text[..newline]).ok()?;
        let mut fields = head.split(' ');
        let mut next = || fields.next();
        let (pid, pid_ino, ruleset_fd, rules) =
            (next()?.parse().ok()?, next()?.parse().ok()?, next()?.parse().ok()?, next()?.parse().ok()?);
        let mut at = newline + 1;
        let (mut writable, mut roots, mut store) = (Vec::new(), RootsText::default(), None);
        while let Some(&tag) = text.get(at)
            && tag.is_ascii_uppercase()
        {
            let end = at + text[at..].iter().position(|b| *b == b'\n')?;
            let line = text.get(at + 2..end).filter(|_| text.get(at + 1) == Some(&b'\t'))?;
            let line = std::str::from_utf8(line).ok()?.to_string();
            match tag {
                b'W' => {
                    writable.push(line);
                    roots.write_len += 1;
                }
                b'V' => writable.push(line),
                b'O' => roots.read_only.push(line),
                b'S' => roots.workspace = Some(line),
                b'K' => store = Some(PathBuf::from(line)),
                _ => return None,
            }
            at = end + 1;
        }
        roots.writable = writable.into();
        Some(Record { pid, pid_ino, ruleset_fd, rules, roots, store, watched: Watched { text: text.split_off(at) } })
    }

    /// The holder, pinned by a pidfd, when it is the process recorded (not another that took its
    /// ID: the pidfd's inode names a process for the whole boot) and still running.
    fn holder(&self) -> Option<OwnedFd> {
        let pid = rustix::process::Pid::from_raw(self.pid)?;
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
        if self.pid_ino != 0 && nix::sys::stat::fstat(&pidfd).ok()?.st_ino != self.pid_ino {
            return None;
        }
        // A pidfd reads as ready once its process has ended.
        let mut fds = [rustix::event::PollFd::new(&pidfd, rustix::event::PollFlags::IN)];
        let ended = rustix::event::poll(&mut fds, Some(&rustix::event::Timespec::default())).ok()? > 0;
        (!ended).then_some(pidfd)
    }
}

/// The roots' lines of a record: `W` a root that writes the person's files (in order), `V` any
/// other the judge counts writable, `O` a code path kept read-only, `S` the workspace; a tab,
/// then the text. `None` when one holds a newline: nothing is kept then.
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

/// [`super::gitcode::find`] for the spec's workspace, with git's settings files where this
/// process's environment puts them. `make_hooks`: a missing `core.hooksPath` in the workspace is
/// made (empty) to be bound.
pub(crate) fn git_code(spec: &BoxSpec, make_hooks: bool) -> super::gitcode::Found {
    let Some(ws) = &spec.workspace else { return Default::default() };
    let globals = super::gitcode::Globals::from_env(&spec.home, |v| std::env::var_os(v));
    super::gitcode::find(ws, &globals, make_hooks)
}

/// What a record vouches for: the view was made from these, and a command joins only while
/// each is as it was (see [`Watch`]).
fn watch(spec: &BoxSpec) -> Watch {
    let mut w = Watch::default();
    for r in &spec.write {
        w.path(&r.path);
    }
    if let Some(git) = &spec.git_dir {
        w.path(git);
        // Each code path the builder binds there, its submodules' and worktrees' too (rt6b G2:
        // `git -C sub config` renames over `modules/sub/config`). Found first: a missing
        // `hooks`, `info` or `modules` is made as they are found, and must be watched as made,
        // or the next command would take it for a change and make another box.
        let mut paths = Vec::new();
        if spec.workspace.is_some() {
            super::view::code_paths(git, &mut paths, 0);
        }
        // A code path replaced by rename (git rewrites `.git/config` so) detaches the read-only
        // mount on the old file; a `commondir` or submodule made since is bound only in a new box.
        for name in ["config", "hooks", "info", "commondir", "config.worktree", "modules", "worktrees"] {
            w.beneath(&super::join(git, name), false);
        }
        for p in paths {
            w.bound(&p);
            // A submodule's git directory made since (the person's `git submodule update
            // --init`): the box must put it back writable, in a new box (rt7 A1).
            if super::view::is_modules(&p) {
                w.beneath(&p, true);
            }
        }
    }
    // The other code paths (`.agents`, `.git` files, what git settings name), wherever they are,
    // and the workspace files home's start-up files link to (an editor saves by rename too).
    for r in &spec.read_only {
        w.bound(&r.path);
    }
    for p in super::view::linked_from_home(spec) {
        w.bound(&p);
    }
    // A package directory made at the workspace's top since (`pnpm install` outside): looked
    // at for hard links in a new box. No call more while the workspace's own change time holds.
    if let Some(ws) = &spec.workspace {
        for name in super::hardlinks::FARMS {
            w.beneath(&super::join(ws, name), false);
        }
    }
    // What is shown of the person's toolchains and caches is not watched: a toolchain installed
    // since shows in the next box (at most LIFETIME away), and nothing it holds is a secret.
    // The agents' snapshot directories, shown as copies, are: a snapshot written for a new
    // session makes a new box, where the agent's wrapper finds it (`super::copies`). git's config,
    // a copy too, shows a change in the next box, as a toolchain does.
    let snapshots = |path: &Path| {
        super::copies::copied(path, &spec.home, &spec.cargo_home) == Some(super::copies::Copied::Snapshots)
    };
    for v in spec.visible.iter().filter(|v| snapshots(&v.path)) {
        w.beneath(&v.path, true);
    }
    for d in &spec.deny {
        // agentsh's own directories where the box cannot see them, now or once they are made (in
        // the private home or runtime directory, and not shown there, a link followed): agentsh
        // makes its runtime and cache directories after the first box, which must still be kept.
        let unseen = d.from == super::Origin::Agentsh && spec.out_of_sight(&super::view::resolve(&d.path));
        if !d.path.to_string_lossy().contains('*') && !unseen {
            w.beneath(&d.path, false);
        }
    }
    w
}

/// The paths a record vouches for, each with its [`stamp`] taken before the view was made.
///
/// - `Path`: checked every time (a root whose identity the view holds).
/// - `Dir` and its `Name`s: a path whose existence or identity the view depends on, through the
///   nearest directory above it that exists: while that directory's change time is the same,
///   no entry in it was made, removed or renamed. When it did change (another program saved a
///   file in home), each name is checked on its own, and the box is still joined if those are
///   unchanged.
/// - `Entries`: a directory any change to whose entries counts, or a file any change to whose
///   content counts (its change time).
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
    /// A code path the box binds read-only, as it was (a link itself): not checked as a command
    /// joins (its `Name` is), but where a new box replaces this one ([`Watched::unbound`]).
    Bound(PathBuf, String),
}

impl Watch {
    /// `path` itself, every time.
    pub(crate) fn path(&mut self, path: &Path) {
        if !self.lines.iter().any(|l| matches!(l, Line::Path(p, _) | Line::Dir(p, ..) if p == path)) {
            self.lines.push(Line::Path(path.to_path_buf(), stamp(path, false)));
        }
    }

    /// A path whose absence or identity the view depends on, through the nearest directory
    /// above it that exists.
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

    /// A code path the box binds read-only: as a path it depends on ([`Watch::beneath`]), and
    /// its identity of now (a link's own), which a new box of this name compares to end this
    /// one where it was replaced since (rt6b G2).
    pub(crate) fn bound(&mut self, path: &Path) {
        self.beneath(path, false);
        if !self.lines.iter().any(|l| matches!(l, Line::Bound(p, _) if p == path)) {
            self.lines.push(Line::Bound(path.to_path_buf(), own_stamp(path)));
        }
    }

    /// A file whose content the view depends on (a git config file): any change to it, made
    /// in place too (an editor's save), counts; where it does not exist, its making does.
    pub(crate) fn content(&mut self, path: &Path) {
        if std::fs::metadata(path).is_err() {
            return self.beneath(path, false);
        }
        if !self.lines.iter().any(|l| matches!(l, Line::Entries(p, _) if p == path)) {
            self.lines.push(Line::Entries(path.to_path_buf(), stamp(path, true)));
        }
    }

    /// One line each: a tag, the stamp, a tab and the path. `None` when a path holds a newline.
    fn write(&self, out: &mut Vec<u8>) -> Option<()> {
        use std::os::unix::ffi::OsStrExt;
        for line in &self.lines {
            let (tag, stamp, path) = match line {
                Line::Path(p, s) => ("p", s.clone(), p.as_os_str()),
                Line::Dir(p, id, changed) => ("d", format!("{id} {changed}"), p.as_os_str()),
                Line::Name(n, s) => ("n", s.clone(), n.as_os_str()),
                Line::Entries(p, s) => ("e", s.clone(), p.as_os_str()),
                Line::Bound(p, s) => ("b", s.clone(), p.as_os_str()),
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

/// A record's watched paths, as written (see [`Watch`]).
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
                b'n' => match dir {
                    Some((_, true)) => true,
                    Some((d, false)) => same_stamp(&d.join(path), false, was),
                    None => false,
                },
                // Checked through its `Name`; compared whole by `unbound`.
                b'b' => true,
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

impl Watched {
    /// A code path the box bound read-only that is no longer what it bound: replaced, removed
    /// or renamed away since, which detached the bind in the box (rt6b G2). A `statx` each; only
    /// where a box is made.
    fn unbound(&self) -> Option<&Path> {
        self.lines().flatten().find(|(tag, was, path)| *tag == b'b' && own_stamp(path) != *was).map(|(.., p)| p)
    }
}

/// [`stamp`] of `p` itself, a link not followed.
fn own_stamp(p: &Path) -> String {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    let mask = StatxFlags::INO | StatxFlags::CTIME | StatxFlags::BTIME;
    match statx(CWD, p, AtFlags::SYMLINK_NOFOLLOW, mask) {
        Ok(s) => {
            let born =
                (s.stx_mask & StatxFlags::BTIME.bits() != 0).then_some((s.stx_btime.tv_sec, s.stx_btime.tv_nsec));
            let t = Times { ino: s.stx_ino, born, changed: (s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec) };
            let mut out = String::new();
            t.identity(&mut out);
            out
        }
        Err(_) => "-".into(),
    }
}

/// A path's identity, followed: `-` where it does not exist, else [`Times::identity`]. With `entries`,
/// the change time too.
fn stamp(p: &Path, entries: bool) -> String {
    let mut out = String::new();
    stamp_into(&mut out, p, entries);
    out
}

fn stamp_into(out: &mut String, p: &Path, entries: bool) {
    use std::fmt::Write;
    let Some(t) = Times::of(p) else { return out.push('-') };
    t.identity(out);
    if entries {
        let _ = write!(out, ".{}.{}", t.changed.0, t.changed.1);
    }
}

/// What a stamp is made of: a path's inode number, birth time and change time, followed.
struct Times {
    ino: u64,
    /// Where the file system keeps it.
    born: Option<(i64, u32)>,
    changed: (i64, u32),
}

impl Times {
    /// From statx, which gives the birth time (std's `Metadata::created` asks statx only when
    /// built with glibc: with musl it has none, and a directory's identity would be its change
    /// time, which moves with every entry made in it). Where statx fails for another reason than
    /// the path (a kernel before 4.11, a filter that refuses it), from stat, without a birth time.
    fn of(p: &Path) -> Option<Times> {
        use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
        use rustix::io::Errno;
        let mask = StatxFlags::INO | StatxFlags::CTIME | StatxFlags::BTIME;
        match statx(CWD, p, AtFlags::empty(), mask) {
            Ok(s) => Some(Times {
                ino: s.stx_ino,
                born: (s.stx_mask & StatxFlags::BTIME.bits() != 0).then_some((s.stx_btime.tv_sec, s.stx_btime.tv_nsec)),
                changed: (s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec),
            }),
            Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS | Errno::LOOP | Errno::NAMETOOLONG) => None,
            Err(_) => std::fs::metadata(p).ok().map(|m| Times {
                ino: m.ino(),
                born: None,
                changed: (m.ctime(), u32::try_from(m.ctime_nsec()).unwrap_or(0)),
            }),
        }
    }

    /// The inode number and birth time: a path removed and made again may get the same inode
    /// number, but not the same birth time (the change time where the file system keeps none).
    fn identity(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = match self.born {
            Some((secs, nanos)) if secs > 0 => write!(out, "{}.{secs}{nanos:09}", self.ino),
            Some((0, nanos)) => write!(out, "{}.{nanos}", self.ino),
            // None, or a birth before 1970 (a clock set back).
            _ => write!(out, "{}.c{}.{}", self.ino, self.changed.0, self.changed.1),
        };
    }
}

/// A directory's identity and, apart, its change time.
fn dir_stamp(p: &Path) -> (String, String) {
    match Times::of(p) {
        Some(t) => {
            let mut id = String::new();
            t.identity(&mut id);
            (id, format!("{}.{}", t.changed.0, t.changed.1))
        }
        None => ("-".into(), "-".into()),
    }
}

// ---------------------------------------------------------------------------------------------
// The builder and the holder

/// `agentsh HOLD_MARKER build`: makes the box described on standard input and leaves its holder;
/// prints `PID PIDFD_INODE RULESET_FD RULES`, then the code paths bound read-only, one a line.
/// Any failure ends it with status 1 and the reason on standard error: nothing is kept then.
pub fn main(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        Some("build") => match builder() {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("{}", crate::text::sanitize::sanitize(&why));
                1
            }
        },
        _ => {
            eprintln!("agentsh: internal error: {HOLD_MARKER} needs build");
            126
        }
    }
}

fn builder() -> Result<(), String> {
    use nix::sched::CloneFlags;
    let mut json = Vec::new();
    std::io::stdin().take(4 * 1024 * 1024).read_to_end(&mut json).map_err(|e| format!("reading the box: {e}"))?;
    let spec: BoxSpec =
        serde_json::from_slice(&json).map_err(|e| format!("the box's description does not read: {e}"))?;
    // The proxy: started first, before the box's namespaces exist, so it stays in this
    // machine's network (and user namespace), and before anything is open that it must not
    // hold; it gets its listening sockets once the box's network is made.
    let proxy = match spec.network {
        super::Network::Proxy => Some(start_proxy(&spec)?),
        _ => None,
    };
    // What the holder keeps to leave cleanly: the record's lock and directory, opened while
    // they are still in sight.
    let lock = open_lock(&spec.records, &spec.name, true).map_err(|e| format!("the box's lock: {e}"))?;
    let records = File::open(&spec.records).map_err(|e| format!("{}: {e}", spec.records.display()))?;
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    let mut flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS;
    if spec.network != super::Network::On {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    // The person's inotify limits, read before the box's user namespace hides them.
    let inotify = InotifyLimits::persons();
    // The agentsh that builds the box: a holder without its watch on the git directory ends the
    // box when it ends (`hold`). Taken before the fork, while it is in sight; a parent gone
    // already (its child re-parented) is none.
    let owner = rustix::process::getppid().and_then(|pid| {
        let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
        (rustix::process::getppid() == Some(pid)).then_some(fd)
    });
    nix::sched::unshare(flags).map_err(|e| format!("cannot make the sandbox's namespaces: unshare: {e}"))?;
    if let Some(ctl) = &proxy {
        listen_for_proxy(ctl)?;
    }
    let write = |file: &str, text: String| std::fs::write(file, text).map_err(|e| format!("{file}: {e}"));
    // Required before gid_map: once in the new namespace, this process has no CAP_SETGID in the
    // parent one, root included.
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    inotify.bound_the_box();
    let made = super::view::make(&spec)?;
    if let Some(ctl) = &proxy {
        proxy_listening(ctl);
    }
    let (ready_r, ready_w) = nix::unistd::pipe().map_err(|e| format!("pipe: {e}"))?;
    // The holder: this process's child, the first in the new PID namespace (its PID 1).
    match super::sys::fork() {
        Ok(nix::unistd::ForkResult::Child) => {
            drop(ready_r);
            // The proxy's lifeline: it ends when the holder does.
            hold(ready_w, &spec, &made.code_paths, lock, records, proxy, owner);
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => {
            drop(ready_w);
            let mut said = String::new();
            File::from(ready_r)
                .read_to_string(&mut said)
                .map_err(|e| format!("the box's holder did not start: {e}"))?;
            let fields: Vec<&str> = said.strip_prefix("ready ").unwrap_or_default().split_whitespace().collect();
            let [ruleset, rules, watched] = fields.as_slice() else {
                return Err(format!("the box's holder did not start: {}", said.trim()));
            };
            let ino = pid_inode(child.as_raw()).unwrap_or(0);
            let mut out = format!("{} {ino} {ruleset} {rules} {watched}\n", child.as_raw());
            for p in &made.code_paths {
                out.push_str(&crate::text::path(p));
                out.push('\n');
            }
            std::io::stdout().write_all(out.as_bytes()).map_err(|e| format!("answering: {e}"))?;
            Ok(())
        }
        Err(e) => Err(format!("starting the box's holder: {e}")),
    }
}

/// Starts the box's proxy (`proxy::serve`) as a process of its own, in this machine's network,
/// and returns the socket it will be sent its listeners on, which is also its lifeline: it ends
/// when every copy of this end is closed (the builder's and its holder's).
fn start_proxy(spec: &BoxSpec) -> Result<OwnedFd, String> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
    let (ours, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
        .map_err(|e| format!("the sandbox's proxy: socketpair: {e}"))?;
    // Made here, outside the box and before the fork: the proxy's own writes are confined.
    let home = spec.kept_at(&spec.home);
    if let Some(home) = &home {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(home);
    }
    let authority = super::proxy::authority(&spec.net, home.as_deref());
    match super::sys::fork() {
        Ok(nix::unistd::ForkResult::Child) => {
            drop(ours);
            super::proxy::detached(theirs, &spec.name, spec.net.clone(), authority)
        }
        Ok(nix::unistd::ForkResult::Parent { .. }) => Ok(ours),
        Err(e) => Err(format!("starting the sandbox's proxy: {e}")),
    }
}

/// Waits (up to two seconds) for the proxy to say it listens for the box's commands' agentsh
/// (`asking`), so that the box's first command can register with it, and takes the word off
/// `ctl`, which the holder then watches only for the proxy's end.
fn proxy_listening(ctl: &OwnedFd) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(ctl.as_fd(), PollFlags::POLLIN)];
    if poll(&mut fds, PollTimeout::from(2000u16)).is_ok_and(|n| n > 0) {
        let mut word = [0u8; 1];
        let _ = nix::sys::socket::recv(ctl.as_raw_fd(), &mut word, nix::sys::socket::MsgFlags::MSG_DONTWAIT);
    }
}

/// In the box's new network: brings its loopback up, listens on the proxy's ports there, and
/// sends the two listening sockets to the proxy over `ctl`.
fn listen_for_proxy(ctl: &OwnedFd) -> Result<(), String> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    super::sys::loopback_up().map_err(|e| format!("bringing up the sandbox's loopback: {e}"))?;
    let listen = |port: u16| {
        std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
            .map_err(|e| format!("the sandbox's proxy cannot listen on 127.0.0.1:{port}: {e}"))
    };
    let (http, socks) = (listen(super::proxy::HTTP_PORT)?, listen(super::proxy::SOCKS_PORT)?);
    let fds = [http.as_raw_fd(), socks.as_raw_fd()];
    let iov = [std::io::IoSlice::new(b"L")];
    sendmsg::<()>(ctl.as_raw_fd(), &iov, &[ControlMessage::ScmRights(&fds)], MsgFlags::empty(), None)
        .map_err(|e| format!("handing the sandbox's proxy its sockets: {e}"))?;
    Ok(())
}

/// The inode of a pidfd of `pid` (pidfs names each process by one), or `None` before pidfs,
/// where every pidfd shares one inode (told by comparing with this process's own).
fn pid_inode(pid: i32) -> Option<u64> {
    let ino = |pid: i32| {
        let fd =
            rustix::process::pidfd_open(rustix::process::Pid::from_raw(pid)?, rustix::process::PidfdFlags::empty())
                .ok()?;
        nix::sys::stat::fstat(&fd).ok().map(|s| s.st_ino)
    };
    match (ino(pid), ino(std::process::id() as i32)) {
        (Some(theirs), Some(mine)) if theirs != mine => Some(theirs),
        _ => None,
    }
}

/// The person's inotify limits: instances and watches, which the kernel counts for their user
/// across every user namespace. A process left in one box took them all, and the next box's
/// holder had no watch on its git directory (rt4 R3); the person's editors and `tail -f` had
/// none either. Each box gets a share of its own (its user namespace's limits, which only its
/// builder can set: a boxed command has no `CAP_SYS_RESOURCE`).
struct InotifyLimits {
    instances: Option<u64>,
    watches: Option<u64>,
}

impl InotifyLimits {
    /// The lower of the machine's limits (`fs.inotify`) and this user namespace's.
    fn persons() -> InotifyLimits {
        let read = |file: &str| std::fs::read_to_string(file).ok()?.trim().parse::<u64>().ok();
        let lower = |a: &str, b: &str| match (read(a), read(b)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        InotifyLimits {
            instances: lower("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances"),
            watches: lower("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"),
        }
    }

    /// Sets the box's user namespace's limits (this process made it): a quarter of the person's
    /// instances (32 of Linux's 128: a dev server's watcher takes one) and half their watches
    /// (one a directory watched). Best effort: a kernel without per-namespace limits (before
    /// 4.9) has no such files, and a holder that gets no watch fails closed anyway (`hold`).
    fn bound_the_box(&self) {
        let limits = [
            ("/proc/sys/user/max_inotify_instances", self.instances.map(|n| box_share(n, 4))),
            ("/proc/sys/user/max_inotify_watches", self.watches.map(|n| box_share(n, 2))),
        ];
        for (file, limit) in limits {
            if let Some(limit) = limit {
                let _ = std::fs::write(file, limit.to_string());
            }
        }
    }
}

/// `1/part` of the person's limit, and at least two (the holder's and one for the box), but
/// never more than the person's own.
fn box_share(person: u64, part: u64) -> u64 {
    (person / part).max(2).min(person)
}

/// Bounds how many processes and threads the box can hold at once, whoever runs it.
/// `RLIMIT_NPROC` (set in every command's child) does not hold for root: the kernel exempts
/// the user root is from it. So the box's PID namespace gets its own `pid_max`, which bounds
/// the process IDs it can hand out, for root too: a fork storm stays in the box. The kernel
/// keeps `pid_max` per PID namespace since Linux 6.14; before that the file is the machine's,
/// which root in the box could otherwise change for every process, so it is left alone there
/// (SECURITY.md says what is then lost).
fn bound_processes() -> Result<(), String> {
    if !per_namespace_pid_max(nix::sys::utsname::uname().ok().as_ref().map(|u| u.release().to_string_lossy())) {
        return Ok(());
    }
    // After the first wrap the kernel hands out IDs from 300 up (its reserved range).
    let max = super::spawn::MAX_PROCESSES + 300;
    std::fs::write("/proc/sys/kernel/pid_max", max.to_string())
        .map_err(|e| format!("bounding the box's processes (/proc/sys/kernel/pid_max): {e}"))
}

/// Whether a kernel of this release keeps `pid_max` per PID namespace (Linux 6.14 and later).
fn per_namespace_pid_max(release: Option<impl AsRef<str>>) -> bool {
    let Some(release) = release else { return false };
    let mut parts = release.as_ref().split(['.', '-', '+']).map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (6, 14),
        _ => false,
    }
}

/// The holder: PID 1 of the box. Out of the agent's session, off every directory, holding no
/// file but the ruleset and what it needs to leave; it mounts the box's `/proc`, makes the
/// box's ruleset (last: Landlock's rules hold for what is mounted when they are made, not for a
/// mount put on top later), reaps the box's orphans, and leaves once [`LIFETIME`] has passed
/// and no other process is in the box. It tells its builder `ready FD RULES WATCHED`, or why
/// not.
///
/// Without its watch on the git directory (no inotify instance or watch left), it keeps no
/// process past the command it was made for: when `owner` (the agentsh that built it) ends, it
/// ends every process in the box, removes the links they made ([`super::gitlinks::last_sweep`])
/// and leaves. Its record is not written either (`build_past`), so no other command joins it.
fn hold(
    ready: OwnedFd,
    spec: &BoxSpec,
    bound: &[PathBuf],
    lock: File,
    records: File,
    proxy: Option<OwnedFd>,
    owner: Option<OwnedFd>,
) -> ! {
    use nix::mount::{MsFlags, mount};
    let fail = |why: String| -> ! {
        let _ = nix::unistd::write(&ready, why.as_bytes());
        std::process::exit(1);
    };
    let _ = nix::unistd::setsid();
    let _ = std::env::set_current_dir("/");
    let _ = rustix::thread::set_name(c"agentsh-box");
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    if let Err(e) = mount(Some("proc"), "/proc", Some("proc"), flags, None::<&str>) {
        fail(format!("mounting the box's /proc: {e}"));
    }
    // The box's /proc lists the box's processes alone, but these files tell of the whole machine:
    // the names of the person's keys (`keys`, `key-users`: the filter keeps their contents),
    // the names and process IDs of the person's processes waiting on timers (`timer_list`), the
    // kernel's memory. Covered with an empty file, as container runtimes do; a kernel without
    // one has nothing to cover.
    let mut cover = super::view::Cover::default();
    for file in PROC_COVERED {
        if let Err(e) = cover.cover(Path::new(file)) {
            fail(e);
        }
    }
    if let Err(e) = bound_processes() {
        fail(e);
    }
    let (ruleset, rules) = match super::rules::ruleset(spec) {
        Ok(r) => r,
        Err(e) => fail(e.to_string()),
    };
    let name = spec.name.as_str();
    let ruleset = ruleset.as_raw_fd();
    let lifeline = proxy.as_ref().map_or(-1, |p| p.as_raw_fd());
    let owner_fd = owner.as_ref().map_or(-1, |p| p.as_raw_fd());
    let keep = [ruleset, ready.as_raw_fd(), lock.as_raw_fd(), records.as_raw_fd(), lifeline, owner_fd];
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    for fd in fds.into_iter().filter(|fd| !keep.contains(fd)) {
        let _ = nix::unistd::close(fd);
    }
    // Links made in the git directory, removed as they appear (rt3 G1): a process left in the
    // box can make one at any time, after its command's own sweep.
    let notes = || records.try_clone().ok().map(|r| (OwnedFd::from(r), name.to_string()));
    // A watch that could not cover every directory below `logs/` (and the like) is none: a link
    // made in one it missed would stay (rt5 B2). The same watch guards the code paths bound
    // read-only (rt6b G2): one it cannot guard is none either.
    let git = spec.workspace.as_ref().and(spec.git_dir.as_deref());
    let (mut links, unwatched, why) = if git.is_none() && bound.is_empty() {
        (None, false, "watched")
    } else {
        match super::gitlinks::Watcher::new(git, notes()).and_then(|mut w| w.guard(bound).map(|()| w)) {
            Ok(w) if w.complete() => (Some(w), false, "watched"),
            Ok(_) => (None, true, "overfull"),
            Err(_) => (None, true, "unwatched"),
        }
    };
    let unwatched = unwatched.then_some(git);
    // Without the watch the box ends with the agentsh that made it; with no way to tell when
    // that is, it is not made.
    let owner = match (unwatched, owner) {
        (None, _) => None,
        (Some(_), Some(owner)) => Some(owner),
        (Some(_), None) => fail("the box's holder has no watch on the git directory, nor its builder's end".into()),
    };
    let born = std::time::SystemTime::now();
    // SIGCHLD, and SIGTERM: a command that finds this box made from settings or code paths
    // that have changed since asks it to end (`end_stale`). Blocked, a PID 1 gets it.
    let mut chld = nix::sys::signal::SigSet::empty();
    chld.add(nix::sys::signal::Signal::SIGCHLD);
    chld.add(nix::sys::signal::Signal::SIGTERM);
    let _ = chld.thread_block();
    let flags = nix::sys::signalfd::SfdFlags::SFD_NONBLOCK | nix::sys::signalfd::SfdFlags::SFD_CLOEXEC;
    let signals = nix::sys::signalfd::SignalFd::with_flags(&chld, flags).ok();
    let _ = nix::unistd::write(&ready, format!("ready {ruleset} {rules} {why}\n").as_bytes());
    drop(ready);
    let started = std::time::Instant::now();
    let mut proxy = proxy;
    loop {
        if let Some(s) = &signals {
            let mut fds = vec![nix::poll::PollFd::new(s.as_fd(), nix::poll::PollFlags::POLLIN)];
            if let Some(w) = &links {
                fds.push(nix::poll::PollFd::new(w.fd(), nix::poll::PollFlags::POLLIN));
            }
            if let Some(p) = &proxy {
                fds.push(nix::poll::PollFd::new(p.as_fd(), nix::poll::PollFlags::POLLIN));
            }
            if let Some(o) = &owner {
                fds.push(nix::poll::PollFd::new(o.as_fd(), nix::poll::PollFlags::POLLIN));
            }
            let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(5000u16));
            let at = usize::from(links.is_some());
            let ready_at = |i: usize| fds.get(i).and_then(|f| f.revents()).is_some_and(|r| !r.is_empty());
            let proxy_gone = proxy.is_some() && ready_at(1 + at);
            let linked = at == 1 && ready_at(1);
            let owner_gone = owner.is_some() && ready_at(1 + at + usize::from(proxy.is_some()));
            drop(fds);
            if let (true, Some(git)) = (owner_gone, unwatched) {
                end_box(git, born, notes(), None);
            }
            if let (true, Some(w)) = (linked, links.as_mut()) {
                w.handle();
                // The watch no longer covers the git directory (a process of the box made more
                // directories than it takes): the box ends now, the links swept (rt5 B2).
                if !w.complete() {
                    end_box(git, born, notes(), Some(OVERFULL));
                }
            }
            // A code path bound read-only was replaced outside the box (the person's git
            // rewrote `.git/config`): its bind is gone in the box too, so the box ends now,
            // before a process left in it writes there (rt6b G2).
            // Told only where a process was left in it (the person's own `git config` with
            // nothing running there ends a box no one misses).
            if let Some(path) = links.as_ref().and_then(|w| w.replaced()) {
                let said = (!alone()).then(|| replaced_note(path));
                end_box(git, born, notes(), said.as_deref());
            }
            while let Ok(Some(info)) = s.read_signal() {
                // Sent from outside the box (no process ID in it): agentsh, ending a stale box.
                if info.ssi_signo == libc::SIGTERM as u32 && info.ssi_pid == 0 {
                    end_box(git, born, notes(), None);
                }
            }
            if proxy_gone {
                // The box's only way out is gone (its proxy was killed): no new command joins it.
                // Its record goes, so the next command makes a new box with a new proxy; the
                // commands in this one go on, without a network, and the holder leaves with them.
                proxy = None;
                let _ = nix::unistd::unlinkat(&records, name, nix::unistd::UnlinkatFlags::NoRemoveDir);
                if alone() && leave(&lock, &records, name) {
                    std::process::exit(0);
                }
            }
        } else if let (Some(o), Some(git)) = (&owner, unwatched) {
            let mut fds = [nix::poll::PollFd::new(o.as_fd(), nix::poll::PollFlags::POLLIN)];
            if nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(5000u16)).is_ok_and(|n| n > 0) {
                end_box(git, born, notes(), None);
            }
        } else {
            std::thread::sleep(Duration::from_secs(5));
        }
        // Orphans of the box come to PID 1: reap them.
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
        let orphaned = proxy.is_none() && spec.network == super::Network::Proxy;
        if (started.elapsed() >= LIFETIME || orphaned) && alone() && leave(&lock, &records, name) {
            std::process::exit(0);
        }
    }
}

/// Files of the box's /proc covered with an empty one ([`hold`]).
const PROC_COVERED: &[&str] = &[
    "/proc/keys",
    "/proc/key-users",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/latency_stats",
    "/proc/kcore",
];

/// What the holder notes in the box's lock when its watch stops covering the git directory,
/// for the next command to say (`gitlinks::Sweep::messages`).
const OVERFULL: &str = "agentsh: the git directory came to hold more directories (below logs/, rebase-merge/, \
    rebase-apply/ or sequencer/) than the sandbox's watch for links covers (20000, or 32 levels deep), most likely \
    made by a process left in the sandbox, so the sandbox was ended with every process in it and its links swept; \
    look at what is there (ls -R .git/logs | head)";

/// What the holder notes in the box's lock when a code path it binds read-only was replaced
/// outside it, for the next command to say.
fn replaced_note(path: &Path) -> String {
    format!(
        "agentsh: {} was replaced or removed outside the sandbox (git rewrites its config so: `git config`, \
         `git push -u`, `git remote add`; an editor saves a file so), which undoes the sandbox's read-only bind of \
         it, so the sandbox was ended with every process in it; start again what should keep running (a dev \
         server, a watcher)",
        crate::text::sanitize::sanitize(&crate::text::path(path))
    )
}

/// The end of a box: every other process in it ended (the kernel ends what this PID 1 leaves
/// behind anyway), then the links they made in the git directory `git` removed, `said` noted in
/// the box's lock for the next command to tell, and the holder gone. When the agentsh that made
/// a box without a watch ended, when the watch stopped covering the git directory (rt5 B2), and
/// when agentsh asks (a box made from what has changed since, rt5 B8, B9).
fn end_box(git: Option<&Path>, born: std::time::SystemTime, notes: Option<(OwnedFd, String)>, said: Option<&str>) -> ! {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    // -1 from PID 1: every process of its PID namespace but itself.
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(-1), nix::sys::signal::Signal::SIGKILL);
    let until = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < until {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(5)),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if let (Some(text), Some((records, name))) = (said, &notes) {
        super::gitlinks::note(records.as_fd(), name, &[text.to_string()]);
    }
    if let Some(git) = git {
        super::gitlinks::last_sweep(git, born, notes);
    }
    std::process::exit(0)
}

/// No process but this one in the box's PID namespace (its `/proc` lists only the box's).
fn alone() -> bool {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()) && n != "1"))
                .count()
                == 0
        })
        .unwrap_or(false)
}

/// Takes the record's lock without waiting (a command is joining: stay), removes the record if
/// it still names this holder, and says whether to leave.
fn leave(lock: &File, records: &File, name: &str) -> bool {
    // Held until this process exits: a command that waits for it then finds the holder gone.
    // The record names this holder by its PID in the parent namespace, which it cannot see: it
    // is removed once it names no live process, by the next command (`prune`).
    let _ = (records, name);
    lock.try_lock().is_ok()
}

#[cfg(test)]
mod tests {
    use super::{Watch, Watched, box_share, per_namespace_pid_max};

    /// rt6b G2: a record tells a bound code path replaced since (by rename, as git rewrites its
    /// config), which a command then joins no more, and a new box ends the old one for.
    #[test]
    fn a_record_tells_a_bound_code_path_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(&config, "[core]\n").unwrap();
        let mut w = Watch::default();
        w.bound(&config);
        let mut text = Vec::new();
        w.write(&mut text).unwrap();
        let watched = Watched { text };
        assert!(watched.unchanged() && watched.unbound().is_none());
        std::fs::write(&config, "[core]\n\tx = y\n").unwrap();
        assert!(watched.unchanged() && watched.unbound().is_none(), "written in place: the bind holds");
        std::fs::write(dir.path().join("config.lock"), "[core]\n").unwrap();
        std::fs::rename(dir.path().join("config.lock"), &config).unwrap();
        assert!(!watched.unchanged());
        assert_eq!(watched.unbound(), Some(config.as_path()));
    }

    #[test]
    fn a_box_gets_its_share_of_the_persons_inotify_limits() {
        assert_eq!(box_share(128, 4), 32, "Linux's default instances");
        assert_eq!(box_share(65536, 2), 32768);
        assert_eq!(box_share(5, 4), 2, "the holder's and one more");
        assert_eq!(box_share(1, 4), 1, "never more than the person's");
    }

    #[test]
    fn pid_max_is_set_only_where_the_kernel_keeps_one_per_namespace() {
        for r in ["6.14.0", "6.18.0-1-cloud-amd64", "7.0", "6.14-rc1", "10.1.2"] {
            assert!(per_namespace_pid_max(Some(r)), "{r}");
        }
        for r in ["6.13.7", "5.15.0-91-generic", "6", "", "six.fourteen"] {
            assert!(!per_namespace_pid_max(Some(r)), "{r}");
        }
        assert!(!per_namespace_pid_max(None::<&str>));
    }
}
