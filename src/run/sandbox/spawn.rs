//! Running a command in its box: this process joins the box's user and PID namespaces (so its
//! child is born in the box) and takes the box's seccomp filter (so its child has it: see
//! `sys::load_filter`), starts the command as that child, which joins the rest (mount, IPC,
//! UTS, network), takes the box's Landlock domain and process limit, and execs; this process
//! waits for it outside the box's view, passing on signals, so it can record how the command
//! ended.
//!
//! The child is started as `posix_spawn` starts one (`sys::spawn`): its setup makes system
//! calls only, on values prepared before it.

use super::{BoxError, BoxPlan, Network, environ, filter, holder};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// Processes (and threads) the box may hold at once: a fork storm stays in the box. Counted per
/// user namespace by the kernel (Linux 5.14), so for the box alone, for every user but root;
/// for root too, the box's PID namespace hands out no more IDs than this (`holder`).
pub const MAX_PROCESSES: u64 = 4096;

/// The capabilities a boxed command keeps (bit N: capability N, linux/capability.h). The child
/// joins the box's user namespace with all of them, and root's commands would keep them all:
/// with CAP_SYS_ADMIN over the box's mounts, `open_tree` clones a mount without the covers on
/// it and `mount_setattr` makes it writable; with CAP_SETFCAP a file gets capabilities the
/// whole machine honours (issue 25). The child keeps these alone before it execs
/// (`sys::spawn`, one `capset`), and `no_new_privs` keeps every exec from adding one (root's
/// "all", a file's capabilities): nothing in the box gets one back.
///
/// Kept, for root's tools (a non-root person's commands lose all at exec, as before): writing
/// and deleting read-only files (`CAP_DAC_OVERRIDE`: git's objects, Go's module cache,
/// `rm -rf`), and a dev server on a port below 1024 of the box's own network
/// (`CAP_NET_BIND_SERVICE`). The box maps one user and group, root's own, so the capabilities
/// that act on other owners (`CAP_CHOWN`, `CAP_FOWNER`, `CAP_KILL`, `CAP_SETUID`, ...) would
/// change nothing: `tar -x`, `cp -a` and npm as root work without them.
pub const KEPT_CAPABILITIES: u64 = 1 << CAP_DAC_OVERRIDE | 1 << CAP_NET_BIND_SERVICE;
const CAP_DAC_OVERRIDE: u32 = 1;
const CAP_NET_BIND_SERVICE: u32 = 10;

/// How a boxed command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Its exit status.
    Exited(i32),
    /// It ran past the limit and was stopped.
    TimedOut,
    /// Its box ended under it: the holder, PID 1 of the box, was killed, and the kernel ended
    /// every process in the box.
    BoxEnded,
    /// The signal that ended it.
    Signaled(nix::sys::signal::Signal),
}

/// What to run, and how.
pub struct Command<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// `sandbox.passEnv`: secrets the person lets into the box by name.
    pub pass_env: &'a [String],
    /// Stop it after this long (`commandTimeoutSeconds`).
    pub limit: Option<Duration>,
    /// Its name to the box's proxy (the audit record's id), which records its connections
    /// under it and notes what it refused it.
    pub net_id: &'a str,
    /// Asks the person about a host the proxy does not know (`asking`), while the command runs.
    pub ask_host: Option<super::asking::AskHost<'a>>,
}

