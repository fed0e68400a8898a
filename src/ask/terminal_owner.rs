//! Whose terminal is this? Before a prompt is drawn, agentsh establishes that its controlling
//! terminal is a person's, not a pseudo-terminal that the agent (or anything it started) made and
//! whose other side it reads and types into. Issue 14: Codex gives the model a pty (`exec_command`
//! with `tty: true`) and `write_stdin`; the model read the prompt, code included, and approved its
//! own commands.
//!
//! It only finds out: it must not draw, read keys, or judge commands. [`judge`] is the decision,
//! on plain data and tested by table below; [`controlling_terminal`] reads that data from /proc,
//! and runs only when a prompt is about to be drawn. SECURITY.md ("Whose terminal a prompt is
//! drawn on") gives the method and its limits.

use crate::text::sanitize::sanitize;
use nix::sys::statfs::{DEVPTS_SUPER_MAGIC, statfs};
use std::fs::{self, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// The decision, on plain data

/// A terminal, and what is at its other side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminal {
    /// For messages: `/dev/pts/3`, `/dev/tty2`.
    pub name: String,
    pub other_side: OtherSide,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OtherSide {
    /// A console or serial line: the kernel drives it, and no program can hold its other side.
    Kernel,
    /// A pseudo-terminal. Every process holding its master side reads what is shown on it and
    /// types what is read from it.
    Pty {
        /// The holders agentsh could inspect.
        holders: Vec<Holder>,
        /// Who started the terminal's sessions, for when no holder could be inspected (sshd
        /// makes itself uninspectable: see [`SessionStart`]).
        sessions: Vec<SessionStart>,
    },
    /// It could not be found out; why.
    Unknown(String),
}

/// A process holding a pty's master side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// The file name of its executable (`/proc/PID/exe`).
    pub program: String,
    /// The executable and every folder above it belong to root and only root can write them, so
    /// no user gave the file its name (a copy of python3 called `tmux` is not tmux).
    pub system_installed: bool,
    /// It has a controlling terminal of its own. Servers that hold terminals for a person
    /// (tmux's server, sshd) are daemons and never have one; a program that made a pty for its
    /// child while sitting in a terminal (an agent's UI, `script`) does.
    pub has_terminal: bool,
    /// The other terminals it draws on: a multiplexer's clients. Only filled for multiplexers.
    pub draws_on: Vec<Terminal>,
}

/// How one session on a terminal was started: its leader's parent, and that parent's parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionStart {
    /// The process that started the session (the session leader's parent).
    pub starter: u32,
    /// The starter's parent: its command name (`/proc/PID/comm`) and owner.
    pub grandparent_comm: String,
    pub grandparent_uid: u32,
}

/// The decision. Only `Person` lets a prompt be drawn.
#[must_use]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A person's terminal; what serves it ("tmux (pid 12)").
    Person(String),
    /// Not known to be a person's; why ("cannot tell" is here too).
    NotPerson(String),
}

/// What a terminal program does for the person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Draws the terminal in a window on the person's display.
    Emulator,
    /// Carries the terminal to a person at the other end of a network connection.
    Remote,
    /// Draws its panes on its clients' terminals; a person's only when all of those are.
    Multiplexer,
}

/// Programs that hold a terminal's other side for a person, by executable file name, with
/// whether genuine instances are daemons (never have a controlling terminal). Anything else
/// holding the other side (node, python3, codex, script, expect, a test harness) is a program
/// that made the terminal for what it runs. Only names checked to be daemons are marked so.
const TERMINAL_PROGRAMS: &[(&str, Kind, bool)] = &[
    // tmux's server opens each client's terminal itself, so its clients can be followed.
    ("tmux", Kind::Multiplexer, true),
    ("screen", Kind::Multiplexer, false),
    ("sshd", Kind::Remote, true),
    ("sshd-session", Kind::Remote, true),
    ("dropbear", Kind::Remote, true),
    ("mosh-server", Kind::Remote, true),
    ("gnome-terminal-server", Kind::Emulator, false),
    ("kgx", Kind::Emulator, false),
    ("ptyxis-agent", Kind::Emulator, false),
    ("konsole", Kind::Emulator, false),
    ("yakuake", Kind::Emulator, false),
    ("xfce4-terminal", Kind::Emulator, false),
    ("mate-terminal", Kind::Emulator, false),
    ("lxterminal", Kind::Emulator, false),
    ("qterminal", Kind::Emulator, false),
    ("tilix", Kind::Emulator, false),
    ("terminology", Kind::Emulator, false),
    ("xterm", Kind::Emulator, false),
    ("urxvt", Kind::Emulator, false),
    ("urxvtd", Kind::Emulator, false),
    ("rxvt", Kind::Emulator, false),
    ("st", Kind::Emulator, false),
    ("alacritty", Kind::Emulator, false),
    ("kitty", Kind::Emulator, false),
    ("foot", Kind::Emulator, false),
    ("wezterm-gui", Kind::Emulator, false),
    ("ghostty", Kind::Emulator, false),
    ("sakura", Kind::Emulator, false),
];

