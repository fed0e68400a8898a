//! Fitting text to a terminal's width: lines wrapped at spaces (escape sequences take no
//! columns), and text cut with `…`. Shared by the prompt and the approvals window.

/// `text` cut to `max` characters, with `…` where it was cut.
pub fn clip_to(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{head}…")
}

/// `text` in lines of at most `width` columns (escape sequences take none), broken at spaces;
/// continuation lines are indented. A word longer than a line is cut.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let cols = |t: &str| {
        let mut n = 0;
        let mut esc = false;
        for c in t.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                _ => n += 1,
            }
        }
        n
    };
    if cols(text) <= width {
        return vec![text.to_string()];
    }
    let indent = text.len() - text.trim_start_matches(' ').len();
    let mut out = Vec::new();
    let mut cur = " ".repeat(indent);
    let mut words_on_line = 0;
    for word in text.trim_start_matches(' ').split(' ') {
        if words_on_line > 0 && cols(&cur) + 1 + cols(word) > width {
            out.push(std::mem::take(&mut cur));
            cur = " ".repeat(indent + 4);
            words_on_line = 0;
        }
        if words_on_line > 0 {
            cur.push(' ');
        }
        cur.push_str(word);
        words_on_line += 1;
    }
    if words_on_line > 0 {
        out.push(cur);
    }
    out.into_iter().map(|l| if cols(&l) > width { clip_to(&l, width) } else { l }).collect()
}
