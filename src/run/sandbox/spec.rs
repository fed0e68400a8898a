//! What the box allows, as data: [`BoxSpec::build`] turns the settings and the facts of a
//! [`Place`] into the box's view, with where each part comes from (for `agentsh policy`, `check`
//! and the audit record). Pure: it reads nothing; the builder ([`super::view`]) looks at the
//! file system.
//!
//! The box is default-deny: it names what a command may reach.
//! - Hidden, whatever is in them: home and every other home (`/home`, `/root`), `/run`, and the
//!   temporary places. What is shown there is listed here: the workspace, the box's private
//!   places, the person's toolchains and harmless configuration ([`HOME_VISIBLE`]), their
//!   caches copy-on-write ([`HOME_CACHES`]), the directories of `$PATH` and of the toolchain
//!   variables, and the current directory where it is an ordinary directory of home. A command
//!   that starts anywhere else hidden has no box at all ([`BoxSpec::unboxed`]).
//! - Everything else of the system is read-only, less agentsh's own directories (wherever they
//!   are), the system's secrets ([`SYSTEM_SECRETS`], and what the builder finds in
//!   [`SYSTEM_WALKED`] that others may not read) and `sandbox.denyRead`.

use super::{Place, join, normalize, top_level, within};
use crate::policy::sandbox_settings::{Network, Settings};
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a path is in the box. Shown by `agentsh policy`, `check` and the audit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Read and execute: the system, less what is hidden or denied.
    System,
    Workspace,
    /// A private place of the box's own (`/tmp`, home, ...): nothing of the person's is there.
    Private,
    /// A person's cache, copy-on-write: the box reads it and writes its own copy.
    Cache,
    /// A person's toolchain, read-only.
    Toolchain,
    /// A person's configuration file that holds no secret, read-only.
    Config,
    /// A directory of `$PATH`, read-only.
    Path,
    /// The directory the command starts in, read-only.
    Cwd,
    Device,
    /// The command's own terminal: read, write and ioctls when it keeps the terminal; written
    /// only otherwise.
    Terminal,
    /// `sandbox.writable` / `sandbox.denyRead`.
    Setting,
    /// agentsh's own config, state, data and runtime directories.
    Agentsh,
    /// A secret of the system's (`/etc/shadow`, the SSH host keys).
    Secret,
    /// A place hidden whole (other homes, `/run`).
    Hidden,
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
    pub(crate) fn new(path: impl Into<PathBuf>, from: Origin) -> Root {
        Root { path: path.into(), from, source: None }
    }
}

/// A path in sight that a command may neither read nor write.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Denied {
    pub path: PathBuf,
    pub from: Origin,
    /// The config file that named it (`Origin::Setting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A path the box does not grant although it would have, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Refused {
    pub path: PathBuf,
    pub why: String,
}

/// What the box allows. Built by [`BoxSpec::build`]; serializable, so agentsh hands it to the
/// builder process it starts (one argv string).
///
/// Paths that do not exist when the box is made are skipped.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BoxSpec {
    /// The workspace, writable; `None` where none is granted (see `refused`).
    pub workspace: Option<PathBuf>,
    /// The workspace's git directory (inside it): writable, its code paths read-only, and the
    /// directory itself a mount, which cannot be renamed or removed.
    pub git_dir: Option<PathBuf>,
    /// The person's home: hidden, a private one in its place.
    pub home: PathBuf,
    /// Its real path, where `$HOME` names it through a link ([`Place::real_home`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_home: Option<PathBuf>,
    /// Cargo's home (`$CARGO_HOME`, or `~/.cargo`), whose config is shown as a copy without its
    /// secrets ([`super::copies`]).
    #[serde(default)]
    pub cargo_home: PathBuf,
    /// The directory the command starts in: shown read-only where nothing else shows it.
    pub cwd: PathBuf,
    /// Writable roots that are the person's: the workspace first, then `sandbox.writable`.
    pub write: Vec<Root>,
    /// The box's private places: home, `/tmp`, `/var/tmp`, `/dev/shm`, the runtime directory,
    /// and `$CARGO_HOME` outside home. Kept under `store` (or in memory: `/dev/shm` and the
    /// runtime directory).
    pub private: Vec<Root>,
    /// Where the private places are kept between boxes of this workspace: agentsh's state
    /// directory, `box/w-<hash>/`.
    pub store: PathBuf,
    /// The person's caches, copy-on-write (an overlay whose upper layer is under `store`).
    pub caches: Vec<Root>,
    /// Read-only views of what the hidden places hold that commands need: toolchains,
    /// harmless configuration, `$PATH`, the current directory. A last component may be a
    /// pattern (`*.pub`).
    pub visible: Vec<Root>,
    /// Places hidden whole (other homes, `/root`, `/run`), before anything is shown in them.
    pub hidden: Vec<Root>,
    /// Paths in sight that are covered: agentsh's own directories, the system's secrets,
    /// `sandbox.denyRead`.
    pub deny: Vec<Denied>,
    /// Inside the workspace, read-only (bound): what the person's own tools run code from.
    /// What the person's git runs from the workspace besides ([`super::gitcode`]) is added when
    /// the box is made, and the builder adds what it finds in the git directory (`modules/*`,
    /// `commondir`, ...).
    pub read_only: Vec<Root>,
    /// Inside a writable root, copy-on-write (an overlay whose upper layer is under `store`):
    /// package directories holding files that are also files outside, hard links the person's
    /// pnpm, bun or uv made from its store. Found when the box is built
    /// ([`super::hardlinks::link_farms`]), not here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<PathBuf>,
    /// Devices: read, write and device ioctls.
    pub devices: Vec<Root>,
    /// The command's own terminals.
    pub ttys: Vec<Root>,
    /// The terminals `store` is kept for, where the box keeps one: when one of them has
    /// closed, no box uses the store again, and it is removed ([`super::holder`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub store_for: Vec<super::Terminal>,
    pub network: Network,
    /// What the box's network proxy allows (`network: "proxy"`).
    pub net: super::proxy::NetPolicy,
    pub keep_terminal: bool,
    pub refused: Vec<Refused>,
    /// Why the box neither grants nor shows the directory the command starts in: then there is
    /// no box for it at all (`gate::sandbox_for`), rather than one that shows what it hides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unboxed: Option<String>,
    /// Where the records of kept boxes are ([`super::holder`]), and this box's name there.
    pub records: PathBuf,
    pub name: String,
}

/// What stays visible of the person's home, read-only, relative to it: toolchains that build
/// and test need, and configuration that holds no secret. Nothing else of home is in the box:
/// no credential store, token, history or agent login, whatever its name (issue 25). Shell
/// start-up files are left out on purpose: they often export tokens.
pub const HOME_VISIBLE: &[(&str, Origin)] = &[
    (".cargo/bin", Origin::Toolchain),
    (".cargo/env", Origin::Toolchain),
    // Shown as a copy without its tokens (`super::copies`).
    (".cargo/config.toml", Origin::Config),
    (".cargo/config", Origin::Config),
    (".local/bin", Origin::Toolchain),
    (".local/lib", Origin::Toolchain),
    (".local/share/pnpm", Origin::Toolchain),
    (".local/share/fnm", Origin::Toolchain),
    (".local/share/mise", Origin::Toolchain),
    // What uv runs from: its Pythons and its tools' environments; not its credentials store
    // (`.local/share/uv/credentials`, where `uv auth login` keeps index passwords in plain text).
    (".local/share/uv/python", Origin::Toolchain),
    (".local/share/uv/tools", Origin::Toolchain),
    (".nvm", Origin::Toolchain),
    (".volta", Origin::Toolchain),
    (".fnm", Origin::Toolchain),
    (".bun/bin", Origin::Toolchain),
    (".deno/bin", Origin::Toolchain),
    (".pyenv", Origin::Toolchain),
    (".rbenv", Origin::Toolchain),
    (".sdkman", Origin::Toolchain),
    (".asdf", Origin::Toolchain),
    (".goenv", Origin::Toolchain),
    ("go/bin", Origin::Toolchain),
    (".dotnet", Origin::Toolchain),
    (".juliaup", Origin::Toolchain),
    (".ghcup", Origin::Toolchain),
    (".cabal/bin", Origin::Toolchain),
    (".elan", Origin::Toolchain),
    (".nix-profile", Origin::Toolchain),
    (".npm-global", Origin::Toolchain),
    // The agents' shell snapshots: `Place::tool_dirs`, where they exist.
    // git needs the author; a credential helper's store stays hidden (`.git-credentials`,
    // `.config/git/credentials`), and git's config is shown as a copy without its tokens
    // (`super::copies`).
    (".gitconfig", Origin::Config),
    (".config/git/config", Origin::Config),
    (".config/git/ignore", Origin::Config),
    (".config/git/attributes", Origin::Config),
    (".gitignore_global", Origin::Config),
    (".editorconfig", Origin::Config),
    (".tool-versions", Origin::Config),
    (".python-version", Origin::Config),
    (".nvmrc", Origin::Config),
];

/// The person's caches, relative to home, that the box reads and writes copy-on-write: a
/// download or a crate unpacked in the box lands in the box's own copy, so nothing the box
/// writes there can run later outside it (a poisoned `build.rs` in `~/.cargo/registry/src`,
/// a virtualenv of poetry's, pnpm's store). Each holds downloads only, no token.
pub const HOME_CACHES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".npm",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry",
    ".cache/go-build",
    ".cache/yarn",
    ".cache/pnpm",
    ".cache/node-gyp",
    ".cache/ms-playwright",
    ".cache/puppeteer",
    ".cache/bazel",
    ".cache/ccache",
    ".cache/sccache",
    ".cache/deno",
    ".cache/pre-commit",
    ".cache/typescript",
    ".cache/Cypress",
    ".cache/golangci-lint",
    ".cache/huggingface/hub",
    ".cache/torch",
    ".cache/coursier",
    "go/pkg/mod",
    "go/pkg/sumdb",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".local/share/pnpm/store",
    ".yarn/berry/cache",
    ".bun/install/cache",
    ".nuget/packages",
    ".ivy2/cache",
];

/// The system's own secrets, covered although the rest of `/etc` is in sight (root can read
/// them, and a box of root's is root): the places in `/etc` known to hold them, whatever their
/// mode. Besides these, the builder covers what it finds in [`SYSTEM_WALKED`] that others may not
/// read ([`super::view`]): `/var`'s secrets (debconf's `passwords.dat`, `/var/backups/*shadow*`,
/// a database's data) are root's alone by their packages' own modes. The two together are the
/// system's secrets. Each place here that exists costs a box's commands a `statx` (its record
/// watches it); what the walk finds costs them nothing. Also the kernel's tracing and debug
/// file systems, which root may read (the kernel's symbols, what the person traces).
pub const SYSTEM_SECRETS: &[&str] = &[
    "/sys/kernel/tracing",
    "/sys/kernel/debug",
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*_key",
    "/etc/krb5.keytab",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/letsencrypt",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/ipsec.secrets",
    "/etc/ipsec.d/private",
    "/etc/ppp/*-secrets",
    "/etc/openvpn",
    "/etc/kubernetes",
    "/etc/rancher",
    "/etc/credstore",
    "/etc/credstore.encrypted",
    "/etc/containers/auth.json",
    "/etc/docker/key.json",
    "/etc/libvirt/secrets",
    "/etc/ldap.secret",
    "/etc/pam_ldap.secret",
];

