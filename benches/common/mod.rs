//! Command texts shared by the benches: the same set `bench/compare.sh` times end to end.
#![allow(dead_code)] // each bench uses a different part of this module

use agentsh::judge::decide::{Entry, Policy};

/// (name, text): a plain command, a typical ~100-character compound, nested shells, a refusal.
pub const COMMANDS: &[(&str, &str)] = &[
    ("simple", "ls -la"),
    (
        "compound_100",
        "cd src && grep -rn TODO . | sort | uniq -c | sort -rn | head -20 && git status --short && ls -la ../target",
    ),
    ("nested", "bash -c 'for f in $(ls *.rs); do wc -l \"$f\"; done' && sudo -u nobody env FOO=1 cat /etc/hosts"),
    ("forbidden", "echo start; rm -rf / --no-preserve-root"),
];

/// A script of `n` bytes or so: `echo word; ` repeated, so the cost per byte can be compared
/// across sizes (linear growth up to `parse::MAX_INPUT_BYTES`).
pub fn long_command(n: usize) -> String {
    let unit = "echo word$i && ls -la dir | grep x; ";
    unit.repeat(n / unit.len())
}

/// A policy with `n` whitelist entries that never match the commands above, so every part is
/// checked against all of them (the worst case for a linear scan).
pub fn big_whitelist(n: usize) -> Policy {
    Policy {
        whitelist: (0..n).filter_map(|i| Entry::new(&format!("tool{i} sub{} --flag", i % 7), "bench")).collect(),
        ..Policy::default()
    }
}
