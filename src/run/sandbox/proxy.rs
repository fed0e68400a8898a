//! The box's wire (issue 26): with `sandbox.network: "proxy"` (the default) the box has a
//! network of its own with nothing in it but its loopback, where agentsh's proxy listens: an
//! HTTP proxy (`CONNECT` and plain HTTP, on [`HTTP_PORT`]) and SOCKS5 (on [`SOCKS_PORT`], for git
//! over ssh and other TCP). The box's environment points every tool at them. So nothing leaves
//! the box but a TCP connection the proxy makes, to a host and port its policy allows:
//! - `sandbox.denyHosts` never;
//! - the package registries ([`REGISTRIES`]), the project's own git remotes and
//!   `sandbox.allowHosts`, on the web ports unless a port is named (a tunnel to port 80 only
//!   where `:80` is named: its `Host` is the box's);
//! - anything else asks the person, in agentsh's own channel (`agentsh approvals`), once for the
//!   command or always (saved to `sandbox.allowHosts`); with no one to ask it is refused, and the
//!   command is told which host after it ends;
//! - loopback and link-local addresses (services on the machine, cloud metadata) only where
//!   named explicitly, whatever a name resolves to.
//!
//! UDP, raw sockets and direct DNS do not exist in the box: names are resolved by the proxy.
//! Every connection is recorded in the audit log (host, port, bytes each way, decision) with
//! the command it came from, which the box's proxy settings name (`agentsh:<record id>` as the
//! proxy's user and password).
//!
//! A host with a configured credential (`sandbox.credentials`, user config only) gets it added
//! to each request on the way out, over HTTPS only, by ending the box's TLS with a certificate
//! of agentsh's own authority ([`super::tls`]; [`authority`] makes it and the box's bundle,
//! [`trust_environment`] points the box's tools at it). A plain-HTTP request to it is refused:
//! the credential would cross the network in cleartext, and come back to the box unmasked.
//!
//! Which host a request reaches is the one the proxy was asked for, not one the box names
//! inside (rt3 G2: behind a CDN's address, a name is a route): a plain-HTTP request's `Host` is
//! the URL's (one naming another is refused); a tunnel to port 80, raw plain HTTP, is opened
//! only where `sandbox.allowHosts` names the port; a tunnel to port 443 is relayed once its
//! ClientHello names its host (SNI).
//!
//! The proxy is a process of its own (`agentsh-proxy` in `ps`), outside the box, made by the
//! box's builder before the box's network exists and handed the listening sockets made in it;
//! it lives as long as the box's holder. It is fed untrusted bytes by everything in the box:
//! every read is bounded, a request's head (or SOCKS5 handshake) must come within
//! [`HEAD_TIME`], and each connection has its own thread and an idle limit, with at most
//! [`MAX_CONNECTIONS`] at once; more wait in the kernel's queue until one ends.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where the proxies listen on the box's loopback. Ports few programs use: the box's own
/// servers have the rest.
pub const HTTP_PORT: u16 = 43128;
pub const SOCKS_PORT: u16 = 41080;

/// The package registries every box may reach on the web ports: Cargo, npm and yarn, PyPI, Go
/// modules, Maven and Gradle, RubyGems, NuGet, and the Rust toolchain's downloads.
pub const REGISTRIES: &[&str] = &[
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "static.rust-lang.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "files.pythonhosted.org",
    "proxy.golang.org",
    "sum.golang.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "services.gradle.org",
    "downloads.gradle.org",
    "rubygems.org",
    "index.rubygems.org",
    "api.nuget.org",
];

/// More than this in a request's head is not a request.
const MAX_HEAD: usize = 64 * 1024;
/// The hosts one command may ask a person about.
const MAX_QUESTIONS: u32 = 5;
/// A connection that sends nothing for this long is closed.
const IDLE: Duration = Duration::from_secs(300);
/// A connection has this long to send its request's head (HTTP) or finish its handshake and
/// request (SOCKS5), however it drips the bytes: a client sends them at once.
const HEAD_TIME: Duration = Duration::from_secs(10);
/// Connections the proxy serves at once; more wait in the listeners' queue (the kernel's) until
/// one ends. Each holds a thread (a relayed one two) and up to eight descriptors (the two
/// sockets, a copy of each for the second thread, a pipe each way), and the proxy is outside the
/// box, so outside its process limit: 256 bounds it to about 513 threads and 2,100 descriptors
/// per box. Ordinary work stays well under it: npm opens at most 15 sockets a host, pnpm 16 to
/// 64 requests at once, cargo multiplexes over HTTP/2, pip and git one or a few.
pub const MAX_CONNECTIONS: usize = 256;
/// After an accept fails (out of descriptors, memory or threads), the listeners rest this long
/// rather than be polled again at once: a full accept queue stays readable, and the proxy would
/// spin a core.
const BACKOFF: Duration = Duration::from_millis(100);

/// How often the proxy takes its commands' registrations when no question has (`asking`).
const TAKE_EVERY: Duration = Duration::from_secs(1);

/// What the proxy allows, as the spec carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NetPolicy {
    /// `sandbox.allowHosts`.
    pub allow: Vec<String>,
    /// `sandbox.denyHosts`.
    pub deny: Vec<String>,
    /// The workspace's git directory: its remotes are allowed. `None` where a box could have
    /// written its config (a repository nested in another, `spec`).
    pub git_dir: Option<PathBuf>,
    /// Where the person's settings for asking are looked up (the workspace, or the cwd).
    pub workspace: PathBuf,
    /// Where refused connections are noted for the command that made them.
    pub records: PathBuf,
    /// `sandbox.credentials`: headers added on the way out (their values expanded by the proxy,
    /// from its own environment).
    #[serde(default)]
    pub credentials: Vec<crate::policy::sandbox_settings::Credential>,
}

/// A host pattern: `example.com`, `*.example.com` (its subdomains), an address, with `:port`
/// or `:*`; without a port, the web ports (80 and 443).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    host: Host,
    port: Port,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Host {
    Exact(String),
    Below(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Port {
    Web,
    One(u16),
    Any,
}

impl Pattern {
    pub fn parse(text: &str) -> Option<Pattern> {
        let text = text.trim().to_ascii_lowercase();
        // `[::1]:8080`, `[::1]`, `host:port`, `host`.
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (h, after) = rest.split_once(']')?;
            (h.to_string(), after.strip_prefix(':'))
        } else if text.matches(':').count() > 1 {
            (text.clone(), None)
        } else {
            match text.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (text.clone(), None),
            }
        };
        let port = match port {
            None => Port::Web,
            Some("*") => Port::Any,
            Some(p) => Port::One(p.parse().ok().filter(|p| *p > 0)?),
        };
        if host.is_empty() {
            return None;
        }
        let host = match host.strip_prefix("*.") {
            Some(rest) if !rest.is_empty() && !rest.contains('*') => Host::Below(rest.to_string()),
            Some(_) => return None,
            None if host.contains('*') => return None,
            None => Host::Exact(host),
        };
        Some(Pattern { host, port })
    }

    pub fn matches(&self, host: &str, port: u16) -> bool {
        let host_ok = match &self.host {
            Host::Exact(h) => h == host,
            Host::Below(h) => {
                host.len() > h.len() + 1
                    && host.ends_with(h.as_str())
                    && host.as_bytes()[host.len() - h.len() - 1] == b'.'
            }
        };
        let port_ok = match self.port {
            Port::Web => port == 80 || port == 443,
            Port::One(p) => p == port,
            Port::Any => true,
        };
        host_ok && port_ok
    }

    /// Whether the pattern names `port` of `host` in so many words (`:80`, or every port with
    /// `:*`), not as one of the web ports a bare host means.
    fn names_port(&self, host: &str, port: u16) -> bool {
        self.port != Port::Web && self.matches(host, port)
    }

    /// Whether the pattern names this machine itself (`localhost`, a loopback address): only
    /// such a pattern lets a connection reach a local address.
    fn local(&self) -> bool {
        match &self.host {
            Host::Exact(h) => h == "localhost" || h.parse::<IpAddr>().is_ok_and(|ip| local_address(&ip)),
            Host::Below(_) => false,
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            Host::Exact(h) if h.contains(':') => write!(f, "[{h}]")?,
            Host::Exact(h) => write!(f, "{h}")?,
            Host::Below(h) => write!(f, "*.{h}")?,
        }
        match self.port {
            Port::Web => Ok(()),
            Port::One(p) => write!(f, ":{p}"),
            Port::Any => write!(f, ":*"),
        }
    }
}

/// The project's git remotes as the proxy allows them (`policy`, `agentsh doctor`).
pub fn git_remotes(git_dir: &Path) -> Vec<String> {
    read_capped(&git_dir.join("config"), 1024 * 1024)
        .map(|text| remotes(&text).into_iter().filter(|r| !r.local()).map(|r| r.to_string()).collect())
        .unwrap_or_default()
}

/// Whether `ip` is this machine's or its local network's ([`machine_address`], or a private
/// range: 10/8, 172.16/12, 192.168/16, the shared 100.64/10, IPv6's unique local fc00::/7):
/// reached only where `sandbox.allowHosts` names it (rt8 B2: a service the person runs on
/// `0.0.0.0`, a database on the LAN, a name re-pointed by its DNS).
fn local_address(ip: &IpAddr) -> bool {
    machine_address(ip)
        || match ip {
            IpAddr::V4(v4) => v4.is_private() || (v4.octets()[0] == 100 && v4.octets()[1] & 0xc0 == 64),
            IpAddr::V6(v6) => {
                (v6.segments()[0] & 0xfe00) == 0xfc00
                    || v6.to_ipv4_mapped().is_some_and(|v4| local_address(&IpAddr::V4(v4)))
            }
        }
}

