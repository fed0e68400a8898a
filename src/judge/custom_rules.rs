//! A person's own rules (config key `rules`): token-prefix patterns with alternatives, optional
//! conditions, a decision and a reason. Raw JSON -> validated rules, with `file:line:col` for
//! every problem; matching against an assessed part. Pure: it reads no files.
//!
//! When in doubt, the stricter reading wins:
//! - a rule agentsh cannot read is ignored when it was an `allow` (ignoring it only tightens),
//!   and otherwise makes every command need a person, as an unreadable blacklist does;
//! - a rule whose `match`/`notMatch` examples fail is reported and ignored (the issue's rule);
//! - `deny` and `ask` rules match generously (through wrappers, paths, options before the
//!   subcommand: `sudo /usr/bin/git -C x push` meets `git push`); `allow` rules match only the
//!   command as written (`git status` does not allow `sudo git status`).

use crate::judge::assess::{self, Args, Assessment};
use crate::judge::parse::{self, Word};
use crate::model::Decision;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// One validated rule. It reads as its [`Body`] (`rule.pattern`, `rule.reason`, ...), which a
/// rule read from a config file on the way to judging a command may build only when first
/// needed: of 1,000 rules, the few whose program the command names (see `Deferred`).
#[derive(Clone, Debug)]
pub struct Rule {
    pub decision: Decision,
    /// `decide::word_key` of the program the rule names, when it names one (no alternatives):
    /// rules for other programs are passed over without reading their patterns.
    program_key: Option<u32>,
    body: std::sync::OnceLock<Box<Body>>,
    /// Where to build the body from, when it was not built at once.
    deferred: Option<Deferred>,
}

/// What a rule says besides its decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    /// Tokens; each is a list of alternatives (lowercase).
    pub pattern: Vec<Vec<String>>,
    pub reason: String,
    /// Any of these flags present (`-f` also inside `-fu`; `--force` also as `--force=x`).
    pub has_flag: Vec<String>,
    /// Any argument matches any of these globs (`*`, `?`, `[a-z]`).
    pub any_arg: Vec<String>,
    /// `file:line:col` of the rule.
    pub at: String,
}

/// A validated rule's place in its config file: building 1,000 rules (about ten allocations
/// each, and their memory to fault in) was a third of a command's cost with a big config
/// (docs/BENCHMARKS.md), and a command names a handful of programs.
#[derive(Clone, Debug)]
struct Deferred {
    text: std::sync::Arc<String>,
    name: std::sync::Arc<str>,
    /// The rule's raw JSON: `text[start..end]`.
    start: usize,
    end: usize,
}

impl Rule {
    /// Whether the rule was kept as its place in the file, to be built when first needed.
    pub fn is_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Whether the rule is deferred and not built yet.
    pub fn is_waiting(&self) -> bool {
        self.deferred.is_some() && self.body.get().is_none()
    }
}

impl std::ops::Deref for Rule {
    type Target = Body;
    fn deref(&self) -> &Body {
        self.body.get_or_init(|| Box::new(self.build_deferred()))
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.decision == other.decision && self.program_key == other.program_key && **self == **other
    }
}

impl Eq for Rule {}

/// As a config file writes it (`agentsh policy --json`).
impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Rule", 6)?;
        out.serialize_field("pattern", &self.pattern)?;
        out.serialize_field("decision", &self.decision)?;
        out.serialize_field("reason", &self.reason)?;
        if self.has_flag.is_empty() {
            out.skip_field("hasFlag")?;
        } else {
            out.serialize_field("hasFlag", &self.has_flag)?;
        }
        if self.any_arg.is_empty() {
            out.skip_field("anyArgMatches")?;
        } else {
            out.serialize_field("anyArgMatches", &self.any_arg)?;
        }
        out.serialize_field("at", &self.at)?;
        out.end()
    }
}

