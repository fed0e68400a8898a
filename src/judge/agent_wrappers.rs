//! Agent wrappers: the fixed text an agent wraps around the command it really runs.
//! Claude Code sends every Bash tool call as
//! `source ~/.claude/shell-snapshots/snapshot-bash-….sh 2>/dev/null || true && shopt -u extglob
//! 2>/dev/null || true && eval '<command>' < /dev/null && pwd -P >| /tmp/claude-….-cwd`.
//! Judged as written, the `source` of the snapshot makes every command "cannot judge". This
//! module recognizes the known forms (kept as data in `SETUP`, `EVAL_*`, `CWD_*`), so that only
//! the command inside is judged; the whole script still runs as written.
//!
//! Strict by design: every piece must match exactly, the snapshot must sit in the user's
//! Claude config directory with the expected name, and the file itself must look like Claude
//! Code's own (a regular file owned by the user, no symlink, not writable by others). Anything
//! else is judged as plain shell text, where `source FILE` stays "cannot judge".
//!
//! Pure: the environment (`Env`) and the snapshot inspection come from `run::judging`.

use crate::judge::assess::Assessment;
use crate::judge::decide::{self, Policy, Verdict};
use crate::model::{Category, Decision, Risk};
use std::path::{Path, PathBuf};

/// Placeholder for the snapshot path inside a setup piece.
const SNAPSHOT: &str = "{snapshot}";

/// Pieces Claude Code puts before the `eval`, each followed by ` && `. Each appears at most
/// once. Observed forms (Claude Code 2.x, bash and zsh): a new form is a new line here.
const SETUP: &[&str] = &[
    "source {snapshot} 2>/dev/null || true",
    "shopt -u extglob 2>/dev/null || true",
    "setopt NO_EXTENDED_GLOB 2>/dev/null || true",
    "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
    "{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true",
];
/// The command itself: `eval` of one single-quoted word, stdin from /dev/null.
const EVAL_PREFIX: &str = "eval ";
const EVAL_SUFFIX: &str = " < /dev/null && ";
/// The working-directory record: `pwd -P >| <tmp>/claude-<hex>-cwd`.
const CWD_PREFIX: &str = "pwd -P >| ";
const CWD_FILE_START: &str = "claude-";
const CWD_FILE_END: &str = "-cwd";
/// Snapshot file names: `snapshot-<shell>-<milliseconds>-<id>.sh`.
const SNAPSHOT_SHELLS: &[&str] = &["bash", "zsh"];

/// Where the agent's files may legitimately be, from the environment.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Claude Code config directories (`$CLAUDE_CONFIG_DIR`, `~/.claude`).
    pub claude_dirs: Vec<PathBuf>,
    /// Temporary directories the cwd file may be in (`/tmp`, `$TMPDIR`).
    pub temp_dirs: Vec<PathBuf>,
    /// `$HOME`: the agents' start-up scripts name it (`judge::startup`).
    pub home: Option<PathBuf>,
    /// Codex home directories (`$CODEX_HOME`, `~/.codex`): its shell snapshots live there.
    pub codex_dirs: Vec<PathBuf>,
}

/// A recognized wrapper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    pub agent: &'static str,
    /// The command the agent asked for (the `eval` word after quote removal).
    pub inner: String,
    pub snapshot: Option<PathBuf>,
    pub cwd_file: PathBuf,
}

/// Recognizes a known harness wrapper. Pure: shapes only, no file is looked at.
pub fn unwrap(text: &str, env: &Env) -> Option<Wrapped> {
    let mut rest = text.trim_end_matches('\n');
    let mut used = [false; SETUP.len()];
    let mut snapshot = None;
    'pieces: loop {
        for (i, piece) in SETUP.iter().enumerate() {
            if used[i] {
                continue;
            }
            if let Some((after, snap)) = strip_piece(rest, piece) {
                if let Some(s) = snap {
                    snapshot = Some(snapshot_path(&s, env)?);
                }
                used[i] = true;
                rest = after;
                continue 'pieces;
            }
        }
        break;
    }
    let rest = rest.strip_prefix(EVAL_PREFIX)?;
    let (word, cwd) = rest.rsplit_once(EVAL_SUFFIX)?;
    let cwd_file = cwd_path(cwd.strip_prefix(CWD_PREFIX)?, env)?;
    let inner = single_quoted(word)?;
    Some(Wrapped { agent: "Claude Code", inner, snapshot, cwd_file })
}

