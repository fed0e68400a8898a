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
        Ok(Invocation::Manage(cmd)) => agentsh::commands::run(cmd),
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors go to stderr.
            let code = if e.use_stderr() { agentsh::gate::USAGE } else { 0 };
            let _ = e.print();
            code
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