/// Whether `ip` is this machine itself: loopback, link-local (cloud metadata at
/// 169.254.169.254), unspecified, or an address of one of its interfaces (read once).
fn machine_address(ip: &IpAddr) -> bool {
    static OWN: std::sync::OnceLock<Vec<IpAddr>> = std::sync::OnceLock::new();
    let fixed = match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| machine_address(&IpAddr::V4(v4)))
        }
    };
    fixed
        || OWN
            .get_or_init(|| {
                let Ok(all) = nix::ifaddrs::getifaddrs() else { return Vec::new() };
                all.filter_map(|i| i.address)
                    .filter_map(|a| {
                        a.as_sockaddr_in()
                            .map(|s| IpAddr::V4(s.ip()))
                            .or_else(|| a.as_sockaddr_in6().map(|s| IpAddr::V6(s.ip())))
                    })
                    .collect()
            })
            .contains(ip)
}

/// The hosts and ports of a git config's remotes (`url =` and `pushurl =` in a
/// `[remote "<name>"]` section, or the old `[remote.<name>]`): `https://host/...` on its port or
/// 443, `http://` on 80, `ssh://[user@]host[:port]/` and `user@host:path` on 22. Other sections'
/// urls are not the project's remotes: `git submodule init` copies `.gitmodules` urls, which the
/// box writes, into `[submodule "..."]` (rt3 G6); their hosts are asked about like any other.
pub fn remotes(config: &str) -> Vec<Pattern> {
    let mut out = Vec::new();
    let entries = super::gitcode::parse(config.as_bytes());
    let urls = entries
        .iter()
        .filter(|e| e.section == "remote" && e.sub.is_some() && matches!(e.name.as_str(), "url" | "pushurl"));
    for value in urls.filter_map(|e| e.value.as_deref()) {
        let url = value.trim().trim_matches('"');
        let (scheme, rest, default) = if let Some(r) = url.strip_prefix("https://") {
            ("https", r, 443)
        } else if let Some(r) = url.strip_prefix("http://") {
            ("http", r, 80)
        } else if let Some(r) = url.strip_prefix("ssh://").or_else(|| url.strip_prefix("git+ssh://")) {
            ("ssh", r, 22)
        } else if let Some(r) = url.strip_prefix("git://") {
            ("git", r, 9418)
        } else if !url.contains("://") && url.contains(':') && !url.starts_with('/') {
            // scp-like: user@host:path
            let host = url.split_once(':').map(|(h, _)| h).unwrap_or("");
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            if let Some(p) = Pattern::parse(&format!("{host}:22")) {
                out.push(p);
            }
            continue;
        } else {
            continue;
        };
        let _ = scheme;
        let authority = rest.split('/').next().unwrap_or("");
        let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
        let with_port = if authority.contains(':') && !authority.ends_with(']') {
            authority.to_string()
        } else {
            format!("{authority}:{default}")
        };
        if let Some(p) = Pattern::parse(&with_port) {
            out.push(p);
        }
    }
    out
}

/// How the box asked for a connection: a plain-HTTP request (absolute form), whose `Host` the
/// proxy writes itself, or a tunnel (`CONNECT`, SOCKS5), whose bytes are the box's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Http,
    Tunnel,
}

/// Why a connection was allowed, or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow(&'static str),
    Deny(String),
}

/// The proxy's view of its policy.
struct Rules {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
    builtin: Vec<Pattern>,
    /// Headers to add for a host: (where, name, value).
    credentials: Vec<(Pattern, String, String)>,
}

impl Rules {
    fn of(p: &NetPolicy) -> Rules {
        let parse = |v: &[String]| v.iter().filter_map(|h| Pattern::parse(h)).collect::<Vec<_>>();
        let mut builtin: Vec<Pattern> = REGISTRIES.iter().filter_map(|h| Pattern::parse(h)).collect();
        if let Some(git) = &p.git_dir
            && let Ok(text) = read_capped(&git.join("config"), 1024 * 1024)
        {
            builtin.extend(remotes(&text).into_iter().filter(|r| !r.local()));
        }
        let credentials = p
            .credentials
            .iter()
            .filter_map(|c| {
                let value = c.expand(|n| std::env::var(n).ok()).ok()?;
                Some((Pattern::parse(&c.host)?, c.header.clone(), value))
            })
            .collect();
        Rules { allow: parse(&p.allow), deny: parse(&p.deny), builtin, credentials }
    }

    /// The headers to add to a request for `host:port`.
    fn headers_for(&self, host: &str, port: u16) -> Vec<(String, String)> {
        self.credentials
            .iter()
            .filter(|(p, _, _)| p.matches(host, port))
            .map(|(_, name, value)| (name.to_ascii_lowercase(), value.clone()))
            .collect()
    }

    /// The policy's word on `host:port`, reached `via`, before asking anyone: `None` means ask.
    /// A tunnel to port 80 is raw plain HTTP whose `Host` the box writes, so that behind a
    /// shared address (a CDN) it reaches any host there: it is opened only where
    /// `sandbox.allowHosts` names the host with `:80` (or `:*`), never for a bare name, a
    /// registry or a git remote, and no one is asked (rt3 G2). Plain HTTP goes as `http://` URLs.
    fn decide(&self, host: &str, port: u16, via: Via) -> Option<Verdict> {
        if self.deny.iter().any(|d| d.matches(host, port)) {
            return Some(Verdict::Deny(format!("sandbox.denyHosts names {host}")));
        }
        if via == Via::Tunnel && port == 80 && !self.allow.iter().any(|a| a.names_port(host, port)) {
            return Some(Verdict::Deny(format!(
                "a tunnel (CONNECT or SOCKS) to port 80 carries plain HTTP naming any host the box likes, so it is \
                 opened only where sandbox.allowHosts names \"{}\"; an http:// URL through the proxy \
                 reaches the host it names",
                shown_authority(host, port, 0)
            )));
        }
        if self.allow.iter().any(|a| a.matches(host, port)) {
            return Some(Verdict::Allow("sandbox.allowHosts"));
        }
        let is_local = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| local_address(&ip));
        if is_local {
            return Some(Verdict::Deny(
                "it is an address of this machine or of its local network, which the sandbox reaches only where \
                 sandbox.allowHosts names it"
                    .into(),
            ));
        }
        if self.builtin.iter().any(|b| b.matches(host, port)) {
            return Some(Verdict::Allow("a package registry or the project's git remote"));
        }
        None
    }

    /// Whether an address `host` resolved to may be reached: this machine's only where the
    /// allow-list names it as such (`localhost`, an address); one of the local network's where
    /// it names it so, or names `host` itself (a registry of the person's on the LAN), never
    /// through a pattern's `*.`, the registries, the git remotes or a person's answer about a
    /// name (rt8 B2: a name re-pointed by its DNS).
    fn address_ok(&self, host: &str, port: u16, ip: &IpAddr) -> bool {
        !local_address(ip)
            || self.allow.iter().any(|a| {
                a.matches(host, port) && (a.local() || (!machine_address(ip) && matches!(a.host, Host::Exact(_))))
            })
    }
}

fn read_capped(path: &Path, cap: u64) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?.take(cap).read_to_string(&mut text)?;
    Ok(text)
}

/// The running proxy.
pub struct Proxy {
    rules: Rules,
    policy: NetPolicy,
    config: crate::policy::config::Config,
    /// Allowed for one command (`once`) or for the box's life (`always`, saved too).
    granted: Mutex<Vec<(String, String, u16)>>,
    /// Hosts a person is being asked about now: others wait for that answer.
    asking: (Mutex<Vec<(String, u16)>>, Condvar),
    /// Where the commands' agentsh wait for questions (`asking`); without it no one is asked.
    registry: Option<super::asking::Registry>,
    /// Per command: how many hosts it asked about, and whether the person refused one.
    asked: Mutex<std::collections::HashMap<String, (u32, bool)>>,
    /// Test names mapped to addresses (debug builds only: `AGENTSH_TEST_RESOLVE`).
    resolve: Vec<(String, SocketAddr)>,
    /// agentsh's certificate authority, for the HTTPS hosts that get a credential
    /// ([`super::tls`]), or why there is none. Made by the builder ([`authority`]).
    authority: Result<Arc<super::tls::Authority>, String>,
}

/// Which listener a connection came in on.
#[derive(Clone, Copy)]
enum Kind {
    Http,
    Socks,
}

