//! Running an allowed command: exec it directly when it is one plain simple command, else exec
//! a real shell with the original text; or supervise it when `commandTimeoutSeconds` is set.
//! It must only be reached with an allow or a person's approval (see `gate`).

use crate::judge::parse::Script;
use crate::run::invocation::{ShellArgs, Source};
use crate::run::sandbox::{self, Confinement};
use std::ffi::OsStr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How the allowed text will run.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// One simple command with literal words: exec it with no shell in between.
    Direct(Vec<String>),
    /// Anything else: a real shell runs the original text.
    Shell { program: String, args: Vec<String> },
}

impl Plan {
    fn into_program_and_args(self) -> (String, Vec<String>) {
        match self {
            Plan::Direct(argv) => {
                let mut it = argv.into_iter();
                (it.next().unwrap_or_default(), it.collect())
            }
            Plan::Shell { program, args } => (program, args),
        }
    }
}

/// Shell builtins and keywords: they only exist inside a shell.
const BUILTINS: &[&str] = &[
    "cd",
    "exit",
    "export",
    "set",
    "unset",
    "source",
    ".",
    "eval",
    "exec",
    "alias",
    "unalias",
    "read",
    "return",
    "shift",
    "trap",
    "wait",
    "ulimit",
    "umask",
    "type",
    "command",
    "builtin",
    "hash",
    "jobs",
    "fg",
    "bg",
    "local",
    "declare",
    "typeset",
    "readonly",
    "let",
    "times",
    "getopts",
    "history",
    "shopt",
    "enable",
    "help",
    "logout",
    "mapfile",
    "readarray",
    "pushd",
    "popd",
    "dirs",
    "disown",
    "suspend",
    "caller",
    "compgen",
    "complete",
    "fc",
    "break",
    "continue",
    ":",
];

/// The one shell that runs judged text: bash, whose grammar the judge parsed it with.
/// Never `/bin/sh`: on Debian and Ubuntu that is dash, which reads some text differently
/// (`echo "${x:-'}"; rm -rf ~; echo "'}"` is one `echo` to bash and an `rm -rf ~` to dash;
/// issue 16 §1). Where bash is missing there is no fallback: exec fails with 127 and a
/// message saying so, and nothing runs (fail closed: text judged as bash is never handed to
/// another shell).
pub const SHELL: &str = "/bin/bash";

/// Chooses how to run `text`: exec'd directly when it is one plain simple command, else by
/// [`SHELL`]. Pure.
pub fn plan(script: &Script, source: &Source, opts: &ShellArgs) -> Plan {
    let shell_opts_matter = opts.login || opts.xtrace || !opts.options.is_empty() || opts.noprofile || opts.norc;
    if let (Source::Text { text, .. }, [only], false, true, true, false) = (
        source,
        script.commands.as_slice(),
        shell_opts_matter,
        script.opaque.is_empty(),
        script.functions.is_empty(),
        script.needs_bash,
    ) {
        let plain = only.redirects.is_empty()
            && only.assignments.is_empty()
            && !only.background
            && only.depth == 0
            && !only.words.is_empty()
            // Words the shell would expand (`~`, `$HOME`, globs, braces) are judged by their
            // meaning but must still be expanded by a shell.
            && only.words.iter().all(|w| w.lit.is_some() && !w.raw.contains(['$', '~', '*', '?', '[', '{', '`']))
            && !BUILTINS.contains(&only.words[0].text())
            && is_one_statement(text, &only.words[0].raw);
        if plain {
            return Plan::Direct(only.argv());
        }
    }
    let mut args = Vec::new();
    if opts.noprofile {
        args.push("--noprofile".to_string());
    }
    if opts.norc {
        args.push("--norc".to_string());
    }
    if opts.login {
        args.push("-l".to_string());
    }
    for (on, flag) in [(opts.errexit, "-e"), (opts.nounset, "-u"), (opts.xtrace, "-x")] {
        if on {
            args.push(flag.to_string());
        }
    }
    for o in &opts.options {
        args.push("-o".to_string());
        args.push(o.clone());
    }
    match source {
        Source::Text { text, argv0, args: rest } => {
            args.push("-c".to_string());
            args.push(text.clone());
            args.push(argv0.clone().unwrap_or_else(|| "agentsh".to_string()));
            args.extend(rest.iter().cloned());
        }
        Source::Script { path, args: rest } => {
            args.push(path.clone());
            args.extend(rest.iter().cloned());
        }
        Source::Stdin => unreachable!("stdin scripts are turned into text before planning"),
    }
    Plan::Shell { program: SHELL.to_string(), args }
}

