//! The box: the Landlock domain, carried where the kernel allows it by a user and mount
//! namespace of its own, that every command agentsh runs enters just before exec. It owns what
//! the box allows and how it is set up; it must not judge commands, read agentsh's config or
//! write records.
//!
//! The caller passes in the settings (`policy::sandbox_settings`), every fact about the machine
//! ([`Place`]) and agentsh's own directories, so the spec can be built and tested without them.
//!
//! The steps, each with one job:
//! - [`BoxSpec::build`] (pure): settings + place -> what the box allows, with where each part
//!   comes from (for `agentsh policy`, `check` and the audit record).
//! - [`BoxPlan`]: the gate's box, built only when needed: a command that joins namespaces kept
//!   for the same inputs (`super::kept`) takes the box's roots from their record instead.
//! - [`enter`] (irreversible), right before exec: after it this process cannot write agentsh's
//!   own files (the audit log).
//!   - `mount_box`: a user and mount namespace that cover every denied path with a mount, make
//!     `/dev` unopenable but for the granted devices, and bind the code paths (`.git/hooks`, ...)
//!     read-only. Landlock then needs one rule per root (about a dozen): this is the fast path.
//!   - Where the kernel refuses the namespaces, `plan` makes the same cuts with Landlock alone.
//!     Landlock grants by hierarchy and cannot take a subdirectory back, so a hierarchy that
//!     holds a denied path is granted entry by entry, leaving that path out ("every sibling
//!     except"): it lists directories, and costs a rule per sibling (a home of 80 entries: ~180).
//!   - The Landlock domain, with `no_new_privs`.
//!
//! Minimum Landlock ABI: [`MIN_ABI`] (3, Linux 6.2). Below it `truncate(2)` is not restricted, and a
//! confined command could empty agentsh's config, trust records or audit log. Later features are
//! used where the kernel has them and reported in [`Entered`]: ABI 4 TCP (required when the network
//! is off), 5 device ioctls, 6 signal and abstract-socket scoping.
//!
//! What the box does not hold, and why, is in SECURITY.md ("The sandbox").

use super::kept::{Joined, Kept};
pub use crate::policy::sandbox_settings::{Network, Settings};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// The oldest Landlock ABI the box runs on (see the module documentation).
pub const MIN_ABI: u8 = 3;

/// The newest ABI this module asks for. Features of later ABIs are not used until tested.
const TARGET: ABI = ABI::V7;

// ---------------------------------------------------------------------------------------------
// Place: the facts about this machine and this run that the spec is built from

/// Everything [`BoxSpec::build`] needs to know about the machine. [`Place::current`] gathers it;
/// tests write it out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub cwd: PathBuf,
    pub workspace: Workspace,
    /// `$HOME`, when absolute.
    pub home: Option<PathBuf>,
    /// `$TMPDIR`, when absolute.
    pub tmpdir: Option<PathBuf>,
    /// Environment overrides of cache locations (each absolute, or ignored).
    pub xdg_cache_home: Option<PathBuf>,
    pub cargo_home: Option<PathBuf>,
    pub gopath: Option<PathBuf>,
    pub gomodcache: Option<PathBuf>,
    pub gradle_user_home: Option<PathBuf>,
    /// The command keeps the terminal (agentsh's stdin is one): it may use it, ioctls included.
    pub keep_terminal: bool,
    /// Terminals that agentsh's stdout or stderr are (`/dev/pts/N`): the command may reopen them
    /// for writing (`echo x > /dev/stderr`), never read them.
    pub output_ttys: Vec<PathBuf>,
}

/// Where the command's project is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workspace {
    /// The git top-level containing the cwd, else the cwd.
    pub root: PathBuf,
    /// The git directory (`.git`, or where a worktree's or submodule's `.git` file points).
    pub git_dir: Option<PathBuf>,
    /// A linked worktree's common git directory (`commondir`): objects, refs, config, hooks.
    pub common_dir: Option<PathBuf>,
}

impl Place {
    /// Reads the environment and walks up from `cwd` for `.git`. A handful of system calls.
    pub fn current(cwd: &Path, keep_terminal: bool) -> Place {
        let abs = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let mut output_ttys = Vec::new();
        let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
        for (fd, out) in [(1, nix::unistd::isatty(stdout)), (2, nix::unistd::isatty(stderr))] {
            // isatty first: an ioctl costs less than a readlink through /proc.
            if out.unwrap_or(false)
                && let Ok(link) = std::fs::read_link(format!("/proc/self/fd/{fd}"))
                && link.starts_with("/dev/pts/")
                && !output_ttys.contains(&link)
            {
                output_ttys.push(link);
            }
        }
        Place {
            cwd: cwd.to_path_buf(),
            workspace: Workspace::find(cwd),
            home: crate::policy::dirs::home().map(Path::to_path_buf),
            tmpdir: abs("TMPDIR"),
            xdg_cache_home: abs("XDG_CACHE_HOME"),
            cargo_home: abs("CARGO_HOME"),
            gopath: abs("GOPATH"),
            gomodcache: abs("GOMODCACHE"),
            gradle_user_home: abs("GRADLE_USER_HOME"),
            keep_terminal,
            output_ttys,
        }
    }
}

impl Workspace {
    /// The git top-level containing `cwd` (found by walking up for `.git`, a directory or a
    /// worktree's `gitdir:` file), else `cwd` itself.
    pub fn find(cwd: &Path) -> Workspace {
        for dir in cwd.ancestors() {
            let dot_git = dir.join(".git");
            let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { continue };
            if meta.is_dir() {
                return Workspace { root: dir.to_path_buf(), git_dir: Some(dot_git), common_dir: None };
            }
            if meta.is_file() {
                // A linked worktree or a submodule: `gitdir: PATH`, relative to `dir`.
                let git_dir = std::fs::read_to_string(&dot_git)
                    .ok()
                    .and_then(|t| t.lines().next().and_then(|l| l.strip_prefix("gitdir:")).map(|p| dir.join(p.trim())));
                let common_dir = git_dir.as_ref().and_then(|g| {
                    let rel = std::fs::read_to_string(g.join("commondir")).ok()?;
                    Some(normalize(&g.join(rel.trim())))
                });
                return Workspace { root: dir.to_path_buf(), git_dir: git_dir.map(|g| normalize(&g)), common_dir };
            }
        }
        Workspace { root: cwd.to_path_buf(), git_dir: None, common_dir: None }
    }
}

/// `a/b/../c` -> `a/c`, lexically (for paths read from git's files). A path that is already
/// normal (most are) is copied without parsing its components.
fn normalize(p: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    let odd = |seg: &[u8]| seg.is_empty() || seg == b"." || seg == b"..";
    if b == b"/" || (b.first() == Some(&b'/') && !b[1..].split(|c| *c == b'/').any(odd)) {
        return p.to_path_buf();
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `base/rel` for a normalized `base` and a relative `rel` without `.` or `..`, in one
/// allocation: `Path::join` parses components, and the spec joins about fifty paths per command.
pub(super) fn join(base: &Path, rel: &str) -> PathBuf {
    let base = base.as_os_str();
    let mut out = std::ffi::OsString::with_capacity(base.len() + 1 + rel.len());
    out.push(base);
    if base.len() > 1 {
        out.push("/");
    }
    out.push(rel);
    out.into()
}

// ---------------------------------------------------------------------------------------------
// BoxSpec: what the box allows

/// Why a path is in the box. Shown by `agentsh policy`, `check` and the audit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Read and execute everywhere, less what is denied.
    System,
    Workspace,
    /// The git directory of a linked worktree or submodule, outside the workspace.
    GitDir,
    Temp,
    Cache,
    Device,
    /// The terminal a command that keeps it may use (ioctls included).
    Terminal,
    /// The terminal agentsh's output goes to: reopened for writing only.
    Output,
    /// `sandbox.writable` / `sandbox.denyRead`.
    Setting,
    /// agentsh's own config, state, data and runtime directories.
    Agentsh,
    /// A default credential store.
    Credential,
    /// A place the person's own tools run code from (`.git/hooks`, `.git/config`, `.agents`).
    CodePath,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Root {
    pub path: PathBuf,
    pub from: Origin,
    /// The config file that named it (`Origin::Setting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Root {
    fn new(path: impl Into<PathBuf>, from: Origin) -> Root {
        Root { path: path.into(), from, source: None }
    }
}

/// A path a command may neither read nor write.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Denied {
    pub path: PathBuf,
    pub from: Origin,
    /// The config file that named it (`Origin::Setting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Names inside it that stay readable (`*.pub`, `known_hosts` in `~/.ssh`): exact, or `*` and
    /// a suffix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
}

/// A path the box does not grant although it would have, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Refused {
    pub path: PathBuf,
    pub why: String,
}

