//! Defence in depth behind the parser (issue 28): forbidden payloads in the raw text.
//!
//! Each miss of a held-out red team was a place where agentsh's reading of the text differed
//! from the shell's. The peers that never parse (shellfirm, dcg) caught most of those by
//! scanning the text itself. This is that scan, as a second reading that shares no code with
//! brush-parser: a small lexer that splits the text into commands as sh does (quotes, `\`
//! escapes, `$( )`, backquotes, comments, here-documents), reading a single quote inside a
//! double-quoted `${..}` as sh does, and ending a here-document at a line that starts with its
//! terminator and holds a `)` as bash does inside `$( )` (so it reads on where the parser may
//! not). What a quoted string holds, as the argument of a command, is data: `git commit -m
//! 'never rm -rf ~'` is not a payload, while `'rm' -rf ~` is. Each command found that names a
//! program that can be forbidden is judged by the same rules as the parsed reading's.
//!
//! `decide::judge` uses it only when the parsed reading found nothing forbidden: a payload
//! found here then means the two readings differ, and the verdict is at least ask, and deny
//! where there is no box. Pure; one pass over the text, and judging only for the few commands
//! that name such a program.

use crate::judge::assess::{self, Assessment};
use crate::judge::parse::{Nesting, Redirect, RedirectKind, Script, SimpleCommand, Word};
use crate::judge::rules;
use crate::model::Risk;

/// The forbidden commands this reading finds in `text`, each judged: empty when there are
/// none (the usual case).
pub fn forbidden_payloads(text: &str) -> Vec<Assessment> {
    let mut found = Vec::new();
    if let Some(bomb) = fork_bomb(text) {
        found.push(assess::fork_bomb(bomb));
    }
    for cmd in commands(text) {
        let script = Script { commands: vec![cmd], ..Script::default() };
        if let Some(a) = assess::assess(&script).into_iter().find(|a| a.risk == Risk::Forbidden) {
            found.push(a);
        }
    }
    found
}

/// The commands of `text` as this reading splits them, keeping only those that might be
/// forbidden: a word naming a program whose rules can forbid it, `agentsh` or its files, or a
/// device (`/dev/sda`) as a word or a redirection's target.
fn commands(text: &str) -> Vec<SimpleCommand> {
    let mut lexer = Lexer { text, b: text.as_bytes(), found: Vec::new(), depth: 0 };
    lexer.list(0, Stop::End);
    lexer.found
}

/// Whether `word` makes the command it is in worth judging.
fn suspect(word: &str) -> bool {
    let name = assess::basename(word);
    rules::may_be_forbidden(name)
        || name == "agentsh"
        || word.starts_with("/dev/")
        // `.agents/`, `.config/agentsh`, the approval queue: each names `agent`.
        || (word.len() >= 7 && word.as_bytes().windows(5).any(|w| w == b"agent") && assess::mentions_self(word))
}

/// What ends the command list being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    End,
    /// `)` closing `$(` or `(`.
    Paren,
    /// A backquote.
    Tick,
}

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    found: Vec<SimpleCommand>,
    /// How deeply command lists and `${..}` nest. Past [`MAX_NESTING`] the rest of the text is
    /// not read: the parser refuses such nesting, and then this reading is not asked for.
    depth: usize,
}

/// A word being built. While it is one run of plain characters it is only a range of the
/// text; it is copied (`own`) once a quote, an escape or an expansion makes it differ.
#[derive(Default)]
struct Building {
    start: usize,
    end: usize,
    text: String,
    decoded: bool,
    dynamic: bool,
    started: bool,
    /// Only unquoted plain characters so far: a reserved word or an assignment.
    plain: bool,
}

impl Building {
    /// The word's own copy, to append to.
    fn own(&mut self, src: &str) -> &mut String {
        if !self.decoded {
            self.decoded = true;
            self.text.push_str(src.get(self.start..self.end).unwrap_or_default());
        }
        &mut self.text
    }

    fn as_str<'s>(&'s self, src: &'s str) -> &'s str {
        if self.decoded { &self.text } else { src.get(self.start..self.end).unwrap_or_default() }
    }
}

