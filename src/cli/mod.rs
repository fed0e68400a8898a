//! Cli: argv -> an invocation (the clap definition and the fast paths for agents' forms).
//!
//! The command line: the sh-compatible invocation (`-c`, `-lc`, `SCRIPT`, stdin) and the
//! management subcommands. One clap definition feeds `--help`, the man page and completions.
//! It only parses argv; it must not read files or decide anything (`since` asks `date` for the
//! local time zone of a `--since` time written without one).

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;

pub mod fast_path;
pub mod man;
pub mod since;

pub use crate::run::invocation::{ShellArgs, Source};

pub const AFTER_HELP: &str = "\
How it works:
  agentsh parses COMMAND without running a shell, judges every simple command in it
  (safe, moderate, high or forbidden), asks the person at the terminal when approval is
  needed, and then execs the command itself. The agent sees only the command's own output
  and exit status, or a refusal.

Examples:
  agentsh -c 'ls -la'                 run a command through the gate
  agentsh check -- 'rm -rf build'     show the verdict without running anything
  agentsh check --json -- 'git push'  the same, as JSON for scripts
  agentsh whitelist add 'npm test'    let a command run without asking
  agentsh log --since 1h              what ran, was asked about or denied in the last hour
  agentsh init claude-code --write    put agentsh in front of Claude Code (codex, gemini too)

Exit status:
  the command's own      when it ran
  126                    refused (denied, not approved, timed out, no one to ask,
                         or the audit record could not be written)
  127                    command not found
  124                    killed by commandTimeoutSeconds
  2                      usage error
  check: 0 allow, 10 ask, 11 deny

Config: .agents/terminal.json (project, found by walking up) and
~/.config/agentsh/config.json (user). See `man agentsh` or the README.";

/// A gatekeeping shell for AI coding agents.
#[derive(Parser, Debug, Default)]
#[command(
    name = "agentsh",
    version,
    about = "A gatekeeping shell for AI coding agents: parse, judge, ask a person, then exec",
    long_about = None,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(flatten)]
    pub shell: ShellArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum Command {
    /// Show the verdict on a command without running it
    #[command(after_help = "Exit status: 0 allow, 10 ask, 11 deny, 2 usage error.\n\n\
        Examples:\n  agentsh check -- 'rm -rf /'\n  agentsh check --json -- 'git push --force'\n  \
        printf 'cd x &&\\n make\\n' | agentsh check --stdin\n  agentsh check --ask -- ls")]
    Check(CheckArgs),
    /// List, add or remove the commands that run without asking
    #[command(subcommand)]
    Whitelist(WhitelistCommand),
    /// Show the effective policy: level table, built-in rules, custom rules, lists, and where each came from
    #[command(after_help = "Exit status: 0 shown, 1 failed, 2 usage error.\n\n\
        Examples:\n  agentsh policy\n  agentsh policy --json | jq .level\n  agentsh policy --cwd ~/src/project")]
    Policy(PolicyArgs),
    /// Answer an agent's pre-tool hook: tool-call JSON on stdin, the decision on stdout
    #[command(after_help = HOOK_AFTER_HELP)]
    Hook(HookArgs),
    /// Print the settings that put agentsh in front of an agent or shell; --write installs them
    #[command(after_help = INIT_AFTER_HELP)]
    Init(InitArgs),
    /// Check that agents and shells reach agentsh, with a fix for every problem found
    #[command(after_help = "Exit status: 0 all good, 1 a problem was found, 2 usage error.\n\n\
        Examples:\n  agentsh doctor\n  agentsh doctor --json")]
    Doctor(DoctorArgs),
    /// Show the audit log: every decision agentsh made, newest last
    #[command(after_help = LOG_AFTER_HELP)]
    Log(LogArgs),
    /// Summarize the audit log: decisions, risks, approval rate, the commands asked most
    #[command(after_help = STATS_AFTER_HELP)]
    Stats(StatsArgs),
    /// Show pending approval requests live, and answer them (a terminal UI; --json for scripts)
    #[command(after_help = APPROVALS_HELP)]
    Approvals(ApprovalsArgs),
    /// Allow a pending request (see `agentsh approvals`)
    #[command(after_help = "Exit status: 0 answered, 1 failed (no such request, wrong code, ...), 2 usage error.\n\n\
        Examples:\n  agentsh approve 3f9a0c12d4e5\n  agentsh approve 3f9a0c12d4e5 --always\n  \
        agentsh approve 3f9a0c12d4e5 --code 4821     (high risk: the code shown in `agentsh approvals`)")]
    Approve(ApproveArgs),
    /// Reject a pending request, optionally telling the agent what to do instead
    #[command(after_help = "Exit status: 0 answered, 1 failed, 2 usage error.\n\n\
        Example:\n  agentsh deny 3f9a0c12d4e5 --message 'use make test, not the raw script'")]
    Deny(DenyArgs),
    /// Take over: every command the agent runs waits until `agentsh resume` (--deny: is refused)
    #[command(after_help = "The pause lasts until `agentsh resume`, across logins. Waiting commands \
        show in `agentsh approvals`, where each can also be answered.\n\n\
        Examples:\n  agentsh pause\n  agentsh pause --deny\n  agentsh resume")]
    Pause(PauseArgs),
    /// Hand control back: lift `agentsh pause`
    Resume,
    /// Show whether the agent is paused and how many requests are pending
    Status(StatusArgs),
    /// Let this project's .agents/terminal.json loosen the policy (asks on the terminal)
    #[command(after_help = "Settings that tighten the policy (blacklist, requireCommandConfirmation: true, \
        shorter timeouts) always apply. Settings that loosen it (whitelist entries, longer timeouts, allow rules) apply \
        only while the file's exact content is trusted; any edit revokes the trust. agentsh shows the \
        loosening settings and a person must type the code shown on the terminal.\n\n\
        Examples:\n  agentsh trust\n  agentsh untrust")]
    Trust,
    /// Stop trusting this project's .agents/terminal.json (its whitelist is then ignored)
    Untrust,
}

