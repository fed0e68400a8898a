//! Trust for the project config file, in direnv's model. `.agents/terminal.json` sits in the
//! agent's working tree, where the agent can write it with its own file tools, so:
//! - its settings that tighten the policy always apply;
//! - its settings that loosen it ([`strip_loosening`]) apply only while its exact content is
//!   trusted: `agentsh trust` records a SHA-256 of the canonical path and the content in the user
//!   data directory (`~/.local/share/agentsh/trust.json`), and any edit revokes it.
//!
//! A config or trust file that is a symlink, owned by another user, or writable by group or
//! others is refused for loosening ([`unsafe_file`]). This module owns the trust records and
//! those checks; it does not judge commands, and it writes only through `atomic_file`.

use crate::policy::atomic_file;
use crate::policy::config::{DEFAULT_CONFIRM_TIMEOUT, FileSettings};
use crate::text::sanitize::sanitize;
use anyhow::{Context, Result};
use serde_json::{Map, Value};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// `~/.local/share/agentsh/trust.json` on Linux (XDG), the platform's equivalent elsewhere.
pub fn store_file() -> Option<PathBuf> {
    crate::policy::dirs::project().map(|d| d.data_dir().join("trust.json"))
}

/// The user config's settings, the baseline a project file's settings are compared with.
pub fn user_settings() -> FileSettings {
    crate::policy::config::user_file()
        .filter(|p| crate::policy::config::present(p))
        .map(|p| crate::policy::config::read_file(&p))
        .unwrap_or_default()
}

/// Why `path` may not loosen the policy, if it may not: a symlink (it could point anywhere the
/// agent likes), another user's file, or a file others can write. `None` when it is missing or
/// safe.
pub fn unsafe_file(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let shown = sanitize(&path.display().to_string());
    if meta.file_type().is_symlink() {
        return Some(format!("{shown} is a symbolic link"));
    }
    let me = nix::unistd::getuid().as_raw();
    if meta.uid() != me {
        return Some(format!("{shown} is owned by another user (uid {}, not {me})", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!("{shown} is writable by group or others (fix: chmod go-w '{shown}')"));
    }
    None
}

/// The trust record's hash: SHA-256 over the canonical path, a NUL, and the exact bytes.
pub fn digest(canonical: &Path, content: &[u8]) -> String {
    crate::text::sha256::hex(&[canonical.as_os_str().as_encoded_bytes(), &[0u8], content])
}

/// Removes the settings of a project file that loosen the policy beyond what the user's own
/// settings (or the defaults) allow, and returns a description of each. Tightening settings
/// stay. Every loosening key belongs here, so that an untrusted file can never add one.
pub fn strip_loosening(project: &mut FileSettings, user: &FileSettings) -> Vec<String> {
    let mut removed = Vec::new();
    for e in std::mem::take(&mut project.whitelist).iter() {
        removed.push(format!("whitelist entry `{}`", sanitize(e)));
    }
    // The merge keeps the stricter of the two anyway; an untrusted `false` is simply dropped.
    if project.require_confirmation == Some(false) {
        if user.require_confirmation == Some(true) {
            removed.push("requireCommandConfirmation: false (the user config says true)".to_string());
        }
        project.require_confirmation = None;
    }
    let user_confirm = user.confirmation_timeout.unwrap_or(DEFAULT_CONFIRM_TIMEOUT);
    if let Some(t) = project.confirmation_timeout.filter(|t| *t > user_confirm) {
        removed.push(format!("confirmationTimeoutSeconds: {t} (longer than {user_confirm})"));
        project.confirmation_timeout = None;
    }
    // 0 means "no limit": looser than any limit the user set.
    if let (Some(t), Some(u)) = (project.command_timeout, user.command_timeout.filter(|u| *u > 0))
        && (t == 0 || t > u)
    {
        removed.push(format!("commandTimeoutSeconds: {t} (longer than {u})"));
        project.command_timeout = None;
    }
    // Allow rules lift asks, as whitelist entries do; deny and ask rules only tighten and stay.
    let (allow, keep): (Vec<_>, Vec<_>) =
        std::mem::take(&mut project.rules).into_iter().partition(|r| r.decision == crate::model::Decision::Allow);
    project.rules = keep;
    for r in allow {
        removed.push(format!("allow rule `{}` ({})", sanitize(&r.pattern_text()), sanitize(&r.at)));
    }
    // A project file may make the box stricter, never weaker.
    if project.sandbox.enabled == Some(false) {
        removed.push("sandbox.enabled: false".to_string());
        project.sandbox.enabled = None;
    }
    for p in std::mem::take(&mut project.sandbox.writable) {
        removed.push(format!("sandbox.writable entry `{}`", sanitize(&p)));
    }
    for p in std::mem::take(&mut project.sandbox.readable) {
        removed.push(format!("sandbox.readable entry `{}`", sanitize(&p)));
    }
    for n in std::mem::take(&mut project.sandbox.pass_env) {
        removed.push(format!("sandbox.passEnv entry `{}`", sanitize(&n)));
    }
    for h in std::mem::take(&mut project.sandbox.allow_hosts) {
        removed.push(format!("sandbox.allowHosts entry `{}`", sanitize(&h)));
    }
    // Unconfined network: looser than the proxy every box has by default.
    if project.sandbox.network == Some(crate::policy::sandbox_settings::Network::On) {
        removed.push("sandbox.network: \"on\"".to_string());
        project.sandbox.network = None;
    }
    // Running commands unrecorded; already refused from a project file, this covers a user file
    // that is unsafe (a symlink, another user's, writable by others).
    if project.audit.on_failure == Some(crate::policy::audit_settings::OnFailure::Warn) {
        removed.push("auditFailure: \"warn\"".to_string());
        project.audit.on_failure = None;
    }
    removed
}

/// Where a project file stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Its exact content was trusted.
    Trusted,
    /// No trust record for this path.
    NeverTrusted,
    /// Trusted once, edited since.
    Changed,
    /// The trust records cannot be relied on (the string says why): nothing is trusted.
    StoreRefused(String),
}

