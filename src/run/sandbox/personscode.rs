//! Git top-levels the person's own tools run code from by path, outside any box (issue 25, red
//! team rt4 R5, R6, R13): no workspace, as one holding a directory of `$PATH` is not (rt3 G4,
//! [`super::spec`]). Looked for once, when a box is made (a few small files read, a few dozen
//! links read), never per command; it reads and judges nothing else.
//!
//! - The shell's and other tools' start-up files name it (R5): `source ~/powerlevel10k/…` in
//!   `~/.bashrc` (the theme's own install instructions), `. ~/spack/share/spack/setup-env.sh`,
//!   `export PATH=~/flutter/bin:$PATH`, `Include ~/dotfiles/ssh/config` in `~/.ssh/config`,
//!   tmux's `source-file`, vim's `source`. A path named there anywhere but after `cd` is taken
//!   as code (`export SPACK_ROOT=~/spack` is sourced through the variable), and a file sourced
//!   is read too, a few levels deep.
//! - A program on `$PATH` is a link into it (R6): `~/.local/bin/flutter -> ~/flutter/bin/flutter`.
//! - git's global settings name it (R13): `core.hooksPath = ~/githooks` runs its hooks in every
//!   repository, `init.templateDir` is copied into every new one ([`super::gitcode::global_code`]).
//!
//! The person names such a repository in `sandbox.writable` to make it the workspace all the same.

use super::{join, normalize, within};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The start-up files read, relative to home: shells (bash, zsh, sh, fish), X sessions, ssh,
/// tmux, vim and neovim. What they source is read too ([`MAX_FILES`], [`MAX_DEPTH`]).
const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
    ".xprofile",
    ".xsessionrc",
    ".xinitrc",
    ".config/fish/config.fish",
    ".ssh/config",
    ".tmux.conf",
    ".config/tmux/tmux.conf",
    ".vimrc",
    ".vim/vimrc",
    ".gvimrc",
    ".config/nvim/init.vim",
    ".config/nvim/init.lua",
];

/// Directories whose every file a tool reads at start: fish's `conf.d`.
const STARTUP_DIRS: &[&str] = &[".config/fish/conf.d"];

/// At most this many files are read, each to at most [`MAX_BYTES`] (a start-up file is a few
/// kilobytes), and sourced files are followed this many levels deep.
const MAX_FILES: usize = 48;
const MAX_BYTES: u64 = 256 * 1024;
const MAX_DEPTH: usize = 3;
/// A line is read to here.
const MAX_LINE: usize = 4096;
/// Links followed from a program on `$PATH` (`~/.local/bin/x -> ../opt/x -> ~/clone/bin/x`).
const MAX_HOPS: usize = 4;

/// Where the person's tools look, from agentsh's environment (the agent's) and the box's facts.
pub(crate) struct Facts<'a> {
    pub home: &'a Path,
    pub real_home: Option<&'a Path>,
    pub path_dirs: &'a [PathBuf],
    /// `ZDOTDIR`, `XDG_CONFIG_HOME`, where set (absolute).
    pub zdotdir: Option<PathBuf>,
    pub xdg_config: Option<PathBuf>,
    pub git: &'a super::gitcode::Globals,
}

impl<'a> Facts<'a> {
    /// The facts for a box of `place`, with git's files where `var` puts them.
    pub(crate) fn of(
        place: &'a super::Place,
        home: &'a Path,
        git: &'a super::gitcode::Globals,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> Facts<'a> {
        let abs = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute()).map(|p| normalize(&p));
        Facts {
            home,
            real_home: place.real_home.as_deref(),
            path_dirs: &place.path_dirs,
            zdotdir: abs("ZDOTDIR"),
            xdg_config: abs("XDG_CONFIG_HOME"),
            git,
        }
    }
}

/// Why the git top-level `root` is no workspace, if the person's tools run code from it by
/// path: the first file, link or setting found that names something in it, in words that end
/// with what to do.
pub(crate) fn why_not(root: &Path, facts: &Facts) -> Option<String> {
    let s = Search { root, facts, aliases: links_into(facts.home, root, facts) };
    let why = s.git().or_else(|| s.startup()).or_else(|| s.path_links())?;
    Some(format!("{why}; name it in sandbox.writable to make it the workspace all the same"))
}

