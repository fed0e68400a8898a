//! The audit trail: one JSON line per gate decision, written before anything runs, each line
//! carrying the SHA-256 of the line before it. This module owns the record format, the log's
//! path, appending (locked, one write), rotation, verification and reading. It decides nothing:
//! the gate tells it what happened, and it only writes that down.
//!
//! A line is `{...fields...,"prev":"<hash of the line before>","hash":"<sha256 of this line up
//! to and including prev, closed with }>"}`. Both hashes sit at the end of the line, so the
//! writer finds the previous hash by reading only the file's last 128 bytes.

use crate::judge::decide::{DecidedBy, Verdict};
use crate::model::{Category, Decision, Risk};
pub use crate::policy::audit_settings::{OnFailure, Settings};
use crate::policy::config::Config;
use crate::policy::dirs::state_dir;
use crate::text::sanitize::sanitize;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const LOG_FILE: &str = "audit.jsonl";
/// The `prev` of the very first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The current audit log file; rotated files sit beside it as `audit.jsonl.1` (newest) to `.N`.
pub fn log_path() -> Option<PathBuf> {
    state_dir().map(|d| d.join(LOG_FILE))
}

// ---------------------------------------------------------------------------------------------
// What happened, as the gate reports it

/// How a decision ended. Only `Allowed`, `ApprovedOnce` and `ApprovedAlways` run the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Allowed,
    Denied,
    ApprovedOnce,
    /// Approved, and this whitelist entry was chosen.
    ApprovedAlways(String),
    Rejected,
    TimedOut,
    /// No one could be asked; why.
    NoTerminal(String),
    /// A signal ended the prompt; its name.
    Interrupted(String),
    /// Rejected in `agentsh approvals`, with the person's message to the agent.
    RejectedWithMessage(String),
    /// Refused while the person had taken over (`agentsh pause --deny`).
    TakenOver,
    /// The approval code was mistyped at every try.
    WrongCode,
    /// `agentsh hook`: this decision was handed to the agent, which runs (or asks) itself.
    Hook(Decision),
    /// Run on a yes the person gave elsewhere (`ask::grant`): where, e.g. "Claude Code's
    /// permission dialog".
    Granted(String),
}

impl Outcome {
    pub fn runs(&self) -> bool {
        matches!(
            self,
            Outcome::Allowed
                | Outcome::ApprovedOnce
                | Outcome::ApprovedAlways(_)
                | Outcome::Hook(Decision::Allow)
                | Outcome::Granted(_)
        )
    }

    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Allowed => "allowed",
            Outcome::Denied => "denied",
            Outcome::ApprovedOnce | Outcome::Granted(_) => "approved_once",
            Outcome::ApprovedAlways(_) => "approved_always",
            Outcome::Rejected | Outcome::RejectedWithMessage(_) => "rejected",
            Outcome::TakenOver => "taken_over",
            Outcome::WrongCode => "wrong_code",
            Outcome::Hook(_) => "hook",
            Outcome::TimedOut => "timed_out",
            Outcome::NoTerminal(_) => "no_terminal",
            Outcome::Interrupted(_) => "interrupted",
        }
    }
}

/// What settled the whole command, for the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct By {
    /// rule, whitelist, blacklist, forbidden, person, timeout, no_terminal, interrupted.
    pub by: String,
    pub detail: String,
}

fn decided_by(verdict: &Verdict, outcome: &Outcome, prompt_timeout: u64) -> By {
    let by = |by: &str, detail: String| By { by: by.to_string(), detail };
    match outcome {
        Outcome::ApprovedOnce => by("person", "once".into()),
        Outcome::Granted(place) => by("person", format!("once, in {}", sanitize(place))),
        Outcome::ApprovedAlways(entry) => by("person", format!("always: {}", sanitize(entry))),
        Outcome::Rejected => by("person", "rejected".into()),
        Outcome::RejectedWithMessage(message) => by("person", format!("rejected: {}", sanitize(message))),
        Outcome::TakenOver => by("person", "taken over (agentsh pause --deny)".into()),
        Outcome::WrongCode => {
            by("wrong_code", "the approval code was not entered correctly at any of its tries".into())
        }
        Outcome::Hook(d) => by("hook", format!("told the agent: {d}")),
        Outcome::TimedOut => by("timeout", format!("no answer in {prompt_timeout}s")),
        Outcome::NoTerminal(why) => by("no_terminal", sanitize(why)),
        Outcome::Interrupted(signal) => by("interrupted", sanitize(signal)),
        Outcome::Denied => {
            let blocking: Vec<_> = verdict.blocking_parts().collect();
            if let Some(entry) = blocking.iter().find_map(|p| match &p.decided_by {
                DecidedBy::Blacklist(e) => Some(e),
                _ => None,
            }) {
                by("blacklist", sanitize(entry))
            } else if let Some(hit) = blocking.iter().find_map(|p| match &p.decided_by {
                DecidedBy::Rule(hit) => Some(hit),
                _ => None,
            }) {
                by("custom_rule", format!("{} ({})", sanitize(&hit.pattern), sanitize(&hit.at)))
            } else if let Some(hit) = blocking.iter().find_map(|p| match &p.decided_by {
                DecidedBy::Level(hit) => Some(hit),
                _ => None,
            }) {
                by("level", format!("{}: {} row", hit.level, hit.row))
            } else {
                by("forbidden", join_unique(blocking.iter().map(|p| p.assessment.rule.as_str())))
            }
        }
        Outcome::Allowed => {
            let entries = join_unique(verdict.parts.iter().filter_map(|p| match &p.decided_by {
                DecidedBy::Whitelist(e) => Some(e.as_str()),
                _ => None,
            }));
            if entries.is_empty() {
                by("rule", join_unique(verdict.parts.iter().map(|p| p.assessment.rule.as_str())))
            } else {
                by("whitelist", sanitize(&entries))
            }
        }
    }
}

fn join_unique<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for i in items {
        if !seen.contains(&i) {
            seen.push(i);
        }
    }
    seen.join(", ")
}

// ---------------------------------------------------------------------------------------------
// The records

