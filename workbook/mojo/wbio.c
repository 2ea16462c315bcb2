/* wbio.c: the GPU launcher's harness, the part that needs no GPU. It reads the
 * cases' inputs from the file the workbook wrote, says which case is running,
 * writes every output behind a header that names it (case, repeat, output,
 * bytes) and ends with result.json, each where wbrun.h says (the workbook's
 * descriptors). wbio.mojo keeps only what needs Mojo's types (device buffers,
 * tensors) and calls these.
 *
 * Why C: the same harness written in Mojo was compiled again with every edit
 * of a learner's kernel, about a quarter of the GPU launcher's compile; this is
 * compiled once per machine (build.py) and linked in.
 *
 * How a launcher is started, and the inputs file, are wbrun.h's (shared with
 * the simulator's harness). MODE is gpu here; past SECONDS the process ends
 * itself (SIGALRM), even with nobody left to stop it.
 */
#include "wbrun.h"

#include <stdint.h>
#include <time.h>

typedef long long i64;

static struct {
    wbrun_t run;
    int out_fd;
    struct timespec started;
    char *extra; /* more fields for result.json: JSON text without braces */
    size_t extra_len;
} H = {.out_fd = -1};

static void say(const char *what, const char *path) {
    fprintf(stderr, "launcher: %s%s%s\n", what, path ? " " : "", path ? path : "");
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
    const char *why = wbrun_start(&H.run);
    if (why) {
        say(why, NULL);
        return 0;
    }
    alarm((unsigned)H.run.seconds);
    H.out_fd = wbrun_open(&H.run, WBRUN_OUTPUTS);
    if (H.out_fd < 0) {
        say("could not write outputs.bin in", H.run.dir);
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &H.started);
    return 1;
}

i64 wbio_cpu_mode(void) { return H.run.cpu_mode; }
i64 wbio_repeats(void) { return H.run.repeats; }

/* Whether case `index` was named on the command line (timed cases run only then). */
i64 wbio_asked(i64 index) { return wbrun_asked(&H.run, index); }

/* Whether case `index` runs: every case when none was named. */
i64 wbio_wants(i64 index) { return wbrun_wants(&H.run, index); }

/* Tell the workbook which case is running (its progress display reads it). */
void wbio_phase(i64 index, i64 total) {
    char text[64];
    int n = snprintf(text, sizeof text, "running %lld %lld", index + 1, total);
    wbrun_replace(&H.run, WBRUN_PHASE, text, (size_t)n);
}

/* The address of an input at its byte offset in inputs.bin; 0 past its end. */
i64 wbio_input(i64 offset, i64 bytes) {
    if (offset < 0 || bytes < 0 || (size_t)(offset + bytes) > H.run.inputs_bytes) {
        say("inputs.bin is shorter than the plan says", NULL);
        return 0;
    }
    return (i64)(uintptr_t)(H.run.inputs + offset);
}

/* One output of one repeat of one case, behind its header; 0 when it could not be written. */
i64 wbio_save(i64 address, i64 bytes, i64 case_index, i64 rep, i64 k) {
    int32_t header[4] = {(int32_t)case_index, (int32_t)rep, (int32_t)k, (int32_t)bytes};
    return wbrun_put(H.out_fd, header, sizeof header) && wbrun_put(H.out_fd, (const void *)(uintptr_t)address, (size_t)bytes);
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
    char *text = grow(NULL, H.extra_len + 160);
    int n = snprintf(text, 160, "{\"status\": \"ok\", \"message\": \"\", \"seconds\": %.6f%s", seconds,
                     H.extra_len ? ", " : "");
    if (H.extra_len) memcpy(text + n, H.extra, H.extra_len);
    text[n + H.extra_len] = '}';
    int ok = wbrun_replace(&H.run, WBRUN_RESULT, text, (size_t)n + H.extra_len + 1);
    free(text);
    return ok;
}
