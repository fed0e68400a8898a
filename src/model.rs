//! The vocabulary shared by every stage: risk, category, decision, and agentsh's exit statuses.
//! Plain values only; no stage logic lives here.

use serde::Serialize;
use std::fmt;

/// How much harm a simple command can do. Ordered: the whole command takes the highest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Safe,
    Moderate,
    High,
    Forbidden,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Moderate => "moderate",
            Risk::High => "high",
            Risk::Forbidden => "forbidden",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of thing a simple command does (the specification's categories, plus a few).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    FileRead,
    FileWrite,
    FileDelete,
    BuildTools,
    DevOps,
    Network,
    System,
    Shell,
    Blocked,
    Unknown,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::FileRead => "file_read",
            Category::FileWrite => "file_write",
            Category::FileDelete => "file_delete",
            Category::BuildTools => "build_tools",
            Category::DevOps => "dev_ops",
            Category::Network => "network",
            Category::System => "system",
            Category::Shell => "shell",
            Category::Blocked => "blocked",
            Category::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's answer. Ordered so that the strictest part of a command wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Exit statuses agentsh itself gives (a command that ran passes on its own).
pub mod exit {
    /// agentsh refused to run the command (denied, not approved, no one to ask, audit failure).
    pub const REFUSED: i32 = 126;
    /// A usage error.
    pub const USAGE: i32 = 2;
}

/// The first argument of agentsh re-spawned to run a command in a new session (see
/// `run::exec`). The judge treats it as forbidden (`judge::assess`), like every other way of
/// calling agentsh that is not read-only.
pub const NEW_SESSION_MARKER: &str = "--agentsh-internal-new-session";

/// The first argument of agentsh re-spawned to keep the sandbox's namespaces for later commands
/// (see `run::kept`). Forbidden to the agent like [`NEW_SESSION_MARKER`].
pub const HOLD_MARKER: &str = "--agentsh-internal-hold-box";

/// The environment variable agentsh's gate sets for every unconfined command it runs: its value
/// is [`GATED_HOOK`] for exactly an agent's hook command (`judge::agent_wrappers::hook_call`) run
/// by a gate that was not itself inside a gated command, [`GATED_COMMAND`] for anything else. A
/// hook that finds it knows it was started through agentsh's shell route, not by the agent
/// alone (`ask::grant::started_by_agent`).
pub const GATED: &str = "AGENTSH_GATED";
/// [`GATED`]'s value for the hook command an agent runs through agentsh as its `bash`.
pub const GATED_HOOK: &str = "hook";
/// [`GATED`]'s value for every other command the gate runs.
pub const GATED_COMMAND: &str = "command";
