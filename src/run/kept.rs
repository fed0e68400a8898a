//! The sandbox's namespaces, kept between commands.
//!
//! Making a user and mount namespace and its mounts costs about 0.2-0.3 ms per command (the
//! namespaces, the uid and gid maps, a dozen mounts, and tearing them all down at exit), more
//! than agentsh's whole budget for the box (docs/BENCHMARKS.md). So the first boxed command in
//! a place leaves a holder process in the namespaces it made (`agentsh` asleep, in a session of
//! its own, holding no file), and later commands with the same box join them with two `setns`
//! calls instead. The holder exits after [`LIFETIME`]; the next command then makes them again.
//!
//! A record in agentsh's state directory (which no boxed command can read or write) names the
//! holder and what the mounts were made from: for each path the mounts cover or keep read-only
//! (denied paths, `.git/hooks`, `.git/config`, `.agents`), its inode and change time, or its
//! absence. A command joins only when those are unchanged, so a denied path made since (a new
//! `~/.aws`, a new key in `~/.ssh`), or a file replaced by rename (git rewrites `.git/config`
//! so, which detaches the mount on the old one), makes the namespaces again. It also joins only
//! the namespaces the record names (their inode numbers), never another process's that reused
//! the holder's process ID.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub use crate::model::HOLD_MARKER;

/// How long a holder keeps its namespaces. Commands already in them keep them as long as they
/// run; a holder only saves the next command the cost of making them.
pub const LIFETIME: Duration = Duration::from_secs(120);

/// The namespaces a box would join or keep: where their record is, and what it must say.
pub(crate) struct Kept {
    dir: PathBuf,
    name: String,
    /// What the mounts were made from, as [`snapshot`] writes it.
    snapshot: String,
}

impl Kept {
    /// `None` when the spec keeps nothing (no records directory).
    pub(crate) fn new<'a>(
        spec: &super::sandbox::BoxSpec,
        paths: impl Iterator<Item = (&'a Path, bool)>,
        absent: impl Fn(&Path) -> bool,
    ) -> Option<Kept> {
        let dir = spec.keep.clone()?;
        Some(Kept { dir, name: format!("{:016x}", key(spec)), snapshot: snapshot(paths, absent) })
    }

    /// Joins the kept namespaces when the record matches; `false` leaves this process as it was.
    /// Joining moves the working directory to `/`: the caller changes back, by path.
    /// Single-threaded callers only (a user namespace cannot be joined otherwise).
    pub(crate) fn join(&self) -> bool {
        let Some(record) = Record::read(&self.dir.join(&self.name)) else { return false };
        if record.snapshot != self.snapshot {
            return false;
        }
        let Some(pid) = rustix::process::Pid::from_raw(record.pid) else { return false };
        let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else { return false };
        // The process behind that ID, pinned by the pidfd, is the holder only if it is in the
        // recorded mount namespace: another may have reused the ID.
        match std::fs::metadata(format!("/proc/{}/ns/mnt", record.pid)) {
            Ok(m) if m.ino() == record.mnt => {}
            _ => return false,
        }
        // Both namespaces at once, or neither (setns with a pidfd is atomic).
        use rustix::thread::ThreadNameSpaceType as Ns;
        let join = || {
            rustix::thread::move_into_thread_name_spaces(pidfd.as_fd(), Ns::USER | Ns::MOUNT)
                .map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error()))
        };
        super::sandbox::alone(join).is_ok()
    }

    /// Opens the records directory before the mounts cover it (it is one of agentsh's own).
    pub(crate) fn store(&self) -> Option<std::os::fd::OwnedFd> {
        use nix::fcntl::OFlag;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir).ok()?;
        nix::fcntl::open(
            &self.dir,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .ok()
    }

    /// Leaves a holder in this process's (new) namespaces and records it. Best effort: without a
    /// holder the next command makes its own namespaces.
    pub(crate) fn keep(&self, store: std::os::fd::OwnedFd) {
        let _ = self.try_keep(store);
    }

    fn try_keep(&self, store: std::os::fd::OwnedFd) -> Option<()> {
        use nix::fcntl::OFlag;
        use std::io::Write;
        let mnt = std::fs::metadata("/proc/self/ns/mnt").ok()?.ino();
        // Through a middle process that exits at once, so the holder is nobody's child: not the
        // command's, which could otherwise reap it with its own.
        let out = Command::new("/proc/self/exe")
            .args([HOLD_MARKER, "start"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let pid: u32 = std::str::from_utf8(&out.stdout).ok()?.trim().parse().ok()?;
        let text = format!("{pid} {mnt}\n{}\n", self.snapshot);
        let tmp = format!("{}.{}.tmp", self.name, std::process::id());
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        let fd = nix::fcntl::openat(&store, tmp.as_str(), flags, mode).ok()?;
        File::from(fd).write_all(text.as_bytes()).ok()?;
        nix::fcntl::renameat(&store, tmp.as_str(), &store, self.name.as_str()).ok()
    }
}

/// Which namespaces a box may join: the same agentsh, user and spec (its paths hashed as bytes;
/// `Path`'s own hash parses components, which costs more than the rest of the key).
fn key(spec: &super::sandbox::BoxSpec) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let mut h = std::hash::DefaultHasher::new();
    (env!("CARGO_PKG_VERSION"), nix::unistd::geteuid().as_raw()).hash(&mut h);
    let path = |h: &mut std::hash::DefaultHasher, p: &Path| {
        h.write(p.as_os_str().as_bytes());
        h.write_u8(0);
    };
    for r in spec.read.iter().chain(&spec.write).chain(&spec.devices).chain(&spec.outputs).chain(&spec.read_only) {
        path(&mut h, &r.path);
    }
    for d in &spec.deny {
        path(&mut h, &d.path);
        d.except.hash(&mut h);
    }
    for p in [&spec.workspace].into_iter().chain(&spec.home) {
        path(&mut h, p);
    }
    let lengths = [&spec.read, &spec.write, &spec.devices, &spec.outputs, &spec.read_only].map(Vec::len);
    (lengths, spec.deny.len(), spec.network, spec.keep_terminal, spec.require_namespaces).hash(&mut h);
    h.finish()
}

