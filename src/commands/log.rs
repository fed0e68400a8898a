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
    if args.reseal {
        return reseal(&path);
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
            for c in &e.connections {
                let _ = writeln!(out, "{}", c.raw);
            }
            if let Some(x) = &e.exit {
                let _ = writeln!(out, "{}", x.raw);
            }
        }
        print!("{out}");
    } else {
        let color =
            nix::unistd::isatty(std::io::stdout()).unwrap_or(false) && crate::ask::prompt::Style::from_env().color;
        let home = crate::policy::dirs::home().map(|h| h.display().to_string()).filter(|h| h.len() > 1);
        let width = crate::ask::tty::width_of(std::io::stdout());
        print!("{}", table(shown, &Layout { color, width }, home.as_deref()));
        if shown.iter().any(|e| exit_cell(e) == "?") {
            crate::ask::tty::eprint_fitted(
                "agentsh: exit ?: the command ran, but agentsh handed its process over to it, so no exit status was recorded\n",
            );
        }
    }
    if shown.len() < matching.len() {
        crate::ask::tty::eprint_fitted(&format!(
            "agentsh: showing the last {} of {} matching decisions; -n 0 shows all\n",
            shown.len(),
            matching.len()
        ));
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
                "ok: {} in {}, every hash and link intact, none missing at either end ({shown})",
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
        Verified::Incomplete { why } => {
            eprintln!("agentsh: audit log incomplete ({shown}): {}", sanitize(&why));
            eprintln!(
                "hint: every record left is intact, but records are missing. If you rotated, trimmed or cleared the \
                 log on purpose, run `agentsh log --reseal` to seal it as it is now"
            );
            Ok(1)
        }
    }
}

/// `--reseal`: a person says the log is as it should be (they rotated, trimmed or cleared it),
/// so `--verify` takes its start and end as they are now. It changes the audit trail's evidence,
/// so it asks the person on the terminal first, as `trust` does.
fn reseal(path: &Path) -> Result<i32> {
    let shown = sanitize(&path.display().to_string());
    let now = match audit::verify(path).with_context(|| format!("cannot read the audit log {shown}"))? {
        Verified::Intact { lines, .. } => {
            format!("the log is complete now ({})", crate::text::count(lines, "record", "records"))
        }
        Verified::Broken { file, line, why } => {
            format!("a record is broken at {}:{line} ({why}); resealing does not change that", file.display())
        }
        Verified::Incomplete { why } => format!("now: {why}"),
    };
    let details = vec![
        format!(
            "seals the audit log {shown} as it is now: `agentsh log --verify` will no longer report records cut from its start or end before this"
        ),
        sanitize(&now),
    ];
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    super::confirm::by_person("agentsh log --reseal", details, &cwd)?;
    let seal = audit::reseal(path).with_context(|| format!("cannot seal the audit log {shown}"))?;
    println!("sealed: {shown} now ends with record {}", seal.last.get(..12).unwrap_or(&seal.last));
    verify(path)
}

/// How the table is drawn: colour, and the terminal's width (`None`: a pipe or a file, where
/// nothing is wrapped).
pub struct Layout {
    pub color: bool,
    pub width: Option<usize>,
}

/// Narrower than this, each decision is a block of lines instead of a row of columns.
const TABLE_MIN: usize = 100;
const OUTCOME_MAX: usize = 34;
const CWD_MAX: usize = 24;

