//! The environment a boxed command gets: the agent's, less its secrets and the addresses of
//! the person's sockets (issue 25: `printenv | grep KEY` read the agent's API keys). Names the
//! person lists in `sandbox.passEnv` are kept.
//!
//! Removed (names compared without case, split into words at every character that is not a
//! letter or digit: `npm_config__authToken` is `NPM CONFIG AUTHTOKEN`):
//! - by name ([`secret`]): a word that names a secret ([`SECRET_WORDS`]: `KEY`, `TOKEN`,
//!   `SECRET`, `PASS`, `PASSWORD`, `PWD`, `AUTH`, `SESSION`, `JWT`, `DSN`, `WEBHOOK`, ...), a
//!   name that contains `PASSWORD`, `PASSWD`, `SECRET`, `APIKEY`, `AUTHTOKEN` or
//!   `CONNECTION_STRING`, `AWS_*`, `GIT_CONFIG_*` (settings given in the environment can carry
//!   headers; `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM`, which only name files, stay),
//!   `OP_SESSION_*`; but `PWD`, `OLDPWD`, `XDG_SESSION_*` and the git identity stay
//!   (`GIT_AUTHOR_*`: `AUTHOR` is not `AUTH`);
//! - by value ([`secret_value`]), whatever the name: a URL with a password in it
//!   (`postgres://u:pass@host`), a private key, a JSON web token, or a token in a well-known
//!   form (`ghp_`, `github_pat_`, `glpat-`, `sk-`, `xoxb-`, `AKIA...`, `AIza...`, `hf_`, `npm_`);
//! - the addresses of sockets and sessions outside the box: [`SOCKETS`];
//! - credential files named by the environment: [`CREDENTIAL_FILES`].
//!
//! `TMPDIR` is set to `/tmp` (the box's own) when it names anything else.

/// Words of a variable's name that mark it as a secret (see the module's comment).
pub const SECRET_WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "AUTHTOKEN",
    "SECRET",
    "SECRETS",
    "PASS",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "SSHPASS",
    "PWD",
    "PAT",
    "AUTH",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "SESSION",
    "COOKIE",
    "JWT",
    "DSN",
    "WEBHOOK",
    "CONNSTR",
];

/// Variables that point at the person's sockets, agents and sessions.
pub const SOCKETS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "KRB5CCNAME",
    "VSCODE_IPC_HOOK",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "VSCODE_GIT_ASKPASS_NODE",
    "VSCODE_GIT_ASKPASS_MAIN",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "JUPYTER_TOKEN",
];

/// Variables that name a credential file.
pub const CREDENTIAL_FILES: &[&str] =
    &["GOOGLE_APPLICATION_CREDENTIALS", "KUBECONFIG", "NETRC", "PGPASSFILE", "DOCKER_CONFIG", "NPM_CONFIG_USERCONFIG"];

/// Whether `name` holds a secret or points outside the box.
pub fn secret(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    // The working directory, the login session's kind, and where git's files are (paths, not
    // settings).
    let kept = ["PWD", "OLDPWD", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"];
    if kept.contains(&up.as_str()) || up.starts_with("XDG_SESSION_") {
        return false;
    }
    let word = up.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| SECRET_WORDS.contains(&w));
    let has = ["PASSWORD", "PASSWD", "SECRET", "APIKEY", "API_KEY", "AUTHTOKEN", "ACCESS_KEY", "PRIVATE_KEY"]
        .iter()
        .any(|s| up.contains(s))
        || up.contains("CONNECTION_STRING");
    let starts = ["AWS_", "GIT_CONFIG_", "OP_SESSION_"].iter().any(|p| up.starts_with(p));
    word || has || starts || SOCKETS.contains(&up.as_str()) || CREDENTIAL_FILES.contains(&up.as_str())
}

