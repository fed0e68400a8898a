//! The shell forms agents send on every command (`-c TEXT`, `-lc TEXT`, `-c -l TEXT`, ...),
//! and `agentsh check [--json] [--] TEXT`, parsed without building the clap command, which costs
//! a fifth of a `-c` run's instructions (docs/BENCHMARKS.md). It only recognizes: anything it is not sure of (`-o`, `--help`,
//! `--version`, subcommands, a repeated or unknown flag, non-UTF-8, a text starting with `-`)
//! returns `None` and goes through clap, so help and error messages stay clap's own. A test
//! checks it agrees with clap on every form it accepts.

use crate::cli::{CheckArgs, Command, Invocation, ShellArgs, Source};
use std::ffi::OsString;

/// `Some` only for `agentsh FLAGS... -c TEXT [ARGS...]` with flags from `-c -l -i -e -u -x`
/// (clustered or not), `--login`, `--noprofile`, `--norc` and `--ask`, each given once.
pub fn shell_form(argv: &[OsString]) -> Option<Invocation> {
    let mut options = ShellArgs::default();
    let mut rest = argv.iter().skip(1);
    let text = loop {
        let arg = rest.next()?.to_str()?;
        let flag = match arg {
            "--login" => &mut options.login,
            "--noprofile" => &mut options.noprofile,
            "--norc" => &mut options.norc,
            "--ask" => &mut options.ask,
            _ if arg.starts_with('-') && !arg.starts_with("--") && arg.len() > 1 => {
                for c in arg[1..].chars() {
                    let flag = match c {
                        'c' => &mut options.command_mode,
                        'l' => &mut options.login,
                        'i' => &mut options.interactive,
                        'e' => &mut options.errexit,
                        'u' => &mut options.nounset,
                        'x' => &mut options.xtrace,
                        _ => return None,
                    };
                    set_once(flag)?;
                }
                continue;
            }
            _ if arg.starts_with('-') => return None,
            _ => break arg,
        };
        set_once(flag)?;
    };
    if !options.command_mode {
        return None;
    }
    let mut args = rest.map(|a| a.to_str().map(str::to_string)).collect::<Option<Vec<String>>>()?.into_iter();
    let source = Source::Text { text: text.to_string(), argv0: args.next(), args: args.collect() };
    Some(Invocation::Shell { source, options })
}

/// `Some` only for `agentsh check [--json] [--] TEXT...` (the form hooks and scripts send on
/// every command): without `--`, no TEXT word may start with `-`.
pub fn check_form(argv: &[OsString]) -> Option<Invocation> {
    let mut rest = argv.get(1..)?.iter().map(|a| a.to_str());
    if rest.next()?? != "check" {
        return None;
    }
    let mut words: Vec<&str> = rest.collect::<Option<_>>()?;
    let json = words.first() == Some(&"--json");
    if json {
        words.remove(0);
    }
    let dashes = words.first() == Some(&"--");
    if dashes {
        words.remove(0);
    } else if words.iter().any(|w| w.starts_with('-')) {
        return None;
    }
    if words.is_empty() {
        return None;
    }
    let command = words.into_iter().map(str::to_string).collect();
    let args = CheckArgs { json, cwd: None, stdin: false, ask: false, prompt: false, refuse: false, command };
    Some(Invocation::Manage(Command::Check(args)))
}

