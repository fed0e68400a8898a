//! Where bash, bash in POSIX mode and dash read the same text differently, and brush-parser
//! (which reads it as bash does) would judge only one reading (issue 28). Pure text functions;
//! `parse` judges what they find.
//!
//! - [`posix_reading`]: inside double quotes, a single quote in the word of `${x-..}`,
//!   `${x=..}`, `${x+..}` or `${x?..}` (with or without `:`) starts a quoted string for bash,
//!   and is a plain character for dash and for bash in POSIX mode (`sh`, `bash --posix`,
//!   `set -o posix`, `POSIXLY_CORRECT` in the environment). So
//!   `echo "${x:-'}"; rm -rf ~; echo "'}"` is one `echo` to bash, and runs `rm -rf ~` there.
//!   The judge reads both.
//! - [`ends_early_in_substitution`]: inside `$( )` and `<( )`, bash ends a here-document at a
//!   line that starts with its terminator and has a `)` after it, and reads the rest of that
//!   line as commands; brush-parser reads on to a line that is the terminator alone.

/// `text` as dash and bash in POSIX mode read it, written so that bash would read it the same
/// way (each single quote they take as a plain character inside a double-quoted `${x-..}`,
/// `${x=..}`, `${x+..}` or `${x?..}` is made `_`), or `None` when there is no such quote and
/// the readings agree.
pub fn posix_reading(text: &str) -> Option<String> {
    // Cheap for the usual text, which lacks one of the three.
    if !(text.contains("${") && text.contains('\'') && text.contains('"')) {
        return None;
    }
    let plain = plain_quotes(text.as_bytes());
    if plain.is_empty() {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for i in plain {
        bytes[i] = b'_';
    }
    // Only ASCII quotes were replaced by an ASCII character.
    String::from_utf8(bytes).ok()
}

/// Where a shell is while reading, as dash reads it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Commands: the top level, `$( )`, a subshell.
    Commands,
    /// Inside `( )` within commands, closed by `)`.
    Paren,
    /// Inside backquotes.
    Ticks,
    /// Inside double quotes.
    Double,
    /// Inside `${ }`: `quoted` when the `${` is inside double quotes, `word` once past an
    /// operator (`-`, `=`, `+`, `?`, with or without `:`) whose word follows.
    Param { quoted: bool, word: bool },
}

