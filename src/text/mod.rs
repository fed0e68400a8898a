//! Text: small shared pieces (the sanitizer, string lists, positions, JSON strings, typos).
//!
//! Small shared pieces of text handling: the one sanitizer, compact string lists, positions in
//! a file, borrowed JSON strings. They import nothing from the rest of agentsh.

pub mod json;
pub mod line_index;
pub mod sanitize;
pub mod similar;
pub mod strlist;
pub mod wrap;

/// `1 entry`, `2 entries`: a count with its noun in the right number.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
