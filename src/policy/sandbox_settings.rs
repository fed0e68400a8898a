//! The `sandbox` key of a config file (issues 15, 25, 26): `enabled`, `writable`, `readable`,
//! `denyRead`, `passEnv`, `network`, `allowHosts` and `denyHosts`, validated with
//! `file:line:col` warnings, and the settings in force after every file is merged.
//! `run::sandbox` builds the kernel box from the result.
//!
//! What loosens the box (`enabled: false`, more `writable` or `readable` roots, secrets let in
//! with `passEnv`, `network: "on"`, `allowHosts`) counts only from the user config or a trusted
//! project file (`trust::strip_loosening`); what tightens it (`denyRead`, `network: "off"`,
//! `denyHosts`) counts from any file. A value agentsh cannot read is taken the strict way.

use serde_json::Value;

/// The config key.
pub const KEY: &str = "sandbox";
const FIELDS: &[&str] =
    &["enabled", "writable", "readable", "denyRead", "passEnv", "network", "allowHosts", "denyHosts", "credentials"];

/// One of `sandbox.credentials`: a header the box's proxy adds to requests for `host`, outside
/// the box, so the token never enters it. `value` may name environment variables of agentsh's
/// (`"Bearer ${NPM_TOKEN}"`), which are then kept out of the box's environment. Only the user
/// config may set it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Credential {
    pub host: String,
    pub header: String,
    pub value: String,
}

impl Credential {
    /// The environment variables `value` names (`${NAME}`).
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = self.value.as_str();
        while let Some(i) = rest.find("${") {
            let Some(end) = rest[i + 2..].find('}') else { break };
            out.push(&rest[i + 2..i + 2 + end]);
            rest = &rest[i + 2 + end + 1..];
        }
        out
    }

    /// `value` with each `${NAME}` replaced from `env`; `Err(NAME)` for one that is not set.
    pub fn expand(&self, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut value = self.value.clone();
        for name in self.variables() {
            let v = env(name).ok_or_else(|| name.to_string())?;
            value = value.replace(&format!("${{{name}}}"), &v);
        }
        Ok(value)
    }
}

/// `sandbox.network`. Serialized as written: the box's spec carries it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// The machine's network, unconfined: whatever the box can read can leave.
    On,
    /// A network of the box's own whose only way out is agentsh's proxy, host by host
    /// (issue 26).
    #[default]
    Proxy,
    /// A network of the box's own with nothing in it.
    Off,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::On => "on",
            Network::Proxy => "proxy",
            Network::Off => "off",
        }
    }

    /// Stricter is larger: off, then proxy, then on.
    fn strictness(self) -> u8 {
        match self {
            Network::On => 0,
            Network::Proxy => 1,
            Network::Off => 2,
        }
    }
}

/// One file's `sandbox` object as written, after validation. `None` and empty: not set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSandbox {
    pub enabled: Option<bool>,
    pub writable: Vec<String>,
    /// Paths shown read-only in the box although the box hides them (`~/.config/mytool`).
    pub readable: Vec<String>,
    pub deny_read: Vec<String>,
    /// Environment variables passed into the box although they look like secrets.
    pub pass_env: Vec<String>,
    pub network: Option<Network>,
    /// Hosts the box's network may reach without asking (`example.com`, `*.example.com`,
    /// `host:port`).
    pub allow_hosts: Vec<String>,
    /// Hosts it never reaches, even when allowed elsewhere.
    pub deny_hosts: Vec<String>,
    /// Headers the proxy adds for hosts (user config only).
    pub credentials: Vec<Credential>,
}

impl FileSandbox {
    pub fn is_empty(&self) -> bool {
        *self == FileSandbox::default()
    }
}

/// The sandbox settings in force. Paths are as written (`~/` is expanded by `run::sandbox`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    pub writable: Vec<Sourced>,
    pub readable: Vec<Sourced>,
    pub deny_read: Vec<Sourced>,
    pub pass_env: Vec<String>,
    pub network: Network,
    pub allow_hosts: Vec<Sourced>,
    pub deny_hosts: Vec<Sourced>,
    /// `sandbox.credentials`, from the user config.
    pub credentials: Vec<Credential>,
    /// The file that set each of `enabled` and `network`, when one did.
    pub enabled_from: Option<String>,
    pub network_from: Option<String>,
}

/// A path and the file that named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced {
    pub path: String,
    pub source: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            enabled: true,
            writable: Vec::new(),
            readable: Vec::new(),
            deny_read: Vec::new(),
            pass_env: Vec::new(),
            network: Network::Proxy,
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            credentials: Vec::new(),
            enabled_from: None,
            network_from: None,
        }
    }
}

