//! The invocation agentsh runs: shell text (from `-c`, a script file or stdin) and the options
//! a shell takes. `cli` builds it from argv (the flags' help text lives here, with their
//! definitions, and clap reads it); `gate` and `exec` consume it.

use clap::Args;

/// The options a shell takes, so agents and harnesses can call agentsh as they call `bash`.
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
pub struct ShellArgs {
    /// Read the command from the first argument (as `sh -c`); later arguments set $0, $1, ...
    #[arg(short = 'c')]
    pub command_mode: bool,
    /// Act as a login shell (passed on to the shell that runs compound commands)
    #[arg(short = 'l', long = "login")]
    pub login: bool,
    /// Accepted for compatibility; the gate itself is never interactive
    #[arg(short = 'i')]
    pub interactive: bool,
    /// Exit on the first failing command (passed on, as `set -e`)
    #[arg(short = 'e')]
    pub errexit: bool,
    /// Treat unset variables as an error (passed on, as `set -u`)
    #[arg(short = 'u')]
    pub nounset: bool,
    /// Trace commands (passed on, as `set -x`)
    #[arg(short = 'x')]
    pub xtrace: bool,
    /// Set a shell option, e.g. `-o pipefail` (passed on)
    #[arg(short = 'o', value_name = "OPTION")]
    pub options: Vec<String>,
    /// Passed on to bash
    #[arg(long)]
    pub noprofile: bool,
    /// Passed on to bash
    #[arg(long)]
    pub norc: bool,
    /// Ask the person even if the command is safe (only ever tightens the policy)
    #[arg(long)]
    pub ask: bool,
    /// COMMAND with -c (then $0 and arguments), otherwise SCRIPT and its arguments
    #[arg(value_name = "COMMAND|SCRIPT", trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Source {
    /// `-c TEXT [$0 [$1 ...]]`
    Text { text: String, argv0: Option<String>, args: Vec<String> },
    /// `SCRIPT [ARGS]`
    Script { path: String, args: Vec<String> },
    /// No command: read the script from standard input.
    Stdin,
}
