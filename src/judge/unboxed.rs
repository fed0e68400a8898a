//! What a command that runs without a box may read or run unasked (rt4 R14, rt5 B3, B12). Pure:
//! what the box would have shown comes from `run` as plain data ([`HomeSight`]), as the box's
//! roots do (`containment::BoxView`), and so does the way to look up the symbolic links on the
//! way of the paths the text names ([`LinkLookup`]).
//!
//! The box is default-deny: of the person's home it shows only what it names (toolchains,
//! harmless settings, caches, `sandbox.readable`, the workspace). A command that starts where the
//! box cannot show its directory (`/tmp`, home itself, `~/.config`) has no box at all, and then
//! nothing but the judge stands between it and home. So there, a command must not get more than
//! the box would have shown without a person's yes: one whose text names a path in home that the
//! box keeps hidden (`~/.kaggle/kaggle.json`, `$HOME/.config/rclone/rclone.conf`,
//! `~/notes/vault.txt`, `.netrc` from home), home itself (what reads all of it reads them too), or
//! another process's `/proc/<pid>` (the box shows only its own), needs a person, whatever the
//! secret list knows. So does every command that starts in home or a hidden part of it: its
//! relative paths and its current directory are all in it. So do `ps e` (other processes'
//! environments), and git reading a repository where boxes run elsewhere: git runs what the
//! repository's config names, which a box may have written ([`program_reach`]).
//!
//! The text is read generously, by its words as the shell could see them, not by what one
//! program does with them: a word in a redirection, a here-document or the code of `python -c`
//! counts as much as an argument, and so does a path glued to an option (`-a~/x`); `$HOME`,
//! `${HOME%/}`, `/home/$USER`, `/proc/self/root/...` and `/proc/$$/root/...` are home's too; a
//! pattern's component may match any name (`~/*/x`, whatever `GLOBIGNORE` or `dotglob` say). A
//! relative word (and `~+`, `$PWD`) is resolved against where the command starts, and, where the
//! text changes directory (`cd`, `pushd`, `-C`), against home, every absolute directory it names
//! and every relative one it goes to, followed in order from wherever the shell may be then
//! (`cd ws && cd hl`), through the symbolic links on their way (rt6 G4); `~-` and `$OLDPWD`
//! against home as well. A `..` after a link is where the kernel takes it (`hl/..` is above
//! the link's target). What the text does not name (a path a program computes) this cannot
//! see: SECURITY.md says so.

use crate::judge::containment::normalize;
use crate::judge::no_box;

/// What the box would have shown of the person's home, for judging a command that runs without
/// one: plain values, from `run`.
#[derive(Clone, Debug, Default)]
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
    /// How the symbolic links on the way of the paths the text names are looked up (the gate
    /// gives one; the judge touches no file): a box may have left a link into home in the
    /// workspace. `None`: not looked up.
    pub links: Option<LinkLookup>,
    /// Whether commands that start elsewhere run in a box: this one has none only because of
    /// where it starts, and a box may have written what git runs (`git_runs_box_code`).
    pub boxed_elsewhere: bool,
    /// What a box writes wherever it starts (absolute): what `sandbox.writable` names.
    pub writable: Vec<String>,
    /// How the git work tree a box may write that holds a path is looked up (the gate gives
    /// one; the judge touches no file). `None`: not looked up.
    pub work_tree: Option<WorkTreeLookup>,
    /// The absolute directories of `$CDPATH`, where `cd x` may go too.
    pub cd_path: Vec<String>,
    /// The directories of `$PATH`, in order, as agentsh's environment (and so the command's)
    /// gives them: a relative one is relative to wherever the command is when it runs a program.
    pub path: Vec<String>,
    /// Whether a path names an executable file (the gate gives one; the judge touches no file).
    /// `None`: programs are not looked up on `$PATH`.
    pub program: Option<ProgramLookup>,
    /// The names of the variables of agentsh's environment (and so the command's) that hold a
    /// secret the box's environment leaves out (rt7 B1): printing one needs a person.
    pub secret_env: Vec<String>,
    /// Whether a path is a device that holds anyone's data (the gate gives one; the judge
    /// touches no file): a disk by a name outside `/dev` (rt7 B3). `None`: not looked up.
    pub device: Option<DeviceLookup>,
}

/// Two sights are the same where they say the same of home; of their lookups, only whether
/// there is one (a function's address says nothing).
impl PartialEq for HomeSight {
    fn eq(&self, other: &HomeSight) -> bool {
        (&self.cwd, &self.home, &self.real_home, &self.shown, &self.covered, self.boxed_elsewhere)
            == (&other.cwd, &other.home, &other.real_home, &other.shown, &other.covered, other.boxed_elsewhere)
            && (&self.writable, &self.cd_path, &self.path) == (&other.writable, &other.cd_path, &other.path)
            && self.secret_env == other.secret_env
            && self.program.is_some() == other.program.is_some()
            && self.links.is_some() == other.links.is_some()
            && self.device.is_some() == other.device.is_some()
            && self.work_tree.is_some() == other.work_tree.is_some()
    }
}

impl Eq for HomeSight {}

/// The real path of an absolute path: where the symbolic links on its way lead (those of its
/// longest existing prefix; what does not exist yet has none), a `..` after a link to the
/// parent of the link's target, as the kernel takes it; or `None` where that is the path itself
/// (normalized) or it cannot be told.
pub type LinkLookup = fn(&str) -> Option<String>;

/// The git work tree that holds a path (absolute, normalized, its links resolved) where it is one
/// a box may have for its workspace, and so have written (`policy::dirs::workspace_holding`);
/// else `None`. The second path, where given, is an ancestor known to be in none: only the
/// directories below it need a look.
pub type WorkTreeLookup = fn(&str, Option<&str>) -> Option<String>;

/// Whether an absolute path is a block or character device other than those that hold nothing
/// of anyone's (`null`, `zero`, `random`).
pub type DeviceLookup = fn(&str) -> bool;

/// Whether an absolute path names an executable file, as `execvp` takes one on `$PATH`.
pub type ProgramLookup = fn(&str) -> bool;

/// At most this many places are looked at for the programs a text runs by name on `$PATH`:
/// past them, a person is asked.
const MAX_PROGRAM_LOOKUPS: usize = 4096;

/// Words after which a relative path may be relative to another directory than the one the
/// command starts in.
const CHANGES_DIRECTORY: &[&str] = &["cd", "pushd", "popd", "-C", "--directory", "--cwd", "--chdir", "-chdir"];

/// At most this many relative words times directories are resolved: a long script that changes
/// directory often needs a person rather than a slow verdict.
const MAX_RESOLVED: usize = 100_000;

/// At most this many directories the shell may be in as the text runs (each relative `cd` may
/// double them): past it, a person is asked.
const MAX_DIRECTORIES: usize = 256;

/// What comes between `cd` (or `pushd`) and its directory.
const CD_OPTIONS: &[&str] = &["-L", "-P", "-e", "-@", "-Pe", "-eP", "--"];

/// Why a text that changes directory too often needs a person.
const TOO_OFTEN: &str = "changes directory too often for agentsh to tell whether its relative paths are in parts of \
                         home the sandbox keeps hidden";

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
    read_hidden(text, sight, &mut Links::new(sight))
}

/// [`hidden_read`] and [`parts_reach`] of one text, the links on the way of its paths looked up
/// once for both.
pub fn unconfined(text: &str, argvs: &[&[String]], sight: &HomeSight) -> (Option<Hidden>, Option<Hidden>) {
    let mut links = Links::new(sight);
    (read_hidden(text, sight, &mut links), reach(text, argvs, sight, &mut links))
}

fn read_hidden(text: &str, sight: &HomeSight, links: &mut Links) -> Option<Hidden> {
    let home = normalize(&sight.home);
    if home == "/" {
        return None;
    }
    let cwd = in_home_spelling(&normalize(&sight.cwd), sight);
    if cwd == home {
        let why = "starts in ~, home itself, which the sandbox replaces with its own: what it reads there (its \
                   relative paths, `ls`, `grep -r x`) is in home";
        return Some(Hidden { word: "~".to_string(), why: why.to_string() });
    }
    if let Some(dir) = hidden_entry(&cwd, &home, sight) {
        let word = tilde(&cwd, &home);
        let why = format!("starts in {word}, {}", hidden_why(&dir));
        return Some(Hidden { word, why });
    }
    let Places { words, bases, before, went } = match Places::of(text, &cwd, &home, sight, links) {
        Ok(places) => places,
        Err(found) => return Some(found),
    };
    // A directory the text goes to that the box keeps hidden (rt6 G4: `cd ws && cd hl`, a
    // link the box made to home): every relative word after it is there.
    for (dir, word, linked) in &went {
        if let Some(mut found) = hidden_path(word, dir, &home, sight) {
            let why = found.why.strip_prefix("reads ").unwrap_or(&found.why);
            found.why = match linked {
                true => format!("goes to {why} (through a symbolic link, to {})", tilde(dir, &home)),
                false => format!("goes to {why}"),
            };
            return Some(found);
        }
    }
    // A relative word reaches a hidden part of home only through a component that starts with
    // a dot (`..`), or from a directory in home, above it or in `/proc` (`cd; cat notes/x`,
    // `u/notes` from `/home`, `cd /proc; cat 1234/environ`).
    let near = |b: &String| ["/proc", home.as_str()].iter().any(|r| under(r, b).is_some() || under(b, r).is_some());
    let resolve_all = before.iter().any(near) || !sight.covered.is_empty();
    let dotted = |w: &str| resolve_all || w.split('/').any(|c| c.starts_with('.'));
    let spellings: Vec<(&String, Spelling)> =
        words.iter().flat_map(|w| spellings(w).into_iter().map(move |s| (w, s))).collect();
    let relative =
        spellings.iter().filter(|(_, s)| matches!(s, Spelling::Relative(w) | Spelling::Before(w) if dotted(w)));
    if relative.count().saturating_mul(before.len()) > MAX_RESOLVED {
        return Some(Hidden { word: String::new(), why: TOO_OFTEN.to_string() });
    }
    for (word, spelling) in &spellings {
        for (p, raw) in resolved(spelling, &home, &bases, &before, dotted) {
            let p = in_home_spelling(&through_proc_self(p, &cwd), sight);
            if let Some(found) = hidden_path(word, &p, &home, sight) {
                return Some(found);
            }
            // A symbolic link on its way (one a box made in the workspace: `docs-home` -> home),
            // and a `..` after one, which leads to the parent of its target (`hl/../home`).
            for real in [links.resolve(&p), raw.and_then(|r| links.resolve(&r))].into_iter().flatten() {
                let real = in_home_spelling(&real, sight);
                if let Some(mut found) = hidden_path(word, &real, &home, sight) {
                    found.why = format!("{} (through a symbolic link, to {})", found.why, tilde(&real, &home));
                    return Some(found);
                }
            }
            // A device by a name outside /dev (a node `mknod` made, a bind mount: rt7 B3). In
            // /dev and /proc (`/dev/stdin`, `/proc/self/fd/0`: agentsh's own terminal) the name
            // tells (`no_box::raw_device`).
            let named = ["/dev", "/proc"].iter().any(|d| under(&p, d).is_some());
            if !named && sight.device.is_some_and(|device| device(&p)) {
                return Some(Hidden::of(word, device_why(word)));
            }
        }
        if links.exhausted() {
            let why = "names too many paths for agentsh to tell whether symbolic links on their way lead into parts \
                       of home the sandbox keeps hidden";
            return Some(Hidden { word: String::new(), why: why.to_string() });
        }
    }
    None
}

