//! `agentsh doctor`: proves the wiring. A list of independent checks (`CHECKS`, data: a new
//! check is a new row), each returning findings with a level and a fix. It reads the
//! environment and files; it changes nothing except a probe file in agentsh's state directory.

use crate::cli::DoctorArgs;
use anyhow::Result;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Info,
    /// A fact about the kernel the person may not be able to change (their machine's admin
    /// may): said, with what it means and what would change it, but not a problem (exit 0).
    Kernel,
    Problem,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// One check: a name and a function from the environment to findings.
pub struct Check {
    pub name: &'static str,
    pub run: fn(&Facts) -> Vec<Finding>,
}

/// The checks, in the order they print.
pub const CHECKS: &[Check] = &[
    Check { name: "shell", run: shell_route },
    Check { name: "hooks", run: agent_hooks },
    Check { name: "interactive", run: interactive_hooks },
    Check { name: "link", run: bash_link },
    Check { name: "config", run: config_files },
    Check { name: "audit", run: audit_log },
    Check { name: "pause", run: pause_state },
    Check { name: "queue", run: approval_queue },
    Check { name: "terminal", run: terminal },
    Check { name: "tiocsti", run: tiocsti },
    Check { name: "sandbox", run: sandbox },
];

/// What the checks look at, gathered once.
pub struct Facts {
    pub home: Option<PathBuf>,
    pub cwd: PathBuf,
    /// This binary, resolved.
    pub me: Option<PathBuf>,
    pub env: fn(&str) -> Option<String>,
}

impl Facts {
    fn from_process() -> Facts {
        Facts {
            home: crate::policy::dirs::home().map(Path::to_path_buf),
            cwd: std::env::current_dir().unwrap_or_else(|_| ".".into()),
            me: std::env::current_exe().ok().and_then(|p| p.canonicalize().ok()),
            env: |k| std::env::var(k).ok().filter(|v| !v.is_empty()),
        }
    }

    /// Whether a program path (or name on PATH) is this agentsh.
    fn reaches_agentsh(&self, program: &str) -> bool {
        let path = if program.contains('/') {
            Some(PathBuf::from(program))
        } else {
            (self.env)("PATH").and_then(|p| p.split(':').map(|d| Path::new(d).join(program)).find(|c| c.is_file()))
        };
        let Some(real) = path.and_then(|p| p.canonicalize().ok()) else { return false };
        Some(&real) == self.me.as_ref() || real.file_name().is_some_and(|n| n == "agentsh")
    }
}

fn finding(check: &'static str, level: Level, message: String, fix: Option<&str>) -> Finding {
    Finding { check, level, message, fix: fix.map(str::to_string) }
}

pub fn run(args: DoctorArgs) -> Result<i32> {
    let facts = Facts::from_process();
    let findings: Vec<Finding> = CHECKS.iter().flat_map(|c| (c.run)(&facts)).collect();
    let ok = findings.iter().all(|f| f.level != Level::Problem);
    if args.json {
        println!("{}", serde_json::json!({ "ok": ok, "findings": findings }));
    } else {
        let width = crate::ask::tty::width_of(std::io::stdout());
        for f in &findings {
            let mark = match f.level {
                Level::Ok => "ok     ",
                Level::Info => "note   ",
                Level::Kernel => "kernel ",
                Level::Problem => "PROBLEM",
            };
            // Continuation lines under the message, on a terminal narrower than a line; a path
            // longer than the line is broken there too, not at the terminal's first column.
            let fit = |line: String| match width {
                Some(w) => crate::text::wrap::wrap_hanging(&line, w, 20).join("\n"),
                None => line,
            };
            println!("{}", fit(format!("{mark} {:<11} {}", f.check, crate::text::sanitize::sanitize(&f.message))));
            if let Some(fix) = &f.fix {
                println!("{}", fit(format!("        {:<11} fix: {}", "", crate::text::sanitize::sanitize(fix))));
            }
        }
        let kernel = findings.iter().filter(|f| f.level == Level::Kernel).count();
        let notes = if kernel == 0 {
            String::new()
        } else {
            format!(
                "; {} about this kernel (marked kernel: not a problem with agentsh's setup)",
                crate::text::count(kernel, "note", "notes")
            )
        };
        crate::ask::tty::print_fitted(&format!(
            "{}{notes}\n",
            if ok { "agentsh doctor: no problems found" } else { "agentsh doctor: problems found (see fix:)" }
        ));
    }
    Ok(if ok { 0 } else { 1 })
}