/// The proxy's process, forked by the box's builder (`holder::builder`): leaves the agent's
/// session and every file it did not need, takes its two listening sockets from `ctl`, confines
/// its own writes, and serves until `ctl` closes.
pub fn detached(
    ctl: OwnedFd,
    name: &str,
    policy: NetPolicy,
    authority: Result<Arc<super::tls::Authority>, String>,
) -> ! {
    use std::os::fd::AsRawFd;
    let _ = nix::unistd::setsid();
    let _ = std::env::set_current_dir("/");
    let _ = rustix::thread::set_name(c"agentsh-proxy");
    // Standard output and error are the builder's answer pipe: holding them would keep the
    // agentsh that reads it waiting.
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    for fd in fds.into_iter().filter(|fd| *fd > 2 && *fd != ctl.as_raw_fd()) {
        let _ = nix::unistd::close(fd);
    }
    let Ok([http, socks]) = <[OwnedFd; 2]>::try_from(super::sys::receive_fds(ctl.as_fd())) else {
        std::process::exit(1)
    };
    // Made by this process (its credentials are what the commands' agentsh check), and said
    // to the builder, which waits for it before the box is ready.
    let registry = super::asking::Registry::listen(&policy.records, name).ok();
    let _ = nix::sys::socket::send(ctl.as_raw_fd(), b"L", nix::sys::socket::MsgFlags::empty());
    let mut writable = vec![policy.records.clone()];
    writable.extend(crate::policy::dirs::state_dir());
    writable.extend(crate::ask::queue::dir().ok());
    writable.extend(answers_dir());
    let _ = nix::sys::prctl::set_dumpable(false);
    if crate::run::sandbox::rules::confine_writes(&writable).is_err() {
        std::process::exit(1);
    }
    serve(http, socks, ctl, registry, policy, authority)
}

/// Serves the box until `lifeline` closes (the holder has ended): accepts on both listeners, a
/// thread per connection, at most [`connection_cap`] at once, and takes the registrations of
/// its commands' agentsh on `registry` (`asking`; without it no one is asked).
pub fn serve(
    http: OwnedFd,
    socks: OwnedFd,
    lifeline: OwnedFd,
    registry: Option<super::asking::Registry>,
    policy: NetPolicy,
    authority: Result<Arc<super::tls::Authority>, String>,
) -> ! {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let config = crate::policy::config::load(&policy.workspace);
    let resolve = test_names();
    let proxy = Arc::new(Proxy {
        rules: Rules::of(&policy),
        registry,
        policy,
        config,
        granted: Mutex::new(Vec::new()),
        asking: (Mutex::new(Vec::new()), Condvar::new()),
        asked: Mutex::new(std::collections::HashMap::new()),
        resolve,
        authority,
    });
    let http = std::net::TcpListener::from(http);
    let socks = std::net::TcpListener::from(socks);
    // Never blocks: a connection the box reset after poll said ready is skipped.
    let _ = http.set_nonblocking(true);
    let _ = socks.set_nonblocking(true);
    let cap = connection_cap();
    let open = Arc::new(AtomicUsize::new(0));
    let mut resting_until: Option<Instant> = None;
    let mut last_take = Instant::now();
    loop {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let resting = resting_until.is_some_and(|t| Instant::now() < t);
        // At the cap, or resting after a failed accept: only the lifeline, and a look again
        // shortly (a slot frees when a connection's thread ends).
        let listening = !resting && open.load(Ordering::Acquire) < cap;
        let mut fds = vec![PollFd::new(lifeline.as_fd(), PollFlags::POLLIN)];
        let first = fds.len();
        if listening {
            fds.push(PollFd::new(http.as_fd(), PollFlags::POLLIN));
            fds.push(PollFd::new(socks.as_fd(), PollFlags::POLLIN));
        }
        // Registrations are not polled for (`Registry::take`): a question takes them, and so
        // does this loop at least once a second.
        let timeout = PollTimeout::from(if listening { TAKE_EVERY } else { BACKOFF }.as_millis() as u16);
        if poll(&mut fds, timeout).is_err() {
            continue;
        }
        let ready = |i: usize| fds.get(i).and_then(|f| f.revents()).is_some_and(|r| !r.is_empty());
        if ready(0) {
            if let Some(registry) = &proxy.registry {
                registry.close();
            }
            std::process::exit(0);
        }
        if let Some(registry) = &proxy.registry
            && last_take.elapsed() >= TAKE_EVERY
        {
            registry.take();
            last_take = Instant::now();
        }
        for (i, listener, kind) in [(first, &http, Kind::Http), (first + 1, &socks, Kind::Socks)] {
            if !ready(i) || open.load(Ordering::Acquire) >= cap {
                continue;
            }
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::ConnectionAborted
                    ) =>
                {
                    continue;
                }
                Err(_) => {
                    resting_until = Some(Instant::now() + BACKOFF);
                    continue;
                }
            };
            let slot = Slot::take(&open);
            let proxy = Arc::clone(&proxy);
            let spawned = std::thread::Builder::new().stack_size(256 * 1024).spawn(move || {
                let _slot = slot;
                let _ = stream.set_write_timeout(Some(IDLE));
                match kind {
                    Kind::Http => proxy.http(stream),
                    Kind::Socks => proxy.socks(stream),
                }
            });
            // No thread (the machine's limit): the connection is dropped and its slot freed.
            if spawned.is_err() {
                resting_until = Some(Instant::now() + BACKOFF);
            }
        }
    }
}

/// One of the proxy's [`MAX_CONNECTIONS`], held by a connection's thread and given back when it
/// ends, however it ends.
struct Slot(Arc<std::sync::atomic::AtomicUsize>);