/// What a record says.
struct Record {
    pid: i32,
    mnt: u64,
    snapshot: String,
}

impl Record {
    fn read(path: &Path) -> Option<Record> {
        let text = std::fs::read_to_string(path).ok()?;
        let (head, rest) = text.split_once('\n')?;
        let (pid, mnt) = head.split_once(' ')?;
        let (pid, mnt) = (pid.parse().ok()?, mnt.parse().ok()?);
        Some(Record { pid, mnt, snapshot: rest.trim_end_matches('\n').to_string() })
    }
}

/// For each path, `-` where it does not exist, or its identity: the inode number and birth time
/// (a path removed and made again may get the same inode number, but not the same birth time;
/// the change time where the file system keeps no birth time). With `entries`, the change time
/// too: a directory's moves when an entry is added, removed or renamed in it (`~/.ssh`, whose
/// entries are covered one by one).
fn snapshot<'a>(paths: impl Iterator<Item = (&'a Path, bool)>, absent: impl Fn(&Path) -> bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (p, entries) in paths {
        if !out.is_empty() {
            out.push(' ');
        }
        // Followed: mounts follow symbolic links, so the target is what they cover.
        let Some(m) = (!absent(p)).then(|| std::fs::metadata(p).ok()).flatten() else {
            out.push('-');
            continue;
        };
        let born = m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        let _ = match born {
            Some(b) => write!(out, "{}.{}", m.ino(), b.as_nanos()),
            None => write!(out, "{}.c{}.{}", m.ino(), m.ctime(), m.ctime_nsec()),
        };
        if entries && born.is_some() {
            let _ = write!(out, ".{}.{}", m.ctime(), m.ctime_nsec());
        }
    }
    out
}

/// `agentsh HOLD_MARKER start|hold`: the middle process and the holder (see [`Kept::keep`]).
pub fn hold(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        Some("start") => {
            let holder = Command::new("/proc/self/exe")
                .args([HOLD_MARKER, "hold"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            match holder {
                Ok(child) => {
                    println!("{}", child.id());
                    0
                }
                Err(_) => 1,
            }
        }
        Some("hold") => {
            // Out of the agent's session and process group, off every directory, and holding
            // no file the agent gave agentsh (one it waits to see closed, say).
            let _ = nix::unistd::setsid();
            let _ = std::env::set_current_dir("/");
            let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
                .unwrap_or_default();
            for fd in fds.into_iter().filter(|fd| *fd > 2) {
                let _ = nix::unistd::close(fd);
            }
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

    #[test]
    fn a_record_round_trips_and_a_changed_path_changes_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let (a, d, missing) = (dir.path().join("a"), dir.path().join("d"), dir.path().join("missing"));
        std::fs::write(&a, "x").unwrap();
        std::fs::create_dir(&d).unwrap();
        let paths = [(a.as_path(), false), (d.as_path(), true), (missing.as_path(), false)];
        let snap = || snapshot(paths.iter().copied(), |_| false);
        let before = snap();
        assert!(before.ends_with(" -"), "{before}");
        assert_eq!(snap(), before);
        // Written in place: the same file, still covered.
        std::fs::write(&a, "changed").unwrap();
        assert_eq!(snap(), before);
        // Replaced by rename, as git rewrites .git/config: another file.
        std::fs::write(dir.path().join("a.new"), "y").unwrap();
        std::fs::rename(dir.path().join("a.new"), &a).unwrap();
        assert_ne!(snap(), before);
        // Removed and made again: another file, even with the same inode number.
        let before = snap();
        std::fs::remove_file(&a).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(&a, "x").unwrap();
        assert_ne!(snap(), before);
        // An entry added where entries count (`~/.ssh`).
        let before = snap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(d.join("id_new"), "k").unwrap();
        assert_ne!(snap(), before);
        // Made since: no longer absent.
        let before = snap();
        std::fs::create_dir(&missing).unwrap();
        assert_ne!(snap(), before);
        // A path known absent is not looked at.
        assert_eq!(snapshot(paths.iter().copied(), |_| true), "- - -");

        let record = dir.path().join("r");
        std::fs::write(&record, format!("12 56\n{before}\n")).unwrap();
        let r = Record::read(&record).unwrap();
        assert_eq!((r.pid, r.mnt, r.snapshot.as_str()), (12, 56, before.as_str()));
        std::fs::write(&record, "12 x\n").unwrap();
        assert!(Record::read(&record).is_none());
    }
}