/// Whether each agent's shell route reaches agentsh, by what each version really uses
/// (measured live, issue 14): Claude Code 2.1 `CLAUDE_CODE_SHELL` (environment or settings.json
/// `env`), else `$SHELL`, and only a path containing `bash` or `zsh`; Codex 0.169 the login
/// shell of the passwd entry (by file name), never `$SHELL`; Gemini CLI 0.61 `bash` from PATH.
fn shell_route(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    // Claude Code.
    let settings_env = claude_settings_file(f)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["env"]["CLAUDE_CODE_SHELL"].as_str().map(str::to_string));
    let claude = (f.env)("CLAUDE_CODE_SHELL")
        .map(|v| (v, "CLAUDE_CODE_SHELL"))
        .or(settings_env.map(|v| (v, "settings.json env.CLAUDE_CODE_SHELL")))
        .or((f.env)("SHELL").map(|v| (v, "SHELL")));
    out.push(match claude {
        Some((v, from)) if !(v.contains("bash") || v.contains("zsh")) => finding(
            "shell",
            if f.reaches_agentsh(&v) { Level::Problem } else { Level::Info },
            format!("Claude Code: {from}={v} is ignored (Claude Code takes only a path containing bash or zsh)"),
            Some("agentsh init claude-code --write (links ~/.local/share/agentsh/bin/bash and sets CLAUDE_CODE_SHELL)"),
        ),
        Some((v, from)) if f.reaches_agentsh(&v) => {
            finding("shell", Level::Ok, format!("Claude Code: {from}={v} is agentsh"), None)
        }
        Some((v, from)) => finding(
            "shell",
            Level::Info,
            format!("Claude Code: {from}={v} is not agentsh"),
            Some("agentsh init claude-code --write"),
        ),
        None => finding("shell", Level::Info, "Claude Code: no CLAUDE_CODE_SHELL or SHELL".into(), None),
    });
    // Codex: the passwd entry's shell, by file name.
    // From /etc/passwd only: NSS crashes the static binary for users it does not list.
    let login = crate::policy::dirs::passwd(nix::unistd::getuid().as_raw()).map(|u| PathBuf::from(u.shell));
    out.push(match login {
        Some(sh) if f.reaches_agentsh(&sh.display().to_string()) => {
            let named = sh.file_name().and_then(|n| n.to_str()).is_some_and(|n| ["bash", "zsh", "sh"].contains(&n));
            if named {
                finding(
                    "shell",
                    Level::Ok,
                    format!("Codex: the login shell {} is agentsh (the model can still choose another shell: the hook is the gate)", sh.display()),
                    None,
                )
            } else {
                finding(
                    "shell",
                    Level::Problem,
                    format!("Codex: the login shell {} is agentsh, but Codex only runs one named bash, zsh or sh", sh.display()),
                    Some("chsh -s ~/.local/share/agentsh/bin/bash (after agentsh init codex --write)"),
                )
            }
        }
        Some(sh) => finding(
            "shell",
            Level::Info,
            format!("Codex: the login shell {} is not agentsh (Codex ignores $SHELL); its hook is the gate", sh.display()),
            None,
        ),
        None => finding("shell", Level::Info, "Codex: no passwd entry for this user".into(), None),
    });
    // Gemini CLI: bash from PATH.
    out.push(if f.reaches_agentsh("bash") {
        finding("shell", Level::Ok, "Gemini CLI: `bash` on this PATH is agentsh".into(), None)
    } else {
        finding(
            "shell",
            Level::Info,
            "Gemini CLI: `bash` on this PATH is not agentsh".into(),
            Some("start Gemini CLI as PATH=~/.local/share/agentsh/bin:\"$PATH\" gemini (agentsh init gemini --write links it)"),
        )
    });
    if let Some(v) = (f.env)("SHELL").filter(|v| f.reaches_agentsh(v)) {
        out.push(finding(
            "shell",
            Level::Info,
            format!("SHELL={v} is agentsh, but none of Claude Code 2.1 (without bash in the path), Codex 0.169 or Gemini CLI 0.61 runs $SHELL"),
            None,
        ));
    }
    out
}