/// Whether `text` is nothing but the one simple command whose first word is `first`: it starts
/// with that word, and no operator stands outside quotes. The parse lists the simple commands
/// that run, not what surrounds them: `! false` (negated), `case y in x) echo no;; esac` (never
/// runs its `echo`) and `time ls` each list one command that must not be exec'd alone.
fn is_one_statement(text: &str, first: &str) -> bool {
    let text = text.trim_start_matches([' ', '\t']);
    let starts =
        text.strip_prefix(first).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\n', '#']));
    if !starts {
        return false;
    }
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ';' | '&' | '|' | '(' | ')' | '<' | '>' | '\n' if !single && !double => return false,
            _ => {}
        }
    }
    true
}

pub use crate::model::NEW_SESSION_MARKER;

/// Whether the command may need the terminal's input: agentsh's stdin is a terminal, so an
/// editor, a pager or an interactive program can be expected. Such commands keep the
/// terminal's session (and so could still use TIOCSTI where the kernel allows it); every other
/// command runs in a session of its own, without a controlling terminal, so nothing it leaves
/// running in the background can push keystrokes into a later prompt.
pub fn needs_terminal() -> bool {
    // Asked by the box's spec and by exec: one ioctl per process.
    static ON_A_TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON_A_TERMINAL.get_or_init(|| nix::unistd::isatty(std::io::stdin()).unwrap_or(false))
}

/// Whether a command may read keys from a terminal: agentsh's standard input, output or error
/// is one. A command that does not keep the terminal leaves its session, but a pager with no
/// controlling terminal reads its keys from standard error (less, more), and a program writes
/// to standard output before it asks (rt7 B7). Three `isatty`s, once per process.
pub fn may_read_keys() -> bool {
    static ANY_TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANY_TERMINAL.get_or_init(|| {
        needs_terminal()
            || nix::unistd::isatty(std::io::stdout()).unwrap_or(false)
            || nix::unistd::isatty(std::io::stderr()).unwrap_or(false)
    })
}

/// The command's name to the box's proxy (its record's id), and who asks the person about a
/// host the proxy does not know.
#[derive(Clone, Copy)]
pub struct Net<'a> {
    pub id: &'a str,
    pub ask_host: Option<sandbox::asking::AskHost<'a>>,
}

/// How a command agentsh ran ended, or why it did not run.
#[derive(Debug, PartialEq, Eq)]
pub enum Ran {
    /// agentsh waited for it: a boxed command (its parent stays outside the box, to record
    /// how it ended) or a supervised one.
    Ended {
        code: i32,
        /// The signal that ended it: agentsh ends the same way once it is recorded.
        signal: Option<nix::sys::signal::Signal>,
        /// Stopped at `commandTimeoutSeconds`.
        timed_out: bool,
    },
    /// It did not run (not found, not executable, no box): the status to use.
    NotRun(i32),
}

