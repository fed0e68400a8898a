//! git's untracked cache, the index's `UNTR` extension, read (rt6 X3): for each directory git
//! read, the new files it listed there and the directory's stat data then. git trusts the list
//! while the directory's stat data matches (dir.c `valid_cached_dir`), so a cache the box wrote
//! can leave out a file it made (`tests/conftest.py`) with the directory's new stat data, and
//! `git status` never shows it. [`read`] gives the directories; `gitignore::untracked_cache`
//! checks them against what they hold. Format: git's `Documentation/gitformat-index.txt`,
//! "Untracked cache".

/// One directory of the cache.
pub(crate) struct Dir {
    /// Relative to the worktree (`""`: its top level).
    pub path: Vec<u8>,
    /// The untracked entries git listed there (a directory's name ends with `/`).
    pub listed: Vec<Vec<u8>>,
    /// The directory's stat data as git recorded it, as stored (ctime, mtime, dev, ino, uid,
    /// gid, size: nine big-endian 32-bit words), where git marks the list valid.
    pub stat: Option<[u8; 36]>,
}

/// At most this many directories are read from a cache: past them, it is not read at all.
const MAX_DIRS: usize = 1 << 16;

/// The directories of the untracked cache `b` (the extension's body), for an index whose object
/// names are `hash` bytes long. `None` where it does not read as one.
pub(crate) fn read(b: &[u8], hash: usize) -> Option<Vec<Dir>> {
    let mut at = 0;
    let ident = varint(b, &mut at)?;
    // The environment, the stat data and hashes of `info/exclude` and `core.excludesFile`, and
    // the flags it was made with.
    at = at.checked_add(ident)?.checked_add(36 + 36 + 4 + 2 * hash)?;
    // The per-directory ignore file's name (`.gitignore`).
    cstr(b, &mut at)?;
    let count = varint(b, &mut at)?;
    if count == 0 || count > MAX_DIRS {
        return (count == 0).then(Vec::new);
    }
    let mut out = Vec::with_capacity(count);
    block(b, &mut at, None, &mut out, 0)?;
    if out.len() != count {
        return None;
    }
    // One bit for each directory: a bitmap longer than that is no cache git wrote (and would
    // be made in memory bit by bit).
    let valid = ewah(b, &mut at, count)?;
    let _check_only = ewah(b, &mut at, count)?;
    let _hash_valid = ewah(b, &mut at, count)?;
    for (d, v) in out.iter_mut().zip(valid.iter().chain(std::iter::repeat(&false))) {
        if *v {
            d.stat = Some(b.get(at..at + 36)?.try_into().ok()?);
            at += 36;
        }
    }
    Some(out)
}

/// One directory's block and, depth first, its children's.
fn block(b: &[u8], at: &mut usize, parent: Option<&[u8]>, out: &mut Vec<Dir>, depth: usize) -> Option<()> {
    if depth > 4096 || out.len() >= MAX_DIRS {
        return None;
    }
    let untracked = varint(b, at)?;
    let dirs = varint(b, at)?;
    let name = cstr(b, at)?;
    let path = match parent {
        None | Some([]) => name.to_vec(),
        Some(p) => [p, b"/", name].concat(),
    };
    let mut listed = Vec::with_capacity(untracked.min(1024));
    for _ in 0..untracked {
        listed.push(cstr(b, at)?.to_vec());
    }
    out.push(Dir { path: path.clone(), listed, stat: None });
    for _ in 0..dirs {
        block(b, at, Some(&path), out, depth + 1)?;
    }
    Some(())
}

/// git's variable-length integer (`varint.c`), as the index's version 4 writes path lengths.
fn varint(b: &[u8], at: &mut usize) -> Option<usize> {
    let mut c = *b.get(*at)?;
    *at += 1;
    let mut v = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *b.get(*at)?;
        *at += 1;
        v = v.checked_add(1)?.checked_mul(128)? | usize::from(c & 0x7f);
    }
    Some(v)
}

