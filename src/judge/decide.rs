//! Assessments + policy -> one decision per part and for the whole command. Pure: no I/O.
//!
//! Per simple command, the first step that applies decides:
//! 1. blacklist -> deny; 2. forbidden -> deny (nothing lifts it); 3. a `deny` rule -> deny;
//! 4. the level's cell is "blocked" -> deny (no whitelist entry or allow rule lifts it);
//! 5. an unreadable blacklist or rule -> ask; 6. `--ask`/`AGENTSH_ASK` -> ask;
//! 7. an `ask` rule -> ask (the whitelist does not lift a person's explicit ask rule);
//! 8. an `allow` rule -> allow; 9. whitelist -> allow;
//! 10. the level's cell is "approval" -> ask; 11. `requireCommandConfirmation` -> ask;
//! 12. moderate or high -> ask; 13. safe -> allow.
//!
//! So the strictest of level, risk and rules wins, and loosening (allow rules, the whitelist)
//! lifts only asks, never a deny. The whole command takes the strictest part: deny beats ask,
//! ask beats allow.

use crate::judge::assess::{self, Assessment};
use crate::judge::containment::{self, BoxView, Edge};
use crate::judge::custom_rules::{self, Rule};
use crate::judge::levels::{Cell, Level, LevelHit};
use crate::judge::parse;
use crate::judge::unboxed::{self, HomeSight};
use crate::model::{Category, Decision, Risk};
use crate::text::strlist::StrList;
use serde::Serialize;
use std::sync::Arc;

/// A whitelist or blacklist entry: words matched as a prefix of a command's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// As written in the config.
    pub text: String,
    /// Its words, for matching.
    words: Words,
    /// The file it came from.
    pub source: Arc<str>,
}

/// An entry's words, normalized (split as shell words, lowercased).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Words {
    /// The text is plain ASCII words (no quotes, escapes or comments): they are read from the
    /// text itself when matching, so loading a 10,000-entry whitelist builds no word lists.
    /// The first word is at `start..end`, so most entries are ruled out by one comparison.
    Plain { start: u32, end: u32 },
    /// Anything else: split with shell quoting and lowercased once.
    Split(Box<[String]>),
}

impl Words {
    /// The words of an entry's text; `None` when it has none.
    fn of(text: &str) -> Option<Words> {
        match plain_first_word(text) {
            Some(None) => None,
            // Entries come from config files, far below 4 GiB.
            Some(Some(first)) => Some(Words::Plain { start: first.start as u32, end: first.end as u32 }),
            None => Some(normalize_words(text)).filter(|w| !w.is_empty()).map(|w| Words::Split(w.into())),
        }
    }

    /// The first word, as matched against a command's program.
    fn first<'t>(&'t self, text: &'t str) -> &'t str {
        match self {
            Words::Plain { start, end } => &text[*start as usize..*end as usize],
            Words::Split(words) => &words[0],
        }
    }

    /// True when these words (of `text`) are the first words of `argv` (case-insensitive,
    /// whole words): `ls` matches `ls -la` but not `lsof`; `git log` matches `git log -1`, not
    /// `git logout`.
    #[inline]
    fn match_argv(&self, text: &str, argv: &[String]) -> bool {
        fn prefix<'a>(mut words: impl Iterator<Item = &'a str>, argv: &[String]) -> bool {
            let mut argv = argv.iter();
            words.all(|e| argv.next().is_some_and(|a| e.eq_ignore_ascii_case(a)))
        }
        match self {
            // ASCII: lowercasing first would change nothing for an ASCII-case-insensitive match.
            Words::Plain { start, end } => {
                let first = &text[*start as usize..*end as usize];
                // Lengths first: most of a big whitelist is ruled out here, without comparing.
                argv.first().is_some_and(|a| a.len() == first.len() && first.eq_ignore_ascii_case(a))
                    && prefix(plain_words(&text[*end as usize..]), &argv[1..])
            }
            Words::Split(words) => prefix(words.iter().map(String::as_str), argv),
        }
    }
}

/// One entry of [`Entries`], as written and where from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryRef<'a> {
    pub text: &'a str,
    pub source: &'a str,
}

/// Whitelist or blacklist entries. A 10,000-entry whitelist is read on every command, so:
/// - the texts sit in one buffer ([`StrList`]), taken over from the config reading without a
///   copy, and plain entries keep no words of their own (see `Words`);
/// - each entry has a 32-bit key of its first word, and a part is compared with the list by
///   scanning 40 KB of keys (a 640 KB list of entries did not stay in the cache from one part
///   to the next); only entries whose key matches are compared in full.
///
/// The keys are kept with the entries, so the list is changed only through its own methods.
#[derive(Clone, Debug, Default)]
pub struct Entries {
    texts: StrList,
    words: Vec<Words>,
    keys: Vec<u32>,
    /// The file each run of entries came from, by the index of its first entry.
    sources: Vec<(usize, Arc<str>)>,
}

impl Entries {
    pub fn push(&mut self, e: Entry) {
        self.note_source(&e.source);
        self.keys.push(word_key(e.words.first(&e.text)));
        self.texts.push(&e.text);
        self.words.push(e.words);
    }

    /// Adds a file's entries (texts as written, trimmed). An entry with no words is left out.
    pub fn extend_from(&mut self, texts: StrList, source: &Arc<str>) {
        let before = self.len();
        self.note_source(source);
        self.keys.reserve(texts.len());
        self.words.reserve(texts.len());
        for text in texts.iter() {
            let Some(words) = Words::of(text) else {
                // Rare (an entry such as `# note`): undo, and add the others one by one.
                self.keys.truncate(before);
                self.words.truncate(before);
                for text in texts.iter() {
                    if let Some(e) = Entry::from_string(text.to_string(), source) {
                        self.push(e);
                    }
                }
                return;
            };
            self.keys.push(word_key(words.first(text)));
            self.words.push(words);
        }
        self.texts.append(texts);
    }

    fn note_source(&mut self, source: &Arc<str>) {
        if self.sources.last().is_none_or(|(_, s)| s != source) {
            self.sources.push((self.len(), source.clone()));
        }
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn get(&self, i: usize) -> EntryRef<'_> {
        let source = self.sources.iter().rev().find(|(first, _)| *first <= i).map_or("", |(_, s)| &**s);
        EntryRef { text: self.texts.get(i).unwrap_or_default(), source }
    }

