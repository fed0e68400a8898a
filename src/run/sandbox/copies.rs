//! Files of the person's that the box shows as a copy the builder writes, with their secrets
//! taken out (issue 25, rt-files F13, rt4 R8 and R10): what the box must read of them is kept,
//! and the copy is bound read-only at the same path, so what reads them there works as before.
//! - git's global config ([`HOME_FILTERED`]): tokens in `url."https://x-access-token:TOKEN@…"`,
//!   `http.*.extraHeader` and inline credential helpers are common;
//! - cargo's config (`$CARGO_HOME/config.toml`, `config`): a registry's `token`, a
//!   `credential-provider` with its arguments, a proxy's password, `[env]` secrets;
//! - the agents' shell snapshots (`~/.codex/shell_snapshots`, `~/.claude/shell-snapshots`):
//!   Codex's export every variable, and sourcing one would put back what the environment scrub
//!   ([`super::environ`]) removed; both keep the person's aliases and functions, which hold
//!   tokens as often (`alias gh-api='curl -H "Authorization: token …"'`);
//! - a toolchain's own settings files in the toolchains the box shows ([`in_toolchain`]: npm's
//!   global `etc/npmrc`, a Python's `pip.conf`), found when the box is built
//!   (`super::view`); its key and credential stores are covered.
//!
//! A copy is made when the box is built. The box's record watches the snapshot directories, so a
//! snapshot written for a new session makes a new box; a changed git or cargo config shows in the
//! next box (as a toolchain installed since does).

use std::path::Path;

/// Files in home the box shows as a copy without secrets, relative to home.
pub const HOME_FILTERED: &[&str] = &[".gitconfig", ".config/git/config"];

/// Cargo's config files, relative to its home (`$CARGO_HOME`, or `~/.cargo`).
pub const CARGO_FILTERED: &[&str] = &["config.toml", "config"];

/// The names of the directories agents keep their shell snapshots in (`super::SNAPSHOT_DIRS`).
pub const SNAPSHOT_NAMES: &[&str] = &["shell_snapshots", "shell-snapshots"];

/// What a file at `path` is shown as, where it is shown as a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copied {
    GitConfig,
    CargoConfig,
    Snapshots,
    /// A settings file in a toolchain's tree ([`in_toolchain`]): [`settings_file`].
    Settings,
}

/// What a file in a toolchain's tree the box shows (`~/.nvm`, `~/.pyenv`, `~/.dotnet`, ...) is
/// shown as, by its name (rt5 A11): toolchains keep their own settings beside their programs,
/// and a person's credentials with them (`npm config set --location=global` writes
/// `$PREFIX/etc/npmrc`, pip reads `sys.prefix/pip.conf`, .NET keeps certificates with their
/// private keys in `~/.dotnet/corefx/cryptography/x509stores`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InToolchain {
    /// A settings file of a package manager's, where tokens sit beside settings: shown as a
    /// copy without them ([`settings_file`]).
    Filtered,
    /// A credential store or a key store: covered.
    Hidden,
    /// A file that may hold a private key (`*.pem`, `*.key`) or docker's logins (`config.json`
    /// with `"auths"`): covered where its first 64 KiB do ([`holds_key_or_logins`]).
    KeyIfPrivate,
}

/// The most of a file that is read to judge it by what it holds ([`InToolchain::KeyIfPrivate`],
/// and [`private_key_head`]'s files, which are judged only where smaller than this).
pub const JUDGED_SIZE: u64 = 64 * 1024;

/// How much of a file of any other name is read for a private key's header
/// ([`private_key_head`]).
pub const HEAD_SIZE: usize = 1024;

/// Whether `head`, the start of a file [`InToolchain::KeyIfPrivate`] names, holds a secret (a
/// private key, a token in its issuer's form) or docker's logins (`"auths"`).
pub fn holds_key_or_logins(head: &[u8]) -> bool {
    super::environ::secret_value(head) || head.windows(7).any(|w| w == b"\"auths\"")
}

/// Whether `head`, a file's first [`HEAD_SIZE`] bytes, holds a private key's PEM header of any
/// kind (`-----BEGIN OPENSSH PRIVATE KEY-----`, `-----BEGIN EC PRIVATE KEY-----`, ...; rt6 X8):
/// a file of any name in a toolchain's tree that does is covered.
pub fn private_key_head(head: &[u8]) -> bool {
    head.windows(10).enumerate().any(|(i, w)| {
        w == b"-----BEGIN" && {
            let line = &head[i..];
            let line = &line[..line.iter().position(|&c| c == b'\n').unwrap_or(line.len())];
            line.windows(16).any(|w| w == b"PRIVATE KEY-----")
        }
    })
}

/// Whether a file named `name` that [`in_toolchain`] does not name is read for a private key
/// ([`private_key_head`]): any name but those of the formats toolchains hold by the thousand and
/// no key is kept in (documentation's HTML, scripts and sources, images, fonts, compiled
/// libraries): what is not read is named.
pub fn may_hold_key(name: &[u8]) -> bool {
    const NOT_KEYS: &[&[u8]] = &[
        b"html", b"htm", b"js", b"mjs", b"cjs", b"ts", b"map", b"css", b"h", b"hpp", b"c", b"cc", b"rs", b"py", b"pyc",
        b"pyi", b"rb", b"go", b"java", b"class", b"md", b"rst", b"svg", b"png", b"jpg", b"gif", b"ico", b"woff",
        b"woff2", b"ttf", b"rlib", b"rmeta", b"so", b"a", b"o", b"patch", b"diff", b"bats", b"sample",
    ];
    match name.iter().rposition(|&c| c == b'.') {
        Some(dot) if dot > 0 => !NOT_KEYS.contains(&name[dot + 1..].to_ascii_lowercase().as_slice()),
        _ => true,
    }
}

/// The settings files of [`InToolchain::Filtered`]: npm's, yarn's, pip's, PyPI's upload
/// config, conda's, gem's, bun's, Gradle's.
pub const TOOLCHAIN_SETTINGS: &[&str] = &[
    "npmrc",
    ".npmrc",
    // yarn 1's global settings (`$PREFIX/etc/yarnrc`, rt6 X8) and its user's.
    "yarnrc",
    ".yarnrc",
    ".yarnrc.yml",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    ".condarc",
    "condarc",
    ".gemrc",
    "gemrc",
    "bunfig.toml",
    ".bunfig.toml",
    "gradle.properties",
    // Maven's: `<server>`s with their `<password>` (`$MAVEN_HOME/conf/settings.xml`).
    "settings.xml",
];

/// The credential and key stores of [`InToolchain::Hidden`], files by name; and by suffix,
/// [`TOOLCHAIN_KEY_SUFFIXES`]; directories, [`TOOLCHAIN_STORE_DIRS`].
pub const TOOLCHAIN_STORES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".git-credentials",
    "credentials",
    "credentials.json",
    "credentials.toml",
    ".pgpass",
    "settings-security.xml",
    // composer's (`http-basic` passwords, `github-oauth` tokens), a project's secrets and
    // direnv's (rt6 X8); `.env.<anything>` too ([`in_toolchain`]).
    "auth.json",
    ".env",
    ".envrc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// Directories that are credential or key stores: .NET's certificate stores (private keys in
