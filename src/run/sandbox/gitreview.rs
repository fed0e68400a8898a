//! What a boxed command did to hide its edits from the person's git review (issue 25, rt3 G3):
//! a skip-worktree or assume-unchanged bit set in `.git/index` (the file's changes then show in
//! neither `git status` nor `git diff`), and a replacement ref (`refs/replace/*`, loose or in
//! `packed-refs`: `git show` and `git log -p` then show another object than the one checked
//! out). The box writes the index and the refs, so this cannot be refused; it is found when the
//! command ends, for the person to be told. It must not print or change anything.
//!
//! Cheap where nothing changed: the index is opened as the command starts (the old file stays
//! readable after git renames a new one over it), and after it, three `statx` calls say
//! whether the index, `packed-refs` or `refs/replace/` changed; only then is anything read.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// An index larger than this is not read (a monorepo's can be tens of megabytes).
const MAX_INDEX: u64 = 64 * 1024 * 1024;

/// The index and refs as the command started.
pub struct Before {
    git: PathBuf,
    /// The index as it was, open, with its identity and change time then (`None`: there was
    /// none).
    index: Option<(File, Stamp)>,
    /// When the command started, less a margin for coarse file-system clocks (seconds).
    since: i64,
}

/// One thing found: what hides, and the file or ref it hides.
#[derive(Debug, PartialEq, Eq)]
pub enum Hidden {
    /// A file with the skip-worktree or assume-unchanged bit: `git status` and `git diff`
    /// skip its changes.
    Bit { path: String, skip_worktree: bool },
    /// `refs/replace/<object>`: git shows another object in its place.
    Replaced(String),
}

impl Before {
    pub fn take(git: &Path) -> Before {
        let index = open_file(&super::join(git, "index")).and_then(|f| f.metadata().ok().map(|m| (f, stamp(&m))));
        let since = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64) - 2;
        Before { git: git.to_path_buf(), index, since }
    }

    /// What the command added: bits set in the index, replacement refs made.
    pub fn finish(self) -> Vec<Hidden> {
        let mut found = Vec::new();
        let changed =
            |rel: &str| std::fs::symlink_metadata(super::join(&self.git, rel)).ok().filter(|m| m.ctime() >= self.since);
        if let Some(now) = changed("index").filter(|m| self.index.as_ref().is_none_or(|(_, was)| *was != stamp(m))) {
            let before = self
                .index
                .as_ref()
                // Written in place (the same file): what it held before is gone; every bit is new.
                .filter(|(_, was)| (was.0, was.1) != (now.dev(), now.ino()))
                .and_then(|(f, _)| read_capped(f).ok())
                .map(|bytes| hidden_bits(&bytes))
                .unwrap_or_default();
            let after = open_file(&super::join(&self.git, "index"))
                .and_then(|f| read_capped(&f).ok())
                .map(|bytes| hidden_bits(&bytes))
                .unwrap_or_default();
            for (path, skip_worktree) in after {
                if !before.iter().any(|(p, s)| *p == path && *s == skip_worktree) {
                    found.push(Hidden::Bit { path, skip_worktree });
                }
            }
        }
        if changed("refs/replace").is_some()
            && let Ok(entries) = std::fs::read_dir(super::join(&self.git, "refs/replace"))
        {
            for e in entries.flatten().take(1000) {
                if e.metadata().is_ok_and(|m| m.ctime() >= self.since) {
                    found.push(Hidden::Replaced(format!("refs/replace/{}", e.file_name().to_string_lossy())));
                }
            }
        }
        if changed("packed-refs").is_some()
            && let Some(f) = open_file(&super::join(&self.git, "packed-refs"))
            && let Ok(bytes) = read_capped(&f)
        {
            for line in String::from_utf8_lossy(&bytes).lines() {
                if let Some((_, name)) = line.split_once(' ')
                    && name.starts_with("refs/replace/")
                    && !found.iter().any(|h| *h == Hidden::Replaced(name.to_string()))
                {
                    found.push(Hidden::Replaced(name.to_string()));
                }
            }
        }
        found
    }
}

/// A file's identity and change time: device, inode, seconds, nanoseconds.
type Stamp = (u64, u64, i64, i64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    (m.dev(), m.ino(), m.ctime(), m.ctime_nsec())
}

/// A regular file, opened without following a link or waiting: the box could put a FIFO in
/// the index's place, and a plain open would wait for a writer.
fn open_file(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
    f.metadata().ok().filter(std::fs::Metadata::is_file).map(|_| f)
}

fn read_capped(f: &File) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut f = f;
    (&mut f).take(MAX_INDEX).read_to_end(&mut out)?;
    Ok(out)
}

