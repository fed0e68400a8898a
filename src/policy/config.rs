//! Config files -> a validated policy plus warnings. Raw JSON first, then validated, collecting
//! every problem with `file:line:col`. It reads files; it never writes them (see `atomic_file`; the
//! only writes on this path are `trust` noting that a warning was shown and `last_good` keeping
//! the last user config that parsed).
//!
//! Fail-closed rules for bad files:
//! - a file that parses never stops agentsh: a setting it cannot read is ignored with one
//!   warning each, or taken the strict way where it may have tightened the policy;
//! - a blacklist that cannot be read makes every command need a person, since agentsh cannot
//!   tell what it would have denied;
//! - an unreadable `requireCommandConfirmation` counts as `true`;
//! - a file that is there but cannot be read at all (unreadable, over [`MAX_CONFIG_BYTES`], a
//!   link that dangles or loops, a directory or a FIFO in its place), or that is not valid
//!   JSON or not an object (or, for the user config, is empty or blank: rt4 R4), is taken as holding the strictest settings and none of its own,
//!   with one warning that says why ([`strictest`]); for the user config, what its last
//!   version that parsed tightened is added (`last_good`).

use crate::judge::custom_rules::{self, Rule};
use crate::judge::decide::Policy;
use crate::judge::levels::Level;
use crate::text::line_index::line_col;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub const PROJECT_FILE: &str = ".agents/terminal.json";
pub const DEFAULT_CONFIRM_TIMEOUT: u64 = 60;
pub const MIN_CONFIRM_TIMEOUT: u64 = 10;
pub const MAX_CONFIRM_TIMEOUT: u64 = 120;
/// The most of a config file agentsh reads. A 10,000-entry whitelist with 1,000 rules is about
/// 400 KiB; a 1 GB `.agents/terminal.json`, which an untrusted repository can ship, cost 12.8 s
/// and 2.75 GB on every command (issue 27).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

pub const KEYS: &[&str] = &[
    "requireCommandConfirmation",
    "confirmationTimeoutSeconds",
    "commandTimeoutSeconds",
    "commandWhitelist",
    "commandBlacklist",
    "level",
    "rules",
    "auditFailure",
    "auditSyslog",
    "auditMaxBytes",
    "auditKeep",
    "approvalQueue",
    "sandbox",
    "projectWhitelist",
];

/// The settings in force, merged from the user and project files.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub policy: Policy,
    pub confirmation_timeout: u64,
    /// 0: no limit.
    pub command_timeout: u64,
    /// With no terminal, wait in the approval queue even when no `agentsh approvals` is open.
    /// Read from the user config only: the project file is in the agent's reach.
    pub approval_queue: bool,
    /// The files that were read, in order (user, then project).
    pub files: Vec<PathBuf>,
    pub warnings: Vec<String>,
    /// The audit trail's settings (see `audit::Settings::apply` for who may set what).
    pub audit: crate::policy::audit_settings::Settings,
    /// The kernel box's settings (`sandbox_settings`).
    pub sandbox: crate::policy::sandbox_settings::Settings,
}

/// One file's settings as written, after validation. `None` means "not set".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileSettings {
    pub require_confirmation: Option<bool>,
    pub confirmation_timeout: Option<u64>,
    pub command_timeout: Option<u64>,
    pub whitelist: crate::text::strlist::StrList,
    pub blacklist: crate::text::strlist::StrList,
    pub blacklist_broken: Option<String>,
    pub warnings: Vec<String>,
    pub audit: crate::policy::audit_settings::FileSettings,
    /// `level`: the maturity level (`levels`).
    pub level: Option<Level>,
    /// `rules`: the person's own rules, validated, examples checked (`custom_rules`).
    pub rules: Vec<Rule>,
    /// A rule that could tighten could not be read: every command needs a person.
    pub rules_broken: Option<String>,
    pub approval_queue: Option<bool>,
    /// `projectWhitelist` (user config only): whitelist entries for one project, by the
    /// project's absolute root. "Always" at a prompt writes here when the project's own file
    /// is not trusted, where an entry would be ignored.
    pub project_whitelist: Vec<(String, Vec<String>)>,
    /// `sandbox`: the kernel box's settings.
    pub sandbox: crate::policy::sandbox_settings::FileSandbox,
    /// Why nothing of the file could be read (unreadable, not JSON, not an object): it stands
    /// for the strictest settings ([`strictest`]).
    pub broken: Option<String>,
}

