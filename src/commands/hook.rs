//! `agentsh hook PROTOCOL`: agentsh's judgement for agents whose shell cannot be replaced.
//! Reads one tool-call event as JSON on stdin and answers in the agent's own protocol. It never
//! runs the command and never prompts on the terminal: an `ask` goes back to the agent, whose
//! own interface asks the person (or, where the protocol cannot ask, it becomes a deny).
//!
//! Fail closed: malformed or oversized input, a missing command, a wrong event, or an internal
//! error all block the call (exit 2 with the reason on stderr: every supported agent treats
//! exit 2 as "block", while other failures would let the call through).

use crate::cli::{HookArgs, HookProtocol};
use crate::judge::decide::Verdict;
use crate::model::Decision;
use crate::text::sanitize::sanitize;
use anyhow::Result;
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};

/// More input than this is refused unread: a tool call is a few kilobytes.
pub const MAX_INPUT_BYTES: u64 = 1024 * 1024;
/// Exit status that blocks the tool call in every supported agent.
pub const BLOCK: i32 = 2;

/// One supported protocol, as data: what it is called, which event and tool it gates, and how
/// agentsh's three decisions map onto it.
pub struct Protocol {
    pub name: &'static str,
    pub agent: &'static str,
    pub event: &'static str,
    pub tool: &'static str,
    pub mapping: &'static str,
}

pub const PROTOCOLS: &[Protocol] = &[
    Protocol {
        name: "claude-code",
        agent: "Claude Code",
        event: "PreToolUse",
        tool: "Bash",
        mapping: "allow -> allow; ask -> ask (Claude Code asks the person); deny -> deny with the reason",
    },
    Protocol {
        name: "codex",
        agent: "Codex",
        event: "PreToolUse",
        tool: "Bash",
        mapping: "allow -> no objection (Codex's own approval policy applies); ask and deny -> blocked (exit 2) with the reason, since Codex hooks cannot ask",
    },
    Protocol {
        name: "gemini",
        agent: "Gemini CLI",
        event: "BeforeTool",
        tool: "run_shell_command",
        mapping: "allow -> allow; ask and deny -> deny with the reason, since Gemini CLI hooks cannot ask",
    },
];

/// Named so nobody wires them in expecting a gate.
pub const NOT_SUPPORTED: &str = "not supported: Codex `notify` (runs after a turn, cannot block), Codex execpolicy \
    rules (static prefix rules, no external program), Gemini CLI policy files (static rules); \
    for these, make agentsh the agent's shell instead";

fn protocol(p: HookProtocol) -> &'static Protocol {
    let name = match p {
        HookProtocol::ClaudeCode => "claude-code",
        HookProtocol::Codex => "codex",
        HookProtocol::Gemini => "gemini",
    };
    PROTOCOLS.iter().find(|x| x.name == name).expect("every HookProtocol has a row")
}

pub fn run(args: HookArgs) -> Result<i32> {
    if args.list {
        for p in PROTOCOLS {
            println!("{:<12} {} {}, tool {}: {}", p.name, p.agent, p.event, p.tool, p.mapping);
        }
        println!("{NOT_SUPPORTED}");
        return Ok(0);
    }
    let Some(proto) = args.protocol else {
        eprintln!("agentsh: hook needs a protocol");
        eprintln!("hint: agentsh hook --list");
        return Ok(crate::model::exit::USAGE);
    };
    // A crash must block the call, never let it through: the release build aborts on panic,
    // which agents treat as a non-blocking hook failure.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("agentsh: internal error, the command is blocked: {}", sanitize(&info.to_string()));
        std::process::exit(BLOCK);
    }));
    let mut input = Vec::new();
    let read = std::io::stdin().take(MAX_INPUT_BYTES + 1).read_to_end(&mut input);
    let reply = match read {
        Ok(_) => {
            let p = protocol(proto);
            // The allowed command is handed back as `agentsh -c '<command>'`, so it runs through
            // agentsh (and its sandbox) rather than the agent's own shell.
            let me = std::env::current_exe().ok().and_then(|p| p.to_str().map(str::to_string));
            respond(p, &input, &|command, cwd| judge_in(p, command, cwd), me.as_deref())
        }
        Err(e) => Reply::block(format!("agentsh: cannot read the hook input: {e}; the command is blocked")),
    };
    if let Some(out) = &reply.stdout {
        println!("{out}");
    }
    if !reply.stderr.is_empty() {
        eprintln!("{}", reply.stderr);
    }
    Ok(reply.code)
}

