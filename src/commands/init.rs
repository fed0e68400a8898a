//! `agentsh init TARGET [--write]`: the settings that put agentsh in front of an agent or an
//! interactive shell. Without --write it only prints them. With --write it merges them into
//! the settings file without touching anything else in it, shows the diff, keeps a backup
//! beside it and writes atomically under a lock (`atomic_file`). A file that is not valid JSON is
//! never touched.

use crate::cli::{InitArgs, InitTarget};
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

const BASH_HOOK: &str = include_str!("../shell/agentsh.bash");
const ZSH_HOOK: &str = include_str!("../shell/agentsh.zsh");

/// One hook of an agent, as data: which event list, which matcher, what Codex calls the event
/// in its trust records.
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: &'static str,
    /// Codex's name for the event in a trust record's key and identity.
    codex_event: &'static str,
}

/// One agent's wiring: the protocol `agentsh hook` speaks to it and its hooks (issue 24): the
/// tool hook judges (and asks where the agent cannot), the dialog hook tells agentsh that the
/// agent is showing its own dialog for a command, so that a yes there is not asked twice.
pub struct AgentSpec {
    pub protocol: &'static str,
    pub hooks: &'static [HookSpec],
    /// The timeout field in the agent's own unit: seconds, or milliseconds (Gemini CLI).
    timeout_scale: u64,
    /// Extra fields of each hook entry.
    name: Option<&'static str>,
}

/// How long each agent gives agentsh's hook, in seconds. agentsh answers 10 s before it
/// (`--timeout`): waiting for a person in its own channel fits in it, with
/// `confirmationTimeoutSeconds` (60 by default) as the limit.
pub const HOOK_TIMEOUT: u64 = 300;

pub const CLAUDE: AgentSpec = AgentSpec {
    protocol: "claude-code",
    hooks: &[
        HookSpec { event: "PreToolUse", matcher: "Bash", codex_event: "" },
        HookSpec { event: "PermissionRequest", matcher: "Bash", codex_event: "" },
    ],
    timeout_scale: 1,
    name: None,
};
pub const CODEX: AgentSpec = AgentSpec {
    protocol: "codex",
    hooks: &[
        HookSpec { event: "PreToolUse", matcher: "Bash", codex_event: "pre_tool_use" },
        HookSpec { event: "PermissionRequest", matcher: "Bash", codex_event: "permission_request" },
    ],
    timeout_scale: 1,
    name: None,
};
pub const GEMINI: AgentSpec = AgentSpec {
    protocol: "gemini",
    hooks: &[
        HookSpec { event: "BeforeTool", matcher: "run_shell_command", codex_event: "" },
        HookSpec { event: "Notification", matcher: "ToolPermission", codex_event: "" },
    ],
    timeout_scale: 1000,
    name: Some("agentsh"),
};

pub fn run(args: InitArgs) -> Result<i32> {
    let bin = agentsh_path();
    match args.target {
        InitTarget::ClaudeCode => {
            let link = bash_link(&bin, args.write)?;
            let shell = link.display().to_string();
            json_target(&CLAUDE, claude_settings()?, &bin, Some(&shell), args.write)
        }
        InitTarget::Codex => {
            let code = json_target(&CODEX, codex_hooks()?, &bin, None, args.write)?;
            codex_trust(&bin, args.write)?;
            codex_shell_note(&bin, args.write)?;
            Ok(code)
        }
        InitTarget::Gemini => {
            let code = json_target(&GEMINI, home()?.join(".gemini/settings.json"), &bin, None, args.write)?;
            gemini_shell(&bin, args.write)?;
            Ok(code)
        }
        InitTarget::Bash => shell_target("bash", BASH_HOOK, home()?.join(".bashrc"), &bin, args.write, args.all_shells),
        InitTarget::Zsh => shell_target("zsh", ZSH_HOOK, zdotdir()?.join(".zshrc"), &bin, args.write, args.all_shells),
    }
}