/// The command being built. Its words' text is kept in one buffer, reused from command to
/// command: most commands are never judged, and building each word's own strings cost more
/// than reading the text.
#[derive(Default)]
struct Command {
    text: String,
    /// Each word: where its text is, and whether it is only known when it runs.
    words: Vec<(Place, bool)>,
    /// Each redirection: its kind and its target, as words are.
    redirects: Vec<(RedirectKind, Place, bool)>,
    /// The next word is a redirection's target (`>` write, `<` read).
    target: Option<RedirectKind>,
    /// `for x in ..`, `select x in ..`, `function f`: no command here.
    skip: bool,
    /// A word or a target makes the command worth judging ([`suspect`]).
    worth: bool,
    /// The `case` commands this list is inside, innermost last (kept from command to command).
    cases: Vec<Case>,
}

/// Where a `case` command is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    /// `case WORD` up to `in`.
    Header,
    /// The patterns of an arm, up to its `)`: not commands (`rm|mkfs)`).
    Patterns,
    /// An arm's commands, up to `;;`, `;&` or `;;&`.
    Body,
}

impl Command {
    /// Ready for the next command of the same list (the cases it is in stay).
    fn clear(&mut self) {
        self.text.clear();
        self.words.clear();
        self.redirects.clear();
        self.target = None;
        self.skip = false;
        self.worth = false;
    }

    fn word(&self, src: &str, place: &Place, dynamic: bool) -> Word {
        let text = match place {
            Place::Source(r) => src.get(r.clone()).unwrap_or_default(),
            Place::Own(r) => &self.text[r.clone()],
        };
        if dynamic { Word { raw: text.to_string(), lit: None } } else { Word::literal(text) }
    }
}

/// Where a word's text is: a range of the text read, or of the command's own buffer.
#[derive(Clone)]
enum Place {
    Source(std::ops::Range<usize>),
    Own(std::ops::Range<usize>),
}

const MAX_NESTING: usize = 64;

/// Bytes that end a run of plain characters in a word.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let special = b" \t\n;&|()<>`'\"\\$#";
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    t
};

