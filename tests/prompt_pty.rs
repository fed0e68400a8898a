//! End-to-end tests of the approval prompt in real pseudo-terminals.
//!
//! Each test spawns agentsh (or `sh -c` around it) with rexpect, which gives the child its own
//! session with the pty as controlling terminal, so `/dev/tty` is the pty and agentsh is in
//! its foreground: exactly what a person's terminal looks like. Keys are written to the pty
//! master; the prompt and the command's output are read back from it. Whether a command ran
//! is checked by the file it creates, never by its output alone.

use rexpect::process::WaitStatus;
use rexpect::session::{Options, PtySession, spawn_with_options};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_agentsh");
/// The shortest confirmation timeout the config accepts.
const CONFIRM_SECS: u64 = 10;
/// How long any expectation may wait, except the timeout test's.
const EXPECT_MS: u64 = 8_000;
const PROMPT: &str = "agentsh: approve this command?";
const NOT_APPROVED: &str = "Error: Command was not approved (rejected or timed out).";

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

    /// A path inside the project directory (the commands' cwd).
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join("proj").join(name)
    }

    /// `program args` in the project directory with the scratch environment; `$AGENTSH` names
    /// the binary for shell scripts.
    fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(self.path(""))
            .env("HOME", self.tmp.path().join("home"))
            .env("XDG_CONFIG_HOME", self.tmp.path().join("xdg"))
            .env("XDG_STATE_HOME", self.tmp.path().join("state"))
            // A private approval queue and pause state, never the person's real ones.
            .env("XDG_RUNTIME_DIR", self.tmp.path())
            .env("XDG_DATA_HOME", self.tmp.path().join("home/.local/share"))
            .env("AGENTSH", BIN)
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .env_remove("AGENTSH_ASK");
        cmd
    }

    /// `agentsh -c TEXT` on a fresh pty.
    fn agentsh(&self, text: &str) -> PtySession {
        pty(self.command(BIN, &["-c", text]), EXPECT_MS)
    }

    /// `sh -c SCRIPT` on a fresh pty, for pipes, sleeps and `stty` around agentsh.
    fn sh(&self, script: &str) -> PtySession {
        pty(self.command("sh", &["-c", script]), EXPECT_MS)
    }
}

fn pty(cmd: Command, expect_ms: u64) -> PtySession {
    let options = Options::new().timeout_ms(Some(expect_ms)).strip_ansi_escape_codes(true);
    spawn_with_options(cmd, options).expect("spawn on a pty")
}

/// Waits until the prompt is drawn and waiting for keys; returns the screen up to then.
fn await_prompt(p: &mut PtySession) -> String {
    let before = p.exp_string(PROMPT).expect("the prompt appears");
    let block = p.exp_string("time left:").expect("the prompt's status line appears");
    // The dialog flushes type-ahead right after drawing: let that happen before typing, as a
    // person's reaction time always does.
    sleep(Duration::from_millis(150));
    format!("{before}{PROMPT}{block}")
}

fn keys(p: &mut PtySession, keys: &str) {
    p.send(keys).expect("write to the pty");
    p.flush().expect("flush the pty");
}

/// Reads to the end and returns the exit status and what was left on the screen.
fn finish(p: &mut PtySession) -> (i32, String) {
    let rest = p.exp_eof().expect("the program ends");
    match p.process().wait().expect("wait for the child") {
        WaitStatus::Exited(_, code) => (code, rest),
        other => panic!("ended by {other:?}; screen:\n{rest}"),
    }
}

fn assert_rejected(status: i32, screen: &str, reason: &str) {
    assert_eq!(status, 126, "screen:\n{screen}");
    assert!(screen.contains(NOT_APPROVED), "screen:\n{screen}");
    assert!(screen.contains(reason), "want {reason:?}; screen:\n{screen}");
}

#[test]
fn y_approves_and_the_exit_status_comes_through() {
    let f = Fixture::new();
    let mut p = f.agentsh("touch ran.txt; exit 3");
    let screen = await_prompt(&mut p);
    assert!(screen.contains("y: allow once"), "{screen}");
    assert!(!f.path("ran.txt").exists(), "ran before it was approved");
    keys(&mut p, "y");
    let (status, rest) = finish(&mut p);
    assert!(rest.contains("agentsh: allowed once"), "{rest}");
    assert_eq!(status, 3, "{rest}");
    assert!(f.path("ran.txt").exists(), "approved but did not run:\n{rest}");
}

