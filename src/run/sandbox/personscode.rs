//! Git top-levels the person's own tools run code from by path, outside any box (issue 25, red
//! team rt4 R5, R6, R13, rt5 A4, A5, A6, A12, A15): no workspace, as one holding a directory of
//! `$PATH` is not (rt3 G4, [`super::spec`]). Looked for once, when a box is made (the start-up
//! and settings files read, the links and small scripts of `$PATH`'s directories), never per
//! command; it reads and judges nothing else.
//!
//! - The shell's and other tools' start-up files name it (R5): `source ~/powerlevel10k/…` in
//!   `~/.bashrc` (the theme's own install instructions), `. ~/spack/share/spack/setup-env.sh`,
//!   `export PATH=~/flutter/bin:$PATH`, `Include ~/dotfiles/ssh/config` in `~/.ssh/config`,
//!   tmux's `source-file`, vim's `source`, fish's `fish_user_paths`, bash-completion's
//!   `~/.bash_completion`. A path named there anywhere but after `cd` is taken as code (`export
//!   SPACK_ROOT=~/spack` is sourced through the variable); a relative one that is sourced or run
//!   (`./x`) is taken from home and from where a `cd` or `pushd` before went (`pushd ~/emsdk;
//!   source ./emsdk_env.sh`). A file sourced is read too, and so are zsh's files where a
//!   start-up file sets `ZDOTDIR`. A default's `${EMSDK:-$HOME/emsdk}` and `~name/` (that
//!   user's home in `/etc/passwd`) name home too (rt6 X6).
//! - Any other tool's settings name it (rt6 X1): found by where settings are, not by tool
//!   (every dot-file at the top of home, every file of `~/.config` and of its directories,
//!   the directories tools load code from whole: systemd's user units, fish's functions,
//!   IPython's profiles, cargo's), and searched for the top-level in any spelling of home
//!   (`~/`, `$HOME/`, `${HOME}/`, systemd's `%h/`, `~name/`, the absolute path): `source
//!   ~/pwndbg/gdbinit.py` in `~/.gdbinit`, cargo's `build.rustc-wrapper`, npm's
//!   `node-options=--require …`, `ExecStart=%h/svc/run.sh`. The records of what the person
//!   did, which name every project, are left by their name (histories, recent files, state,
//!   caches, logs: [`record`]), and so is a directory a `cd` or a tmuxinator `root:` goes to.
//! - A program on `$PATH` is a link into it (R6: `~/.local/bin/flutter -> ~/flutter/bin/flutter`),
//!   or a small script that names it (A6: `exec "$HOME/flutter/bin/flutter" "$@"`).
//! - git's global settings name it (R13, A4, A15): `core.hooksPath = ~/githooks` runs its hooks in
//!   every repository, `init.templateDir` is copied into every new one, an alias runs
//!   `!~/gitscripts/x`, `core.excludesFile` hides files from every `git status`
//!   ([`super::gitcode::global_code`]).
//!
//! Every bound on what is read fails closed (A5): where one ran out, no git top-level in home is
//! a workspace, and the person is told when the box is made.
//!
//! The person names such a repository in `sandbox.writable` to make it the workspace all the same.

use super::{join, normalize, within};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The start-up files read, relative to home: shells (bash, zsh, sh, fish), bash-completion's,
/// X sessions, ssh, tmux, vim and neovim. What they source is read too.
const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".bash_completion",
    ".config/bash_completion",
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
    ".config/fish/fish_variables",
    ".ssh/config",
    ".tmux.conf",
    ".config/tmux/tmux.conf",
    ".vimrc",
    ".vim/vimrc",
    ".gvimrc",
    ".config/nvim/init.vim",
    ".config/nvim/init.lua",
];

/// The system's zsh start-up files, which set `ZDOTDIR` for every user (rt5 A12).
const SYSTEM_FILES: &[&str] = &["/etc/zsh/zshenv", "/etc/zshenv"];

/// Directories whose every file a tool reads at start, or when the person completes a
/// command's words: fish's `conf.d`, bash-completion's.
const STARTUP_DIRS: &[&str] = &[
    ".config/fish/conf.d",
    ".local/share/fish/vendor_conf.d",
    ".bash_completion.d",
    ".local/share/bash-completion/completions",
];

/// zsh's start-up files in `ZDOTDIR`.
const ZSH_FILES: [&str; 4] = [".zshenv", ".zprofile", ".zshrc", ".zlogin"];

/// Bounds on what is read (rt5 A5): each that runs out fails closed ([`Search::unread`]). At
/// most this many files, each to [`MAX_BYTES`] and all to [`MAX_TOTAL`]; files sourced this
/// many levels deep; this many files of a directory.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 1 << 20;
const MAX_TOTAL: u64 = 16 << 20;
const MAX_DEPTH: usize = 8;
const MAX_ENTRIES: usize = 1024;
/// Directories a file `cd`s or `pushd`es to, kept to take relative paths from.
const MAX_DIRS: usize = 64;
/// Links followed from a program on `$PATH` (`~/.local/bin/x -> ../opt/x -> ~/clone/bin/x`): the
/// kernel's own limit, past which nothing runs.
const MAX_HOPS: usize = 40;
/// A program on `$PATH` this small that is a script (`#!`) is read; at most this many are.
const MAX_SCRIPT: u64 = 16 * 1024;
const MAX_SCRIPTS: usize = 2048;

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

/// Why a git top-level is no workspace ([`why_not`]).
#[derive(Debug)]
pub(crate) struct NoWorkspace {
    /// In words that end with what to do.
    pub why: String,
    /// Nothing was found to name it, but a bound on what is read ran out (rt5 A5): the person
    /// is told when the box is made.
    pub unchecked: bool,
}

/// Why the git top-level `root` is no workspace, if the person's tools run code from it by
/// path: the first file, link or setting found that names something in it; or, for one in
/// home, that a bound on what is read ran out before all was read.
pub(crate) fn why_not(root: &Path, facts: &Facts) -> Option<NoWorkspace> {
    let s = Search::new(root, facts, links_into(facts.home, root, facts));
    const WRITABLE: &str = "name it in sandbox.writable to make it the workspace all the same";
    if let Some(why) = s
        .git()
        .or_else(|| s.startup())
        .or_else(|| s.configs())
        .or_else(|| s.path_links())
        .or_else(|| s.path_through_links())
    {
        return Some(NoWorkspace { why: format!("{why}; {WRITABLE}"), unchecked: false });
    }
    let unread = s.unread.into_inner()?;
    let in_home = within(root, facts.home) || facts.real_home.is_some_and(|r| within(root, r));
    in_home.then(|| NoWorkspace {
        why: format!(
            "agentsh stopped reading the person's start-up files and programs before the end ({unread}), so it \
             cannot tell that their shell and tools run no code from this repository in home; {WRITABLE}"
        ),
        unchecked: true,
    })
}

/// The links at the top of home into `root` (`~/.oh-my-zsh -> ~/dotfiles/omz`), and through
/// one to a directory that holds it, the path through the link (`~/code/tools` for
/// `~/code -> ~/src` and `~/src/tools`, rt7 A10): a path through one is in it. One `getdents`
/// and a `readlink` per link there.
fn links_into(home: &Path, root: &Path, facts: &Facts) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home) else { return Vec::new() };
    let plain = Search::new(root, facts, Vec::new());
    let spellings: Vec<PathBuf> = std::iter::once(root.to_path_buf())
        .chain(facts.real_home.and_then(|r| root.strip_prefix(r).ok().map(|rest| home.join(rest))))
        .chain(facts.real_home.and_then(|r| root.strip_prefix(home).ok().map(|rest| r.join(rest))))
        .collect();
    let mut out = Vec::new();
    for link in entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| join(home, &e.file_name().to_string_lossy()))
    {
        let Ok(target) = std::fs::read_link(&link) else { continue };
        let target = normalize(&home.join(target));
        if plain.names(&target, false) {
            out.push(link);
        } else if let Some(rest) = spellings.iter().find_map(|r| r.strip_prefix(&target).ok())
            && target.parent().is_some()
        {
            out.push(normalize(&link.join(rest)));
        }
    }
    out
}

/// What `path` is, links followed: its device and inode.
fn id_of(path: &Path) -> Option<Id> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

struct Search<'a> {
    root: &'a Path,
    facts: &'a Facts<'a>,
    /// Links at the top of home into the top-level ([`links_into`]).
    aliases: Vec<PathBuf>,
    /// The first bound that ran out, in words.
    unread: RefCell<Option<String>>,
    /// The start-up files read as a shell's ([`Search::startup`]): [`Search::configs`] reads
    /// them again as settings.
    parsed: RefCell<HashSet<PathBuf>>,
    /// The directories of home the start-up files put on `$PATH` (rt6 X9): the person's shell
    /// runs their programs, though the agent's `$PATH` may not name them. [`Search::path_links`]
    /// reads them as it reads `$PATH`'s.
    path_dirs: RefCell<Vec<PathBuf>>,
    /// The top-level's directory (device and inode), and what the paths named resolve to, to
    /// tell a path through links or a bind mount into it ([`Search::names_through_links`]).
    root_id: Option<Id>,
    real: RefCell<HashMap<PathBuf, Option<PathBuf>>>,
    ids: RefCell<HashMap<PathBuf, Option<Id>>>,
}

/// A directory as the kernel knows it: its device and inode.
type Id = (u64, u64);

/// At most this many directories the start-up files put on `$PATH` are read for links.
const MAX_NAMED_PATH_DIRS: usize = 64;

/// Whether a start-up line sets `$PATH` (`export PATH=`, `PATH+=`, zsh's `path=(`/`path+=(`,
/// fish's `fish_add_path` and `set -gx PATH`): the directories it names are programs' places.
fn sets_path(line: &str) -> bool {
    line.contains("PATH") || line.contains("path=(") || line.contains("path+=(") || line.contains("fish_add_path")
}

/// A file to read: how deep it is sourced, and the directories the file that sourced it had
/// gone to (`pushd ~/emsdk; source ./emsdk_env.sh`).
#[derive(Clone)]
struct Queued {
    path: PathBuf,
    depth: usize,
    dirs: Vec<PathBuf>,
}

/// The files to read, in order, each once.
#[derive(Default)]
struct Queue {
    files: Vec<Queued>,
    seen: HashSet<PathBuf>,
}

impl Queue {
    fn add(&mut self, path: PathBuf, depth: usize, dirs: &[PathBuf]) {
        if self.seen.insert(path.clone()) {
            self.files.push(Queued { path, depth, dirs: dirs.to_vec() });
        }
    }
}

