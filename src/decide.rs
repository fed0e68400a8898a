//! Assessments + policy -> one decision per part and for the whole command. Pure: no I/O.
//!
//! Per simple command, the first step that applies decides:
//! 1. blacklist -> deny; 2. forbidden -> deny (nothing lifts it); 3. whitelist -> allow;
//! 4. `requireCommandConfirmation` -> ask; 5. moderate or high -> ask; 6. safe -> allow.
//!
//! The whole command takes the strictest part: deny beats ask, ask beats allow.

use crate::assess::{self, Assessment};
use crate::model::{Category, Decision, Risk};
use crate::parse;
use serde::Serialize;

/// A whitelist or blacklist entry: words matched as a prefix of a command's words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// As written in the config.
    pub text: String,
    /// Normalized: split as shell words, lowercased.
    #[serde(skip)]
    pub words: Vec<String>,
    /// The file it came from.
    pub source: String,
}

impl Entry {
    pub fn new(text: &str, source: &str) -> Option<Entry> {
        let words = normalize_words(text);
        (!words.is_empty()).then(|| Entry { text: text.to_string(), words, source: source.to_string() })
    }

    /// True when the entry's words are the first words of `argv` (case-insensitive, whole
    /// words): `ls` matches `ls -la` but not `lsof`; `git log` matches `git log -1`, not `git logout`.
    pub fn matches(&self, argv: &[String]) -> bool {
        self.words.len() <= argv.len() && self.words.iter().zip(argv).all(|(e, a)| e.eq_ignore_ascii_case(a))
    }
}

/// Splits text as shell words (quotes removed), trimming and collapsing white space.
pub fn normalize_words(text: &str) -> Vec<String> {
    shlex::split(text)
        .unwrap_or_else(|| text.split_whitespace().map(str::to_string).collect())
        .into_iter()
        .map(|w| w.to_lowercase())
        .collect()
}

/// The part of the configuration that decides.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub whitelist: Vec<Entry>,
    pub blacklist: Vec<Entry>,
    pub require_confirmation: bool,
    /// Set when a blacklist could not be read: nothing runs without a person, and the whitelist
    /// cannot lift that, because agentsh cannot tell what the blacklist would have denied.
    pub blacklist_broken: Option<String>,
    /// `--ask` / `AGENTSH_ASK=1`: the agent asked for a person even for safe commands.
    pub force_ask: bool,
}

/// What settled a part's decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "detail", rename_all = "snake_case")]
pub enum DecidedBy {
    Blacklist(String),
    Forbidden,
    Whitelist(String),
    BrokenBlacklist(String),
    ForcedAsk,
    RequireConfirmation,
    Risk,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    #[serde(flatten)]
    pub assessment: Assessment,
    pub decision: Decision,
    pub decided_by: DecidedBy,
}

/// The verdict on a whole command. It must be looked at: dropping it unread is a bug.
#[must_use = "a verdict that is not acted on may let a command run unjudged"]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub command: String,
    pub decision: Decision,
    pub risk: Risk,
    pub category: Category,
    pub reasons: Vec<String>,
    /// True when a whitelist entry allowed at least one part that would otherwise have asked.
    pub whitelisted: bool,
    #[serde(rename = "segments")]
    pub parts: Vec<Part>,
}

impl Verdict {
    /// The parts that made the command ask or deny.
    pub fn blocking_parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(move |p| p.decision == self.decision && p.decision != Decision::Allow)
    }
}

/// Parses, assesses and decides: the whole pure core in one call.
pub fn judge(text: &str, policy: &Policy) -> Verdict {
    let assessments = match parse::parse(text) {
        Ok(script) => {
            let parts = assess::assess(&script);
            if parts.is_empty() {
                vec![Assessment {
                    argv: vec![],
                    program: String::new(),
                    inner_argv: vec![],
                    risk: Risk::Safe,
                    category: Category::Shell,
                    reasons: vec!["runs nothing".to_string()],
                    rule: "empty".to_string(),
                    context: String::new(),
                }]
            } else {
                parts
            }
        }
        Err(e) => vec![assess::unparseable(text, &e)],
    };
    decide(text, assessments, policy)
}

