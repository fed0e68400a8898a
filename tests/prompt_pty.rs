//! End-to-end tests of the approval prompt in real terminals, and of where it must not appear.
//!
//! - **A person's terminal** is a tmux pane: tmux's server holds the pty's other side, as it does
//!   for a person. Keys are sent with `tmux send-keys`, the screen is read with `capture-pane`.
//! - **A pty the agent made** is modelled twice (issue 14: Codex's `exec_command` with `tty: true`
//!   plus `write_stdin`): headless, with rexpect, where this test process holds the master; and
//!   sitting in a terminal itself, with `script` run inside a tmux pane. Neither may see a prompt.
//!
//! Whether a command ran is checked by the file it creates, never by its output alone.
//!
//! tmux must be installed (`.ci/run` installs it). Without it these tests fail when `CI` is set,
//! and are skipped with a note otherwise.

use rexpect::process::WaitStatus;
use rexpect::session::{Options, PtySession, spawn_with_options};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_agentsh");
/// The shortest confirmation timeout the config accepts.
const CONFIRM_SECS: u64 = 10;
/// How long any expectation may wait, except the timeout test's.
const EXPECT_MS: u64 = 8_000;
const PROMPT: &str = "agentsh: approve this command?";
/// The first line of a refusal after a prompt: it says which way it ended (issue 29, item 6).
const NOT_APPROVED: &str = "Error: Command was not approved (";
/// The first line when there was no one to ask (issue 17, item 8): not "rejected or timed out".
const NOT_RUN: &str = "Error: Command was not run: no one was there to approve it.";
const WAITING: &str = "agentsh: waiting for approval";

/// A scratch HOME, XDG_CONFIG_HOME and project directory, so no real config is read or written.
struct Fixture {
    tmp: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("temp dir");
        for dir in ["home", "xdg", "proj/.agents"] {
            std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        }
        let settings = format!("{{\"confirmationTimeoutSeconds\": {CONFIRM_SECS}}}\n");
        std::fs::write(tmp.path().join("proj/.agents/terminal.json"), settings).unwrap();
        // These tests are about the prompt: judged as without the sandbox, which would run
        // their commands (`touch ran`) without asking.
        std::fs::create_dir_all(tmp.path().join("xdg/agentsh")).unwrap();
        std::fs::write(tmp.path().join("xdg/agentsh/config.json"), r#"{"sandbox": {"enabled": false}}"#).unwrap();
        Fixture { tmp }
    }

    /// With `approvalQueue: true` in the user config: a request with no person's terminal waits
    /// in the queue instead of being refused at once.
    fn with_queue() -> Fixture {
        let f = Fixture::new();
        std::fs::create_dir_all(f.tmp.path().join("xdg/agentsh")).unwrap();
        let config = "{\"approvalQueue\": true, \"sandbox\": {\"enabled\": false}}\n";
        std::fs::write(f.tmp.path().join("xdg/agentsh/config.json"), config).unwrap();
        f
    }