/// Whether `value` looks like a secret whatever its variable is called: a URL that carries a
/// password, a private key, a JSON web token, or a token in a form its issuer documents.
pub fn secret_value(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    // scheme://user:password@host
    if let Some(at) = find(v, b"://") {
        let rest = &v[at + 3..];
        let auth_end = rest.iter().position(|&c| c == b'/' || c == b'?' || c == b'#').unwrap_or(rest.len());
        let authority = &rest[..auth_end];
        let userinfo = authority.iter().rposition(|&c| c == b'@').map(|i| &authority[..i]);
        if userinfo.is_some_and(|u| u.iter().position(|&c| c == b':').is_some_and(|i| i + 1 < u.len())) {
            return true;
        }
    }
    if find(v, b"-----BEGIN").is_some() && find(v, b"PRIVATE KEY").is_some() {
        return true;
    }
    let token = |prefix: &[u8], min: usize| {
        v.starts_with(prefix)
            && v.len() >= prefix.len() + min
            && v[prefix.len()..].iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
    };
    let issued = [
        (&b"ghp_"[..], 20),
        (b"gho_", 20),
        (b"ghu_", 20),
        (b"ghs_", 20),
        (b"ghr_", 20),
        (b"github_pat_", 20),
        (b"glpat-", 16),
        (b"sk-", 20),
        (b"xoxb-", 10),
        (b"xoxp-", 10),
        (b"xoxa-", 10),
        (b"xoxs-", 10),
        (b"hf_", 20),
        (b"npm_", 20),
        (b"AIza", 30),
    ]
    .iter()
    .any(|(p, min)| token(p, *min));
    let aws = (v.starts_with(b"AKIA") || v.starts_with(b"ASIA"))
        && v.len() == 20
        && v.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    // header.payload.signature, each base64url; the header of every JWT starts `{"` = `eyJ`.
    let jwt = v.starts_with(b"eyJ")
        && v.iter().filter(|&&c| c == b'.').count() == 2
        && v.len() >= 30
        && v.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'='));
    issued || aws || jwt
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The environment for the box: `vars` (the agent's) less what [`secret`] names, but for
/// `pass` (`sandbox.passEnv`), with `TMPDIR` the box's own.
pub fn scrub<I>(vars: I, pass: &[String]) -> Vec<(std::ffi::OsString, std::ffi::OsString)>
where
    I: IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
{
    vars.into_iter()
        .filter(|(k, v)| {
            let k = k.to_string_lossy();
            pass.iter().any(|p| p == &*k) || !(secret(&k) || secret_value(v.as_encoded_bytes()))
        })
        .map(|(k, v)| if k == "TMPDIR" && v != "/tmp" { (k, "/tmp".into()) } else { (k, v) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_sockets_are_removed_and_the_rest_kept() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "DB_PASSWORD",
            "MYSQL_PWD_SECRET",
            "STRIPE_SECRET_KEY",
            "SSH_AUTH_SOCK",
            "DOCKER_HOST",
            "DBUS_SESSION_BUS_ADDRESS",
            "TMUX",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "gh_token",
            "HF_TOKEN",
            "KAGGLE_KEY",
            // Found by a red team (issue 25): unlock sessions, database and mail passwords,
            // npm's and git's settings, and tokens under names without the usual endings.
            "BW_SESSION",
            "OP_SESSION_myacct",
            "MYSQL_PWD",
            "SSHPASS",
            "REDIS_PASS",
            "SMTP_PASS",
            "npm_config__authToken",
            "npm_config_//registry.npmjs.org/:_authToken",
            "AZURE_STORAGE_CONNECTION_STRING",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_VALUE_0",
            "OPENAI_APIKEY",
            "CI_JOB_JWT",
            "GITHUB_TOKEN_2",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
        ] {
            assert!(secret(name), "{name} kept");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "CARGO_HOME",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
            "GOPATH",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_CONFIG_GLOBAL",
            "XDG_SESSION_TYPE",
            "DATABASE_URL",
            "NODE_ENV",
            "RUST_LOG",
        ] {
            assert!(!secret(name), "{name} removed");
        }
    }

    #[test]
    fn a_secret_is_known_by_its_value_whatever_its_name() {
        for value in [
            "postgres://app:DBPASS@db.internal:5432/app",
            "https://__token__:pypi-AgEIcHlwaS5vcmc@upload.pypi.org/legacy/",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            "xoxb-1234567890-abcdefghij",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----",
        ] {
            assert!(secret_value(value.as_bytes()), "{value} kept");
        }
        for value in [
            "/usr/local/bin:/usr/bin:/bin",
            "postgres://localhost/app",
            "https://user@example.com/repo.git",
            "http://127.0.0.1:43128",
            "sk-short",
            "skeleton-key-of-the-castle",
            "en_US.UTF-8",
            "eyJustAWord",
        ] {
            assert!(!secret_value(value.as_bytes()), "{value} removed");
        }
    }

    #[test]
    fn pass_env_keeps_a_named_secret_and_tmpdir_is_the_boxs() {
        let vars = [("GITHUB_TOKEN", "t"), ("NPM_TOKEN", "n"), ("PATH", "/usr/bin"), ("TMPDIR", "/home/u/tmp")]
            .map(|(k, v)| (k.into(), v.into()));
        let out = scrub(vars, &["GITHUB_TOKEN".to_string()]);
        let names: Vec<_> =
            out.iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect();
        assert_eq!(
            names,
            [("GITHUB_TOKEN".into(), "t".into()), ("PATH".into(), "/usr/bin".into()), ("TMPDIR".into(), "/tmp".into())]
        );
    }
}