/// Runs `cmd` in the box `plan` describes (joining its holder, or making it first) and waits
/// for it. `Err`: the box could not be entered, and nothing ran.
pub fn run(plan: Box<BoxPlan>, cmd: &Command<'_>) -> Result<Ended, BoxError> {
    let mut plan = plan;
    let (kept, ruleset) = holder_of(&mut plan)?;
    let pidfd = kept.pidfd();
    let cwd = std::env::current_dir().map_err(|e| BoxError::Failed(format!("the working directory: {e}")))?;
    let c =
        |s: &[u8]| CString::new(s).map_err(|_| BoxError::Failed("a NUL byte in the command or its environment".into()));
    let cwd_c = c(cwd.as_os_str().as_bytes())?;
    let mut env = environ::scrub(std::env::vars_os(), cmd.pass_env);
    // What the proxy adds as credentials stays outside, whatever its name (passEnv included).
    // From the plan, not its spec: a command that joins a kept box builds none (building it
    // costs about 60 µs).
    let held: Vec<&str> = plan.credentials().iter().flat_map(|c| c.variables()).collect();
    env.retain(|(k, _)| !held.iter().any(|h| k.as_bytes() == h.as_bytes()));
    if plan.network() == Network::Proxy {
        // The proxy is the box's only way out: every tool is pointed at it, in place of any
        // proxy of the machine's, which the box could not reach.
        let mut ours = super::proxy::environment(cmd.net_id);
        // Hosts that get a credential are answered with agentsh's certificate: the box's tools
        // trust the system's roots and agentsh's authority (never its key), where the builder
        // wrote them (without it, every host would fail: the proxy then says why it cannot).
        if !plan.credentials().is_empty() {
            let bundle = super::spec::home_of(plan.place()).join(super::proxy::BUNDLE_IN_HOME);
            if plan.kept_at(&bundle).is_some_and(|b| b.is_file()) {
                ours.extend(super::proxy::trust_environment(&bundle));
            }
        }
        env.retain(|(k, _)| !ours.iter().any(|(name, _)| k.as_bytes() == name.as_bytes()));
        env.extend(ours.into_iter().map(|(k, v)| (k.into(), v.into())));
    }
    let envs: Vec<CString> =
        env.iter().map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat())).collect::<Result<_, _>>()?;
    let args: Vec<CString> = std::iter::once(cmd.program)
        .chain(cmd.args.iter().map(String::as_str))
        .map(|a| c(a.as_bytes()))
        .collect::<Result<_, _>>()?;
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone());
    let programs = candidates(cmd.program, path.as_deref())
        .into_iter()
        .map(|p| c(p.as_os_str().as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let argv: Vec<*const libc::c_char> =
        args.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Vec<*const libc::c_char> =
        envs.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let keep_terminal = plan.place().keep_terminal;
    // Registered with the box's proxy before the command starts: its questions come only on
    // this connection, checked both ways (`asking`). Without it, the proxy asks no one.
    let questions = match (plan.network(), cmd.ask_host) {
        (Network::Proxy, Some(decide)) => super::asking::Questions::register(plan.records(), plan.name(), cmd.net_id)
            .ok()
            .map(|from_proxy| Questions { from_proxy, decide }),
        _ => None,
    };
    // A command that does not keep the terminal (agentsh's stdin is none) writes its output to
    // it through a descriptor of its own, opened for writing only: the one agentsh was given is
    // the person's shell's, open for reading too, and a job left behind read what the person
    // typed next through it, and set it non-blocking under their shell (rt5 B5).
    let output = if keep_terminal { [None, None] } else { write_only_terminals() };
    let outputs = [&output[0], &output[1]].map(|fd| fd.as_ref().map_or(-1, |fd| fd.as_raw_fd()));
    let mut namespaces = libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if plan.network() != Network::On {
        namespaces |= libc::CLONE_NEWNET;
    }

    let setup = super::sys::ChildSetup {
        pidfd: pidfd.as_raw_fd(),
        namespaces,
        cwd: &cwd_c,
        new_session: !keep_terminal,
        outputs,
        ruleset: ruleset.as_raw_fd(),
        max_processes: MAX_PROCESSES,
        capabilities: KEPT_CAPABILITIES,
        programs: &programs,
        argv: &argv,
        envp: &envp,
    };
    super::sys::load_filter(&filter::program(keep_terminal))
        .map_err(|e| BoxError::Failed(format!("loading the sandbox's seccomp filter: {e}")))?;
    let started = Instant::now();
    let signals = Signals::block();
    let spawned = super::sys::spawn(&setup);
    // The namespaces and the ruleset are the child's now; this process keeps none of them, and
    // the holder may leave once the child is gone (only its pidfd is kept, to tell whether it
    // ended under the command).
    drop(ruleset);
    let holder = kept.pidfd().try_clone().ok();
    drop(kept);
    let pid = match spawned {
        Ok(pid) => nix::unistd::Pid::from_raw(pid),
        Err((super::sys::Stage::Cwd, _)) => {
            signals.restore();
            return Err(BoxError::Failed(format!(
                "the working directory {} is not in the sandbox (it is one of agentsh's own directories, or \
                 hidden with the rest of home); run the command from the project",
                crate::text::sanitize::sanitize(&cwd.display().to_string())
            )));
        }
        Err((super::sys::Stage::Exec, e)) => {
            signals.restore();
            return Ok(Ended::Exited(super::super::exec::exec_error(cmd.program, &e)));
        }
        // The box's PID namespace took no new process, or its namespaces were gone: its holder
        // ended (it was killed) after this command joined it. Nothing ran; the next command
        // makes a new box.
        Err((super::sys::Stage::Join, e)) if matches!(e.raw_os_error(), Some(libc::ENOMEM | libc::ESRCH)) => {
            signals.restore();
            return Err(BoxError::Failed(
                "the sandbox's holder ended while this command was joining it (something killed it); nothing ran, \
                 and running the command again makes a new sandbox"
                    .into(),
            ));
        }
        Err((stage, e)) => {
            signals.restore();
            return Err(BoxError::Failed(format!("entering the sandbox ({stage:?}): {e}")));
        }
    };
    let ended = signals.wait(pid, keep_terminal, cmd.limit, started, questions.as_ref());
    // The kernel kills the box's processes as its PID 1 exits, a moment before the holder's
    // pidfd says it has: wait that moment.
    let holder_ended = || {
        holder.as_ref().is_some_and(|fd| {
            let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
            let moment = rustix::event::Timespec { tv_sec: 0, tv_nsec: 200_000_000 };
            rustix::event::poll(&mut fds, Some(&moment)).is_ok_and(|n| n > 0)
        })
    };
    Ok(match ended {
        Ended::Signaled(nix::sys::signal::Signal::SIGKILL) if holder_ended() => Ended::BoxEnded,
        e => e,
    })
}

/// The box's holder and a copy of its ruleset: the one the plan found, or a new one where there
/// was none or it has ended since (something killed it): until this process joins, a box made
/// anew is as good as the one it found (the same spec, the same name).
fn holder_of(plan: &mut BoxPlan) -> Result<(holder::Kept, std::os::fd::OwnedFd), BoxError> {
    let mut found = plan.kept.take();
    let mut ended = None;
    for _ in 0..5 {
        let kept = match found.take() {
            Some(k) => k,
            None => {
                let seat = plan.seat();
                holder::build_past(plan.spec_for_box(), &seat, ended)?
            }
        };
        ended = Some(kept.pid());
        // This process's children are born in the box (its PID namespace needs its user
        // namespace). Once joined, a holder that ends cannot be replaced in this process (it is
        // in the box's user namespace); the spawn says so.
        let joined = kept.join_parts().and_then(|(pidfd, ruleset, _)| {
            join(
                pidfd.as_fd(),
                rustix::thread::ThreadNameSpaceType::USER | rustix::thread::ThreadNameSpaceType::PROCESS_ID,
            )
            .map(|()| ruleset)
        });
        match joined {
            Ok(ruleset) => return Ok((kept, ruleset)),
            Err(BoxError::Gone(_)) => continue,
            Err(_) if !kept.alive() => continue,
            Err(e) => return Err(e),
        }
    }
    Err(BoxError::Failed("the sandbox's holder kept ending as it was made (something kills it)".into()))
}

/// The terminals agentsh's standard output and error are (pseudo-terminals), each opened anew
/// for writing only (one descriptor where both are the same), or `None` for one that is no
/// terminal. An `isatty` each; a `readlink` and an `open` for a terminal.
fn write_only_terminals() -> [Option<std::rc::Rc<std::os::fd::OwnedFd>>; 2] {
    let path = |fd: BorrowedFd<'_>| {
        if !nix::unistd::isatty(fd).unwrap_or(false) {
            return None;
        }
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok().filter(|p| p.starts_with("/dev/pts/"))
    };
    let open = |tty: &std::path::Path| {
        let flags = nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_NOCTTY | nix::fcntl::OFlag::O_CLOEXEC;
        nix::fcntl::open(tty, flags, nix::sys::stat::Mode::empty()).ok().map(std::rc::Rc::new)
    };
    let (out, err) = (path(std::io::stdout().as_fd()), path(std::io::stderr().as_fd()));
    let out_fd = out.as_deref().and_then(open);
    let err_fd = match (&out, &err) {
        (Some(a), Some(b)) if a == b => out_fd.clone(),
        (_, Some(b)) => open(b),
        _ => None,
    };
    [out_fd, err_fd]
}

