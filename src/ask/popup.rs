//! agentsh's prompt in a tmux popup on the person's tmux client (issue 24): where the agent runs
//! inside the person's tmux and has no terminal to ask on (a headless agent, a hook), a request
//! waiting in the queue is shown over the agent's pane with `tmux display-popup`, running
//! `agentsh approvals --request ID`. Keys typed there go to that agentsh, not to the agent, and
//! the popup closes when the request is answered anywhere or ends. It owns finding the client and
//! opening the popup; it must not judge or decide what an answer means (the queue does).
//!
//! The tmux server is the one in `$TMUX` (set for every program started in a tmux pane), the
//! client the most recently active one attached to the session of `$TMUX_PANE`, else the most
//! recently active one of that server. With no client attached there is nothing to draw on.
//! The popup's terminal is a pty tmux holds, so `agentsh approvals` there accepts it as the
//! person's (`terminal_owner`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The person's tmux client to draw on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Client {
    /// The server's socket, from `$TMUX`.
    pub socket: PathBuf,
    /// The client's name (its terminal), from `tmux list-clients`.
    pub name: String,
}

/// The socket of `$TMUX` ("/tmp/tmux-1000/default,1234,0"): everything before the last two
/// commas (a socket path may itself hold a comma).
pub fn socket(tmux: &str) -> Option<PathBuf> {
    let mut parts = tmux.rsplitn(3, ',');
    let (_, _, path) = (parts.next()?, parts.next()?, parts.next()?);
    path.starts_with('/').then(|| PathBuf::from(path))
}

/// The client to draw on, from `tmux list-clients -F '#{client_activity} #{client_session}
/// #{client_name}'`: the most recently active one on `session`, else on any session.
pub fn pick(listing: &str, session: Option<&str>) -> Option<String> {
    let clients: Vec<(u64, &str, &str)> = listing
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            Some((f.next()?.parse().ok()?, f.next()?, f.next()?))
        })
        .filter(|(_, _, name)| !name.is_empty())
        .collect();
    let newest = |on: &dyn Fn(&str) -> bool| {
        clients.iter().filter(|(_, s, _)| on(s)).max_by_key(|(t, _, _)| *t).map(|(_, _, n)| n.to_string())
    };
    session.and_then(|s| newest(&|c| c == s)).or_else(|| newest(&|_| true))
}

fn tmux(socket: &PathBuf, args: &[&str]) -> Option<String> {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The person's tmux client, when this process runs inside their tmux and a client is attached.
pub fn client() -> Option<Client> {
    let socket = socket(&std::env::var("TMUX").ok()?)?;
    let session = std::env::var("TMUX_PANE")
        .ok()
        .and_then(|pane| tmux(&socket, &["display-message", "-p", "-t", &pane, "#{session_name}"]))
        .map(|s| s.trim().to_string());
    let listing = tmux(&socket, &["list-clients", "-F", "#{client_activity} #{client_session} #{client_name}"])?;
    let name = pick(&listing, session.as_deref())?;
    Some(Client { socket, name })
}

/// The variables that place agentsh's directories, passed into the popup (tmux starts popups
/// with the server's environment, which may differ from the agent's).
const PLACES: &[&str] = &["HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "NO_COLOR"];

/// The popup: closed (killed) when dropped, if the person has not closed it.
pub struct Popup {
    child: Child,
}

impl Drop for Popup {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Opens `agentsh approvals --request ID` in a popup on `client`.
pub fn open(client: &Client, id: &str) -> std::io::Result<Popup> {
    let me = std::env::current_exe()?;
    let mut cmd = Command::new("tmux");
    cmd.arg("-S").arg(&client.socket).args(["display-popup", "-E", "-c", &client.name, "-w", "90%", "-h", "60%"]);
    cmd.args(["-T", " agentsh: a command waits for your approval "]);
    for name in PLACES {
        if let Some(v) = std::env::var_os(name).and_then(|v| v.into_string().ok()) {
            cmd.arg("-e").arg(format!("{name}={v}"));
        }
    }
    cmd.arg(me).args(["approvals", "--request", id]);
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    Ok(Popup { child })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_read_from_tmux() {
        assert_eq!(socket("/tmp/tmux-0/default,1234,0"), Some(PathBuf::from("/tmp/tmux-0/default")));
        assert_eq!(socket("/tmp/a,b/sock,1,2"), Some(PathBuf::from("/tmp/a,b/sock")));
        assert_eq!(socket("relative,1,2"), None);
        assert_eq!(socket(""), None);
        assert_eq!(socket("/tmp/x"), None);
    }

    #[test]
    fn the_client_is_the_newest_on_the_agents_session_else_the_newest_at_all() {
        let listing = "100 work /dev/pts/1\n300 other /dev/pts/2\n200 work /dev/pts/3\n";
        assert_eq!(pick(listing, Some("work")).as_deref(), Some("/dev/pts/3"));
        assert_eq!(pick(listing, Some("gone")).as_deref(), Some("/dev/pts/2"));
        assert_eq!(pick(listing, None).as_deref(), Some("/dev/pts/2"));
        assert_eq!(pick("", Some("work")), None, "no client attached: nothing to draw on");
        assert_eq!(pick("garbage\n", None), None);
    }
}
