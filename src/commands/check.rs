//! `agentsh check`: the verdict on a command, without running it.

use crate::cli::CheckArgs;
use crate::model::Decision;
use anyhow::{Context, Result, bail};
use std::io::{Read, Write};

pub const ALLOW: i32 = 0;
pub const ASK: i32 = 10;
pub const DENY: i32 = 11;

pub fn run(args: CheckArgs) -> Result<i32> {
    let text = if args.stdin {
        let mut t = String::new();
        std::io::stdin()
            .take(crate::judge::parse::MAX_INPUT_BYTES as u64 + 1)
            .read_to_string(&mut t)
            .context("cannot read the command from standard input")?;
        t
    } else {
        args.command.join(" ")
    };
    if text.trim().is_empty() {
        eprintln!("agentsh: check needs a command");
        eprintln!("hint: agentsh check -- 'rm -rf build', or pipe it in with --stdin");
        return Ok(crate::model::exit::USAGE);
    }
    let cwd = match args.cwd {
        Some(d) if d.is_dir() => d,
        Some(d) => bail!("--cwd {}: not a directory", d.display()),
        None => std::env::current_dir().unwrap_or_else(|_| ".".into()),
    };
    let (config, verdict) = judge(&text, &cwd, args.ask, args.prompt, args.json);
    if args.prompt {
        return Ok(admit(&verdict, &config, &cwd, args.refuse));
    }
    // What the gate would do now: the person's pause comes first (issue 29, item 12: `check`
    // said "allow" while `pause --deny` refused everything).
    let paused = crate::ask::pause::current().filter(|_| verdict.decision != Decision::Deny);
    if args.json {
        match &paused {
            Some(p) => print_json_paused(&verdict, p),
            None => print_json(&verdict),
        }
    } else {
        if let Some(p) = &paused {
            crate::ask::tty::print_fitted(&pause_report(p));
        }
        crate::ask::tty::print_fitted(&crate::run::explain::check_report(&verdict));
        print!("{}", ignored_entries(&verdict, &cwd));
    }
    // The process ends right after this: freeing a 10,000-entry whitelist one allocation at a
    // time would cost more than the whole check (docs/BENCHMARKS.md).
    std::mem::forget(config);
    Ok(match (verdict.decision, paused.map(|p| p.mode)) {
        (Decision::Deny, _) | (_, Some(crate::ask::pause::Mode::Deny)) => DENY,
        (Decision::Ask, _) | (_, Some(crate::ask::pause::Mode::Wait)) => ASK,
        (Decision::Allow, None) => ALLOW,
    })
}

/// The first lines while the person has paused the agent: what the gate does now; the verdict
/// below is what it does once they resume.
fn pause_report(p: &crate::ask::pause::Pause) -> String {
    match p.mode {
        crate::ask::pause::Mode::Deny => "deny: the person has taken over (agentsh pause --deny): nothing runs until \
             `agentsh resume`\nonce resumed:\n"
            .to_string(),
        crate::ask::pause::Mode::Wait => "ask: the agent is paused (agentsh pause): it waits for an answer in \
             `agentsh approvals` or for `agentsh resume`\nonce resumed:\n"
            .to_string(),
    }
}

/// [`print_json`] with the pause in force: `decision` is what the gate does now, `paused` says
/// why, and `resumed` is the verdict's own decision.
fn print_json_paused(verdict: &crate::judge::decide::Verdict, p: &crate::ask::pause::Pause) {
    let mut v = serde_json::to_value(verdict).unwrap_or_default();
    let (now, mode) = match p.mode {
        crate::ask::pause::Mode::Deny => ("deny", "deny"),
        crate::ask::pause::Mode::Wait => ("ask", "wait"),
    };
    v["resumed"] = v["decision"].clone();
    v["decision"] = now.into();
    v["paused"] = mode.into();
    println!("{v}");
}

