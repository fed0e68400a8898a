//! Grants: a person's yes given outside agentsh's own prompt (an agent's permission dialog), or
//! given to `agentsh hook` in agentsh's channel, handed to the agentsh that then runs the command
//! so the person is not asked twice (issue 24). It owns the grant files and their matching; it
//! must not judge, ask, or decide anything beyond "does this grant cover this command here".
//!
//! A grant is a file `ID.json` (0600) in `grants/` of agentsh's state directory: the hook writes
//! it (the agent runs the hook outside any box), and no boxed command can read or write that
//! directory. It covers one run of exactly one command text, in one working directory, for one
//! agent process, and only within its lifetime:
//! - **the agent** is the hook's nearest ancestor that is neither a shell nor agentsh (Claude
//!   Code's `claude`, Codex's `codex`, Gemini CLI's `node`), named by process ID and start time;
//!   the agentsh that takes the grant must descend from that very process;
//! - **taken once**: it is renamed away before it counts, so two takers cannot both have it;
//! - **armed**: a grant for an agent's dialog is written before the dialog shows and counts only
//!   once the agent announces the dialog to its hooks (Claude Code's `PermissionRequest`, Gemini
//!   CLI's `ToolPermission` notification), for that same command. A call the agent lets through
//!   without showing a dialog (a mode that approves by itself) never arms it, and agentsh asks in
//!   its own channel instead. A grant for a yes given in agentsh's channel is armed when written.
//! - **the agent's own hook**: a grant for the agent's dialog is offered and armed only by a hook
//!   the agent itself started ([`started_by_agent`]), never by one a command started through
//!   agentsh's gate, whose events would be the model's (rt8 C1).
//!
//! After a No in the dialog the armed grant stays until it expires; the agent never runs that
//! command then, and a later identical call goes through the hook again, which asks again and
//! replaces it. What a grant cannot stop is the same as for the approval queue (SECURITY.md): the
//! agent's own file tools, which never pass through agentsh, can write this directory.

use crate::ask::queue::{open_owned, write_temp};
use crate::ask::terminal_owner::ProcStat;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// How long a grant waits for its dialog to show (the person may read for a while).
pub const UNARMED_MS: i64 = 60 * 60 * 1000;
/// How long an armed grant counts: the agent runs an approved command at once.
pub const ARMED_MS: i64 = 10 * 60 * 1000;
/// How deep the ancestry of a taker is searched for the agent.
const MAX_DEPTH: usize = 24;

/// A process, by ID and start time (an ID alone may be reused by a later process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub pid: u32,
    pub start: u64,
}

/// One grant, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The command text, exactly as the agentsh that runs it judges it.
    pub command: String,
    /// The working directory, canonical.
    pub cwd: String,
    pub agent: Process,
    /// Where the person said yes, for the record: "Claude Code's permission dialog".
    pub place: String,
    pub armed: bool,
    /// Milliseconds since the Unix epoch.
    pub expires_ms: i64,
}

impl Grant {
    /// Whether this grant covers running `command` in `cwd` for a process descending from
    /// `ancestry` (nearest first), at `now_ms`. Pure, so the rules are tested as a table.
    pub fn covers(&self, command: &str, cwd: &str, ancestry: &[Process], now_ms: i64) -> bool {
        self.armed
            && now_ms < self.expires_ms
            && self.command == command
            && self.cwd == cwd
            && ancestry.contains(&self.agent)
    }

    fn same_request(&self, command: &str, cwd: &str, agent: Process) -> bool {
        self.command == command && self.cwd == cwd && self.agent == agent
    }
}

/// Where grants are kept: `grants/` in agentsh's state directory, both checked private
/// (`policy::dirs::private_dir`, as the queue and the records of kept namespaces are).
pub fn dir() -> Result<PathBuf, String> {
    let path = crate::policy::dirs::state()?.join("grants");
    crate::policy::dirs::private_dir(&path)?;
    Ok(path)
}

/// The canonical form of a working directory, as grants store it.
pub fn canonical(cwd: &Path) -> String {
    cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()).display().to_string()
}