#[derive(Serialize)]
struct DecisionLine<'a> {
    time: String,
    id: &'a str,
    event: &'static str,
    decision: Decision,
    outcome: &'static str,
    ran: bool,
    decided_by: By,
    risk: Risk,
    category: Category,
    reasons: Vec<String>,
    command: String,
    parts: PartLines<'a>,
    cwd: &'a str,
    config_files: &'a [String],
    parent: &'a Parent,
    tty: &'a str,
    user: &'a str,
    uid: u32,
    version: &'static str,
    /// How long the person took to answer (asked commands only).
    answer_ms: Option<u64>,
    /// The entry added to the whitelist by "allow always".
    whitelist_entry: Option<String>,
    /// The whitelist entries the prompt offered, longest first: the last one is the broadest
    /// entry that would stop this prompt (`agentsh stats` suggests it).
    offered_entries: Vec<String>,
    /// `agentsh hook`: the agent whose hook asked, and the tool it was about to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    sandbox: &'a BoxLine,
}

/// The box a command runs in, as the audit record names it (issue 15): filled by `run`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxLine {
    /// `sandbox` or `unconfined`.
    pub runs_in: String,
    /// Why it runs unconfined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abi: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The roots it may write.
    #[serde(default, skip_serializing_if = "Roots::is_empty")]
    pub writable: Roots,
    /// Code paths inside them kept read-only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
}

/// Paths as text, shared with the judge's view of the box (which holds these and more after
/// them): the record names the first `len`. Sharing them saves a boxed command a copy of each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    all: std::sync::Arc<[String]>,
    len: usize,
}

impl Roots {
    /// The first `len` of `all`.
    pub fn first(all: std::sync::Arc<[String]>, len: usize) -> Roots {
        let len = len.min(all.len());
        Roots { all, len }
    }

    pub fn as_slice(&self) -> &[String] {
        &self.all[..self.len]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl From<Vec<String>> for Roots {
    fn from(v: Vec<String>) -> Roots {
        let len = v.len();
        Roots { all: v.into(), len }
    }
}

impl Serialize for Roots {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.as_slice())
    }
}

impl<'de> Deserialize<'de> for Roots {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Roots, D::Error> {
        Vec::<String>::deserialize(d).map(Roots::from)
    }
}

#[derive(Serialize)]
struct PartLine<'a> {
    argv: Sanitized<'a>,
    risk: Risk,
    category: Category,
    decision: Decision,
    decided_by: &'a DecidedBy,
    rule: &'a str,
}

/// The parts of a verdict, each written as a [`PartLine`] while the record is serialized: a
/// 64 KiB script has thousands, and a copy of them all (sanitized) doubled the record's memory.
struct PartLines<'a>(&'a [crate::judge::decide::Part]);

impl Serialize for PartLines<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| PartLine {
            argv: Sanitized(&p.assessment.argv),
            risk: p.assessment.risk,
            category: p.assessment.category,
            decision: p.decision,
            decided_by: &p.decided_by,
            rule: &p.assessment.rule,
        }))
    }
}

/// Words, each sanitized as it is written.
struct Sanitized<'a>(&'a [String]);

impl Serialize for Sanitized<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|w| sanitize(w)))
    }
}

/// The second line of a supervised (or failed-to-start) run: how it ended.
#[derive(Serialize)]
struct ExitLine<'a> {
    time: String,
    id: &'a str,
    event: &'static str,
    exit_status: i32,
    duration_ms: u64,
    /// Stopped by `commandTimeoutSeconds`.
    timed_out: bool,
    /// Paths the command named that the sandbox hides or covers, when it failed: what the box
    /// most likely refused it (issue 29, item 5).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    box_refused: &'a [String],
}

#[derive(Clone, Debug, Serialize)]
struct Parent {
    pid: u32,
    name: String,
}

/// The facts about this run that every record shares, gathered once.
pub struct Trail {
    settings: Settings,
    prompt_timeout: u64,
    id: String,
    cwd: String,
    config_files: Vec<String>,
    parent: Parent,
    tty: String,
    user: String,
    uid: u32,
    /// One warning per run is enough when syslog cannot be reached.
    syslog_warned: std::cell::Cell<bool>,
    /// Set by [`Trail::for_hook`]: (agent, tool).
    hook: Option<(String, String)>,
    /// The box the command runs in.
    sandbox: BoxLine,
}

impl Trail {
    /// Gathers the context of a command run in `cwd` under `config`.
    pub fn new(config: &Config, cwd: &Path) -> Trail {
        let ppid = std::os::unix::process::parent_id();
        let parent_name = fs::read_to_string(format!("/proc/{ppid}/comm")).unwrap_or_default();
        let uid = nix::unistd::getuid();
        let user = crate::policy::dirs::passwd(uid.as_raw()).map_or_else(|| uid.to_string(), |p| p.name);
        let tty = nix::unistd::ttyname(std::io::stdin()).map(|p| p.display().to_string()).unwrap_or("none".into());
        Trail {
            settings: config.audit.clone(),
            prompt_timeout: config.confirmation_timeout,
            id: format!("{:x}-{}", crate::record::clock::now_ms(), std::process::id()),
            cwd: sanitize(&recorded_cwd(cwd)),
            config_files: config.files.iter().map(|f| sanitize(&f.display().to_string())).collect(),
            parent: Parent { pid: ppid, name: sanitize(parent_name.trim_end()) },
            tty: sanitize(&tty),
            user: sanitize(&user),
            uid: uid.as_raw(),
            syslog_warned: std::cell::Cell::new(false),
            hook: None,
            sandbox: BoxLine::default(),
        }
    }

    /// Records name the agent whose hook asked and its tool (`agentsh hook`).
    pub fn for_hook(mut self, agent: &str, tool: &str) -> Trail {
        self.hook = Some((sanitize(agent), sanitize(tool)));
        self
    }

    /// Names the box the command will run in, for every record of this run.
    pub fn set_sandbox(&mut self, line: BoxLine) {
        self.sandbox = line;
    }

