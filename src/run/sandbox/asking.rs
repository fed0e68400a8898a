//! How the box's proxy asks about a new host in the same channels as a command: it asks the
//! agentsh that is running the command (the one waiting for it outside the box), which draws
//! the question on the person's terminal or puts it in `agentsh approvals`, as it would a
//! command's, and saves an "always".
//!
//! Before the command starts, its agentsh connects to the box's proxy on a socket the proxy
//! listens on in agentsh's records (`asks/<box name>`), a place no box can see, and names its
//! command (its record id, `<hex ms>-<pid>`, which the box's proxy settings carry). That
//! connection is the question's way: the proxy writes `host port` on it, and the agentsh, which
//! polls it while it waits for the command, answers `once`, `always`, `refused` or `no <why>`. No
//! signal is sent to anyone, and the agentsh listens on nothing.
//!
//! Each side checks the other ([`peer_outside`]): the same user, in this process's own PID
//! namespace, which no process of a box is (a box has a PID namespace of its own, below the
//! person's). The proxy also takes a registration only from the very agentsh the id names (its
//! process ID). So a process of the box that could reach the socket can neither take a
//! command's questions nor answer them, and a process ID the box names is never signalled.
//! Whatever went wrong before a registered agentsh answered, the proxy says the same
//! ([`NO_ONE`]): the box learns nothing of the processes outside it. And only the commands of
//! this box are asked: the proxy asks no agentsh that did not register with it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a question or an answer may take to be written, and a registration to be read
/// (the other side reads and writes at once).
const HAND_OVER: Duration = Duration::from_secs(2);

/// The proxy's one refusal for every case where the command's agentsh could not be asked: the
/// id names no command, its agentsh has ended, or whoever registered it is not that agentsh.
pub const NO_ONE: &str = "the agentsh that ran the command could not be asked (it has ended, or the connection \
                          named no command of this sandbox that is waiting), so no one was asked";

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
        Err(nix::errno::Errno::ENOPROTOOPT) => ns_pids(&format!("/proc/{}/status", cred.pid()))?,
        // It has ended (its ID may be another's by now).
        Err(_) => return None,
    };
    // A process's own PID namespace never changes (joining a box's changes its children's).
    static OWN: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let own = (*OWN.get_or_init(|| ns_pids("/proc/self/status").map(|ids| ids.len())))?;
    (ids.len() == own && ids.first() == Some(&cred.pid()) && cred.pid() > 0).then_some(cred.pid())
}

/// The `NSpid:` line of a `status` or a pidfd's `fdinfo`: the process's ID in each PID namespace
/// from /proc's own down to its own (`-1` for a process that has ended).
fn ns_pids(path: &str) -> Option<Vec<i32>> {
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(8192).read_to_string(&mut text).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    line.split_whitespace().map(|n| n.parse().ok()).collect::<Option<Vec<i32>>>().filter(|ids| !ids.is_empty())
}

/// The socket of the box `name`'s proxy in `records`.
fn socket_of(records: &Path, name: &str) -> PathBuf {
    dir(records).join(name)
}