/// The system trees the builder walks for what others may not read (a file without `o+r`, a
/// directory without `o+x`) and covers it: the box runs as the person, often root, and must read
/// only what any user could. Package-managed `/usr` is left out (its files are world-readable),
/// and so is any other top-level directory but for itself (`/lost+found`); a mount beneath a
/// tree is not entered.
pub const SYSTEM_WALKED: &[&str] = &["/etc", "/var", "/opt", "/srv", "/boot", "/usr/local", "/mnt", "/media"];

/// What stays in sight of `/run`, which is hidden: the resolver's configuration where
/// `/etc/resolv.conf` points into it (systemd-resolved), and NixOS's system profile.
pub const RUN_VISIBLE: &[&str] =
    &["/run/systemd/resolve", "/run/current-system", "/run/booted-system", "/run/opengl-driver", "/run/wrappers"];

/// Devices every command may read, write and ioctl. `/dev/tty` is the controlling terminal:
/// a command that does not keep the terminal has none (its own session).
pub const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// Never a workspace: writing there is writing the system.
const SYSTEM_TREES: &[&str] =
    &["/etc", "/dev", "/proc", "/sys", "/boot", "/run", "/usr", "/bin", "/sbin", "/lib", "/var"];

/// The temporary places the box has its own of.
pub const TEMP: &[&str] = &["/tmp", "/var/tmp"];

impl BoxSpec {
    /// What the box allows for a command run at `place` with `settings`. Pure: it reads nothing.
    /// `own` are agentsh's own directories; `records` where kept boxes are recorded, and
    /// `name` this box's record (see [`key`]).
    pub fn build(settings: &Settings, place: &Place, own: &[PathBuf], records: &Path, name: &str) -> BoxSpec {
        let norm = |p: &Option<PathBuf>| p.as_deref().map(normalize);
        let home = home_of(place);
        let real_home = norm(&place.real_home);
        let in_home = |rel: &str| join(&home, rel);
        let cwd = normalize(&place.cwd);
        let mut refused = Vec::new();
        let ws = workspace(settings, place, &home, &cwd, &mut refused);

        let mut write = Vec::new();
        if let Some(root) = &ws {
            write.push(Root::new(root.clone(), Origin::Workspace));
        }
        // Only the workspace's own: not that of a repository too broad to grant (home kept in git).
        let git_dir = place
            .workspace
            .git_dir
            .as_deref()
            .map(normalize)
            .filter(|_| ws.as_deref() == Some(&normalize(&place.workspace.root)));
        if let (Some(outside), Some(_)) = (&place.workspace.outside_git, &ws) {
            refused.push(Refused {
                path: outside.clone(),
                why: "a .git file names it, but it is outside the workspace: git cannot write its objects \
                      or refs in the box (a yes runs the command outside)"
                    .into(),
            });
        }
        let mut read_only = Vec::new();
        if let Some(root) = &ws {
            if let Some(g) = &git_dir {
                for name in ["config", "hooks"] {
                    read_only.push(Root::new(join(g, name), Origin::CodePath));
                }
            }
            read_only.push(Root::new(join(root, ".agents"), Origin::CodePath));
        }
        for w in &settings.writable {
            match expand(Path::new(&w.path), &home) {
                // The person asked for it: only `/` and their whole home are refused.
                Some(path) if path.parent().is_some() && path != home && real_home.as_ref() != Some(&path) => {
                    if !write.iter().any(|r: &Root| r.path == path) {
                        write.push(Root { path, from: Origin::Setting, source: Some(w.source.clone()) });
                    }
                }
                Some(path) => refused.push(Refused { path, why: "sandbox.writable cannot be / or home".into() }),
                None => refused.push(Refused {
                    path: w.path.clone().into(),
                    why: "sandbox.writable entries must be absolute or start with ~/".into(),
                }),
            }
        }

        // Per workspace, and for a box that keeps a terminal, per terminal too (rt7 B9): a path
        // socket in a `/tmp` the agent's headless box shared with the person's terminal box
        // took the terminal's descriptor to a job outside its session, which read what the
        // person typed at their prompt.
        let terminal = if place.keep_terminal { place.ttys.as_slice() } else { &[] };
        let store = join(records, &format!("w-{}", store_key(ws.as_deref().unwrap_or(&cwd), terminal)));
        let mut private = vec![Root::new(home.clone(), Origin::Private)];
        private.extend(TEMP.iter().map(|t| Root::new(*t, Origin::Private)));
        private.push(Root::new("/dev/shm", Origin::Private));
        if let Some(run) = norm(&place.runtime_dir).filter(|r| r.parent().is_some()) {
            private.push(Root::new(run, Origin::Private));
        }
        // Cargo locks files at the top of its home: outside home, it gets a private one too.
        let cargo_home = norm(&place.cargo_home).unwrap_or_else(|| in_home(".cargo"));
        if !within(&cargo_home, &home) {
            private.push(Root::new(cargo_home.clone(), Origin::Private));
        }

        let hidden = hidden_places();
        let own_norm: Vec<PathBuf> = own.iter().map(|o| normalize(o)).collect();
        let rule = EnvRule {
            home: &home,
            real_home: real_home.as_deref(),
            hidden: &hidden,
            private: &private,
            own: &own_norm,
            not_toolchains: &place.not_toolchains,
            projects: &place.projects,
            workspace: ws.as_deref(),
            cargo_home: Some(&cargo_home),
        };
        let hides = |p: &Path| rule.hides(p);
        let own_place = |p: &Path| own.iter().any(|o| within(p, &normalize(o)));
        let not_a_toolchains = |dir: &Path, kind: EnvDir| rule.refusal(dir, kind);

        let mut visible: Vec<Root> = Vec::new();
        let show = |visible: &mut Vec<Root>, path: PathBuf, from: Origin| {
            if !visible.iter().any(|r| r.path == path) {
                visible.push(Root::new(path, from));
            }
        };
        for (rel, from) in HOME_VISIBLE {
            let Some(rest) = rel.strip_prefix(".cargo/") else {
                show(&mut visible, in_home(rel), *from);
                continue;
            };
            // Where the environment moves cargo's home, what the list shows of it is judged as
            // any directory the environment names (rt7 A3: `CARGO_HOME=~/.kube` named
            // `~/.kube/config`, `CARGO_HOME=~/.config/gh` showed `~/.config/gh/bin`).
            let path = join(&cargo_home, rest);
            match not_a_toolchains(&path, EnvDir::Layout).filter(|_| cargo_home != in_home(".cargo")) {
                None => show(&mut visible, path, *from),
                Some(why) => refused.push(Refused {
                    path,
                    why: format!(
                        "a toolchain directory the environment names, but {why}: not shown; name \
                         what the sandbox should show in sandbox.readable"
                    ),
                }),
            }
        }
        let mut caches: Vec<Root> = Vec::new();
        let cache_home = norm(&place.xdg_cache_home).unwrap_or_else(|| in_home(".cache"));
        let gopath = norm(&place.gopath).unwrap_or_else(|| in_home("go"));
        let gradle = norm(&place.gradle_user_home).unwrap_or_else(|| in_home(".gradle"));
        for rel in HOME_CACHES {
            let path = if let Some(rest) = rel.strip_prefix(".cargo/") {
                join(&cargo_home, rest)
            } else if let Some(rest) = rel.strip_prefix(".cache/") {
                join(&cache_home, rest)
            } else if let Some(rest) = rel.strip_prefix("go/") {
                join(&gopath, rest)
            } else if let Some(rest) = rel.strip_prefix(".gradle/") {
                join(&gradle, rest)
            } else if *rel == ".rustup" {
                norm(&place.rustup_home).unwrap_or_else(|| in_home(rel))
            } else {
                in_home(rel)
            };
            caches.push(Root::new(path, Origin::Cache));
        }
        if let Some(mods) = norm(&place.gomodcache) {
            caches.retain(|c| !c.path.ends_with("pkg/mod"));
            caches.push(Root::new(mods, Origin::Cache));
        }
        for dir in place.cache_dirs.iter().map(|d| normalize(d)) {
            // Not `/`, home or a top-level directory: a cache is a directory of its own.
            if !top_level(&dir)
                && dir.parent().is_some()
                && !within(&home, &dir)
                && !caches.iter().any(|c| c.path == dir)
            {
                caches.push(Root::new(dir, Origin::Cache));
            }
        }
        // A cache the environment moves (`PIP_CACHE_DIR`, `GOMODCACHE`, `XDG_CACHE_HOME`,
        // `RUSTUP_HOME`, what `CARGO_HOME`'s `registry` and `git` become, ...) is shown,
        // copy-on-write, only where the one default-deny rule shows a cache: the box reads all of
        // a cache, so `PIP_CACHE_DIR=~/.config` would show every token in it, and
        // `CARGO_HOME=~/.config` git's credential store as its `git` (rt5 B6, rt7 A3).
        let builtin: Vec<PathBuf> = HOME_CACHES.iter().map(|rel| in_home(rel)).collect();
        let named = [&place.rustup_home, &place.gomodcache].into_iter().flatten().chain(&place.cache_dirs);
        let named: Vec<PathBuf> = named.map(|d| normalize(d)).collect();
        caches.retain(|c| {
            // A directory a variable names is a cache where its name says so; what a moved
            // toolchain home holds (`registry`, `pip`, `ccache`) only where the list has it.
            let kind = if named.contains(&c.path) { EnvDir::Cache } else { EnvDir::Layout };
            let why = not_a_toolchains(&c.path, kind);
            let Some(why) = why.filter(|_| !builtin.contains(&c.path)) else { return true };
            refused.push(Refused {
                path: c.path.clone(),
                why: format!(
                    "a cache the environment names, but {why}: not shown; name what the sandbox \
                     should show in sandbox.readable"
                ),
            });
            false
        });
        // Shown already through what holds it (`~/.pyenv/shims` in `~/.pyenv`).
        let shown = |visible: &[Root], p: &Path| visible.iter().chain(&caches).any(|v| within(p, &v.path));
        for dir in place.tool_dirs.iter().map(|d| normalize(d)) {
            if hides(&dir) && !own_place(&dir) && !shown(&visible, &dir) {
                match not_a_toolchains(&dir, EnvDir::Toolchain) {
                    None => show(&mut visible, dir, Origin::Toolchain),
                    Some(why) => {
                        // A toolchain's programs, where the list shows them (`~/.bun/bin` of
                        // `BUN_INSTALL=~/.bun`).
                        let narrower = shown(&visible, &join(&dir, "bin"));
                        refused.push(Refused {
                            path: dir.clone(),
                            why: format!(
                                "a toolchain directory the environment names, but {why}: {}; name \
                                 what the sandbox should show in sandbox.readable",
                                if narrower { "only its bin is shown" } else { "not shown" }
                            ),
                        });
                    }
                }
            }
        }
        for dir in place.path_dirs.iter().map(|d| normalize(d)) {
            // agentsh's own directories stay hidden even on `$PATH` (its `bash` link): inside
            // the box, `bash` is bash.
            if hides(&dir) && !own_place(&dir) && !shown(&visible, &dir) {
                match not_a_toolchains(&dir, EnvDir::Program) {
                    None => show(&mut visible, dir, Origin::Path),
                    Some(why) => refused.push(Refused {
                        path: dir,
                        why: format!(
                            "a directory of $PATH, but {why}: not shown; name what the sandbox \
                             should show in sandbox.readable"
                        ),
                    }),
                }
            }
        }
        // A cache outside every hidden place is the person's in sight: it is copied on write
        // all the same, so the box never writes it.
        caches.retain(|c| !own_place(&c.path));
        visible.retain(|v| !own_place(&v.path));
        // The directory the command starts in: in a root above, or in sight with the system,
        // or shown on its own where it is an ordinary directory of home. Anywhere else there is
        // no box for the command (`unboxed`).
        let in_sight = write.iter().chain(&visible).chain(&caches).any(|r| within(&cwd, &r.path));
        let mut unboxed = None;
        if !in_sight && hides(&cwd) {
            // Where the command starts in a git repository that is no workspace, that is why.
            let root = place.workspace.is_git.then(|| normalize(&place.workspace.root));
            let refused_root = refused.iter().find(|r| root.as_deref() == Some(r.path.as_path()));
            match hidden_start(&cwd, &home, real_home.as_deref(), own, &private, refused_root) {
                None => show(&mut visible, cwd.clone(), Origin::Cwd),
                Some(why) => unboxed = Some(why),
            }
        }
        for r in &settings.readable {
            match expand(Path::new(&r.path), &home) {
                Some(path) if path != home && !own_place(&path) => {
                    visible.retain(|v| v.path != path);
                    visible.push(Root { path, from: Origin::Setting, source: Some(r.source.clone()) });
                }
                Some(path) => refused.push(Refused {
                    path,
                    why: "sandbox.readable cannot be home or one of agentsh's own directories".into(),
                }),
                None => refused.push(Refused {
                    path: r.path.clone().into(),
                    why: "sandbox.readable entries must be absolute or start with ~/".into(),
                }),
            }
        }

        let mut deny: Vec<Denied> = Vec::new();
        // Covered wherever they are and whatever shows them (a workspace that holds
        // `$XDG_CONFIG_HOME`, `$PATH`, `sandbox.readable`): first in the list, and the builder
        // covers them after everything else is mounted, where they really are.
        for p in own.iter().map(|p| normalize(p)) {
            deny.push(Denied { path: p, from: Origin::Agentsh, source: None });
        }
        deny.extend(SYSTEM_SECRETS.iter().map(|p| Denied { path: p.into(), from: Origin::Secret, source: None }));
        for d in &settings.deny_read {
            match expand(Path::new(&d.path), &home) {
                Some(path) => deny.push(Denied { path, from: Origin::Setting, source: Some(d.source.clone()) }),
                None => refused.push(Refused {
                    path: d.path.clone().into(),
                    why: "sandbox.denyRead entries must be absolute or start with ~/ (not applied)".into(),
                }),
            }
        }

        // The project's git remotes are allowed unasked only where no box could have written its
        // `.git/config` (rt5 B1): not a repository inside another that can be a workspace
        // (`git init sub` in a box, then a command started in `sub`), nor one inside what
        // `sandbox.writable` names (its boxes write it whole). Its hosts are asked about then,
        // like any other.
        let remotes_of = git_dir.as_ref().filter(|_| {
            let root = normalize(&place.workspace.root);
            let above = place.git_above.iter().map(|d| normalize(d)).find(|d| too_broad(place, &home, d).is_none());
            let named = settings
                .writable
                .iter()
                .filter_map(|w| expand(Path::new(&w.path), &home))
                .find(|p| p.parent().is_some() && within(&root, p));
            match above.or(named) {
                None => true,
                Some(by) => {
                    refused.push(Refused {
                        path: join(&root, ".git/config"),
                        why: format!(
                            "its remotes are not allowed unasked: {} holds it, and a command in the sandbox there can \
                             write this repository's .git/config; a connection to them is asked about like any other",
                            by.display()
                        ),
                    });
                    false
                }
            }
        });
        let net = super::proxy::NetPolicy {
            allow: settings.allow_hosts.iter().map(|h| h.path.clone()).collect(),
            deny: settings.deny_hosts.iter().map(|h| h.path.clone()).collect(),
            git_dir: remotes_of.cloned(),
            workspace: ws.clone().unwrap_or_else(|| cwd.clone()),
            records: records.to_path_buf(),
            credentials: settings.credentials.clone(),
        };
        let devices = DEVICES.iter().map(|d| Root::new(*d, Origin::Device)).collect();
        let ttys = place.ttys.iter().map(|t| Root::new(normalize(&t.path), Origin::Terminal)).collect();
        BoxSpec {
            workspace: ws,
            git_dir,
            real_home,
            home,
            cargo_home,
            cwd,
            write,
            private,
            store,
            caches,
            visible,
            hidden,
            deny,
            read_only,
            linked: Vec::new(),
            devices,
            ttys,
            store_for: terminal.to_vec(),
            network: settings.network,
            net,
            keep_terminal: place.keep_terminal,
            refused,
            unboxed,
            records: records.to_path_buf(),
            name: name.to_string(),
        }
    }
}

