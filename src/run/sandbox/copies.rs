//! Files of the person's that the box shows as a copy the builder writes, with their secrets
//! taken out (issue 25, rt-files F13): what the box must read of them is kept, and the copy is
//! bound read-only at the same path, so what reads them there works as before.
//! - git's global config ([`HOME_FILTERED`]): tokens in `url."https://x-access-token:TOKEN@…"`,
//!   `http.*.extraHeader` and inline credential helpers are common;
//! - the agents' shell snapshots (`~/.codex/shell_snapshots`): Codex's export every variable,
//!   and sourcing one would put back what the environment scrub ([`super::environ`]) removed.
//!
//! A copy is made when the box is built. The box's record watches the snapshot directories, so a
//! snapshot written for a new session makes a new box; a changed git config shows in the next
//! box (as a toolchain installed since does).

use std::path::Path;

/// Files in home the box shows as a copy without secrets, relative to home.
pub const HOME_FILTERED: &[&str] = &[".gitconfig", ".config/git/config"];

/// The names of the directories agents keep their shell snapshots in (`super::SNAPSHOT_DIRS`).
pub const SNAPSHOT_NAMES: &[&str] = &["shell_snapshots", "shell-snapshots"];

/// What a file at `path` (under `home`) is shown as, where it is shown as a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copied {
    GitConfig,
    Snapshots,
}

pub fn copied(path: &Path, home: &Path) -> Option<Copied> {
    if HOME_FILTERED.iter().any(|rel| path.strip_prefix(home).is_ok_and(|r| r == Path::new(rel))) {
        return Some(Copied::GitConfig);
    }
    let name = path.file_name().and_then(|n| n.to_str())?;
    SNAPSHOT_NAMES.contains(&name).then_some(Copied::Snapshots)
}

/// A git config file without what holds a credential: sections whose name holds one
/// (`[url "https://user:TOKEN@host/"]`), credential sections (a helper may hold the secret
/// inline), and entries whose key names a secret (`extraHeader`, `password`, `token`, `secret`) or
/// whose value holds a URL with a password or a token as its user, or an `Authorization`. Comments go too.
pub fn git_config(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut drop_section = false;
    let mut continued = false;
    let mut dropping_entry = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if continued {
            // The rest of an entry whose value goes on (a trailing backslash).
            continued = body.ends_with('\\');
            if !dropping_entry && !drop_section {
                out.push_str(line);
            }
            continue;
        }
        let trimmed = body.trim_start();
        if trimmed.starts_with('[') {
            let end = trimmed.find(']').unwrap_or(trimmed.len());
            let header = &trimmed[..end];
            let name = header.trim_start_matches('[').split(['"', '.', ' ']).next().unwrap_or("").to_ascii_lowercase();
            drop_section = name == "credential" || holds_credential(header);
            if !drop_section {
                // Only the header: an entry after it on the same line is judged below.
                out.push_str(&trimmed[..end.min(trimmed.len())]);
                out.push_str("]\n");
                let rest = trimmed.get(end + 1..).unwrap_or("").trim();
                if !rest.is_empty() && !rest.starts_with(['#', ';']) && !secret_entry(rest) {
                    out.push_str(rest);
                    out.push('\n');
                }
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        continued = body.ends_with('\\');
        dropping_entry = drop_section || secret_entry(trimmed);
        if !dropping_entry {
            out.push_str(line);
        }
    }
    out
}

fn secret_entry(entry: &str) -> bool {
    let key = entry.split(['=', ' ', '\t']).next().unwrap_or("").to_ascii_lowercase();
    ["extraheader", "pass", "token", "secret", "cookie"].iter().any(|s| key.contains(s))
        || holds_credential(entry)
        || entry.to_ascii_lowercase().contains("authorization")
}

/// Whether `text` holds a URL with a credential in its user part: `user:password@`, or a user
/// long enough to be a token (`https://ghp_…@github.com`). `ssh://git@host` is no credential.
fn holds_credential(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest.split(['/', '"', ' ', '\t']).next().unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(user, _)| user.contains(':') || user.len() >= 20)
    })
}

/// A shell snapshot without the variables the environment scrub removes: a name
/// [`super::environ::secret`] names, or a value [`super::environ::secret_value`] does. Each
/// `export NAME=…` or `declare -x NAME=…` statement (its value may span lines, quoted) becomes
/// `:`, so what holds it (a function's body) still reads. In a snapshot with an `# exports`
/// section (Codex's), only that section is looked at, after the functions.
pub fn snapshot(text: &str) -> String {
    let start = text.find("\n# exports").map(|i| i + 1).unwrap_or(0);
    let (head, tail) = text.split_at(start);
    let mut out = String::with_capacity(text.len());
    out.push_str(head);
    let mut rest = tail;
    while !rest.is_empty() {
        let end = statement_end(rest);
        let (stmt, after) = rest.split_at(end);
        match exported(stmt) {
            Some((name, value))
                if super::environ::secret(name) || super::environ::secret_value(unquoted(value).as_bytes()) =>
            {
                out.push(':');
                if stmt.ends_with('\n') {
                    out.push('\n');
                }
            }
            _ => out.push_str(stmt),
        }
        rest = after;
    }
    out
}

