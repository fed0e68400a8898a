//! Every message a person or agent reads about a decision: what was found, why it matters and
//! what to do. All text passes through `sanitize`. Writes to stderr only; stdout is the command's.

use crate::ask::tty::eprint_fitted;
use crate::judge::decide::{DecidedBy, Part, Runs, Verdict};
use crate::model::Decision;
use crate::text::sanitize::sanitize;
use std::fmt::Write;

pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprint_fitted(&format!("agentsh: warning: {}\n", sanitize(w)));
    }
}

fn part_line(p: &Part) -> String {
    let text = if p.assessment.argv.is_empty() { "(empty)".to_string() } else { p.assessment.text() };
    // Capped: an oversized command is one part holding all of it (issue 16 §7).
    let mut line = format!("  {} ({}, {})", sanitize(&one_line(&text)), p.assessment.risk, p.assessment.category);
    if !p.assessment.context.is_empty() {
        let _ = write!(line, " {}", sanitize(&p.assessment.context));
    }
    line
}

fn reasons_of(p: &Part) -> Vec<String> {
    crate::judge::decide::part_reasons(p)
}

/// The explanation of a verdict's blocking parts, one block per part.
pub fn describe_parts(verdict: &Verdict, out: &mut String) {
    for p in verdict.parts.iter().filter(|p| p.decision == verdict.decision) {
        let _ = writeln!(out, "{}", part_line(p));
        for r in reasons_of(p) {
            let _ = writeln!(out, "    - {}", sanitize(&r));
        }
    }
}

pub fn denial_hint(verdict: &Verdict) -> String {
    let blocking: Vec<&Part> = verdict.blocking_parts().collect();
    if blocking.is_empty() {
        // No part of the command was the problem (e.g. the audit log could not be written).
        return "nothing ran. The command itself is not the problem: fix what the reason names, then try again".into();
    }
    if blocking.iter().any(|p| matches!(p.decided_by, DecidedBy::Blacklist(_))) {
        return "nothing ran. The person can remove the entry from commandBlacklist in .agents/terminal.json or ~/.config/agentsh/config.json".into();
    }
    if let Some(DecidedBy::Rule(hit)) = blocking.iter().map(|p| &p.decided_by).find(|d| matches!(d, DecidedBy::Rule(_)))
    {
        return format!("nothing ran. A custom rule the person wrote denies it ({}); do the task another way", hit.at);
    }
    if let Some(DecidedBy::Level(hit)) =
        blocking.iter().map(|p| &p.decided_by).find(|d| matches!(d, DecidedBy::Level(_)))
    {
        return match hit.unblocked_at {
            Some(l) => format!(
                "nothing ran. At level {} this is not allowed; level {l} would allow it, and only the person can change `level` in the config",
                hit.level
            ),
            None => format!("nothing ran. No level allows `{}` commands; do the task another way", hit.row),
        };
    }
    forbidden_hint(&blocking).into()
}

/// The hint for a built-in forbidden rule: one that fits the rule that denied (issue 16 §7:
/// every refusal once ended with an `rm -rf ./build` example, nudging agents towards `rm`).
fn forbidden_hint(blocking: &[&Part]) -> &'static str {
    let first = blocking[0];
    let a = &first.assessment;
    let says = |w: &str| a.reasons.iter().any(|r| r.contains(w));
    if a.rule == "parse" && says("-byte limit") {
        return "nothing ran. Text this long is not judged; write it to a script file with your file tools and run that file (`bash FILE`), or split it into smaller commands";
    }
    if a.rule == "parse" {
        return "nothing ran. agentsh could not read this text as bash; simplify it, or write it to a script file and run that file";
    }
    if a.rule == "raw-text" {
        return "nothing ran. The shell and agentsh's parser read this text differently, and a shell's reading runs a forbidden command; write what you mean so that it reads one way (quotes closed inside ${..}, a here-document's terminator on a line of its own)";
    }
    if says("fork bomb") {
        return "nothing ran. A function that calls itself in the background exhausts the machine; do the task another way";
    }
    if a.rule == "agentsh" || says("agentsh") {
        return "nothing ran. Only the person changes agentsh's policy, whitelist, log or answers, from their own shell; ask them in your reply if it is needed";
    }
    if says("disk") || says("device") {
        return "nothing ran. Writing onto a disk device is never allowed; write to a file in the project instead";
    }
    if a.rule == "rm" {
        return "nothing ran. Deleting the root, a home or a system directory is never allowed; delete the specific directory you mean (for example: rm -rf ./build)";
    }
    "nothing ran. Forbidden commands cannot be allowed by any setting; do the task another way"
}

