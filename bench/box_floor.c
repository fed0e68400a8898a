/* The kernel's share of the box's cost (docs/BENCHMARKS.md, "The box's cost"): what a process
 * that forks, sets up a box as agentsh does, and execs /bin/true pays in system calls alone,
 * without any of agentsh's own work. A benchmark, not a test.
 *
 *   cc -O2 -o /tmp/box_floor bench/box_floor.c && /tmp/box_floor [runs]
 *
 * Each row is the best of 5 rounds of `runs` fork + box + exec + wait cycles (default 500):
 *   plain          fork, exec /bin/true
 *   landlock N     + a Landlock domain of N rules (create, add, no_new_privs, restrict)
 *   setns          + joining a kept user and mount namespace (pidfd_open, setns), as
 *                    src/run/kept.rs does
 *   setns + 6      both, as a command that joins kept namespaces
 *   fresh          + unshare(CLONE_NEWUSER | CLONE_NEWNS), uid and gid maps, two bind mounts
 *                    made read-only, and 6 rules: the box without kept namespaces
 *   agentsh's box  with a second argument, the record of namespaces agentsh kept (a file in
 *                    ~/.local/state/agentsh/box/): joins them and takes their ruleset as a
 *                    joining command does, so the kernel's share of agentsh's real box (its
 *                    mounts, its rules) is measured. Run `agentsh -c true` in the same
 *                    directory and environment first: a holder lives two minutes.
 *
 *   /tmp/box_floor 500 ~/.local/state/agentsh/box/<name>
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void put(const char *file, const char *text) {
    int fd = open(file, O_WRONLY);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) {
        perror(file);
        _exit(1);
    }
    close(fd);
}

/* The IDs from before unshare: inside the new namespace they read as the overflow ID. */
static uid_t uid;
static gid_t gid;

static void maps(void) {
    char m[64];
    snprintf(m, sizeof m, "%d %d 1", (int)uid, (int)uid);
    char g[64];
    snprintf(g, sizeof g, "%d %d 1", (int)gid, (int)gid);
    put("/proc/self/setgroups", "deny");
    put("/proc/self/uid_map", m);
    put("/proc/self/gid_map", g);
}

/* A ruleset of `rules` rules, not yet enforced. */
static int ruleset(int rules) {
    struct landlock_ruleset_attr attr = {.handled_access_fs = (1ULL << 13) - 1};
    int rs = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0) _exit(1);
    const char *paths[] = {"/", "/tmp", "/var/tmp", "/dev/shm", "/dev", "/usr"};
    for (int i = 0; i < rules; i++) {
        int fd = open(paths[i % 6], O_PATH | O_CLOEXEC);
        struct landlock_path_beneath_attr pb = {
            .allowed_access = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
            .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) _exit(1);
        close(fd);
    }
    return rs;
}

static void enforce(int rs) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, rs, 0)) _exit(1);
    close(rs);
}

static void landlock(int rules) { enforce(ruleset(rules)); }

static char dir[] = "/tmp/box_floor.XXXXXX";
static pid_t holder;
/* The holder's finished ruleset: its descriptor number there. */
static int holder_rs;

enum { PLAIN, LL1, LL6, SETNS, SETNS6, KEPT, FRESH, AGENTSH };

/* agentsh's holder and its ruleset's number there, from its record; and where to run. */
static pid_t agentsh_holder;
static int agentsh_rs;
static char cwd[4096];

static void child(int v) {
    if (v == SETNS || v == SETNS6 || v == KEPT) {
        int pidfd = syscall(SYS_pidfd_open, holder, 0);
        int rs = v == KEPT ? syscall(SYS_pidfd_getfd, pidfd, holder_rs, 0) : 0;
        if (pidfd < 0 || rs < 0 || setns(pidfd, CLONE_NEWUSER | CLONE_NEWNS)) _exit(1);
        close(pidfd);
        if (v == KEPT) enforce(rs);
    }
    if (v == AGENTSH) {
        int pidfd = syscall(SYS_pidfd_open, agentsh_holder, 0);
        int rs = syscall(SYS_pidfd_getfd, pidfd, agentsh_rs, 0);
        if (pidfd < 0 || rs < 0 || setns(pidfd, CLONE_NEWUSER | CLONE_NEWNS) || chdir(cwd)) _exit(1);
        enforce(rs);
    }
    if (v == FRESH) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) _exit(1);
        maps();
        if (mount(dir, dir, NULL, MS_BIND, NULL) || mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
            _exit(1);
    }
    if (v == LL1) landlock(1);
    if (v == LL6 || v == SETNS6 || v == FRESH) landlock(6);
    execl("/bin/true", "true", (char *)NULL);
    _exit(1);
}

static double best(int v, int runs) {
    double b = 1e18;
    for (int round = 0; round < 5; round++) {
        double t0 = now_us();
        for (int i = 0; i < runs; i++) {
            pid_t p = fork();
            if (p == 0) child(v);
            int st;
            waitpid(p, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st)) {
                fprintf(stderr, "box_floor: case %d failed (Landlock or namespaces unavailable?)\n", v);
                exit(1);
            }
        }
        double t = (now_us() - t0) / runs;
        if (t < b) b = t;
    }
    return b;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 500;
    int last = FRESH;
    if (argc > 2) {
        /* The record's first line: holder pid, its pidfd's inode, the ruleset's fd there, rules. */
        FILE *f = fopen(argv[2], "r");
        unsigned long long ino;
        if (!f || fscanf(f, "%d %llu %d", &agentsh_holder, &ino, &agentsh_rs) != 3 || !ino) {
            fprintf(stderr, "box_floor: %s is not a record of kept namespaces with a ruleset\n", argv[2]);
            return 1;
        }
        fclose(f);
        if (!getcwd(cwd, sizeof cwd)) return 1;
        last = AGENTSH;
    }
    uid = geteuid();
    gid = getegid();
    if (!mkdtemp(dir)) return 1;
    int ready[2];
    if (pipe(ready)) return 1;
    holder = fork();
    if (holder == 0) {
        close(ready[0]);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
            perror("unshare");
            _exit(1);
        }
        maps();
        if (mount(dir, dir, NULL, MS_BIND, NULL) || mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL)) {
            perror("mount");
            _exit(1);
        }
        int rs = ruleset(6);
        if (write(ready[1], &rs, sizeof rs) != sizeof rs) _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    if (read(ready[0], &holder_rs, sizeof holder_rs) != sizeof holder_rs) {
        fprintf(stderr, "box_floor: cannot make a user and mount namespace here\n");
        return 1;
    }
    const char *names[] = {"plain", "landlock 1", "landlock 6", "setns", "setns + 6", "setns + kept", "fresh",
                           "agentsh's box"};
    double plain = best(PLAIN, runs);
    printf("%-14s %8.1f us\n", names[PLAIN], plain);
    for (int v = LL1; v <= last; v++) {
        double t = best(v, runs);
        printf("%-14s %8.1f us  (+%.1f)\n", names[v], t, t - plain);
    }
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    rmdir(dir);
    return 0;
}
