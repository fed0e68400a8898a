//! The environment scrub (run/sandbox/environ.rs): it runs on every variable of every boxed
//! command. 60 variables as an agent's environment has them, two of them secrets.
//! Run with `cargo bench --bench scrub`; never part of CI (see docs/BENCHMARKS.md).

use agentsh::run::sandbox::environ;
use criterion::{Criterion, criterion_group, criterion_main};
use std::ffi::OsString;

fn scrub(c: &mut Criterion) {
    let vars = vars();
    c.bench_function("scrub/60", |b| {
        b.iter_batched(|| vars.clone(), |v| environ::scrub(v, &[]), criterion::BatchSize::SmallInput)
    });
}

fn vars() -> Vec<(OsString, OsString)> {
    let mut v: Vec<(String, String)> = [
        ("PATH", "/home/u/.cargo/bin:/home/u/.local/bin:/home/u/.nvm/versions/node/v22.11.0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
        ("HOME", "/home/u"),
        ("LANG", "en_US.UTF-8"),
        ("TERM", "xterm-256color"),
        ("SHELL", "/bin/bash"),
        ("USER", "u"),
        ("PWD", "/home/u/src/project"),
        ("OLDPWD", "/home/u"),
        ("LS_COLORS", "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:mi=00:su=37;41:sg=30;43:ca=00:tw=30;42:ow=34;42:st=37;44:ex=01;32:*.tar=01;31:*.tgz=01;31"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"),
        ("GITHUB_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
        ("CARGO_HOME", "/home/u/.cargo"),
        ("RUSTUP_HOME", "/home/u/.rustup"),
        ("NVM_DIR", "/home/u/.nvm"),
        ("EDITOR", "vim"),
        ("GIT_AUTHOR_NAME", "Ann Example"),
        ("GIT_AUTHOR_EMAIL", "ann@example.com"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.123"),
        ("DATABASE_URL", "postgres://localhost/app"),
        ("NODE_ENV", "development"),
        ("RUST_LOG", "info"),
        ("XDG_SESSION_TYPE", "tty"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ("CLAUDECODE", "1"),
        ("CLAUDE_CODE_ENTRYPOINT", "cli"),
        ("COLORTERM", "truecolor"),
        ("LESSOPEN", "| /usr/bin/lesspipe %s"),
        ("MANPATH", "/home/u/.nvm/versions/node/v22.11.0/share/man:/usr/share/man"),
        ("SHLVL", "2"),
        ("_", "/usr/bin/env"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut i = 0;
    while v.len() < 60 {
        v.push((format!("PROJECT_SETTING_{i}"), format!("/home/u/src/project/config/value-{i}.toml")));
        i += 1;
    }
    v.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
}

criterion_group!(benches, scrub);
criterion_main!(benches);
