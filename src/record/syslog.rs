//! One line per decision to the local syslog socket (journald or rsyslog), in sudo's style, so
//! a fleet ships the trail through the logging it already runs. It formats and sends; whether
//! to send is the audit module's call. Reaching syslog is best effort: a failure is a warning.

use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::Path;

/// The local syslog socket on Linux.
pub const SOCKET: &str = "/dev/log";
/// Facility authpriv (10), as sudo uses: security messages, readable by administrators only.
const AUTHPRIV: u8 = 10 << 3;
const WARNING: u8 = 4;
const NOTICE: u8 = 5;
/// rsyslog's default limit is 8 KiB per message; long commands are cut well before it.
const MAX_VALUE: usize = 2000;

/// `<PRI>agentsh[PID]: USER : TTY=pts/1 ; PWD=/x ; KEY=value ; ...` (RFC 3164 without the
/// timestamp and host, as the local socket accepts; the daemon stamps both on receipt).
/// Refusals are logged at warning, runs at notice.
pub fn message(refused: bool, pid: u32, user: &str, tty: &str, cwd: &str, fields: &[(&str, String)]) -> String {
    let pri = AUTHPRIV | if refused { WARNING } else { NOTICE };
    let tty = tty.strip_prefix("/dev/").unwrap_or(tty);
    let mut msg = format!("<{pri}>agentsh[{pid}]: {} : TTY={} ; PWD={}", value(user), value(tty), value(cwd));
    for (key, v) in fields {
        msg.push_str(&format!(" ; {key}={}", value(v)));
    }
    msg
}

fn value(text: &str) -> String {
    crate::text::sanitize::clip(text, MAX_VALUE)
}

/// Sends one datagram to the syslog socket at `socket`.
pub fn send(socket: &Path, msg: &str) -> io::Result<()> {
    UnixDatagram::unbound()?.send_to(msg.as_bytes(), socket).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_sudo() {
        let m = message(
            true,
            42,
            "alice",
            "/dev/pts/1",
            "/work",
            &[("DECISION", "deny".into()), ("RISK", "forbidden".into()), ("COMMAND", "rm -rf /\x1b[2J".into())],
        );
        assert_eq!(
            m,
            "<84>agentsh[42]: alice : TTY=pts/1 ; PWD=/work ; DECISION=deny ; RISK=forbidden ; COMMAND=rm -rf /\\x1b[2J"
        );
        assert!(message(false, 1, "u", "none", "/", &[]).starts_with("<85>agentsh[1]: u : TTY=none"));
        let long = message(false, 1, "u", "none", "/", &[("COMMAND", "x".repeat(5000))]);
        assert!(long.len() < 2100 && long.ends_with("x…"), "{}", long.len());
    }

    #[test]
    fn sends_one_datagram() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let server = UnixDatagram::bind(&path).unwrap();
        send(&path, "<85>agentsh[1]: hello").unwrap();
        let mut buf = [0u8; 100];
        let n = server.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"<85>agentsh[1]: hello");
        assert!(send(&dir.path().join("missing"), "x").is_err());
    }
}