/// Where `execve` looks for `program`, as `execvp` does: itself where it holds a slash, else
/// each directory of `path` (the box's `$PATH`; `/usr/bin:/bin` without one).
fn candidates(program: &str, path: Option<&std::ffi::OsStr>) -> Vec<std::path::PathBuf> {
    if program.contains('/') {
        return vec![program.into()];
    }
    if program.is_empty() {
        return Vec::new();
    }
    let path = path.unwrap_or(std::ffi::OsStr::new("/usr/bin:/bin"));
    std::env::split_paths(path).map(|d| if d.as_os_str().is_empty() { ".".into() } else { d }.join(program)).collect()
}

/// `setns` through the holder's pidfd into `kinds`, waiting briefly for a judging thread to end
/// (a user namespace cannot be joined by a process with other threads).
fn join(pidfd: BorrowedFd<'_>, kinds: rustix::thread::ThreadNameSpaceType) -> Result<(), BoxError> {
    let join = || {
        rustix::thread::move_into_thread_name_spaces(pidfd, kinds)
            .map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error()))
    };
    alone(join).map_err(|e| match e {
        nix::errno::Errno::ESRCH => BoxError::Gone(format!("joining the sandbox: {e}")),
        e => BoxError::Failed(format!("joining the sandbox: {e}")),
    })
}

