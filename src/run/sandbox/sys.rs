//! The system calls agentsh makes without a safe wrapper, and the one unsafe hook of std it uses:
//! - `landlock_restrict_self` on a ruleset file descriptor that this process did not create
//!   with the `landlock` crate: a kept box (`super::holder`) holds its finished Landlock ruleset
//!   in the holder process, and each command takes a copy of it (`pidfd_getfd`) instead of
//!   opening every root and adding its rule again. It is made in the command's child (`spawn`).
//! - `landlock_create_ruleset` asked for the ABI version: the kernel's answer in one call,
//!   where the crate finds it by trying features (two calls on this kernel, on every boxed
//!   command).
//! - `mount_setattr`, which makes the box's view read-only in one call (the builder, `view`).
//! - `clone` with `CLONE_VM | CLONE_VFORK` and the child's system calls up to `execve`, through
//!   which the command's child joins the box (`spawn`), as `posix_spawn` starts a process.
//! - `seccomp(SECCOMP_SET_MODE_FILTER)`, which attaches the box's filter (`filter`) to the
//!   process that starts a boxed command, so the command inherits it (`load_filter`).
//! - `fork`, for the box's builder (and, in the musl build, the allocator's fork handlers).
//! - taking ownership of descriptors received over a socket (`SCM_RIGHTS`): the proxy's
//!   listeners, sent to it by the builder.
//! - `ioctl(SIOCSIFFLAGS)`, which brings up the loopback of the box's own network (the builder),
//!   where the proxy listens.
//! - `realpath` into a buffer of agentsh's own ([`real_path`]): std's `canonicalize` has the C
//!   library allocate the result, and on musl that sets up the C library's own allocator
//!   beside agentsh's (its first mappings and page faults) in every boxed command.
//!
//! They are the only `unsafe` in the crate (STYLE.md: one small module, with SAFETY comments).
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// `path` with every link resolved, as `std::fs::canonicalize` gives it, but without the C
/// library allocating (see the module's header).
pub(crate) fn real_path(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: `c` is NUL-terminated; `buf` holds PATH_MAX bytes and more, what `realpath`
    // writes at most (its result and the NUL) when given a buffer.
    let got = unsafe { libc::realpath(c.as_ptr(), buf.as_mut_ptr().cast()) };
    if got.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(len);
    Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(buf)))
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

/// `mount_setattr(2)`: sets (`set`) and clears (`clear`) mount attributes (`MOUNT_ATTR_*`) on
/// the mount at `path` relative to `dir` (with `AT_EMPTY_PATH` and an empty path: the mount
/// `dir` itself, a detached one included), and on every mount beneath it with `AT_RECURSIVE`.
/// rustix and nix have no wrapper for it.
pub(crate) fn mount_setattr(
    dir: BorrowedFd<'_>,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    set: u64,
    clear: u64,
) -> std::io::Result<()> {
    // `struct mount_attr` (linux/mount.h), version 0: four u64 fields.
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    // SAFETY: `path` is a valid NUL-terminated string and `attr` a valid `struct mount_attr` of
    // the size passed, both alive for the call; the kernel only reads them. The descriptor is
    // borrowed, so it stays open for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dir.as_raw_fd(),
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// What the command's child does between its creation and `execve`, prepared as plain values
/// before: it runs on a borrowed stack in this process's memory (see [`spawn`]), where only
/// system calls are sound.
pub(crate) struct ChildSetup<'a> {
    /// The box's holder: the namespaces to join (`namespaces`, `CLONE_NEW*`) are its.
    pub pidfd: RawFd,
    pub namespaces: libc::c_int,
    /// The working directory, changed to by path in the box's view.
    pub cwd: &'a std::ffi::CStr,
    pub new_session: bool,
    /// Descriptors to put in place of the command's standard output and error (`-1`: keep
    /// agentsh's): a terminal reopened for writing only where the command does not keep it.
    pub outputs: [RawFd; 2],
    /// The box's finished Landlock ruleset.
    pub ruleset: RawFd,
    pub max_processes: u64,
    /// The capabilities the command keeps (bit N: capability N); every other one is dropped.
    pub capabilities: u64,
    /// Where the program may be, tried in order (`$PATH` looked up in the box's view).
    pub programs: &'a [std::ffi::CString],
    /// NULL-terminated.
    pub argv: &'a [*const libc::c_char],
    pub envp: &'a [*const libc::c_char],
}

