//! Issue 24, "one verdict whatever the route": a sample of the commands real coding agents ran
//! (`../shared/eval/friction/agent-corpus.jsonl`, read in place, never copied here) is judged
//! through the shell route's judging (`run::gate::judge_source`), through `check`
//! (`commands::check::judge`) and through `hook` for each agent (`commands::hook::respond`, with
//! the real hook's judging, config and box, and a person who is never reached), and every route
//! must give the same decision. Each decision is read back from what the route answers: the
//! verdict, or the agent's own protocol. A part of the sample also goes through the binary
//! (`agentsh check`, `agentsh hook`), so the processes agree too.
//!
//! Without the corpus the test says so and passes, unless `CI` is set: CI has it, and then its
//! absence fails. One test in its own binary: it sets this process's environment (a scratch
//! HOME and workspace), which no other test may share.

use agentsh::commands::hook::{self, Asked, Live, Protocol, World};
use agentsh::judge::decide::Verdict;
use agentsh::record::audit::Outcome;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// At least this many commands are compared (the "Done when").
const SAMPLE: usize = 2_000;
/// Of which this many also go through the binary, one process per route and command.
const THROUGH_THE_BINARY: usize = 150;
/// What the parity world's person "answers": a marker, so an ask is told from a deny in every
/// protocol's reply.
const ASKED: &str = "PARITY: a person would be asked";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/friction/agent-corpus.jsonl")
}

/// Every `step`-th command of the corpus, from the first, up to `SAMPLE` (and a little more, so
/// the count is met whatever the corpus size).
fn sample(text: &str) -> Vec<String> {
    let commands: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["command"].as_str().map(str::to_string))
        .collect();
    let step = (commands.len() / (SAMPLE + SAMPLE / 10)).max(1);
    commands.into_iter().step_by(step).collect()
}

/// The real hook, except that nobody is asked (the decision is what is compared) and nothing is
/// recorded (the record is `hook`'s own tests' business).
struct Parity(Live);

impl World for Parity {
    fn judge(&self, command: &str, cwd: &Path) -> Verdict {
        self.0.judge(command, cwd)
    }
    fn record(&self, _: &Verdict, _: &Outcome, _: &Path) -> bool {
        true
    }
    fn ask(&self, _: &Verdict, _: &Path, _: &Map<String, Value>) -> Asked {
        Asked::Refused(ASKED.into())
    }
    fn dialog_shown(&self, _: &str, _: &Path) -> bool {
        false
    }
    fn agentsh(&self) -> Option<String> {
        self.0.agentsh()
    }
    fn is_agentsh(&self, path: &Path) -> bool {
        self.0.is_agentsh(path)
    }
}

fn event(p: &Protocol, command: &str, cwd: &Path) -> String {
    json!({"session_id": "parity", "cwd": cwd, "hook_event_name": p.event, "tool_name": p.tool,
           "permission_mode": "default", "tool_input": {"command": command}})
    .to_string()
}

/// The decision an agent reads in the hook's reply: allow (handed back to run through agentsh),
/// ask (the parity person's marker) or deny.
fn decoded(p: &Protocol, code: Option<i32>, stdout: &str, stderr: &str) -> String {
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    let (decision, reason, rewritten) = match p.name {
        "claude-code" => {
            let o = &v["hookSpecificOutput"];
            (
                o["permissionDecision"].as_str(),
                o["permissionDecisionReason"].as_str(),
                o["updatedInput"]["command"].is_string(),
            )
        }
        "codex" if code == Some(hook::BLOCK) => (Some("deny"), Some(stderr.trim()), false),
        "codex" => {
            let o = &v["hookSpecificOutput"];
            (o["permissionDecision"].as_str(), None, o["updatedInput"]["command"].is_string())
        }
        _ => {
            (v["decision"].as_str(), v["reason"].as_str(), v["hookSpecificOutput"]["tool_input"]["command"].is_string())
        }
    };
    match (decision, reason) {
        (Some("deny"), Some(r)) if r.contains(ASKED) || r.contains("not approved:") => "ask".into(),
        // An allowed command runs only as handed back, through agentsh.
        (Some("allow"), _) if rewritten => "allow".into(),
        (Some(d), _) => d.into(),
        (None, _) => format!("no decision (exit {code:?}): {stdout} {stderr}"),
    }
}

