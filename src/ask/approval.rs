//! The approve step: waits for the first answer from the terminal prompt or the approval queue,
//! and holds commands while the person has paused the agent. It turns queue replies into
//! prompt answers; it must never take an answer from stdin, arguments or the environment.
//!
//! The prompt is drawn only on a person's terminal (`terminal_owner`): a pty the agent made is
//! treated as no terminal, and nothing of the prompt, above all not the code, is written there.
//! One prompt at a time per terminal (`terminal_turn`).
//!
//! When there is no terminal, agentsh waits in the queue only when someone could answer: an
//! `agentsh approvals` UI is open, or the user config (never the project's, which the agent can
//! edit) sets `approvalQueue: true`. Otherwise it refuses at once, as before.

use crate::ask::pause::{self, Mode};
use crate::ask::prompt::{self, Answer, KeyEvent, Keys, PromptRequest};
use crate::ask::queue::{self, Parent, Pending, Reply, Request, Verdict};
use crate::ask::terminal_owner::{self, Owner};
use crate::ask::terminal_turn::{self, Turn};
use crate::ask::tty::{Quiet, Tty};
use crate::text::sanitize::sanitize;
use std::io;
use std::time::{Duration, Instant};

/// Asks the person: on the terminal when agentsh has one, and in the queue when it is wanted.
/// `queue_setting` is the user config's `approvalQueue`.
pub fn ask(req: &PromptRequest, queue_setting: bool) -> Answer {
    let tty = persons_terminal();
    ask_on(req, queue_setting, tty.as_ref().map_err(String::clone))
}

/// [`ask`] with the person's terminal established before: a boxed command's agentsh, asked by
/// the box's proxy about a host, has joined the box's user namespace by then, where the other
/// side of its terminal can no longer be inspected (`terminal_owner`).
pub fn ask_on(req: &PromptRequest, queue_setting: bool, tty: Result<&PersonsTerminal, String>) -> Answer {
    let dir = queue::dir();
    // No terminal of the person's here, but they run the agent in their tmux: agentsh's prompt
    // in a popup on their client (issue 24).
    let client = if tty.is_err() && dir.is_ok() { crate::ask::popup::client() } else { None };
    let watched = dir.as_ref().is_ok_and(|d| queue::watched(d));
    let wanted = match (&tty, &dir) {
        (Ok(_), Ok(_)) => true,
        (Err(_), Ok(_)) => queue_setting || watched || client.is_some(),
        (_, Err(_)) => false,
    };
    let mut refused = None;
    let pending = match (&dir, wanted) {
        (Ok(d), true) => match Pending::register(d, request(req, false)) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("agentsh: warning: the approval queue is unavailable: {}", sanitize(&e));
                refused = Some(e);
                None
            }
        },
        _ => None,
    };
    let mut popup = match (&pending, &client) {
        (Some(p), Some(c)) => crate::ask::popup::open(c, p.id()).ok(),
        _ => None,
    };
    let mut pending = pending;
    if popup.is_some() && !queue_setting && !watched && !popup_shown(dir.as_deref().ok()) {
        // The popup runs `agentsh approvals`, which refuses a terminal that is not the person's
        // (a client attached from a pty the agent holds): then nobody can answer, and the
        // request is withdrawn, as with no one to ask.
        popup = None;
        pending = None;
    }
    // Only where no prompt is drawn: above the prompt, the line is noise for a person who
    // answers right there (issue 29, item 6).
    if let (Err(_), Some(p)) = (&tty, &pending) {
        let place = if popup.is_some() { "the tmux popup, or `agentsh approvals`" } else { "`agentsh approvals`" };
        eprintln!(
            "agentsh: waiting for approval ({}s): request {} (answer it in {place})",
            req.timeout.as_secs(),
            p.id()
        );
        if tty.is_err() && !watched && popup.is_none() {
            // Nobody watches the queue (`approvalQueue: true`): tell the person something waits.
            notify(&req.command);
        }
    }
    match (tty, pending) {
        (Ok(tty), pending) => in_turn(tty, pending.as_ref(), req),
        (Err(_), Some(p)) => in_queue(&p, req, Some(Instant::now() + req.timeout)).unwrap_or(Answer::TimedOut),
        (Err(why), None) => Answer::NoTerminal(no_one_to_ask(&why, dir.err(), refused)),
    }
}

