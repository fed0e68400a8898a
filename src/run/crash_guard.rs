//! A crash while judging ends agentsh with a refusal in the route's own terms, never silently
//! (issue 24, section 4; issue 27). An agent lets a hook call through on any status but a
//! block, so a judge that dies of a signal (139) fails open there.
//!
//! The parser's known ways to crash are refused before it runs (`judge::parse` bounds input
//! size and every kind of nesting), and a panic or a timeout already becomes a refusal
//! (`judging::bounded`). This is what is left, as defence in depth: a fault (SIGSEGV, SIGBUS: a
//! stack overflow), an abort (SIGABRT: memory exhausted, a panic while panicking), SIGILL or
//! SIGFPE while the guard is armed. main.rs skips std's start-up, so std's own stack-overflow
//! handler is not there to print anything either.
//!
//! While armed, a handler on an alternate signal stack writes a message made before judging
//! began and `_exit`s with the route's refusal status: 126 for the shell route, check's deny
//! (11), the hook's block (2). Only async-signal-safe calls run in it (`write`, `_exit`,
//! `sigaction`); nothing is allocated, locked or formatted there, so no audit record is
//! written for such a crash (the audit log takes a lock and a hash chain).
//!
//! Cost: the handlers are installed once per process, and each judging thread sets up its
//! alternate stack (two system calls and an allocation); plain words, judged without a thread,
//! use none of it.
//!
//! With `run::sandbox::sys`, the only `unsafe` in the crate (STYLE.md: small modules, with
//! SAFETY comments).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, Ordering};

/// What a crash while judging writes, and the status it ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: i32,
    /// Written to stdout, with [`TEXT_MARK`] replaced by `text`, JSON-escaped.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The command's text, for a JSON verdict: escaped when it is written, so that a long
    /// command costs nothing unless agentsh crashes.
    pub text: Option<&'static str>,
}

/// Where the command's text goes in [`Refusal::stdout`]: a JSON string holding U+0001, as
/// serde_json writes it.
pub const TEXT_MARK: &[u8] = b"\\u0001";

/// The refusal of the judging in progress, or null when no judging is guarded. Set to a leaked
/// refusal, never freed: a handler may be reading it at any moment.
static ARMED: AtomicPtr<Refusal> = AtomicPtr::new(std::ptr::null_mut());

/// The signals a crash arrives as.
const SIGNALS: [libc::c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGABRT, libc::SIGILL, libc::SIGFPE];

/// Arms the guard with `refusal` until [`disarm`]: a crash in any thread of the process ends it
/// with that refusal. Installs the handlers on first use.
pub fn arm(refusal: Refusal) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(install);
    let leaked = Box::into_raw(Box::new(refusal));
    ARMED.store(leaked, Ordering::Release);
}

/// The judging is over (a verdict came back): a crash later is not a crash while judging.
pub fn disarm() {
    ARMED.store(std::ptr::null_mut(), Ordering::Release);
}

fn install() {
    for sig in SIGNALS {
        // SAFETY: `sigaction` is given a fully initialised struct (zeroed, then the handler, an
        // empty mask and the flags set) and a null pointer for the old action. The handler has
        // the three-argument signature SA_SIGINFO calls, and does only async-signal-safe work.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn handler(sig: libc::c_int, _info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    let refusal = ARMED.load(Ordering::Acquire);
    if refusal.is_null() {
        // Not while judging: the signal's default action, as if no handler were installed.
        // Returning re-runs the faulting instruction (or `abort` raises again), which now
        // ends the process as before.
        // SAFETY: `signal` with SIG_DFL is async-signal-safe and installs no code.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
        return;
    }
    // SAFETY: a non-null ARMED points at a leaked, never freed `Refusal`, which nothing
    // mutates after `arm` stored it.
    let refusal = unsafe { &*refusal };
    let mut stdout = refusal.stdout.as_slice();
    while let Some(at) = refusal.text.and(find(stdout, TEXT_MARK)) {
        write_all(1, &stdout[..at]);
        write_escaped(1, refusal.text.unwrap_or_default().as_bytes());
        stdout = &stdout[at + TEXT_MARK.len()..];
    }
    write_all(1, stdout);
    write_all(2, &refusal.stderr);
    // SAFETY: `_exit` is async-signal-safe; it ends the process without running destructors or
    // flushing std's buffers, which another thread may hold locked.
    unsafe { libc::_exit(refusal.code) }
}

/// `write(2)` until all of `bytes` is written or writing fails.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`, which lives for the call.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match n {
            n if n > 0 => bytes = &bytes[n as usize..],
            // SAFETY: reading errno through libc's accessor for this thread.
            _ if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR => {}
            _ => return,
        }
    }
}

/// Where `needle` first starts in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `text` written as the inside of a JSON string, through a buffer on the stack.
fn write_escaped(fd: libc::c_int, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 512];
    let mut n = 0;
    for &b in text {
        if n + 6 > buf.len() {
            write_all(fd, &buf[..n]);
            n = 0;
        }
        match b {
            b'"' | b'\\' => {
                buf[n..n + 2].copy_from_slice(&[b'\\', b]);
                n += 2;
            }
            0..=0x1f => {
                buf[n..n + 6].copy_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]);
                n += 6;
            }
            _ => {
                buf[n] = b;
                n += 1;
            }
        }
    }
    write_all(fd, &buf[..n]);
}

/// An alternate signal stack for the calling thread, while it lives: a stack overflow's
/// SIGSEGV cannot run its handler on the stack that overflowed.
pub struct AltStack {
    _memory: Vec<u8>,
}

/// Room for the handler (which uses a few hundred bytes) and the kernel's signal frame,
/// whatever the CPU's register state needs.
const ALT_STACK_BYTES: usize = 64 * 1024;

impl AltStack {
    /// Sets up an alternate stack for this thread. `None` if the kernel refuses it: the guard
    /// then still catches other faults, and a stack overflow ends the process as before.
    pub fn new() -> Option<AltStack> {
        // Not zeroed: only the kernel and the handler write there, each before it reads.
        let mut memory: Vec<u8> = Vec::with_capacity(ALT_STACK_BYTES.max(libc::SIGSTKSZ));
        let stack = libc::stack_t { ss_sp: memory.as_mut_ptr().cast(), ss_flags: 0, ss_size: memory.capacity() };
        // SAFETY: `stack` describes the vector's allocation (its capacity), owned by the
        // returned value, which disables the stack (below) before that memory is freed. Safe
        // code never reads it: its length stays 0.
        let rc = unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
        (rc == 0).then_some(AltStack { _memory: memory })
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let stack = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
        // SAFETY: disabling this thread's alternate stack reads only `stack`; the handler is
        // not running (this is ordinary code on the thread's own stack).
        unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
    }
}

/// Test builds only (`cfg(debug_assertions)`): with `AGENTSH_TEST_CRASH_WHILE_JUDGING` set in
/// the environment, the judging thread overflows its stack, so tests can show what each route
/// does on a crash no input can cause any more. Release builds have no such switch.
#[cfg(debug_assertions)]
pub fn crash_if_asked() {
    if std::env::var_os("AGENTSH_TEST_CRASH_WHILE_JUDGING").is_some() {
        std::hint::black_box(overflow(std::hint::black_box(0)));
    }
}

#[cfg(debug_assertions)]
fn overflow(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 512]);
    if n == u64::MAX {
        return 0;
    }
    overflow(n + 1).wrapping_add(frame[n as usize % 512])
}