/// Where the child stopped before its program ran, and the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Join,
    Cwd,
    Session,
    Limits,
    Landlock,
    Capabilities,
    /// Marking the inherited descriptors close-on-exec.
    Descriptors,
    /// `execve` itself: not found, not executable.
    Exec,
}

/// `struct __user_cap_header_struct` (linux/capability.h).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`: version 3 takes two, for 64 capabilities.
#[repr(C)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

struct Shared<'a> {
    setup: &'a ChildSetup<'a>,
    failed: Option<(Stage, i32)>,
    /// The CPUs this thread may run on, which the child takes back first thing, when the clone
    /// pinned it to the one this thread was on (see [`spawn`]).
    cpus: Option<libc::cpu_set_t>,
}

/// The stack the command's child runs on until it execs. Static, not on this thread's stack: a
/// frame that large is probed page by page as it is made (16 fresh pages, each a page fault,
/// and each unmapped again at exit), where the child uses the top one or two; a static buffer's
/// pages are faulted in only where they are touched. A heap block this large would be a fresh
/// mapping per command.
static CHILD_STACK: std::sync::Mutex<ChildStack> = std::sync::Mutex::new(ChildStack([0; 64 * 1024]));

#[repr(align(16))]
struct ChildStack([u8; 64 * 1024]);

/// Starts the command's child as `posix_spawn` does (`clone` with `CLONE_VM | CLONE_VFORK`:
/// no copy of this process's memory, which a `fork` made per command cost about 0.1 ms), has
/// it join the box and exec, and returns its process ID once it has exec'd; or where it
/// stopped, after reaping it.
pub(crate) fn spawn(setup: &ChildSetup<'_>) -> Result<libc::pid_t, (Stage, std::io::Error)> {
    let mut shared = Shared { setup, failed: None, cpus: None };
    let mut stack = CHILD_STACK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // The child starts on this thread's CPU: this thread sleeps until the child has exec'd, and
    // every hand-over between the two (the child's start, its exec, its end) is then a wake-up
    // on the same CPU. Left to itself the kernel starts a new process on the idlest CPU, and on
    // a virtual machine waking an idle CPU is dear. The pin is inherited for the clone only:
    // the child takes back this thread's CPUs before anything else, and this thread after it.
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `sched_getaffinity` and `sched_setaffinity` read and write a `cpu_set_t` of the
    // size passed, on this stack; `sched_getcpu` takes nothing.
    let pinned = unsafe {
        let mut cpus: libc::cpu_set_t = std::mem::zeroed();
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        let cpu = libc::sched_getcpu();
        if cpu >= 0 && libc::sched_getaffinity(0, size, &mut cpus) == 0 {
            libc::CPU_SET(cpu as usize, &mut one);
            if libc::sched_setaffinity(0, size, &one) == 0 {
                shared.cpus = Some(cpus);
            }
        }
        shared.cpus
    };
    // SAFETY: the stack is the static buffer, held locked until `clone` returns; with
    // CLONE_VFORK this thread is suspended until the child has exec'd or exited, so the
    // child's use of this process's memory (`shared`, `setup`, the stack) ends before anything
    // here runs again.
    // All signals are blocked around the clone, so no handler of this process runs on the
    // child's borrowed stack; the child sets its own mask before exec.
    let pid = unsafe {
        let top = stack.0.as_mut_ptr().add(stack.0.len()) as usize & !15;
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &mut shared as *mut Shared as *mut libc::c_void,
        );
        let err = std::io::Error::last_os_error();
        if let Some(cpus) = &pinned {
            libc::sched_setaffinity(0, size, cpus);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err((Stage::Join, err));
        }
        pid
    };
    match shared.failed {
        None => Ok(pid),
        Some((stage, errno)) => {
            let mut status = 0;
            // SAFETY: reaps the child this function made, which has exited.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            Err((stage, std::io::Error::from_raw_os_error(errno)))
        }
    }
}

