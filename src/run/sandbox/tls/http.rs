//! HTTP/1.1 through an intercepted connection ([`super::intercept`]): each request the box sends
//! is read, checked, given the configured credentials, and streamed on; each response is
//! streamed back with those credentials masked. It owns the framing of messages (where one ends
//! and the next begins) and what is refused; it knows nothing of TLS, sockets or certificates:
//! each side is any `Read + Write`.
//!
//! Framing is read strictly, and every request head is written anew from what was parsed, so
//! that agentsh and the host cannot disagree about where a request ends (request smuggling):
//! a request the host would read differently could carry the credential agentsh added to the
//! next request to a place the box chose. Refused, with an answer to the box that says why: a
//! head over [`MAX_HEAD`] or with over [`MAX_HEADERS`] headers, a line not ended by CRLF, both
//! `Content-Length` and `Transfer-Encoding`, a transfer coding other than `chunked`, a `Host`
//! (or an absolute URL) naming another host, `CONNECT`, `Upgrade` (websocket), and an `Expect`
//! other than `100-continue`.

use memchr::memmem;
use std::io::{self, Read, Write};

/// The largest request or response head (request line or status line, and headers) read.
pub const MAX_HEAD: usize = 64 * 1024;
/// The most headers in one request head (a response head may have twice as many).
pub const MAX_HEADERS: usize = 100;
/// The longest chunk-size line of a chunked body, extensions included.
const MAX_CHUNK_LINE: usize = 4096;
/// Bytes moved per read: one TLS record's worth.
const PIECE: usize = 16 * 1024;
/// An injected value shorter than this is not masked in responses: a short value ("1", "yes")
/// would also mask ordinary text, and is no secret.
const MIN_MASKED: usize = 8;

/// What [`relay`] does to every request: the host they must name, and the headers it puts in.
pub struct Rules<'a> {
    /// The host the connection was opened to, lowercase (a name or an IP address, no port).
    pub host: &'a str,
    /// Each replaces any header of the same name (ASCII case-insensitive) the box sent.
    pub inject: &'a [(String, String)],
}

/// Bytes written so far each way: to the host (request heads as rewritten, and bodies), and to
/// the box (response heads and bodies, masked, and agentsh's own answers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub up: u64,
    pub down: u64,
}

/// Why a relay stopped early.
#[derive(Debug, PartialEq, Eq)]
pub struct Stop {
    /// In words, for a message and the audit.
    pub why: String,
    /// The host's response was ending with the connection, and the host broke it off (no TLS
    /// close_notify): the box must not be told the connection ended cleanly, or it would take
    /// a cut body for a whole one.
    pub cut: bool,
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop { why, cut: false }
    }
}

/// Relays requests from `client` to `upstream` and their responses back, until either side ends
/// the connection (`Ok`) or something goes wrong (`Err`). A request agentsh refuses is answered
/// (4xx/5xx, with the reason) before the `Err`; nothing of it reaches the host. A connection the
/// box leaves idle between requests, or closes there, ends `Ok`.
pub fn relay<C: Read + Write, U: Read + Write>(
    client: &mut C,
    upstream: &mut U,
    rules: &Rules,
    counts: &mut Counts,
) -> Result<(), Stop> {
    let mut from_box = Input::new();
    let mut from_host = Input::new();
    let mut mask = Masker::new(rules.inject);
    loop {
        let head = match from_box.head(client, MAX_HEAD) {
            Ok(Some(head)) => head,
            Ok(None) => return Ok(()),
            Err(Fault::TooLarge) => {
                let why = format!("its request head is over {} KiB", MAX_HEAD / 1024);
                return Err(answer(client, counts, 431, &why).into());
            }
            Err(Fault::Io(e)) if idle(&e) && from_box.is_empty() => return Ok(()),
            Err(Fault::Io(e)) => return Err(format!("reading the box's request: {e}").into()),
        };
        let request = match Request::parse(&head, rules) {
            Ok(request) => request,
            Err((status, why)) => return Err(answer(client, counts, status, &why).into()),
        };
        if request.expect_continue {
            // Answered here, and not asked of the host (the header is dropped): the box sends its
            // body at once, as it would after its own timeout, and agentsh never waits on a host
            // that does not answer `Expect` while the box waits on agentsh.
            write(client, b"HTTP/1.1 100 Continue\r\n\r\n", &mut counts.down).map_err(to_box)?;
            client.flush().map_err(to_box)?;
        }
        write(upstream, &request.head, &mut counts.up).map_err(to_host)?;
        let sent =
            Body::copy(request.body, &mut from_box, client, upstream, &mut counts.up, Through::Inject(rules.inject));
        sent.map_err(|e| e.told("the box's request body", "sending it on"))?;
        upstream.flush().map_err(to_host)?;

        let response = loop {
            let head = match from_host.head(upstream, MAX_HEAD) {
                Ok(Some(head)) => head,
                Ok(None) => return Err("the host closed the connection without answering".to_string().into()),
                Err(Fault::TooLarge) => {
                    let why = format!("the host's response head is over {} KiB", MAX_HEAD / 1024);
                    return Err(answer(client, counts, 502, &why).into());
                }
                Err(Fault::Io(e)) => return Err(format!("reading the host's response: {e}").into()),
            };
            // Masked first: a reason given to the box may quote the head.
            let mut head = head;
            mask.mask(&mut head);
            let response =
                Response::parse(&head, request.head_only).map_err(|why| answer(client, counts, 502, &why))?;
            if response.status == 101 {
                let why = "the host switched protocols, which agentsh did not ask for";
                return Err(answer(client, counts, 502, why).into());
            }
            // An interim answer (103 Early Hints, a 100 the host sends although agentsh dropped
            // `Expect`): passed on, unless it repeats agentsh's own 100; the final one follows.
            if response.status < 200 {
                if !(response.status == 100 && request.expect_continue) {
                    write(client, &head, &mut counts.down).map_err(to_box)?;
                }
                continue;
            }
            write(client, &head, &mut counts.down).map_err(to_box)?;
            break response;
        };
        let got =
            Body::copy(response.body, &mut from_host, upstream, client, &mut counts.down, Through::Mask(&mut mask));
        got.map_err(|e| Stop {
            cut: response.body == Body::UntilClose && matches!(e, CopyError::From(_)),
            why: e.told("the host's response body", "passing it to the box"),
        })?;
        client.flush().map_err(to_box)?;
        if request.close || response.close {
            return Ok(());
        }
    }
}