impl Settings {
    /// Takes one file's `sandbox` object; the stricter value wins where two files disagree.
    /// Loosening values from an untrusted project file were already removed.
    pub fn apply(&mut self, file: &FileSandbox, source: &str) {
        if file.enabled == Some(false) {
            self.enabled = false;
            self.enabled_from = Some(source.to_string());
        }
        // The first file to set it, or a stricter one after it (a looser value from a project
        // file reaches here only when the file is trusted).
        if let Some(n) = file.network
            && (self.network_from.is_none() || n.strictness() > self.network.strictness())
        {
            self.network = n;
            self.network_from = Some(source.to_string());
        }
        let sourced = |p: &String| Sourced { path: p.clone(), source: source.to_string() };
        self.writable.extend(file.writable.iter().map(sourced));
        self.readable.extend(file.readable.iter().map(sourced));
        self.allow_hosts.extend(file.allow_hosts.iter().map(sourced));
        self.deny_hosts.extend(file.deny_hosts.iter().map(sourced));
        self.credentials.extend(file.credentials.iter().cloned());
        self.deny_read.extend(file.deny_read.iter().map(sourced));
        for name in &file.pass_env {
            if !self.pass_env.contains(name) {
                self.pass_env.push(name.clone());
            }
        }
    }
}

/// Validates a file's `sandbox` value; `at` is its `file:line:col`.
pub fn validate(value: &Value, at: &str, s: &mut FileSandbox, warnings: &mut Vec<String>) {
    let Some(map) = value.as_object() else {
        warnings.push(format!(
            "{at}: sandbox must be an object like {{\"network\": \"off\"}}; the sandbox stays on, with the network off"
        ));
        s.network = Some(Network::Off);
        return;
    };
    for (key, v) in map {
        match key.as_str() {
            "enabled" => match v {
                Value::Bool(b) => s.enabled = Some(*b),
                _ => warnings.push(format!("{at}: sandbox.enabled must be true or false; the sandbox stays on")),
            },
            "network" => match v.as_str() {
                Some("on") => s.network = Some(Network::On),
                Some("proxy") => s.network = Some(Network::Proxy),
                Some("off") => s.network = Some(Network::Off),
                _ => {
                    warnings.push(format!(
                        "{at}: sandbox.network must be \"proxy\", \"off\" or \"on\"; using \"off\""
                    ));
                    s.network = Some(Network::Off);
                }
            },
            "allowHosts" => match hosts(v) {
                Some(h) => s.allow_hosts = h,
                None => warnings.push(format!(
                    "{at}: sandbox.allowHosts must be a list of hosts (\"example.com\", \"*.example.com\", \
                     \"host:port\"); ignored, so no more hosts are allowed"
                )),
            },
            "denyHosts" => match hosts(v) {
                Some(h) => s.deny_hosts = h,
                None => {
                    warnings.push(format!(
                        "{at}: sandbox.denyHosts must be a list of hosts; since agentsh cannot tell which to deny, \
                         the network is turned off"
                    ));
                    s.network = Some(Network::Off);
                }
            },
            "credentials" => match credentials(v) {
                Some(c) => s.credentials = c,
                None => warnings.push(format!(
                    "{at}: sandbox.credentials must be a list like [{{\"host\": \"registry.example.com\", \"header\": \
                     \"Authorization\", \"value\": \"Bearer ${{TOKEN_NAME}}\"}}]; ignored, so no credential is added"
                )),
            },
            "writable" => match paths(v) {
                Some(p) => s.writable = p,
                None => warnings.push(format!(
                    "{at}: sandbox.writable must be a list of absolute or ~/ paths; ignored, so nothing more is writable"
                )),
            },
            "readable" => match paths(v) {
                Some(p) => s.readable = p,
                None => warnings.push(format!(
                    "{at}: sandbox.readable must be a list of absolute or ~/ paths; ignored, so nothing more is shown"
                )),
            },
            "passEnv" => match names(v) {
                Some(n) => s.pass_env = n,
                None => warnings.push(format!(
                    "{at}: sandbox.passEnv must be a list of environment variable names (like \"GITHUB_TOKEN\"); \
                     ignored, so no secret is passed into the sandbox"
                )),
            },
            "denyRead" => match paths(v) {
                Some(p) => s.deny_read = p,
                None => {
                    warnings.push(format!(
                        "{at}: sandbox.denyRead must be a list of absolute or ~/ paths; since agentsh cannot tell \
                         what to hide, the network is turned off"
                    ));
                    s.network = Some(Network::Off);
                }
            },
            other => warnings.push(match crate::text::similar::closest(other, FIELDS.iter().copied()) {
                Some(near) => format!("{at}: unknown key \"sandbox.{other}\" is ignored; did you mean \"sandbox.{near}\"?"),
                None => format!("{at}: unknown key \"sandbox.{other}\" is ignored (known keys: {})", FIELDS.join(", ")),
            }),
        }
    }
}

/// A list of host patterns (`example.com`, `*.example.com`, `host:port`, an IP address), or
/// `None` when any item is not one.
fn hosts(v: &Value) -> Option<Vec<String>> {
    let host = |h: &str| {
        !h.is_empty()
            && h.len() <= 255
            && h.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:*[]_".contains(&b))
            && !h.contains("**")
    };
    v.as_array()?.iter().map(|p| p.as_str().filter(|h| host(h)).map(str::to_ascii_lowercase)).collect()
}

