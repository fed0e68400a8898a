//! Programs that only read or show, but run commands from their options, their input or the
//! keys typed at them (rt7 B7, B8): `less '+!cmd'`, `dc`'s `!`, `more`'s `!`, `top`'s `k`. In the
//! box what they run is contained; with no box it is not, so there they are not "read-only".
//! Pure: whether the command may reach a terminal comes from the gate in the policy, and what
//! each program's keys do is data in `rules` ([`rules::KEYED`]).
//!
//! `less` (and every program that pages through it: `man`, `journalctl`, git, `bat`) is made
//! harmless with no box by the environment agentsh gives an unconfined command
//! (`run::pagers`: `LESSSECURE=1`), so on a terminal it asks only where the text may take that
//! environment away ([`strips_environment`]).

use crate::judge::assess::{Args, basename};
use crate::judge::rules;

/// `less +cmd` (or `++cmd`, for every file): the keys of `cmd` are run as typed, `!` and `|`
/// run shell commands, `s` and `o` write files. Harmless only as a line number, a jump to the
/// end or the start, following (`+F`), or a search whose pattern holds no control character
/// (which could end it and start another command). A control character in any argument is
/// read the same way (`-p` is `+/`), and so is a word the shell may turn into a `+` command
/// (`$P`, `` `cmd` ``, a pattern that matches a file named `+!cmd`).
pub fn less_runs_commands(a: &Args) -> bool {
    let expanded = |w: &str| w.contains(['$', '`', '*', '?', '[']);
    let option = |w: &&str| match w.strip_prefix('+') {
        Some(cmd) => !harmless_initial_command(cmd.trim_start_matches('+')),
        None => expanded(w),
    };
    a.all.iter().take_while(|w| **w != "--").any(option) || a.all.iter().any(|w| w.chars().any(char::is_control))
}

fn harmless_initial_command(cmd: &str) -> bool {
    match cmd.chars().next() {
        None => true,
        Some('/' | '?') => !cmd.chars().any(char::is_control),
        _ => {
            let digits = cmd.trim_end_matches(['g', 'G', 'p', 'P', '%']);
            matches!(cmd, "g" | "G" | "F") || (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
        }
    }
}

/// Whether `dc`, given `a`, may run a shell command: its `!` runs the rest of the line with
/// `sh`, and `?` runs a line of its input as its program. Only a program given whole in the
/// text (`-e`, `--expression`) with neither is known not to; one read from its input (no `-e`,
/// or `-` or a file named, `-f`) is not seen, and an option agentsh does not know may be either.
pub fn dc_runs_commands(a: &Args) -> bool {
    if crate::judge::assess::only_help_or_version(a) {
        return false;
    }
    let mut programs = Vec::new();
    let mut words = a.all.iter();
    while let Some(w) = words.next() {
        match *w {
            "-e" | "--expression" => match words.next() {
                Some(program) => programs.push(*program),
                None => return true,
            },
            w if w.starts_with("--expression=") => programs.push(&w["--expression=".len()..]),
            w if w.starts_with("-e") => programs.push(&w[2..]),
            _ => return true,
        }
    }
    programs.is_empty() || programs.iter().any(|p| p.contains(['!', '?']))
}

/// With no box, and a terminal the command may read keys from (`on_terminal`): why the
/// command `argv` (`inner` its unwrapped command) needs a person, or `None`. A program whose
/// keys run commands, signal the person's processes or write files ([`rules::KEYED`]), unless
/// its arguments make it take no keys; a command that may take away the environment that
/// keeps pagers from running commands ([`strips_environment`]); and where that environment is
/// not given (`pagers_unguarded`: the line gate of a shell that does not keep it, rt8 C4), a
/// program that pages ([`rules::PAGING`]). `unbuffer` gives the command a terminal of its own,
/// whose keys come from the command's input.
pub fn keyed(argv: &[String], inner: &[String], on_terminal: bool, pagers_unguarded: bool) -> Option<(String, String)> {
    let wrappers = wrappers_of(argv, inner);
    let on_terminal = on_terminal || wrappers.iter().any(|w| basename(w) == "unbuffer");
    if !on_terminal {
        return None;
    }
    if let Some(word) = strips_environment(argv, inner) {
        let why = format!(
            "takes away part of its environment (`{word}`) on a terminal: agentsh sets LESSSECURE=1 and a pager \
             that runs no command for a command with no sandbox, so that the keys typed at less, man or git's \
             pager run no command"
        );
        return Some((word, why));
    }
    let name = basename(inner.first()?);
    let args = &inner[1..];
    let only_help = !args.is_empty() && args.iter().all(|a| matches!(a.as_str(), "--help" | "-h" | "--version" | "-V"));
    let no_keys = |quiet: &[&str]| only_help || args.iter().take_while(|a| *a != "--").any(|a| has_flag(a, quiet));
    if let Some((_, what, quiet)) = rules::KEYED.iter().find(|(names, ..)| names.contains(&name)) {
        return (!no_keys(quiet))
            .then(|| (name.to_string(), format!("{name} takes keys from the terminal, and {what}")));
    }
    let (_, quiet) = rules::PAGING.iter().find(|(names, _)| names.contains(&name)).filter(|_| pagers_unguarded)?;
    let why = format!(
        "{name} pages through less on the terminal, whose `!` runs a shell command: this shell runs the line \
         itself, and its environment does not keep less in its secure mode (LESSSECURE=1)"
    );
    (!no_keys(quiet)).then(|| (name.to_string(), why))
}

/// The words before the unwrapped command: its wrappers (`env -i`, `exec -c`, `nice`).
fn wrappers_of<'a>(argv: &'a [String], inner: &[String]) -> &'a [String] {
    match argv.ends_with(inner) {
        true => &argv[..argv.len() - inner.len()],
        false => argv,
    }
}