    pub fn iter(&self) -> impl Iterator<Item = EntryRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first entry whose words are the first words of `argv` or of `also` (see
    /// `Words::match_argv`).
    pub fn find(&self, argv: &[String], also: Option<&[String]>) -> Option<EntryRef<'_>> {
        let key = |argv: &[String]| argv.first().map(|w| word_key(w));
        let (a, b) = match (key(argv), also.and_then(key)) {
            (None, None) => return None,
            (a, b) => (a.or(b).unwrap_or_default(), b.or(a).unwrap_or_default()),
        };
        let hit = |i: usize| {
            let text = self.texts.get(i).unwrap_or_default();
            self.words[i].match_argv(text, argv) || also.is_some_and(|also| self.words[i].match_argv(text, also))
        };
        // Blocks of keys compared without branches (so as vector compares); a block with a
        // possible match is then looked at key by key.
        const BLOCK: usize = 16;
        for (n, block) in self.keys.chunks(BLOCK).enumerate() {
            if !block.iter().fold(false, |any, k| any | (*k == a) | (*k == b)) {
                continue;
            }
            for (j, k) in block.iter().enumerate() {
                if (*k == a || *k == b) && hit(n * BLOCK + j) {
                    return Some(self.get(n * BLOCK + j));
                }
            }
        }
        None
    }
}

impl Entries {
    /// The first entry that matches as a word prefix ([`Self::find`]) or as tokens: its
    /// program, then its plain words as the command's first plain words in order, and each of
    /// its flags anywhere in the command, in a cluster of short flags (`-f` in `-fu`), with a
    /// value (`--force=x`), or as its other spelling (`-f` for `--force`). For the blacklist,
    /// which only tightens: `git push --force` also stops `git push -f` and
    /// `git push origin main --force`.
    pub fn find_tokens(&self, argv: &[String], also: Option<&[String]>) -> Option<EntryRef<'_>> {
        if let Some(hit) = self.find(argv, also) {
            return Some(hit);
        }
        // Only entries for this program (their first word's key) are split and compared.
        let key = |argv: &[String]| argv.first().map(|w| word_key(w));
        let keys = [key(argv), also.and_then(key)];
        (0..self.len())
            .filter(|&i| keys.contains(&Some(self.keys[i])))
            .find(|&i| {
                let text = self.texts.get(i).unwrap_or_default();
                let words: Vec<String> =
                    shlex::split(text).unwrap_or_else(|| text.split_whitespace().map(String::from).collect());
                std::iter::once(argv).chain(also).any(|argv| tokens_match(&words, argv))
            })
            .map(|i| self.get(i))
    }
}

/// Long and short spellings of the same flag, for [`Entries::find_tokens`].
const SAME_FLAG: &[(&str, &str)] = &[
    ("--force", "-f"),
    ("--recursive", "-r"),
    ("--recursive", "-R"),
    ("--delete", "-d"),
    ("--all", "-a"),
    ("--hard", "--hard"),
    ("--yes", "-y"),
    ("--interactive", "-i"),
];

fn tokens_match(entry: &[String], argv: &[String]) -> bool {
    let (Some(program), Some(first)) = (entry.first(), argv.first()) else { return false };
    if lowercase(assess::basename(program)) != lowercase(assess::basename(first)) {
        return false;
    }
    let (flags, plain): (Vec<&String>, Vec<&String>) = entry[1..].iter().partition(|w| w.starts_with('-'));
    // A cluster in the entry (`rm -rf`) is each of its short flags, in any order or spelling.
    let flags: Vec<String> = flags
        .into_iter()
        .flat_map(|f| match f.strip_prefix('-').filter(|r| !r.starts_with('-') && r.len() > 1) {
            Some(cluster) => cluster.chars().map(|c| format!("-{c}")).collect(),
            None => vec![f.clone()],
        })
        .collect();
    let args = &argv[1..];
    let positionals: Vec<&String> = args.iter().filter(|w| !w.starts_with('-')).collect();
    if plain.len() > positionals.len() || plain.iter().zip(&positionals).any(|(e, a)| e != a) {
        return false;
    }
    let has = |flag: &str| {
        args.iter().any(|a| {
            a == flag
                || a.strip_prefix(flag).is_some_and(|rest| rest.starts_with('='))
                || (flag.len() == 2
                    && !flag.starts_with("--")
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains(&flag[1..]))
        })
    };
    flags.iter().all(|f| {
        has(f)
            || SAME_FLAG
                .iter()
                .any(|(long, short)| (f.as_str() == *long && has(short)) || (f.as_str() == *short && has(long)))
    })
}

impl Extend<Entry> for Entries {
    fn extend<I: IntoIterator<Item = Entry>>(&mut self, entries: I) {
        for e in entries {
            self.push(e);
        }
    }
}

impl FromIterator<Entry> for Entries {
    fn from_iter<I: IntoIterator<Item = Entry>>(entries: I) -> Self {
        let mut list = Entries::default();
        list.extend(entries);
        list
    }
}

/// A 32-bit key of a word (FNV-1a of its bytes, ASCII letters lowercased): words that
/// `eq_ignore_ascii_case` finds equal have equal keys, so a different key rules a match out.
pub(crate) fn word_key(word: &str) -> u32 {
    word.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0193))
}

/// The words of plain text, split as shlex would (on space, tab and newline only).
fn plain_words(text: &str) -> impl Iterator<Item = &str> {
    text.split([' ', '\t', '\n']).filter(|w| !w.is_empty())
}

/// For plain ASCII text (see `is_plain`), where its first word is (`None` inside when it is
/// blank); `None` for anything else. A 10,000-entry whitelist is read on every command, so the
/// text is checked in one branch-free pass (which the compiler vectorizes) before the first
/// word is looked for.
fn plain_first_word(text: &str) -> Option<Option<std::ops::Range<usize>>> {
    let bytes = text.as_bytes();
    let unplain = |c: u8| (c >= 0x80) | (c == b'\'') | (c == b'"') | (c == b'\\') | (c == b'#');
    if bytes.iter().fold(false, |any, &c| any | unplain(c)) {
        return None;
    }
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n');
    let Some(start) = bytes.iter().position(|c| !blank(c)) else { return Some(None) };
    let end = bytes[start..].iter().position(blank).map_or(bytes.len(), |n| start + n);
    Some(Some(start..end))
}