/// Where the text's words are: its words, the directories the shell may be in as it runs, and
/// those it may have been in before (`~-`, `$OLDPWD`).
struct Places {
    words: Vec<String>,
    /// The directory the command starts in; where the text changes directory (`cd`, `pushd`,
    /// `-C`), home where it may go there, every absolute directory it names (and `$CDPATH`'s),
    /// and, in the text's order, each relative directory it goes to from each directory before
    /// (rt6 G4: `cd ws && cd hl`, as the shell goes, not from where it starts), with where the
    /// symbolic links on their way lead. A `cd` that fails leaves the shell where it was: each
    /// directory before stays.
    bases: Vec<String>,
    /// `bases` and home: where the agent's environment may say the shell was before.
    before: Vec<String>,
    /// The directories of `bases` a relative directory led to, each with that word and whether
    /// it is where a symbolic link on its way leads.
    went: Vec<(String, String, bool)>,
}

impl Places {
    /// The places of `text`, run from `cwd` (normalized, in home's spelling); a reason for a
    /// person where they are too many to tell.
    fn of(text: &str, cwd: &str, home: &str, sight: &HomeSight, links: &mut Links) -> Result<Places, Hidden> {
        let mut words = words(text, home);
        let shell = shell_words(text, home);
        words.extend(shell.iter().filter(|w| w.contains(char::is_whitespace)).cloned());
        let mut bases = vec![cwd.to_string()];
        let mut went = Vec::new();
        let add = |bases: &mut Vec<String>, dir: String| {
            if !bases.contains(&dir) {
                bases.push(dir);
            }
        };
        if words.iter().any(|w| CHANGES_DIRECTORY.contains(&w.as_str())) {
            // `cd` alone goes home; `cd ~` and `cd $HOME` name it, as every other directory.
            // `cd -`, `cd ~-` and `popd` go back, where the agent's environment may say is home.
            let back =
                words.windows(2).any(|w| matches!(w[0].as_str(), "cd" | "pushd") && w[1].starts_with(['-', '~']))
                    || words.iter().any(|w| w == "popd");
            if cd_home(text) || back {
                add(&mut bases, home.to_string());
            }
            let named =
                words.iter().filter_map(|w| absolute(w, home)).chain(sight.cd_path.iter().map(|d| normalize(d)));
            for dir in named.map(|p| in_home_spelling(&p, sight)).collect::<Vec<_>>() {
                add(&mut bases, dir);
            }
            for dir in bases.clone() {
                if let Some(real) = links.resolve(&dir) {
                    add(&mut bases, in_home_spelling(&real, sight));
                }
            }
            // Each relative directory the text goes to, from wherever the shell may be then: as
            // `words` has it, and where a blank is in it (`cd "h l"`), as the shell has it.
            let targets = (words.iter().enumerate().map(|(at, w)| (&words[..], at, w)))
                .chain(shell.iter().enumerate().map(|(at, w)| (&shell[..], at, w)))
                .filter(|(_, _, w)| CHANGES_DIRECTORY.contains(&w.as_str()));
            for (list, at, _) in targets {
                let target = list[at + 1..].iter().find(|t| !CD_OPTIONS.contains(&t.as_str()));
                let Some(Spelling::Relative(rel)) = target.and_then(|t| spelling(t)) else { continue };
                if rel == "-" {
                    continue;
                }
                let word = target.cloned().unwrap_or_default();
                for b in bases.clone() {
                    let raw = format!("{b}/{rel}");
                    let dir = normalize(&raw);
                    let up = rel.split('/').any(|c| c == "..");
                    let real = [links.resolve(&dir), up.then(|| links.resolve(&raw)).flatten()];
                    let dir = in_home_spelling(&dir, sight);
                    went.push((dir.clone(), word.clone(), false));
                    add(&mut bases, dir);
                    for real in real.into_iter().flatten().map(|r| in_home_spelling(&r, sight)) {
                        went.push((real.clone(), word.clone(), true));
                        add(&mut bases, real);
                    }
                }
                if bases.len() > MAX_DIRECTORIES || links.exhausted() {
                    return Err(Hidden { word: String::new(), why: TOO_OFTEN.to_string() });
                }
            }
        }
        // `~-` and `$OLDPWD` are where the shell was before: any base, or wherever the agent's
        // environment says (home, for all agentsh can tell).
        let mut before = bases.clone();
        if !before.contains(&home.to_string()) {
            before.push(home.to_string());
        }
        Ok(Places { words, bases, before, went })
    }
}

/// The paths `spelling` names (normalized), each with the path as the kernel walks it where a
/// `..` in it may follow a symbolic link (`hl/../x`): from `bases` where relative, from
/// `before` where relative to where the shell was, where `dotted` says a relative word may
/// reach what is hidden.
fn resolved(
    spelling: &Spelling,
    home: &str,
    bases: &[String],
    before: &[String],
    dotted: impl Fn(&str) -> bool,
) -> Vec<(String, Option<String>)> {
    let from = |dirs: &[String], w: &str| {
        let up = w.split('/').any(|c| c == "..");
        dirs.iter().map(|b| (normalize(&format!("{b}/{w}")), up.then(|| format!("{b}/{w}")))).collect()
    };
    match spelling {
        Spelling::Absolute(w) => {
            let Some(p) = absolute(w, home) else { return Vec::new() };
            let raw = w.split('/').any(|c| c == "..").then(|| match is_tilde(w) {
                true => format!("{home}{}", &w[1..]),
                false => w.clone(),
            });
            vec![(p, raw)]
        }
        Spelling::Relative(w) if dotted(w) => from(bases, w),
        Spelling::Before(w) if dotted(w) => from(before, w),
        _ => Vec::new(),
    }
}

/// Why a path in `dir` of home needs a person, after "reads WORD, " or "starts in WORD, ".
fn hidden_why(dir: &str) -> String {
    if dir.starts_with("~/.") {
        format!("in {dir}, which the sandbox keeps hidden (files in home's dot-directories hold settings and secrets)")
    } else {
        format!(
            "in {dir}, which the sandbox keeps hidden (it shows of home only the workspace, toolchains and what \
             sandbox.readable names)"
        )
    }
}

/// What reading `p` (the path `word` names) shows that the box would have kept hidden.
fn hidden_path(word: &str, p: &str, home: &str, sight: &HomeSight) -> Option<Hidden> {
    if let Some(root) = sight.covered.iter().find(|c| under(p, &normalize(c)).is_some()) {
        return Some(Hidden::of(
            word,
            format!(
                "reads {word}, which the sandbox covers ({root}: sandbox.denyRead, agentsh's own files or the \
                 system's secrets)"
            ),
        ));
    }
    if under_glob(p, home) == Some(String::new()) {
        return Some(Hidden::of(
            word,
            format!(
                "reads {word}, home itself, which the sandbox replaces with its own: what reads all of home reads \
                 the settings and secrets in it"
            ),
        ));
    }
    if let Some(dir) = hidden_entry(p, home, sight) {
        return Some(Hidden::of(word, format!("reads {word}, {}", hidden_why(&dir))));
    }
    if no_box::raw_device(p) {
        return Some(Hidden::of(word, device_why(word)));
    }
    if other_process(p) {
        return Some(Hidden::of(
            word,
            format!(
                "reads {word}, another process's files (its command line, environment, memory), which the \
                 sandbox does not show: it shows only its own processes"
            ),
        ));
    }
    None
}

/// Why reading a device or the kernel's memory (the path `word` names) needs a person.
fn device_why(word: &str) -> String {
    format!(
        "reads {word}, a device or the kernel's memory (a disk holds every file, home's secrets too; a terminal \
         another's keystrokes), which the sandbox does not show: its /dev holds only null, zero, random and the \
         command's own terminal"
    )
}

/// How one word (or a part of it) names a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Spelling {
    /// `/x`, `~`, `~/x`.
    Absolute(String),
    /// Relative to where the command is (`x`, `./x`, `~+/x`, `$PWD/x`, `$X/y`).
    Relative(String),
    /// Relative to where the shell was before (`~-/x`, `$OLDPWD/x`).
    Before(String),
}