fn claude_settings_file(f: &Facts) -> Option<PathBuf> {
    (f.env)("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| f.home.as_ref().map(|h| h.join(".claude")))
        .map(|d| d.join("settings.json"))
}

/// Codex skips a hook nobody trusted, silently: each trust record must be in config.toml and
/// match the hook as it is now (an edit to the hook revokes it).
fn codex_trusted(hooks_file: &Path) -> Result<(), String> {
    let records = crate::commands::init::codex_expected_trust(hooks_file);
    if records.is_empty() {
        return Err("cannot read the agentsh hooks' places in hooks.json".into());
    }
    let config = hooks_file.with_file_name("config.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    for (key, hash) in records {
        let header = format!("[hooks.state.{}]", Value::String(key.clone()));
        let mut lines = text.lines().skip_while(|l| l.trim() != header);
        if lines.next().is_none() {
            return Err(format!("no trust record [hooks.state.\"{key}\"] in {}", config.display()));
        }
        let recorded = lines.take_while(|l| !l.trim_start().starts_with('[')).find_map(|l| {
            l.trim()
                .strip_prefix("trusted_hash")
                .map(|r| r.trim().trim_start_matches('=').trim().trim_matches('"').to_string())
        });
        match recorded {
            Some(h) if h == hash => {}
            Some(h) => {
                return Err(format!(
                    "its trust record in {} is for another version of the hook ({h})",
                    config.display()
                ));
            }
            None => return Err(format!("no trusted_hash under {header} in {}", config.display())),
        }
    }
    Ok(())
}

/// The agents agentsh can hook, as data: config directory, settings file, hooks (`init`).
struct AgentHook {
    agent: &'static str,
    dir_env: Option<&'static str>,
    dir: &'static str,
    file: &'static str,
    spec: &'static crate::commands::init::AgentSpec,
    shell_env: Option<&'static str>,
    /// What a missing dialog hook means: the person's yes in the agent's own dialog is asked
    /// again (Claude Code, Gemini CLI); for Codex, only a second ask on its escalations.
    dialog_missing: Level,
}

const AGENT_HOOKS: &[AgentHook] = &[
    AgentHook {
        agent: "Claude Code",
        dir_env: Some("CLAUDE_CONFIG_DIR"),
        dir: ".claude",
        file: "settings.json",
        spec: &crate::commands::init::CLAUDE,
        shell_env: Some("CLAUDE_CODE_SHELL"),
        dialog_missing: Level::Problem,
    },
    AgentHook {
        agent: "Codex",
        dir_env: Some("CODEX_HOME"),
        dir: ".codex",
        file: "hooks.json",
        spec: &crate::commands::init::CODEX,
        shell_env: None,
        dialog_missing: Level::Info,
    },
    AgentHook {
        agent: "Gemini CLI",
        dir_env: None,
        dir: ".gemini",
        file: "settings.json",
        spec: &crate::commands::init::GEMINI,
        shell_env: None,
        dialog_missing: Level::Problem,
    },
];

fn agent_hooks(f: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    for a in AGENT_HOOKS {
        let dir =
            a.dir_env.and_then(|e| (f.env)(e)).map(PathBuf::from).or_else(|| f.home.as_ref().map(|h| h.join(a.dir)));
        let Some(dir) = dir.filter(|d| d.is_dir()) else {
            out.push(finding(
                "hooks",
                Level::Info,
                format!("{}: not installed for this user (no {})", a.agent, a.dir),
                None,
            ));
            continue;
        };
        let file = dir.join(a.file);
        let fix = format!("agentsh init {} --write", a.spec.protocol);
        let shell_ok = a.shell_env.and_then(|e| (f.env)(e)).is_some_and(|v| f.reaches_agentsh(&v));
        let installed = match std::fs::read_to_string(&file) {
            Err(_) => Vec::new(),
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Err(e) => {
                    out.push(finding(
                        "hooks",
                        Level::Problem,
                        format!("{}: {}:{}:{}: not valid JSON ({e})", a.agent, file.display(), e.line(), e.column()),
                        Some("fix the file; agentsh will not edit a file it cannot read"),
                    ));
                    continue;
                }
                Ok(v) => crate::commands::init::installed_hooks(&v, a.spec),
            },
        };
        let tool_event = a.spec.hooks[0].event;
        let tool_hook = installed.first().and_then(|(_, c)| c.clone());
        match tool_hook {
            Some(cmd) => {
                let program = shlex::split(&cmd).and_then(|w| w.into_iter().next()).unwrap_or_default();
                let untrusted = if a.spec.protocol == "codex" { codex_trusted(&file).err() } else { None };
                if let (true, Some(why)) = (f.reaches_agentsh(&program), untrusted) {
                    out.push(finding(
                        "hooks",
                        Level::Problem,
                        format!(
                            "{}: the hooks in {} are not trusted, so Codex skips them silently: {why}",
                            a.agent,
                            file.display()
                        ),
                        Some("agentsh init codex --write (writes the trust records), or trust them in Codex's /hooks"),
                    ));
                } else if f.reaches_agentsh(&program) {
                    out.push(finding(
                        "hooks",
                        Level::Ok,
                        format!("{}: {tool_event} hook in {}", a.agent, file.display()),
                        None,
                    ));
                } else {
                    out.push(finding(
                        "hooks",
                        Level::Problem,
                        format!(
                            "{}: the hook in {} runs `{cmd}`, which does not reach agentsh",
                            a.agent,
                            file.display()
                        ),
                        Some(&format!("remove that hook entry, then {fix}")),
                    ));
                }
                for (event, command) in installed.iter().skip(1) {
                    if command.is_none() {
                        out.push(finding(
                            "hooks",
                            a.dialog_missing,
                            format!(
                                "{}: no agentsh {event} hook in {}: agentsh cannot tell that the person said yes in the agent's own dialog, and asks again",
                                a.agent,
                                file.display()
                            ),
                            Some(&fix),
                        ));
                    }
                }
            }
            // Issue 24: the model chooses exec_command's shell, and `sh` with `login: false` runs
            // without the login shell; only the hook sees every command.
            None if a.spec.protocol == "codex" => out.push(finding(
                "hooks",
                Level::Problem,
                format!(
                    "Codex: no agentsh hook in {}: the login shell alone is not a complete wiring for Codex (the model \
                     chooses the shell of each command, and `sh` with login: false never reaches agentsh)",
                    file.display()
                ),
                Some(&fix),
            )),
            None if shell_ok => out.push(finding(
                "hooks",
                Level::Ok,
                format!("{}: no hook, but its shell is agentsh", a.agent),
                Some(&format!("a hook also covers runs that use /bin/bash directly: {fix}")),
            )),
            None => out.push(finding(
                "hooks",
                Level::Problem,
                format!(
                    "{}: no agentsh hook in {}, and its shell is not agentsh: its commands are not judged",
                    a.agent,
                    file.display()
                ),
                Some(&fix),
            )),
        }
    }
    out
}