/// Gemini CLI 0.61's wrapper (`shellExecutionService` + `wrapCommandForBackgroundPIDs`): a
/// `shopt` guard, the background-pid file, the command in a subshell with an EXIT trap that
/// writes `jobs -p` to that file, and its status passed on. The command sits in the text as
/// written (not quoted), trimmed by Gemini.
const GEMINI_PREFIX: &str = "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=";
const GEMINI_OPEN: &str = "\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n";
const GEMINI_CLOSE: &str = "\n)\n__code=$?\nexit $__code";
/// The pid file: `<tmp>/gemini-shell-<random>/bgpids.tmp` (`mkdtemp`).
const GEMINI_DIR_START: &str = "gemini-shell-";
const GEMINI_FILE: &str = "bgpids.tmp";

/// Recognizes Gemini CLI's wrapper and returns the command inside it. The command must stand
/// on its own: it may not name the pid-file variable (the trap writes wherever it points, so
/// `_bgpids_file=~/.bashrc` inside would truncate that file when the subshell exits), and it
/// may not end in a backslash (Gemini adds a space after one, so that `)` stays a line of its
/// own). It is judged alone; a command that does not parse alone is judged as the error it is.
pub fn unwrap_gemini(text: &str, env: &Env) -> Option<String> {
    gemini_parts(text, env).map(|(_, inner)| inner.to_string())
}

/// The pid file Gemini CLI's recognized wrapper writes (`<tmp>/gemini-shell-…/bgpids.tmp`).
pub fn gemini_pid_file(text: &str, env: &Env) -> Option<PathBuf> {
    gemini_parts(text, env).map(|(file, _)| PathBuf::from(file))
}

/// The pid file and the command inside Gemini CLI's wrapper, when it is recognized.
fn gemini_parts<'a>(text: &'a str, env: &Env) -> Option<(&'a str, &'a str)> {
    let rest = text.strip_prefix(GEMINI_PREFIX)?;
    let (file, rest) = rest.split_once(GEMINI_OPEN)?;
    let inner = rest.strip_suffix(GEMINI_CLOSE)?;
    if !plain_path(file) || file.contains("/../") || file.contains("/./") {
        return None;
    }
    let path = Path::new(file);
    let dir = path.parent()?;
    let ok_dir = dir.parent().is_some_and(|t| env.temp_dirs.iter().any(|d| t == d))
        && dir.file_name()?.to_str()?.strip_prefix(GEMINI_DIR_START).is_some_and(|r| !r.is_empty());
    let ok_inner = !inner.is_empty()
        && inner.trim() == inner
        && !inner.ends_with('\\')
        && !inner.contains("_bgpids_file")
        && !inner.contains("__code");
    (ok_dir && path.file_name()? == GEMINI_FILE && ok_inner).then_some((file, inner))
}

/// `rest` starting with `piece` + ` && `; returns what follows and the snapshot word if any.
fn strip_piece<'a>(rest: &'a str, piece: &str) -> Option<(&'a str, Option<String>)> {
    let Some((before, after)) = piece.split_once(SNAPSHOT) else {
        return rest.strip_prefix(piece)?.strip_prefix(" && ").map(|r| (r, None));
    };
    let r = rest.strip_prefix(before)?;
    let end = r.find(' ')?;
    let (word, r) = r.split_at(end);
    let r = r.strip_prefix(after)?.strip_prefix(" && ")?;
    Some((r, Some(word.to_string())))
}

/// Only plain path characters: anything a shell would expand or split is not recognized.
fn plain_path(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+@".contains(c))
}

fn snapshot_path(word: &str, env: &Env) -> Option<PathBuf> {
    if !plain_path(word) || word.contains("/../") || word.contains("/./") {
        return None;
    }
    let path = PathBuf::from(word);
    let dir = path.parent()?;
    if !env.claude_dirs.iter().any(|d| dir == d.join("shell-snapshots")) {
        return None;
    }
    let name = path.file_name()?.to_str()?.strip_prefix("snapshot-")?.strip_suffix(".sh")?;
    let (shell, rest) = name.split_once('-')?;
    let (millis, id) = rest.split_once('-')?;
    let ok = SNAPSHOT_SHELLS.contains(&shell)
        && !millis.is_empty()
        && millis.bytes().all(|b| b.is_ascii_digit())
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    ok.then_some(path)
}