const HOOK_AFTER_HELP: &str = "\
Wire it in with `agentsh init claude-code|codex|gemini` (prints the settings; --write installs).
It answers the agent's tool event (PreToolUse, BeforeTool) and its dialog event
(PermissionRequest, Gemini CLI's ToolPermission notification). A command that needs a person is
asked in the agent's own dialog (Claude Code's and Gemini CLI's UI), or else in agentsh's own
prompt (a tmux popup, `agentsh approvals`), waited for here within --timeout.

Exit status: 0 the answer is on stdout; 2 the call is blocked and the reason is on stderr
(malformed input, wrong event, internal error; Codex: every refusal).

Examples:
  agentsh hook --list
  echo '{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf ~\"}}' | agentsh hook claude-code";

const INIT_AFTER_HELP: &str = "\
Examples:
  agentsh init claude-code            print the settings for ~/.claude/settings.json
  agentsh init claude --write         merge the hooks and CLAUDE_CODE_SHELL in (shows the diff,
                                      keeps a backup), link ~/.local/share/agentsh/bin/bash
  agentsh init codex --write          ~/.codex/hooks.json, their trust records in config.toml, the link
  agentsh init gemini --write         ~/.gemini/settings.json and the link (run gemini with it on PATH)
  eval \"$(agentsh init bash)\"         gate this interactive bash (add it to ~/.bashrc)
  agentsh init zsh --write            add that line to ~/.zshrc

Exit status: 0 done (or already installed), 1 failed (the message says why), 2 usage error.";

const LOG_AFTER_HELP: &str = "\
Every command run through agentsh is recorded before it runs, in
~/.local/state/agentsh/audit.jsonl ($XDG_STATE_HOME/agentsh). `agentsh check` records nothing.

Examples:
  agentsh log                         the last 50 decisions as a table
  agentsh log --since 1h --decision deny
  agentsh log --cwd . --grep 'git push'
  agentsh log --json -n 0 | jq .      every record, as stored
  agentsh log --verify                check the hash chain for edits and removed lines, and
                                      the seal for records cut from either end
  agentsh log --reseal                after you rotated, trimmed or cleared the log on purpose

Exit status: 0 done, 1 failed (or --verify found the log broken or incomplete), 2 usage error.";

const STATS_AFTER_HELP: &str = "\
Examples:
  agentsh stats
  agentsh stats --since 7d --json

Exit status: 0 done, 1 failed, 2 usage error.";

/// A gate decision, for filtering the audit log.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionFilter {
    Allow,
    Ask,
    Deny,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct LogArgs {
    /// Print the matching records as JSON lines, exactly as stored
    #[arg(long)]
    pub json: bool,
    /// Show the last N matching decisions; 0 shows all
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 50)]
    pub lines: usize,
    /// Only decisions since WHEN: a span before now (30m, 2minutes, 1h, 2d, 1w), an RFC 3339
    /// date or time (2025-06-01, 2025-06-01T09:00:00Z), or a date and time in local time
    /// (2025-06-01T09:00)
    #[arg(long, value_name = "WHEN", value_parser = crate::cli::since::parse)]
    pub since: Option<crate::record::clock::Since>,
    /// Only decisions that were allow, ask (whatever the person answered) or deny
    #[arg(long, value_enum, value_name = "DECISION")]
    pub decision: Option<DecisionFilter>,
    /// Only commands run in DIR or below it
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Only commands containing TEXT (case-insensitive)
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
    /// Check every line's hash and link instead of listing, and that the log starts and ends
    /// where its seal says; reports the first broken link, or what is missing
    #[arg(long, conflicts_with_all = ["json", "since", "decision", "cwd", "grep"])]
    pub verify: bool,
    /// After you rotated, trimmed or cleared the log on purpose: seal it as it is now, so that
    /// --verify accepts its start and end (a person confirms it on the terminal)
    #[arg(long, conflicts_with_all = ["json", "since", "decision", "cwd", "grep", "verify"])]
    pub reseal: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct StatsArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Only decisions since WHEN: a span before now (30m, 2minutes, 1h, 2d, 1w), an RFC 3339
    /// date or time, or a date and time in local time (2025-06-01T09:00)
    #[arg(long, value_name = "WHEN", value_parser = crate::cli::since::parse)]
    pub since: Option<crate::record::clock::Since>,
}