/// Answers the box's first request with `status` and `why`, relaying nothing: for a connection
/// that cannot go on (the host's TLS failed). Its head is read first (bounded, best effort), so
/// that the box is reading when the answer comes. Returns what to report.
pub fn turn_away(client: &mut (impl Read + Write), counts: &mut Counts, status: u16, why: &str) -> String {
    let _ = Input::new().head(client, MAX_HEAD);
    answer(client, counts, status, why)
}

fn to_box(e: io::Error) -> String {
    format!("writing to the box: {e}")
}

fn to_host(e: io::Error) -> String {
    format!("writing to the host: {e}")
}

/// Whether a read ended for lack of data within the socket's timeout, or because the other side
/// closed without ending TLS properly: both mean "gone" between requests.
fn idle(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::UnexpectedEof)
}

fn write(to: &mut impl Write, bytes: &[u8], count: &mut u64) -> io::Result<()> {
    to.write_all(bytes)?;
    *count += bytes.len() as u64;
    Ok(())
}

/// Answers the box with `status` and `why` (agentsh's own response, then the connection ends)
/// and returns what to report. The answer is best effort: the box may be gone already.
fn answer(client: &mut impl Write, counts: &mut Counts, status: u16, why: &str) -> String {
    let reason = match status {
        400 => "Bad Request",
        405 => "Method Not Allowed",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        _ => "Bad Gateway",
    };
    let body = format!("agentsh: {why}\n");
    let text = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = write(client, text.as_bytes(), &mut counts.down).and_then(|()| client.flush());
    format!("{status} {reason}: {why}")
}

// ---------------------------------------------------------------------------------------------
// Reading: a buffer in front of each side

enum Fault {
    /// A head or line longer than its bound.
    TooLarge,
    Io(io::Error),
}

impl From<io::Error> for Fault {
    fn from(e: io::Error) -> Fault {
        Fault::Io(e)
    }
}

/// What was read from one side and not yet used (`buf[start..end]`): the rest of a head, the
/// start of a body, the next request of a pipelining client.
struct Input {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Input {
    fn new() -> Input {
        Input { buf: vec![0; PIECE], start: 0, end: 0 }
    }

    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Reads more onto the end of what is pending; 0 at the end of the stream. The buffer grows
    /// only while a head or line is pending, and those are bounded.
    fn fill(&mut self, from: &mut impl Read) -> io::Result<usize> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < PIECE / 2 {
            self.buf.resize(self.buf.len() + PIECE, 0);
        }
        let n = loop {
            match from.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.end += n;
        Ok(n)
    }

    /// Up to `limit` bytes ending with `end` (which they include); `None` when the stream
    /// ends before any byte; an error when it ends in the middle, or nothing ends within
    /// `limit`.
    fn until(&mut self, from: &mut impl Read, end: &[u8], limit: usize) -> Result<Option<Vec<u8>>, Fault> {
        let mut searched = 0;
        loop {
            let pending = self.pending();
            if let Some(at) = memmem::find(&pending[searched..], end) {
                let taken = searched + at + end.len();
                if taken > limit {
                    return Err(Fault::TooLarge);
                }
                let line = pending[..taken].to_vec();
                self.start += taken;
                return Ok(Some(line));
            }
            if pending.len() > limit {
                return Err(Fault::TooLarge);
            }
            searched = pending.len().saturating_sub(end.len() - 1);
            if self.fill(from)? == 0 {
                if self.is_empty() {
                    return Ok(None);
                }
                return Err(Fault::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "the stream ended mid-line")));
            }
        }
    }

    /// A head: everything up to and including the empty line that ends it.
    fn head(&mut self, from: &mut impl Read, limit: usize) -> Result<Option<Vec<u8>>, Fault> {
        self.until(from, b"\r\n\r\n", limit)
    }

    /// Up to `max` bytes: what is pending, or else one read's worth; empty at the end.
    fn some(&mut self, from: &mut impl Read, max: usize) -> io::Result<&[u8]> {
        if self.is_empty() && self.fill(from)? == 0 {
            return Ok(&[]);
        }
        let n = self.pending().len().min(max);
        let at = self.start;
        self.start += n;
        Ok(&self.buf[at..at + n])
    }
}

