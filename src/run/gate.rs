//! The pipeline for one command: invocation -> parse/assess/decide -> approve -> exec.
//! It reads like a table of contents; every step lives in its own module. Only this module
//! and `exec` act on a verdict, and they do so by matching on it, never by default.

use crate::ask::prompt::{self, Answer, PartSummary, PromptRequest};
use crate::judge::containment::BoxView;
use crate::judge::decide::{DecidedBy, Part, RunsIn, Sandbox, Verdict};
use crate::judge::parse;
use crate::judge::unboxed::HomeSight;
use crate::model::Decision;
use crate::policy::config::{self, Config};
use crate::record::audit;
use crate::run::exec;
use crate::run::explain;
use crate::run::invocation::{ShellArgs, Source};
use crate::run::sandbox::{self, Confinement};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::model::exit::{REFUSED, USAGE};
pub use crate::policy::whitelist::{always_entries, entry_warning};

/// Runs shell text through the gate. Returns the exit status to use: the command's own when
/// agentsh waited for it (in the box, or supervised), else why it did not run; an unconfined
/// command replaces this process.
pub fn run(source: Source, options: ShellArgs) -> i32 {
    let source = match read_source(source) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let text = match &source {
        Source::Text { text, .. } => text.clone(),
        Source::Script { path, .. } => match read_script(path) {
            Ok(t) => t,
            Err(code) => return code,
        },
        Source::Stdin => unreachable!("read_source turns stdin into text"),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let (config, boxed, verdict, unboxed_search) = judge_source(&source, &text, &cwd, &options);
    // A typo (`pyhton x.py`) that would ask: nobody should approve a program that does not
    // exist. Bash's answer, without a prompt.
    if let Some(program) = missing_program(&verdict) {
        exec::not_found(program);
        return 127;
    }
    let trail = match admit(&verdict, &config, &cwd, box_line(&verdict, &boxed), None) {
        Ok(trail) => trail,
        Err(code) => {
            // What would have let it run in a box: the agent chose where it starts.
            if let Some(why) = verdict.runs_in_why.strip_prefix("no sandbox: ").filter(|w| w.starts_with(STARTS_IN)) {
                eprintln!("agentsh: note: no sandbox here: {}", crate::text::sanitize::sanitize(why));
            }
            return code;
        }
    };
    // rt7 C2: unconfined where boxes run, a command searches no directory of `$PATH` a box may
    // write (a kept box's job could drop a program there after the judge looked): with no box
    // because of where it starts, the very directories the judge looked programs up in; on a
    // person's word, those of agentsh's `$PATH` the box would not write. agentsh itself chooses
    // its own, for the command it judges.
    let search = match (verdict.runs_in, &boxed) {
        (RunsIn::Sandbox, _) => None,
        _ if verdict.runs_in_why == crate::judge::agent_wrappers::RUNS_AGENTSH => None,
        (RunsIn::Unconfined, Confinement::Boxed(plan)) => unboxed_path(&plan.roots().writable),
        (RunsIn::Unconfined, Confinement::Unconfined) => unboxed_search,
    };
    let search = search.and_then(|dirs| std::env::join_paths(dirs).ok());
    // What cannot work inside the box runs outside it on a person's word (a yes, their
    // whitelist); the judge only says `Sandbox` when it was told of a box.
    let confinement = match verdict.runs_in {
        RunsIn::Sandbox => boxed,
        RunsIn::Unconfined => Confinement::Unconfined,
    };
    let script = parse::parse_for_plan(&text).unwrap_or_default();
    let plan = exec::plan(&script, &source, &options);
    let started = Instant::now();
    let limit = (config.command_timeout > 0).then(|| Duration::from_secs(config.command_timeout));
    let carried = agent_file(&text, &confinement);
    let out_of_sight = out_of_sight(&verdict, &confinement);
    let proxied = match &confinement {
        Confinement::Boxed(b) if b.network() == sandbox::Network::Proxy => Some(b.records().to_path_buf()),
        _ => None,
    };
    // The person's terminal for the proxy's questions, established now: once in the box's user
    // namespace this process cannot inspect the terminal's other side. Only where a person types
    // (standard input is a terminal): the check reads /proc, too dear for every agent's command.
    let terminal = match &confinement {
        Confinement::Boxed(b) if b.network() == sandbox::Network::Proxy && exec::needs_terminal() => {
            Some(crate::ask::approval::persons_terminal())
        }
        _ => None,
    };
    let ask_host = |host: &str, port: u16| {
        let tty = match &terminal {
            Some(Ok(t)) => Ok(t),
            Some(Err(why)) => Err(why.clone()),
            None => Err("the command's input is not a terminal".to_string()),
        };
        sandbox::proxy::ask_person(&text, &cwd, (host, port), &config, tty)
    };
    let net = exec::Net { id: trail.id(), ask_host: Some(&ask_host) };
    // Links the command makes in the git directory, which the person's git would follow (rt3
    // G1), and what it does to hide its edits from their git review (G3, rt4 R2, R12).
    let git = match &confinement {
        Confinement::Boxed(b) => b.git_dir().zip(b.git_worktree()).map(|(g, root)| {
            (
                sandbox::gitlinks::Sweep::start(&g, b.records(), b.name(), b.holder_noted()),
                sandbox::gitreview::Before::take(&g, &root, Some(review_file(b))),
            )
        }),
        Confinement::Unconfined => None,
    };
    let ran =
        exec::run(plan, confinement, limit, &config.sandbox.pass_env, net, search.as_deref(), gated(&text, &verdict));
    if let Some((links, review)) = git {
        explain::print_git_links_removed(&links.finish());
        for said in links.messages() {
            eprintln!("{}", crate::text::sanitize::sanitize(&said));
        }
        explain::print_git_review_hidden(&review.finish());
    }
    if let Some(records) = proxied {
        explain::print_network_refusals(&sandbox::proxy::refusals(&records, trail.id()));
    }
    if let Some((inside, outside)) = &carried {
        carry_out(inside, outside.as_deref().map_err(String::as_str));
    }
    match ran {
        exec::Ran::NotRun(code) => {
            trail.finished(code, started.elapsed(), false);
            code
        }
        exec::Ran::Ended { code, signal, timed_out } => {
            let refused: Vec<String> =
                if code == 0 { Vec::new() } else { out_of_sight.iter().map(|(w, _)| w.clone()).collect() };
            if !refused.is_empty() {
                explain::print_box_refusal(&out_of_sight);
            }
            trail.finished_boxed(code, started.elapsed(), timed_out, &refused);
            // Ended by a signal: so does agentsh, as a shell would show it.
            if let Some(sig) = signal {
                crate::ask::tty::reraise(sig.as_str());
            }
            code
        }
    }
}

/// Where the git review keeps what it checks again after later commands (`gitreview::Before`):
/// beside the workspace's store in agentsh's records (`w-<key>.review`), one file a workspace,
/// whatever box it is run in.
fn review_file(b: &sandbox::BoxPlan) -> std::path::PathBuf {
    let mut path = b.store().into_os_string();
    path.push(".review");
    path.into()
}

/// The paths a boxed command names (as words, `~` expanded) that the box hides or covers, with
/// why: if the command fails, the box most likely refused it those (issue 29, item 5), and the
/// agent is told so rather than left to reach for `sudo` or `chmod`. Only absolute and `~`
/// paths can be out of sight (the workspace is always in it); the spec is built only for them.
fn out_of_sight(verdict: &Verdict, confinement: &Confinement) -> Vec<(String, String)> {
    let Confinement::Boxed(plan) = confinement else { return Vec::new() };
    let home = plan.home();
    let words = verdict.parts.iter().flat_map(|p| p.assessment.argv.iter().skip(1));
    let mut out: Vec<(String, String)> = Vec::new();
    for word in words.take(64) {
        // `--file=/x`: the path after the sign.
        let path_text = match word.split_once('=') {
            Some((flag, rest)) if flag.starts_with('-') => rest,
            _ => word.as_str(),
        };
        if path_text.contains(['$', '*', '?', '`']) || out.iter().any(|(w, _)| w == path_text) {
            continue;
        }
        let path = match (path_text.strip_prefix("~/"), &home) {
            _ if path_text == "~" => home.clone(),
            (Some(rest), Some(h)) => Some(h.join(rest)),
            _ if path_text.starts_with('/') => Some(std::path::PathBuf::from(path_text)),
            _ => None,
        };
        let Some(path) = path else { continue };
        match plan.spec().sight(&path) {
            sandbox::Sight::Shown => {}
            sandbox::Sight::Hidden(why) | sandbox::Sight::Covered(why) => out.push((path_text.to_string(), why)),
        }
        if out.len() >= 8 {
            break;
        }
    }
    out
}

/// A file an agent's wrapper writes in its temp directory for the agent to read after the
/// command: Claude Code's `pwd -P >| /tmp/claude-….-cwd`, which tells it where the command
/// left off. In the box it lands in the box's own temp directory: where it is kept there, and
/// where the agent looks for it. Gemini CLI's wrapper writes the subshell's background jobs to
/// `<tmp>/gemini-shell-…/bgpids.tmp`, in a directory Gemini made in the real `/tmp`: the box
/// gets that directory in its own `/tmp` (or the write fails and says so in the output), and
/// the file stays in the box: its process IDs are the box's, and the agent would take them for
/// its own processes' (it kills them when a command is cancelled).
fn agent_file(
    text: &str,
    confinement: &Confinement,
) -> Option<(std::path::PathBuf, Result<std::path::PathBuf, String>)> {
    let Confinement::Boxed(plan) = confinement else { return None };
    let env = crate::run::judging::wrapper_env();
    if text.ends_with("exit $__code")
        && let Some(file) = crate::judge::agent_wrappers::gemini_pid_file(text, &env)
        && let Some(dir) = file.parent().and_then(|d| plan.kept_at(d))
    {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir);
        return None;
    }
    if !text.ends_with("-cwd") {
        return None;
    }
    let wrapped = crate::judge::agent_wrappers::unwrap(text, &env)?;
    let inside = plan.kept_at(&wrapped.cwd_file)?;
    let outside = match carry_target(&wrapped.cwd_file, plan) {
        Ok(target) => Ok(target),
        Err(why) => Err(format!(
            "agentsh: warning: did not pass {} on to the agent: {why}",
            crate::text::sanitize::sanitize(&wrapped.cwd_file.display().to_string())
        )),
    };
    Some((inside, outside))
}

