//! Property tests of the judging core (issue 6): quoting never changes a verdict, joining any
//! command with a forbidden one is always a deny, and wrappers never lower a verdict.

use agentsh::judge::decide::{Policy, Verdict, judge};
use agentsh::model::Decision;
use proptest::prelude::*;

/// Commands across every risk level, written with plain words so quoting keeps their meaning.
const COMMANDS: &[&str] = &[
    "ls -la src",
    "cat README.md",
    "grep -r foo .",
    "git status",
    "git log -1",
    "echo hello world",
    "npm test",
    "make build",
    "cargo build --release",
    "touch new.txt",
    "rm old.txt",
    "rm -rf build",
    "chmod 644 file",
    "curl -O https://example.com/x",
    "git push origin main",
    "git push --force origin main",
    "git reset --hard HEAD",
    "apt install nginx",
    "kill -9 1234",
    "python3 -c print",
    "rm -rf /",
    "rm -rf /etc",
    "chmod -R 777 /",
    "dd if=/dev/zero of=/dev/sda",
    "mkfs.ext4 /dev/sda1",
];

const FORBIDDEN: &[&str] = &[
    "rm -rf /",
    "rm -fr ~",
    "rm -r -f /usr",
    "chmod -R 777 /",
    "dd if=/dev/zero of=/dev/sda",
    "mkfs.ext4 /dev/sda1",
    "chown -R nobody /",
];

const WRAPPERS: &[&str] =
    &["sudo", "env", "env FOO=1", "nice", "nice -n 5", "timeout 5", "timeout -s KILL 5", "command", "nohup"];

fn policy() -> Policy {
    Policy::default()
}

/// A harmless-looking command: a known program and random plain arguments.
fn any_command() -> impl Strategy<Value = String> {
    (prop::sample::select(COMMANDS), prop::collection::vec("[a-z0-9][a-z0-9./_-]{0,9}", 0..4))
        .prop_map(|(c, args)| if args.is_empty() { c.to_string() } else { format!("{c} {}", args.join(" ")) })
}

/// The ways a shell removes quoting: r''m, "rm", 'rm', \rm, r""m.
fn quote(word: &str, how: usize, at: usize) -> String {
    let at = at % (word.len() + 1);
    match how % 5 {
        0 => format!("{}''{}", &word[..at], &word[at..]),
        1 => format!("\"{word}\""),
        2 => format!("'{word}'"),
        3 => format!("\\{word}"),
        _ => format!("{}\"\"{}", &word[..at], &word[at..]),
    }
}

fn summary(v: &Verdict) -> (Decision, agentsh::model::Risk) {
    (v.decision, v.risk)
}

proptest! {
    #[test]
    fn quoting_never_changes_a_verdict(
        cmd in prop::sample::select(COMMANDS),
        which in 0usize..8,
        how in 0usize..5,
        at in 0usize..16,
    ) {
        let mut words: Vec<String> = cmd.split(' ').map(str::to_string).collect();
        let i = which % words.len();
        words[i] = quote(&words[i], how, at);
        let quoted = words.join(" ");
        prop_assert_eq!(summary(&judge(cmd, &policy())), summary(&judge(&quoted, &policy())), "{} vs {}", cmd, quoted);
    }

    #[test]
    fn joining_with_a_forbidden_command_is_always_a_deny(
        a in any_command(),
        f in prop::sample::select(FORBIDDEN),
        join in 0usize..10,
    ) {
        let text = match join {
            0 => format!("{a}; {f}"),
            1 => format!("{a} && {f}"),
            2 => format!("{a} || {f}"),
            3 => format!("{a} | {f}"),
            4 => format!("{a} & {f}"),
            5 => format!("{a}\n{f}"),
            6 => format!("{a} $({f})"),
            7 => format!("{a} \"$({f})\""),
            8 => format!("{a}; ({f})"),
            _ => format!("{f}; {a}"),
        };
        let v = judge(&text, &policy());
        prop_assert_eq!(v.decision, Decision::Deny, "{:?}", text);
    }

    #[test]
    fn wrappers_never_lower_a_verdict(c in any_command(), w in prop::sample::select(WRAPPERS)) {
        let bare = judge(&c, &policy());
        let wrapped_text = format!("{w} {c}");
        let wrapped = judge(&wrapped_text, &policy());
        prop_assert!(wrapped.decision >= bare.decision, "{} -> {:?}, {} -> {:?}", c, bare.decision, wrapped_text, wrapped.decision);
        prop_assert!(wrapped.risk >= bare.risk, "{} -> {:?}, {} -> {:?}", c, bare.risk, wrapped_text, wrapped.risk);
    }
}
