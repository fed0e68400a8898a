//! How the box's proxy asks about a new host in the same channels as a command: it asks the
//! agentsh that is running the command (the one waiting for it outside the box), which draws
//! the question on the person's terminal or puts it in `agentsh approvals`, as it would a
//! command's, and saves an "always".
//!
//! Before the command starts, its agentsh listens on a socket of its own in agentsh's records
//! (`asks/<id>`, the command's record id `<hex ms>-<pid>`, which the box's proxy settings carry),
//! a place no box can see. The proxy connects to it, writes `host port`, and reads `once`,
//! `always`, `refused` or `no <why>`. No signal is sent to anyone.
//!
//! Each side checks the other before a byte is written ([`peer_outside`]): the same user, in
//! this process's own PID namespace, which no process of a box is (a box has a PID namespace of
//! its own, below the person's). The proxy also wants the very agentsh the id names (its process
//! ID). So a process in the box that could reach the socket (or bind one under an id it chose)
//! can neither answer a question nor put one, and a process ID the box names is never
//! signalled. Whatever went wrong before a checked agentsh answered, the proxy says the same
//! ([`NO_ONE`]): the box learns nothing of the processes outside it.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the proxy waits to hand its question over (the agentsh reads it at once).
const HAND_OVER: Duration = Duration::from_secs(3);

/// The proxy's one refusal for every case where the command's agentsh could not be asked: the
/// id names no command, its agentsh has ended, or whoever listens is not that agentsh.
pub const NO_ONE: &str = "the agentsh that ran the command could not be asked (it has ended, or the connection \
                          named no command that is waiting), so no one was asked";

/// Who asks the person about a host (`host`, `port`) for the command's agentsh.
pub type AskHost<'a> = &'a dyn Fn(&str, u16) -> Answer;

/// A person's answer about one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Once,
    Always,
    /// The person said no.
    Refused,
    /// No one said yes: why.
    No(String),
}

impl Answer {
    fn line(&self) -> String {
        match self {
            Answer::Once => "once\n".into(),
            Answer::Always => "always\n".into(),
            Answer::Refused => "refused\n".into(),
            Answer::No(why) => format!("no {}\n", why.replace(['\n', '\r'], " ")),
        }
    }

    fn read(line: &str) -> Answer {
        match line.trim_end() {
            "once" => Answer::Once,
            "always" => Answer::Always,
            "refused" => Answer::Refused,
            other => Answer::No(other.strip_prefix("no ").unwrap_or("it was not approved").to_string()),
        }
    }
}

fn dir(records: &Path) -> PathBuf {
    records.join("asks")
}

/// `name` in the directory `at`, as a path short enough for a socket's address (108 bytes): the
/// records of a deep home are longer.
fn short(at: &std::fs::File, name: &str) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}/{name}", at.as_raw_fd()))
}

/// The process ID in a record id, when it is one.
fn pid_of(id: &str) -> Option<i32> {
    let (_, pid) = id.split_once('-')?;
    pid.parse().ok().filter(|p| *p > 1)
}

/// A socket name for the record id `id`: its own characters only (`<hex>-<digits>`), never a
/// path.
fn name_for(id: &str) -> Option<&str> {
    (!id.is_empty() && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then_some(id)
}

/// The process at the other end of `sock`, by its ID here, when it is outside every box: the
/// same user as this process, and in this process's own PID namespace. Every process of a box
/// is in the box's PID namespace, below the person's, where it has a second ID (`NSpid`), so
/// none passes. The peer is looked at through the pidfd the kernel took when it connected or
/// listened (`SO_PEERPIDFD`, Linux 6.5), so an ID reused since cannot stand in for it; before
/// 6.5, through its ID.
pub(crate) fn peer_outside(sock: &UnixStream) -> Option<i32> {
    use nix::sys::socket::{getsockopt, sockopt};
    let cred = getsockopt(sock, sockopt::PeerCredentials).ok()?;
    if cred.uid() != nix::unistd::geteuid().as_raw() {
        return None;
    }
    let ids = match getsockopt(sock, sockopt::PeerPidfd) {
        Ok(pidfd) => ns_pids(&format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd()))?,
        Err(_) => ns_pids(&format!("/proc/{}/status", cred.pid()))?,
    };
    let own = ns_pids("/proc/self/status")?;
    (ids.len() == own.len() && ids.first() == Some(&cred.pid()) && cred.pid() > 0).then_some(cred.pid())
}

/// The `NSpid:` line of a `status` or a pidfd's `fdinfo`: the process's ID in each PID namespace
/// from /proc's own down to its own (`-1` for a process that has ended).
fn ns_pids(path: &str) -> Option<Vec<i32>> {
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(8192).read_to_string(&mut text).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    line.split_whitespace().map(|n| n.parse().ok()).collect::<Option<Vec<i32>>>().filter(|ids| !ids.is_empty())
}