/// What the box allows. Built by [`BoxSpec::build`]; serializable, so agentsh can hand it to the
/// child it re-spawns to run a supervised command (one argv string).
///
/// Paths that do not exist when the box is entered are skipped; nothing is created but a missing
/// `.git/hooks`, which would otherwise be free to create.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BoxSpec {
    /// The workspace, granted unless it is in `refused`.
    pub workspace: PathBuf,
    /// Read and execute (`/`), less `deny` and `/dev`.
    pub read: Vec<Root>,
    /// Every access right, less `deny`; a root that holds `$HOME` does not grant inside it.
    pub write: Vec<Root>,
    /// Devices: read, write and device ioctls.
    pub devices: Vec<Root>,
    /// Terminals agentsh writes to: write only, no ioctls.
    pub outputs: Vec<Root>,
    /// Fixed when the box is entered: a denied path made later (a new `~/.aws`, a new key in
    /// `~/.ssh`) is not covered in a box already running, and in the Landlock-only fallback a new
    /// entry of a split parent (`~/.newtool`) is not readable in it; the next command's box
    /// covers both. A running box cannot make either: home is read-only inside it.
    pub deny: Vec<Denied>,
    /// Inside `write`, made read-only with bind mounts in a private mount namespace.
    pub read_only: Vec<Root>,
    pub network: Network,
    pub keep_terminal: bool,
    /// Refuse to run when the namespaces cannot be made (set it when the judge counts on
    /// `read_only`). Otherwise their absence is reported in [`Entered::namespaces`].
    pub require_namespaces: bool,
    /// Landlock alone, as where the kernel refuses the namespaces: for the tests of that
    /// fallback, which hand agentsh's internal child a spec with it set.
    #[serde(default)]
    pub landlock_only: bool,
    pub refused: Vec<Refused>,
    /// `$HOME`: never writable through a root that holds it (the workspace or temp directory
    /// being `/tmp` while home is `/tmp/h`).
    pub home: Option<PathBuf>,
    /// Where the records of kept namespaces go (agentsh's state directory, `box/`): see
    /// [`super::kept`]. `None`: every command makes its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<PathBuf>,
    /// The name of this box's record there ([`BoxPlan`]: a hash of what the spec was built from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_as: Option<String>,
}

/// Per-user caches that build and package tools write, relative to home unless an environment
/// variable moves them. Chosen from what the tools write on a first build; never a directory the
/// person's own tools load code or settings from (`~/.cargo/bin`, `~/.cargo/config.toml`,
/// `~/.rustup`, `~/.gradle/init.d`, `~/.m2/settings.xml`).
const HOME_CACHES: &[&str] = &[
    ".npm",        // npm's cache and its _logs (written on every run)
    ".yarn/berry", // yarn 2+ global cache
    ".local/share/pnpm/store",
    ".m2/repository",     // maven
    ".bun/install/cache", // bun
    ".nuget/packages",    // dotnet
    ".ccache",            // ccache before 4.0 (later: ~/.cache/ccache)
];

/// Under `$CARGO_HOME` (`~/.cargo`): downloads and their locks. Not `bin/` or `config.toml`.
const CARGO_CACHES: &[&str] = &["registry", "git", ".package-cache", ".package-cache-mutate", ".global-cache"];

/// Under `$GRADLE_USER_HOME` (`~/.gradle`). Not `gradle.properties` (credentials) or `init.d`.
const GRADLE_CACHES: &[&str] = &["caches", "wrapper", "daemon", "native", ".tmp"];

/// Default credential stores, relative to home. Neither readable nor writable in the box.
const CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".docker/config.json",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gcloud",
    ".azure",
    ".password-store",
    ".local/share/keyrings",
    ".pgpass",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".gradle/gradle.properties",
    ".m2/settings-security.xml",
    // Browser profiles: cookies and saved passwords.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
];

/// What stays readable in `~/.ssh`: public keys and host keys are not secrets, and ssh and git
/// read `known_hosts`.
const SSH_READABLE: &[&str] = &["*.pub", "known_hosts", "known_hosts.old"];

/// Devices every command may read, write and ioctl.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// The terminal, for a command that keeps it (an editor, a pager, a REPL, `script`).
const TERMINAL: &[&str] = &["/dev/tty", "/dev/ptmx", "/dev/pts"];

/// Never a workspace or temp directory: writing there is writing the system.
const SYSTEM_TREES: &[&str] = &["/etc", "/dev", "/proc", "/sys", "/boot", "/run", "/usr", "/bin", "/sbin", "/lib"];

impl BoxSpec {
    /// What the box allows for a command run at `place` with `settings`. Pure: it reads nothing.
    /// `own` are agentsh's own directories (config, state, data, runtime, the approval queue).
    pub fn build(settings: &Settings, place: &Place, own: &[PathBuf]) -> BoxSpec {
        // Normalized, as the planner compares paths byte-wise.
        let norm = |p: &Option<PathBuf>| p.as_deref().map(normalize);
        let home = norm(&place.home);
        let in_home = |rel: &str| home.as_ref().map(|h| join(h, rel));
        let cargo_home = norm(&place.cargo_home).or_else(|| in_home(".cargo"));
        let mut refused = Vec::new();
        let mut write = Vec::new();

        // A workspace that is `/`, a top-level directory, a system tree, or home or what holds
        // it would let a command rewrite the system or `~/.bashrc`: not granted. A temp
        // directory may hold home (`/tmp/h` in CI): home is cut out of it (see `plan`).
        let too_broad = |p: &Path, workspace: bool| -> Option<String> {
            if p.as_os_str() == "/" {
                return Some("it is /".into());
            }
            // Byte-wise (normalized paths): `Path`'s comparisons parse components, for each root.
            if home.as_ref().is_some_and(|h| h.as_os_str() == p.as_os_str() || (workspace && within(h, p))) {
                return Some("it is the home directory or holds it".into());
            }
            if workspace && top_level(p) {
                return Some("it is a top-level directory".into());
            }
            if workspace && SYSTEM_TREES.iter().any(|s| within(p, Path::new(s))) {
                return Some("it is a system directory".into());
            }
            None
        };
        let grant = |path: PathBuf, from: Origin, write: &mut Vec<Root>, refused: &mut Vec<Refused>| match too_broad(
            &path,
            matches!(from, Origin::Workspace | Origin::GitDir),
        ) {
            Some(why) => refused.push(Refused { path, why }),
            None => {
                if !write.iter().any(|r: &Root| r.path.as_os_str() == path.as_os_str()) {
                    write.push(Root::new(path, from));
                }
            }
        };

        let found = Workspace {
            root: normalize(&place.workspace.root),
            git_dir: norm(&place.workspace.git_dir),
            common_dir: norm(&place.workspace.common_dir),
        };
        // A repository too broad to grant that holds the current directory (home kept in git,
        // as some keep their dotfiles): the directory itself is the workspace, as where there is
        // no repository; that repository's git directories are not granted.
        let cwd = normalize(&place.cwd);
        let ws = &match too_broad(&found.root, true) {
            Some(why) if found.root != cwd && too_broad(&cwd, true).is_none() => {
                refused.push(Refused {
                    path: found.root,
                    why: format!("the git top-level, but {why}: the current directory is the workspace instead"),
                });
                Workspace { root: cwd, git_dir: None, common_dir: None }
            }
            _ => found,
        };
        let workspace_ok = too_broad(&ws.root, true).is_none();
        grant(ws.root.clone(), Origin::Workspace, &mut write, &mut refused);
        let mut read_only = Vec::new();
        if workspace_ok {
            // git writes objects, refs and the index into a worktree's git directories.
            for dir in [&ws.git_dir, &ws.common_dir].into_iter().flatten() {
                if !within(dir, &ws.root) {
                    grant(dir.clone(), Origin::GitDir, &mut write, &mut refused);
                }
            }
            // What the person's own git runs later, unconfined: a confined command must not plant it.
            for dir in [&ws.git_dir, &ws.common_dir].into_iter().flatten() {
                for name in ["hooks", "config"] {
                    let path = join(dir, name);
                    if !read_only.iter().any(|r: &Root| r.path.as_os_str() == path.as_os_str()) {
                        read_only.push(Root::new(path, Origin::CodePath));
                    }
                }
            }
            read_only.push(Root::new(join(&ws.root, ".agents"), Origin::CodePath));
        }

        for t in [norm(&place.tmpdir), Some("/tmp".into()), Some("/var/tmp".into())].into_iter().flatten() {
            grant(t, Origin::Temp, &mut write, &mut refused);
        }
        write.push(Root::new("/dev/shm", Origin::Temp));

        let cache_home = norm(&place.xdg_cache_home).or_else(|| in_home(".cache"));
        let gopath = norm(&place.gopath).or_else(|| in_home("go"));
        let gomodcache = norm(&place.gomodcache).or_else(|| gopath.as_ref().map(|g| join(g, "pkg/mod")));
        let gradle = norm(&place.gradle_user_home).or_else(|| in_home(".gradle"));
        let mut caches: Vec<PathBuf> = Vec::new();
        caches.extend(cache_home);
        caches.extend(HOME_CACHES.iter().filter_map(|c| in_home(c)));
        caches.extend(cargo_home.iter().flat_map(|c| CARGO_CACHES.iter().map(|n| join(c, n))));
        caches.extend(gomodcache);
        caches.extend(gopath.map(|g| join(&g, "pkg/sumdb")));
        caches.extend(gradle.iter().flat_map(|g| GRADLE_CACHES.iter().map(move |n| join(g, n))));
        for c in caches {
            grant(c, Origin::Cache, &mut write, &mut refused);
        }

        for w in &settings.writable {
            let source = Some(w.source.clone());
            match expand(Path::new(&w.path), home.as_deref()) {
                // The person asked for it: only `/` is refused (every denied path would split it).
                Some(path) if path.parent().is_some() => {
                    if !write.iter().any(|r| r.path.as_os_str() == path.as_os_str()) {
                        write.push(Root { path, from: Origin::Setting, source });
                    }
                }
                Some(path) => refused.push(Refused { path, why: "sandbox.writable cannot be /".into() }),
                None => refused.push(Refused {
                    path: w.path.clone().into(),
                    why: "sandbox.writable entries must be absolute or start with ~/".into(),
                }),
            }
        }

        let denied = |path: PathBuf, from: Origin| Denied { path, from, source: None, except: vec![] };
        let mut deny: Vec<Denied> = own.iter().map(|p| denied(normalize(p), Origin::Agentsh)).collect();
        for c in CREDENTIALS {
            let Some(path) = in_home(c) else { continue };
            let mut d = denied(path, Origin::Credential);
            if *c == ".ssh" {
                d.except = SSH_READABLE.iter().map(|s| s.to_string()).collect();
            }
            deny.push(d);
        }
        // crates.io tokens.
        for c in ["credentials.toml", "credentials"] {
            if let Some(cargo) = &cargo_home {
                deny.push(denied(join(cargo, c), Origin::Credential));
            }
        }
        for d in &settings.deny_read {
            match expand(Path::new(&d.path), home.as_deref()) {
                Some(path) => deny.push(Denied { source: Some(d.source.clone()), ..denied(path, Origin::Setting) }),
                None => refused.push(Refused {
                    path: d.path.clone().into(),
                    why: "sandbox.denyRead entries must be absolute or start with ~/ (not applied)".into(),
                }),
            }
        }

        let mut devices: Vec<Root> = DEVICES.iter().map(|d| Root::new(*d, Origin::Device)).collect();
        if place.keep_terminal {
            devices.extend(TERMINAL.iter().map(|d| Root::new(*d, Origin::Terminal)));
        }
        let outputs = if place.keep_terminal {
            Vec::new()
        } else {
            place.output_ttys.iter().map(|p| Root::new(p.clone(), Origin::Output)).collect()
        };

        BoxSpec {
            workspace: ws.root.clone(),
            read: vec![Root::new("/", Origin::System)],
            write,
            devices,
            outputs,
            deny,
            read_only,
            network: settings.network,
            keep_terminal: place.keep_terminal,
            require_namespaces: false,
            landlock_only: false,
            refused,
            home,
            keep: None,
            kept_as: None,
        }
    }
}

