//! Long command text cut into pieces that brush-parser can parse one at a time (issue 9: peak
//! memory). brush-parser holds every token and the whole syntax tree of a text at once, about
//! 170 bytes per byte of script: 11 MB for a 63 KiB one. Parsed a piece at a time, only one
//! piece's tokens and tree are alive.
//!
//! A cut is made only where it cannot change what is parsed: right after a `;`, `&` or newline
//! that ends a simple command at the top level, in a piece of nothing but plain simple commands
//! (no reserved word, no parenthesis, no here-document). brush's own tokenizer is the judge of
//! that, not the quick scan that proposes the cut. Anything else stays in one piece with the rest
//! of the text, exactly as before. No I/O.

use brush_parser::{Token, TokenizerOptions, uncached_tokenize_str};

/// Words that make the command they start (or sit in) more than a simple command, for the
/// parser: bash's reserved words, and `[[ ]]`, `{ }` and `!`.
const RESERVED: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while",
];

/// Operators that can sit in a run of simple commands. Left out: `(` and `)` (subshells,
/// functions, arithmetic), `;;`, `;&`, `;;&` (case arms), and `<<`, `<<-`, whose here-document
/// bodies the tokenizer reads from after the next newline.
const SIMPLE_OPERATORS: &[&str] =
    &[";", "&", "\n", "&&", "||", "|", "|&", "<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<<"];

/// The first piece of `text`: `Some((len, tokens))` when `text[..len]`, at least `min` bytes
/// long, is a run of simple commands ending with its separator, and `tokens` are its tokens,
/// the same the whole text's tokenization has there. `None`: no safe cut was found, and the text
/// is to be parsed whole.
pub fn first(text: &str, min: usize, options: &TokenizerOptions) -> Option<(usize, Vec<Token>)> {
    let len = propose(text, min)?;
    let tokens = uncached_tokenize_str(&text[..len], options).ok()?;
    verified(text, len, &tokens).then_some((len, tokens))
}

/// Whether a cut of `text` after `len` bytes, whose first part tokenizes as `tokens`, leaves
/// both parts meaning what they meant together.
fn verified(text: &str, len: usize, tokens: &[Token]) -> bool {
    let [.., Token::Word(..), Token::Operator(sep, span)] = tokens else {
        return false;
    };
    // The separator must be the piece's last character: positions count characters.
    if !matches!(sep.as_str(), ";" | "&" | "\n") || span.end.index != text[..len].chars().count() {
        return false;
    }
    // Followed by one of these, the whole text's tokenizer would have read a longer operator
    // (`;;`, `;&`, `&&`, `&>`): only a superset needs refusing.
    if text[len..].starts_with([';', '&', '|', '<', '>', '(', ')']) {
        return false;
    }
    tokens.iter().all(|t| match t {
        Token::Word(w, _) => !RESERVED.contains(&w.as_str()),
        Token::Operator(op, _) => SIMPLE_OPERATORS.contains(&op.as_str()),
    })
}

