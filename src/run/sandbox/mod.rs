//! The box every command agentsh runs goes into (issue 25): default-deny. It names what a
//! command may reach, and nothing else is there. It owns what the box allows and how it is set
//! up; it must not judge commands, read agentsh's config or write records.
//!
//! What a boxed command sees, in namespaces of its own (user, mount, PID, IPC, UTS):
//! - `/` read-only, metadata included (a read-only mount refuses chmod, chown, utimes and xattrs);
//! - the workspace writable (a git top-level, or a directory the person named), with the code
//!   its own git runs later (`.git/config`, `hooks`, `info`, `commondir`, `modules/*`, ...,
//!   the `.git` files and what git settings name there, [`gitcode`]) read-only and `.git` itself
//!   impossible to rename or remove;
//! - a private `/tmp`, `/var/tmp`, `/dev/shm`, `$XDG_RUNTIME_DIR` and `/run`: no path socket of
//!   the person's (tmux, ssh-agent, D-Bus, docker) and no file they later open is there;
//! - a private home: the person's toolchains and harmless configuration read-only (an
//!   allow-list, [`spec`]), their build caches copy-on-write (writes stay in the box), and
//!   nothing else of theirs: no credential, history or token, whatever its name;
//! - a minimal `/dev` (null, zero, full, random, urandom, tty and the command's own terminal),
//!   and a fresh `/proc` that shows only the box's processes;
//! - a Landlock domain (writes only to the roots above, device ioctls only on the devices
//!   above, signals and abstract sockets scoped) and a seccomp filter ([`filter`]) for what
//!   Landlock does not mediate;
//! - a scrubbed environment ([`environ`]) and a process limit.
//!
//! The steps, each in its own file:
//! - [`spec`] (pure): settings + [`Place`] -> [`BoxSpec`], with where each part comes from.
//! - [`holder`]: namespaces are made once by a builder process and kept by a holder (PID 1 of
//!   the box) for the next commands with the same inputs, found through a record.
//! - [`view`]: the builder's mounts (the view above).
//! - [`gitlinks`]: links made in the git directory, which the person's git would follow,
//!   removed when a command ends and, by the holder, as they appear.
//! - [`stores`]: the private places of a terminal that has closed, removed.
//! - [`rules`]: the Landlock ruleset; [`filter`]: the seccomp filter; [`environ`]: the
//!   environment; [`spawn`]: joining the box and running the command in it as a child, whose
//!   exit this process waits for (so it can record it).
//!
//! For the box's network proxy (issue 26), [`tls`] ends the box's TLS to a host agentsh adds
//! credentials to, with a certificate from agentsh's own authority, and puts them in on the way.
//!
//! Where the kernel lacks Landlock (ABI 3) or user namespaces, there is no box at all: every
//! command is judged as without one (fail closed), and `doctor`, `check` and `policy` say why.
//! What the box does not hold is in SECURITY.md ("The sandbox").

pub mod asking;
pub(crate) mod beneath;
pub mod copies;
pub mod environ;
pub mod filter;
pub(crate) mod gitcode;
pub mod gitignore;
pub mod gitlinks;
pub mod gitreview;
pub mod hardlinks;
pub mod holder;
pub(crate) mod personscode;
pub mod proxy;
pub mod rules;
pub mod spawn;
pub mod spec;
pub(crate) mod stores;
pub(crate) mod sys;
pub mod tls;
pub(crate) mod untracked;
pub mod view;

pub use crate::policy::sandbox_settings::{Network, Settings};
pub use spec::{BoxSpec, Denied, Origin, Refused, Root, Sight};
use std::path::{Path, PathBuf};

/// The oldest Landlock ABI the box runs on: below 3 `truncate(2)` is not restricted.
pub const MIN_ABI: u8 = 3;

// ---------------------------------------------------------------------------------------------
// Place: the facts about this machine and this run that the spec is built from

