//! `agentsh log`: the audit trail as a table or JSON lines, filtered; `--verify` checks its hash
//! chain. It only reads the log (see `audit`); everything shown is sanitized again, since a
//! damaged or hand-edited file can hold anything.

use crate::cli::{DecisionFilter, LogArgs};
use crate::record::audit::{self, Entry, Verified};
use crate::record::clock::Since;
use crate::text::sanitize::{clip, sanitize};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Which decisions to show. Pure: [`Filter::keeps`] looks only at the entry.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Milliseconds since the epoch.
    pub since: Option<i64>,
    pub decision: Option<DecisionFilter>,
    pub cwd: Option<PathBuf>,
    /// Lowercased.
    pub grep: Option<String>,
}

impl Filter {
    pub fn keeps(&self, e: &Entry) -> bool {
        let d = &e.decision;
        self.since.is_none_or(|t| e.at >= t)
            && self.decision.is_none_or(|f| {
                d.decision
                    == match f {
                        DecisionFilter::Allow => "allow",
                        DecisionFilter::Ask => "ask",
                        DecisionFilter::Deny => "deny",
                    }
            })
            && self.cwd.as_ref().is_none_or(|dir| Path::new(&d.cwd).starts_with(dir))
            && self.grep.as_ref().is_none_or(|g| d.command.to_lowercase().contains(g))
    }
}

/// `--since` as a cutoff, now.
pub fn cutoff(since: Option<Since>) -> Option<i64> {
    since.map(|s| s.cutoff(crate::record::clock::now_ms()))
}

/// The log file, or an error a person can act on.
pub fn path() -> Result<PathBuf> {
    audit::log_path().context("cannot find the audit log: no home directory (set HOME)")
}

/// Reads every decision, warning about lines that could not be read.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let (entries, unreadable) =
        audit::read(path).with_context(|| format!("cannot read the audit log {}", path.display()))?;
    if unreadable > 0 {
        eprintln!(
            "agentsh: warning: {unreadable} line(s) of the audit log could not be read; run `agentsh log --verify`"
        );
    }
    Ok(entries)
}

pub fn run(args: LogArgs) -> Result<i32> {
    // A request whose agentsh was killed is recorded as abandoned when someone looks.
    if let Ok(dir) = crate::ask::queue::dir() {
        crate::ask::queue::reap_stale(&dir);
    }
    let path = path()?;
    if args.verify {
        return verify(&path);
    }
    let cwd = match &args.cwd {
        Some(dir) => {
            let abs = std::path::absolute(dir).with_context(|| format!("--cwd {}", dir.display()))?;
            Some(abs.canonicalize().unwrap_or(abs))
        }
        None => None,
    };
    let filter = Filter {
        since: cutoff(args.since),
        decision: args.decision,
        cwd,
        grep: args.grep.as_deref().map(str::to_lowercase),
    };
    let entries = read(&path)?;
    if entries.is_empty() {
        eprintln!("agentsh: no decisions recorded yet in {}", sanitize(&path.display().to_string()));
        return Ok(0);
    }
    let matching: Vec<&Entry> = entries.iter().filter(|e| filter.keeps(e)).collect();
    if matching.is_empty() {
        eprintln!("agentsh: no decisions match (of {} recorded)", entries.len());
        return Ok(0);
    }
    let shown = if args.lines == 0 { &matching[..] } else { &matching[matching.len().saturating_sub(args.lines)..] };
    if args.json {
        let mut out = String::new();
        for e in shown {
            let _ = writeln!(out, "{}", e.decision.raw);
            if let Some(x) = &e.exit {
                let _ = writeln!(out, "{}", x.raw);
            }
        }
        print!("{out}");
    } else {
        let color =
            nix::unistd::isatty(std::io::stdout()).unwrap_or(false) && crate::ask::prompt::Style::from_env().color;
        let home = std::env::var("HOME").ok().filter(|h| h.len() > 1);
        print!("{}", table(shown, color, home.as_deref()));
    }
    if shown.len() < matching.len() {
        eprintln!("agentsh: showing the last {} of {} matching decisions; -n 0 shows all", shown.len(), matching.len());
    }
    Ok(0)
}

fn verify(path: &Path) -> Result<i32> {
    let shown = sanitize(&path.display().to_string());
    match audit::verify(path).with_context(|| format!("cannot read the audit log {shown}"))? {
        Verified::Intact { lines: 0, .. } => {
            println!("nothing to verify: no audit records in {shown}");
            Ok(0)
        }
        Verified::Intact { lines, files, rotated_away } => {
            println!(
                "ok: {} in {}, every hash and link intact ({shown})",
                crate::text::count(lines, "record", "records"),
                crate::text::count(files, "file", "files")
            );
            if rotated_away {
                println!("note: the oldest record follows records that rotation has removed (auditKeep)");
            }
            Ok(0)
        }
        Verified::Broken { file, line, why } => {
            eprintln!("agentsh: audit log broken at {}:{line}: {why}", sanitize(&file.display().to_string()));
            eprintln!("hint: the records before that line are intact; the file has been edited outside agentsh");
            Ok(1)
        }
    }
}

const COMMAND_WIDTH: usize = 90;
const CWD_WIDTH: usize = 24;

