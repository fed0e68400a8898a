//! What the person's own git runs or reads as settings from the workspace outside its git
//! directory, found when a box is made (issue 25, red team rt-files F9 and F10), so the builder
//! ([`super::view`]) binds it read-only and the box's record ([`super::holder`]) makes a new box
//! when it changes. It reads git's files; it neither mounts nor judges.
//!
//! - `.git` files (F9): the workspace's own when it is a linked worktree or a submodule, each
//!   submodule checkout's (from `.gitmodules` and the git directories' `modules/*`), and each
//!   linked worktree's inside the workspace (`worktrees/*/gitdir`). Rewritten, one names a git
//!   directory the box wrote, whose `core.fsmonitor` the person's next `git status` runs. A
//!   submodule whose `.git` is a directory (never absorbed) has its code paths found instead.
//! - Paths that git settings name (F10), in the system's, the person's and the repository's
//!   config and whatever they include: `core.hooksPath` (a directory: husky's `.husky/_`),
//!   `include.path` and `includeIf.*.path`, and the files that settings naming programs point at
//!   (`core.fsmonitor`, `core.sshCommand`, `core.editor`, `diff.*.textconv`, `filter.*.clean`,
//!   `merge.*.driver`, ...). Every `includeIf` is followed, whatever its condition: binding one
//!   file too many costs nothing.
//!
//! A `core.hooksPath` in the workspace that does not exist is made empty (git runs no hook from
//! an empty directory, as from none; an empty directory does not show in `git status`), so the
//! box cannot make it. A file a setting names that does not exist cannot be kept from being
//! made (Landlock cannot refuse one name in a writable directory): the next box binds it.

use super::{join, normalize, within};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What [`find`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// In the workspace, to bind read-only: files, and the hook directories.
    pub bind: Vec<PathBuf>,
    /// Every config file read or looked for, and the hook directories read for links (the box
    /// is made anew when one changes).
    pub read: Vec<PathBuf>,
}

impl Found {
    /// What to bind, as the spec's read-only roots.
    pub fn roots(&self) -> impl Iterator<Item = super::Root> + '_ {
        self.bind.iter().map(|p| super::Root::new(p.clone(), super::Origin::CodePath))
    }
}

/// Where git looks for the person's and the system's settings, from the environment.
#[derive(Debug, Default, Clone)]
pub(crate) struct Globals {
    pub home: Option<PathBuf>,
    pub files: Vec<PathBuf>,
}

impl Globals {
    /// Where git looks, by default and as the environment moves it (`GIT_CONFIG_SYSTEM`,
    /// `GIT_CONFIG_GLOBAL`, `XDG_CONFIG_HOME`): both. agentsh's environment is the agent's, and
    /// the person's git later runs with theirs: a variable can add a file, never take one away
    /// (`GIT_CONFIG_NOSYSTEM` and `GIT_CONFIG_GLOBAL=/dev/null` leave the defaults read).
    pub fn from_env(home: &Path, var: impl Fn(&str) -> Option<OsString>) -> Globals {
        let abs = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute()).map(|p| normalize(&p));
        let mut files = vec![PathBuf::from("/etc/gitconfig")];
        files.extend(abs("GIT_CONFIG_SYSTEM"));
        files.extend(abs("XDG_CONFIG_HOME").map(|x| join(&x, "git/config")));
        files.push(join(home, ".config/git/config"));
        files.push(join(home, ".gitconfig"));
        files.extend(abs("GIT_CONFIG_GLOBAL"));
        let mut unique = Vec::new();
        for f in files {
            if !unique.contains(&f) {
                unique.push(f);
            }
        }
        Globals { home: Some(home.to_path_buf()), files: unique }
    }
}

/// A repository whose worktree is in the workspace: its git directory, the directory it shares
/// objects and config with (`commondir`), and its worktree.
struct Repo {
    git_dir: PathBuf,
    common: PathBuf,
    worktree: PathBuf,
}

/// The `.git` files and the paths git settings name inside the workspace `ws`, whose top-level
/// `.git` (a directory or a file) names the repository. `make_hooks`: make a missing
/// `core.hooksPath` directory in the workspace (the box's builder does; `agentsh policy` only
/// shows). A few small reads; nothing where `ws` holds no `.git`.
pub(crate) fn find(ws: &Path, globals: &Globals, make_hooks: bool) -> Found {
    let mut f = Finder::new(ws, globals);
    let dot_git = join(ws, ".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { return f.found };
    let git_dir = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        f.bind_file(&dot_git);
        match gitdir_file(&dot_git) {
            Some(g) => g,
            None => return f.found,
        }
    } else {
        return f.found;
    };
    f.repo(git_dir, ws.to_path_buf(), 0);
    // Settings, repository by repository: the global files apply to each.
    let repos = std::mem::take(&mut f.repos);
    let mut global = Vec::new();
    for file in &globals.files {
        f.read_config(file, 0, &mut global);
    }
    for repo in &repos {
        f.linked_code_paths(repo, make_hooks);
        f.hook_links(&join(&repo.common, "hooks"));
        let mut entries = global.clone();
        f.read_config(&join(&repo.common, "config"), 0, &mut entries);
        f.read_config(&join(&repo.git_dir, "config.worktree"), 0, &mut entries);
        f.settings(repo, &entries, make_hooks);
    }
    f.found
}