/// The agents whose hook protocols agentsh speaks.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookProtocol {
    /// Claude Code PreToolUse and PermissionRequest (tool Bash)
    ClaudeCode,
    /// Codex PreToolUse and PermissionRequest (tool Bash); agentsh asks in its own channel
    Codex,
    /// Gemini CLI BeforeTool (tool run_shell_command) and its ToolPermission notification
    Gemini,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct HookArgs {
    /// The agent's protocol
    #[arg(value_enum, required_unless_present = "list")]
    pub protocol: Option<HookProtocol>,
    /// List the supported protocols and how each maps allow, ask and deny
    #[arg(long)]
    pub list: bool,
    /// The agent's timeout for this hook, in seconds: agentsh answers 10 s before it (default:
    /// the agent's own default, 600 for Claude Code and Codex, 60 for Gemini CLI)
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

/// What `agentsh init` wires agentsh into.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitTarget {
    /// Claude Code (also `claude`): PreToolUse and PermissionRequest hooks and CLAUDE_CODE_SHELL in
    /// ~/.claude/settings.json, and a bash link to agentsh
    #[value(alias = "claude")]
    ClaudeCode,
    /// Codex: PreToolUse and PermissionRequest hooks in ~/.codex/hooks.json with their trust
    /// records, and a bash link to agentsh
    Codex,
    /// Gemini CLI (also `gemini-cli`): BeforeTool and Notification hooks in ~/.gemini/settings.json,
    /// and a bash link to agentsh
    #[value(alias = "gemini-cli")]
    Gemini,
    /// A hook that gates each command line of an interactive bash (~/.bashrc)
    Bash,
    /// A hook that gates each command line of an interactive zsh (~/.zshrc)
    Zsh,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct InitArgs {
    #[arg(value_enum)]
    pub target: InitTarget,
    /// Install it: merge into the settings file (a backup is kept, the diff is shown)
    #[arg(long)]
    pub write: bool,
    /// For bash and zsh: gate every interactive shell, yours included. Without it, --write
    /// gates only shells started with AGENTSH_GATE=1 (the terminals an agent types into)
    #[arg(long)]
    pub all_shells: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct DoctorArgs {
    /// Print the findings as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct PolicyArgs {
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Show the policy for commands run in DIR (its .agents/terminal.json applies)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
}

pub const APPROVALS_HELP: &str = "\
Keys: Up/Down or j/k select, Enter shows details, y allows once, a allows always,
n rejects, m rejects with a message, q quits. High-risk requests need their code typed.

While it is open, an agentsh with no terminal (a headless agent) waits here for an answer
instead of refusing at once.

Examples:
  agentsh approvals            the live list, in another terminal or tmux pane
  agentsh approvals --json     the pending requests as a JSON array";

#[derive(Args, Debug, PartialEq, Eq)]
pub struct ApprovalsArgs {
    /// Print the pending requests as a JSON array and exit
    #[arg(long)]
    pub json: bool,
    /// Show only request ID, and end once it is answered or gone (what agentsh's tmux popup runs)
    #[arg(long, value_name = "ID", conflicts_with = "json")]
    pub request: Option<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct ApproveArgs {
    /// The request id, from `agentsh approvals`
    #[arg(value_name = "ID")]
    pub id: String,
    /// Allow, and add the command to the whitelist (as the prompt's "always" does)
    #[arg(long)]
    pub always: bool,
    /// With --always: which offered entry to add (default: the whole command)
    #[arg(long, value_name = "ENTRY", requires = "always")]
    pub entry: Option<String>,
    /// The approval code of a high-risk request, shown in `agentsh approvals`
    #[arg(long, value_name = "CODE")]
    pub code: Option<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct DenyArgs {
    /// The request id, from `agentsh approvals`
    #[arg(value_name = "ID")]
    pub id: String,
    /// Told to the agent in the refusal, e.g. what to do instead
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct PauseArgs {
    /// Refuse the agent's commands at once ("the person has taken over") instead of holding them
    #[arg(long)]
    pub deny: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct StatusArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, PartialEq, Eq)]
pub struct CheckArgs {
    /// Print one JSON object instead of an explanation
    #[arg(long)]
    pub json: bool,
    /// Judge as if run from DIR (its .agents/terminal.json applies)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Read the command text from standard input (for multi-line commands)
    #[arg(long, conflicts_with = "command")]
    pub stdin: bool,
    /// Judge as `agentsh --ask` would: a person approves even safe commands (AGENTSH_ASK=1 too)
    #[arg(long)]
    pub ask: bool,
    /// Act as the gate for a shell hook: print nothing when allowed, ask the person at the
    /// terminal when needed; exit 0 when it may run, 11 when it must not
    #[arg(long, conflicts_with = "json")]
    pub prompt: bool,
    /// With --prompt: refuse what would be asked (a terminal an agent types into, where the
    /// agent could answer the prompt itself: AGENTSH_INTERACTIVE_ASK=refuse)
    #[arg(long, requires = "prompt")]
    pub refuse: bool,
    /// The command text; several arguments are joined with spaces (put `--` before a command
    /// that starts with `-`)
    #[arg(value_name = "COMMAND", trailing_var_arg = true)]
    pub command: Vec<String>,
}

#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum WhitelistCommand {
    /// Show the whitelist entries in force here, numbered, with the file each comes from
    #[command(
        visible_alias = "ls",
        after_help = "This project's entries: .agents/terminal.json, and the user config's projectWhitelist \
            entries for this project (where \"always\" at a prompt saves when the project file is not trusted). \
            The numbers are the ones `whitelist rm` takes.\n\n\
            Examples:\n  agentsh whitelist list\n  agentsh whitelist list --user\n  agentsh whitelist list --json"
    )]
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
        /// List the user config's entries instead: its own list and every project's
        /// (~/.config/agentsh/config.json)
        #[arg(long)]
        user: bool,
    },
    /// Add an entry: it matches commands that start with its words (`ls` matches `ls -la`, not `lsof`)
    #[command(after_help = "A person confirms it at the terminal (it loosens the policy).\n\n\
        Examples:\n  agentsh whitelist add 'npm test'\n  agentsh whitelist add --user 'cargo test'")]
    Add {
        /// The entry, e.g. 'npm test' or 'git log'
        #[arg(required = true, num_args = 1.., value_name = "ENTRY")]
        entry: Vec<String>,
        /// Add it to the user config (every project) instead of .agents/terminal.json
        #[arg(long)]
        user: bool,
    },
    /// Remove an entry by its text or its number from `whitelist list`; with no argument, pick one
    #[command(
        visible_alias = "remove",
        after_help = "By text, every equal entry goes (ignoring case and spacing), so it no longer applies \
            here.\n\n\
            Examples:\n  agentsh whitelist rm 2\n  agentsh whitelist rm 'git push origin main'\n  \
            agentsh whitelist rm --user 'cargo test'"
    )]
    Rm {
        /// The entry's text or number
        #[arg(num_args = 0.., value_name = "ENTRY|INDEX")]
        entry: Vec<String>,
        /// Remove from the user config's entries (as `whitelist list --user` numbers them)
        #[arg(long)]
        user: bool,
    },
    /// Remove every entry of this project's lists (with --user: of the user config's)
    Clear {
        /// Clear the user config's entries instead: its own list and every project's
        #[arg(long)]
        user: bool,
    },
}