/// Why no one can be asked, for the refusal and the audit record: no terminal (`tty`), and the
/// queue either unusable (`dir`), or it could not take the request (`refused`), or no one
/// watches it. Before, a request the queue could not take was recorded as "no `agentsh
/// approvals` is open", which was untrue (issue 27).
fn no_one_to_ask(tty: &str, dir: Option<String>, refused: Option<String>) -> String {
    let queue = match (dir, refused) {
        (Some(e), _) => format!("the approval queue is unavailable: {e}"),
        (None, Some(e)) => format!("the approval queue could not take the request: {e}"),
        (None, None) => "no `agentsh approvals` is open".to_string(),
    };
    format!("{tty}, and {queue}")
}

/// Whether `agentsh approvals` came up in the popup: it marks the queue watched once it has the
/// person's terminal. Waits a moment for it.
fn popup_shown(dir: Option<&std::path::Path>) -> bool {
    let Some(dir) = dir else { return false };
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if queue::watched(dir) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A desktop notification where `notify-send` exists, best effort: the command is passed as an
/// argument (sanitized), never through a shell.
fn notify(command: &str) {
    let body = format!("{}\nanswer it in `agentsh approvals`", sanitize(command));
    if let Ok(mut child) = std::process::Command::new("notify-send")
        .args(["--app-name=agentsh", "agentsh: a command waits for your approval", &body])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        // Reaped in the background: it ends on its own at once.
        std::thread::spawn(move || child.wait());
    }
}

/// Asks on the controlling terminal only, never in the queue: for agentsh's own loosening
/// management commands (`whitelist add`, `trust`), which a person confirms where they typed them.
pub fn ask_on_terminal(req: &PromptRequest) -> Answer {
    match persons_terminal() {
        Ok(tty) => in_turn(&tty, None, req),
        Err(why) => Answer::NoTerminal(why.to_string()),
    }
}

/// The controlling terminal, established to be the person's.
pub struct PersonsTerminal {
    pub tty: Tty,
    /// What serves it, e.g. "tmux (pid 12)".
    pub served_by: String,
    /// The device, for the one-prompt-at-a-time lock.
    key: String,
}

/// The controlling terminal, when agentsh is in its foreground and it is a person's, not a pty
/// the agent made (`terminal_owner`); `Err` says why nothing may be drawn there. The /proc
/// reading runs only here, when a prompt is about to be drawn.
pub fn persons_terminal() -> Result<PersonsTerminal, String> {
    let tty = Tty::open()?;
    tty.check_foreground()?;
    match terminal_owner::check() {
        (Owner::Person(served_by), Some(key)) => Ok(PersonsTerminal { tty, served_by, key }),
        (Owner::Person(_), None) => Err("cannot tell which terminal device this is".to_string()),
        (Owner::NotPerson(why), _) => Err(why),
    }
}

/// The prompt on the person's terminal once no other prompt is drawn there (`terminal_turn`).
/// The wait counts against the prompt's timeout, and an answer from the queue ends it.
fn in_turn(terminal: &PersonsTerminal, pending: Option<&Pending>, req: &PromptRequest) -> Answer {
    let deadline = Instant::now() + req.timeout;
    let turn = match wait_for_turn(&terminal.key, pending, req, deadline) {
        Ok(turn) => turn,
        Err(answer) => return answer,
    };
    let left = PromptRequest { timeout: deadline.saturating_duration_since(Instant::now()), ..req.clone() };
    let answer = on_terminal(&terminal.tty, pending, &left);
    drop(turn);
    answer
}

