//! Credentials the box never sees, over HTTPS (issue 26): for a host that has a configured
//! credential, agentsh's proxy ends the box's TLS itself ([`intercept`]), with a certificate
//! for that host made by agentsh's own certificate authority ([`Authority`]), opens its own
//! TLS to the real host (verified against the system's roots, [`Trust`]), and puts the
//! credential into each request on the way out ([`http`]). It owns the authority's file, the
//! certificates and both TLS sessions; it must not decide which hosts are reached or which get a
//! credential (the proxy and the config do), and it never relays a byte unverified.
//!
//! What holds:
//! - The box only ever holds agentsh's authority's *certificate* (in [`Authority::bundle`]);
//!   its key stays in agentsh's state directory, which the box cannot see.
//! - The host's certificate is verified (chain, name, dates) before any request is sent; a
//!   failure ends the connection, and the box is answered `502` with the reason.
//! - A credential goes only to the host the connection was opened to: a request naming another
//!   (`Host`, an absolute URL, a different SNI) is refused, since a CDN would route it by name.
//! - The box never reads a credential back from a host that echoes it verbatim (masked,
//!   [`http::Masker`]); the host is asked for no compression and no ranges, which would hide
//!   it from the mask.
//!
//! What does not:
//! - A tool that pins certificates, or trusts only roots built into it and ignores the
//!   environment's bundle (some Rust programs with webpki-roots, Java's own keystore unless
//!   told), fails on hosts intercepted here: it sees agentsh's certificate.
//! - Only HTTP/1.1 is offered to both sides (ALPN): HTTP/2 and HTTP/3 are not; protocol
//!   switches (websocket) on an intercepted connection are refused.
//! - A host that reflects the credential transformed (compressed, encoded) shows it to the box;
//!   configure credentials only for hosts that keep them.

pub mod http;

use crate::policy::{dirs, files};
use crate::text::sanitize::sanitize;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

/// How long either side may stay silent before the connection is ended: per read and per
/// write, so a slow download that keeps moving is never cut.
pub const IDLE: Duration = Duration::from_secs(120);

/// The authority's file in its directory: its private key, then its certificate (PEM).
pub const CA_FILE: &str = "ca.pem";

/// The files of trusted roots that Linux distributions keep, in the order looked for (Go's
/// crypto/x509 looks for the same). Fixed paths, owned by root: never `SSL_CERT_FILE`, which
/// the agent sets (an agent's own root would let it stand in for a host and read the credential).
pub const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
    "/etc/ssl/ca-bundle.pem",                            // openSUSE
    "/etc/pki/tls/cacert.pem",                           // OpenELEC
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7+
    "/etc/ssl/cert.pem",                                 // Alpine
];

const DAY: Duration = Duration::from_secs(24 * 60 * 60);
/// How long the authority is valid for.
const CA_LIFE: Duration = Duration::from_secs(3650 * 24 * 60 * 60);
/// An authority that expires within this is made anew when loaded.
const CA_RENEW: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// How long a host's certificate is valid for; one is made anew after a day in the cache.
const LEAF_LIFE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Its start is put back this far, for a box whose clock is a little behind.
const SKEW: Duration = DAY;
const MAX_CA_FILE: u64 = 64 * 1024;
/// Host certificates kept at most; the cache is emptied when full.
const MAX_LEAVES: usize = 256;
const MAX_BUNDLE: u64 = 16 * 1024 * 1024;
/// Headers agentsh must frame or route requests by, which no credential may replace.
const NOT_INJECTABLE: &[&str] =
    &["host", "content-length", "transfer-encoding", "connection", "upgrade", "expect", "te", "trailer"];

/// agentsh's own certificate authority for the box's intercepted connections. Loaded (or made)
/// once per proxy process; it makes each host's certificate once and keeps it (a handful of
/// hosts: those with a configured credential). Shared between connections (`Sync`).
pub struct Authority {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// The key of every host certificate: made per process, never written down.
    leaf_key: KeyPair,
    leaves: Mutex<HashMap<String, (Arc<ServerConfig>, SystemTime)>>,
}

/// Why an authority's file cannot be used as it is.
enum Unusable {
    /// It expires soon (or has): make a new one in its place.
    Stale,
    Bad(String),
}

impl Authority {
    /// Loads the authority kept in `dir`, or makes one there. `dir` is made 0700 if missing,
    /// and refused if it is a link, another user's, or writable by others
    /// ([`dirs::private_dir`]); the file is refused if it is a link, another user's, or open
    /// to others in any way (its key could have been read: a new one is then needed). A new
    /// file is written whole (0600) and put in place only if none is there (a link, not a
    /// rename), so two proxies starting at once agree on one authority. One that expires within
    /// 30 days is replaced by a new one.
    pub fn load_or_make(dir: &Path) -> Result<Authority, String> {
        dirs::private_dir(dir)?;
        let path = dir.join(CA_FILE);
        let shown = sanitize(&path.display().to_string());
        let hint = "remove it, and agentsh makes a new authority (the box trusts it from its next command)";
        match read_ca(&path)? {
            None => make(dir, &path, false),
            Some(text) => match Authority::from_pem(&text) {
                Ok(authority) => Ok(authority),
                Err(Unusable::Stale) => make(dir, &path, true),
                Err(Unusable::Bad(why)) => Err(format!("{shown} {why}: {hint}")),
            },
        }
    }