/// The readable log (issue 29, item 9): one row per decision, with the command whole (wrapped
/// under its column on a terminal) and a `why:` line under it; on a terminal narrower than
/// [`TABLE_MIN`], a block per decision. Lines break at spaces, never inside a word but a long
/// command's. `home` is shortened to `~` in the cwd.
pub fn table(entries: &[&Entry], layout: &Layout, home: Option<&str>) -> String {
    let rows: Vec<Row> = entries.iter().map(|e| Row::of(e, home)).collect();
    // On a terminal, a word longer than the line (a URL) is broken at the hang too.
    let fit = |line: String, hang: usize| match layout.width {
        Some(w) => crate::text::wrap::wrap_hanging(&line, w, hang).join("\n"),
        None => line,
    };
    let mut out = String::new();
    if layout.width.is_some_and(|w| w < TABLE_MIN) {
        for r in &rows {
            let exit = match r.exit.as_str() {
                "-" => String::new(),
                "time" => "  stopped by commandTimeoutSeconds".to_string(),
                code => format!("  exit {code}"),
            };
            let head = format!(
                "{}  {}  {}{exit}",
                r.time,
                paint(&r.outcome, r.outcome_color, layout.color),
                paint(&r.risk, r.risk_color, layout.color)
            );
            let _ = writeln!(out, "{}", fit(head, 21));
            let _ = writeln!(out, "{}", fit(format!("  {} $ {}", r.cwd, r.command), 4));
            if !r.why.is_empty() {
                let _ = writeln!(out, "{}", fit(format!("  why: {}", r.why), 7));
            }
            if !r.net.is_empty() {
                let _ = writeln!(out, "{}", fit(format!("  net: {}", r.net), 7));
            }
        }
        return out;
    }
    let ow = rows.iter().map(|r| r.outcome.chars().count()).max().unwrap_or(0).clamp(7, OUTCOME_MAX);
    let cw = rows.iter().map(|r| r.cwd.chars().count()).max().unwrap_or(0).clamp(3, CWD_MAX);
    let command_at = 19 + 2 + ow + 2 + 9 + 2 + 4 + 2 + cw + 2;
    let _ = writeln!(
        out,
        "{:<19}  {:<ow$}  {:<9}  {:>4}  {:<cw$}  COMMAND",
        "TIME (UTC)", "OUTCOME", "RISK", "EXIT", "CWD"
    );
    for r in &rows {
        let row = format!(
            "{}  {}  {}  {:>4}  {:<cw$}  {}",
            r.time,
            paint(&format!("{:<ow$}", r.outcome), r.outcome_color, layout.color),
            paint(&format!("{:<9}", r.risk), r.risk_color, layout.color),
            r.exit,
            clip_left(&r.cwd, cw),
            r.command,
        );
        let _ = writeln!(out, "{}", fit(row, command_at));
        if !r.why.is_empty() {
            let _ = writeln!(out, "{}", fit(format!("{:21}why: {}", "", r.why), 26));
        }
        if !r.net.is_empty() {
            let _ = writeln!(out, "{}", fit(format!("{:21}net: {}", "", r.net), 26));
        }
    }
    out
}

/// One decision as the table shows it: every field sanitized.
struct Row {
    time: String,
    outcome: String,
    outcome_color: &'static str,
    risk: String,
    risk_color: &'static str,
    exit: String,
    cwd: String,
    command: String,
    why: String,
    /// The connections the box's proxy made or refused for it.
    net: String,
}

impl Row {
    fn of(e: &Entry, home: Option<&str>) -> Row {
        let d = &e.decision;
        let time = sanitize(&d.time.get(..19).unwrap_or(&d.time).replace('T', " "));
        let cwd = match home {
            Some(h) if d.cwd == h => "~".to_string(),
            Some(h) if d.cwd.starts_with(&format!("{h}/")) => format!("~{}", &d.cwd[h.len()..]),
            _ => d.cwd.clone(),
        };
        Row {
            time,
            outcome: clip(&outcome_text(e), OUTCOME_MAX),
            outcome_color: match d.outcome.as_str() {
                "allowed" | "approved_once" | "approved_always" => "32",
                "denied" => "31",
                _ => "33",
            },
            risk: clip(&d.risk, 9),
            risk_color: match d.risk.as_str() {
                "high" | "forbidden" => "31",
                "moderate" => "33",
                _ => "",
            },
            exit: exit_cell(e),
            cwd: sanitize(&cwd),
            // Whole, on one line: wrapped on a terminal, never cut.
            command: sanitize(&d.command),
            why: why_text(e),
            net: net_text(e),
        }
    }
}

/// The EXIT column for what is recorded: the status from the run's exit line (`time` when
/// `commandTimeoutSeconds` stopped it); `?` for a command that ran without an exit line
/// (agentsh handed its process over to it); `-` for one that did not run.
fn exit_cell(e: &Entry) -> String {
    match &e.exit {
        Some(x) if x.timed_out => "time".to_string(),
        Some(x) => x.exit_status.map(|s| s.to_string()).unwrap_or_else(|| "?".to_string()),
        None if e.decision.ran => "?".to_string(),
        None => "-".to_string(),
    }
}

/// Why it was decided so, in the record's own words: its reasons, the way the person's list,
/// rule or answer came in, without repeating the outcome column.
fn why_text(e: &Entry) -> String {
    let d = &e.decision;
    let mut parts: Vec<String> = Vec::new();
    match d.decided_by.by.as_str() {
        "rule" if !d.decided_by.detail.is_empty() && d.outcome != "allowed" => {}
        "no_terminal" | "interrupted" if !d.decided_by.detail.is_empty() => {
            parts.push(d.decided_by.detail.clone());
        }
        _ => {}
    }
    parts.extend(d.reasons.iter().cloned());
    if let Some(x) = e.exit.as_ref().filter(|x| !x.box_refused.is_empty()) {
        parts.push(format!("the sandbox kept it from {}", x.box_refused.join(", ")));
    }
    sanitize(&parts.join("; "))
}