fn interactive_hooks(f: &Facts) -> Vec<Finding> {
    let Some(home) = &f.home else { return vec![finding("interactive", Level::Info, "HOME is not set".into(), None)] };
    let zdot = (f.env)("ZDOTDIR").map(PathBuf::from).unwrap_or_else(|| home.clone());
    [("bash", home.join(".bashrc")), ("zsh", zdot.join(".zshrc"))]
        .into_iter()
        .map(|(shell, rc)| {
            let installed = std::fs::read_to_string(&rc)
                .is_ok_and(|t| t.contains(&format!("init {shell}")) && t.contains("agentsh"));
            if installed {
                finding(
                    "interactive",
                    Level::Ok,
                    format!("{shell}: {} loads the agentsh line gate", rc.display()),
                    None,
                )
            } else {
                finding(
                    "interactive",
                    Level::Info,
                    format!("{shell}: interactive command lines are not gated"),
                    Some(&format!("agentsh init {shell} --write (for terminals an agent types into)")),
                )
            }
        })
        .collect()
}

/// The `bash` link `agentsh init` makes (issue 29, item 12): once an agent's settings name it,
/// or `init` made its directory, a missing or broken link is a problem (the agent's shell is
/// gone or is not agentsh), not a note.
fn bash_link(f: &Facts) -> Vec<Finding> {
    let Ok(dir) = crate::commands::init::shell_dir() else { return Vec::new() };
    let link = dir.join("bash");
    // As a person writes it: `~/...` for the home directory.
    let tilde = |p: &Path| match f.home.as_ref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    };
    let shown = tilde(&link);
    let named = |v: Option<String>| v.is_some_and(|v| Path::new(&v) == link);
    let claude = claude_settings_file(f)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["env"]["CLAUDE_CODE_SHELL"].as_str().map(str::to_string));
    let login = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().map(|u| u.shell);
    let mut users = Vec::new();
    if named(claude) || named((f.env)("CLAUDE_CODE_SHELL")) {
        users.push("Claude Code (CLAUDE_CODE_SHELL)");
    }
    if login.is_some_and(|sh| sh == link) {
        users.push("Codex (your login shell)");
    }
    let on_path = (f.env)("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d == dir));
    if on_path {
        users.push("Gemini CLI (PATH)");
    }
    if users.is_empty() && !dir.is_dir() {
        return Vec::new();
    }
    let fix = format!(
        "mkdir -p {0} && ln -sfn {1} {0}/bash (or run `agentsh init <agent> --write` again)",
        tilde(&dir),
        f.me.as_ref().map_or("$(command -v agentsh)".to_string(), |m| m.display().to_string())
    );
    let who = if users.is_empty() {
        format!("(agentsh init made {}): an agent set up to run it does not reach agentsh", tilde(&dir))
    } else {
        format!("and {} runs it: those commands do not reach agentsh", users.join(", "))
    };
    let broken = match std::fs::symlink_metadata(&link) {
        Err(_) => Some("is missing".to_string()),
        Ok(_) if std::fs::metadata(&link).is_err() => Some("points at nothing".to_string()),
        Ok(_) if !f.reaches_agentsh(&link.display().to_string()) => Some("is not agentsh".to_string()),
        Ok(_) => None,
    };
    vec![match broken {
        Some(what) => finding("link", Level::Problem, format!("the bash link {shown} {what} {who}"), Some(&fix)),
        None => finding("link", Level::Ok, format!("the bash link {shown} is agentsh"), None),
    }]
}

