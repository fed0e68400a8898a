//! `agentsh trust` and `agentsh untrust`: whether the project's `.agents/terminal.json` may
//! loosen the policy. Trusting loosens, so a person confirms it at the terminal; untrusting only
//! tightens and needs no one. The records themselves live in `crate::policy::trust`.

use super::confirm;
use crate::policy::config;
use crate::policy::trust;
use crate::text::sanitize::sanitize;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;

fn project_file() -> Result<(PathBuf, PathBuf)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    match config::find_project_file(&cwd) {
        Some(p) => Ok((p, cwd)),
        None => bail!("there is no {} in {} or above it", config::PROJECT_FILE, sanitize(&cwd.display().to_string())),
    }
}

pub fn trust() -> Result<i32> {
    let (path, cwd) = project_file()?;
    let shown = sanitize(&path.display().to_string());
    if let Some(why) = trust::unsafe_file(&path) {
        bail!("{why}; agentsh will not trust it until that is fixed");
    }
    // The exact bytes shown are the bytes recorded: an edit after this read is not trusted.
    let (mut settings, content) = config::read_file_bytes(&path);
    let content = content.with_context(|| format!("cannot read {shown}"))?;
    if let Some(w) = settings.warnings.first() {
        bail!("{w}; fix the file before trusting it");
    }
    let entries = settings.whitelist.to_vec();
    let loosening = trust::strip_loosening(&mut settings, &trust::user_settings());
    if loosening.is_empty() {
        println!("{shown} has no settings that loosen the policy: there is nothing to trust.");
        return Ok(0);
    }
    if trust::state(&path, &content) == trust::State::Trusted {
        println!("{shown} is already trusted as it is.");
        return Ok(0);
    }
    eprintln!("{shown} loosens the policy with:");
    for l in &loosening {
        eprintln!("  - {l}");
    }
    let mut details = vec![format!("lets {shown} loosen the policy; any later edit revokes it")];
    details.extend(loosening);
    // An entry that lets through more than its words, as `whitelist add` warns (issue 29, item 3).
    for w in entries.iter().filter_map(|e| crate::policy::whitelist::entry_warning(e)) {
        crate::ask::tty::eprint_fitted(&format!("agentsh: {}\n", sanitize(&w)));
        details.push(w);
    }
    confirm::by_person("agentsh trust", details, &cwd)?;
    trust::record(&path, content.bytes())?;
    println!("trusted {shown}; its whitelist applies until the file changes");
    Ok(0)
}

pub fn untrust() -> Result<i32> {
    let (path, _) = project_file()?;
    let shown = sanitize(&path.display().to_string());
    if trust::forget(&path)? {
        println!("{shown} is no longer trusted; its whitelist is ignored until you run `agentsh trust`");
    } else {
        println!("{shown} was not trusted");
    }
    Ok(0)
}
