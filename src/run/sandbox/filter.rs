//! The box's seccomp filter: system calls Landlock does not mediate and a boxed command has no
//! use for, refused with `EPERM` (issue 25). Everything else is allowed: the view and the
//! Landlock domain decide what it reaches.
//!
//! Answered `ENOSYS`, as a kernel without them would: the new mount API (`open_tree`,
//! `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`, `open_tree_attr`).
//! A clone of a mount without the ones on it (`OPEN_TREE_CLONE`) would show what the box's
//! covers hide, and Landlock has no hook on these calls. The command's child drops the
//! capability they need (`CAP_SYS_ADMIN`, `sys::spawn`); this is the second wall. A tool that
//! meets `ENOSYS` falls back to `mount(2)`, which Landlock refuses and the dropped capability
//! would too.
//!
//! Refused:
//! - another process's memory: `ptrace`, `process_vm_readv`/`writev`;
//! - the kernel keyrings (`keyctl`, `add_key`, `request_key`): the person's session keyring
//!   holds their secrets;
//! - `io_uring` (its operations bypass this filter), `bpf`, `perf_event_open`, `userfaultfd`,
//!   loading kernels and modules;
//! - on any terminal, even the command's own: pushing keys into it (`ioctl` TIOCSTI, TIOCLINUX),
//!   taking its foreground (TIOCSPGRP: a job left behind would read what the person types
//!   next), changing its line discipline (TIOCSETD: `N_NULL` leaves it dead after the
//!   command), making it a controlling terminal (TIOCSCTTY), taking the console's output
//!   (TIOCCONS) or hanging it up (TIOCVHANGUP); nor, as a job left behind could do to the
//!   person's terminal after the command ended (rt4 R7), stopping its output (TCXONC: it looks
//!   dead until ^Q), resizing it (TIOCSWINSZ: SIGWINCH to their shell) or making it exclusive
//!   (TIOCEXCL, TIOCNXCL). Editors, pagers and REPLs need none of these on a terminal they were
//!   given (they read its size, they set its modes). Its modes (TCSETS: echo off), discarding
//!   what was typed (TCFLSH, and TCSETSF does it too; agentsh's own prompt for the proxy's
//!   questions, under this filter, flushes type-ahead) and writes stay open (SECURITY.md). The
//!   box has no terminal
//!   of its own to give a shell job control on (no `/dev/ptmx`), so a shell in it has none: an
//!   interactive one given the person's terminal stops as it starts, waiting for the
//!   foreground (SECURITY.md);
//!   Nor, on any terminal, giving up the controlling one (TIOCNOTTY), and, where the command
//!   keeps the person's terminal, leaving its session (`setsid`): the kernel holds a reader in
//!   the background (EIO, SIGTTIN) only on its controlling terminal, and a job left behind in a
//!   session of its own read what the person typed at their shell after agentsh returned (rt5
//!   B5). A command that does not keep the terminal is in a session of its own already, and its
//!   output terminal is a write-only descriptor of agentsh's (`spawn`);
//! - another process's resource limits (`prlimit64` with a process ID, which needs only the
//!   same user): a boxed command lowered its holder's (PID 1 of the box) open files to one, and
//!   the holder's watch on the git directory removed no link after that (rt5 B7). `setrlimit`,
//!   `getrlimit`, `ulimit` and `prlimit CMD` name the caller (ID 0) and stay allowed;
//! - socket families other than unix, IPv4, IPv6 and netlink (raw packets, Bluetooth, ...);
//! - setting the set-user-ID or set-group-ID bit (`chmod u+s`): a program a box made that runs
//!   with its owner's rights for whoever starts it;
//! - any call through another architecture's numbers (32-bit `int 0x80`, x32), which the rules
//!   above would not recognise.
//!
//! The program is a few dozen classic BPF instructions, assembled here: the kernel checks and
//! compiles it for every command that joins a box, and its cost grows with its length (a
//! generated one of 171 instructions cost about 0.15 ms a command).