/// The positions of the single quotes dash reads as plain characters and bash as quotes.
fn plain_quotes(b: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![Ctx::Commands];
    let mut i = 0;
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    while i < b.len() {
        let ctx = *stack.last().unwrap_or(&Ctx::Commands);
        let c = b[i];
        // Expansions open the same way everywhere but inside single quotes.
        if c == b'\\' {
            i += 2;
            continue;
        }
        if c == b'$' && at(i + 1) == b'(' {
            stack.push(Ctx::Commands);
            i += 2;
            continue;
        }
        if c == b'$' && at(i + 1) == b'{' {
            let quoted = matches!(ctx, Ctx::Double) || matches!(ctx, Ctx::Param { quoted: true, .. });
            let (len, word) = param_head(&b[i + 2..]);
            stack.push(Ctx::Param { quoted, word });
            i += 2 + len;
            continue;
        }
        if c == b'`' {
            if ctx == Ctx::Ticks {
                stack.pop();
            } else {
                stack.push(Ctx::Ticks);
            }
            i += 1;
            continue;
        }
        match ctx {
            Ctx::Commands | Ctx::Paren | Ctx::Ticks => match c {
                b'\'' => i = skip_single(b, i + 1),
                b'$' if at(i + 1) == b'\'' => i = skip_ansi_c(b, i + 2),
                b'"' => {
                    stack.push(Ctx::Double);
                    i += 1;
                }
                b'(' => {
                    stack.push(Ctx::Paren);
                    i += 1;
                }
                b')' => {
                    if stack.len() > 1 && ctx != Ctx::Ticks {
                        stack.pop();
                    }
                    i += 1;
                }
                b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')') => {
                    i = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n);
                }
                _ => i += 1,
            },
            Ctx::Double => {
                if c == b'"' {
                    stack.pop();
                }
                i += 1;
            }
            Ctx::Param { quoted, word } => {
                match c {
                    b'}' => {
                        stack.pop();
                    }
                    b'"' => stack.push(Ctx::Double),
                    b'\'' if quoted && word => out.push(i),
                    b'\'' => {
                        i = skip_single(b, i + 1);
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
    }
    out
}

/// After `${`: how many bytes the name and operator take, and whether the operator is one
/// whose word dash reads with single quotes as plain characters.
fn param_head(b: &[u8]) -> (usize, bool) {
    let mut i = 0;
    // `${#x}` (length) and `${!x}` (indirection) start with one more character.
    if matches!(b.first(), Some(b'#' | b'!')) && b.get(1).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        i = 1;
    }
    let name = b[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    i += if name > 0 {
        name
    } else {
        usize::from(matches!(b.get(i), Some(b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-')))
    };
    if b.get(i) == Some(&b':') && matches!(b.get(i + 1), Some(b'-' | b'=' | b'+' | b'?')) {
        return (i + 2, true);
    }
    if matches!(b.get(i), Some(b'-' | b'=' | b'+' | b'?')) {
        return (i + 1, true);
    }
    (i, false)
}

/// Past a single-quoted string whose body starts at `i`.
fn skip_single(b: &[u8], i: usize) -> usize {
    b[i.min(b.len())..].iter().position(|&c| c == b'\'').map_or(b.len(), |n| i + n + 1)
}

/// Past a `$'..'` string whose body starts at `i`, where `\'` does not end it.
fn skip_ansi_c(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Whether bash ends a here-document inside `$( )` or `<( )` before brush-parser does: a line
/// of `body` (after its leading tabs, for `<<-`) that starts with `delimiter` and has a `)`
/// after it. bash (5.2, `make_here_document`) ends the document there and reads the rest of
/// the line as commands; brush-parser reads on to a line that is the delimiter alone.
pub fn ends_early_in_substitution(delimiter: &str, body: &str, remove_tabs: bool) -> bool {
    !delimiter.is_empty()
        && body.lines().any(|line| {
            let line = if remove_tabs { line.trim_start_matches('\t') } else { line };
            line.strip_prefix(delimiter).is_some_and(|rest| rest.contains(')'))
        })
}

/// A here-document's delimiter as written (`'EOF'`, `"EOF"`, `\EOF`) without its quoting.
pub fn unquoted_delimiter(raw: &str) -> String {
    raw.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quotes_in_double_quoted_defaults_as_dash_does() {
        // Issue 28: one `echo` to bash, an `rm -rf ~` between two to dash.
        let text = r#"echo "${x:-'}"; rm -rf ~; echo "'}""#;
        assert_eq!(posix_reading(text).as_deref(), Some(r#"echo "${x:-_}"; rm -rf ~; echo "'}""#));
        for op in ["-", ":-", "=", ":=", "+", ":+", "?", ":?"] {
            let text = format!(r#"echo "${{x{op}'}}"; p; echo "'}}""#);
            assert!(posix_reading(&text).is_some(), "{op}");
        }
        assert!(posix_reading(r#"echo "${1:-'a'}" "${@:-'b'}""#).is_some());
        // Nested, and inside `$( )` in double quotes.
        assert!(posix_reading(r#"echo "${x:-${y:-'}}"; p; echo "'}}""#).is_some());
        assert!(posix_reading(r#"echo "$(echo "${x:-'}")"; p; echo "'}""#).is_some());
        // The readings agree: pattern operators, unquoted defaults, quotes in commands.
        for same in [
            r#"echo "${x#'a'}" "${x%'}'}""#,
            "echo ${x:-'a b'}",
            r#"echo "${x:-a}" 'q' "'""#,
            r#"echo '"${x:-'"'"'}"'"#,
            r#"echo $'"${x:-\''"#,
            "echo \"$(echo 'a')\" ${x}",
            "# \"${x:-'}\"\necho ok",
        ] {
            assert_eq!(posix_reading(same), None, "{same}");
        }
    }

    #[test]
    fn knows_where_bash_ends_a_here_document_in_a_substitution() {
        for line in ["EOF)", "EOF )", "EOF);x", "EOFX)", "EOF # )", "EOF ')'"] {
            assert!(ends_early_in_substitution("EOF", &format!("hi\n{line}\nmore\n"), false), "{line}");
        }
        assert!(ends_early_in_substitution("EOF", "\t\tEOF)\n", true));
        assert!(!ends_early_in_substitution("EOF", "\t\tEOF)\n", false));
        for fine in ["hi\n", "EOFX\n", " EOF)\n", "(EOF)\n", "print(EOF2)\n"] {
            assert!(!ends_early_in_substitution("EOF", fine, false), "{fine}");
        }
        assert_eq!(unquoted_delimiter("'EOF'"), "EOF");
        assert_eq!(unquoted_delimiter("\\EOF"), "EOF");
    }
}