/// This binary, by absolute path, so the agent finds it whatever its PATH.
fn agentsh_path() -> String {
    let exe = std::env::current_exe().ok().and_then(|p| p.to_str().map(str::to_string));
    exe.unwrap_or_else(|| "agentsh".to_string())
}

fn quote(s: &str) -> String {
    shlex::try_quote(s).map(|q| q.into_owned()).unwrap_or_else(|_| s.to_string())
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute()).context("HOME is not set")
}

pub fn claude_settings() -> Result<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(d) => Ok(d.join("settings.json")),
        None => Ok(home()?.join(".claude/settings.json")),
    }
}

pub fn codex_hooks() -> Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(d) => Ok(d.join("hooks.json")),
        None => Ok(home()?.join(".codex/hooks.json")),
    }
}

fn zdotdir() -> Result<PathBuf> {
    match std::env::var_os("ZDOTDIR").map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(d) => Ok(d),
        None => home(),
    }
}

/// The directory whose `bash` is agentsh: `~/.local/share/agentsh/bin` (`$XDG_DATA_HOME`).
/// Claude Code takes a shell only when its path says `bash` or `zsh`; Gemini CLI runs `bash`
/// from PATH; Codex runs the login shell by its file name. agentsh behaves as a shell under
/// that name (no subcommands: `cli::invoked_as_shell`).
pub fn shell_dir() -> Result<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    Ok(data.unwrap_or(home()?.join(".local/share")).join("agentsh/bin"))
}

