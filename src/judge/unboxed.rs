//! What a command that runs without a box may read unasked (rt4 R14). Pure: what the box would
//! have shown comes from `run` as plain data ([`HomeSight`]), as the box's roots do
//! (`containment::BoxView`).
//!
//! The box is default-deny: of the person's home it shows only what it names (toolchains,
//! harmless settings, caches, `sandbox.readable`, the workspace). A command that starts where the
//! box cannot show its directory (`/tmp`, home itself, `~/.config`) has no box at all, and then
//! nothing but the judge stands between it and home. So there, a command must not get more than
//! the box would have shown without a person's yes: one whose text names a path in a
//! dot-directory of home that the box keeps hidden (`~/.kaggle/kaggle.json`,
//! `$HOME/.config/rclone/rclone.conf`, `.netrc` from home), home itself (what reads all of it
//! reads them too), or another process's `/proc/<pid>` (the box shows only its own), needs a
//! person, whatever the secret list knows of it. So does every command that starts inside such a
//! dot-directory (`~/.ssh`): its relative paths and its current directory are all in it.
//!
//! The text is read generously, by its words as the shell could see them, not by what one
//! program does with them: a word in a redirection, a here-document or the code of `python -c`
//! counts as much as an argument; `$HOME`, `${HOME%/}`, `/home/$USER` and `/proc/self/root/...`
//! are home's too. A relative word is resolved against where the command starts, and, where the
//! text changes directory (`cd`, `pushd`, `-C`), against home and every absolute directory it
//! names too. What the text does not name (a path a program computes) this cannot see: SECURITY.md
//! says so.

use crate::judge::containment::normalize;

/// What the box would have shown of the person's home, for judging a command that runs without
/// one: plain values, from `run`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HomeSight {
    /// The directory the command starts in (absolute).
    pub cwd: String,
    /// The person's home (absolute), as `~` and `$HOME` mean it.
    pub home: String,
    /// Its real path, where that is another spelling (home through a symbolic link).
    pub real_home: Option<String>,
    /// What the box shows in home (absolute, in `home`'s spelling): the workspace and what
    /// `sandbox.writable` names, toolchains, harmless settings, caches, `sandbox.readable`.
    pub shown: Vec<String>,
    /// What the box covers wherever it is (absolute): `sandbox.denyRead`, agentsh's own
    /// directories, the system's secrets.
    pub covered: Vec<String>,
}

/// Words after which a relative path may be relative to another directory than the one the
/// command starts in.
const CHANGES_DIRECTORY: &[&str] = &["cd", "pushd", "-C", "--directory", "--cwd", "--chdir", "-chdir"];

/// At most this many relative words times directories are resolved: a long script that changes
/// directory often needs a person rather than a slow verdict.
const MAX_RESOLVED: usize = 100_000;

/// What `text`, run without a box, would read that the box keeps hidden (the first such word).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hidden {
    /// The word as the text spells it (or the directory the command starts in).
    pub word: String,
    /// Why it needs a person, in words for the person.
    pub why: String,
}

impl Hidden {
    fn of(word: &str, why: String) -> Hidden {
        Hidden { word: word.to_string(), why }
    }
}

