//! The audit log's seal: a small file beside the log (`audit.seal`, in the state directory,
//! which no boxed command can reach) naming the first and the last record the log should hold.
//! A hash chain shows a line edited, removed or inserted in the middle, but not lines cut from
//! either end, an emptied log or a deleted one (issue 27): the seal does. It owns the seal's
//! format and its updates; `audit` calls it under the log's lock, and `verify` compares.
//!
//! The seal is fixed-size text, so that each record moves it with one `pwrite` of its `last`
//! field:
//!
//! ```text
//! agentsh audit seal 1
//! head <the prev of the oldest record kept: GENESIS until rotation drops a file>
//! last <the hash of the newest record>
//! cut  <64 '-': none; a hash: the sealed last record when a record was written that did not
//!       follow it (the log had been cut or cleared); 64 '!': the seal was found damaged>
//! ```

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const HEADER: &str = "agentsh audit seal 1\n";
const HASH: usize = 64;
const HEAD_AT: usize = HEADER.len() + "head ".len();
const LAST_AT: usize = HEAD_AT + HASH + "\nlast ".len();
const CUT_AT: usize = LAST_AT + HASH + "\ncut  ".len();
const LEN: usize = CUT_AT + HASH + 1;
const NO_CUT: &str = "----------------------------------------------------------------";
const DAMAGED: &str = "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!";

/// What the seal says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seal {
    /// The `prev` of the oldest record the log keeps.
    pub head: String,
    /// The hash of the newest record.
    pub last: String,
    pub cut: Cut,
}

/// Whether a record was ever written that did not follow the sealed last one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    None,
    /// The sealed last record then, which the log no longer ended with.
    After(String),
    /// The seal itself was found damaged (or not a seal) when a record was written.
    Damaged,
}

/// `audit.seal` beside `audit.jsonl`.
pub fn path_for(log: &Path) -> PathBuf {
    let name = log.file_name().and_then(|n| n.to_str()).unwrap_or("audit.jsonl");
    let stem = name.split('.').next().filter(|s| !s.is_empty()).unwrap_or("audit");
    log.with_file_name(format!("{stem}.seal"))
}

/// The seal of `log`; `None` when there is none. A file that is not a seal reads as one whose
/// cut is [`Cut::Damaged`].
pub fn read(log: &Path) -> io::Result<Option<Seal>> {
    let path = path_for(log);
    let opened = match crate::policy::files::open(&path, crate::policy::files::Links::Refuse) {
        Ok(o) => o.owned()?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let bytes = opened.read_prefix(LEN as u64 + 1)?;
    Ok(Some(parse(&bytes).unwrap_or_else(damaged)))
}

fn damaged() -> Seal {
    Seal { head: String::new(), last: String::new(), cut: Cut::Damaged }
}

fn parse(bytes: &[u8]) -> Option<Seal> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.len() != LEN || !text.starts_with(HEADER) {
        return None;
    }
    let field = |at: usize| text.get(at..at + HASH);
    let (head, last, cut) = (field(HEAD_AT)?, field(LAST_AT)?, field(CUT_AT)?);
    let hex = |h: &str| h.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
    let cut = match cut {
        NO_CUT => Cut::None,
        DAMAGED => Cut::Damaged,
        h if hex(h) => Cut::After(h.to_string()),
        _ => return None,
    };
    // The text between the fields, where the format puts it.
    let framed = text.get(HEADER.len()..HEAD_AT) == Some("head ")
        && text.get(HEAD_AT + HASH..LAST_AT) == Some("\nlast ")
        && text.get(LAST_AT + HASH..CUT_AT) == Some("\ncut  ")
        && text.ends_with('\n');
    (framed && hex(head) && hex(last)).then(|| Seal { head: head.to_string(), last: last.to_string(), cut })
}

impl Default for Seal {
    fn default() -> Seal {
        Seal { head: super::audit::GENESIS.into(), last: super::audit::GENESIS.into(), cut: Cut::None }
    }
}

fn render(s: &Seal) -> String {
    let cut = match &s.cut {
        Cut::None => NO_CUT,
        Cut::After(h) => h,
        Cut::Damaged => DAMAGED,
    };
    format!("{HEADER}head {}\nlast {}\ncut  {cut}\n", s.head, s.last)
}

