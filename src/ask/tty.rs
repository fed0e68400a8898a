//! The controlling terminal for the approval prompt: open, check, raw mode, keys, signals.
//! It fails closed (no terminal means no one to ask) and must never read stdin or write stdout.
//!
//! Signals are handled without `unsafe`: while a prompt waits, the signals that would end or
//! stop agentsh are blocked and read through a signalfd, polled together with the terminal.
//! agentsh is single-threaded when it prompts, so the process mask is the thread mask.

use crate::ask::prompt::{KeyEvent, Keys};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, raise, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::termios::{
    FlushArg, LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcflush, tcgetattr, tcsetattr,
};
use nix::unistd::{getpgrp, isatty, tcgetpgrp};
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::str::FromStr;
use std::time::Duration;

/// The signals that end or stop agentsh while it waits for an answer. They are reported as
/// `Interrupted` after the terminal is restored, as sudo does for INT/HUP/TERM/TSTP.
const CAUGHT: [Signal; 5] = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT, Signal::SIGQUIT, Signal::SIGTSTP];

/// Blocked but not reported: with SIGTTOU blocked, restoring the terminal from a background
/// process group succeeds instead of stopping agentsh with the terminal still raw (POSIX
/// tcsetattr); with SIGTTIN blocked, a background read fails with EIO instead of stopping.
const QUIETED: [Signal; 2] = [Signal::SIGTTOU, Signal::SIGTTIN];

/// The controlling terminal, opened from `/dev/tty`.
#[derive(Debug)]
pub struct Tty {
    file: File,
}

impl Tty {
    /// Opens `/dev/tty` read-write. `Err` is the reason there is no terminal to ask on.
    pub fn open() -> Result<Tty, String> {
        // O_NOCTTY: never acquire a controlling terminal by accident; std adds O_CLOEXEC so the
        // exec'd command does not inherit this descriptor.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NOCTTY.bits())
            .open("/dev/tty")
            .map_err(|e| {
                if e.raw_os_error() == Some(Errno::ENXIO as i32) {
                    "no controlling terminal".to_string()
                } else {
                    format!("cannot open /dev/tty: {e}")
                }
            })?;
        Tty::from_file(file)
    }

    /// Wraps an open file after checking it is a terminal, as sudo does: fstat says character
    /// device first, then isatty, and only then any other ioctl.
    pub(crate) fn from_file(file: File) -> Result<Tty, String> {
        let meta = file.metadata().map_err(|e| format!("cannot stat the terminal: {e}"))?;
        if !meta.file_type().is_char_device() {
            return Err("the terminal is not a character device".to_string());
        }
        match isatty(&file) {
            Ok(true) => Ok(Tty { file }),
            _ => Err("the terminal is not a tty".to_string()),
        }
    }

    /// `Err` when agentsh is not in the terminal's foreground process group: then the person at
    /// the terminal is not looking at agentsh, and reading would steal another job's input.
    pub fn check_foreground(&self) -> Result<(), String> {
        match tcgetpgrp(&self.file) {
            Ok(pgrp) if pgrp == getpgrp() => Ok(()),
            Ok(_) => Err("agentsh is not in the terminal's foreground".to_string()),
            Err(e) => Err(format!("cannot find the terminal's foreground: {e}")),
        }
    }

    /// Where the prompt is drawn (the terminal, never stdout or stderr).
    pub fn writer(&self) -> &File {
        &self.file
    }

    /// Blocks the caught signals, then puts the terminal in non-canonical, no-echo, no-ISIG
    /// mode. Everything is undone when the returned session drops, on every path.
    pub fn raw(&self) -> io::Result<RawSession<'_>> {
        // Signals first: a SIGTERM between the termios change and the block would kill agentsh
        // with the terminal left raw.
        let signals = SignalGuard::block()?;
        let saved = tcgetattr(&self.file)?;
        let mut raw = saved.clone();
        // ISIG off: Ctrl-C arrives as byte 0x03 and rejects, instead of a signal.
        // IEXTEN off: Ctrl-V cannot quote a byte past the dialog.
        raw.local_flags.remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN);
        raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
        raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        // TCSAFLUSH also drops what was typed before the prompt existed.
        tcsetattr(&self.file, SetArg::TCSAFLUSH, &raw)?;
        Ok(RawSession { termios: TermiosGuard { file: &self.file, saved }, signals, watched: None })
    }
}

