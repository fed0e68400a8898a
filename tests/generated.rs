//! Checks that the committed completions/ and man/ files match the clap definition in src/cli.rs,
//! and rewrites them when run with `AGENTSH_REGENERATE=1`. Nothing else here writes files.

use agentsh::cli::Cli;
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::{Path, PathBuf};

const FIX: &str = "AGENTSH_REGENERATE=1 cargo test --test generated";

/// Every generated file: its path from the repository root and its contents.
fn generated() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for (shell, name) in [(Shell::Bash, "agentsh.bash"), (Shell::Zsh, "_agentsh"), (Shell::Fish, "agentsh.fish")] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "agentsh", &mut out);
        files.push((Path::new("completions").join(name), out));
    }
    files.extend(man_pages().into_iter().map(|(name, page)| (Path::new("man").join(name), page)));
    files
}

/// Every man page: clap_mangen's rendering, finished by `agentsh::cli::man` (issue 29, item 11).
fn man_pages() -> Vec<(String, Vec<u8>)> {
    // Building first names each subcommand after its parents (agentsh-whitelist-add), as
    // clap_mangen::generate_to does; this walks the same tree but renders into memory.
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    let mut pending = vec![cmd];
    while let Some(cmd) = pending.pop() {
        pending.extend(cmd.get_subcommands().filter(|sub| !sub.is_hide_set()).cloned());
        let name = cmd.get_name().to_string();
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        let after = cmd.get_after_help().map(|a| a.to_string()).unwrap_or_default();
        let man = clap_mangen::Man::new(cmd);
        let mut roff = Vec::new();
        man.render(&mut roff).expect("rendering into memory cannot fail");
        let roff = String::from_utf8(roff).expect("clap_mangen writes UTF-8");
        let page = agentsh::cli::man::finish(&name, &roff, &about, &after);
        out.push((man.get_filename(), page.into_bytes()));
    }
    out
}

/// Issue 29, item 11: `man agentsh` has a real SYNOPSIS and DESCRIPTION, a SANDBOX section,
/// and neither EXTRA nor "See `man agentsh`"; no page has EXTRA or a DESCRIPTION that repeats
/// its NAME.
#[test]
fn the_pages_read_as_man_pages() {
    let pages = man_pages();
    let page = |name: &str| -> String {
        let (_, text) = pages.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{name}"));
        String::from_utf8(text.clone()).unwrap()
    };
    let top = page("agentsh.1");
    let titles: Vec<&str> = top.lines().filter_map(|l| l.strip_prefix(".SH ")).collect();
    assert_eq!(
        titles,
        [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "SUBCOMMANDS",
            "SANDBOX",
            "CONFIGURATION",
            "FILES",
            "ENVIRONMENT",
            "EXAMPLES",
            "\"EXIT STATUS\"",
            "VERSION"
        ]
    );
    assert!(!top.contains("man agentsh") && !top.contains("[\\fB\\-c \\fR]"), "{top}");
    for (name, text) in &pages {
        let text = String::from_utf8(text.clone()).unwrap();
        assert!(!text.contains(".SH EXTRA"), "{name}");
        let about = text.lines().skip_while(|l| *l != ".SH NAME").nth(1).unwrap_or("");
        let about = about.split_once(" \\- ").map(|(_, a)| a).unwrap_or("");
        let described = text.lines().skip_while(|l| *l != ".SH DESCRIPTION").nth(1);
        assert_ne!(described, Some(about), "{name}: DESCRIPTION repeats NAME");
    }
    let check = page("agentsh-check.1");
    assert!(check.contains(".SH EXAMPLES\n.nf\nagentsh check \\-\\- \\*(Aqrm \\-rf /\\*(Aq"), "{check}");
    assert!(check.contains(".SH \"EXIT STATUS\"\n0 allow, 10 ask, 11 deny"), "{check}");
}

/// Man pages on disk that no longer belong to any command, e.g. after a subcommand is renamed.
fn orphan_man_pages(root: &Path, files: &[(PathBuf, Vec<u8>)]) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(root.join("man")) else { return Vec::new() };
    let mut orphans: Vec<PathBuf> = dir
        .map(|entry| Path::new("man").join(entry.expect("read man/").file_name()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "1"))
        .filter(|path| !files.iter().any(|(generated, _)| generated == path))
        .collect();
    orphans.sort();
    orphans
}

#[test]
fn completions_and_man_pages_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = generated();
    let orphans = orphan_man_pages(root, &files);

    if std::env::var("AGENTSH_REGENERATE").as_deref() == Ok("1") {
        for path in &orphans {
            std::fs::remove_file(root.join(path)).expect("remove stale man page");
        }
        for (path, contents) in &files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).expect("create output directory");
            std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        }
        return;
    }

    let mut problems = Vec::new();
    for (path, want) in &files {
        match std::fs::read(root.join(path)) {
            Ok(have) if have == *want => {}
            Ok(_) => problems.push(format!("{} is stale", path.display())),
            Err(_) => problems.push(format!("{} is missing", path.display())),
        }
    }
    for path in &orphans {
        problems.push(format!("{} matches no subcommand", path.display()));
    }
    assert!(problems.is_empty(), "{}\nhint: run `{FIX}` and commit the result", problems.join("\n"));
}