/// The readable table: one row per decision. `home` is shortened to `~` in the cwd column.
pub fn table(entries: &[&Entry], color: bool, home: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<19}  {:<34}  {:<9}  {:>4}  {:<CWD_WIDTH$}  COMMAND",
        "TIME (UTC)", "OUTCOME", "RISK", "EXIT", "CWD"
    );
    for e in entries {
        let d = &e.decision;
        let time = d.time.get(..19).unwrap_or(&d.time).replace('T', " ");
        let outcome = clip(&outcome_text(e), 34);
        let outcome_color = match d.outcome.as_str() {
            "allowed" | "approved_once" | "approved_always" => "32",
            "denied" => "31",
            _ => "33",
        };
        let risk_color = match d.risk.as_str() {
            "high" | "forbidden" => "31",
            "moderate" => "33",
            _ => "",
        };
        let exit = match &e.exit {
            Some(x) if x.timed_out => "time".to_string(),
            Some(x) => x.exit_status.map(|s| s.to_string()).unwrap_or_default(),
            None => "-".to_string(),
        };
        let cwd = match home {
            Some(h) if d.cwd == h => "~".to_string(),
            Some(h) if d.cwd.starts_with(&format!("{h}/")) => format!("~{}", &d.cwd[h.len()..]),
            _ => d.cwd.clone(),
        };
        let _ = writeln!(
            out,
            "{:<19}  {}  {}  {exit:>4}  {:<CWD_WIDTH$}  {}",
            sanitize(&time),
            paint(&format!("{outcome:<34}"), outcome_color, color),
            paint(&format!("{:<9}", clip(&d.risk, 9)), risk_color, color),
            clip_left(&cwd, CWD_WIDTH),
            clip(&d.command, COMMAND_WIDTH),
        );
    }
    out
}

/// "approved once (3.1s)", "denied: blacklist rm", "allowed: whitelist npm test".
fn outcome_text(e: &Entry) -> String {
    let d = &e.decision;
    let secs = d.answer_ms.map(|ms| format!(" ({:.1}s)", ms as f64 / 1000.0)).unwrap_or_default();
    match d.outcome.as_str() {
        "allowed" if d.decided_by.by == "whitelist" => format!("allowed: {}", d.decided_by.detail),
        "allowed" => "allowed".to_string(),
        "approved_once" => format!("approved once{secs}"),
        "approved_always" => format!("approved always{secs}"),
        "rejected" => format!("rejected{secs}"),
        "timed_out" => "timed out".to_string(),
        "no_terminal" => "no one to ask".to_string(),
        "denied" if d.decided_by.by == "blacklist" => format!("denied: blacklist {}", d.decided_by.detail),
        "denied" => "denied: forbidden".to_string(),
        // "told Claude Code (Bash): allow": which agent, which tool, what it was told.
        "hook" => match d.decided_by.detail.strip_prefix("told ") {
            Some(rest) => format!("hook: {}", rest.replacen("): ", ") ", 1)),
            None => "hook".to_string(),
        },
        "wrong_code" => "wrong approval code".to_string(),
        other => other.replace('_', " "),
    }
}

/// As [`clip`], keeping the end (the interesting part of a path).
fn clip_left(text: &str, width: usize) -> String {
    let clean = sanitize(text);
    let n = clean.chars().count();
    if n <= width {
        return clean;
    }
    let tail: String = clean.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

fn paint(text: &str, code: &str, on: bool) -> String {
    if on && !code.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::audit::Seen;

    fn entry(decision: &str, outcome: &str, cwd: &str, command: &str, at: i64) -> Entry {
        Entry {
            decision: Seen {
                time: crate::record::clock::format_rfc3339(at),
                decision: decision.into(),
                outcome: outcome.into(),
                cwd: cwd.into(),
                command: command.into(),
                risk: "safe".into(),
                ..Seen::default()
            },
            exit: None,
            at,
        }
    }

    #[test]
    fn filters_combine() {
        let entries = [
            entry("allow", "allowed", "/work/a", "ls -la", 1000),
            entry("ask", "rejected", "/work/a/sub", "git push --force", 2000),
            entry("deny", "denied", "/work/ab", "rm -rf /", 3000),
        ];
        let kept = |f: &Filter| entries.iter().filter(|e| f.keeps(e)).map(|e| e.at).collect::<Vec<_>>();
        assert_eq!(kept(&Filter::default()), [1000, 2000, 3000]);
        assert_eq!(kept(&Filter { since: Some(2000), ..Filter::default() }), [2000, 3000]);
        assert_eq!(kept(&Filter { decision: Some(DecisionFilter::Ask), ..Filter::default() }), [2000]);
        // Whole path components: /work/ab is not below /work/a.
        assert_eq!(kept(&Filter { cwd: Some("/work/a".into()), ..Filter::default() }), [1000, 2000]);
        assert_eq!(kept(&Filter { grep: Some("push".into()), ..Filter::default() }), [2000]);
        let f = Filter { since: Some(1500), cwd: Some("/work".into()), grep: Some("rm".into()), ..Filter::default() };
        assert_eq!(kept(&f), [3000]);
    }

    #[test]
    fn table_reads_well_and_escapes() {
        let mut e = entry("ask", "approved_once", "/home/u/proj", "chmod 644 f\x1b[2J", 1_717_234_205_000);
        e.decision.answer_ms = Some(3150);
        e.decision.risk = "moderate".into();
        let t = table(&[&e], false, Some("/home/u"));
        let row = t.lines().nth(1).unwrap();
        assert!(row.starts_with("2024-06-01 09:30:05  approved once (3.1s)"), "{t}");
        assert!(row.contains("~/proj"), "{t}");
        assert!(row.ends_with("chmod 644 f\\x1b[2J"), "{t}");
        assert!(!t.contains('\x1b'));
        assert!(table(&[&e], true, None).contains("\x1b[32m"));
        let long = entry("allow", "allowed", "/", &"x".repeat(500), 0);
        assert!(table(&[&long], false, None).lines().nth(1).unwrap().ends_with('…'));
    }
}