// ---------------------------------------------------------------------------------------------
// Heads

/// A request as it goes on to the host.
struct Request {
    /// The head, written anew: the box's headers less those agentsh sets, then agentsh's.
    head: Vec<u8>,
    body: Body,
    /// HEAD: the response has no body, whatever its headers say.
    head_only: bool,
    close: bool,
    expect_continue: bool,
}

type Refusal = (u16, String);

impl Request {
    fn parse(raw: &[u8], rules: &Rules) -> Result<Request, Refusal> {
        crlf_only(raw).map_err(|why| (400, format!("its request has {why}")))?;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(raw) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err((400, "its request head is incomplete".into())),
            Err(httparse::Error::TooManyHeaders) => {
                return Err((431, format!("its request has over {MAX_HEADERS} headers")));
            }
            Err(e) => return Err((400, format!("its request head cannot be read ({e})"))),
        }
        let (method, target, minor) = (req.method.unwrap_or(""), req.path.unwrap_or(""), req.version.unwrap_or(1));
        if method == "CONNECT" {
            return Err((405, "CONNECT inside a connection agentsh adds credentials to is not relayed".into()));
        }
        let named = |authority: &str| names_host(authority, rules.host);
        if let Some(rest) = target.strip_prefix("https://").or_else(|| target.strip_prefix("http://")) {
            let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
            if !named(authority) {
                return Err(misdirected(rules.host));
            }
        } else if target.starts_with("//") {
            // Read as a host by some servers and frameworks.
            return Err((400, "its request target begins with //, which could name another host".into()));
        } else if !(target.starts_with('/') || (target == "*" && method == "OPTIONS")) {
            return Err((400, "its request target is not a path".into()));
        }

        let mut head = format!("{method} {target} HTTP/1.{minor}\r\n").into_bytes();
        let (mut length, mut chunked, mut hosts) = (None::<u64>, false, 0);
        let (mut close, mut keep_alive, mut expect_continue) = (false, false, false);
        for h in req.headers.iter() {
            let value =
                std::str::from_utf8(h.value).map_err(|_| (400, format!("its {} header is not text", h.name)))?;
            let value = value.trim_matches([' ', '\t']);
            let name = h.name;
            if rules.inject.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                continue;
            }
            // Servers that read `_` as `-` (CGI, WSGI) would take it for the header agentsh frames by.
            if name.contains('_')
                && super::NOT_INJECTABLE.iter().any(|f| f.eq_ignore_ascii_case(&name.replace('_', "-")))
            {
                return Err((400, format!("its {name} header reads as {} to some servers", name.replace('_', "-"))));
            }
            // What could return the credential in a form the mask cannot find: compressed, or
            // cut into pieces too short to recognise.
            if ["accept-encoding", "range", "if-range"].iter().any(|n| n.eq_ignore_ascii_case(name)) {
                continue;
            }
            if name.eq_ignore_ascii_case("host") {
                hosts += 1;
                if !named(value) {
                    return Err(misdirected(rules.host));
                }
            } else if name.eq_ignore_ascii_case("content-length") {
                let n = content_length(value).ok_or((400, format!("its Content-Length {value:?} is not a number")))?;
                if length.is_some_and(|l| l != n) {
                    return Err((400, "its request has two different Content-Length headers".into()));
                }
                length = Some(n);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                if minor == 0 {
                    // RFC 9112, section 6.1: framing in such a message is faulty.
                    return Err((400, "its HTTP/1.0 request has a Transfer-Encoding".into()));
                }
                if chunked || !value.eq_ignore_ascii_case("chunked") {
                    return Err((501, format!("its Transfer-Encoding {value:?} is not relayed (only chunked)")));
                }
                chunked = true;
            } else if name.eq_ignore_ascii_case("connection") {
                for token in value.split(',').map(str::trim) {
                    close |= token.eq_ignore_ascii_case("close");
                    keep_alive |= token.eq_ignore_ascii_case("keep-alive");
                }
            } else if name.eq_ignore_ascii_case("upgrade") {
                return Err((501, format!("it asked to switch to {value:?}, which agentsh does not relay here")));
            } else if name.eq_ignore_ascii_case("expect") {
                if !value.eq_ignore_ascii_case("100-continue") {
                    return Err((417, format!("its Expect {value:?} is not understood")));
                }
                expect_continue = minor == 1;
                continue;
            }
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        if hosts > 1 || (hosts == 0 && minor == 1) {
            return Err((400, format!("its request has {hosts} Host headers, not one")));
        }
        if chunked && length.is_some() {
            return Err((400, "its request has both Content-Length and Transfer-Encoding".into()));
        }
        for (name, value) in rules.inject {
            head.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        head.extend_from_slice(b"accept-encoding: identity\r\n");
        head.extend_from_slice(b"\r\n");
        let body = match (chunked, length) {
            (true, _) => Body::Chunked,
            (false, Some(n)) if n > 0 => Body::Length(n),
            _ => Body::Empty,
        };
        let close = close || (minor == 0 && !keep_alive);
        Ok(Request { head, body, head_only: method == "HEAD", close, expect_continue })
    }
}