/// Walks up from `cwd` to the first `.agents/terminal.json`: the first that is there in any
/// form. One that is not a readable file (a link that dangles or loops, a directory, a FIFO) is
/// found too, and read as unreadable (strict), never skipped for one further up.
pub fn find_project_file(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().map(|d| d.join(PROJECT_FILE)).find(|p| present(p))
}

/// Whether something is at `path`, a link or a file that cannot be read included. Only "no such
/// file" (or a parent that is not a directory) means it is not there.
pub fn present(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(_) => true,
        Err(e) => !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)),
    }
}

/// The bytes of a config file: a regular file (following a link, as into a dotfiles
/// repository), at most [`MAX_CONFIG_BYTES`], never blocking. `NotFound` only when nothing is
/// there; every other error says what is there instead.
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::policy::files::read_capped(path, MAX_CONFIG_BYTES)
}

/// The project `cwd` is in, for `projectWhitelist`: the directory holding its
/// `.agents/terminal.json`, else the repository's top level, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    if let Some(found) = find_project_file(cwd)
        && let Some(root) = found.parent().and_then(Path::parent)
    {
        return root.to_path_buf();
    }
    cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// Where a new project file goes: beside the repository's `.git`, else in `cwd`.
pub fn project_file_for_writing(cwd: &Path) -> PathBuf {
    if let Some(found) = find_project_file(cwd) {
        return found;
    }
    let root = cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd);
    root.join(PROJECT_FILE)
}

/// `~/.config/agentsh/config.json` on Linux (XDG), the platform's equivalent elsewhere.
pub fn user_file() -> Option<PathBuf> {
    crate::policy::dirs::project().map(|d| d.config_dir().join("config.json"))
}

/// Reads and merges the user and project files for a command run in `cwd`. The project file's
/// loosening settings apply only while it is trusted, and neither file may loosen anything when
/// it is a symlink, another user's, or writable by others (see `trust`).
pub fn load(cwd: &Path) -> Config {
    let mut parsed: Vec<(PathBuf, FileSettings)> = Vec::new();
    let user_path = user_file();
    // A user config in a place a command in the sandbox can write is not the person's (rt5 B10:
    // a box wrote `cfg/agentsh/config.json`, and `XDG_CONFIG_HOME` named `cfg`): there or not,
    // it stands for the strictest settings. Anything the agent can reach only tightens.
    // Judged where its directory really is, links and `..` followed (rt6b G1, G5); the file
    // itself where it is opened (`read_user_file`).
    let reachable = user_path.as_deref().and_then(|u| Some((u, box_writes(u.parent()?)?)));
    if let Some((u, why)) = reachable {
        let at = crate::text::sanitize::sanitize(&u.display().to_string());
        let settings = strictest(
            &at,
            &format!("{why}, so a command in the sandbox could have written it"),
            "while it is there",
            ". Keep agentsh's config out of every project (unset XDG_CONFIG_HOME, or point it at a directory of \
             your own outside any git repository)",
        );
        parsed.push((u.to_path_buf(), settings));
    } else if let Some(u) = user_path.clone().filter(|p| present(p)) {
        let (mut user, content) = read_user_file(&u);
        // A user config that is there but empty or blank holds no settings agentsh can read, as
        // one that does not parse: git empties a file it writes through a link (a failed
        // `git fetch` truncates `FETCH_HEAD`, rt4 R4), and so can a crashed editor. Only a
        // missing file is no config.
        if content.as_ref().is_some_and(|c| c.text.trim().is_empty()) {
            user = emptied(&u);
        }
        // The last version that parsed is kept, for what it tightened, should the file stop
        // parsing (`last_good`).
        match (&user.broken, &content, crate::policy::last_good::dir()) {
            (None, Some(content), Some(dir)) => crate::policy::last_good::keep(&dir, content),
            (Some(_), _, Some(dir)) => crate::policy::last_good::tighten(&dir, &mut user),
            _ => {}
        }
        if let Some(why) = crate::policy::trust::unsafe_file(&u) {
            let removed = crate::policy::trust::strip_loosening(&mut user, &FileSettings::default());
            if !removed.is_empty() {
                user.warnings.push(format!("{why}; its whitelist and looser settings are ignored until it is fixed"));
            }
        }
        parsed.push((u, user));
    }
    if let Some(p) = find_project_file(cwd) {
        let (mut settings, content) = read_file_bytes(&p);
        // The user's settings, borrowed: what the project file may not loosen beyond.
        let none = FileSettings::default();
        let user = parsed.first().map_or(&none, |(_, s)| s);
        let content = content.unwrap_or_else(|| Content::new(Vec::new(), None));
        if let Some(warning) = crate::policy::trust::apply(&p, &content, &mut settings, user) {
            settings.warnings.push(warning);
        }
        parsed.push((p, settings));
    }
    let mut approval_queue = false;
    for (path, s) in &mut parsed {
        // Credentials are sent to the hosts they name: a project file, trusted or not, could
        // name its own host for the person's token.
        if Some(&*path) != user_path.as_ref() && !s.sandbox.credentials.is_empty() {
            s.sandbox.credentials.clear();
            s.warnings.push(format!(
                "{}: sandbox.credentials is ignored in a project file (only ~/.config/agentsh/config.json may hand \
                 the person's tokens to a host)",
                path.display()
            ));
        }
        let projects = std::mem::take(&mut s.project_whitelist);
        if Some(&*path) == user_path.as_ref() {
            // The person's own entries for this project (and the ones holding it).
            for (_, entries) in projects.iter().filter(|(root, _)| cwd.starts_with(root)) {
                for e in entries {
                    s.whitelist.push(e);
                }
            }
        } else if !projects.is_empty() {
            s.warnings.push(format!(
                "{}: projectWhitelist is only read from the user config (~/.config/agentsh/config.json); ignored here",
                path.display()
            ));
        }
        match s.approval_queue {
            Some(on) if Some(&*path) == user_path.as_ref() => approval_queue = on,
            // The agent can edit the project file: a key that loosens waiting is not taken from it.
            Some(_) => s.warnings.push(format!(
                "{}: approvalQueue is only read from the user config (~/.config/agentsh/config.json); ignored here",
                path.display()
            )),
            None => {}
        }
    }
    let mut cfg = merge(parsed);
    cfg.approval_queue = approval_queue;
    cfg
}