    /// Records a decision. `Err(status)` means: do not run the command (the record could not
    /// be written and `auditFailure` is not "warn"); the message has been printed.
    #[must_use = "a command whose record was not written must not run"]
    pub fn record(
        &self,
        verdict: &Verdict,
        outcome: &Outcome,
        answer_time: Option<Duration>,
        offered: &[String],
    ) -> Result<(), i32> {
        let mut by = decided_by(verdict, outcome, self.prompt_timeout);
        if let (Outcome::Hook(d), Some((agent, tool))) = (outcome, &self.hook) {
            by.detail = format!("told {agent} ({tool}): {d}");
        }
        let line = DecisionLine {
            time: crate::record::clock::format_rfc3339(crate::record::clock::now_ms()),
            id: &self.id,
            event: "decision",
            decision: verdict.decision,
            outcome: outcome.name(),
            ran: outcome.runs(),
            decided_by: by.clone(),
            risk: verdict.risk,
            category: verdict.category,
            reasons: verdict.reasons.iter().map(|r| sanitize(r)).collect(),
            command: sanitize(&verdict.command),
            parts: PartLines(&verdict.parts),
            cwd: &self.cwd,
            config_files: &self.config_files,
            parent: &self.parent,
            tty: &self.tty,
            user: &self.user,
            uid: self.uid,
            version: env!("CARGO_PKG_VERSION"),
            answer_ms: answer_time.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            whitelist_entry: match outcome {
                Outcome::ApprovedAlways(e) => Some(sanitize(e)),
                _ => None,
            },
            offered_entries: offered.iter().map(|e| sanitize(e)).collect(),
            agent: self.hook.as_ref().map(|h| h.0.as_str()),
            tool: self.hook.as_ref().map(|h| h.1.as_str()),
            sandbox: &self.sandbox,
        };
        let payload = serde_json::to_string(&line).unwrap_or_default();
        if self.settings.syslog {
            let fields = [
                ("DECISION", verdict.decision.as_str().to_string()),
                ("OUTCOME", outcome.name().to_string()),
                ("RISK", verdict.risk.as_str().to_string()),
                ("BY", if by.detail.is_empty() { by.by.clone() } else { format!("{}: {}", by.by, by.detail) }),
                ("ID", self.id.clone()),
                ("COMMAND", line.command.clone()),
            ];
            self.syslog(!outcome.runs(), &fields);
        }
        match self.write(payload) {
            Ok(()) => Ok(()),
            Err(why) if !outcome.runs() => {
                eprintln!("agentsh: warning: {}", sanitize(&why));
                Ok(())
            }
            Err(why) if self.settings.on_failure == OnFailure::Warn => {
                eprintln!("agentsh: warning: {}; running it anyway (auditFailure: \"warn\")", sanitize(&why));
                Ok(())
            }
            Err(why) => {
                eprintln!("agentsh: refused: {}", sanitize(&why));
                eprintln!(
                    "hint: nothing ran. Every command is recorded before it runs; make the audit log writable, \
                     or set \"auditFailure\": \"warn\" in ~/.config/agentsh/config.json to run commands unrecorded"
                );
                Err(crate::model::exit::REFUSED)
            }
        }
    }

    /// Records how a run ended (a second line with the same id). Failure is only a warning:
    /// the command has already run.
    /// The record's id: the command's name to the box's proxy, and in `agentsh log`.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn finished(&self, exit_status: i32, duration: Duration, timed_out: bool) {
        self.finished_boxed(exit_status, duration, timed_out, &[]);
    }

    /// [`Trail::finished`], naming the paths the sandbox most likely refused the command.
    pub fn finished_boxed(&self, exit_status: i32, duration: Duration, timed_out: bool, box_refused: &[String]) {
        let box_refused: Vec<String> = box_refused.iter().map(|p| sanitize(p)).collect();
        let line = ExitLine {
            time: crate::record::clock::format_rfc3339(crate::record::clock::now_ms()),
            id: &self.id,
            event: "exit",
            exit_status,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            timed_out,
            box_refused: &box_refused,
        };
        if self.settings.syslog {
            let fields = [
                ("ID", self.id.clone()),
                ("EXIT", exit_status.to_string()),
                ("DURATION_MS", line.duration_ms.to_string()),
                ("TIMED_OUT", timed_out.to_string()),
            ];
            self.syslog(false, &fields);
        }
        if let Err(why) = self.write(serde_json::to_string(&line).unwrap_or_default()) {
            eprintln!("agentsh: warning: {}", sanitize(&why));
        }
    }

    fn write(&self, payload: String) -> Result<(), String> {
        let path = checked_log_path().map_err(|why| format!("cannot record the command in the audit log: {why}"))?;
        let appended = append(&path, payload, &self.settings)
            .map_err(|e| format!("cannot record the command in the audit log {}: {e}", path.display()))?;
        if let Some(e) = appended.seal_failed {
            eprintln!("agentsh: warning: {}", sanitize(&seal_warning(&path, &e)));
        }
        Ok(())
    }

    fn syslog(&self, refused: bool, fields: &[(&str, String)]) {
        let msg = crate::record::syslog::message(refused, std::process::id(), &self.user, &self.tty, &self.cwd, fields);
        if let Err(e) = crate::record::syslog::send(Path::new(crate::record::syslog::SOCKET), &msg)
            && !self.syslog_warned.replace(true)
        {
            eprintln!(
                "agentsh: warning: auditSyslog is on but syslog could not be reached at {}: {e}",
                crate::record::syslog::SOCKET
            );
        }
    }
}

/// A request whose waiting agentsh ended (killed) before anyone answered: written by whoever
/// finds it in the queue (`ask::queue::list`), once, so the trail shows the command was asked
/// about and never ran.
#[derive(Serialize)]
struct AbandonedLine<'a> {
    time: String,
    id: String,
    event: &'static str,
    decision: Decision,
    outcome: &'static str,
    ran: bool,
    decided_by: By,
    risk: &'a str,
    category: &'a str,
    reasons: Vec<String>,
    command: String,
    cwd: String,
    parent: Parent,
    request: &'a str,
    asked: String,
    user: String,
    uid: u32,
    version: &'static str,
}

/// What [`abandoned`] needs from the request.
pub struct AbandonedRequest<'a> {
    pub request_id: &'a str,
    pub command: &'a str,
    pub cwd: &'a str,
    pub risk: &'a str,
    pub category: &'a str,
    pub reasons: &'a [String],
    pub pid: u32,
    pub parent_pid: u32,
    pub parent_name: &'a str,
    /// When it was asked, seconds since the epoch.
    pub asked: u64,
}

/// Appends the "abandoned" record of a request whose waiter is gone.
/// One connection the box's network proxy made or refused (issue 26), tied to the command it
/// came from by that command's record id.
pub struct ConnectionLine<'a> {
    pub id: &'a str,
    pub host: &'a str,
    pub port: u16,
    /// `allowed`, `denied` or `failed`.
    pub decision: &'a str,
    pub why: &'a str,
    pub bytes_out: u64,
    pub bytes_in: u64,
    pub duration_ms: u64,
}