/// The length of the first statement of `text`, through the newline that ends it outside quotes.
fn statement_end(text: &str) -> usize {
    #[derive(PartialEq)]
    enum Q {
        None,
        Single,
        Double,
        Dollar,
    }
    let b = text.as_bytes();
    let (mut q, mut i) = (Q::None, 0);
    while i < b.len() {
        let c = b[i];
        match q {
            Q::None => match c {
                b'\\' => i += 1,
                b'\'' => q = Q::Single,
                b'"' => q = Q::Double,
                b'$' if b.get(i + 1) == Some(&b'\'') => {
                    q = Q::Dollar;
                    i += 1;
                }
                b'\n' => return i + 1,
                _ => {}
            },
            Q::Single if c == b'\'' => q = Q::None,
            Q::Double | Q::Dollar if c == b'\\' => i += 1,
            Q::Double if c == b'"' => q = Q::None,
            Q::Dollar if c == b'\'' => q = Q::None,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// `NAME` and the value's text of `export NAME=…`, or `declare -x NAME=…` (with any other flags).
fn exported(stmt: &str) -> Option<(&str, &str)> {
    let s = stmt.trim_start();
    let rest = if let Some(r) = s.strip_prefix("export ") {
        r
    } else {
        let r = s.strip_prefix("declare ").or_else(|| s.strip_prefix("typeset "))?;
        let (flags, r) = r.trim_start().split_once(' ')?;
        if !(flags.starts_with('-') && flags.contains('x')) {
            return None;
        }
        r
    };
    let rest = rest.trim_start().trim_start_matches("-- ");
    let name = rest.split(['=', ' ', '\n', ';']).next()?;
    let value = rest[name.len()..].strip_prefix('=').unwrap_or("").trim_end_matches('\n');
    (!name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')).then_some((name, value))
}

/// A value's text without one layer of quotes (`'…'`, `"…"`, `$'…'`).
fn unquoted(value: &str) -> &str {
    let v = value.strip_prefix('$').filter(|v| v.starts_with('\'')).unwrap_or(value);
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_config_keeps_its_settings_and_loses_its_credentials() {
        let text = "[user]\n\tname = Ann\n\temail = ann@example.com\n\
                    [url \"https://x-access-token:ghp_SECRET1@github.com/\"]\n\tinsteadOf = https://github.com/\n\
                    [url \"ssh://git@github.com/\"]\n\tinsteadOf = gh:\n\
                    [http \"https://example.com\"]\n\textraHeader = Authorization: Bearer SECRET2\n\tsslVerify = true\n\
                    [credential]\n\thelper = \"!f() { echo password=SECRET3; }; f\"\n\
                    [sendemail]\n\tsmtpPass = SECRET4\n\tsmtpServer = mail.example.com\n\
                    [remote \"x\"]\n\turl = https://ann:SECRET5@example.com/r.git\n\
                    # token SECRET6\n\
                    [alias]\n\tlg = log \\\n\t  --oneline\n[core] editor = vim\n";
        let out = git_config(text);
        for secret in ["SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6"] {
            assert!(!out.contains(secret), "{secret} kept:\n{out}");
        }
        for kept in [
            "name = Ann",
            "email = ann@example.com",
            "[url \"ssh://git@github.com/\"]",
            "insteadOf = gh:",
            "sslVerify = true",
            "smtpServer = mail.example.com",
            "lg = log \\\n\t  --oneline\n",
            "[core]\neditor = vim\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        assert!(!out.contains("https://github.com/"), "the section's entries go with it:\n{out}");
    }

    #[test]
    fn a_snapshot_loses_its_secret_exports_and_still_reads() {
        let text = "# Snapshot file\nf() {\n  export INNER_TOKEN=x\n  echo 'it'\"s\"\n}\n# exports 5\n\
                    export OPENAI_API_KEY='sk-SECRET1'\nexport PATH=/usr/bin:/bin\n\
                    export MULTI_SECRET_TOKEN='line1\nSECRET2'\ndeclare -x GITHUB_TOKEN=\"SECRET3\\\"\nSECRET4\"\n\
                    export NOTE=$'a\\'b'\nexport SSH_AUTH_SOCK=/tmp/ssh-x/agent.1\nexport LANG=C.UTF-8\n\
                    export DATABASE='postgres://u:SECRET5@db/app'\nexport HELPER=\"ghp_SECRET6aaaaaaaaaaaaaaaaaaaa\"\n";
        let out = snapshot(text);
        for secret in ["SECRET1", "SECRET2", "SECRET3", "SECRET4", "agent.1", "SECRET5", "SECRET6"] {
            assert!(!out.contains(secret), "{secret} kept:\n{out}");
        }
        for kept in ["export PATH=/usr/bin:/bin\n", "export NOTE=$'a\\'b'\n", "export LANG=C.UTF-8\n", "f() {\n"] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        // Before the exports, as written (a function's own exports are not the environment's).
        assert!(out.contains("export INNER_TOKEN=x"));
        // It still reads as shell.
        let ok = std::process::Command::new("bash").args(["-n", "-c", &out]).status().unwrap();
        assert!(ok.success(), "{out}");
    }
}