pub fn print_denial(verdict: &Verdict) {
    let mut msg = format!("agentsh: denied: {}\n", sanitize(&one_line(&verdict.command)));
    describe_parts(verdict, &mut msg);
    let _ = writeln!(msg, "hint: {}", denial_hint(verdict));
    eprint_fitted(&msg);
}

/// Prints the refusal for an ask that did not end in approval; returns the exit status. `what`
/// says which way (`rejected`, `timed out`): agentsh knows, so the first line says it (issue 29,
/// item 6: it once read "rejected or timed out" for both).
pub fn print_not_approved(verdict: &Verdict, what: &str, why: &str, hint: Option<&str>) -> i32 {
    print_not_run(verdict, &format!("Error: Command was not approved ({what})."), why, hint)
}

/// As [`print_not_approved`], under another first line: the spec's fixed one is for a
/// rejection or a timeout, not for "no one to ask" or a person who has taken over.
pub fn print_not_run(verdict: &Verdict, header: &str, why: &str, hint: Option<&str>) -> i32 {
    let mut msg = format!("{header}\n");
    let _ = writeln!(msg, "agentsh: not approved: {}: {}", sanitize(why), sanitize(&one_line(&verdict.command)));
    describe_parts(verdict, &mut msg);
    let hint = hint.unwrap_or("nothing ran. Ask the person to approve it, or do the task another way");
    let _ = writeln!(msg, "hint: {hint}");
    eprint_fitted(&msg);
    crate::model::exit::REFUSED
}

/// The human-readable `agentsh check` output.
pub fn check_report(verdict: &Verdict) -> String {
    let mut out = String::new();
    let what = match verdict.decision {
        Decision::Allow => "allow: runs without asking",
        Decision::Ask => "ask: runs only if a person approves",
        Decision::Deny => "deny: never runs",
    };
    let _ = writeln!(out, "{what}");
    let _ = writeln!(out, "command: {}", sanitize(&one_line(&verdict.command)));
    if let Some(h) = &verdict.harness {
        let _ = writeln!(out, "harness: {}", sanitize(h));
    }
    let _ = writeln!(out, "risk: {} ({})", verdict.risk, verdict.category);
    if verdict.decision != Decision::Deny {
        let _ = writeln!(out, "runs: {}", sanitize(&verdict.runs_in_why));
    }
    for p in &verdict.parts {
        let outside = p.edge.as_ref().is_some_and(|e| e.kind.runs_outside());
        let place = match (p.decision, p.runs) {
            (Decision::Deny, _) | (_, Runs::Unconfined) => "",
            (_, Runs::Sandbox) => ", runs in the sandbox",
            // Allowed by the person's list or rule: it does not wait for anyone (issue 29, item 3:
            // "allow, needs a person" contradicted itself).
            (Decision::Allow, Runs::NeedsPerson) if outside => ", runs outside the sandbox on the person's word",
            (Decision::Allow, Runs::NeedsPerson) => ", runs in the sandbox on the person's word",
            (_, Runs::NeedsPerson) => ", needs a person",
        };
        let _ = writeln!(out, "{} -> {}{place}", part_line(p), p.decision);
        for r in reasons_of(p) {
            let _ = writeln!(out, "    - {}", sanitize(&r));
        }
        // What the entry that allowed it lets through beyond its words.
        if let DecidedBy::Whitelist(entry) = &p.decided_by
            && let Some(w) = crate::policy::whitelist::entry_warning(entry)
        {
            let _ = writeln!(out, "    - {}", sanitize(&w));
        }
    }
    if verdict.decision == Decision::Deny {
        let _ = writeln!(out, "hint: {}", denial_hint(verdict));
    }
    out
}

