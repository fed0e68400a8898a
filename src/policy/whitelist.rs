//! Whitelist entries: which ones a person may choose for "always", what an entry lets through
//! beyond its words, and writing one into a config file: atomic (`atomic_file`), and for the
//! project file its trust record follows the new content. Used by `agentsh whitelist` and by
//! an "always" answer to a prompt.

use crate::judge::assess;
use crate::judge::decide::{self, DecidedBy, Part, Verdict, normalize_words};
use crate::model::Risk;
use crate::policy::{atomic_file, config};
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// The config key of the whitelist.
pub const KEY: &str = "commandWhitelist";

/// Adds `entry` unless an equal one (ignoring case and spacing) is there. Returns whether it
/// was added. Used by `whitelist add` and by "always" at the prompt.
pub fn add_entry(path: &Path, entry: &str) -> Result<bool> {
    let wanted = normalize_words(entry);
    write(path, |m| {
        let list = atomic_file::string_list(m, KEY)?;
        if list.iter().filter_map(Value::as_str).any(|e| normalize_words(e) == wanted) {
            return Ok(false);
        }
        list.push(Value::String(entry.to_string()));
        Ok(true)
    })
}

/// Where "always" writes an entry for a command run in `cwd`: the project's own file when it
/// is trusted (its whitelist applies), else the user config's `projectWhitelist` for this
/// project (an untrusted project file's whitelist is ignored, so an entry there would do
/// nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    ProjectFile(std::path::PathBuf),
    UserForProject { file: std::path::PathBuf, root: std::path::PathBuf },
}

impl Destination {
    pub fn for_cwd(cwd: &Path) -> Option<Destination> {
        if let Some(project) = config::find_project_file(cwd)
            && let Ok(bytes) = config::read_bytes(&project)
            && crate::policy::trust::state(&project, &config::Content::new(bytes, None))
                == crate::policy::trust::State::Trusted
        {
            return Some(Destination::ProjectFile(project));
        }
        let file = config::user_file()?;
        let root = config::project_root(cwd);
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        Some(Destination::UserForProject { file, root })
    }

    /// For the person: where the entry goes.
    pub fn describe(&self) -> String {
        match self {
            Destination::ProjectFile(p) => p.display().to_string(),
            Destination::UserForProject { file, root } => {
                format!("{} (projectWhitelist, for {})", file.display(), root.display())
            }
        }
    }

    /// Adds `entry` there; whether it was added (not already present).
    pub fn add(&self, entry: &str) -> Result<bool> {
        match self {
            Destination::ProjectFile(p) => add_entry(p, entry),
            Destination::UserForProject { file, root } => {
                let wanted = normalize_words(entry);
                let root = root.display().to_string();
                atomic_file::update(file, |m| {
                    let projects =
                        m.entry(PROJECTS.to_string()).or_insert_with(|| Value::Object(serde_json::Map::new()));
                    let Value::Object(projects) = projects else {
                        anyhow::bail!("projectWhitelist in {} is not an object; fix it first", file.display())
                    };
                    let list = atomic_file::string_list(projects, &root)?;
                    if list.iter().filter_map(Value::as_str).any(|e| normalize_words(e) == wanted) {
                        return Ok(false);
                    }
                    list.push(Value::String(entry.to_string()));
                    Ok(true)
                })
            }
        }
    }
}

/// One list of whitelist entries that agentsh writes: a project file's `commandWhitelist`, the
/// user config's `commandWhitelist`, or its `projectWhitelist` for one project. `whitelist list`,
/// `rm` and `clear` work on every list that "always" or `whitelist add` can write (issue 29,
/// item 2: an "always" entry in `projectWhitelist` could not be listed by number or removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List {
    pub place: Place,
    pub entries: Vec<String>,
    /// Whether its entries apply (an untrusted project file's do not), and why not.
    pub ignored: Option<String>,
}

/// Where a [`List`] lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// `.agents/terminal.json`'s `commandWhitelist`.
    ProjectFile(std::path::PathBuf),
    /// The user config's `commandWhitelist`: every project.
    User(std::path::PathBuf),
    /// The user config's `projectWhitelist[root]`: one project ("always" writes here when the
    /// project file is not trusted).
    UserForProject { file: std::path::PathBuf, root: String },
}

impl Place {
    /// For the person: the file, and for whom.
    pub fn describe(&self) -> String {
        match self {
            Place::ProjectFile(p) => p.display().to_string(),
            Place::User(f) => format!("{} (every project)", f.display()),
            Place::UserForProject { file, root } => format!("{} (projectWhitelist, for {root})", file.display()),
        }
    }