/// Runs `f`, a user namespace change, and tries again while it fails because this process still
/// has another thread (EINVAL), for up to 50 ms.
pub(crate) fn alone(f: impl Fn() -> nix::Result<()>) -> nix::Result<()> {
    alone_counting(f, || std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(1))
}

/// [`alone`] with the count of this process's threads from `threads`. The judging thread may
/// leave between a refused call and the count (seen about once in a few hundred boxed commands
/// of Claude Code's wrapper once it no longer built the box's spec first): a count of one after
/// a refusal earns one more try before the refusal stands.
fn alone_counting(f: impl Fn() -> nix::Result<()>, threads: impl Fn() -> usize) -> nix::Result<()> {
    let mut counted_alone = false;
    for _ in 0..200 {
        match f() {
            Err(nix::errno::Errno::EINVAL) if threads() > 1 => std::thread::sleep(Duration::from_micros(250)),
            Err(nix::errno::Errno::EINVAL) if !counted_alone => counted_alone = true,
            r => return r,
        }
    }
    f()
}

/// Where the box's proxy puts its questions for this command, and who answers them.
struct Questions<'a> {
    from_proxy: super::asking::Questions,
    decide: super::asking::AskHost<'a>,
}

/// The signals this process passes on to the command while it waits, blocked and read from a
/// signalfd with the child's end (SIGCHLD).
struct Signals {
    fd: Option<nix::sys::signalfd::SignalFd>,
    mask: nix::sys::signal::SigSet,
}

