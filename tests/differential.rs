//! Differential property test (issue 16 §1): what agentsh lists as the simple commands of a
//! text against what bash actually runs when it is given the same text. Every command bash
//! runs must be one agentsh judged. bash is asked through functions and
//! `command_not_found_handle` defined before the text, which write each command's argv to a
//! file: a word that agentsh read as data but bash runs as a command name shows up there.
//!
//! Each case runs twice: under bash as agentsh runs it, and under bash in POSIX mode, which
//! reads as dash (`sh -c`) does where the two differ and which `set -o posix` or
//! `POSIXLY_CORRECT` in the environment turn on (issue 28).
//!
//! By default 300 cases from a fixed seed, the same in every run, so CI never fails by chance;
//! `AGENTSH_DIFFERENTIAL_CASES=N` runs N cases from a random seed, to look for more. The one
//! divergence random runs found (`p "$(( q <<EOF …EOF p '$(z)' ))"`: bash reads `$((` as a
//! command substitution of a subshell and runs `z`, which agentsh read as quoted text) is now
//! refused as unjudgeable, and is among the known cases below.
//!
//! Issue 28's constructs each have a generator of their own, so random runs keep looking for
//! the next spelling: quotes inside a double-quoted `${x op ..}` (every operator), a
//! here-document inside `$( )` or `<( )` whose terminator line goes on, and arithmetic operands
//! of `[[ ]]` (and `(( ))`, `let`, `declare -i`) whose array subscript holds a substitution.

use agentsh::judge::assess::assess;
use agentsh::judge::parse::{Script, parse};
use agentsh::run::exec::SHELL;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::process::Command;

/// Words whose value agentsh and bash must agree on; several are read differently by dash
/// (`"${x:-'}"`) or look like syntax when misquoted.
const WORDS: &[&str] = &[
    "a",
    "'b c'",
    "\"d e\"",
    "f\\ g",
    "$'\\x41'",
    "\"${x:-'}\"",
    "\"'\"",
    "'\"'",
    "\\;",
    "'#'",
    "x#y",
    "'$(z)'",
    "\"\\$(z)\"",
    "\\`z\\`",
    "--",
    "-rf",
    "'a;b'",
    "\"a&&b\"",
    "\"$(p s)\"",
    "\"`q t`\"",
];

const NAMES: &[&str] = &["p", "q", "r", "unknown_cmd"];

fn simple() -> impl Strategy<Value = String> {
    (prop::sample::select(NAMES), prop::collection::vec(prop::sample::select(WORDS), 0..4))
        .prop_map(|(n, ws)| std::iter::once(n).chain(ws).collect::<Vec<_>>().join(" "))
}

/// The operators of `${x op word}`: those whose quoting bash and dash read differently inside
/// double quotes, and the pattern operators, which they read alike.
const PARAM_OPS: &[&str] = &["-", ":-", "=", ":=", "+", ":+", "?", ":?", "#", "##", "%", "%%", "/", "//"];

/// What may follow a here-document's terminator on its line inside `$( )`.
const AFTER_TERMINATOR: &[&str] = &[")", " )", ");", ") ", "X)", " # )", " ')'", "", ";)", ")\n("];

/// How an arithmetic operand with an array subscript can be quoted.
const OPERANDS: &[&str] = &["'a[$(r sub)]'", "\"a[\\$(r sub)]\"", "$'a[$(r sub)]'", "a[\\$(r sub)]", "'a[`r sub`]'"];

