/* wbio.c: the GPU launcher's harness, the part that needs no GPU. It reads the
 * cases' inputs from the file the workbook wrote, says which case is running,
 * writes every output behind a header that names it (case, repeat, output,
 * bytes) and ends with result.json. wbio.mojo keeps only what needs Mojo's
 * types (device buffers, tensors) and calls these.
 *
 * Why C: the same harness written in Mojo was compiled again with every edit
 * of a learner's kernel, about a quarter of the GPU launcher's compile; this is
 * compiled once per machine (build.py) and linked in.
 *
 * A launcher is run as:  launcher RUN_DIR MODE REPEATS SECONDS [CASES]
 *   MODE     gpu
 *   SECONDS  the time limit: the process ends itself (SIGALRM) past it
 *   CASES    comma-separated case numbers to run (default: all)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef long long i64;

static int saved_argc;
static char **saved_argv;

/* glibc hands a constructor the program's arguments. */
__attribute__((constructor)) static void keep_args(int argc, char **argv) {
    saved_argc = argc;
    saved_argv = argv;
}

static struct {
    char dir[4096];
    int cpu_mode;
    i64 repeats;
    char *inputs;
    size_t inputs_bytes;
    int out_fd;
    int *selected;
    int nselected;
    struct timespec started;
    char *extra; /* more fields for result.json: JSON text without braces */
    size_t extra_len;
} H = {.out_fd = -1};

static void say(const char *what, const char *path) {
    fprintf(stderr, "launcher: %s%s%s\n", what, path ? " " : "", path ? path : "");
}

static int create(const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", H.dir, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static int put(int fd, const void *data, size_t bytes) {
    const char *p = data;
    while (bytes) {
        ssize_t k = write(fd, p, bytes);
        if (k <= 0) return 0;
        p += k;
        bytes -= (size_t)k;
    }
    return 1;
}

static void *grow(void *old, size_t bytes) {
    void *p = realloc(old, bytes ? bytes : 1);
    if (!p) {
        say("out of memory", NULL);
        _exit(3);
    }
    return p;
}

/* 1 when the run can go on; 0 after saying on stderr why not. */
i64 wbio_begin(void) {
    if (saved_argc < 5) {
        say("usage: launcher RUN_DIR MODE REPEATS SECONDS [CASES]", NULL);
        return 0;
    }
    /* Die with the workbook, and end itself past the time limit, even if nobody
     * is left to stop it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm((unsigned)atoi(saved_argv[4]));
    snprintf(H.dir, sizeof H.dir, "%s", saved_argv[1]);
    H.cpu_mode = strcmp(saved_argv[2], "cpu") == 0;
    H.repeats = atoll(saved_argv[3]);
    if (saved_argc > 5) {
        H.selected = grow(NULL, (strlen(saved_argv[5]) + 1) * sizeof(int));
        for (char *p = saved_argv[5]; *p;) {
            H.selected[H.nselected++] = (int)strtol(p, &p, 10);
            if (*p == ',') p++;
            else if (*p) break;
        }
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/inputs.bin", H.dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        say("could not read", path);
        return 0;
    }
    H.inputs_bytes = (size_t)st.st_size;
    H.inputs = grow(NULL, H.inputs_bytes);
    for (size_t got = 0; got < H.inputs_bytes;) {
        ssize_t k = read(fd, H.inputs + got, H.inputs_bytes - got);
        if (k <= 0) {
            say("could not read", path);
            return 0;
        }
        got += (size_t)k;
    }
    close(fd);
    H.out_fd = create("outputs.bin");
    if (H.out_fd < 0) {
        say("could not write outputs.bin in", H.dir);
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &H.started);
    return 1;
}

i64 wbio_cpu_mode(void) { return H.cpu_mode; }
i64 wbio_repeats(void) { return H.repeats; }

/* Whether case `index` was named on the command line (timed cases run only then). */
i64 wbio_asked(i64 index) {
    for (int i = 0; i < H.nselected; i++)
        if (H.selected[i] == index) return 1;
    return 0;
}

/* Whether case `index` runs: every case when none was named. */
i64 wbio_wants(i64 index) { return H.nselected == 0 || wbio_asked(index); }

/* Tell the workbook which case is running (its progress display reads it). */
void wbio_phase(i64 index, i64 total) {
    char text[64];
    int n = snprintf(text, sizeof text, "running %lld %lld", index + 1, total);
    int fd = create("phase");
    if (fd >= 0) {
        put(fd, text, (size_t)n);
        close(fd);
    }
}

/* The address of an input at its byte offset in inputs.bin; 0 past its end. */
i64 wbio_input(i64 offset, i64 bytes) {
    if (offset < 0 || bytes < 0 || (size_t)(offset + bytes) > H.inputs_bytes) {
        say("inputs.bin is shorter than the plan says", NULL);
        return 0;
    }
    return (i64)(uintptr_t)(H.inputs + offset);
}

/* One output of one repeat of one case, behind its header; 0 when it could not be written. */
i64 wbio_save(i64 address, i64 bytes, i64 case_index, i64 rep, i64 k) {
    int32_t header[4] = {(int32_t)case_index, (int32_t)rep, (int32_t)k, (int32_t)bytes};
    return put(H.out_fd, header, sizeof header) && put(H.out_fd, (const void *)(uintptr_t)address, (size_t)bytes);
}

/* Each timed launch's device time in ns, into result.json as "times_INDEX". */
void wbio_record_times(i64 index, const i64 *times, i64 count) {
    size_t room = H.extra_len + 64 + (size_t)count * 24;
    H.extra = grow(H.extra, room);
    char *p = H.extra + H.extra_len;
    p += sprintf(p, "%s\"times_%lld\": [", H.extra_len ? ", " : "", index);
    for (i64 i = 0; i < count; i++) p += sprintf(p, "%s%lld", i ? ", " : "", times[i]);
    p += sprintf(p, "]");
    H.extra_len = (size_t)(p - H.extra);
}

/* The end of a run that went to the end: result.json says so, with its seconds. */
i64 wbio_finish(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double seconds = (double)(now.tv_sec - H.started.tv_sec) + (now.tv_nsec - H.started.tv_nsec) / 1e9;
    if (H.out_fd >= 0 && close(H.out_fd) != 0) return 0;
    H.out_fd = -1;
    int fd = create("result.json");
    if (fd < 0) return 0;
    char head[128];
    int n = snprintf(head, sizeof head, "{\"status\": \"ok\", \"message\": \"\", \"seconds\": %.6f%s", seconds,
                     H.extra_len ? ", " : "");
    int ok = put(fd, head, (size_t)n) && put(fd, H.extra ? H.extra : "", H.extra_len) && put(fd, "}", 1);
    return close(fd) == 0 && ok;
}