/// No quotes, escapes or comments: shell splitting is white-space splitting.
fn is_plain(text: &str) -> bool {
    !text.bytes().any(|b| matches!(b, b'\'' | b'"' | b'\\' | b'#'))
}

impl Entry {
    pub fn new(text: &str, source: &str) -> Option<Entry> {
        Entry::from_string(text.to_string(), &source.into())
    }

    pub fn from_string(text: String, source: &Arc<str>) -> Option<Entry> {
        let words = Words::of(&text)?;
        Some(Entry { text, words, source: source.clone() })
    }

    /// True when the entry's words are the first words of `argv` (case-insensitive, whole
    /// words): `ls` matches `ls -la` but not `lsof`; `git log` matches `git log -1`, not `git logout`.
    pub fn matches(&self, argv: &[String]) -> bool {
        self.words.match_argv(&self.text, argv)
    }
}

/// Splits text as shell words (quotes removed), trimming and collapsing white space.
pub fn normalize_words(text: &str) -> Vec<String> {
    // Most entries are plain words: split them directly, as shlex would, without its
    // byte-by-byte lexer (a 10,000-entry whitelist is read on every command).
    if is_plain(text) {
        return plain_words(text).map(lowercase).collect();
    }
    shlex::split(text)
        .unwrap_or_else(|| text.split_whitespace().map(str::to_string).collect())
        .into_iter()
        .map(|w| w.to_lowercase())
        .collect()
}

/// `to_lowercase`, without its char-by-char walk for the usual ASCII word.
fn lowercase(word: &str) -> String {
    if word.is_ascii() { word.to_ascii_lowercase() } else { word.to_lowercase() }
}

/// The part of the configuration that decides.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub whitelist: Entries,
    pub blacklist: Entries,
    pub require_confirmation: bool,
    /// Set when a blacklist could not be read: nothing runs without a person, and the whitelist
    /// cannot lift that, because agentsh cannot tell what the blacklist would have denied.
    pub blacklist_broken: Option<String>,
    /// `--ask` / `AGENTSH_ASK=1`: the agent asked for a person even for safe commands.
    pub force_ask: bool,
    /// The maturity level, if one is set (`levels`).
    pub level: Option<Level>,
    /// The person's own rules (`custom_rules`), user file first.
    pub rules: Vec<Rule>,
    /// Set when a rule that could tighten could not be read: as with the blacklist, nothing runs
    /// without a person.
    pub rules_broken: Option<String>,
    /// Whether the command will run in the kernel box, and what the judge knows of it.
    pub sandbox: Sandbox,
    /// With no box ([`Sandbox::Off`]): what the box would have shown of home, where the gate
    /// knows it (the command starts where the box cannot show its directory, or user namespaces
    /// are missing). A command whose text names what it keeps hidden then needs a person
    /// (`unboxed`, rt4 R14).
    pub home_sight: Option<HomeSight>,
    /// Whether the command may read keys from a terminal: agentsh's standard input, output or
    /// error is one (the gate looks; an agent's pty, rt7 B7). With no box, a program whose keys
    /// run commands then needs a person (`escapes::keyed`).
    pub terminal: bool,
    /// Set where an interactive shell runs the line itself (its line gate, `check --prompt`):
    /// the shell keeps what the line changes, so a line that changes the gate itself (its names,
    /// the keys that accept a line) needs a person (`line_gate`, rt8 C3).
    pub line_gate: bool,
    /// Set where agentsh does not run the command and its environment does not keep less in its
    /// secure mode (`LESSSECURE=1`, no `LESSSECURE_ALLOW`, pagers naming less or cat): with no
    /// box and on a terminal, a program that pages then needs a person (`escapes::keyed`, rt8 C4).
    pub pagers_unguarded: bool,
    /// The programs installed in the project's `node_modules/.bin` (from the working directory
    /// up to the workspace root), found by the gate when the command uses `npx`: `npx eslint`
    /// then runs the project's own tool, not a download.
    pub local_bins: Vec<String>,
    /// The arguments the script is run with (`agentsh -c TEXT NAME ARG...`): text the script
    /// can make bash evaluate (`assess::script_arguments`).
    pub script_args: Vec<String>,
}

/// The box a judged command would run in (issue 15). Off by default: only the gate, which
/// execs the command itself, and `check`, which shows what the gate would do, turn it on.
/// The hook route decides without running the command, so nothing is allowed there because
/// a box would have contained it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sandbox {
    /// No box: why (Landlock missing, `sandbox.enabled: false`, the hook route).
    Off(String),
    On(BoxView),
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox::Off("no sandbox was set up for this verdict".to_string())
    }
}

/// Where a part runs: in the box without a question, or at its edge, or with no box at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Runs {
    /// The box contains whatever it does.
    Sandbox,
    /// It needs a person although the box is there (see `edge`).
    NeedsPerson,
    /// There is no box.
    Unconfined,
}

/// Where the whole command runs if it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunsIn {
    Sandbox,
    Unconfined,
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
    /// A row of the level table.
    Level(Box<LevelHit>),
    /// A custom rule.
    Rule(Box<RuleHit>),
    BrokenRules(String),
    /// The box contains it: it would ask by its risk, but runs inside the sandbox instead.
    Sandbox,
    /// A forbidden payload in the raw text that the parsed reading does not run (`raw_text`).
    RawText,
    /// With no box, the text names what the box would have hidden (`unconfined`, rt4 R14).
    NoBox,
}

/// The custom rule that decided a part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleHit {
    pub pattern: String,
    pub decision: Decision,
    pub reason: String,
    /// `file:line:col` of the rule.
    pub at: String,
}

impl RuleHit {
    fn of(r: &Rule) -> RuleHit {
        RuleHit { pattern: r.pattern_text(), decision: r.decision, reason: r.reason.clone(), at: r.at.clone() }
    }
}