/// What the person's and the system's git settings name as code for every repository, outside
/// any one (rt4 R13): a `core.hooksPath` that is a path of its own (the hooks of every
/// repository), `init.templateDir` (its hooks are copied into every repository made or cloned),
/// the files the settings include, the files that settings running a program and the person's
/// aliases name (rt5 A4), and the global excludes and attributes files (rt5 A15). Each
/// with the setting that names it and the file it is in. Relative paths are each repository's
/// own ([`find`] binds them there) and are left out. A few small reads.
pub(crate) fn global_code(globals: &Globals) -> Vec<(PathBuf, String)> {
    let mut f = Finder::new(Path::new(""), globals);
    let mut out = Vec::new();
    let shown = |p: &Path| crate::text::path(p);
    for file in &globals.files {
        let (mut entries, before) = (Vec::new(), f.found.read.len());
        f.read_config(file, 0, &mut entries);
        // The files it includes: read after it, each once.
        for inc in f.found.read.iter().skip(before + 1) {
            out.push((inc.clone(), format!("include.path in {}", shown(file))));
        }
        for e in &entries {
            let Some(value) = e.value.as_deref() else { continue };
            let named = |setting: &str, out: &mut Vec<(PathBuf, String)>, word: &str| {
                if (word.starts_with('/') || word.starts_with('~'))
                    && let Some(p) = f.expand(word, Path::new("/"))
                {
                    out.push((normalize(&p), format!("{setting} in {}", shown(file))));
                }
            };
            let plain = e.sub.is_none();
            if e.section == "core" && plain && e.name == "hookspath" {
                named("core.hooksPath", &mut out, value);
            } else if e.section == "init" && plain && e.name == "templatedir" {
                named("init.templateDir", &mut out, value);
            } else if e.section == "core" && plain && matches!(e.name.as_str(), "excludesfile" | "attributesfile") {
                // rt5 A15: read in every repository: what it hides from `git status`, the
                // filters and diff drivers it applies.
                let setting = if e.name == "excludesfile" { "core.excludesFile" } else { "core.attributesFile" };
                named(setting, &mut out, value);
            } else if runs_program(e) || e.section == "alias" {
                // rt5 A4: an alias is the person's command in every repository: `!~/x/run.sh`
                // runs that file, `-c core.pager=~/x/p log` sets a program.
                let setting = match &e.sub {
                    Some(sub) => format!("{}.{sub}.{}", e.section, e.name),
                    None => format!("{}.{}", e.section, e.name),
                };
                // Run through the shell: `$HOME/x` is `~/x`.
                let value = value.replace("${HOME}/", "~/").replace("$HOME/", "~/");
                for word in words(&value) {
                    named(&setting, &mut out, word);
                }
            }
        }
    }
    out
}

/// The text of a small file git keeps a path in (`.git`, `commondir`, `gitdir`), read as agentsh
/// reads every file a box can write: a regular file only, never waited on (rt7 A9: a FIFO a
/// box made there hung every later command), at most 4 KiB.
pub(crate) fn small_text(path: &Path) -> Option<String> {
    let bytes = crate::policy::files::read_capped(path, 4096).ok()?;
    String::from_utf8(bytes).ok()
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative to the file's directory),
/// normalized. `None` where it names none.
pub(crate) fn gitdir_file(dot_git: &Path) -> Option<PathBuf> {
    let text = small_text(dot_git)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(normalize(&dot_git.parent()?.join(named)))
}

struct Finder<'a> {
    ws: PathBuf,
    globals: &'a Globals,
    found: Found,
    repos: Vec<Repo>,
    /// The git directories [`Finder::repo`] has begun (a linked worktree's `commondir` leads
    /// back to the repository it is one of).
    begun: Vec<PathBuf>,
    /// Only finding the repositories ([`repositories`]): nothing is bound or made.
    discover: bool,
    /// What the repositories were found from besides the config files read (`found.read`):
    /// directories read and files looked for (`true`: a submodule's `.git`, whose identity and
    /// kind alone matter).
    looked: Vec<(PathBuf, bool)>,
    /// Linked worktrees outside the workspace: their git directory (in it) and worktree.
    outside: Vec<(PathBuf, PathBuf)>,
}

/// The repositories with a worktree whose index is in the git directory `git_dir` of the
/// workspace `ws` or below it, other than the workspace's own, as [`find`] finds them: the
/// submodules checked out in the workspace (absorbed, `modules/*`, or with their own `.git`
/// directory) and the linked worktrees (`worktrees/*`), in the workspace or not. Each as its
/// git directory and worktree; and what they were found from, for the caller to know when to
/// look again ([`Repositories::looked`]). Nothing is bound or made.
pub(crate) fn repositories(ws: &Path, git_dir: &Path) -> Repositories {
    let globals = Globals::default();
    let mut f = Finder::new(ws, &globals);
    f.discover = true;
    f.repo(git_dir.to_path_buf(), ws.to_path_buf(), 0);
    let mut list: Vec<(PathBuf, PathBuf)> = f
        .repos
        .iter()
        .filter(|r| r.git_dir != git_dir && within(&r.worktree, ws) && r.worktree != ws)
        .map(|r| (r.git_dir.clone(), r.worktree.clone()))
        .collect();
    for o in f.outside {
        if !list.contains(&o) {
            list.push(o);
        }
    }
    let mut looked: Vec<(PathBuf, bool)> = f.found.read.into_iter().map(|p| (p, false)).collect();
    for l in f.looked {
        if !looked.contains(&l) {
            looked.push(l);
        }
    }
    Repositories { list, looked }
}