fn misdirected(host: &str) -> Refusal {
    (421, format!("its request names another host than {host}, the one it connected to"))
}

/// Whether an authority (`Host` value, or an absolute URL's) is `host`, with any port.
fn names_host(authority: &str, host: &str) -> bool {
    let name = match authority.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        Some((_, "")) => return false,
        _ => authority,
    };
    let name = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    // A bare IPv6 address has colons of its own, and no port unless in brackets.
    (name.eq_ignore_ascii_case(host) && !name.is_empty()) || authority.eq_ignore_ascii_case(host)
}

/// A Content-Length value: digits only (no sign, no list, no space inside), at most
/// [`MAX_LENGTH`].
fn content_length(value: &str) -> Option<u64> {
    let n: u64 = (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())).then(|| value.parse().ok())??;
    (n <= MAX_LENGTH).then_some(n)
}

/// The largest body or chunk length relayed: what a signed 64-bit integer holds, so that no
/// server reads a length agentsh passed on as another.
const MAX_LENGTH: u64 = i64::MAX as u64;

/// Every line of a head ends with CRLF: no bare LF (which httparse takes as a line end, and
/// some servers do not) and no bare CR.
pub(crate) fn crlf_only(head: &[u8]) -> Result<(), &'static str> {
    for (i, &b) in head.iter().enumerate() {
        match b {
            b'\n' if i == 0 || head[i - 1] != b'\r' => return Err("a line ended by LF alone"),
            b'\r' if head.get(i + 1) != Some(&b'\n') => return Err("a CR that ends no line"),
            _ => {}
        }
    }
    Ok(())
}

/// A response as far as agentsh needs it: how its body is framed, whether the connection ends.
struct Response {
    status: u16,
    body: Body,
    close: bool,
}

impl Response {
    fn parse(raw: &[u8], to_head: bool) -> Result<Response, String> {
        crlf_only(raw).map_err(|why| format!("the host's response has {why}"))?;
        let mut headers = [httparse::EMPTY_HEADER; 2 * MAX_HEADERS];
        let mut res = httparse::Response::new(&mut headers);
        match res.parse(raw) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err("the host's response head is incomplete".into()),
            Err(e) => return Err(format!("the host's response head cannot be read ({e})")),
        }
        let (status, minor) = (res.code.unwrap_or(0), res.version.unwrap_or(1));
        let (mut length, mut coding, mut close, mut keep_alive) = (None::<u64>, None::<String>, false, false);
        for h in res.headers.iter() {
            let value = String::from_utf8_lossy(h.value);
            let value = value.trim_matches([' ', '\t']);
            if h.name.eq_ignore_ascii_case("content-length") {
                let n = content_length(value).ok_or(format!("the host's Content-Length {value:?} is not a number"))?;
                if length.is_some_and(|l| l != n) {
                    return Err("the host's response has two different Content-Length headers".into());
                }
                length = Some(n);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                // Codings listed over several headers read as one list; the last one counts.
                let last = value.rsplit(',').next().unwrap_or("").trim().to_ascii_lowercase();
                coding = Some(last);
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in value.split(',').map(str::trim) {
                    close |= token.eq_ignore_ascii_case("close");
                    keep_alive |= token.eq_ignore_ascii_case("keep-alive");
                }
            }
        }
        // RFC 9112, section 6.3, in its order.
        let body = if to_head || status < 200 || status == 204 || status == 304 {
            Body::Empty
        } else if let Some(coding) = coding {
            if coding == "chunked" { Body::Chunked } else { Body::UntilClose }
        } else {
            match length {
                Some(0) => Body::Empty,
                Some(n) => Body::Length(n),
                None => Body::UntilClose,
            }
        };
        let close = close || (minor == 0 && !keep_alive) || body == Body::UntilClose;
        Ok(Response { status, body, close })
    }
}

// ---------------------------------------------------------------------------------------------
// Bodies

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    Empty,
    Length(u64),
    Chunked,
    /// A response that ends when the host closes the connection.
    UntilClose,
}

/// Where a body's copy failed: reading it from its sender, or passing it on.
enum CopyError {
    From(io::Error),
    /// The sender's framing was broken; the message says how.
    Framing(String),
    To(io::Error),
}

impl CopyError {
    fn told(self, what: &str, passing: &str) -> String {
        match self {
            CopyError::From(e) => format!("reading {what}: {e}"),
            CopyError::Framing(why) => format!("{what} {why}"),
            CopyError::To(e) => format!("{passing}: {e}"),
        }
    }
}

