//! The user's home and agentsh's directories (`~/.config/agentsh`, `~/.local/state/agentsh`,
//! ...), looked up once per process: each lookup reads the environment and builds several paths,
//! and a `-c` run needed three (docs/BENCHMARKS.md). The environment does not change while
//! agentsh runs.
//!
//! Also the checks that keep agentsh's private directories its own ([`private_dir`]): the state
//! directory (the audit log and its seal), the approval queue, and the records of kept
//! namespaces. With `HOME` or `XDG_STATE_HOME` in a shared place, another user could make the
//! directory first and then read or cut the audit log written into it (issue 27).

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The user's home directory: `$HOME` when it is an absolute path; otherwise (unset, empty, or
/// relative, which would put agentsh's files under whatever directory a command starts in) the
/// home of the user's passwd entry. `None` when neither names one. Every reading of the home
/// goes through here: agentsh's directories, the box (`run::sandbox::Place`) and the judge's
/// view of `~` then agree.
pub fn home() -> Option<&'static Path> {
    static HOME: OnceLock<Option<PathBuf>> = OnceLock::new();
    HOME.get_or_init(|| home_from(std::env::var_os("HOME"), || passwd(nix::unistd::getuid().as_raw()).map(|p| p.home)))
        .as_deref()
}

/// [`home`] from the value of `HOME` and a lookup of the passwd entry's home.
fn home_from(env: Option<std::ffi::OsString>, passwd_home: impl FnOnce() -> Option<String>) -> Option<PathBuf> {
    let absolute = |p: PathBuf| p.is_absolute().then_some(p);
    env.map(PathBuf::from).and_then(absolute).or_else(|| passwd_home().map(PathBuf::from).and_then(absolute))
}

/// agentsh's own directories, each `<XDG base, when absolute, else its default under home>/agentsh`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirs {
    config: PathBuf,
    data: PathBuf,
    cache: PathBuf,
    state: PathBuf,
    runtime: Option<PathBuf>,
}

impl Dirs {
    /// `~/.config/agentsh` (`$XDG_CONFIG_HOME/agentsh`): the user config.
    pub fn config_dir(&self) -> &Path {
        &self.config
    }
    /// `~/.local/share/agentsh` (`$XDG_DATA_HOME/agentsh`): trust records, the `bash` link.
    pub fn data_dir(&self) -> &Path {
        &self.data
    }
    /// The same as [`Dirs::data_dir`] on Linux.
    pub fn data_local_dir(&self) -> &Path {
        &self.data
    }
    /// `~/.cache/agentsh` (`$XDG_CACHE_HOME/agentsh`).
    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }
    /// `~/.local/state/agentsh` (`$XDG_STATE_HOME/agentsh`). Unchecked: see [`state`].
    pub fn state_dir(&self) -> Option<&Path> {
        Some(&self.state)
    }
    /// `$XDG_RUNTIME_DIR/agentsh`, when that is set to an absolute path.
    pub fn runtime_dir(&self) -> Option<&Path> {
        self.runtime.as_deref()
    }
}

/// `None` when no home directory can be found ([`home`]).
pub fn project() -> Option<&'static Dirs> {
    static DIRS: OnceLock<Option<Dirs>> = OnceLock::new();
    DIRS.get_or_init(|| dirs_from(home()?, |name| std::env::var_os(name))).as_ref()
}