/// Moves the seal on to a record just written (`hash`, which follows `prev`), under the log's
/// lock. A record that does not follow the sealed last one means the log was cut or cleared
/// since: the seal keeps that (`Cut::After`) until a person reseals. `head` gives the oldest
/// record's `prev` when it must be worked out: for a new seal, or with `rotated` (rotation has
/// just dropped the oldest file).
pub fn advance(log: &Path, prev: &str, hash: &str, rotated: bool, head: impl FnOnce() -> String) -> io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path_for(log))
        .map_err(|e| crate::policy::files::explain(&path_for(log), crate::policy::files::Links::Refuse, e))?;
    let mut buf = [0u8; LEN + 1];
    let n = read_at_most(&file, &mut buf)?;
    let old = match n {
        0 => None,
        _ => Some(parse(&buf[..n]).unwrap_or_else(damaged)),
    };
    let cut = match &old {
        None => Cut::None,
        Some(s) if s.cut != Cut::None => s.cut.clone(),
        Some(s) if s.last == prev => Cut::None,
        Some(s) => Cut::After(s.last.clone()),
    };
    match old {
        // The common case: one write of the `last` field.
        Some(s) if !rotated && s.cut == Cut::None && s.last == prev => {
            file.write_all_at(hash.as_bytes(), LAST_AT as u64)
        }
        Some(s) if !rotated && s.cut != Cut::Damaged => {
            write_whole(&file, &Seal { head: s.head, last: hash.to_string(), cut })
        }
        _ => write_whole(&file, &Seal { head: head(), last: hash.to_string(), cut }),
    }
}

/// Replaces the seal with `seal` (after a person said the log is as it should be).
pub fn write(log: &Path, seal: &Seal) -> io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path_for(log))?;
    crate::policy::files::owned_by_me(&file.metadata()?)?;
    write_whole(&file, seal)
}

fn write_whole(file: &File, seal: &Seal) -> io::Result<()> {
    file.write_all_at(render(seal).as_bytes(), 0)?;
    file.set_len(LEN as u64)
}

/// Reads up to `buf.len()` bytes from the start. A short read of a regular file is its end, so
/// one `pread` is the whole seal on every record.
fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    file.read_at(buf, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const C: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
    const G: &str = crate::record::audit::GENESIS;

    #[test]
    fn the_seal_follows_the_records_and_keeps_a_cut() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("audit.jsonl");
        assert_eq!(path_for(&log), d.path().join("audit.seal"));
        assert_eq!(read(&log).unwrap(), None);
        advance(&log, G, A, false, || G.to_string()).unwrap();
        assert_eq!(read(&log).unwrap(), Some(Seal { head: G.into(), last: A.into(), cut: Cut::None }));
        advance(&log, A, B, false, || unreachable!("the head is known")).unwrap();
        assert_eq!(read(&log).unwrap().unwrap().last, B);
        assert_eq!(std::fs::metadata(path_for(&log)).unwrap().len(), LEN as u64);
        // A record that follows something else: the log lost its end (here: emptied) since.
        advance(&log, G, C, false, || G.to_string()).unwrap();
        let s = read(&log).unwrap().unwrap();
        assert_eq!((s.last.as_str(), &s.cut), (C, &Cut::After(B.into())));
        // The first cut is kept.
        advance(&log, A, B, false, || G.to_string()).unwrap();
        assert_eq!(read(&log).unwrap().unwrap().cut, Cut::After(B.into()));
        // Rotation works the head out again; a person's reseal clears the cut.
        write(&log, &Seal { head: G.into(), last: B.into(), cut: Cut::None }).unwrap();
        advance(&log, B, C, true, || A.to_string()).unwrap();
        assert_eq!(read(&log).unwrap().unwrap(), Seal { head: A.into(), last: C.into(), cut: Cut::None });
    }

    #[test]
    fn a_damaged_seal_is_said_so_and_not_trusted() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("audit.jsonl");
        for bad in ["", "garbage", &render(&Seal::default())[..100]] {
            std::fs::write(path_for(&log), format!("{bad}x")).unwrap();
            assert_eq!(read(&log).unwrap().unwrap().cut, Cut::Damaged, "{bad:?}");
        }
        advance(&log, G, A, false, || G.to_string()).unwrap();
        assert_eq!(read(&log).unwrap().unwrap(), Seal { head: G.into(), last: A.into(), cut: Cut::Damaged });
        // A link or a FIFO in its place is not read or written through.
        std::fs::remove_file(path_for(&log)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", path_for(&log)).unwrap();
        assert!(read(&log).unwrap_err().to_string().contains("symbolic link"));
        assert!(advance(&log, G, A, false, || G.to_string()).unwrap_err().to_string().contains("symbolic link"));
    }
}