/// Whether agentsh may write the box's cwd file at `outside`, outside the box: only into a
/// directory that is not the person's home nor in it (`$TMPDIR` may be, and a file written
/// there is the box's content in the person's real home: rt3 G7), and not a place the box
/// hides. The directory is taken as it really is, links resolved; that is where the file goes.
fn carry_target(outside: &Path, plan: &sandbox::BoxPlan) -> Result<std::path::PathBuf, String> {
    let (dir, name) = outside.parent().zip(outside.file_name()).ok_or("it names no directory")?;
    let real = std::fs::canonicalize(dir).map_err(|e| format!("its directory cannot be resolved: {e}"))?;
    if let Some(home) = crate::policy::dirs::home() {
        // Home as it really is too, unless the directory is `/tmp` itself (Claude Code's).
        let in_home = sandbox::within(&real, home)
            || real != Path::new("/tmp") && std::fs::canonicalize(home).is_ok_and(|h| sandbox::within(&real, &h));
        if in_home {
            return Err("$TMPDIR is in your home, and agentsh writes nothing of the sandbox's there (set TMPDIR \
                        outside your home, as /tmp)"
                .into());
        }
    }
    match plan.hides(&real) {
        Some(why) => Err(format!("the sandbox hides its directory ({why})")),
        None => Ok(real.join(name)),
    }
}

/// Whether `text` is what `pwd -P` writes: one absolute path on one line.
fn one_absolute_path(text: &[u8]) -> bool {
    let line = text.strip_suffix(b"\n").unwrap_or(text);
    line.starts_with(b"/") && !line.contains(&b'\n') && !line.contains(&0)
}