/// The result of reading a `rules` value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub rules: Vec<Rule>,
    pub warnings: Vec<String>,
    /// Set when a rule that could tighten cannot be read.
    pub broken: Option<String>,
}

const FIELDS: &[&str] = &["pattern", "decision", "reason", "hasFlag", "anyArgMatches", "match", "notMatch"];

impl Rule {
    fn built(decision: Decision, body: Body) -> Rule {
        let program_key = match &body.pattern[0][..] {
            [only] => Some(crate::judge::decide::word_key(only)),
            _ => None,
        };
        Rule { decision, program_key, body: std::sync::OnceLock::from(Box::new(body)), deferred: None }
    }

    /// The body of a deferred rule, read again from its place in the file. The same text was
    /// read and checked when the file was loaded, so this cannot fail; if it somehow did, the
    /// judging thread's panic becomes a refusal (`decide::bounded`).
    fn build_deferred(&self) -> Body {
        let d = self.deferred.as_ref().expect("a rule without a body has a place in its file");
        let typed: Typed = serde_json::from_str(&d.text[d.start..d.end]).expect("read once already");
        let at = crate::text::line_index::LineIndex::new(&d.text).at(&d.name, d.start);
        let (rule, _, _) = build(self.decision, typed.spec(), Vec::new(), &at).expect("checked once already");
        (*rule).clone()
    }

    /// `git [push|fetch] --force|-f`, as a person would read it.
    pub fn pattern_text(&self) -> String {
        let mut out: Vec<String> = self
            .pattern
            .iter()
            .map(|alts| if alts.len() == 1 { alts[0].clone() } else { format!("[{}]", alts.join("|")) })
            .collect();
        if !self.has_flag.is_empty() {
            out.push(format!("(with {})", self.has_flag.join(" or ")));
        }
        if !self.any_arg.is_empty() {
            out.push(format!("(an argument like {})", self.any_arg.join(" or ")));
        }
        out.join(" ")
    }

    /// True when the rule applies to this part.
    pub fn matches(&self, a: &Assessment) -> bool {
        if a.argv.is_empty() {
            return false;
        }
        if self.decision == Decision::Allow {
            // Loosening: the command as written, word for word.
            return self.literal_prefix(&a.argv, false) && self.conditions_hold(&a.argv);
        }
        // Both checks below read the program by its basename, so the unwrapped argv needs no
        // copy with its path stripped (a copy per rule per part was most of judging's cost).
        [&a.argv[..], a.inner()].into_iter().filter(|argv| !argv.is_empty()).any(|argv| {
            // Both prefixes start with the program: most rules are ruled out by it, once.
            self.token_matches(0, assess::basename(&argv[0]))
                && (self.literal_prefix(argv, true) || self.positional_prefix(argv))
                && self.conditions_hold(argv)
        })
    }

    fn token_matches(&self, i: usize, word: &str) -> bool {
        self.pattern[i].iter().any(|alt| alt.eq_ignore_ascii_case(word))
    }

    fn literal_prefix(&self, argv: &[String], strip_path: bool) -> bool {
        self.pattern.len() <= argv.len()
            && argv.iter().take(self.pattern.len()).enumerate().all(|(i, w)| {
                let w = if i == 0 && strip_path { assess::basename(w) } else { w };
                self.token_matches(i, w)
            })
    }

    /// `git -C dir push` meets `git push`: the words after the program with options (and the
    /// values of the program's known value options) left out.
    fn positional_prefix(&self, argv: &[String]) -> bool {
        if !self.token_matches(0, assess::basename(&argv[0])) {
            return false;
        }
        let words: Vec<Word> = argv[1..].iter().map(|w| Word::literal(w)).collect();
        let name = assess::basename(&argv[0]);
        let value_opts = crate::judge::rules::find_program(name).map(|p| p.value_opts).unwrap_or(&[]);
        let args = Args::new(name, &words, value_opts, false, false);
        let rest = &self.pattern[1..];
        rest.len() <= args.positionals.len()
            && args.positionals.iter().enumerate().take(rest.len()).all(|(i, w)| self.token_matches(i + 1, w))
    }

