//! The built-in risk rules, as one table of data. Reviewers answer "is `git clean -f` high?"
//! here, next to the reason text. Matching logic lives in `assess`; this file only describes.
//!
//! Each program has a base risk (used when none of its checks match) and checks; the result is
//! the highest risk among the checks that match. A check may be lower than the base: `git` is
//! moderate, `git status` is safe, `git status --output=x` is moderate again.

use crate::model::{Category, Risk};

use Category::*;
use Risk::*;

/// A condition on a command's arguments (after the program name).
#[derive(Clone, Copy)]
pub enum When {
    /// Always.
    Any,
    /// No arguments at all.
    NoArgs,
    /// The first positional argument (the subcommand) is one of these.
    Sub(&'static [&'static str]),
    /// Any flag is present; `-r` also matches clusters such as `-rf`, `--force` also `--force=x`.
    Flag(&'static [&'static str]),
    /// The subcommand is one of these and a flag is present.
    SubFlag(&'static [&'static str], &'static [&'static str]),
    /// The subcommand is one of these and a later positional argument is one of these.
    SubArg(&'static [&'static str], &'static [&'static str]),
    /// Any positional argument is one of these.
    Arg(&'static [&'static str]),
    /// Any argument (flag or positional) starts with one of these.
    ArgPrefix(&'static [&'static str]),
    /// A check too particular to describe as data, with the reason beside it.
    Custom(fn(&crate::judge::assess::Args) -> bool),
}

#[derive(Clone, Copy)]
pub struct Check {
    pub when: When,
    pub risk: Risk,
    /// `None` keeps the program's category.
    pub category: Option<Category>,
    pub why: &'static str,
}

pub struct Program {
    pub names: &'static [&'static str],
    pub category: Category,
    /// Risk when no check matches.
    pub risk: Risk,
    pub why: &'static str,
    /// Options before the subcommand that take a separate value (`git -C dir`).
    pub value_opts: &'static [&'static str],
    pub checks: &'static [Check],
}

const fn c(when: When, risk: Risk, why: &'static str) -> Check {
    Check { when, risk, category: None, why }
}
const fn cc(when: When, risk: Risk, category: Category, why: &'static str) -> Check {
    Check { when, risk, category: Some(category), why }
}
const fn p(names: &'static [&'static str], category: Category, risk: Risk, why: &'static str) -> Program {
    Program { names, category, risk, why, value_opts: &[], checks: &[] }
}
const fn pc(
    names: &'static [&'static str],
    category: Category,
    risk: Risk,
    why: &'static str,
    checks: &'static [Check],
) -> Program {
    Program { names, category, risk, why, value_opts: &[], checks }
}
const fn pv(
    names: &'static [&'static str],
    category: Category,
    risk: Risk,
    why: &'static str,
    value_opts: &'static [&'static str],
    checks: &'static [Check],
) -> Program {
    Program { names, category, risk, why, value_opts, checks }
}

const HELP: Check = c(When::Custom(crate::judge::assess::only_help_or_version), Safe, "only prints help or a version");

/// Package managers: what installs or removes software.
#[rustfmt::skip]
const INSTALL: &[&str] = &[
    "install", "i", "add", "remove", "rm", "uninstall", "erase", "purge", "autoremove", "upgrade", "update",
    "dist-upgrade", "full-upgrade", "reinstall", "downgrade", "link", "unlink", "tap", "-S", "-R", "-U", "-Syu",
    "-Sy", "-Rns", "-Rs",
];
#[rustfmt::skip]
const PKG_QUERY: &[&str] = &[
    "list", "search", "show", "info", "policy", "depends", "rdepends", "madison", "outdated", "-Q", "-Ss", "-Si",
    "-Qi", "-Ql",
];