/// A box to enter, as the gate plans it: what its spec is built from, the spec when something
/// needs it, and the record of namespaces kept for this box, if any. A command that joins them
/// needs no spec: the record names the roots (for the judge and the audit record) and its holder
/// has the finished ruleset, so the spec is never built (about 0.02 ms a command: building it,
/// its text for the judge, its hash; docs/BENCHMARKS.md).
pub struct BoxPlan {
    settings: Settings,
    place: Place,
    own: Vec<PathBuf>,
    keep: Option<PathBuf>,
    name: String,
    spec: std::sync::OnceLock<BoxSpec>,
    roots: std::sync::OnceLock<RootsText>,
    /// This box's record, with a ruleset to take and the roots' text: the fast path.
    kept: Option<super::kept::Record>,
}

impl std::fmt::Debug for BoxPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxPlan").field("place", &self.place).field("name", &self.name).finish_non_exhaustive()
    }
}

impl BoxPlan {
    /// `keep`: where records of kept namespaces are (`None`: every command makes its own). Reads
    /// the record of this box there, if any; what it vouches for is checked when joining.
    pub fn new(settings: &Settings, place: Place, own: Vec<PathBuf>, keep: Option<PathBuf>) -> BoxPlan {
        use std::os::unix::ffi::OsStrExt;
        let mut k = super::kept::Key::new();
        // Every list after its length, every item after its own: no two inputs hash alike.
        for s in [&settings.writable, &settings.deny_read] {
            k.count(s.len());
            for w in s {
                k.item(w.path.as_bytes());
                k.item(w.source.as_bytes());
            }
        }
        k.item(settings.network.as_str().as_bytes());
        let p = &place;
        for path in
            [Some(&p.cwd), Some(&p.workspace.root), p.workspace.git_dir.as_ref(), p.workspace.common_dir.as_ref()]
        {
            k.path(path.map(PathBuf::as_path));
        }
        for path in
            [&p.home, &p.tmpdir, &p.xdg_cache_home, &p.cargo_home, &p.gopath, &p.gomodcache, &p.gradle_user_home]
        {
            k.path(path.as_deref());
        }
        k.count(usize::from(p.keep_terminal));
        for paths in [&p.output_ttys, &own] {
            k.count(paths.len());
            for path in paths {
                k.item(path.as_os_str().as_bytes());
            }
        }
        k.path(keep.as_deref());
        let name = k.finish();
        // Its roots are the spec's whether or not the namespaces can still be joined (the name
        // hashes what the spec is built from): that is checked right before joining.
        let kept = keep
            .as_ref()
            .and_then(|dir| super::kept::Record::at(dir, &name))
            .filter(|r| r.has_ruleset() && r.roots.is_some());
        let (spec, roots) = (std::sync::OnceLock::new(), std::sync::OnceLock::new());
        BoxPlan { settings: settings.clone(), place, own, keep, name, spec, roots, kept }
    }

    /// The spec, built the first time it is asked for.
    pub fn spec(&self) -> &BoxSpec {
        self.spec.get_or_init(|| {
            let mut spec = BoxSpec::build(&self.settings, &self.place, &self.own);
            spec.keep = self.keep.clone();
            spec.kept_as = Some(self.name.clone());
            spec
        })
    }

    /// The roots as text: from the record when namespaces are kept for this box, else from the
    /// spec.
    pub fn roots(&self) -> &RootsText {
        match self.kept.as_ref().and_then(|r| r.roots.as_ref()) {
            Some(roots) => roots,
            None => self.roots.get_or_init(|| RootsText::of(self.spec())),
        }
    }

    /// `$HOME`, as the spec holds it.
    pub fn home(&self) -> Option<PathBuf> {
        self.place.home.as_deref().map(normalize)
    }

    pub fn network(&self) -> Network {
        self.settings.network
    }
}

/// The box's roots as text, as the judge's view of the box and the audit record name them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootsText {
    /// What a command may write: the spec's `write` roots first (`write_len` of them), then its
    /// devices and the terminals it writes to. Shared by the judge's view and the audit record.
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
        RootsText {
            writable: spec.write.iter().chain(&spec.devices).chain(&spec.outputs).map(text).collect::<Vec<_>>().into(),
            write_len: spec.write.len(),
            read_only: spec.read_only.iter().map(text).collect(),
            workspace: spec.write.iter().find(|r| r.from == Origin::Workspace).map(text),
        }
    }
}

/// `~/x` -> home/x; absolute paths as they are; anything else `None`.
fn expand(p: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Ok(rest) = p.strip_prefix("~") {
        return home.map(|h| normalize(&h.join(rest)));
    }
    p.is_absolute().then(|| normalize(p))
}

// ---------------------------------------------------------------------------------------------
// Plan: the spec as Landlock rules

fn read_access() -> BitFlags<AccessFs> {
    AccessFs::Execute | AccessFs::ReadFile | AccessFs::ReadDir
}

/// Every right but making device files: no build needs one, and a block device made in the
/// workspace by a process that still holds CAP_MKNOD (root, where no namespace was made) would
/// open the disk itself.
fn all_access() -> BitFlags<AccessFs> {
    AccessFs::from_all(TARGET) & !(AccessFs::MakeBlock | AccessFs::MakeChar)
}

/// A part of a granted hierarchy that loses some rights.
#[derive(Clone, Debug, PartialEq)]
struct Cut {
    path: PathBuf,
    removes: BitFlags<AccessFs>,
    /// Applies only to roots that strictly hold it (home is not writable through `/tmp`, but
    /// `~/.cache` is).
    from_above_only: bool,
    except: Vec<String>,
}

/// One Landlock rule: a path and the rights beneath it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    pub path: PathBuf,
    pub access: BitFlags<AccessFs>,
    /// Open following symbolic links (roots from the spec) or not (entries found by listing).
    pub follow: bool,
}

/// What the spec takes away from its roots: denied paths, home from any root that holds it, and
/// `/dev` from `/`.
fn cuts(spec: &BoxSpec) -> Vec<Cut> {
    let all = all_access();
    let mut cuts: Vec<Cut> = spec
        .deny
        .iter()
        .map(|d| Cut { path: normalize(&d.path), removes: all, from_above_only: false, except: d.except.clone() })
        .collect();
    if let Some(home) = &spec.home {
        cuts.push(Cut { path: normalize(home), removes: all & !read_access(), from_above_only: true, except: vec![] });
    }
    // Raw disks, /dev/mem and the person's terminals: only the devices listed are granted.
    cuts.push(Cut { path: "/dev".into(), removes: all, from_above_only: true, except: vec![] });
    cuts
}

/// Whether `c` takes something away inside the root `root` (strictly beneath it).
fn cuts_inside(c: &Cut, root: &Path) -> bool {
    within(&c.path, root) && c.path != root
}

