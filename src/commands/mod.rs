//! Commands: the management subcommands, one file each.
//!
//! Management subcommands, one file each. They print results on stdout (they are the command
//! the person ran) and errors on stderr; they never run the commands they talk about.

pub mod approvals;
pub mod check;
pub mod confirm;
pub mod doctor;
pub mod hook;
pub mod init;
pub mod log;
pub mod policy;
pub mod queue;
pub mod stats;
pub mod trust;
pub mod whitelist;

use crate::cli::Command;

/// Runs a management subcommand; returns the exit status.
pub fn run(cmd: Command) -> i32 {
    let result = match cmd {
        Command::Check(args) => check::run(args),
        Command::Whitelist(w) => whitelist::run(w),
        Command::Policy(args) => policy::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Init(args) => init::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Log(args) => log::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Approvals(a) => approvals::run(a),
        Command::Approve(a) => queue::approve(a),
        Command::Deny(d) => queue::deny(d),
        Command::Pause(p) => queue::pause(p),
        Command::Resume => queue::resume(),
        Command::Status(s) => queue::status(s),
        Command::Trust => trust::trust(),
        Command::Untrust => trust::untrust(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agentsh: {}", crate::text::sanitize::sanitize(&format!("{e:#}")));
            if let Some(h) = e.downcast_ref::<Hinted>() {
                eprintln!("hint: {}", crate::text::sanitize::sanitize(&h.hint));
            }
            1
        }
    }
}

/// An error with a `hint:` line telling the person what to do.
#[derive(Debug)]
pub struct Hinted {
    pub message: String,
    pub hint: String,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}