    /// A path inside the project directory (the commands' cwd).
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join("proj").join(name)
    }

    /// The scratch environment; `$AGENTSH` names the binary for shell scripts.
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let t = self.tmp.path();
        vec![
            ("HOME", t.join("home")),
            ("XDG_CONFIG_HOME", t.join("xdg")),
            ("XDG_STATE_HOME", t.join("state")),
            // A private approval queue and pause state, never the person's real ones.
            ("XDG_RUNTIME_DIR", t.to_path_buf()),
            ("XDG_DATA_HOME", t.join("home/.local/share")),
            ("AGENTSH", BIN.into()),
            ("NO_COLOR", "1".into()),
        ]
    }

    /// `program args` in the project directory with the scratch environment.
    fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(self.path("")).envs(self.env()).env("TERM", "xterm").env_remove("AGENTSH_ASK");
        cmd
    }

    /// `agentsh -c TEXT` on a fresh pty that this test process holds: an agent's pty.
    fn agentsh_on_agent_pty(&self, text: &str) -> PtySession {
        pty(self.command(BIN, &["-c", text]), EXPECT_MS)
    }

    /// `sh -c SCRIPT` on a fresh pty that this test process holds.
    fn sh_on_agent_pty(&self, script: &str) -> PtySession {
        pty(self.command("sh", &["-c", script]), EXPECT_MS)
    }

    /// A tmux server of this test's own: the person's terminals. `None` (after a note) when tmux
    /// is missing outside CI.
    fn tmux(&self) -> Option<Tmux> {
        Tmux::start(self)
    }

    /// The live request ids in the queue, once there are `n`.
    fn pending(&self, n: usize) -> Vec<String> {
        for _ in 0..200 {
            let out = self.command(BIN, &["approvals", "--json"]).stdin(Stdio::null()).output().unwrap();
            let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let ids: Vec<String> = listed
                .iter()
                .filter(|r| r["state"] == "pending")
                .filter_map(|r| r["id"].as_str().map(str::to_string))
                .collect();
            if ids.len() >= n {
                return ids;
            }
            sleep(Duration::from_millis(50));
        }
        panic!("no {n} pending requests appeared");
    }

    /// The request file as the approvals UI reads it (with the high-risk code).
    fn request_file(&self, id: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.tmp.path().join("agentsh").join(format!("{id}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// `agentsh approve ID [--code CODE]`, as the person in another terminal.
    fn approve(&self, id: &str, code: Option<&str>) {
        let mut args = vec!["approve", id];
        if let Some(c) = code {
            args.extend(["--code", c]);
        }
        let out = self.command(BIN, &args).stdin(Stdio::null()).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

fn pty(cmd: Command, expect_ms: u64) -> PtySession {
    let options = Options::new().timeout_ms(Some(expect_ms)).strip_ansi_escape_codes(true);
    spawn_with_options(cmd, options).expect("spawn on a pty")
}

/// Reads a rexpect session to the end: the exit status and what was left on the screen.
fn finish_pty(p: &mut PtySession) -> (i32, String) {
    let rest = p.exp_eof().expect("the program ends");
    match p.process().wait().expect("wait for the child") {
        WaitStatus::Exited(_, code) => (code, rest),
        other => panic!("ended by {other:?}; screen:\n{rest}"),
    }
}

fn assert_rejected(status: i32, screen: &str, reason: &str) {
    assert_eq!(status, 126, "screen:\n{screen}");
    let header = if screen.contains("not approved: no one to ask") { NOT_RUN } else { NOT_APPROVED };
    assert!(screen.contains(header), "want {header:?}; screen:\n{screen}");
    assert!(screen.contains(reason), "want {reason:?}; screen:\n{screen}");
    assert!(!screen.contains("rejected or timed out"), "it says which:\n{screen}");
    for (why, first) in [("rejected by the person", "(rejected)."), ("timed out", "(timed out).")] {
        if reason.starts_with(why) {
            assert!(screen.contains(&format!("{NOT_APPROVED}{}", &first[1..])), "want {first}:\n{screen}");
        }
    }
    // After the person's own no, the agent is not told to ask them to approve it.
    if reason.starts_with("rejected by the person") {
        assert!(!screen.contains("Ask the person to approve it"), "{screen}");
    }
}

/// Nothing of a prompt: no dialog, no code, no key help.
fn assert_no_prompt(screen: &str) {
    for shown in [PROMPT, "type the code", "time left:", "y: allow once"] {
        assert!(!screen.contains(shown), "{shown:?} was drawn on a terminal that is not the person's:\n{screen}");
    }
}

// ---------------------------------------------------------------------------------------------
// tmux: the person's terminal

/// A tmux server on a socket of the test's own, started with the fixture's environment (every
/// pane inherits it). Killed on drop.
struct Tmux {
    socket: PathBuf,
    cwd: PathBuf,
}

impl Tmux {
    fn start(f: &Fixture) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            let why = "tmux is not installed (apt-get install -y tmux)";
            assert!(std::env::var_os("CI").is_none(), "{why}: the prompt tests need it in CI");
            eprintln!("note: skipped: {why}");
            return None;
        }
        let socket = f.tmp.path().join("tmux.sock");
        let out = Command::new("tmux")
            .args(["-u", "-S"])
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "160", "-y", "50", "sleep 100000"])
            .current_dir(f.path(""))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .envs(f.env())
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux did not start: {out:?}");
        Some(Tmux { socket, cwd: f.path("") })
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("run tmux")
    }

    /// A new pane (in a session of its own, so tests may open them from several threads) running
    /// `sh -c SCRIPT`, which prints `[exit N]` when it ends and then stays.
    fn window(&self, script: &str) -> Pane<'_> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("w{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let wrapped = format!("{script}\necho \"[exit $?]\"; exec sleep 100000");
        let cwd = self.cwd.display().to_string();
        let out = self.run(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            &name,
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            &cwd,
            "sh",
            "-c",
            &wrapped,
        ]);
        assert!(out.status.success(), "{out:?}");
        Pane { tmux: self, id: String::from_utf8_lossy(&out.stdout).trim().to_string() }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// One pane of the person's tmux.