/// Records a connection (event `connection`, with the id of the command's decision).
pub fn connection(c: &ConnectionLine, settings: &Settings) -> Result<(), String> {
    #[derive(Serialize)]
    struct Line<'a> {
        time: String,
        id: &'a str,
        event: &'static str,
        host: String,
        port: u16,
        decision: &'a str,
        #[serde(skip_serializing_if = "str::is_empty")]
        why: String,
        bytes_out: u64,
        bytes_in: u64,
        duration_ms: u64,
    }
    let path = checked_log_path()?;
    let line = Line {
        time: crate::record::clock::format_rfc3339(crate::record::clock::now_ms()),
        id: c.id,
        event: "connection",
        host: sanitize(c.host),
        port: c.port,
        decision: c.decision,
        why: sanitize(c.why),
        bytes_out: c.bytes_out,
        bytes_in: c.bytes_in,
        duration_ms: c.duration_ms,
    };
    let payload = serde_json::to_string(&line).map_err(|e| e.to_string())?;
    append(&path, payload, settings).map(|_| ()).map_err(|e| format!("{}: {e}", path.display()))
}

/// The command text of the decision recorded with `id`, looked for in the log's last 256 KiB
/// (for the network proxy's question to the person, which names the command).
pub fn command_of(id: &str) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let path = checked_log_path().ok()?;
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(256 * 1024))).ok()?;
    let mut text = String::new();
    file.take(256 * 1024).read_to_string(&mut text).ok()?;
    let needle = format!("\"id\":\"{id}\"");
    text.lines().rev().filter(|l| l.contains(&needle) && l.contains("\"event\":\"decision\"")).find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        v["command"].as_str().map(str::to_string)
    })
}

pub fn abandoned(r: &AbandonedRequest) -> Result<(), String> {
    let path = checked_log_path()?;
    let uid = nix::unistd::getuid();
    let user = crate::policy::dirs::passwd(uid.as_raw()).map_or_else(|| uid.to_string(), |p| p.name);
    let asked = crate::record::clock::format_rfc3339(i64::try_from(r.asked).unwrap_or(0).saturating_mul(1000));
    let line = AbandonedLine {
        time: crate::record::clock::format_rfc3339(crate::record::clock::now_ms()),
        id: format!("{:x}-{}", r.asked.saturating_mul(1000), r.pid),
        event: "decision",
        decision: Decision::Ask,
        outcome: "abandoned",
        ran: false,
        decided_by: By {
            by: "abandoned".into(),
            detail: format!("the waiting agentsh (pid {}) ended before an answer; nothing ran", r.pid),
        },
        risk: r.risk,
        category: r.category,
        reasons: r.reasons.iter().map(|x| sanitize(x)).collect(),
        command: sanitize(r.command),
        cwd: sanitize(r.cwd),
        parent: Parent { pid: r.parent_pid, name: sanitize(r.parent_name) },
        request: r.request_id,
        asked,
        user: sanitize(&user),
        uid: uid.as_raw(),
        version: env!("CARGO_PKG_VERSION"),
    };
    let payload = serde_json::to_string(&line).map_err(|e| e.to_string())?;
    let appended = append(&path, payload, &Settings::default()).map_err(|e| format!("{}: {e}", path.display()))?;
    match appended.seal_failed {
        Some(e) => Err(seal_warning(&path, &e)),
        None => Ok(()),
    }
}

/// The log's path, once its state directory is known to be the user's own
/// (`policy::dirs::state`): with `HOME` or `XDG_STATE_HOME` in a shared place, a directory
/// another user made first would get the log written into it (issue 27).
fn checked_log_path() -> Result<PathBuf, String> {
    crate::policy::dirs::state().map(|dir| dir.join(LOG_FILE))
}

fn seal_warning(log: &Path, e: &io::Error) -> String {
    format!(
        "the record is written, but the audit log's seal {} could not be updated: {e}; `agentsh log --verify` will \
         say so",
        super::seal::path_for(log).display()
    )
}

/// The working directory as the record names it. The gate works in "." when the directory it
/// was started in has been deleted (`getcwd` fails); the record names the path the process had,
/// as the kernel keeps it (`/proc/self/cwd`: "/path (deleted)").
fn recorded_cwd(cwd: &Path) -> String {
    if cwd.is_absolute() {
        return cwd.display().to_string();
    }
    match fs::read_link("/proc/self/cwd") {
        Ok(link) => link.display().to_string(),
        Err(_) => cwd.display().to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Appending

/// `line` (a JSON object) closed with `prev` and then its own hash, in place: a long
/// script's record is a megabyte, and copies of it were most of a `-c` run's peak memory.
fn chain(line: &mut String, prev: &str) -> String {
    if line.ends_with('}') {
        line.pop();
    }
    line.push_str(",\"prev\":\"");
    line.push_str(prev);
    line.push_str("\"}");
    let hash = sha256_hex(line.as_bytes());
    line.pop();
    line.push_str(",\"hash\":\"");
    line.push_str(&hash);
    line.push_str("\"}\n");
    hash
}

fn sha256_hex(bytes: &[u8]) -> String {
    crate::text::sha256::hex(&[bytes])
}

/// Splits a stored line (without its newline) into (hashed body, prev, hash).
fn split_line(line: &str) -> Option<(String, &str, &str)> {
    const HASH_TAIL: usize = ",\"hash\":\"".len() + 64 + "\"}".len();
    const PREV_TAIL: usize = ",\"prev\":\"".len() + 64 + "\"".len();
    let cut = line.len().checked_sub(HASH_TAIL)?;
    let (rest, tail) = (line.get(..cut)?, line.get(cut..)?);
    let hash = tail.strip_prefix(",\"hash\":\"")?.strip_suffix("\"}")?;
    let prev_at = rest.len().checked_sub(PREV_TAIL)?;
    let prev = rest.get(prev_at..)?.strip_prefix(",\"prev\":\"")?.strip_suffix('"')?;
    let hex = |h: &str| h.len() == 64 && h.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
    (hex(hash) && hex(prev) && rest.starts_with('{')).then(|| (format!("{rest}}}"), prev, hash))
}

/// Appends one record. Protocol: open (append, create, 0600), take an exclusive lock, make
/// sure the file is still the one at `path` (a rotation may have replaced it while we waited),
/// read its last 128 bytes for the previous hash, rotate if the line would pass the size
/// limit, then write the whole line with one `write()`. Concurrent writers therefore never
/// interleave, and each line names the one before it.
///
/// No fsync: the line is in the page cache before the command runs, so it survives the
/// command or agentsh being killed; only a kernel crash or power loss in the next seconds
/// could lose it, and an fsync per command would cost milliseconds on every command. A trail
/// that must survive the machine belongs in syslog (`auditSyslog`), shipped off the machine.
pub fn append(path: &Path, payload: String, limits: &Settings) -> io::Result<Appended> {
    // Chained in place on each try; `base` is where the payload ends.
    let mut line = payload;
    let base = line.len();
    // Never through a link, never blocking (a FIFO in its place): see `owned_log`.
    let open = || {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| crate::policy::files::explain(path, crate::policy::files::Links::Refuse, e))
    };
    for _ in 0..16 {
        // The directory is made only when missing: two system calls saved on every command.
        let file = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                }
                open()?
            }
            opened => opened?,
        };
        file.lock()?;
        let meta = owned_log(&file)?;
        match fs::metadata(path) {
            Ok(now) if now.ino() == meta.ino() && now.dev() == meta.dev() => {}
            _ => continue,
        }
        if meta.mode() & 0o077 != 0 {
            // Someone widened it; the log names commands and paths, so it stays private.
            let _ = file.set_permissions(fs::Permissions::from_mode(0o600));
        }
        let size = meta.len();
        let (prev, needs_newline) = last_hash(&file, size)?;
        line.truncate(base);
        let hash = chain(&mut line, &prev);
        if size > 0 && size + line.len() as u64 > limits.max_bytes {
            return rotate(path, limits.keep, line.as_bytes(), &prev, &hash);
        }
        if needs_newline {
            line.insert(0, '\n');
        }
        write_once(&file, size, line.as_bytes())?;
        let sealed = super::seal::advance(path, &prev, &hash, false, || oldest_prev(path));
        return Ok(Appended { seal_failed: sealed.err() });
        // The lock is released when `file` is closed.
    }
    Err(io::Error::other("the audit log kept being replaced while waiting for its lock"))
}