fn cwd_path(word: &str, env: &Env) -> Option<PathBuf> {
    if !plain_path(word) {
        return None;
    }
    let path = PathBuf::from(word);
    let dir = path.parent()?;
    if !env.temp_dirs.iter().any(|d| dir == d) {
        return None;
    }
    let id = path.file_name()?.to_str()?.strip_prefix(CWD_FILE_START)?.strip_suffix(CWD_FILE_END)?;
    ((4..=16).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(path)
}

/// Decodes a word made only of `'...'` pieces joined by `"'"` or `\'` (how Claude Code quotes
/// the command). Any other quoting, or an expansion, is not recognized.
pub fn single_quoted(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = word;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('\'') {
            let end = r.find('\'')?;
            out.push_str(&r[..end]);
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("\"'\"") {
            out.push('\'');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\\'") {
            out.push('\'');
            rest = r;
        } else {
            return None;
        }
    }
    Some(out)
}

/// What a trusted snapshot defines: names of aliases and functions.
pub type Definitions = Vec<String>;

/// Names a snapshot redefines: `alias [--] NAME=...`, and functions, which Claude Code writes as
/// `eval "$(echo '<base64 of "NAME () {...}">' | base64 -d)"`, or plainly as `NAME () {`.
pub fn definitions(text: &str) -> Definitions {
    let mut names = Vec::new();
    let mut add = |n: &str| {
        let n = n.trim();
        if !n.is_empty() && !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    };
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("alias ") {
            let rest = rest.trim_start().strip_prefix("-- ").unwrap_or(rest);
            if let Some((name, _)) = rest.split_once('=') {
                add(name);
            }
        } else if let Some(b64) = line.strip_prefix("eval \"$(echo '").and_then(|r| r.split_once('\'')).map(|x| x.0) {
            if let Some(decoded) = base64_decode(b64)
                && let Some(name) = function_name(&String::from_utf8_lossy(&decoded))
            {
                add(name);
            }
        } else if let Some(name) = function_name(line) {
            add(name);
        }
    }
    names
}