/// [`Dirs`] under `home`, with the XDG variables read through `var`.
fn dirs_from(home: &Path, var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<Dirs> {
    let base = |name: &str, default: &str| {
        var(name).map(PathBuf::from).filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(default)).join("agentsh")
    };
    Some(Dirs {
        config: base("XDG_CONFIG_HOME", ".config"),
        data: base("XDG_DATA_HOME", ".local/share"),
        cache: base("XDG_CACHE_HOME", ".cache"),
        state: base("XDG_STATE_HOME", ".local/state"),
        runtime: var("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute()).map(|p| p.join("agentsh")),
    })
}

/// `a/b/../c` -> `a/c`, lexically (for paths read from git's files and the environment). A path
/// that is already normal (most are) is copied without parsing its components.
pub fn normalize(p: &Path) -> PathBuf {
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

/// Where the kernel takes an absolute path: the real path of its longest existing part (every
/// link followed, each `..` taken as the parent of the real directory it follows) with the
/// missing rest as written, and every directory a name was looked up in on the way. A command
/// that can write one of those directories can change where the path leads (replace a name
/// with a link), so each is judged, not only where the path lands (rt6b G1: `ws/l/../../cfg`
/// is `ws/cfg` when the box made `l` a link to `ws/a/b`).
#[derive(Debug, PartialEq, Eq)]
struct Reached {
    real: PathBuf,
    looked_in: Vec<PathBuf>,
}

/// What is at a path, not following a link there.
#[derive(Clone, Debug)]
enum Entry {
    Dir,
    Link(PathBuf),
    Other,
    Missing,
}

/// [`Entry`] of `path` (an `lstat`, and a `readlink` for a link), once per process: agentsh's
/// directories share their first components (`~/.local/state`, `~/.local/share`), and each is
/// judged again by each check that reads it.
fn entry(path: &Path) -> std::io::Result<Entry> {
    static SEEN: std::sync::Mutex<Vec<(PathBuf, Entry)>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // By bytes: every path asked is built the same way (`join` of names), and `Path`'s own `==`
    // parses both into components (most of a command's cost here, before).
    if let Some((_, e)) = seen.iter().find(|(p, _)| p.as_os_str() == path.as_os_str()) {
        return Ok(e.clone());
    }
    let e = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Entry::Link(std::fs::read_link(path)?),
        Ok(m) if m.is_dir() => Entry::Dir,
        Ok(_) => Entry::Other,
        // A parent that is a file: nothing can be made below it either.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => Entry::Missing,
        Err(e) => return Err(e),
    };
    seen.push((path.to_path_buf(), e.clone()));
    Ok(e)
}

/// [`Reached`] for an absolute `path`. `Err` (in words) where the kernel could not follow it
/// either (a loop of links), where it climbs with `..` out of a directory that is not there
/// (what it would name depends on what is made there later), or where a name cannot be looked
/// at (no permission): such a place is judged as one a box writes.
fn reach(path: &Path) -> Result<Reached, String> {
    use std::collections::VecDeque;
    use std::ffi::OsString;
    use std::path::Component;
    if !path.is_absolute() {
        return Err("it is not an absolute path".into());
    }
    let parts = |p: &Path| -> Vec<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut pending: VecDeque<OsString> = parts(path).into();
    let (mut cur, mut looked_in, mut hops) = (PathBuf::from("/"), Vec::<PathBuf>::new(), 0);
    while let Some(name) = pending.pop_front() {
        if !looked_in.iter().any(|d| d.as_os_str() == cur.as_os_str()) {
            looked_in.push(cur.clone());
        }
        if name == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&name);
        match entry(&next).map_err(|e| format!("{} cannot be looked at: {e}", shown(&next)))? {
            Entry::Dir => cur = next,
            Entry::Other if pending.is_empty() => cur = next,
            Entry::Other | Entry::Missing => {
                if pending.iter().any(|n| n == "..") {
                    return Err(format!(
                        "it climbs with .. out of {}, which is not a directory that is there",
                        shown(&next)
                    ));
                }
                cur = next;
                cur.extend(pending);
                return Ok(Reached { real: cur, looked_in });
            }
            Entry::Link(target) => {
                hops += 1;
                if hops > 40 {
                    return Err("its links loop (more than 40 followed)".into());
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for n in parts(&target).into_iter().rev() {
                    pending.push_front(n);
                }
            }
        }
    }
    Ok(Reached { real: cur, looked_in })
}

/// The homes no box makes a workspace, or writes what their dot-directories hold, whatever
/// the environment it is made in (`run::sandbox::spec`'s `too_broad`): `/root`, `/home/NAME`,
/// every home `/etc/passwd` names; and `home` (`$HOME`, really where it is) when no git work
/// tree holds it. A `$HOME` inside one (rt6b G5: `HOME=ws/fh`) is no home to the box: a box of
/// the person's own environment, with `ws` as its workspace, writes `ws/fh/.config`.
struct Homes {
    /// As bytes: `Path`'s own `==` and `starts_with` parse paths into components, and these are
    /// asked of every directory above each of agentsh's own, on every command (comparing them
    /// as `Path`s cost 0.1 ms a command). A machine names a few dozen homes: a scan of them costs
    /// less than sorting them, and every directory above them, once per process (session 19).
    fixed: Vec<OsString>,
}

/// Whether `a` is `root` or below it, by bytes (both absolute and normalized).
fn under_bytes(a: &[u8], root: &[u8]) -> bool {
    root == b"/" || a.strip_prefix(root).is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// [`under_bytes`] of two paths.
fn under(a: &Path, root: &Path) -> bool {
    under_bytes(a.as_os_str().as_encoded_bytes(), root.as_os_str().as_encoded_bytes())
}

impl Homes {
    fn new(home: &Path, passwd: Vec<PathBuf>) -> Homes {
        let mut homes = Homes { fixed: Vec::new() };
        homes.add(passwd.into_iter().filter(|h| h.parent().is_some()));
        // Home, where it really is; not a home of its own where a work tree holds it, or where
        // it cannot be followed.
        if let Ok(r) = reach(home)
            && r.real.parent().is_some()
            && (homes.known(&r.real) || homes.tree_holding(&r.real).is_none())
        {
            homes.add([r.real]);
        }
        homes
    }

    fn add(&mut self, homes: impl IntoIterator<Item = PathBuf>) {
        for home in homes {
            if !self.fixed.iter().any(|h| *h == home.as_os_str()) {
                self.fixed.push(home.into_os_string());
            }
        }
    }

    /// `a` is one of these homes (or `/root`, `/home/NAME`).
    fn known(&self, a: &Path) -> bool {
        let b = a.as_os_str().as_encoded_bytes();
        b == b"/root"
            || b.strip_prefix(b"/home/").is_some_and(|name| !name.is_empty() && !name.contains(&b'/'))
            || self.fixed.iter().any(|h| h.as_encoded_bytes() == b)
    }

    /// No box makes `a` its workspace, whatever it holds: `/`, a top-level or system directory
    /// (not the temporary ones), a home or what holds one, anything in a dot-directory of one.
    fn never(&self, a: &Path) -> bool {
        const SYSTEM: [&[u8]; 11] =
            [b"/etc", b"/dev", b"/proc", b"/sys", b"/boot", b"/run", b"/usr", b"/bin", b"/sbin", b"/lib", b"/var"];
        const TEMP: [&[u8]; 2] = [b"/tmp", b"/var/tmp"];
        let b = a.as_os_str().as_encoded_bytes();
        let system = SYSTEM.iter().any(|s| under_bytes(b, s)) && !TEMP.iter().any(|t| under_bytes(b, t));
        // `/` and a top-level directory: at most one slash.
        let top = b.iter().filter(|c| **c == b'/').count() <= 1;
        // A home, or a directory that holds one.
        if top || system || self.known(a) || self.fixed.iter().any(|h| under_bytes(h.as_encoded_bytes(), b)) {
            return true;
        }
        // In a dot-directory of a home: the name right below a home starts with a dot.
        let mut below: Option<&Path> = None;
        for p in a.ancestors() {
            if let Some(b) = below
                && b.file_name().is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
                && self.known(p)
            {
                return true;
            }
            below = Some(p);
        }
        false
    }

    /// The git work tree holding the real directory `dir` that a box could have as its
    /// workspace: a `statx` of `.git` in each directory above it that could be one.
    fn tree_holding(&self, dir: &Path) -> Option<PathBuf> {
        dir.ancestors()
            .filter(|a| !self.never(a))
            .find(|a| std::fs::symlink_metadata(a.join(".git")).is_ok())
            .map(Path::to_path_buf)
    }
}

/// Why a command's box could write what is in `dir` (one of agentsh's own directories, or a file
/// of one), in words ("it is in X, a git work tree"), if it could (rt5 B10, rt6b G1, G5): where
/// it really is, or any directory its path is looked up in, is in a git work tree, which a box
/// can have as its workspace; or its path cannot be followed. `home` is `$HOME`.
///
/// Judged where the kernel takes the path, links and `..` followed ([`reach`]): an `lstat` of
/// each of its components (shared by agentsh's directories, once per process). Home and its
/// dot-directories (`~/.config/agentsh`) cost nothing more, unless no passwd entry names home:
/// then a `statx` of `.git` for each directory above it, once.
pub fn box_writable(dir: &Path, home: &Path) -> Option<String> {
    let reached = reach(dir);
    if let Ok(r) = &reached
        && let Some(why) = box_stores().iter().find_map(|s| in_box_store(&r.real, s))
    {
        return Some(why);
    }
    writable_reached(dir, reached, &homes_of(home))
}

/// Where agentsh keeps its sandboxes' own places (`<state>/box`, and the passwd home's), really
/// where they are; once per process: agentsh judges several of its directories.
fn box_stores() -> &'static [PathBuf] {
    static STORES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    STORES.get_or_init(|| {
        let passwd = passwd(nix::unistd::getuid().as_raw()).map(|p| Path::new(&p.home).join(".local/state/agentsh"));
        let real = |s: PathBuf| reach(&s).map_or_else(|_| normalize(&s), |r| r.real);
        [state_dir(), passwd].into_iter().flatten().map(|s| real(s.join("box"))).collect()
    })
}

/// Where an existing absolute `path` really is (every link followed), as long as no box can make
/// it lead elsewhere: no directory its name is looked up in off the way to where it lands (a
/// link's own directory, one a `..` climbs out of) is in a git work tree a box may have, or in
/// agentsh's box store. `Err` says why, in words. What a path is judged to be when agentsh
/// decides is then what it is when the kernel runs it (rt7 C1: a link in the workspace, which a
/// job left in a kept box swapped between agentsh and a script, was judged to be this agentsh
/// and ran the script unconfined). The directories on the way to where it lands are where the
/// file itself is: a box that can write them can replace the file, link or no link.
pub fn settled(path: &Path, home: &Path) -> Result<PathBuf, String> {
    let reached = reach(path)?;
    let homes = homes_of(home);
    for d in reached.looked_in.iter().filter(|d| !under(&reached.real, d)) {
        if let Some(why) = box_stores().iter().find_map(|s| in_box_store(d, s)) {
            return Err(why);
        }
        if let Some(why) = through_tree(d, &homes) {
            return Err(why);
        }
    }
    Ok(reached.real)
}

/// Why a box could change where a path looked up in `dir` leads: `dir` is in a git work tree.
fn through_tree(dir: &Path, homes: &Homes) -> Option<String> {
    homes.tree_holding(dir).map(|tree| {
        format!(
            "its path goes through {}, in {}, a git work tree, where a command in the sandbox could change where it leads",
            shown(dir),
            shown(&tree)
        )
    })
}

/// Why `dir` is in `store`, where agentsh keeps its sandboxes' own places (each box's private
/// home and `/tmp`, which its commands write), judged where both really are (rt6b G6: a config a
/// box wrote in its own `/tmp`, found through the box's mount table, named by
/// `XDG_CONFIG_HOME`, was read as the person's).
fn in_box_store(real: &Path, store: &Path) -> Option<String> {
    under(real, store).then(|| {
        format!(
            "it is in {}, where agentsh keeps its sandboxes' own places (their home and /tmp), which commands in the \
             sandbox write",
            shown(store)
        )
    })
}

/// The git work tree holding `dir` (taken as written: resolve it first) that a command's box
/// could have as its workspace, and so write whatever is in `dir`. Never one the box refuses as
/// a workspace whatever it holds ([`Homes::never`]), so agentsh's default places cost no system
/// call; else a `statx` of `.git` in each directory that could be one. `$HOME` (`home`) counts
/// as a home only where no git work tree holds it (rt6b G5).
pub fn workspace_holding(dir: &Path, home: &Path) -> Option<PathBuf> {
    homes_of(home).tree_holding(&normalize(dir))
}

/// [`Homes`] for `home`, once per process.
fn homes_of(home: &Path) -> std::sync::Arc<Homes> {
    static HOMES: std::sync::Mutex<Vec<(PathBuf, std::sync::Arc<Homes>)>> = std::sync::Mutex::new(Vec::new());
    let mut all = HOMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match all.iter().find(|(h, _)| h == home) {
        Some((_, homes)) => homes.clone(),
        None => {
            let homes = std::sync::Arc::new(Homes::new(home, homes()));
            all.push((home.to_path_buf(), homes.clone()));
            homes
        }
    }
}

#[cfg(test)]
fn writable_by_a_box(dir: &Path, homes: &Homes) -> Option<String> {
    writable_reached(dir, reach(dir), homes)
}

/// [`writable_by_a_box`] of `dir`, [`reach`]ed already.
fn writable_reached(dir: &Path, reached: Result<Reached, String>, homes: &Homes) -> Option<String> {
    let reached = match reached {
        Ok(r) => r,
        Err(why) => return Some(format!("its path cannot be judged ({why})")),
    };
    let real = &reached.real;
    let seen_as = |tree: &Path| {
        let normal = normalize(dir);
        if *real == normal {
            format!("it is in {}, a git work tree", shown(tree))
        } else {
            format!("it is really {}, in {}, a git work tree", shown(real), shown(tree))
        }
    };
    if let Some(tree) = homes.tree_holding(real) {
        return Some(seen_as(&tree));
    }
    // A directory the path is looked up in off the way to where it lands (before a `..` or a
    // link): a box that writes it can send the path elsewhere.
    reached.looked_in.iter().filter(|d| !under(real, d)).find_map(|d| through_tree(d, homes))
}

/// `~/.local/state/agentsh` (`$XDG_STATE_HOME/agentsh`), as a path: where the audit log and the
/// box's records are. Nothing is checked; use [`state`] before writing or trusting anything there.
pub fn state_dir() -> Option<PathBuf> {
    project().map(|d| d.state.clone())
}

/// The state directory, made (0700) if it is missing and checked ([`private_dir`]): once per
/// process. `Err` says why it cannot be used and what to do, for a message.
pub fn state() -> Result<&'static Path, String> {
    static STATE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let dir =
                state_dir().ok_or("no home directory to keep it in (HOME is unset, and no passwd entry names one)")?;
            // In a git work tree a command in the sandbox could write it: forge a grant or a
            // queue's answer, cut the log (rt5 B10). Nothing agentsh keeps there would be its own.
            if let Some(why) = home().and_then(|h| box_writable(&dir, h)) {
                return Err(format!(
                    "{}: {why}, where a command in the sandbox could write it: point XDG_STATE_HOME (or HOME) at a \
                     directory of your own outside any git repository",
                    shown(&dir),
                ));
            }
            private_dir(&dir)?;
            Ok(dir)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// Makes `path` a directory of agentsh's own if it is missing (mode 0700, with any missing
/// parents), and checks it ([`check_private`]). The state directory, the approval queue and the
/// records of kept namespaces all go through here.
pub fn private_dir(path: &Path) -> Result<(), String> {
    let uid = nix::unistd::geteuid().as_raw();
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)
                .map_err(|e| format!("cannot create {}: {e}", shown(path)))?;
            std::fs::symlink_metadata(path)
        }
        found => found,
    };
    let meta = meta.map_err(|e| format!("cannot inspect {}: {e}", shown(path)))?;
    check(path, &meta, uid)
}