#[rustfmt::skip]
pub static PROGRAMS: &[Program] = &[
    // ---- Reading and inspecting: safe --------------------------------------------------------
    p(
        &[
            "ls", "ll", "la", "dir", "vdir", "pwd", "cat", "head", "tail", "wc", "cut", "nl", "paste", "rev", "tac",
            "fold", "fmt", "expand", "unexpand", "join", "comm", "column", "uniq", "tr", "seq", "stat", "file", "du",
            "df", "tree", "echo", "printf", "true", "false", "test", "[", "which", "whereis", "type", "id", "whoami",
            "groups", "uname", "arch", "nproc", "getconf", "locale", "tty", "sleep", "expr", "basename", "dirname",
            "realpath", "readlink", "diff", "cmp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
            "sha512sum", "b2sum", "cksum", "sum", "base32", "base64", "od", "hexdump", "strings", "printenv", "less",
            "more", "man", "info", "help", "whatis", "apropos", "cd", "ps", "pgrep", "pidof", "free", "uptime", "w",
            "who", "last", "lsof", "lsblk", "lscpu", "lsusb", "lspci", "vmstat", "iostat", "top", "htop", "jq", "yq",
            "zcat", "zgrep", "zless", "bzcat", "xzcat", "zstdcat", "cal", "clear", "history", "jobs", "wait", ":",
            "exit", "return", "shift", "read", "set", "unset", "export", "local", "declare", "typeset", "readonly",
            "let", "hash", "times", "getopts", "mapfile", "readarray", "fc", "dirs", "pushd", "popd", "bc", "dc",
            "numfmt", "factor", "yes", "tput", "stty", "ulimit", "umask", "true", "break", "continue", "mktemp",
            "look", "tsort", "shuf", "ptx", "csvlook", "bat", "batcat", "exa", "eza", "fzf", "delta", "nm",
            "objdump", "readelf", "ldd", "size", "du", "ncdu", "findmnt", "ip", "ifconfig", "route", "arp", "ping",
            "ping6", "nslookup", "dig", "host", "netstat", "ss", "traceroute", "tracepath", "mtr", "whois",
            "env-check", "cloc", "tokei", "wc", "sort", "grep", "egrep", "fgrep", "ag", "ack",
        ],
        FileRead,
        Safe,
        "reads or inspects without changing anything",
    ),
    pc(
        &["sort"],
        FileRead,
        Safe,
        "sorts text",
        &[cc(When::Flag(&["-o", "--output"]), Moderate, FileWrite, "writes its output to a file")],
    ),
    pc(
        &["tee"],
        FileWrite,
        Moderate,
        "writes its input to files",
        &[
            cc(When::Custom(crate::judge::assess::tee_to_null_only), Safe, FileRead, "copies output to the terminal only"),
            c(When::Custom(crate::judge::assess::has_device_arg), Forbidden, "writes over a disk device"),
        ],
    ),
    // "Read-only" programs with an operand or option that writes a file or runs a program.
    pc(
        &["uniq", "ptx"],
        FileRead,
        Safe,
        "reads or inspects without changing anything",
        &[cc(When::Custom(crate::judge::assess::two_positionals), Moderate, FileWrite, "writes its output to the file named second")],
    ),
    pc(
        &["shuf"],
        FileRead,
        Safe,
        "shuffles lines",
        &[cc(When::Flag(&["-o", "--output"]), Moderate, FileWrite, "writes its output to a file")],
    ),
    pc(
        &["mapfile", "readarray"],
        FileRead,
        Safe,
        "reads lines into an array",
        &[c(When::Flag(&["-C"]), High, "runs its -C callback as code for every few lines")],
    ),
    pc(
        &["hash"],
        FileRead,
        Safe,
        "shows where commands are found",
        &[c(When::Flag(&["-p"]), High, "makes a command name run another program")],
    ),
    pc(
        &["man"],
        FileRead,
        Safe,
        "shows a manual page",
        &[c(When::Flag(&["-P", "--pager", "-H", "--html"]), High, "runs the program it is given as the pager or browser")],
    ),
    // rt7 B8: `!` anywhere in dc's program runs a shell command, `?` a line of its input.
    pc(
        &["dc"],
        FileRead,
        Safe,
        "calculates",
        &[c(
            When::Custom(crate::judge::escapes::dc_runs_commands),
            High,
            "its program comes from its input or a file, or holds `!` (runs a shell command) or `?` (runs a \
             line of its input)",
        )],
    ),
    // rt7 B7: less's `+` commands are keys as typed.
    pc(
        &["less", "zless"],
        FileRead,
        Safe,
        "reads or inspects without changing anything",
        &[c(
            When::Custom(crate::judge::escapes::less_runs_commands),
            High,
            "its `+` commands are keys as typed: `!` and `|` run shell commands, `s` writes a file",
        )],
    ),
    pc(
        &["xxd"],
        FileRead,
        Safe,
        "shows bytes",
        &[cc(When::Custom(crate::judge::assess::two_positionals), Moderate, FileWrite, "writes its output to a file")],
    ),
    pc(
        &["date"],
        FileRead,
        Safe,
        "shows the date",
        &[cc(When::Flag(&["-s", "--set"]), High, System, "sets the system clock")],
    ),
    pc(
        &["hostname", "hostnamectl"],
        FileRead,
        Safe,
        "shows the host name",
        &[cc(When::Custom(crate::judge::assess::has_positional), High, System, "changes the host name")],
    ),
    pc(
        &["grep", "egrep", "fgrep", "rg", "ag", "ack"],
        FileRead,
        Safe,
        "searches text",
        &[
            c(When::Flag(&["--pre"]), High, "runs a preprocessor program on every file"),
            c(When::Flag(&["-z", "--search-zip"]), Moderate, "runs decompression programs"),
        ],
    ),
    pc(
        &["find"],
        FileRead,
        Safe,
        "lists files",
        &[
            cc(When::Flag(&["-delete"]), High, FileDelete, "deletes every file it matches"),
            cc(
                When::Flag(&["-fprint", "-fprint0", "-fprintf", "-fls"]),
                Moderate,
                FileWrite,
                "writes its output to a file",
            ),
            cc(
                When::Custom(crate::judge::assess::find_delete_root),
                Forbidden,
                FileDelete,
                "deletes everything under the root or home directory",
            ),
        ],
    ),
    pc(
        &["fd", "fdfind"],
        FileRead,
        Safe,
        "lists files",
        &[c(When::Flag(&["-x", "-X", "--exec", "--exec-batch"]), Moderate, "runs a command on every file it finds")],
    ),
    pc(
        &["sed", "gsed"],
        FileRead,
        Safe,
        "edits text on its way through",
        &[
            cc(When::Flag(&["-i", "--in-place"]), Moderate, FileWrite, "edits files in place"),
            c(
                When::Custom(crate::judge::assess::sed_runs_or_writes),
                High,
                "its script can run commands (`e`) or write files (`w`)",
            ),
        ],
    ),
    pc(
        &["awk", "gawk", "mawk", "nawk"],
        FileRead,
        Safe,
        "processes text",
        &[
            c(
                When::Custom(crate::judge::assess::awk_runs_commands),
                High,
                "its program runs shell commands (system, pipes or getline)",
            ),
            cc(When::Custom(crate::judge::assess::awk_writes_files), Moderate, FileWrite, "its program writes to files"),
            c(
                When::Custom(crate::judge::assess::awk_code_elsewhere),
                High,
                "runs awk code from a file or library agentsh does not read (-f, -i, -l, -E, -W, @include, @load), \
                 or a program only known when it runs",
            ),
        ],
    ),
    pc(
        &["tar", "bsdtar"],
        FileWrite,
        Moderate,
        "creates or extracts archives",
        &[
            cc(When::Custom(crate::judge::assess::tar_lists_only), Safe, FileRead, "only lists an archive"),
            c(
                When::Custom(crate::judge::assess::tar_remote_archive),
                High,
                "its archive is on another machine (host:file), reached with rsh or ssh",
            ),
            c(
                When::Flag(&[
                    "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "--rsh-command",
                    "--new-volume-script", "-F",
                ]),
                High,
                "runs another program",
            ),
        ],
    ),
    pc(
        &["unzip"],
        FileWrite,
        Moderate,
        "extracts an archive",
        &[cc(When::Custom(crate::judge::assess::unzip_lists_only), Safe, FileRead, "only lists or tests an archive")],
    ),
    p(
        &[
            "zip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "7z", "7za", "rar", "unrar",
            "split", "csplit", "patch", "ln", "link",
        ],
        FileWrite,
        Moderate,
        "writes files",
    ),
    // ---- Writing files -------------------------------------------------------------------------
    pc(
        &[
            "cp", "mv", "mkdir", "touch", "install", "rsync", "truncate", "mkfifo", "mknod", "rename", "chattr",
            "setfacl",
        ],
        FileWrite,
        Moderate,
        "creates, copies, moves or changes files",
        &[c(When::Custom(crate::judge::assess::has_device_arg), Forbidden, "writes over a disk device")],
    ),
    p(
        &["vi", "vim", "nvim", "nano", "emacs", "ed", "code", "subl", "pico", "micro", "hx", "kak"],
        FileWrite,
        Moderate,
        "opens an editor that can change files",
    ),
    // ---- Deleting ------------------------------------------------------------------------------
    pc(
        &["rm"],
        FileDelete,
        Moderate,
        "deletes files",
        &[
            c(
                When::Custom(crate::judge::assess::rm_recursive_beyond_build_output),
                High,
                "deletes directories recursively",
            ),
            c(
                When::Flag(&["-r", "-R", "--recursive"]),
                Moderate,
                "deletes build output that the build makes again",
            ),
            c(When::Custom(crate::judge::assess::rm_wide_glob), High, "deletes everything a wildcard matches"),
            c(When::Custom(crate::judge::assess::targets_system_path), High, "deletes system files"),
            c(When::Flag(&["--no-preserve-root"]), Forbidden, "turns off rm's protection of the root directory"),
            c(
                When::Custom(crate::judge::assess::rm_recursive_catastrophic),
                Forbidden,
                "recursively deletes the root directory, the home directory or a system directory",
            ),
        ],
    ),
    pc(&["rmdir", "unlink", "trash", "trash-put", "gio"], FileDelete, Moderate, "deletes files", &[]),
    pc(
        &["shred", "srm", "wipe"],
        FileDelete,
        High,
        "destroys file contents beyond recovery",
        &[c(When::Custom(crate::judge::assess::has_device_arg), Forbidden, "overwrites a disk device")],
    ),
    // ---- Permissions and processes -------------------------------------------------------------
    pc(
        &["chmod", "chown", "chgrp"],
        System,
        Moderate,
        "changes file permissions or ownership",
        &[
            c(When::Flag(&["-R", "--recursive"]), High, "changes permissions recursively"),
            c(When::Custom(crate::judge::assess::targets_system_path), High, "changes permissions of system files"),
            c(
                When::Custom(crate::judge::assess::chmod_recursive_root),
                Forbidden,
                "recursively changes permissions of the root, home or a system directory",
            ),
        ],
    ),
    pc(
        &["kill", "pkill", "killall", "skill", "xkill"],
        System,
        Moderate,
        "stops processes",
        &[c(When::Custom(crate::judge::assess::kill_everything), High, "signals every process it can reach, or init")],
    ),
    // ---- Network --------------------------------------------------------------------------------
    pc(
        &["curl", "wget", "http", "https", "xh", "aria2c", "lynx", "links", "w3m", "ftp", "lftp", "tftp"],
        Network,
        Moderate,
        "transfers data over the network",
        &[HELP],
    ),
    p(&["ssh", "scp", "sftp", "mosh", "rsh", "rlogin", "telnet"], Network, Moderate, "connects to another machine"),
    pc(
        &["nc", "ncat", "netcat", "socat"],
        Network,
        Moderate,
        "opens raw network connections",
        &[
            c(
                When::Flag(&["-e", "-c", "--exec", "--sh-exec", "--lua-exec"]),
                High,
                "connects a program to the network (a remote shell)",
            ),
            c(
                When::ArgPrefix(&["EXEC:", "SYSTEM:", "exec:", "system:"]),
                High,
                "connects a program to the network (a remote shell)",
            ),
        ],
    ),
    p(&["nmap", "masscan", "tcpdump", "tshark", "wireshark"], Network, High, "scans or captures network traffic"),
    // ---- Building and running code ---------------------------------------------------------------
    pv(
        &["npm", "pnpm", "yarn", "bun"],
        BuildTools,
        Moderate,
        "runs project scripts or package tooling",
        &["--prefix", "-C", "--cwd", "--filter", "-w", "--workspace"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "ls", "list", "view", "info", "outdated", "why", "explain", "audit", "config", "get", "root",
                    "bin", "prefix", "whoami", "ping", "search", "help",
                ]),
                Safe,
                "only shows package information",
            ),
            c(
                When::Custom(crate::judge::assess::installs_named_packages),
                High,
                "installs packages, whose install scripts run with your permissions",
            ),
            c(When::Flag(&["-g", "--global"]), High, "changes globally installed packages"),
            c(
                When::Sub(&["publish", "unpublish", "deprecate", "owner", "dist-tag", "token", "adduser", "login"]),
                High,
                "publishes or changes a package in the registry",
            ),
            c(When::Sub(&["exec", "x", "dlx", "create"]), High, "downloads and runs a package"),
            c(
                When::SubArg(&["config"], &["set", "edit", "delete", "rm"]),
                High,
                "changes the package manager's config, which can name the shell, scripts and registry it uses",
            ),
        ],
    ),
    pc(&["npx", "pnpx", "bunx"], BuildTools, High, "downloads and runs a package", &[HELP]),
    pv(
        &["pip", "pip3", "pipx", "uv", "poetry", "pdm", "conda", "mamba", "gem", "bundle", "composer", "cpan", "cpanm"],
        BuildTools,
        Moderate,
        "manages packages or project environments",
        &["--python", "-p"],
        &[
            HELP,
            c(
                When::Sub(&["list", "show", "freeze", "search", "check", "config", "env", "help", "--version"]),
                Safe,
                "only shows package information",
            ),
            c(
                When::SubArg(&["config"], &["set", "edit", "unset", "--add", "--set", "--append", "--prepend"]),
                High,
                "changes the package manager's config, which can name the index packages (and their install scripts) come from",
            ),
            c(When::Custom(crate::judge::assess::poetry_config_write), High, "changes poetry's config (repositories, credentials)"),
            c(When::SubArg(&["env"], &["remove", "rm", "delete"]), High, "deletes an environment"),
            c(
                When::Sub(&[
                    "install", "add", "uninstall", "remove", "update", "upgrade", "sync", "inject", "reinstall",
                ]),
                High,
                "installs or removes packages, whose install scripts run with your permissions",
            ),
            c(When::Sub(&["publish", "upload", "push"]), High, "publishes a package"),
            c(When::SubArg(&["pip"], &["install", "uninstall"]), High, "installs or removes packages"),
            c(When::Sub(&["run", "exec", "tool", "x"]), Moderate, "runs a program from the environment"),
        ],
    ),
    pv(
        &["cargo"],
        BuildTools,
        Moderate,
        "builds or runs Rust code (build scripts run)",
        &["-C", "--manifest-path", "--config", "-Z"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "metadata", "tree", "search", "locate-project", "pkgid", "verify-project", "version", "help",
                    "--list",
                ]),
                Safe,
                "only shows project information",
            ),
            c(When::Sub(&["install", "uninstall"]), High, "installs a program from the network"),
            c(
                When::Sub(&["publish", "yank", "owner", "login", "logout"]),
                High,
                "publishes or changes a crate in the registry",
            ),
        ],
    ),
    pv(
        &["go"],
        BuildTools,
        Moderate,
        "builds or runs Go code",
        &["-C"],
        &[
            HELP,
            c(When::Sub(&["version", "env", "list", "doc", "help", "vet"]), Safe, "only shows project information"),
            c(When::Sub(&["install", "get"]), High, "installs a program from the network"),
        ],
    ),
    p(
        &[
            "make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "buck", "gradle", "gradlew", "mvn",
            "mvnw", "ant", "sbt", "rustc", "rustup", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "javac",
            "java", "kotlinc", "scalac", "dotnet", "swift", "swiftc", "tsc", "esbuild", "vite", "webpack", "rollup",
            "parcel", "eslint", "prettier", "black", "ruff", "flake8", "mypy", "pylint", "isort", "pytest",
            "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "gofmt", "rustfmt",
            "clippy-driver", "cargo-clippy", "cargo-fmt", "cargo-nextest", "mix", "elixir", "erl", "ghc", "cabal",
            "stack", "zig", "nim", "dart", "flutter", "R", "julia", "pre-commit", "just", "task", "bats",
            "shellcheck", "hadolint", "terraform-docs",
        ],
        BuildTools,
        Moderate,
        "builds, tests or formats code (project code runs)",
    ),
    // Interpreters: a script file is moderate; inline code cannot be judged.
    pc(
        &["python", "python2", "python3", "pypy", "pypy3", "ipython"],
        BuildTools,
        Moderate,
        "runs Python code",
        &[
            HELP,
            c(When::Flag(&["-c"]), High, "runs inline Python code, which agentsh cannot judge"),
            c(When::Custom(crate::judge::assess::interpreter_reads_pipe), High, "runs code piped in from another command"),
        ],
    ),
    pc(
        &["node", "nodejs", "deno", "tsx", "ts-node"],
        BuildTools,
        Moderate,
        "runs JavaScript code",
        &[
            HELP,
            c(
                When::Flag(&["-e", "--eval", "-p", "--print"]),
                High,
                "runs inline JavaScript code, which agentsh cannot judge",
            ),
            c(When::Sub(&["eval"]), High, "runs inline JavaScript code, which agentsh cannot judge"),
            c(When::Custom(crate::judge::assess::interpreter_reads_pipe), High, "runs code piped in from another command"),
        ],
    ),
    pc(
        &[
            "perl", "ruby", "php", "lua", "luajit", "Rscript", "tclsh", "wish", "osascript", "pwsh", "powershell",
            "groovy", "jshell", "irb", "racket", "guile", "sbcl", "expect",
        ],
        BuildTools,
        Moderate,
        "runs a script",
        &[
            HELP,
            c(
                When::Flag(&["-e", "-E", "-r", "-c", "-Command", "--eval", "-x"]),
                High,
                "runs inline code, which agentsh cannot judge",
            ),
            cc(When::Flag(&["-i", "-pi", "-ni"]), High, FileWrite, "edits files in place with inline code"),
            c(When::Custom(crate::judge::assess::interpreter_reads_pipe), High, "runs code piped in from another command"),
        ],
    ),
    // ---- Version control and operations ---------------------------------------------------------
    pv(
        &["git"],
        DevOps,
        Moderate,
        "changes the repository or talks to a remote",
        &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--config-env"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "status", "log", "diff", "show", "blame", "shortlog", "describe", "rev-parse", "rev-list",
                    "ls-files", "ls-tree", "ls-remote", "cat-file", "show-ref", "for-each-ref", "merge-base",
                    "name-rev", "whatchanged", "cherry", "count-objects", "grep", "version", "help", "var",
                    "check-ignore", "check-attr", "diff-tree", "diff-files", "diff-index", "verify-commit",
                    "verify-tag", "show-branch", "range-diff", "annotate",
                ]),
                Safe,
                "only reads the repository",
            ),
            c(
                When::SubFlag(&["grep"], &["-O", "--open-files-in-pager"]),
                High,
                "opens the matches in a program it names (-O runs the pager or editor given)",
            ),
            c(
                When::Custom(crate::judge::assess::git_list_only),
                Safe,
                "only lists branches, tags, remotes, stashes or settings",
            ),
            c(
                When::Flag(&[
                    "--output", "--ext-diff", "--textconv", "--exec", "--upload-pack", "--receive-pack", "-o",
                ]),
                Moderate,
                "an option that writes files or runs another program",
            ),
            c(
                When::Custom(crate::judge::assess::git_config_override),
                High,
                "sets git configuration for this run, which can make git run other programs",
            ),
            c(
                When::SubFlag(
                    &["push"],
                    &[
                        "-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d",
                        "--prune",
                    ],
                ),
                High,
                "rewrites or deletes history on the remote",
            ),
            c(
                When::Custom(crate::judge::assess::git_push_refspec_force_or_delete),
                High,
                "rewrites or deletes history on the remote (`+ref` or `:ref`)",
            ),
            c(When::SubFlag(&["reset"], &["--hard", "--merge", "--keep"]), High, "discards uncommitted changes"),
            c(When::SubFlag(&["clean"], &["-f", "--force"]), High, "deletes untracked files"),
            c(
                When::SubFlag(&["branch"], &["-D", "--delete", "-d", "-M", "--force", "-f"]),
                High,
                "deletes or overwrites branches",
            ),
            c(
                When::SubFlag(&["checkout", "switch"], &["-f", "--force", "-B", "--discard-changes"]),
                High,
                "discards uncommitted changes",
            ),
            c(
                When::SubArg(&["checkout", "restore"], &[".", "--", ":/"]),
                High,
                "discards uncommitted changes to files",
            ),
            c(When::SubArg(&["stash"], &["drop", "clear"]), High, "deletes stashed changes"),
            c(When::SubArg(&["reflog"], &["expire", "delete"]), High, "deletes history that recovery depends on"),
            c(When::SubArg(&["tag"], &["-d", "--delete", "-f", "--force"]), High, "deletes or moves tags"),
            c(When::SubFlag(&["update-ref"], &["-d"]), High, "deletes a reference"),
            c(When::Sub(&["filter-branch", "filter-repo"]), High, "rewrites the whole history"),
            c(When::SubFlag(&["rebase", "commit"], &["--no-verify", "-n"]), Moderate, "skips the repository's checks"),
            c(
                When::SubFlag(&["gc", "prune"], &["--prune", "--aggressive", "--expire"]),
                High,
                "permanently deletes unreachable objects",
            ),
            c(When::SubFlag(&["rm"], &["-r", "-f", "--force"]), High, "deletes files recursively or by force"),
            c(When::SubFlag(&["submodule"], &["--force", "-f"]), High, "discards submodule changes"),
        ],
    ),
    p(&["gh", "glab", "hub"], DevOps, Moderate, "talks to the code-hosting service"),
    pv(
        &["docker", "podman", "nerdctl"],
        DevOps,
        Moderate,
        "manages containers",
        &["-H", "--host", "--context", "-c", "--config", "-l", "--log-level"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port", "diff", "history",
                    "search",
                ]),
                Safe,
                "only shows container information",
            ),
            c(
                When::Custom(crate::judge::assess::compose_reads_only),
                Safe,
                "only shows container information",
            ),
            c(
                When::Flag(&["--privileged", "--cap-add", "--pid", "--ipc", "--userns", "--device", "--security-opt"]),
                High,
                "gives a container control of the host",
            ),
            c(
                When::Custom(crate::judge::assess::docker_mounts_host_root),
                High,
                "mounts the host's root, home or docker socket into a container",
            ),
            c(
                When::Custom(crate::judge::assess::docker_remote),
                High,
                "works on another machine's container daemon (-H, --context, DOCKER_HOST), outside any box here",
            ),
            c(
                When::SubArg(
                    &["system", "volume", "image", "container", "network", "builder", "buildx"],
                    &["prune", "rm"],
                ),
                High,
                "deletes containers, images or volumes",
            ),
            c(When::Sub(&["rm", "rmi", "kill"]), High, "deletes or kills containers or images"),
            c(When::SubFlag(&["compose"], &["-v", "--volumes", "--rmi"]), High, "deletes volumes or images"),
        ],
    ),
    pv(
        &["kubectl", "oc", "k9s"],
        DevOps,
        Moderate,
        "changes a Kubernetes cluster",
        &["-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server", "--user"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "get", "describe", "logs", "explain", "version", "api-resources", "api-versions", "cluster-info",
                    "top", "auth", "diff",
                ]),
                Safe,
                "only reads cluster state",
            ),
            c(When::Custom(crate::judge::assess::reads_k8s_secret), Moderate, "reads secrets from the cluster"),
            c(
                When::SubArg(&["config"], &["current-context", "get-contexts", "get-clusters", "get-users", "view"]),
                Safe,
                "only shows the local kubeconfig",
            ),
            c(When::SubFlag(&["config"], &["--raw"]), Moderate, "shows the kubeconfig with its credentials"),
            c(When::Flag(&["--kubeconfig"]), High, "reads another kubeconfig, whose exec plugins run programs"),
            c(
                When::Sub(&["delete", "drain", "cordon", "taint", "replace"]),
                High,
                "deletes or disrupts cluster resources",
            ),
            c(
                When::Flag(&["--force", "--grace-period", "--all", "--prune"]),
                High,
                "acts on many resources or skips graceful shutdown",
            ),
        ],
    ),
    p(&["helm"], DevOps, Moderate, "changes a Kubernetes cluster"),
    pv(
        &["terraform", "tofu", "terragrunt", "pulumi", "cdk", "serverless", "sls"],
        DevOps,
        Moderate,
        "changes infrastructure",
        &["-chdir"],
        &[
            HELP,
            c(
                When::Sub(&[
                    "plan", "validate", "fmt", "show", "output", "version", "providers", "graph", "preview", "synth",
                    "list", "ls",
                ]),
                Safe,
                "only reads or checks infrastructure code",
            ),
            c(
                When::Sub(&["plan"]),
                Moderate,
                "plans with providers and external data sources, which run programs and reach the cloud",
            ),
            c(
                When::Sub(&["apply", "up", "deploy", "import", "taint", "untaint", "force-unlock"]),
                High,
                "changes real infrastructure",
            ),
            c(When::Sub(&["destroy", "remove", "rm"]), High, "destroys real infrastructure"),
            c(
                When::SubArg(&["state", "workspace"], &["rm", "delete", "push", "mv", "replace-provider"]),
                High,
                "changes infrastructure state",
            ),
        ],
    ),
    p(&["ansible", "ansible-playbook", "salt", "puppet", "chef-client"], DevOps, Moderate, "configures machines"),
    pc(
        &[
            "aws", "gcloud", "az", "doctl", "flyctl", "fly", "heroku", "vercel", "netlify", "wrangler", "firebase",
            "gsutil", "s3cmd", "rclone",
        ],
        DevOps,
        Moderate,
        "acts on a cloud account",
        &[c(When::Custom(crate::judge::assess::cloud_destructive), High, "deletes or terminates cloud resources")],
    ),
    pc(
        &["psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "redis-cli", "cqlsh"],
        DevOps,
        Moderate,
        "talks to a database",
        &[c(
            When::Custom(crate::judge::assess::sql_destructive),
            High,
            "runs a destructive statement (DROP, TRUNCATE, DELETE without WHERE, FLUSHALL)",
        )],
    ),
    // ---- The system ------------------------------------------------------------------------------
    pc(
        &[
            "apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "rpm", "pacman", "yay", "paru", "zypper", "apk",
            "brew", "port", "snap", "flatpak", "emerge", "nix-env", "xbps-install", "pkg",
        ],
        System,
        Moderate,
        "manages system packages",
        &[
            HELP,
            c(When::Sub(PKG_QUERY), Safe, "only shows package information"),
            c(
                When::Flag(&["-l", "-L", "-s", "-q", "-Q", "--list", "--status", "--query"]),
                Safe,
                "only shows package information",
            ),
            c(When::Sub(INSTALL), High, "installs, removes or upgrades system software"),
            c(
                When::Flag(&[
                    "-i", "-r", "-P", "-e", "-U", "-S", "-R", "--install", "--remove", "--purge", "--erase",
                    "--upgrade",
                ]),
                High,
                "installs, removes or upgrades system software",
            ),
        ],
    ),
    pc(
        &["systemctl", "service", "launchctl", "rc-service", "initctl", "sv"],
        System,
        High,
        "controls system services",
        &[],
    ),
    pc(
        &["reboot", "shutdown", "halt", "poweroff", "init", "telinit", "kexec"],
        System,
        High,
        "restarts or stops the machine",
        &[],
    ),
    pc(
        &[
            "mount", "umount", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "losetup", "cryptsetup",
            "lvm", "lvremove", "vgremove", "pvremove", "mdadm", "swapoff", "swapon", "fsck", "e2fsck", "tune2fs",
            "resize2fs", "blkdiscard", "hdparm", "zpool", "zfs", "btrfs",
        ],
        System,
        High,
        "changes disks, partitions or file systems",
        &[
            c(When::Custom(crate::judge::assess::only_lists_mounts), Safe, "only lists what is mounted"),
            c(When::Custom(crate::judge::assess::targets_block_device_destructively), Forbidden, "overwrites a disk device"),
        ],
    ),
    pc(
        &["mkfs", "mke2fs", "mkswap", "mkdosfs", "newfs"],
        System,
        Forbidden,
        "formats a file system, destroying what was there",
        &[],
    ),
    pc(
        &["wipefs"],
        System,
        High,
        "erases file-system signatures",
        &[c(When::Custom(crate::judge::assess::has_device_arg), Forbidden, "erases the signatures of a disk device")],
    ),
    pc(
        &["dd"],
        System,
        High,
        "copies raw bytes",
        &[
            // Only `of=` a device overwrites a disk; `dd if=FILE` to stdout or a project file
            // is a copy (issue 16 §6).
            c(When::Custom(crate::judge::assess::dd_to_device), Forbidden, "writes raw bytes onto a disk device"),
        ],
    ),
    p(&["iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "pfctl"], System, High, "changes the firewall"),
    p(
        &[
            "useradd", "userdel", "usermod", "adduser", "deluser", "groupadd", "groupdel", "groupmod", "passwd",
            "chpasswd", "chsh", "chfn", "visudo", "vipw", "gpasswd", "newgrp",
        ],
        System,
        High,
        "changes users, groups or passwords",
    ),
    pc(
        &["crontab"],
        System,
        High,
        "changes scheduled jobs",
        &[cc(When::Flag(&["-l"]), Safe, FileRead, "only lists scheduled jobs")],
    ),
    p(&["at", "batch", "atrm"], System, Moderate, "schedules a command for later"),
    p(
        &[
            "sysctl", "modprobe", "insmod", "rmmod", "setenforce", "grub-install", "update-grub", "efibootmgr",
            "bootctl", "timedatectl", "localectl", "loginctl", "nmcli", "journalctl-vacuum", "chroot", "pivot_root",
            "setcap", "capsh",
        ],
        System,
        High,
        "changes how the system runs",
    ),
    pc(&["ip", "ifconfig", "route", "iwconfig", "ethtool", "tc", "brctl"], Network, Safe, "shows network settings", &[
        cc(When::Custom(crate::judge::assess::changes_network), High, System, "changes network interfaces or routes (can cut the machine off)"),
    ]),
    pc(&["history"], FileRead, Safe, "shows shell history", &[
        cc(When::Flag(&["-c", "-d", "-w", "-a", "-r", "-n"]), Moderate, System, "clears or rewrites shell history"),
    ]),
    pc(
        &["journalctl", "dmesg"],
        FileRead,
        Safe,
        "reads system logs",
        &[c(
            When::Flag(&[
                "--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush", "-c", "-C", "--clear",
            ]),
            High,
            "deletes or clears system logs",
        )],
    ),
    p(
        &["su", "sudo", "doas", "pkexec", "runuser", "sudoedit"],
        System,
        High,
        "runs a command as another user, usually root",
    ),
    p(
        &[
            "alias", "unalias", "trap", "enable", "complete", "bind", "shopt", "caller", "disown", "suspend",
            "logout", "fg", "bg", "kill-bg",
        ],
        Shell,
        Moderate,
        "changes how this shell runs later commands",
    ),
    p(
        &["open", "xdg-open", "gio-open", "start", "explorer"],
        FileRead,
        Moderate,
        "opens a file or address with another program",
    ),
    p(&["history-clear", "shred-history"], System, High, "erases history"),
];

/// Programs that run another command given as their arguments. `assess` judges that command.
pub struct Wrapper {
    pub names: &'static [&'static str],
    /// Options that take a separate value.
    pub value_opts: &'static [&'static str],
    /// Positional arguments to skip before the command (`timeout DURATION cmd`).
    pub skip_positionals: usize,
    /// The wrapper's own risk floor for the command it runs (sudo: high).
    pub risk: Risk,
    pub why: &'static str,
    /// The rest of argv is joined and run by a shell (`watch 'cmd'`).
    pub joins_into_shell: bool,
}