/// The subcommand names: a first argument with one of these names is a subcommand, never a script.
pub fn subcommand_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command().get_subcommands().map(|s| s.get_name().to_string()).collect()
}

/// How agentsh was invoked.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Run shell text: from `-c`, from a script file, or from stdin.
    Shell { source: Source, options: ShellArgs },
    /// A management subcommand.
    Manage(Command),
    /// Arguments agentsh cannot judge (bytes that are not UTF-8): refused, with why.
    Refused(String),
}

/// Parses argv the way `sh` would for the shell forms, and with clap for subcommands, `--help`
/// and `--version`. A clap error (usage, help, version) is returned for the caller to print.
pub fn parse_args(argv: Vec<OsString>) -> Result<Invocation, clap::Error> {
    // Not a usage error: a command with such bytes is refused like any other it cannot judge.
    if let Some((i, bad)) = argv.iter().enumerate().skip(1).find(|(_, a)| a.to_str().is_none()) {
        let shown = crate::text::sanitize::sanitize(&bad.to_string_lossy());
        return Ok(Invocation::Refused(format!(
            "argument {i} ({shown}) holds bytes that are not UTF-8: agentsh judges text, \
             and cannot judge these bytes, so nothing ran\nhint: write the bytes with printf escapes in the \
             command (printf '\\377'), or put the command in a script file"
        )));
    }
    if let Some(shell) = crate::cli::fast_path::shell_form(&argv) {
        return Ok(shell);
    }
    let argv = if invoked_as_shell(&argv) { shell_only(argv) } else { help_as_flag(argv)? };
    if let Some(check) = crate::cli::fast_path::check_form(&argv) {
        return Ok(check);
    }
    parse_with_clap(argv)
}

