//! `agentsh approve|deny|pause|resume|status` and `approvals --json`: the person's side of the
//! approval queue, for scripts and other UIs. Answers go through `queue`; this module only
//! checks them and reports. The gate forbids every answering command when an agent runs it.

use crate::ask::pause::{self, Mode};
use crate::ask::queue::{self, Listed, Reply, Request, Verdict};
use crate::cli::{ApproveArgs, DenyArgs, PauseArgs, StatusArgs};
use crate::text::sanitize::sanitize;
use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use std::path::PathBuf;

/// A message is told to the agent, not stored for ever: longer ones are cut.
const MESSAGE_MAX: usize = 2000;

fn dir() -> Result<PathBuf> {
    queue::dir().map_err(|e| anyhow!("the approval queue is unavailable: {e}"))
}

/// The JSON form of a listed request. The code is never in it: an agent may run `--json`.
pub fn to_json(l: &Listed) -> Value {
    let mut v = serde_json::to_value(&l.request).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("code");
        m.insert("state".into(), Value::from(if l.live { "pending" } else { "expired" }));
    }
    v
}

/// `agentsh approvals --json`.
pub fn print_json() -> Result<i32> {
    let listed = queue::list(&dir()?)?;
    let all: Vec<Value> = listed.iter().map(to_json).collect();
    println!("{}", serde_json::to_string_pretty(&all)?);
    Ok(0)
}

/// Checks an approval against the request, as the terminal prompt would, and builds the reply.
/// `Err` says why nothing was approved; `Ok(Err(reply))` is a wrong code, which rejects.
pub fn approval(req: &Request, always: bool, entry: Option<&str>, code: Option<&str>) -> Result<Result<Reply, Reply>> {
    let entry = if always {
        let Some(first) = req.always.first() else {
            bail!("\"always\" is not offered for this command (it would allow too much); approve it once instead")
        };
        match entry {
            None => Some(first.clone()),
            Some(e) => {
                let wanted = e.split_whitespace().collect::<Vec<_>>().join(" ");
                match req.always.iter().find(|o| **o == wanted) {
                    Some(o) => Some(o.clone()),
                    None => bail!(
                        "`{}` is not one of the offered entries: {}",
                        sanitize(e),
                        req.always.iter().map(|o| format!("`{}`", sanitize(o))).collect::<Vec<_>>().join(", ")
                    ),
                }
            }
        }
    } else {
        None
    };
    let answer = if always { Verdict::Always } else { Verdict::Once };
    let reply = Reply { answer, entry, code: None, message: None };
    let Some(want) = &req.code else { return Ok(Ok(reply)) };
    match code {
        None => bail!("request {} is high risk: add --code CODE, the code shown for it in `agentsh approvals`", req.id),
        Some(c) if c.trim() == want => Ok(Ok(Reply { code: Some(want.clone()), ..reply })),
        // A wrong code counts as a try; the last one rejects (see `approve`).
        Some(_) => Ok(Err(Reply {
            answer: Verdict::Deny,
            entry: None,
            code: None,
            message: Some(crate::ask::prompt::WRONG_CODE.into()),
        })),
    }
}

pub fn approve(args: ApproveArgs) -> Result<i32> {
    let dir = dir()?;
    let req = queue::find(&dir, &args.id).map_err(|e| anyhow!(e))?;
    match approval(&req, args.always, args.entry.as_deref(), args.code.as_deref())? {
        Ok(reply) => {
            queue::answer(&dir, &req.id, &reply).map_err(|e| anyhow!(e))?;
            match &reply.entry {
                Some(e) => println!("allowed, and always `{}`: {}", sanitize(e), sanitize(&req.command)),
                None => println!("allowed once: {}", sanitize(&req.command)),
            }
            Ok(0)
        }
        Err(reject) => {
            // Three tries, as at the terminal: a typo does not end the request.
            let tries = crate::ask::prompt::CODE_TRIES;
            let n = queue::wrong_code(&dir, &req.id).map_err(|e| anyhow!(e))?;
            if n < u64::from(tries) {
                bail!(
                    "Sorry, try again: wrong code for request {} ({} of {tries} tries left)",
                    req.id,
                    u64::from(tries) - n
                )
            }
            queue::answer(&dir, &req.id, &reject).map_err(|e| anyhow!(e))?;
            bail!("wrong code, {tries} times: request {} is rejected", req.id)
        }
    }
}

/// The reply for a rejection; the message is trimmed and cut, and sanitized where it is shown.
pub fn rejection(message: Option<&str>) -> Reply {
    let message = message.map(str::trim).filter(|m| !m.is_empty()).map(|m| m.chars().take(MESSAGE_MAX).collect());
    Reply { answer: Verdict::Deny, entry: None, code: None, message }
}