const fn w(
    names: &'static [&'static str],
    value_opts: &'static [&'static str],
    skip: usize,
    risk: Risk,
    why: &'static str,
) -> Wrapper {
    Wrapper { names, value_opts, skip_positionals: skip, risk, why, joins_into_shell: false }
}

#[rustfmt::skip]
pub static WRAPPERS: &[Wrapper] = &[
    w(
        &["sudo"],
        &[
            "-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt",
            "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout", "-R", "--chroot",
        ],
        0,
        High,
        "runs it as root (sudo)",
    ),
    w(&["doas"], &["-u", "-C"], 0, High, "runs it as root (doas)"),
    w(&["pkexec"], &["--user"], 0, High, "runs it as root (pkexec)"),
    w(&["runuser"], &["-u", "--user", "-g", "--group", "-G"], 0, High, "runs it as another user"),
    w(
        &["env"],
        &[
            "-u", "--unset", "-C", "--chdir", "-S", "--split-string", "--block-signal", "--default-signal",
            "--ignore-signal", "-a", "--argv0",
        ],
        0,
        Safe,
        "runs it with a changed environment",
    ),
    w(&["nice"], &["-n", "--adjustment"], 0, Safe, "runs it at another priority"),
    w(
        &["ionice"],
        &["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"],
        0,
        Safe,
        "runs it at another I/O priority",
    ),
    w(&["timeout", "gtimeout"], &["-s", "--signal", "-k", "--kill-after"], 1, Safe, "runs it with a time limit"),
    w(&["nohup"], &[], 0, Safe, "runs it immune to hangups"),
    w(&["time"], &["-f", "--format", "-o", "--output"], 0, Safe, "times it"),
    w(&["stdbuf"], &["-i", "--input", "-o", "--output", "-e", "--error"], 0, Safe, "runs it with other buffering"),
    w(&["command", "builtin"], &[], 0, Safe, "runs it bypassing shell functions"),
    w(&["exec"], &["-a"], 0, Safe, "replaces the shell with it"),
    w(
        &[
            "setsid", "unbuffer", "caffeinate", "catchsegv", "proxychains", "proxychains4", "torsocks", "firejail",
            "faketime", "chronic", "ifne",
        ],
        &[],
        0,
        Safe,
        "runs it",
    ),
    w(&["taskset"], &["-p", "--pid"], 1, Safe, "runs it on chosen CPUs"),
    w(&["chrt"], &["-p", "--pid", "-T", "-P", "-D"], 1, Safe, "runs it with a scheduling policy"),
    w(&["flock"], &["-w", "--timeout", "-E", "--conflict-exit-code"], 1, Safe, "runs it holding a lock"),
    w(
        &["xargs"],
        &[
            "-I", "-i", "-n", "--max-args", "-L", "-l", "--max-lines", "-P", "--max-procs", "-d", "--delimiter",
            "-E", "-e", "--eof", "-s", "--max-chars", "-a", "--arg-file", "--process-slot-var",
        ],
        0,
        Safe,
        "runs it once per input line, with arguments from its input",
    ),
    w(&["strace", "ltrace"], &["-e", "-o", "-p", "-s", "-u", "-E"], 0, Moderate, "traces it"),
    w(&["valgrind"], &["--tool", "--log-file"], 0, Moderate, "runs it under valgrind"),
    w(&["gdb"], &["-ex", "-x", "-p"], 0, Moderate, "runs it under a debugger"),
    w(&["dotenv", "direnv-exec", "with-contenv"], &[], 0, Moderate, "runs it with variables from a file"),
    Wrapper {
        names: &["watch"],
        value_opts: &["-n", "--interval", "-d", "--differences", "-q", "--equexit", "--chgexit"],
        skip_positionals: 0,
        risk: Safe,
        why: "runs it repeatedly",
        joins_into_shell: true,
    },
];

