//! The pipeline for one command: invocation -> parse/assess/decide -> approve -> exec.
//! It reads like a table of contents; every step lives in its own module. Only this module
//! and `exec` act on a verdict, and they do so by matching on it, never by default.

use crate::cli::{ShellArgs, Source};
use crate::config::{self, Config};
use crate::decide::{self, DecidedBy, Part, Verdict};
use crate::exec;
use crate::explain;
use crate::model::{Decision, Risk};
use crate::parse;
use crate::prompt::{self, Answer, PartSummary, PromptRequest};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// Exit status when agentsh refuses to run a command.
pub const REFUSED: i32 = 126;
/// Exit status for usage errors.
pub const USAGE: i32 = 2;

/// Runs shell text through the gate. Returns the exit status to use (the command's own when
/// it was supervised; otherwise this process is replaced by the command).
pub fn run(source: Source, options: ShellArgs) -> i32 {
    let source = match read_source(source) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let text = match &source {
        Source::Text { text, .. } => text.clone(),
        Source::Script { path, .. } => match read_script(path) {
            Ok(t) => t,
            Err(code) => return code,
        },
        Source::Stdin => unreachable!("read_source turns stdin into text"),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let config = config::load(&cwd);
    explain::print_warnings(&config.warnings);
    let mut policy = config.policy.clone();
    policy.force_ask = options.ask || env_flag("AGENTSH_ASK");

    let verdict = decide::judge_bounded(&text, &policy, decide::JUDGE_BUDGET);
    match verdict.decision {
        Decision::Allow => {}
        Decision::Deny => {
            explain::print_denial(&verdict);
            return REFUSED;
        }
        Decision::Ask => {
            let answer = approve(&verdict, &config, &cwd);
            if let Err(code) = act_on_answer(answer, &verdict, &cwd) {
                return code;
            }
        }
    }
    let script = parse::parse(&text).unwrap_or_default();
    let bash = Path::new("/bin/bash").exists();
    let plan = exec::plan(&script, &source, &options, bash);
    if config.command_timeout > 0 {
        return exec::supervise(plan, Duration::from_secs(config.command_timeout)).unwrap_or(REFUSED);
    }
    exec::exec(plan)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false" | "no"))
}

/// Stdin scripts become text; a terminal on stdin is a mistake, not a script.
fn read_source(source: Source) -> Result<Source, i32> {
    if source != Source::Stdin {
        return Ok(source);
    }
    if nix::unistd::isatty(std::io::stdin()).unwrap_or(false) {
        eprintln!("agentsh: no command given, and agentsh is not an interactive shell");
        eprintln!("hint: run `agentsh -c 'COMMAND'`, or see `agentsh --help`");
        return Err(USAGE);
    }
    let mut text = String::new();
    let limit = parse::MAX_INPUT_BYTES as u64 + 1;
    if let Err(e) = std::io::stdin().take(limit).read_to_string(&mut text) {
        eprintln!("agentsh: cannot read the script from standard input: {e}");
        return Err(REFUSED);
    }
    Ok(Source::Text { text, argv0: None, args: Vec::new() })
}

fn read_script(path: &str) -> Result<String, i32> {
    let shown = crate::sanitize::sanitize(path);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("agentsh: {shown}: No such file or directory");
            return Err(127);
        }
        Err(e) => {
            eprintln!("agentsh: {shown}: {e}");
            return Err(REFUSED);
        }
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(first) = text.lines().next().and_then(|l| l.strip_prefix("#!")) {
        let interpreter = first.split_whitespace().map(crate::assess::basename).find(|w| *w != "env").unwrap_or("");
        if !matches!(interpreter, "sh" | "bash" | "dash" | "zsh" | "ksh") {
            // Judge what will really run: the interpreter with the file, not shell text.
            return Ok(format!(
                "{} {}",
                shlex::try_quote(interpreter).unwrap_or_default(),
                shlex::try_quote(path).unwrap_or_default()
            ));
        }
    }
    Ok(text)
}