/// A NUL-ended string.
fn cstr<'a>(b: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = b.get(*at..)?.iter().position(|c| *c == 0)?;
    let s = &b[*at..*at + len];
    *at += len + 1;
    Some(s)
}

/// A serialized EWAH bitmap (`ewah/ewah_io.c`) of at most `max` bits: its bits, in order.
fn ewah(b: &[u8], at: &mut usize, max: usize) -> Option<Vec<bool>> {
    let be32 = |i: usize| b.get(i..i + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize);
    let bits = be32(*at).filter(|n| *n <= max)?;
    let words = be32(*at + 4)?;
    let start = *at + 8;
    let data = b.get(start..start.checked_add(words.checked_mul(8)?)?)?;
    // The words, then the position of the last run-length word.
    *at = start + words * 8 + 4;
    b.get(*at - 4..*at)?;
    let word = |i: usize| u64::from_be_bytes(data[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    let mut out: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < words {
        let rlw = word(i);
        let run = ((rlw >> 1) & 0xffff_ffff) as usize;
        let literals = (rlw >> 33) as usize;
        if out.len() + run.checked_mul(64)? > bits + 64 {
            return None;
        }
        out.resize(out.len() + run * 64, rlw & 1 == 1);
        i += 1;
        for _ in 0..literals {
            if i >= words {
                return None;
            }
            let w = word(i);
            out.extend((0..64).map(|k| w >> k & 1 == 1));
            i += 1;
        }
    }
    out.truncate(bits);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// What git 2.47 writes: a cache of a worktree with new files at the top, in a tracked
    /// directory and in an untracked one, read back as git lists it.
    #[test]
    fn the_cache_git_writes_is_read() {
        let t = tempfile::tempdir().unwrap();
        git(t.path(), &["init", "-q"]);
        for f in ["a", "tests/t.py", "tests/deep/d.py"] {
            std::fs::create_dir_all(t.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(f), "x\n").unwrap();
        }
        git(t.path(), &["add", "."]);
        for f in ["new", "tests/conftest.py", "fresh/f"] {
            std::fs::create_dir_all(t.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(f), "x\n").unwrap();
        }
        git(t.path(), &["update-index", "--untracked-cache"]);
        git(t.path(), &["status", "--short"]);
        git(t.path(), &["status", "--short"]);
        let index = std::fs::read(t.path().join(".git/index")).unwrap();
        let body = {
            let at = index.windows(4).position(|w| w == b"UNTR").expect("the extension");
            let len = u32::from_be_bytes(index[at + 4..at + 8].try_into().unwrap()) as usize;
            index[at + 8..at + 8 + len].to_vec()
        };
        let dirs = read(&body, 20).expect("read");
        let top = dirs.iter().find(|d| d.path.is_empty()).expect("the top level");
        let mut listed = top.listed.clone();
        listed.sort();
        assert_eq!(listed, [b"fresh/".to_vec(), b"new".to_vec()]);
        assert!(top.stat.is_some(), "valid");
        let tests = dirs.iter().find(|d| d.path == b"tests").expect("tests");
        assert_eq!(tests.listed, [b"conftest.py".to_vec()]);
        assert!(dirs.iter().any(|d| d.path == b"tests/deep"));
        assert!(read(b"\x05abc", 20).is_none());
        // A bitmap that says it has more bits than the cache has directories is refused, not
        // made (one run word can stand for 2^38 bits).
        let mut bitmap = Vec::new();
        bitmap.extend_from_slice(&1000u32.to_be_bytes());
        bitmap.extend_from_slice(&1u32.to_be_bytes());
        bitmap.extend_from_slice(&((16u64 << 1) | 1).to_be_bytes());
        bitmap.extend_from_slice(&0u32.to_be_bytes());
        assert!(ewah(&bitmap, &mut 0, 3).is_none());
        assert_eq!(ewah(&bitmap, &mut 0, 1000).map(|v| v.len()), Some(1000));
    }
}
