//! The pending-approval queue: request and answer files in a per-user runtime directory, so a
//! person can answer from another terminal with no daemon running. It owns the file protocol;
//! it must not judge commands, decide what an answer means, or draw anything.
//!
//! The protocol (README, "Approving from another terminal"):
//! - The directory is `$XDG_RUNTIME_DIR/agentsh`, else `~/.local/state/agentsh/queue`. It is created 0700 and
//!   refused when it is a symlink, not owned by this user, or open to the group or others.
//! - A waiting agentsh writes `ID.json` (0600): a temp file it has already locked (flock,
//!   exclusive) is renamed into place, and the lock is held until the wait ends. A request whose
//!   lock can be taken has no waiter (it was killed): it is stale, reported as expired once and
//!   removed. IDs are 12 random hex digits, so concurrent waiters never collide.
//! - An answer is `ID.answer`, written by `agentsh approve`/`deny` to a temp file and linked into
//!   place (never over an earlier answer). The waiter is woken by inotify on the directory (or,
//!   past the user's inotify limit, looks every [`POLL`]), reads it, marks it read-only (taken),
//!   and removes both files when it is done. An answer
//!   counts while the waiter is there, or when it was taken; otherwise it is taken back.
//! - Each `agentsh approvals` UI holds a shared lock on `watcher`: a headless agentsh waits in the
//!   queue while someone holds it.
//! - Every file read must be a regular file owned by this user, opened without following links.

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Request and answer files larger than this are not ours: ignored.
const MAX_FILE: u64 = 256 * 1024;
/// How often a waiter that cannot watch the queue (inotify) looks for its answer.
pub const POLL: std::time::Duration = std::time::Duration::from_millis(100);
const WATCHER: &str = "watcher";

/// One pending request, as stored in `ID.json`. Text fields are sanitized when written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub id: String,
    pub command: String,
    pub cwd: String,
    /// "moderate" or "high".
    pub risk: String,
    pub category: String,
    pub reasons: Vec<String>,
    /// Whitelist entries "always" may add, longest first; empty: no "always".
    #[serde(default)]
    pub always: Vec<String>,
    /// The waiting agentsh.
    pub pid: u32,
    /// Its parent (normally the agent): pid and program name.
    pub parent: Parent,
    /// The session id of the waiting agentsh (`getsid`).
    pub session: i32,
    /// Seconds since the Unix epoch.
    pub time: u64,
    /// Milliseconds since the Unix epoch: the order of arrival, also within one second (0 in
    /// requests written before it was recorded: `time` then).
    #[serde(default)]
    pub time_ms: u64,
    /// When the wait times out (seconds since the epoch); `None` while paused (waits for resume).
    pub expires: Option<u64>,
    /// Waiting because the person paused the agent, not because the command needs approval.
    #[serde(default)]
    pub paused: bool,
    /// Where a yes runs the command: in the sandbox, or outside it and why.
    #[serde(default)]
    pub sandbox: String,
    /// The approval code for a high-risk command. Shown only in the `agentsh approvals` UI,
    /// never in `--json`, which an agent may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl Request {
    /// When it arrived, in milliseconds: the order requests are listed in.
    pub fn arrival(&self) -> u64 {
        if self.time_ms > 0 { self.time_ms } else { self.time.saturating_mul(1000) }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parent {
    pub pid: u32,
    pub name: String,
}

/// An answer, as stored in `ID.answer`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    pub answer: Verdict,
    /// For `Always`: the whitelist entry, one of the request's `always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// For a high-risk request: the code the person was shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// For `Deny`: what the person wants the agent to know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Once,
    Always,
    Deny,
}

/// A request found by [`list`]: `live` while its waiter holds the lock.
#[derive(Clone, Debug)]
pub struct Listed {
    pub request: Request,
    pub live: bool,
}

pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Where the queue is: `$XDG_RUNTIME_DIR/agentsh`, else `queue` in agentsh's state directory.
/// Never in /tmp, which sandboxed commands may write (run/sandbox.rs denies this directory).
pub fn path() -> Option<PathBuf> {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| Path::new(v).is_absolute()) {
        Some(run) => Some(PathBuf::from(run).join("agentsh")),
        None => crate::policy::dirs::state_dir().map(|s| s.join("queue")),
    }
}