/// The child: system calls only, on the values in `arg` (a `Shared`), then `execve`; on any
/// failure it says where in `Shared` and exits.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Shared` of `spawn`, whose thread is suspended (CLONE_VFORK) while
    // this runs; every pointer in it is valid for that time. Only async-signal-safe system
    // call wrappers are called; errno is this thread's copy of the parent's (same TLS), which
    // the suspended parent does not use.
    unsafe {
        let shared = &mut *(arg as *mut Shared);
        let s = shared.setup;
        let fail = |shared: &mut Shared, stage: Stage| -> libc::c_int {
            shared.failed = Some((stage, *libc::__errno_location()));
            libc::_exit(127)
        };
        // The CPUs the command may use: all of agentsh's, not the one it was started on.
        if let Some(cpus) = &shared.cpus
            && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cpus) != 0
        {
            return fail(shared, Stage::Limits);
        }
        // agentsh ignores SIGPIPE (exec keeps an ignored signal ignored); the judge's crash guard
        // (`run::crash_guard`) handles the fatal signals: a handler would not survive exec, but
        // must not run here either, on this process's memory.
        for sig in [libc::SIGPIPE, libc::SIGSEGV, libc::SIGBUS, libc::SIGABRT, libc::SIGILL, libc::SIGFPE] {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        if libc::setns(s.pidfd, s.namespaces) != 0 {
            return fail(shared, Stage::Join);
        }
        if libc::chdir(s.cwd.as_ptr()) != 0 {
            return fail(shared, Stage::Cwd);
        }
        if s.new_session && libc::setsid() < 0 {
            return fail(shared, Stage::Session);
        }
        for (to, fd) in (1..).zip(s.outputs) {
            if fd >= 0 && libc::dup2(fd, to) < 0 {
                return fail(shared, Stage::Descriptors);
            }
        }
        let limit = libc::rlimit { rlim_cur: s.max_processes, rlim_max: s.max_processes };
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
            || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::setrlimit(libc::RLIMIT_NPROC, &limit) != 0
        {
            return fail(shared, Stage::Limits);
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, s.ruleset, 0 as libc::c_uint) != 0 {
            return fail(shared, Stage::Landlock);
        }
        // Joining the box's user namespace gave this process every capability in it. One
        // `capset` keeps `capabilities` only (permitted and effective; none inheritable, so none
        // ambient). That is all exec needs: with `no_new_privs` the kernel gives an exec no more
        // than this process holds (it intersects the new permitted set with the old, root's
        // "all" and a file's capabilities alike), and no call can raise the permitted set. The
        // bounding set stays as it was, but bounds nothing more: dropping from it took one call
        // per capability, about 40 µs per command.
        let header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
        let low = s.capabilities as u32;
        let high = (s.capabilities >> 32) as u32;
        let data = [
            CapData { effective: low, permitted: low, inheritable: 0 },
            CapData { effective: high, permitted: high, inheritable: 0 },
        ];
        if libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) != 0 {
            return fail(shared, Stage::Capabilities);
        }
        // Descriptors above 2 that agentsh inherited (a caller's open file) stay out of the
        // command; the ones this child used are done with.
        if libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC) != 0 {
            return fail(shared, Stage::Descriptors);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // As execvp: the first candidate that exists; a permission error wins over "not found".
        let mut errno = libc::ENOENT;
        for p in s.programs {
            libc::execve(p.as_ptr(), s.argv.as_ptr(), s.envp.as_ptr());
            match *libc::__errno_location() {
                libc::ENOENT | libc::ENOTDIR => {}
                e => errno = e,
            }
        }
        *libc::__errno_location() = errno;
        fail(shared, Stage::Exec)
    }
}

