//! The last version of the user config that parsed, kept in the state directory
//! (`~/.local/state/agentsh/last-good/`), so that a user config that stops parsing loses none
//! of what it tightened (rt3 G1: the person's `git commit` wrote `wip` over it through a link
//! the box planted in `.git/`). A broken file stands for the strictest settings
//! (`config::strictest`); what can only be known from the file itself (`sandbox.denyRead`,
//! `denyHosts`, the blacklist, deny and ask rules, shorter timeouts) is taken from the kept
//! version, and none of what it loosened.
//!
//! Cost: one `stat` per command while the file is unchanged. The kept copy is named by the
//! stat that identifies the user config's content (`trust::Stat`), or by a hash of the content
//! in the two seconds after an edit, when its stat cannot stand for it yet; a name that is not
//! there means the config changed, and the copy is written anew (atomically) and the old one
//! removed. The box cannot reach the state directory (agentsh's own files are covered in it).

use crate::policy::config::{Content, FileSettings};
use std::path::{Path, PathBuf};

/// The directory of the kept copy: `last-good` in the state directory, once that is checked
/// to be the user's own and closed to others (`dirs::state`, made if missing, as the audit
/// log needs it anyway). `None` when it is not: nothing is kept or read.
pub fn dir() -> Option<PathBuf> {
    crate::policy::dirs::state().ok().map(|d| d.join("last-good"))
}

/// The name the copy of `content` is kept under.
fn name_of(content: &Content) -> String {
    match &content.stat {
        Some(stat) => format!("s-{}.json", stat.as_str().replace(['/', '\0'], "_")),
        None => {
            let digest = crate::text::sha256::hex(&[content.bytes()]);
            format!("c-{digest}.json")
        }
    }
}

/// Keeps `content` (a user config that parsed) in `dir`, unless it is kept there already.
/// Best effort: a copy that cannot be written only means less to fall back on.
pub fn keep(dir: &Path, content: &Content) {
    let name = name_of(content);
    if std::fs::symlink_metadata(dir.join(&name)).is_ok() {
        return;
    }
    if crate::policy::dirs::private_dir(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let written = {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .and_then(|mut f| f.write_all(content.bytes()).and_then(|()| f.sync_data()))
            .and_then(|()| std::fs::rename(&tmp, dir.join(&name)))
    };
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    for old in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if old.file_name() != name.as_str() && !old.file_name().as_encoded_bytes().starts_with(b".") {
            let _ = std::fs::remove_file(old.path());
        }
    }
}

/// The kept copy in `dir`, read as settings, when there is one that parses: the newest regular
/// file there (there is one but for a moment during [`keep`]).
fn kept(dir: &Path) -> Option<(PathBuf, FileSettings)> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
        .filter_map(|e| {
            let meta = e.path().symlink_metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, e.path()))
        })
        .max()?
        .1;
    let bytes = crate::policy::files::read_capped(&newest, crate::policy::config::MAX_CONFIG_BYTES).ok()?;
    let settings =
        crate::policy::config::parse_settings(&newest.display().to_string(), &String::from_utf8(bytes).ok()?);
    settings.broken.is_none().then_some((newest, settings))
}

