//! The man pages, from the clap definition (issue 29, item 11). clap_mangen draws NAME, SYNOPSIS,
//! OPTIONS and SUBCOMMANDS; this module fixes what it gets wrong for agentsh and turns each
//! command's after-help into man sections:
//!
//! - `man agentsh` gets its own SYNOPSIS (clap_mangen writes a short-only flag as `[-c  ]`) and
//!   DESCRIPTION (clap_mangen repeats NAME's line), and the sections of [`MAN_SECTIONS`]
//!   (SANDBOX, CONFIGURATION, FILES, ENVIRONMENT, EXAMPLES, EXIT STATUS) in place of the
//!   after-help, which is for `--help` (it says "See `man agentsh`").
//! - a subcommand's after-help paragraphs become EXAMPLES, EXIT STATUS or NOTES, never "EXTRA";
//!   a DESCRIPTION that only repeats NAME is left out.
//!
//! `tests/generated.rs` renders each page with clap_mangen, finishes it with [`finish`], writes
//! man/ and fails when it is stale.

/// A page clap_mangen rendered for the command named `name` (`agentsh`, `agentsh-check`, ...),
/// finished: `about` and `after` are the command's about line and after-help. clap_mangen is a
/// development dependency (`tests/generated.rs` renders with it), so the binary carries none of it.
pub fn finish(name: &str, roff: &str, about: &str, after: &str) -> String {
    if name == "agentsh" { top_page(roff) } else { sub_page(roff, about, after) }
}

