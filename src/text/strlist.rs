//! Many short strings in one buffer. A whitelist of 10,000 entries is read on every command:
//! one allocation per entry (and another copy of each into the policy) was a third of what such
//! a command cost (docs/BENCHMARKS.md). A `StrList` holds them all in one `String`, and the
//! policy takes that buffer over without copying it.

/// Strings in order, stored end to end in one buffer.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StrList {
    buf: String,
    /// Where each string ends in `buf`; it starts where the one before it ends.
    ends: Vec<u32>,
}

impl StrList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, s: &str) {
        self.buf.push_str(s);
        // A config file is read whole into memory and is far below 4 GiB.
        self.ends.push(u32::try_from(self.buf.len()).expect("a string list over 4 GiB"));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.buf[start..end])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        // Each string starts where the one before it ends: walked once, without a lookup each.
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let s = &self.buf[start..end as usize];
            start = end as usize;
            s
        })
    }

    /// Adds every string of `more`, taking its buffer when this list is empty (the usual case:
    /// one file's list).
    pub fn append(&mut self, more: StrList) {
        if self.is_empty() {
            *self = more;
            return;
        }
        let base = u32::try_from(self.buf.len()).expect("a string list over 4 GiB");
        self.buf.push_str(&more.buf);
        self.ends.extend(more.ends.iter().map(|e| base + e));
    }

    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for StrList {
    fn from_iter<I: IntoIterator<Item = S>>(items: I) -> Self {
        let mut list = StrList::new();
        for s in items {
            list.push(s.as_ref());
        }
        list
    }
}

impl std::fmt::Debug for StrList {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<const N: usize> PartialEq<[&str; N]> for StrList {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_strings_in_order_and_appends_lists() {
        let mut a: StrList = ["ls", "", "npm test", "é x"].into_iter().collect();
        assert_eq!(a.len(), 4);
        assert_eq!(a, ["ls", "", "npm test", "é x"]);
        assert_eq!(a.get(2), Some("npm test"));
        assert_eq!(a.get(4), None);
        let b: StrList = ["git log"].into_iter().collect();
        a.append(b);
        assert_eq!(a, ["ls", "", "npm test", "é x", "git log"]);
        let mut empty = StrList::new();
        empty.append(a.clone());
        assert_eq!(empty, a);
        assert_eq!(format!("{a:?}"), r#"["ls", "", "npm test", "é x", "git log"]"#);
        assert_eq!(a.to_vec()[4], "git log");
    }
}