fn function_name(text: &str) -> Option<&str> {
    let first = text.lines().next()?.trim();
    let first = first.strip_prefix("function ").unwrap_or(first);
    let (name, rest) = first.split_once("()").or_else(|| first.split_once(" ()"))?;
    let name = name.trim();
    let ok = !name.is_empty() && !name.contains([' ', '=', '"', '\'', '$']) && matches!(rest.trim(), "" | "{");
    ok.then_some(name)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Names a snapshot must not redefine for Codex's wrapper to do what it says: it sources the
/// snapshot and then runs these (a function named `exec` would run instead of the builtin).
const CODEX_WRAPPER_BUILTINS: &[&str] = &["exec", "builtin", "command", "export", "unset", "[", "test", "."];

/// The verdict on command text as agentsh receives it: an agent's start-up script is allowed
/// when it is exactly a known one (`startup`), and a recognized wrapper is judged by the command
/// inside it. The environment, the snapshot inspection and "is this path agentsh itself" are
/// passed in (`run::judging` gives the real ones).
pub fn judge_with(
    text: &str,
    policy: &Policy,
    env: &Env,
    inspect: &dyn Fn(&Path) -> Result<Definitions, String>,
    is_agentsh: &dyn Fn(&Path) -> bool,
) -> Verdict {
    if let Some(form) = crate::judge::startup::recognize(text, env) {
        let mut v = decide::decide(text, vec![startup_assessment(form.agent, form.what)], policy);
        v.harness =
            Some(format!("{} {} recognized (an agent start-up command); it runs as written", form.agent, form.what));
        return v;
    }
    if let Some(w) = crate::judge::startup::codex_wrapper(text, env) {
        let defs = match inspect(&w.snapshot) {
            Ok(d) => d,
            Err(why) => {
                let mut v = decide::judge(text, policy);
                v.harness =
                    Some(format!("Codex command wrapper found but not trusted ({why}); the whole script is judged"));
                return v;
            }
        };
        if let Some(name) = defs.iter().find(|d| CODEX_WRAPPER_BUILTINS.contains(&d.as_str())) {
            let mut v = decide::judge(text, policy);
            v.harness = Some(format!(
                "Codex command wrapper found, but its snapshot redefines `{name}`; the whole script is judged"
            ));
            return v;
        }
        if is_agentsh(&w.shell) {
            // The wrapper ends by exec'ing agentsh with the command, which judges it (and asks,
            // once) there: judging it here too would ask twice.
            let mut v = decide::decide(text, vec![startup_assessment("Codex", "command wrapper")], policy);
            runs_agentsh(&mut v);
            v.harness = Some(format!(
                "Codex command wrapper recognized, snapshot {}; the command inside is judged by the agentsh it runs ({})",
                w.snapshot.display(),
                w.shell.display()
            ));
            return v;
        }
        let mut v = with_redefinitions(&w.inner, &defs, policy, is_agentsh);
        v.command = w.inner;
        v.harness = Some(format!(
            "Codex command wrapper recognized, snapshot {}; judging the command inside it",
            w.snapshot.display()
        ));
        return v;
    }
    if hook_rewrite(text, is_agentsh).is_some() {
        return judge_inner(text, policy, is_agentsh);
    }
    if let Some(agent) = hook_call(text, is_agentsh) {
        let mut v =
            decide::decide(text, vec![startup_assessment(agent, "hook (agentsh hook, run through its shell)")], policy);
        runs_agentsh(&mut v);
        v.harness = Some(format!("{agent} running agentsh's hook through its shell; the hook judges the tool call"));
        return v;
    }
    if let Some(inner) = unwrap_gemini(text, env) {
        let mut v = judge_inner(&inner, policy, is_agentsh);
        v.harness = Some("Gemini CLI shell wrapper recognized; judging the command inside it".into());
        return v;
    }
    let Some(w) = unwrap(text, env) else {
        return decide::judge(text, policy);
    };
    let defs = match w.snapshot.as_deref().map(inspect) {
        None => Vec::new(),
        Some(Ok(d)) => d,
        Some(Err(why)) => {
            let mut v = decide::judge(text, policy);
            v.harness = Some(format!("{} wrapper found but not trusted ({why}); the whole script is judged", w.agent));
            return v;
        }
    };
    let mut v = with_redefinitions(&w.inner, &defs, policy, is_agentsh);
    let snap = w.snapshot.as_ref().map(|s| format!(", snapshot {}", s.display())).unwrap_or_default();
    v.harness = Some(format!("{} shell wrapper recognized{snap}; judging the command inside it", w.agent));
    v
}

/// `'<this agentsh>' -c '<command>'`, exactly as `agentsh hook` hands an allowed command back
/// (`commands::hook::through_agentsh`): the command inside. Judged as written, the path of a
/// user-installed agentsh (outside the system directories) would ask, so every hook-allowed
/// command would ask again when the agent's shell is agentsh too.
pub fn hook_rewrite(text: &str, is_agentsh: &dyn Fn(&Path) -> bool) -> Option<String> {
    if !starts_with_path(text) {
        return None;
    }
    let words = shlex::split(text)?;
    let [path, flag, inner] = words.as_slice() else { return None };
    let canonical = shlex::try_join([path.as_str(), "-c", inner.as_str()]).ok()?;
    (flag == "-c" && canonical == text && path.starts_with('/') && is_agentsh(Path::new(path))).then(|| inner.clone())
}

/// Whether `text` starts with an absolute path, quoted or not, as the hook's rewrite and hook
/// command do (shlex quotes a path with `'`): anything else is ruled out without splitting the
/// whole text into words, which cost a 32 KiB script 6 million instructions.
fn starts_with_path(text: &str) -> bool {
    text.starts_with('/') || text.starts_with("'/")
}

/// `'<this agentsh>' hook <protocol> [--timeout N]`, exactly as `agentsh init` writes the hook
/// command: Gemini CLI 0.61 runs hook commands with `bash -c`, and with agentsh as its `bash` the
/// gate would otherwise refuse the hook itself (a management command). `agentsh hook` judges the
/// tool call on its stdin, records it, and asks the person where the agent cannot (issue 24); it
/// changes no setting and answers no request itself. Sent as the model's command, its stdin is
/// the model's: the gate marks it (`run::gate::gated`), and such a hook never offers or arms a
/// grant for the agent's dialog (`ask::grant::started_by_agent`, rt8 C1).
pub fn hook_call(text: &str, is_agentsh: &dyn Fn(&Path) -> bool) -> Option<&'static str> {
    if !starts_with_path(text) {
        return None;
    }
    let words = shlex::split(text)?;
    let (path, hook, proto, timeout) = match words.as_slice() {
        [path, hook, proto] => (path, hook, proto, None),
        [path, hook, proto, flag, n]
            if flag == "--timeout" && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (path, hook, proto, Some(n.as_str()))
        }
        _ => return None,
    };
    let agent = match proto.as_str() {
        "claude-code" => "Claude Code",
        "codex" => "Codex",
        "gemini" => "Gemini CLI",
        _ => return None,
    };
    let mut canonical_words = vec![path.as_str(), "hook", proto.as_str()];
    canonical_words.extend(timeout.map(|n| ["--timeout", n]).into_iter().flatten());
    let canonical = shlex::try_join(canonical_words).ok()?;
    (hook == "hook" && canonical == text && path.starts_with('/') && is_agentsh(Path::new(path))).then_some(agent)
}