/// Waits until no other prompt holds the terminal `key`, polling every 100 ms; `Err` is the
/// answer that ended the wait (from the queue, the deadline, a signal).
fn wait_for_turn(key: &str, pending: Option<&Pending>, req: &PromptRequest, deadline: Instant) -> Result<Turn, Answer> {
    let cannot = |e: String| Answer::NoTerminal(format!("cannot take turns on the terminal: {e}"));
    let dir = queue::dir().map_err(cannot)?;
    let mut quiet = None;
    let wake = pending.and_then(|p| p.wake_fd().ok());
    loop {
        match terminal_turn::try_take(&dir, key) {
            Ok(Some(turn)) => return Ok(turn),
            Ok(None) => {}
            Err(e) => return Err(cannot(e.to_string())),
        }
        if let Some(reply) = pending.and_then(Pending::take_reply) {
            return Err(to_answer(&reply, req));
        }
        let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
            return Err(Answer::TimedOut);
        };
        if quiet.is_none() {
            quiet = Some(Quiet::block().map_err(|e| cannot(format!("cannot wait for signals: {e}")))?);
        }
        let waited = quiet.as_ref().map(|q| q.wait(wake.as_ref(), left.min(Duration::from_millis(100))));
        match waited {
            Some(Ok(KeyEvent::Signal(name))) => return Err(Answer::Interrupted(name)),
            Some(Err(e)) => return Err(cannot(format!("cannot wait: {e}"))),
            _ => {}
        }
    }
}

/// Holds a command while the person has paused the agent. `None`: not paused (or resumed), go
/// on as usual. `Some`: the answer to act on (allowed in `agentsh approvals`, refused, ...).
pub fn while_paused(make: impl FnOnce() -> Result<PromptRequest, Answer>) -> Option<Answer> {
    let pause = pause::current()?;
    if pause.mode == Mode::Deny {
        return Some(Answer::TakenOver);
    }
    let req = match make() {
        Ok(r) => r,
        Err(answer) => return Some(answer),
    };
    let pending = match queue::dir().and_then(|d| Pending::register(&d, request(&req, true))) {
        Ok(p) => p,
        Err(e) => {
            return Some(Answer::NoTerminal(format!(
                "the agent is paused, and the approval queue is unavailable: {e}"
            )));
        }
    };
    eprintln!(
        "agentsh: paused by the person: waiting for `agentsh resume`: request {} (see `agentsh approvals`)",
        pending.id()
    );
    in_queue(&pending, &req, None)
}

/// The prompt on the terminal, woken also by the queue. The terminal is in agentsh's foreground;
/// raw mode and the signal mask are restored before this returns.
fn on_terminal(tty: &Tty, pending: Option<&Pending>, req: &PromptRequest) -> Answer {
    let mut session = match tty.raw() {
        Ok(session) => session,
        Err(e) => return Answer::NoTerminal(format!("cannot set up the terminal: {e}")),
    };
    if let Some(fd) = pending.and_then(|p| p.wake_fd().ok()) {
        session.watch(fd);
    }
    let mut out = tty.writer();
    let mut keys = QueueKeys { inner: session, pending, req };
    let answer = prompt::dialog(&mut keys, &mut out, req, Instant::now);
    // Terminal first, then the signal mask (RawSession's field order).
    drop(keys);
    answer
}

/// Terminal keys, plus answers from the queue as `KeyEvent::Answered`.
struct QueueKeys<'a, K: Keys> {
    inner: K,
    pending: Option<&'a Pending>,
    req: &'a PromptRequest,
}

impl<K: Keys> Keys for QueueKeys<'_, K> {
    fn next_key(&mut self, timeout: Duration) -> io::Result<KeyEvent> {
        // A queue that cannot be watched is looked at every `POLL` (and whenever the prompt wakes).
        let polled = self.pending.is_some_and(Pending::polled);
        let timeout = if polled { timeout.min(queue::POLL) } else { timeout };
        match self.inner.next_key(timeout)? {
            KeyEvent::Wake => self.answered(),
            KeyEvent::Timeout if polled => self.answered(),
            other => Ok(other),
        }
    }

    fn discard_typeahead(&mut self) -> io::Result<()> {
        self.inner.discard_typeahead()
    }
}

