//! A person's confirmation for management commands that loosen the policy (`whitelist add`,
//! `trust`). An agent can run agentsh directly, outside the gate, so these commands ask on the
//! controlling terminal with the approval prompt itself (high risk: the person types a random
//! code). With no terminal they refuse. It never reads stdin, arguments or environment for the
//! answer.

use super::Hinted;
use crate::ask::prompt::{self, Answer, PromptRequest};
use crate::model::{Category, Risk};
use crate::policy::config;
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;

/// Asks the person at the terminal to confirm `action` (shown as the command) with `details`
/// (shown as the reasons). `Ok` only when they typed the code.
pub fn by_person(action: &str, details: Vec<String>, cwd: &Path) -> Result<()> {
    let code = match prompt::random_code() {
        Ok(c) => c,
        Err(e) => bail!("cannot make a confirmation code: {e}"),
    };
    // Loading marks trust warnings as shown, so show them (they also explain what is at stake).
    let config = config::load(cwd);
    crate::run::explain::print_warnings(&config.warnings);
    let req = PromptRequest {
        command: action.to_string(),
        cwd: cwd.display().to_string(),
        risk: Risk::High,
        category: Category::Blocked,
        reasons: details,
        parts: Vec::new(),
        always_entries: Vec::new(),
        timeout: Duration::from_secs(config.confirmation_timeout),
        code,
        notice: crate::ask::tty::tiocsti_notice(),
        sandbox: String::new(),
        always_where: None,
        confirming: true,
    };
    match crate::ask::approval::ask_on_terminal(&req) {
        Answer::Once | Answer::Always(_) => Ok(()),
        // The queue is never asked here, so these come only from a person refusing.
        Answer::Rejected | Answer::Denied(_) | Answer::TakenOver | Answer::WrongCode => {
            bail!("not confirmed: rejected at the terminal; nothing changed")
        }
        Answer::TimedOut => bail!("not confirmed: no answer at the terminal in time; nothing changed"),
        Answer::NoTerminal(why) => Err(Hinted {
            message: format!(
                "`{action}` loosens the policy, so a person must confirm it at the terminal, and there is none \
                 ({why}); nothing changed"
            ),
            hint: "run it yourself in a terminal; an agent cannot confirm it".to_string(),
        }
        .into()),
        Answer::Interrupted(signal) => {
            eprintln!("agentsh: not confirmed: interrupted by {signal}; nothing changed");
            crate::ask::tty::reraise(&signal)
        }
    }
}
