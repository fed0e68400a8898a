//! Positions in a file's text: `line:col` (1-based) of byte offsets, for messages that point
//! at `file:line:col`. Pure.

/// `line:col` (1-based) of a byte offset in the text.
pub fn line_col(text: &str, offset: usize) -> String {
    LineIndex::new(text).line_col(offset)
}

/// `line:col` of many offsets in one text, reading the text once: locating each of a thousand
/// custom rules from the start of the file was quadratic (docs/BENCHMARKS.md). Offsets usually
/// come in order, so it counts on from the last one (newlines by a byte count the compiler
/// vectorizes); an earlier offset starts again from the top.
pub struct LineIndex<'t> {
    text: &'t str,
    /// The last offset asked for, its line (1-based), where that line starts, and its column
    /// (0-based, in chars).
    at: usize,
    line: usize,
    line_start: usize,
    col: usize,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> Self {
        LineIndex { text, at: 0, line: 1, line_start: 0, col: 0 }
    }

    pub fn line_col(&mut self, offset: usize) -> String {
        let (line, col) = self.advance(offset);
        format!("{line}:{col}")
    }

    /// `name:line:col`. Written out by hand: a thousand rules are located on every command,
    /// and `format!` cost more than finding the line.
    pub fn at(&mut self, name: &str, offset: usize) -> String {
        let (line, col) = self.advance(offset);
        let mut out = String::with_capacity(name.len() + 12);
        out.push_str(name);
        for n in [line, col] {
            out.push(':');
            push_number(&mut out, n);
        }
        out
    }

    /// Moves to `offset`; its line and column (both 1-based).
    fn advance(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        if offset < self.at {
            *self = LineIndex::new(self.text);
        }
        let between = &self.text.as_bytes()[self.at..offset];
        match between.iter().rposition(|b| *b == b'\n') {
            None => self.col += count_bytes(between, |b| !is_continuation(b)),
            Some(last) => {
                self.line += 1 + count_bytes(&between[..last], |b| b == b'\n');
                self.line_start = self.at + last + 1;
                self.col = count_bytes(&between[last + 1..], |b| !is_continuation(b));
            }
        }
        self.at = offset;
        (self.line, self.col + 1)
    }
}

/// Appends `n` in decimal.
fn push_number(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|d| char::from(*d)));
}

/// A UTF-8 continuation byte: counting the bytes that are not counts the characters.
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// How many bytes meet `pred`, counted in blocks of 255 in a `u8` (which the compiler turns
/// into wide vector adds; a `usize` count went a byte at a time).
fn count_bytes(bytes: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    bytes.chunks(255).map(|block| block.iter().fold(0u8, |n, &b| n + u8::from(pred(b))) as usize).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_agrees_with_counting_from_the_start() {
        fn naive(text: &str, offset: usize) -> String {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
            format!("{line}:{col}")
        }
        for text in ["", "one line {\"a\": 1}", "a\nbc\n\nd\u{e9}f\ng", "\n\n", "\u{e9}\u{e9}\n\u{e9}x\ny\n"] {
            let offsets: Vec<usize> = (0..=text.len()).filter(|o| text.is_char_boundary(*o)).collect();
            let mut index = LineIndex::new(text);
            // In order, backwards and jumping about: the remembered position must never leak.
            for o in offsets.iter().chain(offsets.iter().rev()).chain(offsets.iter().step_by(3)) {
                assert_eq!(index.line_col(*o), naive(text, *o), "{text:?} at {o}");
            }
        }
        assert_eq!(line_col("ab\ncd", 99), "2:3");
        let long = format!("{}x", "\n".repeat(12_345));
        assert_eq!(LineIndex::new(&long).at("f.json", long.len()), "f.json:12346:2");
        assert_eq!(LineIndex::new("ab\ncd").at("f", 0), "f:1:1");
    }
}
