//! One sanitizer for every piece of attacker-controlled text agentsh shows or logs.
//! It only escapes; it must never drop characters, so what a person reads is what would run.

use std::fmt::Write;

/// Makes control, ANSI escape, bidi-override and zero-width characters visible.
///
/// `\n`, `\t` and `\r` become their C escapes; ESC and other C0/C1 controls become `\xNN`;
/// bidi and invisible formatting characters become `\u{NNNN}` (Trojan Source, CVE-2021-42574).
/// A backslash is left alone: it is ordinary shell text, and doubling it would misquote commands.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_invisible(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Sanitizes `text` and cuts it to at most `max` characters, ending in `…` when cut (for tables
/// and log lines that must stay short).
pub fn clip(text: &str, max: usize) -> String {
    let clean = sanitize(text);
    if clean.chars().count() <= max {
        return clean;
    }
    let mut cut: String = clean.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// True when `text` would be printed differently by [`sanitize`].
pub fn needs_sanitizing(text: &str) -> bool {
    text.chars().any(|c| (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)) || is_invisible(c))
}

/// Bidi controls, zero-width and other default-ignorable characters that change how text
/// looks without being seen.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}'                 // soft hyphen
        | '\u{034f}'               // combining grapheme joiner
        | '\u{061c}'               // arabic letter mark
        | '\u{115f}' | '\u{1160}'  // hangul fillers
        | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}'  // mongolian selectors
        | '\u{200b}'..='\u{200f}'  // zero-width space/joiners, LRM, RLM
        | '\u{2028}' | '\u{2029}'  // line/paragraph separators
        | '\u{202a}'..='\u{202e}'  // bidi embeddings and overrides
        | '\u{2060}'..='\u{206f}'  // word joiner, invisible operators, bidi isolates
        | '\u{3164}'
        | '\u{fe00}'..='\u{fe0f}'  // variation selectors
        | '\u{feff}'               // zero-width no-break space / BOM
        | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e0fff}' // tags
    )
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_everything_that_hides_text() {
        let cases = [
            ("ls -la", "ls -la"),
            ("a\nb\tc\r", "a\\nb\\tc\\r"),
            ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"), // ANSI colour
            ("\x07bell\x7f", "\\x07bell\\x7f"),
            ("rm\u{202e}fdp.exe", "rm\\u{202e}fdp.exe"), // Trojan Source bidi override
            ("r\u{200b}m", "r\\u{200b}m"),               // zero-width space
            ("\u{2066}x\u{2069}", "\\u{2066}x\\u{2069}"), // bidi isolates
            ("\u{9b}31m", "\\x9b31m"),                   // C1 CSI
            ("héllo ✓", "héllo ✓"),
            ("a\\b", "a\\b"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), want, "input {input:?}");
        }
    }
}