pub fn read_file(path: &Path) -> FileSettings {
    read_file_bytes(path).0
}

/// The exact bytes of a config file, and (when it is settled) the stat that identifies them.
pub struct Content {
    /// The bytes as text, kept (shared with rules built later): no copy when they are UTF-8.
    text: std::sync::Arc<String>,
    /// The bytes themselves, only when they are not UTF-8 (`text` then replaces what it must).
    raw: Option<Vec<u8>>,
    pub stat: Option<crate::policy::trust::Stat>,
}

impl Content {
    pub fn new(bytes: Vec<u8>, stat: Option<crate::policy::trust::Stat>) -> Content {
        match String::from_utf8(bytes) {
            Ok(text) => Content { text: text.into(), raw: None, stat },
            Err(e) => {
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                Content { text: text.into(), raw: Some(e.into_bytes()), stat }
            }
        }
    }

    /// The exact bytes read.
    pub fn bytes(&self) -> &[u8] {
        self.raw.as_deref().unwrap_or(self.text.as_bytes())
    }
}

/// The settings and the exact content they were read from (one read, so trust and settings
/// always describe the same content).
pub fn read_file_bytes(path: &Path) -> (FileSettings, Option<Content>) {
    match read_with_stat(path) {
        Ok(content) => (parse_shared(&path.display().to_string(), &content.text), Some(content)),
        Err(e) => (unreadable(path, &e), None),
    }
}

/// [`read_file_bytes`] for the user config, also judged where the file opened really is (the
/// path of its descriptor): were it somewhere else than its path led when judged (a link changed
/// in between), and there in a place a box writes, it stands for the strictest settings.
fn read_user_file(path: &Path) -> (FileSettings, Option<Content>) {
    let (settings, content, opened) = match read_with_stat_at(path) {
        Ok((content, opened)) => (parse_shared(&path.display().to_string(), &content.text), Some(content), opened),
        Err(e) => return (unreadable(path, &e), None),
    };
    let moved = opened.filter(|o| *o != crate::policy::dirs::normalize(path)).and_then(|o| Some((box_writes(&o)?, o)));
    match moved {
        Some((why, o)) => {
            let at = crate::text::sanitize::sanitize(&path.display().to_string());
            let real = crate::text::sanitize::sanitize(&o.display().to_string());
            let problem =
                format!("the file opened is {real}: {why}, so a command in the sandbox could have written it");
            (strictest(&at, &problem, "while it is there", ""), content)
        }
        None => (settings, content),
    }
}