/// Runs the command: in the box, as a child agentsh waits for; unconfined, in place of this
/// process (`exec`), or as a supervised child when `limit` is set. Returns only when agentsh
/// waited for it or it could not run, after printing an sh-like message.
///
/// An unconfined command that does not need the terminal first leaves the terminal's session:
/// `setsid()` here, or, when agentsh leads its process group (where `setsid` is refused, e.g.
/// started by an interactive shell), through a child agentsh that calls `setsid` and execs,
/// while this process waits and passes on signals. A boxed command's child makes its own
/// session (`sandbox::spawn`).
///
/// `net_id` names the command to the box's proxy (its audit record's id). `search`, where given,
/// is the `$PATH` an unconfined command gets instead of agentsh's own (`gate::unboxed_path`).
/// `gated` is what an unconfined command is told in [`crate::model::GATED`] (`None`: it keeps what
/// agentsh has; a boxed one cannot reach agentsh's state, which is what the mark guards).
pub fn run(
    plan: Plan,
    confinement: Confinement,
    limit: Option<Duration>,
    pass_env: &[String],
    net: Net<'_>,
    search: Option<&OsStr>,
    gated: Option<&str>,
) -> Ran {
    let (program, args) = plan.into_program_and_args();
    if let Confinement::Boxed(plan) = confinement {
        // Looked up before the box: a missing program is told as bash would.
        if !findable(&program) {
            return Ran::NotRun(exec_error(&program, &std::io::ErrorKind::NotFound.into()));
        }
        let cmd = sandbox::spawn::Command {
            program: &program,
            args: &args,
            pass_env,
            limit,
            net_id: net.id,
            ask_host: net.ask_host,
        };
        return match sandbox::spawn::run(plan, &cmd) {
            Ok(sandbox::spawn::Ended::Exited(code)) => Ran::Ended { code, signal: None, timed_out: false },
            Ok(sandbox::spawn::Ended::TimedOut) => Ran::Ended { code: 124, signal: None, timed_out: true },
            Ok(sandbox::spawn::Ended::BoxEnded) => {
                eprintln!(
                    "agentsh: the command's sandbox ended while it ran: its holder (agentsh-box, PID 1 of the box) was \
                     killed, and the kernel ended every process in the box"
                );
                eprintln!("hint: run the command again: the next command makes a new sandbox");
                Ran::Ended { code: 137, signal: None, timed_out: false }
            }
            Ok(sandbox::spawn::Ended::Signaled(sig)) => {
                Ran::Ended { code: 128 + sig as i32, signal: Some(sig), timed_out: false }
            }
            Err(e) => Ran::NotRun(confine_failed(&e)),
        };
    }
    if let Some(limit) = limit {
        let code = supervise(&program, &args, limit, search, gated);
        return Ran::Ended { code, signal: None, timed_out: code == 124 };
    }
    if !needs_terminal() && nix::unistd::setsid().is_err() {
        return Ran::NotRun(run_child(internal_child(&program, &args, search, gated), &program, None));
    }
    Ran::NotRun(exec_program(&program, &args, search, gated))
}

/// Execs `program` in place of agentsh; `gated`, where given, is set in [`crate::model::GATED`]
/// (`None`: kept as this process has it, for agentsh's own child that set it).
fn exec_program(program: &str, args: &[String], search: Option<&OsStr>, gated: Option<&str>) -> i32 {
    let mut cmd = unconfined(program, gated);
    cmd.args(args);
    // Set on the command, `$PATH` is also where std looks the program up.
    if let Some(path) = search {
        cmd.env("PATH", path);
    }
    // std's exec resets SIGPIPE to its default, so `yes | head -1` ends quietly as in a shell.
    let err = cmd.exec();
    let code = exec_error(program, &err);
    if code == 127 && search.is_some() && !program.contains('/') {
        eprintln!(
            "hint: with no sandbox here, the directories of $PATH a sandbox may write (a project's .venv/bin, \
             node_modules/.bin, bin) are not searched; run it from the project, where it runs in the sandbox"
        );
    }
    code
}

/// An unconfined command: with pagers that run no command from their keys or options (rt7 B7,
/// `pagers`), and marked as run by the gate (`gated`, see [`exec_program`]).
fn unconfined(program: &str, gated: Option<&str>) -> Command {
    let mut cmd = Command::new(program);
    if let Some(gated) = gated {
        cmd.env(crate::model::GATED, gated);
    }
    let get = |name: &str| std::env::var(name).ok();
    for (name, value) in crate::run::pagers::guard(get, findable("less")) {
        cmd.env(name, value);
    }
    for name in crate::run::pagers::REMOVED {
        cmd.env_remove(name);
    }
    cmd
}

/// Says why the box could not be entered, and returns the status: nothing ran.
fn confine_failed(e: &sandbox::BoxError) -> i32 {
    eprintln!("agentsh: cannot set up the sandbox: {}", crate::text::sanitize::sanitize(&e.to_string()));
    eprintln!(
        "hint: nothing ran. `agentsh doctor` shows what this kernel supports; the person can turn \
         the sandbox off with \"sandbox\": {{\"enabled\": false}} in ~/.config/agentsh/config.json"
    );
    126
}

/// Whether `execvp` can find `program`: a path that exists, or a name in a `$PATH` directory.
pub(crate) fn findable(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).exists();
    }
    match std::env::var_os("PATH") {
        Some(path) => std::env::split_paths(&path).any(|dir| dir.join(program).is_file()),
        None => true,
    }
}

