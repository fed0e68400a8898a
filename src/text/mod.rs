//! Text: small shared pieces (the sanitizer, string lists, positions, JSON strings, typos, URLs).
//!
//! Small shared pieces of text handling: the one sanitizer, compact string lists, positions in
//! a file, borrowed JSON strings. They import nothing from the rest of agentsh.

pub mod json;
pub mod line_index;
pub mod sanitize;
pub mod similar;
pub mod strlist;
pub mod url;
pub mod wrap;

/// A path as text, `U+FFFD` for bytes that are not UTF-8. Checked with the fast UTF-8 test
/// first: `to_string_lossy` walks every path in chunks, and a boxed command turns about sixty
/// paths into text for the judge and the audit record.
pub fn path(p: &std::path::Path) -> String {
    match p.to_str() {
        Some(s) => s.to_owned(),
        None => p.to_string_lossy().into_owned(),
    }
}

/// `1 entry`, `2 entries`: a count with its noun in the right number.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