/// What [`repositories`] found.
#[derive(Debug, Default)]
pub(crate) struct Repositories {
    /// Each repository's git directory and worktree.
    pub list: Vec<(PathBuf, PathBuf)>,
    /// The directories read and files read or looked for that found them: while none of these
    /// changed (its identity and change time; `true`: its identity and kind), neither did the
    /// list.
    pub looked: Vec<(PathBuf, bool)>,
}

/// git's limit on nested includes, and ours on nested submodules.
const MAX_DEPTH: usize = 10;
/// How many entries of a hook directory are looked at for links (git knows about 30 hooks).
const MAX_HOOKS: usize = 256;
/// A config file larger than this is not read (git's are a few kilobytes).
const MAX_CONFIG: u64 = 1 << 20;

impl<'a> Finder<'a> {
    fn new(ws: &Path, globals: &'a Globals) -> Finder<'a> {
        Finder {
            ws: ws.to_path_buf(),
            globals,
            found: Found::default(),
            repos: Vec::new(),
            begun: Vec::new(),
            discover: false,
            looked: Vec::new(),
            outside: Vec::new(),
        }
    }

    /// `path` when it is a file in the workspace (followed, where a link in it points).
    /// Nothing without a workspace ([`global_code`]), nor where only finding repositories.
    fn bind_file(&mut self, path: &Path) {
        if self.ws.as_os_str().is_empty() || self.discover {
            return;
        }
        if let Some(p) = self.inside(path).filter(|p| p.is_file()) {
            self.push(p);
        }
    }

    /// `path`, resolved, when it lands in the workspace, but never the workspace itself.
    fn inside(&self, path: &Path) -> Option<PathBuf> {
        let p = normalize(path);
        // Where only finding repositories, paths are kept as the workspace's path spells them.
        let p = if self.discover { p } else { std::fs::canonicalize(&p).unwrap_or(p) };
        (within(&p, &self.ws) && p != self.ws).then_some(p)
    }

    fn push(&mut self, p: PathBuf) {
        if !self.found.bind.contains(&p) {
            self.found.bind.push(p);
        }
    }

    /// What the repository's code paths that are links name in the workspace (rt6a K3:
    /// `.git/hooks -> ../githooks`): code, bound read-only (the link itself is bound by the
    /// builder, [`super::view`]).
    /// A hook, info or modules directory it names that does not exist is made empty
    /// (`make_hooks`), as a missing `core.hooksPath` is, so the box cannot make it. A `modules`
    /// so named is read-only whole in the box (rt7 A1: the box cannot work in its submodules).
    fn linked_code_paths(&mut self, repo: &Repo, make_hooks: bool) {
        for dir in [&repo.git_dir, &repo.common] {
            for name in ["config", "hooks", "info", "commondir", "config.worktree", "gitdir", "modules"] {
                let p = join(dir, name);
                if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                    continue;
                }
                let Ok(named) = std::fs::read_link(&p) else { continue };
                let target = super::view::resolve(&normalize(&dir.join(named)));
                if make_hooks && matches!(name, "hooks" | "info" | "modules") && within(&target, &self.ws) {
                    let _ = super::beneath::make_dirs(&self.ws, &target, 0o755);
                }
                if let Some(target) = self.inside(&target).filter(|t| t.exists()) {
                    self.push(target);
                }
            }
        }
    }

    /// The hooks in `dir` that are links (`ln -s ../../scripts/pre-commit .git/hooks/`): what
    /// each names in the workspace is code git runs, bound read-only as the hooks are (rt5 A9).
    /// The directory is watched: a link the person makes there later makes a new box.
    fn hook_links(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        if !self.found.read.iter().any(|r| r == dir) {
            self.found.read.push(dir.to_path_buf());
        }
        for e in entries.flatten().take(MAX_HOOKS) {
            if e.file_type().is_ok_and(|t| t.is_symlink()) {
                self.bind_file(&e.path());
            }
        }
    }