/// The queue directory, created if missing and checked (`policy::dirs::private_dir`, shared
/// with the state directory). `Err` says why it cannot be used.
pub fn dir() -> Result<PathBuf, String> {
    let path = path().ok_or("no runtime or home directory to keep it in")?;
    // Kept in the state directory (no runtime directory): that must be the user's own too.
    if crate::policy::dirs::state_dir().is_some_and(|state| path.starts_with(state)) {
        crate::policy::dirs::state()?;
    } else if let Some(why) = crate::policy::dirs::home().and_then(|h| crate::policy::dirs::box_writable(&path, h)) {
        // A box that writes the queue answers its own requests (rt6b G1's kind).
        return Err(format!(
            "{}: {why}, where a command in the sandbox could write it: point XDG_RUNTIME_DIR at a directory of your \
             own outside any git repository",
            crate::text::sanitize::sanitize(&path.display().to_string())
        ));
    }
    crate::policy::dirs::private_dir(&path)?;
    Ok(path)
}

/// True for the ids agentsh makes: 12 lowercase hex digits. Anything else is never a path.
pub fn valid_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn new_id() -> io::Result<String> {
    let bytes = crate::ask::prompt::urandom::<6>()?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Opens a file without following links or blocking, and checks it is a regular file of ours
/// and not too large to be ours.
pub(crate) fn open_owned(path: &Path) -> io::Result<File> {
    let opened = crate::policy::files::open(path, crate::policy::files::Links::Refuse)?.owned()?;
    if opened.meta.len() > MAX_FILE {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "not a file of this user's"));
    }
    Ok(opened.file)
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> io::Result<T> {
    parse_json(&open_owned(path)?)
}

fn parse_json<T: for<'de> Deserialize<'de>>(file: &File) -> io::Result<T> {
    let mut text = String::new();
    file.take(MAX_FILE).read_to_string(&mut text)?;
    serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes a temp file (0600), fsyncs it, and returns it with its path. With `lock`, it is
/// locked before anything is written, so it is never seen unlocked under its final name.
pub(crate) fn write_temp(dir: &Path, name: &str, bytes: &[u8], lock: bool) -> io::Result<(File, PathBuf)> {
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)?;
    let written = (|| {
        if lock {
            file.lock()?;
        }
        file.write_all(bytes)?;
        file.sync_all()
    })();
    match written {
        Ok(()) => Ok((file, tmp)),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A request this process registered and waits on. Dropping it withdraws the request.
#[derive(Debug)]
pub struct Pending {
    dir: PathBuf,
    request: Request,
    /// Holds the exclusive flock that marks the request live.
    _lock: File,
    /// Wakes the waiter when the queue changes; `None` past the user's inotify limit (about
    /// 118 waiters with the default 128 instances, issue 27): the waiter then polls.
    inotify: Option<Inotify>,
}

impl Pending {
    /// Registers `request` under a fresh id (the `id` field is replaced).
    pub fn register(dir: &Path, mut request: Request) -> Result<Pending, String> {
        reap_stale(dir);
        request.id = new_id().map_err(|e| format!("cannot make a request id: {e}"))?;
        // Watch before the request is visible, so no answer can slip in unseen. Without a watch
        // the waiter looks for its answer every `POLL` instead: slower, never refused.
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok().filter(|i| {
            i.add_watch(dir, AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_CREATE)
                .is_ok()
        });
        let text = serde_json::to_vec_pretty(&request).map_err(|e| e.to_string())?;
        let name = format!("{}.json", request.id);
        let (lock, tmp) = write_temp(dir, &name, &text, true).map_err(|e| format!("cannot write a request: {e}"))?;
        if let Err(e) = fs::rename(&tmp, dir.join(&name)) {
            let _ = fs::remove_file(&tmp);
            return Err(format!("cannot write a request: {e}"));
        }
        Ok(Pending { dir: dir.to_path_buf(), request, _lock: lock, inotify })
    }

    pub fn id(&self) -> &str {
        &self.request.id
    }

    /// A descriptor that becomes readable when something in the queue changes; `Err` when the
    /// queue cannot be watched ([`Pending::polled`]).
    pub fn wake_fd(&self) -> io::Result<OwnedFd> {
        match &self.inotify {
            Some(i) => i.as_fd().try_clone_to_owned(),
            None => Err(io::Error::other("the approval queue is not watched (inotify)")),
        }
    }

    /// Whether the waiter must look for its answer every [`POLL`]: no inotify watch.
    pub fn polled(&self) -> bool {
        self.inotify.is_none()
    }

    /// Drains change notifications and returns the answer, if one has arrived. An unreadable
    /// answer (not ours, not JSON) is ignored: the wait goes on, and times out as a no.
    pub fn take_reply(&self) -> Option<Reply> {
        while let Some(Ok(events)) = self.inotify.as_ref().map(Inotify::read_events) {
            if events.is_empty() {
                break;
            }
        }
        let file = open_owned(&self.dir.join(format!("{}.answer", self.request.id))).ok()?;
        let reply = parse_json(&file).ok()?;
        // Taken: the answerer may look only after this request has ended (see `settle`).
        let _ = file.set_permissions(fs::Permissions::from_mode(0o400));
        Some(reply)
    }
}

impl Drop for Pending {
    /// Ends the request so that no answer can be given to it after this (issue 17, item 7):
    /// while the lock is still held, an answer file is put in place if none is (so a late
    /// `agentsh approve` finds it answered), then the request goes, then the answer. An answer
    /// linked in between finds no live request and takes itself back (see [`answer`]).
    fn drop(&mut self) {
        let id = &self.request.id;
        let answer = self.dir.join(format!("{id}.answer"));
        if let Ok((_, tmp)) = write_temp(&self.dir, &format!("{id}.answer"), b"{\"answer\":\"deny\"}", false) {
            let _ = fs::hard_link(&tmp, &answer);
            let _ = fs::remove_file(tmp);
        }
        let _ = fs::remove_file(self.dir.join(format!("{id}.tries")));
        let _ = fs::remove_file(self.dir.join(format!("{id}.json")));
        let _ = fs::remove_file(answer);
    }
}

/// Every request in the queue, oldest first. Stale requests (their waiter is gone) are
/// returned once with `live: false` and removed.
pub fn list(dir: &Path) -> io::Result<Vec<Listed>> {
    list_with(dir, &record_abandoned)
}

/// [`list`], with what to do for each abandoned request it reaps.
fn list_with(dir: &Path, abandoned: &dyn Fn(&Request)) -> io::Result<Vec<Listed>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")).filter(|id| valid_id(id)) else {
            continue;
        };
        let path = dir.join(&name);
        let Ok(request) = read_json::<Request>(&path) else { continue };
        if request.id != id {
            continue;
        }
        let Ok(file) = open_owned(&path) else { continue };
        let live = match file.try_lock() {
            Ok(()) => false,
            Err(fs::TryLockError::WouldBlock) => true,
            Err(fs::TryLockError::Error(_)) => continue,
        };
        if !live && !reap(dir, &path, &request, abandoned) {
            // Someone else reaped it first: it is theirs to report.
            continue;
        }
        out.push(Listed { request, live });
    }
    out.sort_by(|a, b| (a.request.arrival(), &a.request.id).cmp(&(b.request.arrival(), &b.request.id)));
    Ok(out)
}