    /// The authority's certificate as PEM: what the box's tools are told to trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// What the box's tools trust: the system's roots (the first of [`SYSTEM_BUNDLES`] that
    /// exists) followed by this authority's certificate, as one PEM bundle. Point every tool at
    /// it (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`, `REQUESTS_CA_BUNDLE`, `PIP_CERT`, `GIT_SSL_CAINFO`,
    /// `CARGO_HTTP_CAINFO`, `NODE_EXTRA_CA_CERTS`, ...): connections agentsh does not intercept
    /// still need the real roots.
    pub fn bundle(&self) -> Result<String, String> {
        let (_, roots) = system_bundle()?;
        let gap = if roots.is_empty() || roots.ends_with('\n') { "" } else { "\n" };
        Ok(format!("{roots}{gap}{}", self.cert_pem))
    }

    /// Parses an authority's file, and checks it: its certificate is valid for 30 more days
    /// ([`Unusable::Stale`] if not), and its key signs for it (a host certificate made now
    /// verifies against it, 30 days from now).
    fn from_pem(text: &str) -> Result<Authority, Unusable> {
        let bad = |what: &str, e: &dyn std::fmt::Display| Unusable::Bad(format!("{what} ({e})"));
        let key = PrivateKeyDer::from_pem_slice(text.as_bytes()).map_err(|e| bad("holds no private key", &e))?;
        let key = KeyPair::try_from(&key).map_err(|e| bad("holds a private key agentsh cannot use", &e))?;
        let cert = CertificateDer::from_pem_slice(text.as_bytes()).map_err(|e| bad("holds no certificate", &e))?;
        let cert_pem = pem_block(text, "CERTIFICATE").ok_or(Unusable::Bad("holds no certificate".into()))?;
        let leaf_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| Unusable::Bad(format!("cannot make a key ({e})")))?;
        let authority = Authority {
            cert_pem,
            issuer: Issuer::new(ca_params(&key), key),
            leaf_key,
            leaves: Mutex::new(HashMap::new()),
        };
        let now = SystemTime::now();
        let later = now + CA_RENEW;
        // Its own dates: a trust anchor's are not checked by rustls, but OpenSSL (curl, git,
        // Python) refuses an expired one.
        match not_after(&cert) {
            None => return Err(Unusable::Bad("holds a certificate whose dates cannot be read".into())),
            Some(until) if until < later => return Err(Unusable::Stale),
            Some(_) => {}
        }
        let probe = "agentsh.invalid";
        let leaf = authority.mint(probe, now - SKEW, later + DAY).map_err(Unusable::Bad)?;
        let mut roots = RootCertStore::empty();
        roots.add(cert).map_err(|e| bad("holds a certificate that is no authority", &e))?;
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| bad("holds a certificate that is no authority", &e))?;
        let name = ServerName::try_from(probe).map_err(|e| Unusable::Bad(e.to_string()))?;
        match verifier.verify_server_cert(&leaf, &[], &name, &[], unix(later)) {
            Ok(_) => Ok(authority),
            Err(e) => Err(bad("holds a certificate its key does not sign for", &e)),
        }
    }

    /// A certificate for `host` (a name or an IP address), signed by this authority.
    fn mint(&self, host: &str, from: SystemTime, until: SystemTime) -> Result<CertificateDer<'static>, String> {
        let mut params =
            CertificateParams::new(vec![host.to_string()]).map_err(|e| format!("no certificate for {host}: {e}"))?;
        let mut name = DistinguishedName::new();
        // A common name is at most 64 characters (RFC 5280); clients read the alternative name.
        if host.len() <= 64 {
            name.push(DnType::CommonName, host);
        }
        params.distinguished_name = name;
        params.not_before = datetime(from);
        params.not_after = datetime(until);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.serial_number = Some(serial()?);
        let cert =
            params.signed_by(&self.leaf_key, &self.issuer).map_err(|e| format!("no certificate for {host}: {e}"))?;
        Ok(cert.der().clone())
    }

    /// The TLS configuration that shows the box `host`'s certificate: made once per host per
    /// day, and kept.
    fn server_config(&self, host: &str) -> Result<Arc<ServerConfig>, String> {
        let mut leaves = self.leaves.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((config, made)) = leaves.get(host)
            && made.elapsed().is_ok_and(|age| age < DAY)
        {
            return Ok(Arc::clone(config));
        }
        let now = SystemTime::now();
        let cert = self.mint(host, now - SKEW, now + LEAF_LIFE)?;
        let key = PrivateKeyDer::Pkcs8(self.leaf_key.serialize_der().into());
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .map_err(|e| format!("no certificate for {host}: {e}"))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        // A credential for `*.example.com` lets the box name endless hosts: the cache stays small.
        if leaves.len() >= MAX_LEAVES {
            leaves.clear();
        }
        leaves.insert(host.to_string(), (Arc::clone(&config), now));
        Ok(config)
    }
}

