//! agentsh's entry point: argv -> invocation -> gate or management command -> exit status.
#![forbid(unsafe_code)]

use agentsh::cli::{self, Invocation};
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // agentsh re-spawned by itself to run an approved command in a new session (exec.rs).
    if argv.get(1).is_some_and(|a| a == agentsh::exec::NEW_SESSION_MARKER) {
        let rest: Vec<String> = argv[2..].iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return ExitCode::from(u8::try_from(agentsh::exec::exec_in_new_session(&rest)).unwrap_or(1));
    }
    let code = match cli::parse_args(argv) {
        Ok(Invocation::Shell { source, options }) => agentsh::gate::run(source, options),
        Ok(Invocation::Manage(cmd)) => {
            quiet_broken_pipe();
            agentsh::commands::run(cmd)
        }
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors go to stderr.
            let code = if e.use_stderr() { agentsh::gate::USAGE } else { 0 };
            let _ = e.print();
            code
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
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