struct Pane<'a> {
    tmux: &'a Tmux,
    id: String,
}

impl Pane<'_> {
    /// Everything on the pane, its history included.
    fn screen(&self) -> String {
        let out = self.tmux.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", &self.id]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `text` is on the pane `times` times; returns the screen.
    fn wait_for_n(&self, text: &str, times: usize, ms: u64) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            assert!(start.elapsed() < Duration::from_millis(ms), "no {text:?} (x{times}) on the pane:\n{screen}");
            sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait_for_n(text, 1, EXPECT_MS)
    }

    /// Waits until the prompt is drawn and waiting for keys; returns the screen.
    fn await_prompt(&self) -> String {
        self.wait_for_n("time left:", 1, EXPECT_MS);
        // The dialog flushes type-ahead right after drawing: let that happen before typing, as a
        // person's reaction time always does.
        sleep(Duration::from_millis(150));
        self.screen()
    }

    /// Types `text` as it is.
    fn keys(&self, text: &str) {
        let out = self.tmux.run(&["send-keys", "-t", &self.id, "-l", text]);
        assert!(out.status.success(), "{out:?}");
    }

    /// Presses a named key (`Enter`, `C-c`).
    fn press(&self, key: &str) {
        let out = self.tmux.run(&["send-keys", "-t", &self.id, key]);
        assert!(out.status.success(), "{out:?}");
    }

    /// Waits for the script to end; its exit status and the whole screen.
    fn finish(&self, ms: u64) -> (i32, String) {
        let screen = self.wait_for_n("[exit ", 1, ms);
        let after = screen.rsplit("[exit ").next().unwrap_or_default();
        let code = after.split(']').next().and_then(|n| n.parse().ok());
        (code.unwrap_or_else(|| panic!("no exit status on the pane:\n{screen}")), screen)
    }
}

/// The approval code shown in "type the code NNNN then Enter".
fn code_on(screen: &str) -> String {
    let after = screen.split("type the code ").nth(1).unwrap_or_else(|| panic!("no code shown:\n{screen}"));
    let code: String = after.chars().take_while(char::is_ascii_digit).collect();
    assert_eq!(code.len(), 4, "{screen}");
    code
}

// ---------------------------------------------------------------------------------------------
// The prompt on the person's terminal

#[test]
fn y_approves_and_the_exit_status_comes_through() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt; exit 3'"#);
    let screen = pane.await_prompt();
    assert!(screen.contains(PROMPT) && screen.contains("y: allow once"), "{screen}");
    assert!(!f.path("ran.txt").exists(), "ran before it was approved");
    pane.keys("y");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert!(screen.contains("agentsh: allowed once"), "{screen}");
    assert_eq!(status, 3, "{screen}");
    assert!(f.path("ran.txt").exists(), "approved but did not run:\n{screen}");
}