const ARITH_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Issue 28's constructs, around `inner`.
fn dialect(inner: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        // A quote inside a double-quoted `${x op ..}`; `x` set or not.
        (prop::sample::select(PARAM_OPS), prop::bool::ANY, inner.clone()).prop_map(|(op, set, a)| {
            let x = if set { "x=1; " } else { "" };
            format!("{x}p \"${{x{op}'}}\"; {a}; p \"'}}\"")
        }),
        (prop::sample::select(PARAM_OPS), inner.clone())
            .prop_map(|(op, a)| format!("p \"${{x:-${{y{op}'}}}}\"; {a}; p \"'}}}}\"")),
        // A here-document inside `$( )` or `<( )` whose terminator line goes on.
        (prop::sample::select(AFTER_TERMINATOR), prop::bool::ANY, inner.clone()).prop_map(|(after, procsub, a)| {
            let (open, close) = if procsub { ("p <(", ")") } else { ("x=$(", ")") };
            format!("{open}q <<EOF\nbody\nEOF{after}\n{a}\nEOF\n{close}")
        }),
        // Arithmetic on a quoted operand whose subscript runs a command.
        (prop::sample::select(ARITH_TESTS), prop::sample::select(OPERANDS), prop::bool::ANY, inner.clone()).prop_map(
            |(op, operand, left, a)| {
                if left { format!("[[ {operand} {op} 1 ]]; {a}") } else { format!("[[ 1 {op} {operand} ]] && {a}") }
            }
        ),
        (prop::sample::select(OPERANDS), prop::sample::select(&["(( {} ))", "let x={}", "declare -i x={}"][..]), inner)
            .prop_map(|(operand, form, a)| format!("{}; {a}", form.replace("{}", operand))),
    ]
}

fn script() -> impl Strategy<Value = String> {
    simple().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            dialect(inner.clone().boxed()),
            (inner.clone(), prop::sample::select(&[" ; ", " && ", " || ", " | ", "\n"][..]), inner.clone())
                .prop_map(|(a, op, b)| format!("{a}{op}{b}")),
            inner.clone().prop_map(|a| format!("( {a} )")),
            inner.clone().prop_map(|a| format!("{{ {a}; }}")),
            inner.clone().prop_map(|a| format!("p \"$({a})\"")),
            inner.clone().prop_map(|a| format!("if p; then {a}; fi")),
            inner.clone().prop_map(|a| format!("for i in 1 2; do {a}; done")),
            inner.clone().prop_map(|a| format!("case x in x) {a} ;; esac")),
            inner.clone().prop_map(|a| format!("{a} # q hidden")),
            inner.clone().prop_map(|a| format!("q <<'EOF'\n$(r body) {a}\nEOF\n")),
            inner.clone().prop_map(|a| format!("q <<EOF\n$(r body)\nEOF\n{a}")),
            inner.clone().prop_map(|a| format!("p \"$(q <<EOF\nbody\nEOF\n)\"; {a}")),
            inner.prop_map(|a| format!("echo \"${{x:-'}}\"; {a}; echo \"'}}\"")),
        ]
    })
}

/// The argv of every command bash ran, in order, in bash's own mode or in POSIX mode.
fn bash_runs(text: &str, posix: bool) -> Vec<Vec<String>> {
    // A directory of its own, removed when this returns (one per process was left behind in
    // the temporary directory by every run).
    let scratch = tempfile::Builder::new().prefix("agentsh-diff-").tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let out = dir.join("trace");
    // One write per command: commands of a pipeline run at once, and two writes each
    // interleaved into one record (`( p ) | q` read back as one command `p q`).
    let preamble = r#"exec 3>>"$TRACE"
_rec() { local s; printf -v s '%s\037' "$@"; printf '%s\036' "$s" >&3; }
p() { _rec p "$@"; }
q() { _rec q "$@"; }
r() { _rec r "$@"; }
command_not_found_handle() { _rec "$@"; }
"#;
    // The shell agentsh runs judged text with, so this test fails if that ever changes.
    let mut bash = Command::new(SHELL);
    if posix {
        bash.arg("--posix");
    }
    let status = bash
        .arg("-c")
        .arg(format!("{preamble}{text}"))
        .env("TRACE", &out)
        .env_remove("BASH_ENV")
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let _ = status;
    let trace = std::fs::read_to_string(&out).unwrap_or_default();
    trace
        .split('\u{1e}')
        .filter(|c| !c.is_empty())
        .map(|c| c.split('\u{1f}').map(str::to_string).collect::<Vec<_>>())
        .map(|mut v| {
            v.pop(); // the empty field after the last separator
            v
        })
        .collect()
}