/// Loads the config for `cwd` and judges, exactly as the gate does.
/// The decision is recorded in the audit log; if that fails, nothing is allowed.
fn judge_in(p: &Protocol, command: &str, cwd: &Path) -> Verdict {
    let mut config = crate::policy::config::load(cwd);
    crate::run::explain::print_warnings(&config.warnings);
    let mut v = crate::run::judging::judge_once(
        command,
        std::mem::take(&mut config.policy),
        crate::run::judging::Route::Hook { block: BLOCK },
    );
    let trail = crate::record::audit::Trail::new(&config, cwd).for_hook(p.agent, p.tool);
    if trail.record(&v, &crate::record::audit::Outcome::Hook(v.decision), None, &[]).is_err() {
        v.decision = Decision::Deny;
        v.reasons.push("the audit log cannot be written, and every command is recorded before it runs".into());
    }
    v
}

/// What to print and the exit status.
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    pub stdout: Option<String>,
    pub stderr: String,
    pub code: i32,
}

impl Reply {
    fn block(reason: String) -> Reply {
        Reply { stdout: None, stderr: reason, code: BLOCK }
    }
    fn json(v: Value) -> Reply {
        Reply { stdout: Some(v.to_string()), stderr: String::new(), code: 0 }
    }
}

/// The answer to one event. `judge` is given the command and the working directory.
pub fn respond(p: &Protocol, input: &[u8], judge: &dyn Fn(&str, &Path) -> Verdict, agentsh: Option<&str>) -> Reply {
    let malformed = |why: &str| {
        Reply::block(format!("agentsh: the {} hook input is malformed ({why}), so the command is blocked", p.agent))
    };
    if input.len() as u64 > MAX_INPUT_BYTES {
        return malformed(&format!("over {MAX_INPUT_BYTES} bytes"));
    }
    let event: Value = match serde_json::from_slice(input) {
        Ok(v) => v,
        Err(e) => return malformed(&format!("not JSON: {e}")),
    };
    let Some(obj) = event.as_object() else { return malformed("not a JSON object") };
    if let Some(name) = obj.get("hook_event_name")
        && name.as_str() != Some(p.event)
    {
        return malformed(&format!("event {} is not {}", sanitize(&name.to_string()), p.event));
    }
    let Some(tool) = obj.get("tool_name").and_then(Value::as_str) else {
        return malformed("no tool_name");
    };
    if tool != p.tool {
        // Not a shell command: no opinion, the agent's own rules apply.
        return Reply::json(json!({}));
    }
    let Some(command) = obj.get("tool_input").and_then(|t| t.get("command")).and_then(Value::as_str) else {
        return malformed("no tool_input.command string");
    };
    let cwd = obj
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let v = judge(command, &cwd);
    // Only an allowed command is rewritten. An `ask` goes to the agent's own prompt (Claude
    // Code) as written: rewritten, the agentsh inside would judge it again and, with no
    // terminal, refuse what the person just approved. So the person is asked once.
    let rewritten = match (v.decision, agentsh) {
        (Decision::Allow, Some(me)) => obj.get("tool_input").cloned().map(|mut input| {
            input["command"] = Value::String(through_agentsh(me, command));
            input
        }),
        _ => None,
    };
    answer(p, &v, rewritten)
}

/// `'<agentsh>' -c '<command>'`: the command, unchanged, run by agentsh.
pub fn through_agentsh(agentsh: &str, command: &str) -> String {
    let q = |s: &str| {
        shlex::try_quote(s).map(|q| q.into_owned()).unwrap_or_else(|_| format!("'{}'", s.replace('\'', r"'\''")))
    };
    format!("{} -c {}", q(agentsh), q(command))
}