    /// The repository at `git_dir` with its worktree at `worktree`, and those of its submodules
    /// and linked worktrees: their `.git` files, where they are in the workspace.
    fn repo(&mut self, git_dir: PathBuf, worktree: PathBuf, depth: usize) {
        if depth > MAX_DEPTH || self.begun.contains(&git_dir) {
            return;
        }
        self.begun.push(git_dir.clone());
        let commondir = join(&git_dir, "commondir");
        self.looked.push((commondir.clone(), false));
        let common =
            small_text(&commondir).map(|c| normalize(&git_dir.join(c.trim()))).unwrap_or_else(|| git_dir.clone());
        // Submodules named by `.gitmodules` whose git directory is elsewhere (or not absorbed).
        let mut gitmodules = Vec::new();
        self.read_config(&join(&worktree, ".gitmodules"), MAX_DEPTH, &mut gitmodules);
        for e in gitmodules.iter().filter(|e| e.section == "submodule" && e.name == "path") {
            let Some(v) = &e.value else { continue };
            let checkout = normalize(&worktree.join(v));
            let dot_git = join(&checkout, ".git");
            self.bind_file(&dot_git);
            if self.discover {
                self.looked.push((dot_git.clone(), true));
            } else {
                self.uninitialised(&checkout, &dot_git);
            }
            // A submodule whose git directory is its own `.git` (cloned in place, never absorbed):
            // its code paths, as the workspace's own (the directory itself is made a mount on
            // the way to them, so it cannot be moved aside either).
            if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_dir())
                && let Some(nested) = self.inside(&dot_git)
            {
                if !self.discover {
                    let mut paths = Vec::new();
                    super::view::code_paths(&nested, &mut paths, 0);
                    for p in paths {
                        self.push(p);
                    }
                }
                self.repo(nested, checkout, depth + 1);
            }
        }
        let modules = join(&common, "modules");
        let mut module_dirs = Vec::new();
        let mut read = Vec::new();
        git_dirs_read(&modules, &mut module_dirs, &mut read, 0);
        self.looked.extend(read.into_iter().map(|d| (d, false)));
        for module in module_dirs {
            let mut config = Vec::new();
            self.read_config(&join(&module, "config"), MAX_DEPTH, &mut config);
            let wt = config.iter().rev().find(|e| e.section == "core" && e.sub.is_none() && e.name == "worktree");
            if let Some(wt) = wt.and_then(|e| e.value.as_deref()) {
                let wt = normalize(&module.join(wt));
                self.bind_file(&join(&wt, ".git"));
                self.repo(module, wt, depth + 1);
            }
        }
        let worktrees = join(&common, "worktrees");
        self.looked.push((worktrees.clone(), false));
        if let Ok(entries) = std::fs::read_dir(&worktrees) {
            for e in entries.flatten() {
                let gitdir = e.path().join("gitdir");
                self.looked.push((gitdir.clone(), false));
                let Some(text) = small_text(&gitdir) else { continue };
                let dot_git = normalize(Path::new(text.trim()));
                let Some(wt) = dot_git.parent().filter(|_| dot_git.is_absolute()) else { continue };
                if within(&dot_git, &self.ws) {
                    self.bind_file(&dot_git);
                    self.repo(e.path(), wt.to_path_buf(), depth + 1);
                } else if self.outside.len() < 64 {
                    // Its files are out of the box's reach; its index and its branch are not.
                    self.outside.push((e.path(), wt.to_path_buf()));
                }
            }
        }
        self.repos.push(Repo { git_dir, common, worktree });
    }

    /// The checkout of a submodule the person has not initialised yet (an empty directory, no
    /// `.git`), bound read-only: a `.git` the box made there would be adopted by the person's
    /// `git submodule update --init`, and their `git status` in the top-level runs git there
    /// (`core.fsmonitor`), as with a git directory planted in `modules/` (rt7 A1). The box
    /// cannot initialise it either (`.git/config` and `modules/` are read-only).
    fn uninitialised(&mut self, checkout: &Path, dot_git: &Path) {
        if std::fs::symlink_metadata(dot_git).is_ok() || std::fs::symlink_metadata(checkout).is_ok_and(|m| !m.is_dir())
        {
            return;
        }
        let Ok(mut entries) = std::fs::read_dir(checkout) else { return };
        if entries.next().is_none()
            && let Some(p) = self.inside(checkout)
        {
            self.push(p);
        }
    }

    /// Reads the config file `path` into `out`, following its includes (every `includeIf`),
    /// each of which is bound where it is in the workspace.
    fn read_config(&mut self, path: &Path, depth: usize, out: &mut Vec<Entry>) {
        if depth <= MAX_DEPTH && !self.found.read.iter().any(|r| r == path) {
            self.found.read.push(path.to_path_buf());
        }
        // A box can write what is read here (rt7 A9: a FIFO at `.gitmodules` hung agentsh).
        let Ok(file) = crate::policy::files::open(path, crate::policy::files::Links::Follow) else { return };
        let Ok(text) = file.read_prefix(MAX_CONFIG) else { return };
        for e in parse(&text) {
            let include = e.name == "path"
                && (e.section == "include" && e.sub.is_none() || e.section == "includeif" && e.sub.is_some());
            if let (true, Some(v), true) = (include, &e.value, depth < MAX_DEPTH) {
                let Some(target) = self.expand(v, path.parent().unwrap_or(Path::new("/"))) else { continue };
                self.bind_file(&target);
                self.read_config(&target, depth + 1, out);
            } else {
                out.push(e);
            }
        }
    }

    /// A path-valued setting: `~/` is home, a relative path is relative to `base`.
    /// `~name/` is that user's home, as git takes it. Normalized as the kernel takes it: a
    /// doubled slash after `~/` (`~//tools/hooks`) stays below home (rt7 A2).
    fn expand(&self, value: &str, base: &Path) -> Option<PathBuf> {
        if let Some(rest) = value.strip_prefix("~/") {
            return self.globals.home.as_deref().map(|h| normalize(&join(h, rest)));
        }
        if let Some((name, rest)) = value.strip_prefix('~').and_then(|v| v.split_once('/')) {
            let home = crate::policy::dirs::home_of(name)?;
            return Some(normalize(&join(&home, rest)));
        }
        if value.starts_with('~') || value.is_empty() {
            return None;
        }
        Some(normalize(&base.join(value)))
    }

    /// What `entries` (a repository's settings, in order) name in the workspace.
    fn settings(&mut self, repo: &Repo, entries: &[Entry], make_hooks: bool) {
        for e in entries {
            let Some(value) = e.value.as_deref() else { continue };
            if e.section == "core" && e.sub.is_none() && e.name == "hookspath" {
                // Hooks run in the worktree's top level; a relative path is taken from there.
                let Some(dir) = self.expand(value, &repo.worktree) else { continue };
                if within(&self.ws, &dir) {
                    continue; // the workspace or what holds it: nothing to bind
                }
                if make_hooks && within(&dir, &self.ws) {
                    let _ = super::beneath::make_dirs(&self.ws, &dir, 0o755);
                }
                if let Some(d) = self.inside(&dir).filter(|d| d.is_dir()) {
                    self.push(d);
                }
                self.hook_links(&dir);
            } else if runs_program(e) {
                for word in words(value) {
                    if let Some(p) = self.expand(word, &repo.worktree) {
                        self.bind_file(&p);
                    }
                }
            }
        }
    }
}