/// A directory agentsh keeps private files in must be a real directory (not a symbolic link),
/// belong to `uid`, and be writable by no one else: otherwise someone else made it, or can put
/// files in it, and could read, replace or cut what agentsh keeps there. One that others can only
/// read or enter is ours alone (no one else could have put anything in it) and is closed to them
/// here (`chmod 700`), through a descriptor that cannot follow a link. `Err` says what to fix.
pub fn check_private(path: &Path, uid: u32) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot inspect {}: {e}", shown(path)))?;
    check(path, &meta, uid)
}

fn check(path: &Path, meta: &std::fs::Metadata, uid: u32) -> Result<(), String> {
    let mode = meta.mode() & 0o777;
    // The common case first, before any text is made: this runs on every command.
    if meta.is_dir() && !meta.file_type().is_symlink() && meta.uid() == uid && mode & 0o077 == 0 {
        return Ok(());
    }
    let shown = shown(path);
    if meta.file_type().is_symlink() {
        return Err(format!(
            "{shown} is a symbolic link; agentsh keeps its files only in a real directory of yours: remove the link"
        ));
    }
    if !meta.is_dir() {
        return Err(format!("{shown} is {}, not a directory: move it away", crate::policy::files::kind(meta)));
    }
    if meta.uid() != uid {
        return Err(format!(
            "{shown} belongs to another user (uid {}), who could read or change what agentsh keeps there: \
             remove it, or point HOME or XDG_STATE_HOME at a directory of your own",
            meta.uid()
        ));
    }
    if mode & 0o022 != 0 {
        return Err(format!(
            "{shown} is open to other users (mode {mode:o}): they could have put files in it; check what is \
             in it, then run chmod 700 on it"
        ));
    }
    if mode & 0o077 != 0 {
        close_to_others(path)
            .map_err(|e| format!("{shown} is open to other users (mode {mode:o}); run chmod 700 on it ({e})"))?;
    }
    Ok(())
}