impl<'a> Search<'a> {
    fn new(root: &'a Path, facts: &'a Facts<'a>, aliases: Vec<PathBuf>) -> Search<'a> {
        Search {
            root,
            facts,
            aliases,
            unread: RefCell::new(None),
            parsed: RefCell::default(),
            path_dirs: RefCell::default(),
            root_id: id_of(root),
            real: RefCell::default(),
            ids: RefCell::default(),
        }
    }

    /// `p` (absolute, normalized) is in the top-level, in either spelling of home, through a
    /// link at the top of home, or through links anywhere on its way
    /// ([`Search::names_through_links`]). An `open` path stands for what a pattern or a
    /// variable there names (`~/dotfiles/*.sh`): it also names a top-level beneath it, below
    /// home.
    fn names_any(&self, n: &Named) -> bool {
        self.names(&n.path, n.open)
            || n.physical.as_ref().is_some_and(|p| self.names_through_links(p, n.open))
            || n.glob.as_ref().is_some_and(|g| self.glob_names(g))
    }

    /// Some path `glob` may name is in the top-level (or one of its aliases), in either
    /// spelling of home.
    fn glob_names(&self, glob: &Glob) -> bool {
        let (home, real) = (self.facts.home, self.facts.real_home);
        let respelled =
            |p: &Path| [Some(p.to_path_buf()), real.and_then(|r| p.strip_prefix(r).ok().map(|rest| home.join(rest)))];
        std::iter::once(self.root)
            .chain(self.aliases.iter().map(PathBuf::as_path))
            .flat_map(respelled)
            .flatten()
            .any(|at| glob.may_reach(&at))
    }

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
        }) || self.names_through_links(p, open)
    }

    /// `p` as the kernel resolves it, every link on its way followed wherever it is (rt8 A3:
    /// `/opt/tools -> /srv/src/tools`, outside home), is in the top-level: the real path of its
    /// longest part that exists, the rest as written, is in the top-level's, or a directory on
    /// that way is the top-level's directory (one a bind mount shows at another path too). An
    /// `open` one names a top-level beneath it, as [`Search::names`] says. Looked up once per
    /// directory: a `realpath` and a `stat` each.
    fn names_through_links(&self, p: &Path, open: bool) -> bool {
        let Some(real) = self.real(p) else { return false };
        let is_root = |d: &Path| self.root_id.is_some() && self.id(d) == self.root_id;
        if within(&real, self.root) || real.ancestors().any(is_root) {
            return true;
        }
        let (home, real_home) = (self.facts.home, self.facts.real_home);
        let homes = real == home
            || real_home == Some(real.as_path())
            || real.parent().is_none()
            || self
                .id(&real)
                .is_some_and(|i| [Some(home), real_home].into_iter().flatten().any(|h| self.id(h) == Some(i)));
        open && !homes && {
            let at = self.id(&real);
            within(self.root, &real) || at.is_some() && self.root.ancestors().any(|a| self.id(a) == at)
        }
    }

    /// The real path of `p`'s longest part that exists, with the rest of `p` after it.
    fn real(&self, p: &Path) -> Option<PathBuf> {
        for part in p.ancestors() {
            let known = self.real.borrow().get(part).cloned();
            let real = match known {
                Some(real) => real,
                None => {
                    let real = super::sys::real_path(part).ok();
                    self.real.borrow_mut().insert(part.to_path_buf(), real.clone());
                    real
                }
            };
            if let Some(real) = real {
                return Some(normalize(&real.join(p.strip_prefix(part).ok()?)));
            }
        }
        None
    }

    fn id(&self, dir: &Path) -> Option<Id> {
        if let Some(known) = self.ids.borrow().get(dir) {
            return *known;
        }
        let id = id_of(dir);
        self.ids.borrow_mut().insert(dir.to_path_buf(), id);
        id
    }

    /// A bound ran out: the first one is kept, to say.
    fn unread(&self, why: String) {
        self.unread.borrow_mut().get_or_insert(why);
    }

    /// `p` is in home, in either spelling.
    fn in_home(&self, p: &Path) -> bool {
        within(p, self.facts.home) || self.facts.real_home.is_some_and(|r| within(p, r))
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

    /// The files of `dir` (a start-up directory, or one a pattern names), to read.
    fn add_dir(&self, q: &mut Queue, dir: &Path, depth: usize, dirs: &[PathBuf]) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut paths: Vec<PathBuf> = entries.flatten().take(MAX_ENTRIES + 1).map(|e| e.path()).collect();
        if paths.len() > MAX_ENTRIES {
            paths.truncate(MAX_ENTRIES);
            self.unread(format!("{} holds more than {MAX_ENTRIES} files", shown(dir)));
        }
        for p in paths {
            q.add(p, depth, dirs);
        }
    }

    /// R5: the start-up files, and what they source.
    fn startup(&self) -> Option<String> {
        let home = self.facts.home;
        let mut q = Queue::default();
        for rel in STARTUP_FILES {
            q.add(join(home, rel), 0, &[]);
        }
        for file in SYSTEM_FILES {
            q.add(PathBuf::from(file), 0, &[]);
        }
        // zsh's files where `ZDOTDIR` is, and where it usually is (A12).
        let xdg = self.facts.xdg_config.clone().unwrap_or_else(|| join(home, ".config"));
        for z in self.facts.zdotdir.iter().chain([&join(&xdg, "zsh"), &join(home, ".config/zsh")]) {
            for rel in ZSH_FILES {
                q.add(join(z, rel), 0, &[]);
            }
        }
        let mut dirs: Vec<PathBuf> = STARTUP_DIRS.iter().map(|d| join(home, d)).collect();
        if let Some(x) = &self.facts.xdg_config {
            for rel in [
                "fish/config.fish",
                "fish/fish_variables",
                "tmux/tmux.conf",
                "nvim/init.vim",
                "nvim/init.lua",
                "bash_completion",
            ] {
                q.add(join(x, rel), 0, &[]);
            }
            dirs.push(join(x, "fish/conf.d"));
        }
        for dir in dirs {
            self.add_dir(&mut q, &dir, 0, &[]);
        }
        let (mut at, mut files, mut total) = (0, 0, 0u64);
        while at < q.files.len() {
            let Queued { path: file, depth, dirs } = q.files[at].clone();
            at += 1;
            let Some((text, whole)) = read(&file, MAX_BYTES, Start::Any) else { continue };
            files += 1;
            total += text.len() as u64;
            if files > MAX_FILES || total > MAX_TOTAL {
                self.unread(format!("more than {MAX_FILES} files or {} MiB", MAX_TOTAL >> 20));
                break;
            }
            if !whole {
                self.unread(format!("{} is longer than {} MiB", shown(&file), MAX_BYTES >> 20));
            }
            // ssh takes a relative `Include` from `~/.ssh`.
            let ssh = within(&file, &join(home, ".ssh"));
            let mut cx = Context { syntax: Syntax::of(&file), dirs, too_many_dirs: false, unknown_user: None };
            for (line_no, line) in text.lines().enumerate() {
                match zdotdir(line, home, self.facts.xdg_config.as_deref()) {
                    Some(Some(z)) => ZSH_FILES.iter().for_each(|rel| q.add(join(&z, rel), 0, &[])),
                    Some(None) => self.unread(format!(
                        "{} sets ZDOTDIR to a directory agentsh cannot tell (line {})",
                        shown(&file),
                        line_no + 1
                    )),
                    None => {}
                }
                let mut named = named_paths(line, home, &mut cx);
                if ssh {
                    named.extend(ssh_includes(line, &join(home, ".ssh")));
                }
                let path_line = sets_path(line);
                for n in named {
                    if path_line && !n.sourced && !n.open && n.path != home && self.in_home(&n.path) {
                        let mut dirs = self.path_dirs.borrow_mut();
                        if dirs.len() >= MAX_NAMED_PATH_DIRS {
                            drop(dirs);
                            self.unread(format!(
                                "{} puts more than {MAX_NAMED_PATH_DIRS} directories on $PATH",
                                shown(&file)
                            ));
                        } else if !dirs.contains(&n.path) {
                            dirs.push(n.path.clone());
                        }
                    }
                    if self.names_any(&n) {
                        return Some(format!(
                            "{} names {} in it (line {}), which the person's shell or tools run or read at start, \
                             outside the sandbox",
                            shown(&file),
                            shown(&n.path),
                            line_no + 1
                        ));
                    }
                    // What it sources, and the files of a directory it names by a pattern
                    // (`for f in ~/.bashrc.d/*.sh; do . "$f"; done`, `Include config.d/*`).
                    // Only home's: the system's files (bash-completion's) name no clone of the
                    // person's, and are long.
                    let follow = n.sourced || n.open && n.pattern && n.path != home;
                    if !follow || !self.in_home(&n.path) || q.seen.contains(&n.path) {
                        continue;
                    }
                    if depth >= MAX_DEPTH {
                        self.unread(format!("{} sources files more than {MAX_DEPTH} deep", shown(&file)));
                    } else if n.sourced {
                        q.add(n.path, depth + 1, &cx.dirs);
                    } else {
                        self.add_dir(&mut q, &n.path, depth + 1, &cx.dirs);
                    }
                }
            }
            if cx.too_many_dirs {
                self.unread(format!("{} goes to more than {MAX_DIRS} directories", shown(&file)));
            }
            if let Some(name) = &cx.unknown_user {
                let name = crate::text::sanitize::sanitize(name);
                self.unread(format!("{} names ~{name}/, a home /etc/passwd does not give", shown(&file)));
            }
        }
        *self.parsed.borrow_mut() = q.seen;
        None
    }

    /// rt6 X1: the settings of every other tool, found by where they are rather than by tool
    /// ([`config_files`]); a clone any of them names in any spelling of home ([`Spellings`]),
    /// anywhere but after `cd`, is no workspace. The records of what the person did, which
    /// name every project, are left ([`record`]).
    fn configs(&self) -> Option<String> {
        let spellings = Spellings::of(self);
        // The shells' start-up files too: what the line-by-line reading has no spelling for
        // (`${EMSDK:-$HOME/emsdk}`) is found there as well.
        let mut parsed: Vec<PathBuf> = self.parsed.borrow().iter().filter(|p| p.is_absolute()).cloned().collect();
        parsed.sort();
        let mut found = config_files(self.facts.home, self.facts.xdg_config.as_deref(), &|why| self.unread(why));
        let known: HashSet<PathBuf> = found.iter().cloned().collect();
        found.extend(parsed.into_iter().filter(|p| !known.contains(p)));
        let (mut files, mut total) = (0, 0u64);
        for file in found {
            let Some((text, whole)) = read_bytes(&file, MAX_BYTES, Start::Text) else { continue };
            files += 1;
            total += text.len() as u64;
            if files > MAX_CONFIGS || total > MAX_TOTAL {
                self.unread(format!("more than {MAX_CONFIGS} settings files or {} MiB", MAX_TOTAL >> 20));
                return None;
            }
            if !whole {
                self.unread(format!("{} is longer than {} MiB", shown(&file), MAX_BYTES >> 20));
            }
            if let Some((line, named)) = spellings.find(&text) {
                return Some(format!(
                    "{} names {named} (line {line}), a settings file the person's tools read as they start, \
                     outside the sandbox",
                    shown(&file),
                ));
            }
        }
        None
    }

    /// rt7 A10: a directory of `$PATH` in the top-level through a link at the top of home
    /// (`~/code/tools/bin`, `~/code -> ~/src`): the spec's own rule (`holds_path_dir`) reads
    /// `$PATH` as written. A project's own environment (`.venv/bin`) is the project's.
    fn path_through_links(&self) -> Option<String> {
        let own_env =
            |d: &Path| d.components().any(|c| super::spec::PROJECT_ENVIRONMENTS.iter().any(|e| c.as_os_str() == *e));
        let dir = self
            .facts
            .path_dirs
            .iter()
            .filter(|d| d.is_absolute())
            .map(|d| normalize(d))
            .find(|d| !within(d, self.root) && !own_env(d) && self.aliases.iter().any(|a| within(d, a)))?;
        Some(format!(
            "{} is a directory of $PATH, in it through a link at the top of home, whose programs run outside the \
             sandbox",
            shown(&dir)
        ))
    }

    /// R6: programs on `$PATH` that are links into the top-level, or small scripts that name
    /// something in it (rt5 A6: a wrapper that `exec`s a clone's program). The system's own
    /// directories (`/usr/bin`: their programs are the packages') and the top-level's own
    /// (`node_modules/.bin`, whose links are the project's) are not read.
    fn path_links(&self) -> Option<String> {
        let mut scripts = 0;
        let named = self.path_dirs.borrow();
        let mut dirs: Vec<PathBuf> = self.facts.path_dirs.iter().map(|d| normalize(d)).collect();
        dirs.extend(named.iter().map(|d| normalize(d)).filter(|d| !self.facts.path_dirs.contains(d)));
        for dir in dirs {
            if system_dir(&dir) || within(&dir, self.root) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let Ok(kind) = e.file_type() else { continue };
                let program = e.path();
                let mut at = program.clone();
                if kind.is_symlink() {
                    // Past the kernel's own limit nothing runs.
                    for _ in 0..MAX_HOPS {
                        let Ok(target) = std::fs::read_link(&at) else { break };
                        at = normalize(&at.parent().unwrap_or(Path::new("/")).join(target));
                        if self.names(&at, false) {
                            return Some(format!(
                                "{} on $PATH is a link to {} in it, a program the person runs outside the sandbox",
                                shown(&program),
                                shown(&at)
                            ));
                        }
                    }
                    // A package's own script (a nix profile's links into `/nix/store`).
                    if system_dir(&at) {
                        continue;
                    }
                } else if !kind.is_file() {
                    continue;
                }
                if let Some((named, line)) = self.script(&at, &mut scripts) {
                    return Some(format!(
                        "{} on $PATH is a script that names {} in it (line {line}), a program the person runs \
                         outside the sandbox",
                        shown(&program),
                        shown(&named)
                    ));
                }
            }
        }
        None
    }

    /// What in the top-level the script `file` names, and on which line, where it is a small
    /// script (`#!`, its interpreter included). `count`: the scripts read so far.
    fn script(&self, file: &Path, count: &mut usize) -> Option<(PathBuf, usize)> {
        let meta = std::fs::metadata(file).ok()?;
        if !meta.is_file() || meta.len() > MAX_SCRIPT || meta.len() < 3 {
            return None;
        }
        *count += 1;
        if *count > MAX_SCRIPTS {
            self.unread(format!("more than {MAX_SCRIPTS} programs on $PATH"));
            return None;
        }
        let (text, _) = read(file, MAX_SCRIPT, Start::Script)?;
        let mut cx = Context { syntax: Syntax::Shell, dirs: Vec::new(), too_many_dirs: false, unknown_user: None };
        let home = self.facts.home;
        for (line_no, line) in text.lines().enumerate() {
            let line = if line_no == 0 { &line[2..] } else { line };
            if let Some(n) = named_paths(line, home, &mut cx).into_iter().find(|n| self.names_any(n)) {
                return Some((n.path, line_no + 1));
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

/// At most this many settings files are read ([`Search::configs`]), each to [`MAX_BYTES`].
const MAX_CONFIGS: usize = 4096;

/// The directories below the settings directory (`~/.config`) whose every file a tool loads as
/// code, read this many levels down ([`config_files`]): systemd's user units, fish's functions
/// (autoloaded by name), the desktop's autostart entries, the environment of the person's
/// services, neovim's and Doom Emacs's trees of settings, direnv's library.
const CONFIG_CODE_DIRS: &[&str] =
    &["systemd/user", "fish/functions", "autostart", "environment.d", "nvim", "doom", "direnv"];
const CODE_LEVELS: usize = 3;

/// Directories of home, outside the settings directory, whose files tools load as code, and
/// how many levels down: systemd's and fish's others, cargo's (`config.toml`:
/// `build.rustc-wrapper`, a target's `runner`), Emacs's (`init.el`), gradle's init scripts,
/// Jupyter's, kubectl's (an `exec` credential plugin), the AWS CLI's (`credential_process`).
/// IPython's profiles (`startup/*.py`) too ([`config_files`]). Not their other directories
/// (caches, packages), which are large and name no clone.
const HOME_CODE_DIRS: &[(&str, usize)] = &[
    (".local/share/systemd/user", CODE_LEVELS),
    (".local/share/fish/vendor_functions.d", 0),
    (".cargo", 0),
    (".emacs.d", 0),
    (".gradle", 0),
    (".gradle/init.d", 0),
    (".jupyter", 0),
    (".kube", 0),
    (".aws", 0),
    (".m2", 0),
];

/// The settings files tools other than the shells read (rt6 X1), found by place: every file at
/// the top of home whose name starts with `.`, every file of the settings directories
/// (`~/.config` and `XDG_CONFIG_HOME`) and of their directories (`~/.config/gdb/gdbinit`), the
/// whole of [`CONFIG_CODE_DIRS`] and [`HOME_CODE_DIRS`]. Not the records of what the person did
/// ([`record`]). A directory with more than [`MAX_ENTRIES`] files is said (`unread`).
fn config_files(home: &Path, xdg: Option<&Path>, unread: &dyn Fn(String)) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut walk = |dir: &Path, levels: usize, top_dots: bool| walk(dir, levels, top_dots, &mut out, unread);
    walk(home, 0, true);
    // `XDG_CONFIG_HOME` is the agent's; the person's tools may have another: both.
    let default = join(home, ".config");
    for config in std::iter::once(default.as_path()).chain(xdg.filter(|x| *x != default)) {
        walk(config, 1, false);
        for rel in CONFIG_CODE_DIRS {
            walk(&join(config, rel), CODE_LEVELS, false);
        }
    }
    for (rel, levels) in HOME_CODE_DIRS {
        walk(&join(home, rel), *levels, false);
    }
    // IPython's profiles, each with its `startup` directory.
    let ipython = join(home, ".ipython");
    for e in std::fs::read_dir(&ipython).into_iter().flatten().flatten().take(MAX_ENTRIES) {
        if e.file_name().to_string_lossy().starts_with("profile_") {
            walk(&e.path(), 0, false);
            walk(&e.path().join("startup"), 0, false);
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The files of `dir` and of its directories `levels` down (following links: the levels bound
/// a loop), but the records ([`record`]); with `dots`, only the files whose name starts with
/// `.`.
fn walk(dir: &Path, levels: usize, dots: bool, out: &mut Vec<PathBuf>, unread: &dyn Fn(String)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    // Home's other files (however many) are not counted.
    let dot = |e: &std::fs::DirEntry| !dots || e.file_name().as_encoded_bytes().starts_with(b".");
    let mut entries: Vec<_> = entries.flatten().filter(dot).take(MAX_ENTRIES + 1).collect();
    if entries.len() > MAX_ENTRIES {
        entries.truncate(MAX_ENTRIES);
        unread(format!("{} holds more than {MAX_ENTRIES} files", shown(dir)));
    }
    for e in entries {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let path = e.path();
        if record(&name, &path) {
            continue;
        }
        // The directory's own record of the kind; a link's, from what it leads to.
        let Ok(mut kind) = e.file_type() else { continue };
        if kind.is_symlink() {
            let Ok(meta) = std::fs::metadata(&path) else { continue };
            kind = meta.file_type();
        }
        if kind.is_file() {
            out.push(path);
        } else if kind.is_dir() && levels > 0 && !dots {
            walk(&path, levels - 1, false, out, unread);
        }
    }
}

/// A file or directory that records what the person did, not what their tools run: it names
/// every project they work on (rt6 X1's friction). By its name: histories, recent files,
/// sessions, state, caches, bookmarks and logs (`.bash_history`, zsh's `.histfile`,
/// `recently-used.xbel`, lazygit's `state.yml`, GTK's `bookmarks`, mc's `hotlist`); `.lesshst`,
/// `.viminfo`, z's and fasd's lists, Emacs's `recentf`, `projects`, `places`, `ido.last`,
/// `.emacs.desktop` and lsp-mode's session, Claude Code's
/// `~/.claude.json` (every project it ran in), cargo's list of what it installed from where,
/// zsh's completion dump, the X session's errors, the desktop's user directories; agentsh's own
/// settings; git's global settings, which [`super::gitcode::global_code`] reads
/// (`safe.directory` names projects).
fn record(name: &str, path: &Path) -> bool {
    let lower = name.to_ascii_lowercase();
    ["hist", "recent", "session", "state", "cache", "bookmark", "hotlist"].iter().any(|w| lower.contains(w))
        || lower.ends_with(".log")
        || lower.starts_with(".zcompdump")
        || lower.starts_with(".xsession-errors")
        || lower.starts_with(".claude.json")
        || lower.starts_with(".lsp-session")
        || lower.ends_with(".eld")
        || matches!(
            name,
            ".lesshst"
                | ".viminfo"
                | ".wget-hsts"
                | ".z"
                | ".fasd"
                | "ido.last"
                | ".emacs.desktop"
                | "recentf"
                | "projects"
                | "places"
                | "user-dirs.dirs"
                | "agentsh"
                | ".crates.toml"
                | ".crates2.json"
                | ".gitconfig"
                | "logs"
        )
        || name == "config" && path.parent().is_some_and(|d| d.ends_with("git"))
}

/// The ways a settings file spells a path in the git top-level (rt6 X1, X6): absolute, or
/// from home as `~/`, `$HOME/`, `${HOME}/`, systemd's `%h/`, `~name/` (the person's name),
/// also through a link at the top of home into it.
struct Spellings {
    spelled: Vec<String>,
    /// What every spelling ends with (`/work/app`): a file without one of these is passed over
    /// whole, in one search.
    tails: Vec<String>,
    /// The searchers of [`Spellings::tails`], built once.
    finders: Vec<memchr::memmem::Finder<'static>>,
}

impl Spellings {
    fn of(s: &Search) -> Spellings {
        let (home, real) = (s.facts.home, s.facts.real_home);
        let me = crate::policy::dirs::passwd(nix::unistd::getuid().as_raw())
            .filter(|p| [Some(home), real].contains(&Some(normalize(Path::new(&p.home))).as_deref()))
            .map(|p| p.name);
        let (mut spelled, mut tails) = (Vec::new(), Vec::new());
        // Home, or what holds it, is never a workspace: only a top-level below it is sought.
        let below = |at: &Path| !within(home, at) && !real.is_some_and(|r| within(r, at));
        for at in std::iter::once(s.root).chain(s.aliases.iter().map(PathBuf::as_path)).filter(|at| below(at)) {
            spelled.push(at.display().to_string());
            let mut tail = at.display().to_string();
            for h in [Some(home), real].into_iter().flatten() {
                let Ok(rel) = at.strip_prefix(h) else { continue };
                let rel = rel.display();
                tail = format!("/{rel}");
                if let Some(r) = real.filter(|r| *r != h) {
                    spelled.push(format!("{}/{rel}", r.display()));
                }
                spelled.push(format!("{}/{rel}", home.display()));
                for prefix in ["~", "$HOME", "${HOME}", "%h"] {
                    spelled.push(format!("{prefix}/{rel}"));
                }
                if let Some(me) = &me {
                    spelled.push(format!("~{me}/{rel}"));
                }
            }
            tails.push(tail);
        }
        for v in [&mut spelled, &mut tails] {
            v.sort();
            v.dedup();
        }
        let finders = tails.iter().map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned()).collect();
        Spellings { spelled, tails, finders }
    }

    /// The first line of `text` that names the top-level in one of its spellings, and the
    /// spelling: a whole path component (`~/emsdk` is not `~/emsdk2`), not a comment line
    /// (`#`, `;`) nor a section or a setting of recent files (`[Recent Files]`, `recent=`),
    /// not where a `cd`, `pushd` or tmuxinator's `root:` goes (a directory to work in runs
    /// nothing of it by path). Quotes are dropped first (`"$HOME"/emsdk`).
    fn find(&self, text: &[u8]) -> Option<(usize, String)> {
        let text = as_the_shell_reads(text);
        if !self.finders.iter().any(|f| f.find(&text).is_some()) {
            return None;
        }
        let text = String::from_utf8_lossy(&text);
        let part = |c: u8| c.is_ascii_alphanumeric() || b"_.-".contains(&c);
        // In a section of recent files (KDE's `[Recent Files]`, `File1[$e]=$HOME/...`).
        let mut recent = false;
        for (no, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') && trimmed.ends_with(']') && !trimmed.contains(['/', '~', '=']) {
                let lower = trimmed.to_ascii_lowercase();
                recent = ["recent", "history", "session"].iter().any(|w| lower.contains(w));
            }
            if recent || trimmed.starts_with(['#', ';']) || !self.tails.iter().any(|t| line.contains(t.as_str())) {
                continue;
            }
            // A setting of recent files (KDevelop's `Recent Projects=`, `"recentFolders": [`).
            let key = trimmed.split(['=', ':']).next().unwrap_or("").to_ascii_lowercase();
            if trimmed.contains(['=', ':']) && RECENT_KEYS.iter().any(|w| key.contains(w)) {
                continue;
            }
            let line: String = line.chars().filter(|c| *c != '"' && *c != '\'').collect();
            let b = line.as_bytes();
            for spelled in &self.spelled {
                for (at, _) in line.match_indices(spelled.as_str()) {
                    let end = at + spelled.len();
                    let whole = end == b.len() || !part(b[end]);
                    let starts = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b"_.".contains(&b[at - 1]));
                    if whole && starts && !goes_to(&line[..at]) {
                        return Some((no + 1, crate::text::sanitize::sanitize(spelled)));
                    }
                }
            }
        }
        None
    }
}

/// `text` with what the shell takes out of a path before it uses it (rt6 X6): a backslash
/// before a character (`~/b\tool` is `~/btool`), and the operator of an expansion of home
/// (`${HOME:?}`, `${HOME:-/x}`, `${HOME%/}`: `${HOME}`), and what the kernel takes out of a
/// path: a doubled slash and a `/./` (`~//tools`, `/home/me/./tools`: rt7 A2). Borrowed where
/// it has none of them.
fn as_the_shell_reads(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const HOME: &[u8] = b"${HOME";
    if memchr::memchr(b'\\', text).is_none()
        && memchr::memmem::find(text, HOME).is_none()
        && memchr::memmem::find(text, b"//").is_none()
        && memchr::memmem::find(text, b"/./").is_none()
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        if text[at] == b'/' && (out.last() == Some(&b'/') || text[at..].starts_with(b"/./")) {
            // The next `/` stays.
            at += if text[at..].starts_with(b"/./") { 2 } else { 1 };
        } else if text[at] == b'\\' && at + 1 < text.len() && text[at + 1] != b'\n' {
            out.push(text[at + 1]);
            at += 2;
        } else if text[at..].starts_with(HOME)
            && let Some(close) = text[at..].iter().take(256).position(|c| *c == b'}')
            && !text[at + HOME.len()..at + close].first().is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            out.extend_from_slice(b"${HOME}");
            at += close + 1;
        } else {
            out.push(text[at]);
            at += 1;
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What the name of a setting of recent files holds ([`Spellings::find`]).
const RECENT_KEYS: &[&str] = &["recent", "hist", "mru", "session", "lastdir", "last_dir", "lastused", "last_used"];

/// The text before a path makes it a directory to go to, where the person works (a terminal's
/// or a session's start): `cd`, `pushd`, `chdir` (screen), tmuxinator's and tmuxp's `root:`,
/// `start_directory:`, a terminal's `working_directory`, `default_cwd`, `cwd`. Not systemd's
/// `WorkingDirectory=`: a service runs there unattended.
fn goes_to(before: &str) -> bool {
    let before = before.trim_end().trim_end_matches([':', '=']).trim_end();
    ["cd", "pushd", "chdir", "root", "start_directory", "working_directory", "default_cwd", "cwd"]
        .iter()
        .any(|w| before.strip_suffix(w).is_some_and(|b| !b.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')))
}

fn shown(p: &Path) -> String {
    crate::text::sanitize::sanitize(&crate::text::path(p))
}

/// What a file must start as to be read ([`read`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Anything.
    Any,
    /// `#!`: a program that is no script is read no further than that.
    Script,
    /// No NUL in its first 8 KiB: a program or a database is no settings file.
    Text,
}

/// The text of a file, where it is a regular file (not a FIFO or a device) that starts as
/// `start` says: its first `max` bytes, and whether that is all of it.
fn read(path: &Path, max: u64, start: Start) -> Option<(String, bool)> {
    read_bytes(path, max, start).map(|(text, whole)| (String::from_utf8_lossy(&text).into_owned(), whole))
}

/// [`read`], as bytes.
fn read_bytes(path: &Path, max: u64, start: Start) -> Option<(Vec<u8>, bool)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    // Sized to the file: read in one call, not in growing steps.
    let mut text = Vec::with_capacity(meta.len().min(max) as usize + 1);
    match start {
        Start::Any => {}
        Start::Script => {
            let mut two = [0u8; 2];
            file.read_exact(&mut two).ok().filter(|()| two == *b"#!")?;
            text.extend_from_slice(&two);
        }
        Start::Text => {
            (&mut file).take(8192).read_to_end(&mut text).ok()?;
            if text.contains(&0) {
                return None;
            }
        }
    }
    file.take((max + 1).saturating_sub(text.len() as u64)).read_to_end(&mut text).ok()?;
    let whole = text.len() as u64 <= max;
    text.truncate(max as usize);
    Some((text, whole))
}

/// The directory a line of a start-up file sets `ZDOTDIR` to (rt5 A12: `export
/// ZDOTDIR="${XDG_CONFIG_HOME:-$HOME/.config}/zsh"` in `~/.zshenv`); `Some(None)` where it sets
/// it to one agentsh cannot tell.
fn zdotdir(line: &str, home: &Path, xdg: Option<&Path>) -> Option<Option<PathBuf>> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    let at = line.find("ZDOTDIR=")?;
    if line[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return None; // another variable (`MY_ZDOTDIR=`)
    }
    let home_text = home.display().to_string();
    let mut value: String = line[at + "ZDOTDIR=".len()..]
        .chars()
        .take_while(|c| !c.is_whitespace() && !";&|)".contains(*c))
        .filter(|c| *c != '"' && *c != '\'')
        .collect::<String>()
        .replace("${HOME}", &home_text)
        .replace("$HOME", &home_text);
    // `${VAR:-default}`: `XDG_CONFIG_HOME` where it is set, else the default.
    while let Some(start) = value.find("${") {
        let Some(len) = value[start..].find('}') else { break };
        let inner = &value[start + 2..start + len];
        let Some((name, default)) = inner.split_once(":-") else { break };
        let with = match (name, xdg) {
            ("XDG_CONFIG_HOME", Some(x)) => x.display().to_string(),
            _ => default.to_string(),
        };
        value.replace_range(start..=start + len, &with);
    }
    let config = xdg.map(Path::to_path_buf).unwrap_or_else(|| join(home, ".config")).display().to_string();
    for from in ["${XDG_CONFIG_HOME}", "$XDG_CONFIG_HOME"] {
        value = value.replace(from, &config);
    }
    if value == "~" || value.starts_with("~/") {
        value.replace_range(..1, &home_text);
    }
    if value.contains(['$', '`', '~']) || !value.starts_with('/') {
        return Some(None);
    }
    Some(Some(normalize(Path::new(&value))))
}

/// A path a line of a start-up file names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Named {
    /// Absolute and normalized; where a pattern or a variable is in it, what comes before.
    pub path: PathBuf,
    /// `path` as written, where a `..` in it makes the kernel's path another (after a link,
    /// `..` is the parent of the link's target: rt8 A3).
    pub physical: Option<PathBuf>,
    /// The line sources it (`source`, `.`, `Include`, `source-file`): it is read too.
    pub sourced: bool,
    /// A pattern or a variable followed `path` (`~/dotfiles/*.sh`, `~/dotfiles/$HOST/rc`).
    pub open: bool,
    /// It was a pattern in its last component (`~/.bashrc.d/*.sh`): the files of `path`.
    pub pattern: bool,
    /// A word from home that the shell expands further (`~/tool{s,x}/env.sh`, `~/too?s`,
    /// `$HOME$X/tools`, `~/$d/env.sh`): every path it may name ([`Glob`], rt7 A2).
    pub glob: Option<Glob>,
}

/// Whose syntax a file is in: what starts a comment line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// `#` (shells, fish, ssh, tmux).
    Shell,
    /// `"` (and `#`): vim's files.
    Vim,
    /// `--` (and `#`): lua's.
    Lua,
}