/// What a body goes through on its way.
enum Through<'a> {
    /// A request's: the trailers named like these headers are dropped.
    Inject(&'a [(String, String)]),
    /// A response's: masked.
    Mask(&'a mut Masker),
}

impl Body {
    /// Streams a body of this framing from `input` (over `from`) to `to`, piece by piece, as it
    /// came (a chunked body's chunk sizes written anew, without extensions).
    fn copy(
        self,
        input: &mut Input,
        from: &mut impl Read,
        to: &mut impl Write,
        count: &mut u64,
        through: Through,
    ) -> Result<(), CopyError> {
        let (inject, mut mask) = match through {
            Through::Inject(inject) => (inject, None),
            Through::Mask(mask) => (&[][..], Some(mask)),
        };
        match self {
            Body::Empty => Ok(()),
            Body::Length(n) => copy_exact(n, input, from, to, count, mask),
            Body::UntilClose => {
                loop {
                    let piece = match input.some(from, PIECE) {
                        Ok(piece) => piece,
                        // The host closed without ending TLS: where the body ends is not known.
                        Err(e) => return Err(CopyError::From(e)),
                    };
                    if piece.is_empty() {
                        break;
                    }
                    pass(piece, to, count, mask.as_deref_mut())?;
                }
                flush_mask(to, count, mask)
            }
            Body::Chunked => loop {
                let line = match input.until(from, b"\r\n", MAX_CHUNK_LINE) {
                    Ok(Some(line)) => line,
                    Ok(None) => return Err(CopyError::Framing("ended before its last chunk".into())),
                    Err(Fault::TooLarge) => return Err(CopyError::Framing("has a chunk-size line too long".into())),
                    Err(Fault::Io(e)) => return Err(CopyError::From(e)),
                };
                let size = match httparse::parse_chunk_size(&line) {
                    Ok(httparse::Status::Complete((_, size))) if size <= MAX_LENGTH => size,
                    _ => return Err(CopyError::Framing("has a chunk size that cannot be read".into())),
                };
                write(to, format!("{size:x}\r\n").as_bytes(), count).map_err(CopyError::To)?;
                if size == 0 {
                    return copy_trailers(input, from, to, count, inject, mask.as_deref());
                }
                copy_exact(size, input, from, to, count, mask.as_deref_mut())?;
                match input.until(from, b"\r\n", 2) {
                    Ok(Some(end)) if end == b"\r\n" => write(to, b"\r\n", count).map_err(CopyError::To)?,
                    Ok(_) | Err(Fault::TooLarge) => {
                        return Err(CopyError::Framing("has a chunk not ended by CRLF".into()));
                    }
                    Err(Fault::Io(e)) => return Err(CopyError::From(e)),
                }
            },
        }
    }
}

fn copy_exact(
    mut left: u64,
    input: &mut Input,
    from: &mut impl Read,
    to: &mut impl Write,
    count: &mut u64,
    mut mask: Option<&mut Masker>,
) -> Result<(), CopyError> {
    while left > 0 {
        let piece = input.some(from, usize::try_from(left).unwrap_or(usize::MAX)).map_err(CopyError::From)?;
        if piece.is_empty() {
            return Err(CopyError::Framing(format!("ended {left} bytes short")));
        }
        left -= piece.len() as u64;
        pass(piece, to, count, mask.as_deref_mut())?;
    }
    flush_mask(to, count, mask)
}

fn pass(piece: &[u8], to: &mut impl Write, count: &mut u64, mask: Option<&mut Masker>) -> Result<(), CopyError> {
    match mask {
        Some(mask) => {
            let out = mask.push(piece);
            write(to, &out, count)
        }
        None => write(to, piece, count),
    }
    .map_err(CopyError::To)
}

fn flush_mask(to: &mut impl Write, count: &mut u64, mask: Option<&mut Masker>) -> Result<(), CopyError> {
    match mask {
        Some(mask) => write(to, &mask.finish(), count).map_err(CopyError::To),
        None => Ok(()),
    }
}

/// The trailer section of a chunked body, up to its empty line: a trailer named like an
/// injected header is dropped (it could stand in for the credential at a host that merges
/// trailers into headers); a response's trailers are masked.
fn copy_trailers(
    input: &mut Input,
    from: &mut impl Read,
    to: &mut impl Write,
    count: &mut u64,
    inject: &[(String, String)],
    mask: Option<&Masker>,
) -> Result<(), CopyError> {
    let mut total = 0;
    loop {
        let line = match input.until(from, b"\r\n", MAX_HEAD - total) {
            Ok(Some(line)) => line,
            Ok(None) => return Err(CopyError::Framing("ended in its trailers".into())),
            Err(Fault::TooLarge) => {
                return Err(CopyError::Framing(format!("has over {} KiB of trailers", MAX_HEAD / 1024)));
            }
            Err(Fault::Io(e)) => return Err(CopyError::From(e)),
        };
        total += line.len();
        if line == b"\r\n" {
            return write(to, b"\r\n", count).map_err(CopyError::To);
        }
        crlf_only(&line).map_err(|why| CopyError::Framing(format!("has a trailer with {why}")))?;
        let mut line = line;
        let name = line.split(|&b| b == b':').next().unwrap_or_default();
        if name.is_empty() || name.iter().any(|b| !b.is_ascii_graphic()) || name.len() == line.len() {
            return Err(CopyError::Framing("has a trailer that is not a header".into()));
        }
        let framing = super::NOT_INJECTABLE.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name));
        if framing || inject.iter().any(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name)) {
            continue;
        }
        if let Some(mask) = mask {
            mask.mask(&mut line);
        }
        write(to, &line, count).map_err(CopyError::To)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Masking the credentials in what the box receives