/// `agentsh: NAME: command not found`, with the closest program on `$PATH` when it looks like a
/// typo of one (`pyhton` -> `python3`... or `python`). Lists `$PATH` only on this error path.
pub(crate) fn not_found(program: &str) {
    let shown = crate::text::sanitize::sanitize(program);
    eprintln!("agentsh: {shown}: command not found");
    let names: Vec<String> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter_map(|d| std::fs::read_dir(d).ok())
                .flat_map(|d| d.flatten().filter_map(|e| e.file_name().into_string().ok()))
                .collect()
        })
        .unwrap_or_default();
    if let Some(near) = crate::text::similar::closest(program, names.iter().map(String::as_str)) {
        eprintln!("hint: did you mean `{}`?", crate::text::sanitize::sanitize(near));
    }
}

/// `agentsh NEW_SESSION_MARKER PROGRAM ARGS..`: the child half of [`run`] and [`supervise`]
/// for an unconfined command that must leave the terminal's session where agentsh itself
/// cannot. Fails closed: if the session cannot be made, nothing runs.
pub fn exec_in_new_session(argv: &[String]) -> i32 {
    let [program, args @ ..] = argv else {
        eprintln!("agentsh: internal error: {NEW_SESSION_MARKER} needs a command");
        return 126;
    };
    if let Err(e) = nix::unistd::setsid() {
        eprintln!("agentsh: cannot start a new session for the command: {e}");
        return 126;
    }
    exec_program(program, args, None, None)
}

/// agentsh re-spawned to run the command in a session of its own (see [`exec_in_new_session`]),
/// with `search` as its `$PATH`, where the command looks its program up.
fn internal_child(program: &str, args: &[String], search: Option<&OsStr>, gated: Option<&str>) -> Command {
    let me = std::env::current_exe().unwrap_or_else(|_| "/proc/self/exe".into());
    let mut cmd = Command::new(me);
    cmd.arg(NEW_SESSION_MARKER).arg(program).args(args);
    if let Some(gated) = gated {
        cmd.env(crate::model::GATED, gated);
    }
    if let Some(path) = search {
        cmd.env("PATH", path);
    }
    cmd
}

pub(crate) fn exec_error(program: &str, err: &std::io::Error) -> i32 {
    let shown = crate::text::sanitize::sanitize(program);
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            if program == SHELL {
                eprintln!("agentsh: {shown}: No such file or directory");
                eprintln!(
                    "hint: agentsh runs commands with bash, the grammar it judges them by, and never falls back to another shell; install bash"
                );
            } else if program.contains('/') {
                eprintln!("agentsh: {shown}: No such file or directory");
            } else {
                not_found(program);
            }
            127
        }
        std::io::ErrorKind::PermissionDenied => {
            eprintln!("agentsh: {shown}: Permission denied");
            126
        }
        _ => {
            eprintln!("agentsh: {shown}: {err}");
            126
        }
    }
}

/// Runs an unconfined command as a child with a time limit. On timeout its whole process group
/// is killed and the status is 124, as timeout(1) does. Signals to agentsh are passed on. (A
/// boxed command is supervised by `sandbox::spawn`.)
fn supervise(program: &str, args: &[String], limit: Duration, search: Option<&OsStr>, gated: Option<&str>) -> i32 {
    let cmd = if needs_terminal() {
        let mut cmd = unconfined(program, gated);
        cmd.args(args).process_group(0);
        if let Some(path) = search {
            cmd.env("PATH", path);
        }
        cmd
    } else {
        // setsid in the child makes its own process group too.
        internal_child(program, args, search, gated)
    };
    run_child(cmd, program, Some(limit))
}