/// Programs whose root-owned parent process shows that a session was started by a login over
/// the network (see [`SessionStart`]).
const LOGIN_DAEMONS: &[&str] = &["sshd", "sshd-session", "dropbear"];

/// The terminal program named `program`: what it does, and whether it is a daemon.
pub fn kind_of(program: &str) -> Option<(Kind, bool)> {
    TERMINAL_PROGRAMS.iter().find(|(name, _, _)| *name == program).map(|(_, kind, daemon)| (*kind, *daemon))
}

/// Whether `terminal` is a person's. Every process holding its other side must be a
/// system-installed terminal program (and a multiplexer's clients must all be a person's too);
/// anything unknown, unreadable or ambiguous is not a person's.
pub fn judge(terminal: &Terminal) -> Owner {
    let name = sanitize(&terminal.name);
    match &terminal.other_side {
        OtherSide::Kernel => Owner::Person(format!("{name}, a console")),
        OtherSide::Unknown(why) => Owner::NotPerson(format!("cannot tell whose terminal {name} is: {why}")),
        OtherSide::Pty { holders, sessions } if holders.is_empty() => match login_session(sessions) {
            Some(daemon) => Owner::Person(format!("{daemon} (a login over the network)")),
            None => Owner::NotPerson(format!(
                "cannot tell whose terminal {name} is: no process that agentsh can inspect holds its other side"
            )),
        },
        OtherSide::Pty { holders, .. } => {
            let mut served = Vec::new();
            for h in holders {
                match terminal_program(h) {
                    Ok(what) => served.push(what),
                    Err(why) => return Owner::NotPerson(format!("{name} is not a person's terminal: {why}")),
                }
            }
            served.dedup();
            Owner::Person(served.join(", "))
        }
    }
}

/// `Ok(what it is)` when `h` is a terminal program serving a person.
fn terminal_program(h: &Holder) -> Result<String, String> {
    let program = sanitize(&h.program);
    let held_by = format!("its other side is held by `{program}` (pid {})", h.pid);
    let Some((kind, daemon)) = kind_of(&h.program) else {
        return Err(format!(
            "{held_by}, which is not a terminal program: a program that makes a terminal for what it runs can read \
             the screen and type into it"
        ));
    };
    if !h.system_installed {
        return Err(format!(
            "{held_by}, which is not installed by the system (its file or a folder above it can be written by a \
             user, who can give any program that name)"
        ));
    }
    if daemon && h.has_terminal {
        return Err(format!(
            "{held_by}, which sits in a terminal of its own as a program that made a terminal for its child does; \
             a real {program} server never has one"
        ));
    }
    if kind == Kind::Multiplexer {
        for client in &h.draws_on {
            if let Owner::NotPerson(why) = judge(client) {
                return Err(format!("`{program}` (pid {}) also shows it on {why}", h.pid));
            }
        }
    }
    Ok(format!("{program} (pid {})", h.pid))
}

/// The login daemon that started every one of these sessions, if one did: each session's
/// starter is a direct child of a root-owned login daemon. Only root can make a process a
/// child of a root process, so an agent cannot fake this; it is what is left to look at when
/// sshd has made its own processes uninspectable.
fn login_session(sessions: &[SessionStart]) -> Option<String> {
    let first = sessions.first()?;
    let all = sessions.iter().all(|s| s.grandparent_uid == 0 && LOGIN_DAEMONS.contains(&s.grandparent_comm.as_str()));
    all.then(|| sanitize(&first.grandparent_comm))
}