/// A list of credentials, or `None` when any item is not one: a host pattern, a header name
/// (token characters) and a value of printable text.
fn credentials(v: &Value) -> Option<Vec<Credential>> {
    v.as_array()?
        .iter()
        .map(|c| {
            let host = hosts(&Value::Array(vec![c.get("host")?.clone()]))?.pop()?;
            let header = c.get("header")?.as_str()?;
            let value = c.get("value")?.as_str()?;
            let token = !header.is_empty() && header.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
            let printable = !value.is_empty() && value.len() <= 8192 && !value.chars().any(char::is_control);
            (token && printable).then(|| Credential { host, header: header.to_string(), value: value.to_string() })
        })
        .collect()
}

/// A list of environment variable names, or `None` when any item is not one.
fn names(v: &Value) -> Option<Vec<String>> {
    let name = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    v.as_array()?.iter().map(|p| p.as_str().filter(|n| name(n)).map(str::to_string)).collect()
}

/// A list of absolute or `~/` paths, or `None` when any item is not one.
fn paths(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|p| p.as_str().filter(|p| p.starts_with('/') || p.starts_with("~/")).map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> (FileSandbox, Vec<String>) {
        let (mut s, mut w) = (FileSandbox::default(), Vec::new());
        validate(&serde_json::from_str(json).unwrap(), "f:1:1", &mut s, &mut w);
        (s, w)
    }

    #[test]
    fn reads_every_field() {
        let (s, w) = read(
            r#"{"enabled": false, "writable": ["/srv/x", "~/data"], "readable": ["~/.config/t"], "denyRead": ["~/.vault"], "passEnv": ["GITHUB_TOKEN"], "network": "off"}"#,
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.enabled, Some(false));
        assert_eq!(s.writable, ["/srv/x", "~/data"]);
        assert_eq!(s.readable, ["~/.config/t"]);
        assert_eq!(s.pass_env, ["GITHUB_TOKEN"]);
        assert_eq!(s.deny_read, ["~/.vault"]);
        assert_eq!(s.network, Some(Network::Off));
    }

    #[test]
    fn what_cannot_be_read_is_taken_the_strict_way() {
        let (s, w) =
            read(r#"{"enabled": "no", "network": "maybe", "writable": ["relative"], "colour": 1, "passEnv": ["A B"]}"#);
        assert_eq!((s.enabled, s.network), (None, Some(Network::Off)));
        assert!(s.writable.is_empty() && s.pass_env.is_empty());
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w.iter().any(|m| m.contains("unknown key \"sandbox.colour\"")), "{w:?}");
        let (s, _) = read(r#"{"denyRead": "~/.vault"}"#);
        assert_eq!(s.network, Some(Network::Off));
        let (s, w) = read(r#"{"denyHosts": "evil.example", "allowHosts": ["a b"]}"#);
        assert_eq!((s.network, s.allow_hosts.len()), (Some(Network::Off), 0));
        assert_eq!(w.len(), 2, "{w:?}");
        let (s, _) = read(r#"true"#);
        assert_eq!(s.network, Some(Network::Off));
    }

    #[test]
    fn the_network_defaults_to_the_proxy_and_the_first_file_or_a_stricter_one_sets_it() {
        assert_eq!(Settings::default().network, Network::Proxy);
        let (f, w) = read(
            r#"{"network": "proxy", "allowHosts": ["Example.com", "*.corp.example:8443"], "denyHosts": ["x.io"]}"#,
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.allow_hosts, ["example.com", "*.corp.example:8443"]);
        let mut s = Settings::default();
        s.apply(&FileSandbox { network: Some(Network::On), ..FileSandbox::default() }, "user");
        assert_eq!(s.network, Network::On, "the user config may loosen it");
        s.apply(&FileSandbox { network: Some(Network::Proxy), ..FileSandbox::default() }, "project");
        assert_eq!(s.network, Network::Proxy, "a stricter file wins");
        s.apply(&FileSandbox { network: Some(Network::On), ..FileSandbox::default() }, "other");
        assert_eq!(s.network, Network::Proxy, "a looser one after it does not");
    }

    #[test]
    fn the_stricter_file_wins() {
        let mut s = Settings::default();
        s.apply(&FileSandbox { network: Some(Network::Off), ..FileSandbox::default() }, "user");
        s.apply(
            &FileSandbox { network: Some(Network::On), deny_read: vec!["~/x".into()], ..FileSandbox::default() },
            "p",
        );
        assert_eq!(s.network, Network::Off);
        assert_eq!(s.network_from.as_deref(), Some("user"));
        assert_eq!(s.deny_read, [Sourced { path: "~/x".into(), source: "p".into() }]);
        assert!(s.enabled);
    }
}