    fn conditions_hold(&self, argv: &[String]) -> bool {
        let words: Vec<Word> = argv[1..].iter().map(|w| Word::literal(w)).collect();
        let args = Args::new(assess::basename(&argv[0]), &words, &[], false, false);
        let flag_ok = self.has_flag.is_empty() || self.has_flag.iter().any(|f| args.has_flag(f));
        let arg_ok =
            self.any_arg.is_empty() || args.all.iter().any(|w| self.any_arg.iter().any(|g| glob_matches(g, w)));
        flag_ok && arg_ok
    }
}

/// The first rule among the strictest that match (deny beats ask beats allow).
pub fn strictest<'r>(rules: &'r [Rule], a: &Assessment) -> Option<&'r Rule> {
    // Every program name a rule is compared with (`matches`): as written (allow rules), and
    // by basename as written and unwrapped (deny and ask rules).
    let key = |argv: &[String], base: bool| {
        argv.first().map(|w| crate::judge::decide::word_key(if base { assess::basename(w) } else { w }))
    };
    let names = [key(&a.argv, false), key(&a.argv, true), key(a.inner(), true)];
    let mut best: Option<&Rule> = None;
    for r in rules.iter().filter(|r| r.program_key.is_none_or(|k| names.contains(&Some(k))) && r.matches(a)) {
        if best.is_none_or(|b| r.decision > b.decision) {
            best = Some(r);
        }
    }
    best
}

/// Reads the `rules` value of a config file. `name` and `text` locate problems.
pub fn parse(name: &str, text: &str, value: &Value) -> Parsed {
    let mut out = Parsed::default();
    let mut lines = crate::text::line_index::LineIndex::new(text);
    let key = text.find("\"rules\"");
    let key_at = format!("{name}:{}", lines.line_col(key.unwrap_or(0)));
    let Value::Array(items) = value else {
        let why = format!("{key_at}: rules must be a list of rules");
        out.warnings.push(format!("{why}; every command needs a person until it is fixed"));
        out.broken = Some(why);
        return out;
    };
    let places = key.map(|k| element_offsets(text, k)).unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        let at = places.get(i).map(|o| lines.at(name, *o)).unwrap_or_else(|| key_at.clone());
        let rule = spec_of_value(item).and_then(|(decision, spec, notes)| build(decision, spec, notes, &at));
        add(&mut out, i, &at, rule);
    }
    out
}

