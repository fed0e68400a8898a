/* A/B timing of agentsh builds and configurations (docs/BENCHMARKS.md, "The box's cost"): runs
 * `BINARY -c /bin/true` for each CASE in turn, RUNS times each (after 20 rounds of warm-up), so
 * that a burst of load lands on every case alike, and prints each case's median wall time. A
 * benchmark for comparing two builds of a change, not a test; bench/compare.sh gives the
 * figures the targets are judged on.
 *
 *   cc -O2 -o /tmp/interleave bench/interleave.c
 *   /tmp/interleave RUNS BINARY:HOME [BINARY:HOME ...]
 *
 * Each case runs with HOME=HOME, XDG_CONFIG_HOME=HOME/.config, PATH=/usr/bin:/bin and NO_COLOR=1,
 * its standard streams on /dev/null, in the current directory. With INTERLEAVE_INHERIT=1 in its
 * environment it passes the rest of its own environment on too, as bench/compare.sh and an agent
 * do (a boxed command's cost grows with the variables agentsh scrubs). The box's own cost is the
 * difference between a home whose .config/agentsh/config.json says
 * {"sandbox": {"enabled": true}} and one that says false:
 *
 *   /tmp/interleave 2000 ./old:/tmp/on ./old:/tmp/off ./new:/tmp/on ./new:/tmp/off
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s RUNS BINARY:HOME [BINARY:HOME ...]\n", argv[0]);
        return 2;
    }
    int runs = atoi(argv[1]), cases = argc - 2;
    double *times = calloc((size_t)runs * cases, sizeof(double));
    char **binary = calloc(cases, sizeof(char *));
    char ***env = calloc(cases, sizeof(char **));
    if (!times || !binary || !env) return 1;
    for (int c = 0; c < cases; c++) {
        char *colon = strchr(argv[c + 2], ':');
        if (!colon) {
            fprintf(stderr, "interleave: %s is not BINARY:HOME\n", argv[c + 2]);
            return 2;
        }
        *colon = 0;
        binary[c] = argv[c + 2];
        char *home = malloc(strlen(colon + 1) + 8), *config = malloc(strlen(colon + 1) + 32);
        extern char **environ;
        size_t inherited = 0;
        const char *inherit = getenv("INTERLEAVE_INHERIT");
        if (inherit && !strcmp(inherit, "1"))
            while (environ[inherited]) inherited++;
        env[c] = calloc(5 + inherited, sizeof(char *));
        if (!home || !config || !env[c]) return 1;
        sprintf(home, "HOME=%s", colon + 1);
        sprintf(config, "XDG_CONFIG_HOME=%s/.config", colon + 1);
        env[c][0] = home;
        env[c][1] = config;
        env[c][2] = "PATH=/usr/bin:/bin";
        env[c][3] = "NO_COLOR=1";
        size_t n = 4;
        for (size_t i = 0; i < inherited; i++) {
            const char *own[] = {"HOME=", "XDG_CONFIG_HOME=", "PATH=", "NO_COLOR=", "INTERLEAVE_INHERIT="};
            int mine = 0;
            for (size_t k = 0; k < sizeof own / sizeof *own; k++)
                if (!strncmp(environ[i], own[k], strlen(own[k]))) mine = 1;
            if (!mine) env[c][n++] = environ[i];
        }
    }
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
    for (int i = -20; i < runs; i++) {
        for (int c = 0; c < cases; c++) {
            char *args[] = {binary[c], "-c", "/bin/true", NULL};
            pid_t pid;
            double start = now_us();
            if (posix_spawn(&pid, binary[c], &quiet, NULL, args, env[c])) {
                perror(binary[c]);
                return 1;
            }
            int status;
            waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status)) {
                fprintf(stderr, "interleave: %s with %s failed\n", binary[c], env[c][0]);
                return 1;
            }
            if (i >= 0) times[(size_t)c * runs + i] = now_us() - start;
        }
    }
    for (int c = 0; c < cases; c++) {
        double *t = times + (size_t)c * runs;
        qsort(t, runs, sizeof(double), by_value);
        printf("%s %s: median %.1f us, p25 %.1f us\n", binary[c], env[c][0], t[runs / 2], t[runs / 4]);
    }
    return 0;
}