/// Whether a path is in the box's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sight {
    Shown,
    /// Not there (why, in words for the person and the model).
    Hidden(String),
    /// There, but covered: neither readable nor writable.
    Covered(String),
}

impl BoxSpec {
    /// Whether `path` (absolute) is in the box's view. Pure: a path is judged by the spec's
    /// lists, not by looking.
    pub fn sight(&self, path: &Path) -> Sight {
        let p = normalize(path);
        let glob = |pattern: &Path| {
            let (dir, name) = (pattern.parent(), pattern.file_name().map(|n| n.to_string_lossy().into_owned()));
            match (dir, name.as_deref().and_then(|n| n.split_once('*'))) {
                (Some(dir), Some((pre, post))) => {
                    p.parent() == Some(dir) && {
                        let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                        n.starts_with(pre) && n.ends_with(post) && n.len() > pre.len() + post.len()
                    }
                }
                _ => within(&p, pattern),
            }
        };
        if let Some(d) = self.deny.iter().find(|d| glob(&d.path)) {
            return Sight::Covered(match d.from {
                Origin::Agentsh => "it is one of agentsh's own files".to_string(),
                Origin::Setting => format!("sandbox.denyRead names it ({})", d.source.as_deref().unwrap_or("config")),
                _ => "it is a secret of the system's".to_string(),
            });
        }
        let shown = self.write.iter().chain(&self.visible).chain(&self.caches).any(|r| within(&p, &r.path));
        if shown || p == self.cwd {
            return Sight::Shown;
        }
        if within(&p, &self.home) {
            return Sight::Hidden(
                "it is in the person's home, which the sandbox replaces with its own (only their toolchains, caches \
                 and harmless settings are shown)"
                    .into(),
            );
        }
        if let Some(t) = TEMP.iter().chain(&["/dev/shm"]).find(|t| within(&p, Path::new(t))) {
            return Sight::Hidden(format!("the sandbox has a {t} of its own"));
        }
        if let Some(h) = self.hidden.iter().chain(self.private.iter()).find(|h| within(&p, &h.path)) {
            return Sight::Hidden(format!("{} is hidden whole in the sandbox", h.path.display()));
        }
        Sight::Shown
    }

    /// Whether `path` is in a place the box hides whole or has its own of, and nothing shows it
    /// there: what becomes of it is out of the box's sight.
    pub(crate) fn out_of_sight(&self, path: &Path) -> bool {
        let p = normalize(path);
        let shown = self.write.iter().chain(&self.visible).chain(&self.caches).any(|r| within(&p, &r.path));
        let hidden = self.hidden.iter().chain(&self.private).any(|h| within(&p, &h.path));
        hidden && !shown
    }

    /// Where a file the box writes at `path` in one of its private places is kept outside it
    /// (under `store`), or `None` where `path` is in none of them.
    pub fn kept_at(&self, path: &Path) -> Option<PathBuf> {
        kept_at(&self.store, &self.home, path)
    }
}

/// The person's home as the box names it. `BoxPlan` makes no box without a home (see
/// `gate::sandbox_for`); `/` stands in.
pub(crate) fn home_of(place: &Place) -> PathBuf {
    place.home.as_deref().map(normalize).unwrap_or_else(|| PathBuf::from("/"))
}

/// Where a file a box with its private places under `store` and its home at `home` writes at
/// `path` is kept outside it ([`BoxSpec::kept_at`], and a kept box's plan without its spec).
pub(crate) fn kept_at(store: &Path, home: &Path, path: &Path) -> Option<PathBuf> {
    let path = normalize(path);
    let (place, name) = [(home, "home"), (Path::new("/tmp"), "tmp"), (Path::new("/var/tmp"), "var-tmp")]
        .into_iter()
        .find(|(p, _)| within(&path, p))?;
    let rest = path.strip_prefix(place).ok()?;
    Some(join(store, name).join(rest))
}

/// What [`EnvRule::refusal`] judges a directory the environment names by: the places the box
/// hides and has its own of, and whose they are.
struct EnvRule<'a> {
    home: &'a Path,
    real_home: Option<&'a Path>,
    hidden: &'a [Root],
    private: &'a [Root],
    /// agentsh's own directories, normalized.
    own: &'a [PathBuf],
    not_toolchains: &'a [PathBuf],
    /// [`Place::projects`].
    projects: &'a [PathBuf],
    /// The workspace, whose own git repository is no other project.
    workspace: Option<&'a Path>,
    /// Cargo's home: where it is outside home, a private place of cargo's, not of sockets.
    cargo_home: Option<&'a Path>,
}

