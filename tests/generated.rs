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
    // Building first names each subcommand after its parents (agentsh-whitelist-add), as
    // clap_mangen::generate_to does; this walks the same tree but renders into memory.
    let mut cmd = Cli::command();
    cmd.build();
    let mut pending = vec![cmd];
    while let Some(cmd) = pending.pop() {
        pending.extend(cmd.get_subcommands().filter(|sub| !sub.is_hide_set()).cloned());
        let top = cmd.get_name() == "agentsh";
        let man = clap_mangen::Man::new(cmd);
        let mut out = Vec::new();
        man.render(&mut out).expect("rendering into memory cannot fail");
        if top {
            out.extend_from_slice(agentsh::cli::MAN_SECTIONS.as_bytes());
        }
        files.push((Path::new("man").join(man.get_filename()), out));
    }
    files
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