/// A likely cut: the length of `text` up to and including the first `;`, `&` or newline at or
/// after byte `min` that looks like a separator outside quotes, substitutions and comments.
/// Only a proposal: `verified` decides.
fn propose(text: &str, min: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut quote, mut nest, mut word) = (None::<u8>, 0usize, false);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' && q != b'\'' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'\\' => i += 1,
                b'\'' | b'"' | b'`' => quote = Some(b),
                b'(' | b'{' => nest += 1,
                b')' | b'}' => nest = nest.saturating_sub(1),
                b'#' if !word => {
                    // A comment runs to the end of the line; its newline may be the cut.
                    i += text[i..].find('\n').unwrap_or(text.len() - i);
                    continue;
                }
                b';' | b'&' if bytes.get(i + 1).is_some_and(|c| b";&|>".contains(c)) => {
                    // `&&`, `;;`, `&>`, `;&`: part of a longer operator, never a cut.
                    while bytes.get(i + 1).is_some_and(|c| b";&|>".contains(c)) {
                        i += 1;
                    }
                }
                b';' | b'&' | b'\n' if nest == 0 && i + 1 >= min => {
                    let after_word = bytes[..i].iter().rev().find(|c| !matches!(c, b' ' | b'\t'));
                    if after_word.is_some_and(|c| !b";&|<>()\n".contains(c)) {
                        return Some(i + 1);
                    }
                }
                _ => {}
            },
        }
        word = !matches!(b, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')');
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, min: usize) -> Option<&str> {
        first(text, min, &brush_parser::ParserOptions::default().tokenizer_options()).map(|(n, _)| &text[..n])
    }

    #[test]
    fn cuts_after_a_simple_command_and_its_separator() {
        assert_eq!(cut("echo a; echo b", 1), Some("echo a;"));
        assert_eq!(cut("echo a && ls | grep x & echo b", 1), Some("echo a && ls | grep x &"));
        assert_eq!(cut("echo a\necho b", 1), Some("echo a\n"));
        assert_eq!(cut("echo a; echo b; echo c", 8), Some("echo a; echo b;"));
        assert_eq!(cut("echo 'a;b' \"c;d\" e\\;f; x", 1), Some("echo 'a;b' \"c;d\" e\\;f;"));
        assert_eq!(cut("echo $(a; b) `c; d`; x", 1), Some("echo $(a; b) `c; d`;"));
        assert_eq!(cut("echo a # b; c\nx", 1), Some("echo a # b; c\n"));
        assert_eq!(cut("echo a#b; x", 1), Some("echo a#b;"));
        assert_eq!(cut("echo a >f 2>&1 <<<s; x", 1), Some("echo a >f 2>&1 <<<s;"));
    }

    #[test]
    fn never_cuts_where_the_parts_could_mean_something_else() {
        for text in [
            // The last command has no separator: nothing to cut after.
            "echo a",
            // Operators that would grow: `;;`, `;&`, `&&`, `&>`.
            "echo a;; b",
            "echo a;& b",
            // A separator ending an operator, not a command.
            "echo a &&\necho b",
            "echo a |\necho b",
            // Compound commands, functions, subshells, case arms.
            "{ echo a; echo b; }",
            "if true; then echo a; fi",
            "for x in a b; do echo $x; done",
            "while true; do echo a; done",
            "f() { echo a; }; f",
            "(echo a; echo b)",
            "case x in a) echo a;; esac",
            "time ls; ls",
            "! ls; ls",
            "[[ -f x ]]; ls",
            "coproc ls; ls",
            // A here-document's body comes after the newline that follows it.
            "cat <<EOF; echo a\nbody\nEOF\n",
            "cat <<-EOF; echo a\nbody\nEOF\n",
            // Reserved words are refused wherever they are: only a superset matters.
            "echo done; ls",
            // Quotes the scan reads one way and the tokenizer another must not cut.
            "echo 'a; b",
            "echo \"a; b",
        ] {
            assert_eq!(cut(text, 1), None, "{text:?}");
        }
    }

    #[test]
    fn a_cut_before_a_longer_operator_is_refused() {
        let options = brush_parser::ParserOptions::default().tokenizer_options();
        let ok = |text: &str, len: usize| {
            let tokens = uncached_tokenize_str(&text[..len], &options).expect("tokenizes");
            verified(text, len, &tokens)
        };
        assert!(ok("echo a; b", 7));
        assert!(ok("echo a& b", 7));
        for text in ["echo a;; b", "echo a;& b", "echo a&& b", "echo a&> f", "echo a&>> f"] {
            assert!(!ok(text, 7), "{text:?}");
        }
        // A newline after `&&` or `|` continues the command.
        assert!(!ok("echo a &&\nb", 10));
        assert!(!ok("echo a |\nb", 9));
        // Not at the end of what was tokenized.
        assert!(!ok("echo a; b", 8));
    }

    /// Commands of every shape, with their own separators, quotes, bodies and errors.
    const FRAGMENTS: &[&str] = &[
        "echo a",
        "ls -la dir",
        "grep x",
        "x=1",
        "A=b env",
        "echo $x ${y} ~",
        "echo \"a;b\" 'c&d'",
        "echo $(a; b)",
        "echo `c; d`",
        "echo a # c; d",
        "echo a\\;b",
        "cat <<EOF\nbody; x\nEOF",
        "cat <<-EOF\n\tb; y\n\tEOF",
        "{ echo a; echo b; }",
        "(echo a; echo b)",
        "if true; then echo a; fi",
        "for i in a b; do echo $i; done",
        "while true; do break; done",
        "case x in a) echo a;; b) echo b;& esac",
        "f() { g; }",
        "time ls",
        "! ls",
        "[[ -f x ]]",
        "echo done",
        "echo a >f 2>&1",
        "cat <<<s",
        "echo a &>f",
        "ls |& cat",
        "echo $((1+2))",
        "((x++))",
        "echo <(ls)",
        "echo {a,b}",
        "echo $'a\\'b;'",
        "rm -rf /",
        "bash -c 'rm -rf /; ls'",
        "echo a\\\nb",
        "coproc ls",
        "echo 'unterminated",
        "echo )",
    ];
    const SEPARATORS: &[&str] =
        &[";", " ; ", "\n", " & ", " && ", " || ", " | ", ";\n", " &\n", " &&\n", ";;", "\n\n", " ;# c\n", "&"];

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(1000))]
        /// A text parsed in pieces gives exactly what it gives parsed whole. Pieces as short as
        /// one byte cut at every place the text allows.
        #[test]
        fn pieces_parse_as_the_whole_text_does(
            parts in proptest::collection::vec(
                (proptest::sample::select(FRAGMENTS), proptest::sample::select(SEPARATORS)), 1..14),
            min in 1usize..40,
            trailing: bool,
        ) {
            let mut text = String::new();
            for (i, (fragment, sep)) in parts.iter().enumerate() {
                text.push_str(fragment);
                if i + 1 < parts.len() || trailing {
                    text.push_str(sep);
                }
            }
            let whole = crate::parse::walk(&text, 0, None, usize::MAX);
            if let Ok(pieces) = crate::parse::walk(&text, 0, Some(min), usize::MAX) {
                proptest::prop_assert_eq!(Ok(pieces), whole, "{:?}", text);
            }
        }
    }
}