/// the clear), docker's client config.
pub const TOOLCHAIN_STORE_DIRS: &[&str] = &["x509stores", ".docker"];

/// Key stores by their suffix: PKCS#12 (`.pfx`, `.p12`, .NET's store), Java's own.
pub const TOOLCHAIN_KEY_SUFFIXES: &[&str] = &[".pfx", ".p12", ".jks", ".keystore"];

/// How a file or directory named `name` in a toolchain's tree is shown, where not as it is.
pub fn in_toolchain(name: &[u8], dir: bool) -> Option<InToolchain> {
    let named = |list: &[&str]| list.iter().any(|n| n.as_bytes() == name);
    if dir {
        return named(TOOLCHAIN_STORE_DIRS).then_some(InToolchain::Hidden);
    }
    if named(TOOLCHAIN_STORES) || name.starts_with(b".env.") {
        return Some(InToolchain::Hidden);
    }
    if name == b"config.json" {
        return Some(InToolchain::KeyIfPrivate);
    }
    let low = name.to_ascii_lowercase();
    if named(TOOLCHAIN_SETTINGS) {
        Some(InToolchain::Filtered)
    } else if TOOLCHAIN_KEY_SUFFIXES.iter().any(|s| low.ends_with(s.as_bytes())) {
        Some(InToolchain::Hidden)
    } else if low.ends_with(b".pem") || low.ends_with(b".key") {
        Some(InToolchain::KeyIfPrivate)
    } else {
        None
    }
}

/// A settings file of `key = value` (or `key: value`) lines (`.npmrc`, `pip.conf`, `.pypirc`,
/// `.yarnrc.yml`, `gradle.properties`) without what holds a credential: a line whose key says
/// it holds one ([`super::environ::secret_name`]: `//registry.npmjs.org/:_authToken`, `_auth`,
/// `_password`, `password`, `npmAuthToken`) or whose text does ([`holds_secret`], a URL with a
/// password: pip's `index-url`), with the lines that continue it (indented
/// more); and comments. An XML file (Maven's `settings.xml`) is [`xml_settings`]'s.
pub fn settings_file(text: &str) -> String {
    if text.trim_start().starts_with('<') {
        return xml_settings(text);
    }
    let mut out = String::with_capacity(text.len());
    // The indentation of the line last dropped, while the lines after it continue it.
    let mut dropped: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start();
        let indent = body.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if dropped.is_some_and(|d| indent > d) {
            continue;
        }
        let key = trimmed.split(['=', ':']).next().unwrap_or("").trim().trim_matches(['"', '\'']);
        // npm's per-registry keys: `//host/path/:_authToken`, the key after the last `:`.
        let last = trimmed.split('=').next().unwrap_or("").rsplit(':').next().unwrap_or("").trim();
        // yarn 1's `key "value"` (`//registry.npmjs.org/:_authToken "…"`, rt6 X8).
        let first = trimmed.split([' ', '\t', '=']).next().unwrap_or("").trim_end_matches(':');
        let first = first.rsplit(':').next().unwrap_or("").trim_matches(['"', '\'']);
        let secret = super::environ::secret_name(key)
            || super::environ::secret_name(last)
            || super::environ::secret_name(first)
            || conda_token(trimmed)
            || holds_secret(trimmed);
        dropped = secret.then_some(indent);
        if !secret {
            out.push_str(line);
        }
    }
    out
}

/// Whether `text` holds a URL with a conda channel token: `https://host/t/<token>/channel`
/// (rt6 X8).
fn conda_token(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let url = text[at + 3..].split(|c: char| c.is_ascii_whitespace() || matches!(c, '"' | '\'' | ',' | ']')).next();
        url.is_some_and(|u| {
            u.split('/').skip(1).collect::<Vec<_>>().windows(2).any(|w| w[0] == "t" && !w[1].is_empty())
        })
    })
}

/// How `path` is shown, for a person whose home is `home` and cargo's `cargo_home`.
pub fn copied(path: &Path, home: &Path, cargo_home: &Path) -> Option<Copied> {
    if HOME_FILTERED.iter().any(|rel| path.strip_prefix(home).is_ok_and(|r| r == Path::new(rel))) {
        return Some(Copied::GitConfig);
    }
    if CARGO_FILTERED.iter().any(|rel| path.strip_prefix(cargo_home).is_ok_and(|r| r == Path::new(rel))) {
        return Some(Copied::CargoConfig);
    }
    let name = path.file_name().and_then(|n| n.to_str())?;
    SNAPSHOT_NAMES.contains(&name).then_some(Copied::Snapshots)
}