impl EnvRule<'_> {
    /// Whether the box hides `p` (nothing shown there yet).
    fn hides(&self, p: &Path) -> bool {
        self.hides_but(p, None)
    }

    /// The same, with the private place `but` left out.
    fn hides_but(&self, p: &Path, but: Option<&Path>) -> bool {
        self.hidden.iter().any(|h| within(p, &h.path))
            || self.real_home.is_some_and(|r| within(p, r))
            || self.private.iter().any(|h| Some(h.path.as_path()) != but && within(p, &h.path))
            || DEVICES_ROOT.iter().any(|d| within(p, Path::new(d)))
    }

    fn dot_dir_of_home(&self, dir: &Path) -> bool {
        dir.parent() == Some(self.home) && dir.file_name().is_some_and(|n| n.as_bytes().starts_with(b"."))
    }

    /// A directory the environment names is shown only where it is narrow: never home, a
    /// place hidden or private whole or what holds one, what holds agentsh's own directories,
    /// or a whole dot-directory of home, where tools keep their settings and tokens.
    fn too_wide(&self, dir: &Path) -> Option<&'static str> {
        let holds = |inner: &Path| within(inner, dir);
        if holds(self.home) {
            Some("it is home or holds it")
        } else if self.hidden.iter().chain(self.private).any(|h| holds(&h.path)) {
            Some("it is or holds a place the sandbox hides whole or has its own of")
        } else if self.own.iter().any(|o| holds(o)) {
            Some("it holds agentsh's own directories")
        } else if self.dot_dir_of_home(dir) {
            Some("it is a whole dot-directory of home, where tools keep their settings and tokens")
        } else {
            None
        }
    }

    /// The home holding `dir`: the person's (in either spelling), or another user's.
    fn home_of(&self, dir: &Path) -> Option<PathBuf> {
        if within(dir, self.home) && self.home.parent().is_some() {
            return Some(self.home.to_path_buf());
        }
        if let Some(r) = self.real_home.filter(|r| within(dir, r)) {
            return Some(r.to_path_buf());
        }
        if within(dir, Path::new("/root")) {
            return Some("/root".into());
        }
        let user = dir.strip_prefix("/home").ok()?.components().next()?;
        Some(Path::new("/home").join(user))
    }

    /// Default-deny for what the environment names in a hidden place (rt5 B6, B11): the
    /// environment is the agent's to set, so a directory is shown only where it is a
    /// toolchain's own. Never one inside a place the box hides whole or has its own of other
    /// than a home (`/tmp/tmux-0`, `/run/user/0`, the runtime directory: the person's
    /// sockets); in a home, never one below a dot-directory (`~/.config/gh`, `~/.docker/run`:
    /// settings, tokens, sockets), and of the ordinary ones only a programs directory
    /// (`~/bin`, `~/sdk/flutter/bin`), a toolchain's root that holds one, or a cache; never
    /// one in another project (a git repository, rt7 A3: `GOMODCACHE=~/proj2`), but a
    /// programs directory (a clone's `bin` on `$PATH`). What a moved toolchain home holds that
    /// the list shows ([`EnvDir::Layout`], [`EnvDir::Cache`]) is judged the same, where it
    /// really is (`CARGO_HOME=~/.config`: `~/.config/git`, git's credential store).
    /// What `HOME_VISIBLE` and `HOME_CACHES` list is shown whatever this says, at home or at
    /// the tool's place in the XDG data directory (`~/.local/share/cargo/registry`).
    fn refusal(&self, dir: &Path, kind: EnvDir) -> Option<&'static str> {
        if let Some(why) = self.too_wide(dir) {
            return Some(why);
        }
        let name = dir.file_name().map(|n| n.as_bytes()).unwrap_or_default();
        // The agents' snapshots, wherever their homes are: shown as copies the builder writes
        // without their secrets (`copies`), files only.
        if kind == EnvDir::Toolchain && super::copies::SNAPSHOT_NAMES.iter().any(|n| name == n.as_bytes()) {
            return None;
        }
        // Cargo's own home, private where it is outside home, is no place of the person's
        // sockets: what the list shows of it is judged as if it were not private.
        let but = self.cargo_home.filter(|_| kind == EnvDir::Layout);
        let elsewhere = (self.private.iter())
            .filter(|p| p.path != self.home && Some(p.path.as_path()) != but)
            .any(|p| within(dir, &p.path));
        let Some(in_home) = self.home_of(dir).filter(|_| !elsewhere) else {
            return self.hides_but(dir, but).then_some(INSIDE_HIDDEN);
        };
        let rel = dir.strip_prefix(&in_home).unwrap_or(dir);
        let dotted = rel.components().any(|c| c.as_os_str().as_bytes().starts_with(b"."));
        let listed_rel = xdg_data_alias(rel);
        let rel = listed_rel.as_deref().unwrap_or(rel);
        let project =
            self.projects.iter().any(|p| within(dir, p) && self.workspace != Some(p.as_path()) && p != &in_home);
        let cache =
            (rel.starts_with(".cache") && rel != Path::new(".cache")) || HOME_CACHES.iter().any(|r| rel.starts_with(r));
        match kind {
            EnvDir::Cache | EnvDir::Layout if cache => None,
            // The list's toolchains, in another home (`PYENV_ROOT=/root/.pyenv` for a person
            // whose `$HOME` is elsewhere); in theirs, the list shows them already.
            _ if HOME_VISIBLE.iter().any(|(r, from)| *from == Origin::Toolchain && rel.starts_with(r)) => None,
            EnvDir::Layout if HOME_VISIBLE.iter().any(|(r, _)| rel == Path::new(r)) => None,
            EnvDir::Layout => Some("it is no place of a toolchain's home that the sandbox lists"),
            EnvDir::Toolchain | EnvDir::Cache if project => {
                Some("it is in a git repository: another project, no toolchain's or cache's")
            }
            _ if dotted => {
                Some("it is below a dot-directory of home, where tools keep their settings, tokens and sockets")
            }
            EnvDir::Program if !PROGRAM_DIRS.iter().any(|p| name == p.as_bytes()) => {
                Some("it is no toolchain's programs directory (bin, sbin or shims)")
            }
            EnvDir::Toolchain if self.not_toolchains.iter().any(|n| normalize(n) == dir) => {
                Some("it holds no bin directory: no toolchain's")
            }
            EnvDir::Cache if !name.to_ascii_lowercase().windows(5).any(|w| w == b"cache") => {
                Some("its name is no cache's")
            }
            _ => None,
        }
    }
}

impl BoxSpec {
    /// Why the box must not show `real`, where a directory of `$PATH` (`program`) or a
    /// toolchain's that it shows really is: [`EnvRule::refusal`] again, for the directory a
    /// link on the way leads to (a box of another workspace made `bin` there a link to
    /// `~/.ssh`). The builder asks, on the directory it opened.
    pub(crate) fn refuses_as_env_dir(&self, real: &Path, program: bool) -> Option<&'static str> {
        let own: Vec<PathBuf> =
            self.deny.iter().filter(|d| d.from == Origin::Agentsh).map(|d| normalize(&d.path)).collect();
        let rule = EnvRule {
            home: &self.home,
            real_home: self.real_home.as_deref(),
            hidden: &self.hidden,
            private: &self.private,
            own: &own,
            not_toolchains: &[],
            projects: &[],
            workspace: None,
            cargo_home: Some(&self.cargo_home),
        };
        let real = normalize(real);
        if !rule.hides(&real) {
            return None;
        }
        rule.refusal(&real, if program { EnvDir::Program } else { EnvDir::Toolchain })
    }

    /// Whether `path` is one of [`HOME_VISIBLE`]'s, as this box shows them.
    pub(crate) fn listed(&self, path: &Path) -> bool {
        HOME_VISIBLE.iter().any(|(rel, _)| {
            let at = match rel.strip_prefix(".cargo/") {
                Some(rest) => join(&self.cargo_home, rest),
                None => join(&self.home, rel),
            };
            at == path
        })
    }
}

/// What a directory the environment names is to a command: its programs (`$PATH`), a
/// toolchain's root (`PYENV_ROOT`, `GOROOT`, ...), or a cache (`PIP_CACHE_DIR`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EnvDir {
    Program,
    Toolchain,
    Cache,
    /// What a toolchain's home the environment moves holds that [`HOME_VISIBLE`] or
    /// [`HOME_CACHES`] lists (`$CARGO_HOME/bin`, `$CARGO_HOME/git`, `$XDG_CACHE_HOME/ccache`):
    /// only where the list names it, or in the cache directory. Its name was the list's
    /// choice, not the person's: it says nothing.
    Layout,
}

/// The toolchain homes the XDG base directory convention moves into the data directory
/// (`CARGO_HOME=~/.local/share/cargo`, `RUSTUP_HOME`, `GOPATH`, `GRADLE_USER_HOME`), and where
/// the list has them: what the list shows of one is shown there too.
const XDG_DATA_HOMES: &[(&str, &str)] = &[
    (".local/share/cargo", ".cargo"),
    (".local/share/rustup", ".rustup"),
    (".local/share/go", "go"),
    (".local/share/gradle", ".gradle"),
];

/// `rel` (relative to a home) with a toolchain home of [`XDG_DATA_HOMES`] in the list's place.
fn xdg_data_alias(rel: &Path) -> Option<PathBuf> {
    XDG_DATA_HOMES.iter().find_map(|(xdg, listed)| Some(Path::new(listed).join(rel.strip_prefix(xdg).ok()?)))
}

/// The names of a toolchain's programs directories: the only ordinary directories of home a
/// `$PATH` entry shows (rt5 B6: `PATH=~/notes` showed the person's notes).
const PROGRAM_DIRS: &[&str] = &["bin", "sbin", "shims"];

/// How the refusals of directories the environment names begin: said on standard error when
/// the box is built (`holder`), so a command that needs one knows why it is not there.
/// Why a directory the environment names inside a hidden or box-private place is not shown.
pub const INSIDE_HIDDEN: &str = "it is inside a place the sandbox hides whole or has its own of (/tmp, /run, the runtime \
     directory), where the person's sockets are (tmux, ssh-agent, D-Bus)";

pub const ENV_DIR_REFUSALS: &[&str] =
    &["a directory of $PATH", "a toolchain directory the environment names", "a cache the environment names"];

/// `/dev` is rebuilt: only the devices listed are in it.
const DEVICES_ROOT: &[&str] = &["/dev"];

/// The places hidden whole: every home (the person's own, wherever it is, is replaced by a
/// private one), `/root`, and `/run` with its sockets (docker, D-Bus, systemd, the runtime
/// directories).
fn hidden_places() -> Vec<Root> {
    ["/home", "/root", "/run"].iter().map(|p| Root::new(*p, Origin::Hidden)).collect()
}

/// The workspace for a command run in `cwd` (issue 25): the git top-level holding it, or else
/// the nearest directory the person named in `sandbox.writable` that holds it; nothing else.
/// A directory that is neither is no project, wherever the command starts (`/tmp/tmux-0`, a
/// directory of `$PATH`, another user's home): nothing of it is writable. Never a workspace
/// either: `/`, a top-level or system directory, any user's home or what holds one (the
/// person's in both spellings, every passwd entry's, `/root`, `/home/*`), or anything in a
/// dot-directory of one (`~/.config`).
pub(crate) fn workspace(
    settings: &Settings,
    place: &Place,
    home: &Path,
    cwd: &Path,
    refused: &mut Vec<Refused>,
) -> Option<PathBuf> {
    if place.workspace.is_git {
        let root = normalize(&place.workspace.root);
        let why = too_broad(place, home, &root)
            .or_else(|| holds_path_dir(place, &root))
            .or_else(|| place.runs_elsewhere.clone());
        match why {
            None => return Some(root),
            Some(why) => refused.push(Refused { path: root, why: format!("the git top-level, but {why}") }),
        }
    }
    let named = settings
        .writable
        .iter()
        .filter_map(|w| expand(Path::new(&w.path), home))
        .filter(|p| within(cwd, p) && p.parent().is_some() && p != home)
        .max_by_key(|p| p.as_os_str().len());
    match named {
        Some(named) => match too_broad(place, home, &named) {
            None => return Some(named),
            Some(why) => refused.push(Refused {
                path: named,
                why: format!("named in sandbox.writable, but {why}: writable as named, but no workspace"),
            }),
        },
        None if !place.workspace.is_git => refused.push(Refused { path: cwd.to_path_buf(), why: NO_PROJECT.into() }),
        None => {}
    }
    None
}

/// Why a directory that is no git repository and named nowhere is no workspace.
const NO_PROJECT: &str = "it is no git repository and sandbox.writable does not name it; make it a git repository (git init) or name it in \
     sandbox.writable";

/// Directories that hold a project's own environment, whose programs are the project's (a
/// virtualenv, `node_modules/.bin`, cargo's `target`): on `$PATH` inside a git top-level, they
/// do not keep it from being the workspace.
pub(crate) const PROJECT_ENVIRONMENTS: &[&str] = &[
    ".venv",
    "venv",
    ".direnv",
    "node_modules",
    ".tox",
    ".nox",
    "__pypackages__",
    ".pixi",
    "target",
    "vendor",
    ".bundle",
];

/// Why the git top-level `root` is no workspace when it holds a directory of `$PATH` (rt3 G4): a
/// program there is one the person runs outside the box (the Flutter SDK's `bin`, depot_tools,
/// `~/bin` kept in git), and a boxed command could rewrite it or what it runs. A directory of a
/// project's own environment in it (`.venv/bin`) is the project's, as its code is. The person
/// can still make it the workspace by naming it in `sandbox.writable`.
fn holds_path_dir(place: &Place, root: &Path) -> Option<String> {
    let on_path = place.path_dirs.iter().filter(|d| d.is_absolute()).map(|d| normalize(d)).find(|d| {
        d.strip_prefix(root)
            .is_ok_and(|rest| !rest.components().any(|c| PROJECT_ENVIRONMENTS.iter().any(|e| c.as_os_str() == *e)))
    })?;
    Some(format!(
        "it holds {}, a directory of $PATH, whose programs run outside the sandbox; name it in sandbox.writable to make \
         it the workspace all the same",
        on_path.display()
    ))
}