/// The Landlock rules for a spec; changes nothing. `mounted`: [`mount_box`] made the cuts
/// (denied paths covered, home read-only, devices other than the granted ones unopenable), so
/// every root is one rule. Otherwise the cuts are made by splitting: this lists directories.
pub(crate) fn plan(spec: &BoxSpec, mounted: bool) -> Result<Vec<Rule>, BoxError> {
    let all = all_access();
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    let devices = spec.devices.iter().map(|d| Rule { path: d.path.clone(), access: device, follow: true });
    if mounted {
        let read = spec.read.iter().map(|r| Rule { path: r.path.clone(), access: read_access(), follow: true });
        let write = spec.write.iter().map(|r| Rule { path: r.path.clone(), access: all, follow: true });
        // `/dev` is mounted nodev but for the granted devices, bound on themselves first: no
        // other device there can be opened, so one rule grants them all (one rule instead of
        // five: each costs four system calls).
        let in_dev = |d: &&Root| within(&d.path, Path::new("/dev"));
        let dev =
            spec.devices.iter().any(|d| in_dev(&d)).then(|| Rule { path: "/dev".into(), access: device, follow: true });
        let others = spec.devices.iter().filter(|d| !in_dev(d));
        let others = others.map(|d| Rule { path: d.path.clone(), access: device, follow: true });
        return Ok(read.chain(write).chain(dev).chain(others).collect());
    }
    let mut cuts = cuts(spec);
    let mut planner = Planner { listings: BTreeMap::new(), rules: Vec::new(), found: Vec::new(), covered: Vec::new() };
    // Denied paths reached through a symbolic link are denied at the link's target too; a new
    // target can change what earlier roots had to split, so plan again (bounded).
    for _ in 0..8 {
        planner.rules.clear();
        // A cut inside a writable root splits it, and a split root loses the right to create
        // entries in itself: only for paths that exist (a missing one cannot be created: its
        // parent is cut or read-only too).
        let inside_write = |c: &Cut| spec.write.iter().any(|w| cuts_inside(c, &w.path));
        let write_cuts: Vec<Cut> =
            cuts.iter().filter(|c| !inside_write(c) || std::fs::symlink_metadata(&c.path).is_ok()).cloned().collect();
        // Writable roots granted whole: reading them needs no rules of its own.
        planner.covered = spec
            .write
            .iter()
            .map(|w| w.path.clone())
            .filter(|w| !write_cuts.iter().any(|c| cuts_inside(c, w) || (!c.from_above_only && within(w, &c.path))))
            .collect();
        for r in &spec.read {
            planner.root(&r.path, read_access(), &cuts);
        }
        planner.covered.clear();
        for r in &spec.write {
            planner.root(&r.path, all, &write_cuts);
        }
        if planner.found.iter().all(|c| cuts.contains(c)) {
            let mut rules = std::mem::take(&mut planner.rules);
            // Listing works everywhere (`ls ~`, `find /`): names only, not contents.
            rules.push(Rule { path: "/".into(), access: AccessFs::ReadDir.into(), follow: true });
            rules.extend(devices);
            rules.extend(spec.outputs.iter().map(|d| Rule {
                path: d.path.clone(),
                access: AccessFs::WriteFile.into(),
                follow: true,
            }));
            return Ok(rules);
        }
        let new: Vec<Cut> = planner.found.drain(..).filter(|c| !cuts.contains(c)).collect();
        cuts.extend(new);
    }
    Err(BoxError::Failed("too many symbolic links lead into denied paths".into()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    Link,
    Other,
}

struct Planner {
    /// Directory listings, kept across re-plans. `None`: could not be listed.
    listings: BTreeMap<PathBuf, Option<Vec<(OsString, Kind)>>>,
    rules: Vec<Rule>,
    /// Cuts discovered behind symbolic links during this pass.
    found: Vec<Cut>,
    /// Writable roots granted whole, during the read pass.
    covered: Vec<PathBuf>,
}

impl Planner {
    fn root(&mut self, root: &Path, access: BitFlags<AccessFs>, cuts: &[Cut]) {
        let relevant: Vec<&Cut> = cuts.iter().filter(|c| !c.from_above_only || cuts_inside(c, root)).collect();
        self.walk(root, access, &relevant, true);
    }

    /// A path granted twice (read through `/`, write as a root) is two rules: Landlock joins
    /// them, and that costs less than keeping a map.
    fn add(&mut self, path: &Path, access: BitFlags<AccessFs>, follow: bool) {
        self.rules.push(Rule { path: path.to_path_buf(), access, follow });
    }

    fn list(&mut self, dir: &Path) -> Option<Vec<(OsString, Kind)>> {
        self.listings
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let entries = std::fs::read_dir(dir).ok()?;
                let mut out = Vec::new();
                for e in entries {
                    let e = e.ok()?;
                    // d_type from getdents; std falls back to lstat only where the fs gives none.
                    let t = e.file_type().ok()?;
                    let kind = if t.is_symlink() {
                        Kind::Link
                    } else if t.is_dir() {
                        Kind::Dir
                    } else {
                        Kind::Other
                    };
                    out.push((e.file_name(), kind));
                }
                Some(out)
            })
            .clone()
    }

    fn walk(&mut self, path: &Path, access: BitFlags<AccessFs>, cuts: &[&Cut], follow: bool) {
        use std::os::unix::ffi::OsStrExt;
        if self.covered.iter().any(|c| c == path) {
            return;
        }
        let mut left = access;
        let mut except: Vec<String> = Vec::new();
        for c in cuts.iter().filter(|c| within(path, &c.path)) {
            left &= !c.removes;
            if c.path.as_os_str() == path.as_os_str() {
                except.extend(c.except.iter().cloned());
            }
        }
        let below: Vec<&Cut> =
            cuts.iter().copied().filter(|c| cuts_inside(c, path) && !(c.removes & left).is_empty()).collect();
        if !except.is_empty() {
            // `~/.ssh`: its public keys stay readable.
            let keep = access & read_access();
            for (name, kind) in self.list(path).unwrap_or_default() {
                let n = name.to_string_lossy();
                if kind != Kind::Link && except.iter().any(|pat| matches(pat, &n)) {
                    self.add(&path.join(&name), keep, false);
                }
            }
        }
        if left.is_empty() {
            return;
        }
        if below.is_empty() {
            self.add(path, left, follow);
            return;
        }
        // Grant every entry but the way to what is cut. A directory that cannot be listed is
        // not granted at all: less access, never more.
        let Some(entries) = self.list(path) else { return };
        let leads: Vec<&[u8]> = below.iter().filter_map(|c| next_name(&c.path, path)).collect();
        // Cuts below that do not exist (no `~/.aws` here) need no split.
        if !entries.iter().any(|(n, _)| leads.contains(&n.as_bytes())) {
            self.add(path, left, follow);
            return;
        }
        for (name, kind) in entries {
            let child = path.join(&name);
            let leads_to_cut = leads.contains(&name.as_bytes());
            match kind {
                // A link is not followed: what it points to is governed where it is. A link on
                // the way to a cut (`~/.ssh -> dotfiles/ssh`) moves that cut to its target.
                Kind::Link => {
                    if leads_to_cut && let Ok(target) = std::fs::canonicalize(&child) {
                        for c in below.iter().filter(|c| within(&c.path, &child)) {
                            let rest = c.path.strip_prefix(&child).unwrap_or(Path::new(""));
                            let moved = Cut { path: normalize(&target.join(rest)), ..(*c).clone() };
                            if !below.iter().any(|b| **b == moved) && !self.found.contains(&moved) {
                                self.found.push(moved);
                            }
                        }
                    }
                }
                // A directory on the way to a cut, or a file that is itself cut (`~/.netrc`).
                _ if leads_to_cut => self.walk(&child, left, &below, false),
                // A writable root granted whole already grants reading it.
                _ if self.covered.contains(&child) => {}
                _ => self.add(&child, left, false),
            }
        }
    }
}

/// `p` is a top-level directory (`/srv`). Byte-wise, for a normalized absolute path.
fn top_level(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    b.len() > 1 && b[0] == b'/' && !b[1..].contains(&b'/')
}

/// `p` is `root` or beneath it. Byte-wise, for normalized absolute paths (see [`normalize`]):
/// `Path::starts_with` parses components, and the planner asks this for every entry it lists.
fn within(p: &Path, root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (p.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    p.starts_with(r) && (p.len() == r.len() || r == b"/" || p[r.len()] == b'/')
}

/// The name of the first component of `p` beneath `root`, when `p` is strictly beneath it.
fn next_name<'a>(p: &'a Path, root: &Path) -> Option<&'a [u8]> {
    use std::os::unix::ffi::OsStrExt;
    let (pb, r) = (p.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    if !within(p, root) || pb.len() == r.len() {
        return None;
    }
    let rest = &pb[r.len()..];
    let rest = rest.strip_prefix(b"/").unwrap_or(rest);
    rest.split(|b| *b == b'/').next()
}

/// `*.pub` matches by suffix; anything else exactly.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix) && name.len() > suffix.len(),
        None => pattern == name,
    }
}

// ---------------------------------------------------------------------------------------------
// Probe, enter

/// What this kernel offers the box. Cheap: a few system calls and small /proc reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Support {
    /// The Landlock ABI, `None` without Landlock (not built in, or not enabled at boot).
    pub landlock_abi: Option<u8>,
    /// Whether an unprivileged user plus mount namespace can be made (for read-only code paths,
    /// and for root to shed its capabilities).
    pub namespaces: Namespaces,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "why", rename_all = "lowercase")]
