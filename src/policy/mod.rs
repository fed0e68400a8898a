//! Policy: config files on disk -> the validated settings in force.
//!
//! The policy: config files on disk -> the validated settings in force, and the files that
//! back them (trust records, atomic rewrites, agentsh's own directories). What the judge reads
//! from here is a plain type the judge defines (`judge::decide::Policy`). It must not ask,
//! record or run anything.

pub mod atomic_file;
pub mod audit_settings;
pub mod config;
pub mod config_fast;
pub mod dirs;
pub mod files;
pub mod last_good;
pub mod sandbox_settings;
pub mod trust;
pub mod whitelist;