/// Why `p` is too broad to be a workspace, if it is.
fn too_broad(place: &Place, home: &Path, p: &Path) -> Option<String> {
    if p.as_os_str() == "/" {
        return Some("it is /".into());
    }
    let real = place.real_home.as_deref().map(normalize);
    let persons = |h: &Path| h == home || real.as_deref() == Some(h);
    // `/home/NAME` holding `p`, whether or not passwd names it.
    let under_home = p
        .strip_prefix("/home")
        .ok()
        .and_then(|r| r.components().next())
        .map(|c| join(Path::new("/home"), &c.as_os_str().to_string_lossy()));
    let homes: Vec<&Path> = std::iter::once(home)
        .chain(real.as_deref())
        .chain(place.homes.iter().map(PathBuf::as_path))
        .chain(under_home.as_deref())
        .filter(|h| h.parent().is_some())
        .collect();
    if let Some(h) = homes.iter().find(|h| within(h, p)) {
        return Some(if persons(h) {
            "it is the home directory or holds it".into()
        } else {
            format!("it is a user's home directory ({}) or holds one", h.display())
        });
    }
    if top_level(p) {
        return Some("it is a top-level directory".into());
    }
    if SYSTEM_TREES.iter().any(|s| within(p, Path::new(s))) && !TEMP.iter().any(|t| within(p, Path::new(t))) {
        return Some("it is a system directory".into());
    }
    for h in homes {
        let first = p.strip_prefix(h).ok().and_then(|r| r.components().next());
        if first.is_some_and(|f| f.as_os_str().to_string_lossy().starts_with('.')) {
            return Some(if persons(h) {
                "it is in a dot-directory of home, where tools keep their settings".into()
            } else {
                format!("it is in a dot-directory of a user's home ({}), where tools keep their settings", h.display())
            });
        }
    }
    None
}

/// Why the box neither grants nor shows `cwd`, a directory it hides that no root above shows:
/// only an ordinary directory of the person's home is shown, read-only (`~/Downloads`). Never
/// home itself, anything in a dot-directory of it (`~/.ssh`, `~/.local/state`), what holds or
/// is in agentsh's own directories, or a directory of another hidden place (`/tmp/tmux-0`,
/// another user's home, `/run`): the box would show their files and sockets (issue 25).
fn hidden_start(
    cwd: &Path,
    home: &Path,
    real_home: Option<&Path>,
    own: &[PathBuf],
    private: &[Root],
    refused_root: Option<&Refused>,
) -> Option<String> {
    const FROM_A_PROJECT: &str = "run the command from a project (a git repository)";
    for h in std::iter::once(home).chain(real_home) {
        let Ok(rest) = cwd.strip_prefix(h) else { continue };
        return match rest.components().next() {
            None => Some(format!(
                "it is the home directory, which the sandbox replaces with a private one; {FROM_A_PROJECT}"
            )),
            Some(first) if first.as_os_str().to_string_lossy().starts_with('.') => Some(format!(
                "it is in a dot-directory of home, where tools keep their settings and secrets, which the sandbox \
                 hides; {FROM_A_PROJECT}"
            )),
            _ if own.iter().map(|o| normalize(o)).any(|o| within(&o, cwd) || within(cwd, &o)) => Some(format!(
                "it holds or is one of agentsh's own directories, which the sandbox hides; {FROM_A_PROJECT}"
            )),
            _ => None,
        };
    }
    let place = match TEMP.iter().chain(&["/dev/shm"]).find(|t| within(cwd, Path::new(t))) {
        Some(t) => format!("the sandbox has a {t} of its own"),
        None => match private.iter().chain(&hidden_places()).find(|h| within(cwd, &h.path)) {
            Some(h) => format!("the sandbox hides {} whole", h.path.display()),
            None => "the sandbox hides it".into(),
        },
    };
    Some(match refused_root {
        Some(r) => format!(
            "{place}, and its git top-level {} is no workspace: {}",
            r.path.display(),
            r.why.strip_prefix("the git top-level, but ").unwrap_or(&r.why)
        ),
        None => format!("{place}, and {NO_PROJECT}"),
    })
}

/// `~/x` -> home/x; absolute paths as they are; anything else `None`.
fn expand(p: &Path, home: &Path) -> Option<PathBuf> {
    if let Ok(rest) = p.strip_prefix("~") {
        return Some(normalize(&home.join(rest)));
    }
    p.is_absolute().then(|| normalize(p))
}

/// The name of a workspace's private places under the records directory: its path hashed, with
/// the terminals it keeps as the kernel made them ([`super::Terminal`]): a later terminal given
/// the same number has places of its own.
fn store_key(workspace: &Path, terminals: &[super::Terminal]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut k = super::holder::Key::new();
    k.item(workspace.as_os_str().as_bytes());
    for t in terminals {
        t.hash_into(&mut k);
    }
    k.finish()
}

/// The name of a box's record: a hash of everything [`BoxSpec::build`] is built from (the
/// settings, the facts of the [`Place`], agentsh's own directories), with agentsh's version and
/// the user. The spec is a pure function of those, so a command whose inputs hash alike gets the
/// same box. The working directory counts only through what it decides (the workspace, and
/// itself where it is shown read-only), so every directory of a project shares one box.
pub fn key(settings: &Settings, place: &Place, own: &[PathBuf], records: &Path) -> String {
    hash_inputs(settings, place, own, records, true)
}

/// A box's seat: what [`key`] hashes but the person's sandbox settings (the lists, the network,
/// where credentials go). Two boxes of one seat differ in those only: the newer one is made from
/// what the person set since, and the older one, where a job may still run, no longer stands
/// for their settings (rt5 B8: a host denied since was still reached from it). A token's value
/// counts here (it is the environment's, which two agents may differ in), not a difference.
pub fn seat(settings: &Settings, place: &Place, own: &[PathBuf], records: &Path) -> String {
    hash_inputs(settings, place, own, records, false)
}

fn hash_inputs(settings: &Settings, place: &Place, own: &[PathBuf], records: &Path, with_settings: bool) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut k = super::holder::Key::new();
    k.count(usize::from(with_settings));
    // Every list after its length, every item after its own: no two inputs hash alike.
    let lists =
        [&settings.writable, &settings.readable, &settings.deny_read, &settings.allow_hosts, &settings.deny_hosts];
    for s in lists.into_iter().filter(|_| with_settings) {
        k.count(s.len());
        for w in s {
            k.item(w.path.as_bytes());
            k.item(w.source.as_bytes());
        }
    }
    if with_settings {
        k.item(settings.network.as_str().as_bytes());
    }
    // The credentials as the proxy will send them: a changed token makes a new box (and proxy).
    k.count(settings.credentials.len());
    for c in &settings.credentials {
        if with_settings {
            k.item(c.host.as_bytes());
            k.item(c.header.as_bytes());
        }
        k.item(c.expand(|n| std::env::var(n).ok()).unwrap_or_default().as_bytes());
    }
    let p = place;
    let home = p.home.as_deref().map(normalize).unwrap_or_else(|| PathBuf::from("/"));
    let cwd = normalize(&p.cwd);
    let ws = workspace(settings, p, &home, &cwd, &mut Vec::new());
    k.path(ws.as_deref());
    // The current directory matters where it is shown on its own: outside the workspace.
    k.path(if ws.as_deref().is_some_and(|w| within(&cwd, w)) { None } else { Some(&cwd) });
    k.path(p.workspace.git_dir.as_deref().filter(|_| ws.as_deref() == Some(&normalize(&p.workspace.root))));
    k.path(p.workspace.outside_git.as_deref());
    for path in [
        &p.home,
        &p.real_home,
        &p.runtime_dir,
        &p.xdg_cache_home,
        &p.cargo_home,
        &p.rustup_home,
        &p.gopath,
        &p.gomodcache,
        &p.gradle_user_home,
    ] {
        k.path(path.as_deref());
    }
    k.count(usize::from(p.keep_terminal));
    for paths in [&p.tool_dirs, &p.cache_dirs, &p.path_dirs, &own.to_vec()] {
        k.count(paths.len());
        for path in paths {
            k.item(path.as_os_str().as_bytes());
        }
    }
    // As the kernel made them: a box kept for a closed terminal is not the next one's of that number.
    k.count(p.ttys.len());
    for t in &p.ttys {
        t.hash_into(&mut k);
    }
    k.path(Some(records));
    k.finish()
}

#[cfg(test)]
mod tests {
    use super::super::{Terminal, Workspace};
    use super::*;

    fn place(cwd: &str, home: &str) -> Place {
        Place {
            cwd: cwd.into(),
            workspace: Workspace { root: cwd.into(), git_dir: None, is_git: false, outside_git: None },
            home: Some(home.into()),
            ..Place::default()
        }
    }

    fn git(mut p: Place, root: &str) -> Place {
        p.workspace = Workspace {
            root: root.into(),
            git_dir: Some(format!("{root}/.git").into()),
            is_git: true,
            outside_git: None,
        };
        p
    }

    fn build(p: &Place) -> BoxSpec {
        BoxSpec::build(
            &Settings::default(),
            p,
            &[PathBuf::from("/h/.config/agentsh")],
            Path::new("/h/.local/state/agentsh/box"),
            "n",
        )
    }

    fn paths(roots: &[Root]) -> Vec<&Path> {
        roots.iter().map(|r| r.path.as_path()).collect()
    }

    /// rt8 A4: the kernel gives a closed terminal's number to the next one opened. A box, and the
    /// private places, kept for the agent's pty are not those of the person's terminal made later
    /// with the same path; the same terminal keeps both from one command to the next.
    #[test]
    fn a_later_terminal_of_the_same_number_has_a_box_and_places_of_its_own() {
        let records = Path::new("/h/.local/state/agentsh/box");
        let on = |made: [i64; 4]| Place {
            keep_terminal: true,
            ttys: vec![Terminal { path: "/dev/pts/1".into(), made }],
            ..git(place("/h/src/p", "/h"), "/h/src/p")
        };
        let (agents, persons) = (on([24, 4, 1000, 5]), on([24, 4, 1060, 7]));
        let (s, own) = (Settings::default(), [PathBuf::from("/h/.config/agentsh")]);
        assert_ne!(key(&s, &agents, &own, records), key(&s, &persons, &own, records));
        assert_ne!(seat(&s, &agents, &own, records), seat(&s, &persons, &own, records));
        assert_ne!(build(&agents).store, build(&persons).store);
        assert_eq!(build(&persons).store, build(&on([24, 4, 1060, 7])).store);
        assert_eq!(key(&s, &persons, &own, records), key(&s, &on([24, 4, 1060, 7]), &own, records));
    }