impl Slot {
    fn take(open: &Arc<std::sync::atomic::AtomicUsize>) -> Slot {
        open.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Slot(Arc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// How many connections this proxy serves at once: [`MAX_CONNECTIONS`], or fewer where its
/// descriptors would not last (eight a connection, and a margin). The soft limit is raised to
/// the hard one first, as far as is needed (it is often 1,024, the hard one far more).
fn connection_cap() -> usize {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    const PER_CONNECTION: u64 = 8;
    const MARGIN: u64 = 64;
    let want = MAX_CONNECTIONS as u64 * PER_CONNECTION + MARGIN;
    let limit = getrlimit(Resource::Nofile);
    let soft = match (limit.current, limit.maximum) {
        (Some(soft), hard) if soft < want => {
            let raised = hard.map_or(want, |h| h.min(want));
            let ok = setrlimit(Resource::Nofile, Rlimit { current: Some(raised), maximum: hard }).is_ok();
            if ok { raised } else { soft }
        }
        (Some(soft), _) => soft,
        (None, _) => want,
    };
    usize::try_from(soft.saturating_sub(MARGIN) / PER_CONNECTION).unwrap_or(MAX_CONNECTIONS).clamp(1, MAX_CONNECTIONS)
}

/// Reads from the box's connection until `until`, however slowly it drips its bytes: each read
/// waits only for what is left of the time.
struct Before<'a> {
    stream: &'a TcpStream,
    until: Instant,
}

impl<'a> Before<'a> {
    fn head_of(stream: &'a TcpStream) -> Before<'a> {
        Before { stream, until: Instant::now() + HEAD_TIME }
    }
}

impl Read for Before<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// What an intercepted host's certificate is verified against: the system's roots. Debug
/// builds also take `AGENTSH_TEST_ROOTS` (a PEM file: the tests' stand-in hosts' authority)
/// in their place; a release build never does.
fn trust() -> super::tls::Trust {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let test = std::env::var_os("AGENTSH_TEST_ROOTS").filter(|_| cfg!(debug_assertions));
    match test.and_then(|path| std::fs::read(path).ok()) {
        Some(pem) => super::tls::Trust::Roots(
            CertificateDer::pem_slice_iter(&pem).filter_map(Result::ok).map(|c| c.to_vec()).collect(),
        ),
        None => super::tls::Trust::System,
    }
}

/// Where the box finds the certificates it trusts when a host gets a credential: the system's
/// roots and agentsh's authority ([`super::tls::Authority::bundle`]), in the box's own home.
pub const BUNDLE_IN_HOME: &str = ".agentsh-ca-bundle.pem";

/// The variables that point the box's tools at [`BUNDLE_IN_HOME`] (`bundle`, its path inside
/// the box): OpenSSL and what uses it (curl, Python, Ruby, Go), requests and pip, Node.js and
/// npm, cargo, git and Deno.
pub fn trust_environment(bundle: &Path) -> Vec<(String, String)> {
    let path = bundle.display().to_string();
    [
        "SSL_CERT_FILE",
        "CURL_CA_BUNDLE",
        "REQUESTS_CA_BUNDLE",
        "PIP_CERT",
        "NODE_EXTRA_CA_CERTS",
        "CARGO_HTTP_CAINFO",
        "GIT_SSL_CAINFO",
        "DENO_CERT",
    ]
    .into_iter()
    .map(|k| (k.to_string(), path.clone()))
    .collect()
}

/// The authority for a box whose policy has credentials (made by its builder, outside the box,
/// before the proxy is forked): loaded from, or made in, `<state>/proxy-ca`, and its bundle
/// written to the box's home (`home_store`: where the box's home is kept outside it). `Err`
/// says why not; the proxy then refuses to carry a credential, and says so.
pub fn authority(policy: &NetPolicy, home_store: Option<&Path>) -> Result<Arc<super::tls::Authority>, String> {
    if policy.credentials.is_empty() {
        return Err("no credentials are configured".into());
    }
    let dir = crate::policy::dirs::state()?.join("proxy-ca");
    let authority = super::tls::Authority::load_or_make(&dir)?;
    let home = home_store.ok_or("the box has no home of its own")?;
    let bundle = authority.bundle()?;
    // The box can write its home: a new file renamed into place, so a link the box left under
    // that name is replaced, never followed out of the box.
    // A name the box cannot guess and take first.
    let temp = format!("{BUNDLE_IN_HOME}.{}", crate::ask::prompt::random_code().map_err(|e| e.to_string())?);
    let written = crate::ask::queue::write_temp(home, &temp, bundle.as_bytes(), false).and_then(|(_, tmp)| {
        std::fs::rename(&tmp, home.join(BUNDLE_IN_HOME)).inspect_err(|_| drop(std::fs::remove_file(&tmp)))
    });
    written.map_err(|e| format!("writing the box's certificates to {}: {e}", home.join(BUNDLE_IN_HOME).display()))?;
    Ok(Arc::new(authority))
}

/// `AGENTSH_TEST_RESOLVE=name=127.0.0.1:port,...`: stand-in hosts for tests (the tests' own
/// servers), read only by debug builds; a release build never maps a name.
fn test_names() -> Vec<(String, SocketAddr)> {
    if !cfg!(debug_assertions) {
        return Vec::new();
    }
    std::env::var("AGENTSH_TEST_RESOLVE")
        .unwrap_or_default()
        .split(',')
        .filter_map(|pair| {
            let (name, addr) = pair.split_once('=')?;
            Some((name.to_ascii_lowercase(), addr.parse().ok()?))
        })
        .collect()
}

impl Proxy {
    /// One HTTP proxy connection: `CONNECT host:port`, or a plain-HTTP request in absolute form.
    fn http(&self, mut client: TcpStream) {
        let Some((head, rest)) = read_head(&mut Before::head_of(&client)) else { return };
        if client.set_read_timeout(Some(IDLE)).is_err() {
            return;
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.split("\r\n");
        let request = lines.next().unwrap_or("");
        let mut parts = request.split(' ');
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
            .collect();
        let id = headers.iter().find(|(k, _)| k == "proxy-authorization").and_then(|(_, v)| command_id(v));
        if id.is_none() {
            // The box's proxy settings carry the command's name as the user and password; a
            // client that waits to be asked for them (git's libcurl) is asked, and sends them.
            return refuse_http(
                &mut client,
                407,
                "agentsh: the sandbox's proxy needs the user and password in the box's HTTP_PROXY setting",
            );
        }
        if method.eq_ignore_ascii_case("CONNECT") {
            let Some((host, port)) = split_host_port(target, 443) else {
                return refuse_http(&mut client, 400, "agentsh: a CONNECT needs host:port");
            };
            let Some(upstream) = self
                .open(&host, port, id.as_deref(), Via::Tunnel)
                .map_err(|why| refuse_http(&mut client, 403, &why))
                .ok()
            else {
                return;
            };
            if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").is_err() {
                return;
            }
            self.tunnel(client, upstream, rest, &host, port, id.as_deref());
            return;
        }
        let Some(url) = target.strip_prefix("http://") else {
            return refuse_http(
                &mut client,
                400,
                "agentsh: the sandbox's proxy takes CONNECT, or plain http:// URLs in absolute form",
            );
        };
        let (named, path) = match url.find('/') {
            Some(i) => (&url[..i], &url[i..]),
            None => (url, "/"),
        };
        if named.contains('@') {
            return refuse_http(&mut client, 400, "agentsh: a user name before the host is not passed on");
        }
        let Some((host, port)) = split_host_port(named, 80) else {
            return refuse_http(&mut client, 400, "agentsh: no host in the URL");
        };
        // The request goes to the host its URL names, and names no other: behind a shared
        // address (a CDN) a `Host` of the box's choosing would reach another host (rt3 G2).
        if let Err(why) = plain_head(&head, &headers, &host, port) {
            self.record(id.as_deref(), &host, port, "denied", &why, (0, 0), Duration::ZERO);
            self.note(id.as_deref(), &host, port, &why);
            return refuse_http(&mut client, 400, &format!("agentsh: {why}"));
        }
        // Credentials go only inside HTTPS, where agentsh checks the host's certificate and masks
        // the reply: here they would cross the network in cleartext and come back unmasked.
        if !self.rules.headers_for(&host, port).is_empty() {
            let why = format!(
                "sandbox.credentials names {host}, and agentsh adds a credential only over HTTPS, never in \
                 cleartext; use https://{}",
                shown_authority(&host, port, 80)
            );
            self.record(id.as_deref(), &host, port, "denied", &why, (0, 0), Duration::ZERO);
            self.note(id.as_deref(), &host, port, &format!("{CREDENTIALS_FAILED}{why}"));
            return refuse_http(&mut client, 403, &format!("agentsh: {why}"));
        }
        let Ok(upstream) =
            self.open(&host, port, id.as_deref(), Via::Http).map_err(|why| refuse_http(&mut client, 403, &why))
        else {
            return;
        };
        // One request a connection: a second one on it could name another host. Its `Host` is
        // the URL's authority, written by agentsh.
        let mut out = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", shown_authority(&host, port, 80));
        for (k, v) in &headers {
            if !matches!(k.as_str(), "host" | "proxy-authorization" | "proxy-connection" | "connection" | "keep-alive")
            {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
        }
        out.push_str("connection: close\r\n\r\n");
        let mut first = out.into_bytes();
        first.extend_from_slice(&rest);
        self.relay(client, upstream, first, &host, port, id.as_deref());
    }

    /// One SOCKS5 connection: no authentication, or a user name and password (which name the
    /// command); `CONNECT` only.
    fn socks(&self, mut client: TcpStream) {
        let mut from = Before::head_of(&client);
        let mut head = [0u8; 2];
        if from.read_exact(&mut head).is_err() || head[0] != 5 {
            return;
        }
        let mut methods = vec![0u8; usize::from(head[1])];
        if from.read_exact(&mut methods).is_err() {
            return;
        }
        let mut id = None;
        if methods.contains(&2) {
            if (&client).write_all(&[5, 2]).is_err() {
                return;
            }
            let mut v = [0u8; 2];
            if from.read_exact(&mut v).is_err() {
                return;
            }
            let mut user = vec![0u8; usize::from(v[1])];
            let mut plen = [0u8; 1];
            if from.read_exact(&mut user).is_err() || from.read_exact(&mut plen).is_err() {
                return;
            }
            let mut pass = vec![0u8; usize::from(plen[0])];
            if from.read_exact(&mut pass).is_err() {
                return;
            }
            if user == b"agentsh" {
                id = String::from_utf8(pass).ok().filter(|p| valid_id(p));
            }
            if (&client).write_all(&[1, 0]).is_err() {
                return;
            }
        } else if methods.contains(&0) {
            if (&client).write_all(&[5, 0]).is_err() {
                return;
            }
        } else {
            let _ = (&client).write_all(&[5, 0xff]);
            return;
        }
        let mut req = [0u8; 4];
        if from.read_exact(&mut req).is_err() || req[0] != 5 {
            return;
        }
        let host = match req[3] {
            1 => {
                let mut a = [0u8; 4];
                if from.read_exact(&mut a).is_err() {
                    return;
                }
                IpAddr::from(a).to_string()
            }
            4 => {
                let mut a = [0u8; 16];
                if from.read_exact(&mut a).is_err() {
                    return;
                }
                IpAddr::from(a).to_string()
            }
            3 => {
                let mut n = [0u8; 1];
                if from.read_exact(&mut n).is_err() {
                    return;
                }
                let mut name = vec![0u8; usize::from(n[0])];
                if from.read_exact(&mut name).is_err() {
                    return;
                }
                // The same check as CONNECT's: a name, never a pattern (`*.com`) or control
                // characters.
                match std::str::from_utf8(&name).ok().and_then(host_name) {
                    Some(host) => host,
                    None => {
                        let _ = (&client).write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
                        return;
                    }
                }
            }
            _ => return,
        };
        let mut p = [0u8; 2];
        if from.read_exact(&mut p).is_err() {
            return;
        }
        let port = u16::from_be_bytes(p);
        if client.set_read_timeout(Some(IDLE)).is_err() {
            return;
        }
        // Only CONNECT: no UDP, no listening for the box.
        if req[1] != 1 {
            let _ = (&client).write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
            return;
        }
        match self.open(&host, port, id.as_deref(), Via::Tunnel) {
            Ok(upstream) => {
                if client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).is_ok() {
                    self.tunnel(client, upstream, Vec::new(), &host, port, id.as_deref());
                }
            }
            // "Connection not allowed by ruleset".
            Err(_) => {
                let _ = client.write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
            }
        }
    }

    /// The connection to `host:port` for the command `id`, when the policy (or a person)
    /// allows it. A refusal is recorded, noted for the command, and returned as a message.
    fn open(&self, host: &str, port: u16, id: Option<&str>, via: Via) -> Result<TcpStream, String> {
        let verdict = match self.rules.decide(host, port, via) {
            Some(v) => v,
            None if self.granted(id, host, port) => Verdict::Allow("the person"),
            None => self.ask(id, host, port),
        };
        let refuse = |why: String| {
            let message = format!(
                "agentsh: the sandbox's network does not reach {host}:{port}: {why}. If the command needs it, the \
                 person can allow it in `agentsh approvals` when asked, or add \"{host}\" to sandbox.allowHosts in \
                 ~/.config/agentsh/config.json"
            );
            self.record(id, host, port, "denied", &why, (0, 0), Duration::ZERO);
            self.note(id, host, port, &why);
            message
        };
        let by = match verdict {
            Verdict::Allow(by) => by,
            Verdict::Deny(why) => return Err(refuse(why)),
        };
        let addrs: Vec<SocketAddr> = match self.resolve.iter().find(|(n, _)| n == host) {
            Some((_, a)) => vec![*a],
            None => match (host, port).to_socket_addrs() {
                Ok(a) => a.collect(),
                Err(e) => return Err(refuse(format!("its name does not resolve ({e})"))),
            },
        };
        let mapped = self.resolve.iter().any(|(n, _)| n == host);
        if !mapped && addrs.iter().any(|a| !self.rules.address_ok(host, port, &a.ip())) {
            return Err(refuse(
                "it resolves to an address of this machine or of its local network, which the sandbox reaches \
                 only where sandbox.allowHosts names the host"
                    .into(),
            ));
        }
        let mut last = String::from("no address");
        for a in &addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(30)) {
                Ok(s) => {
                    let _ = by;
                    return Ok(s);
                }
                Err(e) => last = e.to_string(),
            }
        }
        self.record(id, host, port, "failed", &last, (0, 0), Duration::ZERO);
        Err(format!("agentsh: {host}:{port} could not be reached: {last}"))
    }

    fn granted(&self, id: Option<&str>, host: &str, port: u16) -> bool {
        let granted = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        granted.iter().any(|(who, h, p)| h == host && *p == port && (who.is_empty() || Some(who.as_str()) == id))
    }

    /// Asks the person (one question per host at a time; the others wait for its answer).
    fn ask(&self, id: Option<&str>, host: &str, port: u16) -> Verdict {
        let key = (host.to_string(), port);
        {
            let (lock, cvar) = &self.asking;
            let mut asking = lock.lock().unwrap_or_else(|e| e.into_inner());
            while asking.contains(&key) {
                asking = cvar.wait(asking).unwrap_or_else(|e| e.into_inner());
            }
            if self.granted(id, host, port) {
                return Verdict::Allow("the person");
            }
            asking.push(key.clone());
        }
        let verdict = self.ask_person(id, host, port);
        let (lock, cvar) = &self.asking;
        lock.lock().unwrap_or_else(|e| e.into_inner()).retain(|k| *k != key);
        cvar.notify_all();
        verdict
    }

    fn ask_person(&self, id: Option<&str>, host: &str, port: u16) -> Verdict {
        use super::asking::Answer;
        let Some(id) = id else {
            return Verdict::Deny(
                "it is not on the sandbox's list of hosts, and the connection did not say which command made it (its \
                 tool did not send the proxy's user name), so no one could be asked"
                    .into(),
            );
        };
        // A command that reaches for host after host asks about a few, then no more: a person
        // who said no to one is not asked about the next, nor anyone about a sixth.
        {
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            let entry = asked.entry(id.to_string()).or_insert((0, false));
            if entry.1 {
                return Verdict::Deny(
                    "it is not on the sandbox's list of hosts, and the person already refused a host for this command"
                        .into(),
                );
            }
            if entry.0 >= MAX_QUESTIONS {
                return Verdict::Deny(format!(
                    "it is not on the sandbox's list of hosts, and the command already asked about {MAX_QUESTIONS} \
                     hosts; the rest are refused without asking"
                ));
            }
            entry.0 += 1;
        }
        let wait = Duration::from_secs(self.config.confirmation_timeout.saturating_add(10));
        let granted = |who: &str| {
            self.granted.lock().unwrap_or_else(|e| e.into_inner()).push((who.to_string(), host.to_string(), port));
        };
        let said = match &self.registry {
            Some(registry) => registry.ask(id, host, port, wait),
            None => Answer::No(super::asking::NO_ONE.to_string()),
        };
        match said {
            Answer::Once => {
                granted(id);
                Verdict::Allow("the person (once)")
            }
            Answer::Always => {
                granted("");
                Verdict::Allow("the person (always)")
            }
            Answer::Refused => {
                let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
                asked.entry(id.to_string()).or_insert((0, false)).1 = true;
                Verdict::Deny("the person refused it".into())
            }
            Answer::No(why) => Verdict::Deny(format!("it is not on the sandbox's list of hosts, and {why}")),
        }
    }

    /// A tunnel the box opened (`CONNECT`, SOCKS5): relayed as it is, or, for a host that gets a
    /// credential, its TLS ended here ([`super::tls::intercept`]) so the credential goes into
    /// each request on the way out. An intercepted connection that fails (the host's
    /// certificate, a refused request) is noted for the command, with the reason.
    fn tunnel(&self, client: TcpStream, upstream: TcpStream, first: Vec<u8>, host: &str, port: u16, id: Option<&str>) {
        let added = self.rules.headers_for(host, port);
        if added.is_empty() {
            // TLS to the web port is relayed once its ClientHello names this host (rt3 G2).
            let tls_to = (port == 443).then_some(host);
            return self.relay_checked(client, upstream, first, host, port, id, tls_to);
        }
        let started = Instant::now();
        let relayed = match &self.authority {
            // A client speaks first in TLS only after the tunnel is open.
            Ok(_) if !first.is_empty() => Err("the box sent data before the tunnel was open".to_string()),
            Ok(authority) => {
                let done = super::tls::intercept(authority, client, upstream, host, &added, &trust());
                self.record(
                    id,
                    host,
                    port,
                    "allowed",
                    "credentials added",
                    (done.to_host, done.to_box),
                    started.elapsed(),
                );
                done.result
            }
            Err(why) => Err(format!("agentsh has no certificate authority to add its credentials with: {why}")),
        };
        if let Err(why) = relayed {
            self.note(id, host, port, &format!("{CREDENTIALS_FAILED}{why}"));
        }
    }

    /// Copies bytes both ways until both sides are done, then records the connection.
    fn relay(&self, client: TcpStream, upstream: TcpStream, first: Vec<u8>, host: &str, port: u16, id: Option<&str>) {
        self.relay_checked(client, upstream, first, host, port, id, None);
    }

    /// [`Proxy::relay`], where with `tls_to` nothing goes to the host until the box's first bytes
    /// are read: a TLS ClientHello naming another host than `tls_to` (its SNI, by which a CDN
    /// routes) ends the connection, and is refused and noted for the command. Bytes that are not
    /// TLS (ssh to port 443) go on as they are; the host's bytes reach the box meanwhile (ssh's
    /// server speaks first).
    #[allow(clippy::too_many_arguments)]
    fn relay_checked(
        &self,
        client: TcpStream,
        upstream: TcpStream,
        first: Vec<u8>,
        host: &str,
        port: u16,
        id: Option<&str>,
        tls_to: Option<&str>,
    ) {
        let started = Instant::now();
        let (Ok(mut c_read), Ok(mut u_write)) = (client.try_clone(), upstream.try_clone()) else { return };
        let _ = upstream.set_read_timeout(Some(IDLE));
        let _ = upstream.set_write_timeout(Some(IDLE));
        let tls_to = tls_to.map(str::to_string);
        let up = std::thread::spawn(move || {
            let mut first = first;
            if let Some(host) = tls_to
                && let Err(why) = hello_names(&mut c_read, &mut first, &host)
            {
                let _ = u_write.shutdown(std::net::Shutdown::Both);
                let _ = c_read.shutdown(std::net::Shutdown::Both);
                return Err(why);
            }
            let mut n = first.len() as u64;
            if u_write.write_all(&first).is_ok() {
                n += copy(&mut c_read, &mut u_write);
            }
            let _ = u_write.shutdown(std::net::Shutdown::Write);
            Ok(n)
        });
        let (mut u_read, mut c_write) = (upstream, client);
        let down = copy(&mut u_read, &mut c_write);
        let _ = c_write.shutdown(std::net::Shutdown::Write);
        match up.join().unwrap_or(Ok(0)) {
            Ok(up) => self.record(id, host, port, "allowed", "", (up, down), started.elapsed()),
            Err(why) => {
                self.record(id, host, port, "denied", &why, (0, down), started.elapsed());
                self.note(id, host, port, &why);
            }
        }
    }

    /// One audit record for a connection (best effort: the command already ran or is running).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        id: Option<&str>,
        host: &str,
        port: u16,
        decision: &str,
        why: &str,
        bytes: (u64, u64),
        took: Duration,
    ) {
        let line = crate::record::audit::ConnectionLine {
            id: id.unwrap_or(""),
            host,
            port,
            decision,
            why,
            bytes_out: bytes.0,
            bytes_in: bytes.1,
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        };
        let _ = crate::record::audit::connection(&line, &self.config.audit);
    }