/// Commands can span lines; refusals show them on one.
fn one_line(text: &str) -> String {
    const MAX: usize = 300;
    let flat = text.trim().replace('\n', "\\n");
    if flat.chars().count() > MAX {
        let cut: String = flat.chars().take(MAX).collect();
        format!("{cut}… ({} more characters)", flat.chars().count() - MAX)
    } else {
        flat
    }
}

/// After a boxed command failed: the paths it named that the box hides or covers, which most
/// likely made it fail, in words the model and the person act on (issue 29, item 5), instead of a
/// bare `Permission denied` that sends an agent reaching for `sudo` or `chmod`.
pub fn print_box_refusal(paths: &[(String, String)]) {
    use crate::text::sanitize::sanitize;
    for (path, why) in paths {
        crate::ask::tty::eprint_fitted(&format!(
            "agentsh: the sandbox kept this command from {}: {}\n",
            sanitize(path),
            sanitize(why)
        ));
    }
    let hint = if paths
        .iter()
        .any(|(_, why)| why.contains("hidden") || why.contains("home") || why.contains("of its own"))
    {
        "hint: if the command needs it, ask the person to run it outside the sandbox (they approve it), or to add the \
         path to sandbox.readable in ~/.config/agentsh/config.json; do not try sudo or chmod\n"
    } else {
        "hint: if the command needs it, ask the person to run it outside the sandbox (they approve it); do not try \
         sudo or chmod\n"
    };
    crate::ask::tty::eprint_fitted(hint);
}

/// The links agentsh removed from the workspace's git directory after a boxed command
/// (`sandbox::gitlinks`), in one line: the person's git would have written through them.
pub fn print_git_links_removed(removed: &[String]) {
    if removed.is_empty() {
        return;
    }
    let list: Vec<String> = removed.iter().map(|r| crate::text::sanitize::sanitize(r)).collect();
    crate::ask::tty::eprint_fitted(&format!(
        "agentsh: removed {} made in the sandbox in the git directory (git follows a link there, so the \
         person's next git command would have written the file it names): {}\n",
        if removed.len() == 1 { "a link" } else { "links" },
        list.join(", ")
    ));
}