/// The authority's parameters: all but its dates are a function of its key, so that a loaded
/// key alone makes the issuer its certificate names (subject, key identifier, usages).
fn ca_params(key: &KeyPair) -> CertificateParams {
    let mut params = CertificateParams::default();
    let id = params.key_identifier(key);
    let mut name = DistinguishedName::new();
    let hex: String = id.iter().take(6).map(|b| format!("{b:02x}")).collect();
    name.push(DnType::CommonName, format!("agentsh box authority {hex}"));
    name.push(DnType::OrganizationName, "agentsh");
    params.distinguished_name = name;
    // It signs host certificates only: never another authority.
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    params
}

/// Makes a new authority in `dir`: its file written whole to a private temp file, then linked
/// into place (or renamed over a stale one, with `replace`). Another process that linked one
/// first wins, and that one is loaded.
fn make(dir: &Path, path: &Path, replace: bool) -> Result<Authority, String> {
    let shown = sanitize(&path.display().to_string());
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(|e| format!("cannot make a key: {e}"))?;
    let mut params = ca_params(&key);
    let now = SystemTime::now();
    params.not_before = datetime(now - SKEW);
    params.not_after = datetime(now + CA_LIFE);
    params.serial_number = Some(serial()?);
    let cert = params.self_signed(&key).map_err(|e| format!("cannot make agentsh's authority: {e}"))?;
    let text = format!("{}{}", key.serialize_pem(), cert.pem());
    let authority = match Authority::from_pem(&text) {
        Ok(authority) => authority,
        Err(Unusable::Stale) => return Err("the authority agentsh made expires at once: is the clock right?".into()),
        Err(Unusable::Bad(why)) => return Err(format!("the authority agentsh made {why}")),
    };
    let cannot = |e: io::Error| format!("cannot write {shown}: {e}");
    let (_, tmp) = crate::ask::queue::write_temp(dir, CA_FILE, text.as_bytes(), false).map_err(cannot)?;
    let placed = if replace { std::fs::rename(&tmp, path) } else { std::fs::hard_link(&tmp, path) };
    let _ = std::fs::remove_file(&tmp);
    match placed {
        Ok(()) => Ok(authority),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match read_ca(path)? {
            Some(theirs) => Authority::from_pem(&theirs).map_err(|_| format!("{shown} was just made, and is unusable")),
            None => Err(format!("{shown} was made and removed at once; try again")),
        },
        Err(e) => Err(cannot(e)),
    }
}

/// The authority's file, when there is one: a regular file of this user's, not a link, open to
/// no one else.
fn read_ca(path: &Path) -> Result<Option<String>, String> {
    let shown = sanitize(&path.display().to_string());
    let opened = match files::open(path, files::Links::Refuse).and_then(files::Regular::owned) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown} {e}: remove it, and agentsh makes a new authority")),
        Ok(opened) => opened,
    };
    let mode = opened.meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{shown} is open to other users (mode {mode:o}), who could have read its key: remove it, and \
             agentsh makes a new authority"
        ));
    }
    let bytes = opened.read_capped(MAX_CA_FILE).map_err(|e| format!("{shown} {e}"))?;
    String::from_utf8(bytes).map(Some).map_err(|_| format!("{shown} is not text: remove it"))
}

/// When a certificate (DER) expires: its `validity.notAfter`, read by walking the DER to it
/// (`Certificate` > `tbsCertificate` > [version], serial, signature, issuer, `validity`).
fn not_after(der: &[u8]) -> Option<SystemTime> {
    /// The next element of `der`: its tag, its contents, and what follows it.
    fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = der.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            (rest[..n].iter().fold(0usize, |len, &b| len << 8 | usize::from(b)), &rest[n..])
        };
        (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
    }
    const SEQUENCE: u8 = 0x30;
    let (SEQUENCE, cert, _) = element(der)? else { return None };
    let (SEQUENCE, tbs, _) = element(cert)? else { return None };
    let (tag, _, mut rest) = element(tbs)?;
    if tag == 0xa0 {
        rest = element(rest)?.2; // the version came first: then the serial
    }
    let rest = element(rest)?.2; // signature algorithm
    let rest = element(rest)?.2; // issuer
    let (SEQUENCE, validity, _) = element(rest)? else { return None };
    let (_, after) = element(element(validity)?.2).map(|(tag, value, _)| (tag, value))?;
    let text = std::str::from_utf8(after).ok()?.strip_suffix('Z')?;
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<u32>().ok();
    // UTCTime (tag 23) has a two-digit year, 1950-2049; GeneralizedTime (24) four digits.
    let (year, at) = match text.len() {
        12 => (number(0..2).map(|y| if y < 50 { 2000 + y } else { 1900 + y })?, 2),
        14 => (number(0..4)?, 4),
        _ => return None,
    };
    let field = |i: usize| number(at + 2 * i..at + 2 * i + 2);
    let month = time::Month::try_from(u8::try_from(field(0)?).ok()?).ok()?;
    let date = time::Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(field(1)?).ok()?).ok()?;
    let hms = [field(2)?, field(3)?, field(4)?].map(|v| u8::try_from(v).unwrap_or(u8::MAX));
    let at = date.with_hms(hms[0], hms[1], hms[2]).ok()?.assume_utc().unix_timestamp();
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(at).ok()?))
}