/// Shells: `-c STRING` is parsed and judged; reading a pipe cannot be judged.
pub static SHELLS: &[&str] =
    &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox", "rbash", "yash", "posh"];

/// Variables that make a program run code, or read a config the person did not write: a name,
/// or a prefix ending in `*`, and what setting it does. Set in any way (`VAR=x cmd`, `export`,
/// `declare -x`, `env VAR=x`, `env -S`), one needs a person ([`code_env`]).
#[rustfmt::skip]
pub static CODE_ENV: &[(&str, &str)] = &[
    ("LD_*", "makes every program load the libraries it names"),
    ("DYLD_*", "makes every program load the libraries it names"),
    ("BASH_ENV", "makes every bash script run the file it names first"),
    ("ENV", "makes every sh started run the file it names first"),
    ("BASH_FUNC_*", "defines a function every child bash runs in place of a command"),
    ("PROMPT_COMMAND", "runs its value as a command before each prompt"),
    ("PS4", "runs the command substitutions in it while tracing"),
    ("PS0", "runs the command substitutions in it at each prompt of an interactive shell"),
    ("PS1", "runs the command substitutions in it at each prompt of an interactive shell"),
    ("PS2", "runs the command substitutions in it at each prompt of an interactive shell"),
    ("BASH_CMDS*", "makes a command name run another program"),
    ("BASH_ALIASES*", "makes a command name run other text"),
    ("SHELLOPTS", "turns on shell options in every child shell"),
    ("BASHOPTS", "turns on shell options in every child shell"),
    ("IFS", "changes how every later command's words are split"),
    ("PATH", "puts a directory of its own before the system's: a program of that name there runs instead"),
    ("HOME", "makes programs read their configuration (and hooks) from another home"),
    ("XDG_CONFIG_HOME", "makes programs read their configuration from another directory"),
    ("GIT_SSH", "makes git run that program to connect"),
    ("GIT_SSH_COMMAND", "makes git run that command to connect"),
    ("GIT_PROXY_COMMAND", "makes git run that command to connect"),
    ("GIT_EXTERNAL_DIFF", "makes git run that program for every diff"),
    ("GIT_PAGER", "makes git run that program as its pager"),
    ("GIT_EDITOR", "makes git run that program as its editor"),
    ("GIT_SEQUENCE_EDITOR", "makes git run that program as its editor"),
    ("GIT_ASKPASS", "makes git run that program for passwords"),
    ("SSH_ASKPASS", "makes ssh run that program for passwords"),
    ("GIT_EXEC_PATH", "makes git run its subcommands from another directory"),
    ("GIT_TEMPLATE_DIR", "makes git copy hooks from another directory into new repositories"),
    ("GIT_CONFIG", "makes git read another config, which can name programs to run"),
    ("GIT_CONFIG_GLOBAL", "makes git read another config, which can name programs to run"),
    ("GIT_CONFIG_SYSTEM", "makes git read another config, which can name programs to run"),
    ("GIT_CONFIG_PARAMETERS", "sets git config, which can name programs to run"),
    ("GIT_CONFIG_COUNT", "sets git config, which can name programs to run"),
    ("GIT_CONFIG_KEY_*", "sets git config, which can name programs to run"),
    ("GIT_CONFIG_VALUE_*", "sets git config, which can name programs to run"),
    ("GIT_DIR", "points git at another repository, with its own hooks and config"),
    ("GIT_WORK_TREE", "points git at another work tree"),
    ("PAGER", "makes programs run that program as their pager"),
    ("MANPAGER", "makes man run that program as its pager"),
    ("SYSTEMD_PAGER", "makes systemctl run that program as its pager"),
    ("LESSOPEN", "makes less run that command on every file it opens"),
    ("LESS", "gives less options, whose `+` commands are keys: `!` runs a shell command"),
    ("LESSSECURE", "changes less's secure mode, which agentsh sets where there is no sandbox (its `!` runs shell commands)"),
    ("LESSSECURE_ALLOW", "lets less run shell commands in its secure mode"),
    ("LESSKEY*", "makes less read key bindings, which can run commands, from another file"),
    ("LESSKEYIN*", "makes less read key bindings, which can run commands, from another file"),
    ("LESSEDIT", "changes the editor command less runs"),
    ("LESSCLOSE", "makes less run that command on every file it closes"),
    ("EDITOR", "makes programs run that program as their editor"),
    ("VISUAL", "makes programs run that program as their editor"),
    ("PYTHONPATH", "makes python import modules from another directory first"),
    ("PYTHONSTARTUP", "makes python run that file first"),
    ("PYTHONUSERBASE", "makes python load site packages from another directory"),
    ("PYTHONHOME", "makes python load its standard library from another directory"),
    ("NODE_OPTIONS", "passes options such as --require to every node process"),
    ("NODE_PATH", "makes node load modules from another directory"),
    ("RUBYOPT", "passes options such as -r to every ruby process"),
    ("RUBYLIB", "makes ruby load libraries from another directory first"),
    ("PERL5OPT", "passes options such as -M to every perl process"),
    ("PERL5LIB", "makes perl load modules from another directory first"),
    ("PERLLIB", "makes perl load modules from another directory first"),
    ("AWKPATH", "makes gawk load the files its programs @include from another directory"),
    ("AWKLIBPATH", "makes gawk load the extensions its programs @load from another directory"),
    // Options a program reads from the environment, as if on its command line (rt7 C5): an
    // option there that runs a program or writes a file is not in the argv agentsh judges.
    ("TAR_OPTIONS", "gives tar options (-I PROG, --to-command, --index-file) not on its command line"),
    ("RIPGREP_CONFIG_PATH", "makes rg read options (--pre PROG) from a file agentsh does not read"),
    ("ZDOTDIR", "makes zsh run the start-up files of another directory"),
    ("MANOPT", "gives man options (-P PAGER, -H BROWSER) not on its command line"),
    ("LESS", "gives less options (-o FILE, lesskey files) not on its command line"),
    ("UNZIP", "gives unzip options not on its command line"),
    ("UNZIPOPT", "gives unzip options not on its command line"),
    ("ZIPOPT", "gives zip options (-TT PROG) not on its command line"),
    ("ZIP", "gives zip options (-TT PROG) not on its command line"),
    ("GZIP", "gives gzip options not on its command line"),
    ("BZIP2", "gives bzip2 options not on its command line"),
    ("XZ_OPT", "gives xz options not on its command line"),
    ("XZ_DEFAULTS", "gives xz options not on its command line"),
    ("PARALLEL", "gives GNU parallel options (commands to run) not on its command line"),
    ("GREP_OPTIONS", "gives grep options not on its command line"),
    ("JAVA_TOOL_OPTIONS", "gives every JVM options (-javaagent: code to load)"),
    ("_JAVA_OPTIONS", "gives every JVM options (-javaagent: code to load)"),
    ("JDK_JAVA_OPTIONS", "gives java options (-javaagent: code to load)"),
    ("GCONV_PATH", "makes glibc load character-set modules (native code) from another directory"),
    ("LOCPATH", "makes glibc read locales from another directory"),
    ("KUBECONFIG", "makes kubectl read another config, whose exec plugins run programs"),
    ("KUBECTL_EXTERNAL_DIFF", "makes kubectl run that program for every diff"),
    ("DOCKER_HOST", "points docker at another daemon"),
    ("DOCKER_CONFIG", "makes docker read another config, with its credential helpers"),
    ("npm_config_*", "sets npm config, which can name scripts, registries and a shell to run"),
    ("NPM_CONFIG_*", "sets npm config, which can name scripts, registries and a shell to run"),
    ("PIP_INDEX_URL", "makes pip download packages, whose install scripts run, from another index"),
    ("PIP_EXTRA_INDEX_URL", "makes pip download packages, whose install scripts run, from another index"),
    ("PIP_CONFIG_FILE", "makes pip read another config"),
    ("UV_INDEX_URL", "makes uv download packages from another index"),
    ("CARGO_HOME", "makes cargo read another config and run binaries from another directory"),
    ("CARGO_TARGET_*", "can name a runner or linker cargo runs"),
    ("CARGO_BUILD_RUSTC_WRAPPER", "makes cargo run that program around every compile"),
    ("CARGO_BUILD_RUSTC", "makes cargo run that program as the compiler"),
    ("RUSTC_WRAPPER", "makes cargo run that program around every compile"),
    ("RUSTC", "makes cargo run that program as the compiler"),
    ("CARGO_REGISTRIES_*", "makes cargo download crates from another registry"),
    ("CARGO_REGISTRY_*", "makes cargo download crates from another registry"),
    ("GOFLAGS", "passes flags such as -toolexec to every go command"),
    ("GOPROXY", "makes go download modules from another proxy"),
    ("CC", "makes builds run that program as the C compiler"),
    ("CXX", "makes builds run that program as the C++ compiler"),
    ("MAKEFLAGS", "passes options to every make"),
];

