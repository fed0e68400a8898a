//! Long command text cut into pieces that brush-parser can parse one at a time (issue 9: peak
//! memory). brush-parser holds every token and the whole syntax tree of a text at once, about
//! 170 bytes per byte of script: 11 MB for a 63 KiB one. Parsed a piece at a time, only one
//! piece's tokens and tree are alive.
//!
//! A cut is made only where it cannot change what is parsed: right after a `;`, `&` or newline
//! that ends a command at the top level, in a piece with no here-document. brush's own tokenizer
//! is the judge of that, not the quick scan that proposes the cut: a piece of nothing but plain
//! simple commands (no reserved word, no parenthesis) is a cut as it stands; a piece with a
//! compound command in it (`for`, `if`, `{ }`, a subshell, a function) is one only when
//! brush-parser parses it whole on its own (`parse::Walker::text` checks), so every compound
//! command in it is closed before the cut. Anything else stays in one piece with the rest of the
//! text, exactly as before. No I/O.

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

/// What a proposed piece is.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// Nothing but plain simple commands: a cut as it stands.
    Simple,
    /// It holds a compound command: a cut only if brush-parser parses the piece on its own.
    ParsesAlone,
}

/// The first piece of `text`: `Some((len, tokens, kind))` when `text[..len]`, at least `min`
/// bytes long, ends with a separator after a word and holds no here-document, and `tokens` are
/// its tokens, the same the whole text's tokenization has there. `None`: no cut was found, and
/// the text is to be parsed whole.
pub fn first(text: &str, min: usize, options: &TokenizerOptions) -> Option<(usize, Vec<Token>, Piece)> {
    let mut from = min;
    // A proposal inside a compound command is refused; a few later ones are tried (each is
    // tokenized from the start, so not many).
    for _ in 0..PROPOSALS {
        let len = propose(text, from)?;
        let tokens = uncached_tokenize_str(&text[..len], options).ok()?;
        match verified(text, len, &tokens) {
            Some(kind) => return Some((len, tokens, kind)),
            None => from = len + 1,
        }
    }
    None
}

/// How many proposed cuts `first` looks at.
const PROPOSALS: usize = 8;

/// Whether a cut of `text` after `len` bytes, whose first part tokenizes as `tokens`, leaves
/// both parts meaning what they meant together: as it stands, or if the piece parses alone.
fn verified(text: &str, len: usize, tokens: &[Token]) -> Option<Piece> {
    let [.., Token::Word(..), Token::Operator(sep, span)] = tokens else {
        return None;
    };
    // The separator must be the piece's last character: positions count characters.
    if !matches!(sep.as_str(), ";" | "&" | "\n") || span.end.index != text[..len].chars().count() {
        return None;
    }
    // Followed by one of these, the whole text's tokenizer would have read a longer operator
    // (`;;`, `;&`, `&&`, `&>`): only a superset needs refusing.
    if text[len..].starts_with([';', '&', '|', '<', '>', '(', ')']) {
        return None;
    }
    // A here-document's body is read from after the next newline, which may be past the cut.
    if tokens.iter().any(|t| matches!(t, Token::Operator(op, _) if op == "<<" || op == "<<-")) {
        return None;
    }
    let simple = tokens.iter().all(|t| match t {
        Token::Word(w, _) => !RESERVED.contains(&w.as_str()),
        Token::Operator(op, _) => SIMPLE_OPERATORS.contains(&op.as_str()),
    });
    if simple {
        return Some(Piece::Simple);
    }
    // With a compound command in the piece, its last command must be a plain simple command
    // or end with the word that closes a compound command: a construct can reach past a
    // separator to what follows (`coproc NAME` takes a `{ ... }` after blank lines as its body,
    // found by the property test below), so the piece may not end in one. `coproc` is refused
    // outright.
    if tokens.iter().any(|t| matches!(t, Token::Word(w, _) if w == "coproc")) {
        return None;
    }
    let before_sep = &tokens[..tokens.len() - 1];
    let last =
        before_sep.iter().rposition(|t| matches!(t, Token::Operator(op, _) if !is_redirect(op))).map_or(0, |i| i + 1);
    let plain = before_sep[last..].iter().all(|t| match t {
        Token::Word(w, _) => !RESERVED.contains(&w.as_str()),
        Token::Operator(op, _) => is_redirect(op),
    });
    // Or the word that closes a compound command (the piece parsing alone shows it is one).
    let closed =
        matches!(&before_sep[last..], [Token::Word(w, _)] if matches!(w.as_str(), "fi" | "done" | "esac" | "}"));
    let plain = plain || closed;
    let after_separator = last == 0
        || matches!(&before_sep[last - 1], Token::Operator(op, _) if matches!(op.as_str(), ";" | "&" | "\n" | "&&" | "||" | "|" | "|&"));
    (plain && after_separator && last < before_sep.len()).then_some(Piece::ParsesAlone)
}