    /// A line for the command `id` to print after it ends: which host the network refused.
    fn note(&self, id: Option<&str>, host: &str, port: u16, why: &str) {
        use std::os::unix::fs::OpenOptionsExt;
        let Some(id) = id else { return };
        let dir = self.policy.records.join("notes");
        let _ = std::fs::create_dir_all(&dir);
        let line = note_line(host, port, why);
        let _ = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join(id))
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}

/// The command's agentsh asks the person about `host:port` for the box's proxy (`asking`), in
/// the channels a command is asked in, and saves an "always" to `sandbox.allowHosts`.
pub fn ask_person(
    command: &str,
    cwd: &Path,
    (host, port): (&str, u16),
    config: &crate::policy::config::Config,
    terminal: Result<&crate::ask::approval::PersonsTerminal, String>,
) -> super::asking::Answer {
    use super::asking::Answer as Said;
    use crate::ask::prompt::{Answer, PromptRequest};
    let Ok(code) = crate::ask::prompt::random_code() else { return Said::No("no approval code could be made".into()) };
    let entry = match (port, host.contains(':')) {
        (80 | 443, _) => host.to_string(),
        (_, true) => format!("[{host}]:{port}"),
        (_, false) => format!("{host}:{port}"),
    };
    let req = PromptRequest {
        command: format!("connect to {host}:{port}"),
        cwd: cwd.display().to_string(),
        risk: crate::model::Risk::Moderate,
        category: crate::model::Category::Network,
        reasons: vec![format!(
            "`{command}` wants to reach {host}:{port}, which is not on the sandbox's list of hosts: what the command \
             can read could leave with it"
        )],
        parts: Vec::new(),
        always_entries: vec![entry.clone()],
        timeout: Duration::from_secs(config.confirmation_timeout),
        code,
        notice: None,
        sandbox: format!("the command runs in the sandbox; the connection leaves it for {host}:{port}"),
        always_where: crate::policy::config::user_file().map(|f| format!("{} (sandbox.allowHosts)", f.display())),
        confirming: false,
    };
    match crate::ask::approval::ask_on(&req, config.approval_queue, terminal) {
        Answer::Once => Said::Once,
        Answer::Always(_) => {
            if let Err(e) = save_allowed(&entry) {
                eprintln!("agentsh: warning: could not save {entry} to sandbox.allowHosts: {e:#}");
            }
            Said::Always
        }
        Answer::NoTerminal(why) => Said::No(format!("no one could be asked ({why})")),
        Answer::TimedOut => Said::No("no one answered in time".into()),
        _ => Said::Refused,
    }
}