/// Programs a pager or editor variable may name and stay quiet: they only show or accept text.
/// Not `more`: its `!` runs a shell command from the keys typed at it (rt7 B7).
const QUIET_VALUES: &[&str] =
    &["cat", "less", "true", ":", "head", "tail", "less -R", "less -FRX", "vim", "vi", "nano"];

/// Why setting `name` (to `value`, where known) needs a person, or `None` when it does not.
pub fn code_env(name: &str, value: Option<&str>) -> Option<&'static str> {
    let why = CODE_ENV.iter().find_map(|(pat, why)| match pat.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix).then_some(*why),
        None => (*pat == name).then_some(*why),
    })?;
    let pager_or_editor =
        matches!(name, "GIT_PAGER" | "PAGER" | "MANPAGER" | "SYSTEMD_PAGER" | "GIT_EDITOR" | "EDITOR" | "VISUAL");
    if pager_or_editor && value.is_some_and(|v| QUIET_VALUES.contains(&v.trim())) {
        return None;
    }
    // `LESS=-R`: options, none of which runs a command or reads or writes a file (`+`, `-k`,
    // `-o`, `-O`, `-t`, `-T`); `LESSSECURE=1` is what agentsh sets itself.
    let less_letters = |v: &str| {
        let v = v.trim().trim_start_matches('-');
        v.chars().all(|c| c.is_ascii_alphabetic() && !"kKoOtT".contains(c))
    };
    if (name == "LESS" && value.is_some_and(less_letters)) || (name == "LESSSECURE" && value == Some("1")) {
        return None;
    }
    if name == "PATH" && value.is_some_and(path_keeps_system_first) {
        return None;
    }
    Some(why)
}