// ---------------------------------------------------------------------------------------------
// Reading the data from /proc

/// How deep multiplexers are followed to their clients' terminals (tmux in tmux over ssh is 2).
const MAX_DEPTH: usize = 4;

/// This process's controlling terminal as found in /proc, with a key naming the device (for
/// the one-prompt-at-a-time lock) when it could be identified.
#[derive(Clone, Debug)]
pub struct Found {
    pub terminal: Terminal,
    pub key: Option<String>,
}

/// Reads and judges this process's controlling terminal: the verdict, and the device's key.
/// A verdict other than `Person` that a terminal program's passing state can explain is read
/// again, twice, 40 ms apart (see [`worth_rereading`]). Only a clean reading says `Person`; a
/// holder that hides for a moment gains nothing, since a pty with no holder is not a person's
/// either.
pub fn check() -> (Owner, Option<String>) {
    let mut tries = 0;
    loop {
        let found = controlling_terminal();
        let owner = judge(&found.terminal);
        tries += 1;
        if matches!(owner, Owner::Person(_)) || !worth_rereading(&found.terminal) || tries == 3 {
            return (owner, found.key);
        }
        std::thread::sleep(std::time::Duration::from_millis(40));
    }
}

/// Whether a reading may have caught a terminal program in passing: a holder that is a known
/// terminal program (tmux's server starting a pane forks a child that holds every pane's master,
/// and has the new pane as its terminal, until it closes them before exec), or one that ended
/// while it was read. An agent's own pty (held by node, codex, python3) is not read again.
fn worth_rereading(terminal: &Terminal) -> bool {
    let OtherSide::Pty { holders, .. } = &terminal.other_side else { return false };
    holders
        .iter()
        .any(|h| h.program.is_empty() || kind_of(&h.program).is_some() || h.draws_on.iter().any(worth_rereading))
}

/// Finds this process's controlling terminal and what holds its other side.
pub fn controlling_terminal() -> Found {
    let unknown = |why: String| Found {
        terminal: Terminal { name: "the terminal".to_string(), other_side: OtherSide::Unknown(why) },
        key: None,
    };
    let me = match fs::read_to_string("/proc/self/stat").ok().as_deref().and_then(ProcStat::parse) {
        Some(s) => s,
        None => return unknown("/proc cannot be read".to_string()),
    };
    if me.tty_nr == 0 {
        return unknown("agentsh has no controlling terminal".to_string());
    }
    let (major, minor) = split_dev(me.tty_nr);
    let index = match device(major, minor) {
        Some(Device::Kernel) => {
            return Found {
                terminal: Terminal { name: kernel_name(major, minor), other_side: OtherSide::Kernel },
                key: Some(format!("tty-{major}-{minor}")),
            };
        }
        Some(Device::Pty(index)) => index,
        Some(Device::LegacyPty) => return unknown("it is a legacy BSD pseudo-terminal".to_string()),
        None => return unknown(format!("its device {major}:{minor} is not a known kind of terminal")),
    };
    // The controlling terminal is known only by its device number, and every devpts instance
    // (one per container) numbers from 0. Open the one in this mount namespace and prove it is
    // ours: TIOCGSID answers only on the caller's own controlling terminal.
    let name = format!("/dev/pts/{index}");
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOCTTY | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(&name)
    {
        Ok(f) => f,
        Err(e) => return unknown(format!("cannot open {name}: {e}")),
    };
    let ours = nix::sys::termios::tcgetsid(&file).ok().map(|p| p.as_raw()) == Some(me.session);
    let meta = match file.metadata() {
        Ok(m) if ours && m.file_type().is_char_device() && split_dev(m.rdev()) == (major, minor) => m,
        _ => return unknown(format!("{name} in this mount namespace is not agentsh's terminal")),
    };
    let scan = Scan::read();
    let other_side = scan.other_side(Pts { instance: meta.dev(), index }, Some(me.session), MAX_DEPTH);
    Found { terminal: Terminal { name, other_side }, key: Some(format!("pts-{:x}-{index}", meta.dev())) }
}