impl Lexer<'_> {
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// Reads commands from `i` until `stop`; returns the index after it.
    fn list(&mut self, mut i: usize, stop: Stop) -> usize {
        self.depth += 1;
        let mut cmd = Command::default();
        let mut word = Building { plain: true, ..Building::default() };
        let mut heredocs: Vec<(String, bool)> = Vec::new();
        while i < self.b.len() {
            let c = self.b[i];
            match c {
                b' ' | b'\t' => {
                    self.end_word(&mut cmd, &mut word);
                    i += 1;
                }
                b'\n' => {
                    self.end_word(&mut cmd, &mut word);
                    self.end_command(&mut cmd);
                    i += 1;
                    for (delimiter, tabs) in heredocs.drain(..) {
                        i = self.heredoc_body(i, &delimiter, tabs);
                    }
                }
                // In a case arm's patterns, `|` separates patterns, and `(` may open them.
                b'|' | b'(' if cmd.cases.last() == Some(&Case::Patterns) => {
                    self.end_word(&mut cmd, &mut word);
                    i += 1;
                }
                b')' if cmd.cases.last() == Some(&Case::Patterns) => {
                    self.end_word(&mut cmd, &mut word);
                    if let Some(top) = cmd.cases.last_mut() {
                        *top = Case::Body;
                    }
                    i += 1;
                }
                // `;;`, `;&`, `;;&` end a case arm: patterns follow.
                b';' if cmd.cases.last() == Some(&Case::Body) && matches!(self.at(i + 1), b';' | b'&') => {
                    self.end_word(&mut cmd, &mut word);
                    self.end_command(&mut cmd);
                    if let Some(top) = cmd.cases.last_mut() {
                        *top = Case::Patterns;
                    }
                    i += 2 + usize::from(self.at(i + 1) == b';' && self.at(i + 2) == b'&');
                }
                b';' | b'&' | b'|' | b'(' => {
                    self.end_word(&mut cmd, &mut word);
                    self.end_command(&mut cmd);
                    i += 1;
                    if c == b'(' {
                        i = self.nested(i, Stop::Paren);
                    }
                }
                b')' => {
                    self.end_word(&mut cmd, &mut word);
                    self.end_command(&mut cmd);
                    i += 1;
                    if stop == Stop::Paren {
                        break;
                    }
                }
                b'`' => {
                    self.end_word(&mut cmd, &mut word);
                    self.end_command(&mut cmd);
                    i += 1;
                    if stop == Stop::Tick {
                        break;
                    }
                    i = self.nested(i, Stop::Tick);
                }
                b'#' if !word.started => {
                    while i < self.b.len() && self.b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'<' | b'>' => {
                    self.end_word(&mut cmd, &mut word);
                    let (kind, len) = self.redirect(i);
                    i += len;
                    if kind == Some(RedirectKind::HereDoc) {
                        let (delimiter, tabs, after) = self.delimiter(i);
                        heredocs.push((delimiter, tabs));
                        i = after;
                    } else {
                        cmd.target = kind;
                    }
                }
                _ => i = self.word_part(i, &mut word),
            }
        }
        self.end_word(&mut cmd, &mut word);
        self.end_command(&mut cmd);
        self.depth -= 1;
        i
    }

    /// A nested command list from `i` (after `(`, `$(` or a backquote).
    fn nested(&mut self, i: usize, stop: Stop) -> usize {
        if self.depth > MAX_NESTING {
            return self.b.len();
        }
        self.list(i, stop)
    }

    /// Reads one piece of a word from `i` into `word`; returns the index after it.
    fn word_part(&mut self, mut i: usize, word: &mut Building) -> usize {
        if !word.started {
            (word.started, word.start, word.end) = (true, i, i);
        }
        let src = self.text;
        let c = self.b[i];
        match c {
            b'\\' => {
                word.plain = false;
                if self.at(i + 1) != b'\n' && i + 1 < self.b.len() {
                    i = self.push_char(i + 1, word);
                    return i;
                }
                i + 2
            }
            b'\'' => {
                word.plain = false;
                let end = find(self.text, i + 1, b'\'');
                word.own(src).push_str(src.get(i + 1..end).unwrap_or_default());
                end + 1
            }
            b'"' => {
                word.plain = false;
                self.double_quoted(i + 1, word)
            }
            b'$' => {
                word.plain = false;
                self.dollar(i, word, false)
            }
            _ => {
                // A run of plain characters at once (its ends are ASCII, so it is whole UTF-8).
                let n = self.b[i..].iter().take_while(|c| !SPECIAL[usize::from(**c)]).count().max(1);
                if n == 1 {
                    return self.push_char(i, word);
                }
                // Every index this lexer stops at is after an ASCII byte, so on a character
                // boundary.
                if !word.decoded && word.end == i {
                    word.end = i + n;
                } else {
                    word.own(src).push_str(src.get(i..i + n).unwrap_or_default());
                }
                i + n
            }
        }
    }

    /// Appends the character at `i` (whole, if it is not ASCII) to `word`.
    fn push_char(&self, i: usize, word: &mut Building) -> usize {
        let len = utf8_len(self.b[i]).min(self.b.len() - i);
        if !word.decoded && word.end == i {
            word.end = i + len;
        } else {
            word.own(self.text).push_str(self.text.get(i..i + len).unwrap_or_default());
        }
        i + len
    }

    /// A double-quoted string whose body starts at `i`; returns the index after it.
    fn double_quoted(&mut self, mut i: usize, word: &mut Building) -> usize {
        while i < self.b.len() {
            match self.b[i] {
                b'"' => return i + 1,
                b'\\' if matches!(self.at(i + 1), b'$' | b'`' | b'"' | b'\\' | b'\n') => {
                    if self.at(i + 1) != b'\n' {
                        word.own(self.text).push(self.at(i + 1) as char);
                    }
                    i += 2;
                }
                b'$' => i = self.dollar(i, word, true),
                b'`' => {
                    word.dynamic = true;
                    i = self.nested(i + 1, Stop::Tick);
                }
                _ => i = self.push_char(i, word),
            }
        }
        i
    }

    /// An expansion starting with the `$` at `i`; returns the index after it.
    fn dollar(&mut self, i: usize, word: &mut Building, quoted: bool) -> usize {
        match self.at(i + 1) {
            b'\'' if !quoted => {
                let mut end = i + 2;
                while end < self.b.len() && self.b[end] != b'\'' {
                    end += if self.b[end] == b'\\' { 2 } else { 1 };
                }
                let end = end.min(self.b.len());
                let body = crate::judge::parse::decode_ansi_c(self.text.get(i + 2..end).unwrap_or_default());
                word.own(self.text).push_str(&body);
                end + 1
            }
            b'(' if self.at(i + 2) == b'(' => {
                word.dynamic = true;
                past_arithmetic(self.b, i + 3)
            }
            b'(' => {
                word.dynamic = true;
                self.nested(i + 2, Stop::Paren)
            }
            b'{' => {
                let end = self.param_end(i + 2, quoted);
                let body = &self.b[i + 2..end.saturating_sub(1).max(i + 2)];
                if body == b"HOME" {
                    word.own(self.text).push('~');
                } else {
                    word.dynamic = true;
                }
                end
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = self.b[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                if &self.b[i + 1..i + 1 + len] == b"HOME" {
                    word.own(self.text).push('~');
                } else {
                    word.dynamic = true;
                }
                i + 1 + len
            }
            c if c.is_ascii_digit() || matches!(c, b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => {
                word.dynamic = true;
                i + 2
            }
            _ => {
                word.own(self.text).push('$');
                i + 1
            }
        }
    }

    /// Past the `}` of a `${` whose body starts at `i`. Inside double quotes, a single quote
    /// there is a plain character (as sh reads it); outside, it quotes.
    fn param_end(&mut self, i: usize, quoted: bool) -> usize {
        // `${x:-"${y:-"..`: nested as deeply as command lists may be.
        if self.depth > MAX_NESTING {
            return self.b.len();
        }
        self.depth += 1;
        let end = self.param_body(i, quoted);
        self.depth -= 1;
        end
    }

    fn param_body(&mut self, mut i: usize, quoted: bool) -> usize {
        let mut ignored = Building::default();
        while i < self.b.len() {
            match self.b[i] {
                b'}' => return i + 1,
                b'\\' => i += 2,
                b'\'' if !quoted => i = find(self.text, i + 1, b'\'') + 1,
                b'"' => i = self.double_quoted(i + 1, &mut ignored),
                b'$' => i = self.dollar(i, &mut ignored, quoted),
                b'`' => i = self.nested(i + 1, Stop::Tick),
                _ => i += 1,
            }
        }
        i
    }

    /// The redirection operator at `i`: its kind (`None` for a duplication or a here-string,
    /// whose word is not a file) and length.
    fn redirect(&self, i: usize) -> (Option<RedirectKind>, usize) {
        let rest = &self.b[i..];
        if rest.starts_with(b"<<<") {
            (None, 3)
        } else if rest.starts_with(b"<<") {
            (Some(RedirectKind::HereDoc), if rest.get(2) == Some(&b'-') { 3 } else { 2 })
        } else if rest.starts_with(b">&") || rest.starts_with(b"<&") {
            // `>&2` duplicates; `>&file` writes a file, as `&>` does.
            let n = rest[2..].iter().take_while(|c| c.is_ascii_digit() || **c == b'-').count();
            if n > 0 { (None, 2 + n) } else { (Some(RedirectKind::Write), 2) }
        } else if rest.starts_with(b">>") || rest.starts_with(b">|") || rest.starts_with(b"<>") {
            (Some(RedirectKind::Write), 2)
        } else if rest[0] == b'>' {
            (Some(RedirectKind::Write), 1)
        } else {
            (Some(RedirectKind::Read), 1)
        }
    }

    /// A here-document's delimiter from `i` (after `<<` or `<<-`): the word without its quotes,
    /// whether tabs are stripped, and the index after it.
    fn delimiter(&self, mut i: usize) -> (String, bool, usize) {
        let tabs = i >= 3 && &self.b[i - 3..i] == b"<<-";
        while matches!(self.at(i), b' ' | b'\t') {
            i += 1;
        }
        let mut delimiter = String::new();
        while i < self.b.len() && !matches!(self.b[i], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b')') {
            if !matches!(self.b[i], b'\'' | b'"' | b'\\') {
                delimiter.push(self.b[i] as char);
            }
            i += 1;
        }
        (delimiter, tabs, i)
    }

    /// Past a here-document body starting at `i`: at a line that is the delimiter, or (as bash
    /// reads inside `$( )`) one that starts with it and holds a `)`, whose rest is then read as
    /// commands.
    fn heredoc_body(&self, mut i: usize, delimiter: &str, tabs: bool) -> usize {
        while i < self.b.len() {
            let end = find(self.text, i, b'\n');
            let mut line = &self.b[i..end.min(self.b.len())];
            let mut start = i;
            if tabs {
                let n = line.iter().take_while(|c| **c == b'\t').count();
                line = &line[n..];
                start += n;
            }
            if let Some(rest) = line.strip_prefix(delimiter.as_bytes()) {
                if rest.is_empty() || delimiter.is_empty() {
                    return (end + 1).min(self.b.len());
                }
                if rest.contains(&b')') {
                    return start + delimiter.len();
                }
            }
            i = end + 1;
        }
        self.b.len()
    }

    fn end_word(&mut self, cmd: &mut Command, word: &mut Building) {
        if !word.started {
            return;
        }
        let src = self.text;
        let text = word.as_str(src);
        let (dynamic, plain) = (word.dynamic, word.plain);
        let worth = !dynamic && suspect(text);
        let place = |cmd: &mut Command| {
            if word.decoded {
                let start = cmd.text.len();
                cmd.text.push_str(text);
                Place::Own(start..cmd.text.len())
            } else {
                Place::Source(word.start..word.end)
            }
        };
        let mut keep = true;
        let case = cmd.cases.last().copied();
        if matches!(case, Some(Case::Header | Case::Patterns)) && cmd.words.is_empty() {
            // The word a case looks at, and the patterns of its arms: not commands.
            match (case, text) {
                (Some(Case::Header), "in") => {
                    if let Some(top) = cmd.cases.last_mut() {
                        *top = Case::Patterns;
                    }
                }
                (Some(Case::Patterns), "esac") => {
                    cmd.cases.pop();
                }
                _ => {}
            }
            keep = false;
        } else if let Some(kind) = cmd.target.take() {
            let at = place(cmd);
            cmd.redirects.push((kind, at, dynamic));
            cmd.worth |= worth && kind != RedirectKind::Read;
            keep = false;
        } else if cmd.words.is_empty() && plain {
            // Reserved words before a command, and assignments, are not its name.
            match text {
                "if" | "then" | "elif" | "else" | "fi" | "do" | "done" | "while" | "until" | "!" | "time" | "{"
                | "}" | "coproc" | "[[" | "]]" => keep = false,
                "case" => {
                    cmd.cases.push(Case::Header);
                    keep = false;
                }
                "esac" => {
                    cmd.cases.pop();
                    keep = false;
                }
                "for" | "select" | "function" | "in" => {
                    cmd.skip = true;
                    keep = false;
                }
                _ if text.contains('=') && text.split_once('=').is_some_and(|(n, _)| is_name(n)) => keep = false,
                _ => {}
            }
        }
        if keep {
            let at = place(cmd);
            cmd.words.push((at, dynamic));
            cmd.worth |= worth;
        }
        let mut buffer = std::mem::take(&mut word.text);
        buffer.clear();
        *word = Building { text: buffer, plain: true, ..Building::default() };
    }

    fn end_command(&mut self, cmd: &mut Command) {
        if cmd.worth && !cmd.skip {
            let mut command = SimpleCommand::new(Nesting::Top, 0);
            command.words = cmd.words.iter().map(|(at, dynamic)| cmd.word(self.text, at, *dynamic)).collect();
            command.redirects = cmd
                .redirects
                .iter()
                .map(|(kind, at, dynamic)| Redirect {
                    fd: None,
                    kind: *kind,
                    target: cmd.word(self.text, at, *dynamic),
                })
                .collect();
            self.found.push(command);
        }
        cmd.clear();
    }
}

/// Past the `))` closing `$((` whose body starts at `i`.
fn past_arithmetic(b: &[u8], mut i: usize) -> usize {
    let mut level = 2usize;
    while i < b.len() && level > 0 {
        match b[i] {
            b'(' => level += 1,
            b')' => level -= 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The index of the next `c` (ASCII) from `i` in `text`, or its end: memchr, for the lines of
/// a here-document. Every index this lexer stops at is after an ASCII byte, so on a character
/// boundary.
fn find(text: &str, i: usize, c: u8) -> usize {
    match text.get(i..) {
        Some(rest) => rest.find(char::from(c)).map_or(text.len(), |n| i + n),
        None => text.as_bytes().get(i..).and_then(|r| r.iter().position(|&x| x == c)).map_or(text.len(), |n| i + n),
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

fn is_name(s: &str) -> bool {
    let s = s.strip_suffix('+').unwrap_or(s);
    let s = s.split('[').next().unwrap_or(s);
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The fork bomb as it is written (`:(){ :|:& };:`, `bomb() { bomb | bomb & }`), found in the
/// raw text: a function whose whole body is itself piped to itself in the background. Only that
/// exact shape, since the raw text also holds documents and code in other languages (`f() {`
/// in JavaScript); other spellings are the parsed reading's to find.
fn fork_bomb(text: &str) -> Option<String> {
    text.match_indices("()").find_map(|(i, _)| {
        let body = text[i + 2..].trim_start().strip_prefix('{')?;
        let body = &body[..body.find('}')?];
        let name = text[..i].trim_end().rsplit([' ', '\t', '\n', ';', '&', '|', '(']).next()?;
        let squeezed: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        let bomb = format!("{name}|{name}&");
        (!name.is_empty() && (squeezed == bomb || squeezed == format!("{bomb};")))
            .then(|| format!("{name}(){{ {name}|{name}& }}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<Vec<String>> {
        forbidden_payloads(text).into_iter().map(|a| a.argv).collect()
    }

    #[test]
    fn finds_payloads_wherever_a_shell_could_run_them() {
        for text in [
            "rm -rf ~",
            "'rm' -rf /",
            "r\\m -rf ~",
            "$'\\x72m' -rf ~",
            "rm -r -f \"$HOME\"",
            "sudo rm -rf --no-preserve-root /",
            "/bin/rm -fr /*",
            // Issue 28's differentials, read as sh and bash in POSIX mode read them.
            "echo \"${x:-'}\"; rm -rf ~; echo \"'}\"",
            "x=$(cat <<EOF\nhi\nEOF)\nrm -rf ~\nEOF\n)",
            "x=$(cat <<EOF\nhi\nEOFX); rm -rf ~; (\nEOF\n)",
            "echo `rm -rf ~`",
            "echo \"$(rm -rf /)\"",
            "if true; then rm -rf ~; fi",
            "case x in x) rm -rf ~ ;; esac",
            "case x in a|b) echo ;; (c) rm -rf / ;; esac; rm -rf ~",
            "dd if=/dev/zero of=/dev/sda",
            "cat /dev/urandom > /dev/sda",
            "mkfs.ext4 /dev/sda1",
            "chmod -R 777 /",
            "agentsh whitelist add 'rm -rf x'",
        ] {
            assert!(!found(text).is_empty(), "{text:?}");
        }
        assert!(!forbidden_payloads(":(){ :|:& };:").is_empty());
        assert!(!forbidden_payloads("bomb() { bomb | bomb & }; bomb").is_empty());
        assert!(!forbidden_payloads("echo \"${x:-'}\"; :(){ :|:& };:; echo \"'}\"").is_empty());
    }

    #[test]
    fn data_is_not_a_payload() {
        for text in [
            "git commit -m 'never rm -rf ~'",
            "echo \"rm -rf / is bad\"",
            "grep -rn 'rm -rf /' docs/",
            "cat > notes.md <<'EOF'\nDo not run rm -rf ~ here.\nEOF\n",
            "cat > f <<EOF\nrm -rf /\nEOF",
            "# rm -rf ~\nls",
            "rm -rf build dist",
            "for x in rm -rf ~; do echo $x; done",
            "case $a in\n  sh|rm|mkfs|dd) echo bin ;;\n  (chmod) echo x ;&\n  *) echo other ;;\nesac",
            "x=rm; echo $x",
            "ls /dev/null > /dev/null",
            "f() { echo hi; }; f",
            "printf '%s\\n' 'rm -rf ~'",
            // Code in another language, with `name() {` and pipes in it.
            "cat > a.js <<'EOF'\nfunction Publications() { return a | b && Publications() }\nEOF",
            "echo 'static void pc(int c) { pc(c) | pc(c) & 1; }' > a.c",
        ] {
            assert_eq!(found(text), Vec::<Vec<String>>::new(), "{text:?}");
        }
    }
}
