/* wbrun.h: how every launcher is started and what it reads, in one place for
 * both harnesses (wbsim.c, the simulator's; wbio.c, the GPU's). The workbook's
 * side of the same contract is workbook/child/protocol.py and kernelrun.py.
 *
 * A launcher is run as:  launcher RUN_DIR MODE REPEATS SECONDS [CASES]
 *   RUN_DIR  the run folder: inputs.bin is read from it, every output file is
 *            written into it
 *   MODE     cpu (an op's CPU kernel), sim (the simulator) or gpu
 *   REPEATS  how many times each case runs (a result that changes between
 *            repeats is a race the workbook reports)
 *   SECONDS  the time limit (each harness enforces it its own way)
 *   CASES    comma-separated case numbers to run (default: all)
 *
 * What it hands back (its outputs, the simulator's maps and counts, result.json,
 * the phase it is in) goes where WORKBOOK_FDS says: descriptors the workbook
 * opened before starting it (outputs:N,writers:N,counters:N,result:N,phase:N),
 * files with no name that nothing in the run folder can replace
 * (workbook/child/channel.py). Each one not named there (a launcher run by hand) is a
 * file of that name in RUN_DIR (outputs.bin, writers.bin, counters.bin,
 * result.json, phase).
 *
 * Everything here is static: each harness's object has its own copy, and
 * build.py keys both objects on this file too.
 */
#ifndef WBRUN_H
#define WBRUN_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a launcher hands back: its key in WORKBOOK_FDS, and its file name in RUN_DIR without it. */
enum { WBRUN_OUTPUTS, WBRUN_WRITERS, WBRUN_COUNTERS, WBRUN_RESULT, WBRUN_PHASE, WBRUN_FILES };
static const char *const wbrun_keys[WBRUN_FILES] = {"outputs", "writers", "counters", "result", "phase"};
static const char *const wbrun_names[WBRUN_FILES] = {"outputs.bin", "writers.bin", "counters.bin", "result.json",
                                                     "phase"};

typedef struct {
    char dir[4096];
    int fds[WBRUN_FILES]; /* from WORKBOOK_FDS; -1: the file of that name in dir */
    int cpu_mode;       /* MODE is cpu */
    long long repeats;
    double seconds;
    int *selected;      /* CASES, in the order given */
    int nselected;
    char *inputs;       /* inputs.bin, whole (one byte more, zeroed) */
    size_t inputs_bytes;
    char why[4300];     /* what went wrong, when wbrun_start says no */
} wbrun_t;

static int wbrun_argc;
static char **wbrun_argv;

/* glibc hands a constructor the program's arguments: Mojo's main need not. */
__attribute__((constructor)) static void wbrun_keep_args(int argc, char **argv) {
    wbrun_argc = argc;
    wbrun_argv = argv;
}

/* The descriptors WORKBOOK_FDS names, taken: each must be open; none is inherited by
 * a program the launcher starts (close-on-exec), and the variable is gone from the
 * environment. NULL when they are usable, else why not. */
static const char *wbrun_take_fds(wbrun_t *r) {
    for (int i = 0; i < WBRUN_FILES; i++) r->fds[i] = -1;
    const char *spec = getenv("WORKBOOK_FDS");
    if (!spec) return NULL;
    for (const char *p = spec; *p;) {
        const char *colon = strchr(p, ':');
        if (!colon) return "WORKBOOK_FDS is not key:fd,...";
        char *end;
        long fd = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || fd < 3 || fd > 1 << 20 || fcntl((int)fd, F_GETFD) == -1)
            return "WORKBOOK_FDS names a descriptor that is not open";
        for (int i = 0; i < WBRUN_FILES; i++)
            if (strlen(wbrun_keys[i]) == (size_t)(colon - p) && strncmp(p, wbrun_keys[i], (size_t)(colon - p)) == 0)
                r->fds[i] = (int)fd;
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return "WORKBOOK_FDS is not key:fd,...";
    }
    unsetenv("WORKBOOK_FDS");
    return NULL;
}

/* Read the command line and inputs.bin; die with the workbook (PDEATHSIG), so that
 * no launcher outlives it. NULL when the run can go on, else why not. */
static const char *wbrun_start(wbrun_t *r) {
    const char *bad = wbrun_take_fds(r);
    if (bad) return bad;
    if (wbrun_argc < 5) return "usage: launcher RUN_DIR MODE REPEATS SECONDS [CASES]";
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    snprintf(r->dir, sizeof r->dir, "%s", wbrun_argv[1]);
    r->cpu_mode = strcmp(wbrun_argv[2], "cpu") == 0;
    r->repeats = atoll(wbrun_argv[3]);
    r->seconds = atof(wbrun_argv[4]);
    if (wbrun_argc > 5) {
        r->selected = calloc(strlen(wbrun_argv[5]) + 1, sizeof(int));
        if (!r->selected) return "out of memory";
        for (char *p = wbrun_argv[5]; *p;) {
            r->selected[r->nselected++] = (int)strtol(p, &p, 10);
            if (*p == ',') p++;
            else if (*p) break;
        }
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/inputs.bin", r->dir);
    snprintf(r->why, sizeof r->why, "could not read %s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return r->why;
    r->inputs_bytes = (size_t)st.st_size;
    r->inputs = calloc(r->inputs_bytes + 1, 1);
    if (!r->inputs) return "out of memory";
    for (size_t got = 0; got < r->inputs_bytes;) {
        ssize_t k = read(fd, r->inputs + got, r->inputs_bytes - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            close(fd);
            return r->why;
        }
        got += (size_t)k;
    }
    close(fd);
    return NULL;
}

/* Whether case `index` was named on the command line. */
static int wbrun_asked(const wbrun_t *r, long long index) {
    for (int i = 0; i < r->nselected; i++)
        if (r->selected[i] == index) return 1;
    return 0;
}

/* Whether case `index` runs: every case when none was named. */
static int wbrun_wants(const wbrun_t *r, long long index) { return r->nselected == 0 || wbrun_asked(r, index); }

/* A file of the run folder, made empty; -1 if it could not be. */
static int wbrun_create(const wbrun_t *r, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* All of `bytes` written, or 0. Only write(2): safe in a signal handler too. */
static int wbrun_put(int fd, const void *data, size_t bytes) {
    const char *p = data;
    while (bytes > 0) {
        ssize_t k = write(fd, p, bytes);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        p += k;
        bytes -= (size_t)k;
    }
    return 1;
}

/* Where one of the things it hands back goes, for writing from the start on: its
 * descriptor, or its file in the run folder, made empty; -1 if neither. */
static int wbrun_open(const wbrun_t *r, int which) {
    return r->fds[which] >= 0 ? r->fds[which] : wbrun_create(r, wbrun_names[which]);
}

/* Replace what one of them holds with `bytes` (the phase, result.json), however often:
 * its descriptor truncated and written from the start, or its file written anew. 1 when
 * all of it was written. Only system calls: safe in a signal handler too. */
static int wbrun_replace(const wbrun_t *r, int which, const void *data, size_t bytes) {
    int fd = r->fds[which];
    if (fd < 0) {
        fd = wbrun_create(r, wbrun_names[which]);
        if (fd < 0) return 0;
        int ok = wbrun_put(fd, data, bytes);
        return close(fd) == 0 && ok;
    }
    if (ftruncate(fd, 0) != 0) return 0;
    const char *p = data;
    for (off_t at = 0; bytes > 0;) {
        ssize_t k = pwrite(fd, p, bytes, at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        p += k;
        at += k;
        bytes -= (size_t)k;
    }
    return 1;
}

#endif