#[test]
fn n_rejects_and_nothing_runs() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt'"#);
    pane.await_prompt();
    pane.keys("n");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_rejected(status, &screen, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn no_answer_times_out_on_time() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let start = Instant::now();
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt'"#);
    pane.await_prompt();
    let (status, screen) = pane.finish((CONFIRM_SECS + 10) * 1000);
    let secs = start.elapsed().as_secs_f64();
    assert_rejected(status, &screen, "timed out: no one answered");
    assert!(screen.contains(&format!("agentsh: timed out after {CONFIRM_SECS}s")), "{screen}");
    assert!((9.0..15.0).contains(&secs), "took {secs:.1}s for a {CONFIRM_SECS}s timeout");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn ctrl_c_rejects_and_restores_the_terminal() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt'; echo $? > status; stty -g > after"#);
    pane.await_prompt();
    pane.press("C-c");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "the shell went on after agentsh:\n{screen}");
    assert_rejected(126, &screen, "rejected by the person at the terminal");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "126");
    assert!(!read("before").trim().is_empty());
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn sigterm_while_asking_rejects_and_restores_the_terminal() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    // Without job control the background job stays in the foreground process group.
    let pane = tmux.window(
        r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt' & echo $! > pid; wait $!; echo $? > status; stty -g > after"#,
    );
    pane.await_prompt();
    let pid = std::fs::read_to_string(f.path("pid")).unwrap();
    assert!(Command::new("kill").args(["-TERM", pid.trim()]).status().unwrap().success());
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "the shell went on after agentsh:\n{screen}");
    assert_rejected(126, &screen, "interrupted by SIGTERM");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "143", "agentsh did not die of the SIGTERM it was sent");
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn a_y_piped_to_stdin_does_not_approve() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"yes y | head -n 100 | "$AGENTSH" -c 'touch ran.txt'"#);
    pane.await_prompt();
    assert!(!f.path("ran.txt").exists(), "stdin approved it");
    pane.keys("n");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_rejected(status, &screen, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn keys_typed_before_the_prompt_are_discarded() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"sleep 1; "$AGENTSH" -c 'touch ran.txt'"#);
    // Typed while the shell sleeps: queued on the terminal before agentsh has started.
    sleep(Duration::from_millis(300));
    pane.keys("y");
    pane.await_prompt();
    assert!(!f.path("ran.txt").exists(), "type-ahead approved it");
    pane.keys("n");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_rejected(status, &screen, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn high_risk_needs_the_code() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let run = r#""$AGENTSH" -c 'rm -rf ./docs && touch ran'"#;
    std::fs::create_dir(f.path("docs")).unwrap();

    // Issue 17, item 4: three tries, as sudo gives; then the agent is told the code was wrong.
    let pane = tmux.window(run);
    let screen = pane.await_prompt();
    assert!(screen.contains("HIGH"), "{screen}");
    // Issue 29, item 7: a letter is not typed into the code, and the line says why.
    pane.keys("y");
    pane.wait_for("y does not approve: type the code");
    pane.keys("12");
    pane.press("Enter");
    pane.wait_for("Sorry, try again");
    pane.keys("0000");
    pane.press("Enter");
    pane.keys("1");
    pane.press("Enter");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_rejected(status, &screen, "the approval code was not entered correctly (3 tries)");
    assert!(f.path("docs").exists() && !f.path("ran").exists());

    // A typo, then the code: approved.
    let pane = tmux.window(run);
    let screen = pane.await_prompt();
    pane.keys("9");
    pane.press("Enter");
    pane.wait_for("Sorry, try again");
    pane.keys(&code_on(&screen));
    pane.press("Enter");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(!f.path("docs").exists() && f.path("ran").exists(), "{screen}");
    std::fs::create_dir(f.path("docs")).unwrap();
    std::fs::remove_file(f.path("ran")).unwrap();

    let pane = tmux.window(run);
    let screen = pane.await_prompt();
    pane.keys(&code_on(&screen));
    pane.press("Enter");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(!f.path("docs").exists() && f.path("ran").exists(), "{screen}");
}

#[test]
fn always_saves_the_entry_and_the_next_run_does_not_ask() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt'"#);
    let screen = pane.await_prompt();
    // Issue 17, item 1: the project's own file is not trusted, so an entry there would be
    // ignored. "Always" saves to the user config, for this project, and says so first.
    let user = f.tmp.path().join("xdg/agentsh/config.json");
    let root = std::fs::canonicalize(f.path("")).unwrap();
    assert!(screen.contains("always saves to"), "{screen}");
    assert!(screen.contains("projectWhitelist"), "{screen}");
    pane.keys("a");
    let screen = pane.wait_for("1. touch ran.txt");
    assert!(screen.contains("always allow which rule?"), "{screen}");
    pane.keys("1");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(f.path("ran.txt").exists());
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(json["projectWhitelist"][root.display().to_string()], serde_json::json!(["touch ran.txt"]), "{json}");
    assert_eq!(json["sandbox"]["enabled"], false, "other settings were lost: {json}");
    let project = std::fs::read_to_string(f.path(".agents/terminal.json")).unwrap();
    assert!(!project.contains("touch"), "the untrusted project file is untouched: {project}");

    std::fs::remove_file(f.path("ran.txt")).unwrap();
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt'"#);
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(!screen.contains(PROMPT), "asked again:\n{screen}");
    assert!(f.path("ran.txt").exists());
}

/// Runs a loosening management command in a tmux window and confirms it with the code shown.
fn confirm_in(tmux: &Tmux, args: &str) -> (i32, String) {
    let pane = tmux.window(&format!("\"$AGENTSH\" {args}"));
    let screen = pane.await_prompt();
    pane.keys(&code_on(&screen));
    pane.press("Enter");
    pane.finish(EXPECT_MS)
}