/// Everything [`BoxSpec::build`] needs to know about the machine. [`Place::current`] gathers it;
/// tests write it out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub cwd: PathBuf,
    pub workspace: Workspace,
    /// The person's home directory (absolute).
    pub home: Option<PathBuf>,
    /// Its real path, where `$HOME` names it through a link (`/home -> /var/home`): the current
    /// directory is a real path, so home is compared in both spellings.
    pub real_home: Option<PathBuf>,
    /// Every user's home ([`crate::policy::dirs::homes`]): never a workspace, nor what holds one.
    pub homes: Vec<PathBuf>,
    /// `$XDG_RUNTIME_DIR`, when absolute: a private one takes its place.
    pub runtime_dir: Option<PathBuf>,
    /// Environment overrides of cache locations (each absolute, or ignored).
    pub xdg_cache_home: Option<PathBuf>,
    pub cargo_home: Option<PathBuf>,
    pub rustup_home: Option<PathBuf>,
    pub gopath: Option<PathBuf>,
    pub gomodcache: Option<PathBuf>,
    pub gradle_user_home: Option<PathBuf>,
    /// Toolchain directories named by the environment (`PYENV_ROOT`, `NVM_DIR`, ...): visible,
    /// read-only, wherever they are.
    pub tool_dirs: Vec<PathBuf>,
    /// Caches named by the environment (`npm_config_cache`, `PIP_CACHE_DIR`, ...): copied on
    /// write, wherever they are.
    pub cache_dirs: Vec<PathBuf>,
    /// The absolute directories of `$PATH`: what is on it stays runnable in the box.
    pub path_dirs: Vec<PathBuf>,
    /// The command keeps the terminal (agentsh's stdin is one): it may use it, ioctls included.
    pub keep_terminal: bool,
    /// The terminals agentsh's stdin, stdout or stderr are (`/dev/pts/N`): the command's own.
    pub ttys: Vec<Terminal>,
    /// Why the git top-level is code the person's own tools run by path outside any box (a
    /// start-up file sources it, a program on `$PATH` links into it, git's global hooks are in
    /// it: [`personscode`]): then it is no workspace. Looked for only when a box is made (it
    /// reads files), so neither [`Place::current`] nor the box's name ([`spec::key`]) has it.
    pub runs_elsewhere: Option<String>,
    /// The git top-levels above the workspace's (a repository nested in another: `ws/sub`),
    /// nearest first. A box of one of them can write the nested one's `.git/config`, so its
    /// remotes are not the person's (rt5 B1). Looked for only when a box is made, as
    /// [`Place::runs_elsewhere`] is.
    pub git_above: Vec<PathBuf>,
    /// The toolchain directories the environment names that hold nothing a toolchain's root
    /// does (`bin`, `shims`, `versions`, ...: `JAVA_HOME=~/notes`, rt5 B6): not shown. Looked
    /// for only when a box is made, as [`Place::runs_elsewhere`] is.
    pub not_toolchains: Vec<PathBuf>,
    /// The git top-levels in a home that hold a toolchain or cache directory the environment
    /// names, or are one (`GOMODCACHE=~/proj2`, rt7 A3): another project, never shown as a
    /// toolchain or a cache. Looked for only when a box is made, as
    /// [`Place::runs_elsewhere`] is.
    pub projects: Vec<PathBuf>,
}

/// A terminal of the command's: its path, and which terminal that path is now. The kernel gives
/// a closed terminal's number to the next one opened, so `/dev/pts/1` is the agent's pty one
/// minute and the person's terminal the next (rt8 A4): what a box of one kept (its private home,
/// `/tmp`, the box itself) must not be the other's. What the kernel made is told apart by its
/// device, inode and change time (`fstat`): set when the terminal is made (and by a chmod or
/// chown of it, which reading and writing it do not do), so never one an earlier terminal had.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Terminal {
    pub path: PathBuf,
    pub made: [i64; 4],
}

impl Terminal {
    /// The terminal `fd` is, named `path`. Where `fstat` fails, one no other run shares.
    fn of(fd: std::os::fd::BorrowedFd<'_>, path: PathBuf) -> Terminal {
        let made = match rustix::fs::fstat(fd) {
            Ok(st) => [st.st_dev as i64, st.st_ino as i64, st.st_ctime, st.st_ctime_nsec as i64],
            Err(_) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                [-1, i64::from(std::process::id()), now.as_secs() as i64, i64::from(now.subsec_nanos())]
            }
        };
        Terminal { path, made }
    }

    /// A terminal named `path` (tests: one made at time 0).
    pub fn at(path: impl Into<PathBuf>) -> Terminal {
        Terminal { path: path.into(), made: [0; 4] }
    }

    /// Whether `path` is still this terminal: when it is not, it never is again, and nothing
    /// made for it is used again ([`holder`]'s prune). A `stat`.
    pub(crate) fn still_open(&self) -> bool {
        rustix::fs::stat(&self.path)
            .is_ok_and(|st| [st.st_dev as i64, st.st_ino as i64, st.st_ctime, st.st_ctime_nsec as i64] == self.made)
    }

    /// What names it in a box's name and its private places' ([`spec`]).
    pub(crate) fn hash_into(&self, k: &mut holder::Key) {
        use std::os::unix::ffi::OsStrExt;
        k.item(self.path.as_os_str().as_bytes());
        for n in self.made {
            k.item(&n.to_le_bytes());
        }
    }
}