fn key(canonical: &Path) -> String {
    canonical.display().to_string()
}

fn canonical(path: &Path) -> Result<PathBuf> {
    path.canonicalize().with_context(|| format!("cannot resolve {}", path.display()))
}

/// Reads the trust records (no lock: `atomic_file` replaces the file by rename, so a reader sees a
/// whole version).
fn records() -> Result<Map<String, Value>, String> {
    let Some(file) = store_file() else { return Ok(Map::new()) };
    if let Some(why) = unsafe_file(&file) {
        return Err(why);
    }
    // Records a command in the sandbox could have written trust nothing (rt5 B10).
    if let Some(why) = file.parent().and_then(crate::policy::config::box_writes) {
        return Err(format!(
            "{}: {why}, so a command in the sandbox could have written it",
            sanitize(&file.display().to_string())
        ));
    }
    // Capped as a config file is: the agent's own file tools can write the data directory.
    match crate::policy::config::read_bytes(&file) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(format!("{} is not a JSON object", sanitize(&file.display().to_string()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("{}: {e}", sanitize(&file.display().to_string()))),
    }
}

/// What identifies one version of a file without reading it: its device, inode, size,
/// modification time and change time. The kernel sets the change time (ctime) on every write,
/// rename or chmod, and no user can set it, so a file that changes never shows an earlier stat
/// again. Hashing a 400 KiB config on every command cost 0.3 ms (docs/BENCHMARKS.md): once a
/// content has been hashed and found trusted, its stat is kept in the trust record, and while
/// the file still shows that stat it is not hashed again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat(String);

/// How old a file's last change must be before its stat may stand for its content.
pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl Stat {
    /// The stat as text (`dev:ino:size:mtime:ctime`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The stat of a file taken `before` and `after` reading it, when it identifies the bytes
    /// read: unchanged across the read, and last changed at least [`SETTLED`] before `now`.
    /// Timestamps move in clock ticks, so a write in the same tick as the last change could keep
    /// the ctime; a write made now cannot carry a time that old (git's "racy clean" rule).
    pub fn settled(before: &std::fs::Metadata, after: &std::fs::Metadata, now: std::time::SystemTime) -> Option<Stat> {
        let of = |m: &std::fs::Metadata| {
            format!(
                "{}:{}:{}:{}.{:09}:{}.{:09}",
                m.dev(),
                m.ino(),
                m.size(),
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec()
            )
        };
        let (stat, again) = (of(before), of(after));
        let changed = std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(
            u64::try_from(after.ctime()).ok()?,
            u32::try_from(after.ctime_nsec()).ok()?,
        ))?;
        let settled = now.duration_since(changed).is_ok_and(|age| age >= SETTLED);
        (stat == again && settled).then_some(Stat(stat))
    }
}