/// Copies the agent's file out of the box (at most 4 KiB: a directory's path), without following
/// a link where it goes, and removes the box's copy. Only a file that holds one absolute path,
/// as `pwd -P` writes it, is passed on; only where [`carry_target`] allows (`outside` is
/// `Err` with the line that says why not).
fn carry_out(inside: &Path, outside: Result<&Path, &str>) {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = Vec::new();
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(inside);
    let Ok(file) = opened else { return };
    if !file.metadata().is_ok_and(|m| m.is_file()) || file.take(4096).read_to_end(&mut text).is_err() {
        return;
    }
    let _ = std::fs::remove_file(inside);
    let outside = match outside {
        Ok(outside) => outside,
        Err(why) => {
            eprintln!("{why}");
            return;
        }
    };
    if !one_absolute_path(&text) {
        eprintln!(
            "agentsh: warning: did not pass {} on to the agent: it does not hold one absolute path, as `pwd -P` \
             writes",
            crate::text::sanitize::sanitize(&outside.display().to_string())
        );
        return;
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(outside)
        .and_then(|mut f| f.write_all(&text));
    if let Err(e) = written {
        eprintln!(
            "agentsh: warning: could not pass {} on to the agent: {e}",
            crate::text::sanitize::sanitize(&outside.display().to_string())
        );
    }
}

/// The verdict on `text` (of `source`) as this shell route runs it from `cwd`: the config there,
/// the box, the script's arguments. Returns the config (its policy taken), the box, the verdict,
/// and where there is no box here only because of where the command starts, the directories of
/// `$PATH` the judge looked programs up in, which are all an unconfined command may search
/// ([`unboxed_path`]). `tests/parity.rs` holds it against `check` and `hook`.
pub fn judge_source(
    source: &Source,
    text: &str,
    cwd: &Path,
    options: &ShellArgs,
) -> (Config, Confinement, Verdict, Option<Vec<String>>) {
    let mut config = config::load(cwd);
    explain::print_warnings(&config.warnings);
    let boxed = prepare(&mut config, text, cwd, options.ask);
    config.policy.script_args = match source {
        Source::Text { argv0, args, .. } => argv0.iter().chain(args).cloned().collect(),
        Source::Script { path, args } => std::iter::once(path).chain(args).cloned().collect(),
        Source::Stdin => Vec::new(),
    };
    let searched = config.policy.home_sight.as_ref().filter(|s| s.boxed_elsewhere).map(|s| s.path.clone());
    // Shared with the judging thread, not copied (see `decide::bounded`).
    let verdict =
        crate::run::judging::judge_once(text, std::mem::take(&mut config.policy), crate::run::judging::Route::Shell);
    (config, boxed, verdict, searched)
}

/// Readies `config`'s policy to judge `text` in `cwd` as the shell route will run it: `--ask` (or
/// `AGENTSH_ASK`), the box commands run in here and what the judge is told of it, and the package
/// runner's local programs. The shell route, `check` and `hook` all call this, so they give one
/// verdict (issue 24). Returns the box.
pub fn prepare(config: &mut Config, text: &str, cwd: &Path, ask: bool) -> Confinement {
    let (boxed, judged_with, sight) = sandbox_and_sight(&config.sandbox, cwd);
    // rt7 B7: with no box, keys typed at a program may run commands (`more`'s `!`).
    config.policy.terminal = matches!(judged_with, Sandbox::Off(_)) && exec::may_read_keys();
    prepare_with(config, text, cwd, ask, python_env_of(judged_with, text));
    config.policy.home_sight = sight;
    boxed
}

/// [`prepare`] for a route whose runner is not agentsh: an interactive shell's line gate
/// (`check --prompt`, with or without `--refuse`), where the shell runs the line itself. The one
/// place that says how such a line is judged (rt8 C2: the refusing branch judged with the box and
/// the shell then ran the line unconfined): with no box; on the shell's terminal, whose keys
/// reach what the line starts; as a change to the shell that stays (`judge::line_gate`, rt8 C3);
/// and with pagers in their secure mode only where the shell's environment keeps them so, since
/// agentsh sets nothing for it (rt8 C4, `run::pagers`).
pub fn prepare_line_gate(config: &mut Config, text: &str, cwd: &Path, ask: bool) {
    let off = Sandbox::Off("an interactive shell runs the line itself, outside the sandbox".into());
    prepare_with(config, text, cwd, ask, off);
    config.policy.terminal = true;
    config.policy.line_gate = true;
    config.policy.pagers_unguarded = !crate::run::pagers::guarded(|name| std::env::var(name).ok());
}

/// [`prepare`] with the judge told of `sandbox`.
fn prepare_with(config: &mut Config, text: &str, cwd: &Path, ask: bool, sandbox: Sandbox) {
    // Set in place: a copy of a 10,000-entry whitelist would cost more than judging.
    config.policy.force_ask = ask_requested(ask);
    config.policy.sandbox = sandbox;
    config.policy.local_bins = local_bins(text, cwd);
}

/// The names in the nearest `node_modules/.bin` above `cwd` (up to the git top-level), when the
/// text uses a package runner (`npx`, `pnpx`, `bunx`); nothing is read otherwise.
pub fn local_bins(text: &str, cwd: &Path) -> Vec<String> {
    if !["npx", "pnpx", "bunx"].iter().any(|r| text.contains(r)) {
        return Vec::new();
    }
    // The nearest `node_modules/.bin`, as npm finds it; never above the git top-level.
    let ws = sandbox::Workspace::find(cwd);
    for dir in cwd.ancestors() {
        if let Ok(entries) = std::fs::read_dir(dir.join("node_modules/.bin")) {
            return entries.flatten().filter_map(|e| e.file_name().into_string().ok()).collect();
        }
        if ws.git_dir.is_some() && dir == ws.root {
            break;
        }
    }
    Vec::new()
}

/// The program of a command that would ask only because it is unknown, when it is a single
/// simple command whose name (a literal, no path, not a wrapper's) names nothing on `$PATH`.
fn missing_program(verdict: &Verdict) -> Option<&str> {
    let [part] = verdict.parts.as_slice() else { return None };
    let a = &part.assessment;
    let name = a.argv.first()?.as_str();
    let literal = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c));
    (verdict.decision == Decision::Ask
        && a.rule == "unknown"
        && (a.program.is_empty() || a.program == name)
        && literal
        && !exec::findable(name))
    .then_some(name)
}

