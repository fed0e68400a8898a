//! The user's agentsh directories (`~/.config/agentsh`, `~/.local/state/agentsh`), looked up
//! once per process: each lookup reads the environment and builds several paths, and a `-c`
//! run needed three (docs/BENCHMARKS.md). The environment does not change while agentsh runs.

use directories::ProjectDirs;
use std::path::PathBuf;
use std::sync::OnceLock;

/// `None` when no home directory can be found.
pub fn project() -> Option<&'static ProjectDirs> {
    static DIRS: OnceLock<Option<ProjectDirs>> = OnceLock::new();
    DIRS.get_or_init(|| ProjectDirs::from("", "", "agentsh")).as_ref()
}

/// `~/.local/state/agentsh` on Linux (`$XDG_STATE_HOME/agentsh`); the platform's local data
/// directory where there is no state directory.
pub fn state_dir() -> Option<PathBuf> {
    let dirs = project()?;
    Some(dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir()).to_path_buf())
}