/// [`parse()`] for a `rules` list read as raw JSON text per rule (`config_fast`), with exactly its
/// result, or `None` when a rule is not of the plain typed shape (a value of the wrong JSON
/// type, an unknown or repeated field), so the caller takes the `Value` path and its messages.
/// Reading 1,000 rules through `serde_json::Value` maps was a fifth of a command's cost with a
/// big config (docs/BENCHMARKS.md). Each rule's raw text lies inside `text`, which locates it.
///
/// With `shared` (the same text, kept for later), a rule that names one program and has no
/// examples is checked now and built only when a command names its program (`Deferred`).
pub fn parse_raw(
    name: &str,
    text: &str,
    items: &[&serde_json::value::RawValue],
    shared: Option<&std::sync::Arc<String>>,
) -> Option<Parsed> {
    let mut out = Parsed { rules: Vec::with_capacity(items.len()), ..Parsed::default() };
    let mut lines = crate::text::line_index::LineIndex::new(text);
    // Offsets are into `text`, so the kept text must be that very buffer.
    let shared = shared.filter(|t| std::ptr::eq(t.as_str(), text)).map(|t| (t, std::sync::Arc::<str>::from(name)));
    for (i, raw) in items.iter().enumerate() {
        let typed: Typed = serde_json::from_str(raw.get()).ok()?;
        let offset = (raw.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize).filter(|o| *o <= text.len())?;
        let decision = decision_named(&typed.decision);
        let spec = typed.spec();
        if let (Some(d), Some((text, name)), Some(key)) = (decision, &shared, program_key_of(&spec))
            && spec.examples.is_empty()
        {
            let mut at = || lines.at(name, offset);
            match checked(d, &spec) {
                Ok(notes) => {
                    let label = if notes.is_empty() { String::new() } else { format!("{}: rules[{i}]", at()) };
                    out.warnings.extend(notes.into_iter().map(|n| format!("{label}: {n}")));
                    let end = offset + raw.get().len();
                    let deferred = Deferred { text: (*text).clone(), name: name.clone(), start: offset, end };
                    out.rules.push(Rule {
                        decision: d,
                        program_key: Some(key),
                        body: std::sync::OnceLock::new(),
                        deferred: Some(deferred),
                    });
                }
                Err(why) => add(&mut out, i, &at(), Err(why)),
            }
            continue;
        }
        let at = lines.at(name, offset);
        let rule = match decision {
            Some(d) => build(d, spec, Vec::new(), &at),
            None => Err((None, BAD_DECISION.to_string())),
        };
        add(&mut out, i, &at, rule);
    }
    Some(out)
}

/// The key `Rule::built` gives a rule with this pattern: of its program, when it names one.
fn program_key_of(spec: &Spec) -> Option<u32> {
    match &spec.pattern.first()?[..] {
        // `word_key` folds ASCII case as `lowercase` would; other letters are lowercased first.
        [only] if only.is_ascii() => Some(crate::judge::decide::word_key(only)),
        [only] => Some(crate::judge::decide::word_key(&only.to_lowercase())),
        _ => None,
    }
}

/// Adds one rule, or the warning for why it cannot be used, to `out`.
fn add(out: &mut Parsed, i: usize, at: &str, rule: Result<ReadRule, Unreadable>) {
    let label = || format!("{at}: rules[{i}]");
    match rule {
        Ok((rule, examples, notes)) => {
            for n in notes {
                out.warnings.push(format!("{}: {n}", label()));
            }
            match check_examples(&rule, &examples) {
                Ok(()) => out.rules.push(rule),
                Err(why) => {
                    out.warnings.push(format!("{} ({}): {why}; this rule is ignored", label(), rule.pattern_text()))
                }
            }
        }
        Err((Some(Decision::Allow), why)) => {
            out.warnings.push(format!("{}: {why}; this allow rule is ignored", label()))
        }
        Err((_, why)) => {
            out.warnings.push(format!("{}: {why}; every command needs a person until it is fixed", label()));
            out.broken.get_or_insert(format!("{}: {why}", label()));
        }
    }
}

/// Example commands: (text, must match).
type Examples = Vec<(String, bool)>;
/// A readable rule, its examples and notes for the person.
type ReadRule = (Rule, Examples, Vec<String>);
/// Why a rule cannot be read, with its decision when that much could be read.
type Unreadable = (Option<Decision>, String);

const BAD_DECISION: &str = "decision must be \"allow\", \"ask\" or \"deny\"";

fn decision_named(name: &str) -> Option<Decision> {
    match name {
        "allow" => Some(Decision::Allow),
        "ask" => Some(Decision::Ask),
        "deny" => Some(Decision::Deny),
        _ => None,
    }
}

/// A rule as written, its JSON types checked: what both readings hand to [`build`].
struct Spec<'a> {
    /// Each token's alternatives.
    pattern: Vec<Vec<Cow<'a, str>>>,
    has_flag: Vec<Cow<'a, str>>,
    any_arg: Vec<Cow<'a, str>>,
    /// `None` when missing or not a string.
    reason: Option<Cow<'a, str>>,
    examples: Vec<(Cow<'a, str>, bool)>,
}