/// `<shell_dir>/bash` -> this agentsh, created (or corrected) with --write.
fn bash_link(bin: &str, write: bool) -> Result<PathBuf> {
    let dir = shell_dir()?;
    let link = dir.join("bash");
    if !write {
        println!(
            "# and a shell named bash that is agentsh:
#   mkdir -p {0} && ln -sfn {1} {0}/bash",
            quote(&dir.display().to_string()),
            quote(bin)
        );
        return Ok(link);
    }
    let current = std::fs::read_link(&link).ok();
    if current.as_deref() == Some(Path::new(bin)) {
        println!("agentsh: {} -> {bin} already", link.display());
        return Ok(link);
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if std::fs::symlink_metadata(&link).is_ok() {
        std::fs::remove_file(&link).with_context(|| format!("cannot replace {}", link.display()))?;
    }
    std::os::unix::fs::symlink(bin, &link).with_context(|| format!("cannot link {}", link.display()))?;
    println!("agentsh: linked {} -> {bin}", link.display());
    Ok(link)
}

/// Gemini CLI 0.61 runs `bash` from PATH: the person starts it with the link directory first.
fn gemini_shell(bin: &str, write: bool) -> Result<()> {
    let link = bash_link(bin, write)?;
    let dir = link.parent().unwrap_or(Path::new(".")).display().to_string();
    println!(
        "# Gemini CLI runs `bash` from PATH: start it as  PATH={}:\"$PATH\" gemini  (e.g. alias gemini='PATH={}:\"$PATH\" gemini')",
        quote(&dir),
        quote(&dir)
    );
    Ok(())
}

fn codex_shell_note(bin: &str, write: bool) -> Result<()> {
    let link = bash_link(bin, write)?;
    println!("# Codex's shell route: make the login shell agentsh's bash link:  chsh -s {}", link.display());
    println!(
        "# Codex runs the login shell from the passwd entry (by its file name: bash, zsh or sh), and the model \
         chooses exec_command's shell, so the shell route alone is not a gate for Codex; the hook is."
    );
    Ok(())
}

/// Codex 0.169 runs a hook only after the person trusts it: `[hooks.state."<file>:<event>:
/// <group>:<handler>"] trusted_hash = "sha256:<hex>"` in config.toml, the hex being SHA-256 of the
/// hook's identity as compact JSON with sorted keys (`event_name`, `hooks` with `async`,
/// `command`, `timeout`, `type`, then `matcher`). Checked live: with this record `codex exec`
/// runs the hook without `--dangerously-bypass-hook-trust`.
pub fn codex_trust_record(
    hooks_file: &Path,
    event: &str,
    group: usize,
    matcher: &str,
    command: &str,
    timeout: u64,
) -> (String, String) {
    use sha2::Digest;
    let identity = json!({
        "event_name": event,
        "hooks": [{ "async": false, "command": command, "timeout": timeout, "type": "command" }],
        "matcher": matcher,
    });
    // serde_json keeps insertion order (preserve_order); the keys above are already sorted.
    let canonical = serde_json::to_string(&identity).unwrap_or_default();
    let hex: String = sha2::Sha256::digest(canonical.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    (format!("{}:{event}:{group}:0", hooks_file.display()), format!("sha256:{hex}"))
}

/// Whether a hook command runs agentsh's hook for `protocol`: `<…agentsh> hook <protocol>`,
/// with or without `--timeout N`.
pub fn runs_agentsh_hook(command: &str, protocol: &str) -> bool {
    let words = shlex::split(command).unwrap_or_default();
    matches!(words.as_slice(), [bin, hook, p, ..] if bin.contains("agentsh") && hook == "hook" && p == protocol)
}

/// The agentsh hook of `spec` in a settings value: its group's position, the group, the entry.
fn find_hook<'a>(settings: &'a Value, spec: &HookSpec, protocol: &str) -> Option<(usize, &'a Value, &'a Value)> {
    settings["hooks"][spec.event].as_array()?.iter().enumerate().find_map(|(i, g)| {
        let h = g["hooks"]
            .as_array()?
            .iter()
            .find(|h| h["command"].as_str().is_some_and(|c| runs_agentsh_hook(c, protocol)))?;
        Some((i, g, h))
    })
}

/// The command of each of the agent's agentsh hooks found in `settings`, by event (`None`
/// where one is missing).
pub fn installed_hooks(settings: &Value, agent: &AgentSpec) -> Vec<(&'static str, Option<String>)> {
    agent
        .hooks
        .iter()
        .map(|spec| {
            (
                spec.event,
                find_hook(settings, spec, agent.protocol)
                    .and_then(|(_, _, h)| h["command"].as_str().map(str::to_string)),
            )
        })
        .collect()
}

/// The trust record each agentsh hook in Codex's hooks.json needs, as it is now.
pub fn codex_expected_trust(hooks_file: &Path) -> Vec<(String, String)> {
    let Some(v) = std::fs::read_to_string(hooks_file).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) else {
        return Vec::new();
    };
    CODEX
        .hooks
        .iter()
        .filter_map(|spec| {
            let (i, g, h) = find_hook(&v, spec, CODEX.protocol)?;
            Some(codex_trust_record(
                hooks_file,
                spec.codex_event,
                i,
                g["matcher"].as_str().unwrap_or(""),
                h["command"].as_str()?,
                h["timeout"].as_u64().unwrap_or(600),
            ))
        })
        .collect()
}

fn codex_config() -> Result<PathBuf> {
    Ok(codex_hooks()?.with_file_name("config.toml"))
}