/// Overwrites every occurrence of an injected value (and of its token, past a scheme such as
/// `Bearer `) with `*` of the same length, so that framing (Content-Length, chunk sizes) still
/// holds. A host that echoes request headers (an error page, a debugging endpoint) would
/// otherwise show the box the credential. What it does not catch: a value transformed on the
/// way (compressed, encoded, split across chunks of a chunked body). The real defence is that
/// credentials go only to hosts that keep them.
pub(super) struct Masker {
    secrets: Vec<memmem::Finder<'static>>,
    /// Bytes held back because a secret could start in them and end in the next piece.
    held: Vec<u8>,
    longest: usize,
}

impl Masker {
    pub(super) fn new(inject: &[(String, String)]) -> Masker {
        let mut secrets: Vec<&str> = Vec::new();
        for (_, value) in inject {
            secrets.push(value);
            if let Some((_, token)) = value.split_once(' ') {
                secrets.push(token.trim());
            }
        }
        secrets.retain(|s| s.len() >= MIN_MASKED);
        let longest = secrets.iter().map(|s| s.len()).max().unwrap_or(0);
        let secrets = secrets.into_iter().map(|s| memmem::Finder::new(s.as_bytes()).into_owned()).collect();
        Masker { secrets, held: Vec::new(), longest }
    }

    /// Masks `bytes` in place (a whole head).
    pub(super) fn mask(&self, bytes: &mut [u8]) {
        for secret in &self.secrets {
            let n = secret.needle().len();
            let mut at = 0;
            while let Some(found) = secret.find(&bytes[at..]) {
                bytes[at + found..at + found + n].fill(b'*');
                at += found + n;
            }
        }
    }

    /// The next piece of a body: what can be passed on now, masked; the last bytes, where a
    /// secret could begin, are held until the next piece or [`Masker::finish`].
    fn push(&mut self, piece: &[u8]) -> Vec<u8> {
        if self.secrets.is_empty() {
            return piece.to_vec();
        }
        self.held.extend_from_slice(piece);
        self.mask_held();
        let keep = (self.longest - 1).min(self.held.len());
        let rest = self.held.split_off(self.held.len() - keep);
        std::mem::replace(&mut self.held, rest)
    }