    /// Removes the entries `drop` picks; returns the ones removed. The file is rewritten
    /// only when something goes, so a missing file is never created.
    pub fn remove(&self, mut drop: impl FnMut(&str) -> bool) -> Result<Vec<String>> {
        let mut take = |list: &mut Vec<Value>| -> Vec<String> {
            let mut gone = Vec::new();
            list.retain(|v| match v.as_str() {
                Some(e) if drop(e) => {
                    gone.push(e.to_string());
                    false
                }
                _ => true,
            });
            gone
        };
        match self {
            Place::ProjectFile(p) => write(p, |m| Ok(take(atomic_file::string_list(m, KEY)?))),
            Place::User(f) => atomic_file::update(f, |m| Ok(take(atomic_file::string_list(m, KEY)?))),
            Place::UserForProject { file, root } => atomic_file::update(file, |m| {
                let Some(Value::Object(projects)) = m.get_mut(PROJECTS) else { return Ok(Vec::new()) };
                let gone = take(atomic_file::string_list(projects, root)?);
                // No empty lists left behind for projects that have none.
                if projects.get(root).and_then(Value::as_array).is_some_and(Vec::is_empty) {
                    projects.remove(root);
                }
                Ok(gone)
            }),
        }
    }
}

/// The user config's key for per-project entries.
pub const PROJECTS: &str = "projectWhitelist";

/// The lists `whitelist list|rm|clear` work on. For a project (`user` false): the project file's
/// list and the user config's entries for this project (`cwd` or a directory holding it). For
/// the user config (`user` true): its own list and its entries for every project. A file that
/// cannot be read is an error, never an empty list.
pub fn lists(cwd: &Path, user: bool) -> Result<Vec<List>> {
    let mut out = Vec::new();
    let user_file = config::user_file();
    if !user {
        let project = config::project_file_for_writing(cwd);
        let entries = read_entries(&project)?.whitelist.to_vec();
        let ignored = ignored_because(&project);
        out.push(List { place: Place::ProjectFile(project), entries, ignored });
    }
    let Some(file) = user_file else {
        if user {
            anyhow::bail!("cannot find the user config directory (is HOME set?)");
        }
        return Ok(out);
    };
    let settings = read_entries(&file)?;
    if user {
        out.push(List { place: Place::User(file.clone()), entries: settings.whitelist.to_vec(), ignored: None });
    }
    let canonical = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    for (root, entries) in &settings.project_whitelist {
        let here = cwd.starts_with(root) || canonical.starts_with(root);
        if user || here {
            let place = Place::UserForProject { file: file.clone(), root: root.clone() };
            out.push(List { place, entries: entries.clone(), ignored: None });
        }
    }
    // "Always" writes for this project even before there is an entry: the list is shown empty.
    if !user && !out.iter().any(|l| matches!(l.place, Place::UserForProject { .. })) {
        let root = config::project_root(cwd);
        let root = std::fs::canonicalize(&root).unwrap_or(root).display().to_string();
        out.push(List { place: Place::UserForProject { file, root }, entries: Vec::new(), ignored: None });
    }
    Ok(out)
}

/// A config file's settings; a missing file has none, a malformed one is an error.
fn read_entries(path: &Path) -> Result<config::FileSettings> {
    if !path.exists() {
        return Ok(config::FileSettings::default());
    }
    let settings = config::read_file(path);
    let unreadable = |w: &&String| w.contains("not valid JSON") || w.contains(KEY) || w.contains(PROJECTS);
    if let Some(w) = settings.warnings.iter().find(unreadable) {
        let w = w.trim_end_matches("; its settings are ignored");
        anyhow::bail!("{w}; fix the file first, agentsh will not overwrite it");
    }
    Ok(settings)
}

/// Why a project file's entries do not apply: it is not trusted.
fn ignored_because(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    (crate::policy::trust::state(path, &config::Content::new(bytes, None)) != crate::policy::trust::State::Trusted)
        .then(|| "NOT trusted: these entries are ignored until you run `agentsh trust`".to_string())
}