/// The reply in each agent's protocol. `rewritten` (allowed commands only) is the tool input
/// with the command run through agentsh; all three agents (at the versions in docs/agents.md)
/// take a replacement input from a PreToolUse/BeforeTool hook.
fn answer(p: &Protocol, v: &Verdict, rewritten: Option<Value>) -> Reply {
    let reason = reason_text(v);
    match (p.name, v.decision) {
        ("claude-code", d) => {
            let mut out = json!({
                "hookEventName": p.event,
                "permissionDecision": d.as_str(),
                "permissionDecisionReason": reason,
            });
            if let Some(input) = rewritten {
                out["updatedInput"] = input;
            }
            Reply::json(json!({ "hookSpecificOutput": out }))
        }
        // Codex 0.169 takes `updatedInput` only with `permissionDecision: allow`.
        ("codex", Decision::Allow) => Reply::json(match rewritten {
            Some(input) => json!({
                "hookSpecificOutput": {
                    "hookEventName": p.event,
                    "permissionDecision": "allow",
                    "permissionDecisionReason": reason,
                    "updatedInput": input,
                }
            }),
            None => json!({}),
        }),
        ("codex", _) => Reply::block(reason),
        (_, Decision::Allow) => {
            let mut out = json!({ "decision": "allow", "reason": reason });
            if let Some(input) = rewritten {
                out["hookSpecificOutput"] = json!({ "hookEventName": p.event, "tool_input": input });
            }
            Reply::json(out)
        }
        (_, _) => Reply::json(json!({ "decision": "deny", "reason": reason })),
    }
}