/// The git directories under `dir` (`modules/`): a directory with a `HEAD` or a `config` is one
/// (and its own `modules/` is walked by its repository: `config`, once bound, cannot be removed
/// to make it look like none); another is a level of a submodule's name with a slash in it
/// (`modules/third_party/zlib`). Neither `dir` nor anything below it is reached through a link
/// (rt8 A1: a nested repository's `modules` made a link to home had every repository there
/// taken for its submodules, their objects unshared and a `modules` made in each).
pub(crate) fn git_dirs_under(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    git_dirs_read(dir, out, &mut Vec::new(), depth);
}

/// [`git_dirs_under`], with the directories it read (or looked for) added to `read`.
fn git_dirs_read(dir: &Path, out: &mut Vec<PathBuf>, read: &mut Vec<PathBuf>, depth: usize) {
    read.push(dir.to_path_buf());
    let Ok(fd) = super::beneath::dir(dir) else { return };
    git_dirs_at(fd, dir, out, read, depth);
}

fn git_dirs_at(fd: std::os::fd::OwnedFd, dir: &Path, out: &mut Vec<PathBuf>, read: &mut Vec<PathBuf>, depth: usize) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(mut entries) = rustix::fs::Dir::new(fd) else { return };
    let mut names = Vec::new();
    while let Some(Ok(e)) = entries.read() {
        let name = e.file_name();
        let kind = e.file_type();
        if !matches!(name.to_bytes(), b"." | b"..")
            && matches!(kind, rustix::fs::FileType::Directory | rustix::fs::FileType::Unknown)
        {
            names.push(name.to_owned());
        }
    }
    let Ok(fd) = entries.fd() else { return };
    for name in names {
        // Opened as a directory, not through a link: a link to one fails here.
        let Ok(sub) = super::beneath::subdir(fd, name.as_c_str()) else { continue };
        let p = dir.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        if super::beneath::exists(&sub, "HEAD") || super::beneath::exists(&sub, "config") {
            out.push(p);
        } else if depth < MAX_DEPTH {
            read.push(p.clone());
            git_dirs_at(sub, &p, out, read, depth + 1);
        }
    }
}

/// Settings whose value is a command git runs, through the shell or directly: the files its
/// words name are code.
fn runs_program(e: &Entry) -> bool {
    let (s, sub, n) = (e.section.as_str(), e.sub.is_some(), e.name.as_str());
    match (s, sub) {
        ("core", false) => {
            matches!(
                n,
                "fsmonitor" | "sshcommand" | "editor" | "pager" | "askpass" | "gitproxy" | "alternaterefscommand"
            )
        }
        ("sequence", false) => n == "editor",
        ("gpg", _) => n == "program" || n == "defaultkeycommand",
        ("diff", false) => n == "external",
        ("diff", true) => n == "textconv" || n == "command",
        ("merge", true) => n == "driver",
        ("filter", true) => matches!(n, "clean" | "smudge" | "process"),
        ("difftool" | "mergetool", true) => n == "cmd" || n == "path",
        ("guitool", true) => n == "cmd",
        ("browser" | "man", true) => n == "cmd" || n == "path",
        ("trailer", true) => n == "command" || n == "cmd",
        ("tar", true) => n == "command",
        ("credential", _) => n == "helper",
        ("pager", _) => true,
        ("hook", true) => n == "command",
        ("interactive", false) => n == "difffilter",
        ("uploadpack", false) => n == "packobjectshook",
        ("remote", true) => n == "uploadpack" || n == "receivepack",
        ("submodule", true) => n == "update",
        ("sendemail", _) => n.ends_with("cmd") || n == "smtpserver",
        _ => false,
    }
}

/// The words of a command, roughly as the shell splits it: whitespace and the shell's operators
/// end a word, quotes are dropped. Words that are options, variables or git's placeholders
/// (`%f`) are left out.
fn words(cmd: &str) -> Vec<&str> {
    cmd.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>' | '!' | '='))
        .map(|w| w.trim_matches(['\'', '"']))
        .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains(['$', '`', '%', '*', '?']))
        .collect()
}

/// One setting as git reads it: section and name lower-cased, the subsection as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) section: String,
    pub(crate) sub: Option<String>,
    pub(crate) name: String,
    /// `None` for a bare name (a boolean true).
    pub(crate) value: Option<String>,
}