/// How long the binary lets [`judge`] take before refusing the command (see [`judge_bounded`]).
pub const JUDGE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// [`judge`] with a time limit, for the binary's edges (gate, check). brush-parser backtracks
/// exponentially on some malformed input and panics on some other (found by fuzzing; the known
/// shapes are refused before parsing), so a verdict that is not ready in `budget`, or whose
/// thread panicked, is a deny. The judging runs on its own thread; one that overruns is left
/// behind, and the process ends soon after the refusal.
pub fn judge_bounded(text: &str, policy: &Policy, budget: std::time::Duration) -> Verdict {
    const THREAD: &str = "agentsh-judge";
    // A parser panic is reported as a refusal below; its raw message would only be noise.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(THREAD) {
                default(info);
            }
        }));
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let (owned, pol) = (text.to_string(), policy.clone());
    // The parser recurses; give it the main thread's stack size rather than a thread's 2 MiB.
    let spawned = std::thread::Builder::new().name(THREAD.to_string()).stack_size(8 << 20).spawn(move || {
        let _ = tx.send(judge(&owned, &pol));
    });
    let refuse = |what| decide(text, vec![assess::unparseable(text, &parse::ParseError::Pathological(what))], policy);
    if spawned.is_err() {
        return refuse("input agentsh could not start judging");
    }
    match rx.recv_timeout(budget) {
        Ok(verdict) => verdict,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => refuse("input that takes too long to parse"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => refuse("input that makes the parser fail"),
    }
}

pub fn decide(text: &str, assessments: Vec<Assessment>, policy: &Policy) -> Verdict {
    let parts: Vec<Part> = assessments.into_iter().map(|a| decide_part(a, policy)).collect();
    let decision = parts.iter().map(|p| p.decision).max().unwrap_or(Decision::Deny);
    let risk = parts.iter().map(|p| p.assessment.risk).max().unwrap_or(Risk::Forbidden);
    let top = parts.iter().filter(|p| p.decision == decision).max_by_key(|p| p.assessment.risk);
    let category = top.map(|p| p.assessment.category).unwrap_or(Category::Unknown);
    let mut reasons: Vec<String> = Vec::new();
    for p in parts.iter().filter(|p| p.decision == decision) {
        for r in part_reasons(p) {
            if !reasons.contains(&r) {
                reasons.push(r);
            }
        }
    }
    let whitelisted = parts.iter().any(|p| matches!(p.decided_by, DecidedBy::Whitelist(_)));
    Verdict { command: text.to_string(), decision, risk, category, reasons, whitelisted, parts }
}

fn part_reasons(p: &Part) -> Vec<String> {
    match &p.decided_by {
        DecidedBy::Blacklist(e) => vec![format!("matches the blacklist entry `{e}`")],
        DecidedBy::Whitelist(e) => vec![format!("matches the whitelist entry `{e}`")],
        DecidedBy::BrokenBlacklist(why) => {
            vec![format!("the blacklist could not be read ({why}), so a person must confirm every command")]
        }
        DecidedBy::ForcedAsk => vec!["the agent asked for a person's approval".to_string()],
        DecidedBy::RequireConfirmation => vec!["requireCommandConfirmation is on".to_string()],
        DecidedBy::Forbidden | DecidedBy::Risk => p.assessment.reasons.clone(),
    }
}

fn decide_part(a: Assessment, policy: &Policy) -> Part {
    let (decision, decided_by) = decide_one(&a, policy);
    Part { assessment: a, decision, decided_by }
}