/// One instruction: `libc::sock_filter`.
pub type Insn = libc::sock_filter;

const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
const RET_EPERM: u32 = 0x0005_0000 | libc::EPERM as u32; // SECCOMP_RET_ERRNO | EPERM
const RET_ENOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32; // SECCOMP_RET_ERRNO | ENOSYS

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// `ioctl` requests refused on any terminal (the same numbers on x86_64 and aarch64).
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;
const TIOCSPGRP: u32 = 0x5410;
const TIOCSETD: u32 = 0x5423;
const TIOCCONS: u32 = 0x541D;
const TIOCVHANGUP: u32 = 0x5437;
const TIOCSCTTY: u32 = 0x540E;
const TCXONC: u32 = 0x540A;
const TIOCEXCL: u32 = 0x540C;
const TIOCNXCL: u32 = 0x540D;
const TIOCSWINSZ: u32 = 0x5414;
const TIOCNOTTY: u32 = 0x5422;
const TERMINAL_REFUSED: &[u32] = &[
    TIOCNOTTY,
    TIOCSTI,
    TIOCLINUX,
    TIOCSPGRP,
    TIOCSETD,
    TIOCCONS,
    TIOCVHANGUP,
    TIOCSCTTY,
    TCXONC,
    TIOCEXCL,
    TIOCNXCL,
    TIOCSWINSZ,
];

/// `fchmodat2` (Linux 6.6): the same number on every architecture; libc may not name it yet.
const FCHMODAT2: i64 = 452;

/// The new mount API, answered `ENOSYS` whatever the arguments: the same numbers on every
/// architecture (`open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`,
/// `mount_setattr`, `open_tree_attr`); libc may not name the last yet.
const MISSING: &[i64] = &[428, 429, 430, 431, 432, 433, 442, 467];

/// System calls refused whatever their arguments.
const REFUSED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
];

/// The calls refused whatever their arguments: [`REFUSED`], and `setsid` where the command
/// keeps the person's terminal.
fn refused(keep_terminal: bool) -> impl Iterator<Item = i64> {
    REFUSED.iter().copied().chain(keep_terminal.then_some(libc::SYS_setsid))
}

/// Offsets in `struct seccomp_data`: the call's number, its architecture, and the low 32 bits
/// of each argument (little-endian).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
fn arg(n: u32) -> u32 {
    16 + 8 * n
}

/// The chmod family and the argument that holds the mode.
fn chmods() -> Vec<(i64, u32)> {
    let mut out = vec![(libc::SYS_fchmod, 1), (libc::SYS_fchmodat, 2), (FCHMODAT2, 2)];
    #[cfg(target_arch = "x86_64")]
    out.push((libc::SYS_chmod, 1));
    out
}

/// A tiny assembler: jumps name a label, resolved when the program is finished.
#[derive(Default)]
struct Asm {
    code: Vec<(u16, Target, Target, u32)>,
    labels: Vec<Option<usize>>,
}

#[derive(Clone, Copy)]
enum Target {
    Next,
    /// Over this many instructions.
    Skip(u8),
    Label(usize),
}

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