pub enum Namespaces {
    Available,
    Unavailable(String),
    /// A seccomp filter is in force: it may refuse `unshare`; only trying tells.
    Unknown(String),
}

impl Support {
    /// Whether the box can be entered here at all.
    pub fn boxable(&self) -> bool {
        self.landlock_abi.is_some_and(|a| a >= MIN_ABI)
    }
}

pub fn probe() -> Support {
    Support { landlock_abi: landlock_abi(), namespaces: probe_namespaces() }
}

/// Whether the kernel has Landlock at [`MIN_ABI`] or later.
pub fn available() -> bool {
    landlock_abi().is_some_and(|abi| abi >= MIN_ABI)
}

/// The kernel's Landlock ABI, up to 7, asked once per process (the gate, the judge's view, the
/// audit record and `enter` all ask).
pub fn landlock_abi() -> Option<u8> {
    static ABI: std::sync::OnceLock<Option<u8>> = std::sync::OnceLock::new();
    *ABI.get_or_init(probe_abi)
}

fn probe_abi() -> Option<u8> {
    // The kernel names its ABI; features past 7 are not used, so a newer one counts as 7.
    super::landlock_fd::abi_version().map(|v| v.min(7) as u8)
}

/// Whether a user and mount namespace can be made, as far as the system's settings tell.
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

/// What [`enter`] applied, for the audit record and tests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entered {
    /// The Landlock ABI in force.
    pub abi: u8,
    pub rules: usize,
    pub network: Network,
    /// Signals and abstract unix sockets cannot reach outside the box (ABI 6).
    pub scoped: bool,
    /// Device ioctls are restricted to the devices granted (ABI 5).
    pub ioctl_restricted: bool,
    /// The namespaces carry the cuts (see [`mount_box`]); `false`: Landlock alone, by splitting.
    pub mounted: bool,
    /// The namespaces were joined from an earlier command's holder instead of made
    /// (`super::kept`).
    pub kept: bool,
    /// `None`: the command runs in its own user and mount namespace. `Some(why)`: they could
    /// not be made (the box then holds with Landlock alone, but code paths stay writable, and
    /// root keeps its capabilities).
    pub namespaces: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoxError {
    /// The kernel lacks what the box needs.
    Unsupported(String),
    /// Setting it up failed; nothing may run.
    Failed(String),
}

impl std::fmt::Display for BoxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoxError::Unsupported(m) | BoxError::Failed(m) => f.write_str(m),
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

/// Confines this process for good: namespaces and bind mounts where needed, then the Landlock
/// domain with `no_new_privs`. Call it just before exec, when the process is single-threaded (a
/// user namespace cannot be made otherwise). Fails closed: on `Err` the caller must not run the
/// command (the process may be half set up).
pub fn enter(spec: &BoxSpec) -> Result<Entered, BoxError> {
    if !available() {
        return Err(BoxError::Unsupported(match landlock_abi() {
            Some(abi) => format!("this kernel's Landlock ABI is {abi}; the sandbox needs {MIN_ABI} (Linux 6.2)"),
            None => "this kernel has no Landlock (not built in, or not enabled at boot: lsm=)".into(),
        }));
    }
    for p in spec.write.iter().chain(&spec.read).map(|r| &r.path).chain(spec.deny.iter().map(|d| &d.path)) {
        if !p.is_absolute() {
            return Err(BoxError::Failed(format!("{} is not an absolute path", p.display())));
        }
    }
    let failed = |what: &str, e: &dyn std::fmt::Display| BoxError::Failed(format!("{what}: {e}"));

    // Joining moves the working directory to `/`, and making the namespaces keeps it on the
    // directory as it was before the mounts: both change back by path, so it is looked up in
    // the new mounts (a working directory inside a covered path would reach what it hides).
    let cwd = std::env::current_dir().ok();
    // Namespaces kept by an earlier command with this box (see `kept`), joined only while what
    // their mounts and rules were made from is unchanged, with the Landlock ruleset that
    // command finished: the fast path.
    let kept = if spec.landlock_only { None } else { Kept::of(spec) };
    let joined = match (&kept, &cwd) {
        (Some(k), Some(cwd)) => k.join().map(|j| back(cwd).map(|()| j)).transpose()?,
        _ => None,
    };
    let joined = match joined {
        Some((Joined { ruleset: Some(ruleset), rules }, _)) => return restrict_joined(ruleset, rules, spec.network),
        // Joined without the holder's ruleset: the rules are added below.
        joined => joined.map(|(j, _)| j),
    };

    // The namespaces first: whether the mounts made the cuts decides the Landlock rules.
    // Nothing here touches agentsh's own files until they are covered, last.
    let protect = code_paths(spec);
    let names = spec.home.as_deref().and_then(HomeNames::list);
    // What the record will vouch for, looked at before the mounts change what paths show.
    let watched = kept.as_ref().filter(|_| joined.is_none()).map(|_| watch(spec));
    let made = if spec.landlock_only {
        Err("not used (landlock_only)".to_string())
    } else if joined.is_some() {
        // Joined without the holder's ruleset: the rules are added below.
        Ok(None)
    } else {
        let store = kept.as_ref().and_then(Kept::store);
        mount_box(spec, &protect, &names).map(|()| store)
    };
    let (namespaces, mounted, store) = match made {
        Ok(store) => (None, true, store),
        Err(why) if spec.require_namespaces => {
            return Err(BoxError::Failed(format!("cannot make the sandbox's namespaces: {why}")));
        }
        // Landlock alone holds the box, at more rules; `.git/hooks` and the rest stay writable.
        Err(why) => (Some(why), false, None),
    };
    if let (true, None, Some(cwd)) = (mounted, &joined, &cwd) {
        back(cwd)?;
    }
    let rules = plan(spec, mounted)?;

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .and_then(|r| r.set_compatibility(CompatLevel::BestEffort).handle_access(all_access()))
        .map_err(|e| failed("Landlock", &e))?;
    if spec.network == Network::Off {
        ruleset = ruleset
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(|_| BoxError::Unsupported("sandbox.network \"off\" needs Landlock ABI 4 (Linux 6.7)".into()))?
            .set_compatibility(CompatLevel::BestEffort);
    }
    let mut created = ruleset
        .scope(Scope::from_all(TARGET))
        .and_then(|r| r.create())
        .map_err(|e| failed("Landlock", &e))?
        .set_compatibility(CompatLevel::BestEffort);
    let mut count = 0;
    for rule in &rules {
        use nix::fcntl::OFlag;
        if names.as_ref().is_some_and(|n| n.absent(&rule.path)) {
            continue;
        }
        let mut flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
        if !rule.follow {
            flags |= OFlag::O_NOFOLLOW;
        }
        // Missing paths (a cache never made, a device this machine lacks) grant nothing; so does
        // an entry that turned into a link since it was listed (ELOOP).
        let Ok(fd) = nix::fcntl::open(&rule.path, flags, nix::sys::stat::Mode::empty()) else { continue };
        created = created.add_rule(PathBeneath::new(fd, rule.access)).map_err(|e| failed("Landlock", &e))?;
        count += 1;
    }
    // The holder keeps a copy of the finished ruleset for the commands that join it.
    if let (Some(k), Some(store), Some(watched), Ok(copy)) = (&kept, store, &watched, created.try_clone())
        && let Some(fd) = Option::<std::os::fd::OwnedFd>::from(copy)
    {
        k.keep(store, watched, &RootsText::of(spec), fd.as_fd(), count);
    }
    let status = created.restrict_self().map_err(|e| failed("Landlock", &e))?;
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err(BoxError::Failed("the kernel did not enforce the Landlock ruleset".into()));
    }
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => abi_number(effective_abi),
        _ => 0,
    };
    Ok(Entered {
        abi,
        rules: count,
        network: if abi >= 4 { spec.network } else { Network::On },
        scoped: abi >= 6,
        ioctl_restricted: abi >= 5,
        mounted,
        kept: joined.is_some(),
        namespaces,
    })
}

/// [`enter`] for a box the gate planned: where namespaces are kept for it (the plan read their
/// record) and everything the record vouches for is unchanged, joins them and takes their
/// ruleset without building the spec; otherwise, or when the holder has gone since, enters the
/// box its spec describes.
pub fn enter_plan(plan: &BoxPlan) -> Result<Entered, BoxError> {
    if let Some(record) = &plan.kept
        && available()
        && record.unchanged()
        && let Ok(cwd) = std::env::current_dir()
        && let Some(joined) = Kept::join_record(record)
    {
        back(&cwd)?;
        let Some(ruleset) = joined.ruleset else {
            return Err(BoxError::Failed("joined kept namespaces without their Landlock ruleset".into()));
        };
        return restrict_joined(ruleset, joined.rules, plan.network());
    }
    enter(plan.spec())
}

/// Back to the working directory `cwd`, by path, after joining or making the namespaces.
fn back(cwd: &Path) -> Result<(), BoxError> {
    nix::unistd::chdir(cwd).map_err(|e| {
        BoxError::Failed(format!(
            "the working directory {} is hidden inside the sandbox ({e}): it is one of agentsh's own \
             directories or a credential store; run the command from another directory",
            cwd.display()
        ))
    })
}