/// `agentsh help [SUBCOMMAND...]` as `agentsh [SUBCOMMAND...] --help`, as git and cargo take it
/// (issue 29, item 11). Not as `bash` or `sh`, where `help` is a script's name.
fn help_as_flag(argv: Vec<OsString>) -> Result<Vec<OsString>, clap::Error> {
    if argv.get(1).is_none_or(|a| a != "help") {
        return Ok(argv);
    }
    if let Some(sub) = argv.get(2).map(|a| a.to_string_lossy().into_owned()) {
        let names = subcommand_names();
        if !names.contains(&sub) {
            use clap::CommandFactory;
            let near = crate::text::similar::closest(&sub, names.iter().map(String::as_str))
                .map(|n| format!("; did you mean 'agentsh help {n}'?"))
                .unwrap_or_else(|| format!(" (the subcommands: {})", names.join(", ")));
            return Err(
                Cli::command().error(clap::error::ErrorKind::InvalidSubcommand, format!("no subcommand '{sub}'{near}"))
            );
        }
    }
    let mut out = vec![argv[0].clone()];
    out.extend(argv[2..].iter().cloned());
    out.push(OsString::from("--help"));
    Ok(out)
}

/// Names under which agentsh stands in for a shell (`agentsh init` links `bash` to it for the
/// agents that only run a shell by that name).
const SHELL_NAMES: &[&str] = &["bash", "sh"];