/// Environment variables that name a toolchain's directory.
pub const TOOL_VARS: &[&str] = &[
    "PYENV_ROOT",
    "NVM_DIR",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "SDKMAN_DIR",
    "ASDF_DATA_DIR",
    "PNPM_HOME",
    "FNM_DIR",
    "GOROOT",
    "JAVA_HOME",
];

/// Where the agents keep the shell snapshots their wrappers source before each command: the
/// variable that moves the agent's home, where it is in that home, and the home's default name.
/// Shown read-only, as toolchains are, where they exist; the box is made anew once one appears
/// (an agent makes its directory only after its first command).
const SNAPSHOT_DIRS: &[(&str, &str, &str)] =
    &[("CODEX_HOME", "shell_snapshots", ".codex"), ("CLAUDE_CONFIG_DIR", "shell-snapshots", ".claude")];

/// Environment variables that name a cache (the tools' own names for them).
pub const CACHE_VARS: &[&str] = &[
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "PIP_CACHE_DIR",
    "UV_CACHE_DIR",
    "POETRY_CACHE_DIR",
    "YARN_CACHE_FOLDER",
    "BUN_INSTALL_CACHE_DIR",
    "GOCACHE",
    "CCACHE_DIR",
    "SCCACHE_DIR",
    "DENO_DIR",
    "PRE_COMMIT_HOME",
];

/// Where the command's project is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workspace {
    /// The git top-level containing the cwd, else the cwd (which is no workspace for that: only
    /// a git top-level or a directory the person named is, `spec::workspace`).
    pub root: PathBuf,
    /// The git directory, when it is inside `root` (`.git`, or where a submodule's `.git` file
    /// points inside the top-level).
    pub git_dir: Option<PathBuf>,
    /// Whether `root` holds a `.git` (a directory, or a file) at all.
    pub is_git: bool,
    /// A git directory outside the workspace that a `.git` file names (a linked worktree's, or
    /// one a command wrote): never granted.
    pub outside_git: Option<PathBuf>,
}

impl Place {
    /// Reads the environment and walks up from `cwd` for `.git`. A handful of system calls.
    pub fn current(cwd: &Path, keep_terminal: bool) -> Place {
        let abs = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
        use std::os::fd::{AsFd, AsRawFd};
        let mut ttys: Vec<Terminal> = Vec::new();
        let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
        for (fd, on) in [
            (stdin.as_fd(), keep_terminal),
            (stdout.as_fd(), nix::unistd::isatty(&stdout).unwrap_or(false)),
            (stderr.as_fd(), nix::unistd::isatty(&stderr).unwrap_or(false)),
        ] {
            // isatty first: an ioctl costs less than a readlink through /proc.
            if on
                && let Ok(link) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                && link.starts_with("/dev/pts/")
                && !ttys.iter().any(|t| t.path == link)
            {
                ttys.push(Terminal::of(fd, link));
            }
        }
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).filter(|d| d.is_absolute()).collect())
            .unwrap_or_default();
        let home = crate::policy::dirs::home().map(Path::to_path_buf);
        let tool_dirs = TOOL_VARS
            .iter()
            .filter_map(|v| abs(v))
            .chain(SNAPSHOT_DIRS.iter().flat_map(|(var, dir, default)| {
                let at_home = home.as_ref().map(|h| h.join(default).join(dir));
                [abs(var).map(|moved| moved.join(dir)), at_home].into_iter().flatten().filter(|d| d.is_dir())
            }))
            .collect();
        let real_home = home.as_deref().and_then(|h| sys::real_path(h).ok()).filter(|r| Some(r) != home.as_ref());
        Place {
            cwd: cwd.to_path_buf(),
            workspace: Workspace::find(cwd),
            home,
            real_home,
            homes: crate::policy::dirs::homes(),
            runtime_dir: abs("XDG_RUNTIME_DIR"),
            xdg_cache_home: abs("XDG_CACHE_HOME"),
            cargo_home: abs("CARGO_HOME"),
            rustup_home: abs("RUSTUP_HOME"),
            gopath: abs("GOPATH"),
            gomodcache: abs("GOMODCACHE"),
            gradle_user_home: abs("GRADLE_USER_HOME"),
            tool_dirs,
            cache_dirs: CACHE_VARS.iter().filter_map(|v| abs(v)).collect(),
            path_dirs,
            keep_terminal,
            ttys,
            runs_elsewhere: None,
            git_above: Vec::new(),
            not_toolchains: Vec::new(),
            projects: Vec::new(),
        }
    }
}

