//! The commonest command text, `prog word word ...` with nothing but plain word characters, read
//! without brush-parser: its parse is most of a short command's cost, paid twice on every `-c`
//! run and twice per custom rule with examples on every config load (docs/BENCHMARKS.md).
//!
//! It only recognizes: text with any character that could mean more than a plain word (quotes,
//! `$`, globs, `~`, `=`, `#`, `{`, operators, newlines), with a reserved word first, or that is
//! blank returns `None` and goes through brush-parser. A test checks it gives brush's result on
//! every text it accepts.

use crate::judge::parse::{self, Nesting, Script, SimpleCommand, Word};

/// Characters that are a plain word wherever they appear, in bash and in brush-parser.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%' | b'-')
}

/// A word whose value is its text: what brush-parser's word parser finds in it is one plain
/// text piece (a test checks this), so `parse` skips that parser for it.
pub fn is_plain_word(raw: &str) -> bool {
    !raw.is_empty() && raw.bytes().all(is_word_byte)
}

/// Text of plain words and blanks only: every reading of it is the same words.
pub fn is_plain_text(text: &str) -> bool {
    text.bytes().all(|b| is_word_byte(b) || b == b' ' || b == b'\t')
}

/// Words that mean something else in the command's first place.
const RESERVED: &[&str] = &[
    "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then",
    "time", "until", "while",
];

/// `Some(script)` when `text` is one simple command of plain words, found `depth` levels deep.
pub fn plain(text: &str, depth: usize) -> Option<Script> {
    if depth > parse::MAX_DEPTH || text.len() > parse::MAX_INPUT_BYTES {
        return None;
    }
    if !is_plain_text(text) {
        return None;
    }
    let words: Vec<Word> = text.split([' ', '\t']).filter(|w| !w.is_empty()).map(Word::literal).collect();
    if words.first().is_none_or(|w| RESERVED.contains(&w.raw.as_str())) {
        return None;
    }
    let mut command = SimpleCommand::new(Nesting::Top, depth);
    command.words = words;
    Some(Script { commands: vec![command], needs_bash: parse::bash_only_text(text), ..Script::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_brush_parser_on_every_text_it_takes() {
        let mut texts: Vec<String> = [
            "/bin/true",
            "ls -la /usr",
            "git status --short",
            "  cargo  test\t--release  ",
            "prog1 run x -f",
            "source env.sh",
            "declare x",
            "export PATH",
            "shopt -s extglob",
            "set -o pipefail",
            "pushd /tmp",
            "echo if then fi done",
            "time ls",
            "if",
            "in",
            "coproc x",
            "function f",
            "select x",
            "-x --y",
            "%1",
            "a,b c:d e+f user@host 50%",
            "./x.sh ../y",
            "_ __ ---",
            "0 1 2",
            "x2",
            "ls 2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every reserved word, first and later; every word byte alone and inside a word.
        for r in RESERVED {
            texts.push(r.to_string());
            texts.push(format!("{r} x"));
            texts.push(format!("echo {r}"));
        }
        for b in (0u8..128).filter(|b| is_word_byte(*b)) {
            let c = b as char;
            texts.push(format!("{c}"));
            texts.push(format!("echo a{c}b {c}x x{c}"));
        }
        let mut taken = 0;
        for text in &texts {
            for depth in [0, 3] {
                if let Some(fast) = plain(text, depth) {
                    taken += 1;
                    assert_eq!(Ok(fast), parse::parse_with_brush(text, depth), "{text:?} at depth {depth}");
                }
            }
        }
        assert!(taken > texts.len(), "the fast path should take most of these ({taken})");
    }

    #[test]
    fn plain_words_are_one_text_piece_to_brush() {
        use brush_parser::word::{self, WordPiece};
        let options = brush_parser::ParserOptions::default();
        let mut words: Vec<String> =
            ["-", "--", ".", "..", "@", "%1", "a,b", "x:y", "+x", "a-b.c/d_e", "0", "-x", "user@host:/p", "a,,b"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for b in (0u8..128).filter(|b| is_word_byte(*b)) {
            let c = b as char;
            words.extend([format!("{c}"), format!("{c}{c}"), format!("a{c}b"), format!("{c}x"), format!("x{c}")]);
        }
        for w in &words {
            assert!(is_plain_word(w), "{w:?}");
            let pieces = word::parse(w, &options).unwrap();
            let texts: Vec<&WordPiece> = pieces.iter().map(|p| &p.piece).collect();
            assert!(matches!(texts[..], [WordPiece::Text(t)] if t == w), "{w:?}: {texts:?}");
        }
        for w in ["", "a b", "$x", "~", "a=b", "'a'", "*", "{a,b}", "a\\b"] {
            assert!(!is_plain_word(w), "{w:?}");
        }
    }

    #[test]
    fn short_text_search_agrees_with_str_contains() {
        let long = format!("{}[[", "x".repeat(300));
        for text in ["", "a", "[[", "x [[ y", "source", "sourc", "pushd/popd", "a=~b", "${!x}", &long] {
            for needle in ["[[", "source ", "=~", "${!", "pushd", "a"] {
                assert_eq!(parse::contains(text, needle), text.contains(needle), "{text:?} {needle:?}");
            }
        }
    }

    #[test]
    fn declines_anything_that_is_not_plain_words() {
        for text in [
            "",
            "   ",
            "a=1 ls",
            "ls *.rs",
            "ls ~",
            "echo $HOME",
            "echo 'x'",
            "a\nb",
            "a;b",
            "a|b",
            "a&",
            "{ ls; }",
            "! ls",
            "ls # c",
            "ls > x",
            "[[ x ]]",
            "if",
            "time ls",
            "echo \u{e9}",
            "a\\b",
        ] {
            assert_eq!(plain(text, 0), None, "{text:?}");
        }
        assert_eq!(plain("ls", parse::MAX_DEPTH + 1), None);
        assert_eq!(plain(&"a ".repeat(parse::MAX_INPUT_BYTES), 0), None);
    }
}
