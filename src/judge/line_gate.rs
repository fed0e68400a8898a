//! Lines that change an interactive shell's own line gate (rt8 C3). The gate `agentsh init
//! bash|zsh` loads is state of the very shell it gates: a line that rebinds the keys that accept
//! a line (`bind`, `bindkey`, `zle`), turns line editing off or switches it (`set -o vi`,
//! `set +o emacs`, `unsetopt zle`), or touches the gate's names (`__agentsh_bin=/bin/true`,
//! `__agentsh_gate() { :; }`, the prompt hook that restores the gate) would leave every later
//! line unjudged. The script makes its names read-only, binds every keymap and restores itself
//! before each prompt; this is the judge's half: such a line needs a person. Pure: the text and
//! the parsed commands in, the word and why out.

use crate::judge::assess::basename;

/// Names of the gate and of what the shell runs before each prompt, where the gate restores
/// itself; a line that names any of them needs a person (`PROMPT_COMMAND`, zsh's
/// `precmd_functions`, its table of functions `functions[...]`, readline's `INPUTRC`).
const GATE_NAMES: &[&str] = &["__agentsh", "PROMPT_COMMAND", "precmd_functions", "functions[", "INPUTRC"];

/// Programs (builtins) that change the keys or the line editor of the shell that runs them.
const KEY_BUILTINS: &[&str] = &["bind", "bindkey", "zle", "unfunction", "functions", "enable", "disable"];

/// Why the line `text`, whose commands are `commands` (each its words and its unwrapped
/// command), changes the line gate of the shell that runs it, or `None`.
pub fn changes_gate<'a>(
    text: &str,
    commands: impl IntoIterator<Item = (&'a [String], &'a [String])>,
) -> Option<(String, String)> {
    if let Some(name) = GATE_NAMES.iter().find(|n| text.contains(**n)) {
        let why = format!("names `{name}`, part of this shell's line gate (it would judge no later line)");
        return Some((name.to_string(), why));
    }
    for (argv, inner) in commands {
        for words in [argv, inner] {
            let Some(first) = words.first() else { continue };
            let name = basename(first);
            if KEY_BUILTINS.contains(&name) {
                let why = format!(
                    "`{name}` changes this shell's keys or line editor, through which the line gate judges each line"
                );
                return Some((name.to_string(), why));
            }
            let editing = |w: &String| {
                let w = w.trim_start_matches(['-', '+']).to_ascii_lowercase().replace('_', "");
                matches!(w.as_str(), "vi" | "emacs" | "zle" | "nozle" | "history")
            };
            if matches!(name, "set" | "setopt" | "unsetopt" | "shopt") && words[1..].iter().any(editing) {
                let why = format!(
                    "`{name}` switches this shell's line editor or history, through which the line gate reads each line"
                );
                return Some((name.to_string(), why));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::judge::decide::{self, Policy, Sandbox};
    use crate::model::{Category, Decision};

    fn gate() -> Policy {
        let off = Sandbox::Off("an interactive shell runs the line itself".into());
        Policy { sandbox: off, terminal: true, line_gate: true, ..Policy::default() }
    }

    /// rt8 C3: each switched the bash line gate off, allowed; now each needs a person there, and
    /// only there (with `agentsh -c` the shell ends with the command).
    #[test]
    fn lines_that_change_the_gate_ask_on_the_line_gate() {
        for text in [
            "set -o vi",
            "set +o emacs",
            "set +o history",
            "set -o emacs",
            "__agentsh_bin=/bin/true",
            "__agentsh_gate() { :; }",
            "unset -f __agentsh_gate",
            "unset PROMPT_COMMAND",
            "PROMPT_COMMAND=",
            "builtin bind '\"\\C-m\": accept-line'",
            "command bind -p",
            "bindkey -v",
            "zle -N accept-line true",
            "unsetopt zle",
            "setopt vi",
            "INPUTRC=./x",
            "enable -n set",
        ] {
            let v = decide::judge(text, &gate());
            assert_eq!(v.decision, Decision::Ask, "{text}: {v:?}");
            assert!(
                v.parts.iter().any(|p| p.assessment.rule == "line-gate" && p.assessment.category == Category::Shell),
                "{text}: {v:?}"
            );
            let elsewhere = decide::judge(text, &Policy { line_gate: false, ..gate() });
            assert!(elsewhere.parts.iter().all(|p| p.assessment.rule != "line-gate"), "{text}");
        }
        for text in ["set -e", "set -o pipefail", "ls", "git status", "echo vi", "cargo build --release"] {
            let v = decide::judge(text, &gate());
            assert!(v.parts.iter().all(|p| p.assessment.rule != "line-gate"), "{text}: {v:?}");
        }
    }

    /// rt8 C4: where the line gate's shell does not keep less in its secure mode, a pager asks on
    /// the terminal; where it does, it does not.
    #[test]
    fn pagers_ask_on_a_line_gate_without_their_secure_mode() {
        for text in ["less /etc/hosts", "man ls", "git log", "journalctl -u x"] {
            let v = decide::judge(text, &Policy { pagers_unguarded: true, ..gate() });
            assert_eq!(v.decision, Decision::Ask, "{text}: {v:?}");
            let v = decide::judge(text, &gate());
            assert!(v.parts.iter().all(|p| p.assessment.rule != "no-box"), "{text}: {v:?}");
        }
        for text in ["git --no-pager log", "systemctl --no-pager status x", "cat f"] {
            let v = decide::judge(text, &Policy { pagers_unguarded: true, ..gate() });
            assert!(v.parts.iter().all(|p| p.assessment.rule != "no-box"), "{text}: {v:?}");
        }
    }
}