/// Spawns `cmd` (which puts itself in its own process group), passes on the signals agentsh
/// gets, waits for it (at most `limit`), and returns its status as a shell would.
fn run_child(mut cmd: Command, program: &str, limit: Option<Duration>) -> i32 {
    use nix::sys::signal::{SigSet, Signal, kill, killpg};
    use nix::unistd::Pid;
    use std::sync::mpsc;

    // Block the signals a person or harness sends, so a thread can forward them to the
    // child's process group; std resets the mask in the child.
    let mut forwarded = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT] {
        forwarded.add(s);
    }
    let _ = forwarded.thread_block();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = forwarded.thread_unblock();
            return exec_error(program, &e);
        }
    };
    let pgid = Pid::from_raw(child.id() as i32);
    // Before the child has its own group (a new-session child calls setsid first), signal it alone.
    let signal_child = move |sig| {
        if killpg(pgid, sig).is_err() {
            let _ = kill(pgid, sig);
        }
    };
    std::thread::spawn(move || {
        while let Ok(sig) = forwarded.wait() {
            signal_child(sig);
        }
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let received = match limit {
        Some(limit) => rx.recv_timeout(limit).ok(),
        None => rx.recv().ok(),
    };
    let Some(status) = received else {
        let limit = limit.unwrap_or_default();
        eprintln!("agentsh: the command ran longer than commandTimeoutSeconds ({}s) and was stopped", limit.as_secs());
        signal_child(Signal::SIGTERM);
        if rx.recv_timeout(Duration::from_secs(2)).is_err() {
            signal_child(Signal::SIGKILL);
            let _ = rx.recv_timeout(Duration::from_secs(2));
        }
        return 124;
    };
    match status {
        Ok(s) => {
            if let Some(code) = s.code() {
                code
            } else if let Some(sig) = s.signal() {
                let name = Signal::try_from(sig).map(|s| s.as_str().to_string()).unwrap_or_default();
                let _ = SigSet::all().thread_unblock();
                crate::ask::tty::reraise(&name)
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("agentsh: waiting for the command failed: {e}");
            126
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::parse::parse;

    fn text(t: &str) -> Source {
        Source::Text { text: t.to_string(), argv0: None, args: vec![] }
    }

    fn plan_for(t: &str, opts: &ShellArgs) -> Plan {
        plan(&parse(t).unwrap(), &text(t), opts)
    }

    #[test]
    fn plain_commands_are_execed_directly() {
        let o = ShellArgs::default();
        assert_eq!(plan_for("ls -la 'a b'", &o), Plan::Direct(vec!["ls".into(), "-la".into(), "a b".into()]));
        assert_eq!(plan_for("/bin/true", &o), Plan::Direct(vec!["/bin/true".into()]));
    }

    #[test]
    fn everything_else_goes_to_a_real_shell() {
        let o = ShellArgs::default();
        for t in [
            "! false",
            "case y in x) echo no;; esac",
            "case x in x) false;; esac",
            "time ls",
            "{ ls; }",
            "(ls)",
            "ls\n",
            "ls | wc",
            "exit 7",
            "ls ~",
            "ls *.rs",
            "echo $HOME",
            "cd x && ls",
            "echo $HOME",
            "ls > f",
            "A=1 env",
            "sleep 1 &",
        ] {
            match plan_for(t, &o) {
                Plan::Shell { program, args } => {
                    // Not /bin/sh (dash): the shell that runs is the grammar that judged.
                    assert_eq!(program, "/bin/bash", "{t}");
                    assert_eq!(args, ["-c", t, "agentsh"], "{t}");
                }
                p => panic!("{t}: {p:?}"),
            }
        }
        match plan_for("[[ -f x ]] && ls", &o) {
            Plan::Shell { program, .. } => assert_eq!(program, "/bin/bash"),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn shell_options_are_carried() {
        let o = ShellArgs { login: true, errexit: true, options: vec!["pipefail".into()], ..ShellArgs::default() };
        match plan_for("a | b", &o) {
            Plan::Shell { program, args } => {
                assert_eq!(program, "/bin/bash");
                assert_eq!(args, ["-l", "-e", "-o", "pipefail", "-c", "a | b", "agentsh"]);
            }
            p => panic!("{p:?}"),
        }
        let src = Source::Text { text: "echo $0 $1".into(), argv0: Some("me".into()), args: vec!["x".into()] };
        match plan(&parse("echo $0 $1").unwrap(), &src, &ShellArgs::default()) {
            Plan::Shell { args, .. } => assert_eq!(args, ["-c", "echo $0 $1", "me", "x"]),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn the_plan_from_parse_for_plan_is_the_plan_from_the_whole_parse() {
        let long = "echo word$i && ls -la dir | grep x; ".repeat(200);
        for text in [
            "ls -la 'a b'",
            "/bin/true",
            "ls > out",
            "echo $(ls)",
            "echo a; echo b",
            "f() { :; }",
            "[[ -f x ]] && ls",
            "a=1",
            "echo ${x:-$(rm -rf /)}",
            "time ls",
            "cd dir",
            long.as_str(),
        ] {
            let source = Source::Text { text: text.to_string(), argv0: None, args: vec![] };
            let plan = |s: &Script| plan(s, &source, &ShellArgs::default());
            let (shape, whole) = (crate::judge::parse::parse_for_plan(text).unwrap(), parse(text).unwrap());
            assert!(shape.commands.len() <= 2, "{text:?}");
            assert_eq!(plan(&shape), plan(&whole), "{text:?}");
        }
    }
}