/// `PATH=$PATH:x`, or a system directory in front: what runs by name stays what ran before.
fn path_keeps_system_first(value: &str) -> bool {
    let first = value.split(':').next().unwrap_or("");
    matches!(first, "$PATH" | "${PATH}")
        || ["/usr/", "/bin", "/sbin", "/opt/", "/snap/bin"].iter().any(|p| first.starts_with(p))
}

/// Directories whose recursive deletion or re-permissioning wrecks the machine.
#[rustfmt::skip]
pub static SYSTEM_DIRS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
    "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var", "/usr/bin", "/usr/sbin", "/usr/lib",
    "/usr/lib64", "/usr/local", "/usr/local/bin", "/usr/local/lib", "/usr/share", "/usr/include", "/var/lib",
    "/var/log", "/var/cache", "/var/spool", "/var/mail", "/var/www", "/etc/ssh", "/etc/systemd", "/System",
    "/Library", "/Applications", "/Users", "/Volumes", "/private", "/private/etc", "/private/var", "/nix",
    "/nix/store", "/efi", "/boot/efi",
];

/// Files whose change lets code run later or grants access: shell start-up files, SSH keys,
/// scheduled jobs, sudoers.
#[rustfmt::skip]
pub static PERSISTENCE_PATHS: &[&str] = &[
    "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.zshrc", "~/.zshenv",
    "~/.zprofile", "~/.zlogin", "~/.config/fish/config.fish", "~/.ssh", "~/.gnupg", "~/.aws", "~/.kube",
    "~/.docker/config.json", "~/.gitconfig", "~/.config/git", "~/.npmrc", "~/.pypirc", "~/.netrc",
    "~/.config/systemd", "~/.config/autostart", "~/.local/bin", "~/.cargo/config", "~/.cargo/config.toml",
    "~/.inputrc", "~/.vimrc", "~/.claude", "~/.codex", "~/.gemini", "/etc", "/var/spool/cron", "/usr/local/bin",
];

/// agentsh's own policy and record: changing them through the gate is forbidden.
pub static SELF_PATHS: &[&str] =
    &[".agents/terminal.json", ".agents", "~/.config/agentsh", "~/.local/state/agentsh", "~/.local/share/agentsh"];

/// Reading these hands secrets to the agent.
#[rustfmt::skip]
pub static SECRET_PATHS: &[&str] = &[
    "~/.ssh/", "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "~/.aws", "~/.netrc", "~/.pgpass",
    "~/.docker/config.json", "~/.kube/config", "~/.gnupg", "~/.config/gh/hosts.yml", "~/.npmrc", "~/.pypirc",
    "/proc/self/environ", "/proc/1/environ", "~/.git-credentials", "~/.my.cnf", "~/.vault-token",
    "~/.claude/.credentials.json", "~/.config/gcloud", "~/.azure", "/etc/ssh/ssh_host_", "/etc/kubernetes",
    "/var/run/secrets", "/run/secrets", "~/.password-store", "~/.local/share/keyrings",
];

/// Names that mark a file as holding secrets wherever it is (searched for, or read).
pub static SECRET_NAMES: &[&str] = &[
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    ".pem",
    "wallet.dat",
    ".git-credentials",
    ".netrc",
    "credentials",
    ".vault-token",
    "_authtoken",
    ".pgpass",
    "shadow",
    ".p12",
    ".pfx",
    ".keystore",
    "secring",
];

/// Programs that carry their arguments to another machine, with the subcommands that do (none
/// listed: every use): a name looked up in DNS (the lookup reaches the name's own servers even
/// where nothing else is sent), a URL fetched, a package name asked of a registry. A value
/// computed when the command runs (`$(printenv KEY)`, `$TOKEN`) in such an argument leaves the
/// machine, box or no box (issue 28: exfiltration through names); `assess::exfiltration`
/// finds it.
#[rustfmt::skip]
pub static SENDS_ARGUMENTS: &[(&str, &[&str])] = &[
    // Names: any value in one is looked up on the name's own servers.
    ("dig", &[]), ("nslookup", &[]), ("host", &[]), ("drill", &[]), ("delv", &[]), ("kdig", &[]),
    ("ping", &[]), ("ping6", &[]), ("traceroute", &[]), ("traceroute6", &[]), ("tracepath", &[]),
    ("mtr", &[]), ("whois", &[]), ("arping", &[]), ("fping", &[]), ("resolvectl", &["query"]),
    ("getent", &["hosts", "ahosts", "ahostsv4", "ahostsv6"]),
    // URLs and remotes.
    ("curl", &[]), ("wget", &[]), ("http", &[]), ("https", &[]), ("xh", &[]), ("aria2c", &[]),
    ("git", &["ls-remote", "clone", "fetch", "pull", "archive", "submodule"]),
    // Registries, asked about a package by name.
    ("npm", &["view", "v", "info", "show", "search", "s", "find", "install", "i", "add", "pack", "exec", "x", "dist-tag"]),
    ("pnpm", &["view", "info", "add", "install", "i", "dlx", "exec", "search"]),
    ("yarn", &["info", "add", "dlx", "npm"]),
    ("bun", &["add", "install", "i", "x"]),
    ("npx", &[]), ("pnpx", &[]), ("bunx", &[]),
    ("pip", &["download", "install", "index"]), ("pip3", &["download", "install", "index"]),
    ("uv", &["pip", "add", "tool"]), ("pipx", &["install", "run"]),
    ("cargo", &["install", "search", "add"]), ("go", &["get", "install"]), ("gem", &["install", "fetch", "search"]),
    ("docker", &["pull", "search", "login"]), ("podman", &["pull", "search", "login"]),
];