#[test]
fn whitelist_add_needs_the_person_and_concurrent_adds_lose_nothing() {
    // Each `whitelist add` is confirmed in its own window, 8 writers at once: every entry
    // survives, and agentsh's own writes keep the project file trusted.
    const WRITERS: usize = 8;
    const EACH: usize = 5;
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#""$AGENTSH" whitelist add touch"#);
    let screen = pane.await_prompt();
    assert!(screen.contains("adds `touch` to the whitelist"), "{screen}");
    // Issue 17, item 13: a change to the policy is confirmed, not "approved" as a command.
    assert!(screen.contains("agentsh: confirm this change to agentsh's policy?"), "{screen}");
    assert!(!screen.contains(PROMPT) && !screen.contains("allow once"), "{screen}");
    pane.keys("y");
    pane.press("Enter");
    pane.press("Escape");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 1, "{screen}");
    assert!(screen.contains("not confirmed: rejected") && screen.contains("agentsh: cancelled"), "{screen}");
    let unchanged = std::fs::read_to_string(f.path(".agents/terminal.json")).unwrap();
    assert!(!unchanged.contains("touch"), "{unchanged}");

    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let tmux = &tmux;
            s.spawn(move || {
                for i in 0..EACH {
                    let (status, screen) = confirm_in(tmux, &format!("whitelist add cmd-{w}-{i}"));
                    assert_eq!(status, 0, "{screen}");
                }
            });
        }
    });
    let text = std::fs::read_to_string(f.path(".agents/terminal.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let mut got: Vec<&str> = json["commandWhitelist"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    got.sort_unstable();
    let mut want: Vec<String> = (0..WRITERS).flat_map(|w| (0..EACH).map(move |i| format!("cmd-{w}-{i}"))).collect();
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(json["confirmationTimeoutSeconds"], CONFIRM_SECS);
    let out = f.command(BIN, &["check", "cmd-3-4"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn trust_shows_the_loosening_parts_and_needs_the_code() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    std::fs::write(
        f.path(".agents/terminal.json"),
        format!("{{\"confirmationTimeoutSeconds\": {CONFIRM_SECS}, \"commandWhitelist\": [\"touch\"]}}\n"),
    )
    .unwrap();
    let check = || f.command(BIN, &["check", "touch ran.txt"]).stdin(Stdio::null()).output().unwrap().status.code();
    assert_eq!(check(), Some(10), "an untrusted whitelist applied");
    let (status, screen) = confirm_in(&tmux, "trust");
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("whitelist entry `touch`"), "{screen}");
    assert!(screen.contains("trusted "), "{screen}");
    assert_eq!(check(), Some(0), "the trusted whitelist does not apply");
    // An edit by anyone but agentsh revokes it.
    std::fs::write(f.path(".agents/terminal.json"), "{\"commandWhitelist\": [\"touch\", \"curl\"]}\n").unwrap();
    assert_eq!(check(), Some(10));
}

#[test]
fn the_audit_log_records_the_persons_answers() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    for key in ["y", "n"] {
        let pane = tmux.window(r#""$AGENTSH" -c 'touch answered.txt'"#);
        pane.await_prompt();
        sleep(Duration::from_millis(200));
        pane.keys(key);
        pane.finish(EXPECT_MS);
    }
    let log = std::fs::read_to_string(f.tmp.path().join("state/agentsh/audit.jsonl")).expect("the audit log");
    let records: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2, "{log}");
    for (r, outcome) in records.iter().zip(["approved_once", "rejected"]) {
        assert_eq!(r["outcome"], outcome, "{r}");
        assert_eq!(r["decided_by"]["by"], "person", "{r}");
        // The person's answer time: at least the pause before the key.
        assert!(r["answer_ms"].as_u64().unwrap() >= 300, "{r}");
        assert!(r["tty"].as_str().unwrap().starts_with("/dev/pts/"), "{r}");
    }
    assert_eq!(records[0]["offered_entries"], serde_json::json!(["touch answered.txt", "touch"]));
}

/// The first answer wins: the prompt is on the terminal, and `agentsh approve` from another
/// process answers it; the prompt says so, the terminal comes back as it was, the command runs.
#[test]
fn an_answer_from_the_queue_ends_the_prompt_and_restores_the_terminal() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt'; echo $? > status; stty -g > after"#);
    pane.await_prompt();
    let ids = f.pending(1);
    f.approve(&ids[0], None);
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("answered in `agentsh approvals`: allowed once"), "screen:\n{screen}");
    // Issue 29, item 6: the request is in the queue too, but no "waiting" line sits above a
    // prompt the person answers right there.
    assert!(!screen.contains(WAITING), "screen:\n{screen}");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "0");
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(f.path("ran.txt").exists());
}