impl Asm {
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn here(&mut self, l: usize) {
        self.labels[l] = Some(self.code.len());
    }
    fn load(&mut self, offset: u32) {
        self.code.push((LD_W_ABS, Target::Next, Target::Next, offset));
    }
    /// Jumps to `yes` when the accumulator equals `k` (or `op` holds), else goes on.
    fn jump(&mut self, op: u16, k: u32, yes: usize) {
        self.code.push((op, Target::Label(yes), Target::Next, k));
    }
    /// Goes on when the accumulator equals `k` (or `op` holds), else jumps to `no`.
    fn unless(&mut self, op: u16, k: u32, no: usize) {
        self.code.push((op, Target::Next, Target::Label(no), k));
    }
    /// Jumps to `yes` when the accumulator equals `k` (or `op` holds), else to `no`.
    fn either(&mut self, op: u16, k: u32, yes: usize, no: usize) {
        self.code.push((op, Target::Label(yes), Target::Label(no), k));
    }
    /// Jumps to `yes` when the accumulator is in `lo..hi`, else goes on: two instructions.
    fn within(&mut self, lo: u32, hi: u32, yes: usize) {
        self.code.push((JGE_K, Target::Next, Target::Skip(1), lo));
        self.code.push((JGE_K, Target::Next, Target::Label(yes), hi));
    }
    fn ret(&mut self, action: u32) {
        self.code.push((RET_K, Target::Next, Target::Next, action));
    }
    fn finish(self) -> Vec<Insn> {
        let labels = self.labels;
        self.code
            .iter()
            .enumerate()
            .map(|(at, (code, jt, jf, k))| {
                let off = |t: &Target| match t {
                    Target::Next => 0,
                    Target::Skip(n) => *n,
                    Target::Label(l) => u8::try_from(labels[*l].expect("every label is placed") - at - 1)
                        .expect("a jump of at most 255 instructions"),
                };
                Insn { code: *code, jt: off(jt), jf: off(jf), k: *k }
            })
            .collect()
    }
}

/// Where a call number leads: refused, missing, or to the check of one of its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Special {
    Refused,
    Missing,
    Check(usize),
}

/// Consecutive call numbers that lead to the same place: `lo..hi`.
#[derive(Clone, Copy)]
struct Run {
    lo: u32,
    hi: u32,
    to: Special,
}

/// `specials` (any order) as runs of consecutive numbers, sorted.
fn runs(specials: &mut [(u32, Special)]) -> Vec<Run> {
    specials.sort_by_key(|(nr, _)| *nr);
    let mut out: Vec<Run> = Vec::new();
    for (nr, to) in specials.iter().copied() {
        match out.last_mut() {
            Some(r) if r.hi == nr && r.to == to => r.hi += 1,
            _ => out.push(Run { lo: nr, hi: nr + 1, to }),
        }
    }
    out
}

/// The most instructions a leaf of the tree of [`program`] tests runs with.
const LEAF: usize = 6;

/// Tests the call number (in the accumulator) against `runs` (sorted): a tree of `>=` splits
/// into halves of about as many instructions, down to leaves of at most [`LEAF`], each run
/// tested (a number for equality, a longer run by its two ends), then allowed.
///
/// The kernel runs the finished filter once for every call number as it attaches it, to learn
/// which calls it allows whatever their arguments (its cache), and that run costs as many steps
/// as the program takes to allow a call: a straight list of the 23 special calls took 28 steps
/// for most of the 463 numbers, about 13 µs of a boxed command more than this tree's 9.
fn tree(a: &mut Asm, runs: &[Run], ends: Ends, checks: &[usize]) {
    // A run of several numbers takes two instructions.
    let weight = |r: &Run| if r.hi - r.lo == 1 { 1 } else { 2 };
    let total: usize = runs.iter().map(weight).sum();
    if total <= LEAF || runs.len() == 1 {
        for r in runs {
            let to = match r.to {
                Special::Refused => ends.eperm,
                Special::Missing => ends.enosys,
                Special::Check(i) => checks[i],
            };
            if r.hi - r.lo == 1 {
                a.jump(JEQ_K, r.lo, to);
            } else {
                a.within(r.lo, r.hi, to);
            }
        }
        a.ret(RET_ALLOW);
        return;
    }
    // Halves of about the same number of instructions.
    let mut half = 0;
    let at = runs
        .iter()
        .position(|r| {
            half += weight(r);
            2 * half > total
        })
        .unwrap_or(runs.len() / 2);
    let (low, high) = runs.split_at(at.clamp(1, runs.len() - 1));
    let upper = a.label();
    a.jump(JGE_K, high[0].lo, upper);
    tree(a, low, ends, checks);
    a.here(upper);
    tree(a, high, ends, checks);
}

