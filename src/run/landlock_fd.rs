//! The two Landlock system calls agentsh makes without a safe wrapper:
//! - `landlock_restrict_self` on a ruleset file descriptor that this process did not create
//!   with the `landlock` crate. Kept namespaces (`super::kept`) hold the box's finished
//!   Landlock ruleset in the holder process, and a later command takes a copy of it
//!   (`pidfd_getfd`) instead of opening every root and adding its rule again (about 4 µs per
//!   rule). The `landlock` crate can restrict only with a ruleset it created.
//! - `landlock_create_ruleset` asked for the ABI version: the kernel's answer in one call,
//!   where the crate finds it by trying features (two calls on this kernel, on every boxed
//!   command).
//!
//! They are the only `unsafe` in the crate (STYLE.md: one small module, with SAFETY comments).
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

/// The kernel's Landlock ABI version, or `None` where Landlock is not built in or not enabled
/// (or a filter refuses the call).
pub(crate) fn abi_version() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with this flag the kernel reads neither the attribute pointer (null) nor its size
    // (0), and returns a number: no memory of this process is touched and no descriptor made.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0 as libc::size_t,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(rc).ok().filter(|v| *v > 0)
}
