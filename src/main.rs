//! agentsh's entry point: argv -> invocation -> gate or management command -> exit status.
#![forbid(unsafe_code)]

use agentsh::cli::{self, Invocation};
use std::process::ExitCode;

fn main() -> ExitCode {
    let code = match cli::parse_args(std::env::args_os().collect()) {
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