/// Writes (or corrects) the trust records of the agentsh hooks in Codex's config.toml.
fn codex_trust(bin: &str, write: bool) -> Result<()> {
    let hooks = codex_hooks()?;
    let config = codex_config()?;
    let mut records = codex_expected_trust(&hooks);
    if records.is_empty() || !write {
        // What --write would install.
        records = CODEX
            .hooks
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                codex_trust_record(
                    &hooks,
                    spec.codex_event,
                    if write { i } else { 0 },
                    spec.matcher,
                    &hook_command(&CODEX, bin),
                    HOOK_TIMEOUT,
                )
            })
            .collect();
    }
    if !write {
        println!("# and trust them in {} (Codex skips an untrusted hook silently):", config.display());
        for (key, hash) in &records {
            println!("[hooks.state.{}]\ntrusted_hash = {}", Value::String(key.clone()), Value::String(hash.clone()));
        }
        return Ok(());
    }
    let before = read_existing(&config)?.unwrap_or_default();
    let mut lines: Vec<String> = before.lines().map(str::to_string).collect();
    for (key, hash) in &records {
        set_trust(&mut lines, key, hash);
    }
    let after = lines.join("\n") + "\n";
    if after == before {
        println!("agentsh: the hooks are already trusted in {}", config.display());
        return Ok(());
    }
    let backup = backup(&config, (!before.is_empty()).then_some(before.as_str()))?;
    crate::policy::atomic_file::write_text(&config, after.as_bytes())?;
    print_change(&config, (!before.is_empty()).then_some(before.as_str()), &after, backup.as_deref());
    Ok(())
}

/// Sets `trusted_hash` under `[hooks.state."<key>"]` in config.toml's lines, adding the table
/// or the line where missing.
fn set_trust(lines: &mut Vec<String>, key: &str, hash: &str) {
    let table = format!("[hooks.state.{}]", Value::String(key.to_string()));
    let line = format!("trusted_hash = {}", Value::String(hash.to_string()));
    match lines.iter().position(|l| l.trim() == table) {
        Some(at) => {
            // Replace the table's trusted_hash line (or add one right under the header).
            let end = lines[at + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with('['))
                .map_or(lines.len(), |e| at + 1 + e);
            match lines[at + 1..end].iter().position(|l| l.trim_start().starts_with("trusted_hash")) {
                Some(i) => lines[at + 1 + i] = line,
                None => lines.insert(at + 1, line),
            }
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push(table);
            lines.push(line);
        }
    }
}

/// `'<agentsh>' hook <protocol> --timeout <seconds>`.
pub fn hook_command(agent: &AgentSpec, bin: &str) -> String {
    format!("{} hook {} --timeout {HOOK_TIMEOUT}", quote(bin), agent.protocol)
}

/// The hook entry, as the agent's settings hold it.
fn hook_entry(agent: &AgentSpec, bin: &str) -> Value {
    let mut entry = json!({ "type": "command", "command": hook_command(agent, bin), "timeout": HOOK_TIMEOUT * agent.timeout_scale });
    if let Some(name) = agent.name {
        entry["name"] = Value::String(name.into());
    }
    entry
}

/// The settings snippet for one agent (and Claude Code's shell).
fn snippet(agent: &AgentSpec, bin: &str, shell: Option<&str>) -> Value {
    let mut map = Map::new();
    merge(&mut map, agent, bin, shell).expect("an empty object takes the hooks");
    Value::Object(map)
}

/// Puts the agent's agentsh hooks into `hooks.<event>` (an agentsh hook already there is brought
/// up to date in place, never added twice), and `env.CLAUDE_CODE_SHELL` for Claude Code. Returns
/// false when nothing changed. Fails, changing nothing, on a shape it does not know.
fn merge(map: &mut Map<String, Value>, agent: &AgentSpec, bin: &str, shell: Option<&str>) -> Result<bool> {
    let mut changed = false;
    let hooks = map.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else { bail!("\"hooks\" is not an object; fix the file first") };
    for spec in agent.hooks {
        if let Some(list) = hooks.get(spec.event)
            && !list.is_array()
        {
            bail!("\"hooks.{}\" is not a list; fix the file first", spec.event);
        }
    }
    for spec in agent.hooks {
        let list = hooks.entry(spec.event).or_insert_with(|| json!([])).as_array_mut().expect("checked above");
        let entry = hook_entry(agent, bin);
        let found = list.iter_mut().find_map(|g| {
            let at = g["hooks"]
                .as_array()?
                .iter()
                .position(|h| h["command"].as_str().is_some_and(|c| runs_agentsh_hook(c, agent.protocol)))?;
            Some((g, at))
        });
        match found {
            Some((group, at)) => {
                if group["hooks"][at] != entry || group["matcher"] != spec.matcher {
                    group["hooks"][at] = entry;
                    group["matcher"] = Value::String(spec.matcher.into());
                    changed = true;
                }
            }
            None => {
                list.push(json!({ "matcher": spec.matcher, "hooks": [entry] }));
                changed = true;
            }
        }
    }
    if let Some(shell) = shell {
        let env = map.entry("env").or_insert_with(|| json!({}));
        let Some(env) = env.as_object_mut() else { bail!("\"env\" is not an object; fix the file first") };
        if env.get("CLAUDE_CODE_SHELL").and_then(Value::as_str) != Some(shell) {
            env.insert("CLAUDE_CODE_SHELL".into(), Value::String(shell.into()));
            changed = true;
        }
    }
    Ok(changed)
}