/// What `text`, run without a box, would read that the box keeps hidden, or `None` where it
/// names nothing hidden.
pub fn hidden_read(text: &str, sight: &HomeSight) -> Option<Hidden> {
    let home = normalize(&sight.home);
    if home == "/" {
        return None;
    }
    let cwd = in_home_spelling(&normalize(&sight.cwd), sight);
    if let Some(dir) = hidden_dot_entry(&cwd, &home, sight) {
        let word = tilde(&cwd, &home);
        let why = format!(
            "starts in {word}, in {dir}, which the sandbox keeps hidden (files in home's dot-directories hold \
             settings and secrets)"
        );
        return Some(Hidden { word, why });
    }
    let words = words(text, &home);
    let mut bases = vec![cwd.clone()];
    if words.iter().any(|w| CHANGES_DIRECTORY.contains(&w.as_str())) {
        // `cd` alone goes home; `cd ~` and `cd $HOME` name it, as every other directory.
        if cd_home(text) {
            bases.push(home.clone());
        }
        for dir in words.iter().filter_map(|w| absolute(w, &home)).map(|p| in_home_spelling(&p, sight)) {
            if !bases.contains(&dir) {
                bases.push(dir);
            }
        }
    }
    // A relative word reaches a dot-directory of home only through a component that starts
    // with a dot (`.kaggle`, `..`, `.`), or from what holds home (`u` from `/home`).
    let above_home = bases.iter().any(|b| b != &home && under(&home, b).is_some());
    let dotted = |w: &str| above_home || w.split('/').any(|c| c.starts_with('.'));
    let relative = |w: &&String| !w.starts_with(['-', '$', '~', '/']);
    if words.iter().filter(relative).filter(|w| dotted(w)).count().saturating_mul(bases.len()) > MAX_RESOLVED {
        let why = "changes directory too often for agentsh to tell whether its relative paths are in home's \
                   dot-directories, which the sandbox keeps hidden";
        return Some(Hidden { word: String::new(), why: why.to_string() });
    }
    for word in &words {
        if word.starts_with('-') || word.starts_with('$') || (word.starts_with('~') && !is_tilde(word)) {
            continue;
        }
        // A relative word without a dot reaches no dot-directory of home; it may reach what the
        // box covers (`sandbox.denyRead` below the directory the command starts in).
        if relative(&word) && !dotted(word) && sight.covered.is_empty() {
            continue;
        }
        let paths: Vec<String> = match absolute(word, &home) {
            Some(p) => vec![in_home_spelling(&through_proc_self(p, &cwd), sight)],
            None => bases.iter().map(|b| normalize(&format!("{b}/{word}"))).collect(),
        };
        for p in paths {
            if let Some(root) = sight.covered.iter().find(|c| under(&p, &normalize(c)).is_some()) {
                return Some(Hidden::of(
                    word,
                    format!(
                        "reads {word}, which the sandbox covers ({root}: sandbox.denyRead, agentsh's own files or the \
                     system's secrets)"
                    ),
                ));
            }
            if p == home {
                return Some(Hidden::of(
                    word,
                    format!(
                        "reads {word}, home itself, which the sandbox replaces with its own: what reads all of home reads \
                     the settings and secrets in its dot-directories"
                    ),
                ));
            }
            if let Some(dir) = hidden_dot_entry(&p, &home, sight) {
                return Some(Hidden::of(
                    word,
                    format!(
                        "reads {word}, in {dir}, which the sandbox keeps hidden (files in home's dot-directories hold \
                     settings and secrets)"
                    ),
                ));
            }
            if other_process(&p) && word.starts_with('/') {
                return Some(Hidden::of(
                    word,
                    format!(
                        "reads {word}, another process's files (its command line, environment, memory), which the \
                     sandbox does not show: it shows only its own processes"
                    ),
                ));
            }
        }
    }
    None
}

/// The words of `text` as the shell could split them, generously: quotes and backslashes
/// dropped (so `"$HOME"/.x` is one word), home's variables as home ([`home_variables`]), and
/// split at white space and at what ends a word in the shell or in a program's own syntax
/// (`;|&<>()`, `=`, `:`, `,`, braces, backquotes). `~NAME` is `~` where NAME is home's own name.
fn words(text: &str, home: &str) -> Vec<String> {
    let name = home.rsplit('/').next().unwrap_or_default();
    let unquoted: String = text.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    // Bash's regular-expression match (`[[ $x =~ re ]]`) is no tilde.
    let unquoted = home_variables(&unquoted, name).replace("=~ ", "= ").replace("=~\t", "= ");
    let separator = |c: char| c.is_whitespace() || ";|&<>()=:,{}`".contains(c);
    let own_tilde = |w: &str| {
        let rest = w.strip_prefix('~')?.strip_prefix(name).filter(|_| !name.is_empty())?;
        (rest.is_empty() || rest.starts_with('/')).then(|| format!("~{rest}"))
    };
    unquoted.split(separator).filter(|w| !w.is_empty()).map(|w| own_tilde(w).unwrap_or_else(|| w.to_string())).collect()
}