/// The links at the top of home into `root` (`~/.oh-my-zsh -> ~/dotfiles/omz`): a path
/// through one is in it. One `getdents` and a `readlink` per link there.
fn links_into(home: &Path, root: &Path, facts: &Facts) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home) else { return Vec::new() };
    let plain = Search { root, facts, aliases: Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| join(home, &e.file_name().to_string_lossy()))
        .filter(|link| std::fs::read_link(link).is_ok_and(|t| plain.names(&normalize(&home.join(t)), false)))
        .collect()
}

struct Search<'a> {
    root: &'a Path,
    facts: &'a Facts<'a>,
    /// Links at the top of home into the top-level ([`links_into`]).
    aliases: Vec<PathBuf>,
}

impl Search<'_> {
    /// `p` (absolute, normalized) is in the top-level, in either spelling of home, or through a
    /// link at the top of home. An `open` path stands for what a pattern or a variable there
    /// names (`~/dotfiles/*.sh`): it also names a top-level beneath it, below home. Lexical:
    /// links deeper down are not followed.
    fn names(&self, p: &Path, open: bool) -> bool {
        let (home, real) = (self.facts.home, self.facts.real_home);
        let respelled = |p: &Path, from: &Path, to: Option<&Path>| {
            to.and_then(|to| p.strip_prefix(from).ok().map(|rest| to.join(rest)))
        };
        let spellings =
            [Some(p.to_path_buf()), respelled(p, home, real), real.and_then(|r| respelled(p, r, Some(home)))];
        let homes = |s: &Path| s == home || real == Some(s) || s.parent().is_none();
        spellings.iter().flatten().any(|s| {
            within(s, self.root)
                || self.aliases.iter().any(|a| within(s, a))
                || open && !homes(s) && within(self.root, s)
        })
    }

    /// R13: git's global settings.
    fn git(&self) -> Option<String> {
        for (path, setting) in super::gitcode::global_code(self.facts.git) {
            if self.names(&path, false) {
                return Some(format!(
                    "git's {setting} names {}, which the person's git runs or reads in every repository, outside the \
                     sandbox",
                    shown(&path)
                ));
            }
        }
        None
    }

    /// R5: the start-up files, and what they source.
    fn startup(&self) -> Option<String> {
        let home = self.facts.home;
        let mut files: Vec<(PathBuf, usize)> = Vec::new();
        let add = |files: &mut Vec<(PathBuf, usize)>, p: PathBuf, depth: usize| {
            if files.len() < MAX_FILES && !files.iter().any(|(f, _)| *f == p) {
                files.push((p, depth));
            }
        };
        for rel in STARTUP_FILES {
            add(&mut files, join(home, rel), 0);
        }
        if let Some(z) = &self.facts.zdotdir {
            for rel in [".zshenv", ".zprofile", ".zshrc", ".zlogin"] {
                add(&mut files, join(z, rel), 0);
            }
        }
        if let Some(x) = &self.facts.xdg_config {
            for rel in ["fish/config.fish", "tmux/tmux.conf", "nvim/init.vim", "nvim/init.lua"] {
                add(&mut files, join(x, rel), 0);
            }
        }
        for dir in STARTUP_DIRS.iter().map(|d| join(home, d)) {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten().take(MAX_FILES) {
                add(&mut files, e.path(), 0);
            }
        }
        let mut at = 0;
        while at < files.len() {
            let (file, depth) = files[at].clone();
            at += 1;
            let Some(text) = read(&file) else { continue };
            // ssh takes a relative `Include` from `~/.ssh`.
            let ssh = within(&file, &join(home, ".ssh"));
            for (line_no, line) in text.lines().enumerate() {
                let mut named = named_paths(line, home);
                if ssh {
                    named.extend(ssh_includes(line, &join(home, ".ssh")));
                }
                for n in named {
                    if self.names(&n.path, n.open) {
                        return Some(format!(
                            "{} names {} in it (line {}), which the person's shell or tools run or read at start, \
                             outside the sandbox",
                            shown(&file),
                            shown(&n.path),
                            line_no + 1
                        ));
                    }
                    if depth >= MAX_DEPTH {
                        continue;
                    }
                    // What it sources, and the files of a directory it names by a pattern
                    // (`for f in ~/.bashrc.d/*.sh; do . "$f"; done`, `Include config.d/*`).
                    // Only home's: the system's files (bash-completion's) name no clone of the
                    // person's, and are long.
                    let in_home = within(&n.path, home) || self.facts.real_home.is_some_and(|r| within(&n.path, r));
                    if !in_home {
                        continue;
                    }
                    if n.sourced {
                        add(&mut files, n.path, depth + 1);
                    } else if n.open && n.pattern && n.path != home {
                        let Ok(entries) = std::fs::read_dir(&n.path) else { continue };
                        for e in entries.flatten().take(MAX_FILES) {
                            add(&mut files, e.path(), depth + 1);
                        }
                    }
                }
            }
        }
        None
    }

    /// R6: programs on `$PATH` that are links into the top-level. The system's own directories
    /// (`/usr/bin`: their links are the packages') and the top-level's own (`node_modules/.bin`,
    /// whose links are the project's) are not read.
    fn path_links(&self) -> Option<String> {
        for dir in self.facts.path_dirs.iter().map(|d| normalize(d)) {
            if system_dir(&dir) || within(&dir, self.root) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                if !e.file_type().is_ok_and(|t| t.is_symlink()) {
                    continue;
                }
                let link = e.path();
                let mut at = link.clone();
                for _ in 0..MAX_HOPS {
                    let Ok(target) = std::fs::read_link(&at) else { break };
                    at = normalize(&at.parent().unwrap_or(Path::new("/")).join(target));
                    if self.names(&at, false) {
                        return Some(format!(
                            "{} on $PATH is a link to {} in it, a program the person runs outside the sandbox",
                            shown(&link),
                            shown(&at)
                        ));
                    }
                }
            }
        }
        None
    }
}

