//! A word only known when it runs (`-de${U}lete`, `dr${U}op`, `-d*te`): its shape, the literal
//! text around its expansions and globs, and which of the words a program's rules name it may
//! become. Bash expands `${U}` to nothing and `-d*te` to a file named `-delete`, so the program
//! sees an option the text never spelled (rt7 C11). Pure.

/// One piece of a word's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A character as written (after quote removal).
    Lit(char),
    /// Any text, empty included: an expansion or an unquoted glob.
    Any,
}

/// The shape of a word as written, or `None` when it has no expansion and no unquoted glob (its
/// literal value is all it can be).
pub fn shape(raw: &str) -> Option<Vec<Piece>> {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut any = false;
    let mut push_any = |out: &mut Vec<Piece>| {
        any = true;
        if out.last() != Some(&Piece::Any) {
            out.push(Piece::Any);
        }
    };
    let mut i = 0;
    let mut double = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if !double => {
                if let Some(&n) = chars.get(i + 1) {
                    out.push(Piece::Lit(n));
                }
                i += 2;
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some(&n) if matches!(n, '$' | '`' | '"' | '\\') => out.push(Piece::Lit(n)),
                    Some('\n') => {}
                    Some(&n) => {
                        out.push(Piece::Lit('\\'));
                        out.push(Piece::Lit(n));
                    }
                    None => out.push(Piece::Lit('\\')),
                }
                i += 2;
            }
            '\'' if !double => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    out.push(Piece::Lit(chars[i]));
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                double = !double;
                i += 1;
            }
            '$' if !double && chars.get(i + 1) == Some(&'\'') => {
                // `$'..'`: an escape may stand for any character.
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' {
                        push_any(&mut out);
                        i += 2;
                    } else {
                        out.push(Piece::Lit(chars[i]));
                        i += 1;
                    }
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'"') && !double => {
                double = true;
                i += 2;
            }
            '$' => match chars.get(i + 1) {
                Some('{') => {
                    i = closing(&chars, i + 1, '{', '}');
                    push_any(&mut out);
                }
                Some('(') => {
                    i = closing(&chars, i + 1, '(', ')');
                    push_any(&mut out);
                }
                Some(n) if n.is_ascii_alphabetic() || *n == '_' => {
                    i += 1;
                    while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                    push_any(&mut out);
                }
                Some(n) if n.is_ascii_digit() || matches!(n, '@' | '*' | '#' | '?' | '$' | '!' | '-') => {
                    i += 2;
                    push_any(&mut out);
                }
                _ => {
                    out.push(Piece::Lit('$'));
                    i += 1;
                }
            },
            '`' => {
                i += 1;
                while i < chars.len() && chars[i] != '`' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                push_any(&mut out);
            }
            '*' | '?' if !double => {
                push_any(&mut out);
                i += 1;
            }
            '[' if !double && chars[i + 1..].contains(&']') => {
                i = chars[i + 1..].iter().position(|&c| c == ']').map_or(chars.len(), |p| i + 1 + p + 1);
                push_any(&mut out);
            }
            c => {
                out.push(Piece::Lit(c));
                i += 1;
            }
        }
    }
    any.then_some(out)
}

/// The index just past the bracket that closes the one at `open_at`.
fn closing(chars: &[char], open_at: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    let mut i = open_at;
    while i < chars.len() {
        if chars[i] == open {
            depth += 1;
        } else if chars[i] == close {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        } else if chars[i] == '\\' {
            i += 1;
        }
        i += 1;
    }
    chars.len()
}

/// Whether the shape has some literal text: a word that is only an expansion (`"$file"`) is
/// judged as the operand it stands for, not as every word a program knows.
pub fn has_literal(shape: &[Piece]) -> bool {
    shape.iter().any(|p| matches!(p, Piece::Lit(_)))
}

/// Whether the word may be exactly `text`.
pub fn may_be(shape: &[Piece], text: &str) -> bool {
    matches(shape, &text.chars().collect::<Vec<_>>(), false)
}

/// Whether the word may start with `prefix`, where its literal text shows part of it: `*.rs` is
/// no `--pre=`, while `${U}--pre=x` and `--p${U}` may be.
pub fn may_start_with(shape: &[Piece], prefix: &str) -> bool {
    matches(shape, &prefix.chars().collect::<Vec<_>>(), true)
}