/// The proxy's side: asks the command `id`'s agentsh about `host:port` and waits up to `wait`
/// for the person's answer. Never a yes without that agentsh's word, and never a word to
/// anyone else.
pub fn ask(records: &Path, id: &str, host: &str, port: u16, wait: Duration) -> Answer {
    let answer = (|| {
        let pid = pid_of(id)?;
        let at = std::fs::File::open(dir(records)).ok()?;
        let stream = UnixStream::connect(short(&at, name_for(id)?)).ok()?;
        // Checked before the question is written: one that is not the agentsh named learns
        // nothing, not even the host.
        if peer_outside(&stream) != Some(pid) {
            return None;
        }
        stream.set_write_timeout(Some(HAND_OVER)).ok()?;
        stream.set_read_timeout(Some(wait)).ok()?;
        (&stream).write_all(format!("{host} {port}\n").as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new((&stream).take(4096)).read_line(&mut line).ok()?;
        (!line.is_empty()).then(|| Answer::read(&line))
    })();
    answer.unwrap_or_else(|| Answer::No(NO_ONE.to_string()))
}

/// The command's agentsh's side: the socket it waits for the proxy's questions on, from before
/// the command starts until it ends (then removed).
pub struct Questions {
    listener: UnixListener,
    path: PathBuf,
}

impl Questions {
    /// Listens for the proxy's questions about the command `id` (its record id), in `records`.
    pub fn listen(records: &Path, id: &str) -> std::io::Result<Questions> {
        let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let name = name_for(id).ok_or_else(invalid)?;
        let dir = dir(records);
        std::fs::create_dir_all(&dir)?;
        let at = std::fs::File::open(&dir)?;
        let path = short(&at, name);
        let _ = std::fs::remove_file(&path);
        // Close-on-exec (std's sockets are): the command never holds it.
        let listener = UnixListener::bind(&path)?;
        listener.set_nonblocking(true)?;
        Ok(Questions { listener, path: dir.join(name) })
    }

    /// What to poll: readable when a question waits.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }

    /// Answers every question waiting with `decide(host, port)`, each only to the box's proxy
    /// (a process outside the box: [`peer_outside`]); any other connection is closed unread.
    pub fn answer(&self, decide: AskHost<'_>) {
        for _ in 0..64 {
            let Ok((stream, _)) = self.listener.accept() else { return };
            if peer_outside(&stream).is_none() {
                continue;
            }
            // Blocking already (an accepted socket does not take the listener's flag), and
            // no ioctl here: this process is under the box's seccomp filter by now.
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
            let mut line = String::new();
            if BufReader::new((&stream).take(512)).read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(host), Some(Ok(port))) = (parts.next(), parts.next().map(str::parse::<u16>)) else { continue };
            // The proxy checked it; a name that is no host (a pattern such as `*.com`, which an
            // "always" would save to sandbox.allowHosts) is never put to the person.
            let said = match super::proxy::host_name(host) {
                Some(h) if h == host && port > 0 => decide(host, port),
                _ => Answer::No(format!("{} is not a host name", crate::text::sanitize::sanitize(host))),
            };
            let _ = (&stream).write_all(said.line().as_bytes());
        }
    }
}

impl Drop for Questions {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_back() {
        for a in [Answer::Once, Answer::Always, Answer::Refused, Answer::No("no one answered in time".into())] {
            assert_eq!(Answer::read(&a.line()), a);
        }
        assert_eq!(pid_of("19ab-4242"), Some(4242));
        assert_eq!(pid_of("19ab-1"), None, "never init");
        assert_eq!(pid_of("19ab"), None);
        assert_eq!(name_for("19ab-42"), Some("19ab-42"));
        for bad in ["", "../x", "a/b", "19ab-42\n"] {
            assert_eq!(name_for(bad), None, "{bad:?}");
        }
    }

    fn records(what: &str) -> PathBuf {
        std::env::temp_dir().join(format!("agentsh-asking-{what}-{}", std::process::id()))
    }

    #[test]
    fn with_no_agentsh_behind_the_id_no_one_is_asked_and_every_case_reads_the_same() {
        let dir = records("none");
        // A process that has ended (the test's own child, reaped), one that lives but listens
        // nowhere (this test), and no process ID at all: one answer for all.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        for id in [format!("1-{}", child.id()), format!("1-{}", std::process::id()), "1".to_string()] {
            assert_eq!(ask(&dir, &id, "example.com", 443, Duration::from_secs(1)), Answer::No(NO_ONE.into()), "{id}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The whole round: the agentsh listens, the proxy asks, the answer comes back; both ends
    /// here are this process, outside every box, and the id names it.
    #[test]
    fn the_commands_agentsh_answers_the_proxy() {
        let dir = records("round");
        let id = format!("19ab-{}", std::process::id());
        let questions = Questions::listen(&dir, &id).unwrap();
        let asked = std::thread::spawn({
            let (dir, id) = (dir.clone(), id.clone());
            move || ask(&dir, &id, "example.com", 8443, Duration::from_secs(5))
        });
        let mut fds = [nix::poll::PollFd::new(questions.fd(), nix::poll::PollFlags::POLLIN)];
        nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(5000u16)).unwrap();
        let seen = std::cell::RefCell::new(Vec::new());
        questions.answer(&|host, port| {
            seen.borrow_mut().push((host.to_string(), port));
            Answer::Once
        });
        assert_eq!(asked.join().unwrap(), Answer::Once);
        assert_eq!(*seen.borrow(), [("example.com".to_string(), 8443)]);
        // Another process's id: this agentsh is not the one it names, so the proxy puts nothing.
        let other = format!("19ab-{}", std::process::id() + 1);
        std::fs::rename(dir.join("asks").join(&id), dir.join("asks").join(&other)).unwrap();
        assert_eq!(ask(&dir, &other, "example.com", 443, Duration::from_secs(1)), Answer::No(NO_ONE.into()));
        drop(questions);
        let _ = std::fs::remove_dir_all(dir);
    }
}