/// Asks the person. Never reads stdin, arguments or environment for the answer.
fn approve(verdict: &Verdict, config: &Config, cwd: &Path) -> Answer {
    let asking: Vec<&Part> = verdict.blocking_parts().collect();
    let code = match prompt::random_code() {
        Ok(c) => c,
        Err(e) => return Answer::NoTerminal(format!("cannot make an approval code: {e}")),
    };
    let notice = crate::tty::tiocsti_notice();
    let req = PromptRequest {
        command: verdict.command.clone(),
        cwd: cwd.display().to_string(),
        risk: verdict.risk.max(Risk::Moderate),
        category: verdict.category,
        reasons: verdict.reasons.clone(),
        parts: if asking.len() > 1 || verdict.parts.len() > 1 {
            asking
                .iter()
                .map(|p| PartSummary {
                    text: p.assessment.text(),
                    risk: p.assessment.risk,
                    reasons: p.assessment.reasons.clone(),
                })
                .collect()
        } else {
            Vec::new()
        },
        always_entries: always_entries(&asking),
        timeout: Duration::from_secs(config.confirmation_timeout),
        code,
        notice,
    };
    prompt::ask(&req)
}

/// Whitelist entries a person may choose for "always": the part's whole command and shorter
/// prefixes, but never a bare interpreter, shell or wrapper, which would allow anything.
pub fn always_entries(asking: &[&Part]) -> Vec<String> {
    // With several asking parts one entry cannot cover them all: approve once instead.
    let [only] = asking else { return Vec::new() };
    if matches!(only.decided_by, DecidedBy::BrokenBlacklist(_) | DecidedBy::ForcedAsk)
        || only.assessment.argv.is_empty()
    {
        return Vec::new();
    }
    if only.assessment.rule == "redirect" || only.assessment.rule == "parse" || only.assessment.rule == "opaque" {
        return Vec::new();
    }
    let argv = &only.assessment.argv;
    // `bash`, `exec` or `sudo` alone as the whole command would still become an entry that
    // matches `bash -c '...'`, `exec rm ...`: anything at all.
    if argv.len() == 1 && NEVER_ALONE.contains(&crate::assess::basename(&argv[0])) {
        return Vec::new();
    }
    let mut out = vec![crate::assess::quote_argv(argv)];
    for n in (1..argv.len().min(3)).rev() {
        let prefix = &argv[..n];
        if n == 1 && NEVER_ALONE.contains(&crate::assess::basename(&prefix[0])) {
            continue;
        }
        if n == 2 && NEVER_ALONE.contains(&crate::assess::basename(&prefix[0])) && prefix[1].starts_with('-') {
            // `bash -c`, `python -c`, `node -e`: still anything at all.
            continue;
        }
        if prefix.iter().any(|w| w.starts_with('-')) {
            continue;
        }
        out.push(crate::assess::quote_argv(prefix));
    }
    out.dedup();
    out
}

/// Programs that can run anything: never whitelisted on their own.
const NEVER_ALONE: &[&str] = &[
    "python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "bash", "sh", "zsh",
    "dash", "ksh", "fish", "env", "sudo", "doas", "su", "xargs", "git", "npx", "npm", "pnpm", "yarn", "cargo", "go",
    "make", "docker", "kubectl", "eval", "exec", "command", "nohup", "timeout", "nice", "time", "watch", "find", "awk",
    "sed", "ssh", "curl", "wget", "rm", "chmod", "chown", "pip", "pip3", "uv", "agentsh",
];

/// Turns the person's answer into "run" or a refusal; records "always" in the whitelist.
fn act_on_answer(answer: Answer, verdict: &Verdict, cwd: &Path) -> Result<(), i32> {
    match answer {
        Answer::Once => Ok(()),
        Answer::Always(entry) => {
            let path = config::project_file_for_writing(cwd);
            match crate::commands::whitelist::add_entry(&path, &entry) {
                Ok(_) => eprintln!(
                    "agentsh: added `{}` to the whitelist in {}",
                    crate::sanitize::sanitize(&entry),
                    crate::sanitize::sanitize(&path.display().to_string())
                ),
                // The person approved this run; only remembering failed.
                Err(e) => eprintln!("agentsh: warning: could not save the whitelist entry: {e:#}"),
            }
            Ok(())
        }
        Answer::Rejected => Err(explain::print_not_approved(verdict, "rejected by the person at the terminal", None)),
        Answer::TimedOut => Err(explain::print_not_approved(verdict, "timed out: no answer at the terminal", None)),
        Answer::NoTerminal(why) => Err(explain::print_not_approved(
            verdict,
            &format!("no one to ask: {why}"),
            Some(
                "approval needs a person at this terminal; to let this command run without asking, \
                 the person can run `agentsh whitelist add '<command>'` in their own shell",
            ),
        )),
        Answer::Interrupted(signal) => {
            let code = explain::print_not_approved(verdict, &format!("interrupted by {signal}"), None);
            if matches!(signal.as_str(), "SIGTERM" | "SIGHUP" | "SIGQUIT") {
                crate::tty::reraise(&signal);
            }
            Err(code)
        }
    }
}