/// The system's own program directories: what is in them is the packages', not links the
/// person made into a clone (`/usr/local` is the person's).
fn system_dir(dir: &Path) -> bool {
    let under = |p: &str| within(dir, Path::new(p));
    (under("/usr") && !under("/usr/local"))
        || ["/bin", "/sbin", "/lib", "/snap", "/nix/store", "/run/current-system"].iter().any(|p| under(p))
}

fn shown(p: &Path) -> String {
    crate::text::sanitize::sanitize(&crate::text::path(p))
}

/// The text of a start-up file, where it is a regular file (not a FIFO or a device), its first
/// [`MAX_BYTES`].
fn read(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut text).ok()?;
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// A path a line of a start-up file names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Named {
    /// Absolute and normalized; where a pattern or a variable is in it, what comes before.
    pub path: PathBuf,
    /// The line sources it (`source`, `.`, `Include`, `source-file`): it is read too.
    pub sourced: bool,
    /// A pattern or a variable followed `path` (`~/dotfiles/*.sh`, `~/dotfiles/$HOST/rc`).
    pub open: bool,
    /// It was a pattern in its last component (`~/.bashrc.d/*.sh`): the files of `path`.
    pub pattern: bool,
}

/// The absolute paths a line of a start-up file names (`/…`, `~/…`, `$HOME/…`, `${HOME}/…`).
/// Quotes are dropped first (`"$HOME"/x` is `$HOME/x`). Left out: comment lines (`#`, vim's
/// `"`, lua's `--`) and the operand of `cd` and `pushd` (an alias that goes to a project runs
/// nothing of it).
pub(crate) fn named_paths(line: &str, home: &Path) -> Vec<Named> {
    let trimmed = line.trim_start();
    if !line.contains('/') || trimmed.starts_with('#') || trimmed.starts_with('"') || trimmed.starts_with("--") {
        return Vec::new();
    }
    // A start-up line is short; a longer one is read to here.
    let mut cut = line.len().min(MAX_LINE);
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    let text: String = line[..cut].chars().filter(|c| *c != '"' && *c != '\'').collect();
    let delimiter = |c: u8| c.is_ascii_whitespace() || b"=:;()`|&<>,[]{}".contains(&c);
    let ends = |c: char| c.is_whitespace() || ":;()`|&<>,]}".contains(c);
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Every prefix starts with one of these, after a delimiter (all ASCII).
        if !matches!(bytes[i], b'/' | b'~' | b'$') || i > 0 && !delimiter(bytes[i - 1]) {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let Some(prefix) = ["${HOME}/", "$HOME/", "~/", "/"].into_iter().find(|p| rest.starts_with(p)) else {
            i += 1;
            continue;
        };
        let len = prefix.len() + rest[prefix.len()..].find(ends).unwrap_or(rest.len() - prefix.len());
        let word = &rest[..len];
        let before = &text[..i];
        i += len;
        let last = before.split(|c: char| c.is_ascii() && delimiter(c as u8)).rfind(|w| !w.is_empty()).unwrap_or("");
        if matches!(last, "cd" | "pushd") {
            continue;
        }
        let command = before.rsplit(|c: char| ";|&(`{".contains(c)).next().and_then(|c| c.split_whitespace().next());
        let sourced = command.is_some_and(|c| matches!(c, "source" | "." | "source-file" | "so"))
            || command.is_some_and(|c| c.eq_ignore_ascii_case("include"));
        let base = if prefix == "/" { PathBuf::from("/") } else { home.to_path_buf() };
        out.push(named(&base, &word[prefix.len()..], sourced));
    }
    out
}