/// Whether process `pid` is a full-screen program at a terminal: its standard input is a
/// terminal in raw mode (no line editing: it reads every key) whose foreground is the process's
/// own group. An agent's UI (Gemini CLI's), as seen by the hook it runs: its own dialog asks the
/// person there, and `-p` (no UI) leaves the terminal as it was. Read through
/// `/proc/PID/fd/0`, so it holds whatever session the hook itself runs in.
pub fn full_screen_at_a_terminal(pid: u32) -> bool {
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOCTTY | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(format!("/proc/{pid}/fd/0"))
    else {
        return false;
    };
    let Ok(tty) = Tty::from_file(file) else { return false };
    let raw = tcgetattr(&tty.file).is_ok_and(|t| !t.local_flags.contains(LocalFlags::ICANON));
    // The foreground from /proc (`tcgetpgrp` answers only on one's own controlling terminal, and
    // agentsh's hook may run in a session of its own).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    let foreground =
        stat.ok().as_deref().and_then(crate::ask::terminal_owner::ProcStat::parse).is_some_and(|s| s.tpgid == s.pgrp);
    raw && foreground
}

/// A prompt in progress: raw terminal plus blocked signals. Fields drop in order: the terminal
/// is restored before the signal mask, so a pending signal's default action finds it sane.
#[derive(Debug)]
pub struct RawSession<'a> {
    termios: TermiosGuard<'a>,
    signals: SignalGuard,
    /// Another descriptor polled with the terminal (the approval queue's inotify): when it is
    /// readable, `next_key` reports `KeyEvent::Wake`.
    watched: Option<OwnedFd>,
}

#[derive(Debug)]
struct TermiosGuard<'a> {
    file: &'a File,
    saved: Termios,
}

impl Drop for TermiosGuard<'_> {
    fn drop(&mut self) {
        // TCSAFLUSH: keys pressed during the prompt but not consumed must not reach the agent's
        // UI, which reads the same terminal after us.
        let _ = tcsetattr(self.file, SetArg::TCSAFLUSH, &self.saved);
    }
}

#[derive(Debug)]
struct SignalGuard {
    old_mask: SigSet,
    fd: SignalFd,
}

impl SignalGuard {
    fn block() -> io::Result<SignalGuard> {
        let mut caught = SigSet::empty();
        for s in CAUGHT {
            caught.add(s);
        }
        let mut blocked = caught;
        for s in QUIETED {
            blocked.add(s);
        }
        let mut old_mask = SigSet::empty();
        sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), Some(&mut old_mask))?;
        match SignalFd::with_flags(&caught, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC) {
            Ok(fd) => Ok(SignalGuard { old_mask, fd }),
            Err(e) => {
                let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
                Err(e.into())
            }
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        // Always: a blocked mask would be inherited by the exec'd command.
        let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&self.old_mask), None);
    }
}

impl RawSession<'_> {
    fn read_byte(&self) -> io::Result<KeyEvent> {
        let mut byte = [0u8; 1];
        match (&*self.termios.file).read(&mut byte) {
            Ok(1) => Ok(KeyEvent::Byte(byte[0])),
            // VMIN=0 and poll said readable: nothing means hang-up.
            Ok(_) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the terminal hung up")),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(KeyEvent::Timeout),
            Err(e) => Err(e),
        }
    }
}

impl RawSession<'_> {
    /// Also wakes `next_key` (with `KeyEvent::Wake`) when `fd` becomes readable.
    pub fn watch(&mut self, fd: OwnedFd) {
        self.watched = Some(fd);
    }
}