/// git's config syntax (`config.c`): `[section]`, `[section "sub"]` and the old
/// `[section.sub]`; `name = value` with quotes, escapes, `#`/`;` comments and `\` continuations;
/// a header and a setting on one line. A line git would refuse is skipped, the rest still read:
/// git then reads none of the file, so what is found is more than it runs, never less.
pub(crate) fn parse(text: &[u8]) -> Vec<Entry> {
    let text = String::from_utf8_lossy(text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text));
    let mut chars = text.chars().filter(|c| *c != '\r').peekable();
    let mut out = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    let skip_line = |chars: &mut std::iter::Peekable<_>| {
        for c in chars.by_ref() {
            if c == '\n' {
                break;
            }
        }
    };
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '#' || c == ';' {
            skip_line(&mut chars);
        } else if c == '[' {
            chars.next();
            section = header(&mut chars);
            if section.is_none() {
                skip_line(&mut chars);
            }
        } else if c.is_ascii_alphabetic() {
            let mut name = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '-' {
                    name.push(c.to_ascii_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
            let value = match chars.peek() {
                Some('=') => {
                    chars.next();
                    value(&mut chars)
                }
                None | Some('\n') => None,
                Some('#' | ';') => {
                    skip_line(&mut chars);
                    None
                }
                Some(_) => {
                    skip_line(&mut chars);
                    continue;
                }
            };
            if let Some((s, sub)) = &section {
                out.push(Entry { section: s.clone(), sub: sub.clone(), name, value });
            }
        } else {
            skip_line(&mut chars);
        }
    }
    out
}

/// After `[`: the section and subsection, through `]`.
fn header(chars: &mut std::iter::Peekable<impl Iterator<Item = char>>) -> Option<(String, Option<String>)> {
    let mut name = String::new();
    loop {
        match chars.next()? {
            ']' => {
                // `[section.sub]`, the old spelling: the subsection lower-cased.
                return Some(match name.split_once('.') {
                    Some((s, sub)) => (s.to_string(), Some(sub.to_string())),
                    None => (name, None),
                });
            }
            c if c.is_ascii_alphanumeric() || c == '-' || c == '.' => name.push(c.to_ascii_lowercase()),
            c if c == ' ' || c == '\t' => break,
            _ => return None,
        }
    }
    while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    if chars.next()? != '"' {
        return None;
    }
    let mut sub = String::new();
    loop {
        match chars.next()? {
            '"' => break,
            '\n' => return None,
            '\\' => sub.push(chars.next().filter(|c| *c != '\n')?),
            c => sub.push(c),
        }
    }
    (chars.next()? == ']').then_some((name, Some(sub)))
}

