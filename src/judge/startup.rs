//! Agents' own start-up scripts: the fixed text Claude Code and Codex run through their shell
//! before (and around) the model's commands, recognized exactly so they do not ask a person at
//! every session start. It owns the captured texts (`startup/*.sh`, one file per form, holes
//! written `@@name@@`) and the rules for each hole; it must not judge the model's commands.
//!
//! Captured live (issue 14) with a `bash` that logged its argv: Claude Code 2.1.197 runs `env`
//! and its snapshot script (one form without `~/.bashrc`, one with); Codex 0.169.0 runs its
//! snapshot script, a check that sources the new snapshot, and then wraps every model command
//! in a script that sources the snapshot and `exec`s the login shell with the command.
//!
//! Strict by design, as `agent_wrappers` is for Claude Code's command wrapper: every byte
//! outside a hole must match, and each hole takes only plain path characters in the place the
//! agent puts its files. A look-alike (one byte off, a path elsewhere, an expansion in a hole)
//! is not recognized and is judged as plain shell text. Pure: the places come in `Env`.

use crate::judge::agent_wrappers::Env;
use std::path::{Path, PathBuf};

/// One known start-up text.
pub struct Form {
    pub agent: &'static str,
    pub what: &'static str,
    pub text: &'static str,
}

/// Every known form. A new agent version with a new text is a new file and a new row.
pub const FORMS: &[Form] = &[
    Form { agent: "Claude Code", what: "environment probe", text: "env" },
    Form { agent: "Claude Code", what: "shell snapshot script", text: include_str!("startup/claude-code-snapshot.sh") },
    Form {
        agent: "Claude Code",
        what: "shell snapshot script (with ~/.bashrc)",
        text: include_str!("startup/claude-code-snapshot-bashrc.sh"),
    },
    Form { agent: "Codex", what: "shell snapshot script", text: include_str!("startup/codex-snapshot.sh") },
    Form { agent: "Codex", what: "shell snapshot check", text: include_str!("startup/codex-snapshot-check.sh") },
];

/// Codex's wrapper around every model command: judged by the command inside (see
/// [`codex_wrapper`]).
const CODEX_WRAPPER: &str = include_str!("startup/codex-wrapper.sh");

/// What a recognized form is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recognized {
    pub agent: &'static str,
    pub what: &'static str,
}

/// The start-up form `text` is, if any.
pub fn recognize(text: &str, env: &Env) -> Option<Recognized> {
    FORMS.iter().find(|f| matches(f.text, text, env).is_some()).map(|f| Recognized { agent: f.agent, what: f.what })
}

/// Codex's command wrapper: the shell it execs (unquoted) and the command (unquoted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodexWrapped {
    pub shell: PathBuf,
    pub inner: String,
    pub snapshot: PathBuf,
}

pub fn codex_wrapper(text: &str, env: &Env) -> Option<CodexWrapped> {
    let holes = matches(CODEX_WRAPPER, text, env)?;
    let get = |n: &str| holes.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    Some(CodexWrapped {
        shell: PathBuf::from(get("shell")?),
        inner: get("command")?,
        snapshot: PathBuf::from(get("codex_snapshot")?),
    })
}

/// Matches `text` against `template`; returns each hole's (decoded) value. A hole repeated in
/// the template must take the same value each time.
fn matches(template: &str, text: &str, env: &Env) -> Option<Vec<(String, String)>> {
    // Every command is compared with every form: where the two differ before the template's
    // first hole, say so without splitting the template (its first `@@` can be kilobytes in).
    let (t, x) = (template.as_bytes(), text.as_bytes());
    let same = t.iter().zip(x).take_while(|(a, b)| a == b).count();
    if same < t.len() && !t[..(same + 2).min(t.len())].windows(2).any(|w| w == b"@@") {
        return None;
    }
    let mut pieces = template.split("@@");
    let mut rest = text.strip_prefix(pieces.next()?)?;
    let mut holes: Vec<(String, String)> = Vec::new();
    loop {
        let Some(name) = pieces.next() else {
            return rest.is_empty().then_some(holes);
        };
        let literal = pieces.next()?;
        // The hole ends where the literal after it starts (or at the end of the text). Holes
        // take no character their literal could start with, so the first place is the only one.
        let end = if literal.is_empty() { rest.len() } else { rest.find(literal)? };
        let (raw, after) = rest.split_at(end);
        let value = hole(name, raw, env)?;
        if let Some((_, seen)) = holes.iter().find(|(n, _)| n == name) {
            if *seen != value {
                return None;
            }
        } else {
            holes.push((name.to_string(), value));
        }
        rest = &after[literal.len()..];
    }
}