fn config_files(f: &Facts) -> Vec<Finding> {
    let config = crate::policy::config::load(&f.cwd);
    // A file with a problem is said once, as a problem, not also as read (issue 29, item 12).
    let troubled = |p: &Path| config.warnings.iter().any(|w| w.starts_with(&p.display().to_string()));
    let mut out: Vec<Finding> = config
        .files
        .iter()
        .filter(|p| !troubled(p))
        .map(|p| finding("config", Level::Ok, format!("read {}", p.display()), None))
        .collect();
    if config.files.is_empty() {
        out.push(finding("config", Level::Info, "no config file: the built-in policy applies".into(), None));
    }
    out.extend(config.warnings.iter().map(|w| {
        finding("config", Level::Problem, w.clone(), Some("fix the file; until then that part is ignored or asks"))
    }));
    out
}

fn audit_log(_: &Facts) -> Vec<Finding> {
    let Some(log) = crate::record::audit::log_path() else {
        return vec![finding("audit", Level::Problem, "no home directory for the audit log".into(), Some("set HOME"))];
    };
    let dir = log.parent().unwrap_or(Path::new("."));
    // The state directory must be the user's own (issue 27); made 0700 here if missing.
    if let Err(why) = crate::policy::dirs::state() {
        return vec![finding(
            "audit",
            Level::Problem,
            format!(
                "the audit log {} cannot be written: {why}; every command that would run is refused",
                log.display()
            ),
            Some(&format!("fix {} as the message says", dir.display())),
        )];
    }
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let result =
        std::fs::write(&probe, b"").and_then(|_| std::fs::remove_file(&probe)).and_then(|_| match log.exists() {
            true => std::fs::OpenOptions::new().append(true).open(&log).map(drop),
            false => Ok(()),
        });
    vec![match result {
        Ok(()) => finding(
            "audit",
            Level::Ok,
            format!("the audit log {} is writable (`agentsh log --verify` checks its chain)", log.display()),
            None,
        ),
        Err(e) => finding(
            "audit",
            Level::Problem,
            format!("the audit log {} cannot be written: {e}; every command that would run is refused", log.display()),
            Some(&format!("mkdir -p {0} && chmod u+rwx {0}", dir.display())),
        ),
    }]
}

