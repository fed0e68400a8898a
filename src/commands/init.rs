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

/// One hook wiring, as data: which file, which event list, which matcher, which entry.
struct HookSpec {
    event: &'static str,
    matcher: &'static str,
    protocol: &'static str,
    /// Extra fields of the hook entry (timeouts are in the agent's own unit).
    extra: fn() -> Value,
}

const CLAUDE: HookSpec =
    HookSpec { event: "PreToolUse", matcher: "Bash", protocol: "claude-code", extra: || json!({}) };
const CODEX: HookSpec =
    HookSpec { event: "PreToolUse", matcher: "Bash", protocol: "codex", extra: || json!({ "timeout": 30 }) };
const GEMINI: HookSpec = HookSpec {
    event: "BeforeTool",
    matcher: "run_shell_command",
    protocol: "gemini",
    extra: || json!({ "name": "agentsh", "timeout": 30000 }),
};

pub fn run(args: InitArgs) -> Result<i32> {
    let bin = agentsh_path();
    match args.target {
        InitTarget::ClaudeCode => {
            let code = json_target(&CLAUDE, claude_settings()?, &bin, args.write)?;
            claude_shell(&bin, args.write)?;
            Ok(code)
        }
        InitTarget::Codex => {
            let code = json_target(&CODEX, codex_hooks()?, &bin, args.write)?;
            codex_trust(&bin, args.write)?;
            codex_shell_note(&bin, args.write)?;
            Ok(code)
        }
        InitTarget::Gemini => {
            let code = json_target(&GEMINI, home()?.join(".gemini/settings.json"), &bin, args.write)?;
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

/// Claude Code 2.1: `CLAUDE_CODE_SHELL` in settings.json `env`, pointing at the `bash` link.
fn claude_shell(bin: &str, write: bool) -> Result<()> {
    let link = bash_link(bin, write)?;
    let value = link.display().to_string();
    if !write {
        println!("# and in the same settings file: {{\"env\": {{\"CLAUDE_CODE_SHELL\": {}}}}}", Value::String(value));
        return Ok(());
    }
    let path = claude_settings()?;
    let changed = crate::policy::atomic_file::update(&path, |m| {
        let env = m.entry("env").or_insert_with(|| json!({}));
        let Some(env) = env.as_object_mut() else { bail!("\"env\" is not an object; fix the file first") };
        let changed = env.get("CLAUDE_CODE_SHELL").and_then(Value::as_str) != Some(value.as_str());
        env.insert("CLAUDE_CODE_SHELL".into(), Value::String(value.clone()));
        Ok(changed)
    })?;
    if changed {
        println!("agentsh: set env.CLAUDE_CODE_SHELL={value} in {}", path.display());
    }
    Ok(())
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

/// Codex 0.169 runs a hook only after the person trusts it: `[hooks.state."<file>:pre_tool_use:
/// <group>:<handler>"] trusted_hash = "sha256:<hex>"` in config.toml, the hex being SHA-256 of the
/// hook's identity as compact JSON with sorted keys (`event_name`, `hooks` with `async`,
/// `command`, `timeout`, `type`, then `matcher`). Checked live: with this record `codex exec`
/// runs the hook without `--dangerously-bypass-hook-trust`.
pub fn codex_trust_record(
    hooks_file: &Path,
    group: usize,
    matcher: &str,
    command: &str,
    timeout: u64,
) -> (String, String) {
    use sha2::Digest;
    let identity = json!({
        "event_name": "pre_tool_use",
        "hooks": [{ "async": false, "command": command, "timeout": timeout, "type": "command" }],
        "matcher": matcher,
    });
    // serde_json keeps insertion order (preserve_order); the keys above are already sorted.
    let canonical = serde_json::to_string(&identity).unwrap_or_default();
    let hex: String = sha2::Sha256::digest(canonical.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    (format!("{}:pre_tool_use:{group}:0", hooks_file.display()), format!("sha256:{hex}"))
}

/// The agentsh hook's place in hooks.json and its trust record.
pub fn codex_expected_trust(hooks_file: &Path) -> Option<(String, String)> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(hooks_file).ok()?).ok()?;
    let groups = v["hooks"]["PreToolUse"].as_array()?;
    groups.iter().enumerate().find_map(|(i, g)| {
        let h = g["hooks"].as_array()?.first()?;
        let cmd = h["command"].as_str()?;
        (cmd.contains("agentsh") && cmd.ends_with("hook codex")).then(|| {
            codex_trust_record(
                hooks_file,
                i,
                g["matcher"].as_str().unwrap_or(""),
                cmd,
                h["timeout"].as_u64().unwrap_or(600),
            )
        })
    })
}

fn codex_config() -> Result<PathBuf> {
    Ok(codex_hooks()?.with_file_name("config.toml"))
}

/// Writes (or corrects) the trust record of the agentsh hook in Codex's config.toml.
fn codex_trust(bin: &str, write: bool) -> Result<()> {
    let hooks = codex_hooks()?;
    let config = codex_config()?;
    let (key, hash) = match codex_expected_trust(&hooks) {
        Some(t) => t,
        None => {
            let cmd = hook_command(&CODEX, bin);
            codex_trust_record(&hooks, 0, CODEX.matcher, &cmd, 30)
        }
    };
    let table = format!("[hooks.state.{}]", Value::String(key.clone()));
    let line = format!("trusted_hash = {}", Value::String(hash.clone()));
    if !write {
        println!(
            "# and trust it in {} (Codex skips an untrusted hook silently):
{table}
{line}",
            config.display()
        );
        return Ok(());
    }
    let before = read_existing(&config)?.unwrap_or_default();
    let mut lines: Vec<String> = before.lines().map(str::to_string).collect();
    match lines.iter().position(|l| l.trim() == table) {
        Some(at) => {
            // Replace the table's trusted_hash line (or add one right under the header).
            let end = lines[at + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with('['))
                .map_or(lines.len(), |e| at + 1 + e);
            match lines[at + 1..end].iter().position(|l| l.trim_start().starts_with("trusted_hash")) {
                Some(i) if lines[at + 1 + i] == line => {
                    println!("agentsh: the hook is already trusted in {}", config.display());
                    return Ok(());
                }
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
    let after = lines.join("\n") + "\n";
    let backup = backup(&config, (!before.is_empty()).then_some(before.as_str()))?;
    crate::policy::atomic_file::write_text(&config, after.as_bytes())?;
    print_change(&config, &before, &after, backup.as_deref());
    Ok(())
}

fn hook_command(spec: &HookSpec, bin: &str) -> String {
    format!("{} hook {}", quote(bin), spec.protocol)
}

/// The settings snippet for one agent.
fn snippet(spec: &HookSpec, bin: &str) -> Value {
    let mut map = Map::new();
    merge_hook(&mut map, spec, bin).expect("an empty object takes the hook");
    Value::Object(map)
}

/// Adds the hook to `hooks.<event>` unless an agentsh hook of this protocol is already there.
/// Returns false when nothing changed. Fails, changing nothing, on a shape it does not know.
fn merge_hook(map: &mut Map<String, Value>, spec: &HookSpec, bin: &str) -> Result<bool> {
    let hooks = map.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else { bail!("\"hooks\" is not an object; fix the file first") };
    let list = hooks.entry(spec.event).or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else { bail!("\"hooks.{}\" is not a list; fix the file first", spec.event) };
    let marker = format!("hook {}", spec.protocol);
    let present = list.iter().any(|group| {
        group["hooks"].as_array().is_some_and(|hs| {
            hs.iter().any(|h| h["command"].as_str().is_some_and(|c| c.contains("agentsh") && c.ends_with(&marker)))
        })
    });
    if present {
        return Ok(false);
    }
    let mut entry = json!({ "type": "command", "command": hook_command(spec, bin) });
    if let (Some(e), Value::Object(extra)) = (entry.as_object_mut(), (spec.extra)()) {
        e.extend(extra);
    }
    list.push(json!({ "matcher": spec.matcher, "hooks": [entry] }));
    Ok(true)
}

fn json_target(spec: &HookSpec, path: PathBuf, bin: &str, write: bool) -> Result<i32> {
    if !write {
        println!("# merge into {} (or run: agentsh init {} --write)", path.display(), spec.protocol);
        println!("{}", serde_json::to_string_pretty(&snippet(spec, bin))?);
        if spec.protocol == "codex" {
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
                serde_json::to_string_pretty(&snippet(spec, bin))?
            ),
        },
    };
    if !merge_hook(&mut map, spec, bin)? {
        println!("agentsh: already installed in {}", path.display());
        return Ok(0);
    }
    let after = serde_json::to_string_pretty(&Value::Object(map))? + "\n";
    let backup = backup(&path, before.as_deref())?;
    // Merge again under the lock, on what is there now: a concurrent writer loses nothing.
    crate::policy::atomic_file::update(&path, |m| merge_hook(m, spec, bin).map(|_| ()))?;
    print_change(&path, before.as_deref().unwrap_or(""), &after, backup.as_deref());
    Ok(0)
}

fn shell_target(shell: &str, hook: &str, rc: PathBuf, bin: &str, write: bool, all_shells: bool) -> Result<i32> {
    if !write {
        print!("{}", hook.replace("@AGENTSH@", &quote(bin)));
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
    print_change(&rc, &text, &after, backup.as_deref());
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

fn print_change(path: &Path, before: &str, after: &str, backup: Option<&Path>) {
    println!("--- {}", path.display());
    println!("+++ {} (new)", path.display());
    print!("{}", diff(before, after));
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
        assert!(merge_hook(&mut m, &CLAUDE, "/usr/bin/agentsh").unwrap());
        assert!(!merge_hook(&mut m, &CLAUDE, "/usr/bin/agentsh").unwrap());
        assert_eq!(m["model"], "opus");
        assert_eq!(m["hooks"]["Stop"], json!([]));
        let list = m["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["matcher"], "Bash");
        assert_eq!(list[1]["hooks"][0]["command"], "/usr/bin/agentsh hook claude-code");
        // A different protocol is a different hook.
        assert!(merge_hook(&mut m, &CODEX, "/usr/bin/agentsh").unwrap());
    }

    #[test]
    fn refuses_shapes_it_does_not_know() {
        let mut m: Map<String, Value> = serde_json::from_str(r#"{"hooks":[1]}"#).unwrap();
        assert!(merge_hook(&mut m, &CLAUDE, "agentsh").is_err());
        let mut m: Map<String, Value> = serde_json::from_str(r#"{"hooks":{"BeforeTool":{}}}"#).unwrap();
        assert!(merge_hook(&mut m, &GEMINI, "agentsh").is_err());
        assert_eq!(m["hooks"]["BeforeTool"], json!({}));
    }

    #[test]
    fn snippets_are_each_agents_shape() {
        let g = snippet(&GEMINI, "/bin/agentsh");
        assert_eq!(g["hooks"]["BeforeTool"][0]["matcher"], "run_shell_command");
        assert_eq!(g["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 30000);
        let c = snippet(&CODEX, "/a b/agentsh");
        assert_eq!(c["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "'/a b/agentsh' hook codex");
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
            0,
            "Bash",
            "/work/wt-agents/target/debug/agentsh hook codex",
            30,
        );
        assert_eq!(key, "/tmp/cap/c2/codex/hooks.json:pre_tool_use:0:0");
        assert_eq!(hash, "sha256:17bf86976c608c3a1a4f3219c98e1f655976499afdb0212027bb75902266a06b");
    }
}