/// The typed reading of one rule (`parse_raw`): any other shape fails it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Typed<'a> {
    #[serde(borrow)]
    decision: Cow<'a, str>,
    #[serde(borrow)]
    pattern: Vec<Strings<'a>>,
    #[serde(borrow, default, rename = "hasFlag")]
    has_flag: Strings<'a>,
    #[serde(borrow, default, rename = "anyArgMatches")]
    any_arg: Strings<'a>,
    #[serde(borrow, default)]
    reason: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "match")]
    matches: Strings<'a>,
    #[serde(borrow, default, rename = "notMatch")]
    not_matches: Strings<'a>,
}

impl<'a> Typed<'a> {
    fn spec(self) -> Spec<'a> {
        let Typed { decision: _, pattern, has_flag, any_arg, reason, matches, not_matches } = self;
        let mut examples: Vec<(Cow<str>, bool)> = matches.0.into_iter().map(|e| (e, true)).collect();
        examples.extend(not_matches.0.into_iter().map(|e| (e, false)));
        Spec {
            pattern: pattern.into_iter().map(|alts| alts.0).collect(),
            has_flag: has_flag.0,
            any_arg: any_arg.0,
            reason,
            examples,
        }
    }
}

/// A string or a list of strings, borrowed from the file where no escapes were written.
#[derive(Default)]
struct Strings<'a>(Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Strings<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StringsVisitor)
    }
}

struct StringsVisitor;

impl<'de> serde::de::Visitor<'de> for StringsVisitor {
    type Value = Strings<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or a list of strings")
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Strings(vec![Cow::Borrowed(v)]))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Strings(vec![Cow::Owned(v.to_string())]))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(one) = seq.next_element::<crate::text::json::Text<'de>>()? {
            out.push(one.0);
        }
        Ok(Strings(out))
    }
}

/// The `Value` reading of one rule: its decision, its typed fields and notes, or why not.
fn spec_of_value(item: &Value) -> Result<(Decision, Spec<'_>, Vec<String>), Unreadable> {
    let Value::Object(map) = item else {
        return Err((None, "a rule must be an object {\"pattern\": [..], \"decision\": .., \"reason\": ..}".into()));
    };
    let decision = map.get("decision").and_then(Value::as_str).and_then(decision_named);
    let fail = |why: String| (decision, why);
    let Some(decision) = decision else {
        return Err(fail(BAD_DECISION.into()));
    };
    let mut notes = Vec::new();
    for key in map.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        if decision == Decision::Allow {
            // An unknown key may have been meant to narrow an allow rule: do not guess.
            return Err(fail(format!("unknown field \"{key}\" (known: {})", FIELDS.join(", "))));
        }
        notes.push(format!("unknown field \"{key}\" is ignored (known: {})", FIELDS.join(", ")));
    }
    let pattern = match map.get("pattern") {
        Some(Value::Array(tokens)) if !tokens.is_empty() => tokens
            .iter()
            .map(|t| match t {
                Value::String(s) => vec![Cow::Borrowed(s.as_str())],
                Value::Array(a) => {
                    a.iter().map(|v| v.as_str().map(Cow::Borrowed)).collect::<Option<_>>().unwrap_or_default()
                }
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let strings = |key: &str| -> Result<Vec<Cow<str>>, Unreadable> {
        match map.get(key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![Cow::Borrowed(s.as_str())]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(Cow::Borrowed))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| fail(format!("{key} must be a string or a list of strings"))),
            Some(_) => Err(fail(format!("{key} must be a string or a list of strings"))),
        }
    };
    // Checked in this order so each rule reports its first problem as before.
    check_pattern(&pattern).map_err(fail)?;
    let has_flag = strings("hasFlag")?;
    check_flags(&has_flag).map_err(fail)?;
    let any_arg = strings("anyArgMatches")?;
    let reason = map.get("reason").and_then(Value::as_str).map(Cow::Borrowed);
    let mut examples: Vec<(Cow<str>, bool)> = strings("match")?.into_iter().map(|e| (e, true)).collect();
    examples.extend(strings("notMatch")?.into_iter().map(|e| (e, false)));
    Ok((decision, Spec { pattern, has_flag, any_arg, reason, examples }, notes))
}