/// The labels of the program's refusals.
#[derive(Clone, Copy)]
struct Ends {
    eperm: usize,
    enosys: usize,
}

/// The filter as a classic BPF program for this machine's architecture. `keep_terminal`: the
/// command keeps the person's terminal (agentsh's stdin is one), and may not leave its session.
pub fn program(keep_terminal: bool) -> Vec<Insn> {
    let mut a = Asm::default();
    let (eperm, enosys, allow) = (a.label(), a.label(), a.label());
    a.load(ARCH_AT);
    a.unless(JEQ_K, ARCH, eperm);
    a.load(NR);
    // x32 calls: the x86_64 numbers with bit 30 set.
    #[cfg(target_arch = "x86_64")]
    a.jump(JGE_K, 0x4000_0000, eperm);
    // The argument checks: ioctl's request, socket's family, prlimit64's process, and the mode
    // of the chmod family, one check for each argument a mode is in (chmod and fchmod: the
    // second).
    let (ioctl, socket, prlimit) = (a.label(), a.label(), a.label());
    let mut mode_at: Vec<u32> = chmods().iter().map(|(_, at)| *at).collect();
    mode_at.sort_unstable();
    mode_at.dedup();
    let mode_labels: Vec<usize> = mode_at.iter().map(|_| a.label()).collect();
    let checks: Vec<usize> = [ioctl, socket, prlimit].into_iter().chain(mode_labels.iter().copied()).collect();
    let mut specials: Vec<(u32, Special)> = refused(keep_terminal).map(|nr| (nr as u32, Special::Refused)).collect();
    specials.extend(MISSING.iter().map(|nr| (*nr as u32, Special::Missing)));
    specials.push((libc::SYS_ioctl as u32, Special::Check(0)));
    specials.push((libc::SYS_socket as u32, Special::Check(1)));
    specials.push((libc::SYS_prlimit64 as u32, Special::Check(2)));
    for (nr, at) in chmods() {
        let i = mode_at.iter().position(|m| *m == at).expect("every mode's argument has a check");
        specials.push((nr as u32, Special::Check(3 + i)));
    }
    tree(&mut a, &runs(&mut specials), Ends { eperm, enosys }, &checks);

    a.here(socket);
    a.load(arg(0));
    for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
        a.jump(JEQ_K, family as u32, allow);
    }
    a.either(JEQ_K, libc::AF_NETLINK as u32, allow, eperm);

    // The process is a `pid_t`: the low 32 bits; 0 is the caller.
    a.here(prlimit);
    a.load(arg(0));
    a.either(JEQ_K, 0, allow, eperm);

    for (at, l) in mode_at.iter().zip(&mode_labels) {
        a.here(*l);
        a.load(arg(*at));
        a.either(JSET_K, 0o6000, eperm, allow);
    }

    // Last, as any other request goes on to be allowed (jumps go forward only).
    a.here(ioctl);
    a.load(arg(1));
    // Consecutive requests (TIOCEXCL to TIOCSCTTY are three) take one range's two instructions.
    let mut requests = TERMINAL_REFUSED.to_vec();
    requests.sort_unstable();
    for run in requests.chunk_by(|a, b| a + 1 == *b) {
        match run {
            [one] => a.jump(JEQ_K, *one, eperm),
            [first, .., last] if run.len() >= 3 => a.within(*first, last + 1, eperm),
            _ => run.iter().for_each(|r| a.jump(JEQ_K, *r, eperm)),
        }
    }
    a.here(allow);
    a.ret(RET_ALLOW);
    a.here(eperm);
    a.ret(RET_EPERM);
    a.here(enosys);
    a.ret(RET_ENOSYS);
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on one call, as the kernel would: the action it returns.
    fn run(prog: &[Insn], arch: u32, nr: i64, args: [u64; 6]) -> u32 {
        run_counting(prog, arch, nr, args).0
    }

    /// [`run`], and how many instructions it took.
    fn run_counting(prog: &[Insn], arch: u32, nr: i64, args: [u64; 6]) -> (u32, usize) {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut acc, mut steps) = (0usize, 0u32, 0);
        loop {
            let i = prog[pc];
            steps += 1;
            match i.code {
                LD_W_ABS => acc = u32::from_le_bytes(data[i.k as usize..i.k as usize + 4].try_into().unwrap()),
                RET_K => return (i.k, steps),
                JEQ_K | JGE_K | JSET_K => {
                    let hit = match i.code {
                        JEQ_K => acc == i.k,
                        JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if hit { i.jt } else { i.jf });
                }
                other => panic!("unexpected instruction {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_refuses_what_it_names_and_allows_the_rest() {
        let p = program(false);
        assert!(p.len() < 72, "{} instructions", p.len());
        let call = |nr: i64, args: [u64; 6]| run(&p, ARCH, nr, args);
        for nr in REFUSED {
            assert_eq!(call(*nr, [0; 6]), RET_EPERM, "{nr}");
        }
        assert_eq!(call(libc::SYS_read, [0; 6]), RET_ALLOW);
        assert_eq!(call(libc::SYS_ioctl, [0, TIOCSTI as u64, 0, 0, 0, 0]), RET_EPERM);
        // High bits set by the caller change nothing: the kernel reads an unsigned int.
        assert_eq!(call(libc::SYS_ioctl, [0, 0x1_0000_0000 | TIOCSTI as u64, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_ioctl, [0, 0x5401, 0, 0, 0, 0]), RET_ALLOW, "TCGETS");
        // A job left behind takes no terminal's foreground, line discipline, console or hang-up.
        for request in [TIOCSPGRP, TIOCSETD, TIOCSCTTY, TIOCCONS, TIOCVHANGUP, TIOCLINUX] {
            assert_eq!(call(libc::SYS_ioctl, [0, request as u64, 0, 0, 0, 0]), RET_EPERM, "{request:#x}");
        }
        // Nor stops its output, resizes it or makes it exclusive (rt4 R7).
        for request in [TCXONC, TIOCSWINSZ, TIOCEXCL, TIOCNXCL] {
            assert_eq!(call(libc::SYS_ioctl, [0, request as u64, 0, 0, 0, 0]), RET_EPERM, "{request:#x}");
        }
        // What editors, pagers and REPLs do with their terminal stays allowed: TCSETS, TCSETSW,
        // TCSETSF, TIOCGWINSZ, TIOCGPGRP, FIONREAD, TIOCOUTQ, TCSBRK (tcdrain); and TCFLSH, with
        // which agentsh's own prompt (under this filter) flushes type-ahead.
        for request in [0x5402, 0x5403, 0x5404, 0x5413, 0x540F, 0x541B, 0x5411, 0x5409, 0x540B] {
            assert_eq!(call(libc::SYS_ioctl, [0, request, 0, 0, 0, 0]), RET_ALLOW, "{request:#x}");
        }
        // The new mount API is missing, as on a kernel without it: tools fall back to mount(2).
        for nr in MISSING {
            assert_eq!(call(*nr, [0; 6]), RET_ENOSYS, "{nr}");
        }
        assert_eq!(call(libc::SYS_open_tree, [0; 6]), RET_ENOSYS);
        assert_eq!(call(libc::SYS_mount_setattr, [0; 6]), RET_ENOSYS);
        assert_eq!(call(libc::SYS_socket, [libc::AF_INET as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [libc::AF_UNIX as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [libc::AF_INET6 as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [libc::AF_NETLINK as u64, 3, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_socket, [libc::AF_PACKET as u64, 3, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_fchmodat, [0, 0, 0o4755, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_fchmodat, [0, 0, 0o2755, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_fchmodat, [0, 0, 0o755, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_fchmod, [0, 0o4755, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_fchmod, [0, 0o755, 0, 0, 0, 0]), RET_ALLOW);
        // Each call of the family reads its own mode argument (two checks are shared).
        for (nr, at) in chmods() {
            let mut args = [0o4755; 6];
            assert_eq!(call(nr, args), RET_EPERM, "{nr}");
            args[at as usize] = 0o755;
            assert_eq!(call(nr, args), RET_ALLOW, "{nr}");
        }
        // Limits: the caller's own (ID 0: setrlimit, getrlimit, ulimit, `prlimit CMD`), never
        // another process's (rt5 B7: the holder, PID 1); the kernel reads a `pid_t`.
        assert_eq!(call(libc::SYS_prlimit64, [0, libc::RLIMIT_NOFILE as u64, 1, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(libc::SYS_prlimit64, [0xffff_ffff_0000_0000, 7, 1, 0, 0, 0]), RET_ALLOW);
        for pid in [1, 2, 0x1_0000_0001, u64::from(u32::MAX)] {
            assert_eq!(call(libc::SYS_prlimit64, [pid, 7, 1, 0, 0, 0]), RET_EPERM, "{pid}");
        }
        assert_eq!(call(libc::SYS_setrlimit, [7, 1, 0, 0, 0, 0]), RET_ALLOW);
        // No command gives up its controlling terminal; one that keeps the person's does not
        // leave its session either (rt5 B5); one that does not keep it may.
        assert_eq!(call(libc::SYS_ioctl, [0, TIOCNOTTY as u64, 0, 0, 0, 0]), RET_EPERM);
        assert_eq!(call(libc::SYS_setsid, [0; 6]), RET_ALLOW);
        assert_eq!(run(&program(true), ARCH, libc::SYS_setsid, [0; 6]), RET_EPERM);
        assert_eq!(run(&program(true), ARCH, libc::SYS_setpgid, [0; 6]), RET_ALLOW);
        assert_eq!(run(&p, 0x4000_0003, libc::SYS_read, [0; 6]), RET_EPERM, "another architecture");
        #[cfg(target_arch = "x86_64")]
        assert_eq!(call(0x4000_0000 | libc::SYS_read, [0; 6]), RET_EPERM, "x32");
    }

    /// Every call number gets the filter's answer (a tree that lost a branch would allow a refused
    /// call or refuse an ordinary one), and an ordinary call is allowed in a few steps: the
    /// kernel runs the filter for each of the 463 numbers as it attaches it, on every command.
    #[test]
    fn every_call_number_is_answered_in_a_few_steps() {
        for keep_terminal in [false, true] {
            let p = program(keep_terminal);
            let checked: Vec<i64> = [libc::SYS_ioctl, libc::SYS_socket, libc::SYS_prlimit64]
                .into_iter()
                .chain(chmods().iter().map(|(nr, _)| *nr))
                .collect();
            let refused: Vec<i64> = refused(keep_terminal).collect();
            let mut most = 0;
            for nr in 0..600_i64 {
                // Arguments each checked call allows (a socket of IPv4, no set-user-ID bit, the
                // caller's own limits).
                let allowed = if nr == libc::SYS_prlimit64 { 0 } else { libc::AF_INET as u64 };
                let (action, steps) = run_counting(&p, ARCH, nr, [allowed, 0, 0, 0, 0, 0]);
                let expected = if refused.contains(&nr) {
                    RET_EPERM
                } else if MISSING.contains(&nr) {
                    RET_ENOSYS
                } else {
                    RET_ALLOW
                };
                assert_eq!(action, expected, "call {nr}, keep_terminal {keep_terminal}");
                if !refused.contains(&nr) && !MISSING.contains(&nr) && !checked.contains(&nr) {
                    most = most.max(steps);
                }
            }
            // A straight list of the special calls took 28.
            assert!(most <= 13, "an ordinary call takes {most} steps (keep_terminal {keep_terminal})");
            assert!(p.len() < 72, "{} instructions", p.len());
        }
    }
}