pub fn deny(args: DenyArgs) -> Result<i32> {
    let dir = dir()?;
    let req = queue::find(&dir, &args.id).map_err(|e| anyhow!(e))?;
    queue::answer(&dir, &req.id, &rejection(args.message.as_deref())).map_err(|e| anyhow!(e))?;
    println!("rejected: {}", sanitize(&req.command));
    Ok(0)
}

pub fn pause(args: PauseArgs) -> Result<i32> {
    let mode = if args.deny { Mode::Deny } else { Mode::Wait };
    let path = pause::set(mode)?;
    match mode {
        Mode::Wait => println!("paused: the agent's commands wait until `agentsh resume` (see `agentsh approvals`)"),
        Mode::Deny => println!("paused: the agent's commands are refused until `agentsh resume`"),
    }
    eprintln!("state: {}", sanitize(&path.display().to_string()));
    Ok(0)
}

pub fn resume() -> Result<i32> {
    if pause::clear()? {
        println!("resumed: the agent's commands run again");
    } else {
        println!("not paused: nothing to resume");
    }
    Ok(0)
}

pub fn status(args: StatusArgs) -> Result<i32> {
    let paused = pause::current();
    let queue_dir = queue::dir();
    let listed = match &queue_dir {
        Ok(d) => queue::list(d).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let pending = listed.iter().filter(|l| l.live).count();
    let watched = queue_dir.as_ref().is_ok_and(|d| queue::watched(d));
    let state = match paused.as_ref().map(|p| p.mode) {
        None => "running",
        Some(Mode::Wait) => "paused",
        Some(Mode::Deny) => "paused-deny",
    };
    if args.json {
        let v = serde_json::json!({
            "state": state,
            "paused_since": paused.and_then(|p| p.since),
            "pending": pending,
            "approvals_open": watched,
            "queue": queue_dir.as_ref().map(|d| d.display().to_string()).unwrap_or_else(|e| e.clone()),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    let line = match state {
        "running" => "agent: running (not paused)",
        "paused" => "agent: paused: its commands wait until `agentsh resume`",
        _ => "agent: paused with --deny: its commands are refused until `agentsh resume`",
    };
    println!("{line}");
    println!("pending requests: {pending}");
    println!("approvals UI open: {}", if watched { "yes" } else { "no" });
    match &queue_dir {
        Ok(d) => println!("queue: {}", sanitize(&d.display().to_string())),
        Err(e) => println!("queue: unavailable: {}", sanitize(e)),
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask::queue::Parent;

    fn req(code: Option<&str>, always: &[&str]) -> Request {
        Request {
            id: "0123456789ab".into(),
            command: "git push origin main".into(),
            cwd: "/p".into(),
            risk: if code.is_some() { "high" } else { "moderate" }.into(),
            category: "dev_ops".into(),
            reasons: vec![],
            always: always.iter().map(|s| s.to_string()).collect(),
            pid: 1,
            parent: Parent { pid: 1, name: "x".into() },
            session: 1,
            time: 0,
            time_ms: 0,
            expires: None,
            paused: false,
            sandbox: String::new(),
            code: code.map(Into::into),
        }
    }

    #[test]
    fn approvals_are_checked_like_the_prompt() {
        let m = req(None, &["git push origin main", "git push"]);
        assert_eq!(approval(&m, false, None, None).unwrap().unwrap().answer, Verdict::Once);
        let r = approval(&m, true, None, None).unwrap().unwrap();
        assert_eq!(r.entry.as_deref(), Some("git push origin main"));
        let r = approval(&m, true, Some(" git   push "), None).unwrap().unwrap();
        assert_eq!(r.entry.as_deref(), Some("git push"));
        assert!(approval(&m, true, Some("git"), None).unwrap_err().to_string().contains("not one of the offered"));
        assert!(approval(&req(None, &[]), true, None, None).is_err());

        let h = req(Some("4821"), &["x"]);
        assert!(approval(&h, false, None, None).unwrap_err().to_string().contains("--code"));
        let wrong = approval(&h, false, None, Some("1111")).unwrap().unwrap_err();
        assert_eq!(wrong.answer, Verdict::Deny);
        let right = approval(&h, false, None, Some("4821")).unwrap().unwrap();
        assert_eq!((right.answer, right.code.as_deref()), (Verdict::Once, Some("4821")));
    }

    #[test]
    fn json_never_shows_the_code() {
        let l = Listed { request: req(Some("4821"), &[]), live: true };
        let v = to_json(&l);
        assert!(v.get("code").is_none(), "{v}");
        assert_eq!(v["state"], "pending");
        assert!(!v.to_string().contains("4821"));
    }

    #[test]
    fn messages_are_trimmed_and_cut() {
        assert_eq!(rejection(Some("  ")).message, None);
        assert_eq!(rejection(Some(" use make ")).message.as_deref(), Some("use make"));
        assert_eq!(rejection(Some(&"x".repeat(5000))).message.map(|m| m.len()), Some(MESSAGE_MAX));
    }
}