/// Claude Code's start-up ran two commands at once and both prompted on one terminal: the
/// person's `y` approved the one they were not reading. One prompt at a time, each whole.
#[test]
fn two_prompts_never_share_a_terminal() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    // Both in the terminal's foreground (no job control in `sh -c`), started together.
    let pane = tmux.window(r#""$AGENTSH" -c 'touch a.txt' & "$AGENTSH" -c 'touch b.txt'; wait"#);
    let first = pane.await_prompt();
    // The second has registered and is waiting its turn: still one prompt on the screen.
    f.pending(2);
    sleep(Duration::from_millis(1500));
    let screen = pane.screen();
    assert_eq!(screen.matches(PROMPT).count(), 1, "two prompts at once:\n{screen}");
    let (asked, other) = if first.contains("touch a.txt") { ("a.txt", "b.txt") } else { ("b.txt", "a.txt") };
    pane.keys("y");
    // Then the second prompt, for the other command, whole and on its own.
    pane.wait_for_n(PROMPT, 2, EXPECT_MS);
    // The first prompt's status line became its outcome; the second has its own.
    let start = Instant::now();
    let screen = loop {
        let screen = pane.screen();
        let after = screen.split("agentsh: allowed once").nth(1).unwrap_or_default();
        if after.contains("time left:") {
            break screen;
        }
        assert!(start.elapsed() < Duration::from_millis(EXPECT_MS), "no second prompt:\n{screen}");
        sleep(Duration::from_millis(50));
    };
    sleep(Duration::from_millis(150));
    let second = &screen[screen.find("agentsh: allowed once").expect("the first was answered")..];
    assert!(second.contains(&format!("touch {other}")), "{screen}");
    assert!(f.path(asked).exists(), "the `y` did not approve the command on the screen:\n{screen}");
    pane.keys("n");
    let (_, screen) = pane.finish(EXPECT_MS);
    assert!(!f.path(other).exists(), "{screen}");
}

// ---------------------------------------------------------------------------------------------
// A pty the agent made: no prompt, the request goes to the person's channel

/// Headless: this test process holds the master, as Codex does for `exec_command` with
/// `tty: true`. With no `agentsh approvals` open, the agent reads why it was refused, at once.
#[test]
fn an_agents_pty_gets_no_prompt_and_the_agent_reads_why() {
    let f = Fixture::new();
    let start = Instant::now();
    let mut p = f.agentsh_on_agent_pty("touch ran.txt");
    let (status, screen) = finish_pty(&mut p);
    assert_no_prompt(&screen);
    assert_rejected(status, &screen, "is not a person's terminal");
    assert!(screen.contains("which is not a terminal program"), "{screen}");
    assert!(start.elapsed() < Duration::from_secs(3), "took {:?}", start.elapsed());
    assert!(!f.path("ran.txt").exists());
}

/// The live probe of issue 14 (`../shared/live/README.md`, "Manual probes"), made harder: the
/// agent types `y` and the right code into its pty. The request waits in the queue, the agent
/// reads one line saying so, and only the person's answer there runs it.
#[test]
fn on_an_agents_pty_the_request_waits_in_the_queue_and_typing_cannot_answer_it() {
    let f = Fixture::with_queue();
    std::fs::create_dir(f.path("docs")).unwrap();
    let mut p = f.agentsh_on_agent_pty("rm -rf ./docs && touch ran");
    let (mut before, _) = p.exp_regex(r"request [0-9a-f]{12}").expect("the waiting line");
    let ids = f.pending(1);
    let code = f.request_file(&ids[0])["code"].as_str().expect("a high-risk code in the queue").to_string();
    // Everything agentsh shows on the pty before the agent types (the pty echoes what it types).
    let until = Instant::now() + Duration::from_millis(700);
    while Instant::now() < until {
        match p.try_read() {
            Some(c) => before.push(c),
            None => sleep(Duration::from_millis(20)),
        }
    }
    assert_no_prompt(&before);
    assert!(!before.contains(&code), "the code reached the agent's pty:\n{before}");
    // The agent types everything it could: y, a, the code (as if it had read it somewhere).
    p.send(&format!("y\ra1\r{code}\r")).unwrap();
    p.flush().unwrap();
    sleep(Duration::from_millis(500));
    assert!(f.path("docs").exists() && !f.path("ran").exists(), "typing into its own pty approved it");
    f.approve(&ids[0], Some(&code));
    let (status, rest) = finish_pty(&mut p);
    let screen = format!("{before}{rest}");
    assert_eq!(status, 0, "{screen}");
    assert!(!f.path("docs").exists() && f.path("ran").exists(), "{screen}");
    assert_no_prompt(&screen);
    let waiting: Vec<&str> = before.lines().filter(|l| l.starts_with("agentsh:")).collect();
    assert_eq!(waiting.len(), 1, "{screen}");
    assert!(waiting[0].starts_with(WAITING), "{screen}");
}