/// Why a command's box could write `path` (one of agentsh's own directories or files), if it
/// could: where it really is, or a directory its path goes through, is in a git work tree (any
/// such tree can be a workspace). See `dirs::box_writable`.
pub fn box_writes(path: &Path) -> Option<String> {
    crate::policy::dirs::box_writable(path, crate::policy::dirs::home()?)
}

/// The settings of a file that is there but cannot be read, whatever the reason: it may have
/// held any setting that tightens the policy, so all of them are assumed ([`strictest`]).
pub fn unreadable(path: &Path, e: &std::io::Error) -> FileSettings {
    let at = crate::text::sanitize::sanitize(&path.display().to_string());
    strictest(&at, &format!("cannot be read: {e}"), "until it can be read", "")
}

/// The settings of a user config that is there but empty or blank: the strictest
/// ([`strictest`]), as for one that does not parse. A project file that is empty has none, as
/// before: the agent can write it anyway.
fn emptied(path: &Path) -> FileSettings {
    let at = crate::text::sanitize::sanitize(&path.display().to_string());
    strictest(&at, "is empty", "until it holds settings", ". Restore it, or write {} there for no settings of your own")
}

/// What a file that is there but holds no settings agentsh can read stands for: the strictest
/// value of every setting that tightens the policy (every command needs a person, level
/// student, no network in the sandbox), and none that loosens it, with one warning that says
/// so (`until`: for how long; `fix`: what to do). Its `sandbox.denyRead`, `denyHosts` and
/// blacklist cannot be known; with every command needing a person and no network, none runs
/// without a person's word and nothing it reads can leave through the box's network.
fn strictest(at: &str, problem: &str, until: &str, fix: &str) -> FileSettings {
    let why = format!("{at}: {problem}");
    let mut s = FileSettings {
        blacklist_broken: Some(why.clone()),
        rules_broken: Some(why.clone()),
        broken: Some(why),
        require_confirmation: Some(true),
        level: Some(Level::Student),
        ..FileSettings::default()
    };
    s.sandbox.network = Some(crate::policy::sandbox_settings::Network::Off);
    // One warning for the file, not one per setting assumed.
    s.warnings = vec![format!(
        "{at}: {problem}; {until} agentsh assumes its strictest settings: every command needs a person, level \
         student, and no network in the sandbox{fix}"
    )];
    s
}

/// Reads the file, with its stat taken before and after on the open file: equal, and settled
/// (`trust::Stat::settled`), they identify the bytes read.
fn read_with_stat(path: &Path) -> std::io::Result<Content> {
    read_with_stat_at(path).map(|(content, _)| content)
}

/// [`read_with_stat`], and where the file opened really is (`readlink` of its descriptor), when
/// `/proc` tells.
fn read_with_stat_at(path: &Path) -> std::io::Result<(Content, Option<PathBuf>)> {
    use std::os::fd::AsRawFd;
    let opened = crate::policy::files::open(path, crate::policy::files::Links::Follow)?;
    let bytes = opened.read_capped(MAX_CONFIG_BYTES)?;
    let after = opened.file.metadata()?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", opened.file.as_raw_fd())).ok();
    let content =
        Content::new(bytes, crate::policy::trust::Stat::settled(&opened.meta, &after, std::time::SystemTime::now()));
    Ok((content, real))
}

pub fn merge(files: Vec<(PathBuf, FileSettings)>) -> Config {
    let mut cfg = Config { confirmation_timeout: DEFAULT_CONFIRM_TIMEOUT, ..Config::default() };
    let mut confirm: Option<u64> = None;
    let mut command: Option<u64> = None;
    for (path, s) in files {
        let source = path.display().to_string();
        cfg.policy.require_confirmation |= s.require_confirmation.unwrap_or(false);
        // Shorter waits are stricter: the smallest setting wins.
        confirm = min_some(confirm, s.confirmation_timeout);
        command = min_some(command, s.command_timeout.filter(|t| *t > 0));
        let shared: std::sync::Arc<str> = source.as_str().into();
        cfg.policy.whitelist.extend_from(s.whitelist, &shared);
        cfg.policy.blacklist.extend_from(s.blacklist, &shared);
        if cfg.policy.blacklist_broken.is_none() {
            cfg.policy.blacklist_broken = s.blacklist_broken;
        }
        // The stricter level wins; rules from every file apply (user file first).
        cfg.policy.level = match (cfg.policy.level, s.level) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if cfg.policy.rules.is_empty() {
            // Moved, not copied: a copy of 1,000 rules is 128 KB of fresh memory to fault in.
            cfg.policy.rules = s.rules;
        } else {
            cfg.policy.rules.extend(s.rules);
        }
        if cfg.policy.rules_broken.is_none() {
            cfg.policy.rules_broken = s.rules_broken;
        }
        cfg.warnings.extend(s.warnings);
        let from_user_file = user_file().is_some_and(|u| u == path);
        cfg.audit.apply(&s.audit, from_user_file, &source, &mut cfg.warnings);
        cfg.sandbox.apply(&s.sandbox, &source);
        cfg.files.push(path);
    }
    cfg.confirmation_timeout = confirm.unwrap_or(DEFAULT_CONFIRM_TIMEOUT);
    cfg.command_timeout = command.unwrap_or(0);
    cfg
}

