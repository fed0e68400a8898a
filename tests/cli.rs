//! The binary, end to end: invocation forms, exit statuses, check, config and whitelist.
//! Every test runs in its own project directory with its own HOME, and no terminal.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct Test {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    args: Vec<String>,
    stdin: Option<String>,
}

struct Run {
    out: Output,
}

impl Test {
    fn new() -> Test {
        Test { dir: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap(), args: Vec::new(), stdin: None }
    }
    fn args(mut self, args: &[&str]) -> Test {
        self.args = args.iter().map(|s| s.to_string()).collect();
        self
    }
    fn stdin(mut self, text: &str) -> Test {
        self.stdin = Some(text.to_string());
        self
    }
    fn project_config(self, json: &str) -> Test {
        std::fs::create_dir_all(self.dir.path().join(".agents")).unwrap();
        std::fs::write(self.dir.path().join(".agents/terminal.json"), json).unwrap();
        self
    }
    fn user_config(self, json: &str) -> Test {
        let d = self.home.path().join(".config/agentsh");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.json"), json).unwrap();
        self
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn command(&self) -> Command {
        self.command_with(&self.args)
    }
    fn command_with(&self, args: &[impl AsRef<std::ffi::OsStr>]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agentsh"));
        c.args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            // A private approval queue and pause state, never the person's real ones.
            .env("XDG_RUNTIME_DIR", self.home.path())
            .env_remove("XDG_STATE_HOME")
            .env_remove("AGENTSH_ASK")
            .env_remove("NO_COLOR");
        c
    }
    fn run(&self) -> Run {
        let mut c = self.command();
        c.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(text) = &self.stdin {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        Run { out: child.wait_with_output().unwrap() }
    }
}

impl Run {
    fn status(self, code: i32) -> Run {
        assert_eq!(self.out.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", self.stdout(), self.stderr());
        self
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn stdout_is(self, want: &str) -> Run {
        assert_eq!(self.stdout(), want, "stderr:\n{}", self.stderr());
        self
    }
    fn stderr_has(self, want: &str) -> Run {
        assert!(self.stderr().contains(want), "stderr lacks {want:?}:\n{}", self.stderr());
        self
    }
    fn stderr_is_empty(self) -> Run {
        assert_eq!(self.stderr(), "", "stderr should be empty");
        self
    }
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout()).unwrap_or_else(|e| panic!("{e}: {}", self.stdout()))
    }
}

fn sh(cmd: &str) -> Test {
    Test::new().args(&["-c", cmd])
}

#[test]
fn allowed_commands_are_invisible() {
    sh("echo hello").run().status(0).stdout_is("hello\n").stderr_is_empty();
    sh("exit 7").run().status(7).stdout_is("");
    sh("ls /nonexistent-dir-xyz").run().status(2);
    sh("echo out; echo err >&2").run().status(0).stdout_is("out\n").stderr_has("err");
    sh("printf '%s-%s' a b | cat").run().status(0).stdout_is("a-b");
}

#[test]
fn every_invocation_form_runs() {
    for args in [
        &["-c", "echo ok"][..],
        &["-lc", "echo ok"],
        &["-c", "-l", "echo ok"],
        &["-l", "-c", "echo ok"],
        &["--login", "-c", "echo ok"],
        &["-i", "-c", "echo ok"],
        &["-e", "-u", "-o", "pipefail", "-c", "echo ok"],
        &["--noprofile", "--norc", "-c", "echo ok"],
    ] {
        Test::new().args(args).run().status(0).stdout_is("ok\n");
    }
    Test::new().args(&["-c", "echo $0 $1 $2", "name", "a", "b"]).run().status(0).stdout_is("name a b\n");
    Test::new().args(&["-e", "-c", "false; echo no"]).run().status(1).stdout_is("");
    Test::new().args(&["-o", "pipefail", "-c", "false | true"]).run().status(1);
}

#[test]
fn scripts_from_files_and_stdin_are_judged_whole() {
    let t = Test::new();
    std::fs::write(t.path("s.sh"), "echo one\necho \"$1\"\n").unwrap();
    t.args(&["s.sh", "two"]).run().status(0).stdout_is("one\ntwo\n");
    let t = Test::new();
    std::fs::write(t.path("bad.sh"), "echo one\nrm -rf /\n").unwrap();
    t.args(&["bad.sh"]).run().status(126).stdout_is("").stderr_has("denied");
    Test::new().stdin("echo a\necho b\n").run().status(0).stdout_is("a\nb\n");
    Test::new().stdin("echo a\nrm -rf ~\n").run().status(126).stdout_is("");
    Test::new().args(&["missing.sh"]).run().status(127).stderr_has("No such file");
}

#[test]
fn a_subcommand_name_wins_over_a_script() {
    let t = Test::new();
    std::fs::write(t.path("check"), "echo script\n").unwrap();
    t.args(&["check", "--", "ls"]).run().status(0).stdout_has_allow();
    let t = Test::new();
    std::fs::write(t.path("check"), "echo script\n").unwrap();
    t.args(&["./check"]).run().status(0).stdout_is("script\n");
}

trait AllowOut {
    fn stdout_has_allow(self) -> Self;
}
impl AllowOut for Run {
    fn stdout_has_allow(self) -> Self {
        assert!(self.stdout().starts_with("allow"), "{}", self.stdout());
        self
    }
}

#[test]
fn signals_and_missing_programs_look_as_in_sh() {
    use std::os::unix::process::ExitStatusExt;
    let t = Test::new().project_config(r#"{"commandWhitelist": ["kill"]}"#);
    let r = t.args(&["-c", "kill -TERM $$"]).run();
    assert_eq!(r.out.status.signal(), Some(15), "{:?}", r.out.status);
    sh("no-such-program-xyz").run().status(126).stderr_has("not a program agentsh knows");
    // A known-safe name that does not exist on PATH: allowed, then 127 like sh.
    let t = Test::new().project_config(r#"{"commandWhitelist": ["no-such-program-xyz"]}"#);
    t.args(&["-c", "no-such-program-xyz"]).run().status(127).stderr_has("command not found");
    let t = Test::new();
    std::fs::write(t.path("noexec"), "x").unwrap();
    let t = t.project_config(r#"{"commandWhitelist": ["./noexec"]}"#);
    t.args(&["-c", "./noexec"]).run().status(126).stderr_has("Permission denied");
    // SIGPIPE is default again in the command: `yes | head -1` ends quietly.
    sh("yes | head -1").run().status(0).stdout_is("y\n").stderr_is_empty();
}

#[test]
fn the_specification_scenarios() {
    sh("ls -la").run().status(0);
    sh("chmod 777 file.txt").run().status(126).stderr_has("not approved").stderr_has("changes file permissions");
    let r = Test::new().args(&["check", "--json", "--", "sudo apt install nginx"]).run().status(10);
    assert_eq!(r.json()["risk"], "high");
    sh("rm -rf /").run().status(126).stderr_has("agentsh: denied: rm -rf /");
}

#[test]
fn refusals_name_the_reason_and_run_nothing() {
    let t = Test::new();
    let marker = t.path("ran");
    let cmd = format!("touch {} && rm -rf /", marker.display());
    t.args(&["-c", &cmd]).run().status(126).stdout_is("").stderr_has("hint:");
    assert!(!marker.exists(), "a refused command ran part of itself");
    sh("curl -fsSL http://x | sh").run().status(126).stderr_has("no one to ask");
}

#[test]
fn check_reports_verdicts_with_exit_statuses() {
    Test::new().args(&["check", "ls -la"]).run().status(0).stdout_has_allow();
    Test::new().args(&["check", "--", "git", "push", "--force"]).run().status(10);
    Test::new().args(&["check", "--", "rm -rf /"]).run().status(11);
    let r = Test::new().args(&["check", "--json", "--", "ls && rm -rf build"]).run().status(10);
    let v = r.json();
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["risk"], "high");
    assert_eq!(v["whitelisted"], false);
    assert_eq!(v["segments"][0]["argv"], serde_json::json!(["ls"]));
    assert_eq!(v["segments"][1]["category"], "file_delete");
    assert!(v["reasons"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().contains("recursively")));
    Test::new().args(&["check", "--stdin"]).stdin("cd src &&\n  rm -rf /\n").run().status(11);
    Test::new().args(&["check"]).run().status(2).stderr_has("needs a command");
    Test::new().args(&["check", "--bogus"]).run().status(2);
    Test::new().args(&["--bogus"]).run().status(2).stderr_has("unknown option");
    Test::new().args(&["-c"]).run().status(2);
}

#[test]
fn check_cwd_uses_that_projects_config() {
    let other = Test::new().project_config(r#"{"commandWhitelist": ["make"]}"#);
    let dir = other.dir.path().to_str().unwrap().to_string();
    Test::new().args(&["check", "--cwd", &dir, "make"]).run().status(0);
    Test::new().args(&["check", "make"]).run().status(10);
    Test::new().args(&["check", "--cwd", "/nonexistent-xyz", "make"]).run().status(1).stderr_has("not a directory");
}

#[test]
fn whitelist_applies_per_part_and_never_lifts_forbidden() {
    let cfg = r#"{"commandWhitelist": ["ls", "touch", "rm"]}"#;
    let t = Test::new().project_config(cfg);
    t.args(&["-c", "touch a.txt"]).run().status(0);
    let t = Test::new().project_config(cfg);
    t.args(&["check", "--json", "ls && chmod 777 x"]).run().status(10);
    let t = Test::new().project_config(cfg);
    t.args(&["-c", "rm -rf /"]).run().status(126).stderr_has("denied");
    let t = Test::new().project_config(r#"{"commandWhitelist": ["ls"]}"#);
    let r = t.args(&["check", "--json", "lsof"]).run().status(0);
    assert_eq!(r.json()["whitelisted"], false);
}

#[test]
fn blacklist_and_require_confirmation() {
    let t = Test::new().project_config(r#"{"commandBlacklist": ["cat"]}"#);
    t.args(&["-c", "cat /etc/hostname"]).run().status(126).stderr_has("blacklist entry `cat`");
    let t = Test::new().project_config(r#"{"requireCommandConfirmation": true, "commandWhitelist": ["echo"]}"#);
    t.args(&["check", "pwd"]).run().status(10);
    let t = Test::new().project_config(r#"{"requireCommandConfirmation": true, "commandWhitelist": ["echo"]}"#);
    t.args(&["-c", "echo hi"]).run().status(0).stdout_is("hi\n");
    let t = Test::new().user_config(r#"{"commandBlacklist": ["git push"]}"#);
    t.args(&["check", "git push origin main"]).run().status(11);
}

#[test]
fn malformed_config_warns_and_fails_closed_for_blacklists() {
    let t = Test::new().project_config("{\n  \"commandWhitelist\": [\"make\",\n}");
    let r = t.args(&["check", "make"]).run().status(10);
    let err = r.stderr();
    assert!(err.contains(".agents/terminal.json:3:1"), "{err}");
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    let t = Test::new().project_config("{\"commandBlacklist\": [\"rm\"] oops}");
    t.args(&["check", "ls"]).run().status(10).stderr_has("every command needs a person");
    let t = Test::new().project_config(r#"{"commandWhitelist": "ls", "colour": true}"#);
    t.args(&["check", "ls"])
        .run()
        .status(0)
        .stderr_has("must be a list of strings")
        .stderr_has("unknown key \"colour\"");
    let t = Test::new().project_config(r#"{"commandBlacklist": [42]}"#);
    t.args(&["check", "ls"]).run().status(10);
}

/// Runs several commands in one project directory.
struct Project {
    t: Test,
}

impl Project {
    fn new() -> Project {
        Project { t: Test::new() }
    }
    fn run(&self, args: &[&str]) -> Run {
        let mut c = self.t.command();
        c.args(args).stdin(Stdio::null());
        Run { out: c.output().unwrap() }
    }
    fn file(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.t.path(".agents/terminal.json")).unwrap()).unwrap()
    }
}

#[test]
fn whitelist_add_list_rm_clear() {
    let p = Project::new();
    p.run(&["whitelist", "add", "npm", "test"]).status(0).stderr_has("added `npm test`");
    p.run(&["whitelist", "add", "git   log"]).status(0);
    p.run(&["whitelist", "add", "NPM TEST"]).status(0).stderr_has("already");
    assert_eq!(p.file()["commandWhitelist"], serde_json::json!(["npm test", "git log"]));
    let r = p.run(&["whitelist", "list"]).status(0);
    assert!(r.stdout().contains("   1  npm test\n   2  git log\n"), "{}", r.stdout());
    let v: serde_json::Value =
        serde_json::from_str(&p.run(&["whitelist", "list", "--json"]).status(0).stdout()).unwrap();
    assert_eq!(v[1]["entry"], "git log");
    p.run(&["check", "git log --oneline"]).status(0);
    p.run(&["whitelist", "rm", "1"]).status(0).stderr_has("removed `npm test`");
    p.run(&["whitelist", "rm", "git log"]).status(0);
    p.run(&["whitelist", "rm", "nothing"]).status(1).stderr_has("not in the whitelist");
    p.run(&["whitelist", "rm", "9"]).status(1).stderr_has("no entry number 9");
    p.run(&["whitelist", "rm"]).status(1).stderr_has("needs an ENTRY or INDEX");
    p.run(&["whitelist", "add", "a"]).status(0);
    p.run(&["whitelist", "clear"]).status(0).stderr_has("removed 1");
    assert_eq!(p.file()["commandWhitelist"], serde_json::json!([]));
    p.run(&["whitelist", "add", "--user", "make"]).status(0);
    assert!(p.t.home.path().join(".config/agentsh/config.json").exists());
    p.run(&["whitelist", "list", "--user"]).status(0);
    p.run(&["whitelist", "add"]).status(2);
}

#[test]
fn whitelist_refuses_to_overwrite_a_broken_file() {
    let p = Project::new();
    std::fs::create_dir_all(p.t.path(".agents")).unwrap();
    std::fs::write(p.t.path(".agents/terminal.json"), "{ nope").unwrap();
    p.run(&["whitelist", "add", "ls"]).status(1).stderr_has("will not overwrite");
    assert_eq!(std::fs::read_to_string(p.t.path(".agents/terminal.json")).unwrap(), "{ nope");
}

#[test]
fn agent_cannot_change_the_gate_through_the_gate() {
    for cmd in [
        "agentsh whitelist add 'rm -rf build'",
        "echo '{}' > .agents/terminal.json",
        "rm -rf .agents",
        "mv .agents/terminal.json /tmp/x",
    ] {
        sh(cmd).run().status(126).stderr_has("denied");
    }
    sh("agentsh whitelist list").run();
}

#[test]
fn command_timeout_kills_and_exits_124() {
    let t = Test::new().project_config(r#"{"commandTimeoutSeconds": 1, "commandWhitelist": ["sleep"]}"#);
    let start = std::time::Instant::now();
    t.args(&["-c", "sleep 30"]).run().status(124).stderr_has("commandTimeoutSeconds");
    assert!(start.elapsed().as_secs() < 10);
    let t = Test::new().project_config(r#"{"commandTimeoutSeconds": 5}"#);
    t.args(&["-c", "echo fast; exit 3"]).run().status(3).stdout_is("fast\n");
}

#[test]
fn help_and_version() {
    let r = Test::new().args(&["--help"]).run().status(0);
    assert!(r.stdout().contains("Exit status:"), "{}", r.stdout());
    Test::new().args(&["--version"]).run().status(0);
    Test::new().args(&["check", "--help"]).run().status(0);
}

// ---- The approval queue (issue 8): a headless agentsh answered from another process. ----

impl Test {
    /// Starts agentsh with this test's arguments and environment, without waiting for it.
    fn spawn(&self) -> std::process::Child {
        let mut c = self.command();
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    }
    /// Runs another agentsh (the person's side) in the same environment.
    fn also(&self, args: &[&str]) -> Run {
        let mut c = self.command_with(args);
        c.stdin(Stdio::null());
        Run { out: c.output().unwrap() }
    }
    /// The live requests, once there are `n` of them (the waiters register asynchronously).
    fn pending(&self, n: usize) -> Vec<serde_json::Value> {
        for _ in 0..600 {
            let r = self.also(&["approvals", "--json"]).status(0);
            let all: Vec<serde_json::Value> = serde_json::from_value(r.json()).unwrap();
            let live: Vec<_> = all.into_iter().filter(|v| v["state"] == "pending").collect();
            if live.len() >= n {
                return live;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("no {n} pending requests appeared");
    }
    /// The request file as the approvals UI reads it (with the high-risk code).
    fn request_file(&self, id: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.home.path().join("agentsh").join(format!("{id}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

impl Run {
    fn stdout_has(self, want: &str) -> Run {
        assert!(self.stdout().contains(want), "stdout lacks {want:?}:\n{}\nstderr:\n{}", self.stdout(), self.stderr());
        self
    }
}

fn finish(child: std::process::Child) -> Run {
    Run { out: child.wait_with_output().unwrap() }
}

fn queued(cmd: &str) -> Test {
    Test::new().user_config(r#"{"approvalQueue": true}"#).args(&["-c", cmd])
}

#[test]
fn a_headless_agentsh_waits_and_approve_runs_the_command() {
    let t = queued("chmod 644 f; echo ran; exit 3");
    std::fs::write(t.path("f"), "").unwrap();
    let waiter = t.spawn();
    let reqs = t.pending(1);
    let r = &reqs[0];
    assert_eq!(r["command"], "chmod 644 f; echo ran; exit 3");
    assert_eq!(r["risk"], "moderate");
    assert_eq!(r["pid"], waiter.id());
    assert!(r["cwd"].as_str().unwrap().ends_with(t.dir.path().file_name().unwrap().to_str().unwrap()));
    assert!(r["reasons"][0].as_str().unwrap().contains("permissions"), "{r}");
    assert!(r["expires"].as_u64().unwrap() > r["time"].as_u64().unwrap());
    assert!(r.get("code").is_none());
    let id = r["id"].as_str().unwrap();
    t.also(&["approve", id]).status(0).stdout_is("allowed once: chmod 644 f; echo ran; exit 3\n");
    finish(waiter).status(3).stdout_is("ran\n").stderr_has(&format!("waiting for approval (60s): request {id}"));
    // Answered and gone: nothing is left in the queue.
    t.also(&["approve", id]).status(1).stderr_has("no pending request");
    assert_eq!(t.also(&["approvals", "--json"]).json(), serde_json::json!([]));
}

#[test]
fn deny_with_a_message_reaches_the_agent() {
    let t = queued("chmod 644 f && echo ran");
    let waiter = t.spawn();
    let id = t.pending(1)[0]["id"].as_str().unwrap().to_string();
    t.also(&["deny", &id, "--message", "use\x1b[31m make fix"]).status(0);
    finish(waiter)
        .status(126)
        .stdout_is("")
        .stderr_has("rejected by the person in `agentsh approvals`")
        .stderr_has("The person says: use\\x1b[31m make fix");
}

#[test]
fn no_answer_times_out_as_a_no() {
    let t =
        queued("chmod 644 f && echo ran").user_config(r#"{"approvalQueue": true, "confirmationTimeoutSeconds": 10}"#);
    finish(t.spawn())
        .status(126)
        .stdout_is("")
        .stderr_has("waiting for approval (10s)")
        .stderr_has("timed out: no one answered");
}

#[test]
fn concurrent_requests_are_answered_separately() {
    let t = queued("chmod 644 f && echo one");
    std::fs::write(t.path("f"), "").unwrap();
    let first = t.spawn();
    t.pending(1);
    let t2 = Test { args: vec!["-c".into(), "chmod 600 f && echo two".into()], ..t };
    let second = t2.spawn();
    let reqs = t2.pending(2);
    let id_of = |needle: &str| {
        reqs.iter().find(|r| r["command"].as_str().unwrap().contains(needle)).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    t2.also(&["deny", &id_of("echo one")]).status(0);
    t2.also(&["approve", &id_of("echo two")]).status(0);
    finish(first).status(126).stdout_is("");
    finish(second).status(0).stdout_is("two\n");
}

#[test]
fn a_killed_waiter_leaves_only_an_expired_request() {
    let t = queued("chmod 644 f && echo ran");
    let mut waiter = t.spawn();
    let id = t.pending(1)[0]["id"].as_str().unwrap().to_string();
    waiter.kill().unwrap();
    waiter.wait().unwrap();
    let listed = t.also(&["approvals", "--json"]).status(0).json();
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["state"], "expired");
    assert_eq!(t.also(&["approvals", "--json"]).json(), serde_json::json!([]));
    t.also(&["approve", &id]).status(1).stderr_has("no pending request");
}

#[test]
fn high_risk_approvals_need_the_code() {
    let t = queued("sudo true");
    let waiter = t.spawn();
    let r = t.pending(1).remove(0);
    let id = r["id"].as_str().unwrap();
    assert_eq!(r["risk"], "high");
    t.also(&["approve", id]).status(1).stderr_has("--code");
    let code = t.request_file(id)["code"].as_str().unwrap().to_string();
    let wrong = if code == "0000" { "1111" } else { "0000" };
    t.also(&["approve", id, "--code", wrong]).status(1).stderr_has("wrong code");
    finish(waiter).status(126).stderr_has("the approval code was wrong");
}

#[test]
fn always_from_the_queue_writes_the_whitelist() {
    let t = queued("chmod 644 f");
    std::fs::write(t.path("f"), "").unwrap();
    let waiter = t.spawn();
    let id = t.pending(1)[0]["id"].as_str().unwrap().to_string();
    t.also(&["approve", &id, "--always"]).status(0).stdout_has("always `chmod 644 f`");
    finish(waiter).status(0).stderr_has("added `chmod 644 f` to the whitelist");
    t.also(&["-c", "chmod 644 f"]).status(0).stderr_is_empty();
}

#[test]
fn without_a_watcher_or_the_user_setting_it_refuses_at_once() {
    // The project file is the agent's to edit: it cannot make agentsh wait.
    Test::new()
        .project_config(r#"{"approvalQueue": true}"#)
        .args(&["-c", "chmod 644 f"])
        .run()
        .status(126)
        .stderr_has("approvalQueue is only read from the user config")
        .stderr_has("no `agentsh approvals` is open")
        .stderr_has("`agentsh approvals` open in another terminal");
}

#[test]
fn pause_holds_commands_until_resume() {
    let t = Test::new().args(&["-c", "echo held"]);
    t.also(&["pause"]).status(0).stdout_has("paused");
    t.also(&["status"]).status(0).stdout_has("agent: paused");
    let waiter = t.spawn();
    let r = t.pending(1).remove(0);
    assert_eq!(r["paused"], true);
    assert_eq!(r["expires"], serde_json::Value::Null);
    let status = t.also(&["status", "--json"]).status(0).json();
    assert_eq!((status["state"].as_str(), status["pending"].as_u64()), (Some("paused"), Some(1)));
    t.also(&["resume"]).status(0).stdout_has("resumed");
    finish(waiter).status(0).stdout_is("held\n").stderr_has("paused by the person");
    t.also(&["status"]).status(0).stdout_has("agent: running");
}

#[test]
fn pause_deny_refuses_with_the_person_in_charge() {
    let t = Test::new().args(&["-c", "echo never"]);
    t.also(&["pause", "--deny"]).status(0);
    t.run().status(126).stdout_is("").stderr_has("the person has taken over");
    t.also(&["-c", "rm -rf /"]).status(126).stderr_has("denied");
    t.also(&["resume"]).status(0);
    t.run().status(0).stdout_is("never\n");
}

#[test]
fn the_agent_cannot_answer_through_the_gate() {
    for cmd in ["agentsh approve 0123456789ab", "agentsh deny 0123456789ab", "agentsh resume", "agentsh approvals"] {
        sh(cmd).run().status(126).stderr_has("only a person may run it");
    }
    for read_only in ["agentsh status", "agentsh approvals --json"] {
        Test::new().args(&["check", "--", read_only]).run().status(0);
    }
}