/// `script` sits in the person's tmux pane and makes a pty for what it runs, as an agent's UI in
/// the person's terminal does. agentsh on that pty must not draw on it, though a person is
/// typing into the pane above it.
#[test]
fn a_pty_made_by_a_program_in_the_persons_terminal_gets_no_prompt() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"script -qec '"$AGENTSH" -c "touch ran.txt"' /dev/null"#);
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_no_prompt(&screen);
    assert_rejected(status, &screen, "its other side is held by `script`");
    assert!(!f.path("ran.txt").exists());

    // With the queue on: it waits there; keys typed into the pane reach only `script`'s pty.
    let f = Fixture::with_queue();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#"script -qec '"$AGENTSH" -c "touch ran.txt"' /dev/null"#);
    pane.wait_for(WAITING);
    let ids = f.pending(1);
    pane.keys("y");
    sleep(Duration::from_millis(500));
    assert!(!f.path("ran.txt").exists(), "a key typed into the pty approved it");
    f.approve(&ids[0], None);
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert_no_prompt(&screen);
    assert!(f.path("ran.txt").exists(), "{screen}");
}

/// A tmux pane is the person's only while every terminal tmux shows it on is: here the agent has
/// attached a client from a pty it holds, so it can read the pane and type into it.
#[test]
fn the_persons_tmux_attached_from_an_agents_pty_is_not_the_persons() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let mut client = pty(
        {
            let mut c = Command::new("tmux");
            c.arg("-S").arg(&tmux.socket).args(["attach", "-t", "t"]).env("TERM", "xterm");
            c
        },
        EXPECT_MS,
    );
    // Attached once tmux lists a client.
    let start = Instant::now();
    while String::from_utf8_lossy(&tmux.run(&["list-clients"]).stdout).trim().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(5), "the client did not attach");
        sleep(Duration::from_millis(50));
    }
    let pane = tmux.window(r#""$AGENTSH" -c 'touch ran.txt'"#);
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_no_prompt(&screen);
    assert_rejected(status, &screen, "also shows it on");
    assert!(!f.path("ran.txt").exists());
    let _ = client.send_control('b');
    drop(client);
}

#[test]
fn the_approvals_ui_refuses_an_agents_pty() {
    // It shows the codes of high-risk requests and answers requests.
    let f = Fixture::new();
    let mut p = pty(f.command(BIN, &["approvals"]), EXPECT_MS);
    let (status, screen) = finish_pty(&mut p);
    assert_ne!(status, 0, "{screen}");
    assert!(screen.contains("the approvals UI needs a person's terminal"), "{screen}");
}

#[test]
fn no_terminal_refuses_at_once() {
    let f = Fixture::new();
    let start = Instant::now();
    // setsid(1): a new session has no controlling terminal, so /dev/tty cannot be opened.
    let out = f
        .command("setsid", &[BIN, "-c", "touch ran.txt"])
        .stdin(Stdio::null())
        .output()
        .expect("run setsid (util-linux)");
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_rejected(out.status.code().unwrap_or(-1), &stderr, "no one to ask");
    assert!(stderr.contains("no controlling terminal"), "{stderr}");
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn commands_that_do_not_need_the_terminal_cannot_reach_it() {
    // A command whose stdin is not the terminal runs in its own session: it cannot open
    // /dev/tty, so nothing it leaves behind can push keystrokes (TIOCSTI) into a later prompt.
    let f = Fixture::new();
    let probe = "if true </dev/tty 2>/dev/null; then echo has-tty; else echo no-tty; fi";
    let mut p = f.sh_on_agent_pty(&format!("\"$AGENTSH\" -c '{probe}' < /dev/null"));
    let (status, screen) = finish_pty(&mut p);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("no-tty"), "{screen}");
    // With the terminal on stdin (an editor, a pager), it keeps the terminal.
    let mut p = f.agentsh_on_agent_pty(probe);
    let (status, screen) = finish_pty(&mut p);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("has-tty"), "{screen}");
}