impl Syntax {
    fn of(file: &Path) -> Syntax {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".lua") {
            Syntax::Lua
        } else if name.ends_with(".vim")
            || matches!(name, ".vimrc" | ".gvimrc" | ".exrc" | "vimrc" | "gvimrc")
            || file.to_string_lossy().contains("/.vim/")
        {
            Syntax::Vim
        } else {
            Syntax::Shell
        }
    }
}

/// What the lines read so far of one file tell about the next: its syntax, and where it went.
pub(crate) struct Context {
    pub syntax: Syntax,
    /// The directories a `cd` or `pushd` went to (and those of the file that sourced it).
    pub dirs: Vec<PathBuf>,
    /// More than [`MAX_DIRS`] of them: some were not kept.
    pub too_many_dirs: bool,
    /// A `~name/` whose home `/etc/passwd` does not give (rt6 X6): what it names is unknown.
    pub unknown_user: Option<String>,
}

/// The absolute paths a line of a start-up file names (`/…`, `~/…`, `$HOME/…`, `${HOME}/…`),
/// and the relative ones it sources or runs (`source ./x`, `./x`), from home and from each
/// directory `cx` went to. Quotes are dropped first (`"$HOME"/x` is `$HOME/x`); fish's list
/// separator (`\x1e` in `fish_variables`) separates. Left out: comment lines (`#`, and in its
/// own files vim's `"` and lua's `--`) and the operand of `cd` and `pushd` (an alias that goes
/// to a project runs nothing of it; the directory is kept in `cx`).
pub(crate) fn named_paths(line: &str, home: &Path, cx: &mut Context) -> Vec<Named> {
    let trimmed = line.trim_start();
    let comment = match cx.syntax {
        Syntax::Shell => "#",
        Syntax::Vim => "\"",
        Syntax::Lua => "--",
    };
    if trimmed.starts_with('#') || trimmed.starts_with(comment) {
        return Vec::new();
    }
    // Most lines name no path: one that has no `/` names one only where it sources a relative
    // file or goes somewhere (`source env.sh`, `. env.sh`, `cd emsdk`).
    let relative = cx.syntax == Syntax::Shell && ["source", ". ", "cd", "pushd"].iter().any(|w| line.contains(w));
    if !line.contains('/') && !relative {
        return Vec::new();
    }
    let text: String = line.replace("\\x1e", ":").chars().filter(|c| *c != '"' && *c != '\'').collect();
    let delimiter = |c: u8| c.is_ascii_whitespace() || b"=:;()`|&<>,[]{}".contains(&c);
    let ends = |c: char| c.is_whitespace() || ":;()`|&<>,]}".contains(c);
    let separator = |c: u8| b";|&(`{".contains(&c);
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Kept as `i` goes, in one pass: the last word before it (split at delimiters), and the
    // first word of its command (split at whitespace).
    let (mut scanned, mut word_at, mut last) = (0, None::<usize>, (0, 0));
    let (mut command_at, mut command) = (None::<usize>, None::<(usize, usize)>);
    let mut i = 0;
    while i < bytes.len() {
        // Every prefix starts with one of these, after a delimiter or a default's `-`, `+`
        // (`${EMSDK:-$HOME/emsdk}`, rt6 X6) (all ASCII).
        if !matches!(bytes[i], b'/' | b'~' | b'$')
            || i > 0 && !delimiter(bytes[i - 1]) && !b"-+".contains(&bytes[i - 1])
        {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let (prefix, base) = match ["${HOME}/", "$HOME/", "~/", "/"].into_iter().find(|p| rest.starts_with(p)) {
            Some("/") => (1, PathBuf::from("/")),
            Some(p) => (p.len(), home.to_path_buf()),
            // `~name/`: that user's home, as the shell takes it (rt6 X6); one agentsh cannot
            // tell is said ([`Context::unknown_user`]).
            None => match tilde_user(rest) {
                Some(name) => match crate::policy::dirs::home_of(name) {
                    Some(h) => (name.len() + 2, normalize(&h)),
                    None => {
                        cx.unknown_user.get_or_insert_with(|| name.to_string());
                        i += 1;
                        continue;
                    }
                },
                None => {
                    i += 1;
                    continue;
                }
            },
        };
        for (j, &c) in bytes.iter().enumerate().take(i).skip(scanned) {
            match (delimiter(c), word_at) {
                (true, Some(at)) => {
                    last = (at, j);
                    word_at = None;
                }
                (false, None) => word_at = Some(j),
                _ => {}
            }
            // Not a variable's `${`.
            if separator(c) && !(c == b'{' && j > 0 && bytes[j - 1] == b'$') {
                (command_at, command) = (None, None);
            } else if c.is_ascii_whitespace() {
                if let (Some(at), None) = (command_at, command) {
                    command = Some((at, j));
                }
            } else if command_at.is_none() {
                command_at = Some(j);
            }
        }
        scanned = i;
        let len = prefix + rest[prefix..].find(ends).unwrap_or(rest.len() - prefix);
        let word = &rest[..len];
        i += len;
        if matches!(&text[last.0..last.1], "cd" | "pushd") {
            continue;
        }
        let command = command.or(command_at.map(|at| (at, scanned))).map(|(a, b)| &text[a..b]);
        let sourced = command.is_some_and(|c| matches!(c, "source" | "." | "source-file" | "so"))
            || command.is_some_and(|c| c.eq_ignore_ascii_case("include"));
        out.push(named(&base, &word[prefix..], sourced));
    }
    if relative || cx.syntax == Syntax::Shell && text.contains("./") {
        relative_paths(&text, home, cx, &mut out);
    }
    out.extend(home_globs(&text, home, sets_path(line)).into_iter().map(|g| Named {
        path: home.to_path_buf(),
        physical: None,
        sourced: false,
        open: true,
        pattern: false,
        glob: Some(g),
    }));
    out
}

/// What the shell may make of a word: its bytes, and where it expands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    /// `?`, `[...]`: one character, not `/`.
    One,
    /// `*`, `{1..9}`: any characters but `/`.
    Star,
    /// A variable (`$X`, `${X}`, `$(...)`): anything, `/` too.
    Any,
}