    #[test]
    fn a_plan_is_named_by_everything_its_spec_is_built_from() {
        let name = |settings: &Settings, place: &Place| {
            key(settings, place, &[PathBuf::from("/h/.config/agentsh")], Path::new("/r"))
        };
        let (s, p) = (Settings::default(), git(place("/w/p/src", "/h"), "/w/p"));
        let base = name(&s, &p);
        assert_eq!(name(&s, &p), base);
        // Another directory of the same project: the same box (one holder per workspace).
        assert_eq!(name(&s, &Place { cwd: "/w/p/docs".into(), ..p.clone() }), base);
        let changed: Vec<(&str, Settings, Place)> = vec![
            ("workspace", s.clone(), git(place("/w/q/src", "/h"), "/w/q")),
            ("home", s.clone(), Place { home: Some("/h2".into()), ..p.clone() }),
            ("no home", s.clone(), Place { home: None, ..p.clone() }),
            ("home's real path", s.clone(), Place { real_home: Some("/data/h".into()), ..p.clone() }),
            ("runtime dir", s.clone(), Place { runtime_dir: Some("/run/user/1".into()), ..p.clone() }),
            ("CARGO_HOME", s.clone(), Place { cargo_home: Some("/c".into()), ..p.clone() }),
            ("RUSTUP_HOME", s.clone(), Place { rustup_home: Some("/r".into()), ..p.clone() }),
            ("GRADLE_USER_HOME", s.clone(), Place { gradle_user_home: Some("/g".into()), ..p.clone() }),
            ("PATH", s.clone(), Place { path_dirs: vec!["/h/bin".into()], ..p.clone() }),
            ("a toolchain", s.clone(), Place { tool_dirs: vec!["/h/.pyenv".into()], ..p.clone() }),
            ("a cache", s.clone(), Place { cache_dirs: vec!["/var/cache/npm".into()], ..p.clone() }),
            ("terminal", s.clone(), Place { keep_terminal: true, ..p.clone() }),
            ("tty", s.clone(), Place { ttys: vec![Terminal::at("/dev/pts/3")], ..p.clone() }),
            ("network", Settings { network: Network::Off, ..s.clone() }, p.clone()),
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
            assert_ne!(name(&settings, &place), base, "{what}");
        }
        let sourced = |path: &str, source: &str| crate::policy::sandbox_settings::Sourced {
            path: path.into(),
            source: source.into(),
        };
        let as_writable = Settings { writable: vec![sourced("/x", "f")], ..s.clone() };
        let as_denied = Settings { deny_read: vec![sourced("/x", "f")], ..s.clone() };
        assert_ne!(name(&as_writable, &p), name(&as_denied, &p), "the same entry in another list");
        let joined = Settings { deny_read: vec![sourced("/a\0/b", "f")], ..s.clone() };
        let split = Settings { deny_read: vec![sourced("/a", "/b\0f")], ..s.clone() };
        assert_ne!(name(&joined, &p), name(&split, &p), "bytes moved between items");
        assert_ne!(
            key(&s, &p, &[PathBuf::from("/h/.config/other")], Path::new("/r")),
            base,
            "agentsh's own directories"
        );
        assert_ne!(
            key(&s, &p, &[PathBuf::from("/h/.config/agentsh")], Path::new("/r2")),
            base,
            "the records directory"
        );
    }

    #[test]
    fn home_is_private_with_toolchains_shown_and_caches_copied_on_write() {
        let s = build(&git(place("/h/src/p", "/h"), "/h/src/p"));
        assert_eq!(s.workspace.as_deref(), Some(Path::new("/h/src/p")));
        assert_eq!(paths(&s.write), [Path::new("/h/src/p")]);
        let private = paths(&s.private);
        for p in ["/h", "/tmp", "/var/tmp", "/dev/shm"] {
            assert!(private.contains(&Path::new(p)), "{p} not private: {private:?}");
        }
        let visible = paths(&s.visible);
        for p in ["/h/.cargo/bin", "/h/.rustup", "/h/.gitconfig", "/h/.local/bin"] {
            assert!(visible.contains(&Path::new(p)) || paths(&s.caches).contains(&Path::new(p)), "{p}: {visible:?}");
        }
        for p in ["/h/.ssh", "/h/.aws", "/h/.bashrc", "/h/.claude", "/h/.codex/auth.json", "/h/.config", "/h/.npmrc"] {
            assert!(!visible.contains(&Path::new(p)), "{p} visible");
        }
        let caches = paths(&s.caches);
        for p in ["/h/.cargo/registry", "/h/.npm", "/h/.cache/pip", "/h/go/pkg/mod", "/h/.m2/repository"] {
            assert!(caches.contains(&Path::new(p)), "{p} not a cache: {caches:?}");
        }
        assert!(!caches.contains(&Path::new("/h/.cache")), "the whole cache holds tokens (huggingface)");
        assert_eq!(paths(&s.hidden), [Path::new("/home"), Path::new("/root"), Path::new("/run")]);
        // agentsh's own directories are covered wherever they are, hidden or not (issue 25:
        // `$XDG_CONFIG_HOME` in a dotfiles repository put the config in the workspace).
        assert!(s.deny.iter().any(|d| d.from == Origin::Agentsh && d.path == Path::new("/h/.config/agentsh")));
        assert!(matches!(s.sight(Path::new("/h/.config/agentsh/config.json")), Sight::Covered(_)));
        // Out of sight in the private home: what agentsh makes there later does not make a new box.
        assert!(s.out_of_sight(Path::new("/h/.config/agentsh")));
        assert!(!s.out_of_sight(Path::new("/h/.cargo/bin/agentsh")) && !s.out_of_sight(Path::new("/etc/agentsh")));
        // What uv runs from, not its credentials.
        assert!(visible.contains(&Path::new("/h/.local/share/uv/python")));
        assert!(!visible.contains(&Path::new("/h/.local/share/uv")));
        assert!(s.deny.iter().any(|d| d.path == Path::new("/etc/shadow")));
        assert!(s.store.to_string_lossy().starts_with("/h/.local/state/agentsh/box/w-"), "{:?}", s.store);
        let ro = paths(&s.read_only);
        assert_eq!(
            ro,
            [Path::new("/h/src/p/.git/config"), Path::new("/h/src/p/.git/hooks"), Path::new("/h/src/p/.agents")]
        );
    }

    #[test]
    fn the_workspace_is_a_project_never_home_or_its_settings() {
        // Home, its ancestors, `/`, a top-level directory and system trees, as git top-levels.
        for (cwd, git_root) in [
            ("/h", "/h"),
            ("/", "/"),
            ("/srv", "/srv"),
            ("/etc/nginx", "/etc/nginx"),
            ("/usr/lib/x", "/usr/lib/x"),
            // From `~/.config` (issue 25: it became the workspace).
            ("/h/.config", "/h/.config"),
            ("/h/.config/nvim", "/h/.config"),
        ] {
            let s = build(&git(place(cwd, "/h"), git_root));
            assert_eq!(s.workspace, None, "{cwd}");
            assert!(!s.write.iter().any(|r| r.from == Origin::Workspace), "{cwd}");
            assert!(s.read_only.is_empty(), "{cwd}");
            assert!(s.refused.iter().any(|r| r.path == Path::new(git_root)), "{cwd}: {:?}", s.refused);
        }
        for (cwd, root) in [("/srv/site", "/srv/site"), ("/h/proj/src", "/h/proj"), ("/tmp/t/x", "/tmp/t")] {
            assert_eq!(build(&git(place(cwd, "/h"), root)).workspace.as_deref(), Some(Path::new(root)), "{cwd}");
        }
        // Home kept in git: a directory in it that is no repository of its own is no workspace.
        let s = build(&git(place("/h/scratch/x", "/h"), "/h"));
        assert_eq!(s.workspace, None);
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h") && r.why.contains("home directory")));
        assert_eq!(s.git_dir, None, "home's git directory is not granted");
    }

    /// rt3 G4: a git top-level that holds a directory of `$PATH` (the Flutter SDK at `~/flutter`,
    /// `~/flutter/bin` on PATH) was the workspace: a boxed command rewrote `bin/flutter`. A
    /// project's own environment on PATH (`.venv/bin`) keeps its project the workspace, and the
    /// person can name the top-level in `sandbox.writable` to make it one all the same.
    #[test]
    fn a_git_top_level_holding_a_directory_of_path_is_no_workspace() {
        for (root, on_path) in
            [("/h/flutter", "/h/flutter/bin"), ("/h/bin", "/h/bin"), ("/opt/tools", "/opt/tools/x/bin")]
        {
            let mut p = git(place(root, "/h"), root);
            p.path_dirs = vec!["/usr/bin".into(), on_path.into()];
            let s = build(&p);
            assert_eq!(s.workspace, None, "{root}");
            assert!(s.write.iter().all(|w| w.path != Path::new(root)), "{root}: {:?}", s.write);
            assert!(
                s.refused.iter().any(|r| r.path == Path::new(root) && r.why.contains("a directory of $PATH")),
                "{root}: {:?}",
                s.refused
            );
        }
        let mut p = git(place("/w/app", "/h"), "/w/app");
        p.path_dirs = ["/w/app/.venv/bin", "/w/app/node_modules/.bin", "/w/app/.direnv/python-3.12/bin", "bin"]
            .map(PathBuf::from)
            .to_vec();
        assert_eq!(build(&p).workspace.as_deref(), Some(Path::new("/w/app")), "a project's own environment");
        let mut p = git(place("/h/flutter", "/h"), "/h/flutter");
        p.path_dirs = vec!["/h/flutter/bin".into()];
        let flutter = crate::policy::sandbox_settings::Sourced { path: "/h/flutter".into(), source: "f".into() };
        let named = Settings { writable: vec![flutter], ..Settings::default() };
        let s = BoxSpec::build(&named, &p, &[PathBuf::from("/h/.config/agentsh")], Path::new("/r"), "n");
        assert_eq!(s.workspace.as_deref(), Some(Path::new("/h/flutter")), "named in sandbox.writable");
    }

    /// rt4 R5, R6, R13: a git top-level the person's tools run code from by path (found when a
    /// box is made, `Place::runs_elsewhere`) is no workspace; the command starts in it read-only
    /// where it is an ordinary directory of home, and naming it in sandbox.writable grants it.
    #[test]
    fn a_git_top_level_the_persons_tools_run_code_from_is_no_workspace() {
        let mut p = git(place("/h/powerlevel10k", "/h"), "/h/powerlevel10k");
        p.runs_elsewhere = Some("/h/.bashrc names /h/powerlevel10k/p10k.zsh-theme in it (line 3)".into());
        let s = build(&p);
        assert_eq!(s.workspace, None);
        assert!(s.write.is_empty(), "{:?}", s.write);
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h/powerlevel10k") && r.why.contains(".bashrc names")));
        assert!(s.visible.iter().any(|v| v.path == Path::new("/h/powerlevel10k") && v.from == Origin::Cwd));
        assert_eq!(s.unboxed, None);
        // Where it is not in home, the command has no box, and that is why.
        let mut t = git(place("/tmp/p10k", "/h"), "/tmp/p10k");
        t.runs_elsewhere = p.runs_elsewhere.clone();
        assert!(build(&t).unboxed.is_some_and(|w| w.contains(".bashrc names")), "{:?}", build(&t).unboxed);
        let named = crate::policy::sandbox_settings::Sourced { path: "~/powerlevel10k".into(), source: "f".into() };
        let settings = Settings { writable: vec![named], ..Settings::default() };
        let s = BoxSpec::build(&settings, &p, &[], Path::new("/r"), "n");
        assert_eq!(s.workspace.as_deref(), Some(Path::new("/h/powerlevel10k")), "named in sandbox.writable");
    }

    /// rt-files F3, F4, F5: a directory that is no git repository is no workspace, wherever the
    /// command starts (it was: the person's tmux and ssh-agent directories, a directory of
    /// `$PATH`, another user's home).
    #[test]
    fn a_directory_that_is_no_repository_is_no_workspace() {
        for cwd in
            ["/tmp/tmux-0", "/tmp/ssh-XXXX", "/opt/app/bin", "/srv/site", "/home/bob", "/h/src/x", "/h/Downloads"]
        {
            let s = build(&place(cwd, "/h"));
            assert_eq!(s.workspace, None, "{cwd}");
            assert!(s.write.is_empty(), "{cwd}: {:?}", s.write);
            assert!(s.refused.iter().any(|r| r.path == Path::new(cwd) && r.why.contains("git init")), "{cwd}");
        }
    }