/// The page's sections: the text before the first `.SH`, then each `.SH` with its body.
fn sections(roff: &str) -> (String, Vec<(String, String)>) {
    let mut head = String::new();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in roff.split_inclusive('\n') {
        if let Some(title) = line.strip_prefix(".SH ") {
            out.push((title.trim().trim_matches('"').to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
        } else {
            head.push_str(line);
        }
    }
    (head, out)
}

fn join(head: String, sections: Vec<(String, String)>) -> String {
    let mut out = head;
    for (title, body) in sections {
        let title = if title.contains(' ') { format!("\"{title}\"") } else { title };
        out.push_str(&format!(".SH {title}\n{body}"));
    }
    out
}

fn top_page(roff: &str) -> String {
    let (head, all) = sections(roff);
    let mut out = Vec::new();
    for (title, body) in all {
        match title.as_str() {
            "SYNOPSIS" => out.push((title, SYNOPSIS.to_string())),
            "DESCRIPTION" => out.push((title, DESCRIPTION.to_string())),
            // The after-help is for `--help`; the man page has sections of its own.
            "EXTRA" => {}
            "VERSION" => {
                let (_, extra) = sections(MAN_SECTIONS);
                out.extend(extra);
                out.push((title, body));
            }
            _ => out.push((title, body)),
        }
    }
    join(head, out)
}

fn sub_page(roff: &str, about: &str, after: &str) -> String {
    let (head, all) = sections(roff);
    let mut out = Vec::new();
    for (title, body) in all {
        match title.as_str() {
            // Only NAME's line again: nothing to describe.
            "DESCRIPTION" if body.trim() == escape(about).trim() => {}
            "EXTRA" => out.extend(after_help_sections(after)),
            _ => out.push((title, body)),
        }
    }
    join(head, out)
}

/// A command's after-help as man sections: "Examples:" and "Exit status:" paragraphs become
/// their sections; any other paragraph is a note.
fn after_help_sections(after: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for para in after.split("\n\n").map(str::trim_end).filter(|p| !p.trim().is_empty()) {
        let (first, rest) = para.split_once('\n').unwrap_or((para, ""));
        let (title, body) = if let Some(inline) = first.strip_prefix("Exit status:") {
            ("EXIT STATUS", format!("{}\n{rest}", inline.trim()))
        } else if first.trim_end() == "Examples:" || first.trim_end() == "Example:" {
            ("EXAMPLES", rest.to_string())
        } else {
            ("NOTES", para.to_string())
        };
        let body = body.trim_end();
        let text = if title == "EXAMPLES" {
            format!(".nf\n{}\n.fi\n", escape(&dedent(body)))
        } else {
            format!("{}\n", escape(body.trim()))
        };
        match out.iter_mut().find(|(t, _)| t == title) {
            Some((_, b)) => {
                b.push_str(".PP\n");
                b.push_str(&text);
            }
            None => out.push((title.to_string(), text)),
        }
    }
    out
}

/// The lines of an example block without their common indent.
fn dedent(text: &str) -> String {
    let indent = text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min();
    text.lines().map(|l| l.get(indent.unwrap_or(0)..).unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Text for roff: backslashes and dashes escaped, a control character at a line's start kept
/// as text.
fn escape(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-").replace('\'', "\\*(Aq");
            if l.starts_with('.') { format!("\\&{l}") } else { l }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const SYNOPSIS: &str = r#"\fBagentsh\fR [\fB\-l\fR|\fB\-\-login\fR] [\fB\-ieux\fR] [\fB\-o\fR \fIOPTION\fR] [\fB\-\-noprofile\fR] [\fB\-\-norc\fR] [\fB\-\-ask\fR] \fB\-c\fR \fICOMMAND\fR [\fINAME\fR [\fIARG\fR ...]]
.br
\fBagentsh\fR [\fIOPTIONS\fR] \fISCRIPT\fR [\fIARG\fR ...]
.br
\fBagentsh\fR [\fIOPTIONS\fR] < \fISCRIPT\fR
.br
\fBagentsh\fR \fISUBCOMMAND\fR [\fIARGS\fR] (see SUBCOMMANDS; \fBagentsh help\fR \fISUBCOMMAND\fR)
"#;

const DESCRIPTION: &str = r#"agentsh stands in for the shell an AI coding agent runs its commands with. It parses
\fICOMMAND\fR with a real bash grammar, without running a shell, into every simple command it
would execute; judges each one (safe, moderate, high or forbidden, and why); asks the person at
the terminal, or in \fBagentsh approvals\fR, when approval is needed (a timeout means no); records
the decision in the audit log; and execs the command itself, confined by the kernel to the
workspace (see SANDBOX). The agent gets the command's own output and exit status, or a refusal
that says what was found, why, and what to do.
.PP
Called as \fBbash\fR or \fBsh\fR (the link \fBagentsh init\fR makes), agentsh takes no
subcommands: a first word is always a script's name.
"#;

/// The sections of `man agentsh` that clap does not make, placed before VERSION.
pub const MAN_SECTIONS: &str = r#".SH SANDBOX
Every command agentsh runs goes into a kernel box set up just before exec (Landlock, plus a
private user and mount namespace where the kernel allows one; no root). Inside it, writes reach
only the workspace (the git top\-level holding the current directory, else the directory
itself), the temp directories and the per\-user build caches; the workspace's \fI.git/hooks\fR,
\fI.git/config\fR and \fI.agents/\fR stay read\-only. Reads reach everything except agentsh's own
files and the credential stores (\fI~/.ssh\fR, \fI~/.aws\fR, \fI~/.gnupg\fR, ...). Signals and
abstract sockets cannot leave the box; the network is on unless \fBsandbox.network\fR is
\fBoff\fR.
.PP
So only what the box cannot make harmless needs a person: what destroys work inside the
workspace (a yes runs it in the box), and what acts on the world or cannot work inside it
(\fBgit push\fR, \fBsudo\fR, global installs; a yes runs it outside the box). \fBagentsh check\fR
says where each part runs and why; \fBagentsh doctor\fR checks the kernel; without Landlock ABI 3
or with \fB"sandbox": {"enabled": false}\fR, commands run unconfined and are judged by their risk
alone. If the box cannot be set up for a command that counted on it, nothing runs (status 126).
.SH CONFIGURATION
Two JSON files, merged: the user config and the project file. The stricter setting wins; a
project file may only tighten the policy until the person runs \fBagentsh trust\fR.
Keys: \fBrequireCommandConfirmation\fR, \fBconfirmationTimeoutSeconds\fR (10\-120),
\fBcommandTimeoutSeconds\fR, \fBcommandWhitelist\fR, \fBcommandBlacklist\fR, \fBlevel\fR,
\fBrules\fR, \fBsandbox\fR (\fBenabled\fR, \fBwritable\fR, \fBdenyRead\fR, \fBnetwork\fR),
\fBauditFailure\fR, \fBauditSyslog\fR, \fBauditMaxBytes\fR, \fBauditKeep\fR, and in the user
config only \fBapprovalQueue\fR and \fBprojectWhitelist\fR. \fBagentsh policy\fR prints the
policy in force and where each part comes from.
.SH FILES
.TP
\fI~/.config/agentsh/config.json\fR
The user config (\fB$XDG_CONFIG_HOME/agentsh\fR).
.TP
\fI.agents/terminal.json\fR
The project file, found by walking up from the working directory.
.TP
\fI~/.local/state/agentsh/audit.jsonl\fR
The audit log, one hash\-chained JSON record per decision (\fBagentsh log \-\-verify\fR).
.TP
\fI~/.local/state/agentsh/audit.seal\fR
The audit log's seal: the first and last record it should hold (\fBagentsh log \-\-reseal\fR).
.TP
\fI~/.local/share/agentsh/trust.json\fR
The trust records of project files.
.TP
\fI$XDG_RUNTIME_DIR/agentsh/\fR
The approval queue (\fBagentsh approvals\fR).
.TP
\fI~/.local/state/agentsh/box/\fR
Records of the sandbox namespaces kept between commands.
.SH ENVIRONMENT
.TP
\fBAGENTSH_ASK\fR
Set to 1: every command asks a person (it can only tighten the policy).
.TP
\fBNO_COLOR\fR
Set and not empty: no colour.
.TP
\fBTERM\fR
\fBdumb\fR: no escape sequences at all.
.TP
\fBHOME\fR, \fBXDG_CONFIG_HOME\fR, \fBXDG_STATE_HOME\fR, \fBXDG_DATA_HOME\fR, \fBXDG_RUNTIME_DIR\fR
Where the files above are.
.SH EXAMPLES
.nf
agentsh \-c 'ls \-la'                 run a command through the gate
agentsh check \-\- 'rm \-rf build'     show the verdict without running anything
agentsh check \-\-json \-\- 'git push'  the same, as JSON for scripts
agentsh whitelist add 'npm test'    let a command run without asking
agentsh log \-\-since 1h              what ran, was asked about or denied in the last hour
agentsh init claude\-code \-\-write    put agentsh in front of Claude Code (codex, gemini too)
.fi
.SH "EXIT STATUS"
.TP
the command's own
It ran.
.TP
126
Refused: denied, not approved, timed out, no one to ask, the audit record could not be written,
the sandbox could not be set up, bytes agentsh cannot judge; or not executable.
.TP
127
Command not found.
.TP
124
Stopped by \fBcommandTimeoutSeconds\fR.
.TP
2
Usage error.
.PP
\fBagentsh check\fR: 0 allow, 10 ask, 11 deny. Management commands: 0 done, 1 failed, 2 usage
error.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_help_becomes_sections() {
        let after = "Wire it in first.\n\nExit status: 0 done, 1 failed.\n\nExamples:\n  agentsh x --y\n  agentsh z";
        let s = after_help_sections(after);
        let titles: Vec<&str> = s.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["NOTES", "EXIT STATUS", "EXAMPLES"]);
        assert_eq!(s[2].1, ".nf\nagentsh x \\-\\-y\nagentsh z\n.fi\n");
        assert_eq!(s[1].1, "0 done, 1 failed.\n");
    }
}
