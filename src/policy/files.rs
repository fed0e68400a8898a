//! Reading a file whose shape agentsh does not control (a config file, a script operand, a trust
//! record, a request in the approval queue): only a regular file, opened without blocking and
//! read only up to a cap. A FIFO in its place would hang every command; a link to `/dev/zero`, or
//! a 1 GB `.agents/terminal.json` (which an untrusted repository can ship), would take all memory
//! (issue 27). It says why a file cannot be read, in words for a message; what the bytes mean is
//! its callers' business.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Whether a symbolic link at the path is followed. agentsh's own files (queue requests, the
/// audit seal) never are; a person's config may be a link into their dotfiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

/// An open regular file and its metadata, taken from the open file itself.
#[derive(Debug)]
pub struct Regular {
    pub file: File,
    pub meta: Metadata,
}

/// Opens `path` for reading when it is a regular file. The type is looked at before opening (so
/// that no device is opened: opening some has effects) and again on the open file (so that a
/// swap in between is caught); the open never blocks (`O_NONBLOCK`: a FIFO swapped in opens at
/// once) and never takes a controlling terminal (`O_NOCTTY`).
///
/// Errors: `NotFound` only when nothing is at the path; a link that dangles or loops, and
/// anything but a regular file, give an error whose message says what is there.
pub fn open(path: &Path, links: Links) -> io::Result<Regular> {
    let before = match links {
        Links::Follow => std::fs::metadata(path),
        Links::Refuse => std::fs::symlink_metadata(path),
    };
    let before = before.map_err(|e| explain(path, links, e))?;
    not_regular(&before)?;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path).map_err(|e| explain(path, links, e))?;
    let meta = file.metadata()?;
    not_regular(&meta)?;
    if (meta.dev(), meta.ino()) != (before.dev(), before.ino()) {
        return Err(io::Error::other("was replaced while agentsh opened it"));
    }
    Ok(Regular { file, meta })
}

/// Reads a whole regular file of at most `cap` bytes (following links). A larger one is refused
/// (`FileTooLarge`) without reading it.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let opened = open(path, Links::Follow)?;
    opened.read_capped(cap)
}

impl Regular {
    /// Refuses the file unless this user owns it: agentsh's own files, in directories no one
    /// else can write, are never someone else's.
    pub fn owned(self) -> io::Result<Regular> {
        owned_by_me(&self.meta)?;
        Ok(self)
    }

    /// The first `limit` bytes (all of a shorter file).
    pub fn read_prefix(&self, limit: u64) -> io::Result<Vec<u8>> {
        let hint = usize::try_from(self.meta.len().min(limit)).unwrap_or(0);
        let mut bytes = Vec::with_capacity(hint);
        (&self.file).take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The whole file, when it is at most `cap` bytes; a larger one is refused (`FileTooLarge`),
    /// by its size before reading, and by what is read (a file that grows meanwhile).
    pub fn read_capped(&self, cap: u64) -> io::Result<Vec<u8>> {
        if self.meta.len() > cap {
            return Err(too_large(self.meta.len(), cap));
        }
        let bytes = self.read_prefix(cap.saturating_add(1))?;
        if bytes.len() as u64 > cap {
            return Err(too_large(bytes.len() as u64, cap));
        }
        Ok(bytes)
    }
}

/// Refuses metadata of a file another user owns (`PermissionDenied`).
pub fn owned_by_me(meta: &Metadata) -> io::Result<()> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("belongs to another user (uid {}, not {me})", meta.uid()),
        ));
    }
    Ok(())
}

/// What a file type is, for messages: "a directory", "a FIFO", ...
pub fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn not_regular(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("is {}, not a regular file", kind(meta))))
}

fn too_large(size: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("is {}, over the {} agentsh reads", crate::text::bytes(size), crate::text::bytes(cap)),
    )
}

/// A clearer error for a path that exists only as a link: one that dangles, or loops (or any
/// link, where links are refused).
pub fn explain(path: &Path, links: Links, e: io::Error) -> io::Error {
    let is_link = || std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = || std::fs::read_link(path).map(|t| crate::text::sanitize::sanitize(&t.display().to_string()));
    match e.raw_os_error() {
        Some(libc::ELOOP) if links == Links::Refuse => {
            io::Error::new(io::ErrorKind::InvalidInput, "is a symbolic link, which agentsh does not follow here")
        }
        Some(libc::ELOOP) => io::Error::new(io::ErrorKind::InvalidInput, "is a symbolic link that loops"),
        Some(libc::ENOENT) if links == Links::Follow && is_link() => io::Error::new(
            io::ErrorKind::InvalidInput,
            match target() {
                Ok(t) => format!("is a symbolic link to {t}, which does not exist"),
                Err(_) => "is a symbolic link to nothing".to_string(),
            },
        ),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn message(r: io::Result<impl std::fmt::Debug>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn only_a_regular_file_is_opened_and_nothing_blocks() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::write(p("file"), "hello").unwrap();
        assert_eq!(read_capped(&p("file"), 5).unwrap(), b"hello");
        // A FIFO with no writer would block an ordinary open forever.
        nix::unistd::mkfifo(&p("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(message(read_capped(&p("fifo"), 5)).contains("is a FIFO"));
        symlink(p("fifo"), p("to-fifo")).unwrap();
        assert!(message(read_capped(&p("to-fifo"), 5)).contains("is a FIFO"));
        symlink("/dev/zero", p("zero")).unwrap();
        assert!(message(read_capped(&p("zero"), 5)).contains("a character device"));
        assert!(message(read_capped(d.path(), 5)).contains("is a directory"));
        symlink(p("nowhere"), p("dangling")).unwrap();
        assert!(message(read_capped(&p("dangling"), 5)).contains("which does not exist"));
        symlink(p("loop"), p("loop")).unwrap();
        assert!(message(read_capped(&p("loop"), 5)).contains("loops"));
        // Nothing at all: NotFound, which callers read as "no such file".
        assert_eq!(read_capped(&p("missing"), 5).unwrap_err().kind(), io::ErrorKind::NotFound);
        symlink(p("file"), p("link")).unwrap();
        assert!(message(open(&p("link"), Links::Refuse)).contains("is a symbolic link"));
        assert_eq!(read_capped(&p("link"), 5).unwrap(), b"hello");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_unread() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big");
        std::fs::write(&f, vec![b'x'; 2048]).unwrap();
        let e = read_capped(&f, 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "is 2 KiB, over the 1 KiB agentsh reads");
        assert_eq!(read_capped(&f, 2048).unwrap().len(), 2048);
        assert_eq!(open(&f, Links::Follow).unwrap().read_prefix(10).unwrap().len(), 10);
    }
}