fn pause_state(_: &Facts) -> Vec<Finding> {
    use crate::ask::pause::Mode;
    vec![match crate::ask::pause::current() {
        None => finding("pause", Level::Ok, "not paused: the agent's commands are judged as usual".into(), None),
        Some(p) => finding(
            "pause",
            Level::Info,
            match p.mode {
                Mode::Wait => "paused: every command the agent runs waits (see `agentsh approvals`)".into(),
                Mode::Deny => "paused with --deny: every command the agent runs is refused".into(),
            },
            Some("agentsh resume, to hand control back"),
        ),
    }]
}

fn approval_queue(_: &Facts) -> Vec<Finding> {
    vec![match crate::ask::queue::dir() {
        Ok(dir) if crate::ask::queue::watched(&dir) => finding(
            "queue",
            Level::Ok,
            format!("approval queue {}: `agentsh approvals` is open, so headless commands wait there", dir.display()),
            None,
        ),
        Ok(dir) => finding(
            "queue",
            Level::Info,
            format!("approval queue {}: no `agentsh approvals` open", dir.display()),
            Some("open `agentsh approvals` in another terminal to answer agents that have no terminal"),
        ),
        Err(why) => finding(
            "queue",
            Level::Problem,
            format!("the approval queue cannot be used: {why}"),
            Some("fix the directory's owner and mode (0700), or set XDG_RUNTIME_DIR"),
        ),
    }]
}

fn terminal(_: &Facts) -> Vec<Finding> {
    let found = match crate::ask::tty::Tty::open() {
        Err(e) => finding(
            "terminal",
            Level::Info,
            format!("{e}: commands that need approval are refused here"),
            Some("run the agent from a terminal, use a hook (the agent asks), or whitelist the commands it needs"),
        ),
        // Prompts are drawn only on a person's terminal: say whose this one is.
        Ok(_) => match crate::ask::approval::persons_terminal() {
            Ok(t) => finding(
                "terminal",
                Level::Ok,
                format!("approval prompts are drawn on this terminal, a person's: {}", t.served_by),
                None,
            ),
            Err(why) => finding(
                "terminal",
                Level::Info,
                format!("no approval prompt is drawn here: {why}"),
                Some("answer in `agentsh approvals`, open in the person's own terminal"),
            ),
        },
    };
    vec![found]
}

fn tiocsti(_: &Facts) -> Vec<Finding> {
    vec![match crate::ask::tty::legacy_tiocsti_enabled() {
        Some(false) => {
            finding("tiocsti", Level::Ok, "legacy_tiocsti=0: programs cannot inject keystrokes".into(), None)
        }
        Some(true) => finding(
            "tiocsti",
            Level::Kernel,
            "legacy_tiocsti=1: a program outside the sandbox on the same terminal can type an answer into the \
             prompt (inside it, terminal ioctls are refused where Landlock has ABI 5)"
                .into(),
            Some("sudo sysctl -w dev.tty.legacy_tiocsti=0 (and add it to /etc/sysctl.d/)"),
        ),
        None => finding(
            "tiocsti",
            Level::Info,
            "legacy_tiocsti unknown: kernels before 6.2 always allow keystroke injection".into(),
            None,
        ),
    }]
}