/// The paths `word` may name: itself, and where it is an option, the path glued to it
/// (`-a~/x`, `-I/x`, `-a.kaggle/x`).
fn spellings(word: &str) -> Vec<Spelling> {
    // A word that starts with a variable or a substitution the text does not set (`$U/x`,
    // `${p%X}/.aws/x`, rt7 C4): it may be empty, and what follows then a path of its own; or
    // home, where what follows starts with a dot-directory (`/.aws/credentials`).
    if let Some(tail) = computed_head(word) {
        let mut out: Vec<Spelling> = spelling(tail).into_iter().collect();
        // Computed (`$_`: [`collapse_expansions`]), not a variable the agent's environment may
        // set (`$HOMEBREW_PREFIX/.x`).
        if word.starts_with("$_/") && tail.trim_start_matches('/').starts_with('.') && !tail.starts_with("/..") {
            out.push(Spelling::Absolute(format!("~{tail}")));
        }
        return out;
    }
    if let Some(option) = word.strip_prefix('-') {
        let mut out = Vec::new();
        let body = option.trim_start_matches('-');
        // `-aPATH`: what follows the option's letter.
        let mut chars = body.char_indices();
        if let (Some(_), Some((at, _))) = (chars.next(), chars.next()) {
            out.extend(spelling(&body[at..]));
        }
        // `-xvfPATH`: from any `~`, `/` or `.` on.
        for (at, _) in body.char_indices().filter(|(at, c)| *at > 0 && "~/.".contains(*c)) {
            out.extend(spelling(&body[at..]));
        }
        out.dedup();
        return out;
    }
    spelling(word).into_iter().collect()
}

/// What follows a word's head where the head is computed (`$U`, `$1`, `$@`, `${p%X}`, `$(..)`)
/// and is followed by a path (`/x`).
fn computed_head(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('$')?;
    let len = match rest.chars().next()? {
        '{' => closing(&rest[1..]) + 2,
        '(' => {
            let mut depth = 0usize;
            rest.char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i + 1)
        }
        '@' | '*' | '#' | '?' | '!' | '$' => 1,
        c if c.is_ascii_digit() => 1,
        c if c.is_ascii_alphabetic() || c == '_' => {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len())
        }
        _ => return None,
    };
    rest.get(len..).filter(|t| t.starts_with('/'))
}

/// How `word`, not an option, names a path.
fn spelling(word: &str) -> Option<Spelling> {
    if word.is_empty() {
        return None;
    }
    if word.starts_with('/') || is_tilde(word) {
        return Some(Spelling::Absolute(word.to_string()));
    }
    // `~+` is `$PWD`, `~-` is `$OLDPWD` (`home_variables` spells them so), `~+N`/`~-N`/`~N`
    // the directory stack's.
    if let Some(rest) = word.strip_prefix('~') {
        let (before, rest) = match rest.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, rest.strip_prefix('+').unwrap_or(rest)),
        };
        let Some(rest) = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .strip_prefix('/')
            .or_else(|| rest.chars().all(|c| c.is_ascii_digit()).then_some(""))
        else {
            // `~alice`: someone else's home, which the box hides whole anyway.
            return None;
        };
        let rest = if rest.is_empty() { ".".to_string() } else { rest.to_string() };
        return Some(if before { Spelling::Before(rest) } else { Spelling::Relative(rest) });
    }
    Some(Spelling::Relative(word.to_string()))
}

/// At most this many paths are looked up for symbolic links on their way: a long script that
/// names more needs a person rather than a slow verdict.
const MAX_LOOKED_UP: usize = 4096;

/// Looks up the symbolic links on a path's way, where the gate gives a way to
/// ([`HomeSight::links`]), each path once (its answer kept).
struct Links {
    lookup: Option<LinkLookup>,
    seen: std::collections::HashMap<String, Option<String>>,
}

impl Links {
    fn new(sight: &HomeSight) -> Links {
        Links { lookup: sight.links, seen: std::collections::HashMap::new() }
    }

    fn exhausted(&self) -> bool {
        self.seen.len() > MAX_LOOKED_UP
    }

    /// `path` (absolute; a `..` in it is taken as the kernel takes it) with the links on its
    /// way resolved, where that is another path. A pattern's literal part is resolved, and the
    /// rest put back.
    fn resolve(&mut self, path: &str) -> Option<String> {
        let lookup = self.lookup?;
        if let Some(known) = self.seen.get(path) {
            return known.clone();
        }
        if self.exhausted() {
            return None;
        }
        let literal = literal_part(path);
        let real = lookup(&literal).map(|real| {
            let rest = under(path, &literal).unwrap_or_default();
            normalize(&format!("{real}/{rest}"))
        });
        let real = real.filter(|r| *r != normalize(path));
        self.seen.insert(path.to_string(), real.clone());
        real
    }
}

/// What one command (`argv`, unwrapped), run without a box, would do that the box would have
/// contained, where its words name no hidden path: git running what a box may have written in a
/// repository's config (rt5 B12), `ps` showing other processes' environments (rt5 B3), a
/// program working through the person's daemons or with home's credentials (`docker inspect`,
/// `kubectl get`, `terraform output`), a package manager printing its settings (`pip config
/// list`, `go env`) (rt7 B4, B5: [`no_box`]).
pub fn program_reach(argv: &[String], sight: &HomeSight) -> Option<Hidden> {
    let name = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p))?;
    if let Some((name, why)) = no_box::service(argv) {
        let why = format!(
            "runs {name}, which {why}; the sandbox reaches neither the person's daemons nor home's credentials"
        );
        return Some(Hidden::of(&name, why));
    }
    if let Some(name) = no_box::settings(argv) {
        let why = format!(
            "runs {name} to print its settings, which hold the registries' passwords and tokens of home's settings \
             files and the environment; the sandbox shows neither"
        );
        return Some(Hidden::of(&name, why));
    }
    match name {
        "git" if sight.boxed_elsewhere && git_reads_repository(&argv[1..]) => Some(Hidden::of(
            name,
            "runs git, which runs programs a repository's config names (core.fsmonitor, core.pager, \
             diff.external, filter and textconv drivers, hooks, aliases), and agentsh cannot tell whether a \
             command of the agent's that ran in the sandbox wrote them (run it from the project, `cd` there \
             first in a command of its own, where it runs in the sandbox)"
                .to_string(),
        )),
        "ps" if ps_shows_environment(&argv[1..]) => Some(Hidden::of(
            name,
            "shows other processes' environments (`ps e`), where tokens and keys often are; the sandbox shows \
             only its own processes"
                .to_string(),
        )),
        _ => None,
    }
}

/// What the commands of `text` (`argvs`, unwrapped), run without a box, would run or read that
/// the box would have contained, where its words name no hidden path: what [`program_reach`]
/// finds in one of them; a recursive read whose root holds home ([`walks`]: `grep -r token /`),
/// which reads the parts the box keeps hidden; and a program that may run what a box wrote (rt6
/// G3), where the text names a directory a box can write: rustup's proxies run the toolchain a
/// `rust-toolchain.toml` there names, version managers' shims the version a `.tool-versions` or
/// `.python-version` names, make a Makefile, python the modules beside it. There, not even a
/// program known to read nothing of where it runs to choose what to run ([`reads_nothing`]:
/// `ls`, `cat`, `grep`) runs unasked (rt7 C3): a job left in a kept box can make any name there
/// a symbolic link to a secret in home after the judge looked (`cat ws/f`, `f` swapped between
/// a file and a link to `~/.aws/credentials`), and with no box nothing stops the read. Looked up
/// only where boxes run elsewhere, or the text has a recursive read.
pub fn parts_reach(text: &str, argvs: &[&[String]], sight: &HomeSight) -> Option<Hidden> {
    reach(text, argvs, sight, &mut Links::new(sight))
}