impl Workspace {
    /// The git top-level containing `cwd` (found by walking up for `.git`, a directory or a
    /// `gitdir:` file), else `cwd` itself.
    pub fn find(cwd: &Path) -> Workspace {
        for dir in cwd.ancestors() {
            let dot_git = dir.join(".git");
            let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { continue };
            let root = dir.to_path_buf();
            if meta.is_dir() {
                return Workspace { root, git_dir: Some(dot_git), is_git: true, outside_git: None };
            }
            if meta.is_file() {
                // A linked worktree or a submodule: `gitdir: PATH`, relative to `dir`. Only a git
                // directory inside the workspace is granted: a `.git` file is the workspace's own
                // text, and one a command wrote could name any directory (issue 25).
                // Nor one reached through a link in it (rt8 A1): a nested repository's
                // `gitdir: x` with `x` a link to another repository's git directory had agentsh's
                // builder rewrite that one's objects and make it writable in the box.
                let (git_dir, outside_git) = match gitcode::gitdir_file(&dot_git) {
                    Some(g) if within(&g, dir) && g != dir && no_link_below(dir, &g) => (Some(g), None),
                    other => (None, other),
                };
                return Workspace { root, git_dir, is_git: true, outside_git };
            }
        }
        Workspace { root: cwd.to_path_buf(), git_dir: None, is_git: false, outside_git: None }
    }
}

/// Whether the directory `path`, below `dir`, is reached from it with no link on the way (or
/// is not there yet): two `openat`, for a workspace whose `.git` is a file.
fn no_link_below(dir: &Path, path: &Path) -> bool {
    use rustix::fs::{Mode, OFlags};
    let Ok(rel) = path.strip_prefix(dir) else { return false };
    rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).is_ok_and(|top| {
        beneath::open(&top, rel, OFlags::PATH | OFlags::DIRECTORY)
            .map_or_else(|e| e == rustix::io::Errno::NOENT, |_| true)
    })
}

/// The directories above `root` that hold a `.git` (a directory or a file), nearest first: a
/// `statx` for each directory above it.
fn git_above(root: &Path) -> Vec<PathBuf> {
    root.ancestors()
        .skip(1)
        .filter(|d| std::fs::symlink_metadata(join(d, ".git")).is_ok())
        .map(Path::to_path_buf)
        .collect()
}

/// [`Place::projects`]: for each directory the environment names as a toolchain's or a cache
/// (or moves a toolchain's home to) in a home, the git top-levels from it up to that home,
/// the home left out (one kept in git). A `statx` for each directory on the way, only for
/// what the environment names in a home.
fn projects(place: &Place) -> Vec<PathBuf> {
    let homes: Vec<PathBuf> = [place.home.as_deref(), place.real_home.as_deref(), Some(Path::new("/root"))]
        .into_iter()
        .flatten()
        .map(normalize)
        .collect();
    let is_home = |d: &Path| homes.iter().any(|h| h == d) || d.parent() == Some(Path::new("/home"));
    let moved = [
        &place.xdg_cache_home,
        &place.cargo_home,
        &place.rustup_home,
        &place.gopath,
        &place.gomodcache,
        &place.gradle_user_home,
    ];
    let named = moved.into_iter().flatten().chain(&place.tool_dirs).chain(&place.cache_dirs).map(|d| normalize(d));
    let mut found = Vec::new();
    for dir in named {
        let Some(top) = dir.ancestors().find(|a| is_home(a)) else { continue };
        for d in dir.ancestors().take_while(|a| *a != top) {
            if !found.iter().any(|f: &PathBuf| f == d) && std::fs::symlink_metadata(join(d, ".git")).is_ok() {
                found.push(d.to_path_buf());
            }
        }
    }
    found
}

pub(crate) use crate::policy::dirs::normalize;