/// What a boxed command did that hides its edits from the person's git review
/// (`sandbox::gitreview`), one line each, with how to undo it.
pub fn print_git_review_hidden(found: &[crate::run::sandbox::gitreview::Hidden]) {
    use crate::run::sandbox::gitreview::Hidden;
    use crate::text::sanitize::sanitize;
    for h in found {
        let line = match h {
            Hidden::Bit { path, skip_worktree } => {
                let (bit, flag) = if *skip_worktree {
                    ("skip-worktree", "skip-worktree")
                } else {
                    ("assume-unchanged", "assume-unchanged")
                };
                let path = sanitize(path);
                format!(
                    "agentsh: the command set git's {bit} bit on {path}: `git status` and `git diff` no longer show its \
                     changes (undo: git update-index --no-{flag} -- {path})\n"
                )
            }
            Hidden::Replaced(name) => {
                let name = sanitize(name);
                let object = name.strip_prefix("refs/replace/").unwrap_or(&name).to_string();
                format!(
                    "agentsh: the command made the replacement {name}: `git show` and `git log -p` show another object \
                     in its place (undo: git replace -d {object})\n"
                )
            }
            Hidden::Stale(path) => format!(
                "agentsh: the command left git's index naming other content for {} than the file holds, with the \
                 file's own size and times, so git does not read it: `git status` and `git diff` do not show its \
                 changes (see them: git read-tree HEAD && git status)\n",
                sanitize(path)
            ),
            Hidden::Ahead(path) => format!(
                "agentsh: the command left git's index entry for {} with a change time later than the clock: git \
                 would take a later edit of the file for none and not show it (see it: git read-tree HEAD && git \
                 status)\n",
                sanitize(path)
            ),
            Hidden::SubmodulesUnchecked(n) => format!(
                "agentsh: the command changed the index of {n} submodule{} or linked worktree{} past the {} agentsh \
                 checks (check in each: git read-tree HEAD && git status)\n",
                if *n == 1 { "" } else { "s" },
                if *n == 1 { "" } else { "s" },
                crate::run::sandbox::gitreview::MAX_SUBMODULES,
            ),
            Hidden::BranchMoved { branch, worktree, from, to } => {
                let (branch, worktree) = (sanitize(branch), sanitize(worktree));
                let (from, to) = (sanitize(from), sanitize(to));
                let see = if from.starts_with('(') {
                    format!("see: git -C {worktree} log -p {to}")
                } else {
                    format!("see: git -C {worktree} diff {from} {to}; undo: git -C {worktree} reset {from}")
                };
                format!(
                    "agentsh: the command moved the branch {branch}, which the worktree {worktree} has checked out \
                     (git refuses to), from {from} to {to}: git there shows what it changed as done, and the next \
                     commit there carries it ({see})\n"
                )
            }
            Hidden::HeadChanged { worktree, from, to } => format!(
                "agentsh: the command changed what the worktree {} has checked out (its HEAD in the git directory), \
                 from {} to {}: git there compares its files and its next commit with that\n",
                sanitize(worktree),
                sanitize(from),
                sanitize(to),
            ),
            Hidden::IndexCache { fsmonitor, repo, hides } => {
                let c = if repo == "." { String::new() } else { format!("-C {} ", sanitize(repo)) };
                let of = if repo == "." { String::new() } else { format!(" of {}", sanitize(repo)) };
                let (what, trusted, off) = if *fsmonitor {
                    ("fsmonitor's data", "which files changed", "no-fsmonitor")
                } else {
                    ("the untracked cache", "a directory's list of new files", "no-untracked-cache")
                };
                let see = format!("see them: git {c}update-index --{off} && git {c}status");
                match hides {
                    Some(path) => format!(
                        "agentsh: the command left git's untracked cache in the index{of} without {}, which git does \
                         not ignore: `git status` trusts the cache's list of new files while the directory's times \
                         match, and does not show it ({see})\n",
                        sanitize(path)
                    ),
                    None => format!(
                        "agentsh: the command added or changed {what} in git's index{of}: `git status` trusts it for \
                         {trusted} instead of reading them, so a file the command made may not show ({see})\n"
                    ),
                }
            }
            Hidden::Unchecked(n) => format!(
                "agentsh: the command changed git's index; {n} file{} in it {} too large to check against what the \
                 index says {} (check: git read-tree HEAD && git status)\n",
                if *n == 1 { "" } else { "s" },
                if *n == 1 { "was" } else { "were" },
                if *n == 1 { "it holds" } else { "they hold" },
            ),
            Hidden::Split => "agentsh: the command changed git's index, which is split in two (git update-index \
                 --split-index): agentsh does not check what its shared part names for each file (check: git read-tree \
                 HEAD && git status)\n"
                .to_string(),
            Hidden::Unreadable => "agentsh: the command left git's index in a form agentsh does not read (or over \
                 64 MiB), so it did not check what the index says of each file (check: git read-tree HEAD && git status)\n"
                .to_string(),
            Hidden::SelfIgnored(dir) => format!(
                "agentsh: the command made a .gitignore in {} that ignores itself: `git status` does not show that \
                 directory's new files (see them: git status --ignored)\n",
                sanitize(dir)
            ),
            Hidden::IgnoresUnchecked => "agentsh: the command changed more of the workspace than agentsh reads for \
                 .gitignore files that hide themselves (check: git status --ignored)\n"
                .to_string(),
            Hidden::GitDirMade { path, worktree: false } => format!(
                "agentsh: the command made {}, where git keeps a submodule's git directory: your \
                 `git submodule update --init` would adopt it and run its hooks (undo: rm -rf {0})\n",
                sanitize(path)
            ),
            Hidden::GitDirMade { path, worktree: true } => format!(
                "agentsh: the command made the linked worktree's git directory {}, not as `git worktree add` makes it \
                 (its commondir names another repository, or it has a config.worktree): git run in the worktree \
                 that names it runs that repository's hooks and settings (see: cat {0}/commondir; undo: rm -rf {0} \
                 && git worktree prune)\n",
                sanitize(path)
            ),
            Hidden::NestedRepository(dir) => {
                let dir = sanitize(dir);
                format!(
                    "agentsh: the command made or changed {dir}/.git, which `git status` never shows: git run in {dir} \
                     (a git-aware prompt on cd) takes it for a repository of its own and runs the programs its config \
                     and hooks name, such as core.fsmonitor (remove it unless you asked for a repository there: \
                     rm -rf -- {dir}/.git)\n"
                )
            }
        };
        crate::ask::tty::eprint_fitted(&line);
    }
}

