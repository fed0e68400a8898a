/* What a command in the sealed box costs at the least (docs/BENCHMARKS.md, "Session 15"): a
 * process started per command, as agentsh is, that does only what the box asks of the kernel
 * and none of agentsh's own work (no judging, no audit record, no record of the box to check).
 * A benchmark, not a test; run it with bench/interleave.c beside agentsh and dash.
 *
 * With a file `record` in $HOME holding the path of a kept box's record (a file in
 * ~/.local/state/agentsh/box/ of a home where `agentsh -c true` just ran in the same directory;
 * a holder lives two minutes after its last command), it does what agentsh does for a command
 * that joins that box: takes the holder's ruleset (pidfd_getfd), joins the box's user and PID
 * namespaces, attaches a seccomp filter as long as agentsh's (63 instructions, every call
 * allowed), starts a child (clone with CLONE_VM | CLONE_VFORK) that joins the mount, IPC, UTS and
 * network namespaces, changes directory, starts a session, sets no_new_privs, the process limit
 * and the parent-death signal, takes the Landlock domain, keeps two capabilities, marks its
 * descriptors close-on-exec and execs /bin/true; then it waits and exits with the status.
 * Without the file it only starts the child and waits: the same process, no box.
 *
 *   cc -O2 -static-pie -o /tmp/sealed_floor bench/sealed_floor.c
 *   H=/tmp/floor-home; mkdir -p $H /tmp/floor-plain /tmp/floor-box /tmp/dash-home
 *   HOME=$H agentsh -c true
 *   ls $H/.local/state/agentsh/box/    # the record: a 16-hex-digit name without a dot
 *   echo $H/.local/state/agentsh/box/<name> > /tmp/floor-box/record
 *   /tmp/interleave 1000 /tmp/sealed_floor:/tmp/floor-plain /tmp/sealed_floor:/tmp/floor-box \
 *       "$(command -v agentsh)":$H /bin/dash:/tmp/dash-home
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[64 * 1024] __attribute__((aligned(16)));
static int pidfd = -1, ruleset = -1;
static char cwd[4096];
static char *child_argv[] = {"/bin/true", NULL};
extern char **environ;

static int child(void *unused) {
    (void)unused;
    if (pidfd >= 0) {
        struct rlimit procs = {4096, 4096};
        struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        unsigned kept = 1u << CAP_DAC_OVERRIDE | 1u << CAP_NET_BIND_SERVICE;
        struct __user_cap_data_struct caps[2] = {{kept, kept, 0}, {0, 0, 0}};
        if (setns(pidfd, CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) || chdir(cwd) || setsid() < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
            setrlimit(RLIMIT_NPROC, &procs) || syscall(SYS_landlock_restrict_self, ruleset, 0) ||
            syscall(SYS_capset, &header, caps) || syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC))
            _exit(126);
    }
    execve("/bin/true", child_argv, environ);
    _exit(127);
}

/* 63 instructions, as agentsh's filter has: the architecture, the call number, then a chain of
 * comparisons that never match, and allow. */
static int attach_filter(void) {
    static struct sock_filter prog[63];
    int n = 0;
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    while (n < 62) prog[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 100000 + n, 0, 0), n++;
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fprog = {n, prog};
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &fprog);
}

static int join_box(const char *record_of) {
    char path[4096];
    FILE *f = fopen(record_of, "r");
    if (!f) return 0;
    int ok = fgets(path, sizeof path, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    path[strcspn(path, "\n")] = 0;
    /* The record's first line: holder PID, its pidfd's inode, the ruleset's descriptor there. */
    f = fopen(path, "r");
    int holder, fd;
    unsigned long long ino;
    if (!f || fscanf(f, "%d %llu %d", &holder, &ino, &fd) != 3) return -1;
    fclose(f);
    pidfd = syscall(SYS_pidfd_open, holder, 0);
    if (pidfd < 0 || !getcwd(cwd, sizeof cwd)) return -1;
    ruleset = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (ruleset < 0 || setns(pidfd, CLONE_NEWUSER | CLONE_NEWPID) || attach_filter()) return -1;
    return 1;
}

int main(void) {
    const char *home = getenv("HOME");
    char record_of[4096];
    snprintf(record_of, sizeof record_of, "%s/record", home ? home : ".");
    if (join_box(record_of) < 0) {
        fprintf(stderr, "sealed_floor: cannot join the box named in %s (is its holder alive?)\n", record_of);
        return 125;
    }
    pid_t pid = clone(child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return 125;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