/// `chmod 700` of a directory, through a descriptor opened without following a link.
fn close_to_others(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path)?;
    dir.set_permissions(std::fs::Permissions::from_mode(0o700))
}

fn shown(path: &Path) -> String {
    crate::text::sanitize::sanitize(&path.display().to_string())
}

/// A user's passwd entry: the name, the home directory and the login shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passwd {
    pub name: String,
    pub home: String,
    pub shell: String,
}

/// The passwd entry of `uid`, from `/etc/passwd`. Not `$USER` or `$HOME`, which the agent sets.
/// Never through NSS (`getpwuid`): agentsh is linked statically (`.cargo/config.toml`), and
/// glibc's NSS modules, loaded into a static program, crash it (SIGSEGV, no message, no record)
/// for a user `/etc/passwd` does not list, such as a container's `-u 1234` (issue 27). Such a
/// user has no name here (records show the uid) and no home from here (`HOME` must name it).
pub fn passwd(uid: u32) -> Option<Passwd> {
    passwd_line(passwd_file(), uid)
}

/// The home directory `/etc/passwd` gives the user `name` (what a shell makes of `~name/`),
/// absolute; `None` where it names no such user.
pub fn home_of(name: &str) -> Option<PathBuf> {
    passwd_home_of(passwd_file(), name)
}

