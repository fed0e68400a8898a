//! Never fail open (issue 24, section 4; issue 27): text nested too deeply to parse, and a
//! crash while judging, end in a refusal with a reason in every route's own terms: `-c` exits
//! 126, `check` says deny (11), the hook blocks. Before, compound commands nested about 1,400
//! deep overflowed the parser's stack and agentsh died of SIGSEGV (139): no message, no audit
//! record, and an agent lets a hook call through on any status but a block.

use std::process::{Command, Output, Stdio};

/// Each form that overflowed the parser's stack, at the size issue 24 reproduced it with.
fn nesting_forms() -> Vec<(&'static str, String)> {
    let nested = |open: &str, inner: &str, close: &str| format!("{}{inner}{}", open.repeat(1500), close.repeat(1500));
    vec![
        ("if", nested("if true; then ", "echo y; ", "fi; ")),
        ("case", nested("case x in x) ", "echo y ", ";; esac ")),
        ("while", nested("while true; do ", "echo y; ", "done; ")),
        ("until", nested("until false; do ", "echo y; ", "done; ")),
        ("for", nested("for i in 1; do ", "echo y; ", "done; ")),
        ("select", nested("select i in 1; do ", "echo y; ", "done; ")),
        ("coproc", format!("{}true", "coproc ".repeat(9000))),
        ("[[ !", format!("[[ {}x ]]", "! ".repeat(9900))),
    ]
}

/// agentsh in a private HOME and working directory, with no terminal.
struct Scene {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let scene = Scene { home: tempfile::tempdir().unwrap(), work: tempfile::tempdir().unwrap() };
        // The judge alone, as where there is no box: these must be refused by it.
        let config = scene.home.path().join(".config/agentsh");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.json"), r#"{"sandbox": {"enabled": false}}"#).unwrap();
        scene
    }

    fn run(&self, args: &[&str], stdin: &str, envs: &[(&str, &str)]) -> Output {
        let h = self.home.path();
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentsh"))
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", h)
            .env("XDG_CONFIG_HOME", h.join(".config"))
            .env("XDG_STATE_HOME", h.join(".local/state"))
            .env("XDG_DATA_HOME", h.join(".local/share"))
            .env("XDG_RUNTIME_DIR", h)
            .env_remove("AGENTSH_ASK")
            .env_remove("AGENTSH_TEST_CRASH_WHILE_JUDGING")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// The hook's event for `agent`'s shell tool.
    fn event(&self, agent: &str, command: &str) -> String {
        let (event, tool) =
            if agent == "gemini" { ("BeforeTool", "run_shell_command") } else { ("PreToolUse", "Bash") };
        serde_json::json!({
            "cwd": self.work.path(),
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": { "command": command },
        })
        .to_string()
    }
}

fn said(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {:.600}\nstderr: {:.600}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const TOO_DEEP: &str = "too deeply nested to judge safely";

#[test]
fn nesting_too_deep_is_refused_with_a_reason_in_every_route() {
    let scene = Scene::new();
    for (form, text) in nesting_forms() {
        let shell = scene.run(&["-c", &text], "", &[]);
        let stderr = String::from_utf8_lossy(&shell.stderr);
        assert!(shell.status.code() == Some(126) && stderr.contains(TOO_DEEP), "-c, {form}: {}", said(&shell));

        let check = scene.run(&["check", "--json", "--stdin"], &text, &[]);
        let verdict: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap_or_default();
        assert!(
            check.status.code() == Some(11)
                && verdict["decision"] == "deny"
                && verdict["reasons"].to_string().contains(TOO_DEEP),
            "check, {form}: {}",
            said(&check)
        );

        // Claude Code's hook answers deny in its JSON; Codex's blocks with status 2.
        let claude = scene.run(&["hook", "claude-code"], &scene.event("claude-code", &text), &[]);
        let answer: serde_json::Value = serde_json::from_slice(&claude.stdout).unwrap_or_default();
        let output = &answer["hookSpecificOutput"];
        assert!(
            claude.status.code() == Some(0)
                && output["permissionDecision"] == "deny"
                && output["permissionDecisionReason"].to_string().contains(TOO_DEEP),
            "hook claude-code, {form}: {}",
            said(&claude)
        );
        let codex = scene.run(&["hook", "codex"], &scene.event("codex", &text), &[]);
        let stderr = String::from_utf8_lossy(&codex.stderr);
        assert!(codex.status.code() == Some(2) && stderr.contains(TOO_DEEP), "hook codex, {form}: {}", said(&codex));
    }
}

/// A crash no input can cause any more, made on purpose (debug builds only: see
/// `run::crash_guard::crash_if_asked`): each route still refuses, with a reason, as its
/// protocol says.
#[test]
fn a_crash_while_judging_is_a_refusal_in_every_route() {
    let scene = Scene::new();
    let text = "echo \"$(ls)\"";
    let crash = [("AGENTSH_TEST_CRASH_WHILE_JUDGING", "1")];
    let crashed = "agentsh crashed while judging the command";

    // Without the crash, the same command is allowed: the refusals below come from it.
    let fine = scene.run(&["check", "--json", "--stdin"], text, &[]);
    assert_eq!(fine.status.code(), Some(0), "{}", said(&fine));

    let shell = scene.run(&["-c", text], "", &crash);
    let stderr = String::from_utf8_lossy(&shell.stderr);
    assert!(
        shell.status.code() == Some(126) && stderr.contains(&format!("agentsh: denied: {crashed}")),
        "{}",
        said(&shell)
    );
    assert!(shell.stdout.is_empty(), "nothing ran: {}", said(&shell));

    let check = scene.run(&["check", "--json", "--stdin"], text, &crash);
    let verdict: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap_or_default();
    assert!(
        check.status.code() == Some(11)
            && verdict["decision"] == "deny"
            && verdict["reasons"].to_string().contains(crashed),
        "{}",
        said(&check)
    );
    let human = scene.run(&["check", "--stdin"], text, &crash);
    let stdout = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.status.code() == Some(11) && stdout.starts_with("deny:") && stdout.contains("crashed"),
        "{}",
        said(&human)
    );

    for agent in ["claude-code", "codex", "gemini"] {
        let hook = scene.run(&["hook", agent], &scene.event(agent, text), &crash);
        let stderr = String::from_utf8_lossy(&hook.stderr);
        assert!(
            hook.status.code() == Some(2) && stderr.contains(crashed) && hook.stdout.is_empty(),
            "hook {agent}: {}",
            said(&hook)
        );
    }
}