/// `base/rel` for a normalized `base` and a relative `rel` without `.` or `..`, in one
/// allocation: `Path::join` parses components.
pub(crate) fn join(base: &Path, rel: &str) -> PathBuf {
    let base = base.as_os_str();
    let mut out = std::ffi::OsString::with_capacity(base.len() + 1 + rel.len());
    out.push(base);
    if base.len() > 1 {
        out.push("/");
    }
    out.push(rel);
    out.into()
}

/// `p` is `root` or beneath it. Byte-wise, for normalized absolute paths (see [`normalize`]).
pub(crate) fn within(p: &Path, root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (p.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    p.starts_with(r) && (p.len() == r.len() || r == b"/" || p[r.len()] == b'/')
}

/// `p` is a top-level directory (`/srv`). Byte-wise, for a normalized absolute path.
pub(crate) fn top_level(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    b.len() > 1 && b[0] == b'/' && !b[1..].contains(&b'/')
}

// ---------------------------------------------------------------------------------------------
// What the kernel offers

/// What this kernel offers the box. Cheap: a few system calls and small /proc reads.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Support {
    /// The Landlock ABI, `None` without Landlock (not built in, or not enabled at boot).
    pub landlock_abi: Option<u8>,
    /// Whether unprivileged user namespaces can be made (the box's private view needs them).
    pub namespaces: Namespaces,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", content = "why", rename_all = "lowercase")]
pub enum Namespaces {
    Available,
    Unavailable(String),
    /// A seccomp filter is in force: it may refuse `unshare`; only trying tells.
    Unknown(String),
}

impl Support {
    /// Whether the box can be made here: Landlock at [`MIN_ABI`] and namespaces that are not
    /// known to be refused.
    pub fn boxable(&self) -> bool {
        self.landlock_abi.is_some_and(|a| a >= MIN_ABI) && !matches!(self.namespaces, Namespaces::Unavailable(_))
    }
}

pub fn probe() -> Support {
    Support { landlock_abi: landlock_abi(), namespaces: probe_namespaces() }
}

/// Whether the kernel has Landlock at [`MIN_ABI`] or later.
pub fn available() -> bool {
    landlock_abi().is_some_and(|abi| abi >= MIN_ABI)
}

/// The kernel's Landlock ABI, up to 7, asked once per process.
pub fn landlock_abi() -> Option<u8> {
    static ABI: std::sync::OnceLock<Option<u8>> = std::sync::OnceLock::new();
    *ABI.get_or_init(|| sys::abi_version().map(|v| v.min(7) as u8))
}

/// Whether user namespaces can be made, as far as the system's settings tell.
pub fn probe_namespaces() -> Namespaces {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Namespaces::Unavailable("user.max_user_namespaces is 0".into());
    }
    if !nix::unistd::geteuid().is_root() {
        if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
            return Namespaces::Unavailable("kernel.unprivileged_userns_clone is 0".into());
        }
        if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
            return Namespaces::Unavailable("AppArmor restricts unprivileged user namespaces".into());
        }
    }
    let seccomp = read("/proc/self/status")
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Seccomp:").map(|v| v.trim().to_string())));
    if seccomp.as_deref() == Some("2") {
        return Namespaces::Unknown("a seccomp filter is in force (containers often refuse unshare)".into());
    }
    Namespaces::Available
}

/// What the box could not do, or why setting it up failed: nothing may run then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoxError {
    /// The kernel lacks what the box needs.
    Unsupported(String),
    /// Setting it up failed.
    Failed(String),
    /// The holder of the kept box ended (something killed it) before this command joined it:
    /// another box can be made.
    Gone(String),
}

impl std::fmt::Display for BoxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoxError::Unsupported(m) | BoxError::Failed(m) | BoxError::Gone(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for BoxError {}

/// Whether a command runs in the box. Decided by the gate, carried by the plan to exec.
#[derive(Debug)]
pub enum Confinement {
    Boxed(Box<BoxPlan>),
    Unconfined,
}

// ---------------------------------------------------------------------------------------------
// BoxPlan: the gate's box

/// A box to run a command in, as the gate plans it: what its spec is built from, the spec when
/// something needs it, and the holder kept for this box, if any. A command that joins a holder
/// needs no spec: the record names the roots (for the judge and the audit record), and the
/// holder has the finished ruleset.
pub struct BoxPlan {
    settings: Settings,
    place: Place,
    own: Vec<PathBuf>,
    records: PathBuf,
    name: String,
    /// The spec, and whether it was built for a box to be made ([`BoxPlan::spec_for_box`]).
    spec: std::sync::OnceLock<(BoxSpec, bool)>,
    roots: std::sync::OnceLock<RootsText>,
    /// This box's holder, alive and unchanged when the plan was made: the fast path.
    kept: Option<holder::Kept>,
    /// The command starts in the workspace: the box grants it (no spec needs building to tell).
    starts_in_workspace: bool,
}

impl std::fmt::Debug for BoxPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxPlan").field("place", &self.place).field("name", &self.name).finish_non_exhaustive()
    }
}