/// Adds to `broken` (the strictest settings a user config that cannot be read stands for) what
/// the kept copy in `dir` tightened, and says so in its warning. What the copy loosened is not
/// taken; the strictest settings stay.
pub fn tighten(dir: &Path, broken: &mut FileSettings) {
    let Some((path, mut good)) = kept(dir) else { return };
    crate::policy::trust::strip_loosening(&mut good, &FileSettings::default());
    let mut taken = Vec::new();
    let mut count = |n: usize, what: &str| {
        if n > 0 {
            taken.push(format!("{n} {what}"));
        }
    };
    count(good.sandbox.deny_read.len(), "sandbox.denyRead path(s)");
    count(good.sandbox.deny_hosts.len(), "sandbox.denyHosts host(s)");
    count(good.blacklist.len(), "blacklist entry(ies)");
    count(good.rules.len(), "deny or ask rule(s)");
    broken.blacklist = std::mem::take(&mut good.blacklist);
    broken.rules = std::mem::take(&mut good.rules);
    broken.sandbox.deny_read = std::mem::take(&mut good.sandbox.deny_read);
    broken.sandbox.deny_hosts = std::mem::take(&mut good.sandbox.deny_hosts);
    broken.confirmation_timeout = good.confirmation_timeout;
    broken.command_timeout = good.command_timeout.filter(|t| *t > 0);
    broken.audit = good.audit;
    if let Some(w) = broken.warnings.first_mut() {
        let what = if taken.is_empty() { "nothing more".to_string() } else { taken.join(", ") };
        w.push_str(&format!(
            ". What its last version that parsed tightened still applies ({what}; kept in {})",
            crate::text::sanitize::sanitize(&path.display().to_string())
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::config::parse_settings;

    fn content(text: &str) -> Content {
        Content::new(text.as_bytes().to_vec(), None)
    }

    /// rt3 G1: what a user config tightened outlives the file being overwritten: the last
    /// version that parsed gives its denyRead, denyHosts, blacklist and deny rules to the
    /// strictest settings, and nothing it loosened.
    #[test]
    fn a_broken_user_config_keeps_what_its_last_good_version_tightened() {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("last-good");
        let intact = r#"{"commandWhitelist": ["make"], "commandBlacklist": ["git push"], "confirmationTimeoutSeconds": 20,
            "rules": [{"pattern": ["npm", "publish"], "decision": "deny", "reason": "no"},
                      {"pattern": ["ls"], "decision": "allow", "reason": "ok"}],
            "sandbox": {"network": "on", "enabled": false, "denyRead": ["/w/secret"], "denyHosts": ["evil.example"],
                        "allowHosts": ["x.example"], "writable": ["/w/out"]}}"#;
        // Nothing kept yet: the strictest settings alone.
        let mut alone = parse_settings("c.json", "wip\n");
        tighten(&dir, &mut alone);
        assert!(alone.sandbox.deny_read.is_empty() && !alone.warnings[0].contains("last version"));
        keep(&dir, &content("{\"sandbox\": {\"denyRead\": [\"/old\"]}}"));
        keep(&dir, &content(intact));
        keep(&dir, &content(intact));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "one copy, the newest");
        let mut s = parse_settings("c.json", "wip\n");
        tighten(&dir, &mut s);
        assert_eq!(s.sandbox.deny_read, ["/w/secret"]);
        assert_eq!(s.sandbox.deny_hosts, ["evil.example"]);
        assert_eq!(s.blacklist, ["git push"]);
        assert_eq!(s.rules.len(), 1, "the deny rule, not the allow rule");
        assert_eq!(s.confirmation_timeout, Some(20));
        // The strictest settings stay; nothing loosening is taken.
        assert_eq!(s.sandbox.network, Some(crate::policy::sandbox_settings::Network::Off));
        assert_eq!(s.require_confirmation, Some(true));
        assert!(s.blacklist_broken.is_some() && s.rules_broken.is_some());
        assert!(s.whitelist.is_empty() && s.sandbox.allow_hosts.is_empty() && s.sandbox.writable.is_empty());
        assert_eq!(s.sandbox.enabled, None);
        assert_eq!(s.warnings.len(), 1);
        assert!(
            s.warnings[0].contains(
                "What its last version that parsed tightened still applies (1 sandbox.denyRead path(s), 1 \
                 sandbox.denyHosts host(s), 1 blacklist entry(ies), 1 deny or ask rule(s); kept in"
            ),
            "{}",
            s.warnings[0]
        );
        // A kept copy that does not parse (written over as the config was) adds nothing.
        let kept_file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
        std::fs::write(&kept_file, "wip\n").unwrap();
        let mut s = parse_settings("c.json", "wip\n");
        tighten(&dir, &mut s);
        assert!(s.sandbox.deny_read.is_empty() && s.blacklist.is_empty());
    }
}