/// Claims a request whose waiter is gone (only one of several concurrent listers can rename it
/// away), has its "abandoned" audit record written, and removes it. Returns false when another
/// process claimed it first. Issue 14: a waiter killed by SIGKILL writes nothing itself, so
/// without this the trail would not show that the command was asked about.
fn reap(dir: &Path, path: &Path, request: &Request, abandoned: &dyn Fn(&Request)) -> bool {
    let claimed = dir.join(format!(".{}.reaped.{}", request.id, std::process::id()));
    if fs::rename(path, &claimed).is_err() {
        return false;
    }
    abandoned(request);
    let _ = fs::remove_file(dir.join(format!("{}.answer", request.id)));
    let _ = fs::remove_file(&claimed);
    true
}

/// The audit record of an abandoned request.
fn record_abandoned(request: &Request) {
    let record = crate::record::audit::AbandonedRequest {
        request_id: &request.id,
        command: &request.command,
        cwd: &request.cwd,
        risk: &request.risk,
        category: &request.category,
        reasons: &request.reasons,
        pid: request.pid,
        parent_pid: request.parent.pid,
        parent_name: &request.parent.name,
        asked: request.time,
    };
    if let Err(why) = crate::record::audit::abandoned(&record) {
        eprintln!(
            "agentsh: warning: cannot record abandoned request {}: {}",
            request.id,
            crate::text::sanitize::sanitize(&why)
        );
    }
}

/// Reaps requests whose waiter is gone (see [`reap`]): every agentsh that registers a request,
/// and `agentsh log`, do it, so an abandoned request is recorded without anyone opening
/// `agentsh approvals`.
pub fn reap_stale(dir: &Path) {
    let _ = list(dir);
}

