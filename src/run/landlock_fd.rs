//! The one system call agentsh makes without a safe wrapper: `landlock_restrict_self` on a
//! ruleset file descriptor that this process did not create with the `landlock` crate.
//!
//! Kept namespaces (`super::kept`) hold the box's finished Landlock ruleset in the holder
//! process, and a later command takes a copy of it (`pidfd_getfd`) instead of opening every
//! root and adding its rule again (about 4 µs per rule). The `landlock` crate can restrict
//! only with a ruleset it created, so this module makes the call itself. It is the only
//! `unsafe` in the crate (STYLE.md: one small module, with a SAFETY comment).
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, BorrowedFd};

/// Enforces the ruleset `ruleset` on this thread (single-threaded callers: this process).
/// `no_new_privs` must be set first. Fails when `ruleset` is not a Landlock ruleset.
pub(crate) fn restrict_self(ruleset: BorrowedFd<'_>) -> std::io::Result<()> {
    // SAFETY: the system call takes two integers and touches no memory of this process; the
    // descriptor is borrowed, so it stays open for the duration of the call.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0 as libc::c_uint) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}
