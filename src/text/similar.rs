//! "Did you mean": the closest of some known words to a mistyped one.

/// The candidate closest to `word` by edits (insert, delete, replace, swap two neighbours), if
/// it is close enough to be a typo: one edit for words of up to four characters, two beyond.
/// Ties go to the first candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if word.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (edits(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The optimal string alignment distance (Damerau-Levenshtein without repeated edits of one
/// substring), by characters.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_word_and_strangers_find_none() {
        let subcommands = ["check", "whitelist", "approve", "approvals", "log"];
        assert_eq!(closest("whitelst", subcommands), Some("whitelist"));
        assert_eq!(closest("aprove", subcommands), Some("approve"));
        assert_eq!(closest("chekc", subcommands), Some("check"));
        assert_eq!(closest("--versoin", ["--version", "--help"]), Some("--version"));
        assert_eq!(closest("lgo", subcommands), Some("log"));
        assert_eq!(closest("deploy", subcommands), None);
        assert_eq!(closest("check", subcommands), None, "the word itself is no suggestion");
        assert_eq!(
            closest("requireCommandConfirmaton", ["requireCommandConfirmation"]),
            Some("requireCommandConfirmation")
        );
    }
}