/// The live request `id`, or why it cannot be answered.
pub fn find(dir: &Path, id: &str) -> Result<Request, String> {
    if !valid_id(id) {
        return Err(format!(
            "`{}` is not a request id (12 hex digits, see `agentsh approvals`)",
            crate::text::sanitize::sanitize(id)
        ));
    }
    match list(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?.into_iter().find(|l| l.request.id == id)
    {
        Some(l) if l.live => Ok(l.request),
        Some(_) => Err(format!("request {id} has expired: the agentsh that asked is gone")),
        None => Err(format!("there is no pending request {id}; it may have been answered or timed out")),
    }
}

/// Writes the answer to request `id`. Fails if it was already answered, or if the request
/// ended without taking it.
pub fn answer(dir: &Path, id: &str, reply: &Reply) -> Result<(), String> {
    let given = give(dir, id, reply)?;
    settle(dir, id, &given)
}

/// Links the answer into place, never over an earlier one. Returns it, kept open: the waiter
/// marks the answer it takes (see [`settle`]).
fn give(dir: &Path, id: &str, reply: &Reply) -> Result<File, String> {
    if !valid_id(id) {
        return Err(format!("`{}` is not a request id", crate::text::sanitize::sanitize(id)));
    }
    let text = serde_json::to_vec_pretty(reply).map_err(|e| e.to_string())?;
    let name = format!("{id}.answer");
    let (given, tmp) = write_temp(dir, &name, &text, false).map_err(|e| format!("cannot write the answer: {e}"))?;
    // link, not rename: it never replaces an answer someone else gave first.
    let linked = fs::hard_link(&tmp, dir.join(&name));
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(given),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(format!("request {id} was already answered")),
        Err(e) => Err(format!("cannot write the answer: {e}")),
    }
}

/// Whether the answer `given` counts. It does while the request's waiter is there, and after
/// it when the waiter took it (it marks the answer it reads read-only, [`Pending::take_reply`]):
/// a waiter can read the answer, act on it and end before this looks. Otherwise the waiter
/// ended before the answer was linked, so nobody reads it: it is taken back and not reported
/// given.
fn settle(dir: &Path, id: &str, given: &File) -> Result<(), String> {
    let live = File::open(dir.join(format!("{id}.json")))
        .map(|f| matches!(f.try_lock(), Err(fs::TryLockError::WouldBlock)))
        .unwrap_or(false);
    let taken = || given.metadata().is_ok_and(|m| m.permissions().mode() & 0o200 == 0);
    if live || taken() {
        return Ok(());
    }
    let path = dir.join(format!("{id}.answer"));
    let ours = |m: fs::Metadata| given.metadata().is_ok_and(|g| g.ino() == m.ino() && g.dev() == m.dev());
    if fs::symlink_metadata(&path).is_ok_and(ours) {
        let _ = fs::remove_file(&path);
    }
    Err(format!("request {id} was already answered or has ended"))
}

/// Counts a wrong approval code typed for request `id` (one byte appended to `ID.tries`, which
/// the waiter removes), and returns how many there have been.
pub fn wrong_code(dir: &Path, id: &str) -> Result<u64, String> {
    use std::io::Write;
    if !valid_id(id) {
        return Err(format!("`{}` is not a request id", crate::text::sanitize::sanitize(id)));
    }
    let path = dir.join(format!("{id}.tries"));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("cannot count the tries: {e}"))?;
    f.write_all(b"x").map_err(|e| format!("cannot count the tries: {e}"))?;
    f.metadata().map(|m| m.len()).map_err(|e| format!("cannot count the tries: {e}"))
}

/// True while an `agentsh approvals` UI is open (it holds a shared lock on `watcher`).
pub fn watched(dir: &Path) -> bool {
    let Ok(file) = open_owned(&dir.join(WATCHER)) else { return false };
    matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock))
}

/// A lock file of the queue directory, opened read-write (created 0600 if missing), never
/// through a symbolic link.
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
}

/// Marks the queue as watched for as long as the returned file is open.
pub fn watch(dir: &Path) -> io::Result<File> {
    let path = dir.join(WATCHER);
    let file = open_lock_file(&path)?;
    file.lock_shared()?;
    Ok(file)
}