/// A record was written; `seal_failed` says why its seal could not be moved on, if it could not
/// (the record stands: `agentsh log --verify` reports the stale seal).
#[derive(Debug)]
pub struct Appended {
    pub seal_failed: Option<io::Error>,
}

/// The open log's metadata, when it is a regular file of this user's. Its directory is the
/// user's own (`policy::dirs::state`), so this holds unless the user put something else there.
fn owned_log(file: &File) -> io::Result<fs::Metadata> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!("it is {}, not a regular file", crate::policy::files::kind(&meta))));
    }
    crate::policy::files::owned_by_me(&meta).map_err(|e| io::Error::new(e.kind(), format!("it {e}")))?;
    Ok(meta)
}

/// The `prev` of the oldest record the log keeps (the first line of its oldest file), or the
/// genesis hash when it has none: the seal's head.
fn oldest_prev(path: &Path) -> String {
    let files = files(path).unwrap_or_default();
    files.iter().find_map(|f| first_prev(f)).unwrap_or_else(|| GENESIS.to_string())
}

/// The `prev` of a file's first line. A line can be a megabyte (a long script); one over
/// 16 MiB is not a record.
fn first_prev(file: &Path) -> Option<String> {
    use std::io::BufRead;
    let f = crate::policy::files::open(file, crate::policy::files::Links::Refuse).ok()?;
    let mut line = Vec::new();
    io::BufReader::new(io::Read::take(f.file, 16 << 20)).read_until(b'\n', &mut line).ok()?;
    let text = String::from_utf8_lossy(&line);
    split_line(text.trim_end_matches('\n')).map(|(_, prev, _)| prev.to_string())
}

/// The hash at the end of the file, and whether the file lacks a final newline.
fn last_hash(file: &File, size: u64) -> io::Result<(String, bool)> {
    if size == 0 {
        return Ok((GENESIS.to_string(), false));
    }
    let n = size.min(128);
    let mut buf = vec![0; n as usize];
    file.read_exact_at(&mut buf, size - n)?;
    let needs_newline = buf.last() != Some(&b'\n');
    let text = String::from_utf8_lossy(&buf);
    let text = text.trim_end_matches('\n');
    // A damaged last line (only an edit can make one) gets the genesis hash as its successor's
    // prev; `agentsh log --verify` reports the damage itself.
    let hash = text
        .strip_suffix("\"}")
        .and_then(|t| t.get(t.len().checked_sub(64)?..))
        .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
        .unwrap_or(GENESIS);
    Ok((hash.to_string(), needs_newline))
}

/// One `write()`; a short write is undone, so no partial line stays in the file.
fn write_once(file: &File, size: u64, bytes: &[u8]) -> io::Result<()> {
    let mut f = file;
    match f.write(bytes) {
        Ok(n) if n == bytes.len() => Ok(()),
        Ok(n) => {
            // The rest, only to learn why it did not fit (a full disk, a quota).
            let why = match f.write(&bytes[n..]) {
                Err(e) => format!(": {e}"),
                Ok(_) => String::new(),
            };
            let _ = file.set_len(size);
            Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("only {n} of {} bytes could be written{why}", bytes.len()),
            ))
        }
        Err(e) => {
            let _ = file.set_len(size);
            Err(e)
        }
    }
}

