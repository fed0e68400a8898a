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
    /// Where the latest was run: whose whitelist applies to it.
    #[serde(skip)]
    pub cwd: String,
    /// An entry in force there now covers it (added since): nothing to suggest.
    pub whitelisted: bool,
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
        // A question the prompt did not put (the agent's hook asked, or the pause held it)
        // recorded no offer: the entry is what the prompt would have offered (issue 29, item 10:
        // `git push origin main:x` was "(none: several parts or a redirect)").
        let entry = match e.decision.offered_entries.as_slice() {
            [] => would_offer(&e.decision.command),
            offered => broadest_still_offered(&e.decision.command, offered),
        };
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
                g.cwd = e.decision.cwd.clone();
            }
            None => groups.push(Asked {
                entry,
                asked: 1,
                approved,
                example,
                cwd: e.decision.cwd.clone(),
                whitelisted: false,
            }),
        }
    }
    // Most asked first; ties keep first-asked order (the sort is stable).
    groups.sort_by_key(|g| std::cmp::Reverse(g.asked));
    groups.truncate(TOP);
    s.most_asked = groups;
    s
}

/// The broadest entry "always" would offer for `command` under the built-in policy, as the
/// prompt does. Pure.
fn would_offer(command: &str) -> Option<String> {
    let v = crate::judge::decide::judge(command, &crate::judge::decide::Policy::default());
    crate::policy::whitelist::always_entries(&v.blocking_parts().collect::<Vec<_>>()).pop()
}

/// The broadest of the entries a prompt offered that the rules offer today: not one whose
/// left-out words made the command risky (an older prompt offered `chmod 600` for
/// `chmod 600 ~/.gitconfig`: issue 29, item 3). Pure.
fn broadest_still_offered(command: &str, offered: &[String]) -> Option<String> {
    let policy = crate::judge::decide::Policy::default();
    let risk = crate::judge::decide::judge(command, &policy).risk;
    offered.iter().rev().find(|e| crate::judge::decide::judge(e, &policy).risk >= risk).or(offered.first()).cloned()
}

/// Marks the groups whose entry a whitelist in force where they were asked now covers: the
/// person added it since, so it is not suggested again (issue 29, item 10).
pub fn mark_whitelisted(asked: &mut [Asked]) {
    let mut configs: Vec<(String, crate::policy::config::Config)> = Vec::new();
    for a in asked.iter_mut() {
        let Some(entry) = &a.entry else { continue };
        let Some(argv) = shlex::split(entry) else { continue };
        if !configs.iter().any(|(cwd, _)| *cwd == a.cwd) {
            configs.push((a.cwd.clone(), crate::policy::config::load(std::path::Path::new(&a.cwd))));
        }
        let config = &configs.iter().find(|(cwd, _)| *cwd == a.cwd).expect("loaded above").1;
        a.whitelisted = config.policy.whitelist.find(&argv, None).is_some();
    }
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
    let mut stats = compute(&kept);
    mark_whitelisted(&mut stats.most_asked);
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
        let width = crate::ask::tty::width_of(std::io::stdout());
        crate::ask::tty::print_fitted(&report(&stats, &path.display().to_string(), width));
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

/// The text report; `width`: the terminal's, where rows that would not fit are folded.
pub fn report(s: &Stats, log: &str, width: Option<usize>) -> String {
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
        let entry_of = |a: &Asked| match (&a.entry, a.whitelisted) {
            (Some(e), false) => sanitize(e),
            (Some(e), true) => format!("{} (whitelisted now)", sanitize(e)),
            (None, _) => "(none: no one entry allows it)".to_string(),
        };
        // Columns as wide as what they hold, so every row lines up (issue 29, item 10).
        let title = "ENTRY THAT WOULD STOP THE PROMPT";
        let ew = s.most_asked.iter().map(|a| entry_of(a).chars().count()).max().unwrap_or(0).max(title.len());
        let rows: Vec<(String, String)> = s
            .most_asked
            .iter()
            .map(|a| {
                let entry = entry_of(a);
                let pad = " ".repeat(ew - entry.chars().count());
                (format!("  {:>5}  {:>8}  {entry}{pad}", a.asked, a.approved), sanitize(&a.example))
            })
            .collect();
        // Too wide for the terminal: each latest command on a line of its own.
        let fold = width
            .is_some_and(|w| rows.iter().any(|(row, latest)| row.chars().count() + 2 + latest.chars().count() > w));
        if fold {
            let _ = writeln!(out, "  {:>5}  {:>8}  {title}", "ASKED", "APPROVED");
            for (row, latest) in &rows {
                let _ = writeln!(out, "{}", row.trim_end());
                let _ = writeln!(out, "{:19}latest: {latest}", "");
            }
        } else {
            let _ = writeln!(out, "  {:>5}  {:>8}  {title:<ew$}  LATEST", "ASKED", "APPROVED");
            for (row, latest) in &rows {
                let _ = writeln!(out, "{row}  {latest}");
            }
        }
        if let Some(e) = s.most_asked.iter().filter(|a| !a.whitelisted).find_map(|a| a.entry.as_ref()) {
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
            connections: Vec::new(),
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
        let text = report(&s, "/x/audit.jsonl", None);
        assert!(text.contains("Approval rate: 50.0% (2 approved of 4 questions a person saw)"), "{text}");
        assert!(text.contains("agentsh whitelist add 'cargo build'"), "{text}");
        assert!(report(&compute(&[]), "l", None).contains("no decisions"));
        // The log's words, and one of a thing is one (issue 17, item 13).
        assert!(text.contains("no one to ask") && !text.contains("no terminal"), "{text}");
        let one = [e("ask", "rejected", "make install", &["make install"], Some(1500))];
        let text = report(&compute(&one.iter().collect::<Vec<_>>()), "l", None);
        for want in ["1 decision,", "0 approved of 1 question a person saw", "(1 answer)"] {
            assert!(text.contains(want), "{want:?} in {text}");
        }
    }

    /// Issue 29, item 10: a question with no recorded offer (the hook asked, or the pause held
    /// it) gets the entry the prompt would offer; an older offer that today's rules drop is not
    /// suggested; the table's columns line up.
    #[test]
    fn entries_are_the_ones_offered_today_and_columns_line_up() {
        let all = [
            e("ask", "taken_over", "git push origin main:x", &[], None),
            e("ask", "no_terminal", "chmod 600 ~/.gitconfig", &["chmod 600 ~/.gitconfig", "chmod 600"], None),
            e("ask", "no_terminal", "ls > f && rm -r src", &[], None),
        ];
        let s = compute(&all.iter().collect::<Vec<_>>());
        let entries: Vec<Option<&str>> = s.most_asked.iter().map(|a| a.entry.as_deref()).collect();
        assert_eq!(entries, [Some("git push origin main:x"), Some("chmod 600 ~/.gitconfig"), None]);
        let text = report(&s, "l", None);
        let rows: Vec<&str> = text.lines().skip_while(|l| !l.contains("LATEST")).take(4).collect();
        let at = rows[0].find("LATEST").unwrap();
        for (row, a) in rows[1..].iter().zip(&s.most_asked) {
            assert_eq!(row.rfind(&*a.example), Some(at), "{text}");
        }
        // Too wide for the terminal: the latest command folds onto a line of its own.
        let narrow = report(&s, "l", Some(60));
        assert!(narrow.contains("latest: git push origin main:x"), "{narrow}");
    }
}
