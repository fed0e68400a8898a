//! The environment an unconfined command runs with, so that the pagers it starts run no command
//! from the keys typed at them or from their options (rt7 B7: with no box and an agent's pty,
//! `less file` and then `!cmd` typed at it, `less '+!cmd'`, `man ls` then `!cmd`, ran code
//! outside any box). Pure: the current values in, what to set out; `exec` applies it.
//!
//! - `LESSSECURE=1`: less's secure mode, with no `!`, `|`, `v`, `s`, `:e`, log files, lesskey
//!   files or `LESSOPEN`; `LESSSECURE_ALLOW`, which lets features back, is removed. It holds for
//!   every less a program starts: man's, git's, journalctl's, systemctl's, bat's.
//! - The pager variables name less (or cat, where there is no less): a pager variable of the
//!   agent's that names another (`more`, `most`, `pg`, whose keys run commands) is replaced, and
//!   `PAGER` is set where it is unset, so man does not fall back to the system's `pager`.
//!
//! What the command's text sets is judged (`judge::escapes`, `rules::code_env`): agentsh can only
//! set these before the shell runs it.

/// Removed from an unconfined command's environment.
pub const REMOVED: &[&str] = &["LESSSECURE_ALLOW"];

/// The pager variables, besides `PAGER`, that programs read: where one is set, it must name a
/// pager that runs no command.
const PAGERS: &[&str] = &["MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "BAT_PAGER", "PSQL_PAGER"];

/// What to set in an unconfined command's environment, given how `get` reads agentsh's and
/// whether less is installed.
pub fn guard(get: impl Fn(&str) -> Option<String>, less_found: bool) -> Vec<(&'static str, String)> {
    let safe = if less_found { "less" } else { "cat" };
    let mut set = vec![("LESSSECURE", "1".to_string())];
    let quiet = |v: &str| {
        let program = v.split_whitespace().next().unwrap_or_default();
        matches!(program.rsplit('/').next(), Some("less" | "cat"))
    };
    if !get("PAGER").is_some_and(|v| quiet(&v)) {
        set.push(("PAGER", safe.to_string()));
    }
    for name in PAGERS {
        if get(name).is_some_and(|v| !quiet(&v)) {
            set.push((name, safe.to_string()));
        }
    }
    set
}

/// Whether an environment, read by `get`, already keeps pagers from running commands: nothing
/// [`guard`] would set differs and nothing it removes is there (an interactive shell's line gate,
/// which agentsh does not run: `init bash|zsh` exports these). Whether less is installed does
/// not change the answer (a pager variable is set only where it names neither less nor cat), so
/// `$PATH` is not searched for it.
pub fn guarded(get: impl Fn(&str) -> Option<String>) -> bool {
    guard(&get, true).iter().all(|(name, value)| get(name).as_deref() == Some(value.as_str()))
        && REMOVED.iter().all(|name| get(name).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    /// rt7 B7: less is always in its secure mode; a pager whose keys run commands is replaced.
    #[test]
    fn unconfined_commands_page_through_a_secure_less() {
        assert_eq!(guard(env(&[]), true), [("LESSSECURE", "1".to_string()), ("PAGER", "less".to_string())]);
        assert_eq!(guard(env(&[]), false)[1], ("PAGER", "cat".to_string()));
        assert_eq!(guard(env(&[("PAGER", "less -R")]), true), [("LESSSECURE", "1".to_string())]);
        assert_eq!(guard(env(&[("PAGER", "/usr/bin/cat")]), true).len(), 1);
        let set = guard(env(&[("PAGER", "more"), ("MANPAGER", "most -s"), ("GIT_PAGER", "less")]), true);
        assert_eq!(
            set,
            [("LESSSECURE", "1".to_string()), ("PAGER", "less".to_string()), ("MANPAGER", "less".to_string())]
        );
        assert_eq!(REMOVED, ["LESSSECURE_ALLOW"]);
    }

    /// rt8 C4: the line gate's shell keeps pagers safe only with what `guard` would set.
    #[test]
    fn an_environment_is_guarded_only_with_what_guard_sets() {
        assert!(!guarded(env(&[])));
        assert!(guarded(env(&[("LESSSECURE", "1"), ("PAGER", "less")])));
        assert!(guarded(env(&[("LESSSECURE", "1"), ("PAGER", "less -R"), ("GIT_PAGER", "cat")])));
        assert!(!guarded(env(&[("LESSSECURE", "1"), ("PAGER", "less"), ("LESSSECURE_ALLOW", "shell")])));
        assert!(!guarded(env(&[("LESSSECURE", "1"), ("PAGER", "less"), ("MANPAGER", "most")])));
        assert!(!guarded(env(&[("LESSSECURE", "0"), ("PAGER", "less")])));
        assert!(guarded(env(&[("LESSSECURE", "1"), ("PAGER", "cat")])), "cat is as quiet as less");
    }
}