    /// rt-files F4, F7: every user's home is a home, and the person's in both spellings.
    #[test]
    fn no_users_home_nor_what_holds_one_nor_its_dot_directories_is_a_workspace() {
        let mut p = place("/", "/h");
        p.real_home = Some("/data/h".into());
        p.homes = vec!["/root".into(), "/srv/bob".into(), "/data/users/carol".into(), "/bin".into()];
        for root in [
            "/home/bob",
            "/home/bob/.config/x",
            "/root",
            "/root/.cargo/x",
            "/srv/bob",
            "/srv/bob/.local/x",
            "/data/users",
            "/data/users/carol",
            "/data/h",
            "/data/h/.config/nvim",
            "/data",
        ] {
            let s = build(&git(Place { cwd: root.into(), ..p.clone() }, root));
            assert_eq!(s.workspace, None, "{root}");
            assert!(
                s.refused.iter().any(|r| r.path == Path::new(root) && r.why.contains("home")),
                "{root}: {:?}",
                s.refused
            );
        }
        // A project in a home is a project.
        for root in ["/home/bob/proj", "/srv/bob/proj", "/data/h/proj", "/data/users/carol/src/x"] {
            let s = build(&git(Place { cwd: root.into(), ..p.clone() }, root));
            assert_eq!(s.workspace.as_deref(), Some(Path::new(root)));
        }
    }

    #[test]
    fn a_directory_the_person_named_is_the_workspace_of_what_it_holds() {
        use crate::policy::sandbox_settings::Sourced;
        let named = |paths: &[&str]| Settings {
            writable: paths.iter().map(|p| Sourced { path: (*p).into(), source: "user".into() }).collect(),
            ..Settings::default()
        };
        let settings = named(&["/tmp/scratch", "/tmp/scratch/a", "~/notes", "~/.config/x"]);
        let ws = |p: &Place| BoxSpec::build(&settings, p, &[], Path::new("/r"), "n").workspace;
        assert_eq!(ws(&place("/tmp/scratch/a/b", "/h")).as_deref(), Some(Path::new("/tmp/scratch/a")));
        assert_eq!(ws(&place("/h/notes", "/h")).as_deref(), Some(Path::new("/h/notes")));
        // A git top-level comes first; a named directory too broad is writable, no workspace.
        assert_eq!(
            ws(&git(place("/tmp/scratch/r/s", "/h"), "/tmp/scratch/r")).as_deref(),
            Some(Path::new("/tmp/scratch/r"))
        );
        let s = BoxSpec::build(&settings, &place("/h/.config/x/y", "/h"), &[], Path::new("/r"), "n");
        assert_eq!(s.workspace, None);
        assert!(s.write.iter().any(|r| r.path == Path::new("/h/.config/x")));
        assert_eq!(s.unboxed, None, "the person made it writable: the box grants it");
        // Home is never writable whole, in either spelling.
        let mut p = place("/data/h/src", "/h");
        p.real_home = Some("/data/h".into());
        let s = BoxSpec::build(&named(&["/data/h"]), &p, &[], Path::new("/r"), "n");
        assert!(s.write.is_empty(), "{:?}", s.write);
    }

    /// rt-files F1: a directory the box hides is shown only where it is an ordinary directory
    /// of home; anywhere else there is no box for a command that starts there.
    #[test]
    fn a_command_that_starts_where_the_box_hides_has_no_box() {
        let own = [PathBuf::from("/h/.config/agentsh"), PathBuf::from("/h/state/agentsh")];
        let spec = |p: &Place| BoxSpec::build(&Settings::default(), p, &own, Path::new("/r"), "n");
        for (cwd, why) in [
            ("/h", "home directory"),
            ("/h/.ssh", "dot-directory"),
            ("/h/.local/state", "dot-directory"),
            ("/h/.config/agentsh", "dot-directory"),
            ("/h/state", "agentsh's own"),
            ("/h/state/agentsh/box", "agentsh's own"),
            ("/tmp/tmux-0", "git init"),
            ("/tmp", "git init"),
            ("/var/tmp/x", "git init"),
            ("/dev/shm/x", "git init"),
            ("/home/bob", "git init"),
            ("/root/x", "git init"),
            ("/run/user/0", "git init"),
        ] {
            let s = spec(&place(cwd, "/h"));
            assert!(s.unboxed.as_deref().is_some_and(|w| w.contains(why)), "{cwd}: {:?}", s.unboxed);
            assert!(!s.visible.iter().any(|v| v.from == Origin::Cwd), "{cwd} shown");
        }
        // The real home, where `$HOME` is a link to it (rt-files F7).
        let mut p = place("/data/h/.ssh", "/h");
        p.real_home = Some("/data/h".into());
        assert!(spec(&p).unboxed.is_some_and(|w| w.contains("dot-directory")));
        // Shown: an ordinary directory of home, the system, what is in sight, the workspace.
        for (cwd, git_root) in [
            ("/h/Downloads", None),
            ("/opt/app/bin", None),
            ("/h/.cargo/registry/src/x", None),
            ("/h/.cargo/bin", None),
            ("/tmp/p/src", Some("/tmp/p")),
        ] {
            let mut p = place(cwd, "/h");
            if let Some(r) = git_root {
                p = git(p, r);
            }
            assert_eq!(spec(&p).unboxed, None, "{cwd}");
        }
    }

    #[test]
    fn a_git_directory_outside_the_workspace_is_never_granted() {
        let mut p = place("/w/wt", "/h");
        p.workspace =
            Workspace { root: "/w/wt".into(), git_dir: None, is_git: true, outside_git: Some("/h/.config/x".into()) };
        let s = build(&p);
        assert_eq!(paths(&s.write), [Path::new("/w/wt")]);
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h/.config/x")), "{:?}", s.refused);
    }

    #[test]
    fn hidden_tool_and_path_directories_are_shown_and_agentshs_own_are_not() {
        let mut p = git(place("/w/p", "/h"), "/w/p");
        p.path_dirs = vec!["/usr/bin".into(), "/root/.cargo/bin".into(), "/h/.local/share/agentsh/bin".into()];
        p.tool_dirs = vec!["/root/.pyenv".into(), "/opt/java".into()];
        p.cargo_home = Some("/root/.cargo".into());
        let own = [PathBuf::from("/h/.local/share/agentsh")];
        let s = BoxSpec::build(&Settings::default(), &p, &own, Path::new("/r"), "n");
        let visible = paths(&s.visible);
        for shown in ["/root/.cargo/bin", "/root/.pyenv", "/root/.cargo/config.toml"] {
            assert!(visible.contains(&Path::new(shown)), "{shown}: {visible:?}");
        }
        for not in ["/usr/bin", "/opt/java", "/h/.local/share/agentsh/bin"] {
            assert!(!visible.contains(&Path::new(not)), "{not}: {visible:?}");
        }
        // Cargo's home outside home is private, with its registry copied on write.
        assert!(paths(&s.private).contains(&Path::new("/root/.cargo")));
        assert!(paths(&s.caches).contains(&Path::new("/root/.cargo/registry")));
        // A cache the environment names, wherever it is; never home or `/`.
        p.cache_dirs = vec!["/root/.npm".into(), "/h".into(), "/".into()];
        let s = BoxSpec::build(&Settings::default(), &p, &own, Path::new("/r"), "n");
        assert!(paths(&s.caches).contains(&Path::new("/root/.npm")));
        assert!(!paths(&s.caches).contains(&Path::new("/h")) && !paths(&s.caches).contains(&Path::new("/")));
    }

    #[test]
    fn a_directory_the_environment_names_is_never_home_or_what_holds_its_secrets() {
        let mut p = git(place("/w/p", "/h"), "/w/p");
        let own = [PathBuf::from("/h/.local/share/agentsh"), PathBuf::from("/h/.config/agentsh")];
        p.runtime_dir = Some("/h/run".into());
        p.path_dirs = ["/h", "/", "/home", "/run", "/tmp", "/h/run", "/h/.local/share", "/h/.x", "/h/.config"]
            .into_iter()
            .chain(["/h/.config/composer/vendor/bin", "/h/bin", "/h/.x/bin", "/h/sdk/flutter/bin", "/h/.pyenv/shims"])
            .map(PathBuf::from)
            .collect();
        p.tool_dirs =
            vec!["/h/.bun".into(), "/h/.local".into(), "/h/sdk/go".into(), "/h/.codex/shell_snapshots".into()];
        let s = BoxSpec::build(&Settings::default(), &p, &own, Path::new("/r"), "n");
        let visible = paths(&s.visible);
        for not in [
            "/h",
            "/home",
            "/run",
            "/tmp",
            "/h/run",
            "/h/.local/share",
            "/h/.x",
            "/h/.config",
            "/h/.bun",
            "/h/.local",
            "/h/.config/composer/vendor/bin",
            "/h/.x/bin",
        ] {
            assert!(!visible.contains(&Path::new(not)), "{not}: {visible:?}");
            assert!(s.refused.iter().any(|r| r.path == Path::new(not)), "{not} not told: {:?}", s.refused);
        }
        for shown in ["/h/bin", "/h/sdk/flutter/bin", "/h/sdk/go", "/h/.codex/shell_snapshots", "/h/.pyenv"] {
            assert!(visible.contains(&Path::new(shown)), "{shown}: {visible:?}");
        }
        // A toolchain's whole dot-directory: its programs only, where the list shows them.
        assert!(visible.contains(&Path::new("/h/.bun/bin")));
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h/.bun") && r.why.contains("only its bin")));
        assert!(s.refused.iter().any(|r| r.path == Path::new("/h/.local/share") && r.why.contains("agentsh's own")));
        // `/` is not hidden: it shows what the system shows.
        assert!(!s.refused.iter().any(|r| r.path == Path::new("/")));
    }

