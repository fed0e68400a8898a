//! How the box's proxy asks about a new host in the same channels as a command: it asks the
//! agentsh that is running the command (the one waiting for it outside the box), which draws
//! the question on the person's terminal or puts it in `agentsh approvals`, as it would a
//! command's, and saves an "always".
//!
//! The proxy listens on a socket of its own in agentsh's records (`asks/<id>.<n>`), which the
//! box cannot see, and sends that agentsh `SIGURG` (ignored by every other process); the agentsh
//! connects, reads `host port`, asks, and writes `once`, `always` or `no <why>`. The command's
//! agentsh is named by its record id (`<hex ms>-<pid>`), which the box's proxy settings carry.
//! When it has ended (the command went on in the background) or does not answer, no one is
//! asked and the connection is refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The signal that tells the command's agentsh a question is waiting.
pub const SIGNAL: nix::sys::signal::Signal = nix::sys::signal::Signal::SIGURG;

/// How long the command's agentsh has to pick the question up.
const PICK_UP: Duration = Duration::from_secs(3);

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
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}/{name}", at.as_raw_fd()))
}

/// The process ID in a record id, when it is one.
fn pid_of(id: &str) -> Option<i32> {
    let (_, pid) = id.split_once('-')?;
    pid.parse().ok().filter(|p| *p > 1)
}

/// The proxy's side: asks the command `id`'s agentsh about `host:port` and waits up to `wait`
/// for the person's answer. Never a yes without that agentsh's word.
pub fn ask(records: &Path, id: &str, host: &str, port: u16, seq: u64, wait: Duration) -> Answer {
    let no = |why: &str| Answer::No(why.to_string());
    let Some(pid) = pid_of(id) else { return no("the connection did not say which command made it") };
    let ended = "the agentsh that ran the command has ended (it went on in the background), so no one can be asked";
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return no(ended);
    }
    let dir = dir(records);
    let _ = std::fs::create_dir_all(&dir);
    let Ok(at) = std::fs::File::open(&dir) else { return no("the question could not be put") };
    let path = short(&at, &format!("{id}.{seq}"));
    let _ = std::fs::remove_file(&path);
    let Ok(listener) = UnixListener::bind(&path) else { return no("the question could not be put") };
    let answer = (|| {
        let _ = listener.set_nonblocking(true);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), SIGNAL).ok()?;
        let until = Instant::now() + PICK_UP;
        let mut stream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        };
        stream.set_nonblocking(false).ok()?;
        stream.set_read_timeout(Some(wait)).ok()?;
        stream.write_all(format!("{host} {port}\n").as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(stream.take(4096)).read_line(&mut line).ok()?;
        (!line.is_empty()).then(|| Answer::read(&line))
    })();
    let _ = std::fs::remove_file(&path);
    answer.unwrap_or_else(|| no("the agentsh that ran the command did not answer"))
}

/// The command's agentsh's side, on [`SIGNAL`]: answers every question waiting for `id` with
/// `decide(host, port)`.
pub fn answer(records: &Path, id: &str, decide: &dyn Fn(&str, u16) -> Answer) {
    let Ok(entries) = std::fs::read_dir(dir(records)) else { return };
    let Ok(at) = std::fs::File::open(dir(records)) else { return };
    let prefix = format!("{id}.");
    for entry in entries.flatten().take(64) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.strip_prefix(&prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let Ok(mut stream) = UnixStream::connect(short(&at, name)) else { continue };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut line = String::new();
        if BufReader::new((&stream).take(512)).read_line(&mut line).is_err() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(host), Some(Ok(port))) = (parts.next(), parts.next().map(str::parse::<u16>)) else { continue };
        let said = decide(host, port);
        let _ = stream.write_all(said.line().as_bytes());
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
    }

    #[test]
    fn with_no_agentsh_behind_the_id_no_one_is_asked() {
        let dir = std::env::temp_dir().join(format!("agentsh-asking-{}", std::process::id()));
        // A process that has ended: the test's own child, reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let id = format!("1-{}", child.id());
        match ask(&dir, &id, "example.com", 443, 1, Duration::from_secs(1)) {
            Answer::No(why) => assert!(why.contains("no one can be asked"), "{why}"),
            a => panic!("{a:?}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