/// Every whitelist write: atomic through `atomic_file`, and for the project file the trust record
/// follows the new content while the file's lock is still held (see `trust::carry_over`).
pub fn write<T>(path: &Path, change: impl FnOnce(&mut serde_json::Map<String, Value>) -> Result<T>) -> Result<T> {
    if !path.ends_with(config::PROJECT_FILE) {
        return atomic_file::update(path, change);
    }
    let user = crate::policy::trust::user_settings();
    atomic_file::update_then(path, change, |old, new| {
        // The file is written by now: a trust store that cannot be written (read-only in a
        // sandbox, say) only means the person must run `agentsh trust` again.
        match crate::policy::trust::carry_over(path, old, new, &user) {
            Ok(None) => {}
            Ok(Some(note)) => eprintln!("agentsh: note: {note}"),
            Err(e) => eprintln!(
                "agentsh: note: the file was saved, but its trust could not be recorded ({}); run `agentsh trust`",
                crate::text::sanitize::sanitize(&format!("{e:#}"))
            ),
        }
        Ok(())
    })
}

/// Whitelist entries a person may choose for "always": the part's whole command and shorter
/// prefixes, but never a bare interpreter, shell or wrapper, which would allow anything.
pub fn always_entries(asking: &[&Part]) -> Vec<String> {
    // With several asking parts one entry cannot cover them all: approve once instead.
    let [only] = asking else { return Vec::new() };
    // An ask rule is not lifted by the whitelist, so an entry for it would do nothing; nor is
    // what the box would have hidden where there is no box (`judge::unboxed`).
    if matches!(
        only.decided_by,
        DecidedBy::BrokenBlacklist(_)
            | DecidedBy::ForcedAsk
            | DecidedBy::BrokenRules(_)
            | DecidedBy::Rule(_)
            | DecidedBy::NoBox
    ) || only.assessment.argv.is_empty()
    {
        return Vec::new();
    }
    // Nor for what agentsh could not read (`parse`, `opaque`) or reads two ways (`raw-text`).
    if matches!(only.assessment.rule.as_str(), "redirect" | "parse" | "opaque" | "raw-text") {
        return Vec::new();
    }
    let argv = &only.assessment.argv;
    // `bash`, `exec` or `sudo` alone as the whole command would still become an entry that
    // matches `bash -c '...'`, `exec rm ...`: anything at all.
    if argv.len() == 1 && NEVER_ALONE.contains(&assess::basename(&argv[0])) {
        return Vec::new();
    }
    let mut out = vec![assess::quote_argv(argv)];
    // Through a wrapper (`sudo apt install x`), a shorter entry would allow the wrapper with
    // other words: `sudo apt` is `sudo apt remove` too.
    if WRAPPERS.contains(&assess::basename(&argv[0])) {
        return out;
    }
    for n in (1..argv.len().min(3)).rev() {
        let prefix = &argv[..n];
        // A flag left out may be what made it risky (`git push --force` is not `git push`):
        // an entry that drops one would allow more than the person approved.
        if argv[n..].iter().any(|w| w.starts_with('-')) {
            continue;
        }
        // Nor one that would cover a riskier use of the same words (`git push` for `git push
        // origin main` covers `git push --force`): tried with the flags that make commands
        // riskier.
        if covers_riskier(prefix, only.assessment.risk).is_some() {
            continue;
        }
        // Nor one whose left-out words are what made it risky (issue 29, item 3: `chmod 600` for
        // `chmod 600 ~/.gitconfig`, high because of the file, would allow it on any file).
        if judged(prefix).risk < only.assessment.risk {
            continue;
        }
        if n == 1 && NEVER_ALONE.contains(&assess::basename(&prefix[0])) {
            continue;
        }
        if n == 2 && NEVER_ALONE.contains(&assess::basename(&prefix[0])) && prefix[1].starts_with('-') {
            // `bash -c`, `python -c`, `node -e`: still anything at all.
            continue;
        }
        if prefix.iter().any(|w| w.starts_with('-')) {
            continue;
        }
        out.push(assess::quote_argv(prefix));
    }
    out.dedup();
    out
}

/// A warning for a whitelist entry that lets through much more than it names: one that starts
/// with a program that runs other programs (`sudo`, `bash`, `python3`, `env`, `xargs`, ...), or
/// one that also covers a riskier use of the same words (`git push` lets `git push --force`
/// through: issue 29, item 3).
pub fn entry_warning(entry: &str) -> Option<String> {
    let words: Vec<&str> = entry.split_whitespace().collect();
    let name = assess::basename(words.first()?);
    // The program alone or with only a flag (`python3 -c`), or anything through a wrapper.
    let open_ended = words.len() == 1 || words[1..].iter().all(|w| w.starts_with('-'));
    if (NEVER_ALONE.contains(&name) && open_ended) || WRAPPERS.contains(&name) {
        return Some(format!(
            "WARNING: `{name}` runs other programs: this entry lets through every command that starts with \
             `{entry}`, whatever it goes on to run (`{entry} ...` could delete files, read secrets or push code)"
        ));
    }
    let argv: Vec<String> = shlex::split(entry).unwrap_or_else(|| words.iter().map(|w| w.to_string()).collect());
    let (riskier, v) = covers_riskier(&argv, judged(&argv).risk)?;
    let why = v.reasons.first().map(|r| format!(": {r}")).unwrap_or_default();
    Some(format!(
        "WARNING: this entry lets through every command that starts with `{entry}`, `{riskier}` too ({} risk{why})",
        v.risk
    ))
}