/// The trust state of the project file at `path` whose content was read as `content`.
pub fn state(path: &Path, content: &crate::policy::config::Content) -> State {
    let canon = match canonical(path) {
        Ok(c) => c,
        Err(e) => return State::StoreRefused(format!("{e:#}")),
    };
    let map = match records() {
        Ok(m) => m,
        Err(why) => return State::StoreRefused(why),
    };
    let record = map.get(&key(&canon));
    let Some(trusted) = record.and_then(|r| r.get("sha256")).and_then(Value::as_str) else {
        return State::NeverTrusted;
    };
    // Unchanged since its content was hashed and found trusted (see `Stat`).
    let recorded_stat = record.and_then(|r| r.get("stat")).and_then(Value::as_str);
    if content.stat.as_ref().is_some_and(|s| Some(s.0.as_str()) == recorded_stat) {
        return State::Trusted;
    }
    if trusted != digest(&canon, content.bytes()) {
        return State::Changed;
    }
    if let Some(stat) = &content.stat {
        remember_stat(&canon, trusted, stat);
    }
    State::Trusted
}

/// Keeps `stat` in the trust record of `canon` while the record still trusts `digest`. Best
/// effort: without it the file is only hashed again next time.
fn remember_stat(canon: &Path, digest: &str, stat: &Stat) {
    let _ = update_store(|m| {
        if let Some(Value::Object(r)) = m.get_mut(&key(canon))
            && r.get("sha256").and_then(Value::as_str) == Some(digest)
        {
            r.insert("stat".to_string(), Value::String(stat.0.clone()));
        }
        Ok(())
    });
}

fn update_store<T>(change: impl FnOnce(&mut Map<String, Value>) -> Result<T>) -> Result<T> {
    let file = store_file().context("cannot find the user data directory (is HOME set?)")?;
    if let Some(why) = unsafe_file(&file) {
        anyhow::bail!("{why}; agentsh will not use it for trust records");
    }
    atomic_file::update(&file, change)
}

/// Records `content` as the trusted content of the project file at `path`.
pub fn record(path: &Path, content: &[u8]) -> Result<()> {
    let canon = canonical(path)?;
    let d = digest(&canon, content);
    update_store(|m| {
        m.insert(key(&canon), serde_json::json!({ "sha256": d }));
        Ok(())
    })
}

/// Removes the trust record of the project file at `path`. Returns whether there was one.
pub fn forget(path: &Path) -> Result<bool> {
    let canon = canonical(path)?;
    update_store(|m| Ok(m.remove(&key(&canon)).is_some_and(|r| r.get("sha256").is_some())))
}

/// Notes that the person was told about this content of the file; true only the first time,
/// so the warning is shown once per change. Under the store's lock: one process wins.
pub fn first_warning(path: &Path, content: &[u8]) -> bool {
    let Ok(canon) = canonical(path) else { return true };
    let d = digest(&canon, content);
    update_store(|m| {
        let entry = m.entry(key(&canon)).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(r) = entry else { return Ok(true) };
        if r.get("warned").and_then(Value::as_str) == Some(d.as_str()) {
            return Ok(false);
        }
        r.insert("warned".to_string(), Value::String(d));
        Ok(true)
    })
    // Cannot record it: warning again is better than never.
    .unwrap_or(true)
}

/// Applies trust to a project file's settings read from `content`: strips the loosening parts
/// unless the content is trusted and the file is safe. Returns the warning to show, if any
/// (at most once per content for trust changes; every time for an unsafe file).
pub fn apply(
    path: &Path,
    content: &crate::policy::config::Content,
    settings: &mut FileSettings,
    user: &FileSettings,
) -> Option<String> {
    let file_problem = unsafe_file(path);
    let trust = state(path, content);
    if file_problem.is_none() && trust == State::Trusted {
        return None;
    }
    let removed = strip_loosening(settings, user);
    if removed.is_empty() {
        return None;
    }
    let shown = sanitize(&path.display().to_string());
    let what = if removed.iter().all(|r| r.starts_with("whitelist entry")) {
        "its whitelist is"
    } else {
        "its whitelist and looser settings are"
    };
    if let Some(why) = file_problem {
        return Some(format!("{why}; {what} ignored until it is fixed"));
    }
    let message = match trust {
        State::Changed => format!("{shown} changed since you trusted it; {what} ignored until you run `agentsh trust`"),
        State::StoreRefused(ref why) => format!("{why}; so {shown} is not trusted and {what} ignored"),
        _ => format!("{shown} is not trusted; {what} ignored until you run `agentsh trust`"),
    };
    if matches!(trust, State::StoreRefused(_)) || first_warning(path, content.bytes()) { Some(message) } else { None }
}