impl<K: Keys> QueueKeys<'_, K> {
    /// The queue's answer, if one has come.
    fn answered(&self) -> io::Result<KeyEvent> {
        match self.pending.and_then(Pending::take_reply) {
            Some(reply) => Ok(KeyEvent::Answered(to_answer(&reply, self.req))),
            None => Ok(KeyEvent::Timeout),
        }
    }
}

/// Waits in the queue alone until an answer, the deadline, or a signal. With no deadline
/// (paused), it also ends when the pause is lifted (`None`) or turned into `--deny`.
fn in_queue(pending: &Pending, req: &PromptRequest, deadline: Option<Instant>) -> Option<Answer> {
    let quiet = match Quiet::block() {
        Ok(q) => q,
        Err(e) => return Some(Answer::NoTerminal(format!("cannot wait for signals: {e}"))),
    };
    let fd = pending.wake_fd().ok();
    // Without a watch on the queue, it is looked at every `POLL`.
    let step = if pending.polled() { queue::POLL } else { Duration::from_secs(1) };
    loop {
        // An answer may have arrived before the first wait.
        if let Some(reply) = pending.take_reply() {
            return Some(to_answer(&reply, req));
        }
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()).filter(|r| !r.is_zero()) {
                Some(r) => r.min(step),
                None => return Some(Answer::TimedOut),
            },
            None => match pause::current() {
                None => return None,
                Some(p) if p.mode == Mode::Deny => return Some(Answer::TakenOver),
                Some(_) => step,
            },
        };
        match quiet.wait(fd.as_ref(), wait) {
            Ok(KeyEvent::Signal(name)) => return Some(Answer::Interrupted(name)),
            Ok(_) => {}
            Err(e) => return Some(Answer::NoTerminal(format!("cannot wait: {e}"))),
        }
    }
}

/// What a queue reply means for this request. The code and the entry are checked here again:
/// the answer file is only as trustworthy as the directory, so it can never do more than the
/// terminal prompt would allow.
fn to_answer(reply: &Reply, req: &PromptRequest) -> Answer {
    let high = req.risk >= crate::model::Risk::High;
    let code_ok = !high || reply.code.as_deref() == Some(req.code.as_str()) && req.code.len() >= 4;
    match reply.answer {
        Verdict::Deny if reply.message.as_deref() == Some(crate::ask::prompt::WRONG_CODE) => Answer::WrongCode,
        Verdict::Deny => Answer::Denied(reply.message.clone().filter(|m| !m.trim().is_empty())),
        _ if !code_ok => Answer::Denied(Some("the approval code was wrong".to_string())),
        Verdict::Once => Answer::Once,
        Verdict::Always => match &reply.entry {
            Some(e) if req.always_entries.contains(e) => Answer::Always(e.clone()),
            _ => Answer::Denied(Some("that whitelist entry was not offered".to_string())),
        },
    }
}

/// The queue's copy of a prompt request. The code is kept for the approvals UI only.
fn request(req: &PromptRequest, paused: bool) -> Request {
    let now = queue::now_secs();
    let ppid = nix::unistd::getppid().as_raw();
    let parent_name = std::fs::read_to_string(format!("/proc/{ppid}/comm")).unwrap_or_default();
    Request {
        id: String::new(),
        command: sanitize(&req.command),
        cwd: sanitize(&req.cwd),
        // The command's own risk (a command held by a pause may be safe), not "high" for
        // anything but moderate; a code only where the terminal would ask for one.
        risk: match req.risk {
            crate::model::Risk::Safe => "safe",
            crate::model::Risk::Moderate => "moderate",
            _ => "high",
        }
        .to_string(),
        category: req.category.as_str().to_string(),
        reasons: req.reasons.iter().map(|r| sanitize(r)).collect(),
        always: req.always_entries.clone(),
        pid: std::process::id(),
        parent: Parent { pid: ppid.unsigned_abs(), name: sanitize(parent_name.trim()) },
        session: nix::unistd::getsid(None).map(|p| p.as_raw()).unwrap_or(0),
        time: now,
        time_ms: u64::try_from(crate::record::clock::now_ms()).unwrap_or(0),
        expires: (!paused).then(|| now + req.timeout.as_secs()),
        paused,
        sandbox: sanitize(&req.sandbox),
        code: (req.risk >= crate::model::Risk::High).then(|| req.code.clone()),
    }
}