/// [`home_of`] from the text of a passwd file.
fn passwd_home_of(text: &str, name: &str) -> Option<PathBuf> {
    text.lines().find_map(|line| {
        let mut f = line.split(':');
        (f.next()? == name).then_some(())?;
        Some(PathBuf::from(f.nth(4)?)).filter(|h| h.is_absolute())
    })
}

/// The text of `/etc/passwd`, read once per process (empty where it cannot be read): the
/// entry of the user and every home ([`homes`]) come from one read.
fn passwd_file() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| std::fs::read_to_string("/etc/passwd").unwrap_or_default())
}

/// Every user's home directory (absolute, not `/`) that `/etc/passwd` names, and `/root`: the
/// box never makes one, or what holds one, a workspace (issue 25). The file is read once per
/// process (shared with [`passwd`]); homes that only NSS knows (LDAP) are not here: `/home/*`
/// covers most.
pub fn homes() -> Vec<PathBuf> {
    passwd_homes(passwd_file())
}

/// [`homes`] from the text of a passwd file.
fn passwd_homes(text: &str) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut out: Vec<PathBuf> = vec![PathBuf::from("/root")];
    // By bytes: a `str` split by a pattern costs a thousand instructions a line, on every command.
    for line in text.as_bytes().split(|b| *b == b'\n') {
        let Some(home) = line.split(|b| *b == b':').nth(5) else { continue };
        let end = home.iter().rposition(|b| *b != b'/').map_or(0, |i| i + 1);
        let home = std::ffi::OsStr::from_bytes(&home[..end]);
        if home.as_bytes().starts_with(b"/") && !out.iter().any(|h| h.as_os_str() == home) {
            out.push(home.into());
        }
    }
    out
}