/// After agentsh itself rewrote the project file (`old` -> `new`, still under the file's lock),
/// carries the trust over: only when the old content was trusted or loosened nothing, so an
/// agent's untrusted edit is never laundered by a person's later "Always". Returns a note for
/// the person when the new content is not trusted.
pub fn carry_over(path: &Path, old: Option<&[u8]>, new: &[u8], user: &FileSettings) -> Result<Option<String>> {
    let old_was_fine = match old {
        None => true,
        Some(old) => {
            state(path, &crate::policy::config::Content::new(old.to_vec(), None)) == State::Trusted || {
                let mut s = crate::policy::config::parse_settings("", &String::from_utf8_lossy(old));
                strip_loosening(&mut s, user).is_empty()
            }
        }
    };
    if old_was_fine && unsafe_file(path).is_none() {
        record(path, new)?;
        return Ok(None);
    }
    Ok(Some(format!(
        "{} was not trusted before this change, so its whitelist applies only after you run `agentsh trust`",
        sanitize(&path.display().to_string())
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::config::parse_settings;

    #[test]
    fn loosening_parts_are_stripped_and_tightening_ones_stay() {
        let user = parse_settings("u", r#"{"confirmationTimeoutSeconds": 30, "commandTimeoutSeconds": 60}"#);
        let mut p = parse_settings(
            "p",
            r#"{"commandWhitelist": ["npm test"], "commandBlacklist": ["git push"], "requireCommandConfirmation": true,
                "confirmationTimeoutSeconds": 90, "commandTimeoutSeconds": 600}"#,
        );
        let removed = strip_loosening(&mut p, &user);
        assert_eq!(
            removed,
            [
                "whitelist entry `npm test`",
                "confirmationTimeoutSeconds: 90 (longer than 30)",
                "commandTimeoutSeconds: 600 (longer than 60)"
            ]
        );
        assert!(p.whitelist.is_empty());
        assert_eq!(p.blacklist, ["git push"]);
        assert_eq!(p.require_confirmation, Some(true));
        assert_eq!((p.confirmation_timeout, p.command_timeout), (None, None));

        // Shorter timeouts tighten: they stay. Against the defaults, 90s is longer than 60s.
        let mut p = parse_settings("p", r#"{"confirmationTimeoutSeconds": 10, "commandTimeoutSeconds": 5}"#);
        assert!(strip_loosening(&mut p, &user).is_empty());
        assert_eq!((p.confirmation_timeout, p.command_timeout), (Some(10), Some(5)));
        let mut p = parse_settings("p", r#"{"confirmationTimeoutSeconds": 90, "requireCommandConfirmation": false}"#);
        let user = parse_settings("u", r#"{"requireCommandConfirmation": true}"#);
        assert_eq!(strip_loosening(&mut p, &user).len(), 2);
        assert_eq!(p.require_confirmation, None);
    }

    #[test]
    fn the_digest_covers_path_and_every_byte() {
        let a = digest(Path::new("/p/.agents/terminal.json"), b"{}");
        assert_eq!(a.len(), 64);
        assert_ne!(a, digest(Path::new("/q/.agents/terminal.json"), b"{}"));
        assert_ne!(a, digest(Path::new("/p/.agents/terminal.json"), b"{} "));
    }

    #[test]
    fn a_stat_stands_for_content_only_when_unchanged_across_the_read_and_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("terminal.json");
        std::fs::write(&path, "{}").unwrap();
        let before = std::fs::metadata(&path).unwrap();
        let now = std::time::SystemTime::now();
        assert_eq!(Stat::settled(&before, &before, now), None, "changed just now: a write could share its tick");
        let later = now + SETTLED;
        assert!(Stat::settled(&before, &before, later).is_some());
        std::fs::write(&path, "{ }").unwrap();
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!(Stat::settled(&before, &after, later + SETTLED), None, "written while it was read");
    }

    #[test]
    fn unsafe_files_are_named() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.json");
        std::fs::write(&f, "{}").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(unsafe_file(&f), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(unsafe_file(&f).unwrap().contains("writable by group or others"));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o646)).unwrap();
        assert!(unsafe_file(&f).is_some());
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(unsafe_file(&link).unwrap().contains("symbolic link"));
        assert_eq!(unsafe_file(&dir.path().join("missing")), None);
    }
}