/// The entries of an index (`DIRC`, versions 2 to 4, SHA-1 or SHA-256 object names) that have
/// the skip-worktree bit (`true`) or the assume-unchanged bit (`false`). Empty where it does not
/// read as an index.
pub(crate) fn hidden_bits(index: &[u8]) -> Vec<(String, bool)> {
    parse(index, 20).or_else(|| parse(index, 32)).unwrap_or_default()
}

fn parse(b: &[u8], hash: usize) -> Option<Vec<(String, bool)>> {
    let be32 = |at: usize| b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(8)? as usize;
    let mut at = 12;
    let mut out = Vec::new();
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(at + 24)?;
        // A file, a link or a gitlink: anything else means the object names are longer.
        if !matches!(mode >> 12, 0o10 | 0o12 | 0o16) {
            return None;
        }
        at += 40 + hash;
        let flags = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
        at += 2;
        let mut extended = 0u16;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            extended = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
            at += 2;
        }
        let path = if version == 4 {
            // A varint of bytes to drop from the previous path, then the rest, NUL-ended.
            let mut strip = 0usize;
            loop {
                let c = *b.get(at)?;
                at += 1;
                strip = (strip << 7) | usize::from(c & 0x7f);
                if c & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let mut p = previous.get(..previous.len().checked_sub(strip)?)?.to_vec();
            p.extend_from_slice(&b[at..end]);
            at = end + 1;
            p
        } else {
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let p = b[at..end].to_vec();
            // Padded with one to eight NULs to a multiple of eight.
            at = start + (end - start + 8) / 8 * 8;
            p
        };
        let skip_worktree = extended & 0x4000 != 0;
        if flags & 0x8000 != 0 || skip_worktree {
            out.push((String::from_utf8_lossy(&path).into_owned(), skip_worktree));
        }
        previous = path;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        git(t.path(), &["init", "-q"]);
        for (f, body) in [("a", "1\n"), ("dir/b", "2\n"), ("dir/c", "3\n"), (".husky/pre-commit", "npm test\n")] {
            std::fs::create_dir_all(t.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(f), body).unwrap();
        }
        git(t.path(), &["add", "-A"]);
        git(t.path(), &["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "x"]);
        t
    }

    #[test]
    fn the_bits_git_sets_are_read_from_every_index_version() {
        for version in ["2", "3", "4"] {
            let t = repo();
            git(t.path(), &["update-index", "--index-version", version]);
            git(t.path(), &["update-index", "--assume-unchanged", "dir/c"]);
            let before = std::fs::read(t.path().join(".git/index")).unwrap();
            assert_eq!(hidden_bits(&before), vec![("dir/c".to_string(), false)], "version {version}");
            git(t.path(), &["update-index", "--skip-worktree", ".husky/pre-commit"]);
            let after = std::fs::read(t.path().join(".git/index")).unwrap();
            assert_eq!(
                hidden_bits(&after),
                vec![(".husky/pre-commit".to_string(), true), ("dir/c".to_string(), false)],
                "version {version}"
            );
        }
        assert!(hidden_bits(b"not an index").is_empty());
    }

    #[test]
    fn only_what_the_command_added_is_found() {
        let t = repo();
        let git_dir = t.path().join(".git");
        // The person's own bit, set before the command.
        git(t.path(), &["update-index", "--assume-unchanged", "a"]);
        let before = Before::take(&git_dir);
        git(t.path(), &["update-index", "--skip-worktree", ".husky/pre-commit"]);
        git(t.path(), &["replace", "-f", "HEAD:a", "HEAD:dir/b"]);
        let found = before.finish();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], Hidden::Bit { path: ".husky/pre-commit".into(), skip_worktree: true });
        assert!(matches!(&found[1], Hidden::Replaced(r) if r.starts_with("refs/replace/")), "{found:?}");
        // The index unchanged since: no bit is new (refs are told new by their change time,
        // with a margin of two seconds, so the ref just made would be found again).
        let again = Before::take(&git_dir).finish();
        assert!(!again.iter().any(|h| matches!(h, Hidden::Bit { .. })), "{again:?}");
    }

    #[test]
    fn a_fifo_in_the_index_place_does_not_hold_agentsh() {
        let t = repo();
        let git_dir = t.path().join(".git");
        let before = Before::take(&git_dir);
        std::fs::remove_file(git_dir.join("index")).unwrap();
        std::fs::remove_file(git_dir.join("packed-refs")).ok();
        for f in ["index", "packed-refs"] {
            let made = Command::new("mkfifo").arg(git_dir.join(f)).status().unwrap();
            assert!(made.success());
        }
        assert!(before.finish().is_empty());
        assert!(Before::take(&git_dir).finish().is_empty());
    }
}