impl BoxPlan {
    /// `records`: agentsh's records of kept boxes (`holder::records_dir`). Looks for this box's
    /// holder there; whether it is alive and what it vouches for unchanged is checked now, and
    /// its identity again when joining.
    pub fn new(settings: &Settings, place: Place, own: Vec<PathBuf>, records: PathBuf) -> BoxPlan {
        let name = spec::key(settings, &place, &own, &records);
        let kept = holder::Kept::find(&records, &name);
        let (spec, roots) = (std::sync::OnceLock::new(), std::sync::OnceLock::new());
        let cwd = normalize(&place.cwd);
        let starts_in_workspace = spec::workspace(settings, &place, &spec::home_of(&place), &cwd, &mut Vec::new())
            .is_some_and(|w| within(&cwd, &w));
        BoxPlan { settings: settings.clone(), place, own, records, name, spec, roots, kept, starts_in_workspace }
    }

    /// Why there is no box for this command: the box neither grants nor shows the directory it
    /// starts in ([`BoxSpec::unboxed`]). The spec is built only where the command starts outside
    /// the workspace.
    pub fn unboxed(&self) -> Option<&str> {
        if self.starts_in_workspace && !self.for_box() {
            return None;
        }
        self.spec().unboxed.as_deref()
    }

    /// Whether the spec looks for what only a box's making looks for ([`Place::runs_elsewhere`]):
    /// where no box is kept, so one is to be made, which reads those files anyway. A kept box
    /// was made for the same inputs, so it started in the same place: where it grants no
    /// workspace, that was found when it was made.
    fn for_box(&self) -> bool {
        self.kept.is_none()
    }

    /// The spec, built the first time it is asked for. Where no box is kept for it (one is to
    /// be made), with what only a box's making looks for ([`Place::runs_elsewhere`]).
    pub fn spec(&self) -> &BoxSpec {
        &self.spec.get_or_init(|| self.build_spec(self.for_box())).0
    }

    /// The spec a box is made from: with what only a box's making looks for, built again where
    /// it was built without (a box was kept when the plan was made, and has ended since).
    /// The box's seat ([`spec::seat`]): on the slow path only, where a box is made.
    pub(crate) fn seat(&self) -> String {
        spec::seat(&self.settings, &self.place, &self.own, &self.records)
    }

    pub(crate) fn spec_for_box(&mut self) -> &BoxSpec {
        if self.spec.get().is_some_and(|(_, for_box)| !for_box) {
            self.spec = std::sync::OnceLock::new();
        }
        &self.spec.get_or_init(|| self.build_spec(true)).0
    }

    fn build_spec(&self, for_box: bool) -> (BoxSpec, bool) {
        let mut place = std::borrow::Cow::Borrowed(&self.place);
        if for_box
            && self.place.workspace.is_git
            && let Some(home) = self.place.home.as_deref().map(normalize)
        {
            let var = |v: &str| std::env::var_os(v);
            let globals = gitcode::Globals::from_env(&home, var);
            let facts = personscode::Facts::of(&self.place, &home, &globals, var);
            let root = normalize(&self.place.workspace.root);
            let no = personscode::why_not(&root, &facts);
            if let Some(no) = no.as_ref().filter(|no| no.unchecked) {
                // A bound on what was read ran out (rt5 A5): said once, as the box is made.
                eprintln!(
                    "agentsh: {} is no workspace: {}",
                    crate::text::sanitize::sanitize(&crate::text::path(&root)),
                    no.why
                );
            }
            place.to_mut().runs_elsewhere = no.map(|no| no.why);
        }
        if for_box {
            let roots = ["bin", "shims", "versions", "node-versions", "nvm.sh"];
            let not: Vec<PathBuf> = (self.place.tool_dirs.iter())
                .filter(|d| !roots.iter().any(|r| std::fs::symlink_metadata(d.join(r)).is_ok()))
                .cloned()
                .collect();
            place.to_mut().not_toolchains = not;
            place.to_mut().projects = projects(&self.place);
        }
        if for_box && self.place.workspace.git_dir.is_some() {
            place.to_mut().git_above = git_above(&normalize(&self.place.workspace.root));
        }
        (BoxSpec::build(&self.settings, &place, &self.own, &self.records, &self.name), for_box)
    }