fn json_target(agent: &AgentSpec, path: PathBuf, bin: &str, shell: Option<&str>, write: bool) -> Result<i32> {
    if !write {
        println!("# merge into {} (or run: agentsh init {} --write)", path.display(), agent.protocol);
        println!("{}", serde_json::to_string_pretty(&snippet(agent, bin, shell))?);
        if agent.protocol == "codex" {
            println!("# Codex builds before hooks were on by default also need, in ~/.codex/config.toml:");
            println!("#   [features]\n#   hooks = true");
        }
        return Ok(0);
    }
    let before = read_existing(&path)?;
    let mut map = match before.as_deref().map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!("{}: not a JSON object; agentsh will not touch it", path.display()),
            Err(e) => bail!(
                "{}:{}:{}: not valid JSON ({e}); agentsh will not touch it. Fix it, or add this by hand:\n{}",
                path.display(),
                e.line(),
                e.column(),
                serde_json::to_string_pretty(&snippet(agent, bin, shell))?
            ),
        },
    };
    let shown_before = before.as_deref().map(|_| pretty(&Value::Object(map.clone())));
    if !merge(&mut map, agent, bin, shell)? {
        println!("agentsh: already installed in {}", path.display());
        return Ok(0);
    }
    let backup = backup(&path, before.as_deref())?;
    // Merge again under the lock, on what is there now: a concurrent writer loses nothing.
    crate::policy::atomic_file::update(&path, |m| merge(m, agent, bin, shell).map(|_| ()))?;
    let after = std::fs::read_to_string(&path).unwrap_or_else(|_| pretty(&Value::Object(map)));
    if let (Some(raw), Some(formatted)) = (before.as_deref(), shown_before.as_deref())
        && raw.trim_end() != formatted.trim_end()
    {
        // Issue 29, item 8: a compact file would otherwise show as rewritten whole.
        println!(
            "note: {} is rewritten formatted (2-space JSON); the diff compares the formatted forms",
            path.display()
        );
    }
    print_change(&path, shown_before.as_deref(), &after, backup.as_deref());
    Ok(0)
}