/// The directory of the user config, where an "always" answer is saved (`save_allowed`), made
/// if it is missing: the proxy may write there alone, and a Landlock rule can only name what
/// exists. Made before the box's record vouches for home (`holder::build_past`) too: made only
/// by the proxy, as the box is built, it changed home under the record, and every new home's
/// second command built a box of its own.
pub(crate) fn answers_dir() -> Option<PathBuf> {
    let dir = crate::policy::config::user_file()?.parent()?.to_path_buf();
    let _ = std::fs::create_dir_all(&dir);
    Some(dir)
}

/// Adds `entry` to the user config's `sandbox.allowHosts` (an "always" answer).
fn save_allowed(entry: &str) -> anyhow::Result<()> {
    use serde_json::Value;
    let file = crate::policy::config::user_file().ok_or_else(|| anyhow::anyhow!("no user config"))?;
    crate::policy::atomic_file::update(&file, |m| {
        let sandbox = m.entry("sandbox".to_string()).or_insert_with(|| Value::Object(serde_json::Map::new()));
        let Value::Object(sandbox) = sandbox else { anyhow::bail!("\"sandbox\" is not an object; fix the file first") };
        let list = crate::policy::atomic_file::string_list(sandbox, "allowHosts")?;
        if !list.iter().any(|v| v.as_str() == Some(entry)) {
            list.push(Value::String(entry.to_string()));
        }
        Ok(())
    })
}

/// Moves bytes from one socket to the other until the first ends: through a pipe with
/// `splice`, so they never pass through this process (a copy through user memory ran at a
/// third of a direct download's speed on loopback); by reading and writing where the kernel
/// will not splice.
fn copy(from: &mut TcpStream, to: &mut TcpStream) -> u64 {
    use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_setpipe_size, pipe_with, splice};
    const CHUNK: usize = 1024 * 1024;
    let Ok((pipe_r, pipe_w)) = pipe_with(PipeFlags::CLOEXEC) else { return copy_through_memory(from, to, 0) };
    let _ = fcntl_setpipe_size(&pipe_w, CHUNK);
    let mut n = 0u64;
    loop {
        let got = match splice(&*from, None, &pipe_w, None, CHUNK, SpliceFlags::MOVE) {
            Ok(0) => return n,
            Ok(k) => k,
            Err(rustix::io::Errno::INVAL) if n == 0 => return copy_through_memory(from, to, 0),
            Err(_) => return n,
        };
        let mut left = got;
        while left > 0 {
            match splice(&pipe_r, None, &*to, None, left, SpliceFlags::MOVE) {
                Ok(0) | Err(_) => return n,
                Ok(k) => {
                    left -= k;
                    n += k as u64;
                }
            }
        }
    }
}

fn copy_through_memory(from: &mut TcpStream, to: &mut TcpStream, mut n: u64) -> u64 {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return n,
            Ok(k) => {
                if to.write_all(&buf[..k]).is_err() {
                    return n;
                }
                n += k as u64;
            }
        }
    }
}

/// The request's head (up to the blank line) and what came after it, or `None` when it is
/// longer than [`MAX_HEAD`] or the client goes away.
fn read_head(client: &mut impl Read) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Some((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
    }
}

fn refuse_http(client: &mut TcpStream, status: u16, message: &str) {
    let reason = match status {
        403 => "Forbidden",
        407 => "Proxy Authentication Required",
        _ => "Bad Request",
    };
    let challenge = if status == 407 { "proxy-authenticate: Basic realm=\"agentsh\"\r\n" } else { "" };
    let body = format!("{message}\n");
    let oneline = message.replace(['\r', '\n'], " ");
    let _ = client.write_all(
        format!(
            "HTTP/1.1 {status} {reason}\r\n{challenge}content-type: text/plain\r\nx-agentsh: {oneline}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

/// The most of a TLS ClientHello read before it is relayed (one is a few hundred bytes; a
/// post-quantum key share makes it about 1.8 KiB).
const MAX_HELLO: usize = 64 * 1024;

/// What the first bytes of a tunnel say of the TLS host they ask for.
#[derive(Debug, PartialEq, Eq)]
enum Hello {
    /// Not TLS.
    NotTls,
    /// The start of a ClientHello: more bytes are needed.
    Short,
    /// A ClientHello, and the host name it asks for (SNI), if any.
    Names(Option<String>),
    /// TLS, but no ClientHello agentsh can read.
    Unreadable,
}

/// Reads `bytes`, the box's first on a tunnel: TLS handshake records (type 22), whose
/// fragments make up a ClientHello (type 1), whose `server_name` extension names the host.
fn client_hello(bytes: &[u8]) -> Hello {
    if bytes.first().is_some_and(|b| *b != 22) {
        return Hello::NotTls;
    }
    let mut message = Vec::new();
    let mut at = 0;
    loop {
        let Some(record) = bytes.get(at..at + 5) else { return Hello::Short };
        let length = usize::from(u16::from_be_bytes([record[3], record[4]]));
        if record[0] != 22 || record[1] != 3 || length == 0 || length > 1 << 14 {
            return Hello::Unreadable;
        }
        let Some(fragment) = bytes.get(at + 5..at + 5 + length) else { return Hello::Short };
        message.extend_from_slice(fragment);
        at += 5 + length;
        if message.len() < 4 {
            continue;
        }
        if message[0] != 1 {
            return Hello::Unreadable;
        }
        let whole = 4 + (usize::from(message[1]) << 16 | usize::from(message[2]) << 8 | usize::from(message[3]));
        if message.len() >= whole {
            return hello_server_name(&message[4..whole]).map_or(Hello::Unreadable, Hello::Names);
        }
    }
}

/// The host name in a ClientHello's body (RFC 8446, 4.1.2; RFC 6066, 3), `None` where it
/// names none; `Err` where the body cannot be read.
fn hello_server_name(body: &[u8]) -> Result<Option<String>, ()> {
    struct Cursor<'a>(&'a [u8]);
    impl<'a> Cursor<'a> {
        fn take(&mut self, n: usize) -> Result<&'a [u8], ()> {
            if self.0.len() < n {
                return Err(());
            }
            let (taken, rest) = self.0.split_at(n);
            self.0 = rest;
            Ok(taken)
        }
        fn number(&mut self, bytes: usize) -> Result<usize, ()> {
            Ok(self.take(bytes)?.iter().fold(0, |n, b| n << 8 | usize::from(*b)))
        }
        fn vector(&mut self, length_bytes: usize) -> Result<Cursor<'a>, ()> {
            let n = self.number(length_bytes)?;
            Ok(Cursor(self.take(n)?))
        }
    }
    let mut hello = Cursor(body);
    hello.take(2 + 32)?; // version, random
    hello.vector(1)?; // session id
    hello.vector(2)?; // cipher suites
    hello.vector(1)?; // compression methods
    if hello.0.is_empty() {
        return Ok(None);
    }
    let mut extensions = hello.vector(2)?;
    while !extensions.0.is_empty() {
        let kind = extensions.number(2)?;
        let mut data = extensions.vector(2)?;
        if kind != 0 {
            continue;
        }
        let mut names = data.vector(2)?;
        while !names.0.is_empty() {
            let name_type = names.number(1)?;
            let name = names.vector(2)?.0;
            if name_type == 0 {
                return std::str::from_utf8(name).ok().and_then(host_name).map(Some).ok_or(());
            }
        }
        return Ok(None);
    }
    Ok(None)
}