    /// The roots as text: from the holder's record when one is kept for this box, else from
    /// the spec.
    pub fn roots(&self) -> &RootsText {
        match self.kept.as_ref().map(holder::Kept::roots) {
            Some(roots) => roots,
            None => self.roots.get_or_init(|| RootsText::of(self.spec())),
        }
    }

    /// The person's home, as the spec holds it.
    pub fn home(&self) -> Option<PathBuf> {
        self.place.home.as_deref().map(normalize)
    }

    pub fn network(&self) -> Network {
        self.settings.network
    }

    /// Where kept boxes are recorded and the box's proxy notes its connections (the spec's
    /// `records` and `net.records`), without building the spec.
    pub fn records(&self) -> &Path {
        &self.records
    }

    /// `sandbox.credentials` (the spec's `net.credentials`), without building the spec.
    pub fn credentials(&self) -> &[crate::policy::sandbox_settings::Credential] {
        &self.settings.credentials
    }

    /// Where the box's private places are kept between boxes of this workspace (the spec's
    /// `store`): from a kept box's record, without building the spec.
    pub fn store(&self) -> PathBuf {
        match self.kept.as_ref().and_then(holder::Kept::store) {
            Some(store) => store.to_path_buf(),
            None => self.spec().store.clone(),
        }
    }

    /// [`BoxSpec::kept_at`]: from a kept box's record where it names its store, so a command
    /// of an agent whose wrapper leaves a file in `/tmp` (Claude Code's, every command) builds
    /// no spec for it.
    pub fn kept_at(&self, path: &Path) -> Option<PathBuf> {
        match self.kept.as_ref().and_then(holder::Kept::store) {
            Some(store) => spec::kept_at(store, &spec::home_of(&self.place), path),
            None => self.spec().kept_at(path),
        }
    }

    /// Why the box hides `dir` (outside it), if it does: covered (agentsh's own directories,
    /// the system's secrets, `sandbox.denyRead`) or in a place hidden whole or kept private
    /// (homes, `/run`, the runtime directory), other than the temporary directories, of which
    /// the box has its own. `/tmp` and `/var/tmp` themselves, with no `denyRead`, build no spec.
    pub fn hides(&self, dir: &Path) -> Option<String> {
        let dir = normalize(dir);
        let temp = |p: &Path| spec::TEMP.iter().any(|t| p == Path::new(t));
        if temp(&dir) && self.settings.deny_read.is_empty() {
            return None;
        }
        let spec = self.spec();
        if let Sight::Covered(why) = spec.sight(&dir) {
            return Some(why);
        }
        let hidden = spec.hidden.iter().chain(&spec.private).filter(|r| !temp(&r.path)).find(|r| within(&dir, &r.path));
        hidden.map(|r| format!("{} is hidden in the sandbox", r.path.display()))
    }

    /// The record's name (a hash of everything the spec is built from).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a live holder keeps this box: it is known to work here.
    pub fn is_kept(&self) -> bool {
        self.kept.is_some()
    }

    pub(crate) fn place(&self) -> &Place {
        &self.place
    }

    /// Whether the kept box's holder noted links it removed from the git directory, to be told
    /// ([`gitlinks::Sweep`]); with no box kept, whether the last holder of this name did as it
    /// left (one without a watch sweeps last, `gitlinks::last_sweep`).
    pub fn holder_noted(&self) -> bool {
        match &self.kept {
            Some(kept) => kept.noted(),
            None => holder::noted(&self.records, &self.name),
        }
    }

    /// The workspace's git directory, where the box grants the workspace it is in: links a
    /// command makes there are removed when it ends ([`gitlinks::Sweep`]).
    pub fn git_dir(&self) -> Option<PathBuf> {
        let git = normalize(self.place.workspace.git_dir.as_deref()?);
        let root = crate::text::path(&normalize(&self.place.workspace.root));
        (self.roots().workspace.as_deref() == Some(root.as_str())).then_some(git)
    }

