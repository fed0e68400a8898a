//! `agentsh stats`: what the audit trail adds up to. Counts per decision, outcome, risk and
//! category; the approval rate; how long the person took to answer; and the commands asked
//! about most, each with the whitelist entry that would stop the prompt (the broadest entry the
//! prompt offered, chosen by `policy::whitelist::always_entries` when the command was asked).

use crate::cli::StatsArgs;
use crate::record::audit::Entry;
use crate::text::count;
use crate::text::sanitize::sanitize;
use anyhow::Result;
use serde::Serialize;
use std::fmt::Write as _;

const TOP: usize = 10;

/// An outcome or category as a person reads it: the log's words ("no one to ask"), not the
/// record's key (`no_terminal`).
fn shown(name: &str) -> String {
    match name {
        "no_terminal" => "no one to ask".to_string(),
        other => other.replace('_', " "),
    }
}
/// Outcomes in the order a person reads them.
const OUTCOMES: &[&str] = &[
    "allowed",
    "approved_once",
    "approved_always",
    "rejected",
    "timed_out",
    "no_terminal",
    "interrupted",
    "taken_over",
    "denied",
];

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Stats {
    pub total: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    pub decisions: Vec<(String, usize)>,
    pub outcomes: Vec<(String, usize)>,
    pub risks: Vec<(String, usize)>,
    pub categories: Vec<(String, usize)>,
    /// Asked commands a person saw: approved, rejected or left to time out.
    pub questions: usize,
    pub approved: usize,
    /// approved / questions; `None` with no questions.
    pub approval_rate: Option<f64>,
    /// Asked commands no one could be asked about (no terminal).
    pub no_terminal: usize,
    pub answer_ms: Option<Percentiles>,
    pub most_asked: Vec<Asked>,
}

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub count: usize,
    pub median: u64,
    pub p90: u64,
    pub max: u64,
}

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Asked {
    /// The whitelist entry that would stop this prompt; `None` when no single entry can (several
    /// parts asked, a redirect, a bare interpreter...).
    pub entry: Option<String>,
    pub asked: usize,
    pub approved: usize,
    /// The latest command of this group.
    pub example: String,
}

/// Adds up `entries` (already filtered). Pure.
pub fn compute(entries: &[&Entry]) -> Stats {
    let mut s = Stats {
        total: entries.len(),
        first: entries.first().map(|e| e.decision.time.clone()),
        last: entries.last().map(|e| e.decision.time.clone()),
        ..Stats::default()
    };
    s.decisions = count_in_order(entries, |e| &e.decision.decision, &["allow", "ask", "deny"]);
    s.outcomes = count_in_order(entries, |e| &e.decision.outcome, OUTCOMES);
    s.risks = count_in_order(entries, |e| &e.decision.risk, &["safe", "moderate", "high", "forbidden"]);
    s.categories = count_in_order(entries, |e| &e.decision.category, &[]);
    let outcome = |e: &Entry, names: &[&str]| names.contains(&e.decision.outcome.as_str());
    s.approved = entries.iter().filter(|e| outcome(e, &["approved_once", "approved_always"])).count();
    s.questions = s.approved + entries.iter().filter(|e| outcome(e, &["rejected", "timed_out"])).count();
    s.approval_rate = (s.questions > 0).then(|| s.approved as f64 / s.questions as f64);
    s.no_terminal = entries.iter().filter(|e| outcome(e, &["no_terminal"])).count();
    // Only real answers: a timeout measures the limit, not the person.
    let mut answers: Vec<u64> = entries
        .iter()
        .filter(|e| outcome(e, &["approved_once", "approved_always", "rejected"]))
        .filter_map(|e| e.decision.answer_ms)
        .collect();
    answers.sort_unstable();
    if !answers.is_empty() {
        let at = |q: usize| answers[((answers.len() - 1) * q).div_ceil(100)];
        s.answer_ms = Some(Percentiles { count: answers.len(), median: at(50), p90: at(90), max: at(100) });
    }
    let mut groups: Vec<Asked> = Vec::new();
    for e in entries.iter().filter(|e| e.decision.decision == "ask") {
        let entry = e.decision.offered_entries.last().cloned();
        let example = e.decision.command.clone();
        let same = |g: &&mut Asked| match (&g.entry, &entry) {
            (Some(a), Some(b)) => a == b,
            (None, None) => g.example == example,
            _ => false,
        };
        let approved = usize::from(outcome(e, &["approved_once", "approved_always"]));
        match groups.iter_mut().find(same) {
            Some(g) => {
                g.asked += 1;
                g.approved += approved;
                g.example = example;
            }
            None => groups.push(Asked { entry, asked: 1, approved, example }),
        }
    }
    // Most asked first; ties keep first-asked order (the sort is stable).
    groups.sort_by_key(|g| std::cmp::Reverse(g.asked));
    groups.truncate(TOP);
    s.most_asked = groups;
    s
}