/// `path` as a socket's address: as it is, or through a descriptor of its directory where it
/// is longer than an address holds (108 bytes; the records of a deep home are). The directory,
/// when opened, is returned to be kept until the address is used.
fn address(path: &Path) -> std::io::Result<(nix::sys::socket::UnixAddr, Option<std::fs::File>)> {
    use nix::sys::socket::UnixAddr;
    if let Ok(addr) = UnixAddr::new(path) {
        return Ok((addr, None));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    let at = std::fs::File::open(parent)?;
    Ok((UnixAddr::new(&short(&at, name))?, Some(at)))
}

/// The proxy's side: the socket the commands' agentsh register on, and who registered.
pub struct Registry {
    listener: UnixListener,
    path: PathBuf,
    /// Accepted, their id not read yet (an agentsh writes it as it connects, before its command
    /// starts, so it is there before any question for that command can come).
    pending: Mutex<Vec<UnixStream>>,
    /// Each waiting command's agentsh, by record id: its connection, one question at a time.
    waiting: Mutex<HashMap<String, Arc<Mutex<UnixStream>>>>,
}

/// Registrations accepted and not yet read, at most.
const MAX_PENDING: usize = 64;

/// At most this many rounds of [`MAX_PENDING`] in one [`Registry::take`]: more than a second of
/// commands could register.
const TAKE_ROUNDS: usize = 256;

impl Registry {
    /// Listens for the agentsh of the box `name`'s commands (`asks/<name>` in `records`), in
    /// place of any socket a proxy of an earlier box of the same name left.
    pub fn listen(records: &Path, name: &str) -> std::io::Result<Registry> {
        let name = name_for_box(name).ok_or(std::io::ErrorKind::InvalidInput)?;
        let path = socket_of(records, name);
        std::fs::create_dir_all(dir(records))?;
        let _ = std::fs::remove_file(&path);
        let listener = {
            let (addr, _at) = address(&path)?;
            listener_at(&addr)?
        };
        Ok(Registry { listener, path, pending: Mutex::new(Vec::new()), waiting: Mutex::new(HashMap::new()) })
    }

    /// Takes the registrations waiting (never waiting for one: see [`Registry::settle`]), all
    /// of them, [`MAX_PENDING`] at a time. The proxy takes them only when it has a question to
    /// put, and once a second (so those of commands that ended do not pile up in the kernel's
    /// queue): a command that never meets an unknown host wakes no one (waking the proxy for
    /// every command cost about 0.1 ms per command, docs/BENCHMARKS.md).
    pub fn take(&self) {
        for _ in 0..TAKE_ROUNDS {
            let mut accepted = 0;
            {
                let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                while accepted < MAX_PENDING {
                    let Ok((stream, _)) = self.listener.accept() else { break };
                    pending.push(stream);
                    accepted += 1;
                }
                let excess = pending.len().saturating_sub(MAX_PENDING);
                pending.drain(..excess);
            }
            self.settle();
            if accepted < MAX_PENDING {
                break;
            }
        }
    }

    /// Reads the ids the pending registrations have sent: each names its command, and is kept
    /// only when it comes from the agentsh the id names, outside every box ([`peer_outside`]);
    /// any other is closed unanswered. Registrations whose agentsh has ended go.
    fn settle(&self) {
        use nix::sys::socket::{MsgFlags, recv};
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        // Between questions an agentsh sends nothing: readable is hung up (or out of turn).
        waiting.retain(|_, stream| stream.try_lock().map_or(true, |s| !readable(&s)));
        pending.retain(|stream| {
            let mut buf = [0u8; 64];
            let n = match recv(stream.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
                Err(nix::errno::Errno::EAGAIN) => return true,
                Ok(n) => n,
                Err(_) => return false,
            };
            let line = std::str::from_utf8(&buf[..n]).unwrap_or("");
            let id = line.strip_suffix('\n').unwrap_or("");
            if let (Some(id), Some(pid)) = (name_for(id), pid_of(id))
                && peer_outside(stream) == Some(pid)
                && let Ok(kept) = stream.try_clone()
            {
                waiting.insert(id.to_string(), Arc::new(Mutex::new(kept)));
            }
            false
        });
    }

    /// Asks the command `id`'s agentsh about `host:port` and waits up to `wait` for the
    /// person's answer. Never a yes without that agentsh's word, and never a word to anyone
    /// else.
    pub fn ask(&self, id: &str, host: &str, port: u16, wait: Duration) -> Answer {
        self.take();
        let found = self.waiting.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        let answer = found.and_then(|stream| {
            let stream = stream.lock().unwrap_or_else(|e| e.into_inner());
            stream.set_write_timeout(Some(HAND_OVER)).ok()?;
            stream.set_read_timeout(Some(wait)).ok()?;
            (&*stream).write_all(format!("{host} {port}\n").as_bytes()).ok()?;
            let mut line = String::new();
            BufReader::new((&*stream).take(4096)).read_line(&mut line).ok()?;
            (!line.is_empty()).then(|| Answer::read(&line))
        });
        answer.unwrap_or_else(|| Answer::No(NO_ONE.to_string()))
    }

    /// Removes the socket (the proxy is ending).
    pub fn close(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A listening socket at `addr`: close-on-exec, non-blocking.
fn listener_at(addr: &nix::sys::socket::UnixAddr) -> std::io::Result<UnixListener> {
    use nix::sys::socket::{AddressFamily, Backlog, SockFlag, SockType, bind, listen, socket};
    let fd = socket(AddressFamily::Unix, SockType::Stream, SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK, None)?;
    bind(fd.as_raw_fd(), addr)?;
    listen(&fd, Backlog::MAXCONN)?;
    Ok(UnixListener::from(fd))
}

/// Whether `stream` has something to read, or its other end has closed.
fn readable(stream: &UnixStream) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
}

/// A box's name as its record is named (hex), never a path.
fn name_for_box(name: &str) -> Option<&str> {
    (!name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .then_some(name)
}

/// The command's agentsh's side: its connection to the box's proxy, from before the command
/// starts until it ends.
pub struct Questions {
    stream: UnixStream,
    /// Until the proxy hangs up (then there is nothing more to poll).
    open: std::cell::Cell<bool>,
}

impl Questions {
    /// Registers the command `id` (its record id) with the proxy of the box `name`, whose
    /// records are `records`: four system calls (the socket, its send time limit, connect, the
    /// id's write) and no file made, as every boxed command comes here.
    pub fn register(records: &Path, name: &str, id: &str) -> std::io::Result<Questions> {
        use nix::sys::socket::{AddressFamily, SockFlag, SockType, connect, socket};
        let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let (id, name) = (name_for(id).ok_or_else(invalid)?, name_for_box(name).ok_or_else(invalid)?);
        // Close-on-exec: the command never holds it.
        let fd = socket(AddressFamily::Unix, SockType::Stream, SockFlag::SOCK_CLOEXEC, None)?;
        let stream = UnixStream::from(fd);
        // A proxy that does not take it at once is not waited for.
        stream.set_write_timeout(Some(HAND_OVER))?;
        let (addr, _at) = address(&socket_of(records, name))?;
        connect(stream.as_raw_fd(), &addr)?;
        (&stream).write_all(format!("{id}\n").as_bytes())?;
        Ok(Questions { stream, open: std::cell::Cell::new(true) })
    }

    /// What to poll while the proxy is there: readable when a question waits.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.open.get().then(|| self.stream.as_fd())
    }

    /// Whether a question waits (or the proxy hung up), without waiting.
    pub fn waiting(&self) -> bool {
        self.open.get() && readable(&self.stream)
    }

    /// Answers the question waiting with `decide(host, port)`, only to the box's proxy (a
    /// process outside the box: [`peer_outside`]). When the proxy has hung up, or is not one,
    /// nothing more is read.
    pub fn answer(&self, decide: AskHost<'_>) {
        let _ = self.stream.set_read_timeout(Some(HAND_OVER));
        let mut line = String::new();
        let read = BufReader::new((&self.stream).take(512)).read_line(&mut line);
        if read.is_err() || line.is_empty() || peer_outside(&self.stream).is_none() {
            self.open.set(false);
            return;
        }
        let mut parts = line.split_whitespace();
        let (Some(host), Some(Ok(port))) = (parts.next(), parts.next().map(str::parse::<u16>)) else {
            self.open.set(false);
            return;
        };
        // The proxy checked it; a name that is no host (a pattern such as `*.com`, which an
        // "always" would save to sandbox.allowHosts) is never put to the person.
        let said = match super::proxy::host_name(host) {
            Some(h) if h == host && port > 0 => decide(host, port),
            _ => Answer::No(format!("{} is not a host name", crate::text::sanitize::sanitize(host))),
        };
        let _ = (&self.stream).write_all(said.line().as_bytes());
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

    /// The proxy takes registrations until one is there, or `tries` run out.
    fn taken(registry: &Registry, id: &str) -> bool {
        (0..100).any(|_| {
            registry.take();
            std::thread::sleep(Duration::from_millis(5));
            registry.waiting.lock().unwrap().contains_key(id)
        })
    }

    /// The whole round: the agentsh registers, the proxy asks, the answer comes back; both
    /// ends are this process, outside every box, and the id names it.
    #[test]
    fn the_commands_agentsh_answers_the_proxy() {
        let dir = records("round");
        let registry = Registry::listen(&dir, "45c9e8bdee1cfcb4").unwrap();
        let id = format!("19ab-{}", std::process::id());
        let questions = Questions::register(&dir, "45c9e8bdee1cfcb4", &id).unwrap();
        assert!(taken(&registry, &id));
        let registry = Arc::new(registry);
        let asked = std::thread::spawn({
            let (registry, id) = (Arc::clone(&registry), id.clone());
            move || registry.ask(&id, "example.com", 8443, Duration::from_secs(5))
        });
        let mut fds = [nix::poll::PollFd::new(questions.fd().unwrap(), nix::poll::PollFlags::POLLIN)];
        nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(5000u16)).unwrap();
        let seen = std::cell::RefCell::new(Vec::new());
        questions.answer(&|host, port| {
            seen.borrow_mut().push((host.to_string(), port));
            Answer::Once
        });
        assert_eq!(asked.join().unwrap(), Answer::Once);
        assert_eq!(*seen.borrow(), [("example.com".to_string(), 8443)]);
        // Ended: its registration goes, and the proxy asks no one.
        drop(questions);
        registry.take();
        assert!(registry.waiting.lock().unwrap().is_empty());
        assert_eq!(registry.ask(&id, "example.com", 443, Duration::from_secs(1)), Answer::No(NO_ONE.into()));
        registry.close();
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A registration that names another process is not kept, and every case in which no
    /// registered agentsh answers reads the same.
    #[test]
    fn a_registration_for_another_process_is_refused_and_no_one_is_asked() {
        let dir = records("other");
        let registry = Registry::listen(&dir, "box").unwrap();
        let other = format!("19ab-{}", std::process::id() + 1);
        let _questions = Questions::register(&dir, "box", &other).unwrap();
        assert!(!taken(&registry, &other), "a registration naming another process was kept");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        for id in [other, format!("1-{}", child.id()), format!("1-{}", std::process::id()), "1".into()] {
            assert_eq!(registry.ask(&id, "example.com", 443, Duration::from_secs(1)), Answer::No(NO_ONE.into()));
        }
        registry.close();
        let _ = std::fs::remove_dir_all(dir);
    }
}