/// Whether commands run in the sandbox here, and what the judge is told of it: the one place
/// that decides it (issues 15, 25), so the judge never counts on a box that exec will not set
/// up. In the box when `sandbox.enabled` is not false, the kernel has Landlock at
/// `sandbox::MIN_ABI` or later and user namespaces, there is a home to hide, and the box grants
/// or shows the directory the command starts in (`BoxPlan::unboxed`); otherwise
/// unconfined, judged as without a box (fail closed: nothing is contained on a box's word).
/// `check` and `hook` show and judge what the gate would do by calling this too.
pub fn sandbox_for(settings: &sandbox::Settings, cwd: &Path) -> (Confinement, Sandbox) {
    let (boxed, judged, _) = sandbox_and_sight(settings, cwd);
    (boxed, judged)
}

/// [`sandbox_for`], and with no box where a plan was made (the command starts where the box
/// cannot show its directory, or user namespaces are missing), what it would have shown of home:
/// the judge asks before an unconfined command reads what the box keeps hidden (rt4 R14).
pub fn sandbox_and_sight(settings: &sandbox::Settings, cwd: &Path) -> (Confinement, Sandbox, Option<HomeSight>) {
    if !settings.enabled {
        let from = settings.enabled_from.as_deref().unwrap_or("the config");
        return (Confinement::Unconfined, Sandbox::Off(format!("sandbox.enabled is false in {from}")), None);
    }
    if !sandbox::available() {
        let why = match sandbox::landlock_abi() {
            Some(abi) => format!("this kernel's Landlock ABI is {abi}; the sandbox needs {}", sandbox::MIN_ABI),
            None => "this kernel has no Landlock".to_string(),
        };
        return (Confinement::Unconfined, Sandbox::Off(why), None);
    }
    // With no home (HOME unset, empty or relative, and no passwd entry naming one) the box
    // cannot tell what of the person's to hide, so nothing may run unasked on its word (issue 27).
    let (Some(_), Some(records)) = (crate::policy::dirs::home(), sandbox::holder::records_dir()) else {
        let why = "no home directory (HOME is not an absolute path, and no passwd entry names one), so the \
                   sandbox cannot tell what of the person's to hide";
        return (Confinement::Unconfined, Sandbox::Off(why.to_string()), None);
    };
    let place = sandbox::Place::current(cwd, exec::needs_terminal());
    let plan = sandbox::BoxPlan::new(settings, place, own_dirs(), records);
    // A box that would have to show what it hides (home, `~/.ssh`, `/tmp/tmux-0`) to run the
    // command where it starts is no box: the command is judged as without one (issue 25).
    if let Some(why) = plan.unboxed() {
        let at = crate::text::sanitize::sanitize(&cwd.display().to_string());
        return (
            Confinement::Unconfined,
            Sandbox::Off(format!("{STARTS_IN}{at}, which the sandbox neither grants nor shows: {why}")),
            Some(HomeSight { boxed_elsewhere: true, ..home_sight(&plan, cwd, &settings.pass_env) }),
        );
    }
    // A box kept for these inputs proves the namespaces work; otherwise ask the system.
    if !plan.is_kept()
        && let sandbox::Namespaces::Unavailable(why) = sandbox::probe_namespaces()
    {
        return (
            Confinement::Unconfined,
            Sandbox::Off(format!(
                "user namespaces are unavailable ({why}): without them the sandbox cannot hide home, the \
                 temporary directories and the person's sockets"
            )),
            Some(home_sight(&plan, cwd, &settings.pass_env)),
        );
    }
    let view = box_view(&plan, cwd);
    (Confinement::Boxed(Box::new(plan)), Sandbox::On(view), None)
}

/// What the box `plan` would have shown of home (`judge::unboxed`), for a command that runs
/// without it: the spec's roots there. Built once per command that has no box, from the spec the
/// gate built to tell why: no system call (the judge then looks up the links on the way of the
/// paths the text names), and the names of the environment's secrets but for what `pass_env`
/// (`sandbox.passEnv`) passes into the box: one pass over the environment.
fn home_sight(plan: &sandbox::BoxPlan, cwd: &Path, pass_env: &[String]) -> HomeSight {
    let place = plan.place();
    let cd_path = std::env::var_os("CDPATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    let writable: Vec<String> = plan.spec().write.iter().map(|r| crate::text::path(&r.path)).collect();
    HomeSight {
        cd_path: cd_path.iter().filter(|d| d.is_absolute()).map(|d| crate::text::path(d)).collect(),
        path: unboxed_path(&writable).unwrap_or_default(),
        program: Some(executable),
        secret_env: std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v))
            .filter(|(k, v)| !pass_env.contains(k) && sandbox::environ::holds_secret(k, v))
            .map(|(k, _)| k)
            .collect(),
        ..home_sight_of(plan.spec(), place.real_home.as_deref(), place.cargo_home.as_deref(), cwd)
    }
}

/// The directories of agentsh's `$PATH` a command that runs unconfined where boxes run may
/// search, in order: not one a box may write, really or through a directory on its way (a git
/// work tree: a project's `bin`, `.venv/bin`, `node_modules/.bin`; agentsh's box store; what
/// `writable`, the box's writable roots, holds), nor a relative one (the command's directory,
/// wherever it goes). A job left in a kept box could put a program there after the judge looked
/// a name up and found it elsewhere (rt7 C2: `sort` judged as `/usr/bin/sort`, run as the box's
/// `.venv/bin/sort`, unconfined); so could it for every program the command runs by name, which
/// the judge never sees. `None` where `$PATH` is not set (`execvp` then searches the system's).
/// An `lstat` of each directory's components; a `statx` of `.git` above the few that are not
/// the system's or in a dot-directory of home.
pub fn unboxed_path(writable: &[String]) -> Option<Vec<String>> {
    let path = std::env::var_os("PATH")?;
    let home = crate::policy::dirs::home()?;
    let kept = std::env::split_paths(&path)
        .filter(|d| d.is_absolute() && !writable.iter().any(|w| sandbox::within(d, Path::new(w))))
        .filter(|d| crate::policy::dirs::box_writable(d, home).is_none())
        .map(|d| crate::text::path(&d));
    Some(kept.collect())
}

