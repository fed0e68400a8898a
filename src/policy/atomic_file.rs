//! Atomic read-modify-write of JSON config files. It owns the locking protocol; it must not
//! judge commands or decide what to write.
//!
//! Protocol (LESSONS.md, "Concurrent writers"): hold an exclusive lock on a separate lock file
//! for the whole read-modify-write, write a temp file in the same directory, fsync it, rename
//! it over the target, fsync the directory. Locking the data file itself and renaming over it
//! loses updates.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The lock file of `path`: in agentsh's state directory (`locks/`, named by a hash of the file's
/// absolute path), so that none is left beside a project's `.agents/terminal.json`; beside the
/// file only where there is no state directory. Every writer of one file finds the same lock.
fn lock_path(path: &Path) -> PathBuf {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let absolute = fs::canonicalize(dir).map(|d| d.join(path.file_name().unwrap_or_default()));
    if let (Ok(state), Ok(absolute)) = (crate::policy::dirs::state(), absolute) {
        let locks = state.join("locks");
        if crate::policy::dirs::private_dir(&locks).is_ok() {
            let digest = crate::text::sha256::hex(&[absolute.as_os_str().as_encoded_bytes()]);
            let name = &digest[..24];
            return locks.join(format!("{name}.lock"));
        }
    }
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

/// Applies `change` to the JSON object in `path` (an empty object if the file is missing) and
/// writes the result atomically. A malformed file is never overwritten: a person's settings
/// would be lost.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Map<String, Value>) -> Result<T>) -> Result<T> {
    update_then(path, change, |_, _| Ok(()))
}

/// As [`update`]; then `after(old bytes, new bytes)` runs once the new file is in place, still
/// under the lock, so nothing else can change the file in between (trust is re-recorded here).
pub fn update_then<T>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<T>,
    after: impl FnOnce(Option<&[u8]>, &[u8]) -> Result<()>,
) -> Result<T> {
    let (dir, lock) = lock(path)?;

    let old = match crate::policy::config::read_bytes(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => bail!("{}: {e}; fix the file first, agentsh will not overwrite it", path.display()),
    };
    let mut map = match old.as_deref().map(String::from_utf8_lossy) {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!(
                "{}:1:1: expected a JSON object; fix the file first, agentsh will not overwrite it",
                path.display()
            ),
            Err(e) => bail!(
                "{}:{}:{}: not valid JSON ({e}); fix the file first, agentsh will not overwrite it",
                path.display(),
                e.line(),
                e.column()
            ),
        },
    };
    let result = change(&mut map)?;
    let mut text = serde_json::to_string_pretty(&Value::Object(map)).context("cannot serialize the config")?;
    text.push('\n');
    write_atomically(path, dir, text.as_bytes())?;
    after(old.as_deref(), text.as_bytes())?;
    drop(lock);
    Ok(result)
}

/// Creates the directory and takes the exclusive lock on the separate lock file.
fn lock(path: &Path) -> Result<(&Path, File)> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(path))
        .with_context(|| format!("cannot open the lock file for {}", path.display()))?;
    lock.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    Ok((dir, lock))
}

fn write_atomically(path: &Path, dir: &Path, bytes: &[u8]) -> Result<()> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| -> Result<()> {
        let mut f = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        f.write_all(bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
        f.sync_all().with_context(|| format!("cannot sync {}", tmp.display()))?;
        fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Replaces a text file (a shell rc file) atomically, under the same lock protocol.
pub fn write_text(path: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, _lock) = lock(path)?;
    write_atomically(path, dir, bytes)
}

/// The string list under `key`, created if missing. Fails if the key holds something else.
pub fn string_list<'a>(map: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Vec<Value>> {
    let v = map.entry(key.to_string()).or_insert_with(|| Value::Array(Vec::new()));
    match v {
        Value::Array(a) => Ok(a),
        _ => bail!("\"{key}\" is not a list; fix the file first"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_updates_and_keeps_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".agents/terminal.json");
        update(&path, |m| {
            m.insert("requireCommandConfirmation".into(), Value::Bool(true));
            string_list(m, "commandWhitelist")?.push("ls".into());
            Ok(())
        })
        .unwrap();
        update(&path, |m| {
            string_list(m, "commandWhitelist")?.push("make".into());
            Ok(())
        })
        .unwrap();
        let v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["commandWhitelist"], serde_json::json!(["ls", "make"]));
        assert_eq!(v["requireCommandConfirmation"], Value::Bool(true));
    }

    #[test]
    fn never_overwrites_a_malformed_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        fs::write(&path, "{ broken").unwrap();
        let err = update(&path, |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("c.json:1:"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{ broken");
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::thread::scope(|s| {
            for t in 0..8 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..25 {
                        update(path, |m| {
                            string_list(m, "commandWhitelist")?.push(format!("cmd-{t}-{i}").into());
                            Ok(())
                        })
                        .unwrap();
                    }
                });
            }
        });
        let v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["commandWhitelist"].as_array().unwrap().len(), 200);
    }
}