/// The command inside an agent's wrapper, judged; the hook's own rewrite inside it too (the
/// hook route and the shell route together: the agent's shell runs `agentsh -c '<command>'`).
/// The rewrite runs this agentsh, which judges (and asks, once), records and confines the
/// command itself: here only a denial is told at once, and the rest is allowed to reach it.
fn judge_inner(inner: &str, policy: &Policy, is_agentsh: &dyn Fn(&Path) -> bool) -> Verdict {
    let Some(cmd) = hook_rewrite(inner, is_agentsh) else { return decide::judge(inner, policy) };
    let v = decide::judge(&cmd, policy);
    if v.decision == Decision::Deny {
        return v;
    }
    let mut v =
        decide::decide(inner, vec![startup_assessment("agentsh", "hook's rewrite (agentsh -c COMMAND)")], policy);
    runs_agentsh(&mut v);
    v.harness = Some(
        "agentsh hook's rewrite recognized (this agentsh -c COMMAND); the agentsh it runs judges the command".into(),
    );
    v
}

/// What runs is agentsh itself, which judges, records and boxes the command on its own: inside
/// this agentsh's box it could not write its audit log (the box keeps agentsh's files from the
/// agent), and it would refuse everything.
fn runs_agentsh(v: &mut Verdict) {
    if v.decision == Decision::Allow {
        v.runs_in = crate::judge::decide::RunsIn::Unconfined;
        v.runs_in_why = RUNS_AGENTSH.into();
    }
}

/// Why a command that runs this agentsh runs unconfined ([`runs_agentsh`]): the agentsh it runs
/// makes its own choices of box and `$PATH` (`gate::run`).
pub const RUNS_AGENTSH: &str = "it runs agentsh itself, which judges, records and confines the command";

/// A start-up script: safe, and named so the record says whose it was. No argv, so no
/// whitelist entry is ever offered or matched for it.
fn startup_assessment(agent: &str, what: &str) -> Assessment {
    Assessment {
        argv: Vec::new(),
        program: String::new(),
        inner_argv: Vec::new(),
        inner_is_argv: false,
        risk: Risk::Safe,
        category: Category::Shell,
        reasons: vec![format!("{agent}'s own {what}, recognized exactly")],
        rule: "agent_startup".to_string(),
        context: format!("({agent} {what})"),
    }
}

/// The verdict on `inner`, where a command the snapshot redefines asks (no whitelist lifts it).
fn with_redefinitions(
    inner_text: &str,
    defs: &Definitions,
    policy: &Policy,
    is_agentsh: &dyn Fn(&Path) -> bool,
) -> Verdict {
    let inner = judge_inner(inner_text, policy, is_agentsh);
    let redefined: Vec<&String> = defs
        .iter()
        .filter(|d| inner.parts.iter().any(|p| p.assessment.argv.first().map(|a| a == *d).unwrap_or(false)))
        .collect();
    if redefined.is_empty() {
        return inner;
    }
    let mut assessments: Vec<Assessment> = inner.parts.into_iter().map(|p| p.assessment).collect();
    for name in redefined {
        assessments.push(Assessment {
            // No argv: a whitelist entry must not lift this.
            argv: Vec::new(),
            program: name.clone(),
            inner_argv: Vec::new(),
            inner_is_argv: false,
            risk: Risk::High,
            category: Category::Shell,
            reasons: vec![format!(
                "the shell snapshot redefines `{name}` (alias or function), so agentsh cannot tell what it runs"
            )],
            rule: "harness".to_string(),
            context: format!("({name} redefined by the snapshot)"),
        });
    }
    decide::decide(inner_text, assessments, policy)
}