/// `audit.jsonl.N`.
fn rotated(path: &Path, n: u64) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Called with the current file locked: the new file starts with `line` (which already chains
/// to the old file's last hash), the old file becomes `.1`, older ones shift, the oldest goes.
/// The new file is complete before it appears at `path`; a hard link keeps `path` present
/// throughout. The seal takes the new head and last record before the new file appears, so a
/// writer that finds the new file also finds its seal.
fn rotate(path: &Path, keep: u64, line: &[u8], prev: &str, hash: &str) -> io::Result<Appended> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".rotating");
    let tmp = PathBuf::from(tmp);
    let new = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    write_once(&new, 0, line)?;
    drop(new);
    let keep = keep.max(1);
    for n in (1..keep).rev() {
        match fs::rename(rotated(path, n), rotated(path, n + 1)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    match fs::remove_file(rotated(path, 1)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    if fs::hard_link(path, rotated(path, 1)).is_err() {
        fs::rename(path, rotated(path, 1))?;
    }
    let sealed = super::seal::advance(path, prev, hash, true, || oldest_prev(path));
    fs::rename(&tmp, path)?;
    Ok(Appended { seal_failed: sealed.err() })
}

// ---------------------------------------------------------------------------------------------
// Reading and verifying

/// The log's files, oldest first: `audit.jsonl.N` ... `audit.jsonl.1`, `audit.jsonl`. A
/// directory that cannot be read is an error (another user's log says "permission denied",
/// not "no records"); one that does not exist has no files.
pub fn files(path: &Path) -> io::Result<Vec<PathBuf>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Ok(Vec::new());
    };
    let in_dir = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(in_dir(e)),
    };
    let mut numbered: Vec<(u64, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(in_dir)?;
        let file_name = entry.file_name();
        let n = file_name.to_str().and_then(|f| f.strip_prefix(name)?.strip_prefix('.')?.parse().ok());
        if let Some(n) = n {
            numbered.push((n, entry.path()));
        }
    }
    numbered.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let mut out: Vec<PathBuf> = numbered.into_iter().map(|(_, p)| p).collect();
    match fs::symlink_metadata(path) {
        Ok(_) => out.push(path.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
    Ok(out)
}

/// The text of one of the log's files: a regular file, never through a link or blocking on a
/// FIFO (`policy::files`). `None` when it has gone (rotated away meanwhile).
fn read_log_file(file: &Path) -> io::Result<Option<Vec<u8>>> {
    let in_file = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", file.display()));
    match crate::policy::files::open(file, crate::policy::files::Links::Refuse) {
        Ok(opened) => opened.read_prefix(u64::MAX).map(Some).map_err(in_file),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(in_file(e)),
    }
}

/// A decision line as read back. Every field is optional so that older or damaged lines still
/// show; the stored line is kept verbatim for `--json`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Seen {
    pub time: String,
    pub id: String,
    pub event: String,
    pub decision: String,
    pub outcome: String,
    pub ran: bool,
    pub decided_by: By,
    pub risk: String,
    pub category: String,
    pub reasons: Vec<String>,
    pub command: String,
    pub cwd: String,
    pub answer_ms: Option<u64>,
    pub whitelist_entry: Option<String>,
    pub offered_entries: Vec<String>,
    pub exit_status: Option<i32>,
    pub duration_ms: Option<u64>,
    pub timed_out: bool,
    /// Paths the sandbox most likely refused the command (an exit line's `box_refused`).
    pub box_refused: Vec<String>,
    /// A connection line's host, port, decision and bytes.
    pub host: String,
    pub port: u16,
    pub bytes_out: u64,
    pub bytes_in: u64,
    /// A connection line's reason for a refusal.
    pub why: String,
    #[serde(skip)]
    pub raw: String,
}

/// A decision with the exit line of the same run, if there is one.
#[derive(Clone, Debug, Default)]
pub struct Entry {
    pub decision: Seen,
    pub exit: Option<Seen>,
    /// The connections the box's network proxy made or refused for it.
    pub connections: Vec<Seen>,
    /// Milliseconds since the epoch, from `time`.
    pub at: i64,
}

/// Reads every file of the log into decisions joined with their exit lines, oldest first.
/// Returns the entries and the number of lines that could not be read.
pub fn read(path: &Path) -> io::Result<(Vec<Entry>, usize)> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut unreadable = 0;
    for file in files(path)? {
        let Some(bytes) = read_log_file(&file)? else { continue };
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(mut seen) = serde_json::from_str::<Seen>(line) else {
                unreadable += 1;
                continue;
            };
            seen.raw = line.to_string();
            match seen.event.as_str() {
                "exit" => match index.get(&seen.id) {
                    Some(&i) => entries[i].exit = Some(seen),
                    None => unreadable += 1,
                },
                // A connection no command named (a SOCKS client with no user name) has no
                // decision to hang from: it stays in the file, and in `--verify`.
                "connection" => {
                    if let Some(&i) = index.get(&seen.id) {
                        entries[i].connections.push(seen);
                    }
                }
                _ => {
                    let at = crate::record::clock::parse_rfc3339(&seen.time).unwrap_or(0);
                    index.insert(seen.id.clone(), entries.len());
                    entries.push(Entry { decision: seen, exit: None, connections: Vec::new(), at });
                }
            }
        }
    }
    Ok((entries, unreadable))
}

/// The result of `agentsh log --verify`.
#[derive(Debug, PartialEq, Eq)]
pub enum Verified {
    /// Every line's hash matches, each names the one before, and the log runs from the record
    /// its seal names first to the one it names last. `rotated_away` is true when the oldest
    /// kept line follows lines that rotation has deleted.
    Intact { lines: usize, files: usize, rotated_away: bool },
    /// A line was edited, removed, inserted or reordered.
    Broken { file: PathBuf, line: usize, why: String },
    /// Every line is intact, but the log is not all there, as its seal shows: its start or end
    /// was cut, it was emptied or deleted, or it has no seal to tell.
    Incomplete { why: String },
}