impl Signals {
    fn block() -> Signals {
        use nix::sys::signal::{SigSet, Signal};
        let mut mask = SigSet::empty();
        for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGCHLD] {
            mask.add(s);
        }
        let _ = mask.thread_block();
        let flags = nix::sys::signalfd::SfdFlags::SFD_NONBLOCK | nix::sys::signalfd::SfdFlags::SFD_CLOEXEC;
        Signals { fd: nix::sys::signalfd::SignalFd::with_flags(&mask, flags).ok(), mask }
    }

    /// Unblocks what [`Signals::block`] blocked.
    fn restore(self) {
        drop(self.fd);
        let _ = self.mask.thread_unblock();
    }

    /// Waits for `pid`, passing on the signals this process gets (not the ones a terminal sent
    /// its whole foreground group, which the child got too), stopping it at `limit`, and
    /// answering the proxy's questions about hosts.
    fn wait(
        self,
        pid: nix::unistd::Pid,
        keep_terminal: bool,
        limit: Option<Duration>,
        started: Instant,
        questions: Option<&Questions<'_>>,
    ) -> Ended {
        use nix::sys::signal::{Signal, kill, killpg};
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        let signal = |sig| {
            // A child in a session of its own leads its group: signal all of it.
            if keep_terminal || killpg(pid, sig).is_err() {
                let _ = kill(pid, sig);
            }
        };
        let mut stopping: Option<Instant> = None;
        let ended = loop {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED)) {
                Ok(WaitStatus::Exited(_, code)) => break Ended::Exited(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => break Ended::Signaled(sig),
                // Stopped for the terminal although its group has it: it wants a group of its
                // own in the foreground (job control: an interactive shell), which the box does
                // not hand over (the filter refuses TIOCSPGRP). It would wait for ever.
                Ok(WaitStatus::Stopped(_, Signal::SIGTTIN | Signal::SIGTTOU)) if keep_terminal && foreground() => {
                    eprintln!(
                        "agentsh: the command stopped to take the terminal for a process group of its own (job \
                         control, as an interactive shell does), which the sandbox does not allow, so it was ended. \
                         Give a shell its commands instead (bash -c '...'), or run it without the terminal"
                    );
                    let _ = kill(pid, Signal::SIGKILL);
                    let _ = waitpid(pid, None);
                    break Ended::Exited(126);
                }
                Ok(_) => {}
                Err(_) => break Ended::Exited(126),
            }
            let now = Instant::now();
            let deadline = match (limit, stopping) {
                (_, Some(at)) => Some(at + Duration::from_secs(2)),
                (Some(l), None) => Some(started + l),
                (None, None) => None,
            };
            if let Some(d) = deadline
                && now >= d
            {
                match stopping {
                    None => {
                        eprintln!(
                            "agentsh: the command ran longer than commandTimeoutSeconds ({}s) and was stopped",
                            limit.unwrap_or_default().as_secs()
                        );
                        signal(Signal::SIGTERM);
                        stopping = Some(now);
                    }
                    Some(_) => {
                        signal(Signal::SIGKILL);
                        let _ = waitpid(pid, None);
                        break Ended::TimedOut;
                    }
                }
                continue;
            }
            let wait_ms = deadline.map(|d| d.saturating_duration_since(now).as_millis().min(60_000) as u16);
            let Some(fd) = &self.fd else {
                std::thread::sleep(Duration::from_millis(wait_ms.map_or(20, |w| u64::from(w).min(20))));
                if let Some(q) = questions
                    && q.from_proxy.waiting()
                {
                    q.from_proxy.answer(q.decide);
                }
                continue;
            };
            let mut fds = vec![nix::poll::PollFd::new(fd.as_fd(), nix::poll::PollFlags::POLLIN)];
            fds.extend(
                questions
                    .and_then(|q| q.from_proxy.fd())
                    .map(|fd| nix::poll::PollFd::new(fd, nix::poll::PollFlags::POLLIN)),
            );
            let timeout = wait_ms.map_or(nix::poll::PollTimeout::NONE, nix::poll::PollTimeout::from);
            let _ = nix::poll::poll(&mut fds, timeout);
            if let Some(q) = questions
                && fds.get(1).and_then(|f| f.revents()).is_some_and(|r| !r.is_empty())
            {
                q.from_proxy.answer(q.decide);
            }
            while let Ok(Some(info)) = fd.read_signal() {
                let Ok(sig) = Signal::try_from(info.ssi_signo as i32) else { continue };
                // SI_KERNEL: sent by the terminal to its foreground group, the child included.
                let from_terminal = info.ssi_code == 0x80;
                if sig != Signal::SIGCHLD && !(keep_terminal && from_terminal) {
                    signal(sig);
                }
            }
        };
        let ended = if stopping.is_some() { Ended::TimedOut } else { ended };
        self.restore();
        ended
    }
}

/// Whether this process's group has the terminal on its standard input in the foreground.
fn foreground() -> bool {
    nix::unistd::tcgetpgrp(std::io::stdin()).is_ok_and(|g| g == nix::unistd::getpgrp())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The judging thread leaves between a refused join and the count of threads: the join is
    /// tried again, not refused (a command was refused "joining the sandbox: EINVAL" about once
    /// in a few hundred of Claude Code's).
    #[test]
    fn a_thread_that_leaves_after_a_refused_join_gets_one_more_try() {
        let calls = std::cell::Cell::new(0);
        let join = || {
            calls.set(calls.get() + 1);
            if calls.get() == 1 { Err(nix::errno::Errno::EINVAL) } else { Ok(()) }
        };
        assert_eq!(alone_counting(join, || 1), Ok(()));
        assert_eq!(calls.get(), 2);
        // Alone, and refused twice: the refusal stands (it is not about threads).
        let refused = || Err(nix::errno::Errno::EINVAL);
        assert_eq!(alone_counting(refused, || 1), Err(nix::errno::Errno::EINVAL));
    }
}