/// The environment of a user `u` with a home in `/home/u`, for the tests of the wrappers and
/// the start-up scripts.
#[cfg(test)]
pub(crate) fn sample_env() -> Env {
    Env {
        claude_dirs: vec![PathBuf::from("/home/u/.claude")],
        temp_dirs: vec![PathBuf::from("/tmp")],
        home: Some(PathBuf::from("/home/u")),
        codex_dirs: vec![PathBuf::from("/home/u/.codex")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        sample_env()
    }
    const SNAP: &str = "/home/u/.claude/shell-snapshots/snapshot-bash-1785137321325-37gn94.sh";
    const ZSNAP: &str = "/home/u/.claude/shell-snapshots/snapshot-zsh-1790170079498-sk852w.sh";
    const UNSET: &str =
        "{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

    fn claude(cmd_word: &str) -> String {
        format!(
            "source {SNAP} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && {UNSET} && eval {cmd_word} < /dev/null && pwd -P >| /tmp/claude-cac4-cwd"
        )
    }

    fn inner(text: &str) -> Option<String> {
        unwrap(text, &env()).map(|w| w.inner)
    }

    #[test]
    fn recognizes_every_observed_claude_code_form() {
        // Captured forms (bash 2.1.x with and without snapshot; zsh; the oldest, shortest one).
        let forms = [
            claude("'git status'"),
            format!(
                "source {SNAP} 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd"
            ),
            "shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd"
                .to_string(),
            format!(
                "source {ZSNAP} 2>/dev/null || true && setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true && {UNSET} && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-9542-cwd"
            ),
            format!(
                "source {ZSNAP} 2>/dev/null || true && setopt NO_EXTENDED_GLOB 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-ccfa-cwd"
            ),
            "eval 'git status' < /dev/null && pwd -P >| /tmp/claude-00ff-cwd".to_string(),
        ];
        for f in &forms {
            assert_eq!(inner(f).as_deref(), Some("git status"), "{f}");
        }
        let w = unwrap(&forms[0], &env()).unwrap();
        assert_eq!(w.snapshot.as_deref(), Some(Path::new(SNAP)));
        assert_eq!(w.cwd_file, Path::new("/tmp/claude-cac4-cwd"));
    }

    #[test]
    fn decodes_claude_code_quoting_exactly() {
        assert_eq!(inner(&claude("'echo '\"'\"'hi'\"'\"''")).as_deref(), Some("echo 'hi'"));
        assert_eq!(inner(&claude("'echo '\\''hi'\\'''")).as_deref(), Some("echo 'hi'"));
        assert_eq!(inner(&claude("'a && b\nc'")).as_deref(), Some("a && b\nc"));
        // The eval word contains the suffix text itself: the last one is the scaffolding.
        assert_eq!(
            inner(&claude("'echo x < /dev/null && pwd -P >| /tmp/claude-cac4-cwd'")).as_deref(),
            Some("echo x < /dev/null && pwd -P >| /tmp/claude-cac4-cwd")
        );
    }

    #[test]
    fn anything_off_the_known_shape_is_not_recognized() {
        let bad = [
            // Expansions or other quoting in the eval word.
            claude("\"$(rm -rf ~)\""),
            claude("'ls'$(rm -rf ~)"),
            claude("git status"),
            claude("'ls' 'x'"),
            claude("''\"'\"'"), // fine quoting but then an unterminated piece below
            // A snapshot outside the Claude directory, or with an odd name.
            claude("'ls'").replace(SNAP, "/tmp/shell-snapshots/snapshot-bash-1-a.sh"),
            claude("'ls'").replace(SNAP, "/home/u/.claude/shell-snapshots/evil.sh"),
            claude("'ls'").replace(SNAP, "/home/u/.claude/shell-snapshots/../x/snapshot-bash-1-a.sh"),
            claude("'ls'").replace(SNAP, "/home/u/.claude/shell-snapshots/snapshot-fish-1-a.sh"),
            claude("'ls'").replace(SNAP, "$HOME/.claude/shell-snapshots/snapshot-bash-1-a.sh"),
            // The cwd file elsewhere or misnamed.
            claude("'ls'").replace("/tmp/claude-cac4-cwd", "/home/u/.bashrc"),
            claude("'ls'").replace("/tmp/claude-cac4-cwd", "/home/u/claude-cac4-cwd"),
            claude("'ls'").replace("/tmp/claude-cac4-cwd", "/tmp/claude-xyz!-cwd"),
            // Extra commands before, between or after the pieces.
            format!("rm -rf ~; {}", claude("'ls'")),
            format!("{} ; rm -rf ~", claude("'ls'")),
            claude("'ls'").replace(" && shopt", " && rm -rf ~ && shopt"),
            format!("{} && rm x", claude("'ls'")),
            // A piece repeated, a piece that differs by one character.
            claude("'ls'").replace(
                "shopt -u extglob 2>/dev/null || true",
                "shopt -u extglob 2>/dev/null || true && shopt -u extglob 2>/dev/null || true",
            ),
            claude("'ls'").replace("2>/dev/null || true && shopt", "2>/dev/null ; true && shopt"),
            "source x.sh && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-cac4-cwd".to_string(),
            "eval 'ls'".to_string(),
        ];
        for b in &bad {
            assert_eq!(inner(b), None, "{b}");
        }
    }

    fn trusted(_: &Path) -> Result<Definitions, String> {
        Ok(vec!["cd".into(), "ll".into()])
    }

    #[test]
    fn the_inner_command_decides() {
        let p = Policy::default();
        let v = judge_with(&claude("'git status'"), &p, &env(), &trusted, &|_| false);
        assert_eq!(v.decision, Decision::Allow);
        assert_eq!(v.command, "git status");
        assert!(v.harness.as_deref().unwrap().contains("recognized"));
        assert_eq!(judge_with(&claude("'rm -rf ~'"), &p, &env(), &trusted, &|_| false).decision, Decision::Deny);
        assert_eq!(judge_with(&claude("'npm install x'"), &p, &env(), &trusted, &|_| false).decision, Decision::Ask);
        // Hidden commands inside still count.
        assert_eq!(
            judge_with(&claude("'echo $(rm -rf /)'"), &p, &env(), &trusted, &|_| false).decision,
            Decision::Deny
        );
        // Unrecognized: the source of a file cannot be judged.
        let v = judge_with("source ./x.sh && git status", &p, &env(), &trusted, &|_| false);
        assert_eq!((v.decision, v.harness), (Decision::Ask, None));
    }

    #[test]
    fn an_untrusted_snapshot_judges_the_whole_script() {
        let untrusted = |_: &Path| -> Result<Definitions, String> { Err("it is a symbolic link".into()) };
        let v = judge_with(&claude("'git status'"), &Policy::default(), &env(), &untrusted, &|_| false);
        assert_eq!(v.decision, Decision::Ask);
        assert!(v.harness.as_deref().unwrap().contains("not trusted"), "{:?}", v.harness);
    }

    #[test]
    fn a_command_the_snapshot_redefines_asks_and_the_whitelist_cannot_lift_it() {
        let p = Policy { whitelist: decide::Entry::new("ll", "test").into_iter().collect(), ..Policy::default() };
        let v = judge_with(&claude("'ll'"), &p, &env(), &trusted, &|_| false);
        assert_eq!(v.decision, Decision::Ask);
        assert!(v.reasons.iter().any(|r| r.contains("redefines `ll`")), "{:?}", v.reasons);
        assert_eq!(judge_with(&claude("'ls -la'"), &p, &env(), &trusted, &|_| false).decision, Decision::Allow);
    }

    #[test]
    fn finds_what_a_snapshot_defines() {
        // `gs () \n{ \n    git status\n}` in base64, as Claude Code writes functions.
        let snapshot = "# Snapshot file\nunalias -a 2>/dev/null || true\n# Functions\n\
            eval \"$(echo 'Z3MgKCkgCnsgCiAgICBnaXQgc3RhdHVzCn0K' | base64 -d)\" > /dev/null 2>&1\n\
            shopt -s expand_aliases\nalias -- ll='ls -l'\nalias la='ls -A'\nmyfn() {\n  :\n}\nexport PATH=/usr/bin\n";
        assert_eq!(definitions(snapshot), ["gs", "ll", "la", "myfn"]);
    }

    fn gemini(cmd: &str) -> String {
        format!(
            "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-5Girzm/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{cmd}\n)\n__code=$?\nexit $__code"
        )
    }

    #[test]
    fn gemini_cli_wrapper_is_judged_by_the_command_inside() {
        // Captured from Gemini CLI 0.61.0 (issue 14).
        let p = Policy::default();
        let j = |t: &str| judge_with(t, &p, &env(), &trusted, &|_| false);
        let v = j(&gemini("ls -la && echo hello"));
        assert_eq!((v.decision, v.command.as_str()), (Decision::Allow, "ls -la && echo hello"));
        assert!(v.harness.as_deref().unwrap().contains("Gemini CLI"));
        assert_eq!(j(&gemini("rm -rf ~")).decision, Decision::Deny);
        assert_eq!(j(&gemini("chmod 600 notes.txt")).decision, Decision::Ask);
        assert_eq!(unwrap_gemini(&gemini("cat <<EOF\nx\nEOF"), &env()).as_deref(), Some("cat <<EOF\nx\nEOF"));
    }

    #[test]
    fn gemini_look_alikes_are_judged_whole() {
        let bad = [
            // The trap writes to wherever the variable points when the subshell exits.
            gemini("_bgpids_file=/home/u/.bashrc; sleep 1 &"),
            gemini("ls \\"),
            gemini(" ls"),
            gemini("ls").replace("/tmp/gemini-shell-5Girzm/bgpids.tmp", "/home/u/.bashrc"),
            gemini("ls").replace("/tmp/gemini-shell-5Girzm/bgpids.tmp", "$HOME/x/bgpids.tmp"),
            gemini("ls").replace("/tmp/gemini-shell-5Girzm/", "/tmp/other/"),
            gemini("ls") + "; rm -rf ~",
            format!("rm -rf ~; {}", gemini("ls")),
            gemini("ls").replace("trap 'jobs -p", "trap 'rm -rf ~; jobs -p"),
        ];
        for b in &bad {
            assert_eq!(unwrap_gemini(b, &env()), None, "{b}");
        }
        // Unrecognized, the scaffolding is judged too: not a silent allow.
        let v = judge_with(&bad[0], &Policy::default(), &env(), &trusted, &|_| false);
        assert_ne!(v.decision, Decision::Allow);
        // A command that closes the subshell early does not parse alone: never allowed.
        let v = judge_with(&gemini("ls\n)\nrm -rf x\n(\n:"), &Policy::default(), &env(), &trusted, &|_| false);
        assert_ne!(v.decision, Decision::Allow);
    }

    #[test]
    fn the_hooks_own_rewrite_is_judged_by_the_command_inside() {
        let me = |p: &Path| p == Path::new("/opt/a b/agentsh");
        let p = Policy::default();
        let j = |t: &str| judge_with(t, &p, &env(), &trusted, &me);
        let v = j("'/opt/a b/agentsh' -c 'ls -la && exit 3'");
        assert_eq!(v.decision, Decision::Allow);
        assert_eq!(v.runs_in, crate::judge::decide::RunsIn::Unconfined, "the agentsh inside confines it");
        // What needs a person is asked once, by the agentsh inside.
        assert_eq!(j("'/opt/a b/agentsh' -c 'git push'").decision, Decision::Allow);
        assert_eq!(j("'/opt/a b/agentsh' -c 'rm -rf ~'").decision, Decision::Deny);
        // Another program, another spelling, or more after it: judged as written.
        assert_eq!(hook_rewrite("/opt/evil -c ls", &me), None);
        assert_eq!(hook_rewrite("'/opt/a b/agentsh' -c ls; rm -rf x", &me), None);
        assert_eq!(hook_rewrite("'/opt/a b/agentsh'  -c ls", &me), None);
        assert_eq!(hook_rewrite("'/opt/a b/agentsh' -c ls x", &me), None);
    }

    #[test]
    fn an_agent_running_agentshs_hook_through_its_shell_is_allowed_and_nothing_else() {
        let me = |p: &Path| p == Path::new("/opt/agentsh");
        assert_eq!(hook_call("/opt/agentsh hook gemini", &me), Some("Gemini CLI"));
        assert_eq!(hook_call("/opt/agentsh hook gemini --timeout 300", &me), Some("Gemini CLI"));
        let v = judge_with("/opt/agentsh hook gemini", &Policy::default(), &env(), &trusted, &me);
        assert_eq!(v.decision, Decision::Allow);
        for bad in [
            "/opt/agentsh hook gemini x",
            "/opt/agentsh approve 0123456789ab",
            "/opt/other hook gemini",
            "/opt/agentsh hook gemini; rm -rf ~",
            "agentsh hook gemini",
            "/opt/agentsh hook bogus",
            "/opt/agentsh hook gemini --timeout",
            "/opt/agentsh hook gemini --timeout x",
            "/opt/agentsh hook gemini --timeout 3 x",
            "/opt/agentsh hook gemini --list 3",
            "/opt/agentsh hook gemini --timeout '3'",
        ] {
            assert_eq!(hook_call(bad, &me), None, "{bad}");
        }
        assert_ne!(
            judge_with("/opt/agentsh approve 0123456789ab", &Policy::default(), &env(), &trusted, &me).decision,
            Decision::Allow
        );
    }
}