/// Reads the box's first bytes on a tunnel to `host` onto `first` (which holds any that came
/// with the tunnel's request) until they show whether they are TLS and, if so, which host their
/// ClientHello names: another host than `host` is refused, and so is TLS agentsh cannot read.
fn hello_names(client: &mut TcpStream, first: &mut Vec<u8>, host: &str) -> Result<(), String> {
    let shown = |name: &str| crate::text::sanitize::sanitize(name);
    let mut chunk = [0u8; 4096];
    loop {
        match client_hello(first) {
            Hello::NotTls | Hello::Names(None) => return Ok(()),
            Hello::Names(Some(name)) if name.trim_end_matches('.') == host.trim_end_matches('.') => return Ok(()),
            Hello::Names(Some(name)) => {
                return Err(format!(
                    "the box's TLS asked for {} on a tunnel to {}: a tunnel reaches only the host it was opened to",
                    shown(&name),
                    shown(host)
                ));
            }
            Hello::Unreadable => {
                return Err("the box's first bytes began TLS, but no ClientHello agentsh can read".into());
            }
            Hello::Short if first.len() > MAX_HELLO => {
                return Err(format!("the box's TLS ClientHello is over {} KiB", MAX_HELLO / 1024));
            }
            Hello::Short => {}
        }
        match client.read(&mut chunk) {
            Ok(0) if first.is_empty() => return Ok(()),
            Ok(0) => return Err("the box ended the tunnel within its TLS ClientHello".into()),
            Ok(n) => first.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading the box's TLS ClientHello: {e}")),
        }
    }
}

/// `host:port` as a URL or `Host` header names it: an IPv6 address in brackets, and no port
/// where it is `default`.
fn shown_authority(host: &str, port: u16, default: u16) -> String {
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_string() };
    if port == default { host } else { format!("{host}:{port}") }
}

/// Why a plain-HTTP request head (`head`, its `headers` as parsed) cannot go to `host:port`, the
/// host its URL names: a line not ended by CRLF (a server that reads a bare LF as a line end
/// would see headers agentsh did not), more than one `Host`, or a `Host` naming another host.
fn plain_head(head: &[u8], headers: &[(String, String)], host: &str, port: u16) -> Result<(), String> {
    super::tls::http::crlf_only(head).map_err(|what| format!("the request has {what}"))?;
    let hosts: Vec<&str> = headers.iter().filter(|(k, _)| k == "host").map(|(_, v)| v.as_str()).collect();
    match hosts[..] {
        [] => Ok(()),
        [named] if split_host_port(named, 80).is_some_and(|(h, p)| h == host && p == port) => Ok(()),
        [named] => Err(format!(
            "the request's Host header names {}, not {}, the host its URL names: the proxy sends a request only \
             to the host its URL names",
            crate::text::sanitize::sanitize(named),
            shown_authority(host, port, 80)
        )),
        _ => Err("the request has more than one Host header".into()),
    }
}

/// `host:port` (or `[v6]:port`), with `default` where no port is named.
fn split_host_port(text: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (text, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default,
    };
    (port > 0).then_some((host_name(host.trim())?, port))
}

/// A host as the box may name one (CONNECT, a plain-HTTP URL, SOCKS5), lowercased: a name of
/// letters, digits, `-`, `_` and `.`, or an IPv6 address; at most 253 characters. Never a
/// pattern (`*.com`, which an "always" would save to sandbox.allowHosts as every .com host),
/// nor a control character (which would forge lines in notes and prompts).
pub(crate) fn host_name(text: &str) -> Option<String> {
    let host = text.to_ascii_lowercase();
    let plain = host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    let v6 = host.contains(':') && host.parse::<std::net::Ipv6Addr>().is_ok();
    (!host.is_empty() && host.len() <= 253 && (plain || v6)).then_some(host)
}

/// A refusal noted for the command (`notes/<id>`): one line, `host:port`, a tab, and why, each
/// sanitized so that no text of the box's can start a line of its own.
fn note_line(host: &str, port: u16, why: &str) -> String {
    use crate::text::sanitize::sanitize;
    format!("{}:{port}\t{}\n", sanitize(host), sanitize(why))
}

/// The record id in `Basic base64(agentsh:<id>)`.
fn command_id(header: &str) -> Option<String> {
    let b64 = header.strip_prefix("Basic ").or_else(|| header.strip_prefix("basic "))?;
    let decoded = String::from_utf8(crate::text::base64::decode(b64.trim())?).ok()?;
    let (user, id) = decoded.split_once(':')?;
    (user == "agentsh" && valid_id(id)).then(|| id.to_string())
}

/// A record id as the audit trail makes them (`<hex ms>-<pid>`).
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// The environment that points a box's tools at the proxy, naming the command `id`.
pub fn environment(id: &str) -> Vec<(String, String)> {
    let http = format!("http://agentsh:{id}@127.0.0.1:{HTTP_PORT}");
    let socks = format!("socks5h://agentsh:{id}@127.0.0.1:{SOCKS_PORT}");
    let local = "localhost,127.0.0.1,::1".to_string();
    let mut out = Vec::new();
    for (k, v) in [("HTTP_PROXY", &http), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks), ("NO_PROXY", &local)] {
        out.push((k.to_string(), v.clone()));
        out.push((k.to_ascii_lowercase(), v.clone()));
    }
    out
}

/// How a note begins whose host was reached but whose credentials could not be carried
/// ([`Proxy::tunnel`]), as against a host the proxy refused.
pub const CREDENTIALS_FAILED: &str = "credentials: ";