fn reach(text: &str, argvs: &[&[String]], sight: &HomeSight, links: &mut Links) -> Option<Hidden> {
    if let Some(found) = argvs.iter().find_map(|a| program_reach(a, sight)) {
        return Some(found);
    }
    if let Some((word, why)) = no_box::environment(text, argvs, &sight.secret_env) {
        return Some(Hidden::of(&word, why));
    }
    let walker = argvs.iter().find(|a| walks(a, argvs));
    let runner = argvs.iter().find(|a| !reads_nothing(a)).filter(|_| sight.boxed_elsewhere);
    let reader = argvs.first().filter(|_| sight.boxed_elsewhere);
    let by_name = sight.boxed_elsewhere && sight.program.is_some() && argvs.iter().any(|a| on_path(a).is_some());
    if walker.is_none() && reader.is_none() && !by_name {
        return None;
    }
    let home = normalize(&sight.home);
    let cwd = in_home_spelling(&normalize(&sight.cwd), sight);
    let places = match Places::of(text, &cwd, &home, sight, links) {
        Ok(places) => places,
        Err(found) => return Some(found),
    };
    // Each path as the text spells it, with where the links on its way lead.
    let real = |links: &mut Links, p: String, raw: Option<String>| {
        let mut out = vec![in_home_spelling(&p, sight)];
        out.extend([links.resolve(&p), raw.and_then(|r| links.resolve(&r))].into_iter().flatten());
        out
    };
    let mut trees = WorkTrees { lookup: sight.work_tree, seen: std::collections::HashMap::new() };
    if by_name && let Some(found) = path_program(argvs, sight, &places.bases, links, &mut trees) {
        return Some(found);
    }
    if let Some(argv) = walker {
        let words: Vec<String> =
            argv[1..].iter().flat_map(|w| words(w, &home)).chain(argv[1..].iter().cloned()).collect();
        let named = words.iter().flat_map(|w| spellings(w).into_iter().map(move |s| (w, s)));
        let named = named.flat_map(|(w, s)| {
            resolved(&s, &home, &places.bases, &places.before, |_| true).into_iter().map(move |p| (w.clone(), p))
        });
        // With no path, it reads where it is.
        let here = places.bases.iter().map(|b| (tilde(b, &home), (b.clone(), None)));
        for (word, (p, raw)) in named.chain(here).collect::<Vec<_>>() {
            for p in real(links, p, raw) {
                if holds_home(&p, &home, sight) {
                    let name = argv[0].rsplit('/').next().unwrap_or_default();
                    return Some(Hidden::of(
                        &word,
                        format!(
                            "{name} reads {word} whole, which holds home: it reads the settings and secrets \
                             the sandbox keeps hidden there (name a directory below or beside home instead)"
                        ),
                    ));
                }
            }
        }
    }
    let program = runner.or(reader)?;
    let name = program.first().map_or("", |p| p.rsplit('/').next().unwrap_or_default());
    // Where the shell may be, and every path the text names from there.
    let named = places
        .words
        .iter()
        .flat_map(|w| spellings(w))
        .flat_map(|s| resolved(&s, &home, &places.bases, &places.before, |_| true));
    let here = places.bases.iter().map(|b| (b.clone(), None));
    for (p, raw) in here.chain(named).collect::<Vec<_>>() {
        for p in real(links, p, raw) {
            if let Some((root, what)) = box_writes(&p, sight, &mut trees) {
                let at = match p == root {
                    true => format!("{}, {what}", tilde(&p, &home)),
                    false => format!("{}, in {}, {what}", tilde(&p, &home), tilde(&root, &home)),
                };
                let why = match runner {
                    Some(_) => format!(
                        "runs {name} in or on {at}, where a command in the sandbox may have written: \
                         programs pick what they run from where they run (rustup's rust-toolchain.toml, \
                         .tool-versions, .python-version, a Makefile, .npmrc) (run it from the project, `cd` \
                         there first in a command of its own, where it runs in the sandbox)"
                    ),
                    None => format!(
                        "names {at}, where a command in the sandbox may have written: a job it left running can \
                         make any name there a symbolic link to anything (a secret in home) after agentsh looked, \
                         and without a sandbox nothing stops {name} from reading it (run it from the project, `cd` \
                         there first in a command of its own, where it runs in the sandbox)"
                    ),
                };
                return Some(Hidden::of(name, why));
            }
            if trees.seen.len() > MAX_LOOKED_UP || links.exhausted() {
                let why = "names too many paths for agentsh to tell whether a command in the sandbox may have \
                           written what it runs there";
                return Some(Hidden::of(name, why.to_string()));
            }
        }
    }
    None
}

/// The place a box writes that holds `p` (a git work tree, or what `sandbox.writable` names),
/// and what it is, in words.
fn box_writes(p: &str, sight: &HomeSight, trees: &mut WorkTrees) -> Option<(String, &'static str)> {
    match sight.writable.iter().map(|w| normalize(w)).find(|w| under(p, w).is_some()) {
        Some(w) => Some((w, "which sandbox.writable names")),
        None => trees.holding(p).map(|root| (root, "a git work tree")),
    }
}

/// The program `argv` runs by name, looked up on `$PATH` (no slash in it).
fn on_path(argv: &[String]) -> Option<&str> {
    argv.first().map(String::as_str).filter(|p| !p.is_empty() && !p.contains('/'))
}

/// A program the text runs by name that `$PATH` finds where a box may have written it: a
/// directory of the project on agentsh's `$PATH` (`ws/bin`, the project's `.venv/bin` an agent
/// activated, `node_modules/.bin` spelled relative) puts a file the box wrote in place of `ls`
/// for a command with no box (rt6). Each name is looked up as `execvp` does, in `$PATH`'s order,
/// a relative directory from every directory the shell may be in (`bases`), up to the first
/// that has it; where the links on its way lead counts too.
fn path_program(
    argvs: &[&[String]],
    sight: &HomeSight,
    bases: &[String],
    links: &mut Links,
    trees: &mut WorkTrees,
) -> Option<Hidden> {
    let executable = sight.program?;
    let home = normalize(&sight.home);
    let mut looked = 0;
    let mut seen = std::collections::HashSet::new();
    for name in argvs.iter().filter_map(|a| on_path(a)) {
        if !seen.insert(name) {
            continue;
        }
        for dir in &sight.path {
            let places: Vec<String> = match dir.starts_with('/') {
                true => vec![normalize(&format!("{dir}/{name}"))],
                // An empty entry is the current directory.
                false => bases.iter().map(|b| normalize(&format!("{b}/{dir}/{name}"))).collect(),
            };
            looked += places.len();
            if looked > MAX_PROGRAM_LOOKUPS {
                let why = "runs programs by name from too many places on $PATH for agentsh to tell whether a \
                           command in the sandbox may have written one";
                return Some(Hidden::of(name, why.to_string()));
            }
            let found: Vec<String> = places.into_iter().filter(|p| executable(p)).collect();
            for p in &found {
                let mut real = vec![p.clone()];
                real.extend(links.resolve(p));
                for r in real {
                    if let Some((root, what)) = box_writes(&r, sight, trees) {
                        return Some(Hidden::of(
                            name,
                            format!(
                                "runs {name} as $PATH finds it, {}, in {}, {what}, where a command in the sandbox \
                                 may have written it; without a sandbox it would run unconfined (take the project's \
                                 directories off agentsh's $PATH, or run it from the project, where it runs in the \
                                 sandbox)",
                                tilde(p, &home),
                                tilde(&root, &home)
                            ),
                        ));
                    }
                }
            }
            if !found.is_empty() {
                break;
            }
        }
    }
    None
}

/// Looks up the git work trees a box may write that hold paths ([`HomeSight::work_tree`]),
/// each path once.
struct WorkTrees {
    lookup: Option<WorkTreeLookup>,
    seen: std::collections::HashMap<String, Option<String>>,
}

impl WorkTrees {
    /// The work tree that holds `path`: that of an ancestor already looked up, or looked up
    /// below the nearest one found in none.
    fn holding(&mut self, path: &str) -> Option<String> {
        let lookup = self.lookup?;
        let mut clear = None;
        let mut at = path;
        loop {
            if let Some(known) = self.seen.get(at) {
                match known {
                    Some(root) => return Some(root.clone()),
                    None if at == path => return None,
                    None => {
                        clear = Some(at.to_string());
                        break;
                    }
                }
            }
            match at.rfind('/') {
                Some(0) if at.len() > 1 => at = "/",
                Some(cut) if cut > 0 => at = &at[..cut],
                _ => break,
            }
        }
        let found = lookup(path, clear.as_deref());
        self.seen.insert(path.to_string(), found.clone());
        found
    }
}

/// Whether `path` holds home (or its real path): not where it is below it, beside it, or home
/// itself (which [`hidden_read`] asks about). A pattern's component may match any name.
fn holds_home(path: &str, home: &str, sight: &HomeSight) -> bool {
    let holds = |h: &str| {
        let (mut p, mut h) = (path.split('/').filter(|c| !c.is_empty()), h.split('/').filter(|c| !c.is_empty()));
        loop {
            match (p.next(), h.next()) {
                (None, Some(_)) => return true,
                (Some("**"), _) => return true,
                (Some(a), Some(b)) if a == b || is_pattern(a) => {}
                _ => return false,
            }
        }
    };
    let real = sight.real_home.as_deref().map(normalize);
    holds(home) || real.as_deref().is_some_and(holds)
}

/// Whether `argv` reads the contents of every file below the directories it names (or where it
/// is): a recursive search, an archive, a recursive copy or comparison; `find` that runs a
/// program on what it finds, or whose names the text hands to `xargs`.
fn walks(argv: &[String], all: &[&[String]]) -> bool {
    let name = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p)).unwrap_or_default();
    let args = &argv[1..];
    let has = |short: &str, long: &[&str]| {
        args.iter().any(|a| {
            long.iter().any(|l| a == l || a.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
                || (a.starts_with('-') && !a.starts_with("--") && a[1..].chars().any(|c| short.contains(c)))
        })
    };
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            has("rR", &["--recursive", "--dereference-recursive"])
                || args.windows(2).any(|w| w[0] == "-d" && w[1] == "recurse")
                || args.iter().any(|a| a == "--directories=recurse")
        }
        "rg" | "ag" | "ack" | "ack-grep" | "ugrep" | "pt" | "sift" | "tar" | "bsdtar" | "rsync" | "cpio" => true,
        "find" => {
            args.iter().any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
                || all.iter().any(|a| a.first().is_some_and(|p| p.rsplit('/').next() == Some("xargs")))
        }
        "cp" | "scp" | "zip" | "diff" => has("rRa", &["--recursive", "--archive"]),
        _ => false,
    }
}

/// Programs that read nothing of the directory they run in, nor of the files they are given, to
/// choose what they run: the shell's own commands, and the plain tools of files and text. Anything
/// else may (rustup's proxies and version managers' shims pick their binary from a file in the
/// directory, make runs its Makefile, python imports what is beside it, npm reads `.npmrc`).
const READS_NOTHING: &[&str] = &[
    "cd",
    "pushd",
    "popd",
    "dirs",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "[[",
    "export",
    "unset",
    "set",
    "shift",
    "read",
    "exit",
    "return",
    "local",
    "declare",
    "typeset",
    "readonly",
    "wait",
    "sleep",
    "umask",
    "type",
    "which",
    "hash",
    "ls",
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "find",
    "tree",
    "du",
    "df",
    "stat",
    "file",
    "diff",
    "cmp",
    "comm",
    "sort",
    "uniq",
    "cut",
    "tr",
    "paste",
    "join",
    "column",
    "nl",
    "rev",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "seq",
    "tee",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "b2sum",
    "base64",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "id",
    "whoami",
    "uname",
    "hostname",
    "printenv",
    "mkdir",
    "rmdir",
    "touch",
    "cp",
    "mv",
    "rm",
    "ln",
    "chmod",
    "tar",
    "gzip",
    "gunzip",
    "zcat",
    "unzip",
    "jq",
];