/// Whether `path` is an executable file, as `execvp` runs one it finds on `$PATH` (one `stat`;
/// the judge's lookup for programs run by name with no box).
fn executable(path: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// [`home_sight`] of a spec. git's and cargo's configs are left out: the box shows copies of
/// them without their tokens (`sandbox::copies`), and without a box a command reads the files.
fn home_sight_of(
    spec: &sandbox::BoxSpec,
    real_home: Option<&Path>,
    cargo_home: Option<&Path>,
    cwd: &Path,
) -> HomeSight {
    use sandbox::copies::{Copied, copied};
    let home = &spec.home;
    let cargo_home = cargo_home.map_or_else(|| home.join(".cargo"), Path::to_path_buf);
    let filtered = |p: &Path| matches!(copied(p, home, &cargo_home), Some(Copied::GitConfig | Copied::CargoConfig));
    let shown = spec.write.iter().chain(&spec.visible).chain(&spec.caches).map(|r| &r.path);
    HomeSight {
        cwd: crate::text::path(cwd),
        home: crate::text::path(home),
        real_home: real_home.map(crate::text::path),
        shown: shown.filter(|p| p.starts_with(home) && !filtered(p)).map(|p| crate::text::path(p)).collect(),
        covered: spec.deny.iter().map(|d| crate::text::path(&d.path)).collect(),
        links: Some(real_path),
        device: Some(device),
        boxed_elsewhere: false,
        writable: spec.write.iter().map(|r| crate::text::path(&r.path)).collect(),
        work_tree: Some(work_tree),
        cd_path: Vec::new(),
        path: Vec::new(),
        program: None,
        secret_env: Vec::new(),
    }
}

/// The judge's way to tell whether a path is in a git work tree a box may write, for a command
/// with no box (`unboxed::WorkTreeLookup`): a `statx` of `.git` in each directory above it that
/// could be a workspace (`dirs::workspace_holding`), or only in those below `clear` where none
/// is there. Only where such a command runs a program that may read what it runs from there,
/// for the paths its text names.
fn work_tree(path: &str, clear: Option<&str>) -> Option<String> {
    let home = crate::policy::dirs::home()?;
    if let Some(clear) = clear {
        let mut below = Path::new(path).ancestors().take_while(|a| *a != Path::new(clear));
        if !below.any(|a| std::fs::symlink_metadata(a.join(".git")).is_ok()) {
            return None;
        }
    }
    crate::policy::dirs::workspace_holding(Path::new(path), home).map(|root| crate::text::path(&root))
}

/// The judge's way to tell a device that holds anyone's data by a name outside `/dev`, for a
/// command with no box (`unboxed::DeviceLookup`, rt7 B3): one `stat`, following links, of each
/// path its text names. A block device, or a character device but the kernel's memory
/// devices that hold nothing (`null`, `zero`, `full`, `random`, `urandom`: major 1) and the
/// controlling terminal (`tty`, 5:0).
fn device(path: &str) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(meta) = std::fs::metadata(path) else { return false };
    let (kind, rdev) = (meta.file_type(), meta.rdev());
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let harmless = (major == 1 && [3, 5, 7, 8, 9].contains(&minor)) || (major, minor) == (5, 0);
    kind.is_block_device() || (kind.is_char_device() && !harmless)
}

/// The judge's way to look up the symbolic links on a path's way, for a command with no box
/// (`unboxed::LinkLookup`): the real path of its longest existing prefix, the rest put back.
/// One `realpath` per prefix tried; only for the paths such a command's text names.
fn real_path(path: &str) -> Option<String> {
    let mut prefix = Path::new(path);
    loop {
        if let Ok(real) = std::fs::canonicalize(prefix) {
            let rest = Path::new(path).strip_prefix(prefix).ok()?;
            let resolved = crate::text::path(&real.join(rest));
            return (resolved != path).then_some(resolved);
        }
        prefix = prefix.parent()?;
    }
}

/// How the reason for no box where a command starts begins (`sandbox_for`, and `run`'s note).
const STARTS_IN: &str = "the command starts in ";

/// The box as the audit record names it: where the command runs, and for the box its roots
/// (the text the judge's view holds, `BoxPlan::roots`), Landlock ABI and network.
fn box_line(verdict: &Verdict, boxed: &Confinement) -> audit::BoxLine {
    match (verdict.runs_in, boxed) {
        (RunsIn::Sandbox, Confinement::Boxed(plan)) => {
            let roots = plan.roots();
            audit::BoxLine {
                runs_in: "sandbox".into(),
                why: None,
                abi: sandbox::landlock_abi(),
                network: Some(plan.network().as_str().into()),
                writable: audit::Roots::first(roots.writable.clone(), roots.write_len),
                read_only: roots.read_only.clone(),
            }
        }
        _ => audit::BoxLine {
            runs_in: "unconfined".into(),
            why: Some(verdict.runs_in_why.clone()),
            ..audit::BoxLine::default()
        },
    }
}

/// agentsh's own directories: config, data, state, cache, runtime and the approval queue.
fn own_dirs() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = crate::policy::dirs::project() {
        out.extend([d.config_dir(), d.data_dir(), d.data_local_dir(), d.cache_dir()].map(Path::to_path_buf));
        out.extend(d.state_dir().map(Path::to_path_buf));
        out.extend(d.runtime_dir().map(Path::to_path_buf));
    }
    out.extend(crate::ask::queue::path());
    // Byte-wise: `Path`'s order parses components.
    out.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    out.dedup();
    out
}