/// A git config file without what holds a credential: sections whose name holds one
/// (`[url "https://user:TOKEN@host/"]`), credential sections (a helper may hold the secret
/// inline), and entries whose key names a secret ([`secret_entry`]: `extraHeader`, `password`,
/// `token`, `secret`, another tool's `key` or `pat`) or whose value holds a URL with a password
/// or a token as its user, or an `Authorization`. Comments go too.
pub fn git_config(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut drop_section = false;
    // The section's name, lower case, without its subsection (`http` of `[http "https://…"]`).
    let mut section = String::new();
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
            section = header.trim_start_matches('[').split(['"', '.', ' ']).next().unwrap_or("").to_ascii_lowercase();
            drop_section = section == "credential" || super::environ::secret_url(header.as_bytes());
            if !drop_section {
                // Only the header: an entry after it on the same line is judged below.
                out.push_str(&trimmed[..end.min(trimmed.len())]);
                out.push_str("]\n");
                let rest = trimmed.get(end + 1..).unwrap_or("").trim();
                if !rest.is_empty() && !rest.starts_with(['#', ';']) && !secret_entry(&section, rest) {
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
        dropping_entry = drop_section || secret_entry(&section, trimmed);
        if !dropping_entry {
            out.push_str(line);
        }
    }
    out
}

/// Git's own settings whose names read as a secret's ([`super::environ::secret_name`]) but
/// hold none: a signing key's id or a public key, a client key's path, a public key's pin, the
/// text of a trailer (`section.key`, without a subsection).
const GIT_KEYS_NAMED_AS_SECRETS: &[&str] =
    &["user.signingkey", "http.sslkey", "http.proxysslkey", "http.pinnedpubkey", "trailer.key"];

/// Whether an entry of the git config section `section` (lower case) holds a credential (see
/// [`git_config`]): its key names one (git's `extraHeader`, `smtpPass`, ...; and, but for what
/// git defines ([`GIT_KEYS_NAMED_AS_SECRETS`]), any key a secret's name would, as other
/// tools keep theirs in git's file: `[azure] pat`, `[openai] key`, rt7 A4), or its value holds one.
fn secret_entry(section: &str, entry: &str) -> bool {
    let key = entry.split(['=', ' ', '\t']).next().unwrap_or("").to_ascii_lowercase();
    let gits = GIT_KEYS_NAMED_AS_SECRETS.iter().any(|k| k.split_once('.') == Some((section, &key)));
    // The key is judged above by git's names; the value alone by what it holds (read with its
    // key, `signingKey = ABCDEF0123` would be a setting of a secret's name: rt8 B1's spelling).
    let value = entry.split_once('=').map_or("", |(_, v)| v);
    ["extraheader", "pass", "token", "secret", "cookie"].iter().any(|s| key.contains(s))
        || (super::environ::secret_name(&key) && !gits)
        || holds_secret(value)
        || entry.to_ascii_lowercase().contains("authorization")
}

/// Cargo's config (TOML) without what holds a credential, as [`git_config`] does for git's. Keys
/// are read as TOML reads them (quoted keys unescaped: `"tok\u0065n"` is `token`), inline
/// tables' keys included, each with its whole path (`registries.corp.token` of
/// `corp = { token = … }` under `[registries]`; rt5 A7). Dropped:
/// - a table whose name says it holds one (`[credential-alias]`), and an entry any of whose keys
///   does ([`super::environ::secret_name`] of each part: `registry.token`,
///   `credential-provider`, `global-credential-providers`, an `[env]` entry such as
///   `OPENAI_API_KEY`);
/// - under `registry` and `registries.<name>`, where cargo keeps tokens, any key but `index`,
///   `protocol` and `default`: what is kept there is named, not what is dropped;
/// - an entry whose value holds one ([`holds_secret`]: `http.proxy` with a password, an `[env]`
///   value in a token's form, a URL with a password or a token as its user);
/// - what cannot be read as TOML: a table or an entry whose key does not parse.
///
/// Comments go too. An entry may span lines (an array, a multi-line string): it is kept or
/// dropped whole.
pub fn cargo_config(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut table: Option<Vec<String>> = Some(Vec::new());
    let mut rest = text;
    while !rest.is_empty() {
        let (stmt, len) = toml_statement(rest);
        rest = &rest[len..];
        let body = stmt.trim();
        if body.is_empty() {
            continue;
        }
        if body.starts_with('[') {
            let name = body.trim_start_matches('[').trim_end_matches(']');
            table = toml_table(name).filter(|path| !cargo_secret_path(path) && !holds_secret(name));
            if table.is_some() {
                out.push_str(body);
                out.push('\n');
            }
            continue;
        }
        let Some(table) = &table else { continue };
        let secret = match toml_paths(body) {
            Some(paths) => paths.iter().any(|p| {
                let full: Vec<String> = table.iter().chain(p).cloned().collect();
                cargo_secret_path(&full)
            }),
            None => true,
        };
        if !(secret || holds_secret(body)) {
            out.push_str(body);
            out.push('\n');
        }
    }
    out
}

/// Whether a key's whole path in cargo's config holds a credential (see [`cargo_config`]).
fn cargo_secret_path(path: &[String]) -> bool {
    let kept = |key: Option<&String>| key.is_none_or(|k| ["index", "protocol", "default"].contains(&k.as_str()));
    path.iter().any(|k| super::environ::secret_name(k))
        || match path.first().map(String::as_str) {
            Some("registry") => !kept(path.get(1)),
            Some("registries") => !kept(path.get(2)),
            _ => false,
        }
}

/// An XML settings file without its comments, the elements whose name says they hold a
/// secret ([`super::environ::secret_name`]: Maven's `<password>`, `<passphrase>`,
/// `<privateKey>`) or a request's headers (`<httpHeaders>`: GitLab's documented
/// `Private-Token`, rt6 X10), whole, and any text that holds one ([`holds_secret`], a URL with
/// a credential: a mirror's `<url>https://u:pw@host/</url>`). What follows an element that is
/// not closed goes too.
pub fn xml_settings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        let between = &rest[..at];
        if !holds_secret(between) {
            out.push_str(between);
        }
        rest = &rest[at..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            let Some(end) = comment.find("-->") else { return out };
            rest = &comment[end + 3..];
            continue;
        }
        let name_len = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(rest.len() - 1);
        let name = &rest[1..1 + name_len];
        let Some(tag_end) = rest.find('>') else { return out };
        let local = name.rsplit(':').next().unwrap_or(name);
        let whole = super::environ::secret_name(local) || local.eq_ignore_ascii_case("httpHeaders");
        if name.is_empty() || !whole || rest[..tag_end].ends_with('/') {
            out.push_str(&rest[..=tag_end]);
            rest = &rest[tag_end + 1..];
            continue;
        }
        let close = format!("</{name}>");
        let Some(end) = rest.find(&close) else { return out };
        rest = &rest[end + close.len()..];
    }
    out.push_str(rest);
    out
}

/// Every key's path in an entry (`key = value`), relative to its table: its own, and those of
/// the inline tables in its value (`a = { b = 1, c = [{ d = 2 }] }`: `a`, `a.b`, `a.c`, `a.c.d`).
/// `None` where it cannot be read as TOML.
fn toml_paths(entry: &str) -> Option<Vec<Vec<String>>> {
    let b = entry.as_bytes();
    let mut i = 0;
    let key = toml_path(b, &mut i)?;
    if b.get(i) != Some(&b'=') {
        return None;
    }
    i += 1;
    let mut paths = vec![key.clone()];
    toml_value(b, &mut i, &key, &mut paths, 0)?;
    skip_space(b, &mut i);
    (i == b.len()).then_some(paths)
}

/// Reads the value at `b[*i..]` of the key at `path`, adding its inline tables' keys to `paths`.
fn toml_value(b: &[u8], i: &mut usize, path: &[String], paths: &mut Vec<Vec<String>>, depth: u8) -> Option<()> {
    skip_space(b, i);
    let close = match *b.get(*i)? {
        b'"' | b'\'' => return toml_string(b, i).map(drop),
        b'{' => b'}',
        b'[' => b']',
        _ => {
            let end = b[*i..].iter().position(|c| matches!(c, b',' | b']' | b'}' | b'\n')).map_or(b.len(), |p| *i + p);
            let found = end > *i && b[*i..end].iter().any(|c| !c.is_ascii_whitespace());
            *i = end;
            return found.then_some(());
        }
    };
    if depth > 32 {
        return None;
    }
    *i += 1;
    loop {
        skip_space(b, i);
        if b.get(*i) == Some(&close) {
            *i += 1;
            return Some(());
        }
        if close == b'}' {
            let key = toml_path(b, i)?;
            if b.get(*i) != Some(&b'=') {
                return None;
            }
            *i += 1;
            let full: Vec<String> = path.iter().chain(&key).cloned().collect();
            toml_value(b, i, &full, paths, depth + 1)?;
            paths.push(full);
        } else {
            toml_value(b, i, path, paths, depth + 1)?;
        }
        skip_space(b, i);
        match *b.get(*i)? {
            b',' => *i += 1,
            c if c == close => {}
            _ => return None,
        }
    }
}

/// A key (`registries."corp".token`) at `b[*i..]`, its parts as TOML reads them (quoted ones
/// unescaped), and the spaces after it.
fn toml_path(b: &[u8], i: &mut usize) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    loop {
        skip_space(b, i);
        match *b.get(*i)? {
            b'"' | b'\'' => parts.push(toml_string(b, i)?),
            _ => {
                let end = b[*i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')))
                    .map_or(b.len(), |p| *i + p);
                if end == *i {
                    return None;
                }
                parts.push(String::from_utf8_lossy(&b[*i..end]).into_owned());
                *i = end;
            }
        }
        skip_space(b, i);
        if b.get(*i) != Some(&b'.') {
            return Some(parts);
        }
        *i += 1;
    }
}