impl Keys for RawSession<'_> {
    fn next_key(&mut self, timeout: Duration) -> io::Result<KeyEvent> {
        let tty_ready = match wait_ready(&self.signals.fd, Some(self.termios.file), self.watched.as_ref(), timeout)? {
            Ready::Key(flags) => flags,
            Ready::Event(event) => return Ok(event),
        };
        if tty_ready.contains(PollFlags::POLLIN) {
            return self.read_byte();
        }
        if tty_ready.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the terminal hung up"));
        }
        Ok(KeyEvent::Timeout)
    }

    fn discard_typeahead(&mut self) -> io::Result<()> {
        // Anything queued before the person could see the prompt was typed (or injected) blind.
        tcflush(self.termios.file, FlushArg::TCIFLUSH)?;
        Ok(())
    }
}

/// What one poll found.
enum Ready {
    /// Decided without reading the terminal: a signal, the watched descriptor, or nothing.
    Event(KeyEvent),
    /// The terminal's poll flags: read it.
    Key(PollFlags),
}

/// Polls the signalfd, the terminal (if any) and a watched descriptor (if any) together.
/// Signals come first, then the watched descriptor, then the terminal.
fn wait_ready(
    signals: &SignalFd,
    tty: Option<&File>,
    watched: Option<&OwnedFd>,
    timeout: Duration,
) -> io::Result<Ready> {
    // Round up so a 0.4 ms remainder does not spin with a zero timeout.
    let ms = timeout.as_micros().div_ceil(1000);
    let ms = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
    let mut fds = vec![PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
    let watched_at = watched.map(|w| {
        fds.push(PollFd::new(w.as_fd(), PollFlags::POLLIN));
        fds.len() - 1
    });
    let tty_at = tty.map(|t| {
        fds.push(PollFd::new(t.as_fd(), PollFlags::POLLIN));
        fds.len() - 1
    });
    match poll(&mut fds, ms) {
        Ok(0) => return Ok(Ready::Event(KeyEvent::Timeout)),
        Ok(_) => {}
        Err(Errno::EINTR) => return Ok(Ready::Event(KeyEvent::Timeout)),
        Err(e) => return Err(e.into()),
    }
    let flags = |i: usize| fds[i].revents().unwrap_or(PollFlags::empty());
    // Signals first: a person pressing Ctrl-C while SIGTERM is pending still gets the
    // signal handled the way its sender meant.
    if flags(0).contains(PollFlags::POLLIN)
        && let Some(info) = signals.read_signal()?
    {
        let name = Signal::try_from(info.ssi_signo as i32)
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|_| format!("signal {}", info.ssi_signo));
        return Ok(Ready::Event(KeyEvent::Signal(name)));
    }
    if watched_at.is_some_and(|i| flags(i).contains(PollFlags::POLLIN)) {
        return Ok(Ready::Event(KeyEvent::Wake));
    }
    match tty_at {
        Some(i) => Ok(Ready::Key(flags(i))),
        None => Ok(Ready::Event(KeyEvent::Timeout)),
    }
}

/// Waiting without a terminal (a headless agent, or a paused command): the caught signals are
/// blocked and reported as `KeyEvent::Signal`, so agentsh cleans up its pending request before
/// it ends. The mask is restored on drop.
#[derive(Debug)]
pub struct Quiet {
    signals: SignalGuard,
}

impl Quiet {
    pub fn block() -> io::Result<Quiet> {
        Ok(Quiet { signals: SignalGuard::block()? })
    }

    /// Waits at most `timeout` for a signal or for `watched` to become readable
    /// (`KeyEvent::Wake`); otherwise `KeyEvent::Timeout`.
    pub fn wait(&self, watched: Option<&OwnedFd>, timeout: Duration) -> io::Result<KeyEvent> {
        match wait_ready(&self.signals.fd, None, watched, timeout)? {
            Ready::Event(event) => Ok(event),
            Ready::Key(_) => Ok(KeyEvent::Timeout),
        }
    }
}