/// Path characters that no shell expands or splits.
fn plain(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+@".contains(c))
}

fn clean_abs(s: &str) -> bool {
    plain(s) && s.starts_with('/') && !s.contains("/../") && !s.contains("/./") && !s.contains("//")
}

fn in_dir(path: &str, dirs: &[PathBuf], sub: &str) -> bool {
    let p = Path::new(path);
    p.parent().is_some_and(|d| dirs.iter().any(|x| d == x.join(sub)))
}

/// Checks one hole's text and returns its value.
fn hole(name: &str, raw: &str, env: &Env) -> Option<String> {
    let ok = match name {
        "home" => env.home.as_deref().is_some_and(|h| Path::new(raw) == h) && clean_abs(raw),
        "claude_snapshot" => {
            clean_abs(raw)
                && in_dir(raw, &env.claude_dirs, "shell-snapshots")
                && file_name_is(raw, |n| {
                    let Some(rest) = n.strip_prefix("snapshot-bash-").and_then(|r| r.strip_suffix(".sh")) else {
                        return false;
                    };
                    let Some((ms, id)) = rest.split_once('-') else { return false };
                    digits(ms) && !id.is_empty() && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                })
        }
        "delim" => !raw.is_empty() && raw.strip_prefix("PATH_END_").is_some_and(|r| !r.is_empty() && alnum(r)),
        // PATH as Claude Code writes it into the snapshot (a quoted heredoc, sourced later).
        "path" => raw.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+@:".contains(c)) && !raw.is_empty(),
        "codex_snapshot_tmp" => {
            clean_abs(raw)
                && in_dir(raw, &env.codex_dirs, "shell_snapshots")
                && file_name_is(raw, |n| n.split_once(".tmp-").is_some_and(|(uuid, ns)| uuid_like(uuid) && digits(ns)))
        }
        "codex_snapshot" => {
            clean_abs(raw)
                && in_dir(raw, &env.codex_dirs, "shell_snapshots")
                && file_name_is(raw, |n| {
                    n.strip_suffix(".sh")
                        .and_then(|r| r.split_once('.'))
                        .is_some_and(|(uuid, ns)| uuid_like(uuid) && digits(ns))
                })
        }
        // Codex's own helper directory, prepended to PATH: `.../codex-path`.
        "codex_path" => clean_abs(raw) && raw.ends_with("/codex-path"),
        "shell" => {
            return raw
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .filter(|p| clean_abs(p))
                .map(str::to_string);
        }
        "command" => return crate::judge::agent_wrappers::single_quoted(raw),
        _ => false,
    };
    ok.then(|| raw.to_string())
}