/// Why a part was decided as it was, for people: what decided it, then the command's own risk
/// reasons when they add something.
pub fn part_reasons(p: &Part) -> Vec<String> {
    let risky = p.assessment.risk > Risk::Safe;
    let mut out = match &p.decided_by {
        DecidedBy::Blacklist(e) => vec![format!("matches the blacklist entry `{e}`")],
        DecidedBy::Whitelist(e) => vec![format!("allowed by the whitelist entry `{e}`")],
        DecidedBy::BrokenBlacklist(why) => {
            vec![format!("the blacklist could not be read ({why}), so a person must confirm every command")]
        }
        DecidedBy::BrokenRules(why) => {
            vec![format!("a custom rule could not be read ({why}), so a person must confirm every command")]
        }
        DecidedBy::ForcedAsk => vec!["the agent asked for a person's approval (--ask or AGENTSH_ASK)".to_string()],
        DecidedBy::RequireConfirmation => vec!["requireCommandConfirmation is on".to_string()],
        DecidedBy::Level(hit) => vec![hit.describe()],
        DecidedBy::Rule(hit) => {
            vec![format!("{} (custom rule `{}` at {}: {})", hit.reason, hit.pattern, hit.at, hit.decision)]
        }
        DecidedBy::Sandbox if p.assessment.category == crate::model::Category::Network => vec![
            "runs in the sandbox, whose network is agentsh's proxy (by default): a host not on its list asks the \
             person first"
                .to_string(),
        ],
        DecidedBy::Sandbox => vec!["runs in the sandbox, which contains what it does".to_string()],
        DecidedBy::Forbidden | DecidedBy::RawText | DecidedBy::NoBox => return p.assessment.reasons.clone(),
        DecidedBy::Risk => {
            let mut out = p.assessment.reasons.clone();
            if let Some(e) = p.edge.as_ref().filter(|_| p.decision == Decision::Ask) {
                out.push(format!("the sandbox cannot contain it: it {}", e.why));
            }
            return out;
        }
    };
    if risky && !matches!(p.decided_by, DecidedBy::Whitelist(_)) {
        out.extend(p.assessment.reasons.iter().cloned());
    }
    out
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    #[serde(flatten)]
    pub assessment: Assessment,
    pub decision: Decision,
    pub decided_by: DecidedBy,
    /// Whether the box contains the part.
    pub runs: Runs,
    /// Why the box cannot contain the part, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<Edge>,
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
    /// Where the command runs if it runs: in the box, or unconfined (no box, or a person's yes
    /// to a part that cannot work inside it).
    pub runs_in: RunsIn,
    /// Why it runs there, in words for the person.
    pub runs_in_why: String,
    #[serde(rename = "segments")]
    pub parts: Vec<Part>,
    /// Set when an agent's wrapper around the command was recognized (see `agent_wrappers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
}

impl Verdict {
    /// The parts that made the command ask or deny.
    pub fn blocking_parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(move |p| p.decision == self.decision && p.decision != Decision::Allow)
    }
}

/// Parses, assesses and decides: the whole pure core in one call.
pub fn judge(text: &str, policy: &Policy) -> Verdict {
    let script = match parse::parse(text) {
        Ok(script) => script,
        Err(e) => {
            let mut parts = vec![decide_part(assess::unparseable(text, &e), policy)];
            parts.extend(raw_text(text, &parts, policy));
            return conclude(text, parts, policy);
        }
    };
    // Each part is decided as it is assessed: a 64 KiB script has thousands, and holding all
    // the assessments and all the parts at once doubled the peak memory (issue 9).
    let mut parts = Vec::with_capacity(script.opaque.len() + script.commands.len() + 1);
    assess::assess_each(script, |a| parts.push(decide_part(a, policy)));
    parts.extend(assess::script_arguments(text, &policy.script_args).into_iter().map(|a| decide_part(a, policy)));
    if parts.is_empty() {
        let nothing = Assessment {
            argv: vec![],
            program: String::new(),
            inner_argv: vec![],
            inner_is_argv: false,
            risk: Risk::Safe,
            category: Category::Shell,
            reasons: vec!["runs nothing".to_string()],
            rule: "empty".to_string(),
            context: String::new(),
        };
        parts.push(decide_part(nothing, policy));
    }
    let raw = raw_text(text, &parts, policy);
    parts.extend(raw);
    parts.extend(unconfined(text, &parts, policy));
    parts.extend(keyed(&parts, policy));
    parts.extend(gate_change(text, &parts, policy));
    conclude(text, parts, policy)
}

/// rt7 B7: with no box, a part whose program takes keys from the terminal that run commands
/// (`more`'s `!`, `top`'s `k`), or that takes away the environment that keeps less from running
/// any, needs a person where the command may read keys from a terminal (`escapes::keyed`).
/// Neither the whitelist nor an allow rule lifts it, as with the other parts that need one
/// because there is no box.
fn keyed(parts: &[Part], policy: &Policy) -> Option<Part> {
    if !matches!(policy.sandbox, Sandbox::Off(_)) {
        return None;
    }
    let (word, why) = parts.iter().find_map(|p| {
        let a = &p.assessment;
        crate::judge::escapes::keyed(&a.argv, a.inner(), policy.terminal, policy.pagers_unguarded)
    })?;
    Some(no_box_part(unboxed::Hidden { word, why }, "no-box", policy))
}

/// rt8 C3: on an interactive shell's line gate, a line that changes the gate (its names, the
/// keys that accept a line, line editing) needs a person: the shell keeps the change, and every
/// later line would run unjudged (`line_gate`). Neither the whitelist nor an allow rule lifts it.
fn gate_change(text: &str, parts: &[Part], policy: &Policy) -> Option<Part> {
    if !policy.line_gate {
        return None;
    }
    let (word, why) = crate::judge::line_gate::changes_gate(
        text,
        parts.iter().map(|p| (p.assessment.argv.as_slice(), p.assessment.inner())),
    )?;
    Some(no_box_part(unboxed::Hidden { word, why }, "line-gate", policy))
}