/// The verdict `check` gives on `text` in `cwd`: what the gate would do there, judged with the
/// box it would run the command in. An interactive shell (`prompt`) runs the line itself,
/// unconfined, and is judged as such a route is (`gate::prepare_line_gate`): nothing is allowed
/// there because a box would have contained it. A crash while judging is refused as `check`
/// refuses (JSON with `json`). Returns the config (its policy taken) and the verdict.
pub fn judge(
    text: &str,
    cwd: &std::path::Path,
    ask: bool,
    prompt: bool,
    json: bool,
) -> (crate::policy::config::Config, crate::judge::decide::Verdict) {
    let mut config = crate::policy::config::load(cwd);
    crate::run::explain::print_warnings(&config.warnings);
    if prompt {
        crate::run::gate::prepare_line_gate(&mut config, text, cwd, ask);
    } else {
        crate::run::gate::prepare(&mut config, text, cwd, ask);
    }
    let route = crate::run::judging::Route::Check { json, prompt, deny: DENY };
    let verdict = crate::run::judging::judge_once(text, std::mem::take(&mut config.policy), route);
    (config, verdict)
}

/// One line of JSON on stdout, written as it is serialized: a 64 KiB script's verdict is about
/// 1 MB, which need not be held as one string (issue 9). A failed write panics as `println!`
/// does, so a reader that stops early ends agentsh quietly (main.rs).
fn print_json(verdict: &crate::judge::decide::Verdict) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, verdict)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = written {
        panic!("failed printing to stdout: {e}");
    }
}

/// `check --prompt`, for shell hooks: the gate without the exec. 0: may run; 11: must not.
/// With `refuse` (`--refuse`), what would be asked is refused.
fn admit(
    verdict: &crate::judge::decide::Verdict,
    config: &crate::policy::config::Config,
    cwd: &std::path::Path,
    refuse: bool,
) -> i32 {
    // The same decision, pause, prompt and audit record as the gate itself.
    // An interactive shell runs the line itself, unconfined.
    let sandbox = crate::record::audit::BoxLine {
        runs_in: "unconfined".into(),
        why: Some("checked for an interactive shell, which runs it itself".into()),
        ..Default::default()
    };
    let refusing = refuse.then_some(
        "this terminal refuses what needs approval (AGENTSH_INTERACTIVE_ASK=refuse): an agent types into it, and \
         could answer a prompt here itself",
    );
    match crate::run::gate::admit(verdict, config, cwd, sandbox, refusing) {
        Ok(_) => ALLOW,
        Err(_) => DENY,
    }
}

/// Issue 17, item 9: a whitelist entry that would have allowed a part that does not run
/// unasked, but is ignored because its project file is not trusted, and what to do.
fn ignored_entries(verdict: &crate::judge::decide::Verdict, cwd: &std::path::Path) -> String {
    use crate::judge::decide::{Entries, Entry};
    let Some(path) = crate::policy::config::find_project_file(cwd) else { return String::new() };
    let Ok(bytes) = crate::policy::config::read_bytes(&path) else { return String::new() };
    let content = crate::policy::config::Content::new(bytes, None);
    if crate::policy::trust::state(&path, &content) == crate::policy::trust::State::Trusted {
        return String::new();
    }
    let file = path.display().to_string();
    let settings = crate::policy::config::read_file(&path);
    let entries: Entries = settings.whitelist.iter().filter_map(|e| Entry::new(e, &file)).collect();
    let mut out = String::new();
    for p in verdict.parts.iter().filter(|p| p.decision != crate::model::Decision::Allow) {
        if let Some(e) = entries.find(&p.assessment.argv, None) {
            out.push_str(&format!(
                "note: the whitelist entry `{}` in {} would allow `{}`, but it is ignored: the file is not \
                 trusted (the person can run `agentsh trust` to trust it)\n",
                crate::text::sanitize::sanitize(e.text),
                crate::text::sanitize::sanitize(&file),
                crate::text::sanitize::sanitize(&p.assessment.text())
            ));
        }
    }
    out
}
