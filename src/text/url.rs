//! URLs: the host a URL really names, and the tricks that hide it (issue 29, item 1).
//!
//! Pure text, no I/O. Shared by the judge (whether a URL stays on this machine) and by what a
//! person reads before approving (the prompt's and the approvals window's "sends to:" lines).
//! What it reads is the URL as the program gets it: quotes already removed by the caller.

/// One URL as written, taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// The URL as written (a scheme-less word such as `evil.example/x` too).
    pub text: String,
    /// Before `://`, lowercased; empty when the word has none (curl reads `evil.example` as http).
    pub scheme: String,
    /// Everything before the last `@` of the authority: a user name (and password), never the host.
    pub userinfo: Option<String>,
    /// The host, lowercased, without a trailing dot; `[..]` kept for IPv6.
    pub host: String,
    /// How many `@` the authority holds: more than one, and programs disagree on the host.
    pub ats: usize,
}

/// Top-level domains that, found in the middle of a host, make it look like another name
/// (`github.com.evil.example` is a name under `evil.example`).
const TLDS: &[&str] =
    &["com", "org", "net", "io", "dev", "app", "ai", "co", "gov", "edu", "sh", "cloud", "me", "info", "xyz"];

/// Names people trust, and the domains that really are theirs: a host that mentions the name
/// without being under one of those domains imitates it.
const KNOWN: &[(&str, &[&str])] = &[
    ("github", &["github.com", "githubusercontent.com", "github.io", "githubassets.com"]),
    ("gitlab", &["gitlab.com", "gitlab.io"]),
    ("bitbucket", &["bitbucket.org", "bitbucket.io"]),
    ("anthropic", &["anthropic.com"]),
    ("claude", &["claude.ai", "claude.com"]),
    ("openai", &["openai.com"]),
    ("google", &["google.com", "googleapis.com", "googleusercontent.com"]),
    ("pypi", &["pypi.org"]),
    ("npmjs", &["npmjs.org", "npmjs.com"]),
    ("crates", &["crates.io"]),
    ("amazonaws", &["amazonaws.com"]),
    ("microsoft", &["microsoft.com"]),
    ("azure", &["azure.com", "azure.net"]),
    ("docker", &["docker.com", "docker.io"]),
    ("apple", &["apple.com"]),
    ("cloudflare", &["cloudflare.com"]),
];

impl Url {
    /// A word read as a URL: `scheme://[userinfo@]host[:port][/...]`, or without a scheme as
    /// curl and wget read one (`evil.example/x`). `None` when there is no host.
    pub fn parse(word: &str) -> Option<Url> {
        let (scheme, rest) = match word.find("://") {
            Some(i) if is_scheme(&word[..i]) => (word[..i].to_ascii_lowercase(), &word[i + 3..]),
            Some(_) => return None,
            None => (String::new(), word),
        };
        // Browsers end the authority at `\` too; so does this, to name the host they would use.
        let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let ats = authority.matches('@').count();
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(authority[..i].to_string()), &authority[i + 1..]),
            None => (None, authority),
        };
        let host = if hostport.starts_with('[') {
            hostport.find(']').map_or(hostport, |i| &hostport[..=i])
        } else {
            hostport.split(':').next().unwrap_or("")
        };
        let host = host.trim_end_matches('.').to_lowercase();
        if host.is_empty() {
            return None;
        }
        Some(Url { text: word.to_string(), scheme, userinfo, host, ats })
    }

    /// Whether the URL stays on this machine, whichever way a program reads it: the host is
    /// loopback by name or number, with no `@` that another program could read differently.
    pub fn is_local(&self) -> bool {
        if self.ats > 0 || self.host.contains('%') {
            return false;
        }
        let loopback_v4 = |h: &str| {
            let parts: Vec<&str> = h.split('.').collect();
            parts.len() == 4
                && parts[0] == "127"
                && parts.iter().all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
        };
        matches!(self.host.as_str(), "localhost" | "[::1]" | "0.0.0.0") || loopback_v4(&self.host)
    }

    /// What could make a person misread the host, each in a few words; empty when nothing does.
    pub fn tricks(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.ats > 1 {
            out.push("several `@`: programs disagree on which part is the host".to_string());
        }
        if let Some(user) = &self.userinfo {
            // The command is shown whole above this: a long user name is named by its start.
            let short: String =
                if user.chars().count() > 24 { user.chars().take(23).chain(['…']).collect() } else { user.clone() };
            out.push(match looks_like_host(user) {
                Some(name) => format!("not {name}: `{short}@` is only a user name"),
                None => format!("`{short}@` is a user name, not part of the host"),
            });
        }
        if !self.host.is_ascii() {
            out.push("the host has non-ASCII letters, which can imitate another name".to_string());
        }
        if self.host.split('.').any(|l| l.starts_with("xn--")) {
            out.push("the host is an encoded international name (xn--), which can imitate another".to_string());
        }
        let labels: Vec<&str> = self.host.split('.').collect();
        if let Some(i) = (0..labels.len().saturating_sub(2)).find(|&i| i > 0 && TLDS.contains(&labels[i])) {
            let looks_like = labels[..=i].join(".");
            out.push(format!("`{looks_like}.` is only the start of the name: the host is not {looks_like}"));
        } else if let Some(name) = imitated(&self.host) {
            out.push(format!("mentions {name}, but is not a {name} domain"));
        }
        out
    }
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The host a user name reads like (its part before any `:`), when it has a dot between
/// labels or names a known service.
fn looks_like_host(user: &str) -> Option<String> {
    let name = user.split(':').next().unwrap_or(user).to_lowercase();
    let dotted = name.split('.').filter(|l| !l.is_empty()).count() >= 2;
    (dotted || KNOWN.iter().any(|(n, _)| name.contains(n))).then_some(name)
}