    /// The workspace's top level, where [`BoxPlan::git_dir`] is one: the worktree its index
    /// describes ([`gitreview::Before`]).
    pub fn git_worktree(&self) -> Option<PathBuf> {
        self.git_dir().map(|_| normalize(&self.place.workspace.root))
    }
}

/// The box's roots as text, as the judge's view of the box and the audit record name them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootsText {
    /// What a command may write: the roots that change something of the person's first
    /// (`write_len`: the workspace, `sandbox.writable`), then the box's private places, caches,
    /// devices and terminals. Shared by the judge's view and the audit record.
    pub writable: std::sync::Arc<[String]>,
    pub write_len: usize,
    /// The code paths kept read-only.
    pub read_only: Vec<String>,
    /// The workspace, where it is granted.
    pub workspace: Option<String>,
}

impl RootsText {
    pub fn of(spec: &BoxSpec) -> RootsText {
        let text = |r: &Root| crate::text::path(&r.path);
        let writable: Vec<String> = spec
            .write
            .iter()
            // Writes to the private home are not the person's: the judge asks about `~/.bashrc`.
            .chain(spec.private.iter().filter(|p| p.path != spec.home))
            .chain(&spec.caches)
            .chain(&spec.devices)
            .chain(&spec.ttys)
            .map(text)
            .collect();
        RootsText {
            writable: writable.into(),
            write_len: spec.write.len(),
            read_only: spec.read_only.iter().map(text).collect(),
            workspace: spec.workspace.as_deref().map(crate::text::path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abi_is_what_the_kernel_accepts() {
        // The version the kernel names against what its rulesets take, as the `landlock` crate
        // asks: a kernel with Landlock must never read as one without it.
        use landlock::{AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope};
        type Feature = fn(Ruleset) -> Result<Ruleset, landlock::RulesetError>;
        let checks: [(u8, Feature); 4] = [
            (1, |r| r.handle_access(AccessFs::Execute)),
            (3, |r| r.handle_access(AccessFs::Truncate)),
            (5, |r| r.handle_access(AccessFs::IoctlDev)),
            (6, |r| r.scope(Scope::Signal)),
        ];
        let abi = landlock_abi();
        for (needs, feature) in checks {
            let accepted = feature(Ruleset::default().set_compatibility(CompatLevel::HardRequirement)).is_ok();
            assert_eq!(abi.is_some_and(|a| a >= needs), accepted, "ABI {abi:?} against ABI {needs}'s feature");
        }
    }

    /// What a command that joins a kept box reads from its plan without building the spec
    /// (issue 25's speed) is what the spec would say.
    #[test]
    fn the_plans_records_and_credentials_are_the_specs() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            credentials: vec![crate::policy::sandbox_settings::Credential {
                host: "registry.example".into(),
                header: "Authorization".into(),
                value: "Bearer ${REGISTRY_TOKEN}".into(),
            }],
            ..Settings::default()
        };
        let records = dir.path().join("box");
        let plan = BoxPlan::new(&settings, Place::current(dir.path(), false), Vec::new(), records.clone());
        assert!(plan.spec.get().is_none(), "no spec is built by making the plan");
        assert_eq!(plan.records(), records.as_path());
        assert_eq!(plan.records(), plan.spec().net.records.as_path());
        assert_eq!(plan.credentials(), plan.spec().net.credentials.as_slice());
        assert_eq!(plan.credentials().len(), 1);
    }

    #[test]
    fn a_git_file_naming_a_directory_outside_is_not_the_workspaces_git_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: ../elsewhere/.git\n").unwrap();
        let w = Workspace::find(&ws.join("sub"));
        assert_eq!(w.root, ws);
        assert_eq!((w.git_dir, w.is_git), (None, true));
        assert_eq!(w.outside_git, Some(root.join("elsewhere/.git")));
        std::fs::write(ws.join(".git"), "gitdir: .git-modules/x\n").unwrap();
        assert_eq!(Workspace::find(&ws).git_dir, Some(ws.join(".git-modules/x")));
        // rt8 A1: nor one reached through a link in the workspace.
        std::fs::create_dir_all(root.join("other/.git")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), ws.join(".git-modules")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: .git-modules/.git\n").unwrap();
        assert_eq!(Workspace::find(&ws).git_dir, None);
        std::fs::create_dir_all(ws.join("real/.git")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: real/.git\n").unwrap();
        assert_eq!(Workspace::find(&ws).git_dir, Some(ws.join("real/.git")));
    }
}