/// A redirection operator (not a separator, pipe or parenthesis).
fn is_redirect(op: &str) -> bool {
    matches!(op, "<" | ">" | ">>" | ">|" | "<>" | "<&" | ">&" | "&>" | "&>>" | "<<<")
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

    /// A cut that stands without parsing.
    fn cut(text: &str, min: usize) -> Option<&str> {
        first(text, min, &brush_parser::ParserOptions::default().tokenizer_options())
            .filter(|(_, _, kind)| *kind == Piece::Simple)
            .map(|(n, ..)| &text[..n])
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
    fn a_piece_with_a_compound_command_ends_where_a_command_does() {
        let options = brush_parser::ParserOptions::default().tokenizer_options();
        fn kind<'t>(text: &'t str, min: usize, options: &TokenizerOptions) -> Option<(&'t str, Piece)> {
            first(text, min, options).map(|(n, _, k)| (&text[..n], k))
        }
        let kind = |text, min| kind(text, min, &options);
        let text = "for f in a b; do echo $f; done\nls; x";
        assert_eq!(kind(text, 20), Some(("for f in a b; do echo $f; done\n", Piece::ParsesAlone)));
        // Inside one, a cut is only proposed: the piece does not parse alone, and the walker
        // tries later cuts or parses the rest whole.
        let inside = "for f in a b; do echo $f; echo; echo; done; ls; ls";
        assert_eq!(kind(inside, 1), Some(("for f in a b; do echo $f; echo;", Piece::ParsesAlone)));
        let whole = crate::judge::parse::walk(inside, 0, None, usize::MAX);
        assert_eq!(crate::judge::parse::walk(inside, 0, Some(1), usize::MAX), whole);
        // `coproc NAME` takes a `{ ... }` after blank lines as its body: never cut near one.
        let coproc = "{ a; }; coproc ls\n\n{ echo a; }";
        assert_eq!(kind(coproc, 1), Some(("{ a; };", Piece::ParsesAlone)));
        assert_eq!(kind(&coproc[7..], 1), None);
        assert_eq!(
            crate::judge::parse::walk(coproc, 0, Some(1), usize::MAX),
            crate::judge::parse::walk(coproc, 0, None, usize::MAX)
        );
        assert_eq!(kind("coproc x { ls; }; ls; y", 1), None);
        // Right after a compound command it closes.
        assert_eq!(kind("for f in a; do b; done; x", 20), Some(("for f in a; do b; done;", Piece::ParsesAlone)));
        let whole = crate::judge::parse::walk(text, 0, None, usize::MAX);
        assert_eq!(crate::judge::parse::walk(text, 0, Some(20), usize::MAX), whole);
    }

    #[test]
    fn a_cut_before_a_longer_operator_is_refused() {
        let options = brush_parser::ParserOptions::default().tokenizer_options();
        let ok = |text: &str, len: usize| {
            let tokens = uncached_tokenize_str(&text[..len], &options).expect("tokenizes");
            verified(text, len, &tokens) == Some(Piece::Simple)
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
        "function g { echo a; }",
        "g()\n{ echo a; }",
        "coproc x { ls; }",
        "coproc ls",
        "time",
        "!",
        "select x in a; do break; done",
        "if a\nthen b\nfi",
        "for i\ndo echo $i\ndone",
        "[[ a &&\n b ]]",
        "case x in\na) ;;\nesac",
        "{ echo a\n}",
        "until false; do :; done > f",
        "while read l; do echo $l; done <<< x",
        "(cd d && ls) | cat",
        "echo a |",
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
            let whole = crate::judge::parse::walk(&text, 0, None, usize::MAX);
            if let Ok(pieces) = crate::judge::parse::walk(&text, 0, Some(min), usize::MAX) {
                proptest::prop_assert_eq!(Ok(pieces), whole, "{:?}", text);
            }
        }
    }
}