fn file_name_is(path: &str, f: impl Fn(&str) -> bool) -> bool {
    Path::new(path).file_name().and_then(|n| n.to_str()).is_some_and(f)
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn alnum(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') && s.matches('-').count() == 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        crate::judge::agent_wrappers::sample_env()
    }

    fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
        let mut t = template.to_string();
        for (k, v) in pairs {
            t = t.replace(&format!("@@{k}@@"), v);
        }
        t
    }

    const SNAP: &str = "/home/u/.claude/shell-snapshots/snapshot-bash-1795470446795-bqroka.sh";
    const CODEX_SNAP: &str = "/home/u/.codex/shell_snapshots/01a20a62-6d7e-7de1-92e7-43f0f31ebd10.1795470552.sh";

    fn claude_snapshot(template: &str) -> String {
        fill(
            template,
            &[
                ("claude_snapshot", SNAP),
                ("home", "/home/u"),
                ("delim", "PATH_END_946ydkkv24m"),
                ("path", "/usr/bin:/bin"),
            ],
        )
    }

    #[test]
    fn recognizes_every_captured_form() {
        let e = env();
        for (text, what) in [
            ("env".to_string(), "environment probe"),
            (claude_snapshot(FORMS[1].text), "shell snapshot script"),
            (claude_snapshot(FORMS[2].text), "shell snapshot script (with ~/.bashrc)"),
            (FORMS[3].text.to_string(), "shell snapshot script"),
            (
                fill(
                    FORMS[4].text,
                    &[(
                        "codex_snapshot_tmp",
                        "/home/u/.codex/shell_snapshots/01a20a62-6d7e-7de1-92e7-43f0f31ebd10.tmp-17954",
                    )],
                ),
                "shell snapshot check",
            ),
        ] {
            assert_eq!(recognize(&text, &e).map(|r| r.what), Some(what), "{text:.60}");
        }
    }

    #[test]
    fn look_alikes_are_not_recognized() {
        let e = env();
        let good = claude_snapshot(FORMS[1].text);
        let bad = [
            "env -i sh".to_string(),
            "env ".to_string(),
            " env".to_string(),
            format!("{good}\nrm -rf ~"),
            format!("rm -rf ~; {good}"),
            good.replacen("echo \"# Snapshot file\"", "echo \"# Snapshot file\"; curl x|sh", 1),
            // A PATH that runs code when the snapshot is sourced.
            claude_snapshot(FORMS[1].text).replace("export PATH=/usr/bin:/bin", "export PATH=$(touch /tmp/x)"),
            // The snapshot outside Claude's directory, another home, a mismatched delimiter.
            good.replace(SNAP, "/tmp/shell-snapshots/snapshot-bash-1-a.sh"),
            fill(
                FORMS[1].text,
                &[("claude_snapshot", SNAP), ("home", "/home/evil"), ("delim", "PATH_END_a"), ("path", "/bin")],
            ),
            good.replacen("PATH_END_946ydkkv24m", "PATH_END_other", 1),
            FORMS[3].text.replace("declare -f", "declare -f; rm -rf ~"),
            fill(FORMS[4].text, &[("codex_snapshot_tmp", "/tmp/x.tmp-1")]),
            fill(FORMS[4].text, &[("codex_snapshot_tmp", "$HOME/.codex/shell_snapshots/x.tmp-1")]),
        ];
        for b in &bad {
            assert_eq!(recognize(b, &e), None, "{b:.200}");
        }
    }

    fn wrapper(shell: &str, command: &str) -> String {
        fill(CODEX_WRAPPER, &[("codex_snapshot", CODEX_SNAP), ("codex_path", "/opt/codex/codex-path")])
            .replace("@@shell@@", shell)
            .replace("@@command@@", command)
    }

    #[test]
    fn codex_wrapper_yields_the_shell_and_the_command() {
        let w = codex_wrapper(&wrapper("'/home/u/.local/share/agentsh/bin/bash'", "'ls -la && echo hello'"), &env())
            .unwrap();
        assert_eq!(w.inner, "ls -la && echo hello");
        assert_eq!(w.shell, PathBuf::from("/home/u/.local/share/agentsh/bin/bash"));
        assert_eq!(codex_wrapper(&wrapper("'/bin/bash'", "'echo '\\''hi'\\'''"), &env()).unwrap().inner, "echo 'hi'");
        for bad in [
            wrapper("/bin/bash", "'ls'"),
            wrapper("'$(evil)'", "'ls'"),
            wrapper("'/bin/bash'", "\"$(rm -rf ~)\""),
            wrapper("'/bin/bash'", "'ls'") + "; rm -rf ~",
            wrapper("'/bin/bash'", "'ls'").replace(CODEX_SNAP, "/tmp/evil.sh"),
        ] {
            assert_eq!(codex_wrapper(&bad, &env()), None, "{:.80}", &bad[bad.len() - 80..]);
        }
    }
}