/// Whether argv[0] is a shell's name: then agentsh takes only a shell's arguments.
pub fn invoked_as_shell(argv: &[OsString]) -> bool {
    argv.first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| SHELL_NAMES.contains(&n))
}

/// As `bash`, a first word is a script, never a subcommand: `bash approve ID` (or a script
/// named `check` on PATH) must not reach agentsh's management commands, which an agent could
/// use to answer its own request. A `--` goes before the first operand.
fn shell_only(mut argv: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].to_string_lossy();
        if a == "--" {
            return argv;
        }
        if a == "-o" || a == "+o" {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        argv.insert(i, OsString::from("--"));
        return argv;
    }
    argv
}

/// Whether a `--` comes before the first operand (`-o` takes the next word as its value).
fn dashdash_before_operand(argv: &[OsString]) -> bool {
    let mut words = argv.iter().skip(1);
    while let Some(a) = words.next() {
        if a == "--" {
            return true;
        }
        if a == "-o" || a == "+o" {
            words.next();
            continue;
        }
        if !a.to_string_lossy().starts_with('-') || a == "-" {
            return false;
        }
    }
    false
}

/// The full clap parse: every form, `--help`, `--version` and every usage error.
pub fn parse_with_clap(argv: Vec<OsString>) -> Result<Invocation, clap::Error> {
    // After `--` (which `bash` as argv[0] gets first, see `shell_only`) a first word is a script;
    // a `--` after it (`agentsh chek -- ls`) does not make it one.
    let dashdash = dashdash_before_operand(&argv);
    let cli = Cli::try_parse_from(argv)?;
    if let Some(cmd) = cli.command {
        return Ok(Invocation::Manage(cmd));
    }
    let mut shell = cli.shell;
    let mut all = std::mem::take(&mut shell.args);
    let script_only = dashdash;
    match all.first().map(String::as_str) {
        Some("--") => {
            all.remove(0);
        }
        Some(first) if first.starts_with('-') && first.len() > 1 => {
            use clap::CommandFactory;
            let longs: Vec<String> = Cli::command()
                .get_arguments()
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .chain(["--help".to_string(), "--version".to_string()])
                .collect();
            let hint = match crate::text::similar::closest(first, longs.iter().map(String::as_str)) {
                Some(near) => format!("; did you mean '{near}'?"),
                None => " (agentsh takes the options bash takes: -c -l -i -e -u -x -o)".to_string(),
            };
            return Err(Cli::command()
                .error(clap::error::ErrorKind::UnknownArgument, format!("unknown option '{first}'{hint}")));
        }
        _ => {}
    }
    // `agentsh whitelst`: a script that does not exist, named like a subcommand. As `bash`, or
    // after `--`, a first word is always a script.
    if !shell.command_mode
        && !script_only
        && let Some(first) = all.first()
        && !first.contains('/')
        && !std::path::Path::new(first).exists()
    {
        let names = subcommand_names();
        let near = crate::text::similar::closest(first, names.iter().map(String::as_str));
        if let Some(near) = near {
            use clap::CommandFactory;
            return Err(Cli::command().error(
                clap::error::ErrorKind::InvalidSubcommand,
                format!("no subcommand or script '{first}'; did you mean 'agentsh {near}'?"),
            ));
        }
    }
    let mut args = all.into_iter();
    let source = if shell.command_mode {
        match args.next() {
            Some(text) => Source::Text { text, argv0: args.next(), args: args.collect() },
            None => {
                use clap::CommandFactory;
                return Err(
                    Cli::command().error(clap::error::ErrorKind::MissingRequiredArgument, "-c requires a COMMAND")
                );
            }
        }
    } else {
        match args.next() {
            Some(path) => Source::Script { path, args: args.collect() },
            None => Source::Stdin,
        }
    };
    Ok(Invocation::Shell { source, options: shell })
}