fn check_pattern(pattern: &[Vec<Cow<str>>]) -> Result<(), String> {
    if pattern.is_empty() {
        return Err("pattern must be a non-empty list of words, e.g. [\"git\", [\"push\", \"fetch\"]]".into());
    }
    if pattern
        .iter()
        .any(|alts| alts.is_empty() || alts.iter().any(|s| s.trim().is_empty() || s.contains(char::is_whitespace)))
    {
        return Err("each pattern token must be one word, or a non-empty list of words (alternatives)".into());
    }
    Ok(())
}

fn check_flags(has_flag: &[Cow<str>]) -> Result<(), String> {
    match has_flag.iter().find(|f| !f.starts_with('-') || f.len() < 2) {
        Some(bad) => Err(format!("hasFlag entry \"{bad}\" is not a flag (write -f or --force)")),
        None => Ok(()),
    }
}

/// Lowercased, copying only what must change (most patterns are written in lowercase).
fn lowercase(word: Cow<str>) -> String {
    if word.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) { word.to_lowercase() } else { word.into_owned() }
}

/// The rule, from fields whose types are right: the checks both readings share.
fn build(decision: Decision, spec: Spec, mut notes: Vec<String>, at: &str) -> Result<ReadRule, Unreadable> {
    notes.extend(checked(decision, &spec)?);
    let owned = |v: Vec<Cow<str>>| v.into_iter().map(Cow::into_owned).collect::<Vec<String>>();
    // Empty when there is none: the default below is made from the pattern.
    let reason = spec.reason.as_deref().map_or("", str::trim).to_string();
    let pattern: Vec<Vec<String>> =
        spec.pattern.into_iter().map(|alts| alts.into_iter().map(lowercase).collect()).collect();
    let examples = spec.examples.into_iter().map(|(e, want)| (e.into_owned(), want)).collect();
    let body =
        Body { pattern, reason, has_flag: owned(spec.has_flag), any_arg: owned(spec.any_arg), at: at.to_string() };
    let mut rule = Rule::built(decision, body);
    if rule.reason.is_empty() {
        let reason = format!("the custom rule `{}`", rule.pattern_text());
        rule.body.get_mut().expect("built").reason = reason;
    }
    Ok((rule, examples, notes))
}

/// The checks and notes of a rule whose fields have their JSON types: `build`'s, and all there
/// is to do at load for a rule whose body is built later (`Deferred`).
fn checked(decision: Decision, spec: &Spec) -> Result<Vec<String>, Unreadable> {
    let fail = |why: String| (Some(decision), why);
    check_pattern(&spec.pattern).map_err(fail)?;
    check_flags(&spec.has_flag).map_err(fail)?;
    Ok(match spec.reason.as_deref().map(str::trim) {
        Some(r) if !r.is_empty() => Vec::new(),
        _ => vec!["has no reason; agentsh shows the pattern instead".to_string()],
    })
}

/// A `match` example must meet the rule in at least one part; a `notMatch` example in none.
fn check_examples(rule: &Rule, examples: &Examples) -> Result<(), String> {
    for (text, want) in examples {
        let got = match parse::parse(text) {
            Ok(script) => assess::assess(&script).iter().any(|a| rule.matches(a)),
            Err(e) => return Err(format!("the example `{text}` cannot be parsed ({e})")),
        };
        if got != *want {
            let verb = if *want { "should match but does not" } else { "should not match but does" };
            return Err(format!("the example `{text}` {verb}"));
        }
    }
    Ok(())
}