/// The word by which `argv` may take away a variable of the environment agentsh gives an
/// unconfined command (`LESSSECURE`): `unset`, `env` with an option (`-i`, `-u`, `-`, `-S`),
/// `exec -c`, `export -n`, `declare +x` or a name reference (`declare -n`, through which an
/// `unset` or an assignment reaches another variable). Setting `LESSSECURE` in any other way is
/// judged with the variables that make programs run code (`rules::code_env`).
pub fn strips_environment(argv: &[String], inner: &[String]) -> Option<String> {
    let commands = wrappers_of(argv, inner).len() + usize::from(!inner.is_empty());
    for (at, w) in argv.iter().enumerate().take(commands) {
        let rest = &argv[at + 1..];
        let mut options = rest.iter().map(String::as_str).take_while(|a| a.starts_with(['-', '+']));
        let stripped = match basename(w) {
            "unset" => true,
            "env" => rest.iter().take_while(|a| a.starts_with('-') || a.contains('=')).any(|a| a.starts_with('-')),
            "exec" => options.any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains('c')),
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                options.any(|o| o.starts_with('+') || (!o.starts_with("--") && o.contains('n')))
            }
            _ => false,
        };
        if stripped {
            return Some(w.clone());
        }
    }
    None
}

/// `-b` in `-b`, `-bn1` or `--batch`: one of `flags`, or a short one in a cluster before a
/// letter that takes a value.
fn has_flag(arg: &str, flags: &[&str]) -> bool {
    flags.iter().any(|f| {
        arg == *f
            || (f.starts_with("--") && arg.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
            || (f.len() == 2 && !f.starts_with("--") && arg.starts_with('-') && !arg.starts_with("--") && {
                let letter = f.chars().nth(1).unwrap_or_default();
                arg.chars().skip(1).take_while(|c| c.is_ascii_alphabetic()).any(|c| c == letter)
            })
    })
}

#[cfg(test)]
mod tests {
    use crate::judge::decide::{self, Policy, Sandbox};
    use crate::model::Decision;

    fn off(terminal: bool) -> Policy {
        Policy { sandbox: Sandbox::Off("no box here".into()), terminal, ..Policy::default() }
    }

    fn decision(text: &str, policy: &Policy) -> Decision {
        decide::judge(text, policy).decision
    }

    /// rt7 B7: less's `+` commands are keys: `!` and `|` run shell commands. A line, the end, a
    /// search stay harmless.
    #[test]
    fn less_initial_commands_that_run_programs_ask_with_no_box() {
        let p = off(false);
        for text in [
            "less '+!touch x' f",
            "less ++!id f",
            "less '+|id' f",
            "less +Gv f",
            "less '+s out' f",
            "zless '+!id' f.gz",
            "less $'+/x\\n!id' f",
            "less -p $'x\\n!id' f",
            "less -N '+!id' -- f",
        ] {
            assert_eq!(decision(text, &p), Decision::Ask, "{text}");
        }
        for text in ["less +G f", "less +100 f", "less +F f", "less '+/fn main' f", "less ++g f", "less -- +!x"] {
            assert_eq!(decision(text, &p), Decision::Allow, "{text}");
        }
    }

    /// rt7 B8: dc's `!` runs a shell command, `?` a line of its input; a program it reads from
    /// its input or a file is unseen.
    #[test]
    fn dc_asks_with_no_box_unless_its_whole_program_is_seen() {
        let p = off(false);
        for text in [
            "echo '!touch x' | dc",
            "printf '!id\\n' | dc",
            "dc",
            "dc prog.dc",
            "dc -f prog.dc",
            "dc -e '[!touch x]x'",
            "dc -e '1 !id'",
            "dc --expression='?'",
            "dc -e '2p' -",
            "dc -e",
            "dc -x",
        ] {
            assert_eq!(decision(text, &p), Decision::Ask, "{text}");
        }
        for text in ["dc -e '2 3 + p'", "dc --expression='2 k 1 3 / p'", "dc -e2p", "dc --version"] {
            assert_eq!(decision(text, &p), Decision::Allow, "{text}");
        }
    }

    /// rt7 B7: with no box and a terminal, keys run commands (`more`'s `!`), signal the
    /// person's processes (`top`'s `k`) or open a shell (`ncdu`'s `b`); without a terminal, or
    /// in a form that takes no keys, they run unasked.
    #[test]
    fn keyed_programs_ask_on_a_terminal_with_no_box() {
        let (tty, pipe) = (off(true), off(false));
        for text in ["more f", "top", "top -d 1", "htop", "ncdu /tmp", "info ls", "ls | more", "unbuffer more f"] {
            assert_eq!(decision(text, &tty), Decision::Ask, "{text}");
        }
        assert_eq!(decision("unbuffer more f", &pipe), Decision::Ask, "a terminal of its own");
        for text in ["more f", "top", "htop", "ncdu /tmp", "info ls"] {
            assert_eq!(decision(text, &pipe), Decision::Allow, "{text}");
        }
        for text in ["top -b -n 1", "top -bn1", "top --batch", "more --help", "info --version"] {
            assert_eq!(decision(text, &tty), Decision::Allow, "{text}");
        }
        // less, man and what pages through less are made harmless by the environment.
        for text in ["less f", "man ls", "journalctl -u x", "cat f | less"] {
            assert_eq!(decision(text, &tty), Decision::Allow, "{text}");
        }
    }

    /// rt7 B7: the environment that makes less harmless, taken away on a terminal.
    #[test]
    fn taking_away_the_environment_asks_on_a_terminal_with_no_box() {
        let (tty, pipe) = (off(true), off(false));
        for text in [
            "env -i less f",
            "env -u LESSSECURE man ls",
            "env - less f",
            "nice env -i less f",
            "unset LESSSECURE; less f",
            "exec -c less f",
            "export -n LESSSECURE; less f",
            "declare +x LESSSECURE; less f",
            "declare -n r=LESSSECURE; unset r; less f",
            "LESSSECURE=0 less f",
            "LESSSECURE_ALLOW=shell less f",
            "LESS='+!id' less f",
            "export LESSSECURE=; man ls",
        ] {
            assert_eq!(decision(text, &tty), Decision::Ask, "{text}");
        }
        for text in ["env FOO=1 less f", "export FOO=1; less f", "LESS=-R less f", "LESSSECURE=1 less f"] {
            assert_eq!(decision(text, &tty), Decision::Allow, "{text}");
        }
        assert_eq!(decision("env -i less f", &pipe), Decision::Allow, "no keys, and no option runs a command");
    }
}