fn min_some(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Validates one file's text. `name` is used in messages.
pub fn parse_settings(name: &str, text: &str) -> FileSettings {
    parse(name, text, None)
}

/// `parse_settings` of a text that is kept: custom rules may be built from it when a command
/// first needs them (`custom_rules::parse_raw`).
pub fn parse_shared(name: &str, text: &std::sync::Arc<String>) -> FileSettings {
    parse(name, text, Some(text))
}

fn parse(name: &str, text: &str, shared: Option<&std::sync::Arc<String>>) -> FileSettings {
    if text.trim().is_empty() {
        return FileSettings::default();
    }
    crate::policy::config_fast::parse_settings(name, text, shared).unwrap_or_else(|| parse_settings_slowly(name, text))
}

/// `parse_settings` through a whole `serde_json::Value` tree (`config_fast` declines odd files).
pub fn parse_settings_slowly(name: &str, text: &str) -> FileSettings {
    let mut s = FileSettings::default();
    if text.trim().is_empty() {
        return s;
    }
    // A file that is there but does not parse, or is no object, holds nothing agentsh can read:
    // its text may be anything (a commit message that git wrote through a link, rt3 G1), so
    // the names of keys still in it say nothing of what it held. It stands for the strictest
    // settings, whole.
    let fix = ". Fix the JSON there, or move the file away to start afresh";
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let at = format!("{name}:{}:{}", e.line(), e.column());
            let problem = format!("not valid JSON ({})", strip_position(&e.to_string()));
            return strictest(&at, &problem, "until it is fixed", fix);
        }
    };
    let Value::Object(map) = root else {
        return strictest(&format!("{name}:1:1"), "expected a JSON object { ... }", "until it is fixed", fix);
    };
    validate(name, text, &map, &mut s);
    s
}