/// This process's ancestors, nearest first (itself excluded), as far as /proc shows them.
pub fn ancestry() -> Vec<(Process, String)> {
    let mut out = Vec::new();
    let mut pid = std::process::id();
    for _ in 0..MAX_DEPTH {
        let Some(stat) = stat(pid) else { break };
        if stat.ppid <= 1 {
            break;
        }
        pid = stat.ppid;
        let Some(parent) = self::stat(pid) else { break };
        let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string();
        out.push((Process { pid, start: parent.start }, comm));
    }
    out
}

fn stat(pid: u32) -> Option<ProcStat> {
    ProcStat::parse(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The agent that runs this hook: the nearest ancestor that is not a shell (the agents start
/// hooks with `sh -c` or `bash -c`) and not agentsh itself (agentsh as the agent's `bash` runs
/// the hook command). `is_agentsh` says whether a process is this agentsh.
pub fn agent(ancestors: &[(Process, String)], is_agentsh: &dyn Fn(u32) -> bool) -> Option<Process> {
    const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"];
    ancestors.iter().find(|(p, comm)| !SHELLS.contains(&comm.as_str()) && !is_agentsh(p.pid)).map(|(p, _)| *p)
}

/// Whether the hook that wants to offer or arm a grant for the agent's dialog was started by the
/// agent itself, not by a command (rt8 C1): a yes in the dialog is vouched for only by the
/// agent's own events, so a hook the model ran, with the model's text on its input, must never
/// stand for them. Decided by what the model cannot change:
/// - `gated`: [`crate::model::GATED`] as agentsh's gate set it for this process. A hook it ran is
///   the model's command, or inside one, except exactly the hook command Gemini CLI runs with
///   agentsh as its `bash` ([`crate::model::GATED_HOOK`], the agent being Gemini CLI: its model's
///   commands always reach the gate inside its wrapper, never as that bare text);
/// - `input_is_terminal`: the agents hand a hook its event through a pipe; a hook reading a
///   terminal was typed at a shell, where the model types its event too.
///
/// `Err`: why not, for the refusal.
pub fn started_by_agent(gated: Option<&str>, input_is_terminal: bool, agent_is_gemini: bool) -> Result<(), String> {
    if input_is_terminal {
        return Err("the hook reads a terminal: it was typed at a shell, not started by the agent".into());
    }
    match gated {
        None => Ok(()),
        Some(crate::model::GATED_HOOK) if agent_is_gemini => Ok(()),
        Some(_) => Err("the hook was started by a command agentsh's gate ran, not by the agent itself".into()),
    }
}

/// Whether process `pid` runs this agentsh binary.
pub fn runs_this_binary(pid: u32) -> bool {
    let me = std::env::current_exe().ok();
    me.is_some() && fs::read_link(format!("/proc/{pid}/exe")).ok() == me
}

/// Every grant in `dir`, with its file; expired ones are removed as they are found.
fn all(dir: &Path, now_ms: i64) -> Vec<(PathBuf, Grant)> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_grant = path.extension().is_some_and(|e| e == "json")
            && path.file_stem().and_then(|s| s.to_str()).is_some_and(crate::ask::queue::valid_id);
        if !is_grant {
            continue;
        }
        let Some(grant) = read(&path) else { continue };
        if grant.expires_ms <= now_ms {
            let _ = fs::remove_file(&path);
            continue;
        }
        out.push((path, grant));
    }
    out
}

fn read(path: &Path) -> Option<Grant> {
    let mut text = String::new();
    open_owned(path).ok()?.take(64 * 1024).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `grant` under `name`: a private temp file (the queue's), renamed into place, so it is
/// never seen half written.
fn write(dir: &Path, name: &str, grant: &Grant) -> io::Result<()> {
    let bytes = serde_json::to_vec(grant).map_err(io::Error::from)?;
    let (_, tmp) = write_temp(dir, name, &bytes, false)?;
    let renamed = fs::rename(&tmp, dir.join(name));
    if renamed.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    renamed
}

/// Offers a grant for `command` in `cwd` for `agent`: armed at once for a yes already given, or
/// waiting for its dialog. An earlier grant for the same command, place and agent is replaced: a
/// new call is a new question.
pub fn offer(dir: &Path, command: &str, cwd: &str, agent: Process, place: &str, armed: bool) -> io::Result<()> {
    let now = crate::record::clock::now_ms();
    for (path, old) in all(dir, now) {
        if old.same_request(command, cwd, agent) {
            let _ = fs::remove_file(path);
        }
    }
    let grant = Grant {
        command: command.to_string(),
        cwd: cwd.to_string(),
        agent,
        place: place.to_string(),
        armed,
        expires_ms: now + if armed { ARMED_MS } else { UNARMED_MS },
    };
    let bytes = crate::ask::prompt::urandom::<6>()?;
    let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    write(dir, &format!("{id}.json"), &grant)
}

/// Arms the grant waiting for this dialog: the agent is showing the person `command` now.
/// Returns whether one was armed.
pub fn arm(dir: &Path, command: &str, cwd: &str, agent: Process) -> bool {
    let now = crate::record::clock::now_ms();
    let Some((path, mut grant)) =
        all(dir, now).into_iter().find(|(_, g)| !g.armed && g.same_request(command, cwd, agent))
    else {
        return false;
    };
    grant.armed = true;
    grant.expires_ms = now + ARMED_MS;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    write(dir, &name, &grant).is_ok()
}

/// Where the armed grant for `command` was given, if there is one (without taking it).
pub fn armed(dir: &Path, command: &str, cwd: &str, agent: Process) -> Option<String> {
    let now = crate::record::clock::now_ms();
    all(dir, now).into_iter().find(|(_, g)| g.armed && g.same_request(command, cwd, agent)).map(|(_, g)| g.place)
}

/// Takes the grant that covers running `command` in `cwd` from this process: it is removed, and
/// where the person said yes is returned. `None`: no grant, and the person must be asked.
pub fn take(command: &str, cwd: &Path) -> Option<String> {
    let dir = dir().ok()?;
    let ancestry: Vec<Process> = ancestry().into_iter().map(|(p, _)| p).collect();
    take_in(&dir, command, &canonical(cwd), &ancestry, crate::record::clock::now_ms())
}

/// [`take`] in `dir`, with the ancestry and clock given.
pub fn take_in(dir: &Path, command: &str, cwd: &str, ancestry: &[Process], now_ms: i64) -> Option<String> {
    let (path, _) = all(dir, now_ms).into_iter().find(|(_, g)| g.covers(command, cwd, ancestry, now_ms))?;
    // Only one taker can rename it away; the copy it holds is read again, so what counts is
    // what it took.
    let taken = dir.join(format!(".taken.{}.{}", std::process::id(), path.file_name()?.to_str()?));
    fs::rename(&path, &taken).ok()?;
    let grant = read(&taken);
    let _ = fs::remove_file(&taken);
    grant.filter(|g| g.covers(command, cwd, ancestry, now_ms)).map(|g| g.place)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const AGENT: Process = Process { pid: 4242, start: 777 };

    fn private_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        fs::set_permissions(d.path(), fs::Permissions::from_mode(0o700)).unwrap();
        d
    }

    fn grant() -> Grant {
        Grant {
            command: "git push".into(),
            cwd: "/p".into(),
            agent: AGENT,
            place: "Claude Code's permission dialog".into(),
            armed: true,
            expires_ms: 1_000,
        }
    }

    #[test]
    fn a_grant_covers_only_its_command_directory_agent_and_time_once_armed() {
        let mine = [Process { pid: 9, start: 1 }, AGENT];
        let g = grant();
        assert!(g.covers("git push", "/p", &mine, 999));
        // Each binding, broken once.
        assert!(!g.covers("git push --force", "/p", &mine, 999), "another text");
        assert!(!g.covers("git push ", "/p", &mine, 999), "the exact text");
        assert!(!g.covers("git push", "/p/sub", &mine, 999), "another directory");
        assert!(!g.covers("git push", "/p", &[Process { pid: 4242, start: 778 }], 999), "a reused process ID");
        assert!(!g.covers("git push", "/p", &[Process { pid: 9, start: 1 }], 999), "another agent");
        assert!(!g.covers("git push", "/p", &mine, 1_000), "expired");
        assert!(!Grant { armed: false, ..grant() }.covers("git push", "/p", &mine, 999), "its dialog never showed");
    }

    #[test]
    fn an_offered_grant_counts_once_armed_and_is_taken_once() {
        let d = private_dir();
        let now = crate::record::clock::now_ms();
        offer(d.path(), "git push", "/p", AGENT, "Claude Code's permission dialog", false).unwrap();
        assert_eq!(take_in(d.path(), "git push", "/p", &[AGENT], now), None, "not armed: no dialog was shown");
        assert_eq!(armed(d.path(), "git push", "/p", AGENT), None);
        assert!(!arm(d.path(), "git push -f", "/p", AGENT), "another command's dialog arms nothing");
        assert!(arm(d.path(), "git push", "/p", AGENT));
        assert_eq!(armed(d.path(), "git push", "/p", AGENT).as_deref(), Some("Claude Code's permission dialog"));
        assert_eq!(take_in(d.path(), "git push", "/p", &[Process { pid: 1, start: 1 }], now), None);
        assert_eq!(
            take_in(d.path(), "git push", "/p", &[AGENT], now).as_deref(),
            Some("Claude Code's permission dialog")
        );
        assert_eq!(take_in(d.path(), "git push", "/p", &[AGENT], now), None, "single use");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_new_question_replaces_the_old_grant_and_expired_ones_go() {
        let d = private_dir();
        offer(d.path(), "git push", "/p", AGENT, "a", true).unwrap();
        offer(d.path(), "git push", "/p", AGENT, "b", false).unwrap();
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1, "the earlier grant was replaced");
        assert_eq!(armed(d.path(), "git push", "/p", AGENT), None, "and the new one waits for its dialog");
        let later = crate::record::clock::now_ms() + UNARMED_MS + 1;
        assert_eq!(take_in(d.path(), "git push", "/p", &[AGENT], later), None);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0, "expired grants are removed when seen");
    }

    #[test]
    fn files_not_written_by_agentsh_do_not_count() {
        let d = private_dir();
        let now = crate::record::clock::now_ms();
        let g = Grant { expires_ms: now + 1000, ..grant() };
        // A link to a grant, or a name that is not an ID, is never read.
        let real = d.path().join("elsewhere.txt");
        fs::write(&real, serde_json::to_vec(&g).unwrap()).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("0123456789ab.json")).unwrap();
        fs::write(d.path().join("not-an-id.json"), serde_json::to_vec(&g).unwrap()).unwrap();
        assert_eq!(take_in(d.path(), "git push", "/p", &[AGENT], now), None);
    }

    #[test]
    fn only_a_hook_the_agent_started_itself_may_stand_for_its_dialog() {
        use crate::model::{GATED_COMMAND, GATED_HOOK};
        // Claude Code's and Codex's hooks (`sh -c`), Gemini CLI's with a real `bash`.
        assert_eq!(started_by_agent(None, false, false), Ok(()));
        // Gemini CLI's hook through agentsh as its `bash`.
        assert_eq!(started_by_agent(Some(GATED_HOOK), false, true), Ok(()));
        // The model's bare `<agentsh> hook claude-code` through the gate, under any other agent
        // (rt8 C1), or anything inside a gated command, under any agent.
        assert!(started_by_agent(Some(GATED_HOOK), false, false).is_err());
        assert!(started_by_agent(Some(GATED_COMMAND), false, true).is_err());
        assert!(started_by_agent(Some(""), false, true).is_err());
        // Typed at a line-gated terminal, its event typed there too.
        assert!(started_by_agent(None, true, false).is_err());
        assert!(started_by_agent(Some(GATED_HOOK), true, true).is_err());
    }

    #[test]
    fn the_agent_is_the_nearest_ancestor_that_is_not_a_shell_or_agentsh() {
        let p = |pid| Process { pid, start: 1 };
        let chain = vec![(p(10), "sh".to_string()), (p(9), "bash".to_string()), (p(8), "claude".to_string())];
        assert_eq!(agent(&chain, &|_| false), Some(p(8)));
        // agentsh as the agent's `bash` running the hook command (Gemini CLI with agentsh on PATH).
        let chain = vec![(p(10), "bash".to_string()), (p(7), "node".to_string())];
        assert_eq!(agent(&chain, &|pid| pid == 10), Some(p(7)));
        let chain = vec![(p(10), "node".to_string())];
        assert_eq!(agent(&chain, &|pid| pid == 10), None);
        // This test's own ancestry is readable and starts with its parent.
        let mine = ancestry();
        assert_eq!(mine.first().map(|(p, _)| p.pid), Some(nix::unistd::getppid().as_raw() as u32));
    }
}