    /// What is held, at the end of a body (or of a chunk: its size is already sent).
    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    fn mask_held(&mut self) {
        let mut held = std::mem::take(&mut self.held);
        self.mask(&mut held);
        self.held = held;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// One side of a relay in memory: what it will send, and what it was sent.
    struct Side {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Side {
        fn new(input: &[u8]) -> Side {
            Side { input: Cursor::new(input.to_vec()), output: Vec::new() }
        }
        fn sent(&self) -> String {
            String::from_utf8_lossy(&self.output).into_owned()
        }
    }

    impl Read for Side {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            // Small reads: framing must hold however the bytes arrive.
            let n = buf.len().min(7);
            self.input.read(&mut buf[..n])
        }
    }

    impl Write for Side {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    const TOKEN: &str = "Bearer real-secret-token";

    fn inject() -> Vec<(String, String)> {
        vec![("Authorization".to_string(), TOKEN.to_string())]
    }

    /// Runs a relay: the box's bytes, the host's bytes -> (result, what the host got, what the
    /// box got).
    fn run(from_box: &str, from_host: &str) -> (Result<(), String>, String, String) {
        let (result, host, got) = run_stop(from_box, from_host);
        (result.map_err(|stop| stop.why), host, got)
    }

    fn run_stop(from_box: &str, from_host: &str) -> (Result<(), Stop>, String, String) {
        let (mut client, mut upstream) = (Side::new(from_box.as_bytes()), Side::new(from_host.as_bytes()));
        let inject = inject();
        let rules = Rules { host: "registry.test", inject: &inject };
        let mut counts = Counts::default();
        let result = relay(&mut client, &mut upstream, &rules, &mut counts);
        assert_eq!(counts.up, upstream.output.len() as u64);
        assert_eq!(counts.down, client.output.len() as u64);
        (result, upstream.sent(), client.sent())
    }

    #[test]
    fn the_credential_replaces_the_boxs_own_and_each_body_is_framed() {
        let (result, host, got) = run(
            "POST /a HTTP/1.1\r\nHost: registry.test\r\nauthorization: Bearer fake\r\nTransfer-Encoding: chunked\r\n\r\n\
             5;ext=1\r\nhello\r\n0\r\nAuthorization: x\r\nX-Sum: 1\r\n\r\n\
             PUT /b HTTP/1.1\r\nHost: REGISTRY.test:443\r\nContent-Length: 3\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\
             HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone",
        );
        assert_eq!(result, Ok(()));
        assert_eq!(
            host,
            format!(
                "POST /a HTTP/1.1\r\nHost: registry.test\r\nTransfer-Encoding: chunked\r\nAuthorization: {TOKEN}\r\n\
                 accept-encoding: identity\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n\
                 PUT /b HTTP/1.1\r\nHost: REGISTRY.test:443\r\nContent-Length: 3\r\nAuthorization: {TOKEN}\r\n\
                 accept-encoding: identity\r\n\r\nabc"
            )
        );
        assert_eq!(
            got,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\
             HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone"
        );
    }

    #[test]
    fn responses_without_a_body_and_the_end_of_a_connection() {
        // HEAD: its response's Content-Length describes a body that is not sent; the next
        // response follows at once. 204 and 304 likewise; a 103 goes before the final answer.
        let (result, _, got) = run(
            "HEAD / HTTP/1.1\r\nHost: registry.test\r\n\r\nGET /x HTTP/1.1\r\nHost: registry.test\r\n\r\n\
             GET /y HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n\
             HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
        );
        assert_eq!(result, Ok(()));
        assert_eq!(
            got,
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n\
             HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"
        );
        // Connection: close, and HTTP/1.0 without keep-alive: the request after is not sent.
        for first in ["GET / HTTP/1.1\r\nHost: registry.test\r\nConnection: close\r\n\r\n", "GET / HTTP/1.0\r\n\r\n"] {
            let (result, host, _) = run(
                &format!("{first}GET /never HTTP/1.1\r\nHost: registry.test\r\n\r\n"),
                "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
            );
            assert_eq!(result, Ok(()));
            assert!(!host.contains("/never"), "{host}");
        }
        // A body that ends with the connection: all of it, then the end.
        let (result, _, got) = run("GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\nall of it");
        assert_eq!((result, got.ends_with("\r\n\r\nall of it")), (Ok(()), true));
        // A body cut short is an error, not an end.
        let (result, _, _) =
            run("GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort");
        assert!(result.unwrap_err().contains("ended 5 bytes short"));
    }

    #[test]
    fn expect_100_continue_is_answered_by_agentsh() {
        let (result, host, got) = run(
            "PUT /p HTTP/1.1\r\nHost: registry.test\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(result, Ok(()));
        assert!(!host.to_ascii_lowercase().contains("expect"), "{host}");
        assert!(host.ends_with("\r\n\r\nhi"), "{host}");
        assert_eq!(got, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    }

    #[test]
    fn a_head_over_the_limit_or_with_too_many_headers_is_refused() {
        let flood = format!("X-Pad: {}\r\n", "a".repeat(MAX_HEAD));
        let many = "X: 1\r\n".repeat(MAX_HEADERS);
        for (extra, status) in [(&flood, "431"), (&many, "431")] {
            let (result, host, got) =
                run(&format!("GET / HTTP/1.1\r\nHost: registry.test\r\n{extra}\r\n"), "HTTP/1.1 200 OK\r\n\r\n");
            let e = result.unwrap_err();
            assert!(e.starts_with(status), "{e}");
            assert!(got.starts_with(&format!("HTTP/1.1 {status} ")) && got.contains("agentsh: its request"), "{got}");
            assert_eq!(host, "");
        }
        // Just under both bounds: relayed.
        let fits = "X: 1\r\n".repeat(MAX_HEADERS - 1);
        let (result, _, _) =
            run(&format!("GET / HTTP/1.1\r\nHost: registry.test\r\n{fits}\r\n"), "HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(result, Ok(()));
        // The host's head too: the box is told, nothing of it passed on.
        let (result, _, got) =
            run("GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n", &format!("HTTP/1.1 200 OK\r\n{flood}\r\n"));
        assert!(result.unwrap_err().starts_with("502"));
        assert!(got.starts_with("HTTP/1.1 502 "), "{got}");
    }

    #[test]
    fn requests_that_could_be_read_two_ways_or_go_elsewhere_are_refused() {
        let cases = [
            // Another host behind the same address (a CDN routes by Host): the credential
            // would go to whoever the box names.
            ("GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", "421"),
            ("GET https://evil.test/ HTTP/1.1\r\nHost: registry.test\r\n\r\n", "421"),
            ("GET / HTTP/1.1\r\nHost: registry.test.evil.test\r\n\r\n", "421"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nHost: evil.test\r\n\r\n", "421"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nhost: registry.test\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\n\r\n", "400"),
            ("GET evil.test HTTP/1.1\r\nHost: registry.test\r\n\r\n", "400"),
            // Framing two readers could disagree on.
            (
                "POST / HTTP/1.1\r\nHost: registry.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                "400",
            ),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "400"),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nContent-Length: +3\r\n\r\n", "400"),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nContent-Length: 3, 3\r\n\r\n", "400"),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "501"),
            (
                "POST / HTTP/1.1\r\nHost: registry.test\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                "501",
            ),
            ("GET / HTTP/1.1\nHost: registry.test\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nX: a\rb\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nX: a\r\n folded\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\nHost : registry.test\r\n\r\n", "400"),
            // Tunnels and protocol switches would carry bytes agentsh does not read.
            ("CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test\r\n\r\n", "405"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", "501"),
            ("GET / HTTP/1.1\r\nHost: registry.test\r\nExpect: something\r\n\r\n", "417"),
            // HTTP/1.0 with chunked framing: a host that ignores it reads the chunk as a request.
            ("POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n", "400"),
            // Lengths another server would read as something else (a signed 64-bit integer).
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nContent-Length: 18446744073709551615\r\n\r\n", "400"),
            // A path some servers read as a host; a framing header under another spelling.
            ("GET //evil.test/x HTTP/1.1\r\nHost: registry.test\r\n\r\n", "400"),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nContent_Length: 3\r\n\r\nabc", "400"),
            ("POST / HTTP/1.1\r\nHost: registry.test\r\nTransfer_Encoding: chunked\r\n\r\n", "400"),
        ];
        for (request, status) in cases {
            let (result, host, got) = run(request, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            let e = result.unwrap_err();
            assert!(e.starts_with(status), "{request:?}: {e}");
            assert!(got.starts_with(&format!("HTTP/1.1 {status} ")), "{request:?}: {got}");
            assert_eq!(host, "", "{request:?}");
        }
    }

    #[test]
    fn the_credential_is_masked_in_what_the_host_sends_back() {
        let echo = format!("you sent {TOKEN}!");
        let (result, _, got) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\nGET /2 HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            &format!(
                "HTTP/1.1 401 No\r\nX-Echo: {TOKEN}\r\nContent-Length: {}\r\n\r\n{echo}\
                 HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{echo}\r\n0\r\n\r\n",
                echo.len(),
                echo.len()
            ),
        );
        assert_eq!(result, Ok(()));
        assert!(!got.contains("real-secret-token"), "{got}");
        let stars = "*".repeat(TOKEN.len());
        assert_eq!(got.matches(&stars).count(), 3, "{got}");
        assert!(got.contains(&format!("Content-Length: {}\r\n\r\nyou sent {stars}!", echo.len())), "{got}");
    }

    #[test]
    fn nothing_lets_the_host_return_the_credential_in_a_form_the_mask_cannot_find() {
        // Compressed or cut into short ranges, an echoed credential would not be recognised:
        // the host is asked for neither, and told to send it as it is.
        let (result, host, _) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\nAccept-Encoding: gzip\r\nRange: bytes=0-20\r\n\
             If-Range: \"x\"\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(result, Ok(()));
        let lower = host.to_ascii_lowercase();
        assert!(lower.contains("accept-encoding: identity\r\n"), "{host}");
        for gone in ["gzip", "range:", "if-range"] {
            assert!(!lower.contains(gone), "{gone}: {host}");
        }
        // A reason for a refused response never quotes the credential back.
        let (result, _, got) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            &format!("HTTP/1.1 200 OK\r\nContent-Length: {TOKEN}\r\n\r\n"),
        );
        assert!(result.is_err());
        assert!(got.starts_with("HTTP/1.1 502 "), "{got}");
        assert!(!got.contains("real-secret-token"), "{got}");
        // Nor does a host's chunk too large for others to read alike go on.
        let (result, _, got) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nx",
        );
        assert!(result.unwrap_err().contains("chunk size"), "{got}");
        assert!(!got.contains("ffffffffffffffff"), "{got}");
    }

    #[test]
    fn the_hosts_odd_answers_are_read_as_a_server_would_mean_them() {
        // A switch of protocol agentsh never asked for ends the connection.
        let (result, _, got) =
            run("GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n");
        assert!(result.unwrap_err().contains("switched protocols"));
        assert!(got.starts_with("HTTP/1.1 502 "), "{got}");
        // A coding other than chunked last: the body runs to the end of the connection.
        let (result, _, got) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\nGET /never HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nall of it",
        );
        assert_eq!((result, got.ends_with("\r\n\r\nall of it")), (Ok(()), true), "{got}");
        // A response's trailers are masked too.
        let (result, _, got) = run(
            "GET / HTTP/1.1\r\nHost: registry.test\r\n\r\n",
            &format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Echo: {TOKEN}\r\n\r\n"),
        );
        assert_eq!(result, Ok(()));
        assert!(!got.contains("real-secret-token") && got.contains("X-Echo: *"), "{got}");
        // A Host with an empty port names no host.
        let (result, host, _) = run("GET / HTTP/1.1\r\nHost: registry.test:\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n");
        assert!(result.unwrap_err().starts_with("421"));
        assert_eq!(host, "");
    }

    #[test]
    fn trailers_that_frame_or_route_are_dropped() {
        let (result, host, _) = run(
            "POST / HTTP/1.1\r\nHost: registry.test\r\nTransfer-Encoding: chunked\r\n\r\n\
             1\r\na\r\n0\r\nHost: evil.test\r\nContent-Length: 400\r\nX-Sum: 1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(result, Ok(()));
        assert!(!host.contains("evil.test") && !host.contains("400"), "{host}");
        assert!(host.ends_with("0\r\nX-Sum: 1\r\n\r\n"), "{host}");
    }

    #[test]
    fn the_masker_holds_back_only_what_could_begin_a_secret() {
        let mut m = Masker::new(&[("A".into(), "Basic 0123456789".into()), ("B".into(), "short".into())]);
        let mut out = m.push(b"xx Basic 01234");
        out.extend(m.push(b"56789 and 0123"));
        out.extend(m.push(b"456789."));
        out.extend(m.finish());
        assert_eq!(out, b"xx **************** and **********.");
        // Nothing long enough to mask: nothing held.
        let mut none = Masker::new(&[("B".into(), "short".into())]);
        assert_eq!(none.push(b"abc"), b"abc");
    }
}