/// Shell-style glob: `*` any run, `?` one character, `[abc]`/`[a-z]`/`[!a]` a class, `\x` x.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut gi, mut ti) = (0, 0);
    // Where to resume after the last `*`: (glob index after it, text index it consumed up to).
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match g.get(gi) {
            Some('*') => {
                star = Some((gi + 1, ti));
                gi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => class_matches(&g[gi..], t[ti]),
            Some('\\') if gi + 1 < g.len() => (g[gi + 1] == t[ti]).then_some(2),
            Some(c) => (*c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                gi += len;
                ti += 1;
            }
            None => match star {
                Some((after, consumed)) => {
                    gi = after;
                    ti = consumed + 1;
                    star = Some((after, consumed + 1));
                }
                None => return false,
            },
        }
    }
    g[gi..].iter().all(|c| *c == '*')
}

/// Matches `[...]` at the start of `g` against `c`; returns the class's length in the glob.
fn class_matches(g: &[char], c: char) -> Option<usize> {
    let close = g.iter().skip(2).position(|x| *x == ']').map(|p| p + 2)?;
    let body = &g[1..close];
    let (negate, body) = match body.first() {
        Some('!' | '^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            hit |= (body[i]..=body[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    (hit != negate).then_some(close + 1)
}

/// Byte offsets where each element of the array after the key at `k` starts (a small JSON
/// scan, for `file:line:col` in messages; serde_json does not keep positions).
fn element_offsets(text: &str, k: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let Some(open) = text[k..].find('[').map(|o| o + k) else { return out };
    let bytes = text.as_bytes();
    let (mut depth, mut in_string, mut escaped, mut expect) = (0usize, false, false, true);
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if depth == 1 && expect && !b.is_ascii_whitespace() && b != b']' {
            out.push(i);
            expect = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            b',' if depth == 1 => expect = true,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(json: &str) -> Parsed {
        let text = format!("{{\"rules\": {json}}}");
        let v: Value = serde_json::from_str(&text).unwrap();
        parse("t.json", &text, &v["rules"])
    }

    fn one(json: &str) -> Rule {
        let p = rules(&format!("[{json}]"));
        assert!(p.broken.is_none() && p.warnings.is_empty(), "{p:?}");
        p.rules.into_iter().next().unwrap()
    }

    fn hits(rule: &Rule, text: &str) -> bool {
        assess::assess(&parse::parse(text).unwrap()).iter().any(|a| rule.matches(a))
    }

    #[test]
    fn patterns_with_alternatives() {
        let r = one(r#"{"pattern": ["git", ["push", "fetch"]], "decision": "deny", "reason": "no remotes"}"#);
        for yes in ["git push", "git fetch origin", "GIT PUSH", "ls && git push -f"] {
            assert!(hits(&r, yes), "{yes}");
        }
        for no in ["git pull", "git", "echo git push", "gitk push"] {
            assert!(!hits(&r, no), "{no}");
        }
    }

    #[test]
    fn tightening_rules_see_through_wrappers_paths_and_global_options() {
        let r = one(r#"{"pattern": ["git", "push"], "decision": "deny", "reason": "x"}"#);
        for yes in [
            "sudo git push -f",
            "/usr/bin/git push",
            "env A=1 timeout 5 git push",
            "git -C ../other push",
            "bash -c 'git push'",
            "echo $(git push)",
        ] {
            assert!(hits(&r, yes), "{yes}");
        }
        // An allow rule matches only what is written.
        let allow = one(r#"{"pattern": ["git", "push"], "decision": "allow", "reason": "x"}"#);
        assert!(hits(&allow, "git push origin"));
        for no in ["sudo git push", "/usr/bin/git push", "git -C x push"] {
            assert!(!hits(&allow, no), "{no}");
        }
    }

    #[test]
    fn conditions_on_flags_and_arguments() {
        let r = one(r#"{"pattern": ["git", "push"], "hasFlag": ["--force", "-f"], "decision": "deny", "reason": "x"}"#);
        for yes in ["git push -f", "git push --force origin", "git push -fu origin main", "git push --force=true"] {
            assert!(hits(&r, yes), "{yes}");
        }
        for no in ["git push origin", "git push --force-with-lease", "git push -- -f"] {
            assert!(!hits(&r, no), "{no}");
        }
        let r = one(r#"{"pattern": ["cat"], "anyArgMatches": ["*.env", ".env*"], "decision": "ask", "reason": "x"}"#);
        assert!(hits(&r, "cat README.md prod.env"));
        assert!(hits(&r, "cat .env.local"));
        assert!(!hits(&r, "cat README.md"));
    }

    #[test]
    fn examples_are_checked_at_load() {
        let p = rules(
            r#"[
  {"pattern": ["git", "push"], "decision": "deny", "reason": "x", "match": ["git push"], "notMatch": ["git pull"]},
  {"pattern": ["npm", "test"], "decision": "allow", "reason": "x", "match": ["npm run test"]}
]"#,
        );
        assert_eq!(p.rules.len(), 1);
        assert!(p.broken.is_none());
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0]
                .starts_with("t.json:3:3: rules[1] (npm test): the example `npm run test` should match but does not"),
            "{}",
            p.warnings[0]
        );
    }

    #[test]
    fn unreadable_rules_fail_closed_unless_they_allow() {
        let p = rules(r#"[{"pattern": "git push", "decision": "deny", "reason": "x"}]"#);
        assert!(p.rules.is_empty());
        assert!(p.broken.as_deref().unwrap().contains("rules[0]: pattern must be"), "{p:?}");
        let p = rules(r#"[{"pattern": ["git"], "decision": "block"}]"#);
        assert!(p.broken.is_some());
        let p = rules(r#"{"pattern": ["git"]}"#);
        assert!(p.broken.is_some());
        let p = rules(r#"[{"pattern": ["git"], "decision": "allow", "unless": ["push"]}]"#);
        assert!(p.broken.is_none() && p.rules.is_empty());
        assert!(p.warnings[0].contains("this allow rule is ignored"), "{:?}", p.warnings);
        // An unknown field on a deny rule only makes it broader: kept, with a warning.
        let p = rules(r#"[{"pattern": ["git"], "decision": "deny", "reason": "x", "unless": ["status"]}]"#);
        assert_eq!(p.rules.len(), 1);
        assert_eq!(p.warnings.len(), 1);
    }

    #[test]
    fn the_strictest_matching_rule_wins() {
        let p = rules(
            r#"[{"pattern": ["git"], "decision": "allow", "reason": "a"},
                {"pattern": ["git", "push"], "decision": "ask", "reason": "b"},
                {"pattern": ["git", "push"], "hasFlag": "-f", "decision": "deny", "reason": "c"}]"#,
        );
        let part = |t: &str| assess::assess(&parse::parse(t).unwrap()).pop().unwrap();
        assert_eq!(strictest(&p.rules, &part("git status")).unwrap().reason, "a");
        assert_eq!(strictest(&p.rules, &part("git push")).unwrap().reason, "b");
        assert_eq!(strictest(&p.rules, &part("git push -f")).unwrap().reason, "c");
        assert!(strictest(&p.rules, &part("ls")).is_none());
    }

    #[test]
    fn globs() {
        for (g, t, want) in [
            ("*.env", "prod.env", true),
            ("*.env", "prod.envx", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("*", "", true),
            ("/etc/*", "/etc/passwd", true),
            ("[a-c]x", "bx", true),
            ("[!a-c]x", "bx", false),
            ("*a*b", "xxaxxb", true),
            ("*a*b", "xxaxxbc", false),
            ("\\*", "*", true),
            ("\\*", "a", false),
        ] {
            assert_eq!(glob_matches(g, t), want, "{g} vs {t}");
        }
    }
}