/// The kernel box (issue 15): Landlock's ABI, each feature by the ABI that brings it, and the
/// namespaces that keep the workspace's code paths read-only.
fn sandbox(f: &Facts) -> Vec<Finding> {
    use crate::run::sandbox::{self, MIN_ABI, Namespaces};
    let config = crate::policy::config::load(&f.cwd);
    let support = sandbox::probe();
    let mut out = Vec::new();
    if !config.sandbox.enabled {
        let from = config.sandbox.enabled_from.as_deref().unwrap_or("the config");
        out.push(finding(
            "sandbox",
            Level::Info,
            format!("off: sandbox.enabled is false in {from}; commands run unconfined and only what the judge allows runs unasked"),
            None,
        ));
    }
    match support.landlock_abi {
        None => out.push(finding(
            "sandbox",
            Level::Problem,
            "this kernel has no Landlock: commands run unconfined, and everything the box would contain asks".into(),
            Some("use Linux 6.2 or later with Landlock enabled (CONFIG_SECURITY_LANDLOCK, and landlock in lsm=)"),
        )),
        Some(abi) if abi < MIN_ABI => out.push(finding(
            "sandbox",
            Level::Problem,
            format!("Landlock ABI {abi} is older than the {MIN_ABI} the box needs: commands run unconfined"),
            Some("use Linux 6.2 or later"),
        )),
        Some(abi) => {
            let has =
                |n: u8, what: &str| if abi >= n { format!("{what}: yes") } else { format!("{what}: no (ABI {n})") };
            out.push(finding(
                "sandbox",
                Level::Ok,
                format!(
                    "Landlock ABI {abi}: files: yes; {}; {}; {}",
                    has(4, "network off"),
                    has(5, "terminal ioctls (TIOCSTI)"),
                    has(6, "signals and abstract sockets scoped")
                ),
                None,
            ));
            if abi < 6 {
                out.push(finding(
                    "sandbox",
                    Level::Kernel,
                    "this kernel cannot scope signals (ABI 6): a confined command can signal your other processes"
                        .into(),
                    None,
                ));
            }
        }
    }
    let boxed = config.sandbox.enabled && matches!(support.namespaces, Namespaces::Available);
    match support.namespaces {
        Namespaces::Available => out.push(finding(
            "sandbox",
            Level::Ok,
            format!(
                "user namespaces: each box hides home (but for the toolchains and caches it shows), /tmp, /run and \
                 the person's sockets, and has its own processes; {}",
                kept_namespaces(crate::run::sandbox::holder::records_dir().as_deref())
            ),
            None,
        )),
        Namespaces::Unknown(why) => out.push(finding(
            "sandbox",
            Level::Kernel,
            format!("user namespaces may be refused ({why}): if the first boxed command fails, nothing runs until the sandbox is turned off"),
            None,
        )),
        Namespaces::Unavailable(why) => out.push(finding(
            "sandbox",
            Level::Problem,
            format!(
                "no user namespaces ({why}): there is no sandbox, so nothing is contained on its word: home, /tmp and \
                 the person's sockets stay in reach of every command, and every command the judge does not find \
                 safe asks a person"
            ),
            Some("allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 \
                  kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for agentsh)"),
        )),
    }
    if boxed {
        out.extend(hard_links(&f.cwd));
    }
    out.push(network(&config.sandbox));
    out
}