/// Issue 17, item 12: a dumb terminal gets no escape sequence: the countdown is not redrawn
/// every second, and the rest is plain text. The bytes are taken from the pane as agentsh wrote
/// them (`pipe-pane`), not from tmux's rendering.
#[test]
fn term_dumb_gets_no_escape_sequences() {
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let raw = f.path("raw.bytes");
    let pane = tmux.window(r#"sleep 0.5; TERM=dumb "$AGENTSH" -c 'touch ran.txt'"#);
    let out = tmux.run(&["pipe-pane", "-t", &pane.id, "-O", &format!("cat >> '{}'", raw.display())]);
    assert!(out.status.success(), "{out:?}");
    pane.await_prompt();
    // Several seconds of countdown, then a rejection.
    sleep(Duration::from_millis(2500));
    pane.press("n");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_rejected(status, &screen, "rejected by the person at the terminal");
    let bytes = std::fs::read(&raw).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("time left:"), "{text:?}");
    assert!(!bytes.contains(&0x1b), "an escape sequence on a dumb terminal: {text:?}");
    assert_eq!(text.matches("time left:").count(), 1, "the countdown is drawn once: {text:?}");
}

/// Issue 17, item 10: the legacy_tiocsti note is shown once per terminal session, not on
/// every prompt.
#[test]
fn the_tiocsti_note_shows_once_per_terminal_session() {
    if std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").map(|v| v.trim() != "1").unwrap_or(true) {
        eprintln!("note: skipped: this kernel has no legacy_tiocsti=1, so there is no note to show");
        return;
    }
    let f = Fixture::new();
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(r#""$AGENTSH" -c 'touch a'; "$AGENTSH" -c 'touch b'"#);
    pane.await_prompt();
    pane.press("n");
    pane.wait_for_n("approve this command?", 2, EXPECT_MS);
    pane.wait_for("time left:");
    sleep(Duration::from_millis(150));
    pane.press("n");
    let (_, screen) = pane.finish(EXPECT_MS);
    assert_eq!(screen.matches("approve this command?").count(), 2, "{screen}");
    assert_eq!(screen.matches("legacy_tiocsti").count(), 1, "{screen}");
}

/// The box's proxy asks about a new host on the person's terminal, as about a command (issue
/// 26): "`curl ...` wants to reach host:80"; y lets the one command reach it, and its output
/// comes through.
#[test]
fn a_new_host_is_asked_about_on_the_persons_terminal() {
    let support = agentsh::run::sandbox::probe();
    if !support.boxable() || support.namespaces != agentsh::run::sandbox::Namespaces::Available {
        assert!(std::env::var_os("AGENTSH_REQUIRE_SANDBOX").is_none_or(|v| v != "1"), "no sandbox: {support:?}");
        eprintln!("skipped: this kernel cannot make the sandbox");
        return;
    }
    let f = Fixture::new();
    std::fs::write(f.tmp.path().join("xdg/agentsh/config.json"), "{}\n").unwrap();
    // In a project: the box grants a workspace only to a git repository (issue 25).
    let init = Command::new("git").args(["init", "-q", "."]).current_dir(f.tmp.path().join("proj")).output().unwrap();
    assert!(init.status.success(), "git init");
    // A stand-in for the host, outside the box.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\nconnection: close\r\n\r\nfrom a host\n");
        }
    });
    let Some(tmux) = f.tmux() else { return };
    let pane = tmux.window(&format!(
        r#"AGENTSH_TEST_RESOLVE=new.example=127.0.0.1:{port} "$AGENTSH" -c 'curl -fsS http://new.example/'"#
    ));
    let screen = pane.await_prompt();
    assert!(screen.contains("connect to new.example:80"), "{screen}");
    assert!(screen.contains("`curl -fsS http://new.example/` wants to reach new.example:80"), "{screen}");
    assert!(screen.contains("a: allow always (`new.example`)"), "{screen}");
    pane.keys("y");
    let (status, screen) = pane.finish(EXPECT_MS);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("from a host"), "{screen}");
}