/// agentsh's own subcommands that only read: allowed through the gate. Every other one changes
/// agentsh's policy or answers its prompts, which only a person may do.
pub static SELF_READ_ONLY: &[&str] = &[
    "check",
    "log",
    "stats",
    "policy",
    "status",
    "doctor",
    "help",
    "--help",
    "-h",
    "--version",
    "-V",
    "approvals-json",
];
/// `agentsh whitelist` subcommands that only read.
pub static SELF_WHITELIST_READ_ONLY: &[&str] = &["list", "ls"];

/// Directories a build makes again: deleting them recursively is moderate, not high
/// (issue 16 §6). Named only as themselves in the working directory (`build`, `./build/`).
pub static BUILD_OUTPUT_DIRS: &[&str] = &["build", "dist", "target", "node_modules", "__pycache__"];

/// Short options whose value is the rest of their flag cluster, per program: letters after
/// one of these are its value, not flags (`git status -uno`, `git log -Sfoo`). Programs not
/// listed read every letter of a cluster as a flag, the cautious reading.
#[rustfmt::skip]
pub static CLUSTER_VALUE_LETTERS: &[(&str, &str)] = &[
    // status/commit -u<mode>, log -S<string> -G<regex> -L<range>.
    ("git", "uSGL"),
];

pub fn cluster_value_letters(program: &str) -> &'static str {
    CLUSTER_VALUE_LETTERS.iter().find(|(p, _)| *p == program).map_or("", |(_, l)| l)
}

/// Short flags that only print a version, per program. `--version` and `--help` alone mean
/// that for every program in the table; a short flag only for the programs listed, since
/// `-v`, `-V` and `-h` mean other things elsewhere (`python -v` reads code, `shutdown -h`
/// halts). Issue 16 §6: `node -v`, `gcc --version` asked.
#[rustfmt::skip]
pub static SHORT_VERSION_FLAGS: &[(&[&str], &[&str])] = &[
    (&["node", "nodejs", "npm", "pnpm", "yarn", "bun", "gcc", "g++", "clang", "clang++"], &["-v"]),
    (&["python", "python2", "python3", "pip", "pip3", "rustc", "cargo", "rustup"], &["-V"]),
    (&["make", "gmake"], &["-v"]),
];

/// Whether a known program's arguments only ask for its version or help (`gcc --version`,
/// `node -v`): one or more such flags and nothing else.
pub fn version_query<'a>(name: &str, mut words: impl Iterator<Item = &'a str>) -> bool {
    let short: &[&str] = SHORT_VERSION_FLAGS.iter().find(|(n, _)| n.contains(&name)).map_or(&[], |(_, f)| f);
    let mut any = false;
    words.all(|w| {
        any = true;
        matches!(w, "--version" | "--help") || short.contains(&w)
    }) && any
}

/// Programs that are known, for the "unknown program" fallback.
pub fn find_program(name: &str) -> Option<&'static Program> {
    // Later entries refine earlier ones (e.g. `sort` appears in the big read-only row and again
    // with its `-o` check): the last definition wins.
    let exact = program_named;
    exact(name)
        // `mkfs.ext4` is `mkfs`, `python3.12` is `python3`, `pip3.11` is `pip3`.
        .or_else(|| name.split_once('.').and_then(|(stem, _)| exact(stem)))
        .or_else(|| exact(name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')))
}

/// Whether the rules can forbid a command of the program `name` (the programs `raw_scan` judges
/// when it finds them in the raw text): those whose base risk or one of whose checks is
/// forbidden, looked up as `find_program` does (`mkfs.ext4` is `mkfs`).
pub fn may_be_forbidden(name: &str) -> bool {
    let known = |n: &str| FORBIDDING.binary_search(&n).is_ok();
    // Most words are ruled out by their first byte, as `raw_scan` asks about every word.
    if !name.as_bytes().first().is_some_and(|b| FORBIDDING_FIRST[usize::from(*b)]) {
        return false;
    }
    known(name)
        || (name.contains('.') && name.split_once('.').is_some_and(|(stem, _)| known(stem)))
        || (name.ends_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
            && known(name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')))
}

/// The programs whose base risk or one of whose checks is forbidden, sorted: what
/// [`may_be_forbidden`] knows. A test keeps it the same as the table's.
#[rustfmt::skip]
pub const FORBIDDING: &[&str] = &[
    "blkdiscard", "btrfs", "cfdisk", "chattr", "chgrp", "chmod", "chown", "cp", "cryptsetup", "dd", "e2fsck",
    "fdisk", "find", "fsck", "gdisk", "hdparm", "install", "losetup", "lvm", "lvremove", "mdadm", "mkdir",
    "mkdosfs", "mke2fs", "mkfifo", "mkfs", "mknod", "mkswap", "mount", "mv", "newfs", "parted", "pvremove",
    "rename", "resize2fs", "rm", "rsync", "setfacl", "sfdisk", "sgdisk", "shred", "srm", "swapoff", "swapon",
    "tee", "touch", "truncate", "tune2fs", "umount", "vgremove", "wipe", "wipefs", "zfs", "zpool",
];

/// The first bytes of [`FORBIDDING`]'s names.
const FORBIDDING_FIRST: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < FORBIDDING.len() {
        table[FORBIDDING[i].as_bytes()[0] as usize] = true;
        i += 1;
    }
    table
};

/// The last program in the table that lists exactly this name. A walk through the table costs
/// about 4,000 instructions for an unknown name (and `find_program` tries three): fine for a
/// command's few lookups, most of the cost of a thousand custom rules with examples
/// (docs/BENCHMARKS.md). After the first few lookups in a process, a sorted index is built.
fn program_named(name: &str) -> Option<&'static Program> {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static INDEX: OnceLock<Vec<(&'static str, usize)>> = OnceLock::new();
    let index = match INDEX.get() {
        Some(index) => index,
        None if LOOKUPS.fetch_add(1, Ordering::Relaxed) < 64 => return program_named_by_walking(name),
        None => INDEX.get_or_init(program_index),
    };
    let at = index.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    Some(&PROGRAMS[index[at].1])
}

fn program_named_by_walking(name: &str) -> Option<&'static Program> {
    // The first byte before the rest: most names differ there, without a call to `memcmp`.
    let first = name.as_bytes().first();
    PROGRAMS.iter().rev().find(|p| p.names.iter().any(|n| n.as_bytes().first() == first && *n == name))
}

/// Every name once, sorted, with the last program that lists it.
fn program_index() -> Vec<(&'static str, usize)> {
    let mut all: Vec<(&'static str, usize)> =
        PROGRAMS.iter().enumerate().flat_map(|(i, p)| p.names.iter().map(move |n| (*n, i))).collect();
    all.sort_unstable();
    // Sorted by name, then place: of equal names keep the last (highest) place.
    all.reverse();
    all.dedup_by_key(|(n, _)| *n);
    all.reverse();
    all
}

pub fn find_wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.names.contains(&name))
}

/// rt7 B7: programs the table judges safe whose keys, on a terminal, run commands, signal the
/// person's processes or write files: their names, what the keys do, and the options that make
/// them take no keys. With no box and a terminal the command may read keys from, they need a
/// person (`escapes::keyed`). `less` is not here: with no box agentsh runs it in its secure mode
/// (`run::pagers`), and so every pager that is less (`man`'s, `journalctl`'s, git's).
#[rustfmt::skip]
pub static KEYED: &[(&[&str], &str, &[&str])] = &[
    (&["more"], "its `!` runs a shell command, its `v` an editor", &[]),
    (&["top"], "its `k` signals any of the person's processes, `r` renices them", &["-b", "--batch"]),
    (&["htop"], "its `k` signals any of the person's processes, `s` traces one, `l` lists its files", &[]),
    (&["ncdu"], "its `b` opens a shell, `d` deletes files", &["-o"]),
    (&["info"], "it opens any file, and prints through the command INFO_PRINT_COMMAND names", &[]),
];

/// rt8 C4: the programs that page what they show through less (or `$PAGER`) on a terminal, whose
/// keys then run commands (`!`, `|`, `v`) unless less is in its secure mode: asked on a terminal
/// with no box where agentsh does not give the command that mode (`escapes::keyed`). The options
/// that keep each from paging, as in [`KEYED`].
#[rustfmt::skip]
pub static PAGING: &[(&[&str], &[&str])] = &[
    (&["less", "zless", "most", "pg"], &[]),
    (&["man", "journalctl", "systemctl", "bat", "batcat", "delta"], &["--no-pager", "-P"]),
    (&["git"], &["--no-pager", "-P"]),
];

