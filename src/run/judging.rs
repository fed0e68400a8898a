//! Judging at the binary's edge: the judge (pure, `judge::`) given what it needs from the
//! world (the agent wrapper's environment and snapshot file), on its own thread within a time
//! budget, with parser panics contained. `gate`, `check` and `hook` all judge through here, so
//! they agree.

use crate::judge::agent_wrappers::{self, Definitions, Env};
use crate::judge::decide::{self, Policy, Verdict};
use crate::judge::{assess, parse, plain_words};
use crate::run::crash_guard;
use std::path::{Path, PathBuf};

/// The snapshot is read to find what it redefines; a larger one is not trusted.
const MAX_SNAPSHOT_BYTES: u64 = 4 * 1024 * 1024;

/// Where the agent's files may legitimately be, read from this process's environment.
pub fn wrapper_env() -> Env {
    let abs = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let home = crate::policy::dirs::home().map(Path::to_path_buf);
    let mut claude_dirs: Vec<PathBuf> = abs(std::env::var_os("CLAUDE_CONFIG_DIR")).into_iter().collect();
    let mut codex_dirs: Vec<PathBuf> = abs(std::env::var_os("CODEX_HOME")).into_iter().collect();
    if let Some(home) = &home {
        claude_dirs.push(home.join(".claude"));
        codex_dirs.push(home.join(".codex"));
    }
    let mut temp_dirs = vec![PathBuf::from("/tmp")];
    // Gemini CLI's os.tmpdir() drops a trailing slash; so does PathBuf's comparison.
    temp_dirs.extend(abs(std::env::var_os("TMPDIR")));
    Env { claude_dirs, temp_dirs, home, codex_dirs }
}