/// Whether agentsh judged a command that matches what bash ran: same name, same number of
/// words, and the same value for every word whose value agentsh knows.
fn judged(script: &Script, ran: &[String]) -> bool {
    script.commands.iter().any(|c| {
        // A word only known when it runs (`$(r body) p a`) may expand to no word or many, so a
        // command with one is judged as whatever bash makes of it, with its literal words in
        // order (agentsh asks about a command whose name is only known at run time).
        if c.words.iter().any(|w| w.lit.is_none()) {
            let mut rest = ran.iter();
            return c.words.iter().filter_map(|w| w.lit.as_deref()).all(|l| rest.any(|r| r == l));
        }
        c.words.len() == ran.len()
            && c.words.iter().zip(ran).all(|(w, r)| match &w.lit {
                Some(v) => v == r,
                None => true,
            })
            && c.words.first().and_then(|w| w.lit.as_deref()) == ran.first().map(String::as_str)
    })
}

fn check(text: &str) -> Result<(), TestCaseError> {
    // Text agentsh cannot parse is never run (it is refused or asked about as a whole).
    let Ok(script) = parse(text) else { return Ok(()) };
    // Constructs agentsh cannot see into make it ask about the text as a whole.
    if !script.opaque.is_empty() {
        return Ok(());
    }
    // Code bash evaluates later (`let x='a[$(cmd)]'`, `declare -i`) is found by the judging
    // after parsing: each command it parsed out of such text is judged as its own part.
    let later: Vec<Vec<String>> = assess(&script).into_iter().map(|a| a.argv).collect();
    for posix in [false, true] {
        for ran in bash_runs(text, posix) {
            let mode = if posix { "bash --posix" } else { "bash" };
            prop_assert!(
                judged(&script, &ran) || later.contains(&ran),
                "{mode} ran {ran:?}, which agentsh did not judge, in {text:?}\n{script:#?}"
            );
        }
    }
    Ok(())
}

#[test]
fn every_command_bash_runs_is_one_agentsh_judged() {
    if !std::path::Path::new(SHELL).exists() {
        return;
    }
    let asked: Option<u32> = std::env::var("AGENTSH_DIFFERENTIAL_CASES").ok().and_then(|v| v.parse().ok());
    let config = Config { cases: asked.unwrap_or(300), failure_persistence: None, ..Config::default() };
    let mut runner = match asked {
        Some(_) => TestRunner::new(config),
        None => TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha)),
    };
    runner.run(&script(), |t| check(&t)).unwrap();
}

/// Known disagreements between the grammars, each a case found by a red team.
#[test]
fn the_known_dialect_cases_agree_with_bash() {
    for text in [
        // One `echo` to bash; to dash an `rm -rf ~` between two echos.
        "echo \"${x:-'}\"; p -rf x; echo \"'}\"",
        // bash ends this here-document at `EOF)` inside `$(..)`.
        "p \"$(q <<EOF\nbody\nEOF\n)\"; r after",
        "p $(q <<EOF\nEOF)\nr after",
        // bash reads `$((` with a here-document in it as `$( (`, and runs `z`.
        "p \"$(( q <<EOF\nx\nEOF\np '$(z)' ))\"",
        // Single quotes quote nothing inside arithmetic: bash runs `z`.
        "{ p \"$(( p '$(z)' ))\"; }",
        "p $(( '$(z)' + 1 ))",
        // Issue 28. POSIX mode (and dash) runs `r` between the two.
        "echo \"${x:-'}\"; r -rf x; echo \"'}\"",
        "set -o posix\necho \"${x+'}\"; r -rf x; echo \"'}\"",
        // bash ends the here-document at `EOF)` and runs `r` and `EOF`.
        "x=$(cat <<EOF\nhi\nEOF)\nr -rf x\nEOF\n)",
        "x=$(q <<EOF\nEOF)\n(r -rf x\nEOF\n)",
        "p <(q <<EOF\nbody\nEOF x)\nr after\nEOF\n)",
        // bash evaluates the operand as arithmetic, and the subscript's substitution runs.
        "[[ 1 -lt 'a[$(r x)]' ]]",
        "[[ $'a[$(r x)]' -eq 1 ]]",
    ] {
        check(text).unwrap();
    }
}