/// What the box's proxy refused the command (`proxy::refusals`): host and port, and why, with
/// what the person can do about it.
pub fn print_network_refusals(notes: &[(String, String)]) {
    use crate::run::sandbox::proxy::CREDENTIALS_FAILED;
    use crate::text::sanitize::sanitize;
    let (failed, refused): (Vec<_>, Vec<_>) = notes.iter().partition(|(_, why)| why.starts_with(CREDENTIALS_FAILED));
    for (host, why) in &failed {
        crate::ask::tty::eprint_fitted(&format!(
            "agentsh: the connection to {} that carries sandbox.credentials ended: {}\n",
            sanitize(host),
            sanitize(&why[CREDENTIALS_FAILED.len()..])
        ));
    }
    if !failed.is_empty() {
        crate::ask::tty::eprint_fitted(
            "hint: agentsh adds credentials over HTTPS only, where it checks the host's certificate against the system's \
             roots and relays HTTP/1.1 only (README, \"Network\"); a tool that pins certificates or ignores \
             SSL_CERT_FILE cannot use it\n",
        );
    }
    for (host, why) in &refused {
        crate::ask::tty::eprint_fitted(&format!(
            "agentsh: the sandbox's network refused {}: {}\n",
            sanitize(host),
            sanitize(why)
        ));
    }
    if refused.is_empty() {
        return;
    }
    crate::ask::tty::eprint_fitted(
        "hint: the sandbox reaches package registries, the project's git remotes and sandbox.allowHosts; if the \
         command needs this host, ask the person to allow it when agentsh asks (`agentsh approvals`), or to add it to \
         sandbox.allowHosts in ~/.config/agentsh/config.json\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::decide::{Policy, judge};

    fn hint(text: &str) -> String {
        let v = judge(text, &Policy::default());
        assert_eq!(v.decision, Decision::Deny, "{text}");
        denial_hint(&v)
    }

    /// Issue 16 §7: each forbidden refusal's hint fits its rule; only `rm` is told about `rm`.
    #[test]
    fn every_forbidden_hint_fits_its_rule() {
        assert!(hint("rm -rf /").contains("rm -rf ./build"));
        for (text, wanted) in [
            ("dd if=/dev/zero of=/dev/sda", "disk device"),
            (":(){ :|:& };:", "calls itself"),
            ("agentsh whitelist add 'rm -rf /'", "Only the person"),
            // Issue 28: found by the raw text's second reading, not the parser's.
            ("x=$(cat <<EOF\nhi\nEOF)\nrm -rf ~\nEOF\n)", "reads one way"),
        ] {
            let h = hint(text);
            assert!(h.contains(wanted) && !h.contains("rm -rf"), "{text}: {h}");
        }
    }

    /// Oversized input: its real size, a script-file hint, and not the whole text echoed back.
    #[test]
    fn oversized_input_is_told_its_size_and_not_echoed() {
        let text = format!("echo {}", "a".repeat(100_000));
        let v = judge(&text, &Policy::default());
        let h = denial_hint(&v);
        assert!(h.contains("script file") && !h.contains("rm -rf"), "{h}");
        let mut out = String::new();
        describe_parts(&v, &mut out);
        assert!(out.contains("100005 bytes"), "{out}");
        assert!(out.len() < 2_000, "{} bytes echoed", out.len());
    }
}
