//! The environment a boxed command gets: the agent's, less its secrets and the addresses of
//! the person's sockets (issue 25: `printenv | grep KEY` read the agent's API keys). Names the
//! person lists in `sandbox.passEnv` are kept.
//!
//! Removed (names compared without case):
//! - anything ending in `_KEY`, `_TOKEN`, `_SECRET`, `_PAT` or `_CREDENTIALS`, containing
//!   `PASSWORD`, `PASSWD`, `SECRET_` or `API_KEY`, or starting with `AWS_`;
//! - the addresses of sockets and sessions outside the box: [`SOCKETS`];
//! - credential files named by the environment: [`CREDENTIAL_FILES`].
//!
//! `TMPDIR` is set to `/tmp` (the box's own) when it names anything else.

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
    let ends = ["_KEY", "_TOKEN", "_SECRET", "_PAT", "_CREDENTIALS", "_CREDENTIAL"].iter().any(|s| up.ends_with(s));
    let has = ["PASSWORD", "PASSWD", "SECRET_", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY"].iter().any(|s| up.contains(s));
    ends || has
        || up.starts_with("AWS_")
        || up == "TOKEN"
        || SOCKETS.contains(&up.as_str())
        || CREDENTIAL_FILES.contains(&up.as_str())
}

/// The environment for the box: `vars` (the agent's) less what [`secret`] names, but for
/// `pass` (`sandbox.passEnv`), with `TMPDIR` the box's own.
pub fn scrub<I>(vars: I, pass: &[String]) -> Vec<(std::ffi::OsString, std::ffi::OsString)>
where
    I: IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
{
    vars.into_iter()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            pass.iter().any(|p| p == &*k) || !secret(&k)
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
        ] {
            assert!(secret(name), "{name} kept");
        }
        for name in
            ["PATH", "HOME", "LANG", "TERM", "CARGO_HOME", "KEYBOARD", "TOKENIZERS_PARALLELISM", "GOPATH", "PWD"]
        {
            assert!(!secret(name), "{name} removed");
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
