//! The box's Landlock ruleset, made by the builder in the finished view ([`super::view`]) and
//! kept by the holder for every command that joins the box ([`super::holder`]).
//!
//! The view already hides and covers what the box must not reach; Landlock adds what mounts
//! cannot say:
//! - reading: everything in the view but `/dev`, where only the devices listed are granted,
//!   and a terminal the command does not keep is granted for writing only (a job left in the
//!   background cannot read the keys a person types at agentsh's prompt);
//! - writing: only the workspace, `sandbox.writable`, the private places and the caches;
//! - device ioctls only on the devices listed (no TIOCSTI into a terminal it does not keep);
//! - signals and abstract unix sockets scoped to the box (ABI 6);
//! - TCP connect and bind refused where the network is off (ABI 4), as well as the network
//!   namespace without a network.

use super::spec::BoxSpec;
use super::{BoxError, Network};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The newest ABI this module asks for. Features of later ABIs are not used until tested.
const TARGET: ABI = ABI::V7;

fn read_access() -> BitFlags<AccessFs> {
    AccessFs::Execute | AccessFs::ReadFile | AccessFs::ReadDir
}

/// Every right but making device files: no build needs one.
pub(crate) fn all_access() -> BitFlags<AccessFs> {
    AccessFs::from_all(TARGET) & !(AccessFs::MakeBlock | AccessFs::MakeChar)
}

/// One Landlock rule: a path and the rights beneath it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    pub path: PathBuf,
    pub access: BitFlags<AccessFs>,
}