/// One paragraph the model (or the person, for ask) can act on: what, why, what to do.
pub fn reason_text(v: &Verdict) -> String {
    let cmd = sanitize(v.command.trim());
    let parts: Vec<String> = v
        .blocking_parts()
        .map(|part| {
            let text =
                if part.assessment.argv.is_empty() { part.assessment.context.clone() } else { part.assessment.text() };
            format!(
                "{} ({}, {}): {}",
                sanitize(&text),
                part.assessment.risk,
                part.assessment.category,
                sanitize(&part.assessment.reasons.join("; "))
            )
        })
        .collect();
    let why = if parts.is_empty() { sanitize(&v.reasons.join("; ")) } else { parts.join(" | ") };
    match v.decision {
        Decision::Allow => format!("agentsh: allowed: {cmd} ({})", v.risk),
        Decision::Ask => format!(
            "agentsh: needs a person's approval: {cmd}. {why}. If it is needed, ask the user to run it \
             themselves or to allow it with `agentsh whitelist add` in their own shell; otherwise do the task another way"
        ),
        Decision::Deny => {
            format!("agentsh: denied: {cmd}. {why}. Hint: {}", crate::run::explain::denial_hint(v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::decide::{Policy, judge};

    fn p(name: &str) -> &'static Protocol {
        PROTOCOLS.iter().find(|x| x.name == name).unwrap()
    }

    fn reply(proto: &str, input: &str) -> Reply {
        respond(p(proto), input.as_bytes(), &|c, _| judge(c, &Policy::default()), None)
    }

    fn bash(cmd: &str) -> String {
        json!({"session_id": "s", "cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": cmd, "description": "d"}})
        .to_string()
    }

    fn decision(r: &Reply) -> String {
        let v: Value = serde_json::from_str(r.stdout.as_deref().unwrap()).unwrap();
        v["hookSpecificOutput"]["permissionDecision"].as_str().unwrap().to_string()
    }

    #[test]
    fn claude_code_gets_allow_ask_or_deny_with_a_reason() {
        let r = reply("claude-code", &bash("git status"));
        assert_eq!((decision(&r), r.code), ("allow".to_string(), 0));
        let r = reply("claude-code", &bash("sudo apt install nginx"));
        assert_eq!(decision(&r), "ask");
        let r = reply("claude-code", &bash("rm -rf ~"));
        assert_eq!(decision(&r), "deny");
        let v: Value = serde_json::from_str(r.stdout.as_deref().unwrap()).unwrap();
        let why = v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
        assert!(why.contains("denied: rm -rf ~") && why.contains("home directory"), "{why}");
        assert!(why.contains("rm -rf ./build"), "the reason says what to do instead: {why}");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    }

    #[test]
    fn other_tools_get_no_opinion() {
        let r = reply("claude-code", r#"{"tool_name":"Read","tool_input":{"file_path":"/etc/passwd"}}"#);
        assert_eq!(r, Reply { stdout: Some("{}".into()), stderr: String::new(), code: 0 });
        let r = reply("gemini", r#"{"tool_name":"read_file","tool_input":{}}"#);
        assert_eq!(r.code, 0);
    }

    #[test]
    fn malformed_input_blocks_and_never_crashes() {
        let many = "[".repeat(100_000);
        for bad in [
            "",
            "not json",
            "[1,2]",
            "null",
            r#"{"tool_input":{"command":"ls"}}"#,
            r#"{"tool_name":"Bash"}"#,
            r#"{"tool_name":"Bash","tool_input":{"command":["rm","-rf","/"]}}"#,
            r#"{"tool_name":"Bash","tool_input":"ls"}"#,
            r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            &many,
        ] {
            let r = reply("claude-code", bad);
            assert_eq!((r.code, r.stdout.is_none()), (BLOCK, true), "{bad:.40}");
            assert!(r.stderr.contains("malformed"), "{}", r.stderr);
        }
        let huge = bash(&"a".repeat(MAX_INPUT_BYTES as usize));
        assert_eq!(reply("claude-code", &huge).code, BLOCK);
    }

    #[test]
    fn codex_cannot_ask_so_ask_blocks() {
        assert_eq!(reply("codex", &bash("ls -la")), Reply::json(json!({})));
        let r = reply("codex", &bash("npm install left-pad"));
        assert_eq!((r.code, r.stdout), (BLOCK, None));
        assert!(r.stderr.contains("needs a person's approval"), "{}", r.stderr);
        assert_eq!(reply("codex", &bash("rm -rf /")).code, BLOCK);
    }

    #[test]
    fn gemini_gets_decision_and_reason() {
        let ev = |cmd: &str| {
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": cmd}})
                .to_string()
        };
        let out = |r: Reply| serde_json::from_str::<Value>(&r.stdout.unwrap()).unwrap();
        assert_eq!(out(reply("gemini", &ev("ls")))["decision"], "allow");
        let v = out(reply("gemini", &ev("curl x | sh")));
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("approval"));
        assert_eq!(out(reply("gemini", &ev("rm -rf ~")))["decision"], "deny");
        // A Claude Code event sent to the Gemini hook is the wrong event: blocked.
        assert_eq!(reply("gemini", &bash("ls")).code, BLOCK);
    }

    #[test]
    fn allowed_commands_are_handed_back_to_run_through_agentsh_and_asks_are_not() {
        let r = |proto: &str, input: &str| {
            let out = respond(p(proto), input.as_bytes(), &|c, _| judge(c, &Policy::default()), Some("/a b/agentsh"));
            serde_json::from_str::<Value>(&out.stdout.unwrap_or_default()).unwrap_or(Value::Null)
        };
        let v = r("claude-code", &bash("ls -la && echo 'hi'"));
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "allow");
        let words = shlex::split(out["updatedInput"]["command"].as_str().unwrap()).unwrap();
        assert_eq!(words, ["/a b/agentsh", "-c", "ls -la && echo 'hi'"], "the command, unchanged, one word");
        assert_eq!(out["updatedInput"]["description"], "d", "the other fields are kept");
        // Ask: the person answers Claude Code's prompt once; nothing is rewritten.
        let v = r("claude-code", &bash("chmod 600 x"));
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask");
        assert!(v["hookSpecificOutput"].get("updatedInput").is_none());
        let v = r("codex", &bash("ls"));
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(v["hookSpecificOutput"]["updatedInput"]["command"], "'/a b/agentsh' -c ls");
        let ev =
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}});
        let v = r("gemini", &ev.to_string());
        assert_eq!(v["hookSpecificOutput"]["tool_input"]["command"], "'/a b/agentsh' -c ls");
        let ev = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf ~"}});
        assert!(r("gemini", &ev.to_string()).get("hookSpecificOutput").is_none());
    }
}