/// `rest` (components) beneath `base`, up to the first that holds a pattern or a variable.
fn named(base: &Path, rest: &str, sourced: bool) -> Named {
    let parts: Vec<&str> = rest.split('/').collect();
    let open_at = parts.iter().position(|p| p.contains(['*', '?', '[', '$']));
    let path = normalize(&base.join(parts[..open_at.unwrap_or(parts.len())].join("/")));
    let pattern = open_at.is_some_and(|at| at + 1 == parts.len() && !parts[at].contains('$'));
    Named { path, sourced: sourced && open_at.is_none(), open: open_at.is_some(), pattern }
}

/// The relative files an ssh `Include` line names, from `~/.ssh`.
fn ssh_includes(line: &str, ssh: &Path) -> Vec<Named> {
    let mut words = line.split_whitespace();
    if !words.next().is_some_and(|w| w.eq_ignore_ascii_case("include")) {
        return Vec::new();
    }
    words
        .map(|w| w.trim_matches(['"', '\'']))
        .filter(|w| !w.is_empty() && !w.starts_with(['/', '~', '$']))
        .map(|w| named(ssh, w, true))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(line: &str) -> Vec<(String, bool)> {
        named_paths(line, Path::new("/h")).into_iter().map(|n| (n.path.display().to_string(), n.sourced)).collect()
    }

    /// rt4 R5: the spellings the person's start-up files name a clone in.
    #[test]
    fn the_paths_a_start_up_line_names() {
        let p = |s: &str, sourced: bool| (s.to_string(), sourced);
        for (line, want) in [
            (
                "source ~/powerlevel10k/powerlevel10k.zsh-theme",
                vec![p("/h/powerlevel10k/powerlevel10k.zsh-theme", true)],
            ),
            (". $HOME/spack/share/spack/setup-env.sh", vec![p("/h/spack/share/spack/setup-env.sh", true)]),
            (
                "[ -f \"${HOME}/emsdk/emsdk_env.sh\" ] && source \"$HOME\"/emsdk/emsdk_env.sh",
                vec![p("/h/emsdk/emsdk_env.sh", false), p("/h/emsdk/emsdk_env.sh", true)],
            ),
            (
                "export PATH=\"$HOME/flutter/bin:/opt/x/bin:$PATH\"",
                vec![p("/h/flutter/bin", false), p("/opt/x/bin", false)],
            ),
            ("Include ~/dotfiles/ssh/config", vec![p("/h/dotfiles/ssh/config", true)]),
            ("source-file ~/dotfiles/tmux.conf", vec![p("/h/dotfiles/tmux.conf", true)]),
            ("set rtp+=~/src/vim-plugin", vec![p("/h/src/vim-plugin", false)]),
            ("dofile('/h/lua/init.lua')", vec![p("/h/lua/init.lua", false)]),
            ("for f in ~/dotfiles/sh/*.sh; do . $f; done", vec![p("/h/dotfiles/sh", false)]),
            ("source ~/dotfiles/$HOST/rc", vec![p("/h/dotfiles", false)]),
            ("alias work='cd ~/work/app && ls'", vec![]),
            ("pushd /srv/app", vec![]),
            ("# source ~/powerlevel10k/x", vec![]),
            ("\" source ~/vim/x", vec![]),
            ("-- dofile('/h/x')", vec![]),
            ("export PS1='$ '", vec![]),
        ] {
            assert_eq!(paths(line), want, "{line}");
        }
        let n = &named_paths("for f in ~/.bashrc.d/*.sh; do . $f; done", Path::new("/h"))[0];
        assert!(n.open && n.pattern, "{n:?}");
        let n = &ssh_includes("Include config.d/* work", Path::new("/h/.ssh"));
        assert_eq!(
            n.iter().map(|n| n.path.display().to_string()).collect::<Vec<_>>(),
            ["/h/.ssh/config.d", "/h/.ssh/work"]
        );
        assert!(n[0].pattern && n[1].sourced);
    }

    /// A home with a clone in it, and what names it.
    struct Home {
        dir: tempfile::TempDir,
        path_dirs: Vec<PathBuf>,
    }

    impl Home {
        fn new() -> Home {
            let dir = tempfile::tempdir().unwrap();
            let home = Home { dir, path_dirs: Vec::new() };
            for clone in
                ["p10k", "flutter/bin", "githooks", "work/app/node_modules/.bin", "dotfiles/ssh", "zplug", "plugins/a"]
            {
                std::fs::create_dir_all(home.at(clone)).unwrap();
            }
            home
        }
        fn at(&self, rel: &str) -> PathBuf {
            std::fs::canonicalize(self.dir.path()).unwrap().join(rel)
        }
        fn write(&self, rel: &str, text: &str) {
            std::fs::create_dir_all(self.at(rel).parent().unwrap()).unwrap();
            std::fs::write(self.at(rel), text).unwrap();
        }
        fn why(&self, clone: &str) -> Option<String> {
            let home = self.at("");
            let home = normalize(&home);
            let git = super::super::gitcode::Globals::from_env(&home, |_| None);
            let facts = Facts {
                home: &home,
                real_home: None,
                path_dirs: &self.path_dirs,
                zdotdir: None,
                xdg_config: None,
                git: &git,
            };
            why_not(&self.at(clone), &facts)
        }
    }

    /// rt4 R5, R6, R13: a clone the person's shell sources, a program on `$PATH` links into,
    /// or git's global hooks are in is no workspace; another clone in the same home is one.
    #[test]
    fn a_clone_the_persons_tools_run_code_from_is_found() {
        let mut h = Home::new();
        for clone in ["p10k", "flutter", "githooks", "work/app", "dotfiles"] {
            assert_eq!(h.why(clone), None, "{clone}: nothing names it yet");
        }
        // R5: sourced, also from a file sourced in turn, and named by ssh's Include.
        h.write(".bashrc", "# source ~/flutter/x\nalias w='cd ~/work/app'\n. ~/.config/sh/rc.sh\n");
        h.write(".config/sh/rc.sh", "source \"$HOME/p10k/p10k.zsh-theme\"\n");
        let why = h.why("p10k").expect("sourced through a sourced file");
        assert!(why.contains("rc.sh names") && why.contains("(line 1)") && why.contains("sandbox.writable"), "{why}");
        assert_eq!(h.why("work/app"), None, "an alias that goes there runs nothing of it");
        assert_eq!(h.why("flutter"), None, "a comment runs nothing");
        // Files a pattern names are read; a clone beneath a pattern's directory is named by it.
        h.write(".zshrc", "for f in ~/.zshrc.d/*.zsh; do . $f; done\n");
        h.write(".zshrc.d/a.zsh", "source ~/zplug/x.zsh\n");
        assert!(h.why("zplug").is_some_and(|w| w.contains("a.zsh names")));
        h.write(".profile", "for f in ~/plugins/*/init.sh; do . \"$f\"; done\n");
        assert!(h.why("plugins/a").is_some_and(|w| w.contains(".profile names")));
        h.write(".ssh/config", "Host *\n  Include ~/dotfiles/ssh/config\n");
        assert!(h.why("dotfiles").is_some_and(|w| w.contains(".ssh/config names")));
        // R6: a link on $PATH into the clone; the project's own `node_modules/.bin` on $PATH is not.
        std::fs::create_dir_all(h.at(".local/bin")).unwrap();
        std::os::unix::fs::symlink("../../flutter/bin/flutter", h.at(".local/bin/flutter")).unwrap();
        std::os::unix::fs::symlink("../tool/x.js", h.at("work/app/node_modules/.bin/x")).unwrap();
        h.path_dirs = vec![h.at(".local/bin"), h.at("work/app/node_modules/.bin"), "/usr/bin".into()];
        let why = h.why("flutter").expect("a program on PATH links into it");
        assert!(why.contains(".local/bin/flutter on $PATH is a link to"), "{why}");
        assert_eq!(h.why("work/app"), None);
        // R13: git's global hooks, and its template directory.
        h.write(".gitconfig", "[core]\n\thooksPath = ~/githooks\n[init]\n\ttemplateDir = ~/work/app/tpl\n");
        let why = h.why("githooks").expect("the global hooks");
        assert!(why.contains("core.hooksPath in") && why.contains(".gitconfig"), "{why}");
        assert!(h.why("work/app").is_some_and(|w| w.contains("init.templateDir")));
    }
}