/// Files of the workspace that are files outside it too (rt4 R1): what the next box will make
/// the workspace's own (git's objects) or show copy-on-write (a package store's links), and how
/// to have the tools copy instead.
fn hard_links(cwd: &Path) -> Vec<Finding> {
    use crate::run::sandbox::{Workspace, hardlinks};
    let ws = Workspace::find(cwd);
    if !ws.is_git {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(n) = ws.git_dir.as_deref().and_then(hardlinks::count_shared_git_objects).filter(|n| *n > 0) {
        out.push(finding(
            "sandbox",
            Level::Info,
            format!(
                "this repository shares {} of .git/objects with another by hard link (a `git clone` of a local \
                 path): the next box makes them this repository's own copies before any command runs",
                crate::text::count(n, "file", "files")
            ),
            Some("git clone --no-hardlinks, for the next local clone"),
        ));
    }
    let farms = hardlinks::link_farms(&ws.root);
    if !farms.is_empty() {
        let names: Vec<String> = farms.iter().map(|f| crate::text::path(f)).collect();
        out.push(finding(
            "sandbox",
            Level::Info,
            format!(
                "{} {} files hard-linked from a package store: the box shows {} copy-on-write, so what a \
                 command installs there stays in the box",
                names.join(", "),
                if farms.len() == 1 { "holds" } else { "hold" },
                if farms.len() == 1 { "it" } else { "them" },
            ),
            Some(
                "have the package manager copy: pnpm config set package-import-method copy; UV_LINK_MODE=copy; \
                  bun install --backend=copyfile",
            ),
        ));
    }
    out
}

/// The box's network (issue 26): where it leads, and what reaches out unasked.
fn network(settings: &crate::policy::sandbox_settings::Settings) -> Finding {
    use crate::policy::sandbox_settings::Network;
    let from = settings.network_from.as_deref().unwrap_or("built-in");
    match settings.network {
        Network::Proxy => finding(
            "network",
            Level::Ok,
            format!(
                "sandbox.network is proxy ({from}): boxed commands reach the network only through agentsh's proxy: \
                 package registries, the project's git remotes and {} host(s) in sandbox.allowHosts unasked, any \
                 other host asks the person; {} host(s) in sandbox.denyHosts never (`agentsh policy` lists them)",
                settings.allow_hosts.len(),
                settings.deny_hosts.len()
            ),
            None,
        ),
        Network::Off => finding(
            "network",
            Level::Ok,
            format!(
                "sandbox.network is off ({from}): boxed commands have no network; a download asks, and runs outside"
            ),
            None,
        ),
        Network::On => finding(
            "network",
            Level::Problem,
            format!(
                "sandbox.network is on ({from}): boxed commands reach any host unasked, so whatever they can read can \
                 leave the machine"
            ),
            Some(
                "set sandbox.network to \"proxy\" (the default) in ~/.config/agentsh/config.json, and name the hosts the work needs in sandbox.allowHosts",
            ),
        ),
    }
}

/// Whether the next commands join a kept box (`run::sandbox::holder`): not where the records
/// directory cannot be written.
fn kept_namespaces(records: Option<&Path>) -> String {
    let lifetime = crate::run::sandbox::holder::LIFETIME.as_secs();
    let kept = format!("each box is kept for the next commands by a holder process ({lifetime} s idle)");
    let Some(dir) = records else { return kept };
    // A directory not made yet is made by the first boxed command, where its parent allows.
    let Some(existing) = std::iter::successors(Some(dir), |d| d.parent()).find(|d| d.exists()) else { return kept };
    match nix::unistd::access(existing, nix::unistd::AccessFlags::W_OK) {
        Ok(()) => kept,
        Err(e) => format!(
            "boxes are not kept: {} cannot be written ({}), so no command can run in the sandbox",
            existing.display(),
            e.desc()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_whether_namespaces_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert!(kept_namespaces(Some(&dir.path().join("state/box"))).contains("(120 s idle)"));
        // /proc/self cannot be written, not even by root: as a records directory made read-only.
        let not_kept = kept_namespaces(Some(Path::new("/proc/self/agentsh/box")));
        assert!(not_kept.starts_with("boxes are not kept: /proc/self cannot be written"), "{not_kept}");
    }

    #[test]
    fn finds_the_hook_commands_of_each_protocol() {
        use crate::commands::init::installed_hooks;
        let v: Value = serde_json::from_str(
            r#"{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"command":"fmt"}]},
               {"matcher":"Bash","hooks":[{"type":"command","command":"/x/agentsh hook claude-code"}]}]}}"#,
        )
        .unwrap();
        let claude = installed_hooks(&v, AGENT_HOOKS[0].spec);
        assert_eq!(
            claude,
            [("PreToolUse", Some("/x/agentsh hook claude-code".to_string())), ("PermissionRequest", None)]
        );
        assert!(installed_hooks(&v, AGENT_HOOKS[1].spec).iter().all(|(_, c)| c.is_none()));
        assert!(
            installed_hooks(&serde_json::json!({"hooks": 3}), AGENT_HOOKS[0].spec).iter().all(|(_, c)| c.is_none())
        );
    }
}