/// Checks every line of every file, oldest first, and stops at the first broken link; then that
/// the log starts and ends where its seal says (`record::seal`). Writers are held off meanwhile
/// (a shared lock on the current file), so a record written during the check is not mistaken
/// for a cut.
pub fn verify(path: &Path) -> io::Result<Verified> {
    let _held = lock_current(path, false)?;
    let files = files(path)?;
    let seal = super::seal::read(path)
        .map_err(|e| io::Error::new(e.kind(), format!("the seal {}: {e}", super::seal::path_for(path).display())))?;
    let sealed_last = seal.as_ref().map(|s| s.last.as_str());
    let mut expected: Option<String> = None;
    let mut first_prev: Option<String> = None;
    // Where the sealed last record is, when it is in the log.
    let mut sealed_at: Option<usize> = None;
    let mut lines = 0;
    for file in &files {
        let Some(bytes) = read_log_file(file)? else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let broken = |n: usize, why: String| Ok(Verified::Broken { file: file.clone(), line: n, why });
        if !text.is_empty() && !text.ends_with('\n') {
            let n = text.lines().count();
            return broken(n, "the last line is incomplete (a write was cut off, or the file was edited)".into());
        }
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let Some((body, prev, hash)) = split_line(line) else {
                return broken(n, "not an audit record: the line was edited or inserted by hand".into());
            };
            if sha256_hex(body.as_bytes()) != hash {
                return broken(n, "the line was changed after it was written (its hash does not match)".into());
            }
            match &expected {
                Some(want) if want != prev => {
                    let why = if n == 1 {
                        "it does not follow the last line of the previous file: lines were removed or files swapped"
                    } else {
                        "it does not follow the line before it: a line was removed, inserted or reordered here"
                    };
                    return broken(n, why.into());
                }
                None => {
                    if let Some(s) = seal.as_ref().filter(|s| s.cut == super::seal::Cut::None && s.head != prev) {
                        return Ok(Verified::Incomplete {
                            why: format!(
                                "records were cut from the start of the log: its first record ({}:{n}) follows {}, \
                                 but the seal says the oldest record kept follows {}",
                                file.display(),
                                short(prev),
                                short(&s.head)
                            ),
                        });
                    }
                    first_prev = Some(prev.to_string());
                }
                _ => {}
            }
            expected = Some(hash.to_string());
            lines += 1;
            if sealed_last == Some(hash) {
                sealed_at = Some(lines);
            }
        }
    }
    let files_n = files.len();
    let Some(seal) = seal else {
        if lines == 0 {
            return Ok(Verified::Intact { lines, files: files_n, rotated_away: false });
        }
        return Ok(Verified::Incomplete {
            why: format!(
                "the log has no seal ({}), so whether records were cut from its end cannot be checked (a log written \
                 by an agentsh before the seal, or the seal was deleted)",
                super::seal::path_for(path).display()
            ),
        });
    };
    let incomplete = |why: String| Ok(Verified::Incomplete { why });
    if seal.cut == super::seal::Cut::Damaged {
        return incomplete(format!(
            "the seal {} was found damaged when a record was written: where the log should start and end is unknown",
            super::seal::path_for(path).display()
        ));
    }
    if lines == 0 && seal.last != GENESIS {
        let what = if files.is_empty() { "is gone: it was deleted" } else { "is empty: it was emptied" };
        return incomplete(format!(
            "the audit log {what}, but its seal says it held records up to {}",
            short(&seal.last)
        ));
    }
    if let super::seal::Cut::After(cut) = &seal.cut {
        return incomplete(format!(
            "records were cut from the end of the log, or it was cleared, while agentsh was not writing: the \
             record written next did not follow the last sealed record ({})",
            short(cut)
        ));
    }
    let last = expected.as_deref().unwrap_or(GENESIS);
    if last != seal.last {
        return incomplete(match sealed_at {
            Some(at) => format!(
                "the last {} not covered by the seal: added by something other than agentsh, or while the seal \
                 could not be updated",
                crate::text::count(lines - at, "record is", "records are")
            ),
            None => format!(
                "records were cut from the end of the log: it ends with record {}, but its seal says the last \
                 record is {}",
                short(last),
                short(&seal.last)
            ),
        });
    }
    let rotated_away = first_prev.is_some_and(|p| p != GENESIS);
    Ok(Verified::Intact { lines, files: files_n, rotated_away })
}

/// A hash as messages show it: its first 12 digits.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Takes the current log file's lock (`exclusive`, or shared) and returns it held: the file
/// is the one at `path` once locked (rotation replaces it). `None` when there is no log file.
fn lock_current(path: &Path, exclusive: bool) -> io::Result<Option<File>> {
    for _ in 0..16 {
        let file = match crate::policy::files::open(path, crate::policy::files::Links::Refuse) {
            Ok(opened) => opened.file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        };
        if exclusive {
            file.lock()?
        } else {
            file.lock_shared()?
        }
        let (held, now) = (file.metadata()?, fs::metadata(path));
        if now.is_ok_and(|m| m.ino() == held.ino() && m.dev() == held.dev()) {
            return Ok(Some(file));
        }
    }
    Err(io::Error::other("the audit log kept being replaced while waiting for its lock"))
}