/// Issue 16, §4: for every program the table judges safe, the options (from its manual) that
/// write a file or run another program. An empty list is a review that found none. A test
/// walks the table (`every_safe_program_has_its_options_reviewed`), so no safe program is left
/// unreviewed; `assess` asks about any of these options (`writing_or_running_option`).
/// (`printf -v` and `wait -p` only set a variable; a subscript in its name is code, judged by
/// `assess::late_code`.)
#[rustfmt::skip]
pub static OPTION_REVIEW: &[(&str, &[&str])] = &[
    (":", &[]), ("[", &[]), ("true", &[]), ("false", &[]), ("test", &[]), ("break", &[]), ("continue", &[]),
    ("exit", &[]), ("return", &[]), ("shift", &[]), ("times", &[]), ("getopts", &[]), ("wait", &[]),
    ("jobs", &[]), ("cd", &[]), ("pushd", &[]), ("popd", &[]), ("dirs", &[]), ("pwd", &[]), ("type", &[]),
    ("which", &[]), ("whereis", &[]), ("help", &[]), ("apropos", &[]), ("whatis", &[]),
    ("set", &[]), ("unset", &[]), ("export", &[]), ("local", &[]), ("declare", &[]), ("typeset", &[]),
    ("readonly", &[]), ("let", &[]), ("read", &[]), ("mapfile", &["-C"]), ("readarray", &["-C"]),
    ("hash", &["-p"]), ("fc", &["-e", "-s"]), ("history", &["-w", "-a", "-r", "-n", "-c", "-d", "-s"]),
    ("ulimit", &[]), ("umask", &[]), ("stty", &[]), ("tput", &[]), ("clear", &[]), ("tty", &[]),
    ("ls", &[]), ("ll", &[]), ("la", &[]), ("dir", &[]), ("vdir", &[]), ("exa", &[]), ("eza", &[]),
    ("tree", &["-o"]), ("cat", &[]), ("tac", &[]), ("head", &[]), ("tail", &[]), ("nl", &[]),
    ("less", &["-o", "-O", "--log-file", "--LOG-FILE", "--lesskey-file", "-k", "--lesskey-src", "--lesskey-content"]),
    ("more", &[]),
    ("zless", &["-o", "-O", "--log-file", "--LOG-FILE"]),
    ("bat", &["--pager"]), ("batcat", &["--pager"]), ("delta", &["--pager"]),
    ("man", &["-P", "--pager", "-H", "--html"]), ("info", &["-o", "--output"]),
    ("wc", &["--files0-from"]), ("cut", &[]), ("paste", &[]), ("rev", &[]), ("fold", &[]), ("fmt", &[]),
    ("expand", &[]), ("unexpand", &[]), ("join", &[]), ("comm", &[]), ("column", &[]), ("tr", &[]),
    ("seq", &[]), ("numfmt", &[]), ("factor", &[]), ("expr", &[]), ("bc", &[]), ("dc", &[]), ("yes", &[]),
    ("sleep", &[]), ("echo", &[]), ("printf", &[]), ("basename", &[]), ("dirname", &[]),
    ("realpath", &[]), ("readlink", &[]), ("stat", &[]), ("file", &["-C", "--compile"]), ("du", &[]),
    ("df", &[]), ("diff", &[]), ("cmp", &[]), ("md5sum", &[]), ("sha1sum", &[]), ("sha224sum", &[]),
    ("sha256sum", &[]), ("sha384sum", &[]), ("sha512sum", &[]), ("b2sum", &[]), ("cksum", &[]), ("sum", &[]),
    ("base32", &[]), ("base64", &[]), ("od", &[]), ("hexdump", &[]), ("xxd", &[]), ("strings", &[]),
    ("sort", &["-o", "--output", "--compress-program"]), ("uniq", &[]), ("shuf", &["-o", "--output"]),
    ("tsort", &[]), ("ptx", &[]), ("look", &[]), ("csvlook", &[]),
    ("grep", &["--pre"]), ("egrep", &[]), ("fgrep", &[]), ("zgrep", &[]), ("rg", &["--pre"]),
    ("ag", &["--pager"]), ("ack", &["--pager"]),
    // find's -exec, -execdir, -ok and -okdir are judged as the command they run (`assess`).
    ("find", &["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]),
    ("fd", &["-x", "-X", "--exec", "--exec-batch"]), ("fdfind", &["-x", "-X", "--exec", "--exec-batch"]),
    ("fzf", &["--preview", "--bind", "--listen"]), ("jq", &[]), ("yq", &["-i", "--inplace"]),
    ("sed", &["-i", "--in-place", "-f", "--file"]), ("gsed", &["-i", "--in-place", "-f", "--file"]),
    // And every option but a few that only set how text is read (`assess::awk_code_elsewhere`).
    ("awk", &["-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec", "-W"]),
    ("gawk", &["-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec", "-W"]),
    ("mawk", &["-f", "-W"]), ("nawk", &["-f"]),
    ("zcat", &[]), ("bzcat", &[]), ("xzcat", &[]), ("zstdcat", &[]),
    ("cloc", &["--out", "--report-file", "--script-lang", "--force-lang-def", "--read-lang-def"]),
    ("tokei", &[]), ("ncdu", &["-o"]), ("mktemp", &[]),
    ("nm", &[]), ("objdump", &[]), ("readelf", &[]), ("size", &[]),
    // `ldd` may run the program it inspects (glibc's ldd sets LD_TRACE_LOADED_OBJECTS and execs it).
    ("ldd", &["*"]),
    ("id", &[]), ("whoami", &[]), ("groups", &[]), ("uname", &[]), ("arch", &[]), ("nproc", &[]),
    ("getconf", &[]), ("locale", &[]), ("printenv", &[]), ("env-check", &[]), ("cal", &[]), ("date", &["-s", "--set"]),
    ("hostname", &[]), ("hostnamectl", &[]), ("uptime", &[]), ("w", &[]), ("who", &[]), ("last", &[]),
    ("ps", &[]), ("pgrep", &[]), ("pidof", &[]), ("top", &[]), ("htop", &[]), ("free", &[]), ("vmstat", &[]),
    ("iostat", &[]), ("lsof", &[]), ("lsblk", &[]), ("lscpu", &[]), ("lsusb", &[]), ("lspci", &[]),
    ("findmnt", &[]), ("dmesg", &["-C", "--clear", "-c", "--read-clear", "-n", "--console-level", "-D", "-E"]),
    ("journalctl", &["--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush", "--sync", "--relinquish-var"]),
    ("ip", &[]), ("ifconfig", &[]), ("iwconfig", &[]), ("route", &[]), ("arp", &["-s", "-d", "-f"]),
    ("brctl", &[]), ("tc", &[]), ("ethtool", &["-s", "-K", "-A", "-G", "-E", "-f", "--flash"]),
    ("ping", &[]), ("ping6", &[]), ("nslookup", &[]), ("dig", &["-f"]), ("host", &[]), ("netstat", &[]),
    ("ss", &["-K", "--kill"]), ("traceroute", &[]), ("tracepath", &[]), ("mtr", &[]), ("whois", &[]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_index_finds_what_walking_the_table_finds() {
        let index = program_index();
        let lookup = |name: &str| index.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|at| &PROGRAMS[index[at].1]);
        let mut names: Vec<&str> = PROGRAMS.iter().flat_map(|p| p.names.iter().copied()).collect();
        names.extend(["", "prog1", "zzz", "a", "sortx", "mkfs.ext4", "python3.12"]);
        for name in names {
            let walked = program_named_by_walking(name);
            assert_eq!(lookup(name).map(|p| p as *const Program), walked.map(|p| p as *const Program), "{name}");
        }
        // Names listed twice (e.g. `sort`) go to the later row, as walking from the end does.
        let twice = PROGRAMS
            .iter()
            .flat_map(|p| p.names.iter())
            .filter(|n| PROGRAMS.iter().filter(|p| p.names.contains(n)).count() > 1);
        assert!(twice.count() > 0, "the table should have a refined name to test");
        // And through the public function, before and after the index exists.
        for _ in 0..100 {
            assert_eq!(find_program("sort").map(|p| p.why), program_named_by_walking("sort").map(|p| p.why));
            assert!(find_program("prog12345").is_none());
        }
    }

    /// Issue 16, §4: no program the table judges safe is left without a review of its options
    /// that write files or run programs.
    #[test]
    fn every_safe_program_has_its_options_reviewed() {
        let mut missing: Vec<&str> = PROGRAMS
            .iter()
            .filter(|p| p.risk == Safe)
            .flat_map(|p| p.names.iter().copied())
            .filter(|n| !OPTION_REVIEW.iter().any(|(r, _)| r == n))
            .collect();
        missing.sort();
        missing.dedup();
        assert!(missing.is_empty(), "safe programs with no OPTION_REVIEW entry: {missing:?}");
    }
}

#[cfg(test)]
mod forbidding_tests {
    use super::*;

    /// `FORBIDDING` lists exactly the programs the table can forbid, sorted (for its binary search).
    #[test]
    fn forbidding_is_the_tables_list() {
        let forbidding = |p: &Program| p.risk == Forbidden || p.checks.iter().any(|c| c.risk == Forbidden);
        let mut names: Vec<&str> =
            PROGRAMS.iter().filter(|p| forbidding(p)).flat_map(|p| p.names.iter().copied()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(FORBIDDING, names.as_slice(), "rules::FORBIDDING: write it as {names:?}");
    }
}
