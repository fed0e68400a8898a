//! `agentsh check`: the verdict on a command, without running it.

use crate::cli::CheckArgs;
use crate::model::Decision;
use anyhow::{Context, Result, bail};
use std::io::Read;

pub const ALLOW: i32 = 0;
pub const ASK: i32 = 10;
pub const DENY: i32 = 11;

pub fn run(args: CheckArgs) -> Result<i32> {
    let text = if args.stdin {
        let mut t = String::new();
        std::io::stdin()
            .take(crate::parse::MAX_INPUT_BYTES as u64 + 1)
            .read_to_string(&mut t)
            .context("cannot read the command from standard input")?;
        t
    } else {
        args.command.join(" ")
    };
    if text.trim().is_empty() {
        eprintln!("agentsh: check needs a command");
        eprintln!("hint: agentsh check -- 'rm -rf build', or pipe it in with --stdin");
        return Ok(crate::gate::USAGE);
    }
    let cwd = match args.cwd {
        Some(d) if d.is_dir() => d,
        Some(d) => bail!("--cwd {}: not a directory", d.display()),
        None => std::env::current_dir().unwrap_or_else(|_| ".".into()),
    };
    let config = crate::config::load(&cwd);
    crate::explain::print_warnings(&config.warnings);
    let verdict = crate::decide::judge_bounded(&text, &config.policy, crate::decide::JUDGE_BUDGET);
    if args.json {
        println!("{}", serde_json::to_string(&verdict).context("cannot serialize the verdict")?);
    } else {
        print!("{}", crate::explain::check_report(&verdict));
    }
    Ok(match verdict.decision {
        Decision::Allow => ALLOW,
        Decision::Ask => ASK,
        Decision::Deny => DENY,
    })
}