/// The paths a word of a start-up line may name where the shell expands it after home
/// (rt7 A2): braces expanded (up to [`MAX_BRACES`] words; past that, anything), patterns
/// (`*`, `?`, `[...]`) for what they match, a variable for anything at all. Judged against a
/// top-level by [`Glob::may_reach`]: some path it may name is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Glob {
    words: Vec<Vec<Tok>>,
    /// The line sets `$PATH`: a directory it names is itself run from. Otherwise only a path
    /// in a top-level counts (`ls ~/*` names each project, and runs nothing of them).
    itself: bool,
}

/// How many words a word's braces may expand to before it is taken as anything.
const MAX_BRACES: usize = 64;

impl Glob {
    /// Whether some path a word may name is `root` or in it.
    fn may_reach(&self, root: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let root = root.as_os_str().as_bytes();
        self.words.iter().any(|w| reaches(w, root, self.itself))
    }
}

/// Whether `word` may name a path in `root` (or `root` itself, with `itself`): it matches all
/// of `root`, and what is left of it may go on with `/` and a name (or be empty).
fn reaches(word: &[Tok], root: &[u8], itself: bool) -> bool {
    // The positions in `word` that may come next, with what may be skipped (`*`, a variable)
    // skipped too.
    let close = |set: &mut Vec<usize>| {
        let mut i = 0;
        while i < set.len() {
            let p = set[i];
            if matches!(word.get(p), Some(Tok::Star | Tok::Any)) && !set.contains(&(p + 1)) {
                set.push(p + 1);
            }
            i += 1;
        }
    };
    let mut now = vec![0];
    close(&mut now);
    for &c in root {
        let mut next = Vec::new();
        for &p in &now {
            let to = match word.get(p) {
                Some(Tok::Byte(b)) if *b == c => Some(p + 1),
                Some(Tok::One) if c != b'/' => Some(p + 1),
                Some(Tok::Star) if c != b'/' => Some(p),
                Some(Tok::Any) => Some(p),
                _ => None,
            };
            if let Some(to) = to
                && !next.contains(&to)
            {
                next.push(to);
            }
        }
        close(&mut next);
        if next.is_empty() {
            return false;
        }
        now = next;
    }
    now.iter().any(|&p| match word.get(p) {
        None => itself,
        Some(Tok::Any) => true,
        Some(Tok::Byte(b'/')) => itself || word[p + 1..].iter().any(|t| *t != Tok::Byte(b'/')),
        _ => false,
    })
}