/// Seals the log as it is now: its oldest record and its last are taken as its start and end,
/// and any cut the seal noted is forgotten. For a person who rotated, trimmed or cleared the log
/// on purpose (`agentsh log --reseal`, which asks them first). Returns the new seal.
pub fn reseal(path: &Path) -> io::Result<super::seal::Seal> {
    let held = lock_current(path, true)?;
    let last = match &held {
        Some(file) => last_hash(file, file.metadata()?.len())?.0,
        None => GENESIS.to_string(),
    };
    let seal = super::seal::Seal { head: oldest_prev(path), last, cut: super::seal::Cut::None };
    super::seal::write(path, &seal)?;
    Ok(seal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_line_names_only_the_first_roots_it_shares() {
        let all: std::sync::Arc<[String]> = vec!["/w".to_string(), "/tmp".into(), "/dev/null".into()].into();
        let line = BoxLine { runs_in: "sandbox".into(), writable: Roots::first(all.clone(), 2), ..BoxLine::default() };
        let json = serde_json::to_value(&line).unwrap();
        assert_eq!(json["writable"], serde_json::json!(["/w", "/tmp"]));
        let back: BoxLine = serde_json::from_value(json).unwrap();
        assert_eq!(back.writable.as_slice(), &all[..2]);
        // Nothing to name: left out of the record.
        let none = BoxLine { writable: Roots::first(all, 0), ..BoxLine::default() };
        assert!(serde_json::to_value(&none).unwrap().get("writable").is_none());
    }
    use crate::policy::audit_settings::{FileSettings, MIN_MAX_BYTES, validate_key};
    use serde_json::Value;

    fn small(max_bytes: u64, keep: u64) -> Settings {
        Settings { max_bytes, keep, ..Settings::default() }
    }

    #[test]
    fn lines_chain_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/audit.jsonl");
        for i in 0..5 {
            append(&path, format!("{{\"n\":{i}}}"), &Settings::default()).unwrap();
        }
        assert_eq!(verify(&path).unwrap(), Verified::Intact { lines: 5, files: 1, rotated_away: false });
        let text = fs::read_to_string(&path).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["prev"], GENESIS);
        let second: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(second["prev"], first["hash"]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn verify_finds_the_first_broken_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        for i in 0..4 {
            append(&path, format!("{{\"command\":\"cmd {i}\"}}"), &Settings::default()).unwrap();
        }
        let good = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = good.lines().collect();
        let broken_at = |text: String| {
            fs::write(&path, text).unwrap();
            match verify(&path).unwrap() {
                Verified::Broken { line, why, .. } => (line, why),
                v => panic!("not detected: {v:?}"),
            }
        };
        // An edited command.
        let (n, why) = broken_at(good.replace("cmd 2", "cmd X"));
        assert_eq!(n, 3);
        assert!(why.contains("changed"), "{why}");
        // A removed line.
        let (n, why) = broken_at(format!("{}\n{}\n{}\n", lines[0], lines[2], lines[3]));
        assert_eq!(n, 2);
        assert!(why.contains("does not follow"), "{why}");
        // Reordered lines.
        assert_eq!(broken_at(format!("{}\n{}\n{}\n{}\n", lines[0], lines[2], lines[1], lines[3])).0, 2);
        // A hand-written line, and a cut-off one.
        assert_eq!(broken_at(format!("{}\n{{\"command\":\"x\"}}\n", lines[0])).0, 2);
        assert_eq!(broken_at(good[..good.len() - 10].to_string()).0, 4);
        // Intact again: the check is not stuck on.
        fs::write(&path, &good).unwrap();
        assert!(matches!(verify(&path).unwrap(), Verified::Intact { lines: 4, .. }));
    }

    #[test]
    fn a_reseal_takes_the_log_as_it_is_now() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        for i in 0..5 {
            append(&path, format!("{{\"n\":{i}}}"), &Settings::default()).unwrap();
        }
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Trimmed at both ends on purpose.
        fs::write(&path, format!("{}\n{}\n", lines[1], lines[2])).unwrap();
        assert!(matches!(verify(&path).unwrap(), Verified::Incomplete { .. }));
        let seal = reseal(&path).unwrap();
        assert_eq!(seal.last, split_line(lines[2]).unwrap().2);
        assert_eq!(verify(&path).unwrap(), Verified::Intact { lines: 2, files: 1, rotated_away: true });
        // The chain goes on from there.
        append(&path, "{\"n\":5}".to_string(), &Settings::default()).unwrap();
        assert!(matches!(verify(&path).unwrap(), Verified::Intact { lines: 3, .. }));
        // Cleared on purpose: nothing to verify, and a new chain after it.
        fs::remove_file(&path).unwrap();
        assert!(matches!(verify(&path).unwrap(), Verified::Incomplete { .. }));
        reseal(&path).unwrap();
        assert_eq!(verify(&path).unwrap(), Verified::Intact { lines: 0, files: 0, rotated_away: false });
        append(&path, "{\"n\":0}".to_string(), &Settings::default()).unwrap();
        assert_eq!(verify(&path).unwrap(), Verified::Intact { lines: 1, files: 1, rotated_away: false });
    }

    #[test]
    fn rotation_keeps_n_files_and_the_chain_continues() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let payload = format!("{{\"pad\":\"{}\"}}", "x".repeat(300));
        for _ in 0..40 {
            append(&path, payload.clone(), &small(2000, 3)).unwrap();
        }
        let files = files(&path).unwrap();
        assert_eq!(files.len(), 4, "{files:?}"); // audit.jsonl.3 .2 .1 and audit.jsonl
        assert!(files[0].ends_with("audit.jsonl.3"));
        for f in &files {
            assert!(fs::metadata(f).unwrap().len() <= 2000, "{}", f.display());
        }
        match verify(&path).unwrap() {
            Verified::Intact { files: 4, rotated_away: true, lines } => assert!(lines < 40 && lines > 8),
            v => panic!("{v:?}"),
        }
        // Swapping two rotated files breaks the chain at a file boundary.
        fs::rename(&files[1], dir.path().join("t")).unwrap();
        fs::rename(&files[2], &files[1]).unwrap();
        fs::rename(dir.path().join("t"), &files[2]).unwrap();
        assert!(matches!(verify(&path).unwrap(), Verified::Broken { line: 1, .. }));
    }

    #[test]
    fn threads_never_interleave_or_fork_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::thread::scope(|s| {
            for t in 0..8 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..50 {
                        let payload = format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}", "y".repeat(i * 40));
                        append(path, payload.clone(), &small(MIN_MAX_BYTES, 50)).unwrap();
                    }
                });
            }
        });
        assert!(matches!(verify(&path).unwrap(), Verified::Intact { lines: 400, rotated_away: false, .. }));
    }

    #[test]
    fn a_missing_final_newline_does_not_swallow_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        fs::write(&path, "{\"partial\":").unwrap();
        append(&path, "{\"n\":1}".to_string(), &Settings::default()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"partial\":\n{\"n\":1,"), "{text}");
        assert!(matches!(verify(&path).unwrap(), Verified::Broken { line: 1, .. }));
    }

    #[test]
    fn project_files_cannot_weaken_the_trail() {
        let mut warnings = Vec::new();
        let mut s = Settings::default();
        let weak = FileSettings {
            on_failure: Some(OnFailure::Warn),
            syslog: Some(false),
            max_bytes: Some(MIN_MAX_BYTES),
            keep: Some(1),
        };
        s.apply(&weak, false, "p.json", &mut warnings);
        assert_eq!(s, Settings::default());
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        s.apply(&FileSettings { syslog: Some(true), ..FileSettings::default() }, false, "p.json", &mut warnings);
        assert!(s.syslog);
        s.apply(&weak, true, "u.json", &mut warnings);
        assert_eq!((s.on_failure, s.syslog, s.max_bytes, s.keep), (OnFailure::Warn, true, MIN_MAX_BYTES, 1));
        // A project's "refuse" tightens a user's "warn".
        s.apply(
            &FileSettings { on_failure: Some(OnFailure::Refuse), ..FileSettings::default() },
            false,
            "p",
            &mut warnings,
        );
        assert_eq!(s.on_failure, OnFailure::Refuse);
    }

    #[test]
    fn keys_are_validated() {
        let mut s = FileSettings::default();
        let mut w = Vec::new();
        validate_key("auditFailure", &Value::from("warn"), "f:1:1", &mut s, &mut w);
        validate_key("auditSyslog", &Value::from(true), "f:1:1", &mut s, &mut w);
        validate_key("auditKeep", &Value::from(3), "f:1:1", &mut s, &mut w);
        validate_key("auditMaxBytes", &Value::from(1_000_000), "f:1:1", &mut s, &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            s,
            FileSettings {
                on_failure: Some(OnFailure::Warn),
                syslog: Some(true),
                max_bytes: Some(1_000_000),
                keep: Some(3)
            }
        );
        validate_key("auditFailure", &Value::from("ignore"), "f:2:3", &mut s, &mut w);
        assert_eq!(s.on_failure, Some(OnFailure::Refuse));
        validate_key("auditKeep", &Value::from(0), "f:1:1", &mut s, &mut w);
        validate_key("auditMaxBytes", &Value::from(10), "f:1:1", &mut s, &mut w);
        validate_key("auditSyslog", &Value::from("yes"), "f:1:1", &mut s, &mut w);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].starts_with("f:2:3: auditFailure"), "{w:?}");
    }
}