/// Looks at a snapshot file: it must be Claude Code's own, by the only marks agentsh can see.
/// Returns the names it defines, or why it is not trusted.
pub fn inspect_snapshot(path: &Path) -> Result<Definitions, String> {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::getuid().as_raw();
    let owned_private = |p: &Path, what: &str| -> Result<std::fs::Metadata, String> {
        let m = std::fs::symlink_metadata(p).map_err(|e| format!("{what} {}: {e}", p.display()))?;
        if m.file_type().is_symlink() {
            return Err(format!("{what} {} is a symbolic link", p.display()));
        }
        if m.uid() != uid {
            return Err(format!("{what} {} is owned by uid {}, not by you", p.display(), m.uid()));
        }
        if m.mode() & 0o022 != 0 {
            return Err(format!("{what} {} is writable by other users", p.display()));
        }
        Ok(m)
    };
    if let Some(dir) = path.parent() {
        owned_private(dir, "the snapshot directory")?;
    }
    let m = owned_private(path, "the snapshot")?;
    if !m.file_type().is_file() {
        return Err(format!("the snapshot {} is not a regular file", path.display()));
    }
    if m.len() > MAX_SNAPSHOT_BYTES {
        return Err(format!("the snapshot {} is over {MAX_SNAPSHOT_BYTES} bytes", path.display()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("the snapshot {}: {e}", path.display()))?;
    Ok(agent_wrappers::definitions(&String::from_utf8_lossy(&bytes)))
}

/// The verdict on command text as agentsh receives it: a recognized harness wrapper is judged
/// by the command inside it. Reads the environment and inspects the snapshot file. `gate`,
/// `check` and `hook` all call this, so they agree.
pub fn judge(text: &str, policy: &Policy) -> Verdict {
    agent_wrappers::judge_with(text, policy, &wrapper_env(), &inspect_snapshot, &is_agentsh)
}

/// Whether `path` is this agentsh binary (Codex's wrapper execs its login shell, which may be
/// agentsh under the name `bash`), and stays so until it runs: a path a box could make lead
/// elsewhere is not (`dirs::settled`; rt7 C1: a link in the workspace, which a job left in a kept
/// box swapped between agentsh and a script, was judged to be agentsh and ran the script
/// unconfined). Nor is any path where there is no home to tell the person's places by.
pub fn is_agentsh(path: &Path) -> bool {
    let me = std::env::current_exe().ok().and_then(|p| p.canonicalize().ok());
    let Some(home) = crate::policy::dirs::home() else { return false };
    me.is_some() && crate::policy::dirs::settled(path, home).ok() == me
}

/// [`judge`] within a time budget, panics contained (see [`judge_bounded`]), for a process that judges one command and then ends (`gate`, `check`,
/// `hook`): the policy is left to the process exit instead of being freed, since freeing a
/// 10,000-entry whitelist and 1,000 rules one allocation at a time cost a tenth of such a
/// command (docs/BENCHMARKS.md). A crash while judging ends the process with the route's
/// refusal (`crash_guard`).
pub fn judge_once(text: &str, policy: Policy, route: Route) -> Verdict {
    let policy = std::sync::Arc::new(policy);
    std::mem::forget(policy.clone());
    guarded(text, policy, JUDGE_BUDGET, judge, Some(route))
}

/// Which route judges, and so what a crash while judging must say and end with
/// ([`crash_refusal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `agentsh -c`, a script, stdin: refused, status 126, the reason on stderr.
    Shell,
    /// `agentsh check`: a deny verdict on stdout (JSON with `json`; on stderr with `prompt`,
    /// whose stdout is the person's), status `deny`.
    Check { json: bool, prompt: bool, deny: i32 },
    /// `agentsh hook`: blocked, status `block` (which every supported agent reads as a
    /// block), the reason on stderr.
    Hook { block: i32 },
}

/// What a crash while judging reads as: the command never runs.
const CRASHED: &str = "agentsh crashed while judging the command (a stack overflow or another fault in its \
                       parser), so it cannot tell what the command would do";

/// The refusal `route` gives when judging `text` crashes, made before judging starts: the
/// crash handler can only write bytes made in advance (`crash_guard`).
pub fn crash_refusal(text: &str, policy: &Policy, route: Route) -> crash_guard::Refusal {
    let hint = "hint: nothing ran; this is a bug in agentsh: please report it with the command\n";
    let on_stderr = |code: i32, message: String| crash_guard::Refusal {
        code,
        stdout: Vec::new(),
        stderr: message.into_bytes(),
        text: None,
    };
    match route {
        Route::Shell => on_stderr(crate::model::exit::REFUSED, format!("agentsh: denied: {CRASHED}\n{hint}")),
        Route::Hook { block } => on_stderr(block, format!("agentsh: {CRASHED}; the command is blocked\n")),
        Route::Check { prompt: true, deny, .. } => on_stderr(deny, format!("agentsh: denied: {CRASHED}\n{hint}")),
        Route::Check { json, deny, .. } => {
            // The verdict check would print, made for a stand-in text (U+0001) where the
            // command goes: the command itself is written in its place only on a crash, so a
            // long command costs nothing more here.
            let stand_in = if json { "\u{1}" } else { text };
            let crashed = parse::ParseError::Pathological(
                "input that crashed agentsh's parser (a stack overflow or another fault)",
            );
            let mut verdict = decide::decide(stand_in, vec![assess::unparseable(stand_in, &crashed)], policy);
            verdict.reasons = vec![CRASHED.to_string()];
            let (stdout, text) = if json {
                let mut out = serde_json::to_vec(&verdict).unwrap_or_default();
                out.push(b'\n');
                (out, Some(&*Box::leak(text.to_string().into_boxed_str())))
            } else {
                (crate::run::explain::check_report(&verdict).into_bytes(), None)
            };
            crash_guard::Refusal { code: deny, stdout, stderr: Vec::new(), text }
        }
    }
}

/// How long the binary lets [`decide::judge`] take before refusing the command (see [`judge_bounded`]).
pub const JUDGE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// [`decide::judge`] with a time limit, for the binary's edges (gate, check). brush-parser backtracks
/// exponentially on some malformed input and panics on some other (found by fuzzing; the known
/// shapes are refused before parsing), so a verdict that is not ready in `budget`, or whose
/// thread panicked, is a deny. The judging runs on its own thread; one that overruns is left
/// behind, and the process ends soon after the refusal.
pub fn judge_bounded(text: &str, policy: std::sync::Arc<Policy>, budget: std::time::Duration) -> Verdict {
    bounded(text, policy, budget, decide::judge)
}

/// [`judge_bounded`] with the judging function given ([`judge`] wraps `decide::judge`). The policy
/// is shared, not copied: a 10,000-entry whitelist would cost more to copy than to judge.
pub fn bounded(
    text: &str,
    policy: std::sync::Arc<Policy>,
    budget: std::time::Duration,
    judge: fn(&str, &Policy) -> Verdict,
) -> Verdict {
    guarded(text, policy, budget, judge, None)
}

/// [`bounded`], with a crash while judging ending the process with `route`'s refusal.
fn guarded(
    text: &str,
    policy: std::sync::Arc<Policy>,
    budget: std::time::Duration,
    judge: fn(&str, &Policy) -> Verdict,
    route: Option<Route>,
) -> Verdict {
    // Plain words never reach brush-parser (`plain_words`), the only source of the slow,
    // panicking or crashing shapes: judge them here, without a thread's stack and arena.
    if plain_words::plain(text, 0).is_some() {
        return judge(text, &policy);
    }
    if let Some(route) = route {
        crash_guard::arm(crash_refusal(text, &policy, route));
    }
    const THREAD: &str = "agentsh-judge";
    // A parser panic is reported as a refusal below; its raw message would only be noise.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(THREAD) {
                default(info);
            }
        }));
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let (owned, pol) = (text.to_string(), std::sync::Arc::clone(&policy));
    // The parser recurses; give it the main thread's stack size rather than a thread's 2 MiB.
    let spawned = std::thread::Builder::new().name(THREAD.to_string()).stack_size(8 << 20).spawn(move || {
        let _alt = crash_guard::AltStack::new();
        #[cfg(debug_assertions)]
        crash_guard::crash_if_asked();
        let _ = tx.send(judge(&owned, &pol));
    });
    let refuse =
        |what| decide::decide(text, vec![assess::unparseable(text, &parse::ParseError::Pathological(what))], &policy);
    if spawned.is_err() {
        return refuse("input agentsh could not start judging");
    }
    match rx.recv_timeout(budget) {
        Ok(verdict) => {
            // The judging thread is done; one that overran or died keeps the guard armed
            // until the process ends.
            crash_guard::disarm();
            verdict
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => refuse("input that takes too long to parse"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => refuse("input that makes the parser fail"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspects_the_snapshot_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let snaps = dir.path().join("shell-snapshots");
        std::fs::create_dir(&snaps).unwrap();
        std::fs::set_permissions(&snaps, std::fs::Permissions::from_mode(0o700)).unwrap();
        let f = snaps.join("snapshot-bash-1-a.sh");
        std::fs::write(&f, "alias ll='ls -l'\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(inspect_snapshot(&f).unwrap(), ["ll"]);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(inspect_snapshot(&f).unwrap_err().contains("writable by other users"));
        let link = snaps.join("snapshot-bash-2-b.sh");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(inspect_snapshot(&link).unwrap_err().contains("symbolic link"));
        assert!(inspect_snapshot(&snaps.join("snapshot-bash-3-c.sh")).is_err());
    }
}