/// The words of `text` that start with home (`~`, `$HOME`, `${HOME}`) and that the shell
/// expands further after it ([`Glob`]); `home` stands for the spelling.
fn home_globs(text: &str, home: &Path, itself: bool) -> Vec<Glob> {
    use std::os::unix::ffi::OsStrExt;
    let b = text.as_bytes();
    if !b.iter().any(|c| b"*?[{$".contains(c)) {
        return Vec::new();
    }
    let starts = |i: usize| i == 0 || b[i - 1].is_ascii_whitespace() || b"=:;()`|&<>,-+\"".contains(&b[i - 1]);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let prefix = ["${HOME}", "$HOME", "~"].into_iter().find(|p| b[i..].starts_with(p.as_bytes())).map(str::len);
        let Some(prefix) = prefix.filter(|_| starts(i)) else {
            i += 1;
            continue;
        };
        // `$HOMEDIR` is another variable; `~name` another user's home (named_paths').
        let after = b.get(i + prefix).copied();
        if after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            i += prefix;
            continue;
        }
        let end = word_end(b, i + prefix);
        let rest = &b[i + prefix..end];
        i = end.max(i + 1);
        if !rest.iter().any(|c| b"*?[{$".contains(c)) {
            continue;
        }
        let mut words = Vec::new();
        let mut anything = false;
        for w in braces(rest, &mut anything) {
            let mut toks: Vec<Tok> = home.as_os_str().as_bytes().iter().map(|c| Tok::Byte(*c)).collect();
            toks.extend(tokens(&w));
            words.push(toks);
        }
        if anything {
            let mut toks: Vec<Tok> = home.as_os_str().as_bytes().iter().map(|c| Tok::Byte(*c)).collect();
            toks.push(Tok::Any);
            words.push(toks);
        }
        out.push(Glob { words, itself });
    }
    out
}

/// Where a word that starts at `from` ends: at a blank or an operator, and at `:` or `,`
/// outside braces (a list of paths).
fn word_end(b: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'{' => depth += 1,
            b'}' if depth > 0 => depth -= 1,
            b':' | b',' | b'}' if depth == 0 => return j,
            c if c.is_ascii_whitespace() || b";|&<>()`\"'".contains(&c) => return j,
            _ => {}
        }
    }
    b.len()
}

/// The words a word's braces expand to (`a{b,c}d`: `abd`, `acd`), as bash does: only braces
/// with a comma at their own level; `{1..9}` is a pattern (`*`). Past [`MAX_BRACES`] words,
/// `anything` is set.
fn braces(word: &[u8], anything: &mut bool) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut todo = vec![word.to_vec()];
    while let Some(w) = todo.pop() {
        if out.len() + todo.len() > MAX_BRACES {
            *anything = true;
            return out;
        }
        match brace_at(&w) {
            None => out.push(w),
            Some((open, close, commas)) => {
                let mut cuts = vec![open];
                cuts.extend(commas);
                cuts.push(close);
                for pair in cuts.windows(2) {
                    let mut n = w[..open].to_vec();
                    n.extend_from_slice(&w[pair[0] + 1..pair[1]]);
                    n.extend_from_slice(&w[close + 1..]);
                    todo.push(n);
                }
            }
        }
    }
    out
}