/// `text` with `$HOME` and `${HOME...}` (`${HOME%/}`, `${HOME:-/x}`) as `~`, and `$USER` and
/// `$LOGNAME` (braced or not) as `name`, home's own name: `/home/$USER/.x` is home's.
fn home_variables(text: &str, name: &str) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // The variable's name, and how much of `after` its reference takes.
        let (var, len) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..braced.find(|c: char| !ident(c)).unwrap_or(end).min(end)], end + 2),
                None => ("", 0),
            },
            None => {
                let n = after.find(|c: char| !ident(c)).unwrap_or(after.len());
                (&after[..n], n)
            }
        };
        match var {
            "HOME" => out.push('~'),
            "USER" | "LOGNAME" if !name.is_empty() => out.push_str(name),
            _ => {
                out.push('$');
                rest = after;
                continue;
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// `/proc/self/root/x` as `/x` and `/proc/self/cwd/x` as `cwd/x` (and `thread-self`'s): the
/// same files by another name.
fn through_proc_self(path: String, cwd: &str) -> String {
    let own = path.strip_prefix("/proc/self/").or_else(|| path.strip_prefix("/proc/thread-self/"));
    let Some((link, rest)) = own.map(|o| o.split_once('/').unwrap_or((o, ""))) else { return path };
    match link {
        "root" => normalize(&format!("/{rest}")),
        "cwd" => normalize(&format!("{cwd}/{rest}")),
        _ => path,
    }
}

/// Whether `text` has a `cd` or `pushd` with no directory (`cd && x`, `(cd; x)`), which goes home.
fn cd_home(text: &str) -> bool {
    let bytes = text.as_bytes();
    ["cd", "pushd"].iter().any(|cmd| {
        text.match_indices(cmd).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let starts = before.is_none_or(|b| b.is_ascii_whitespace() || b";&|(!{".contains(&b));
            let rest = text[at + cmd.len()..].trim_start_matches([' ', '\t']);
            starts && (rest.is_empty() || rest.starts_with([';', '&', '|', ')', '}', '\n']))
        })
    })
}

/// `~` or `~/...` (not `~alice`, someone else's home, which the box hides whole anyway).
fn is_tilde(word: &str) -> bool {
    word == "~" || word.starts_with("~/")
}

/// `word` as an absolute, normalized path when it is one (`~` resolved), else `None`.
fn absolute(word: &str, home: &str) -> Option<String> {
    if is_tilde(word) {
        return Some(normalize(&format!("{home}/{}", &word[1..])));
    }
    word.starts_with('/').then(|| normalize(word))
}

/// `path` in home's spelling where it is in its real path.
fn in_home_spelling(path: &str, sight: &HomeSight) -> String {
    let real = sight.real_home.as_deref().map(normalize);
    match real.as_deref().and_then(|r| under(path, r)) {
        Some(rest) => normalize(&format!("{}/{rest}", sight.home)),
        None => path.to_string(),
    }
}

/// What follows `root` in `path` (`""` for `root` itself), when `path` is in it.
fn under<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let root = root.trim_end_matches('/');
    let rest = path.strip_prefix(root)?;
    if rest.is_empty() { Some("") } else { rest.strip_prefix('/') }
}

/// The dot-directory of home (`~/.kaggle`) that holds `path`, when the box does not show it.
fn hidden_dot_entry(path: &str, home: &str, sight: &HomeSight) -> Option<String> {
    let rest = under(path, home)?;
    let first = rest.split('/').next().filter(|f| f.starts_with('.'))?;
    let shown = sight.shown.iter().any(|root| under(path, &normalize(root)).is_some());
    (!shown).then(|| format!("~/{first}"))
}