/// A pty slave: its devpts instance (the `st_dev` of its inode) and index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pts {
    instance: u64,
    index: u32,
}

/// One ptmx descriptor found in /proc: who holds it, for which pty.
#[derive(Clone, Debug)]
struct Master {
    pid: u32,
    index: u32,
    /// The devpts instance it belongs to; `None` when it cannot be told (then it is counted as a
    /// holder of every pty with its index: an extra holder can only make agentsh refuse).
    instance: Option<u64>,
}

/// Everything read from /proc in one pass over the processes.
struct Scan {
    masters: Vec<Master>,
    /// Every process's `stat`, for sessions, parents and controlling terminals.
    stats: Vec<(u32, ProcStat)>,
}

impl Scan {
    fn read() -> Scan {
        let own = std::process::id();
        let mnt_ns = fs::read_link("/proc/self/ns/mnt").ok();
        // `/dev/ptmx` (a device node outside devpts) opens the devpts mounted at `pts` beside it.
        let dev_ptmx = fs::metadata("/dev/ptmx").ok().map(|m| (m.dev(), m.ino()));
        let dev_pts = fs::metadata("/dev/pts").ok().map(|m| m.dev());
        let mut masters = Vec::new();
        let mut stats = Vec::new();
        let Ok(procs) = fs::read_dir("/proc") else { return Scan { masters, stats } };
        for entry in procs.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if let Some(stat) =
                fs::read_to_string(format!("/proc/{pid}/stat")).ok().as_deref().and_then(ProcStat::parse)
            {
                stats.push((pid, stat));
            }
            if pid == own {
                continue;
            }
            // Unreadable (another user's, or made undumpable): nothing to learn here.
            let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
            for fd in fds.flatten() {
                let fd_path = fd.path();
                let Ok(target) = fs::read_link(&fd_path) else { continue };
                if target.file_name().is_none_or(|n| n != "ptmx") {
                    continue;
                }
                let fd_name = fd.file_name();
                let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd_name.to_string_lossy()));
                let Some(index) = info.ok().as_deref().and_then(tty_index) else { continue };
                let instance = if statfs(&fd_path).is_ok_and(|s| s.filesystem_type() == DEVPTS_SUPER_MAGIC) {
                    // `/dev/pts/ptmx` itself: its inode lives in the instance.
                    fs::metadata(&fd_path).ok().map(|m| m.dev())
                } else {
                    let node = fs::metadata(&fd_path).ok().map(|m| (m.dev(), m.ino()));
                    let same_ns = mnt_ns.is_some() && fs::read_link(format!("/proc/{pid}/ns/mnt")).ok() == mnt_ns;
                    if same_ns && node.is_some() && node == dev_ptmx { dev_pts } else { None }
                };
                masters.push(Master { pid, index, instance });
            }
        }
        Scan { masters, stats }
    }

    fn stat(&self, pid: u32) -> Option<&ProcStat> {
        self.stats.iter().find(|(p, _)| *p == pid).map(|(_, s)| s)
    }

    /// Who holds `pts`'s other side. `session`: the session it is known to be the controlling
    /// terminal of; otherwise the sessions are looked up by device number.
    fn other_side(&self, pts: Pts, session: Option<i32>, depth: usize) -> OtherSide {
        if depth == 0 {
            return OtherSide::Unknown("terminal programs are nested too deeply to follow".to_string());
        }
        let mut pids: Vec<u32> = self
            .masters
            .iter()
            .filter(|m| m.index == pts.index && m.instance.is_none_or(|i| i == pts.instance))
            .map(|m| m.pid)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        let holders = pids.into_iter().filter_map(|pid| self.holder(pid, depth)).collect();
        OtherSide::Pty { holders, sessions: self.sessions(pts, session) }
    }

    /// `None` when the process has ended since the scan: it holds nothing any more.
    fn holder(&self, pid: u32, depth: usize) -> Option<Holder> {
        let exe = match fs::read_link(format!("/proc/{pid}/exe")) {
            Ok(exe) => exe,
            Err(_) if !Path::new(&format!("/proc/{pid}")).exists() => return None,
            Err(_) => PathBuf::new(),
        };
        let shown = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // A replaced or deleted executable: `/proc/PID/exe` reads "…/name (deleted)".
        let deleted = shown.ends_with(" (deleted)");
        let program = shown.trim_end_matches(" (deleted)").to_string();
        let multiplexer = kind_of(&program).is_some_and(|(k, _)| k == Kind::Multiplexer);
        Some(Holder {
            pid,
            system_installed: !deleted && system_installed(pid, &exe),
            has_terminal: self.stat(pid).is_some_and(|s| s.tty_nr != 0),
            draws_on: if multiplexer { self.draws_on(pid, depth - 1) } else { Vec::new() },
            program,
        })
    }

    /// The terminals `pid` has open other than its own ptys: a multiplexer's clients. Its own
    /// masters are read in the same pass: while it starts a pane it holds both sides of it.
    fn draws_on(&self, pid: u32, depth: usize) -> Vec<Terminal> {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            return vec![Terminal {
                name: format!("the terminals of pid {pid}"),
                other_side: OtherSide::Unknown("its descriptors cannot be read".to_string()),
            }];
        };
        let mut own = Vec::new();
        let mut slaves: Vec<(String, fs::Metadata)> = Vec::new();
        for fd in fds.flatten() {
            let Ok(meta) = fs::metadata(fd.path()) else { continue };
            let name = fs::read_link(fd.path()).map(|p| p.display().to_string()).unwrap_or_default();
            if name.ends_with("/ptmx") {
                let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy()));
                own.extend(info.ok().as_deref().and_then(tty_index));
            } else if meta.file_type().is_char_device()
                && !slaves.iter().any(|(_, m)| (m.dev(), m.rdev()) == (meta.dev(), meta.rdev()))
            {
                slaves.push((name, meta));
            }
        }
        let mut out = Vec::new();
        for (name, meta) in slaves {
            let (major, minor) = split_dev(meta.rdev());
            match device(major, minor) {
                Some(Device::Pty(index)) if !own.contains(&index) => {
                    let pts = Pts { instance: meta.dev(), index };
                    out.push(Terminal { name, other_side: self.other_side(pts, None, depth) });
                }
                Some(Device::Kernel) => out.push(Terminal { name, other_side: OtherSide::Kernel }),
                Some(Device::LegacyPty) => out.push(Terminal {
                    name,
                    other_side: OtherSide::Unknown("it is a legacy BSD pseudo-terminal".to_string()),
                }),
                Some(Device::Pty(_)) | None => {}
            }
        }
        out
    }

    /// How the sessions whose controlling terminal is `pts` were started. Device numbers repeat
    /// across devpts instances, so a session on a same-numbered pty elsewhere may be included:
    /// it can only make the login-session fallback fail.
    fn sessions(&self, pts: Pts, known: Option<i32>) -> Vec<SessionStart> {
        let rdev_of = |s: &ProcStat| {
            let (major, minor) = split_dev(s.tty_nr);
            device(major, minor) == Some(Device::Pty(pts.index))
        };
        let mut leaders: Vec<i32> = match known {
            Some(sid) => vec![sid],
            None => self.stats.iter().filter(|(_, s)| rdev_of(s)).map(|(_, s)| s.session).collect(),
        };
        leaders.sort_unstable();
        leaders.dedup();
        let mut out = Vec::new();
        for leader in leaders {
            let Some(starter) = u32::try_from(leader).ok().and_then(|l| self.stat(l)).map(|s| s.ppid) else {
                // A session whose leader is gone (or not visible) cannot be traced: no fallback.
                return Vec::new();
            };
            let grandparent = self.stat(starter).map(|s| s.ppid).unwrap_or(0);
            out.push(SessionStart {
                starter,
                grandparent_comm: fs::read_to_string(format!("/proc/{grandparent}/comm"))
                    .map(|c| c.trim_end().to_string())
                    .unwrap_or_default(),
                grandparent_uid: uid_of(grandparent).unwrap_or(u32::MAX),
            });
        }
        out
    }
}

