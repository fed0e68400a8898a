//! agentsh's entry point: argv -> invocation -> gate or management command -> exit status.
//!
//! agentsh starts before every command an agent runs, so it skips std's runtime start-up
//! (`#![no_main]`): on Linux that reads `/proc/self/maps` to find the main thread's stack guard,
//! asks for the CPU affinity, maps an alternate signal stack and installs SIGSEGV/SIGBUS handlers
//! for the "stack overflow" message: about 0.1 ms of the 1.2 ms a command costs (docs/BENCHMARKS.md).
//! [`startup`] does the two parts agentsh relies on. Without the overflow handler, a stack
//! overflow still ends the process (SIGSEGV) before anything runs: it fails closed.
#![no_main]
#![deny(unsafe_code)]

use agentsh::cli::{self, Invocation};
use std::io::Write;
use std::os::raw::{c_char, c_int};

/// The allocator of the musl build (README's "Which binary"): Doug Lea's malloc, in Rust.
/// musl's own allocator maps and unmaps memory for small blocks as it goes (59 `mmap` and `munmap`
/// calls for `agentsh -c /bin/true`, against 9 with glibc) and judges a 63 KiB script in about
/// twice glibc's time; this one takes what it needs in a few large mappings and judges as fast
/// as glibc (docs/BENCHMARKS.md, "Session 16"). glibc's allocator is kept where glibc is.
#[cfg(target_env = "musl")]
#[global_allocator]
static GLOBAL: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The C `main` that the C library's start code calls, in place of the one std generates.
// SAFETY: `no_mangle` exports this function as the C symbol `main`. `#![no_main]` stops std from
// emitting its own `main`, so no other symbol of that name exists, and the signature is the one
// the C runtime calls. The arguments are taken from it (`std::env::args_os` is empty where std's
// start-up did not run, as with musl; glibc fills it from an init hook).
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    use std::os::unix::ffi::OsStrExt;
    let count = usize::try_from(argc).unwrap_or(0);
    let args: Vec<std::ffi::OsString> = (0..count)
        // SAFETY: the C runtime passes `argc` pointers in `argv`, each NULL or a NUL-terminated
        // string that lives as long as the process; they are copied before anything else runs.
        .map(|i| unsafe { *argv.add(i) })
        .take_while(|p| !p.is_null())
        // SAFETY: as above, a non-NULL entry is a NUL-terminated string.
        .map(|p| std::ffi::OsStr::from_bytes(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes()).to_os_string())
        .collect();
    startup();
    // A panic must not unwind into C (that aborts): report it as std's runtime would, status 101.
    let code = std::panic::catch_unwind(|| run(args)).unwrap_or(101);
    let _ = std::io::stdout().flush();
    // Runs std's clean-up (flushing stdout) and exits.
    std::process::exit(code)
}

/// What std's start-up did that agentsh needs, done without it.
fn startup() {
    // stdin, stdout or stderr closed by the caller: point them at /dev/null, so that a file
    // agentsh opens (the audit log, a config file) cannot become fd 1 or 2 and receive messages.
    use std::os::fd::AsFd;
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let std_fds = [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()];
    let mut polled = std_fds.map(|fd| nix::poll::PollFd::new(fd, nix::poll::PollFlags::empty()));
    if nix::poll::poll(&mut polled, nix::poll::PollTimeout::ZERO).is_ok() {
        for fd in &polled {
            if fd.revents().is_some_and(|r| r.contains(nix::poll::PollFlags::POLLNVAL)) {
                // open(2) returns the lowest free descriptor: the closed one, as fds are visited in order.
                match nix::fcntl::open("/dev/null", nix::fcntl::OFlag::O_RDWR, nix::sys::stat::Mode::empty()) {
                    Ok(null) => _ = std::os::fd::IntoRawFd::into_raw_fd(null),
                    Err(_) => std::process::abort(),
                }
            }
        }
    }
    // Writing to a closed pipe returns EPIPE instead of killing agentsh, as under std's
    // start-up; `quiet_broken_pipe` turns it into status 141, and the command agentsh execs
    // gets the default SIGPIPE back (std's `Command` restores it).
    // SAFETY: SIG_IGN installs no handler, so no code runs in signal context; this is the
    // single-threaded start of the process.
    #[allow(unsafe_code)]
    let _ =
        unsafe { nix::sys::signal::signal(nix::sys::signal::Signal::SIGPIPE, nix::sys::signal::SigHandler::SigIgn) };
}

fn run(argv: Vec<std::ffi::OsString>) -> i32 {
    // agentsh re-spawned by itself to run an approved command in a new session or in the sandbox
    // (run/exec.rs).
    if argv.get(1).is_some_and(|a| a == agentsh::run::exec::NEW_SESSION_MARKER) {
        let rest: Vec<String> = argv[2..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return agentsh::run::exec::exec_in_new_session(&rest);
    }
    if argv.get(1).is_some_and(|a| a == agentsh::run::sandbox::holder::HOLD_MARKER) {
        let rest: Vec<String> = argv[2..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return agentsh::run::sandbox::holder::main(&rest);
    }
    let code = match cli::parse_args(argv) {
        Ok(Invocation::Shell { source, options }) => agentsh::run::gate::run(source, options),
        Ok(Invocation::Refused(why)) => {
            eprintln!("agentsh: denied: {why}");
            agentsh::model::exit::REFUSED
        }
        Ok(Invocation::Manage(cmd)) => {
            quiet_broken_pipe();
            agentsh::commands::run(cmd)
        }
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors go to stderr.
            let code = if e.use_stderr() { agentsh::run::gate::USAGE } else { 0 };
            let _ = e.print();
            code
        }
    };
    if (0..=255).contains(&code) { code } else { 1 }
}

/// `agentsh log | head`: a reader that stops early is not an error, so end quietly with the
/// status a shell gives a process killed by SIGPIPE, as `cat` would, instead of a panic message.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload.downcast_ref::<String>().map(String::as_str).or(payload.downcast_ref::<&str>().copied());
        if message.is_some_and(|m| m.contains("Broken pipe")) {
            std::process::exit(141);
        }
        default(info);
    }));
}