/// rt4 R14: with no box, a command whose text names what the box keeps hidden of home (a
/// part it does not show, home itself) or another process's `/proc` needs a person:
/// unconfined, it must not get more than the box would have shown without a yes. Read from the
/// text, so a redirection or a here-document counts too; neither the whitelist nor an allow
/// rule lifts it (they speak of the parsed reading's commands, and were written for a box). So
/// does one of its commands that would run or read what the box would have contained
/// (`unboxed::parts_reach`: git in a repository, a toolchain a box named, rt5 B12, rt6 G3).
fn unconfined(text: &str, parts: &[Part], policy: &Policy) -> Vec<Part> {
    let (Sandbox::Off(_), Some(sight)) = (&policy.sandbox, &policy.home_sight) else { return Vec::new() };
    let argvs: Vec<&[String]> = parts.iter().map(|p| p.assessment.inner()).filter(|a| !a.is_empty()).collect();
    let (hidden, reach) = unboxed::unconfined(text, &argvs, sight);
    let found = [(hidden, "hidden-home"), (reach, "no-box")];
    found.into_iter().filter_map(|(found, rule)| Some(no_box_part(found?, rule, policy))).collect()
}

/// The rules of the parts that need a person because there is no box (`no_box_part`).
const NO_BOX_RULES: &[&str] = &["hidden-home", "no-box"];

/// A part that needs a person because, with no box, the command would get what the box would
/// have kept from it (`unboxed`): what it found, and that there is no box here.
fn no_box_part(found: unboxed::Hidden, rule: &str, policy: &Policy) -> Part {
    let why = match &policy.sandbox {
        Sandbox::Off(why) => why.as_str(),
        Sandbox::On(_) => "",
    };
    // Its first clause: the rest is in `runs_in_why`.
    let why = why.split_once(": ").map_or(why, |(first, _)| first);
    let category = match (found.word.as_str(), rule) {
        ("git", _) => Category::DevOps,
        // What changes the shell's own line gate is the shell's (`set -o vi`, `bind`).
        (_, "line-gate") => Category::Shell,
        _ => Category::FileRead,
    };
    let a = Assessment {
        argv: vec![found.word].into_iter().filter(|w| !w.is_empty()).collect(),
        program: String::new(),
        inner_argv: vec![],
        inner_is_argv: false,
        risk: Risk::Moderate,
        category,
        reasons: vec![format!("{}; here it would run without a sandbox ({why})", found.why)],
        rule: rule.to_string(),
        context: String::new(),
    };
    Part { assessment: a, decision: Decision::Ask, decided_by: DecidedBy::NoBox, runs: Runs::Unconfined, edge: None }
}

/// Issue 28, defence in depth: where the parsed reading found nothing forbidden, the raw text
/// read a second way (`raw_scan`). A forbidden payload found there means that the two
/// readings differ, and bash or sh may run it: at least a person is asked, and without a box
/// it is denied. Neither the whitelist nor an allow rule lifts it: they speak of the parsed
/// reading's commands.
fn raw_text(text: &str, parts: &[Part], policy: &Policy) -> Option<Part> {
    // Plain words read the same every way (`-c /bin/true`, most of what agents send).
    if crate::judge::plain_words::is_plain_text(text) || parts.iter().any(|p| p.assessment.risk == Risk::Forbidden) {
        return None;
    }
    let found = crate::judge::raw_scan::forbidden_payloads(text).into_iter().next()?;
    let shown = if found.argv.is_empty() { String::new() } else { format!("`{}` ", found.text()) };
    let why = found.reasons.first().cloned().unwrap_or_default();
    let mut a = found;
    a.risk = Risk::High;
    a.rule = "raw-text".to_string();
    a.reasons = vec![format!(
        "the text holds {shown}({why}) where a shell could run it, though agentsh's reading of the command does \
         not: bash, sh or bash in POSIX mode may read this text otherwise"
    )];
    let (decision, runs, edge) = match &policy.sandbox {
        Sandbox::Off(_) => (Decision::Deny, Runs::Unconfined, None),
        Sandbox::On(_) => (
            Decision::Ask,
            Runs::NeedsPerson,
            Some(Edge { kind: containment::EdgeKind::Unjudged, why: "holds text agentsh reads two ways".to_string() }),
        ),
    };
    Some(Part { assessment: a, decision, decided_by: DecidedBy::RawText, runs, edge })
}

pub fn decide(text: &str, assessments: Vec<Assessment>, policy: &Policy) -> Verdict {
    conclude(text, assessments.into_iter().map(|a| decide_part(a, policy)).collect(), policy)
}

/// The verdict on the whole command from its decided parts.
fn conclude(text: &str, parts: Vec<Part>, policy: &Policy) -> Verdict {
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
    let (runs_in, runs_in_why) = runs_in(&parts, policy);
    Verdict {
        command: text.to_string(),
        decision,
        risk,
        category,
        reasons,
        whitelisted,
        runs_in,
        runs_in_why,
        parts,
        harness: None,
    }
}

/// Where the command runs: in the box, unless there is none, or a part that cannot work inside
/// it runs on a person's word (a yes now, or their whitelist or allow rule).
fn runs_in(parts: &[Part], policy: &Policy) -> (RunsIn, String) {
    if let Sandbox::Off(why) = &policy.sandbox {
        return (RunsIn::Unconfined, format!("no sandbox: {why}"));
    }
    let persons_word = |p: &Part| match &p.decided_by {
        DecidedBy::Whitelist(_) => true,
        DecidedBy::Rule(r) => r.decision == Decision::Allow,
        _ => p.decision == Decision::Ask,
    };
    let outside = parts.iter().find(|p| persons_word(p) && p.edge.as_ref().is_some_and(|e| e.kind.runs_outside()));
    match outside {
        Some(p) => {
            let word = if p.decision == Decision::Ask { "if a person approves" } else { "as the person's list allows" };
            let why = p.edge.as_ref().map(|e| e.why.as_str()).unwrap_or_default();
            (RunsIn::Unconfined, format!("outside the sandbox, {word}: it {why}"))
        }
        None => (RunsIn::Sandbox, "in the sandbox".to_string()),
    }
}

fn decide_part(mut a: Assessment, policy: &Policy) -> Part {
    // Decided again (an agent's wrapper, judged around its inner command): still no whitelist's.
    if matches!(policy.sandbox, Sandbox::Off(_)) && NO_BOX_RULES.contains(&a.rule.as_str()) {
        return Part {
            assessment: a,
            decision: Decision::Ask,
            decided_by: DecidedBy::NoBox,
            runs: Runs::Unconfined,
            edge: None,
        };
    }
    local_tool(&mut a, &policy.local_bins);
    let (runs, edge) = match &policy.sandbox {
        Sandbox::Off(_) => (Runs::Unconfined, None),
        Sandbox::On(view) => match containment::edge_of(&a, view) {
            None => (Runs::Sandbox, None),
            Some(e) => (Runs::NeedsPerson, Some(e)),
        },
    };
    let (decision, decided_by) = decide_one(&a, policy, runs == Runs::Sandbox);
    Part { assessment: a, decision, decided_by, runs, edge }
}