/// Whether `pid`'s executable, and every folder on its path (as the process sees the file
/// system), belong to root and can be written by no one else.
fn system_installed(pid: u32, exe: &Path) -> bool {
    let root_only = |m: &fs::Metadata| m.uid() == 0 && m.mode() & 0o022 == 0;
    let Ok(file) = fs::metadata(format!("/proc/{pid}/exe")) else { return false };
    if !file.is_file() || !root_only(&file) || !exe.is_absolute() {
        return false;
    }
    let root = PathBuf::from(format!("/proc/{pid}/root"));
    let inside = |p: &Path| root.join(p.strip_prefix("/").unwrap_or(p));
    // The name must be this very file's, not a hard link's path that was renamed since.
    let named = fs::metadata(inside(exe)).is_ok_and(|m| m.dev() == file.dev() && m.ino() == file.ino());
    named && exe.ancestors().skip(1).all(|dir| fs::metadata(inside(dir)).is_ok_and(|m| m.is_dir() && root_only(&m)))
}

fn uid_of(pid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// The fields of `/proc/PID/stat` used here (and by `grant`, which names a process by its ID
/// and start time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) ppid: u32,
    /// Its process group, and the foreground process group of its controlling terminal (-1
    /// for none).
    pub(crate) pgrp: i32,
    pub(crate) tpgid: i32,
    session: i32,
    /// The controlling terminal's device number (`new_encode_dev`), 0 for none.
    tty_nr: u64,
    /// When it started, in clock ticks after boot: with the ID, a name no later process reuses.
    pub(crate) start: u64,
}