/// Attaches the box's seccomp filter (`filter::program`) to this thread, and so to every child
/// it starts from now on: the command's. Called by the process that waits for the command,
/// once it has joined the box's user namespace (where it holds the capability the kernel asks
/// of a filter's loader without `no_new_privs`).
///
/// Here, not in the child: the filter is freed when its last process ends, on a kernel worker,
/// and a filter of the child's own was freed as the command ended, before this process was told
/// (the worker took the processor the command had ended on, about 25 µs of every command).
/// This process keeps it until it ends itself, after the agent has the command's status. What
/// the filter refuses, this process never needs: it waits, records, and asks the person.
pub(crate) fn load_filter(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    let len = u16::try_from(filter.len()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let prog = libc::sock_fprog { len, filter: filter.as_ptr() as *mut libc::sock_filter };
    const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
    // Without it, attaching a filter also turns on the Speculative Store Bypass mitigation
    // for the process, which costs every context switch; the box is no defence against
    // speculation attacks, and does not claim to be.
    const SECCOMP_FILTER_FLAG_SPEC_ALLOW: libc::c_ulong = 1 << 2;
    // SAFETY: `prog` points at `filter`, alive for the call, with its length; the kernel copies
    // the program and touches no other memory of this process.
    let rc =
        unsafe { libc::syscall(libc::SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// `fork(2)`, for the sandbox's builder, which leaves its holder as its child (the first
/// process of the box's PID namespace can only be a child of the process that made it).
pub(crate) fn fork() -> nix::Result<nix::unistd::ForkResult> {
    // The musl build's allocator (dlmalloc, main.rs): fork handlers that hold its lock across
    // `fork`, as glibc's allocator has for itself, should a thread ever allocate as another
    // forks. Registered here, where agentsh forks, not at every start: musl's `pthread_atfork`
    // allocates with the C library's own allocator, whose setting up costs every command.
    #[cfg(target_env = "musl")]
    {
        static HANDLERS: std::sync::Once = std::sync::Once::new();
        // SAFETY: registering the handlers is sound at any time before a fork; `Once` makes it
        // happen once per process.
        HANDLERS.call_once(|| unsafe { dlmalloc::enable_alloc_after_fork() });
    }
    // SAFETY: called only by the builder (`holder::builder`), a process agentsh started for this
    // alone, which has a single thread: the child is a whole copy of it, with no lock held by a
    // thread that does not exist there.
    unsafe { nix::unistd::fork() }
}

/// Brings up the loopback interface (`lo`) of this process's network namespace: a new one has
/// it down, so nothing could reach the proxy listening there.
pub(crate) fn loopback_up() -> std::io::Result<()> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socket};
    let sock = socket(AddressFamily::Inet, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None)?;
    // SAFETY: `ifreq` is a plain C struct for which all zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in req.ifr_name.iter_mut().zip(b"lo") {
        *to = *from as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: SIOCSIFFLAGS reads the `ifreq` passed, which is valid and alive for the call; the
    // socket is open (owned here).
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &req as *const libc::ifreq) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// The descriptors in one message on `sock` (`SCM_RIGHTS`, made close-on-exec), owned by this
/// process from now on; empty when none came (the sender closed its end).
pub(crate) fn receive_fds(sock: BorrowedFd<'_>) -> Vec<std::os::fd::OwnedFd> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    use std::os::fd::FromRawFd;
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let mut got = Vec::new();
    let Ok(msg) = recvmsg::<()>(sock.as_raw_fd(), &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC) else {
        return got;
    };
    let Ok(cmsgs) = msg.cmsgs() else { return got };
    for c in cmsgs {
        if let ControlMessageOwned::ScmRights(fds) = c {
            // SAFETY: the kernel installed each descriptor in this process as the message was
            // received; nothing else refers to it, so it is owned here exactly once.
            got.extend(fds.into_iter().map(|fd| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }));
        }
    }
    got
}

#[cfg(test)]
mod tests {
    #[test]
    fn real_path_resolves_links_as_std_does() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("link/../real", dir.path().join("again")).unwrap();
        for p in ["real", "link", "again", "link/."] {
            let p = dir.path().join(p);
            assert_eq!(super::real_path(&p).unwrap(), std::fs::canonicalize(&p).unwrap(), "{}", p.display());
        }
        let missing = super::real_path(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(
            super::real_path(std::path::Path::new("a\0b")).unwrap_err().kind(),
            std::io::ErrorKind::InvalidInput
        );
    }
}