/// After `=`: the value, through the end of its (continued) line.
fn value(chars: &mut std::iter::Peekable<impl Iterator<Item = char>>) -> Option<String> {
    let (mut out, mut quote, mut comment, mut space) = (String::new(), false, false, 0usize);
    while let Some(c) = chars.next() {
        if c == '\n' {
            break;
        }
        if comment {
            continue;
        }
        if c.is_whitespace() && !quote {
            if !out.is_empty() {
                space += 1;
            }
            continue;
        }
        if !quote && (c == ';' || c == '#') {
            comment = true;
            continue;
        }
        out.extend(std::iter::repeat_n(' ', std::mem::take(&mut space)));
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some('t') => out.push('\t'),
                Some('b') => out.push('\u{8}'),
                Some('n') => out.push('\n'),
                Some(c @ ('\\' | '"')) => out.push(c),
                _ => return None,
            },
            '"' => quote = !quote,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(s: &str, sub: Option<&str>, n: &str, v: Option<&str>) -> Entry {
        Entry { section: s.into(), sub: sub.map(Into::into), name: n.into(), value: v.map(Into::into) }
    }

    #[test]
    fn config_is_read_as_git_reads_it() {
        let text = b"\xef\xbb\xbf# comment\n[core]\n\tHooksPath = .husky/_ ; husky\n\tbare\n[Diff \"Tool\"]\r\n textconv = \"sh x.sh\" \\\n  --flag # c\n[include] path = ../shared\n[filter.LFS]\n\tclean = a\\tb\n[broken\nbad line here\n[includeIf \"gitdir:~/w/\"]\n\tpath = w.inc\n";
        assert_eq!(
            parse(text),
            [
                entry("core", None, "hookspath", Some(".husky/_")),
                entry("core", None, "bare", None),
                entry("diff", Some("Tool"), "textconv", Some("sh x.sh   --flag")),
                entry("include", None, "path", Some("../shared")),
                entry("filter", Some("lfs"), "clean", Some("a\tb")),
                entry("includeif", Some("gitdir:~/w/"), "path", Some("w.inc")),
            ]
        );
    }

    /// What `git config -f c --list --no-includes` (2.47) says of the same file.
    #[test]
    fn config_is_read_as_git_lists_it() {
        let text = "[core]\n  HooksPath = \"a b\" c ; x\nfsmonitor=x\\\ny\n[diff \"a \\\"q\\\" b\"] textconv = t1\n\
                    [Diff.Sub] Command = t2\n[alias]\n  x = \"!f() { echo \\\"hi\\\"; }; f\"\n[filter \"lfs\"]\n\
                    \tclean = git-lfs clean -- %f\n\trequired\n[include]path=inc\n[sec-tion \"s\"]\nna-me = 1\n";
        let listed: Vec<String> = parse(text.as_bytes())
            .iter()
            .map(|e| {
                let sub = e.sub.as_deref().map(|s| format!(".{s}")).unwrap_or_default();
                let value = e.value.as_deref().map(|v| format!("={v}")).unwrap_or_default();
                format!("{}{sub}.{}{value}", e.section, e.name)
            })
            .collect();
        assert_eq!(
            listed,
            [
                "core.hookspath=a b c",
                "core.fsmonitor=xy",
                "diff.a \"q\" b.textconv=t1",
                "diff.sub.command=t2",
                "alias.x=!f() { echo \"hi\"; }; f",
                "filter.lfs.clean=git-lfs clean -- %f",
                "filter.lfs.required",
                "include.path=inc",
                "sec-tion.s.na-me=1",
            ]
        );
    }

    #[test]
    fn the_words_of_a_command_that_can_be_files() {
        assert_eq!(words("sh ./x.sh --flag"), ["sh", "./x.sh"]);
        assert_eq!(words("\"echo hi > /tmp/f; false\""), ["echo", "hi", "/tmp/f", "false"]);
        assert_eq!(words("!f() { ./tools/t \"$1\"; }; f %f"), ["f", "{", "./tools/t", "}", "f"]);
        assert_eq!(words("FOO=1 node s.js"), ["FOO", "1", "node", "s.js"]);
    }

    /// A workspace with a linked worktree, submodules (one named with a slash, one nested), and
    /// settings that name files in it, through includes.
    #[test]
    fn git_files_and_what_settings_name_in_the_workspace_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        let w = |rel: &str, body: &str| {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".gitconfig"), "[core]\n\tsshCommand = ssh -F tools/ssh.conf\n").unwrap();
        w(".git/HEAD", "ref: refs/heads/main\n");
        w(
            ".git/config",
            "[core]\n\thooksPath = .husky/_\n\tfsmonitor = \"sh tools/fsmon.sh\"\n\tworktree = ignored\n\
             [include]\n\tpath = ../.gitconfig.shared\n[includeIf \"onbranch:x\"]\n\tpath = ../../cfg/more\n\
             [diff \"pdf\"]\n\ttextconv = ./conv\n[alias]\n\tt = !./alias.sh\n",
        );
        w(".gitconfig.shared", "[include]\n\tpath = cfg/nested\n");
        w("cfg/nested", "[merge \"m\"]\n\tdriver = bin/merge %O %A\n");
        std::fs::create_dir_all(root.join("cfg")).unwrap();
        std::fs::write(root.join("cfg/more"), "[core]\n\tfsmonitor = ./from-more\n").unwrap();
        w("from-more", "");
        for f in ["tools/fsmon.sh", "tools/ssh.conf", "conv", "alias.sh", "bin/merge"] {
            w(f, "");
        }
        // Submodules: `third_party/zlib` (a name with a slash) with one nested in it, and one
        // only `.gitmodules` names.
        w(".gitmodules", "[submodule \"other\"]\n\tpath = other\n");
        w("other/.git", "gitdir: /elsewhere\n");
        w(".git/modules/third_party/zlib/HEAD", "");
        w(".git/modules/third_party/zlib/config", "[core]\n\tworktree = ../../../../third_party/zlib\n");
        w("third_party/zlib/.git", "gitdir: ../../.git/modules/third_party/zlib\n");
        w(".git/modules/third_party/zlib/modules/n/HEAD", "");
        w(
            ".git/modules/third_party/zlib/modules/n/config",
            "[core]\n\tworktree = ../../../../../../third_party/zlib/n\n\tfsmonitor = ./fsm\n",
        );
        w("third_party/zlib/n/.git", "gitdir: x\n");
        w("third_party/zlib/n/fsm", "");
        // A linked worktree inside the workspace, and one outside it.
        w(".git/worktrees/in/gitdir", &format!("{}\n", ws.join(".wt/in/.git").display()));
        w(".git/worktrees/in/commondir", "../..\n");
        w(".wt/in/.git", "gitdir: ../../.git/worktrees/in\n");
        w(".git/worktrees/out/gitdir", "/elsewhere/out/.git\n");

        let globals = Globals::from_env(&home, |_| None);
        let found = find(&ws, &globals, true);
        let rel: Vec<String> =
            found.bind.iter().map(|p| p.strip_prefix(&ws).unwrap().to_string_lossy().into_owned()).collect();
        for want in [
            "from-more",
            "other/.git",
            "third_party/zlib/.git",
            "third_party/zlib/n/.git",
            "third_party/zlib/n/fsm",
            ".wt/in/.git",
            ".gitconfig.shared",
            "cfg/nested",
            "tools/fsmon.sh",
            "tools/ssh.conf",
            "conv",
            "bin/merge",
            ".husky/_",
            // In the linked worktree, the shared config's relative paths are its own.
            ".wt/in/.husky/_",
        ] {
            assert!(rel.contains(&want.to_string()), "{want}: {rel:?}");
        }
        assert!(ws.join(".husky/_").is_dir(), "a missing hooksPath is made empty");
        // `includeIf` outside the workspace is read, not bound; an alias is run only when asked for.
        assert!(!rel.iter().any(|r| r.contains("cfg/more") || r.contains("alias") || r == "ignored"), "{rel:?}");
        for read in [home.join(".gitconfig"), home.join(".config/git/config"), root.join("cfg/more")] {
            assert!(found.read.contains(&read), "{read:?}: {:?}", found.read);
        }
        assert!(found.read.contains(&ws.join(".git/config")));
        // Never the workspace itself, whatever a setting says.
        std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = .\n").unwrap();
        assert!(!find(&ws, &globals, true).bind.contains(&ws));
        // No `.git`, nothing.
        assert_eq!(find(&root, &globals, true), Found::default());
    }

    /// rt7 A1: the checkout of a submodule not initialised yet (empty, no `.git`) is bound: a
    /// `.git` made there is adopted by the person's git. Not one with files (a stale
    /// `.gitmodules` entry, a directory of the project's), nor one initialised.
    #[test]
    fn an_uninitialised_submodules_checkout_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let w = |rel: &str, body: &str| {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w(".git/HEAD", "ref: refs/heads/main\n");
        w(
            ".gitmodules",
            "[submodule \"a\"]\n\tpath = lib/a\n[submodule \"b\"]\n\tpath = b\n[submodule \"c\"]\n\tpath = c\n\
             [submodule \"d\"]\n\tpath = d\n",
        );
        std::fs::create_dir_all(ws.join("lib/a")).unwrap();
        w("b/file", "");
        w("c/.git", "gitdir: ../.git/modules/c\n");
        let found = find(&ws, &Globals::default(), true);
        assert!(found.bind.contains(&ws.join("lib/a")), "{:?}", found.bind);
        for not in ["b", "c", "d"] {
            assert!(!found.bind.contains(&ws.join(not)), "{not}: {:?}", found.bind);
        }
        assert!(!ws.join("d").exists(), "a missing one is not made");
    }

    /// rt5 A9: a hook installed as a link into the workspace (`ln -s ../../scripts/pre-commit
    /// .git/hooks/`), in `.git/hooks` or in a `core.hooksPath`: its target is bound read-only
    /// as the hooks are; a link leading out of the workspace is not the workspace's to bind.
    #[test]
    fn what_a_hook_link_names_in_the_workspace_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let w = |rel: &str, body: &str| {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w(".git/HEAD", "ref: refs/heads/main\n");
        w(".git/config", "[core]\n\thooksPath = githooks\n");
        w(".git/hooks/pre-push.sample", "");
        w("scripts/pre-commit", "#!/bin/sh\n");
        w("scripts/post-merge", "#!/bin/sh\n");
        w("githooks/commit-msg", "#!/bin/sh\n");
        std::fs::write(root.join("outside"), "").unwrap();
        std::os::unix::fs::symlink("../../scripts/pre-commit", ws.join(".git/hooks/pre-commit")).unwrap();
        std::os::unix::fs::symlink("../scripts/post-merge", ws.join("githooks/post-merge")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), ws.join(".git/hooks/pre-rebase")).unwrap();
        let found = find(&ws, &Globals::default(), false);
        let mut rel: Vec<String> =
            found.bind.iter().map(|p| p.strip_prefix(&ws).unwrap().to_string_lossy().into_owned()).collect();
        rel.sort();
        assert_eq!(rel, ["githooks", "scripts/post-merge", "scripts/pre-commit"]);
        assert!(found.read.contains(&ws.join(".git/hooks")), "watched: {:?}", found.read);
    }

    /// rt8 A1: a `modules` (or a directory in it) that is a link is not walked: the git
    /// directories it leads to are no submodules'.
    #[test]
    fn no_git_directory_is_found_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["other/.git", "ws/.git/modules/real", "ws/.git/modules/deep/er"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["other/.git/HEAD", "ws/.git/modules/real/HEAD", "ws/.git/modules/deep/er/config"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        std::os::unix::fs::symlink(root.join("other/.git"), root.join("ws/.git/modules/linked")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("ws/.git/modules/up")).unwrap();
        let mut found = Vec::new();
        git_dirs_under(&root.join("ws/.git/modules"), &mut found, 0);
        found.sort();
        assert_eq!(found, [root.join("ws/.git/modules/deep/er"), root.join("ws/.git/modules/real")]);
        std::fs::create_dir_all(root.join("nested/.git")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("nested/.git/modules")).unwrap();
        let mut found = Vec::new();
        git_dirs_under(&root.join("nested/.git/modules"), &mut found, 0);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn the_global_files_follow_gits_environment_and_its_defaults() {
        let home = Path::new("/h");
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| OsString::from(v))
        };
        let defaults = ["/etc/gitconfig", "/h/.config/git/config", "/h/.gitconfig"].map(PathBuf::from);
        assert_eq!(Globals::from_env(home, env(&[])).files, defaults);
        // The agent's environment can add a file, never take one away.
        const MOVED: &[(&str, &str)] =
            &[("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_CONFIG_GLOBAL", "/dev/null"), ("XDG_CONFIG_HOME", "/x")];
        let files = Globals::from_env(home, env(MOVED)).files;
        for f in defaults.iter().chain(&[PathBuf::from("/x/git/config"), PathBuf::from("/dev/null")]) {
            assert!(files.contains(f), "{f:?}: {files:?}");
        }
    }
}