/// JSON as agentsh writes a settings file (`atomic_file`).
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn shell_target(shell: &str, hook: &str, rc: PathBuf, bin: &str, write: bool, all_shells: bool) -> Result<i32> {
    if !write {
        print!("{}", hook.replace("@AGENTSH@", &quote(bin)).replace("@PAGERS@", &pager_lines()));
        return Ok(0);
    }
    // The person's own shells are gated only by choice (--all-shells); otherwise only the
    // shells started with AGENTSH_GATE=1, the terminals an agent types into.
    let line = if all_shells {
        format!("eval \"$({} init {shell})\"  # agentsh: gate each command line", quote(bin))
    } else {
        format!(
            "[ -n \"${{AGENTSH_GATE-}}\" ] && eval \"$({} init {shell})\"  # agentsh: gate each command line of shells started with AGENTSH_GATE=1",
            quote(bin)
        )
    };
    let before = read_existing(&rc)?;
    let text = before.clone().unwrap_or_default();
    if text.lines().any(|l| l.contains("agentsh") && l.contains(&format!("init {shell}"))) {
        println!("agentsh: already installed in {}", rc.display());
        return Ok(0);
    }
    let mut after = text.clone();
    if !after.is_empty() && !after.ends_with('\n') {
        after.push('\n');
    }
    after.push_str(&line);
    after.push('\n');
    let backup = backup(&rc, before.as_deref())?;
    crate::policy::atomic_file::write_text(&rc, after.as_bytes())?;
    print_change(&rc, before.as_deref(), &after, backup.as_deref());
    if all_shells {
        println!("agentsh: every new interactive {shell} is gated, yours included");
    } else {
        println!(
            "agentsh: start the {shell} an agent types into with AGENTSH_GATE=1 {shell}; your own shells are not gated \
             (--all-shells gates them too)"
        );
    }
    Ok(0)
}

/// The gated shell's pagers in their secure mode, as agentsh gives a command it runs with no
/// box (rt8 C4: on the line gate the shell runs the line, so agentsh sets nothing for it): what
/// `run::pagers` would set, exported. `check --prompt` sees whether they still hold.
fn pager_lines() -> String {
    let set = crate::run::pagers::guard(|name| std::env::var(name).ok(), crate::run::exec::findable("less"));
    let pairs: Vec<String> = set.iter().map(|(name, value)| format!("{name}={}", quote(value))).collect();
    format!("export {}; unset {}", pairs.join(" "), crate::run::pagers::REMOVED.join(" "))
}

fn read_existing(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Copies the file as it was to `<file>.agentsh-backup-<seconds>`; none for a new file.
fn backup(path: &Path, before: Option<&str>) -> Result<Option<PathBuf>> {
    let Some(text) = before else { return Ok(None) };
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".agentsh-backup-{secs}"));
    let b = path.with_file_name(name);
    std::fs::write(&b, text).with_context(|| format!("cannot write the backup {}", b.display()))?;
    Ok(Some(b))
}

/// The change as a unified-style diff. `before` is `None` for a file that did not exist.
fn print_change(path: &Path, before: Option<&str>, after: &str, backup: Option<&Path>) {
    match before {
        Some(_) => println!("--- {0}\n+++ {0}", path.display()),
        None => println!("--- /dev/null\n+++ {} (new file)", path.display()),
    }
    print!("{}", diff(before.unwrap_or(""), after));
    match backup {
        Some(b) => println!("agentsh: wrote {}; the old file is kept as {}", path.display(), b.display()),
        None => println!("agentsh: wrote {} (new file)", path.display()),
    }
}