fn decide_one(a: &Assessment, policy: &Policy) -> (Decision, DecidedBy) {
    // The blacklist tightens, so it matches generously: as written, and as the unwrapped
    // command with its program's path stripped (`sudo /bin/rm` meets a `rm` entry).
    let unwrapped: Vec<String> = a
        .inner_argv
        .iter()
        .enumerate()
        .map(|(i, w)| if i == 0 { assess::basename(w).to_string() } else { w.clone() })
        .collect();
    if let Some(e) = policy.blacklist.iter().find(|e| e.matches(&a.argv) || e.matches(&unwrapped)) {
        return (Decision::Deny, DecidedBy::Blacklist(e.text.clone()));
    }
    if a.risk == Risk::Forbidden {
        return (Decision::Deny, DecidedBy::Forbidden);
    }
    if let Some(why) = &policy.blacklist_broken {
        return (Decision::Ask, DecidedBy::BrokenBlacklist(why.clone()));
    }
    if policy.force_ask {
        return (Decision::Ask, DecidedBy::ForcedAsk);
    }
    // The whitelist lifts only what is written: `./ls` or `/tmp/ls` are not `ls`.
    if let Some(e) = policy.whitelist.iter().find(|e| !a.argv.is_empty() && e.matches(&a.argv)) {
        return (Decision::Allow, DecidedBy::Whitelist(e.text.clone()));
    }
    if policy.require_confirmation && a.rule != "empty" {
        return (Decision::Ask, DecidedBy::RequireConfirmation);
    }
    match a.risk {
        Risk::Safe => (Decision::Allow, DecidedBy::Risk),
        _ => (Decision::Ask, DecidedBy::Risk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(white: &[&str], black: &[&str]) -> Policy {
        Policy {
            whitelist: white.iter().filter_map(|e| Entry::new(e, "test")).collect(),
            blacklist: black.iter().filter_map(|e| Entry::new(e, "test")).collect(),
            ..Policy::default()
        }
    }

    fn d(text: &str, p: &Policy) -> Decision {
        judge(text, p).decision
    }

    #[test]
    fn the_specification_scenarios() {
        let p = Policy::default();
        assert_eq!(d("ls -la", &p), Decision::Allow);
        assert_eq!(d("chmod 777 file.txt", &p), Decision::Ask);
        let v = judge("sudo apt install nginx", &p);
        assert_eq!((v.decision, v.risk), (Decision::Ask, Risk::High));
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
    }

    #[test]
    fn entries_match_on_word_boundaries() {
        let p = policy(&["ls", "git log", "npm  run   test"], &[]);
        assert_eq!(d("ls -la", &p), Decision::Allow);
        assert_eq!(d("LS -la", &p), Decision::Allow);
        assert_eq!(d("lsof -i", &p), Decision::Allow); // safe on its own, not via the entry
        assert!(!judge("lsof -i", &p).whitelisted);
        assert!(judge("git log --oneline", &p).whitelisted);
        assert_eq!(d("git logout", &p), Decision::Ask);
        assert_eq!(d("npm run test -- --watch", &p), Decision::Allow);
        assert_eq!(d("./ls", &policy(&["ls"], &[])), Decision::Ask);
    }

    #[test]
    fn whitelist_applies_to_each_part_on_its_own() {
        let p = policy(&["ls", "make"], &[]);
        assert_eq!(d("ls && rm -rf build", &p), Decision::Ask);
        assert_eq!(d("make && make install", &p), Decision::Allow);
        assert_eq!(d("make; curl x | sh", &p), Decision::Ask);
        assert_eq!(d("ls; rm -rf /", &p), Decision::Deny);
    }

    #[test]
    fn nothing_lifts_forbidden() {
        let p = policy(&["rm", "rm -rf /", "dd"], &[]);
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
        assert_eq!(d("dd if=/dev/zero of=/dev/sda", &p), Decision::Deny);
    }

    #[test]
    fn blacklist_denies_even_safe_and_wrapped_commands() {
        let p = policy(&["cat"], &["cat", "git push"]);
        assert_eq!(d("cat x", &p), Decision::Deny);
        assert_eq!(d("sudo /bin/cat x", &p), Decision::Deny);
        assert_eq!(d("git push origin", &p), Decision::Deny);
        assert_eq!(d("ls; git push", &p), Decision::Deny);
        assert_eq!(d("git status", &p), Decision::Allow);
    }

    #[test]
    fn require_confirmation_asks_for_everything_not_whitelisted() {
        let mut p = policy(&["ls"], &[]);
        p.require_confirmation = true;
        assert_eq!(d("ls", &p), Decision::Allow);
        assert_eq!(d("pwd", &p), Decision::Ask);
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
    }

    #[test]
    fn a_broken_blacklist_never_allows_without_a_person() {
        let mut p = policy(&["ls"], &[]);
        p.blacklist_broken = Some("x.json:3:4: expected a string".into());
        assert_eq!(d("ls", &p), Decision::Ask);
        assert_eq!(d("pwd", &p), Decision::Ask);
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
    }

    #[test]
    fn unparseable_input_is_never_allowed() {
        let p = policy(&["echo"], &[]);
        assert_eq!(d("echo 'unterminated", &p), Decision::Ask);
        assert_eq!(d("<<$( ;#", &p), Decision::Deny);
        assert_eq!(d(&"a".repeat(parse::MAX_INPUT_BYTES + 1), &p), Decision::Deny);
    }

    #[test]
    fn verdict_explains_itself() {
        let v = judge("ls && chmod 777 f", &Policy::default());
        assert_eq!(v.decision, Decision::Ask);
        assert_eq!(v.parts.len(), 2);
        let blocking: Vec<_> = v.blocking_parts().map(|p| p.assessment.text()).collect();
        assert_eq!(blocking, ["chmod 777 f"]);
        assert!(!v.reasons.is_empty());
    }
}