/// Whether `argv` reads nothing of where it runs to choose what to run ([`READS_NOTHING`]),
/// found where the system keeps programs (one named by another path may be one a box wrote):
/// sed and awk without a script file (GNU sed's `e` runs a command), a shell given its commands
/// with `-c` (they are judged as parts of their own), git that reads no repository.
fn reads_nothing(argv: &[String]) -> bool {
    const SYSTEM: &[&str] = &["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/"];
    let Some(first) = argv.first() else { return true };
    if first.contains('/') && !SYSTEM.iter().any(|d| first.starts_with(d) && !first[d.len()..].contains('/')) {
        return false;
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    let args = &argv[1..];
    let short = |a: &String, c: char| a.starts_with('-') && !a.starts_with("--") && a.contains(c);
    match name {
        "sed" | "gsed" => !args.iter().any(|a| short(a, 'f') || a.starts_with("--file")),
        "awk" | "gawk" | "mawk" | "nawk" => !crate::judge::assess::awk_options_read_code(args),
        "sh" | "bash" | "dash" | "zsh" | "ksh" => args.first().is_some_and(|a| short(a, 'c')),
        "git" => !git_reads_repository(args),
        // What xargs runs (`echo` where it names nothing).
        "xargs" => {
            const VALUED: &[&str] = &["-I", "-i", "-n", "-d", "-L", "-l", "-P", "-s", "-E", "-e", "-a"];
            let mut words = args.iter();
            while let Some(w) = words.next() {
                if VALUED.contains(&w.as_str()) {
                    words.next();
                } else if !w.starts_with('-') {
                    return reads_nothing(&args[args.len() - words.len() - 1..]);
                }
            }
            true
        }
        _ => READS_NOTHING.contains(&name),
    }
}

/// Whether git, given `args`, reads a repository's config (the one it is in, or `-C`'s): all
/// but the few forms that set up no repository. `git help` runs `man.viewer`, `-p` the pager
/// that config names, and `git config --global` the pager too: they read it.
fn git_reads_repository(args: &[String]) -> bool {
    /// Options before the subcommand that take the next word as their value.
    const VALUED: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"];
    let mut words = args.iter().map(String::as_str);
    while let Some(w) = words.next() {
        match w {
            "-p" | "--paginate" => return true,
            "--version" | "-v" | "--exec-path" | "--html-path" | "--man-path" | "--info-path" => return false,
            w if VALUED.contains(&w) => {
                words.next();
            }
            w if w.starts_with('-') => {}
            sub => return !matches!(sub, "version" | "init" | "clone"),
        }
    }
    // `git` alone prints its help, as `git help` does.
    true
}

/// Whether `ps`, given `args`, shows processes' environments: BSD's `e` (`ps e`, `ps auxe`,
/// `ps eww`), or a dashed word procps reads as BSD's because it holds a letter that is no
/// Unix option (`ps -auxe`). The value of an option that takes one is no option.
fn ps_shows_environment(args: &[String]) -> bool {
    const UNIX: &str = "AaCcdeFfGgHjLlMmNnOoPpqsTtUuwyZ";
    const VALUED: &[&str] = &["-C", "-G", "-g", "-p", "-q", "-s", "-t", "-u", "-U", "-o", "-O"];
    let mut skip = false;
    for w in args {
        if std::mem::take(&mut skip) || w.starts_with("--") {
            continue;
        }
        skip = VALUED.contains(&w.as_str());
        let letters = w.strip_prefix('-').unwrap_or(w);
        if !letters.contains('e') || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        if !w.starts_with('-') || letters.chars().any(|c| !UNIX.contains(c)) {
            return true;
        }
    }
    false
}

/// The words of `text` as the shell splits them, in order, where [`words`] splits more: a blank
/// quoted or escaped stays in its word (`cd "h l"`, `cat h\ l/x`). Split at what the shell
/// splits at unquoted, and at `=` and `:` (`--file="h l/x"`).
fn shell_words(text: &str, home: &str) -> Vec<String> {
    let name = home.rsplit('/').next().unwrap_or_default();
    let (mut out, mut word) = (Vec::new(), String::new());
    let (mut quote, mut escaped) = (None, false);
    for c in ansi_c(text).chars() {
        match (quote, c) {
            _ if std::mem::take(&mut escaped) => word.push(c),
            (None | Some('"'), '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() || ";|&<>()=:`".contains(c) => out.push(std::mem::take(&mut word)),
            (_, c) => word.push(c),
        }
    }
    out.push(word);
    out.into_iter().filter(|w| !w.is_empty()).map(|w| home_variables(&w, name)).collect()
}

/// The words of `text` as the shell could split them, generously: quotes and backslashes
/// dropped (so `"$HOME"/.x` is one word), home's variables as home ([`home_variables`]), and
/// split at white space and at what ends a word in the shell or in a program's own syntax
/// (`;|&<>()`, `=`, `:`, `,`, braces, backquotes). `~NAME` is `~` where NAME is home's own name.
fn words(text: &str, home: &str) -> Vec<String> {
    let name = home.rsplit('/').next().unwrap_or_default();
    // A command substitution in backquotes as `$(..)`: what it prints is a computed word
    // (`/proc/`pgrep x`/environ` is `/proc/$`..).
    let text = ansi_c(text);
    let mut unquoted = String::with_capacity(text.len());
    let mut opened = false;
    for c in text.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')) {
        match c {
            '`' => {
                opened = !opened;
                unquoted.push_str(if opened { "$(" } else { ") " });
            }
            c => unquoted.push(c),
        }
    }
    // Bash's regular-expression match (`[[ $x =~ re ]]`) is no tilde.
    let unquoted = home_variables(&unquoted, name).replace("=~ ", "= ").replace("=~\t", "= ");
    let separator = |c: char| c.is_whitespace() || ";|&<>()=:,{}`".contains(c);
    let own_tilde = |w: &str| {
        let rest = w.strip_prefix('~')?.strip_prefix(name).filter(|_| !name.is_empty())?;
        (rest.is_empty() || rest.starts_with('/')).then(|| format!("~{rest}"))
    };
    let mut out: Vec<String> = unquoted
        .split(separator)
        .filter(|w| !w.is_empty())
        .map(|w| own_tilde(w).unwrap_or_else(|| w.to_string()))
        .collect();
    // A braced expansion or a substitution the text does not set, kept whole with what follows
    // it (`${p%X}/.aws/credentials`, `$(pwd)/x`): its value may be anything, home included
    // ([`spellings`], rt7 C4). Added to the words above, which judge what is inside it.
    if unquoted.contains("${") || unquoted.contains("$(") {
        let collapsed = collapse_expansions(&unquoted);
        out.extend(collapsed.split(separator).filter(|w| w.starts_with('$') && w.contains('/')).map(str::to_string));
    }
    out
}

/// `text` with each `${...}` and `$(...)` (nested ones within) as `$_`, but `${NAME}` as `$NAME`.
fn collapse_expansions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${").into_iter().chain(rest.find("$(")).min() {
        out.push_str(&rest[..at]);
        let (open, close) = if rest[at..].starts_with("${") { ('{', '}') } else { ('(', ')') };
        // `${NAME}` is `$NAME`: a variable, not a computed value.
        if open == '{'
            && let Some(len) = rest[at + 2..].find('}')
            && len > 0
            && rest[at + 2..at + 2 + len].chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push('$');
            out.push_str(&rest[at + 2..at + 2 + len]);
            rest = &rest[at + 3 + len..];
            continue;
        }
        let mut depth = 0usize;
        let end = rest[at + 1..]
            .char_indices()
            .find(|(_, c)| {
                if *c == open {
                    depth += 1;
                } else if *c == close {
                    depth -= 1;
                }
                depth == 0
            })
            .map_or(rest.len(), |(i, _)| at + 1 + i + 1);
        out.push_str("$_");
        rest = &rest[end.min(rest.len())..];
    }
    out.push_str(rest);
    out
}