/// What the judge knows of the box (`judge::containment`): its roots shared with the audit
/// record (`box_line`).
fn box_view(plan: &sandbox::BoxPlan, cwd: &Path) -> BoxView {
    let roots = plan.roots();
    let in_workspace = |p: &Path| roots.workspace.as_deref().is_some_and(|w| p.starts_with(w));
    BoxView {
        cwd: crate::text::path(cwd),
        home: plan.home().as_deref().map(crate::text::path).unwrap_or_default(),
        writable: roots.writable.clone(),
        read_only: roots.read_only.clone(),
        // Through the proxy, the network is in the box: the proxy asks about a new host.
        network: plan.network() != sandbox::Network::Off,
        python_env_inside: std::env::var_os("VIRTUAL_ENV").is_some_and(|v| in_workspace(Path::new(&v))),
    }
}

/// What the command itself tells the judge about Python environments (issue 29, item 4): one
/// inside the box that the text activates (`source .venv/bin/activate && pip install x`), or
/// that the `pip` on PATH belongs to. Looked at only when the text names pip. A wrong yes only
/// lets pip try inside the box, where writes outside it fail.
pub fn python_env_of(mut judged: Sandbox, text: &str) -> Sandbox {
    if let Sandbox::On(view) = &mut judged
        && !view.python_env_inside
        && text.contains("pip")
    {
        let on_path = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("pip"))
                .find(|p| p.is_file())
                .or_else(|| std::env::split_paths(&path).map(|d| d.join("pip3")).find(|p| p.is_file()))
        });
        view.python_env_inside = crate::judge::containment::activates_python_env(text, view)
            || on_path.is_some_and(|p| {
                p.is_absolute() && crate::judge::containment::writable_in(view, &crate::text::path(&p))
            });
    }
    judged
}

/// `--ask` or `AGENTSH_ASK=1`: the agent asks for a person. It can only tighten the policy.
pub fn ask_requested(flag: bool) -> bool {
    flag || env_flag("AGENTSH_ASK")
}

/// Decides whether a judged command may run: records the decision in the audit log (before
/// anything runs), waits out a pause, and asks the person when needed, or with `refusing` (a
/// terminal an agent types into: `check --prompt --refuse`) refuses instead. `Ok` means run it.
/// Shared by the gate and by the interactive shells' line gate (`check --prompt`).
pub(crate) fn admit(
    verdict: &Verdict,
    config: &Config,
    cwd: &Path,
    sandbox: audit::BoxLine,
    refusing: Option<&str>,
) -> Result<audit::Trail, i32> {
    // Every decision is recorded before anything runs (see `audit`).
    let mut trail = audit::Trail::new(config, cwd);
    trail.set_sandbox(sandbox);
    // The person paused the agent: whatever could run waits for `agentsh resume` (or is refused).
    let held = match verdict.decision {
        Decision::Deny => None,
        _ => crate::ask::approval::while_paused(|| prompt_request(verdict, config, cwd)),
    };
    match verdict.decision {
        Decision::Deny => {
            let _ = trail.record(verdict, &audit::Outcome::Denied, None, &[]);
            explain::print_denial(verdict);
            return Err(REFUSED);
        }
        _ if held.is_some() => {
            let answer = held.unwrap_or(Answer::TakenOver);
            trail.record(verdict, &audit::Outcome::of(&answer), None, &[])?;
            act_on_answer(answer, verdict, cwd)?;
        }
        Decision::Allow => {
            trail.record(verdict, &audit::Outcome::Allowed, None, &[])?;
        }
        Decision::Ask if let Some(why) = refusing => {
            let answer = Answer::NoTerminal(why.to_string());
            trail.record(verdict, &audit::Outcome::of(&answer), None, &[])?;
            act_on_answer(answer, verdict, cwd)?;
        }
        Decision::Ask if granted(verdict, cwd, &trail)? => {}
        Decision::Ask => {
            let asked = Instant::now();
            let answer = approve(verdict, config, cwd);
            let answered_in = asked.elapsed();
            let offered = always_entries(&verdict.blocking_parts().collect::<Vec<_>>());
            trail.record(verdict, &audit::Outcome::of(&answer), Some(answered_in), &offered)?;
            act_on_answer(answer, verdict, cwd)?;
        }
    }
    Ok(trail)
}

/// What the command is told in [`crate::model::GATED`]: exactly an agent's hook command, from
/// a gate not itself inside a gated command, is [`crate::model::GATED_HOOK`] (the hook then
/// checks that its agent is Gemini CLI, the one agent whose own hook commands reach agentsh bare);
/// anything else is [`crate::model::GATED_COMMAND`], and a hook it starts, however spelled or
/// wrapped, is the model's and never stands for the agent's dialog (rt8 C1). `None` (what
/// agentsh has is kept): an agent's own start-up script, fixed text with nothing of the model's
/// in it, whose environment the agent may take for its own (Claude Code runs `bash -c env`).
fn gated(text: &str, verdict: &Verdict) -> Option<&'static str> {
    let startup = verdict.parts.iter().all(|p| p.assessment.rule == "agent_startup")
        && crate::judge::startup::recognize(text, &crate::run::judging::wrapper_env()).is_some();
    if startup {
        return None;
    }
    let inside_a_gated_command = std::env::var_os(crate::model::GATED).is_some();
    let hook = crate::judge::agent_wrappers::hook_call(text, &crate::run::judging::is_agentsh).is_some();
    Some(if hook && !inside_a_gated_command { crate::model::GATED_HOOK } else { crate::model::GATED_COMMAND })
}

/// Issue 24: the person already said yes to this very command, in the agent's own dialog or in
/// agentsh's channel for the agent's hook, and the hook left a single-use grant for it
/// (`ask::grant`). Taken, the command runs without a second question and the record says where
/// the yes was given. `Ok(false)`: no grant, ask as usual.
fn granted(verdict: &Verdict, cwd: &Path, trail: &audit::Trail) -> Result<bool, i32> {
    let Some(place) = crate::ask::grant::take(&verdict.command, cwd) else { return Ok(false) };
    trail.record(verdict, &audit::Outcome::Granted(place), None, &[])?;
    Ok(true)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false" | "no"))
}