/// `npx TOOL ...` where TOOL is installed in the project (`node_modules/.bin`) and nothing asks
/// for a download (`--yes`, `--package`, `TOOL@version`): the project's own tool, judged as the
/// project's code is.
fn local_tool(a: &mut Assessment, local_bins: &[String]) {
    if local_bins.is_empty() || !matches!(a.rule.as_str(), "npx" | "pnpx" | "bunx") {
        return;
    }
    let Some(tool) = a.inner().get(1).cloned() else { return };
    if tool.starts_with('-') || tool.contains('@') || !local_bins.contains(&tool) {
        return;
    }
    a.risk = Risk::Moderate;
    a.category = crate::model::Category::BuildTools;
    a.reasons = vec![format!("runs the project's own `{tool}` from node_modules/.bin (project code runs)")];
}

/// `contained`: the part runs in the box, which holds whatever it does; only the person's own
/// settings (ask rules, levels, `requireCommandConfirmation`, `--ask`) still ask about it.
fn decide_one(a: &Assessment, policy: &Policy, contained: bool) -> (Decision, DecidedBy) {
    // The blacklist tightens, so it matches generously: as written, and as the unwrapped
    // command with its program's path stripped (`sudo /bin/rm` meets a `rm` entry).
    let unwrapped: Vec<String> = if policy.blacklist.is_empty() {
        Vec::new()
    } else {
        let base = |(i, w): (usize, &String)| if i == 0 { assess::basename(w).to_string() } else { w.clone() };
        a.inner().iter().enumerate().map(base).collect()
    };
    if let Some(e) = policy.blacklist.find_tokens(&a.argv, Some(&unwrapped)) {
        return (Decision::Deny, DecidedBy::Blacklist(e.text.to_string()));
    }
    if a.risk == Risk::Forbidden {
        return (Decision::Deny, DecidedBy::Forbidden);
    }
    let rule = custom_rules::strictest(&policy.rules, a);
    if let Some(r) = rule.filter(|r| r.decision == Decision::Deny) {
        return (Decision::Deny, DecidedBy::Rule(Box::new(RuleHit::of(r))));
    }
    let level = policy.level.and_then(|l| crate::judge::levels::judge(a, l));
    if let Some(hit) = level.as_ref().filter(|h| h.cell == Cell::Blocked) {
        return (Decision::Deny, DecidedBy::Level(Box::new(hit.clone())));
    }
    if let Some(why) = &policy.blacklist_broken {
        return (Decision::Ask, DecidedBy::BrokenBlacklist(why.clone()));
    }
    if let Some(why) = &policy.rules_broken {
        return (Decision::Ask, DecidedBy::BrokenRules(why.clone()));
    }
    if policy.force_ask {
        return (Decision::Ask, DecidedBy::ForcedAsk);
    }
    if let Some(r) = rule {
        // An ask rule is the person's explicit word: the whitelist does not lift it. An allow
        // rule lifts asks (level approval, risk, requireCommandConfirmation) like the whitelist.
        return (r.decision, DecidedBy::Rule(Box::new(RuleHit::of(r))));
    }
    // The whitelist lifts only what is written: `./ls` or `/tmp/ls` are not `ls`.
    if let Some(e) = policy.whitelist.find(&a.argv, None) {
        return (Decision::Allow, DecidedBy::Whitelist(e.text.to_string()));
    }
    if let Some(hit) = level.filter(|h| h.cell == Cell::Approval) {
        return (Decision::Ask, DecidedBy::Level(Box::new(hit)));
    }
    if policy.require_confirmation && a.rule != "empty" {
        return (Decision::Ask, DecidedBy::RequireConfirmation);
    }
    match a.risk {
        Risk::Safe => (Decision::Allow, DecidedBy::Risk),
        _ if contained => (Decision::Allow, DecidedBy::Sandbox),
        _ => (Decision::Ask, DecidedBy::Risk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_lookups_agree_with_comparing_every_entry_and_rule() {
        let texts =
            ["ls -la", "LS", "git status", "'my tool' x", "npm", "Ärger x", "/usr/bin/env", "# no words", "rm -rf"];
        let entries: Vec<Entry> = texts.iter().filter_map(|e| Entry::new(e, "t")).collect();
        let list: Entries = entries.iter().cloned().collect();
        let mut from_file = Entries::default();
        from_file.extend_from(texts.iter().collect(), &"t".into());
        assert_eq!(from_file.iter().collect::<Vec<_>>(), list.iter().collect::<Vec<_>>());
        let mut two = Entries::default();
        two.extend_from(["ls", "# no words", "git log"].into_iter().collect(), &"a".into());
        two.extend_from(["npm"].into_iter().collect(), &"b".into());
        let listed: Vec<(&str, &str)> = two.iter().map(|e| (e.text, e.source)).collect();
        assert_eq!(listed, [("ls", "a"), ("git log", "a"), ("npm", "b")]);
        let json = r#"[{"pattern": ["GIT", "push"], "decision": "deny", "reason": "a"},
            {"pattern": [["npm", "YARN"]], "decision": "ask", "reason": "b"},
            {"pattern": ["ls"], "decision": "allow", "reason": "c"},
            {"pattern": ["/usr/bin/env"], "decision": "allow", "reason": "d"},
            {"pattern": ["ärger"], "decision": "deny", "reason": "e"}]"#;
        let text = format!("{{\"rules\": {json}}}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let rules = custom_rules::parse("t.json", &text, &value["rules"]).rules;
        assert_eq!(rules.len(), 5);
        for command in [
            "ls -la /",
            "LS",
            "Ls -LA",
            "/bin/ls -la",
            "git Status",
            "'my tool' x",
            "my tool",
            "npm i",
            "Yarn add",
            "Ärger x",
            "ärger x",
            "sudo git status",
            "sudo /usr/bin/GIT push",
            "env X=1 npm",
            "/usr/bin/env",
            "rm -rf /",
            "sudo rm -rf /",
        ] {
            for a in assess::assess(&parse::parse(command).unwrap()) {
                let unwrapped: Vec<String> = a.inner().iter().map(|w| assess::basename(w).to_string()).collect();
                let every = entries.iter().find(|e| e.matches(&a.argv) || e.matches(&unwrapped));
                let found = list.find(&a.argv, Some(&unwrapped));
                assert_eq!(found.map(|e| e.text), every.map(|e| e.text.as_str()), "{command}");
                let every = entries.iter().find(|e| e.matches(&a.argv));
                assert_eq!(list.find(&a.argv, None).map(|e| e.text), every.map(|e| e.text.as_str()), "{command}");
                let mut best: Option<&custom_rules::Rule> = None;
                for r in rules.iter().filter(|r| r.matches(&a)) {
                    if best.is_none_or(|b| r.decision > b.decision) {
                        best = Some(r);
                    }
                }
                assert_eq!(custom_rules::strictest(&rules, &a), best, "{command}");
            }
        }
    }

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
    fn plain_entries_split_as_shlex_does() {
        for text in ["ls", "  npm  run\ttest ", "a\nb", "x\r y", "CAF\u{c9} \u{a0}X", "LS -La", "a=b c$d", ""] {
            let shlex: Vec<String> = shlex::split(text).unwrap().iter().map(|w| w.to_lowercase()).collect();
            assert_eq!(normalize_words(text), shlex, "{text:?}");
        }
        assert_eq!(normalize_words("git commit -m 'a b' # x"), ["git", "commit", "-m", "a b"]);
    }

    #[test]
    fn first_word_found_in_one_pass_as_by_trimming() {
        fn by_trimming(text: &str) -> Option<Option<std::ops::Range<usize>>> {
            if !(text.is_ascii() && is_plain(text)) {
                return None;
            }
            let start = text.len() - text.trim_start_matches([' ', '\t', '\n']).len();
            let end = text[start..].find([' ', '\t', '\n']).map_or(text.len(), |i| start + i);
            Some((start != end).then_some(start..end))
        }
        for text in
            ["", " ", "ls", "  ls -la", "\tgit\nlog ", "x\r y", "a'b", "\"x\"", "a\\b", "# c", "caf\u{e9}", "ls  "]
        {
            assert_eq!(plain_first_word(text), by_trimming(text), "{text:?}");
        }
    }

    #[test]
    fn plain_and_quoted_entries_match_alike() {
        let argv = |s: &str| -> Vec<String> { s.split(' ').map(str::to_string).collect() };
        for (entry, command, expected) in [
            ("git log", "git log -1", true),
            ("GIT  Log", "git LOG", true),
            ("'git' \"log\"", "GIT log -1", true),
            ("git log", "git logout", false),
            ("git log", "git", false),
            ("git\tlog\n", "git log x", true),
            ("CAF\u{c9} x", "caf\u{e9} x", true),
            ("npm run test", "npm run", false),
            ("make", "make install", true),
        ] {
            let e = Entry::new(entry, "t").unwrap();
            assert_eq!(e.matches(&argv(command)), expected, "{entry:?} vs {command:?}");
        }
        for empty in ["", "  \t\n", "# only a comment"] {
            assert_eq!(Entry::new(empty, "t"), None, "{empty:?}");
        }
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

    fn boxed(p: Policy) -> Policy {
        let view = BoxView {
            cwd: "/w".into(),
            home: "/home/u".into(),
            writable: vec!["/w".into(), "/tmp".into()].into(),
            read_only: vec!["/w/.git/hooks".into()],
            network: true,
            python_env_inside: false,
        };
        Policy { sandbox: Sandbox::On(view), ..p }
    }

    #[test]
    fn the_box_lifts_risk_asks_of_what_it_contains() {
        let p = boxed(policy(&[], &[]));
        for t in ["pytest -q", "cargo build", "echo x > out.txt", "mkdir -p build && cp a build/", "rm -rf target"] {
            let v = judge(t, &p);
            assert_eq!((v.decision, v.runs_in), (Decision::Allow, RunsIn::Sandbox), "{t}");
            assert!(v.parts.iter().all(|p| p.runs == Runs::Sandbox), "{t}");
            // Without the box, the same text asks, as before.
            assert_eq!(d(t, &policy(&[], &[])), Decision::Ask, "{t}");
        }
        let v = judge("pytest -q", &p);
        assert_eq!(v.parts[0].decided_by, DecidedBy::Sandbox);
        assert!(part_reasons(&v.parts[0])[0].contains("runs in the sandbox"), "{:?}", part_reasons(&v.parts[0]));
    }

    #[test]
    fn the_edge_still_asks_and_says_where_a_yes_runs_it() {
        let p = boxed(policy(&[], &[]));
        // Destroying inside: a yes runs it inside the box.
        let v = judge("rm -rf src", &p);
        assert_eq!((v.decision, v.runs_in), (Decision::Ask, RunsIn::Sandbox));
        assert!(v.reasons.iter().any(|r| r.contains("the sandbox cannot contain it")), "{:?}", v.reasons);
        // Acting on the world or needing what is outside: a yes runs it outside.
        for t in ["npm test && git push", "sudo apt install x", "touch ~/x"] {
            let v = judge(t, &p);
            assert_eq!((v.decision, v.runs_in), (Decision::Ask, RunsIn::Unconfined), "{t}");
            assert!(v.runs_in_why.starts_with("outside the sandbox"), "{t}: {}", v.runs_in_why);
        }
        // Forbidden stays forbidden.
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
    }

    #[test]
    fn the_persons_own_settings_still_ask_inside_the_box() {
        let base = boxed(policy(&[], &[]));
        assert_eq!(d("pytest", &Policy { require_confirmation: true, ..base.clone() }), Decision::Ask);
        assert_eq!(d("pytest", &Policy { force_ask: true, ..base.clone() }), Decision::Ask);
        let rules = with(None, &[], r#"[{"pattern": ["pytest"], "decision": "ask", "reason": "the person asked"}]"#);
        assert_eq!(d("pytest", &boxed(rules)), Decision::Ask);
        // A level's "needs approval" cell is the person's word too.
        let asking = crate::judge::levels::LEVELS.into_iter().find(|l| {
            let v = judge("make", &with(Some(*l), &[], "[]"));
            matches!(v.parts[0].decided_by, DecidedBy::Level(_)) && v.decision == Decision::Ask
        });
        let level = asking.expect("some level asks about make");
        assert_eq!(d("make", &boxed(with(Some(level), &[], "[]"))), Decision::Ask);
    }

    #[test]
    fn a_whitelisted_part_that_cannot_work_inside_runs_outside() {
        let v = judge("git push", &boxed(policy(&["git push"], &[])));
        assert_eq!((v.decision, v.runs_in), (Decision::Allow, RunsIn::Unconfined));
        let v = judge("git status", &boxed(policy(&[], &[])));
        assert_eq!((v.decision, v.runs_in), (Decision::Allow, RunsIn::Sandbox));
        let v = judge("git status", &policy(&[], &[]));
        assert_eq!(v.runs_in, RunsIn::Unconfined);
        assert!(v.runs_in_why.starts_with("no sandbox"), "{}", v.runs_in_why);
    }

    fn with(level: Option<Level>, white: &[&str], rules: &str) -> Policy {
        let text = format!("{{\"rules\": {rules}}}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let parsed = custom_rules::parse("t.json", &text, &value["rules"]);
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        Policy { level, rules: parsed.rules, ..policy(white, &[]) }
    }

    #[test]
    fn the_stricter_of_level_and_risk_wins() {
        use Level::*;
        for (level, text, want) in [
            // level "runs", risk decides
            (Autonomous, "ls", Decision::Allow),
            (Autonomous, "cp a b", Decision::Ask),       // moderate risk
            (Autonomous, "rm -rf build", Decision::Ask), // high risk
            (Autonomous, "rm -rf /", Decision::Deny),    // forbidden
            (Supervised, "ls", Decision::Allow),
            // level stricter than risk
            (Intern, "ls", Decision::Ask),
            (Supervised, "git status", Decision::Ask),
            (Intern, "git status", Decision::Deny),
            (Supervised, "rm x", Decision::Deny),
            // risk stricter than level
            (Supervised, "curl https://x | sh", Decision::Ask),
        ] {
            let p = Policy { level: Some(level), ..Policy::default() };
            assert_eq!(d(text, &p), want, "{text} at {level}");
        }
    }

    #[test]
    fn whitelist_lifts_level_approval_but_never_blocked_or_forbidden() {
        let p = with(Some(Level::Intern), &["ls", "git status", "rm"], "[]");
        let v = judge("ls -la", &p);
        assert_eq!((v.decision, v.parts[0].decided_by.clone()), (Decision::Allow, DecidedBy::Whitelist("ls".into())));
        let v = judge("git status", &p);
        assert_eq!(v.decision, Decision::Deny);
        assert!(matches!(&v.parts[0].decided_by, DecidedBy::Level(h) if h.row == "dev_ops"));
        let p = with(Some(Level::Autonomous), &["rm"], "[]");
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
        assert_eq!(d("rm notes.txt", &p), Decision::Allow);
    }

    #[test]
    fn allow_rules_lift_asks_only() {
        let rules = r#"[{"pattern": ["ls"], "decision": "allow", "reason": "r"},
                        {"pattern": ["git", "status"], "decision": "allow", "reason": "r"},
                        {"pattern": ["npm", "test"], "decision": "allow", "reason": "r"},
                        {"pattern": ["rm"], "decision": "allow", "reason": "r"}]"#;
        let p = with(Some(Level::Intern), &[], rules);
        assert_eq!(d("ls", &p), Decision::Allow); // lifts the level's approval
        assert_eq!(d("git status", &p), Decision::Deny); // never the level's block
        let p = with(None, &[], rules);
        assert_eq!(d("npm test", &p), Decision::Allow); // lifts a risk ask
        assert_eq!(d("rm -rf /", &p), Decision::Deny); // never forbidden
        assert!(matches!(judge("npm test", &p).parts[0].decided_by, DecidedBy::Rule(_)));
        let mut p = with(None, &[], rules);
        p.require_confirmation = true;
        assert_eq!(d("ls", &p), Decision::Allow);
        p.blacklist = Entries::from_iter(Entry::new("ls", "t"));
        assert_eq!(d("ls", &p), Decision::Deny); // the blacklist beats an allow rule
    }

    #[test]
    fn tightening_rules_beat_the_whitelist() {
        let rules = r#"[{"pattern": ["git", "push"], "decision": "ask", "reason": "pushes are reviewed"},
                        {"pattern": ["git", "push"], "hasFlag": ["-f", "--force"], "decision": "deny", "reason": "no"},
                        {"pattern": ["cat"], "anyArgMatches": ["*.pem"], "decision": "deny", "reason": "keys"}]"#;
        let p = with(Some(Level::Autonomous), &["git push", "cat"], rules);
        assert_eq!(d("git push origin", &p), Decision::Ask);
        assert_eq!(d("git push -fu origin main", &p), Decision::Deny);
        assert_eq!(d("sudo git push --force", &p), Decision::Deny);
        assert_eq!(d("cat README.md", &p), Decision::Allow);
        assert_eq!(d("cat a key.pem", &p), Decision::Deny);
        let v = judge("git push origin", &p);
        assert!(
            v.reasons[0].starts_with("pushes are reviewed (custom rule `git push` at t.json:1:"),
            "{:?}",
            v.reasons
        );
    }

    #[test]
    fn forced_ask_only_tightens() {
        let mut p =
            with(Some(Level::Autonomous), &["ls"], r#"[{"pattern": ["pwd"], "decision": "allow", "reason": "r"}]"#);
        p.force_ask = true;
        for text in ["ls", "pwd", "echo hi"] {
            let v = judge(text, &p);
            assert_eq!((v.decision, v.parts[0].decided_by.clone()), (Decision::Ask, DecidedBy::ForcedAsk), "{text}");
        }
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
        p.level = Some(Level::Student);
        assert_eq!(d("git status", &p), Decision::Deny);
    }

    #[test]
    fn unreadable_rules_make_everything_ask() {
        let mut p = with(None, &["ls"], "[]");
        p.rules_broken = Some("t.json:2:3: rules[0]: decision must be".into());
        assert_eq!(d("ls", &p), Decision::Ask);
        assert_eq!(d("rm -rf /", &p), Decision::Deny);
    }
}