/// A descriptor that becomes readable when anything in the queue directory changes.
pub fn watch_changes(dir: &Path) -> io::Result<Inotify> {
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
    inotify.add_watch(
        dir,
        AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_CLOSE_WRITE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_CREATE,
    )?;
    Ok(inotify)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            id: String::new(),
            command: "git push".into(),
            cwd: "/p".into(),
            risk: "moderate".into(),
            category: "dev_ops".into(),
            reasons: vec!["publishes commits".into()],
            always: vec!["git push".into()],
            pid: std::process::id(),
            parent: Parent { pid: 1, name: "init".into() },
            session: 1,
            time: now_secs(),
            time_ms: now_secs() * 1000,
            expires: Some(now_secs() + 60),
            paused: false,
            sandbox: String::new(),
            code: None,
        }
    }

    fn private_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        fs::set_permissions(d.path(), fs::Permissions::from_mode(0o700)).unwrap();
        d
    }

    #[test]
    fn a_registered_request_is_listed_answered_and_withdrawn() {
        let d = private_dir();
        let p = Pending::register(d.path(), request()).unwrap();
        assert!(valid_id(p.id()));
        let listed = list(d.path()).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].live);
        assert_eq!(p.take_reply(), None);
        let reply = Reply { answer: Verdict::Once, entry: None, code: None, message: None };
        answer(d.path(), p.id(), &reply).unwrap();
        // A second answer never replaces the first.
        let deny = Reply { answer: Verdict::Deny, entry: None, code: None, message: None };
        assert!(answer(d.path(), p.id(), &deny).unwrap_err().contains("already answered"));
        assert_eq!(p.take_reply(), Some(reply));
        drop(p);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_answer_the_waiter_took_counts_though_the_waiter_ended_first() {
        // The waiter reads the answer, acts and ends between the link and the answerer's look.
        let d = private_dir();
        let p = Pending::register(d.path(), request()).unwrap();
        let id = p.id().to_string();
        let reply = Reply { answer: Verdict::Once, entry: None, code: None, message: None };
        let given = give(d.path(), &id, &reply).unwrap();
        assert_eq!(p.take_reply(), Some(reply.clone()));
        drop(p);
        assert_eq!(settle(d.path(), &id, &given), Ok(()));
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
        // A waiter that ended without reading it: the answer is taken back and not counted.
        let p = Pending::register(d.path(), request()).unwrap();
        let id = p.id().to_string();
        drop(p);
        let given = give(d.path(), &id, &reply).unwrap();
        assert!(settle(d.path(), &id, &given).unwrap_err().contains("has ended"));
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_request_without_its_waiter_is_expired_once_then_gone() {
        let d = private_dir();
        let mut r = request();
        r.id = "0123456789ab".into();
        // Written as a killed waiter leaves it: in place, with no lock held.
        fs::write(d.path().join("0123456789ab.json"), serde_json::to_vec(&r).unwrap()).unwrap();
        let seen = std::cell::RefCell::new(Vec::new());
        let record = |r: &Request| seen.borrow_mut().push(r.id.clone());
        let listed = list_with(d.path(), &record).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(!listed[0].live);
        // Recorded once as abandoned (issue 14), then gone for every later reader.
        assert_eq!(*seen.borrow(), ["0123456789ab"]);
        assert!(list_with(d.path(), &record).unwrap().is_empty());
        assert_eq!(seen.borrow().len(), 1);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn ids_are_checked_before_they_touch_a_path() {
        for bad in ["../../etc/x", "0123456789AB", "0123", "", "0123456789ab/"] {
            assert!(!valid_id(bad), "{bad}");
        }
        let d = private_dir();
        let reply = Reply { answer: Verdict::Once, entry: None, code: None, message: None };
        assert!(answer(d.path(), "../evil", &reply).is_err());
    }

    #[test]
    fn watched_only_while_a_ui_holds_the_lock() {
        let d = private_dir();
        assert!(!watched(d.path()));
        let w = watch(d.path()).unwrap();
        assert!(watched(d.path()));
        drop(w);
        assert!(!watched(d.path()));
    }

    #[test]
    fn concurrent_requests_are_answered_separately() {
        let d = private_dir();
        let a = Pending::register(d.path(), request()).unwrap();
        let b = Pending::register(d.path(), request()).unwrap();
        assert_ne!(a.id(), b.id());
        let deny = Reply { answer: Verdict::Deny, entry: None, code: None, message: Some("use make".into()) };
        answer(d.path(), b.id(), &deny).unwrap();
        assert_eq!(a.take_reply(), None);
        assert_eq!(b.take_reply(), Some(deny));
    }
}