/// The first `{` with a comma at its own level: where it opens, closes, and its commas.
fn brace_at(w: &[u8]) -> Option<(usize, usize, Vec<usize>)> {
    for open in (0..w.len()).filter(|&i| w[i] == b'{' && (i == 0 || w[i - 1] != b'$')) {
        let (mut depth, mut commas) = (0usize, Vec::new());
        for (j, &c) in w.iter().enumerate().skip(open + 1) {
            match c {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    if !commas.is_empty() {
                        return Some((open, j, commas));
                    }
                    break;
                }
                b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

/// A word (braces expanded) as the shell matches it: `*`, `?`, `[...]`, a variable, and
/// what is left of a brace (`{1..9}`) are patterns; every other byte is itself.
fn tokens(w: &[u8]) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        match w[i] {
            b'*' => out.push(Tok::Star),
            b'?' => out.push(Tok::One),
            b'[' => match w[i + 1..].iter().position(|c| *c == b']') {
                Some(len) => {
                    out.push(Tok::One);
                    i += len + 1;
                }
                None => out.push(Tok::Byte(b'[')),
            },
            // What is left of a brace is a sequence (`{1..9}`): any one name.
            b'{' => {
                out.push(Tok::Star);
                i += w[i..].iter().position(|c| *c == b'}').unwrap_or(0);
            }
            b'$' => {
                out.push(Tok::Any);
                // The variable's name, or its braces.
                if w.get(i + 1) == Some(&b'{') {
                    i += w[i..].iter().position(|c| *c == b'}').unwrap_or(w.len() - i - 1);
                } else {
                    while w.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                        i += 1;
                    }
                }
            }
            c => out.push(Tok::Byte(c)),
        }
        i += 1;
    }
    out
}

/// The user name of a `~name/` that starts `text`.
fn tilde_user(text: &str) -> Option<&str> {
    let name = text.strip_prefix('~')?;
    let len = name.find('/')?;
    let name = &name[..len];
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    ok.then_some(name)
}

/// The relative paths a shell line sources or runs (rt5 A6: `pushd ~/emsdk; source
/// ./emsdk_env.sh`), from home (where a login shell starts) and each directory `cx` went to,
/// and the directories its `cd` and `pushd` go to. Not in an alias's definition, which runs
/// only when the person types it.
fn relative_paths(text: &str, home: &Path, cx: &mut Context, out: &mut Vec<Named>) {
    if text.split_whitespace().next() == Some("alias") {
        return;
    }
    let relative = |w: &str| !w.is_empty() && !w.starts_with(['/', '~', '$', '-']);
    let text = text.replace("${HOME}", "$HOME");
    for command in text.split([';', '|', '&', '(', ')', '{', '}', '`']) {
        let mut words = command.split_whitespace();
        let Some(first) = words.next() else { continue };
        if matches!(first, "cd" | "pushd") {
            let Some(dir) = words.find(|w| !w.starts_with('-')).and_then(|w| place(w, home)) else { continue };
            if !cx.dirs.contains(&dir) {
                if cx.dirs.len() < MAX_DIRS {
                    cx.dirs.push(dir);
                } else {
                    cx.too_many_dirs = true;
                }
            }
            continue;
        }
        let sources = matches!(first, "source" | ".");
        let operand = sources.then(|| words.clone().find(|w| !w.starts_with('-'))).flatten();
        let run = |w: &str| w.starts_with("./") || w.starts_with("../");
        for w in std::iter::once(first).chain(words) {
            let sourced = operand == Some(w) && relative(w);
            if !sourced && !run(w) {
                continue;
            }
            for base in std::iter::once(home).chain(cx.dirs.iter().map(PathBuf::as_path)) {
                out.push(named(base, w, sourced));
            }
        }
    }
}

/// Where `cd WORD` goes: `~`, `~/…`, `$HOME/…`, `/…`, or relative to home; `None` where a
/// variable or an option makes it unknown.
fn place(word: &str, home: &Path) -> Option<PathBuf> {
    let rest = ["${HOME}/", "$HOME/", "~/"].iter().find_map(|p| word.strip_prefix(p));
    let path = match rest {
        _ if word == "~" || word == "$HOME" => home.to_path_buf(),
        // Never `Path::join`: a doubled slash (`~//tools`) would leave home (rt7 A2).
        Some(rest) => join(home, rest),
        None if word.starts_with('/') => PathBuf::from(word),
        None if word.starts_with(['$', '~', '-']) => return None,
        None => home.join(word),
    };
    (!path.to_string_lossy().contains(['$', '`', '*', '?'])).then(|| normalize(&path))
}