/// clap refuses a flag given twice (`-l --login`); leave that to it.
fn set_once(flag: &mut bool) -> Option<()> {
    if *flag {
        return None;
    }
    *flag = true;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_with_clap;

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("agentsh").chain(args.iter().copied()).map(OsString::from).collect()
    }

    #[test]
    fn agrees_with_clap_on_every_form_it_takes() {
        let forms: &[&[&str]] = &[
            &["-c", "ls"],
            &["-lc", "ls -la"],
            &["-cl", "ls"],
            &["-c", "-l", "ls"],
            &["-l", "-c", "ls"],
            &["--login", "-c", "ls"],
            &["-i", "-c", "ls"],
            &["-e", "-u", "-x", "-c", "ls"],
            &["-euxc", "ls"],
            &["--noprofile", "--norc", "-c", "ls"],
            &["--ask", "-c", "ls"],
            &["-c", "echo $0 $1", "name", "-x", "two"],
            &["-c", "-x", "ls"],
            &["-c", "echo", "--", "a"],
            &["-c", "echo", "name", "--help"],
            &["-c", "check"],
            &["-c", "whitelist", "list"],
            &["-c", ""],
            &["-c", " -x"],
        ];
        for form in forms {
            let fast = shell_form(&argv(form)).unwrap_or_else(|| panic!("{form:?} should take the fast path"));
            assert_eq!(Some(fast), parse_with_clap(argv(form)).ok(), "{form:?}");
        }
    }

    #[test]
    fn leaves_everything_else_to_clap() {
        let forms: &[&[&str]] = &[
            &[],
            &["-c"],
            &["-l"],
            &["--help"],
            &["-c", "--help"],
            &["-h", "-c", "ls"],
            &["--version"],
            &["-V"],
            &["-o", "pipefail", "-c", "ls"],
            &["-c", "-o", "pipefail", "ls"],
            &["-c", "--", "ls"],
            &["-c", "-", "ls"],
            &["-l", "--login", "-c", "ls"],
            &["-cc", "ls"],
            &["-q", "-c", "ls"],
            &["--bogus", "-c", "ls"],
            &["--login=1", "-c", "ls"],
            &["check", "-c", "ls"],
            &["script.sh"],
            &["-l", "script.sh"],
        ];
        for form in forms {
            assert_eq!(shell_form(&argv(form)), None, "{form:?}");
        }
    }

    #[test]
    fn check_agrees_with_clap_on_every_form_it_takes() {
        let forms: &[&[&str]] = &[
            &["check", "ls"],
            &["check", "ls -la"],
            &["check", "--json", "--", "rm -rf /"],
            &["check", "--json", "ls"],
            &["check", "--", "-x"],
            &["check", "--", "ls", "-la", "--json", "--"],
            &["check", "--json", "--", "--json"],
            &["check", "git", "status"],
            &["check", "--", ""],
            &["check", ""],
        ];
        for form in forms {
            let fast = check_form(&argv(form)).unwrap_or_else(|| panic!("{form:?} should take the fast path"));
            assert_eq!(Some(fast), parse_with_clap(argv(form)).ok(), "{form:?}");
        }
        let declined: &[&[&str]] = &[
            &["check"],
            &["check", "--json"],
            &["check", "--"],
            &["check", "-x"],
            &["check", "ls", "-la"],
            &["check", "--json", "--json", "ls"],
            &["check", "--stdin"],
            &["check", "--cwd", "/tmp", "ls"],
            &["check", "--ask", "ls"],
            &["check", "--prompt", "ls"],
            &["check", "--help"],
            &["check", "-h"],
            &["--json", "check", "ls"],
            &["-c", "check"],
            &["whitelist", "check"],
        ];
        for form in declined {
            assert_eq!(check_form(&argv(form)), None, "{form:?}");
        }
        use std::os::unix::ffi::OsStringExt;
        let bad = vec!["agentsh".into(), "check".into(), OsString::from_vec(vec![b'l', 0xff])];
        assert_eq!(check_form(&bad), None);
    }

    #[test]
    fn non_utf8_goes_to_clap() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![b'l', 0xff]);
        let forms = [
            vec![OsString::from("agentsh"), OsString::from("-c"), bad.clone()],
            vec![OsString::from("agentsh"), OsString::from("-c"), OsString::from("ls"), bad],
        ];
        for form in forms {
            assert_eq!(shell_form(&form), None);
        }
    }
}