/// The first PEM block labelled `label` in `text`, with its armour lines.
fn pem_block(text: &str, label: &str) -> Option<String> {
    let (begin, end) = (format!("-----BEGIN {label}-----"), format!("-----END {label}-----"));
    let start = text.find(&begin)?;
    let stop = start + text[start..].find(&end)? + end.len();
    Some(format!("{}\n", &text[start..stop]))
}

/// A random serial number (positive, 16 bytes: RFC 5280 allows 20).
fn serial() -> Result<SerialNumber, String> {
    let mut bytes = [0u8; 16];
    provider().secure_random.fill(&mut bytes).map_err(|_| "no random numbers for a certificate".to_string())?;
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    Ok(SerialNumber::from_slice(&bytes))
}

fn since_epoch(t: SystemTime) -> Duration {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default()
}

fn datetime(t: SystemTime) -> time::OffsetDateTime {
    let secs = i64::try_from(since_epoch(t).as_secs()).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

fn unix(t: SystemTime) -> UnixTime {
    UnixTime::since_unix_epoch(since_epoch(t))
}

/// rustls's cryptography, on ring: named, not taken from a process-wide default, so that no
/// other crate's choice changes it.
fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    Arc::clone(PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())))
}

// ---------------------------------------------------------------------------------------------
// The host's side

/// What a host's certificate is verified against.
pub enum Trust {
    /// The system's roots: the first of [`SYSTEM_BUNDLES`] that exists, read once per process.
    System,
    /// These roots only (DER): for tests, with a stand-in host's own authority.
    Roots(Vec<Vec<u8>>),
}

impl Trust {
    fn client_config(&self) -> Result<Arc<ClientConfig>, String> {
        match self {
            Trust::System => {
                static SYSTEM: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
                SYSTEM
                    .get_or_init(|| {
                        let (path, pem) = system_bundle()?;
                        let certs = CertificateDer::pem_slice_iter(pem.as_bytes()).filter_map(Result::ok);
                        let mut roots = RootCertStore::empty();
                        let (added, _) = roots.add_parsable_certificates(certs);
                        if added == 0 {
                            return Err(format!("{} holds no certificate agentsh can use", path.display()));
                        }
                        client_config(roots)
                    })
                    .clone()
            }
            Trust::Roots(ders) => {
                let mut roots = RootCertStore::empty();
                for der in ders {
                    roots.add(CertificateDer::from(der.clone())).map_err(|e| format!("a root is unusable: {e}"))?;
                }
                client_config(roots)
            }
        }
    }
}