/// `text` with bash's ANSI-C quoting (`$'\x7e/notes'`) decoded: the word it makes.
pub(crate) fn ansi_c(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("$'") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("$'") {
        out.push_str(&rest[..at]);
        let mut chars = rest[at + 2..].char_indices().peekable();
        let mut end = rest.len() - at - 2;
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' => {
                    end = i + 1;
                    break;
                }
                '\\' => {
                    let Some((_, e)) = chars.next() else { break };
                    // The digits of `\xHH`, `\uHHHH`, `\UHHHHHHHH` and `\NNN` (octal).
                    let (radix, most, mut code) = match e {
                        'x' => (16, 2, 0),
                        'u' => (16, 4, 0),
                        'U' => (16, 8, 0),
                        '0'..='7' => (8, 2, e.to_digit(8).unwrap_or(0)),
                        'n' => (0, 0, 10),
                        't' => (0, 0, 9),
                        'c' => (0, 0, chars.next().map_or(0, |(_, c)| c as u32 & 0x1f)),
                        other => (0, 0, other as u32),
                    };
                    for _ in 0..most {
                        match chars.peek().and_then(|(_, d)| d.to_digit(radix)) {
                            Some(d) => {
                                code = code * radix + d;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    out.extend(char::from_u32(code));
                }
                c => out.push(c),
            }
        }
        rest = &rest[at + 2 + end.min(rest.len() - at - 2)..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
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
        // `$PWD` as `.` and `$OLDPWD` as `~-` (each only plain: `${PWD%/*}` is computed).
        let plain = len == var.len() || len == var.len() + 2;
        // `${X:-WORD}`, `${X-WORD}`, `${X:=WORD}`, `${X:+WORD}`, ...: the word may be WORD (rt7 C4:
        // `cat ${U:-~}/.ssh/id_ed25519`), read as the shell reads it.
        if let Some(operand) = after.strip_prefix('{').and_then(|b| default_operand(b, var)) {
            out.push_str(&home_variables(operand, name));
            rest = &after[1 + var.len()..];
            rest = &rest[rest.len().min(closing(rest) + 1)..];
            continue;
        }
        match var {
            "HOME" => out.push('~'),
            "PWD" if plain => out.push('.'),
            "OLDPWD" if plain => out.push_str("~-"),
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

/// The operand of a braced expansion's default, assignment or alternative (`X:-WORD}`, `X-WORD}`,
/// `X:=WORD}`, `X=WORD}`, `X:+WORD}`, `X+WORD}`), for the variable `var` at the start of
/// `braced` (after `${`). Not home's own variables, which [`home_variables`] reads as home.
fn default_operand<'a>(braced: &'a str, var: &str) -> Option<&'a str> {
    if var.is_empty() || matches!(var, "HOME" | "PWD" | "OLDPWD" | "USER" | "LOGNAME") {
        return None;
    }
    let ops = &braced[var.len()..];
    let body = [":-", "-", ":=", "=", ":+", "+"].iter().find_map(|op| ops.strip_prefix(op))?;
    Some(&body[..closing(body).min(body.len())])
}

/// Where the `}` that closes a braced expansion is in `text` (after its `${`), nested ones
/// skipped: `text.len()` where none does.
fn closing(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// How the shell's own process is named in `/proc`: `/proc/$$` is the shell's, as `self` is.
const OWN_PROCESS: &[&str] = &["self", "thread-self", "$$", "$BASHPID"];

/// `/proc/self/root/x` as `/x` and `/proc/self/cwd/x` as `cwd/x` (and `thread-self`'s, and
/// `$$`'s): the same files by another name.
fn through_proc_self(path: String, cwd: &str) -> String {
    let Some(rest) = path.strip_prefix("/proc/") else { return path };
    let Some((pid, own)) = rest.split_once('/') else { return path };
    if !OWN_PROCESS.contains(&pid) {
        return path;
    }
    let (link, rest) = own.split_once('/').unwrap_or((own, ""));
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

/// The entry of home (`~/.kaggle`, `~/notes`) that holds `path`, when the box does not show
/// it: the box shows of home only what it names. A pattern in `path` may match any name
/// (`~/*/kaggle.json`, `/home/*/.netrc`): it is shown only where its literal part is.
fn hidden_entry(path: &str, home: &str, sight: &HomeSight) -> Option<String> {
    let rest = under_glob(path, home)?;
    let first = rest.split('/').next().filter(|f| !f.is_empty())?;
    let literal = literal_part(path);
    let shown = sight.shown.iter().any(|root| under(&literal, &normalize(root)).is_some());
    (!shown).then(|| format!("~/{first}"))
}

/// Whether a path's component is a pattern the shell expands (`*`, `?`, `[..]`), or one it
/// computes (`$x`, `$(..)`): either may be any name.
fn is_pattern(component: &str) -> bool {
    component.contains(['*', '?', '[', '$'])
}

/// `path` up to its first component that is a pattern.
fn literal_part(path: &str) -> String {
    let literal: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).take_while(|c| !is_pattern(c)).collect();
    format!("/{}", literal.join("/"))
}

/// What follows `root` in `path` (`""` for `root` itself), when `path` is in it or, where it
/// holds patterns, may be: a pattern matches any one component (generously), `**` any number.
fn under_glob(path: &str, root: &str) -> Option<String> {
    let mut parts = path.split('/').filter(|c| !c.is_empty());
    for want in root.split('/').filter(|c| !c.is_empty()) {
        match parts.next()? {
            "**" => return Some(std::iter::once("**").chain(parts).collect::<Vec<_>>().join("/")),
            got if got == want || is_pattern(got) => {}
            _ => return None,
        }
    }
    Some(parts.collect::<Vec<_>>().join("/"))
}

/// `/proc` itself (what reads all of it reads every process's files), `/proc/<pid>`, or a
/// pid the text computes or matches (`/proc/$(pgrep x)`, `/proc/*/environ`, `$!`): another
/// process's files. `self` and `$$` are the shell's own ([`OWN_PROCESS`]).
fn other_process(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/proc") else { return false };
    if rest.is_empty() {
        return true;
    }
    let Some(rest) = rest.strip_prefix('/') else { return false };
    let pid = rest.split('/').next().unwrap_or_default();
    !pid.is_empty() && !OWN_PROCESS.contains(&pid) && (pid.bytes().all(|b| b.is_ascii_digit()) || is_pattern(pid))
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
            links: None,
            boxed_elsewhere: true,
            ..HomeSight::default()
        }
    }

    fn asks(text: &str, cwd: &str) -> bool {
        hidden_read(text, &sight(cwd)).is_some()
    }

    /// rt7 C4: a word whose head the text does not set, and the operand of a default, name home
    /// as well as a literal path does.
    #[test]
    fn a_default_or_an_unset_head_naming_home_needs_a_person() {
        for text in [
            "cat ${UNSET:-/home/u}/.ssh/id_ed25519",
            "cat ${U:-~}/.ssh/id_ed25519",
            "cat \"${U-/home/u/.ssh/id_ed25519}\"",
            "cat ${U:-$HOME}/.aws/credentials",
            "cat ${U:+/home/u/notes/x}",
            "p=/home/uX; cat ${p%X}/.aws/credentials",
            "p=/HOME/U; cat ${p,,}/.ssh/id_ed25519",
            "cat $U/home/u/.aws/credentials",
            "cat $1/home/u/notes/x",
            "cat $@/data/u/notes/x",
            "cd $U/home/u && grep -r . .",
            "cd ${U:-~}/.config/gh && cat hosts.yml",
            "cat $(pwd)/.aws/credentials",
            "cat ${U:-/srv/secret}/x",
        ] {
            assert!(asks(text, "/tmp"), "{text}");
        }
        for text in ["ls $VIRTUAL_ENV/bin", "cat ${X:-/tmp/a}", "cat $U/etc/hostname", "cat ${X%/}/README"] {
            assert!(!asks(text, "/tmp"), "{text}");
        }
    }

    /// `sandbox.denyRead` holds where there is no box too (the box covers it wherever it is).
    #[test]
    fn what_the_box_covers_needs_a_person() {
        for text in ["cat /srv/secret/db.key", "cp /srv/secret x", "cat ~/proj/keys/a.pem", "cd /srv && cat secret/x"] {
            let found = hidden_read(text, &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not found"));
            assert!(found.why.contains("covers"), "{text}: {}", found.why);
        }
        for text in ["cat /srv/secretary/x", "cat /home/u/.work/proj/keyset", "ls /srv", "cat secret"] {
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

    /// rt5 B3: the box hides all of home but what it names, not only its dot-directories; and
    /// the spellings the text check missed.
    #[test]
    fn every_spelling_of_a_hidden_path_needs_a_person() {
        for text in [
            // Any part of home the box does not show, and any command that starts in home.
            "cat ~/notes/vault.txt",
            "ls ~/projects",
            "cat /home/u/Documents/x",
            "cd && cat notes/vault.txt",
            // `~+` is $PWD, `~-` $OLDPWD (wherever the agent's environment says), `$PWD` after `cd`.
            "cd && cat ~+/.kaggle/kaggle.json",
            "cd; cd /tmp; cat ~-/.kaggle/kaggle.json",
            "cat ~-/.kaggle/kaggle.json",
            "cat $OLDPWD/.netrc",
            "cd && cat $PWD/.config/rclone/rclone.conf",
            "cd ~ && cat ${PWD}/notes/x",
            // Patterns: a pattern component matches any name (`GLOBIGNORE` turns on dotglob).
            "GLOBIGNORE=x; cat ~/*/kaggle.json",
            "cat /home/*/.kaggle/kaggle.json",
            "cat /*/u/notes/x",
            "cat /**/kaggle.json",
            "ls ~/.cache/*/x",
            "cat ~/?otes/x",
            // A path glued to an option.
            "xargs -0 -a$HOME/.kaggle/kaggle.json echo",
            "xargs -a~/.kaggle/kaggle.json echo",
            "tool -xvf~/notes/x",
            "tool --file=~/.kaggle/kaggle.json",
            "cd && xargs -a.kaggle/kaggle.json echo",
            // The shell's own /proc entry is `/`'s way in.
            "cat /proc/$$/root/home/u/.kaggle/kaggle.json",
            "cat /proc/$BASHPID/root/data/u/.netrc",
            // A computed component may be any name; ANSI-C quoting is decoded.
            "cat /home/$(whoami)/notes/x",
            "cat /home/`id -un`/.netrc",
            "cat $'\\x7e'/notes/x",
            "cat $'/home/\\165/notes'",
            "cat $'\\057home\\057u'/.netrc",
            // Back to where the shell was: the agent's environment may say home.
            "cd /tmp/y; cd - && cat notes/x",
            "pushd /tmp/y; popd; cat .netrc",
        ] {
            let found = hidden_read(text, &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("hidden") || found.why.contains("home itself"), "{text}: {}", found.why);
        }
        let found = hidden_read("cat ~/notes/vault.txt", &sight("/tmp/x")).unwrap();
        assert!(
            found.why.contains("in ~/notes, which the sandbox keeps hidden (it shows of home only"),
            "{}",
            found.why
        );
        // Starting in home: its relative paths (and `grep -r x` with none) are all in it.
        for text in ["ls", "cat notes.txt", "grep -r token"] {
            let found = hidden_read(text, &sight("/home/u")).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.starts_with("starts in ~, "), "{text}: {}", found.why);
        }
        // What the box shows, or that is not home, still runs unasked.
        for text in [
            "ls ~/.cache/pip/*",
            "cat ~/.work/proj/src/*.rs",
            "gcc -I/usr/include -o/tmp/x/a.out a.c",
            "cat -n ./notes.txt",
            "cat ~+/notes.txt",
            "ls ~+",
            "echo $PWD",
            "cat /proc/$$/status /proc/$$/root/etc/hostname",
            "cat ~alice/x",
        ] {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
    }

    /// rt5 B3: other processes' files, whatever names their pid (and `/proc` itself).
    #[test]
    fn another_process_by_any_name_needs_a_person() {
        for text in [
            "cat /proc/$(pgrep -n sleep)/environ",
            "cat /proc/`pgrep -n sleep`/environ",
            "cat /proc/$!/environ",
            "cat /proc/$PPID/environ",
            "cat /proc/[0-9]*/environ",
            "cd /proc && cat 1234/environ",
            "cd /proc; cat $(pgrep x)/environ",
            "cd /proc; cat `pgrep x`/environ",
            "cd / && cat proc/1234/environ",
            "grep -ra AWS_SECRET /proc",
        ] {
            let found = hidden_read(text, &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("another process"), "{text}: {}", found.why);
        }
        assert!(asks("cat 1234/environ", "/proc"));
        for text in
            ["cat /proc/cpuinfo /proc/self/environ /proc/$$/status", "cd /tmp && ls 1234", "ls /proc/sys/kernel"]
        {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
    }

    /// rt5 B3: a symbolic link on a path's way (one a box left in the workspace) is looked up,
    /// where the gate gives a way to: here one where `/w/docs-home` leads to home.
    #[test]
    fn a_link_into_home_needs_a_person() {
        fn lookup(path: &str) -> Option<String> {
            let rest = under(path, "/w/docs-home")?;
            Some(normalize(&format!("/data/u/{rest}")))
        }
        let sight = HomeSight { shown: vec!["/w".into()], links: Some(lookup), ..sight("/tmp/x") };
        for text in [
            "cat /w/docs-home/.kaggle/kaggle.json",
            "cat /w/docs-home/notes/new",
            "cd /w && cat docs-home/*/kaggle.json",
        ] {
            let found = hidden_read(text, &sight).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("through a symbolic link, to ~/"), "{text}: {}", found.why);
        }
        assert_eq!(hidden_read("cat /w/docs/x /w/missing/y", &sight), None);
        // Without a way to look them up, the judge looks nothing up.
        let pure = HomeSight { links: None, ..sight };
        assert_eq!(hidden_read("cat /w/docs-home/.kaggle/kaggle.json", &pure), None);
    }

    /// A way to look up links for the tests: `/w/hl` leads to home's real path, `/w/up` to
    /// `/`; a `..` after one to the parent of its target, as the kernel takes it.
    fn lookup(path: &str) -> Option<String> {
        let (link, to) = [("/w/hl", "/data/u"), ("/w/up", "/")].into_iter().find(|(l, _)| under(path, l).is_some())?;
        Some(normalize(&format!("{to}/{}", under(path, link)?)))
    }

    /// rt6 G4: relative `cd`s are followed in order, from wherever the shell may be then, and
    /// through the links on their way: `cd ws && cd hl` (`hl` a link a box made to home) goes
    /// home, as `cd ws/hl` does; so does `cd ws && cd ../home`, and a `..` after a link.
    #[test]
    fn a_chain_of_relative_directories_is_followed_as_the_shell_goes() {
        let linked = |cwd: &str| HomeSight { shown: vec!["/w".into()], links: Some(lookup), ..sight(cwd) };
        for (text, cwd) in [
            ("cd w && cd hl && grep -r token .", "/"),
            ("cd /w && cd hl && grep -r token .", "/tmp/x"),
            ("cd hl && cat .netrc", "/w"),
            ("pushd w; pushd hl; ls", "/"),
            ("cd nowhere; cd w/hl; ls", "/"),
            ("git -C w/hl/.. status; cd w; cd hl; ls", "/"),
            ("cd up && cd home/u && ls", "/w"),
        ] {
            let found = hidden_read(text, &linked(cwd)).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.starts_with("goes to "), "{text}: {}", found.why);
            assert!(found.why.contains("through a symbolic link"), "{text}: {}", found.why);
        }
        let found = hidden_read("cd w && cd hl && grep -r token .", &linked("/")).unwrap();
        assert_eq!(found.word, "hl");
        assert!(found.why.starts_with("goes to hl, home itself"), "{}", found.why);
        // Without links: `..`, and from a directory another relative one led to.
        for text in ["cd ws && cd ../../home/u && ls", "cd ../.. && cd home/u && ls", "cd .. ; cd .. ; cd home/u; ls"] {
            let found = hidden_read(text, &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.starts_with("goes to "), "{text}: {}", found.why);
        }
        // A `..` after a link in a word is where the kernel takes it: `hl/..` is above home.
        let found = hidden_read("cat /w/hl/../u/.netrc", &linked("/tmp/x")).expect("through hl/..");
        assert!(found.why.contains("through a symbolic link, to ~/.netrc"), "{}", found.why);
        assert!(hidden_read("cat hl/../u/notes/x", &linked("/w")).is_some());
        assert!(hidden_read("cd w && cd hl/.. && cat u/notes/x", &linked("/")).is_some());
        // A blank the shell keeps in a word: `cd "h l"` is one directory.
        fn spaced(path: &str) -> Option<String> {
            let rest = under(path, "/w/h l")?;
            Some(normalize(&format!("/data/u/{rest}")))
        }
        let spaced = |cwd: &str| HomeSight { links: Some(spaced), ..sight(cwd) };
        for text in
            ["cd w && cd \"h l\" && grep -r token .", "cd w; cd h\\ l; ls", "cat \"w/h l/notes/x\"", "cd 'w/h l' && ls"]
        {
            assert!(hidden_read(text, &spaced("/")).is_some(), "{text}: not asked");
        }
        // `$CDPATH`: `cd hl` may go to `/w/hl`.
        let cd_path = HomeSight { cd_path: vec!["/w".into()], ..linked("/tmp/x") };
        assert!(hidden_read("cd hl && ls", &cd_path).is_some());
        assert_eq!(hidden_read("cd hl && ls", &linked("/tmp/x")), None);
        // Too many directories to follow: a person.
        let many = (b'a'..=b'j').map(|c| format!("cd {}", c as char)).collect::<Vec<_>>().join("; ");
        let found = hidden_read(&format!("{many}; ls"), &sight("/tmp/x")).expect("too many");
        assert!(found.why.contains("too often"), "{}", found.why);
        // What goes nowhere hidden still runs unasked.
        for text in [
            "cd /app && cd src && grep -r x .",
            "cd sub && cd .. && ls",
            "cd w && cd src && cat main.rs",
            "cd a; cd b; cd c; cd ../d; ls",
        ] {
            assert_eq!(hidden_read(text, &linked("/")), None, "{text}");
            assert_eq!(hidden_read(text, &linked("/tmp/x")), None, "{text}");
        }
    }

    /// `parts_reach` of `text`, its commands split at `;`, `&` and `|` (the parser's parts, roughly).
    fn reach(text: &str, sight: &HomeSight) -> Option<Hidden> {
        let argvs: Vec<Vec<String>> = (text.split([';', '&', '|']))
            .map(|c| c.split_whitespace().map(String::from).collect::<Vec<_>>())
            .filter(|a| !a.is_empty())
            .collect();
        parts_reach(text, &argvs.iter().map(Vec::as_slice).collect::<Vec<_>>(), sight)
    }

    /// The tests' git work trees a box may write: `/w`, `/home/u/proj` and `/srv/my proj`.
    fn tree(path: &str, _: Option<&str>) -> Option<String> {
        ["/w", "/home/u/proj", "/srv/my proj"].into_iter().find(|t| under(path, t).is_some()).map(String::from)
    }

    /// rt6 G3: from a place with no box, `cd ws && cargo --version` ran the toolchain a box named
    /// in `ws/rust-toolchain.toml` (rustup's proxies obey it). Where the text names a directory a
    /// box can write (a git work tree, `sandbox.writable`), by any spelling, link or chain of
    /// `cd`s, only what reads nothing of it runs unasked.
    #[test]
    fn with_no_box_a_program_where_a_box_writes_needs_a_person() {
        fn lookup(path: &str) -> Option<String> {
            let (link, to) = [("/tmp/x/proj", "/w")].into_iter().find(|(l, _)| under(path, l).is_some())?;
            Some(normalize(&format!("{to}/{}", under(path, link)?)))
        }
        let sight = |cwd: &str| HomeSight {
            work_tree: Some(tree),
            links: Some(lookup),
            writable: vec!["/srv/data".into()],
            ..sight(cwd)
        };
        for (text, cwd) in [
            ("cd /w && cargo --version", "/tmp/x"),
            ("cd /w; rustc --version", "/tmp/x"),
            ("cd /w && cargo metadata", "/tmp/x"),
            ("pushd /w && cargo tree", "/tmp/x"),
            ("cd w && cargo -V", "/"),
            ("cd w && cd src && cargo -V", "/"),
            ("cd \"my proj\" && cargo -V", "/srv"),
            ("cd proj && cargo -V", "/tmp/x"),
            ("cargo --manifest-path=/w/Cargo.toml metadata", "/tmp/x"),
            ("npm --prefix /w test", "/tmp/x"),
            ("make -C /w", "/tmp/x"),
            ("cd /w && python3 --version", "/tmp/x"),
            ("cd /w && node --version", "/tmp/x"),
            ("cd /w/src && yarn --version", "/tmp/x"),
            ("cd ~/proj && go version", "/tmp/x"),
            ("cd /w && ls && ./configure", "/tmp/x"),
            ("cd /w && /w/bin/ls", "/tmp/x"),
            ("cd /w && sed -f fix.sed main.c", "/tmp/x"),
            ("cd /w && bash build.sh", "/tmp/x"),
            ("cd /w && source .envrc", "/tmp/x"),
            ("cd /w && ls | xargs -I {} cargo run {}", "/tmp/x"),
            ("cd /srv/data/run && make", "/tmp/x"),
            // Where it starts, if that is in one.
            ("cargo --version", "/w/sub"),
        ] {
            let found = reach(text, &sight(cwd)).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("where a command in the sandbox may have written"), "{text}: {}", found.why);
            assert!(found.why.contains("run it from the project"), "{text}: {}", found.why);
        }
        let found = reach("cd /w && cargo --version", &sight("/tmp/x")).unwrap();
        assert_eq!(found.word, "cargo");
        assert!(found.why.starts_with("runs cargo in or on /w, a git work tree, "), "{}", found.why);
        let found = reach("cd /srv/data/run && make", &sight("/tmp/x")).unwrap();
        assert!(found.why.contains("in /srv/data, which sandbox.writable names"), "{}", found.why);
        // rt7 C3: what reads nothing of where it runs still reads what is there, and a job left
        // in a kept box can make any name there a link into home after the judge looked.
        for (text, cwd) in [
            ("cd /w && ls && cat README && grep -rn x src", "/tmp/x"),
            ("cd /w && find . -name *.rs -exec wc -l {} +", "/tmp/x"),
            ("cd /w && git --version && sh -c ls", "/tmp/x"),
            ("cd /w && sed -n 1p f && awk {print} f | sort | uniq -c", "/tmp/x"),
            ("cd /w && /usr/bin/ls && /bin/cat f", "/tmp/x"),
            ("cd /w && find . -name *.rs | xargs -n 1 wc -l", "/tmp/x"),
            ("cd /w && mkdir -p a && cp f a/ && tar czf /tmp/x/a.tgz a", "/tmp/x"),
            ("cat /w/f", "/tmp/x"),
            ("cp /tmp/x/proj/f /tmp/x/leak", "/tmp/x"),
            ("grep key /srv/data/f", "/tmp/x"),
        ] {
            let found = reach(text, &sight(cwd)).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("symbolic link to anything"), "{text}: {}", found.why);
        }
        // What names nothing where a box writes runs unasked.
        for (text, cwd) in [
            ("cargo --version && python3 --version", "/tmp/x"),
            ("cd /elsewhere && cargo build", "/tmp/x"),
            ("cd /tmp/x/other && make", "/tmp/x"),
            ("cat /etc/hostname /tmp/x/f && ls /usr/share", "/tmp/x"),
        ] {
            assert_eq!(reach(text, &sight(cwd)), None, "{text}");
        }
        // No box anywhere (user namespaces missing): no box wrote it.
        let nowhere = HomeSight { boxed_elsewhere: false, ..sight("/tmp/x") };
        assert_eq!(reach("cd /w && cargo --version", &nowhere), None);
    }

    /// rt6: from a place with no box, `ls` ran `ws/bin/ls`, a file a box wrote, where agentsh's
    /// `$PATH` names a directory of the project (an activated `.venv/bin`, `node_modules/.bin`
    /// spelled relative). A program run by name is looked up as `execvp` does; found where a box
    /// writes, it needs a person.
    #[test]
    fn with_no_box_a_program_path_finds_where_a_box_writes_needs_a_person() {
        fn executable(path: &str) -> bool {
            ["/w/bin/ls", "/w/.venv/bin/python3", "/w/node_modules/.bin/eslint", "/usr/bin/ls", "/usr/bin/python3"]
                .contains(&path)
                || path == "/tmp/x/proj/bin/ls"
        }
        fn lookup(path: &str) -> Option<String> {
            let (link, to) = [("/tmp/x/proj", "/w")].into_iter().find(|(l, _)| under(path, l).is_some())?;
            Some(normalize(&format!("{to}/{}", under(path, link)?)))
        }
        let sight = |path: &[&str]| HomeSight {
            work_tree: Some(tree),
            links: Some(lookup),
            path: path.iter().map(|d| d.to_string()).collect(),
            program: Some(executable),
            ..sight("/tmp/x")
        };
        for (text, path) in [
            ("ls", &["/w/bin", "/usr/bin"][..]),
            ("echo hi | ls -la", &["/w/bin", "/usr/bin"]),
            ("python3 -V", &["/w/.venv/bin", "/usr/bin"]),
            ("cd /w && eslint --version", &["node_modules/.bin", "/usr/bin"]),
            ("ls", &["/tmp/x/proj/bin", "/usr/bin"]),
        ] {
            let found = reach(text, &sight(path)).unwrap_or_else(|| panic!("{text} with {path:?}: not asked"));
            assert!(found.why.contains("as $PATH finds it"), "{text}: {}", found.why);
            assert!(found.why.contains("in /w, a git work tree"), "{text}: {}", found.why);
        }
        // Found first where no box writes, or not found there at all: unasked.
        for (text, path) in [
            ("ls", &["/usr/bin", "/w/bin"][..]),
            ("cat f", &["/w/bin", "/usr/bin"]),
            ("eslint --version", &["node_modules/.bin", "/usr/bin"]),
            ("/usr/bin/ls", &["/w/bin"]),
        ] {
            assert_eq!(reach(text, &sight(path)), None, "{text} with {path:?}");
        }
        // Not looked up where no box is made anywhere.
        let nowhere = HomeSight { boxed_elsewhere: false, ..sight(&["/w/bin"]) };
        assert_eq!(reach("ls", &nowhere), None);
    }

    /// The gap "walks to from above home": with no box, a recursive read whose root holds home
    /// reads the parts of it the box keeps hidden.
    #[test]
    fn with_no_box_a_recursive_read_of_what_holds_home_needs_a_person() {
        for (text, cwd) in [
            ("grep -r token /", "/tmp/x"),
            ("grep -R token /home", "/tmp/x"),
            ("grep --recursive token /home/", "/tmp/x"),
            ("grep -d recurse token /home", "/tmp/x"),
            ("rg token /", "/tmp/x"),
            ("find / -name *.json -exec cat {} +", "/tmp/x"),
            ("find /home -name *.pem | xargs cat", "/tmp/x"),
            ("tar czf /tmp/x/h.tgz /home", "/tmp/x"),
            ("cp -r / /tmp/x/y", "/tmp/x"),
            ("rsync -a /data /tmp/x/y", "/tmp/x"),
            ("grep -r token /h*", "/tmp/x"),
            ("cd / && grep -r token", "/tmp/x"),
            ("cd .. && cd .. && rg token", "/tmp/x"),
            ("grep -r token .", "/home"),
        ] {
            let found = reach(text, &sight(cwd)).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("whole, which holds home:"), "{text}: {}", found.why);
        }
        for (text, cwd) in [
            ("grep -r token /usr/share /etc", "/tmp/x"),
            ("grep token /etc/hosts", "/tmp/x"),
            ("ls -R /", "/tmp/x"),
            ("find / -name kaggle.json", "/tmp/x"),
            ("grep -r token .", "/tmp/x"),
            ("rg token /home/u/.work/proj", "/tmp/x"),
            ("du -sh /home", "/tmp/x"),
            ("cp /etc/hosts /tmp/x/h", "/tmp/x"),
        ] {
            assert_eq!(reach(text, &sight(cwd)), None, "{text}");
        }
    }

    /// rt5 B12: git runs what a repository's config names; with no box here and a box
    /// elsewhere, every git that reads a repository needs a person. B3: `ps e`.
    #[test]
    fn git_reading_a_repository_and_ps_showing_environments_need_a_person() {
        let argv = |t: &str| t.split_whitespace().map(String::from).collect::<Vec<_>>();
        for text in [
            "git status",
            "git -C /home/u/ws/sub status --short",
            "/usr/bin/git log",
            "git --no-pager diff",
            "git -c core.pager=cat show",
            "git help status",
            "git --help",
            "git -p version",
            "git config --global --list",
            "git",
            "git rev-parse HEAD",
        ] {
            let found = program_reach(&argv(text), &sight("/tmp/x")).unwrap_or_else(|| panic!("{text}: not asked"));
            assert!(found.why.contains("run it from the project"), "{text}: {}", found.why);
        }
        for text in ["git --version", "git version", "git -C x init", "git clone https://example.com/r"] {
            assert_eq!(program_reach(&argv(text), &sight("/tmp/x")), None, "{text}");
        }
        // No box anywhere (user namespaces missing): no box wrote a repository.
        let nowhere = HomeSight { boxed_elsewhere: false, ..sight("/tmp/x") };
        assert_eq!(program_reach(&argv("git status"), &nowhere), None);
        for text in ["ps e", "ps eww -p 12", "ps auxe", "ps -auxe", "ps -axe", "ps -p 1 e"] {
            assert!(program_reach(&argv(text), &sight("/tmp/x")).is_some(), "{text}");
        }
        for text in ["ps", "ps -ef", "ps -e", "ps aux", "ps -efe", "ps -C emacs", "ps -eo pid,user", "ps --sort=-pcpu"]
        {
            assert_eq!(program_reach(&argv(text), &sight("/tmp/x")), None, "{text}");
        }
    }

    #[test]
    fn what_the_box_shows_or_that_is_not_home_runs_unasked() {
        for text in [
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
        for text in ["cd /app && find . -name 'test*'", "cd /testbed && grep -r '\\.freq' pandas"] {
            assert!(!asks(text, "/tmp/x"), "{text}");
        }
        assert!(!asks("[[ $v =~ ^[0-9]+$ ]] && echo ok", "/tmp/x"));
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