/// The rules for a spec in its view; `top` are the names at the top of the view (`/`'s
/// entries). Pure.
pub(crate) fn plan(spec: &BoxSpec, top: &[String]) -> Vec<Rule> {
    let rule = |path: &Path, access| Rule { path: path.to_path_buf(), access };
    let mut rules: Vec<Rule> = Vec::new();
    // Listing works everywhere (`ls /`), and everything but `/dev` reads.
    rules.push(rule(Path::new("/"), AccessFs::ReadDir.into()));
    for name in top.iter().filter(|n| n.as_str() != "dev") {
        rules.push(rule(&Path::new("/").join(name), read_access()));
    }
    rules.push(rule(Path::new("/dev"), AccessFs::ReadDir.into()));
    // Sockets and FIFOs only in the box's own places (its `/tmp`, home and runtime directory):
    // one made in the workspace is where the person's clients connect (`PGHOST=$PWD/.pg`), so
    // a job left in the box could be their server and take the passwords they send, and a
    // FIFO where agentsh or git reads a file hangs them (rt7 A8, A9).
    let all = all_access();
    let shared = all & !(AccessFs::MakeSock | AccessFs::MakeFifo);
    for r in spec.write.iter().chain(&spec.caches) {
        rules.push(rule(&r.path, shared));
    }
    // Landlock's rights hold for all beneath a rule: a private place that holds the workspace
    // (the box's home, or `/tmp` for a project there) gives them none either.
    for r in &spec.private {
        let holds = spec.write.iter().chain(&spec.caches).any(|w| super::within(&w.path, &r.path));
        rules.push(rule(&r.path, if holds { shared } else { all }));
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    for d in &spec.devices {
        rules.push(rule(&d.path, device));
    }
    for t in &spec.ttys {
        rules.push(rule(&t.path, if spec.keep_terminal { device } else { AccessFs::WriteFile.into() }));
    }
    rules
}

/// The finished ruleset for `spec`, ready for `landlock_restrict_self` (not applied here), and
/// how many rules it holds. A path that does not exist in the view grants nothing.
pub(crate) fn ruleset(spec: &BoxSpec) -> Result<(OwnedFd, usize), BoxError> {
    use nix::fcntl::{OFlag, open};
    let failed = |e: &dyn std::fmt::Display| BoxError::Failed(format!("Landlock: {e}"));
    let top: Vec<String> = std::fs::read_dir("/")
        .map_err(|e| failed(&e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .and_then(|r| r.set_compatibility(CompatLevel::BestEffort).handle_access(all_access()))
        .map_err(|e| failed(&e))?;
    // The box has no network of its own then (a network namespace with nothing in it); TCP is
    // refused by Landlock too where the kernel can.
    if spec.network == Network::Off {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4)).map_err(|e| failed(&e))?;
    }
    let mut created = ruleset
        .scope(Scope::from_all(TARGET))
        .and_then(|r| r.create())
        .map_err(|e| failed(&e))?
        .set_compatibility(CompatLevel::BestEffort);
    let mut count = 0;
    for rule in plan(spec, &top) {
        // A path the view does not hold (a cache never made) grants nothing.
        let Ok(fd) = open(&rule.path, OFlag::O_PATH | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty()) else {
            continue;
        };
        created = created.add_rule(PathBeneath::new(fd, rule.access)).map_err(|e| failed(&e))?;
        count += 1;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.map(|fd| (fd, count)).ok_or_else(|| BoxError::Unsupported("this kernel made no Landlock ruleset".into()))
}

/// Confines this process's own writes to `dirs` (and beneath): the box's proxy, which reads
/// untrusted bytes all its life, can then change nothing but agentsh's records, its approval
/// queue and the user config. Reading stays open: it resolves names and reads the config like
/// any agentsh. Abstract unix sockets and signals are scoped too.
pub(crate) fn confine_writes(dirs: &[PathBuf]) -> Result<(), String> {
    use nix::fcntl::{OFlag, open};
    let writes = all_access() & !read_access();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(writes)
        .and_then(|r| r.handle_access(AccessNet::BindTcp))
        // Signals too: the proxy signals no one (a question goes over a socket, `asking`), so a
        // process ID the box names can never be signalled from outside it.
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .and_then(|r| r.create())
        .map_err(|e| e.to_string())?;
    for dir in dirs {
        if let Ok(fd) = open(dir, OFlag::O_PATH | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty()) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, writes)).map_err(|e| e.to_string())?;
        }
    }
    ruleset.restrict_self().map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::sandbox::spec::{Origin, Root};

    #[test]
    fn dev_is_read_only_where_listed_and_terminals_are_written_only() {
        let spec: BoxSpec = serde_json::from_value(serde_json::json!({
            "workspace": "/w", "git_dir": null, "home": "/h", "cwd": "/w",
            "write": [{"path": "/w", "from": "workspace"}],
            "private": [{"path": "/h", "from": "private"}, {"path": "/tmp", "from": "private"}],
            "store": "/s", "caches": [], "visible": [], "hidden": [], "deny": [], "read_only": [],
            "devices": [{"path": "/dev/null", "from": "device"}],
            "ttys": [{"path": "/dev/pts/3", "from": "terminal"}],
            "network": "on", "keep_terminal": false, "refused": [], "records": "/r", "name": "n",
            "net": {"allow": [], "deny": [], "git_dir": null, "workspace": "/w", "records": "/r"}
        }))
        .unwrap();
        let top = ["usr", "dev", "etc", "proc"].map(String::from);
        let rules = plan(&spec, &top);
        let get = |p: &str| rules.iter().filter(|r| r.path == Path::new(p)).map(|r| r.access).reduce(|a, b| a | b);
        assert_eq!(get("/usr"), Some(read_access()));
        assert_eq!(get("/dev"), Some(AccessFs::ReadDir.into()), "no device is readable through /dev");
        assert_eq!(get("/dev/pts/3"), Some(AccessFs::WriteFile.into()));
        // rt7 A8: no socket or FIFO in the workspace; the box's own places take them.
        assert_eq!(get("/w"), Some(all_access() & !(AccessFs::MakeSock | AccessFs::MakeFifo)));
        assert_eq!(get("/h"), Some(all_access()));
        // A private place that holds the workspace takes neither (the rights go beneath).
        let mut held = spec.clone();
        held.write = vec![Root::new("/h/proj", Origin::Workspace)];
        let rules = plan(&held, &top);
        let h = rules.iter().find(|r| r.path == Path::new("/h")).unwrap().access;
        assert!(!h.contains(AccessFs::MakeSock) && !h.contains(AccessFs::MakeFifo));
        assert_eq!(rules.iter().find(|r| r.path == Path::new("/tmp")).unwrap().access, all_access());
        assert!(get("/dev/null").unwrap().contains(AccessFs::IoctlDev));
        let keep = BoxSpec { keep_terminal: true, ttys: vec![Root::new("/dev/pts/3", Origin::Terminal)], ..spec };
        assert!(
            plan(&keep, &top)
                .iter()
                .any(|r| r.path == Path::new("/dev/pts/3") && r.access.contains(AccessFs::IoctlDev))
        );
    }
}