/// Whether the word may be the option `spec` as programs read it: itself, `--long=value`, or a
/// short letter in a cluster (`-f${U}dx` may hold `-f`; `-x$(..)` any letter).
pub fn may_be_option(shape: &[Piece], spec: &str) -> bool {
    if may_be(shape, spec) {
        return true;
    }
    if spec.starts_with("--") || spec.chars().count() > 2 {
        return may_start_with(shape, &format!("{spec}="));
    }
    let Some(letter) = spec.strip_prefix('-').and_then(|l| l.chars().next()) else { return false };
    shape.first() == Some(&Piece::Lit('-'))
        && shape.get(1) != Some(&Piece::Lit('-'))
        && shape[1..].iter().any(|p| *p == Piece::Any || *p == Piece::Lit(letter))
}

fn matches(shape: &[Piece], text: &[char], prefix_only: bool) -> bool {
    // reach[j][seen]: the pieces so far can stand for text[..j], having shown literal text or not.
    // Linear in the pieces times the text, however many expansions a word holds.
    let mut reach = vec![[false; 2]; text.len() + 1];
    reach[0][0] = true;
    let done = |reach: &[[bool; 2]]| prefix_only && reach[text.len()][1];
    for piece in shape {
        if done(&reach) {
            return true;
        }
        let mut next = vec![[false; 2]; text.len() + 1];
        for j in 0..=text.len() {
            for seen in 0..2 {
                if !reach[j][seen] {
                    continue;
                }
                match piece {
                    Piece::Any => {
                        for n in &mut next[j..] {
                            n[seen] = true;
                        }
                    }
                    Piece::Lit(c) if text.get(j) == Some(c) => next[j + 1][1] = true,
                    Piece::Lit(_) if prefix_only && j == text.len() => next[j][seen] = true,
                    Piece::Lit(_) => {}
                }
            }
        }
        reach = next;
    }
    if prefix_only { reach[text.len()][1] } else { reach[text.len()][0] || reach[text.len()][1] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn may(raw: &str, spec: &str) -> bool {
        let s = shape(raw).expect("a word with an expansion");
        may_be_option(&s, spec) || may_be(&s, spec)
    }

    #[test]
    fn an_expansion_inside_an_option_may_hide_it() {
        for (raw, spec) in [
            ("-de${U}lete", "-delete"),
            ("-de$@lete", "-delete"),
            ("-de${U:-}lete", "-delete"),
            ("-de$(:)lete", "-delete"),
            ("-de`true`lete", "-delete"),
            ("${U}-delete", "-delete"),
            ("-de?ete", "-delete"),
            ("-de[l]ete", "-delete"),
            ("-d*te", "-delete"),
            ("-ex${U}ec", "-exec"),
            ("--ha${U}rd", "--hard"),
            ("--pr${U}e=x", "--pre"),
            ("--compress-prog${U}ram=x", "--compress-program"),
            ("-f${U}dx", "-f"),
            ("-${U}I", "-I"),
            ("-j$(nproc)", "-f"),
            ("dr${U}op", "drop"),
            ("br${U}anch", "branch"),
            ("\"--to-comm${U}and=x\"", "--to-command"),
        ] {
            assert!(may(raw, spec), "{raw} may be {spec}");
        }
    }

    #[test]
    fn literal_text_that_cannot_be_the_option_is_not() {
        assert_eq!(shape("-delete"), None);
        assert_eq!(shape("'-de?ete'"), None);
        assert_eq!(shape("\"*.py\""), None);
        assert_eq!(shape("-de''lete"), None);
        for (raw, spec) in [
            ("src/*.rs", "--hard"),
            ("build/*.o", "-r"),
            ("fix: $X", "drop"),
            ("feature/$X", "."),
            ("--output=$X", "--hard"),
            ("-n$N", "--delete"),
            ("$HOME/x", "-delete"),
        ] {
            assert!(!may(raw, spec), "{raw} cannot be {spec}");
        }
        assert!(!has_literal(&shape("\"$file\"").unwrap()));
        assert!(!has_literal(&shape("$(git rev-parse HEAD)").unwrap()));
    }
}