/// The Landlock domain of a holder's finished ruleset, in namespaces joined from it.
fn restrict_joined(ruleset: std::os::fd::OwnedFd, rules: usize, network: Network) -> Result<Entered, BoxError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| BoxError::Failed(format!("{what}: {e}"));
    rustix::thread::set_no_new_privs(true).map_err(|e| failed("no_new_privs", &e))?;
    super::landlock_fd::restrict_self(ruleset.as_fd()).map_err(|e| failed("Landlock", &e))?;
    // Left open: it is close-on-exec, and a close costs the command a system call.
    let _ = std::os::fd::IntoRawFd::into_raw_fd(ruleset);
    let abi = landlock_abi().unwrap_or(MIN_ABI);
    Ok(Entered {
        abi,
        rules,
        network: if abi >= 4 { network } else { Network::On },
        scoped: abi >= 6,
        ioctl_restricted: abi >= 5,
        mounted: true,
        kept: true,
        namespaces: None,
    })
}

fn abi_number(abi: ABI) -> u8 {
    abi.to_string().parse().unwrap_or(0)
}

/// The code paths of the spec that exist. A git directory without `hooks` gets an empty one
/// (as `git init` makes), or a command could create `.git/hooks/pre-commit`.
fn code_paths(spec: &BoxSpec) -> Vec<PathBuf> {
    let missing_hooks = |p: &Path| {
        p.ends_with("hooks")
            && p.parent().is_some_and(|git| git.join("HEAD").is_file())
            && std::fs::create_dir(p).is_ok()
    };
    spec.read_only
        .iter()
        .filter(|r| std::fs::symlink_metadata(&r.path).is_ok() || missing_hooks(&r.path))
        .map(|r| r.path.clone())
        .collect()
}

/// What the record of kept namespaces vouches for (see `kept::Watch`): the roots of the rules
/// (the ruleset holds their inodes), the code paths bound read-only, and the denied paths.
///
/// Left out, as looking costs every command a system call and could change nothing that
/// matters: the system's own roots (`/`, `/dev`, the temp directories), which are not replaced
/// while the system runs, and where one were, its stale rule would only deny; and a denied path
/// inside another (the approval queue inside the state directory), hidden with it.
fn watch(spec: &BoxSpec) -> super::kept::Watch {
    const SYSTEM_ROOTS: &[&str] = &["/", "/dev", "/tmp", "/var/tmp", "/dev/shm"];
    let mut w = super::kept::Watch::default();
    let under_home = |p: &Path| spec.home.as_deref().is_some_and(|h| within(p, h) && p != h);
    // Mounted: one rule per root, pure (`plan` lists nothing then).
    for rule in plan(spec, true).unwrap_or_default() {
        if SYSTEM_ROOTS.iter().any(|r| rule.path.as_os_str() == *r) {
            continue;
        }
        if under_home(&rule.path) { w.beneath(&rule.path, false) } else { w.path(&rule.path) }
    }
    // `.agents` through the workspace's own line (its change time): one `statx` fewer while no
    // entry of the workspace was made, removed or renamed. Code paths deeper (`.git/hooks`) on
    // their own: git renames files in `.git` on most commands.
    for r in &spec.read_only {
        if r.path.parent() == Some(spec.workspace.as_path()) { w.beneath(&r.path, false) } else { w.path(&r.path) }
    }
    for d in &spec.deny {
        if !spec.deny.iter().any(|o| o.path != d.path && within(&d.path, &o.path)) {
            w.beneath(&d.path, !d.except.is_empty());
        }
    }
    if let Some(home) = spec.home.as_deref().filter(|_| home_bound(spec)) {
        w.path(home);
    }
    w
}

/// The user and mount namespace that carry most of the box where the kernel allows them, so
/// that Landlock needs one rule per root instead of one per sibling of every denied path:
/// - this user mapped to itself. Root needs this even without mounts: in the initial namespace
///   it keeps every capability (loading kernel modules, raw I/O, TIOCSTI into any terminal),
///   none of which Landlock restricts; in a namespace of its own it has them only over it;
/// - home read-only where a writable root holds it (`/tmp/h`), its own writable roots
///   (caches) bound writable again;
/// - `/dev` (and `/dev/pts`, unless the command keeps the terminal) `nodev`, the granted devices
///   bound on themselves first: raw disks and the person's terminals cannot be opened;
/// - each denied path covered: directories with an empty read-only tmpfs, files with an
///   unopenable `/dev/null`; in `~/.ssh`, each entry but the public keys;
/// - the code paths (`.git/hooks`, ...) bound read-only.
///
/// Mounts made here never propagate back: a mount namespace owned by a less privileged user
/// namespace receives shared mounts as slaves. The command cannot undo them: Landlock refuses
/// mount and umount to a confined process, and it cannot reach the uncovered tree through
/// `/proc/PID/root` of a process outside (Landlock's ptrace scoping).
fn mount_box(spec: &BoxSpec, protect: &[PathBuf], names: &Option<HomeNames>) -> Result<(), String> {
    use nix::mount::MsFlags;
    use nix::sched::CloneFlags;
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    unshare_alone(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(|e| format!("unshare: {e}"))?;
    let write = |file: &str, text: String| std::fs::write(file, text).map_err(|e| format!("{file}: {e}"));
    // Required before gid_map: once in the new namespace, this process has no CAP_SETGID in
    // the parent one, root included.
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;

    if let Some(home) = spec.home.as_deref().filter(|_| home_bound(spec)) {
        bind(home, MsFlags::MS_RDONLY)?;
        for w in spec.write.iter().filter(|w| within(&w.path, home) && w.path != *home && w.path.exists()) {
            bind(&w.path, MsFlags::empty())?;
        }
    }

    let none: Option<&str> = None;
    for d in &spec.devices {
        match nix::mount::mount(Some(d.path.as_path()), d.path.as_path(), none, MsFlags::MS_BIND, none) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(format!("bind mount of {}: {e}", d.path.display())),
        }
    }
    remount(Path::new("/dev"), MsFlags::MS_NODEV)?;
    if !spec.keep_terminal && Path::new("/dev/pts").is_dir() {
        remount(Path::new("/dev/pts"), MsFlags::MS_NODEV)?;
    }

    let mut cover = Cover::default();
    for d in &spec.deny {
        if names.as_ref().is_some_and(|n| n.absent(&d.path)) {
            continue;
        }
        if d.except.is_empty() {
            cover.cover(&d.path)?;
            continue;
        }
        // `~/.ssh`: every entry but the public keys.
        let Ok(entries) = std::fs::read_dir(&d.path) else { continue };
        for e in entries.flatten() {
            if !d.except.iter().any(|pat| matches(pat, &e.file_name().to_string_lossy())) {
                cover.cover(&e.path())?;
            }
        }
    }
    for p in protect {
        bind(p, MsFlags::MS_RDONLY)?;
    }
    Ok(())
}

/// Whether home is inside a writable root (`/tmp/h`): the namespace then binds it read-only, and
/// its caches writable again.
fn home_bound(spec: &BoxSpec) -> bool {
    spec.home
        .as_deref()
        .is_some_and(|home| spec.write.iter().any(|w| within(home, &w.path) && home != w.path) && home.is_dir())
}

/// The names in home, listed once: most denied paths and caches are `~/.x`, and a missing first
/// component answers for each of them without a system call of its own.
struct HomeNames {
    home: PathBuf,
    names: std::collections::HashSet<OsString>,
}

impl HomeNames {
    fn list(home: &Path) -> Option<HomeNames> {
        let names = std::fs::read_dir(home).ok()?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>().ok()?;
        Some(HomeNames { home: home.to_path_buf(), names })
    }

    /// `p` is beneath home, and its first component there does not exist.
    fn absent(&self, p: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        next_name(p, &self.home).is_some_and(|n| !self.names.contains(std::ffi::OsStr::from_bytes(n)))
    }
}

/// Covers denied paths. The first directory gets an empty read-only tmpfs and the first file
/// a sealed `/dev/null` (read-only, nodev: opening it fails); the rest are bound from those,
/// and a bind keeps its source's mount flags: one system call each.
#[derive(Default)]
struct Cover {
    dir: Option<PathBuf>,
    file: Option<PathBuf>,
}

impl Cover {
    /// One system call for a path that does not exist (most of the default list), found by
    /// trying: mounting a directory on a file fails with ENOTDIR, and then it is a file.
    fn cover(&mut self, p: &Path) -> Result<(), String> {
        use nix::errno::Errno;
        use nix::mount::{MsFlags, mount};
        let none: Option<&str> = None;
        let sealed = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        // Mounts follow links: a denied `~/.aws -> dotfiles/aws` covers its target.
        let as_dir = match &self.dir {
            Some(src) => mount(Some(src.as_path()), p, none, MsFlags::MS_BIND, none),
            None => mount(Some("tmpfs"), p, Some("tmpfs"), sealed, Some("size=4k,mode=000")),
        };
        match as_dir {
            Ok(()) => {
                self.dir.get_or_insert_with(|| p.to_path_buf());
                return Ok(());
            }
            Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::ENOTDIR) => {}
            Err(e) => return Err(format!("covering {}: {e}", p.display())),
        }
        let as_file = match &self.file {
            Some(src) => mount(Some(src.as_path()), p, none, MsFlags::MS_BIND, none),
            None => mount(Some("/dev/null"), p, none, MsFlags::MS_BIND, none)
                .and_then(|()| mount(none, p, none, MsFlags::MS_BIND | MsFlags::MS_REMOUNT | sealed, none)),
        };
        as_file.map_err(|e| format!("covering {}: {e}", p.display()))?;
        self.file.get_or_insert_with(|| p.to_path_buf());
        Ok(())
    }
}