/// Stdin scripts become text; a terminal on stdin is a mistake, not a script.
fn read_source(source: Source) -> Result<Source, i32> {
    if source != Source::Stdin {
        return Ok(source);
    }
    if nix::unistd::isatty(std::io::stdin()).unwrap_or(false) {
        eprintln!("agentsh: no command given, and agentsh is not an interactive shell");
        eprintln!("hint: run `agentsh -c 'COMMAND'`, or see `agentsh --help`");
        return Err(USAGE);
    }
    let mut text = String::new();
    let limit = parse::MAX_INPUT_BYTES as u64 + 1;
    if let Err(e) = std::io::stdin().take(limit).read_to_string(&mut text) {
        eprintln!("agentsh: cannot read the script from standard input: {e}");
        return Err(REFUSED);
    }
    Ok(Source::Text { text, argv0: None, args: Vec::new() })
}

/// The script operand (`agentsh SCRIPT`): a regular file, read without blocking and only up
/// to the judge's limit plus one byte, as standard input is: a longer script is then refused by
/// the judge as too large. `agentsh /dev/zero` ran out of memory and a FIFO hung (issue 27).
fn read_script(path: &str) -> Result<String, i32> {
    let shown = crate::text::sanitize::sanitize(path);
    let limit = parse::MAX_INPUT_BYTES as u64 + 1;
    let read = crate::policy::files::open(Path::new(path), crate::policy::files::Links::Follow)
        .and_then(|script| script.read_prefix(limit));
    let bytes = match read {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("agentsh: {shown}: No such file or directory");
            return Err(127);
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("agentsh: {shown}: {e}");
            eprintln!(
                "hint: nothing ran. agentsh reads a script only from a regular file; give it on standard input \
                 (`... | agentsh`), or as text (`agentsh -c '...'`)"
            );
            return Err(REFUSED);
        }
        Err(e) => {
            eprintln!("agentsh: {shown}: {e}");
            return Err(REFUSED);
        }
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(first) = text.lines().next().and_then(|l| l.strip_prefix("#!")) {
        let interpreter =
            first.split_whitespace().map(crate::judge::assess::basename).find(|w| *w != "env").unwrap_or("");
        if !matches!(interpreter, "sh" | "bash" | "dash" | "zsh" | "ksh") {
            // Judge what will really run: the interpreter with the file, not shell text.
            return Ok(format!(
                "{} {}",
                shlex::try_quote(interpreter).unwrap_or_default(),
                shlex::try_quote(path).unwrap_or_default()
            ));
        }
    }
    Ok(text)
}

/// Asks the person, on the terminal or in the approval queue. Never reads stdin, arguments or
/// environment for the answer.
pub(crate) fn approve(verdict: &Verdict, config: &Config, cwd: &Path) -> Answer {
    match prompt_request(verdict, config, cwd) {
        Ok(req) => crate::ask::approval::ask(&req, config.approval_queue),
        Err(answer) => answer,
    }
}

/// What the person is shown about a verdict.
fn prompt_request(verdict: &Verdict, config: &Config, cwd: &Path) -> Result<PromptRequest, Answer> {
    let asking: Vec<&Part> = verdict.blocking_parts().collect();
    let code = match prompt::random_code() {
        Ok(c) => c,
        Err(e) => return Err(Answer::NoTerminal(format!("cannot make an approval code: {e}"))),
    };
    let notice = crate::ask::tty::tiocsti_notice();
    let req = PromptRequest {
        command: verdict.command.clone(),
        cwd: cwd.display().to_string(),
        risk: verdict.risk,
        category: verdict.category,
        reasons: verdict.reasons.clone(),
        parts: if asking.len() > 1 || verdict.parts.len() > 1 {
            asking
                .iter()
                .map(|p| PartSummary {
                    text: p.assessment.text(),
                    risk: p.assessment.risk,
                    reasons: p.assessment.reasons.clone(),
                })
                .collect()
        } else {
            Vec::new()
        },
        always_entries: always_entries(&asking),
        timeout: Duration::from_secs(config.confirmation_timeout),
        code,
        notice,
        sandbox: approval_runs(verdict),
        always_where: crate::policy::whitelist::Destination::for_cwd(cwd).map(|d| d.describe()),
        confirming: false,
    };
    Ok(req)
}

/// Where a person's yes runs the command, in the prompt's words.
pub(crate) fn approval_runs(verdict: &Verdict) -> String {
    match verdict.runs_in {
        RunsIn::Sandbox => "if approved, in the sandbox (it can write only inside the workspace)".to_string(),
        RunsIn::Unconfined => {
            // `runs_in_why` is "outside the sandbox, <when>: it <why>" (or "no sandbox: <why>").
            let why = verdict.runs_in_why.split_once(": ").map_or(verdict.runs_in_why.as_str(), |(_, w)| w);
            format!("if approved, OUTSIDE the sandbox: {why}")
        }
    }
}

/// After the person's own no: not "ask the person to approve it", which they just declined.
const REJECTED_HINT: &str = "nothing ran. The person rejected it: do not run it again as it is; ask them in your \
     reply what they want instead, or do the task another way";

