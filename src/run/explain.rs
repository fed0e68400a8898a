//! Every message a person or agent reads about a decision: what was found, why it matters and
//! what to do. All text passes through `sanitize`. Writes to stderr only; stdout is the command's.

use crate::judge::decide::{DecidedBy, Part, Runs, Verdict};
use crate::model::Decision;
use crate::text::sanitize::sanitize;
use std::fmt::Write;

pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("agentsh: warning: {}", sanitize(w));
    }
}

fn part_line(p: &Part) -> String {
    let text = if p.assessment.argv.is_empty() { "(empty)".to_string() } else { p.assessment.text() };
    let mut line = format!("  {} ({}, {})", sanitize(&text), p.assessment.risk, p.assessment.category);
    if !p.assessment.context.is_empty() {
        let _ = write!(line, " {}", sanitize(&p.assessment.context));
    }
    line
}

fn reasons_of(p: &Part) -> Vec<String> {
    crate::judge::decide::part_reasons(p)
}

/// The explanation of a verdict's blocking parts, one block per part.
pub fn describe_parts(verdict: &Verdict, out: &mut String) {
    for p in verdict.parts.iter().filter(|p| p.decision == verdict.decision) {
        let _ = writeln!(out, "{}", part_line(p));
        for r in reasons_of(p) {
            let _ = writeln!(out, "    - {}", sanitize(&r));
        }
    }
}

pub fn denial_hint(verdict: &Verdict) -> String {
    let blocking: Vec<&Part> = verdict.blocking_parts().collect();
    if blocking.is_empty() {
        // No part of the command was the problem (e.g. the audit log could not be written).
        return "nothing ran. The command itself is not the problem: fix what the reason names, then try again".into();
    }
    if blocking.iter().any(|p| matches!(p.decided_by, DecidedBy::Blacklist(_))) {
        return "nothing ran. The person can remove the entry from commandBlacklist in .agents/terminal.json or ~/.config/agentsh/config.json".into();
    }
    if let Some(DecidedBy::Rule(hit)) = blocking.iter().map(|p| &p.decided_by).find(|d| matches!(d, DecidedBy::Rule(_)))
    {
        return format!("nothing ran. A custom rule the person wrote denies it ({}); do the task another way", hit.at);
    }
    if let Some(DecidedBy::Level(hit)) =
        blocking.iter().map(|p| &p.decided_by).find(|d| matches!(d, DecidedBy::Level(_)))
    {
        return match hit.unblocked_at {
            Some(l) => format!(
                "nothing ran. At level {} this is not allowed; level {l} would allow it, and only the person can change `level` in the config",
                hit.level
            ),
            None => format!("nothing ran. No level allows `{}` commands; do the task another way", hit.row),
        };
    }
    "nothing ran. Forbidden commands cannot be allowed by any setting; do the task another way \
     (for example, delete the specific directory you mean: rm -rf ./build)"
        .into()
}

pub fn print_denial(verdict: &Verdict) {
    let mut msg = format!("agentsh: denied: {}\n", sanitize(&one_line(&verdict.command)));
    describe_parts(verdict, &mut msg);
    let _ = writeln!(msg, "hint: {}", denial_hint(verdict));
    eprint!("{msg}");
}

/// Prints the refusal for an ask that did not end in approval; returns the exit status.
pub fn print_not_approved(verdict: &Verdict, why: &str, hint: Option<&str>) -> i32 {
    let mut msg = String::from("Error: Command was not approved (rejected or timed out).\n");
    let _ = writeln!(msg, "agentsh: not approved: {}: {}", sanitize(why), sanitize(&one_line(&verdict.command)));
    describe_parts(verdict, &mut msg);
    let hint = hint.unwrap_or("nothing ran. Ask the person to approve it, or do the task another way");
    let _ = writeln!(msg, "hint: {hint}");
    eprint!("{msg}");
    crate::model::exit::REFUSED
}

/// The human-readable `agentsh check` output.
pub fn check_report(verdict: &Verdict) -> String {
    let mut out = String::new();
    let what = match verdict.decision {
        Decision::Allow => "allow: runs without asking",
        Decision::Ask => "ask: runs only if a person approves",
        Decision::Deny => "deny: never runs",
    };
    let _ = writeln!(out, "{what}");
    let _ = writeln!(out, "command: {}", sanitize(&one_line(&verdict.command)));
    if let Some(h) = &verdict.harness {
        let _ = writeln!(out, "harness: {}", sanitize(h));
    }
    let _ = writeln!(out, "risk: {} ({})", verdict.risk, verdict.category);
    if verdict.decision != Decision::Deny {
        let _ = writeln!(out, "runs: {}", sanitize(&verdict.runs_in_why));
    }
    for p in &verdict.parts {
        let place = match (p.decision, p.runs) {
            (Decision::Deny, _) | (_, Runs::Unconfined) => "",
            (_, Runs::Sandbox) => ", runs in the sandbox",
            (_, Runs::NeedsPerson) => ", needs a person",
        };
        let _ = writeln!(out, "{} -> {}{place}", part_line(p), p.decision);
        for r in reasons_of(p) {
            let _ = writeln!(out, "    - {}", sanitize(&r));
        }
    }
    if verdict.decision == Decision::Deny {
        let _ = writeln!(out, "hint: {}", denial_hint(verdict));
    }
    out
}

/// Commands can span lines; refusals show them on one.
fn one_line(text: &str) -> String {
    const MAX: usize = 300;
    let flat = text.trim().replace('\n', "\\n");
    if flat.chars().count() > MAX {
        let cut: String = flat.chars().take(MAX).collect();
        format!("{cut}… ({} more characters)", flat.chars().count() - MAX)
    } else {
        flat
    }
}