pub use man::MAN_SECTIONS;

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(args: &[&str]) -> (Source, ShellArgs) {
        let argv = std::iter::once("agentsh").chain(args.iter().copied()).map(OsString::from).collect();
        match parse_args(argv).unwrap() {
            Invocation::Shell { source, options } => (source, options),
            other => panic!("{args:?} parsed as {other:?}"),
        }
    }

    fn text(t: &str) -> Source {
        Source::Text { text: t.to_string(), argv0: None, args: vec![] }
    }

    #[test]
    fn accepts_every_form_harnesses_use() {
        for form in [
            &["-c", "ls"][..],
            &["-lc", "ls"],
            &["-c", "-l", "ls"],
            &["-l", "-c", "ls"],
            &["--login", "-c", "ls"],
            &["-i", "-c", "ls"],
            &["-e", "-u", "-x", "-o", "pipefail", "-c", "ls"],
            &["--noprofile", "--norc", "-c", "ls"],
        ] {
            assert_eq!(shell(form).0, text("ls"), "{form:?}");
        }
        let (_, o) = shell(&["-lc", "ls"]);
        assert!(o.login && o.command_mode);
        let (_, o) = shell(&["-o", "pipefail", "-euxc", "ls"]);
        assert!(o.errexit && o.nounset && o.xtrace);
        assert_eq!(o.options, ["pipefail"]);
    }

    #[test]
    fn positional_parameters_follow_the_command() {
        let (s, _) = shell(&["-c", "echo $0 $1", "name", "-x", "two"]);
        assert_eq!(
            s,
            Source::Text {
                text: "echo $0 $1".into(),
                argv0: Some("name".into()),
                args: vec!["-x".into(), "two".into()]
            }
        );
        let (s, _) = shell(&["script.sh", "a", "-b"]);
        assert_eq!(s, Source::Script { path: "script.sh".into(), args: vec!["a".into(), "-b".into()] });
        assert_eq!(shell(&[]).0, Source::Stdin);
    }

    #[test]
    fn subcommands_win_over_scripts() {
        let argv = ["agentsh", "check", "--json", "--", "ls -la"].map(OsString::from).to_vec();
        match parse_args(argv).unwrap() {
            Invocation::Manage(Command::Check(c)) => {
                assert!(c.json);
                assert_eq!(c.command, ["ls -la"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(shell(&["./check"]).0, Source::Script { path: "./check".into(), args: vec![] });
    }

    #[test]
    fn as_bash_a_first_word_is_a_script_never_a_subcommand() {
        let parse = |args: &[&str]| parse_args(args.iter().map(OsString::from).collect()).unwrap();
        for (argv0, args) in [
            ("bash", &["approve", "0123456789ab"][..]),
            ("/home/u/.local/share/agentsh/bin/bash", &["whitelist", "add", "x"]),
            ("sh", &["-l", "check", "ls"]),
            ("bash", &["-o", "pipefail", "deny", "x"]),
        ] {
            let argv: Vec<&str> = std::iter::once(argv0).chain(args.iter().copied()).collect();
            match parse(&argv) {
                Invocation::Shell { source: Source::Script { path, .. }, .. } => {
                    assert!(["approve", "whitelist", "check", "deny"].contains(&path.as_str()), "{argv:?}")
                }
                other => panic!("{argv:?} parsed as {other:?}"),
            }
        }
        assert!(matches!(parse(&["bash", "-c", "ls"]), Invocation::Shell { .. }));
        // Issue 29, item 11: `help` and a mistyped subcommand before `--` are a script's names too.
        for args in [&["bash", "help"][..], &["bash", "chek", "--", "ls"], &["agentsh", "--", "chek"]] {
            assert!(matches!(parse(args), Invocation::Shell { source: Source::Script { .. }, .. }), "{args:?}");
        }
        assert!(matches!(parse(&["agentsh", "approve", "0123456789ab"]), Invocation::Manage(_)));
    }

    #[test]
    fn bad_usage_is_an_error() {
        for bad in [&["-c"][..], &["--bogus"], &["-o"]] {
            let argv = std::iter::once("agentsh").chain(bad.iter().copied()).map(OsString::from).collect();
            assert!(parse_args(argv).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