/// Where the queue is, for messages: the directory or why there is none.
pub fn describe_dir() -> String {
    match queue::dir() {
        Ok(d) => d.display().to_string(),
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Category, Risk};

    fn req(risk: Risk) -> PromptRequest {
        PromptRequest {
            command: "git push".into(),
            cwd: "/p".into(),
            risk,
            category: Category::DevOps,
            reasons: vec![],
            parts: vec![],
            always_entries: vec!["git push".into()],
            timeout: Duration::from_secs(60),
            code: "4821".into(),
            notice: None,
            sandbox: String::new(),
            always_where: None,
            confirming: false,
        }
    }

    fn reply(answer: Verdict, entry: Option<&str>, code: Option<&str>) -> Reply {
        Reply { answer, entry: entry.map(Into::into), code: code.map(Into::into), message: None }
    }

    #[test]
    fn queue_replies_can_do_no_more_than_the_prompt() {
        let m = req(Risk::Moderate);
        let h = req(Risk::High);
        let cases = [
            (&m, reply(Verdict::Once, None, None), Answer::Once),
            (&m, reply(Verdict::Always, Some("git push"), None), Answer::Always("git push".into())),
            (
                &m,
                reply(Verdict::Always, Some("git"), None),
                Answer::Denied(Some("that whitelist entry was not offered".into())),
            ),
            (
                &m,
                reply(Verdict::Always, None, None),
                Answer::Denied(Some("that whitelist entry was not offered".into())),
            ),
            (&h, reply(Verdict::Once, None, None), Answer::Denied(Some("the approval code was wrong".into()))),
            (&h, reply(Verdict::Once, None, Some("0000")), Answer::Denied(Some("the approval code was wrong".into()))),
            (&h, reply(Verdict::Once, None, Some("4821")), Answer::Once),
            (&h, reply(Verdict::Always, Some("git push"), Some("4821")), Answer::Always("git push".into())),
            (&h, reply(Verdict::Deny, None, None), Answer::Denied(None)),
        ];
        for (r, rep, want) in cases {
            assert_eq!(to_answer(&rep, r), want, "{rep:?}");
        }
        let mut no_code = req(Risk::High);
        no_code.code = String::new();
        assert!(matches!(to_answer(&reply(Verdict::Once, None, Some("")), &no_code), Answer::Denied(_)));
        let denied = Reply { message: Some("use make".into()), ..reply(Verdict::Deny, None, None) };
        assert_eq!(to_answer(&denied, &m), Answer::Denied(Some("use make".into())));
    }

    #[test]
    fn the_refusal_names_why_the_queue_could_not_ask() {
        let t = "no controlling terminal";
        assert_eq!(no_one_to_ask(t, None, None), "no controlling terminal, and no `agentsh approvals` is open");
        assert_eq!(
            no_one_to_ask(t, None, Some("cannot write a request: No space left on device".into())),
            "no controlling terminal, and the approval queue could not take the request: cannot write a request: No \
             space left on device"
        );
        assert_eq!(
            no_one_to_ask(t, Some("/q is a symbolic link".into()), None),
            "no controlling terminal, and the approval queue is unavailable: /q is a symbolic link"
        );
    }

    #[test]
    fn the_queue_copy_is_sanitized_and_keeps_the_code_only_for_high_risk() {
        let mut m = req(Risk::Moderate);
        m.command = "echo \x1b[31mx".into();
        let r = request(&m, false);
        assert_eq!(r.command, "echo \\x1b[31mx");
        assert_eq!(r.code, None);
        assert!(r.expires.is_some());
        let r = request(&req(Risk::High), true);
        assert_eq!(r.code.as_deref(), Some("4821"));
        assert_eq!(r.expires, None);
    }
}