/// The first use of `prefix` with a risk-raising flag that is judged riskier than `risk` (the
/// built-in policy), with its verdict; forbidden uses are left out, since no entry allows them.
fn covers_riskier(prefix: &[String], risk: Risk) -> Option<(String, Verdict)> {
    const RAISERS: &[&str] =
        &["--force", "-f", "-rf", "--hard", "-D", "--delete", "--mirror", "--all", "-x", "--prune"];
    let base = assess::quote_argv(prefix);
    RAISERS.iter().find_map(|flag| {
        let text = format!("{base} {flag}");
        let v = decide::judge(&text, &decide::Policy::default());
        (v.risk > risk && v.risk < Risk::Forbidden).then_some((text, v))
    })
}

/// The built-in policy's verdict on `argv` as a command.
fn judged(argv: &[String]) -> Verdict {
    decide::judge(&assess::quote_argv(argv), &decide::Policy::default())
}

/// Programs that run another command with more rights or fewer limits: offered only whole.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "env", "nice", "ionice", "nohup", "timeout", "time", "xargs", "exec", "command", "watch",
    "chroot", "ssh", "stdbuf",
];

/// Programs that can run anything: never whitelisted on their own.
const NEVER_ALONE: &[&str] = &[
    "python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "bash", "sh", "zsh",
    "dash", "ksh", "fish", "env", "sudo", "doas", "su", "xargs", "git", "npx", "npm", "pnpm", "yarn", "cargo", "go",
    "make", "docker", "kubectl", "eval", "exec", "command", "nohup", "timeout", "nice", "time", "watch", "find", "awk",
    "sed", "ssh", "curl", "wget", "rm", "chmod", "chown", "pip", "pip3", "uv", "agentsh",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(text: &str) -> Vec<String> {
        let v = decide::judge(text, &decide::Policy::default());
        always_entries(&v.blocking_parts().collect::<Vec<_>>())
    }

    /// Issue 29, item 3: an entry that also lets a riskier use through says so, as `make` does.
    #[test]
    fn entries_that_allow_riskier_uses_are_warned_about() {
        let w = entry_warning("git push").expect("git push lets force pushes through");
        assert!(w.contains("`git push --force` too (high risk"), "{w}");
        assert!(entry_warning("make").unwrap().contains("runs other programs"));
        for plain in ["git log", "npm test", "git push --force", "ls -la"] {
            assert_eq!(entry_warning(plain), None, "{plain}");
        }
    }

    /// Issue 29, item 3: "always" never offers an entry whose left-out words made the command
    /// risky (`chmod 600` would allow it on any file), nor one that covers a riskier use.
    #[test]
    fn always_offers_no_entry_that_allows_more_risk() {
        assert_eq!(offered("chmod 600 ~/.gitconfig"), ["chmod 600 ~/.gitconfig"]);
        assert_eq!(offered("chmod 600 notes.txt"), ["chmod 600 notes.txt", "chmod 600"]);
        assert_eq!(offered("git push origin main"), ["git push origin main"]);
        assert_eq!(offered("touch answered.txt"), ["touch answered.txt", "touch"]);
    }

    /// Where there is no box, what it would have hidden of home asks whatever the whitelist
    /// says (rt4 R14): "always" offers no entry, which would do nothing.
    #[test]
    fn always_offers_nothing_for_what_no_whitelist_lifts() {
        let sight = crate::judge::unboxed::HomeSight {
            cwd: "/tmp/x".into(),
            home: "/home/u".into(),
            real_home: None,
            shown: Vec::new(),
            covered: Vec::new(),
            ..Default::default()
        };
        let policy = decide::Policy { home_sight: Some(sight), ..decide::Policy::default() };
        let v = decide::judge("cat ~/.kaggle/kaggle.json", &policy);
        let asking: Vec<_> = v.blocking_parts().collect();
        assert_eq!(asking.len(), 1, "{v:?}");
        assert_eq!(always_entries(&asking), Vec::<String>::new());
    }
}