/// Re-raises a signal reported as `Answer::Interrupted(name)`, after the prompt has returned
/// and restored the terminal and the signal mask. Never returns.
///
/// Resetting a disposition to default needs `sigaction`, which is `unsafe` in nix, and this
/// crate denies unsafe code (but for the box's system calls in `run::sandbox::sys`). agentsh installs
/// no handlers, so the disposition is the one it inherited: normally the default, and the
/// signal ends agentsh as its sender meant. If it was inherited as ignored (e.g. `nohup` for
/// SIGHUP), `raise` does nothing and we exit with 128 + signal number, the shell convention. A stop signal (SIGTSTP) stops agentsh; once
/// continued it exits 128 + 20: the command was never approved. An unknown name exits 1.
pub fn reraise(name: &str) -> ! {
    let Ok(sig) = Signal::from_str(name) else { std::process::exit(1) };
    let mut only = SigSet::empty();
    only.add(sig);
    let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&only), None);
    let _ = raise(sig);
    std::process::exit(128 + sig as i32)
}

/// Whether processes sharing a terminal may push keystrokes into it with TIOCSTI
/// (`/proc/sys/dev/tty/legacy_tiocsti`, Linux 6.2+). `None` when unknown (older kernels allow it).
pub fn legacy_tiocsti_enabled() -> Option<bool> {
    let text = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").ok()?;
    match text.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// The note a prompt shows where the kernel still allows TIOCSTI keystroke injection.
/// The note about `legacy_tiocsti=1`; the dialog shows it once per terminal session.
pub const TIOCSTI_NOTICE: &str =
    "this kernel lets other programs on this terminal inject keystrokes (legacy_tiocsti=1)";

pub fn tiocsti_notice() -> Option<String> {
    (legacy_tiocsti_enabled() == Some(true)).then(|| TIOCSTI_NOTICE.to_string())
}

/// Whether note `what` has not been shown yet in this terminal session (the session id, and
/// its leader's start time, so that a reused id is a new session); marks it shown. Kept in
/// agentsh's state directory (`notes/`). Where that cannot be written, every time.
pub(crate) fn first_in_session(what: &str) -> bool {
    let sid = nix::unistd::getsid(None).map(|p| p.as_raw()).unwrap_or(0);
    let start = std::fs::read_to_string(format!("/proc/{sid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(19).map(str::to_string)))
        .unwrap_or_default();
    // Only in a state directory that is the user's own (issue 27), made private like it.
    let Ok(dir) = crate::policy::dirs::state().map(|d| d.join("notes")) else { return true };
    if crate::policy::dirs::private_dir(&dir).is_err() {
        return true;
    }
    let marker = dir.join(format!("{what}-{sid}-{start}"));
    std::fs::OpenOptions::new().write(true).create_new(true).open(marker).is_ok()
}

/// The width of the terminal `out` is, or `None` when it is not one (a pipe, a file): for
/// `text::wrap::fit_lines`.
pub fn width_of(out: impl std::os::fd::AsFd) -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(out).ok()?;
    Some(usize::from(size.ws_col)).filter(|w| *w >= 20)
}

/// `text` on stdout, its long lines broken at spaces when stdout is a narrow terminal (whole
/// for a pipe or a file).
pub fn print_fitted(text: &str) {
    print!("{}", crate::text::wrap::fit_lines(text, width_of(std::io::stdout())));
}

/// [`print_fitted`] on stderr: refusals and warnings a person may read on their terminal.
pub fn eprint_fitted(text: &str) {
    eprint!("{}", crate::text::wrap::fit_lines(text, width_of(std::io::stderr())));
}

#[cfg(test)]
mod tests {
    //! Uses a pseudo-terminal pair from openpty. The slave is not our controlling terminal
    //! (that needs setsid + TIOCSCTTY in a child, left to the integration tests with rexpect),
    //! but termios, flushing, reading and signals all work on it.
    use super::*;
    use nix::pty::openpty;
    use nix::unistd::write;
    use std::os::fd::OwnedFd;

    fn pty() -> (OwnedFd, Tty) {
        let pair = openpty(None, None).expect("openpty");
        let tty = Tty::from_file(File::from(pair.slave)).expect("pty slave is a terminal");
        (pair.master, tty)
    }

    #[test]
    fn rejects_files_that_are_not_terminals() {
        let file = File::open("/proc/self/status").unwrap();
        assert!(Tty::from_file(file).unwrap_err().contains("character device"));
        // A character device that is not a terminal: isatty must say no.
        let null = File::open("/dev/null").unwrap();
        assert!(Tty::from_file(null).unwrap_err().contains("not a tty"));
    }

    #[test]
    fn a_terminal_we_do_not_control_is_not_foreground() {
        let (_master, tty) = pty();
        assert!(tty.check_foreground().is_err());
    }

    /// What the kernel keeps of a terminal's settings (TCGETS): the four sets of flags, the line
    /// discipline and 19 control characters. The C library's struct can be larger; musl leaves
    /// its extra control characters and speeds unset, so they are not compared.
    fn kernel_view(t: &Termios) -> String {
        let chars = &t.control_chars[..19.min(t.control_chars.len())];
        format!(
            "{:?} {:?} {:?} {:?} {} {chars:?}",
            t.input_flags, t.output_flags, t.control_flags, t.local_flags, t.line_discipline
        )
    }

    #[test]
    fn raw_mode_is_restored_exactly_and_keys_are_read() {
        let (master, tty) = pty();
        let before = tcgetattr(tty.writer()).unwrap();
        let mask_before = SigSet::thread_get_mask().unwrap();
        {
            let mut session = tty.raw().unwrap();
            let now = tcgetattr(tty.writer()).unwrap();
            assert!(!now.local_flags.contains(LocalFlags::ICANON));
            assert!(!now.local_flags.contains(LocalFlags::ECHO));
            assert!(!now.local_flags.contains(LocalFlags::ISIG));
            assert!(SigSet::thread_get_mask().unwrap().contains(Signal::SIGTERM));

            // Type-ahead sent before the prompt is discarded.
            write(&master, b"y").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            session.discard_typeahead().unwrap();
            let k = session.next_key(Duration::from_millis(50)).unwrap();
            assert!(matches!(k, KeyEvent::Timeout), "got {k:?}");

            // Without ISIG, Ctrl-C is a byte, not a signal.
            write(&master, b"\x03").unwrap();
            let k = session.next_key(Duration::from_secs(2)).unwrap();
            assert!(matches!(k, KeyEvent::Byte(3)), "got {k:?}");
        }
        let after = tcgetattr(tty.writer()).unwrap();
        assert_eq!(kernel_view(&before), kernel_view(&after));
        assert_eq!(mask_before, SigSet::thread_get_mask().unwrap());
    }

    #[test]
    fn a_signal_while_waiting_is_reported_and_the_mask_restored() {
        let (_master, tty) = pty();
        let mask_before = SigSet::thread_get_mask().unwrap();
        {
            let mut session = tty.raw().unwrap();
            // raise() targets this thread, where SIGHUP is now blocked: it stays pending and
            // shows up on the signalfd instead of killing the test process.
            raise(Signal::SIGHUP).unwrap();
            let k = session.next_key(Duration::from_secs(2)).unwrap();
            assert!(matches!(&k, KeyEvent::Signal(s) if s == "SIGHUP"), "got {k:?}");
        }
        assert_eq!(mask_before, SigSet::thread_get_mask().unwrap());
        assert!(!SigSet::thread_get_mask().unwrap().contains(Signal::SIGHUP));
    }

    #[test]
    fn tiocsti_setting_is_read_when_present() {
        let file = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").ok();
        let want = file.map(|t| t.trim() == "1");
        assert_eq!(legacy_tiocsti_enabled(), want);
    }
}