/// `/proc/<pid>` or a pattern for every pid (`/proc/*/cmdline`): another process's files.
fn other_process(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/proc/") else { return false };
    let pid = rest.split('/').next().unwrap_or_default();
    !pid.is_empty() && (pid.bytes().all(|b| b.is_ascii_digit()) || pid.contains(['*', '?', '[']))
}

/// `path` with home written `~`, as the person reads it.
fn tilde(path: &str, home: &str) -> String {
    match under(path, home) {
        Some("") => "~".to_string(),
        Some(rest) => format!("~/{rest}"),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/home/u`, real path `/data/u`, with a few of the box's roots shown.
    fn sight(cwd: &str) -> HomeSight {
        HomeSight {
            cwd: cwd.into(),
            home: "/home/u".into(),
            real_home: Some("/data/u".into()),
            shown: [".cargo/bin", ".cargo/env", ".gitconfig", ".cache/pip", ".local/bin", ".work/proj"]
                .iter()
                .map(|r| format!("/home/u/{r}"))
                .collect(),
            covered: vec!["/srv/secret".into(), "/home/u/proj/keys".into()],
        }
    }

    fn asks(text: &str, cwd: &str) -> bool {
        hidden_read(text, &sight(cwd)).is_some()
    }

    /// `sandbox.denyRead` holds where there is no box too (the box covers it wherever it is).
    #[test]
    fn what_the_box_covers_needs_a_person() {
        for text in ["cat /srv/secret/db.key", "cp /srv/secret x", "cat ~/proj/keys/a.pem", "cd /srv && cat secret/x"] {
            let found = hidden_read(text, &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not found"));
            assert!(found.why.contains("covers"), "{text}: {}", found.why);
        }
        for text in ["cat /srv/secretary/x", "cat ~/proj/keyset", "ls /srv", "cat secret"] {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
        assert!(asks("cat secret/db.key", "/srv"), "relative to where it starts");
        assert!(asks("cat ../secret/db.key", "/srv/x"), "relative, up");
    }

    #[test]
    fn what_the_box_keeps_hidden_in_home_needs_a_person() {
        for text in [
            "cat ~/.kaggle/kaggle.json",
            "cat ~/.config/rclone/rclone.conf",
            "cat /home/u/.kaggle/kaggle.json",
            "cat /data/u/.kaggle/kaggle.json",
            "cat $HOME/.kaggle/kaggle.json",
            "cat \"$HOME\"/.kaggle/kaggle.json",
            "cat ${HOME}/.kaggle/kaggle.json",
            "cat ${HOME%/}/.kaggle/kaggle.json",
            "cat ${HOME:-/nowhere}/.kaggle/kaggle.json",
            "cat /home/$USER/.kaggle/kaggle.json",
            "cat /home/${LOGNAME}/.kaggle/kaggle.json",
            "cat ~u/.kaggle/kaggle.json",
            "cat /proc/self/root/home/u/.kaggle/kaggle.json",
            "cat /proc/thread-self/root/data/u/.netrc",
            "python3 - <<EOF\nprint(open('/home/u/.kaggle/kaggle.json').read())\nEOF",
            // Not in the box's allow-list: start-up files often export tokens.
            "cat ~/.bashrc",
            "ls ~/.ssh",
            "ls -la ~/.cargo",
            "cat ~/.cargo/credentials.toml",
            "cat ~/.*",
            "cat ~/.c*/rclone/rclone.conf",
            "cat ~/.{kaggle,aws}/x",
            "while read l; do echo $l; done < ~/.kaggle/kaggle.json",
            "python3 -c 'print(open(\"/home/u/.kaggle/kaggle.json\").read())'",
            "tool --config=~/.kaggle/kaggle.json",
            "cat ~/./.kaggle/kaggle.json",
            "cat ~/projects/../.kaggle/kaggle.json",
            "cat /tmp/../home/u/.kaggle/kaggle.json",
            // Home itself: what reads all of it reads its dot-directories.
            "grep -r token ~",
            "tar czf /tmp/h.tgz $HOME",
            // Another process's files.
            "cat /proc/1/cmdline",
            "cat /proc/*/cmdline",
        ] {
            assert!(asks(text, "/tmp/x"), "{text}");
        }
        // Relative words, where the command starts and where the text goes.
        assert!(asks("cat .kaggle/kaggle.json", "/home/u"));
        assert!(asks("grep -r token .", "/home/u"));
        assert!(asks("cd && cat .kaggle/kaggle.json", "/tmp/x"));
        assert!(asks("(cd; cat .kaggle/kaggle.json)", "/tmp/x"));
        assert!(asks("cd\ncat .netrc", "/tmp/x"));
        assert!(asks("cd /home/u; cat .netrc", "/tmp/x"));
        assert!(asks("tar -C ~ -cf - .kaggle", "/tmp/x"));
        assert!(asks("cat ../../home/u/.netrc", "/tmp/x"));
        assert!(asks("cd /home; grep -r token u", "/tmp/x"));
        let far = (0..400).map(|n| format!("/d{n}")).collect::<Vec<_>>().join(" ");
        let why = hidden_read(&format!("cd {far}; cat {}", ["./x"; 300].join(" ")), &sight("/tmp/x"));
        assert!(why.is_some_and(|w| w.why.contains("too often")));
        // Anything that starts in a hidden dot-directory.
        assert!(asks("ls", "/home/u/.ssh"));
        assert!(asks("git diff", "/data/u/.config/nvim"));
    }

    #[test]
    fn what_the_box_shows_or_that_is_not_home_runs_unasked() {
        for text in [
            "ls ~/projects",
            "cat ~/notes.txt",
            "ls",
            "cat .env",
            "cat ~/.gitconfig",
            "cat /data/u/.gitconfig",
            "~/.cargo/bin/cargo --version",
            "source ~/.cargo/env",
            "ls ~/.cache/pip",
            "cat ~/.work/proj/src/main.rs",
            "ls /",
            "cat /etc/hostname",
            "cat /proc/self/status /proc/cpuinfo",
            "echo $HOMEBREW_PREFIX/.x ${HOMEBREW}/.y $USERNAME/.z",
            "cat /proc/self/cwd/.env /proc/self/root/etc/hostname",
            "ls ~alice/.ssh",
            "cat ./.kaggle/kaggle.json",
            "git commit -m 'fix: the parser reads .config files'",
        ] {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
        // A directory the text goes to is where its relative words are, not home.
        for text in
            ["cd /app && find . -name 'test*'", "cd /testbed && grep -r '\\.freq' pandas", "cd /proc && ls 0755"]
        {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
        assert!(!asks("[[ $v =~ ^[0-9]+$ ]] && echo ok", "/tmp/x"));
        // From home, its ordinary directories and files.
        assert!(!asks("cat notes.txt && ls projects", "/home/u"));
        // Inside a shown directory of a dot-directory, the box would have shown it.
        assert!(!asks("ls && cat src/main.rs", "/home/u/.work/proj"));
        // No home to speak of: nothing to hide.
        let rootless = HomeSight { home: "/".into(), ..sight("/tmp") };
        assert_eq!(hidden_read("cat /.kaggle/kaggle.json", &rootless), None);
    }

    #[test]
    fn the_reason_names_the_word_and_the_hidden_directory() {
        let found = hidden_read("cat ~/.kaggle/kaggle.json", &sight("/tmp")).expect("hidden");
        assert_eq!(found.word, "~/.kaggle/kaggle.json");
        assert!(found.why.contains("reads ~/.kaggle/kaggle.json, in ~/.kaggle, which the sandbox keeps hidden"));
        let found = hidden_read("ls", &sight("/home/u/.ssh")).expect("hidden");
        assert_eq!(found.word, "~/.ssh");
        assert!(found.why.contains("starts in ~/.ssh, in ~/.ssh"), "{}", found.why);
    }
}