/// `rest` (components) beneath `base`, up to the first that holds a pattern or a variable.
fn named(base: &Path, rest: &str, sourced: bool) -> Named {
    let parts: Vec<&str> = rest.split('/').collect();
    let open_at = parts.iter().position(|p| p.contains(['*', '?', '[', '$']));
    let written = join(base, &parts[..open_at.unwrap_or(parts.len())].join("/"));
    let path = normalize(&written);
    let physical = written.components().any(|c| c == std::path::Component::ParentDir).then_some(written);
    let pattern = open_at.is_some_and(|at| at + 1 == parts.len() && !parts[at].contains('$'));
    Named { path, physical, sourced: sourced && open_at.is_none(), open: open_at.is_some(), pattern, glob: None }
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

    fn cx(syntax: Syntax) -> Context {
        Context { syntax, dirs: Vec::new(), too_many_dirs: false, unknown_user: None }
    }

    fn paths_in(line: &str, cx: &mut Context) -> Vec<(String, bool)> {
        // The words the shell expands further are tested by what they reach (below).
        named_paths(line, Path::new("/h"), cx)
            .into_iter()
            .filter(|n| n.glob.is_none())
            .map(|n| (n.path.display().to_string(), n.sourced))
            .collect()
    }

    fn paths(line: &str) -> Vec<(String, bool)> {
        paths_in(line, &mut cx(Syntax::Shell))
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
            ("export PS1='$ '", vec![]),
            // rt5 A6: a line that starts with a quote runs a program in a shell's file.
            ("\"$HOME/p10kc/run.sh\"", vec![p("/h/p10kc/run.sh", false)]),
            // fish's universal variables: a list separated by `\x1e`.
            ("SETUVAR fish_user_paths:/h/fishtool/bin\\x1e/h/b", vec![p("/h/fishtool/bin", false), p("/h/b", false)]),
        ] {
            assert_eq!(paths(line), want, "{line}");
        }
        // Comments in their own files only: vim's `"`, lua's `--`.
        assert_eq!(paths_in("\" source ~/vim/x", &mut cx(Syntax::Vim)), vec![]);
        assert_eq!(paths_in("-- dofile('/h/x')", &mut cx(Syntax::Lua)), vec![]);
        assert_eq!(Syntax::of(Path::new("/h/.vimrc")), Syntax::Vim);
        assert_eq!(Syntax::of(Path::new("/h/.config/nvim/init.vim")), Syntax::Vim);
        assert_eq!(Syntax::of(Path::new("/h/.config/nvim/init.lua")), Syntax::Lua);
        assert_eq!(Syntax::of(Path::new("/h/.bashrc")), Syntax::Shell);
        let n = &named_paths("for f in ~/.bashrc.d/*.sh; do . $f; done", Path::new("/h"), &mut cx(Syntax::Shell))[0];
        assert!(n.open && n.pattern, "{n:?}");
        let n = &ssh_includes("Include config.d/* work", Path::new("/h/.ssh"));
        assert_eq!(
            n.iter().map(|n| n.path.display().to_string()).collect::<Vec<_>>(),
            ["/h/.ssh/config.d", "/h/.ssh/work"]
        );
        assert!(n[0].pattern && n[1].sourced);
    }

    /// A home with a clone in it, and what names it.
    /// rt7 A2: what the shell and the kernel make of a path after home, a doubled slash,
    /// braces, a pattern or a variable, is found; a pattern that names projects without
    /// running anything of them (`ls ~/*`), or names another clone, is not.
    #[test]
    fn a_clone_named_through_the_shells_expansions_after_home_is_found() {
        // A doubled slash stays below home (`Path::join` would start again at `/`), where the
        // line is read as the shell reads it; the text search finds it too (below).
        assert_eq!(paths("source ~//tools/env.sh"), vec![("/h/tools/env.sh".to_string(), true)]);
        assert_eq!(
            paths("cd $HOME//tools && ./run"),
            vec![("/h/run".to_string(), false), ("/h/tools/run".to_string(), false)]
        );
        let mut h = Home::new();
        std::fs::create_dir_all(h.at("tools")).unwrap();
        std::fs::create_dir_all(h.at("proj")).unwrap();
        for line in [
            "source ~//tools/env.sh",
            "source $HOME//tools/env.sh",
            "source ${HOME}/./tools/env.sh",
            "source ~/tool{s,x}/env.sh",
            "source ~/{tools,}/env.sh",
            "source ~/too?s/env.sh",
            "source ~/[t]ools/env.sh",
            "source $HOME$X/tools/env.sh",
            "source ~/tool${X}s/env.sh",
            "d=tools; source ~/$d/env.sh",
            "export PATH=~/too{l,x}s:$PATH",
            "export PATH=~//tools/bin:$PATH",
        ] {
            h.write(".bashrc", &format!("{line}\n"));
            assert!(h.why("tools").is_some_and(|w| w.contains(".bashrc names")), "{line}: {:?}", h.why("tools"));
        }
        for line in [
            "alias l='ls ~/*'",
            "source ~/tool{x,y}/env.sh",
            "for f in ~/.bashrc.d/*.sh; do . $f; done",
            "source ~/too?/env.sh",
            "export X=~/t*",
        ] {
            h.write(".bashrc", &format!("{line}\n"));
            assert_eq!(h.why("tools"), None, "{line}");
        }
        h.write(".bashrc", "");
        let home = h.at("");
        for text in ["plugin=~//tools/p.py".to_string(), format!("plugin={}//tools/p.py", home.display())] {
            h.write(".config/foo/x.conf", &format!("{text}\n"));
            assert!(h.why("tools").is_some_and(|w| w.contains("x.conf names")), "{text}: {:?}", h.why("tools"));
        }
        assert_eq!(h.why("proj"), None);
        h.write(".config/foo/x.conf", "");
        // rt7 A10: through a link at the top of home to a directory that holds the clone.
        h.write(".gitconfig", "");
        std::fs::create_dir_all(h.at("src/tools2")).unwrap();
        std::os::unix::fs::symlink(h.at("src"), h.at("code")).unwrap();
        std::os::unix::fs::symlink("src", h.at("code2")).unwrap();
        for line in
            ["source ~/code/tools2/env.sh", "source ~/code2/tools2/env.sh", "export PATH=~/code/tool?2/bin:$PATH"]
        {
            h.write(".bashrc", &format!("{line}\n"));
            assert!(
                h.why("src/tools2").is_some_and(|w| w.contains(".bashrc names")),
                "{line}: {:?}",
                h.why("src/tools2")
            );
        }
        h.write(".bashrc", "source ~/code/other/env.sh\n");
        assert_eq!(h.why("src/tools2"), None);
        // The agent's own `$PATH` through the link; a project's environment there stays its own.
        h.path_dirs = vec![h.at("code/tools2/.venv/bin")];
        assert_eq!(h.why("src/tools2"), None);
        h.path_dirs.push(h.at("code/tools2/bin"));
        assert!(h.why("src/tools2").is_some_and(|w| w.contains("directory of $PATH")), "{:?}", h.why("src/tools2"));
        h.path_dirs.clear();
        h.write(".bashrc", "");
        // git takes `~//tools` as home's `tools` too.
        h.write(".gitconfig", "[core]\n\thooksPath = ~//tools/hooks\n");
        assert!(h.why("tools").is_some_and(|w| w.contains("core.hooksPath")), "{:?}", h.why("tools"));
    }

    struct Home {
        dir: tempfile::TempDir,
        path_dirs: Vec<PathBuf>,
    }

    impl Home {
        fn new() -> Home {
            let dir = tempfile::tempdir().unwrap();
            let home = Home { dir, path_dirs: Vec::new() };
            for clone in [
                "p10k",
                "flutter/bin",
                "githooks",
                "work/app/node_modules/.bin",
                "dotfiles/ssh",
                "zplug",
                "plugins/a",
                "gitscripts",
                "emsdk",
            ] {
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
            self.no(&self.at(clone)).map(|no| no.why)
        }
        fn no(&self, root: &Path) -> Option<NoWorkspace> {
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
            why_not(root, &facts)
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

    /// rt5 A4, A15: a clone that a global git alias runs a program of, or that holds the
    /// global excludes or attributes file, is no workspace; an alias naming no path names none.
    #[test]
    fn a_clone_gits_global_aliases_or_excludes_name_is_found() {
        let h = Home::new();
        h.write(
            ".gitconfig",
            "[alias]\n\tst = !~/gitscripts/run.sh\n\tlg = log --oneline\n\tup = \"!f() { $HOME/work/app/up.sh; }; f\"\n\
             [core]\n\texcludesFile = ~/dotfiles/gitignore_global\n\tattributesFile = ~/p10k/attributes\n\
             [mergetool \"m\"]\n\tpath = ~/emsdk/merge\n",
        );
        let why = h.why("gitscripts").expect("an alias runs it");
        assert!(why.contains("git's alias.st in") && why.contains("gitscripts/run.sh"), "{why}");
        assert!(h.why("work/app").is_some_and(|w| w.contains("alias.up")));
        assert!(h.why("dotfiles").is_some_and(|w| w.contains("core.excludesFile")));
        assert!(h.why("p10k").is_some_and(|w| w.contains("core.attributesFile")));
        assert!(h.why("emsdk").is_some_and(|w| w.contains("mergetool.m.path")));
        assert_eq!(h.why("flutter"), None);
    }

    /// rt5 A5: 40 snippets in `~/.bashrc.d`, and a chain of files sourced five deep, are read
    /// whole; where a bound runs out (files sourced deeper than [`MAX_DEPTH`], more files than
    /// [`MAX_FILES`]) no clone in home is a workspace, and one outside home still is.
    #[test]
    fn the_bounds_on_what_is_read_fail_closed() {
        let h = Home::new();
        for i in 1..=40 {
            h.write(&format!(".bashrc.d/{i:02}.sh"), &format!("alias a{i}=true\n"));
        }
        h.write(".bashrc.d/40.sh", "source ~/p10k/run.sh\n");
        h.write(".bashrc", "for f in ~/.bashrc.d/*.sh; do . \"$f\"; done\n");
        assert!(h.why("p10k").is_some_and(|w| w.contains("40.sh names")));
        h.write(".zshrc", "source ~/.zsh/a.zsh\n");
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")] {
            h.write(&format!(".zsh/{from}.zsh"), &format!("source ~/.zsh/{to}.zsh\n"));
        }
        h.write(".zsh/e.zsh", "source ~/zplug/init.zsh\n");
        assert!(h.why("zplug").is_some_and(|w| w.contains("e.zsh names")));
        assert_eq!(h.why("flutter"), None, "all read, nothing names it");
        let outside = tempfile::tempdir().unwrap();
        let outside = std::fs::canonicalize(outside.path()).unwrap();
        // Deeper than the bound.
        for i in 0..=MAX_DEPTH {
            h.write(&format!(".deep/{i}.sh"), &format!("source ~/.deep/{}.sh\n", i + 1));
        }
        h.write(".profile", "source ~/.deep/0.sh\n");
        let no = h.no(&h.at("flutter")).expect("a bound ran out: fails closed");
        assert!(no.unchecked && no.why.contains("more than 8 deep") && no.why.contains("sandbox.writable"), "{no:?}");
        assert!(h.no(&outside).is_none(), "a clone outside home is not affected");
        // More files than the bound.
        std::fs::remove_file(h.at(".profile")).unwrap();
        assert_eq!(h.why("flutter"), None);
        for i in 0..MAX_FILES {
            h.write(&format!(".bashrc.d/many{i}.sh"), "true\n");
        }
        let no = h.no(&h.at("flutter")).expect("a bound ran out: fails closed");
        assert!(no.unchecked && no.why.contains("more than 512 files"), "{no:?}");
    }

    /// rt5 A6: a relative file sourced after `pushd`, a wrapper script on `$PATH`, fish's
    /// `fish_user_paths`, a line that starts with a quote, bash-completion's files.
    #[test]
    fn more_spellings_of_a_clone_the_persons_shell_runs_are_found() {
        let mut h = Home::new();
        h.write(
            ".bashrc",
            "pushd ~/emsdk >/dev/null; source ./emsdk_env.sh; popd >/dev/null\nalias w='cd ~/work/app && ./run'\n",
        );
        assert!(h.why("emsdk").is_some_and(|w| w.contains("emsdk/emsdk_env.sh in it")), "{:?}", h.why("emsdk"));
        assert_eq!(h.why("work/app"), None, "an alias runs only when typed");
        h.write(".bash_profile", "cd ${HOME}/plugins\n. a/init.sh\n");
        assert!(h.why("plugins/a").is_some_and(|w| w.contains(".bash_profile names")));
        // A wrapper on PATH, and a link to a wrapper.
        h.write(".local/bin/flutter", "#!/bin/sh\nexec \"$HOME/flutter/bin/flutter\" \"$@\"\n");
        h.write("tools/p10k-wrap", "#!/bin/sh\nexec ~/p10k/bin/x\n");
        std::os::unix::fs::symlink(h.at("tools/p10k-wrap"), h.at(".local/bin/p10k")).unwrap();
        h.path_dirs = vec![h.at(".local/bin")];
        let why = h.why("flutter").expect("a wrapper script on PATH");
        assert!(
            why.contains(".local/bin/flutter on $PATH is a script that names") && why.contains("(line 2)"),
            "{why}"
        );
        assert!(h.why("p10k").is_some_and(|w| w.contains("is a script")));
        h.path_dirs.clear();
        // fish's universal variables; a quoted program; bash-completion's user files.
        let flutter_bin = h.at("flutter/bin");
        h.write(
            ".config/fish/fish_variables",
            &format!("# fish universal variables\nSETUVAR fish_user_paths:/usr/x\\x1e{}\n", flutter_bin.display()),
        );
        assert!(h.why("flutter").is_some_and(|w| w.contains("fish_variables names")));
        h.write(".xprofile", "\"$HOME/zplug/run.sh\" --start\n");
        assert!(h.why("zplug").is_some_and(|w| w.contains(".xprofile names")));
        h.write(".bash_completion", "source ~/gitscripts/completion.bash\n");
        assert!(h.why("gitscripts").is_some_and(|w| w.contains(".bash_completion names")));
        h.write(".bash_completion.d/tool", "source ~/dotfiles/tool-completion.bash\n");
        assert!(h.why("dotfiles").is_some_and(|w| w.contains(".bash_completion.d/tool names")));
    }

    /// rt5 A12: `ZDOTDIR` set in `~/.zshenv` is followed, in its usual spellings; one agentsh
    /// cannot tell fails closed.
    #[test]
    fn zdotdir_set_in_zshenv_is_followed() {
        let h = Home::new();
        h.write(".zshenv", "export ZDOTDIR=\"$HOME/.zdot\"\n");
        h.write(".zdot/.zshrc", "source ~/zplug/zplug.zsh\n");
        assert!(h.why("zplug").is_some_and(|w| w.contains(".zdot/.zshrc names")));
        let home = Path::new("/h");
        let xdg = Path::new("/x");
        for (line, xdg, want) in [
            ("export ZDOTDIR=\"${XDG_CONFIG_HOME:-$HOME/.config}/zsh\"", None, Some(Some("/h/.config/zsh"))),
            ("export ZDOTDIR=\"${XDG_CONFIG_HOME:-$HOME/.config}/zsh\"", Some(xdg), Some(Some("/x/zsh"))),
            ("ZDOTDIR=${XDG_CONFIG_HOME:-${HOME}/.config}/zsh", None, Some(Some("/h/.config/zsh"))),
            ("ZDOTDIR=~/.zsh", None, Some(Some("/h/.zsh"))),
            ("export ZDOTDIR=$XDG_CONFIG_HOME/zsh", None, Some(Some("/h/.config/zsh"))),
            ("export ZDOTDIR=$DOTFILES/zsh", None, Some(None)),
            ("# ZDOTDIR=/elsewhere", None, None),
            ("MY_ZDOTDIR=/elsewhere", None, None),
        ] {
            let got = zdotdir(line, home, xdg);
            assert_eq!(got, want.map(|w| w.map(PathBuf::from)), "{line}");
        }
        h.write(".zshenv", "export ZDOTDIR=$DOTFILES/zsh\n");
        let no = h.no(&h.at("flutter")).expect("a ZDOTDIR it cannot tell fails closed");
        assert!(no.unchecked && no.why.contains("ZDOTDIR"), "{no:?}");
    }

    /// rt6 X6: a home path after a default's `:-` (`${EMSDK:-$HOME/emsdk}`), and `~name/` as
    /// the shell takes it (that user's home in `/etc/passwd`); a `~name/` whose home agentsh
    /// cannot tell fails closed.
    #[test]
    fn a_default_and_a_users_home_name_a_clone() {
        let p = |s: &str, sourced: bool| (s.to_string(), sourced);
        for (line, want) in [
            ("source \"${EMSDK:-$HOME/emsdk}/emsdk_env.sh\"", vec![p("/h/emsdk", true), p("/emsdk_env.sh", true)]),
            ("export ZPLUG_HOME=${ZPLUG_HOME:-~/zplug}", vec![p("/h/zplug", false)]),
            ("X=${X:+${HOME}/plus}; Y=${Y:=~/assign}", vec![p("/h/plus", false), p("/h/assign", false)]),
            ("source ~root/../h/toolz/env.sh", vec![p("/h/toolz/env.sh", true)]),
        ] {
            assert_eq!(paths(line), want, "{line}");
        }
        let mut c = cx(Syntax::Shell);
        assert_eq!(paths_in("source ~no-such-user-agentsh/x.sh", &mut c), vec![]);
        assert_eq!(c.unknown_user.as_deref(), Some("no-such-user-agentsh"));
        let h = Home::new();
        h.write(".bashrc", "source \"${EMSDK:-$HOME/emsdk}/emsdk_env.sh\"\n");
        assert!(h.why("emsdk").is_some_and(|w| w.contains(".bashrc names")), "{:?}", h.why("emsdk"));
        let up = h.at("").components().count() - 1;
        h.write(".profile", &format!("source ~root/{}{}/zplug/env.sh\n", "../".repeat(up), h.at("").display()));
        assert!(h.why("zplug").is_some_and(|w| w.contains(".profile names")), "{:?}", h.why("zplug"));
        h.write(".zshrc", "source ~no-such-user-agentsh/x.zsh\n");
        let no = h.no(&h.at("flutter")).expect("a ~name/ agentsh cannot tell fails closed");
        assert!(no.unchecked && no.why.contains("~no-such-user-agentsh/"), "{no:?}");
    }

    /// rt6 X9: a directory only the person's start-up files put on `$PATH` (below the
    /// interactive guard, so never on the agent's): a link there into a clone, or a small
    /// script there that runs it, makes the clone no workspace. rt6 X6 too: `${HOME:?}` and a
    /// backslash inside the path (`~/b\\tool`), which the shell takes out.
    #[test]
    fn what_the_persons_own_path_and_the_shells_spellings_name_is_found() {
        let h = Home::new();
        std::fs::create_dir_all(h.at("mybin")).unwrap();
        std::os::unix::fs::symlink(h.at("flutter/bin/flutter"), h.at("mybin/flutter")).unwrap();
        h.write(".bashrc", "[ -z \"$PS1\" ] && return\nexport PATH=\"$HOME/mybin:$PATH\"\n");
        let why = h.why("flutter").expect("a link on the person's own PATH");
        assert!(why.contains("mybin/flutter on $PATH is a link to"), "{why}");
        // Named, but not on PATH: not read as a programs' place.
        h.write(".bashrc", "alias m='ls $HOME/mybin'\n");
        assert_eq!(h.why("flutter"), None);
        for line in ["source ${HOME:?}/zplug/init.zsh", "source ~/zp\\lug/init.zsh", "source ${HOME%/}/zplug/x"] {
            h.write(".zshrc", &format!("{line}\n"));
            assert!(h.why("zplug").is_some(), "{line}");
        }
        h.write(".zshrc", "source ${HOMEBREW_PREFIX}/zplug/x\n");
        assert_eq!(h.why("zplug"), None);
    }

    /// rt6 X1: a clone named by a tool's own settings, found by where they are, not by tool:
    /// gdb's, cargo's, npm's, IPython's, Emacs's, psql's, a systemd user unit (`%h/`), fish's
    /// autoloaded functions, in any spelling of home.
    #[test]
    fn a_clone_other_tools_settings_name_is_found() {
        let h = Home::new();
        let home = normalize(&h.at(""));
        let home = home.display();
        for (file, text, clone) in [
            (".gdbinit", format!("source {home}/p10k/gdbinit.py\n"), "p10k"),
            (".cargo/config.toml", format!("[build]\nrustc-wrapper = \"{home}/gitscripts/w.sh\"\n"), "gitscripts"),
            (".npmrc", format!("node-options=\"--require {home}/emsdk/h.js\"\n"), "emsdk"),
            (".ipython/profile_default/startup/00.py", "exec(open('$HOME/zplug/x.py').read())\n".into(), "zplug"),
            (".emacs", "(load \"~/dotfiles/init.el\")\n".into(), "dotfiles"),
            (".psqlrc", "\\i ~/plugins/a/x.sql\n".into(), "plugins/a"),
            (".config/systemd/user/svc.service", "[Service]\nExecStart=%h/githooks/run.sh\n".into(), "githooks"),
            (
                ".config/fish/functions/ft.fish",
                "function ft\n  source ${HOME}/flutter/ft.fish\nend\n".into(),
                "flutter",
            ),
            (".config/gdb/gdbinit", "source ~/work/app/gdb.py\n".into(), "work/app"),
        ] {
            assert_eq!(h.why(clone), None, "{clone}: nothing names it yet");
            h.write(file, &text);
            let why = h.why(clone).unwrap_or_else(|| panic!("{file} names {clone}"));
            assert!(why.contains(&format!("{file} names")) && why.contains("sandbox.writable"), "{why}");
            std::fs::remove_file(h.at(file)).unwrap();
        }
        // A whole component: `~/emsdk2` is not `~/emsdk`; a comment names nothing.
        h.write(".gdbinit", "source ~/emsdk2/x.py\n# source ~/emsdk/x.py\n");
        assert_eq!(h.why("emsdk"), None);
        // The bounds fail closed (rt5 A5): a settings file over 1 MiB, a directory of settings
        // with more files than are read.
        h.write(".toolrc", &"x".repeat(MAX_BYTES as usize + 1));
        let no = h.no(&h.at("emsdk")).expect("a settings file too long to read fails closed");
        assert!(no.unchecked && no.why.contains(".toolrc is longer than 1 MiB"), "{no:?}");
        std::fs::remove_file(h.at(".toolrc")).unwrap();
        for i in 0..=MAX_ENTRIES {
            h.write(&format!(".config/tool/{i}.conf"), "x\n");
        }
        let no = h.no(&h.at("emsdk")).expect("a directory of settings too large to read fails closed");
        assert!(no.unchecked && no.why.contains("holds more than 1024 files"), "{no:?}");
    }

    /// rt6 X1's friction: the records of what the person did name every project they work on
    /// (histories, recent files, editors' and agents' state, caches, logs, a tmuxinator
    /// project's `root:`, git's `safe.directory`): a project named only there stays a
    /// workspace, and the same project named by `~/.gdbinit` does not.
    #[test]
    fn records_that_name_every_project_leave_it_a_workspace() {
        let h = Home::new();
        let app = h.at("work/app");
        let a = app.display();
        for (file, text) in [
            (".bash_history", "cd ~/work/app\nvim ~/work/app/src/main.rs\nsource ~/work/app/env.sh\n".to_string()),
            (".zsh_history", ": 1700000000:0;make -C ~/work/app\n".into()),
            (".python_history", "exec(open('~/work/app/x.py').read())\n".into()),
            (".node_repl_history", format!("require('{a}/x.js')\n")),
            (".psql_history", "\\i ~/work/app/x.sql\n".into()),
            (".viminfo", "> ~/work/app/src/main.rs\n".into()),
            (".lesshst", format!(".less-history-file:\n\"{a}/README\n")),
            (".claude.json", format!("{{\"projects\": {{\"{a}\": {{\"allowedTools\": []}}}}}}\n")),
            (".claude/shell-snapshots/snapshot-bash-1.sh", format!("export OLDPWD={a}\n")),
            (".codex/config.toml", format!("[projects.\"{a}\"]\ntrust_level = \"trusted\"\n")),
            (".config/Code/User/globalStorage/storage.json", format!("{{\"folder\": \"file://{a}\"}}\n")),
            (".config/Code/Backups/workspaces.json", format!("{{\"folderUri\": \"file://{a}\"}}\n")),
            (".local/share/recently-used.xbel", format!("<bookmark href=\"file://{a}/x\"/>\n")),
            (".config/gtk-3.0/bookmarks", format!("file://{a} app\n")),
            (".config/emacs/recentf", "(setq recentf-list '(\"~/work/app/x.el\"))\n".into()),
            (".emacs.d/projects", "((\"~/work/app/\"))\n".into()),
            (".config/lazygit/state.yml", format!("recentrepos:\n- {a}\n")),
            (".config/katerc", "[Recent Files]\nFile1[$e]=$HOME/work/app/x.rs\n".into()),
            (".config/tmuxinator/app.yml", "name: app\nroot: ~/work/app\n".into()),
            (".cache/tool/x", a.to_string()),
            (".npm/_logs/2026-debug-0.log", format!("verbose cwd {a}\n")),
            (".cargo/.crates.toml", format!("\"app 0.1.0 (path+file://{a})\" = [\"app\"]\n")),
            (".gitconfig", format!("[safe]\n\tdirectory = {a}\n")),
            (".config/agentsh/config.json", format!("{{\"sandbox\": {{\"writable\": [\"{a}\"]}}}}\n")),
            (".local/state/agentsh/boxes", a.to_string()),
            (".bash_aliases", "alias app='cd ~/work/app && make'\n".into()),
            (".histfile", ": 1700000000:0;source ~/work/app/env.sh\n".into()),
            (".config/kdevelop.rc", format!("[Project Manager]\nRecent Projects={a}/app.kdev4\n")),
            (".emacs.d/ido.last", "((\"~/work/app/\"))\n".into()),
            (".screenrc", "chdir ~/work/app\n".into()),
            (".config/alacritty.toml", "[terminal.shell]\nworking_directory = \"~/work/app\"\n".into()),
            (".config/wezterm/wezterm.lua", "config.default_cwd = \"~/work/app\"\n".into()),
        ] {
            h.write(file, &text);
        }
        for i in 0..=MAX_ENTRIES {
            h.write(&format!("download-{i}.txt"), "~/work/app/x.sh\n");
        }
        assert!(h.no(&app).is_none(), "a project named only in records is a workspace");
        h.write(".config/systemd/user/app.service", "[Service]\nWorkingDirectory=%h/work/app\n");
        assert!(h.why("work/app").is_some_and(|w| w.contains("app.service names")), "a service runs there");
        std::fs::remove_file(h.at(".config/systemd/user/app.service")).unwrap();
        h.write(".gdbinit", "source ~/work/app/gdb.py\n");
        assert!(h.why("work/app").is_some_and(|w| w.contains(".gdbinit names")));
    }

    /// rt8 A3: a start-up file names a clone outside home through a link outside home (to its
    /// directory, or to a file in it, or through a link to a directory above it): the kernel
    /// follows each, so it is no workspace. A clone that is only next to what is named is one.
    #[test]
    fn a_clone_named_through_links_anywhere_is_found() {
        let h = Home::new();
        let outside = tempfile::tempdir().unwrap();
        let at = |rel: &str| std::fs::canonicalize(outside.path()).unwrap().join(rel);
        for dir in ["srv/tools/bin", "srv/other", "opt"] {
            std::fs::create_dir_all(at(dir)).unwrap();
        }
        std::fs::write(
            at("srv/tools/env.sh"),
            "true
",
        )
        .unwrap();
        std::fs::write(
            at("srv/tools/bin/tool"),
            "true
",
        )
        .unwrap();
        std::os::unix::fs::symlink(at("srv/tools"), at("opt/tools")).unwrap();
        std::os::unix::fs::symlink(at("srv/tools/bin/tool"), at("opt/tool")).unwrap();
        std::os::unix::fs::symlink(at("srv"), at("data")).unwrap();
        let (tools, other) = (at("srv/tools"), at("srv/other"));
        assert!(h.no(&tools).is_none(), "nothing names it yet");
        std::fs::create_dir_all(at("x")).unwrap();
        std::os::unix::fs::symlink(at("srv/other"), at("x/lnk")).unwrap();
        let named =
            ["opt/tools/env.sh", "opt/tool", "data/tools/env.sh", "opt/tools/missing/x.sh", "x/lnk/../tools/env.sh"];
        for named in named {
            h.write(".bashrc", &format!("source {}\n", at(named).display()));
            let no = h.no(&tools).unwrap_or_else(|| panic!("{named}: a workspace"));
            assert!(no.why.contains(".bashrc names") && !no.unchecked, "{named}: {no:?}");
            assert!(h.no(&other).is_none(), "{named}: names the other clone too");
        }
        // A pattern's directory through a link: the clones below it.
        h.write(".bashrc", &format!("for f in {}/*/env.sh; do . $f; done\n", at("data").display()));
        assert!(h.no(&tools).is_some() && h.no(&other).is_some(), "a pattern through a link");
    }
}