/// What the proxy refused the command `id`, noted in `records` (and the note removed). A note
/// whose reason begins [`CREDENTIALS_FAILED`] is a connection that was allowed but could not
/// carry its credentials.
pub fn refusals(records: &Path, id: &str) -> Vec<(String, String)> {
    if !valid_id(id) {
        return Vec::new();
    }
    let path = records.join("notes").join(id);
    let Ok(text) = read_capped(&path, 64 * 1024) else { return Vec::new() };
    let _ = std::fs::remove_file(&path);
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some((hp, why)) = line.split_once('\t')
            && !out.iter().any(|(h, _)| h == hp)
        {
            out.push((hp.to_string(), why.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_hosts_and_ports() {
        let p = |t: &str| Pattern::parse(t).unwrap();
        assert!(p("example.com").matches("example.com", 443) && p("example.com").matches("example.com", 80));
        assert!(!p("example.com").matches("example.com", 22) && !p("example.com").matches("a.example.com", 443));
        assert!(p("*.example.com").matches("a.b.example.com", 443) && !p("*.example.com").matches("example.com", 443));
        assert!(!p("*.example.com").matches("evilexample.com", 443));
        assert!(p("example.com:22").matches("example.com", 22) && p("example.com:*").matches("example.com", 5432));
        assert!(p("[::1]:8080").matches("::1", 8080) && p("127.0.0.1:8080").local());
        for bad in ["", "*", "a*.b", "host:0", "host:x", "*."] {
            assert_eq!(Pattern::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_policy_denies_what_is_denied_allows_registries_and_remotes_and_asks_about_the_rest() {
        let policy = NetPolicy {
            allow: vec!["internal.example:8443".into(), "localhost:3000".into()],
            deny: vec!["pypi.org".into()],
            ..NetPolicy::default()
        };
        let mut rules = Rules::of(&policy);
        rules.builtin.extend(remotes(
            "[remote \"origin\"]\n\turl = git@github.com:me/repo.git\n\tpushurl = https://gitlab.example/x.git\n",
        ));
        assert!(
            matches!(rules.decide("pypi.org", 443, Via::Tunnel), Some(Verdict::Deny(_))),
            "denyHosts wins over the registries"
        );
        assert!(matches!(rules.decide("registry.npmjs.org", 443, Via::Tunnel), Some(Verdict::Allow(_))));
        assert!(matches!(rules.decide("github.com", 22, Via::Tunnel), Some(Verdict::Allow(_))));
        assert!(matches!(rules.decide("gitlab.example", 443, Via::Tunnel), Some(Verdict::Allow(_))));
        assert!(matches!(rules.decide("internal.example", 8443, Via::Tunnel), Some(Verdict::Allow(_))));
        assert_eq!(rules.decide("evil.example", 443, Via::Tunnel), None, "asks");
        assert!(matches!(rules.decide("127.0.0.1", 8080, Via::Tunnel), Some(Verdict::Deny(_))));
        assert!(matches!(rules.decide("169.254.169.254", 80, Via::Tunnel), Some(Verdict::Deny(_))));
        assert!(matches!(rules.decide("localhost", 3000, Via::Tunnel), Some(Verdict::Allow(_))));
        // A name that resolves to a local address reaches it only where a local pattern allows.
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(!rules.address_ok("registry.npmjs.org", 443, &ip));
        assert!(rules.address_ok("localhost", 3000, &ip));
    }

    /// rt8 B2: the local network's private ranges and this machine's own interfaces are local:
    /// a literal is refused unless named, a name resolving there is reached only where
    /// allowHosts names that host exactly (and this machine's only through a local pattern).
    #[test]
    fn the_local_network_and_this_machines_interfaces_are_local() {
        for ip in ["10.1.2.3", "172.16.0.9", "172.31.255.1", "192.168.1.10", "100.64.0.1", "fd00::2", "fc00::1"] {
            assert!(local_address(&ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "11.0.0.1"] {
            assert!(!local_address(&ip.parse().unwrap()), "{ip}");
        }
        // An interface's own address, not loopback's (where the machine has one).
        let own = nix::ifaddrs::getifaddrs()
            .unwrap()
            .filter_map(|i| i.address)
            .filter_map(|a| a.as_sockaddr_in().map(|s| s.ip()))
            .find(|v4| !v4.is_loopback() && !v4.is_link_local())
            .map_or(IpAddr::from([127, 0, 0, 1]), IpAddr::V4);
        assert!(machine_address(&own), "{own}");
        let rules = Rules::of(&NetPolicy {
            allow: vec!["npm.corp.example".into(), "*.corp.example".into()],
            ..NetPolicy::default()
        });
        let lan: IpAddr = "10.1.2.3".parse().unwrap();
        assert!(matches!(rules.decide("10.1.2.3", 443, Via::Tunnel), Some(Verdict::Deny(_))));
        assert!(rules.address_ok("npm.corp.example", 443, &lan), "named exactly");
        assert!(!rules.address_ok("other.corp.example", 443, &lan), "through a pattern's *.");
        assert!(!rules.address_ok("registry.npmjs.org", 443, &lan), "a registry re-pointed");
        assert!(!rules.address_ok("npm.corp.example", 443, &own), "this machine needs a local pattern");
    }

    #[test]
    fn only_remote_sections_name_the_projects_remotes() {
        // What `git submodule init` leaves after the box wrote `.gitmodules` (rt3 G6), beside
        // the person's own remotes in every spelling git takes.
        let config = "[core]\n\tbare = false\n\turl = https://core.example/x\n\
                      [remote \"origin\"]\n\turl = https://github.com/me/repo.git\n\
                      [submodule \"vendor/lib\"]\n\tactive = true\n\turl = https://exfil.rt3.example/lib.git\n\
                      [Remote \"up]stream\"] URL = git@gitlab.example:me/repo.git\n\
                      [submodule \"a\\\"]\"]\n\turl = https://quoted.example/x\n\
                      [remote.old]\n\tpushurl = ssh://push.example:2222/x\n\
                      [url \"https://insteadof.example/\"]\n\tinsteadOf = https://github.com/\n\
                      [branch \"main\"]\n\tremote = origin\n\turl = https://branch.example/\n";
        let got: Vec<String> = remotes(config).iter().map(|p| p.to_string()).collect();
        assert_eq!(got, ["github.com:443", "gitlab.example:22", "push.example:2222"]);
    }

    #[test]
    fn requests_name_their_command() {
        assert_eq!(command_id("Basic YWdlbnRzaDoxOWFiLTQy").as_deref(), Some("19ab-42"));
        assert_eq!(command_id("Basic bm9ib2R5OjE5YWItNDI="), None, "another user");
        assert_eq!(split_host_port("example.com:8443", 443), Some(("example.com".into(), 8443)));
        assert_eq!(split_host_port("Example.COM", 80), Some(("example.com".into(), 80)));
        assert_eq!(split_host_port("[::1]:8080", 80), Some(("::1".into(), 8080)));
        assert_eq!(split_host_port("a b:80", 80), None);
        assert_eq!(split_host_port("*.com:443", 443), None, "a pattern is no host");
    }

    /// CONNECT, plain HTTP and SOCKS5 take a host through one check: a SOCKS5 name `*.com`
    /// would otherwise be asked about, and an "always" save every .com host (rt-proc).
    #[test]
    fn a_host_is_a_name_or_an_address_never_a_pattern() {
        for (text, want) in [
            ("Example.COM", Some("example.com")),
            ("registry.npmjs.org.", Some("registry.npmjs.org.")),
            ("my_host-1", Some("my_host-1")),
            ("2001:db8::1", Some("2001:db8::1")),
            ("::ffff:127.0.0.1", Some("::ffff:127.0.0.1")),
            ("*.com", None),
            ("*", None),
            ("evil.com\n203.0.113.7:80\tthe person allowed it", None),
            ("a b", None),
            ("host:80", None),
            ("", None),
            ("exa\u{202e}mple.com", None),
        ] {
            assert_eq!(host_name(text).as_deref(), want, "{text:?}");
        }
        assert_eq!(host_name(&"a".repeat(254)), None, "longer than a name can be");
    }

    #[test]
    fn a_note_is_one_line_whatever_its_text() {
        let line = note_line("a\nb", 443, "why\tand\n\x1b[31mmore");
        assert_eq!(line, "a\\nb:443\twhy\\tand\\n\\x1b[31mmore\n");
        assert_eq!(line.lines().count(), 1);
        assert_eq!(line.matches('\t').count(), 1);
    }

    /// rt3 G2: a tunnel to port 80 is raw plain HTTP with the box's own `Host`; it is opened only
    /// where sandbox.allowHosts names the host's port 80 in so many words. Plain HTTP (whose
    /// `Host` the proxy writes) reaches a bare name's port 80 as before.
    #[test]
    fn a_tunnel_to_port_80_needs_the_port_named() {
        let policy = NetPolicy {
            allow: vec!["bare.example".into(), "named.example:80".into(), "every.example:*".into()],
            ..NetPolicy::default()
        };
        let rules = Rules::of(&policy);
        for (host, port, via, allowed) in [
            ("registry.npmjs.org", 80, Via::Tunnel, false),
            ("registry.npmjs.org", 443, Via::Tunnel, true),
            ("registry.npmjs.org", 80, Via::Http, true),
            ("bare.example", 80, Via::Tunnel, false),
            ("bare.example", 80, Via::Http, true),
            ("bare.example", 443, Via::Tunnel, true),
            ("named.example", 80, Via::Tunnel, true),
            ("every.example", 80, Via::Tunnel, true),
        ] {
            let verdict = rules.decide(host, port, via);
            assert_eq!(matches!(verdict, Some(Verdict::Allow(_))), allowed, "{host}:{port} {via:?}: {verdict:?}");
        }
        let Some(Verdict::Deny(why)) = rules.decide("unlisted.example", 80, Via::Tunnel) else { panic!() };
        assert!(why.contains("names \"unlisted.example:80\""), "{why}");
    }

    /// rt3 G2: a plain-HTTP request goes to the host its URL names, with that host as its `Host`.
    #[test]
    fn a_plain_request_names_only_the_host_of_its_url() {
        let head = |h: &str| format!("GET http://a.example/ HTTP/1.1\r\n{h}");
        let check = |text: &str, host: &str, port: u16| {
            let headers: Vec<(String, String)> = text
                .split("\r\n")
                .skip(1)
                .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
                .collect();
            plain_head(text.as_bytes(), &headers, host, port)
        };
        assert_eq!(check(&head("Host: a.example"), "a.example", 80), Ok(()));
        assert_eq!(check(&head("Host: A.Example:80"), "a.example", 80), Ok(()));
        assert_eq!(check(&head("Host: a.example:8080"), "a.example", 8080), Ok(()));
        assert_eq!(check(&head("Accept: */*"), "a.example", 80), Ok(()), "HTTP/1.0 style: agentsh adds it");
        let refused = |text: &str, port: u16, want: &str| {
            let e = check(text, "a.example", port).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        };
        refused(&head("Host: attacker.example"), 80, "names attacker.example, not a.example");
        refused(&head("Host: a.example:8080"), 80, "not a.example, the host its URL names");
        refused(&head("Host: a.example"), 443, "not a.example:443");
        refused(&head("Host: a.example\r\nHost: b.example"), 80, "more than one Host");
        refused(&head("X-A: 1\nHost: b.example"), 80, "LF alone");
        assert_eq!(shown_authority("::1", 8080, 80), "[::1]:8080");
    }

    fn hello_for(name: &str) -> Vec<u8> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from(name.to_string()).unwrap();
        let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut out = Vec::new();
        conn.write_tls(&mut out).unwrap();
        out
    }

    /// rt3 G2: the host a tunnel's TLS asks for is read from its ClientHello, however it comes.
    #[test]
    fn a_client_hello_names_its_host() {
        let hello = hello_for("registry.npmjs.org");
        assert_eq!(client_hello(&hello), Hello::Names(Some("registry.npmjs.org".into())));
        assert_eq!(client_hello(&hello_for("192.0.2.7")), Hello::Names(None), "no SNI for an address");
        for cut in [0, 1, 5, 40, hello.len() - 1] {
            assert_eq!(client_hello(&hello[..cut]), Hello::Short, "{cut}");
        }
        // The same handshake message in two records.
        let message = &hello[5..];
        let mut split = Vec::new();
        for part in [&message[..30], &message[30..]] {
            split.extend_from_slice(&[22, 3, 1]);
            split.extend_from_slice(&u16::try_from(part.len()).unwrap().to_be_bytes());
            split.extend_from_slice(part);
        }
        assert_eq!(client_hello(&split), Hello::Names(Some("registry.npmjs.org".into())));
        assert_eq!(client_hello(b"SSH-2.0-OpenSSH_9.6\r\n"), Hello::NotTls);
        assert_eq!(client_hello(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
        assert_eq!(client_hello(&[22, 3, 1, 0, 4, 2, 0, 0, 0]), Hello::Unreadable, "a ServerHello");
        let mut bad = hello.clone();
        bad[5 + 4 + 34] = 200; // a session id longer than the message
        assert_eq!(client_hello(&bad), Hello::Unreadable);
    }
}