#[test]
fn n_rejects_and_nothing_runs() {
    let f = Fixture::new();
    let mut p = f.agentsh("touch ran.txt");
    await_prompt(&mut p);
    keys(&mut p, "n");
    let (status, rest) = finish(&mut p);
    assert_rejected(status, &rest, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn no_answer_times_out_on_time() {
    let f = Fixture::new();
    let start = Instant::now();
    let mut p = pty(f.command(BIN, &["-c", "touch ran.txt"]), (CONFIRM_SECS + 10) * 1000);
    await_prompt(&mut p);
    let (status, rest) = finish(&mut p);
    let elapsed = start.elapsed();
    assert_rejected(status, &rest, "timed out: no one answered");
    assert!(rest.contains(&format!("agentsh: timed out after {CONFIRM_SECS}s")), "{rest}");
    let secs = elapsed.as_secs_f64();
    assert!((9.0..15.0).contains(&secs), "took {secs:.1}s for a {CONFIRM_SECS}s timeout");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn ctrl_c_rejects_and_restores_the_terminal() {
    let f = Fixture::new();
    let mut p = f.sh(r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt'; echo $? > status; stty -g > after"#);
    await_prompt(&mut p);
    p.send_control('c').unwrap();
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 0, "the shell went on after agentsh:\n{rest}");
    assert_rejected(126, &rest, "rejected by the person at the terminal");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "126");
    assert!(!read("before").trim().is_empty());
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn sigterm_while_asking_rejects_and_restores_the_terminal() {
    let f = Fixture::new();
    // Without job control the background job stays in the foreground process group.
    let mut p = f.sh(
        r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt' & echo $! > pid; wait $!; echo $? > status; stty -g > after"#,
    );
    await_prompt(&mut p);
    let pid = std::fs::read_to_string(f.path("pid")).unwrap();
    assert!(Command::new("kill").args(["-TERM", pid.trim()]).status().unwrap().success());
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 0, "the shell went on after agentsh:\n{rest}");
    assert_rejected(126, &rest, "interrupted by SIGTERM");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "143", "agentsh did not die of the SIGTERM it was sent");
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn a_y_piped_to_stdin_does_not_approve() {
    let f = Fixture::new();
    let mut p = f.sh(r#"yes y | head -n 100 | "$AGENTSH" -c 'touch ran.txt'"#);
    await_prompt(&mut p);
    assert!(!f.path("ran.txt").exists(), "stdin approved it");
    keys(&mut p, "n");
    let (status, rest) = finish(&mut p);
    assert_rejected(status, &rest, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn keys_typed_before_the_prompt_are_discarded() {
    let f = Fixture::new();
    let mut p = f.sh(r#"sleep 1; "$AGENTSH" -c 'touch ran.txt'"#);
    // Typed while the shell sleeps: queued on the terminal before agentsh has started.
    sleep(Duration::from_millis(300));
    keys(&mut p, "y");
    await_prompt(&mut p);
    assert!(!f.path("ran.txt").exists(), "type-ahead approved it");
    keys(&mut p, "n");
    let (status, rest) = finish(&mut p);
    assert_rejected(status, &rest, "rejected by the person at the terminal");
    assert!(!f.path("ran.txt").exists());
}

#[test]
fn high_risk_needs_the_code() {
    let f = Fixture::new();
    let text = "rm -rf ./build && touch ran";
    std::fs::create_dir(f.path("build")).unwrap();

    let mut p = f.agentsh(text);
    let screen = await_prompt(&mut p);
    assert!(screen.contains("HIGH"), "{screen}");
    keys(&mut p, "y\r");
    let (status, rest) = finish(&mut p);
    assert_rejected(status, &rest, "rejected by the person at the terminal");
    assert!(f.path("build").exists() && !f.path("ran").exists());

    let mut p = f.agentsh(text);
    let screen = await_prompt(&mut p);
    let code = code_on(&screen);
    keys(&mut p, &format!("{code}\r"));
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 0, "{rest}");
    assert!(!f.path("build").exists() && f.path("ran").exists(), "{rest}");
}

/// The approval code shown in "type the code NNNN then Enter".
fn code_on(screen: &str) -> String {
    let after = screen.split("type the code ").nth(1).unwrap_or_else(|| panic!("no code shown:\n{screen}"));
    let code: String = after.chars().take_while(char::is_ascii_digit).collect();
    assert_eq!(code.len(), 4, "{screen}");
    code
}

#[test]
fn always_saves_the_entry_and_the_next_run_does_not_ask() {
    let f = Fixture::new();
    let mut p = f.agentsh("touch ran.txt");
    await_prompt(&mut p);
    keys(&mut p, "a");
    let (_, seen) = p
        .exp_any(vec![
            rexpect::ReadUntil::String("always allow which rule?".into()),
            rexpect::ReadUntil::String("allowed, and always".into()),
        ])
        .expect("always is offered");
    if seen.contains("which rule") {
        p.exp_string("1. touch ran.txt").expect("the whole command is the first choice");
        keys(&mut p, "1");
    }
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 0, "{rest}");
    assert!(f.path("ran.txt").exists());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.path(".agents/terminal.json")).unwrap()).unwrap();
    assert_eq!(json["commandWhitelist"], serde_json::json!(["touch ran.txt"]), "{json}");
    assert_eq!(json["confirmationTimeoutSeconds"], CONFIRM_SECS, "other settings were lost: {json}");

    std::fs::remove_file(f.path("ran.txt")).unwrap();
    let mut p = f.agentsh("touch ran.txt");
    let (status, screen) = finish(&mut p);
    assert_eq!(status, 0, "{screen}");
    assert!(!screen.contains(PROMPT), "asked again:\n{screen}");
    assert!(f.path("ran.txt").exists());
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

/// Runs a loosening management command on a pty and confirms it with the code shown.
fn confirm_on_pty(f: &Fixture, args: &[&str]) -> (i32, String) {
    let mut p = pty(f.command(BIN, args), EXPECT_MS);
    let screen = await_prompt(&mut p);
    keys(&mut p, &format!("{}\r", code_on(&screen)));
    let (status, rest) = finish(&mut p);
    (status, format!("{screen}{rest}"))
}

#[test]
fn whitelist_add_needs_the_person_and_concurrent_adds_lose_nothing() {
    // Each `whitelist add` is confirmed on its own pty, 8 writers at once: every entry survives,
    // and agentsh's own writes keep the project file trusted.
    const WRITERS: usize = 8;
    const EACH: usize = 5;
    let f = Fixture::new();
    let mut p = pty(f.command(BIN, &["whitelist", "add", "touch"]), EXPECT_MS);
    let screen = await_prompt(&mut p);
    assert!(screen.contains("adds `touch` to the whitelist"), "{screen}");
    keys(&mut p, "y\r");
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 1, "{rest}");
    assert!(rest.contains("not confirmed: rejected"), "{rest}");
    let unchanged = std::fs::read_to_string(f.path(".agents/terminal.json")).unwrap();
    assert!(!unchanged.contains("touch"), "{unchanged}");

    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let f = &f;
            s.spawn(move || {
                for i in 0..EACH {
                    let (status, screen) = confirm_on_pty(f, &["whitelist", "add", &format!("cmd-{w}-{i}")]);
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
    std::fs::write(
        f.path(".agents/terminal.json"),
        format!("{{\"confirmationTimeoutSeconds\": {CONFIRM_SECS}, \"commandWhitelist\": [\"touch\"]}}\n"),
    )
    .unwrap();
    let check = || f.command(BIN, &["check", "touch ran.txt"]).stdin(Stdio::null()).output().unwrap().status.code();
    assert_eq!(check(), Some(10), "an untrusted whitelist applied");
    let (status, screen) = confirm_on_pty(&f, &["trust"]);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("whitelist entry `touch`"), "{screen}");
    assert!(screen.contains("trusted "), "{screen}");
    assert_eq!(check(), Some(0), "the trusted whitelist does not apply");
    // An edit by anyone but agentsh revokes it.
    std::fs::write(f.path(".agents/terminal.json"), "{\"commandWhitelist\": [\"touch\", \"curl\"]}\n").unwrap();
    assert_eq!(check(), Some(10));
}

#[test]
fn commands_that_do_not_need_the_terminal_cannot_reach_it() {
    // A command whose stdin is not the terminal runs in its own session: it cannot open
    // /dev/tty, so nothing it leaves behind can push keystrokes (TIOCSTI) into a later prompt.
    let f = Fixture::new();
    let probe = "if true </dev/tty 2>/dev/null; then echo has-tty; else echo no-tty; fi";
    let mut p = f.sh(&format!("\"$AGENTSH\" -c '{probe}' < /dev/null"));
    let (status, screen) = finish(&mut p);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("no-tty"), "{screen}");
    // With the terminal on stdin (an editor, a pager), it keeps the terminal.
    let mut p = f.agentsh(probe);
    let (status, screen) = finish(&mut p);
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("has-tty"), "{screen}");
}

#[test]
fn the_audit_log_records_the_persons_answers() {
    let f = Fixture::new();
    for key in ["y", "n"] {
        let mut p = f.agentsh("touch answered.txt");
        await_prompt(&mut p);
        sleep(Duration::from_millis(200));
        keys(&mut p, key);
        finish(&mut p);
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
    let mut p = f.sh(r#"stty -g > before; "$AGENTSH" -c 'touch ran.txt'; echo $? > status; stty -g > after"#);
    await_prompt(&mut p);
    let out = f.command(BIN, &["approvals", "--json"]).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = listed[0]["id"].as_str().expect("the prompt's request is in the queue").to_string();
    let approved = f.command(BIN, &["approve", &id]).output().unwrap();
    assert!(approved.status.success(), "{approved:?}");
    let (status, rest) = finish(&mut p);
    assert_eq!(status, 0, "{rest}");
    assert!(rest.contains("answered in `agentsh approvals`: allowed once"), "screen:\n{rest}");
    let read = |name: &str| std::fs::read_to_string(f.path(name)).unwrap();
    assert_eq!(read("status").trim(), "0");
    assert_eq!(read("before"), read("after"), "terminal settings changed");
    assert!(f.path("ran.txt").exists());
}