/// Turns the person's answer into "run" or a refusal; records "always" in the whitelist.
pub(crate) fn act_on_answer(answer: Answer, verdict: &Verdict, cwd: &Path) -> Result<(), i32> {
    match answer {
        Answer::Once => Ok(()),
        Answer::Always(entry) => {
            // Where it takes effect: an untrusted project file's whitelist would be ignored.
            let Some(dest) = crate::policy::whitelist::Destination::for_cwd(cwd) else {
                eprintln!("agentsh: warning: no config directory to save the whitelist entry in; allowed once");
                return Ok(());
            };
            match dest.add(&entry) {
                Ok(_) => eprintln!(
                    "agentsh: added `{}` to the whitelist in {}",
                    crate::text::sanitize::sanitize(&entry),
                    crate::text::sanitize::sanitize(&dest.describe())
                ),
                // The person approved this run; only remembering failed.
                Err(e) => eprintln!("agentsh: warning: could not save the whitelist entry: {e:#}"),
            }
            Ok(())
        }
        Answer::Rejected => Err(explain::print_not_approved(
            verdict,
            "rejected",
            "rejected by the person at the terminal",
            Some(REJECTED_HINT),
        )),
        Answer::TimedOut => Err(explain::print_not_approved(
            verdict,
            "timed out",
            "timed out: no one answered",
            Some(
                "nothing ran. No one answered in time: the person may be away; ask them in your reply before \
                 running it again, or do the task another way",
            ),
        )),
        Answer::NoTerminal(why) => {
            // A whitelist entry lifts only risk-based asks; say what would really help.
            let liftable = verdict.blocking_parts().all(|p| {
                matches!(p.decided_by, DecidedBy::Risk | DecidedBy::RequireConfirmation | DecidedBy::Level(_))
            });
            let no_box = verdict.blocking_parts().any(|p| p.decided_by == DecidedBy::NoBox);
            let hint = if liftable {
                "approval needs a person: at their own terminal, or in `agentsh approvals` open in another \
                 terminal; to let this command run without asking, the person can run `agentsh whitelist add '<command>'` in their own shell"
            } else if no_box {
                "approval needs a person: at their own terminal, or in `agentsh approvals` open in another \
                 terminal; a whitelist entry cannot lift this ask (it reads or runs what the sandbox would have \
                 kept from it, and here there is no sandbox): run commands from a project, where there is one"
            } else {
                "approval needs a person at their own terminal; a whitelist entry cannot lift this ask \
                 (it comes from --ask, an ask rule or a config file that cannot be read): run it \
                 where a person can answer, or change that setting (see `agentsh policy`)"
            };
            Err(explain::print_not_run(
                verdict,
                "Error: Command was not run: no one was there to approve it.",
                &format!("no one to ask: {why}"),
                Some(hint),
            ))
        }
        Answer::Denied(message) => {
            let hint =
                message.map(|m| format!("nothing ran. The person says: {}", crate::text::sanitize::sanitize(&m)));
            Err(explain::print_not_approved(
                verdict,
                "rejected",
                "rejected by the person in `agentsh approvals`",
                Some(hint.as_deref().unwrap_or(REJECTED_HINT)),
            ))
        }
        Answer::WrongCode => Err(explain::print_not_approved(
            verdict,
            "wrong approval code",
            &format!("{} ({} tries)", crate::ask::prompt::WRONG_CODE, crate::ask::prompt::CODE_TRIES),
            Some("nothing ran. The person did not approve it: ask them to try again, or do the task another way"),
        )),
        Answer::TakenOver => Err(explain::print_not_run(
            verdict,
            "Error: Command was not run: the person has taken over.",
            "the person has taken over (agentsh pause --deny)",
            Some("nothing ran. Wait until the person runs `agentsh resume`; do not retry the command until then"),
        )),
        Answer::Interrupted(signal) => {
            let code = explain::print_not_approved(verdict, "interrupted", &format!("interrupted by {signal}"), None);
            if matches!(signal.as_str(), "SIGTERM" | "SIGHUP" | "SIGQUIT") {
                crate::ask::tty::reraise(&signal);
            }
            Err(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::decide::{self, Policy};
    use crate::policy::sandbox_settings::Sourced;

    /// rt4 R14: where the box cannot show the directory a command starts in, the judge is told
    /// what it would have shown of home, and asks before the command reads anything else there.
    #[test]
    fn with_no_box_the_judge_asks_for_what_the_box_would_have_hidden() {
        let mut settings = sandbox::Settings::default();
        settings.writable.push(Sourced { path: "~/.work/proj".into(), source: "t.json".into() });
        let place = sandbox::Place { cwd: "/tmp/x".into(), home: Some("/home/u".into()), ..Default::default() };
        let spec = sandbox::BoxSpec::build(&settings, &place, &[], Path::new("/records"), "n");
        assert!(spec.unboxed.is_some(), "no box in /tmp/x");
        let policy = Policy {
            sandbox: Sandbox::Off(
                "the command starts in /tmp/x, which the sandbox neither grants nor shows: ..".into(),
            ),
            home_sight: Some(home_sight_of(&spec, None, None, Path::new("/tmp/x"))),
            ..Policy::default()
        };
        let d = |t: &str| decide::judge(t, &policy).decision;
        // Not in the box's allow-list: start-up files, credentials of any tool.
        // git's and cargo's configs: the box shows copies without their tokens, not the files.
        for t in [
            "cat ~/.bashrc",
            "cat ~/.kaggle/kaggle.json",
            "cat ~/.config/rclone/rclone.conf",
            "ls ~/.ssh",
            "cat ~/.gitconfig",
            "cat ~/.cargo/config.toml",
            // rt5 B3: the box shows of home only what it names, not all but its dot-directories.
            "ls ~/projects",
        ] {
            assert_eq!(d(t), Decision::Ask, "{t}");
        }
        let v = decide::judge("cat ~/.kaggle/kaggle.json", &policy);
        assert!(
            v.reasons.iter().any(|r| r
                .contains("reads ~/.kaggle/kaggle.json, in ~/.kaggle, which the sandbox keeps hidden")
                && r.ends_with(
                    "without a sandbox (the command starts in /tmp/x, which the sandbox neither grants nor shows)"
                )),
            "{:?}",
            v.reasons
        );
        // What the box shows: harmless settings, toolchains, caches, what sandbox.writable names.
        for t in [
            "cat ~/.editorconfig ~/.config/git/ignore",
            "cat ~/.cargo/env",
            "ls ~/.cargo/bin ~/.nvm",
            "ls ~/.cache/pip",
            "cat ~/.work/proj/README.md",
            "ls",
        ] {
            assert_eq!(d(t), Decision::Allow, "{t}");
        }
        // A whitelist entry for the program does not lift it: it was written for a box.
        let listed = Policy { whitelist: [decide::Entry::new("cat", "t")].into_iter().flatten().collect(), ..policy };
        assert_eq!(decide::judge("cat ~/.bashrc", &listed).decision, Decision::Ask);
        // Without what the box would have shown (the box turned off, no Landlock), as before.
        let off = Policy { home_sight: None, ..listed };
        assert_eq!(decide::judge("cat ~/.bashrc", &off).decision, Decision::Allow);
    }
}