pub(crate) fn validate(name: &str, text: &str, map: &Map<String, Value>, s: &mut FileSettings) {
    let at = |key: &str| format!("{name}:{}", position_of_key(text, key));
    for (key, value) in map {
        match key.as_str() {
            "requireCommandConfirmation" => match value {
                Value::Bool(b) => s.require_confirmation = Some(*b),
                _ => {
                    s.warnings.push(format!(
                        "{}: requireCommandConfirmation must be true or false; treating it as true",
                        at(key)
                    ));
                    s.require_confirmation = Some(true);
                }
            },
            "confirmationTimeoutSeconds" => match value.as_u64() {
                Some(n) if (MIN_CONFIRM_TIMEOUT..=MAX_CONFIRM_TIMEOUT).contains(&n) => s.confirmation_timeout = Some(n),
                Some(n) => {
                    let clamped = n.clamp(MIN_CONFIRM_TIMEOUT, MAX_CONFIRM_TIMEOUT);
                    s.warnings.push(format!(
                        "{}: confirmationTimeoutSeconds must be {MIN_CONFIRM_TIMEOUT} to {MAX_CONFIRM_TIMEOUT}; using {clamped}",
                        at(key)
                    ));
                    s.confirmation_timeout = Some(clamped);
                }
                None => s.warnings.push(format!(
                    "{}: confirmationTimeoutSeconds must be a whole number of seconds; using {DEFAULT_CONFIRM_TIMEOUT}",
                    at(key)
                )),
            },
            "commandTimeoutSeconds" => match value.as_u64() {
                Some(n) => s.command_timeout = Some(n),
                None => s.warnings.push(format!(
                    "{}: commandTimeoutSeconds must be a whole number of seconds (0 for no limit); ignored",
                    at(key)
                )),
            },
            "commandWhitelist" => match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        match item.as_str().map(str::trim) {
                            Some(e) if !e.is_empty() => s.whitelist.push(e),
                            _ => s.warnings.push(format!(
                                "{}: commandWhitelist[{i}] must be a non-empty string; that entry is ignored",
                                at(key)
                            )),
                        }
                    }
                }
                _ => s.warnings.push(format!(
                    "{}: commandWhitelist must be a list of strings; the whitelist in this file is ignored",
                    at(key)
                )),
            },
            "projectWhitelist" => match value {
                Value::Object(projects) => {
                    for (root, list) in projects {
                        let entries: Option<Vec<String>> = list
                            .as_array()
                            .and_then(|items| items.iter().map(|i| i.as_str().map(|e| e.trim().to_string())).collect());
                        match entries {
                            Some(entries) if Path::new(root).is_absolute() => {
                                s.project_whitelist.push((root.clone(), entries.into_iter().filter(|e| !e.is_empty()).collect()))
                            }
                            _ => s.warnings.push(format!(
                                "{}: projectWhitelist[\"{root}\"] must be a list of strings under an absolute path; ignored",
                                at(key)
                            )),
                        }
                    }
                }
                _ => s.warnings.push(format!(
                    "{}: projectWhitelist must be an object of project paths to lists of entries; ignored",
                    at(key)
                )),
            },
            "commandBlacklist" => match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        match item.as_str().map(str::trim) {
                            Some(e) if !e.is_empty() => s.blacklist.push(e),
                            _ => {
                                let why = format!("{}: commandBlacklist[{i}] is not a non-empty string", at(key));
                                s.warnings.push(format!("{why}; every command needs a person until it is fixed"));
                                s.blacklist_broken.get_or_insert(why);
                            }
                        }
                    }
                }
                _ => {
                    let why = format!("{}: commandBlacklist must be a list of strings", at(key));
                    s.warnings.push(format!("{why}; every command needs a person until it is fixed"));
                    s.blacklist_broken.get_or_insert(why);
                }
            },
            audit if crate::policy::audit_settings::KEYS.contains(&audit) => {
                crate::policy::audit_settings::validate_key(audit, value, &at(audit), &mut s.audit, &mut s.warnings)
            }
            "level" => match value.as_str().and_then(Level::parse) {
                Some(l) => s.level = Some(l),
                None => {
                    s.warnings.push(format!(
                        "{}: level must be one of student, intern, supervised, autonomous; treating it as student, the strictest",
                        at(key)
                    ));
                    s.level = Some(Level::Student);
                }
            },
            "rules" => {
                let parsed = custom_rules::parse(name, text, value);
                s.rules = parsed.rules;
                s.warnings.extend(parsed.warnings);
                s.rules_broken = parsed.broken;
            }
            "sandbox" => crate::policy::sandbox_settings::validate(value, &at(key), &mut s.sandbox, &mut s.warnings),
            "approvalQueue" => match value {
                Value::Bool(b) => s.approval_queue = Some(*b),
                _ => s.warnings.push(format!("{}: approvalQueue must be true or false; ignored", at(key))),
            },
            other => s.warnings.push(match crate::text::similar::closest(other, KEYS.iter().copied()) {
                Some(near) => format!("{}: unknown key \"{other}\" is ignored; did you mean \"{near}\"?", at(other)),
                None => format!("{}: unknown key \"{other}\" is ignored (known keys: {})", at(other), KEYS.join(", ")),
            }),
        }
    }
}