/// Counts per value: `order` first (zeros included), then any others by count.
fn count_in_order(entries: &[&Entry], key: impl Fn(&Entry) -> &String, order: &[&str]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = order.iter().map(|o| (o.to_string(), 0)).collect();
    let fixed = counts.len();
    for e in entries {
        let k = key(e);
        match counts.iter_mut().find(|(name, _)| name == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k.clone(), 1)),
        }
    }
    counts[fixed..].sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}

pub fn run(args: StatsArgs) -> Result<i32> {
    let path = super::log::path()?;
    let entries = super::log::read(&path)?;
    let since = super::log::cutoff(args.since);
    let kept: Vec<&Entry> = entries.iter().filter(|e| since.is_none_or(|t| e.at >= t)).collect();
    let stats = compute(&kept);
    if args.json {
        let mut v = serde_json::to_value(&stats)?;
        v["log"] = path.display().to_string().into();
        for key in ["decisions", "outcomes", "risks", "categories"] {
            // Pairs read better as objects; preserve_order keeps their order.
            let pairs: serde_json::Map<String, serde_json::Value> =
                stats_pairs(&stats, key).iter().map(|(k, n)| (k.clone(), (*n).into())).collect();
            v[key] = pairs.into();
        }
        println!("{v}");
    } else {
        print!("{}", report(&stats, &path.display().to_string()));
    }
    Ok(0)
}

fn stats_pairs<'a>(s: &'a Stats, key: &str) -> &'a [(String, usize)] {
    match key {
        "decisions" => &s.decisions,
        "outcomes" => &s.outcomes,
        "risks" => &s.risks,
        _ => &s.categories,
    }
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 { "-".into() } else { format!("{:.1}%", n as f64 * 100.0 / of as f64) }
}

fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// The text report.
pub fn report(s: &Stats, log: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "audit log: {}", sanitize(log));
    let (Some(first), Some(last)) = (&s.first, &s.last) else {
        let _ = writeln!(out, "no decisions recorded in this period");
        return out;
    };
    let span = |t: &str| sanitize(t.get(..16).unwrap_or(t)).replace('T', " ");
    let _ = writeln!(out, "{}, {} to {} UTC", count(s.total, "decision", "decisions"), span(first), span(last));
    for (title, pairs) in
        [("Decision", &s.decisions), ("Outcome", &s.outcomes), ("Risk", &s.risks), ("Category", &s.categories)]
    {
        let _ = writeln!(out, "\n{title}");
        for (name, n) in pairs.iter().filter(|(_, n)| *n > 0) {
            let _ = writeln!(out, "  {:<18}{n:>7}  {:>6}", sanitize(&shown(name)), pct(*n, s.total));
        }
    }
    let _ = writeln!(out);
    match s.approval_rate {
        Some(rate) => {
            let _ = writeln!(
                out,
                "Approval rate: {:.1}% ({} approved of {} a person saw)",
                rate * 100.0,
                s.approved,
                count(s.questions, "question", "questions")
            );
        }
        None => {
            let _ = writeln!(out, "Approval rate: - (no question reached a person)");
        }
    }
    if s.no_terminal > 0 {
        let _ = writeln!(out, "  {} more asked when there was no one to ask", s.no_terminal);
    }
    if let Some(a) = &s.answer_ms {
        let _ = writeln!(
            out,
            "Answer time: median {}, 90% within {}, slowest {} ({})",
            secs(a.median),
            secs(a.p90),
            secs(a.max),
            count(a.count, "answer", "answers")
        );
    }
    if !s.most_asked.is_empty() {
        let _ = writeln!(out, "\nAsked most often");
        let _ =
            writeln!(out, "  {:>5}  {:>8}  {:<32}  LATEST", "ASKED", "APPROVED", "ENTRY THAT WOULD STOP THE PROMPT");
        for a in &s.most_asked {
            let entry = match &a.entry {
                Some(e) => sanitize(e),
                None => "(none: several parts or a redirect)".to_string(),
            };
            let example: String = sanitize(&a.example).chars().take(60).collect();
            let _ = writeln!(out, "  {:>5}  {:>8}  {entry:<32}  {example}", a.asked, a.approved);
        }
        if let Some(e) = s.most_asked.iter().find_map(|a| a.entry.as_ref()) {
            let quoted = shlex::try_quote(e).map(|q| q.into_owned()).unwrap_or_else(|_| e.clone());
            let _ = writeln!(
                out,
                "hint: to stop a prompt, the person runs e.g. `agentsh whitelist add {}`",
                sanitize(&quoted)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::audit::Seen;

    fn e(decision: &str, outcome: &str, command: &str, offered: &[&str], answer_ms: Option<u64>) -> Entry {
        Entry {
            decision: Seen {
                time: "2024-06-01T09:30:05.000Z".into(),
                decision: decision.into(),
                outcome: outcome.into(),
                risk: if decision == "allow" { "safe" } else { "moderate" }.into(),
                category: "build_tools".into(),
                command: command.into(),
                offered_entries: offered.iter().map(|s| s.to_string()).collect(),
                answer_ms,
                ..Seen::default()
            },
            exit: None,
            at: 0,
        }
    }

    #[test]
    fn counts_rates_answer_times_and_suggestions() {
        let all = [
            e("allow", "allowed", "ls", &[], None),
            e("ask", "approved_once", "cargo build --release", &["cargo build --release", "cargo build"], Some(1000)),
            e("ask", "approved_always", "cargo build", &["cargo build"], Some(3000)),
            e("ask", "rejected", "cargo build -q", &["cargo build -q", "cargo build"], Some(2000)),
            e("ask", "timed_out", "make install", &["make install"], Some(60_000)),
            e("ask", "no_terminal", "ls > f", &[], None),
            e("deny", "denied", "rm -rf /", &[], None),
        ];
        let refs: Vec<&Entry> = all.iter().collect();
        let s = compute(&refs);
        assert_eq!(s.total, 7);
        assert_eq!(s.decisions, [("allow".into(), 1), ("ask".into(), 5), ("deny".into(), 1)]);
        assert_eq!(s.outcomes[0], ("allowed".into(), 1));
        assert_eq!((s.approved, s.questions, s.no_terminal), (2, 4, 1));
        assert_eq!(s.approval_rate, Some(0.5));
        // Timeouts are not answers.
        assert_eq!(s.answer_ms, Some(Percentiles { count: 3, median: 2000, p90: 3000, max: 3000 }));
        assert_eq!(s.most_asked[0].entry.as_deref(), Some("cargo build"));
        assert_eq!((s.most_asked[0].asked, s.most_asked[0].approved), (3, 2));
        assert_eq!(s.most_asked[0].example, "cargo build -q");
        assert_eq!(s.most_asked[2].entry, None);
        let text = report(&s, "/x/audit.jsonl");
        assert!(text.contains("Approval rate: 50.0% (2 approved of 4 questions a person saw)"), "{text}");
        assert!(text.contains("agentsh whitelist add 'cargo build'"), "{text}");
        assert!(report(&compute(&[]), "l").contains("no decisions"));
        // The log's words, and one of a thing is one (issue 17, item 13).
        assert!(text.contains("no one to ask") && !text.contains("no terminal"), "{text}");
        let one = [e("ask", "rejected", "make install", &["make install"], Some(1500))];
        let text = report(&compute(&one.iter().collect::<Vec<_>>()), "l");
        for want in ["1 decision,", "0 approved of 1 question a person saw", "(1 answer)"] {
            assert!(text.contains(want), "{want:?} in {text}");
        }
    }
}