/// A line diff (longest common subsequence), changed lines with two lines of context.
pub fn diff(before: &str, after: &str) -> String {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let near = |k: usize| ops[k.saturating_sub(2)..(k + 3).min(ops.len())].iter().any(|(c, _)| *c != ' ');
    let mut out = String::new();
    let mut skipped = false;
    for (k, (c, line)) in ops.iter().enumerate() {
        if *c != ' ' || near(k) {
            if skipped {
                out.push_str("...\n");
                skipped = false;
            }
            out.push_str(&format!("{c}{line}\n"));
        } else {
            skipped = true;
        }
    }
    if skipped {
        out.push_str("...\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_without_destroying_and_only_once() {
        let mut m: Map<String, Value> = serde_json::from_str(
            r#"{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"fmt"}]}],"Stop":[]}}"#,
        )
        .unwrap();
        assert!(merge(&mut m, &CLAUDE, "/usr/bin/agentsh", Some("/h/bash")).unwrap());
        assert!(!merge(&mut m, &CLAUDE, "/usr/bin/agentsh", Some("/h/bash")).unwrap());
        assert_eq!(m["model"], "opus");
        assert_eq!(m["hooks"]["Stop"], json!([]));
        assert_eq!(m["env"]["CLAUDE_CODE_SHELL"], "/h/bash");
        let list = m["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["matcher"], "Bash");
        assert_eq!(list[1]["hooks"][0]["command"], "/usr/bin/agentsh hook claude-code --timeout 300");
        assert_eq!(m["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"], 300);
        // A different protocol is a different hook.
        assert!(merge(&mut m, &CODEX, "/usr/bin/agentsh", None).unwrap());
        // An agentsh hook of another build or shape is replaced in place, not added beside.
        assert!(merge(&mut m, &CLAUDE, "/opt/agentsh", Some("/h/bash")).unwrap());
        assert_eq!(m["hooks"]["PreToolUse"].as_array().unwrap().len(), 3, "Edit's, Claude Code's and Codex's");
        assert_eq!(m["hooks"]["PreToolUse"][1]["hooks"][0]["command"], "/opt/agentsh hook claude-code --timeout 300");
    }

    #[test]
    fn refuses_shapes_it_does_not_know() {
        let mut m: Map<String, Value> = serde_json::from_str(r#"{"hooks":[1]}"#).unwrap();
        assert!(merge(&mut m, &CLAUDE, "agentsh", None).is_err());
        let mut m: Map<String, Value> = serde_json::from_str(r#"{"hooks":{"Notification":{}}}"#).unwrap();
        assert!(merge(&mut m, &GEMINI, "agentsh", None).is_err());
        assert_eq!(m["hooks"], json!({"Notification": {}}), "nothing was added before the refusal");
        let mut m: Map<String, Value> = serde_json::from_str(r#"{"env":"x"}"#).unwrap();
        assert!(merge(&mut m, &CLAUDE, "agentsh", Some("/h/bash")).is_err());
    }

    #[test]
    fn snippets_are_each_agents_shape() {
        let g = snippet(&GEMINI, "/bin/agentsh", None);
        assert_eq!(g["hooks"]["BeforeTool"][0]["matcher"], "run_shell_command");
        assert_eq!(g["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 300_000, "Gemini CLI counts milliseconds");
        assert_eq!(g["hooks"]["Notification"][0]["matcher"], "ToolPermission");
        let c = snippet(&CODEX, "/a b/agentsh", None);
        assert_eq!(c["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "'/a b/agentsh' hook codex --timeout 300");
        assert_eq!(c["hooks"]["PermissionRequest"][0]["matcher"], "Bash");
        assert!(runs_agentsh_hook("'/a b/agentsh' hook codex --timeout 300", "codex"));
        assert!(runs_agentsh_hook("/usr/bin/agentsh hook codex", "codex"));
        assert!(!runs_agentsh_hook("/usr/bin/agentsh hook gemini", "codex"));
        assert!(!runs_agentsh_hook("/usr/bin/other hook codex", "codex"));
    }

    #[test]
    fn diff_shows_changed_lines() {
        let d = diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nX\ne\nf\ng\n");
        assert_eq!(d, "...\n b\n c\n-d\n+X\n e\n f\n...\n");
        assert_eq!(diff("", "x\n"), "+x\n");
    }

    #[test]
    fn codex_trust_record_matches_what_codex_0_169_accepted() {
        // Observed live (issue 14): with this record in config.toml, `codex exec` ran the hook
        // without --dangerously-bypass-hook-trust.
        let (key, hash) = codex_trust_record(
            Path::new("/tmp/cap/c2/codex/hooks.json"),
            "pre_tool_use",
            0,
            "Bash",
            "/work/wt-agents/target/debug/agentsh hook codex",
            30,
        );
        assert_eq!(key, "/tmp/cap/c2/codex/hooks.json:pre_tool_use:0:0");
        assert_eq!(hash, "sha256:17bf86976c608c3a1a4f3219c98e1f655976499afdb0212027bb75902266a06b");
    }
}
