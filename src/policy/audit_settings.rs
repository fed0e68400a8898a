//! The audit keys of a config file (`auditFailure`, `auditSyslog`, `auditMaxBytes`,
//! `auditKeep`): raw values validated, and the settings in force. `record::audit` reads the
//! result; the config loader (`config`) and trust (`trust`) read and compare these keys.

use serde_json::Value;

pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
pub const MIN_MAX_BYTES: u64 = 64 * 1024;
pub const DEFAULT_KEEP: u64 = 5;
pub const MAX_KEEP: u64 = 100;
/// The config keys this module reads (see [`validate_key`]).
pub const KEYS: &[&str] = &["auditFailure", "auditSyslog", "auditMaxBytes", "auditKeep"];

/// What to do when a record cannot be written for a command that would run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    Refuse,
    Warn,
}

/// The audit settings in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub on_failure: OnFailure,
    pub syslog: bool,
    pub max_bytes: u64,
    pub keep: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { on_failure: OnFailure::Refuse, syslog: false, max_bytes: DEFAULT_MAX_BYTES, keep: DEFAULT_KEEP }
    }
}

/// One file's audit keys as written, after validation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSettings {
    pub on_failure: Option<OnFailure>,
    pub syslog: Option<bool>,
    pub max_bytes: Option<u64>,
    pub keep: Option<u64>,
}

/// Validates one audit key of a config file; `at` is its `file:line:col`.
pub fn validate_key(key: &str, value: &Value, at: &str, s: &mut FileSettings, warnings: &mut Vec<String>) {
    match key {
        "auditFailure" => match value.as_str() {
            Some("refuse") => s.on_failure = Some(OnFailure::Refuse),
            Some("warn") => s.on_failure = Some(OnFailure::Warn),
            _ => {
                warnings.push(format!("{at}: auditFailure must be \"refuse\" or \"warn\"; using \"refuse\""));
                s.on_failure = Some(OnFailure::Refuse);
            }
        },
        "auditSyslog" => match value {
            Value::Bool(b) => s.syslog = Some(*b),
            _ => warnings.push(format!("{at}: auditSyslog must be true or false; ignored")),
        },
        "auditMaxBytes" => match value.as_u64() {
            Some(n) if n >= MIN_MAX_BYTES => s.max_bytes = Some(n),
            _ => warnings.push(format!(
                "{at}: auditMaxBytes must be a whole number of bytes, at least {MIN_MAX_BYTES}; using {DEFAULT_MAX_BYTES}"
            )),
        },
        "auditKeep" => match value.as_u64() {
            Some(n) if (1..=MAX_KEEP).contains(&n) => s.keep = Some(n),
            _ => warnings.push(format!("{at}: auditKeep must be 1 to {MAX_KEEP} files; using {DEFAULT_KEEP}")),
        },
        _ => {}
    }
}

impl Settings {
    /// Takes one file's audit keys. The project file sits where the agent can edit it, so it
    /// may only add to the trail (`auditSyslog: true`, `auditFailure: "refuse"`); keys that
    /// weaken or shorten the trail count only in the person's own user config.
    pub fn apply(&mut self, file: &FileSettings, from_user_file: bool, source: &str, warnings: &mut Vec<String>) {
        self.syslog |= file.syslog.unwrap_or(false);
        match file.on_failure {
            Some(OnFailure::Refuse) => self.on_failure = OnFailure::Refuse,
            Some(OnFailure::Warn) if from_user_file => self.on_failure = OnFailure::Warn,
            Some(OnFailure::Warn) => warnings.push(user_only(source, "auditFailure \"warn\"")),
            None => {}
        }
        if from_user_file {
            self.max_bytes = file.max_bytes.unwrap_or(self.max_bytes);
            self.keep = file.keep.unwrap_or(self.keep);
        } else {
            if file.max_bytes.is_some() {
                warnings.push(user_only(source, "auditMaxBytes"));
            }
            if file.keep.is_some() {
                warnings.push(user_only(source, "auditKeep"));
            }
        }
    }
}

fn user_only(source: &str, what: &str) -> String {
    format!(
        "{source}: {what} is honoured only in the user config (~/.config/agentsh/config.json), \
         since an agent can edit project files; ignored"
    )
}