/// `line:col` of `"key"` in the text (1-based), or `1:1` when it cannot be found.
fn position_of_key(text: &str, key: &str) -> String {
    line_col(text, text.find(&format!("\"{key}\"")).unwrap_or(0))
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::sandbox_settings::Network;

    #[test]
    fn rules_built_when_first_needed_are_the_rules_built_at_once() {
        let text = std::sync::Arc::new(
            r#"{"rules": [
  {"pattern": ["git", "push"], "decision": "deny", "reason": "no", "hasFlag": ["-f"]},
  {"pattern": ["GIT", ["pull", "fetch"]], "decision": "ask"},
  {"pattern": [["npm", "yarn"]], "decision": "allow", "reason": "alternatives: built at once"},
  {"pattern": ["Ärger"], "decision": "deny", "reason": "not ASCII", "anyArgMatches": "*.env"},
  {"pattern": ["cat"], "decision": "ask", "reason": "with examples: built at once", "match": "cat a.env"},
  {"pattern": ["a b"], "decision": "deny", "reason": "unreadable"},
  {"pattern": ["ls"], "decision": "maybe"}
]}"#
            .to_string(),
        );
        let lazy = parse_shared("t.json", &text);
        let deferred = lazy.rules.iter().filter(|r| r.is_waiting()).count();
        assert_eq!(deferred, 3, "the three rules that name one program and have no examples wait");
        let eager = parse_settings("t.json", &text);
        assert!(eager.rules.iter().all(|r| !r.is_deferred()));
        assert_eq!(lazy.warnings, eager.warnings);
        assert_eq!(lazy.rules_broken, eager.rules_broken);
        for command in ["git push -f", "git pull", "Ärger x.env", "cat a.env", "npm i", "sudo git push --force", "ls"]
        {
            for a in crate::judge::assess::assess(&crate::judge::parse::parse(command).unwrap()) {
                let (l, e) = (custom_rules::strictest(&lazy.rules, &a), custom_rules::strictest(&eager.rules, &a));
                assert_eq!(l.map(|r| (&r.reason, &r.at)), e.map(|r| (&r.reason, &r.at)), "{command}");
            }
        }
        // Compared whole (which builds every body): the same rules, positions and all.
        assert_eq!(lazy, eager);
        assert_eq!(serde_json::to_string(&lazy.rules).unwrap(), serde_json::to_string(&eager.rules).unwrap());
    }

    #[test]
    fn reads_every_key() {
        let s = parse_settings(
            "t.json",
            r#"{"requireCommandConfirmation": true, "confirmationTimeoutSeconds": 30, "commandTimeoutSeconds": 5,
                "commandWhitelist": ["ls", "npm test"], "commandBlacklist": ["git push"]}"#,
        );
        assert_eq!(s.require_confirmation, Some(true));
        assert_eq!(s.confirmation_timeout, Some(30));
        assert_eq!(s.command_timeout, Some(5));
        assert_eq!(s.whitelist, ["ls", "npm test"]);
        assert_eq!(s.blacklist, ["git push"]);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn malformed_json_is_ignored_with_its_position() {
        let s = parse_settings("t.json", "{\n  \"commandWhitelist\": [\"ls\",]\n}");
        assert!(s.whitelist.is_empty());
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].starts_with("t.json:2:"), "{}", s.warnings[0]);
    }

    #[test]
    fn a_malformed_file_that_had_a_blacklist_fails_closed() {
        let s = parse_settings("t.json", "{\"commandBlacklist\": [\"rm\"], oops}");
        assert!(s.blacklist_broken.is_some());
        let s = parse_settings("t.json", "{\"requireCommandConfirmation\": false,,}");
        assert_eq!(s.require_confirmation, Some(true));
    }

    /// rt3 G1: the person's git wrote a commit message over the user config through a link the
    /// box planted. No key's name is left in it, and nothing the file tightened may be lost: a
    /// file that does not parse (or is no object) stands for the strictest settings, whole, and
    /// none of its own; a file that parses keeps its own.
    #[test]
    fn a_file_that_does_not_parse_stands_for_the_strictest_settings_whole() {
        let intact = r#"{"commandWhitelist": ["make"], "sandbox": {"network": "proxy", "allowHosts": ["x.example"],
            "denyRead": ["/w/secret"]}}"#;
        let s = parse_settings("c.json", intact);
        assert_eq!(s.sandbox.network, Some(Network::Proxy));
        assert!(s.blacklist_broken.is_none() && s.rules_broken.is_none() && s.require_confirmation.is_none());
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        for (text, at) in [
            ("wip\n", "c.json:1:1"),
            ("fix typo\n\n# Please enter the commit message\n", "c.json:1:"),
            ("{\"commandWhitelist\": [\"ls\",]}", "c.json:1:"),
            (&intact[..intact.len() - 3], "c.json:2:"),
            ("[\"sandbox\"]", "c.json:1:1"),
            ("\"level\"", "c.json:1:1"),
        ] {
            let s = parse_settings("c.json", text);
            assert!(s.blacklist_broken.as_deref().is_some_and(|w| w.starts_with(at)), "{text}: {s:?}");
            assert!(s.rules_broken.is_some(), "{text}");
            assert_eq!(s.require_confirmation, Some(true), "{text}");
            assert_eq!(s.level, Some(Level::Student), "{text}");
            assert_eq!(s.sandbox.network, Some(Network::Off), "{text}");
            assert!(s.whitelist.is_empty() && s.sandbox.allow_hosts.is_empty() && s.sandbox.enabled.is_none());
            assert_eq!(s.warnings.len(), 1, "{text}: {:?}", s.warnings);
            let w = &s.warnings[0];
            assert!(w.starts_with(at), "{w}");
            assert!(
                w.contains(
                    "until it is fixed agentsh assumes its strictest settings: every command needs a person, \
                            level student, and no network in the sandbox. Fix the JSON there, or move the file away"
                ),
                "{w}"
            );
            // Merged with a project file that loosens nothing, the box gets no network.
            let cfg = merge(vec![("c.json".into(), s)]);
            assert_eq!(cfg.sandbox.network, Network::Off);
            assert!(cfg.policy.require_confirmation && cfg.policy.blacklist_broken.is_some());
        }
    }

    #[test]
    fn bad_values_warn_with_key_positions() {
        let s = parse_settings(
            "t.json",
            "{\n \"commandWhitelist\": \"ls\",\n \"confirmationTimeoutSeconds\": 500,\n \"colour\": 1,\n \"commandBlacklist\": [1]\n}",
        );
        assert!(s.whitelist.is_empty());
        assert_eq!(s.confirmation_timeout, Some(120));
        assert!(s.blacklist_broken.as_deref().unwrap().starts_with("t.json:5:2"));
        let all = s.warnings.join("\n");
        assert!(all.contains("t.json:2:2: commandWhitelist must be a list"), "{all}");
        assert!(all.contains("t.json:4:2: unknown key \"colour\""), "{all}");
        let s = parse_settings("t.json", "{\"requireCommandConfirmation\": \"yes\"}");
        assert_eq!(s.require_confirmation, Some(true));
        let s = parse_settings("t.json", "[1]");
        assert_eq!(s.warnings.len(), 1);
    }

    #[test]
    fn merging_only_tightens_shared_settings() {
        let user = parse_settings("u", r#"{"confirmationTimeoutSeconds": 90, "commandWhitelist": ["ls"]}"#);
        let project = parse_settings(
            "p",
            r#"{"confirmationTimeoutSeconds": 20, "requireCommandConfirmation": true, "commandWhitelist": ["make"]}"#,
        );
        let cfg = merge(vec![("u".into(), user), ("p".into(), project)]);
        assert_eq!(cfg.confirmation_timeout, 20);
        assert!(cfg.policy.require_confirmation);
        assert_eq!(cfg.policy.whitelist.len(), 2);
        let cfg = merge(vec![]);
        assert_eq!(cfg.confirmation_timeout, DEFAULT_CONFIRM_TIMEOUT);
        assert!(!cfg.policy.require_confirmation);
    }

    #[test]
    fn levels_merge_to_the_stricter_and_rules_concatenate() {
        let user = parse_settings(
            "u",
            r#"{"level": "supervised", "rules": [{"pattern": ["git", "push"], "decision": "deny", "reason": "no"}]}"#,
        );
        let project = parse_settings(
            "p",
            r#"{"level": "autonomous", "commandWhitelist": ["ls"],
                "rules": [{"pattern": ["npm", "test"], "decision": "allow", "reason": "ok"}]}"#,
        );
        let (mut stripped, mut user_copy) = (project.clone(), user.clone());
        assert!(crate::policy::trust::strip_loosening(&mut user_copy, &FileSettings::default()).is_empty());
        assert_eq!(
            crate::policy::trust::strip_loosening(&mut stripped, &user),
            ["whitelist entry `ls`", "allow rule `npm test` (p:2:27)"]
        );
        assert!(stripped.rules.is_empty() && stripped.whitelist.is_empty());
        let cfg = merge(vec![("u".into(), user), ("p".into(), project.clone())]);
        assert_eq!(cfg.policy.level, Some(Level::Supervised));
        assert_eq!(cfg.policy.rules.len(), 2);
        let cfg = merge(vec![("p".into(), project)]);
        assert_eq!(cfg.policy.level, Some(Level::Autonomous));
    }

    #[test]
    fn unreadable_levels_and_rules_fail_closed() {
        let s = parse_settings("t.json", "{\"level\": 3}");
        assert_eq!(s.level, Some(Level::Student));
        assert!(s.warnings[0].starts_with("t.json:1:2: level must be one of"), "{:?}", s.warnings);
        let s = parse_settings("t.json", "{\"level\": \"autonomous\", \"rules\": [],}");
        assert_eq!(s.level, Some(Level::Student));
        assert!(s.rules_broken.is_some());
        let s = parse_settings("t.json", "{\"rules\": {}}");
        assert!(s.rules_broken.as_deref().unwrap().starts_with("t.json:1:2: rules must be a list"));
    }
}