/// The known name a host mentions without being under one of its domains (or their country
/// versions: `google.com.au`, `google.de`).
fn imitated(host: &str) -> Option<&'static str> {
    let under = |d: &str| host == d || host.ends_with(&format!(".{d}"));
    let country = |d: &str| {
        let Some((name, _)) = d.split_once('.') else { return false };
        let labels: Vec<&str> = host.split('.').collect();
        let cc = |l: &str| l.len() == 2 && l.bytes().all(|b| b.is_ascii_lowercase());
        let plain = matches!(labels.as_slice(), [.., n, l] if *n == name && cc(l));
        let second = matches!(labels.as_slice(), [.., n, s, l] if *n == name
            && matches!(*s, "com" | "co" | "org" | "net") && cc(l));
        plain || second
    };
    KNOWN
        .iter()
        .find(|(name, domains)| host.contains(name) && !domains.iter().any(|d| under(d) || country(d)))
        .map(|(n, _)| *n)
}

/// Every `scheme://` URL inside `word` (an argument after quote removal, or raw text): a URL
/// starts at its scheme and ends at white space or a quote.
pub fn find_in(word: &str) -> Vec<Url> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = word[from..].find("://").map(|i| i + from) {
        let start = word[..i]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(i, |(j, _)| j);
        // The scheme starts with a letter: skip leading digits and signs (`x=1https://`).
        let start = word[start..i].find(|c: char| c.is_ascii_alphabetic()).map_or(i, |k| start + k);
        let end = word[i..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | '|' | ';' | '(' | ')'))
            .map_or(word.len(), |k| i + k);
        if let Some(url) = Url::parse(&word[start..end]) {
            out.push(url);
        }
        from = end.max(i + 3);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(w: &str) -> String {
        Url::parse(w).map(|u| u.host).unwrap_or_default()
    }

    /// Issue 29, item 1: the host is what follows the last `@`, whatever comes before it.
    #[test]
    fn the_host_is_after_the_userinfo() {
        let w = "https://github.com:443-anthropic-docs-mirror-trusted-upload-endpoint-v2@evil.example/";
        assert_eq!(host(w), "evil.example");
        assert_eq!(host("http://localhost:80@evil.example/"), "evil.example");
        assert_eq!(host("https://a@b@c.example/x"), "c.example");
        assert_eq!(host("HTTPS://User:pw@Example.COM.:8443/p?q"), "example.com");
        assert_eq!(host("http://[::1]:8080/"), "[::1]");
        assert_eq!(host("evil.example/upload"), "evil.example");
        assert_eq!(host("https://good.example\\@evil.example"), "good.example");
        assert_eq!(Url::parse("://x"), None);
        assert_eq!(Url::parse("https:///path"), None);
    }

    /// Before, `http://localhost:80@evil.example/` and `http://127.evil.example/` counted as
    /// this machine, so a POST to them ran in the box unasked.
    #[test]
    fn only_loopback_hosts_are_local() {
        for local in ["http://localhost:8000/x", "127.0.0.1:3000", "http://127.0.0.1/", "http://[::1]/", "localhost"] {
            assert!(Url::parse(local).unwrap().is_local(), "{local}");
        }
        for remote in [
            "http://localhost:80@evil.example/",
            "http://127.0.0.1@evil.example/",
            "http://127.evil.example/",
            "http://localhost.evil.example/",
            "http://evil.example@localhost/",
            "http://127.0.0.1%2eevil.example/",
            "https://example.com/",
        ] {
            assert!(!Url::parse(remote).unwrap().is_local(), "{remote}");
        }
    }

    #[test]
    fn tricks_are_named() {
        let tricks = |w: &str| Url::parse(w).unwrap().tricks().join(" | ");
        let t = tricks("https://github.com:443-anthropic-docs@evil.example/");
        assert!(t.contains("not github.com: `github.com:443-anthropi…@` is only a user name"), "{t}");
        assert!(tricks("https://token@github.com/x").contains("is a user name"));
        assert!(tricks("https://a@b@c.example/").contains("several `@`"));
        assert!(tricks("https://github.com.evil.example/").contains("`github.com.` is only the start"));
        assert!(tricks("https://xn--gthub-n4a.com/").contains("xn--"));
        assert!(tricks("https://gіthub.com/").contains("non-ASCII"), "Cyrillic і");
        assert!(tricks("https://github-login.example/").contains("mentions github"));
        assert!(tricks("https://github.evil.de/").contains("mentions github"));
        for plain in [
            "https://github.com/org/repo",
            "https://raw.githubusercontent.com/x",
            "https://api.github.com/",
            "https://pypi.org/simple",
            "https://www.google.com.au/",
            "https://www.google.de/",
            "https://foo.co.uk/",
            "http://localhost:8000/",
        ] {
            assert_eq!(tricks(plain), "", "{plain}");
        }
    }

    #[test]
    fn urls_are_found_inside_words_and_text() {
        let found = |t: &str| find_in(t).into_iter().map(|u| u.host).collect::<Vec<_>>();
        assert_eq!(found("--url=https://a.example/x"), ["a.example"]);
        assert_eq!(found("curl 'https://a.example' -d x http://b.example/y"), ["a.example", "b.example"]);
        assert_eq!(found("echo \"see https://c.example/$(cat .env)\""), ["c.example"]);
        assert_eq!(found("no urls here: a://"), Vec::<String>::new());
        assert_eq!(found("x=1https://d.example"), ["d.example"]);
    }
}