    /// rt5 B6, B11: the agent's `$PATH`, toolchain and cache variables name a directory below a
    /// dot-directory of home (tokens, Docker's socket), an ordinary one (notes), or one inside
    /// a place the box hides whole or has its own of (the person's tmux server in `/tmp/tmux-0`,
    /// `/run`, the runtime directory). None is shown, each is told; the ordinary toolchain
    /// layouts still are, in the person's home or another's.
    #[test]
    fn what_the_environment_names_is_shown_only_where_it_is_a_toolchains() {
        let mut p = git(place("/w/p", "/h"), "/w/p");
        p.runtime_dir = Some("/run/user/0".into());
        let refused = [
            "/h/.config/gh",
            "/h/.config/rclone",
            "/h/.docker/run",
            "/h/.local/share/keyrings",
            "/h/notes",
            "/h/Downloads",
            "/tmp/tmux-0",
            "/run/rt5b-d",
            "/run/user/0/bin",
            "/var/tmp/x/bin",
            "/dev/shm/bin",
            "/home/other/bin/../.ssh",
        ];
        p.path_dirs = refused.iter().map(PathBuf::from).collect();
        p.path_dirs.extend(
            [
                "/h/bin",
                "/root/.nvm/versions/node/v22.1.0/bin",
                "/root/.pyenv/shims",
                "/home/other/bin",
                "/usr/local/bin",
            ]
            .map(PathBuf::from),
        );
        p.tool_dirs = ["/h/.config/gcloud", "/h/notes", "/h/sdk/jdk", "/tmp/tmux-0"].map(PathBuf::from).to_vec();
        p.not_toolchains = vec!["/h/notes".into()];
        p.cache_dirs = ["/h/.aws/sso/cache", "/h/notes", "/tmp/tmux-0", "/h/work/npm-cache", "/h/.cache/npm2"]
            .map(PathBuf::from)
            .to_vec();
        let s = build(&p);
        let (visible, caches) = (paths(&s.visible), paths(&s.caches));
        for not in refused.iter().chain(&["/h/.config/gcloud", "/h/.aws/sso/cache"]) {
            let not = normalize(Path::new(not));
            assert!(!visible.contains(&not.as_path()) && !caches.contains(&not.as_path()), "{not:?} shown");
            assert!(s.refused.iter().any(|r| r.path == not), "{not:?} not told: {:?}", s.refused);
        }
        assert!(!visible.contains(&Path::new("/h/notes")) && !caches.contains(&Path::new("/h/notes")));
        assert!(s.refused.iter().any(|r| r.path == Path::new("/tmp/tmux-0") && r.why.contains("sockets")));
        for shown in ["/h/bin", "/root/.nvm/versions/node/v22.1.0/bin", "/root/.pyenv/shims", "/home/other/bin"] {
            assert!(visible.contains(&Path::new(shown)), "{shown}: {visible:?}");
        }
        assert!(visible.contains(&Path::new("/h/sdk/jdk")), "a toolchain's root that holds one: {visible:?}");
        for cache in ["/h/work/npm-cache", "/h/.cache/npm2"] {
            assert!(caches.contains(&Path::new(cache)), "{cache}: {caches:?}");
        }
        // The person's own: shown by the list, whatever the environment says.
        for listed in ["/h/.cargo/bin", "/h/.local/bin", "/h/.nvm", "/h/go/bin", "/h/.pyenv"] {
            assert!(visible.contains(&Path::new(listed)), "{listed}: {visible:?}");
        }
    }

    #[test]
    fn a_cache_the_environment_names_is_never_home_or_a_dot_directory_of_its_settings() {
        let mut p = git(place("/w/p", "/h"), "/w/p");
        p.cache_dirs = ["/h/.config", "/h/.npm", "/h/work/cache", "/h/.local/state"].map(PathBuf::from).to_vec();
        p.gomodcache = Some("/h/.ssh".into());
        p.rustup_home = Some("/h".into());
        let s =
            BoxSpec::build(&Settings::default(), &p, &[PathBuf::from("/h/.local/state/agentsh")], Path::new("/r"), "n");
        let caches = paths(&s.caches);
        for not in ["/h/.config", "/h/.ssh", "/h", "/h/.local/state"] {
            assert!(!caches.contains(&Path::new(not)), "{not}: {caches:?}");
            assert!(s.refused.iter().any(|r| r.path == Path::new(not) && r.why.contains("a cache")), "{not} not told");
        }
        // The caches of the built-in list stay, wherever a variable also names them.
        for kept in ["/h/.npm", "/h/work/cache", "/h/.cargo/registry"] {
            assert!(caches.contains(&Path::new(kept)), "{kept}: {caches:?}");
        }
    }

    /// rt7 A3: every variable [`Place`] reads a directory from, set to a directory below a
    /// dot-directory of home (`~/.config/gh`), an ordinary one (`~/Documents`) or another
    /// project (`~/proj2`): nothing in it is shown, not even what a toolchain's home holds
    /// (`CARGO_HOME=~/.config` made `~/.config/git`, git's credential store, a cache). The
    /// toolchain homes where people keep them still are.
    #[test]
    fn no_variable_shows_settings_ordinary_directories_or_other_projects() {
        type Set = fn(&mut Place, PathBuf);
        let vars: &[(&str, Set)] = &[
            ("XDG_CACHE_HOME", |p, d| p.xdg_cache_home = Some(d)),
            ("CARGO_HOME", |p, d| p.cargo_home = Some(d)),
            ("RUSTUP_HOME", |p, d| p.rustup_home = Some(d)),
            ("GOPATH", |p, d| p.gopath = Some(d)),
            ("GOMODCACHE", |p, d| p.gomodcache = Some(d)),
            ("GRADLE_USER_HOME", |p, d| p.gradle_user_home = Some(d)),
            ("a toolchain variable", |p, d| p.tool_dirs = vec![d]),
            ("a cache variable", |p, d| p.cache_dirs = vec![d]),
            ("PATH", |p, d| p.path_dirs = vec![d]),
        ];
        for (var, set) in vars {
            for dir in ["/h/.config/gh", "/h/.config", "/h/Documents", "/h/proj2", "/h/lru-cache", "/h/.gnupg/x"] {
                let mut p = git(place("/w/p", "/h"), "/w/p");
                p.projects = vec!["/h/proj2".into(), "/h/lru-cache".into()];
                // None of them holds what a toolchain's root does (`bin`, `shims`, ...).
                p.not_toolchains = vec![dir.into()];
                let listed = build(&p);
                set(&mut p, dir.into());
                let s = build(&p);
                let mut shown = s.visible.iter().chain(&s.caches);
                let more = shown.find(|r| {
                    within(&r.path, Path::new(dir)) && !listed.visible.iter().chain(&listed.caches).any(|l| l == *r)
                });
                assert!(more.is_none(), "{var}={dir} shows {more:?}");
            }
        }
        let ordinary: &[(&str, Set, &str, &str)] = &[
            ("CARGO_HOME", |p, d| p.cargo_home = Some(d), "/h/.local/share/cargo", "/h/.local/share/cargo/registry"),
            ("CARGO_HOME", |p, d| p.cargo_home = Some(d), "/h/.local/share/cargo", "/h/.local/share/cargo/bin"),
            ("CARGO_HOME", |p, d| p.cargo_home = Some(d), "/root/.cargo", "/root/.cargo/registry"),
            ("CARGO_HOME", |p, d| p.cargo_home = Some(d), "/usr/local/cargo", "/usr/local/cargo/git"),
            ("RUSTUP_HOME", |p, d| p.rustup_home = Some(d), "/h/.local/share/rustup", "/h/.local/share/rustup"),
            ("RUSTUP_HOME", |p, d| p.rustup_home = Some(d), "/root/.rustup", "/root/.rustup"),
            ("GOPATH", |p, d| p.gopath = Some(d), "/h/.local/share/go", "/h/.local/share/go/pkg/mod"),
            ("GOMODCACHE", |p, d| p.gomodcache = Some(d), "/h/.cache/go/mod", "/h/.cache/go/mod"),
            (
                "GRADLE_USER_HOME",
                |p, d| p.gradle_user_home = Some(d),
                "/h/.local/share/gradle",
                "/h/.local/share/gradle/caches",
            ),
            ("XDG_CACHE_HOME", |p, d| p.xdg_cache_home = Some(d), "/h/.cache", "/h/.cache/pip"),
            ("a cache variable", |p, d| p.cache_dirs = vec![d], "/h/work/npm-cache", "/h/work/npm-cache"),
        ];
        for (var, set, value, shown) in ordinary {
            let mut p = git(place("/w/p", "/h"), "/w/p");
            p.projects = vec!["/h/proj2".into()];
            set(&mut p, value.into());
            let s = build(&p);
            assert!(
                s.visible.iter().chain(&s.caches).any(|r| r.path == Path::new(shown)),
                "{var}: {shown} not shown: {:?}",
                s.refused
            );
        }
    }

    #[test]
    fn the_current_directory_is_shown_where_nothing_else_shows_it() {
        let s = build(&place("/h/Downloads", "/h"));
        assert!(s.visible.iter().any(|v| v.path == Path::new("/h/Downloads") && v.from == Origin::Cwd));
        let s = build(&git(place("/h/p/src", "/h"), "/h/p"));
        assert!(!s.visible.iter().any(|v| v.from == Origin::Cwd));
    }

    #[test]
    fn settings_add_roots_and_denials() {
        use crate::policy::sandbox_settings::Sourced;
        let src = |p: &str| Sourced { path: p.into(), source: "~/.config/agentsh/config.json".into() };
        let settings = Settings {
            writable: vec![src("~/data"), src("rel"), src("/"), src("~/")],
            deny_read: vec![src("/srv/secret")],
            ..Settings::default()
        };
        let s = BoxSpec::build(&settings, &place("/w/p", "/h"), &[], Path::new("/r"), "n");
        let data = s.write.iter().find(|r| r.path == Path::new("/h/data")).unwrap();
        assert_eq!((data.from, data.source.as_deref()), (Origin::Setting, Some("~/.config/agentsh/config.json")));
        assert!(s.deny.iter().any(|d| d.path == Path::new("/srv/secret") && d.from == Origin::Setting));
        // The three entries, and the current directory: no repository, named nowhere.
        assert_eq!(s.refused.len(), 4, "{:?}", s.refused);
    }

    #[test]
    fn what_the_box_shows_and_hides_is_told_by_the_spec() {
        let s = build(&git(place("/h/p", "/h"), "/h/p"));
        assert_eq!(s.sight(Path::new("/h/p/src/main.rs")), Sight::Shown);
        assert_eq!(s.sight(Path::new("/usr/bin/git")), Sight::Shown);
        assert_eq!(s.sight(Path::new("/h/.cargo/bin/cargo")), Sight::Shown);
        assert!(matches!(s.sight(Path::new("/h/.ssh/id_rsa")), Sight::Hidden(w) if w.contains("home")));
        assert!(matches!(s.sight(Path::new("/tmp/x")), Sight::Hidden(w) if w.contains("/tmp of its own")));
        assert!(matches!(s.sight(Path::new("/run/user/0/bus")), Sight::Hidden(_)));
        assert!(matches!(s.sight(Path::new("/etc/shadow")), Sight::Covered(_)));
        assert!(matches!(s.sight(Path::new("/etc/ssh/ssh_host_rsa_key")), Sight::Covered(_)));
        assert_eq!(s.sight(Path::new("/etc/ssh/ssh_host_rsa_key.pub")), Sight::Shown);
    }

    /// rt5 B1: a repository a box made inside the workspace (`git init sub`, its `.git/config`
    /// written there) names its own remotes; the proxy of a box started in it allows none of
    /// them unasked. A repository inside home kept in git (never a workspace) keeps its own.
    #[test]
    fn a_nested_repositorys_remotes_are_not_allowed_unasked() {
        let mut p = git(place("/w/p/sub", "/h"), "/w/p/sub");
        assert_eq!(build(&p).net.git_dir.as_deref(), Some(Path::new("/w/p/sub/.git")), "a project of its own");
        p.git_above = vec!["/w/p".into()];
        let s = build(&p);
        assert_eq!(s.net.git_dir, None);
        assert!(s.refused.iter().any(|r| r.path == Path::new("/w/p/sub/.git/config") && r.why.contains("/w/p holds")));
        // Home (dotfiles kept in git) and `/` are never a workspace: no box writes through them.
        let mut p = git(place("/h/code/app", "/h"), "/h/code/app");
        p.git_above = vec!["/h".into(), "/".into()];
        assert_eq!(build(&p).net.git_dir.as_deref(), Some(Path::new("/h/code/app/.git")));
        // A directory sandbox.writable names is written whole by every box.
        use crate::policy::sandbox_settings::Sourced;
        let settings = Settings {
            writable: vec![Sourced { path: "~/code".into(), source: "config".into() }],
            ..Settings::default()
        };
        let s = BoxSpec::build(&settings, &p, &[], Path::new("/r"), "n");
        assert_eq!(s.net.git_dir, None);
    }

    #[test]
    fn the_spec_survives_a_round_trip_through_json() {
        let s = build(&git(place("/h/p", "/h"), "/h/p"));
        let back: BoxSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