/// The entry of `uid` in the text of a passwd file (`name:x:uid:gid:gecos:home:shell`).
fn passwd_line(text: &str, uid: u32) -> Option<Passwd> {
    text.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        // Only the uid is parsed on every line; the rest of the matching one only.
        (f.nth(1)?.parse::<u32>().ok()? == uid).then_some(())?;
        let (home, shell) = (f.nth(2)?, f.next()?);
        Some(Passwd { name: name.to_string(), home: home.to_string(), shell: shell.to_string() })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rt5 B10: agentsh's own directories in a git work tree (`XDG_CONFIG_HOME=ws/cfg`) are a
    /// box's to write; in their default places (below a dot-directory of home, even home kept
    /// in git) they are not, and are found so without a `statx` of `.git`.
    #[test]
    fn agentshs_directories_in_a_work_tree_are_a_boxs_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let (home, ws) = (d.join("h"), d.join("ws"));
        for g in [home.join(".git"), ws.join(".git"), home.join(".config/.git"), d.join("elsewhere")] {
            std::fs::create_dir_all(g).unwrap();
        }
        // Home as passwd names it: `git init ~` changes nothing.
        let homes = Homes::new(&home, vec![home.clone()]);
        let judged = |p: PathBuf| writable_by_a_box(&p, &homes);
        assert!(judged(ws.join("cfg/agentsh")).unwrap().contains("a git work tree"));
        assert!(judged(ws.join("cfg/../cfg/agentsh")).is_some());
        assert_eq!(judged(home.join(".config/agentsh")), None);
        assert_eq!(judged(home.join(".local/share/agentsh")), None);
        assert_eq!(judged(d.join("elsewhere/agentsh")), None);
        // A `$HOME` that is a work tree passwd does not name is no home to a box of another
        // environment: what its dot-directories hold is the work tree's.
        let not_passwd = Homes::new(&home, Vec::new());
        assert!(writable_by_a_box(&home.join(".config/agentsh"), &not_passwd).is_some());
    }

    /// rt6b G1: `..` after a link the box made is the parent of the link's target, as the
    /// kernel takes it: `ws/l/../../cfg` is `ws/cfg` (lexically `cfg` beside `ws`). So is a
    /// `..` out of a directory of a work tree (the box could make it a link later), and a link
    /// from outside into one.
    #[test]
    fn a_directory_is_judged_where_the_kernel_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let ws = d.join("ws");
        for m in [ws.join(".git"), ws.join("a/b"), ws.join("sub"), d.join("out/cfg"), d.join("home")] {
            std::fs::create_dir_all(m).unwrap();
        }
        std::os::unix::fs::symlink(ws.join("a/b"), ws.join("l")).unwrap();
        std::os::unix::fs::symlink(ws.join("cfg"), d.join("into")).unwrap();
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        let homes = Homes::new(&d.join("home"), Vec::new());
        let judged = |p: &str| writable_by_a_box(&d.join(p), &homes);
        let via_link = judged("ws/l/../../cfg/agentsh").expect("ws/l/../../cfg is ws/cfg");
        assert!(via_link.contains("really") && via_link.contains("a git work tree"), "{via_link}");
        assert_eq!(reach(&d.join("ws/l/../../cfg/agentsh")).unwrap().real, ws.join("cfg/agentsh"));
        let out = judged("ws/sub/../../out/cfg/agentsh").expect("through ws/sub");
        assert!(out.contains("goes through"), "{out}");
        assert!(judged("into/agentsh").unwrap().contains("really"));
        assert!(judged("loop/agentsh").unwrap().contains("cannot be judged"));
        assert!(judged("out/missing/../cfg").unwrap().contains("climbs with .."));
        // Outside every work tree, links and all: the person's own.
        std::os::unix::fs::symlink(d.join("out"), d.join("outlink")).unwrap();
        assert_eq!(judged("outlink/cfg/agentsh"), None);
        assert_eq!(judged("out/cfg/agentsh"), None);
    }

    /// rt7 C1: a file is settled where no box can make its path lead elsewhere: a link in a work
    /// tree (which a box swaps at will) is not, whatever it leads to now; the file by its own
    /// path, or through a link outside every work tree, is.
    #[test]
    fn a_path_a_box_can_redirect_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        for m in [d.join("ws/.git"), d.join("bin"), d.join("home"), d.join("links")] {
            std::fs::create_dir_all(m).unwrap();
        }
        std::fs::write(d.join("bin/agentsh"), "").unwrap();
        std::os::unix::fs::symlink(d.join("bin/agentsh"), d.join("ws/ag")).unwrap();
        std::os::unix::fs::symlink(d.join("bin/agentsh"), d.join("links/bash")).unwrap();
        std::os::unix::fs::symlink(d.join("ws"), d.join("links/ws")).unwrap();
        let home = d.join("home");
        assert_eq!(settled(&d.join("bin/agentsh"), &home), Ok(d.join("bin/agentsh")));
        assert_eq!(settled(&d.join("links/bash"), &home), Ok(d.join("bin/agentsh")));
        for swappable in ["ws/ag", "links/ws/ag", "ws/../bin/agentsh"] {
            let why = settled(&d.join(swappable), &home).expect_err(swappable);
            assert!(why.contains("a git work tree"), "{swappable}: {why}");
        }
    }

    /// rt6b G5: with `HOME` inside a work tree (`HOME=ws/fh`), `~/.config/agentsh` is the work
    /// tree's: a box of the person's own environment wrote it. Not so for a home passwd names
    /// (whose `~/.config` may be a link: then judged where it leads, as into a dotfiles
    /// repository, which a box can have as its workspace).
    /// rt6b G6: a box's own `/tmp` is kept in agentsh's box store; a config a boxed command
    /// wrote there, named by `XDG_CONFIG_HOME`, was the person's. Anything in the store, by any
    /// spelling, is judged as a box's.
    #[test]
    fn the_boxes_own_places_are_a_boxs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let store = d.join("state/agentsh/box");
        std::fs::create_dir_all(store.join("w-1/tmp/cfg/agentsh")).unwrap();
        std::fs::create_dir_all(d.join("state/x")).unwrap();
        std::os::unix::fs::symlink(store.join("w-1/tmp"), d.join("t")).unwrap();
        for p in ["state/agentsh/box/w-1/tmp/cfg/agentsh", "t/cfg/agentsh", "state/x/../agentsh/box/w-1/tmp/new"] {
            let real = reach(&d.join(p)).unwrap().real;
            let why = in_box_store(&real, &store).unwrap_or_else(|| panic!("{p}: not the store's"));
            assert!(why.contains("sandboxes' own places"), "{why}");
        }
        assert_eq!(in_box_store(&d.join("state/agentsh"), &store), None);
        assert_eq!(in_box_store(&d.join("state/agentsh/boxes"), &store), None);
        assert!(in_box_store(&store.join("w-1"), &store).is_some());
    }

    #[test]
    fn a_home_inside_a_work_tree_is_no_home() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let (ws, me) = (d.join("ws"), d.join("me"));
        for m in [ws.join(".git"), ws.join("fh/.config/agentsh"), me.join("dotfiles/.git"), me.join("dotfiles/config")]
        {
            std::fs::create_dir_all(m).unwrap();
        }
        let fh = ws.join("fh");
        for state in [".config/agentsh", ".local/state/agentsh"] {
            let why = writable_by_a_box(&fh.join(state), &Homes::new(&fh, Vec::new())).expect(state);
            assert!(why.contains(&ws.display().to_string()), "{why}");
        }
        // Through a link to it, too.
        std::os::unix::fs::symlink(&fh, d.join("fhlink")).unwrap();
        let homes = Homes::new(&d.join("fhlink"), Vec::new());
        assert!(writable_by_a_box(&d.join("fhlink/.config/agentsh"), &homes).is_some());
        // The person's home, with a dotfiles repository in it: its own settings are its own...
        let homes = Homes::new(&me, vec![me.clone()]);
        assert_eq!(writable_by_a_box(&me.join(".config/agentsh"), &homes), None);
        // ... unless they are linked into that repository (another home: what a path holds is
        // looked at once per process).
        let you = d.join("you");
        std::fs::create_dir_all(you.join("dotfiles/.git")).unwrap();
        std::fs::create_dir_all(you.join("dotfiles/config")).unwrap();
        std::os::unix::fs::symlink("dotfiles/config", you.join(".config")).unwrap();
        let homes = Homes::new(&you, vec![you.clone()]);
        let why = writable_by_a_box(&you.join(".config/agentsh"), &homes).unwrap();
        assert!(why.contains("dotfiles"), "{why}");
    }

    #[test]
    fn home_is_an_absolute_home_or_the_passwd_entrys() {
        let passwd = || Some("/home/me".to_string());
        assert_eq!(home_from(Some("/h".into()), passwd), Some("/h".into()));
        // Unset, empty, or relative (issue 27: `relhome/.local/state/agentsh` under the project).
        for env in [None, Some("".into()), Some("relhome".into()), Some("./x".into())] {
            assert_eq!(home_from(env, passwd), Some("/home/me".into()));
        }
        assert_eq!(home_from(None, || None), None);
        assert_eq!(home_from(None, || Some(String::new())), None);
        assert_eq!(home_from(Some("rel".into()), || Some("rel-too".into())), None);
    }

    #[test]
    fn dirs_follow_absolute_xdg_variables_only() {
        let vars = |name: &str| match name {
            "XDG_STATE_HOME" => Some("/s".into()),
            "XDG_CONFIG_HOME" => Some("relative".into()),
            "XDG_RUNTIME_DIR" => Some("/run/user/1".into()),
            _ => None,
        };
        let d = dirs_from(Path::new("/home/me"), vars).unwrap();
        assert_eq!(d.state_dir(), Some(Path::new("/s/agentsh")));
        assert_eq!(d.config_dir(), Path::new("/home/me/.config/agentsh"));
        assert_eq!(d.data_dir(), Path::new("/home/me/.local/share/agentsh"));
        assert_eq!(d.cache_dir(), Path::new("/home/me/.cache/agentsh"));
        assert_eq!(d.runtime_dir(), Some(Path::new("/run/user/1/agentsh")));
    }

    #[test]
    fn passwd_lines_are_read_by_uid() {
        let text = "root:x:0:0:root:/root:/bin/bash\nbad line\nme:x:1000:1000:Me,,,:/home/me:/bin/sh\n";
        let me = Passwd { name: "me".into(), home: "/home/me".into(), shell: "/bin/sh".into() };
        assert_eq!(passwd_line(text, 1000), Some(me));
        assert_eq!(passwd_line(text, 0).unwrap().home, "/root");
        assert_eq!(passwd_line(text, 7), None);
        assert_eq!(passwd_home_of(text, "me"), Some("/home/me".into()));
        assert_eq!(passwd_home_of(text, "m"), None);
        assert_eq!(passwd_home_of(text, "bad line"), None);
    }

    #[test]
    fn every_absolute_home_but_slash_is_a_home() {
        let text = "root:x:0:0:root:/root:/bin/bash\nsync:x:4:65534:sync:/bin:/bin/sync\nnone:x:5:5::/:/bin/false\n\
                    rel:x:6:6::rel:/bin/sh\nbad line\nbob:x:1001:1001::/srv/bob/:/bin/sh\n";
        let homes = passwd_homes(text);
        assert_eq!(homes, [Path::new("/root"), Path::new("/bin"), Path::new("/srv/bob")]);
    }

    #[test]
    fn a_private_directory_is_a_real_one_of_ours_that_no_one_else_can_write() {
        let d = tempfile::tempdir().unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        // Made when missing, parents too, all 0700.
        let made = d.path().join("a/b");
        private_dir(&made).unwrap();
        assert_eq!((mode(&made), mode(&d.path().join("a"))), (0o700, 0o700));
        // Open to others for reading only: nothing can have been put in it; closed to them.
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
        check_private(&made, uid).unwrap();
        assert_eq!(mode(&made), 0o700);
        for open in [0o777, 0o770, 0o707, 0o1777] {
            std::fs::set_permissions(&made, std::fs::Permissions::from_mode(open)).unwrap();
            let e = check_private(&made, uid).unwrap_err();
            assert!(e.contains("open to other users") && e.contains("chmod 700"), "{open:o}: {e}");
        }
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(check_private(&made, uid + 1).unwrap_err().contains("belongs to another user"));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&made, &link).unwrap();
        assert!(private_dir(&link).unwrap_err().contains("symbolic link"));
        std::fs::write(d.path().join("file"), "").unwrap();
        assert!(private_dir(&d.path().join("file")).unwrap_err().contains("not a directory"));
    }
}