fn client_config(roots: RootCertStore) -> Result<Arc<ClientConfig>, String> {
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The system's file of trusted roots and its text, read once per process.
fn system_bundle() -> Result<&'static (PathBuf, String), String> {
    static BUNDLE: OnceLock<Result<(PathBuf, String), String>> = OnceLock::new();
    BUNDLE
        .get_or_init(|| {
            for path in SYSTEM_BUNDLES.iter().map(PathBuf::from) {
                match files::read_capped(&path, MAX_BUNDLE) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(format!("{} {e}", path.display())),
                    Ok(bytes) => {
                        let text = String::from_utf8(bytes).map_err(|_| format!("{} is not text", path.display()))?;
                        return Ok((path, text));
                    }
                }
            }
            Err(format!(
                "no file of trusted certificate authorities ({}): install the ca-certificates package",
                SYSTEM_BUNDLES.join(", ")
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
}

// ---------------------------------------------------------------------------------------------
// One intercepted connection

/// How an intercepted connection went: the bytes each way (plain HTTP, as relayed: to the host
/// with the credentials in, to the box with them masked), and why it ended early, if it did.
#[must_use]
#[derive(Debug)]
pub struct Relayed {
    pub to_host: u64,
    pub to_box: u64,
    pub result: Result<(), String>,
}

/// Ends the box's TLS on `client` as `host` (a certificate for `host` made by `auth`, kept per
/// host), opens TLS to the real `host` over the already-connected `upstream` (verified against
/// `trust`, SNI = `host`), and relays HTTP/1.1 ([`http::relay`]): for every request on the
/// connection (keep-alive and pipelining included; `Content-Length` and chunked bodies framed),
/// the headers in `inject` replace any of the same name the box sent (ASCII case-insensitive).
/// Bodies are streamed both ways, never held whole. ALPN offers `http/1.1` only, on both sides.
/// Every read is bounded (a head at most [`http::MAX_HEAD`]) and either side silent for [`IDLE`]
/// ends the connection.
///
/// `host` is the name (or IP address, without brackets) the box asked the proxy for. A failure
/// (the host's certificate, the box's TLS, a refused request) ends the connection with the
/// reason in [`Relayed::result`]; where the box can still be told, it is answered with an HTTP
/// error that says why. Nothing is ever relayed to a host that was not verified.
pub fn intercept(
    auth: &Authority,
    client: TcpStream,
    upstream: TcpStream,
    host: &str,
    inject: &[(String, String)],
    trust: &Trust,
) -> Relayed {
    let mut counts = http::Counts::default();
    let result = run(auth, client, upstream, host, inject, trust, &mut counts);
    Relayed { to_host: counts.up, to_box: counts.down, result }
}

fn run(
    auth: &Authority,
    client: TcpStream,
    upstream: TcpStream,
    host: &str,
    inject: &[(String, String)],
    trust: &Trust,
    counts: &mut http::Counts,
) -> Result<(), String> {
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let shown = sanitize(&host);
    check_inject(inject)?;
    let name = ServerName::try_from(host.clone()).map_err(|_| format!("{shown} is not a host name or address"))?;
    for socket in [&client, &upstream] {
        socket.set_read_timeout(Some(IDLE)).map_err(|e| e.to_string())?;
        socket.set_write_timeout(Some(IDLE)).map_err(|e| e.to_string())?;
        let _ = socket.set_nodelay(true);
    }
    let server = ServerConnection::new(auth.server_config(&host)?).map_err(|e| e.to_string())?;
    let mut to_box = StreamOwned::new(server, client);
    handshake(&mut to_box.conn, &mut to_box.sock).map_err(|e| format!("the box's TLS handshake failed: {e}"))?;
    if let Some(sni) = to_box.conn.server_name()
        && !sni.eq_ignore_ascii_case(&host)
    {
        let why = format!("the box asked for {} on a connection to {shown}", sanitize(sni));
        let why = http::turn_away(&mut to_box, counts, 421, &why);
        end(&mut to_box);
        return Err(why);
    }

    let host_tls = trust.client_config().and_then(|config| {
        let client = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        let mut to_host = StreamOwned::new(client, upstream);
        handshake(&mut to_host.conn, &mut to_host.sock).map_err(|e| e.to_string())?;
        Ok(to_host)
    });
    let mut to_host = match host_tls {
        Ok(to_host) => to_host,
        Err(e) => {
            // The host's certificate names are its text, not agentsh's.
            let why = format!("{shown}'s TLS failed, so nothing was sent to it: {}", sanitize(&e));
            let why = http::turn_away(&mut to_box, counts, 502, &why);
            end(&mut to_box);
            return Err(why);
        }
    };
    let rules = http::Rules { host: &host, inject };
    let relayed = http::relay(&mut to_box, &mut to_host, &rules, counts);
    to_host.conn.send_close_notify();
    let _ = to_host.flush();
    match relayed {
        Err(stop) if stop.cut => {
            // Dropped without close_notify: the box sees the cut, as it would from the host.
            let _ = to_box.sock.shutdown(Shutdown::Both);
            Err(stop.why)
        }
        relayed => {
            end(&mut to_box);
            relayed.map_err(|stop| stop.why)
        }
    }
}

/// Ends the box's side: close_notify, then a lingering close, so that an answer agentsh wrote
/// is read before the socket goes (closing with the box's unread bytes in it would reset the
/// connection, and the box could lose the answer).
fn end(to_box: &mut StreamOwned<ServerConnection, TcpStream>) {
    to_box.conn.send_close_notify();
    let _ = to_box.flush();
    let _ = to_box.sock.shutdown(Shutdown::Write);
    let _ = to_box.sock.set_read_timeout(Some(Duration::from_secs(1)));
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0;
    while drained < 1 << 20 {
        match to_box.sock.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

fn handshake(conn: &mut rustls::ConnectionCommon<impl rustls::SideData>, sock: &mut TcpStream) -> io::Result<()> {
    while conn.is_handshaking() {
        conn.complete_io(sock)?;
    }
    Ok(())
}

/// Every injected header is a valid name and value, and none is one agentsh frames requests by.
fn check_inject(inject: &[(String, String)]) -> Result<(), String> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    for (name, value) in inject {
        if name.is_empty() || !name.bytes().all(token) {
            return Err(format!("{:?} is not a header name", sanitize(name)));
        }
        if NOT_INJECTABLE.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return Err(format!("{name} cannot be set as a credential: agentsh frames requests by it"));
        }
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(format!("the value of {name} has a control character"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;
    use std::os::unix::fs::PermissionsExt;
    use std::thread::JoinHandle;

    const HOST: &str = "registry.test";
    const TOKEN: &str = "Bearer real-secret-token";

    fn inject() -> Vec<(String, String)> {
        vec![("Authorization".to_string(), TOKEN.to_string())]
    }

    // -----------------------------------------------------------------------------------------
    // Stand-ins: a host with its own authority, and a client in the box

    /// A test authority (not agentsh's): the stand-in host's certificates come from it.
    struct TestCa {
        issuer: Issuer<'static, KeyPair>,
        der: Vec<u8>,
    }

    fn test_ca(name: &str) -> TestCa {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        TestCa { issuer: Issuer::new(params, key), der: cert.der().to_vec() }
    }

    /// The stand-in host's TLS: a certificate for `name` from `ca`.
    fn host_config(ca: &TestCa, name: &str) -> Arc<ServerConfig> {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_string()]).unwrap().signed_by(&key, &ca.issuer).unwrap();
        let key = PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        Arc::new(config)
    }

    /// A message's head, and its body.
    type Message = (String, Vec<u8>);

    /// One HTTP/1.1 message read the plain way (this test's own reading, not agentsh's): its
    /// head, and its body decoded (Content-Length or chunked). `None` at the end of the stream.
    fn read_message(r: &mut impl BufRead) -> Option<Message> {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).ok()? == 0 {
                return None;
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
        };
        let mut body = Vec::new();
        if header("transfer-encoding").is_some() {
            loop {
                let mut size = String::new();
                r.read_line(&mut size).ok()?;
                let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
                if size == 0 {
                    let mut trailer = String::new();
                    while r.read_line(&mut trailer).ok()? > 0 && trailer != "\r\n" {
                        head.push_str(&trailer);
                        trailer.clear();
                    }
                    break;
                }
                let mut chunk = vec![0; size + 2];
                r.read_exact(&mut chunk).ok()?;
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = header("content-length") {
            let mut chunk = vec![0; n.parse().ok()?];
            r.read_exact(&mut chunk).ok()?;
            body = chunk;
        }
        Some((head, body))
    }

    /// A stand-in host on 127.0.0.1: for one connection, answers every request (the first
    /// chunked, the rest with a Content-Length), each answer echoing the Authorization it got
    /// (as a careless host might). Returns its port and, at the end, what it was sent.
    fn stand_in(config: Arc<ServerConfig>) -> (u16, JoinHandle<Vec<Message>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let (sock, _) = listener.accept().unwrap();
            let mut tls = BufReader::new(StreamOwned::new(ServerConnection::new(config).unwrap(), sock));
            let mut seen = Vec::new();
            while let Some((head, body)) = read_message(&mut tls) {
                let auth =
                    head.lines().filter(|l| l.to_ascii_lowercase().starts_with("authorization:")).collect::<Vec<_>>();
                let echo = auth.join(" ");
                let answer = if seen.is_empty() {
                    format!(
                        "HTTP/1.1 200 OK\r\nX-Seen: {echo}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n"
                    )
                } else {
                    format!("HTTP/1.1 201 Created\r\nX-Seen: {echo}\r\nContent-Length: 6\r\n\r\nsecond")
                };
                seen.push((head, body));
                let w = tls.get_mut();
                if w.write_all(answer.as_bytes()).and_then(|()| w.flush()).is_err() {
                    break;
                }
            }
            seen
        });
        (port, thread)
    }

    /// agentsh's side: accepts one connection from the box and intercepts it to `port`.
    fn proxy(auth: Arc<Authority>, port: u16, trust: Trust) -> (u16, JoinHandle<Relayed>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy_port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let (client, _) = listener.accept().unwrap();
            let upstream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            intercept(&auth, client, upstream, HOST, &inject(), &trust)
        });
        (proxy_port, thread)
    }

    /// A client in the box: trusts agentsh's authority (and nothing else), asks for `name`.
    fn boxed_client(auth: &Authority, port: u16, name: &str) -> BufReader<StreamOwned<ClientConnection, TcpStream>> {
        let mut roots = RootCertStore::empty();
        roots.add(CertificateDer::from_pem_slice(auth.cert_pem().as_bytes()).unwrap()).unwrap();
        let config = client_config(roots).unwrap();
        let conn = ClientConnection::new(config, ServerName::try_from(name.to_string()).unwrap()).unwrap();
        BufReader::new(StreamOwned::new(conn, TcpStream::connect(("127.0.0.1", port)).unwrap()))
    }

    fn authority() -> (tempfile::TempDir, Arc<Authority>) {
        let dir = tempfile::tempdir().unwrap();
        let auth = Authority::load_or_make(&dir.path().join("tls")).unwrap();
        (dir, Arc::new(auth))
    }

    /// A stand-in host showing `host`'s certificate, and agentsh intercepting one connection to
    /// it, trusting `trusted` upstream.
    struct Wire {
        _dir: tempfile::TempDir,
        auth: Arc<Authority>,
        /// Where the box connects.
        port: u16,
        host: JoinHandle<Vec<Message>>,
        relay: JoinHandle<Relayed>,
    }

    fn wire(host: Arc<ServerConfig>, trusted: &TestCa) -> Wire {
        let (_dir, auth) = authority();
        let (host_port, host) = stand_in(host);
        let (port, relay) = proxy(Arc::clone(&auth), host_port, Trust::Roots(vec![trusted.der.clone()]));
        Wire { _dir, auth, port, host, relay }
    }

    // -----------------------------------------------------------------------------------------
    // Intercepted connections

    #[test]
    fn keep_alive_requests_get_the_credential_and_the_box_never_sees_it() {
        let ca = test_ca("stand-in authority");
        let Wire { _dir, auth, port, host, relay } = wire(host_config(&ca, HOST), &ca);
        let mut client = boxed_client(&auth, port, HOST);

        let w = client.get_mut();
        w.write_all(
            b"POST /upload HTTP/1.1\r\nHost: registry.test\r\nAuthorization: Bearer box-own\r\n\
              Transfer-Encoding: chunked\r\n\r\n6\r\nhello \r\nd\r\nchunked world\r\n0\r\n\r\n",
        )
        .unwrap();
        w.flush().unwrap();
        let first = read_message(&mut client).unwrap();
        let w = client.get_mut();
        w.write_all(b"PUT /x HTTP/1.1\r\nhost: registry.test\r\nAUTHORIZATION: Basic Ym94OmJveA==\r\nContent-Length: 3\r\n\r\nabc")
            .unwrap();
        w.flush().unwrap();
        let second = read_message(&mut client).unwrap();
        client.get_mut().conn.send_close_notify();
        client.get_mut().flush().unwrap();
        drop(client);

        let relayed = relay.join().unwrap();
        assert_eq!(relayed.result, Ok(()));
        let seen = host.join().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        for (head, _) in &seen {
            let auth: Vec<_> = head.lines().filter(|l| l.to_ascii_lowercase().starts_with("authorization:")).collect();
            assert_eq!(auth, [format!("Authorization: {TOKEN}")], "{head}");
        }
        assert_eq!(seen[0].1, b"hello chunked world");
        assert_eq!(seen[1].1, b"abc");
        // The host echoed the credential; the box got the answers, without it.
        assert_eq!((first.1.as_slice(), second.1.as_slice()), (&b"first"[..], &b"second"[..]));
        for (head, _) in [&first, &second] {
            assert!(head.contains("X-Seen: Authorization: ****") && !head.contains("real-secret"), "{head}");
        }
        assert!(relayed.to_host > 0 && relayed.to_box > 0);
    }

    #[test]
    fn a_host_whose_certificate_does_not_verify_gets_nothing() {
        let (ca, other_ca) = (test_ca("stand-in authority"), test_ca("another authority"));
        // Another authority's certificate for the right name, then the right authority's for
        // another name.
        for (config, why) in
            [(host_config(&other_ca, HOST), "UnknownIssuer"), (host_config(&ca, "other.test"), "not valid for name")]
        {
            let Wire { _dir, auth, port, host, relay } = wire(config, &ca);
            let mut client = boxed_client(&auth, port, HOST);
            client.get_mut().write_all(b"GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n").unwrap();
            client.get_mut().flush().unwrap();
            let (head, body) = read_message(&mut client).unwrap();
            let e = relay.join().unwrap().result.unwrap_err();
            assert!(e.contains("registry.test's TLS failed, so nothing was sent to it") && e.contains(why), "{e}");
            assert!(head.starts_with("HTTP/1.1 502 "), "{head}");
            assert!(String::from_utf8_lossy(&body).contains(why));
            assert!(host.join().unwrap().is_empty());
        }
    }

    #[test]
    fn a_client_that_does_not_speak_tls_or_names_another_host_is_refused() {
        let ca = test_ca("stand-in authority");
        let Wire { _dir, port, host, relay, .. } = wire(host_config(&ca, HOST), &ca);
        let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
        plain.write_all(b"GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n").unwrap();
        let e = relay.join().unwrap().result.unwrap_err();
        assert!(e.starts_with("the box's TLS handshake failed"), "{e}");
        drop(plain);
        assert!(host.join().unwrap().is_empty());

        // SNI naming another host than the one connected to, from a client that takes any
        // certificate agentsh's authority signed.
        let Wire { _dir, auth, port, host, relay } = wire(host_config(&ca, HOST), &ca);
        let mut roots = RootCertStore::empty();
        roots.add(CertificateDer::from_pem_slice(auth.cert_pem().as_bytes()).unwrap()).unwrap();
        let inner =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider()).build().unwrap();
        let mut config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AsRegistry(inner)))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let conn = ClientConnection::new(Arc::new(config), ServerName::try_from("evil.test").unwrap()).unwrap();
        let mut client = BufReader::new(StreamOwned::new(conn, TcpStream::connect(("127.0.0.1", port)).unwrap()));
        client.get_mut().write_all(b"GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n").unwrap();
        client.get_mut().flush().unwrap();
        let (head, _) = read_message(&mut client).unwrap();
        assert!(head.starts_with("HTTP/1.1 421 "), "{head}");
        let e = relay.join().unwrap().result.unwrap_err();
        assert!(e.contains("the box asked for evil.test on a connection to registry.test"), "{e}");
        assert!(host.join().unwrap().is_empty());
    }

    /// Verifies agentsh's certificate as one for registry.test, whatever name was asked for.
    #[derive(Debug)]
    struct AsRegistry(Arc<rustls::client::WebPkiServerVerifier>);

    impl ServerCertVerifier for AsRegistry {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            ocsp: &[u8],
            now: UnixTime,
        ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
            self.0.verify_server_cert(end_entity, intermediates, &ServerName::try_from(HOST).unwrap(), ocsp, now)
        }
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.0.verify_tls12_signature(message, cert, dss)
        }
        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.0.verify_tls13_signature(message, cert, dss)
        }
        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.0.supported_verify_schemes()
        }
    }

    #[test]
    fn a_header_flood_is_refused_before_anything_reaches_the_host() {
        let ca = test_ca("stand-in authority");
        let Wire { _dir, auth, port, host, relay } = wire(host_config(&ca, HOST), &ca);
        let mut client = boxed_client(&auth, port, HOST);
        let flood = format!("GET / HTTP/1.1\r\nHost: registry.test\r\nX-Pad: {}\r\n\r\n", "a".repeat(100 * 1024));
        // The box may be cut off mid-write: agentsh stops reading at the bound.
        let _ = client.get_mut().write_all(flood.as_bytes()).and_then(|()| client.get_mut().flush());
        let (head, body) = read_message(&mut client).unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
        assert!(String::from_utf8_lossy(&body).contains("its request head is over 64 KiB"));
        assert!(relay.join().unwrap().result.unwrap_err().starts_with("431 "));
        assert!(host.join().unwrap().is_empty());
    }

    #[test]
    fn credentials_that_would_break_framing_are_not_accepted() {
        assert_eq!(check_inject(&inject()), Ok(()));
        for (name, value) in [("Host", "x"), ("content-length", "1"), ("Bad Name", "x"), ("", "x"), ("X-Key", "a\r\nb")]
        {
            assert!(check_inject(&[(name.into(), value.into())]).is_err(), "{name:?}: {value:?}");
        }
    }

    // -----------------------------------------------------------------------------------------
    // The authority

    #[test]
    fn the_authority_is_made_once_privately_and_loaded_after() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("state/tls");
        let made = Authority::load_or_make(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        let file = dir.join(CA_FILE);
        assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        assert!(made.cert_pem().starts_with("-----BEGIN CERTIFICATE-----\n"), "{}", made.cert_pem());
        assert!(!made.cert_pem().contains("PRIVATE KEY"));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temp file is left");
        let loaded = Authority::load_or_make(&dir).unwrap();
        assert_eq!(loaded.cert_pem(), made.cert_pem());
        // A host's certificate is made once and kept.
        let a = loaded.server_config(HOST).unwrap();
        assert!(Arc::ptr_eq(&a, &loaded.server_config(HOST).unwrap()));
        assert!(!Arc::ptr_eq(&a, &loaded.server_config("other.test").unwrap()));
        assert!(loaded.server_config("127.0.0.1").is_ok());
        fn shared<T: Send + Sync>(_: &T) {}
        shared(&loaded);
        // A box naming endless hosts under a wildcard credential keeps the cache bounded.
        for n in 0..=MAX_LEAVES {
            loaded.server_config(&format!("h{n}.test")).unwrap();
        }
        let kept = loaded.leaves.lock().unwrap().len();
        assert!((1..=MAX_LEAVES).contains(&kept), "{kept}");
    }

    #[test]
    fn an_authority_file_that_could_be_anyones_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("tls");
        let made = Authority::load_or_make(&dir).unwrap();
        let file = dir.join(CA_FILE);
        let refused = |why: &str| {
            let e = Authority::load_or_make(&dir).err().unwrap();
            assert!(e.contains(why), "{why}: {e}");
        };
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        refused("open to other users (mode 644), who could have read its key");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
        refused("open to other users");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::rename(&file, dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), &file).unwrap();
        refused("symbolic link");
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, "not pem").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        refused("holds no private key");
        // Its key with another authority's certificate.
        let other = Authority::load_or_make(&d.path().join("other")).unwrap();
        let key = pem_block(&text, "PRIVATE KEY").unwrap();
        std::fs::write(&file, format!("{key}{}", other.cert_pem())).unwrap();
        refused("holds a certificate its key does not sign for");
        let link_dir = d.path().join("link");
        std::os::unix::fs::symlink(&dir, &link_dir).unwrap();
        assert!(Authority::load_or_make(&link_dir).err().unwrap().contains("symbolic link"));
        std::fs::write(&file, text).unwrap();
        assert_eq!(Authority::load_or_make(&dir).unwrap().cert_pem(), made.cert_pem());
    }

    #[test]
    fn an_authority_about_to_expire_is_made_anew() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("tls");
        dirs::private_dir(&dir).unwrap();
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = ca_params(&key);
        let now = SystemTime::now();
        params.not_before = datetime(now - DAY);
        params.not_after = datetime(now + 10 * DAY);
        let old = params.self_signed(&key).unwrap().pem();
        let file = dir.join(CA_FILE);
        std::fs::write(&file, format!("{}{old}", key.serialize_pem())).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let renewed = Authority::load_or_make(&dir).unwrap();
        assert_ne!(renewed.cert_pem(), old);
        assert_eq!(Authority::load_or_make(&dir).unwrap().cert_pem(), renewed.cert_pem());
    }

    #[test]
    fn the_bundle_is_the_systems_roots_then_agentshs() {
        let (_dir, auth) = authority();
        match system_bundle() {
            Ok((_, roots)) => {
                let bundle = auth.bundle().unwrap();
                assert!(bundle.starts_with(roots.as_str()) && bundle.ends_with(auth.cert_pem()));
                assert!(Trust::System.client_config().is_ok());
            }
            Err(e) => assert!(auth.bundle().unwrap_err().contains("install the ca-certificates package"), "{e}"),
        }
    }
}