/// A table's name (what is between `[` and `]`), read as [`toml_path`] reads a key.
fn toml_table(name: &str) -> Option<Vec<String>> {
    let mut i = 0;
    let path = toml_path(name.as_bytes(), &mut i)?;
    (i == name.len()).then_some(path)
}

/// The string at `b[*i..]` (basic, literal, or either's multi-line form), unescaped.
fn toml_string(b: &[u8], i: &mut usize) -> Option<String> {
    let q = b[*i];
    let triple = b[*i..].starts_with(&[q, q, q]);
    let open = if triple { 3 } else { 1 };
    *i += open;
    let mut out = Vec::new();
    loop {
        let c = *b.get(*i)?;
        if c == q && (!triple || b[*i..].starts_with(&[q, q, q])) {
            *i += open;
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        if c == b'\n' && !triple {
            return None;
        }
        if c == b'\\' && q == b'"' {
            let e = *b.get(*i + 1)?;
            *i += 2;
            let simple = match e {
                b'"' => Some(b'"'),
                b'\\' => Some(b'\\'),
                b'b' => Some(8),
                b't' => Some(b'\t'),
                b'n' => Some(b'\n'),
                b'f' => Some(12),
                b'r' => Some(b'\r'),
                b'e' => Some(27),
                _ => None,
            };
            let hex = match e {
                b'u' => 4,
                b'U' => 8,
                b'x' => 2,
                _ => 0,
            };
            if let Some(c) = simple {
                out.push(c);
            } else if hex > 0 {
                let digits = std::str::from_utf8(b.get(*i..*i + hex)?).ok()?;
                let ch = char::from_u32(u32::from_str_radix(digits, 16).ok()?)?;
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                *i += hex;
            } else if triple && e.is_ascii_whitespace() {
                // A line-ending backslash: the whitespace after it goes.
                while b.get(*i).is_some_and(u8::is_ascii_whitespace) {
                    *i += 1;
                }
            } else {
                return None;
            }
            continue;
        }
        out.push(c);
        *i += 1;
    }
}

fn skip_space(b: &[u8], i: &mut usize) {
    while b.get(*i).is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')) {
        *i += 1;
    }
}

/// The first statement of `text` without its comments, and its length: through the newline that
/// ends it outside strings, arrays and inline tables.
fn toml_statement(text: &str) -> (String, usize) {
    let b = text.as_bytes();
    let mut out = String::new();
    let (mut i, mut depth, mut from) = (0, 0usize, 0);
    while i < b.len() {
        match b[i] {
            b'#' => {
                out.push_str(&text[from..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                from = i;
                continue;
            }
            q @ (b'"' | b'\'') => {
                let triple = b[i..].starts_with(if q == b'"' { b"\"\"\"" } else { b"'''" });
                let open = if triple { 3 } else { 1 };
                i += open;
                while i < b.len() {
                    if q == b'"' && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q && (!triple || b[i..].starts_with(&[q, q, q])) {
                        i += open;
                        break;
                    }
                    if b[i] == b'\n' && !triple {
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' if depth == 0 => {
                out.push_str(&text[from..=i]);
                return (out, i + 1);
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[from.min(b.len())..]);
    (out, b.len())
}

/// A shell snapshot without its secrets. Each statement (through the newline that ends it outside
/// quotes; a function as bash's `declare -f` and zsh's `functions` print it, from `name () ` at
/// the start of a line to the `}` that starts one, is one statement; Claude Code's functions,
/// `eval "$(echo '<base64>' | base64 -d)"`, are judged decoded) becomes `:` where
/// - it exports a name [`super::environ::secret`] names or a value
///   [`super::environ::secret_value`] knows (`export NAME=…`, `declare -x NAME=…`), as the
///   environment scrub removes them;
/// - or it holds a secret anywhere ([`holds_secret`]): an alias or a function that sends a
///   header with a token, sets `PGPASSWORD=…`, or holds a token in its issuer's form.
///
/// So what holds it still reads, and an alias or function that held a secret is not defined.
pub fn snapshot(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let end = function_end(rest).unwrap_or_else(|| statement_end(rest));
        let (stmt, after) = rest.split_at(end);
        let exports_secret = exported(stmt).is_some_and(|(name, value)| {
            super::environ::secret(name) || super::environ::secret_value(unquoted(value).as_bytes())
        });
        if exports_secret || holds_secret(stmt) || encoded(stmt).is_some_and(|f| holds_secret(&f)) {
            out.push(':');
            if stmt.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(stmt);
        }
        rest = after;
    }
    out
}

/// The length of a function's definition at the start of `text`, as bash (`name () ` then `{ `)
/// and zsh (`name () {`) print one, or as written (`function name {`): through the line that is
/// `}`. `None` where `text` does not
/// start with one, or it has no end.
fn function_end(text: &str) -> Option<usize> {
    let first = text.split_inclusive('\n').next()?;
    let head = first.trim_end();
    let (name, tail) = match head.strip_prefix("function ") {
        // `function name {` or `function name () {`
        Some(rest) => {
            let rest = rest.trim_start();
            let end = rest.find(|c: char| c.is_whitespace() || c == '(').unwrap_or(rest.len());
            (&rest[..end], rest[end..].trim_start().trim_start_matches("()"))
        }
        None => head.split_once("()")?,
    };
    let name = name.trim_end();
    let named = !name.is_empty()
        && !first.starts_with(char::is_whitespace)
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':' | b'.' | b'@'));
    if !named || !matches!(tail.trim(), "" | "{") {
        return None;
    }
    let mut at = first.len();
    for line in text[at..].split_inclusive('\n') {
        at += line.len();
        if line.trim_end() == "}" {
            return Some(at);
        }
    }
    None
}

/// The function Claude Code's snapshot defines in `stmt`, decoded:
/// `eval "$(echo '<base64>' | base64 -d)" > /dev/null 2>&1`.
fn encoded(stmt: &str) -> Option<String> {
    let b64 = stmt.trim_start().strip_prefix("eval \"$(echo '")?.split_once('\'')?.0;
    let b64: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    crate::text::base64::decode(&b64).map(|d| String::from_utf8_lossy(&d).into_owned())
}

/// Whether shell or config text holds a secret anywhere in it:
/// - a value [`super::environ::secret_value`] knows, the whole text's (a URL with a credential,
///   a private key, a literal given to a secret's name: `PGPASSWORD=hunter22 psql`, `mysql
///   --password=hunter22`, but not `TOKEN=$(cat f)`, `KEY_FILE=~/.ssh/id`, `USE_AUTH=1`:
///   [`super::environ::assigned_in`]) or one word's (a token in its issuer's form, a JSON web
///   token);
/// - an HTTP header's credential (`Authorization: Bearer …`, `Authorization: token …`,
///   `Bearer …`, `PRIVATE-TOKEN: …`, `X-API-Key: …`), but a variable's expansion (`Bearer
///   $TOKEN`: the environment's, scrubbed);
pub fn holds_secret(text: &str) -> bool {
    use super::environ::secret_value;
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    secret_value(text.as_bytes())
        || text.split(|c: char| !word(c)).any(|w| w.len() >= 8 && secret_value(w.as_bytes()))
        || header_credential(text)
        || flag_secret(text)
}

/// A literal given as the next word (or the next element of an array: `["publish", "--token",
/// "…"]`) to a flag that names a secret (rt6 X4): `--token …`, `--password …`, `--api-key …`,
/// `--auth-token …`, any `--auth*`; a `user:password` given to `-u`, `--user` or `--proxy-user`
/// (`curl -u bot:hunter22`, `-ubot:hunter22`, `--user=bot:hunter22`); `sshpass -p …`; a
/// password joined to mysql's `-p`. Not a variable's expansion, a command's output or a path.
fn flag_secret(text: &str) -> bool {
    let sep =
        |c: char| c.is_ascii_whitespace() || matches!(c, '"' | '\'' | ',' | '[' | ']' | '(' | ')' | ';' | '|' | '&');
    let words: Vec<&str> = text.split(sep).filter(|w| !w.is_empty()).collect();
    let literal = |w: &str| w.len() >= 6 && !w.starts_with(['$', '`', '/', '~', '.', '<', '(', '-']);
    let userinfo = |w: &str| w.split_once(':').is_some_and(|(_, pw)| !pw.is_empty() && !pw.starts_with(['$', '`']));
    let program = |names: &[&str]| {
        words.iter().any(|w| names.contains(&w.trim_start_matches('!').rsplit('/').next().unwrap_or(w)))
    };
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).copied().unwrap_or("");
        let user_flag = matches!(*w, "-u" | "--user" | "--proxy-user" | "-U");
        if user_flag {
            return userinfo(next);
        }
        if let Some(v) = w.strip_prefix("--user=").or_else(|| w.strip_prefix("--proxy-user=")) {
            return userinfo(v);
        }
        if let Some(v) = w.strip_prefix("-u").filter(|v| !v.is_empty() && !v.starts_with('-')) {
            return userinfo(v);
        }
        if *w == "-p" && program(&["sshpass"]) {
            return literal(next);
        }
        if w.len() > 2
            && w.starts_with("-p")
            && !w.starts_with("--")
            && program(&["mysql", "mysqldump", "mysqladmin", "mariadb"])
        {
            return literal(&w[2..]) || w.len() >= 5;
        }
        let Some(name) = w.strip_prefix("--").filter(|n| !n.contains('=')) else { return false };
        let name = name.to_ascii_lowercase();
        let auth = name.starts_with("auth") && !name.starts_with("author");
        (super::environ::secret_name(&name) || auth) && literal(next)
    })
}