/// A scratch HOME and a small git project to judge in, as the friction score uses
/// (`eval/common.py`): nothing of the person running the test applies.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let cwd = home.join("src/demo");
    for d in [&cwd, &home.join(".config"), &home.join(".local/state"), &root.path().join("run")] {
        std::fs::create_dir_all(d).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.path().join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
    for (name, text) in [
        ("README.md", "# demo\n"),
        ("Makefile", "all:\n\tcargo build\n"),
        ("package.json", "{\"name\": \"demo\", \"scripts\": {\"test\": \"node t.js\"}}\n"),
        ("Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n"),
        ("src/main.rs", "fn main() {}\n"),
    ] {
        let path = cwd.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=a", "-c", "user.email=a@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&cwd)
            .env("HOME", &home)
            .output()
            .unwrap();
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "initial"]);
    let vars = [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_RUNTIME_DIR", root.path().join("run")),
    ];
    // SAFETY (of the test, not of agentsh): this test binary holds this one test, and the
    // environment is set before anything reads it or starts a thread.
    unsafe {
        for (k, v) in vars {
            std::env::set_var(k, v);
        }
        std::env::set_var("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        for k in ["AGENTSH_ASK", "TMUX", "TMUX_PANE", "CLAUDE_CODE_ENTRYPOINT", "VIRTUAL_ENV", "TMPDIR"] {
            std::env::remove_var(k);
        }
    }
    std::env::set_current_dir(&cwd).unwrap();
    (root, cwd)
}

#[test]
fn every_route_gives_the_same_decision_on_real_agents_commands() {
    let text = match std::fs::read_to_string(corpus()) {
        Ok(t) => t,
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("CI must have the agent corpus at {} ({e}): the parity test cannot run", corpus().display())
        }
        Err(e) => {
            eprintln!("note: skipped, no agent corpus at {} ({e})", corpus().display());
            return;
        }
    };
    let mut commands = sample(&text);
    assert!(commands.len() >= SAMPLE, "only {} commands in the corpus sample", commands.len());
    // Agents seldom run what is forbidden: a few such commands, so a deny is compared too.
    commands.extend(
        ["rm -rf ~", "rm -rf / --no-preserve-root", "agentsh whitelist add ls", "dd if=/dev/zero of=/dev/sda"]
            .map(String::from),
    );
    commands.push("mkdir -p .agents && echo '{\"commandWhitelist\":[\"chmod\"]}' > .agents/terminal.json".into());
    let (_root, cwd) = scratch();
    let cwd = cwd.canonicalize().unwrap();
    let mut mismatches = Vec::new();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for command in &commands {
        let source = agentsh::run::invocation::Source::Text { text: command.clone(), argv0: None, args: Vec::new() };
        let shell =
            agentsh::run::gate::judge_source(&source, command, &cwd, &Default::default()).2.decision.to_string();
        let check = agentsh::commands::check::judge(command, &cwd, false, false, false).1.decision.to_string();
        let mut routes = vec![("shell", shell.clone()), ("check", check)];
        for p in hook::PROTOCOLS {
            let world = Parity(Live::new(p, Duration::from_secs(1)));
            let r = hook::respond(p, event(p, command, &cwd).as_bytes(), &world);
            routes.push((p.name, decoded(p, Some(r.code), r.stdout.as_deref().unwrap_or(""), &r.stderr)));
        }
        *counts.entry(shell.clone()).or_default() += 1;
        if routes.iter().any(|(_, d)| *d != shell) {
            mismatches.push(format!("{command:?}: {routes:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} commands got different decisions by route:\n{}",
        mismatches.len(),
        commands.len(),
        mismatches.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    // The sample holds every decision, so "the same" is not "all allowed".
    assert!(counts.len() == 3, "decisions in the sample: {counts:?}");
    eprintln!("parity: {} commands, the same decision by every route: {counts:?}", commands.len());

    // The binary too: `agentsh check` and `agentsh hook <agent>`, as the agents run them. A
    // person is never reached there (no terminal, no queue), so an ask comes back "not approved".
    let bin = env!("CARGO_BIN_EXE_agentsh");
    let step = (commands.len() / THROUGH_THE_BINARY).max(1);
    for command in commands.iter().step_by(step) {
        let shell = agentsh::commands::check::judge(command, &cwd, false, false, false).1.decision.to_string();
        let run = |args: &[&str], stdin: &str| {
            use std::io::Write;
            use std::os::unix::process::CommandExt;
            let mut child = std::process::Command::new(bin)
                .args(args)
                // Not in the terminal's foreground: a test run from a terminal draws no prompt there.
                .process_group(0)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        };
        let out = run(&["check", "--stdin"], command);
        let check = match out.status.code() {
            Some(0) => "allow",
            Some(10) => "ask",
            Some(11) => "deny",
            other => panic!("check exited {other:?} on {command:?}"),
        };
        let mut routes = vec![("check", check.to_string())];
        for p in hook::PROTOCOLS {
            let out = run(&["hook", p.name], &event(p, command, &cwd));
            let (o, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            routes.push((p.name, decoded(p, out.status.code(), &o, &e)));
        }
        assert!(routes.iter().all(|(_, d)| *d == shell), "{command:?}: shell route {shell}, {routes:?}");
    }
}