impl ProcStat {
    /// The command name is in parentheses and may hold spaces and parentheses itself: the
    /// fields start after the last `)`.
    pub(crate) fn parse(text: &str) -> Option<ProcStat> {
        let rest = &text[text.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // state ppid pgrp session tty_nr ... starttime (the 22nd field, the 20th after the name)
        Some(ProcStat {
            ppid: f.get(1)?.parse().ok()?,
            pgrp: f.get(2)?.parse().ok()?,
            tpgid: f.get(5)?.parse().ok()?,
            session: f.get(3)?.parse().ok()?,
            tty_nr: f.get(4)?.parse().ok()?,
            start: f.get(19)?.parse().ok()?,
        })
    }
}

/// The `tty-index:` line of a ptmx descriptor's fdinfo: the index of the pty it is the master of.
fn tty_index(fdinfo: &str) -> Option<u32> {
    fdinfo.lines().find_map(|l| l.strip_prefix("tty-index:")).and_then(|v| v.trim().parse().ok())
}

/// A device number as major and minor (glibc's encoding, which holds the kernel's 32-bit one).
fn split_dev(dev: u64) -> (u64, u64) {
    (nix::sys::stat::major(dev), nix::sys::stat::minor(dev))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    /// A Unix98 pty slave, `/dev/pts/N`.
    Pty(u32),
    /// A BSD pty (`/dev/ttyp*`, major 2 and 3).
    LegacyPty,
    /// A terminal the kernel drives: virtual consoles and serial lines (`/dev/ttyN`,
    /// `/dev/ttySN`, major 4), `/dev/console`, USB and ARM serial ports, hypervisor consoles.
    Kernel,
}

/// What kind of terminal device `major:minor` is (`Documentation/admin-guide/devices.txt`).
fn device(major: u64, minor: u64) -> Option<Device> {
    match major {
        136..=143 => u32::try_from((major - 136) * 256 + minor).ok().map(Device::Pty),
        2 | 3 => Some(Device::LegacyPty),
        4 | 188 | 204 | 229 => Some(Device::Kernel),
        5 if minor == 1 => Some(Device::Kernel),
        _ => None,
    }
}

fn kernel_name(major: u64, minor: u64) -> String {
    match (major, minor) {
        (4, 0..=63) => format!("/dev/tty{minor}"),
        (4, _) => format!("/dev/ttyS{}", minor - 64),
        (5, 1) => "/dev/console".to_string(),
        _ => format!("the terminal device {major}:{minor}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(program: &str) -> Holder {
        Holder { pid: 42, program: program.into(), system_installed: true, has_terminal: false, draws_on: vec![] }
    }

    fn pty(holders: Vec<Holder>) -> Terminal {
        Terminal { name: "/dev/pts/3".into(), other_side: OtherSide::Pty { holders, sessions: vec![] } }
    }

    fn console() -> Terminal {
        Terminal { name: "/dev/tty2".into(), other_side: OtherSide::Kernel }
    }

    fn ssh_start(comm: &str, uid: u32) -> SessionStart {
        SessionStart { starter: 7, grandparent_comm: comm.into(), grandparent_uid: uid }
    }

    fn is_person(t: &Terminal) -> bool {
        matches!(judge(t), Owner::Person(_))
    }

    #[test]
    fn only_terminal_programs_serving_a_person_make_a_persons_terminal() {
        let in_terminal = |h: Holder| Holder { has_terminal: true, ..h };
        let user_copy = |h: Holder| Holder { system_installed: false, ..h };
        let tmux_on = |clients: Vec<Terminal>| Holder { draws_on: clients, ..holder("tmux") };
        let cases: Vec<(&str, Terminal, bool)> = vec![
            ("the Linux console: no master side at all", console(), true),
            ("a tmux pane, detached (the tests' person's terminal)", pty(vec![holder("tmux")]), true),
            ("a tmux pane shown on the console", pty(vec![tmux_on(vec![console()])]), true),
            (
                "a tmux pane shown in gnome-terminal",
                pty(vec![tmux_on(vec![pty(vec![holder("gnome-terminal-server")])])]),
                true,
            ),
            (
                "ssh, read as root: the monitor and the session process",
                pty(vec![holder("sshd"), holder("sshd-session")]),
                true,
            ),
            ("a terminal emulator", pty(vec![holder("alacritty")]), true),
            ("an emulator started from another terminal has one; fine", pty(vec![in_terminal(holder("xterm"))]), true),
            // Issue 14: Codex gives the model a pty, in a person's terminal or headless.
            ("codex's pty (its native binary)", pty(vec![holder("codex")]), false),
            ("codex's pty (node)", pty(vec![in_terminal(holder("node"))]), false),
            ("python3 pty.spawn, headless", pty(vec![holder("python3")]), false),
            ("script inside tmux", pty(vec![in_terminal(holder("script"))]), false),
            ("expect", pty(vec![holder("expect")]), false),
            ("a test harness holding the master (rexpect)", pty(vec![holder("prompt_pty-0123abcd")]), false),
            ("python3 copied to ~/bin/tmux", pty(vec![user_copy(holder("tmux"))]), false),
            ("a 'tmux server' that sits in a terminal", pty(vec![in_terminal(holder("tmux"))]), false),
            ("a 'sshd' that sits in a terminal", pty(vec![in_terminal(holder("sshd"))]), false),
            ("tmux, but the agent holds the master too", pty(vec![holder("tmux"), holder("node")]), false),
            (
                "the person's tmux attached from the agent's pty too",
                pty(vec![tmux_on(vec![console(), pty(vec![holder("codex")])])]),
                false,
            ),
            (
                "tmux in tmux in gnome-terminal",
                pty(vec![tmux_on(vec![pty(vec![tmux_on(vec![pty(vec![holder("kgx")])])])])]),
                true,
            ),
            (
                "tmux whose client is on a terminal no one can tell about",
                pty(vec![tmux_on(vec![Terminal {
                    name: "/dev/pts/9".into(),
                    other_side: OtherSide::Unknown("deep".into()),
                }])]),
                false,
            ),
            ("no holder found (another container, unreadable)", pty(vec![]), false),
            (
                "unknown (no /proc)",
                Terminal { name: "the terminal".into(), other_side: OtherSide::Unknown("/proc cannot be read".into()) },
                false,
            ),
        ];
        for (why, terminal, person) in cases {
            assert_eq!(is_person(&terminal), person, "{why}: {:?}", judge(&terminal));
        }
    }

    #[test]
    fn an_uninspectable_holder_is_accepted_only_for_a_session_a_root_login_daemon_started() {
        // Over ssh as a normal user: sshd makes its processes undumpable, so no holder can be read.
        let sessions = |s: Vec<SessionStart>| Terminal {
            name: "/dev/pts/0".into(),
            other_side: OtherSide::Pty { holders: vec![], sessions: s },
        };
        assert!(is_person(&sessions(vec![ssh_start("sshd", 0)])));
        assert!(is_person(&sessions(vec![ssh_start("sshd-session", 0)])));
        // A user's process named sshd, or a root process of another name: no.
        assert!(!is_person(&sessions(vec![ssh_start("sshd", 1000)])));
        assert!(!is_person(&sessions(vec![ssh_start("sudo", 0)])));
        assert!(!is_person(&sessions(vec![ssh_start("sshd", 0), ssh_start("node", 1000)])));
        assert!(!is_person(&sessions(vec![])));
        // A holder that can be read is judged, whatever started the session.
        let held = Terminal {
            name: "/dev/pts/0".into(),
            other_side: OtherSide::Pty { holders: vec![holder("python3")], sessions: vec![ssh_start("sshd", 0)] },
        };
        assert!(!is_person(&held));
    }

    #[test]
    fn the_reason_names_the_holder_sanitized() {
        let Owner::NotPerson(why) = judge(&pty(vec![holder("evil\x1b[2Jname")])) else { panic!() };
        assert!(why.contains("`evil\\x1b[2Jname` (pid 42)"), "{why}");
        assert!(why.contains("not a terminal program"), "{why}");
        let Owner::Person(what) = judge(&pty(vec![holder("tmux")])) else { panic!() };
        assert_eq!(what, "tmux (pid 42)");
    }

    #[test]
    fn only_a_terminal_program_caught_in_passing_is_read_again() {
        // tmux's server forking a new pane: the child is tmux too, and has a terminal already.
        let forking = Holder { has_terminal: true, ..holder("tmux") };
        assert!(worth_rereading(&pty(vec![holder("tmux"), forking])));
        assert!(worth_rereading(&pty(vec![holder("")])), "a holder that ended while it was read");
        // An agent's pty costs one reading, not three.
        assert!(!worth_rereading(&pty(vec![holder("node")])));
        assert!(!worth_rereading(&pty(vec![])));
        assert!(!worth_rereading(&console()));
    }

    #[test]
    fn proc_stat_fields_are_found_after_the_last_parenthesis() {
        let text = "123 (a) b) (c) S 1 123 123 34816 123 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0";
        assert_eq!(
            ProcStat::parse(text),
            Some(ProcStat { ppid: 1, pgrp: 123, tpgid: 123, session: 123, tty_nr: 34816, start: 98765 })
        );
        assert_eq!(ProcStat::parse("garbage"), None);
        // 34816 = 136:0, /dev/pts/0; 1025 = 4:1, /dev/tty1.
        assert_eq!(split_dev(34816), (136, 0));
        assert_eq!(device(136, 0), Some(Device::Pty(0)));
        assert_eq!(device(137, 4), Some(Device::Pty(260)));
        assert_eq!(device(4, 1), Some(Device::Kernel));
        assert_eq!(device(3, 1), Some(Device::LegacyPty));
        assert_eq!(device(1, 3), None, "/dev/null");
        assert_eq!(device(5, 0), None, "/dev/tty itself is never a controlling terminal");
        assert_eq!(kernel_name(4, 65), "/dev/ttyS1");
        assert_eq!(tty_index("pos:\t0\nflags:\t02\ntty-index:\t17\n"), Some(17));
        assert_eq!(tty_index("pos:\t0\n"), None);
    }

    #[test]
    fn a_pty_this_process_holds_is_found_with_its_holder() {
        // The /proc reading, on a pty this test makes: the test binary holds the master, so it
        // is the holder, and it is not a terminal program.
        let pair = nix::pty::openpty(None, None).expect("openpty");
        let slave = fs::metadata(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&pair.slave))).unwrap();
        let (major, minor) = split_dev(slave.rdev());
        let Some(Device::Pty(index)) = device(major, minor) else { panic!("{major}:{minor}") };
        // This thread's scan skips its own process (agentsh never holds a master); a child
        // holds one for it.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::process::Stdio::from(std::fs::File::from(pair.master)))
            .spawn()
            .expect("sleep");
        let scan = Scan::read();
        let side = scan.other_side(Pts { instance: slave.dev(), index }, None, MAX_DEPTH);
        let _ = child.kill();
        let _ = child.wait();
        let OtherSide::Pty { holders, .. } = &side else { panic!("{side:?}") };
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert_eq!(holders[0].pid, child.id());
        assert_eq!(holders[0].program, "sleep");
        assert!(!is_person(&Terminal { name: "t".into(), other_side: side.clone() }));
    }
}