/// Binds `p` on itself, then remounts it with `extra` (read-only, or writable again inside a
/// read-only home).
fn bind(p: &Path, extra: nix::mount::MsFlags) -> Result<(), String> {
    use nix::mount::MsFlags;
    let flags = kept_flags(p)? | MsFlags::MS_BIND | MsFlags::MS_REMOUNT | extra;
    let none: Option<&str> = None;
    nix::mount::mount(Some(p), p, none, MsFlags::MS_BIND | MsFlags::MS_REC, none)
        .and_then(|()| nix::mount::mount(none, p, none, flags, none))
        .map_err(|e| format!("bind mount of {}: {e}", p.display()))
}

/// Adds `extra` to the mount at `p` (this namespace's copy of it), or, where `p` is not a mount
/// point (EINVAL), to a bind of it: one mount fewer for the namespace to make and to tear down.
fn remount(p: &Path, extra: nix::mount::MsFlags) -> Result<(), String> {
    use nix::mount::MsFlags;
    let flags = kept_flags(p)? | MsFlags::MS_BIND | MsFlags::MS_REMOUNT | extra;
    let none: Option<&str> = None;
    match nix::mount::mount(none, p, none, flags, none) {
        Ok(()) => Ok(()),
        Err(nix::errno::Errno::EINVAL) => bind(p, extra),
        Err(e) => Err(format!("remount of {}: {e}", p.display())),
    }
}

/// The flags a remount of `p` must keep: in a namespace of its own nosuid, nodev, noexec and the
/// atime flags are locked, and a remount that drops them is refused.
fn kept_flags(p: &Path) -> Result<nix::mount::MsFlags, String> {
    use nix::mount::MsFlags;
    use nix::sys::statvfs::FsFlags;
    let kept = nix::sys::statvfs::statvfs(p).map_err(|e| format!("{}: {e}", p.display()))?.flags();
    let mut flags = MsFlags::empty();
    for (f, m) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if kept.contains(f) {
            flags |= m;
        }
    }
    Ok(flags)
}

/// `unshare(CLONE_NEWUSER)` fails with EINVAL in a multithreaded process. agentsh judges some
/// commands on a helper thread that ends right after sending its verdict: wait for it briefly.
fn unshare_alone(flags: nix::sched::CloneFlags) -> nix::Result<()> {
    alone(|| nix::sched::unshare(flags))
}