/// A credential after an HTTP header's name in `text` (see [`holds_secret`]): a header whose
/// name is `Authorization` or `Proxy-Authorization`, or a secret's by the rules a variable's is
/// judged by ([`super::environ::secret_name`]: `X-Vault-Token`, `DD-API-KEY`, `X-Auth-Key`,
/// `apikey`, `Private-Token`, `Cookie`; rt5 A8), followed by a literal of 8 characters or
/// more (after a scheme: `Bearer`, `Basic`, `token`, ...); or `bearer ` and such a literal
/// (`--oauth2-bearer …`).
fn header_credential(text: &str) -> bool {
    let b = text.as_bytes();
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_ascii_whitespace() || matches!(c, '"' | '\'' | '\\' | ';' | ')' | ','))
            .filter(|w| !w.is_empty())
            .take(2)
            .map(str::to_string)
            .collect()
    };
    let credential =
        |w: &str| w.len() >= 8 && !w.starts_with(['$', '`', '%', '<']) && w.bytes().any(|c| c.is_ascii_alphanumeric());
    const SCHEMES: &[&str] = &["bearer", "basic", "token", "digest", "negotiate", "bot", "apikey", "key", "sso-key"];
    // What follows a header's name: a credential, or a scheme and then one.
    let value = |after: &str| {
        let after = words(after);
        let Some(first) = after.first() else { return false };
        if SCHEMES.iter().any(|s| first.eq_ignore_ascii_case(s)) {
            after.get(1).is_some_and(|second| credential(second))
        } else {
            credential(first)
        }
    };
    let header = text.match_indices(':').any(|(i, _)| {
        let start =
            b[..i].iter().rposition(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_')).map_or(0, |p| p + 1);
        let name = &text[start..i];
        let bounded = start == 0
            || matches!(b[start - 1], b' ' | b'\t' | b'\n' | b'"' | b'\'' | b'=' | b'(' | b'{' | b',' | b'[');
        let named = name.eq_ignore_ascii_case("authorization")
            || name.eq_ignore_ascii_case("proxy-authorization")
            || super::environ::secret_name(name);
        bounded && !name.starts_with('-') && named && !text[i + 1..].starts_with("//") && value(&text[i + 1..])
    });
    header
        || text
            .to_ascii_lowercase()
            .match_indices("bearer ")
            .any(|(i, _)| words(&text[i + "bearer ".len()..]).first().is_some_and(|w| credential(w)))
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

    /// rt6 X4: a token given as a command's own option, in cargo's aliases (a word after
    /// `--token`, or the next element of an array), git's (`curl -u user:password`) and the
    /// snapshots'; crates.io's token form.
    #[test]
    fn a_token_given_as_an_option_is_a_secret() {
        let cargo = "[alias]\nb = \"build --release\"\npub = \"publish --token cioFAKERT6Aabcdefghijklmnopqrstuvwx\"\n\
                     pub1 = \"publish --token RT6XTOKEN1\"\npub3 = [\"publish\", \"--token\", \"RT6XARRAY\"]\n\
                     pub4 = [\"publish\", \"--api-key\", \"RT6XAPIKEY\"]\n";
        let out = cargo_config(cargo);
        assert_eq!(out, "[alias]\nb = \"build --release\"\n");
        let git = "[alias]\n\tco = checkout\n\tdl = \"!curl -u bot:RT6XGA2 https://corp.example/x\"\n\
                   \tdl2 = !curl --user=bot:RT6XGA3 https://x\n\tdl3 = !curl -ubot:RT6XGA4 https://x\n\
                   \tdb = !sshpass -p RT6XSSHPASS ssh db\n\tmy = !mysql -pRT6XMYSQL db\n\
                   \tup = !tool --auth-token RT6XAUTH up\n\tpw = !tool --password RT6XPASSW up\n\
                   \tme = !curl -u bot https://x\n\tenv = !tool --token $TOKEN\n\
                   \tci = commit --author Johnny\n";
        let out = git_config(git);
        assert!(!out.contains("RT6X"), "{out}");
        for kept in ["co = checkout", "me = !curl -u bot https://x", "env = !tool --token $TOKEN", "--author Johnny"] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
        let snap = "alias pub='cargo publish --token RT6XSNAP1'\nalias ok='cargo build -p mycrate'\n";
        assert_eq!(snapshot(snap), ":\nalias ok='cargo build -p mycrate'\n");
        assert!(crate::run::sandbox::environ::secret_value(b"cioFAKERT6Aabcdefghijklmnopqrstuvwx"));
        assert!(!crate::run::sandbox::environ::secret_value(b"ciocia"));
    }

    /// rt6 X8: credential files in a toolchain under other names.
    #[test]
    fn a_toolchains_credentials_are_known_by_other_names_and_by_a_keys_header() {
        for name in ["auth.json", ".env", ".env.local", ".envrc"] {
            assert_eq!(in_toolchain(name.as_bytes(), false), Some(InToolchain::Hidden), "{name}");
        }
        for name in ["yarnrc", ".condarc", "condarc"] {
            assert_eq!(in_toolchain(name.as_bytes(), false), Some(InToolchain::Filtered), "{name}");
        }
        assert_eq!(in_toolchain(b"config.json", false), Some(InToolchain::KeyIfPrivate));
        assert!(holds_key_or_logins(b"{\"auths\":{\"ghcr.io\":{\"auth\":\"x\"}}}"));
        assert!(!holds_key_or_logins(b"{\"theme\": \"dark\"}"));
        for head in [
            "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n",
            "-----BEGIN EC PRIVATE KEY-----\n",
            "comment\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n",
            "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMII\"}",
        ] {
            assert!(private_key_head(head.as_bytes()), "{head}");
        }
        assert!(!private_key_head(b"-----BEGIN CERTIFICATE-----\nPRIVATE KEY-----\n"));
        assert!(!private_key_head(b"-----BEGIN PUBLIC KEY-----\n"));
        for name in ["deploy_key", "server.key", "id", "key.txt", "sa.json", ".hidden"] {
            assert!(may_hold_key(name.as_bytes()), "{name}");
        }
        for name in ["index.html", "core.js", "libstd.rlib", "a.png"] {
            assert!(!may_hold_key(name.as_bytes()), "{name}");
        }
        let conda = "channels: [https://conda.anaconda.org/t/RT6XC1/corp]\nchannels2:\n  - https://c.example/t/RT6XC2/x\nssl_verify: true\n";
        assert_eq!(settings_file(conda), "channels2:\nssl_verify: true\n");
        let yarn = "//registry.npmjs.org/:_authToken \"RT6XY\"\n_password \"RT6XP\"\nnetwork-timeout 60000\n";
        assert_eq!(settings_file(yarn), "network-timeout 60000\n");
    }

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

    /// rt7 A4: other tools keep their tokens in git's file under a secret's word (`[azure] pat`,
    /// `[openai] key`); they go, and git's own settings so named stay.
    #[test]
    fn a_git_config_loses_another_tools_key_and_keeps_gits_own() {
        let text = "[user]\n\tname = Ann\n\tsigningKey = ABCDEF0123\n[azure]\n\tpat = RT7AZPAT\n\torg = corp\n\
                    [openai]\n\tkey = RT7OPENAI\n[tool \"x\"]\n\tapiKey = RT7TOOL\n\
                    [http \"https://corp.example\"]\n\tsslKey = /home/ann/.certs/client.key\n\
                    [trailer \"sign\"]\n\tkey = \"Signed-off-by: \"\n\
                    [alias]\n\tdb = !psql \"Host=db;Password=RT7CONN\"\n";
        let out = git_config(text);
        assert!(!out.contains("RT7"), "{out}");
        for kept in [
            "signingKey = ABCDEF0123",
            "org = corp",
            "sslKey = /home/ann/.certs/client.key",
            "[trailer \"sign\"]\n\tkey = \"Signed-off-by: \"\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        let snap = "export DB='Server=db;User Id=sa;Password=RT7SNAP;'\nexport OPTS='-Xmx2g'\n";
        assert_eq!(snapshot(snap), ":\nexport OPTS='-Xmx2g'\n");
    }

    #[test]
    fn a_snapshot_loses_its_secret_exports_and_still_reads() {
        let text = "# Snapshot file\nf() {\n  export INNER_MODE=x\n  echo 'it'\"s\"\n}\n# exports 5\n\
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
        // A function's own export of a name that holds no secret, as written.
        assert!(out.contains("export INNER_MODE=x"));
        // It still reads as shell.
        let ok = std::process::Command::new("bash").args(["-n", "-c", &out]).status().unwrap();
        assert!(ok.success(), "{out}");
    }

    /// rt4 R8: a registry's token, a proxy's password and `[env]` secrets in cargo's config.
    #[test]
    fn a_cargo_config_keeps_its_settings_and_loses_its_credentials() {
        let text = "# a comment with a token SECRET0\n\
            [registries.corp]\nindex = \"sparse+https://corp.example.com/index/\"\ntoken = \"SECRET1\"\n\
            [registry]\ndefault = \"corp\"\ntoken = 'SECRET2'\nglobal-credential-providers = [\n  \"cargo:token\",\n  \"my-provider --key SECRET3\",\n]\n\
            [http]\nproxy = \"http://u:SECRET4@proxy.example.com:3128\" # corporate\ncheck-revoke = false\n\
            [env]\nOPENAI_API_KEY = \"SECRET5\"\nSTRIPE = { value = \"sk_live_SECRET6\", force = true }\n\
            RUST_TEST_THREADS = \"2\"\nOPENSSL_DIR = { value = \"vendor/openssl\", relative = true }\n\
            [credential-alias]\nmy = [\"/usr/bin/helper\", \"--secret\", \"SECRET7\"]\n\
            [target.'cfg(target_os = \"linux\")']\nrustflags = [\"-C\", \"link-arg=-fuse-ld=mold\"] # fast\n\
            [build]\nrustc-wrapper = \"sccache\"\nregistries.other.token = \"SECRET8\"\n\
            [alias]\nt = \"test --workspace\"\ndoc-note = '''\nhash # in a string\n'''\n\
            [net]\ngit-fetch-with-cli = true\n[source.crates-io]\nreplace-with = \"corp\"\n";
        let out = cargo_config(text);
        for secret in
            ["SECRET0", "SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6", "SECRET7", "SECRET8"]
        {
            assert!(!out.contains(secret), "{secret} kept:\n{out}");
        }
        for kept in [
            "[registries.corp]\nindex = \"sparse+https://corp.example.com/index/\"\n",
            "[registry]\ndefault = \"corp\"\n",
            "check-revoke = false\n",
            "RUST_TEST_THREADS = \"2\"\n",
            "OPENSSL_DIR = { value = \"vendor/openssl\", relative = true }\n",
            "[target.'cfg(target_os = \"linux\")']\nrustflags = [\"-C\", \"link-arg=-fuse-ld=mold\"]\n",
            "rustc-wrapper = \"sccache\"\n",
            "t = \"test --workspace\"\n",
            "doc-note = '''\nhash # in a string\n'''\n",
            "git-fetch-with-cli = true\n",
            "replace-with = \"corp\"\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        assert!(!out.contains("credential-alias") && !out.contains("# fast"), "{out}");
    }

    /// rt5 A7: a registry's token in an inline table, under an escaped key, under a dotted key
    /// at the top, or under a key no list of token names has; and what does not parse.
    #[test]
    fn a_cargo_config_loses_tokens_however_toml_spells_their_keys() {
        let text = "[registries]\n\
            corp = { index = \"sparse+https://corp.example/index/\", token = \"RT5A-0001\" }\n\
            [registries.other]\nindex = \"sparse+https://other.example/index/\"\n\"tok\\u0065n\" = \"RT5A-0002\"\n\
            [registries.third]\nindex = \"sparse+https://third.example/index/\"\ntoken = 'RT5A-0003'\n\
            bearer = \"RT5A-0004\"\n\
            [\"regis\\u0074ry\"]\ndefault = \"corp\"\n\"t\\U0000006Fken\" = \"RT5A-0005\"\n\
            [net]\nretry = 3\n\
            [env]\nA = { value = \"x\", nested = [{ api_key = \"RT5A-0006\" }] }\n\
            KEPT = { value = \"kept-value\", force = true }\n\
            [alias]\nb = \"build\"\n\
            [\"bad\\qtable\"]\nx = \"RT5A-0008\"\n\
            [http]\ntimeout = 30\n\
            [env]\nbroken = { \"unterminated = \"RT5A-0007\nretry = 3\n";
        let out = cargo_config(text);
        assert!(!out.contains("RT5A"), "{out}");
        for kept in [
            "[registries.other]\nindex = \"sparse+https://other.example/index/\"\n",
            "[registries.third]\nindex = \"sparse+https://third.example/index/\"\n",
            "default = \"corp\"\n",
            "retry = 3\n",
            "KEPT = { value = \"kept-value\", force = true }\n",
            "b = \"build\"\n",
            "[http]\ntimeout = 30\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        let paths = toml_paths("a = { b = 1, c = [{ 'd' = 2 }, 3], \"e\\u0066\".g = \"}\" }").unwrap();
        let dotted: Vec<String> = paths.iter().map(|p| p.join(".")).collect();
        assert_eq!(dotted, ["a", "a.b", "a.c.d", "a.c", "a.ef.g"]);
        for bad in ["a = { b = 1", "a = [1, 2", "a = \"x", "= 1", "a b = 1", "a = { b }", "a = 1 2 ]"] {
            assert!(toml_paths(bad).is_none(), "{bad}");
        }
    }

    /// rt5 A11: what a toolchain's tree holds of the person's credentials, by name.
    #[test]
    fn a_toolchains_settings_and_stores_are_known_by_their_names() {
        for (name, dir, how) in [
            ("npmrc", false, Some(InToolchain::Filtered)),
            ("pip.conf", false, Some(InToolchain::Filtered)),
            ("pip.ini", false, Some(InToolchain::Filtered)),
            (".yarnrc.yml", false, Some(InToolchain::Filtered)),
            ("x509stores", true, Some(InToolchain::Hidden)),
            ("0123ABCD.pfx", false, Some(InToolchain::Hidden)),
            ("client.P12", false, Some(InToolchain::Hidden)),
            (".netrc", false, Some(InToolchain::Hidden)),
            ("credentials", false, Some(InToolchain::Hidden)),
            ("keycert.pem", false, Some(InToolchain::KeyIfPrivate)),
            ("server.key", false, Some(InToolchain::KeyIfPrivate)),
            ("credentials", true, None),
            ("npmrc", true, None),
            ("node", false, None),
            ("lib", true, None),
            ("credentials.py", false, None),
        ] {
            assert_eq!(in_toolchain(name.as_bytes(), dir), how, "{name} (a directory: {dir})");
        }
    }

    #[test]
    fn a_settings_file_keeps_its_settings_and_loses_its_credentials() {
        let npmrc = "; npm's global config\nregistry=https://registry.npmjs.org/\n\
                     //registry.npmjs.org/:_authToken=SECRET1abcdefgh\n_auth = SECRET2\n\
                     //npm.corp.example/:_password=SECRET3\nemail=ann@example.com\nfund=false\n\
                     @corp:registry=https://npm.corp.example/\n";
        let out = settings_file(npmrc);
        assert_eq!(
            out,
            "registry=https://registry.npmjs.org/\nemail=ann@example.com\nfund=false\n\
             @corp:registry=https://npm.corp.example/\n"
        );
        let pip = "[global]\nindex-url = https://u:SECRET4@pypi.corp.example/simple\n\
                   extra-index-url =\n    https://u:SECRET5@a.example/simple\n    https://b.example/simple\n\
                   timeout = 60\n[install]\ntrusted-host = pypi.corp.example\n";
        let out = settings_file(pip);
        assert!(!out.contains("SECRET"), "{out}");
        assert!(out.contains("[global]\n") && out.contains("timeout = 60\n[install]\ntrusted-host"), "{out}");
        let yarn = "npmRegistries:\n  \"//npm.corp.example\":\n    npmAuthToken: SECRET6abcdefgh\n    npmAlwaysAuth: true\n\
                    nodeLinker: node-modules\n";
        let out = settings_file(yarn);
        assert!(!out.contains("SECRET"), "{out}");
        assert!(out.contains("nodeLinker: node-modules\n"), "{out}");
        let maven = "<?xml version=\"1.0\"?>\n<settings>\n  <!-- <password>SECRET7</password> -->\n\
                     <localRepository>/opt/m2</localRepository>\n  <servers>\n    <server>\n      <id>corp</id>\n\
                     <username>ann</username>\n      <password>SECRET8</password>\n\
                     <passphrase>\n SECRET9\n</passphrase>\n      <m:privateKey>SECRET10</m:privateKey>\n\
                     </server>\n  <server><id>gitlab</id><configuration><httpHeaders><property>\n\
                     <name>Private-Token</name><value>glpat-SECRET12abcdefghij</value></property></httpHeaders>\n\
                     </configuration></server>\n  </servers>\n  <mirrors><mirror><id>m</id>\n\
                     <url>https://ann:SECRET13@repo.corp.example/maven</url><mirrorOf>*</mirrorOf></mirror></mirrors>\n\
                     <mirrors/>\n<password>SECRET11";
        let out = settings_file(maven);
        assert!(!out.contains("SECRET"), "{out}");
        for kept in [
            "<localRepository>/opt/m2</localRepository>",
            "<id>corp</id>",
            "<username>ann</username>",
            "<mirrors/>",
            "<mirrorOf>*</mirrorOf>",
            "<id>gitlab</id>",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
    }

    #[test]
    fn cargos_config_is_known_wherever_its_home_is() {
        let (home, cargo) = (Path::new("/h"), Path::new("/opt/cargo"));
        assert_eq!(copied(Path::new("/opt/cargo/config.toml"), home, cargo), Some(Copied::CargoConfig));
        assert_eq!(copied(Path::new("/opt/cargo/config"), home, cargo), Some(Copied::CargoConfig));
        assert_eq!(copied(Path::new("/h/.gitconfig"), home, cargo), Some(Copied::GitConfig));
        assert_eq!(copied(Path::new("/h/.cargo/config.toml"), home, cargo), None);
        assert_eq!(copied(Path::new("/opt/cargo/env"), home, cargo), None);
    }

    /// The base64 Claude Code writes a function as (`declare -f f | base64`: 76 columns).
    fn b64(text: &str) -> String {
        let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in text.as_bytes().chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, &c)| n | (c as u32) << (16 - 8 * i));
            for i in 0..4 {
                out.push(if i <= chunk.len() { table[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
            }
        }
        let lines: Vec<String> = out.as_bytes().chunks(76).map(|l| String::from_utf8_lossy(l).into_owned()).collect();
        lines.join("\n")
    }

    /// rt4 R10: aliases and functions that hold a secret become `:` too, in Codex's snapshots
    /// (`declare -f`, `alias -p`) and Claude Code's (functions in base64, `alias --`).
    #[test]
    fn a_snapshots_aliases_and_functions_that_hold_secrets_go() {
        let claude_fn =
            b64("dbq () \n{ \n    PGPASSWORD=SECRET3 psql -h db --set application_name=some-long-name-to-wrap\n}\n");
        let claude_ok = b64("gs () \n{ \n    git status\n}\n");
        let text = format!(
            "# Snapshot file\nunalias -a 2>/dev/null || true\n# Functions\n\
             dbq () \n{{ \n    PGPASSWORD=SECRET1 psql -h db\n}}\n\
             gl () \n{{ \n    curl -H \"PRIVATE-TOKEN: SECRET2abcd\" \"https://gitlab.example.com/api/v4/$1\"\n}}\n\
             ok () \n{{ \n    curl -H \"Authorization: Bearer $GITHUB_TOKEN\" https://api.github.com/user;\n    local key=$1\n}}\n\
             function gl2 {{\n  curl -H 'PRIVATE-TOKEN: SECRET10abcd' https://gitlab.example.com/api\n}}\n\
             eval \"$(echo '{claude_fn}' | base64 -d)\" > /dev/null 2>&1\n\
             eval \"$(echo '{claude_ok}' | base64 -d)\" > /dev/null 2>&1\n\
             # aliases 9\n\
             alias deploy='curl -H \"Authorization: Bearer SECRET4abcd\" https://api.corp/deploy'\n\
             alias -- gh-api='curl -H \"Authorization: token SECRET5abcd\"'\n\
             alias k='curl -H \"X-API-Key: SECRET6abcd\" https://api'\n\
             alias my='mysql --password=SECRET7 -h db'\n\
             alias hook='curl -X POST https://hooks.slack.com/services/T0/B0/SECRET8'\n\
             alias st='STRIPE_KEY=sk_live_SECRET9 ./pay'\n\
             alias ll='ls -l'\nalias gco='git checkout'\nalias dev='USE_AUTH=1 AWS_PROFILE=dev npm run dev'\n\
             alias keys='ssh-add -l; KEY_FILE=~/.ssh/id_ed25519 ./sign'\n\
             # exports 2\nexport PATH=/usr/bin:/bin\nexport NOTE='bearer of news'\n"
        );
        let out = snapshot(&text);
        for secret in [
            "SECRET1",
            "SECRET2",
            "SECRET10",
            "SECRET4",
            "SECRET5",
            "SECRET6",
            "SECRET7",
            "SECRET8",
            "SECRET9",
            &claude_fn[..20],
        ] {
            assert!(!out.contains(secret), "{secret} kept:\n{out}");
        }
        for kept in [
            "ok () \n{ \n    curl -H \"Authorization: Bearer $GITHUB_TOKEN\"",
            &claude_ok[..],
            "alias ll='ls -l'\n",
            "alias gco='git checkout'\n",
            "alias dev='USE_AUTH=1 AWS_PROFILE=dev npm run dev'\n",
            "alias keys='ssh-add -l; KEY_FILE=~/.ssh/id_ed25519 ./sign'\n",
            "export PATH=/usr/bin:/bin\n",
            "export NOTE='bearer of news'\n",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        // Each goes as a whole: no half of a function is left.
        for half in ["psql", "dbq", "gitlab.example.com", "gl ()", "gl2"] {
            assert!(!out.contains(half), "{half} kept:\n{out}");
        }
        let ok = std::process::Command::new("bash").args(["-n", "-c", &out]).status().unwrap();
        assert!(ok.success(), "{out}");
    }

    /// rt5 A8: a header whose own name is a secret's (Vault's, Datadog's, Cloudflare's,
    /// Supabase's) and its literal value.
    #[test]
    fn a_header_named_as_a_secret_is_a_credential() {
        for text in [
            "alias vls='curl -s -H \"X-Vault-Token: hvs.RT5AVAULTTOKEN0001abcdef\" https://vault.corp.example/v1/'",
            "alias ddq='curl -s -H \"DD-API-KEY: RT5ADATADOG0002abcdef0123456789\" https://api.datadoghq.com/'",
            "alias sb='curl -s -H \"apikey: RT5ASUPABASE0003abcdefghijkl\" https://x.supabase.co/rest/v1/'",
            "cfpurge () \n{ \n    curl -X POST -H \"X-Auth-Key: RT5ACLOUDFLARE0006abcdef\" https://api.cf\n}\n",
            "curl --header='X-Auth-Token: abcdefgh12345' https://x",
            "curl -H 'Cookie: session=abcdef0123456789' https://x",
            "curl -H 'Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==' https://x",
            "http POST api.example.com X-Api-Key:abcdef0123456789",
        ] {
            assert!(holds_secret(text), "{text}");
        }
        for text in [
            "curl -H \"X-Vault-Token: $VAULT_TOKEN\" https://vault",
            "curl -H 'X-Auth-Key: ${CF_KEY}' https://x",
            "curl -H 'Accept: application/json' https://x",
            "curl -H 'Content-Type: application/vnd.api+json' https://x",
            "echo \"Token: expired\"",
            "ssh -o ProxyCommand=none host:path/to/file",
            "export PATH=/usr/local/bin:/usr/bin",
        ] {
            assert!(!holds_secret(text), "{text}");
        }
    }

    #[test]
    fn a_secret_in_shell_text_is_found_and_look_alikes_are_not() {
        for text in [
            "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
            "curl -H \"Authorization: abcdef0123456789\"",
            "curl --oauth2-bearer abcdef0123456789",
            "http GET api.example.com Authorization:'Bearer abcdef0123456789'",
            "PGPASSWORD='hunter22' psql",
            "f() { DB_PASS=hunter22 ./migrate; }",
            "gh api --token=abcdef0123",
            "GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ gh pr list",
            "git clone https://u:hunter22@git.example.com/r.git",
            "curl https://api.example.com/x?api_key=abcdef",
            "echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl",
        ] {
            assert!(holds_secret(text), "{text}");
        }
        for text in [
            "curl -H \"Authorization: Bearer $TOKEN\"",
            "curl -H \"Authorization: token ${GITHUB_TOKEN}\"",
            "curl -H \"Authorization: Bearer $(gh auth token)\"",
            "TOKEN=$(cat ~/.token) ./run",
            "PASSWORD_STORE_DIR=~/.password-store pass",
            "SSH_KEY=/home/u/.ssh/id_ed25519 ./deploy",
            "export PATH=/home/u/.cargo/bin:/usr/local/bin:/usr/bin",
            "sort --key=2 file",
            "MONKEY=bananas12 ./zoo",
            "echo the bearer of news",
            "git log --author=someone",
            "ls -la ~/.ssh",
        ] {
            assert!(!holds_secret(text), "{text}");
        }
    }
}
