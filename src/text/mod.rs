//! Text: small shared pieces (the sanitizer, string lists, positions, JSON strings, typos, URLs).
//!
//! Small shared pieces of text handling: the one sanitizer, compact string lists, positions in
//! a file, borrowed JSON strings. They import nothing from the rest of agentsh.
//! SHA-256 as hex is here too: short inputs in portable code, long ones with the processor's
//! instructions (`sha256`).

pub mod base64;
pub mod json;
pub mod line_index;
pub mod sanitize;
pub mod sha256;
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

/// A size for a message: `512 bytes`, `64 KiB`, `1.5 MiB`, `1 GiB` (binary units, one decimal
/// where it is not whole).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if n < 1024 {
        return count(n as usize, "byte", "bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let shown = format!("{value:.1}");
    format!("{} {}", shown.strip_suffix(".0").unwrap_or(&shown), UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_a_person_writes_them() {
        let cases = [(1, "1 byte"), (512, "512 bytes"), (64 * 1024, "64 KiB"), (1536 * 1024, "1.5 MiB")];
        for (n, want) in cases {
            assert_eq!(super::bytes(n), want);
        }
        assert_eq!(super::bytes(1 << 30), "1 GiB");
    }
}