/// Runs `f`, a user namespace change, and tries again while it fails because this process still
/// has another thread (EINVAL), for up to 50 ms.
pub(super) fn alone(f: impl Fn() -> nix::Result<()>) -> nix::Result<()> {
    let threads = || std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(1);
    for _ in 0..200 {
        match f() {
            Err(nix::errno::Errno::EINVAL) if threads() > 1 => {
                std::thread::sleep(std::time::Duration::from_micros(250))
            }
            r => return r,
        }
    }
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abi_is_what_the_kernel_accepts() {
        // The version the kernel names (one system call) against what its rulesets take, as the
        // `landlock` crate asks: a kernel with Landlock must never read as one without it.
        type Feature = fn(Ruleset) -> Result<Ruleset, landlock::RulesetError>;
        let checks: [(u8, Feature); 4] = [
            (1, |r| r.handle_access(AccessFs::Execute)),
            (3, |r| r.handle_access(AccessFs::Truncate)),
            (5, |r| r.handle_access(AccessFs::IoctlDev)),
            (6, |r| r.scope(Scope::Signal)),
        ];
        let abi = probe_abi();
        for (needs, feature) in checks {
            let accepted = feature(Ruleset::default().set_compatibility(CompatLevel::HardRequirement)).is_ok();
            assert_eq!(abi.is_some_and(|a| a >= needs), accepted, "ABI {abi:?} against ABI {needs}'s feature");
        }
    }

    fn place(cwd: &str, home: &str) -> Place {
        Place {
            cwd: cwd.into(),
            workspace: Workspace { root: cwd.into(), git_dir: None, common_dir: None },
            home: Some(home.into()),
            ..Place::default()
        }
    }

    #[test]
    fn a_plan_is_named_by_everything_its_spec_is_built_from() {
        // Namespaces kept for one box are joined only by a command whose spec would be the
        // same: every input of `BoxSpec::build` changes the record's name.
        let name = |settings: &Settings, place: Place| {
            BoxPlan::new(settings, place, vec!["/h/.config/agentsh".into()], None).name
        };
        let (s, p) = (Settings::default(), place("/w", "/h"));
        let base = name(&s, p.clone());
        assert_eq!(name(&s, p.clone()), base);
        let changed: Vec<(&str, Settings, Place)> = vec![
            ("cwd", s.clone(), Place { cwd: "/w/sub".into(), ..p.clone() }),
            ("home", s.clone(), Place { home: Some("/h2".into()), ..p.clone() }),
            ("no home", s.clone(), Place { home: None, ..p.clone() }),
            ("TMPDIR", s.clone(), Place { tmpdir: Some("/h/tmp".into()), ..p.clone() }),
            ("CARGO_HOME", s.clone(), Place { cargo_home: Some("/c".into()), ..p.clone() }),
            ("GRADLE_USER_HOME", s.clone(), Place { gradle_user_home: Some("/g".into()), ..p.clone() }),
            ("terminal", s.clone(), Place { keep_terminal: true, ..p.clone() }),
            ("output tty", s.clone(), Place { output_ttys: vec!["/dev/pts/3".into()], ..p.clone() }),
            (
                "git dir",
                s.clone(),
                Place { workspace: Workspace { git_dir: Some("/w/.git".into()), ..p.workspace.clone() }, ..p.clone() },
            ),
            ("network", Settings { network: Network::Off, ..s.clone() }, p.clone()),
            (
                "denyRead",
                Settings {
                    deny_read: vec![crate::policy::sandbox_settings::Sourced {
                        path: "~/x".into(),
                        source: "f".into(),
                    }],
                    ..s.clone()
                },
                p.clone(),
            ),
            (
                "writable",
                Settings {
                    writable: vec![crate::policy::sandbox_settings::Sourced { path: "~/x".into(), source: "f".into() }],
                    ..s.clone()
                },
                p.clone(),
            ),
        ];
        for (what, settings, place) in changed {
            assert_ne!(name(&settings, place), base, "{what}");
        }
        // Inputs that would run into each other if items were only separated, not counted.
        let sourced = |path: &str, source: &str| crate::policy::sandbox_settings::Sourced {
            path: path.into(),
            source: source.into(),
        };
        let as_writable = Settings { writable: vec![sourced("/x", "f")], ..s.clone() };
        let as_denied = Settings { deny_read: vec![sourced("/x", "f")], ..s.clone() };
        assert_ne!(name(&as_writable, p.clone()), name(&as_denied, p.clone()), "the same entry in another list");
        let joined = Settings { deny_read: vec![sourced("/a\0/b", "f")], ..s.clone() };
        let split = Settings { deny_read: vec![sourced("/a", "/b\0f")], ..s.clone() };
        assert_ne!(name(&joined, p.clone()), name(&split, p.clone()), "bytes moved between items");
        let other_own = BoxPlan::new(&s, p.clone(), vec!["/h/.config/other".into()], None).name;
        assert_ne!(other_own, base, "agentsh's own directories");
        let kept_elsewhere = BoxPlan::new(&s, p, vec!["/h/.config/agentsh".into()], Some("/r".into())).name;
        assert_ne!(kept_elsewhere, base, "the records directory");
    }

    fn paths(roots: &[Root]) -> Vec<&Path> {
        roots.iter().map(|r| r.path.as_path()).collect()
    }

    #[test]
    fn the_workspace_temp_and_caches_are_writable_and_own_dirs_denied() {
        let own = [PathBuf::from("/h/.config/agentsh"), PathBuf::from("/run/user/1/agentsh")];
        let s = BoxSpec::build(&Settings::default(), &place("/h/p", "/h"), &own);
        let w = paths(&s.write);
        for p in ["/h/p", "/tmp", "/var/tmp", "/dev/shm", "/h/.cache", "/h/.cargo/registry", "/h/.npm", "/h/go/pkg/mod"]
        {
            assert!(w.contains(&Path::new(p)), "{p} not in {w:?}");
        }
        // What the person's own tools run code from, later and unconfined.
        for p in ["/h/.cargo/bin", "/h/.cargo", "/h/.rustup", "/h/.gradle/init.d", "/h", "/h/.config"] {
            assert!(!w.contains(&Path::new(p)), "{p} in {w:?}");
        }
        let d: Vec<&Path> = s.deny.iter().map(|d| d.path.as_path()).collect();
        for p in ["/h/.config/agentsh", "/run/user/1/agentsh", "/h/.ssh", "/h/.aws", "/h/.cargo/credentials.toml"] {
            assert!(d.contains(&Path::new(p)), "{p} not in {d:?}");
        }
        assert_eq!(
            s.deny.iter().find(|d| d.path.ends_with(".ssh")).unwrap().except,
            ["*.pub", "known_hosts", "known_hosts.old"]
        );
        assert_eq!(paths(&s.read), [Path::new("/")]);
        assert!(s.read_only.iter().any(|r| r.path == Path::new("/h/p/.agents")));
    }

    #[test]
    fn environment_overrides_move_the_caches() {
        let mut p = place("/h/p", "/h");
        p.cargo_home = Some("/opt/cargo".into());
        p.xdg_cache_home = Some("/var/cache/u".into());
        p.tmpdir = Some("/h/tmp".into());
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        let w = paths(&s.write);
        assert!(w.contains(&Path::new("/opt/cargo/registry")) && w.contains(&Path::new("/var/cache/u")));
        assert!(w.contains(&Path::new("/h/tmp")));
        assert!(!w.contains(&Path::new("/h/.cargo/registry")));
        assert!(s.deny.iter().any(|d| d.path == Path::new("/opt/cargo/credentials.toml")));
    }

    #[test]
    fn too_broad_workspaces_are_refused() {
        // Home, its ancestors, `/`, a top-level directory and system trees.
        for cwd in ["/h", "/", "/srv", "/etc/nginx", "/usr/lib/x"] {
            let s = BoxSpec::build(&Settings::default(), &place(cwd, "/h"), &[]);
            assert!(!s.write.iter().any(|r| r.from == Origin::Workspace), "{cwd}");
            assert!(s.refused.iter().any(|r| r.path == Path::new(cwd)), "{cwd}: {:?}", s.refused);
            assert!(s.read_only.is_empty(), "{cwd}");
        }
        let s = BoxSpec::build(&Settings::default(), &place("/srv/site", "/h"), &[]);
        assert!(s.write.iter().any(|r| r.path == Path::new("/srv/site") && r.from == Origin::Workspace));
    }

    #[test]
    fn a_repository_too_broad_to_grant_leaves_the_current_directory_as_workspace() {
        // Home kept in git: a directory in it that is no repository of its own is the workspace.
        let mut p = place("/h/scratch/x", "/h");
        p.workspace = Workspace { root: "/h".into(), git_dir: Some("/h/.git".into()), common_dir: None };
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        assert_eq!(s.workspace, Path::new("/h/scratch/x"));
        assert!(s.write.iter().any(|r| r.path == Path::new("/h/scratch/x") && r.from == Origin::Workspace));
        assert!(!s.write.iter().any(|r| r.path == Path::new("/h") || r.path == Path::new("/h/.git")));
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h") && r.why.contains("current directory")));
        // Home itself stays refused, repository or not.
        let mut p = place("/h", "/h");
        p.workspace = Workspace { root: "/h".into(), git_dir: Some("/h/.git".into()), common_dir: None };
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        assert!(!s.write.iter().any(|r| r.from == Origin::Workspace));
    }

    #[test]
    fn git_dirs_of_a_worktree_are_writable_and_their_code_paths_read_only() {
        let mut p = place("/w/wt/src", "/h");
        p.workspace = Workspace {
            root: "/w/wt".into(),
            git_dir: Some("/w/main/.git/worktrees/wt".into()),
            common_dir: Some("/w/main/.git".into()),
        };
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        let w = paths(&s.write);
        assert!(w.contains(&Path::new("/w/main/.git/worktrees/wt")) && w.contains(&Path::new("/w/main/.git")));
        let ro = paths(&s.read_only);
        for want in ["/w/main/.git/hooks", "/w/main/.git/config", "/w/wt/.agents"] {
            assert!(ro.contains(&Path::new(want)), "{want}: {ro:?}");
        }
    }

    #[test]
    fn settings_add_roots_and_denials() {
        use crate::policy::sandbox_settings::Sourced;
        let src = |p: &str| Sourced { path: p.into(), source: "~/.config/agentsh/config.json".into() };
        let settings = Settings {
            writable: vec![src("~/data"), src("rel"), src("/")],
            deny_read: vec![src("/srv/secret")],
            ..Settings::default()
        };
        let s = BoxSpec::build(&settings, &place("/h/p", "/h"), &[]);
        let data = s.write.iter().find(|r| r.path == Path::new("/h/data")).unwrap();
        assert_eq!((data.from, data.source.as_deref()), (Origin::Setting, Some("~/.config/agentsh/config.json")));
        assert!(s.deny.iter().any(|d| d.path == Path::new("/srv/secret") && d.from == Origin::Setting));
        assert_eq!(s.refused.len(), 2, "{:?}", s.refused);
    }

    #[test]
    fn the_terminal_is_granted_only_to_commands_that_keep_it() {
        let mut p = place("/h/p", "/h");
        p.output_ttys = vec!["/dev/pts/3".into()];
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        assert!(!s.devices.iter().any(|d| d.path.starts_with("/dev/pts") || d.path == Path::new("/dev/tty")));
        assert_eq!(paths(&s.outputs), [Path::new("/dev/pts/3")]);
        p.keep_terminal = true;
        let s = BoxSpec::build(&Settings::default(), &p, &[]);
        assert!(paths(&s.devices).contains(&Path::new("/dev/pts")) && s.outputs.is_empty());
    }

    #[test]
    fn the_spec_survives_a_round_trip_through_json() {
        let s = BoxSpec::build(&Settings::default(), &place("/h/p", "/h"), &[PathBuf::from("/h/.config/agentsh")]);
        let back: BoxSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn patterns() {
        assert!(matches("*.pub", "id_ed25519.pub"));
        assert!(!matches("*.pub", ".pub"));
        assert!(!matches("*.pub", "id_ed25519"));
        assert!(matches("known_hosts", "known_hosts"));
    }

    /// A home with a credential, agentsh's config and a link into a denied path, planned for real.
    #[test]
    fn a_denied_path_is_left_out_by_granting_its_siblings() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        let home = r.join("home");
        for d in ["proj", ".ssh", ".config/agentsh", ".config/git", ".cache", "dotfiles/aws"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        for f in [".bashrc", ".ssh/id_ed25519", ".ssh/id_ed25519.pub", ".ssh/known_hosts"] {
            std::fs::write(home.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink(home.join("dotfiles/aws"), home.join(".aws")).unwrap();
        let own = [home.join(".config/agentsh")];
        let mut spec = BoxSpec::build(
            &Settings::default(),
            &place(home.join("proj").to_str().unwrap(), home.to_str().unwrap()),
            &own,
        );
        // Plan only this tree, not the whole machine.
        spec.read = vec![Root::new(home.clone(), Origin::System)];
        spec.write.retain(|w| w.path.starts_with(&home));
        spec.devices.clear();
        let rules = plan(&spec, false).unwrap();
        // A path granted twice is two rules, which Landlock joins.
        let get = |rel: &str| rules.iter().filter(|x| x.path == home.join(rel)).map(|x| x.access).reduce(|a, b| a | b);
        let read = read_access();
        assert_eq!(get(".bashrc"), Some(read), "{rules:#?}");
        assert_eq!(get(".config/git"), Some(read));
        assert_eq!(get("proj"), Some(all_access()));
        assert_eq!(get(".cache"), Some(all_access()));
        assert_eq!(get(".ssh/id_ed25519.pub"), Some(read));
        assert_eq!(get(".ssh/known_hosts"), Some(read));
        for denied in [".ssh", ".ssh/id_ed25519", ".config", ".config/agentsh", "", ".aws", "dotfiles/aws", "dotfiles"]
        {
            assert_eq!(get(denied), None, "{denied:?} granted: {rules:#?}");
        }
        // Home itself is split, never granted; the link's target is denied where it lives.
        assert!(
            rules.iter().any(|x| x.path == home.join("dotfiles"))
                || !rules.iter().any(|x| x.path.starts_with(home.join("dotfiles/aws")))
        );
    }

    /// A write root holding home (`/tmp` while home is `/tmp/h`) grants nothing inside home but
    /// the caches, and is itself split.
    #[test]
    fn a_root_holding_home_does_not_make_home_writable() {
        let root = tempfile::tempdir().unwrap();
        let t = root.path().canonicalize().unwrap();
        let home = t.join("h");
        for d in ["h/.cache", "h/.ssh", "other"] {
            std::fs::create_dir_all(t.join(d)).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "x").unwrap();
        let spec = BoxSpec {
            workspace: t.join("other"),
            read: vec![],
            write: vec![Root::new(t.clone(), Origin::Temp), Root::new(home.join(".cache"), Origin::Cache)],
            devices: vec![],
            outputs: vec![],
            deny: vec![Denied { path: home.join(".ssh"), from: Origin::Credential, source: None, except: vec![] }],
            read_only: vec![],
            network: Network::On,
            keep_terminal: false,
            require_namespaces: false,
            landlock_only: true,
            refused: vec![],
            home: Some(home.clone()),
            keep: None,
            kept_as: None,
        };
        let rules = plan(&spec, false).unwrap();
        let get = |p: &Path| rules.iter().filter(|x| x.path == p).map(|x| x.access).reduce(|a, b| a | b);
        assert_eq!(get(&t.join("other")), Some(all_access()), "{rules:#?}");
        assert_eq!(get(&home.join(".cache")), Some(all_access()));
        assert_eq!(get(&t), None);
        assert_eq!(get(&home), None);
        assert!(get(&home.join(".bashrc")).is_none_or(|a| (a & AccessFs::WriteFile).is_empty()));
        assert_eq!(get(&home.join(".ssh")), None);
    }
}