/// The command's connections: `host:port` with the bytes each way, or refused and why;
/// repeated connections to one host and port are summed.
fn net_text(e: &Entry) -> String {
    let mut seen: Vec<(String, &str, u64, u64, usize, &str)> = Vec::new();
    for c in &e.connections {
        let at = format!("{}:{}", c.host, c.port);
        match seen.iter_mut().find(|s| s.0 == at && s.1 == c.decision) {
            Some(s) => {
                s.2 += c.bytes_out;
                s.3 += c.bytes_in;
                s.4 += 1;
            }
            None => seen.push((at, &c.decision, c.bytes_out, c.bytes_in, 1, &c.why)),
        }
    }
    let parts: Vec<String> = seen
        .iter()
        .map(|(at, decision, out, inn, n, why)| {
            let times = if *n > 1 { format!(" x{n}") } else { String::new() };
            match *decision {
                "allowed" => format!("{at}{times} ({} out, {} in)", bytes(*out), bytes(*inn)),
                "denied" => format!("{at} refused: {why}"),
                other => format!("{at} {other}: {why}"),
            }
        })
        .collect();
    sanitize(&parts.join("; "))
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 10 * 1024 * 1024 => format!("{} MiB", n / (1024 * 1024)),
        n if n >= 10 * 1024 => format!("{} KiB", n / 1024),
        n => format!("{n} B"),
    }
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
            connections: Vec::new(),
            at,
        }
    }

    #[test]
    fn connections_show_under_their_command() {
        let mut e = entry("allow", "allowed", "/w", "cargo fetch", 1000);
        let conn = |host: &str, decision: &str, out: u64, inn: u64, why: &str| Seen {
            event: "connection".into(),
            host: host.into(),
            port: 443,
            decision: decision.into(),
            bytes_out: out,
            bytes_in: inn,
            why: why.into(),
            ..Seen::default()
        };
        e.connections = vec![
            conn("index.crates.io", "allowed", 100, 20 * 1024, ""),
            conn("index.crates.io", "allowed", 50, 1024, ""),
            conn("evil.example", "denied", 0, 0, "it is not on the sandbox's list of hosts"),
        ];
        let text = table(&[&e], &Layout { width: None, color: false }, None);
        assert!(
            text.contains("net: index.crates.io:443 x2 (150 B out, 21 KiB in); evil.example:443 refused: it is not"),
            "{text}"
        );
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
        let pipe = Layout { color: false, width: None };
        let t = table(&[&e], &pipe, Some("/home/u"));
        let row = t.lines().nth(1).unwrap();
        assert!(row.starts_with("2024-06-01 09:30:05  approved once (3.1s)"), "{t}");
        assert!(row.contains("~/proj"), "{t}");
        assert!(row.ends_with("chmod 644 f\\x1b[2J"), "{t}");
        assert!(!t.contains('\x1b'));
        assert!(table(&[&e], &Layout { color: true, width: None }, None).contains("\x1b[32m"));
        // A long command is whole: the log is what a reviewer reads.
        let long = entry("allow", "allowed", "/", &format!("{}END", "x".repeat(500)), 0);
        assert!(table(&[&long], &pipe, None).lines().nth(1).unwrap().ends_with("END"));
    }

    /// Issue 29, item 9: EXIT says what is recorded (a status, `?` for a command that ran with
    /// no exit line, `-` for one that did not run), a why line gives the reasons, and on a
    /// narrow terminal nothing breaks inside a word.
    #[test]
    fn exit_why_and_narrow_terminals() {
        let mut ran = entry("allow", "allowed", "/home/u/proj", "exit 3", 1000);
        ran.decision.ran = true;
        ran.decision.reasons = vec!["runs in the sandbox, which contains what it does".into()];
        let mut recorded = ran.clone();
        recorded.exit = Some(Seen { exit_status: Some(3), ..Seen::default() });
        let mut denied = entry("deny", "denied", "/home/u/proj", "rm -rf /", 2000);
        denied.decision.risk = "forbidden".into();
        denied.decision.reasons =
            vec!["recursively deletes the root directory, the home directory or a system directory".into()];
        assert_eq!([exit_cell(&ran), exit_cell(&recorded), exit_cell(&denied)], ["?", "3", "-"]);
        let all = [&ran, &recorded, &denied];
        let wide = table(&all, &Layout { color: false, width: Some(120) }, Some("/home/u"));
        assert!(wide.contains("why: recursively deletes the root directory"), "{wide}");
        assert!(wide.lines().any(|l| l.contains("   3  ~/proj")), "{wide}");
        let words: Vec<&str> = wide.split_whitespace().collect();
        for width in [80, 60] {
            let t = table(&all, &Layout { color: false, width: Some(width) }, Some("/home/u"));
            assert!(t.lines().all(|l| l.chars().count() <= width), "{width}:\n{t}");
            assert!(t.contains("exit 3") && t.contains("exit ?") && t.contains("~/proj $ rm -rf /"), "{width}:\n{t}");
            // The same words as the wide table's, none broken.
            for w in t.split_whitespace() {
                let w = w.trim_end_matches(':');
                assert!(wide.contains(w) || ["exit", "$"].contains(&w), "{width}: {w:?}\n{t}");
            }
        }
        assert!(!words.is_empty());
    }
}
