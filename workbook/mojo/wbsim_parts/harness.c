/* wbsim_parts/harness.c: the harness's I/O: result.json, faults and time limits, the calls
 * of the generated launcher (wb_*: cases, buffers, repeats, outputs.bin), and what a
 * launch hands back (writers.bin's shared arrays, counters.bin).
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* Files                                                                     */
/* ------------------------------------------------------------------------- */

/* Where one of the things the run hands back goes (wbrun.h: the workbook's descriptor). */
static int create(int which) {
    int fd = wbrun_open(&S.run, which);
    if (fd < 0) die("could not write %s/%s", S.run.dir, wbrun_names[which]);
    return fd;
}

static void put(int fd, const void *data, size_t n) { wbrun_put(fd, data, n); }

/* result.json is assembled in one buffer and written at once: also from a signal handler. */
static char *J;
static size_t JN, JCAP;

static void jput(const char *fmt, ...) {
    if (JCAP - JN < 2048) return; /* full: the rest is dropped, the JSON stays valid below */
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(J + JN, JCAP - JN - 1024, fmt, ap);
    va_end(ap);
    if (k > 0) JN += (size_t)k < JCAP - JN - 1024 ? (size_t)k : JCAP - JN - 1024;
}

static void jstr(const char *s) {
    jput("\"");
    for (; *s && JCAP - JN > 2048; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') jput("\\%c", ch);
        else if (ch < 0x20) jput("\\u%04x", ch);
        else J[JN++] = (char)ch;
    }
    jput("\"");
}

static void json_finding(finding_t *f) {
    jput("{\"kind\": ");
    jstr(f->kind);
    jput(", \"case\": %d, \"launch\": ", f->case_index);
    jstr(f->launch);
    if (f->region >= 0 && f->region < S.nregions) {
        jput(", \"buffer\": ");
        jstr(S.regions[f->region].name);
    }
    if (f->alloc >= 0)
        jput(", \"allocation\": %d, \"array\": {\"rank\": %d, \"shape\": [%lld, %lld, %lld], \"elem\": %zu, "
             "\"site\": %u}",
             f->alloc, f->array_rank, (long long)f->array_shape[0], (long long)f->array_shape[1],
             (long long)f->array_shape[2], f->array_elem, f->array_site);
    if (f->hazard[0]) {
        jput(", \"hazard\": ");
        jstr(f->hazard);
    }
    jput(", \"site\": %u, \"other_site\": %u, \"index\": %lld, \"index_min\": %lld, \"index_max\": %lld, "
         "\"size\": %lld, \"write\": %s, \"bytes\": %d, \"block\": %d, \"round\": %d, \"other_thread\": %d, "
         "\"events\": %lld, \"count\": %lld, \"thread_min\": %lld, \"thread_max\": %lld, \"threads\": [",
         f->site, f->other_site, (long long)f->index, (long long)(f->index_min == INT64_MAX ? f->index : f->index_min),
         (long long)(f->index_max == INT64_MIN ? f->index : f->index_max), (long long)f->size,
         f->write ? "true" : "false", f->access_bytes, f->block, f->round, f->other_thread, (long long)f->events,
         (long long)(f->threads ? f->threads : 1), (long long)(f->tid_min == INT64_MAX ? -1 : f->tid_min),
         (long long)f->tid_max);
    for (int i = 0; i < f->nfirst; i++) jput("%s%d", i ? ", " : "", f->first[i]);
    jput("]");
    if (f->elem) jput(", \"elem\": %d", f->elem);
    if (f->start_min != INT64_MAX)
        jput(", \"start_min\": %lld, \"start_max\": %lld, \"before\": %s", (long long)f->start_min,
             (long long)f->start_max, f->before ? "true" : "false");
    jput("%s%s}", f->extra[0] ? ", " : "", f->extra);
}

static void write_result(const char *status, const char *message) {
    if (!J) {
        JCAP = 1 << 20;
        J = malloc(JCAP);
        if (!J) _exit(SIM_MISUSE);
    }
    JN = 0;
    jput("{\"status\": ");
    jstr(status);
    jput(", \"message\": ");
    jstr(message ? message : "");
    jput(", \"seconds\": %.6f, \"base\": %llu, \"findings\": [", now() - S.started, (unsigned long long)S.exe_base);
    for (int i = 0; i < S.nfindings; i++) {
        if (i) jput(", ");
        json_finding(&S.findings[i]);
    }
    jput("], \"dropped_findings\": %lld, \"sites\": [", (long long)S.dropped);
    for (u32 i = 1; i <= S.nsites && JCAP - JN > 4096; i++) {
        site_t *s = &S.sites[i];
        if (s->file) {
            char file[1024];
            int n = s->file_len < 1023 ? s->file_len : 1023;
            memcpy(file, s->file, (size_t)n);
            file[n] = 0;
            jput("%s[0, 0, ", i > 1 ? ", " : "");
            jstr(file);
            jput(", %d, %d, ", s->line, s->col);
            jstr(s->launch);
            for (int k = 0; k < M_OPS; k++) jput(", %u", s->ops[k]);
            jput("]");
        } else {
            jput("%s[%llu, %llu, ", i > 1 ? ", " : "", (unsigned long long)s->pc, (unsigned long long)s->caller);
            jstr(s->launch);
            jput(", %llu, %llu, %llu, %llu, %llu, %llu, %llu, %llu, %llu, %llu", (unsigned long long)s->accesses[0],
                 (unsigned long long)s->accesses[1], (unsigned long long)s->accesses[2],
                 (unsigned long long)s->accesses[3], (unsigned long long)s->g_requests,
                 (unsigned long long)s->g_sectors, (unsigned long long)s->g_ideal,
                 (unsigned long long)s->s_requests, (unsigned long long)s->s_wavefronts,
                 (unsigned long long)s->s_ideal);
            jput(", %llu, %llu, %llu, %llu, ", (unsigned long long)s->bytes[0], (unsigned long long)s->bytes[1],
                 (unsigned long long)s->bytes[2], (unsigned long long)s->bytes[3]);
            jstr(s->buffer);
            jput("]");
        }
    }
    jput("], \"unpriced_accesses\": %llu", (unsigned long long)T.unpriced);
    if (S.timeout_json[0]) jput(", \"timeout\": %s", S.timeout_json);
    jput("%s}", S.shared_table);
    wbrun_replace(&S.run, WBRUN_RESULT, J, JN);
}

/* ------------------------------------------------------------------------- */
/* Faults and time limits                                                    */
/* ------------------------------------------------------------------------- */

static uintptr_t context_pc(void *uc) {
#if defined(__x86_64__)
    return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* The processor's trap number (13: a general protection fault), or -1. */
static int context_trap(void *uc) {
#if defined(__x86_64__)
    return (int)((ucontext_t *)uc)->uc_mcontext.gregs[REG_TRAPNO];
#else
    (void)uc;
    return -1;
#endif
}

/* 1 a write, 0 a read, -1 unknown (an address no page could hold: the processor says
 * only that it was refused, not how). */
static int context_wrote(void *uc) {
#if defined(__x86_64__)
    greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;
    if (g[REG_TRAPNO] != 14) return -1; /* not a page fault */
    return (g[REG_ERR] & 2) != 0;
#else
    (void)uc;
    return -1;
#endif
}

/* Where the running thread is: the interrupted instruction, the last access it made
 * (when the instruction is in the simulator's own code) and the call it is in. */
static void where(char *out, size_t n, uintptr_t pc) {
    thread_t *t = S.cur;
    if (!t && S.last_ran) { /* stopped in the scheduler, between stretches: where the last thread was */
        t = S.last_ran;
        pc = 0;
    }
    uintptr_t caller = t ? (uintptr_t)caller_of(t) : 0;
    uintptr_t last = t ? (uintptr_t)t->last_pc : 0;
    snprintf(out, n,
             "\"pc\": %llu, \"last\": %llu, \"caller\": %llu, \"thread\": %d, \"cpu\": %s, \"case\": %d, "
             "\"launch\": \"%s\"",
             (unsigned long long)(pc ? pc - S.exe_base + 1 : 0), (unsigned long long)(last ? last - S.exe_base : 0),
             (unsigned long long)(caller ? caller - S.exe_base : 0), t && t != &S.cpu ? t->gtid : -1,
             t == &S.cpu ? "true" : "false", S.case_index, S.label);
}

#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif

static void on_fault(int sig, siginfo_t *info, void *uc) {
    FENCE_OPEN();
    uintptr_t pc = context_pc(uc);
    if (sig == SIGSEGV && info->si_code == SEGV_PKUERR && roots.r.fence) {
        /* The fence: a store into the vault that the guard was not shown. */
        refuse("harness_write", (uintptr_t)info->si_addr, 0, (void *)(pc + 1), 0);
    }
    /* A 16-byte access the compiler was promised was aligned, at an address that is not
     * a multiple of 16: the host's aligned move faulted (see "Alignment"). */
    if (staged.staged && context_trap(uc) == 13) {
        staged.staged = 0;
        misaligned(staged.a, staged.n, staged.write, staged.site, staged.gtid, 16);
    }
    /* A fault inside the reservation was already reported by the access hook; elsewhere
     * it is an address the kernel computed far outside every buffer. */
    int wrote = context_wrote(uc);
    finding_t *f = finding(wrote < 0 ? "invalid_access" : wrote ? "invalid_write" : "invalid_read", -1, -1, 0, 0,
                           NULL);
    if (f) {
        char at[400];
        where(at, sizeof at, pc);
        snprintf(f->extra, sizeof f->extra, "\"address\": %llu, \"signal\": %d, %s",
                 (unsigned long long)(uintptr_t)info->si_addr, sig, at);
        saw(f, S.cur && S.cur != &S.cpu ? S.cur->gtid : -1, 0);
    }
    stop_case();
}

/* The case stops here: what was found is written, and the workbook runs the next cases
 * in a new process. */
__attribute__((noreturn)) static void stop_case(void) {
    snprintf(S.shared_table + strlen(S.shared_table), sizeof S.shared_table - strlen(S.shared_table),
             ", \"stopped_case\": %d", S.case_index);
    write_result("fatal", "");
    _exit(EXIT_FAULT);
}

static void on_tick(int sig) {
    (void)sig;
}

static void on_alarm(int sig, siginfo_t *info, void *uc) {
    FENCE_OPEN();
    (void)info;
    double t = now();
    const char *why = NULL;
    if (sig == SIGUSR1 || t - S.started > S.run.seconds) why = "total"; /* SIGUSR1: the workbook's limit */
    else if (S.cur && S.cur != &S.cpu && t - S.cur->stretch_started > S.stretch_limit) why = "stretch";
    if (!why) return;
    char at[512];
    where(at, sizeof at, context_pc(uc));
    thread_t *cur = S.cur;
    snprintf(S.timeout_json, sizeof S.timeout_json, "{\"why\": \"%s\", \"seconds\": %.3f, \"block\": %d, %s}", why,
             cur && cur != &S.cpu ? t - cur->stretch_started : t - S.started, S.block_linear, at);
    write_result("timeout", "");
    _exit(EXIT_TIMEOUT);
}

static void install_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sa.sa_sigaction = on_alarm;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    (void)on_tick;
    /* A stack of its own for the handlers: a fault may come from a thread's own stack. */
    stack_t ss;
    ss.ss_sp = vault_pages_as(256 * 1024, 0); /* the kernel writes a handler's frame there */
    ss.ss_size = 256 * 1024;
    ss.ss_flags = 0;
    if (ss.ss_sp) sigaltstack(&ss, NULL);
    struct itimerval tick = {{0, 200000}, {0, 200000}};
    setitimer(ITIMER_REAL, &tick, NULL);
}

/* ------------------------------------------------------------------------- */
/* The harness                                                               */
/* ------------------------------------------------------------------------- */

static int anchor;

void wb_begin(void) {
    FENCED;
    vault_open();
    JCAP = 1 << 20; /* the result's buffer (write_result) */
    J = xcalloc(1, JCAP);
    snprintf(S.host_label, sizeof S.host_label, "elementwise");
    S.host_label_len = 11;
    guard_open();
    const char *why = wbrun_start(&S.run);
    if (why) die("%s", why);
    /* Not dumpable: no other process of this user (a shell the kernel started) may open
     * its descriptors through /proc/PID/fd, the workbook's channel among them. */
    prctl(PR_SET_DUMPABLE, 0);
    Dl_info info;
    if (dladdr(&anchor, &info) && info.dli_fbase) S.exe_base = (uintptr_t)info.dli_fbase;
    const char *stretch = getenv("WORKBOOK_SIM_STRETCH");
    S.stretch_limit = stretch && atof(stretch) > 0 ? atof(stretch) : 5.0;
    S.out_fd = create(WBRUN_OUTPUTS);
    S.writers_fd = create(WBRUN_WRITERS);
    S.counters_fd = create(WBRUN_COUNTERS);
    S.started = now();
    S.case_index = -1;
    S.shared_table[0] = 0;
    heap_init();
    i64 shape[3] = {SHARED_ARENA, 1, 1};
    for (int r = 0; r < MAX_CLUSTER; r++) { /* one per block of a cluster: regions stay in address order */
        S.arenas[r] = new_region("shared", 6, ROLE_SHARED, SHARED_ARENA, 1, 1, shape);
        reset_shadow(S.arenas[r], 0, S.arenas[r]->bytes, 0);
    }
    S.arena = S.arenas[0];
    S.committed_hi = S.heap_next;
    S.heap_case_mark = S.heap_next;
    S.case_regions_from = S.nregions;
    S.cpu.gtid = -1;
    install_handlers();
}

i64 wb_mode(void) { return S.run.cpu_mode ? 0 : 1; } /* 0 cpu, 1 sim */
i64 wb_repeats(void) { return S.run.repeats; }

i64 wb_wants(i64 index) { return wbrun_wants(&S.run, index); }

/* A new case: the last case's buffers are given back. */
void wb_case_begin(i64 index, i64 total) {
    FENCED;
    char text[64];
    int n = snprintf(text, sizeof text, "running %lld %lld", (long long)index + 1, (long long)total);
    wbrun_replace(&S.run, WBRUN_PHASE, text, (size_t)n);
    for (int i = S.case_regions_from; i < S.nregions; i++) xfree(S.regions[i].shadow);
    S.nregions = S.case_regions_from;
    if (S.heap_next > S.heap_case_mark) {
        munmap((void *)S.heap_case_mark, S.heap_next - S.heap_case_mark);
        mmap((void *)S.heap_case_mark, S.heap_next - S.heap_case_mark, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    }
    S.heap_next = S.heap_case_mark;
    S.case_index = (int)index;
    S.total_cases = (int)total;
    S.fatal = 0;
    S.launch_in_case = 0;
}

static i64 buffer(const char *name, i64 name_len, int role, i64 count, i64 elem, i64 rank, i64 d0, i64 d1, i64 d2) {
    i64 shape[3] = {d0, d1, d2};
    region_t *r = new_region(name, (size_t)name_len, role, (size_t)count, (size_t)elem, (int)rank, shape);
    S.committed_hi = S.heap_next;
    return (i64)r->base;
}

i64 wb_input(const char *name, i64 name_len, i64 offset, i64 count, i64 elem, i64 rank, i64 d0, i64 d1, i64 d2) {
    FENCED;
    i64 a = buffer(name, name_len, ROLE_INPUT, count, elem, rank, d0, d1, d2);
    region_t *r = &S.regions[S.nregions - 1];
    if ((size_t)(offset + count * elem) > S.run.inputs_bytes) die("inputs.bin is shorter than the plan says");
    memcpy((void *)a, S.run.inputs + offset, (size_t)(count * elem));
    reset_shadow(r, 0, r->bytes, 1);
    return a;
}

i64 wb_output(const char *name, i64 name_len, i64 count, i64 elem, i64 zero, i64 rank, i64 d0, i64 d1, i64 d2) {
    FENCED;
    i64 a = buffer(name, name_len, ROLE_OUTPUT, count, elem, rank, d0, d1, d2);
    S.regions[S.nregions - 1].zero = (int)zero;
    return a;
}

i64 wb_scratch(const char *name, i64 name_len, i64 count, i64 elem, i64 rank, i64 d0, i64 d1, i64 d2) {
    FENCED;
    return buffer(name, name_len, ROLE_SCRATCH, count, elem, rank, d0, d1, d2);
}

/* A repeat begins: outputs poisoned (or zeroed, for sums), scratch poisoned, shadows fresh. */
void wb_rep_begin(i64 rep) {
    FENCED;
    S.rep = (int)rep;
    S.launch_in_case = 0;
    for (int i = S.case_regions_from; i < S.nregions; i++) {
        region_t *r = &S.regions[i];
        if (r->role == ROLE_INPUT) {
            reset_shadow(r, 0, r->bytes, 1);
            continue;
        }
        if (r->zero) memset((void *)r->base, 0, r->bytes);
        else
            for (size_t k = 0; k + 4 <= r->bytes; k += 4) *(u32 *)(r->base + k) = POISON_WORD;
        reset_shadow(r, 0, r->bytes, r->zero);
    }
}

static void record(int fd, int32_t kind, int32_t a, int32_t b, int32_t c, const void *data, size_t bytes) {
    int32_t header[4] = {kind, a, b, c};
    put(fd, header, sizeof header);
    put(fd, data, bytes);
}

/* A repeat ends: its outputs go to outputs.bin, each behind a header naming it. The
 * first repeat also records who wrote each output element, and how often. */
void wb_rep_end(i64 rep) {
    FENCED;
    int k = 0;
    for (int i = S.case_regions_from; i < S.nregions; i++) {
        region_t *r = &S.regions[i];
        if (r->role != ROLE_OUTPUT) continue;
        int32_t header[4] = {S.case_index, (int32_t)rep, k, (int32_t)r->bytes};
        put(S.out_fd, header, sizeof header);
        put(S.out_fd, (void *)r->base, r->bytes);
        if (rep == 0 && !S.run.cpu_mode) {
            int32_t *writers = xcalloc(r->count, sizeof(int32_t));
            u32 most = 0;
            for (size_t e = 0; e < r->count; e++) {
                cell_t *c = &r->shadow[e * r->elem];
                writers[e] = c->w_tid;
                if (c->writes > most) most = c->writes;
            }
            record(S.writers_fd, 1, S.case_index, k, (int32_t)r->count, writers, r->count * sizeof(int32_t));
            xfree(writers);
            int32_t most_writes[1] = {(int32_t)most};
            record(S.counters_fd, 2, S.case_index, k, 1, most_writes, sizeof most_writes);
        }
        k++;
    }
}

/* An op's CPU kernel runs between these: its accesses are watched too (reads past an
 * end, reads of what nothing wrote), as one thread with no races to find. */
void wb_cpu_begin(void) {
    FENCED;
    memset(&S.cpu, 0, sizeof S.cpu);
    S.cpu.gtid = -1;
    snprintf(S.label, sizeof S.label, "cpu");
    S.cur = &S.cpu;
}

void wb_cpu_end(void) {
    FENCED;
    S.cur = NULL;
}

void wb_finish(void) {
    FENCED;
    write_result(S.stopped ? "fatal" : "ok", "");
    close(S.out_fd);
    close(S.writers_fd);
    close(S.counters_fd);
}

/* ------------------------------------------------------------------------- */
/* What a launch hands back: writers.bin's shared arrays, counters.bin       */
/* ------------------------------------------------------------------------- */

static void shared_snapshot(void) {
    /* Who wrote each element of block 0's shared arrays, after each launch of the first
     * repeat that has any (forward order), shown beside the outputs. Each array's record
     * (kind 4) says what the map needs to be drawn as the learner wrote it: the launch
     * and its shape (a thread id is told apart by the block that wrote it, not by the
     * case's last launch), the array's own shape and rank, and where it was allocated
     * (its variable's name is on that line). */
    for (int k = 0; k < S.nallocs; k++) {
        alloc_t *a = &S.allocs[k];
        size_t count = a->bytes / a->elem;
        int32_t about[16] = {S.launch_in_case, a->rank, (int32_t)a->shape[0], (int32_t)a->shape[1],
                             (int32_t)a->shape[2], (int32_t)a->site, (int32_t)a->elem, S.bx, S.by, S.bz,
                             S.gx, S.gy, S.gz, 0, 0, 0};
        char label[48] = {0};
        snprintf(label, sizeof label, "%s", S.label);
        int32_t *writers = xcalloc(count, sizeof(int32_t));
        for (size_t e = 0; e < count; e++) writers[e] = S.arena->shadow[a->offset + e * a->elem].w_tid;
        record(S.writers_fd, 4, S.case_index, k, (int32_t)count, about, sizeof about);
        put(S.writers_fd, label, sizeof label);
        put(S.writers_fd, writers, count * sizeof(int32_t));
        xfree(writers);
    }
}

/* Writes per element by one launch (an access budget's max_writes_per_element names one
 * kernel, and another launch of the case may write the same buffer): each output's and
 * scratch buffer's per-element write counts as the launch begins, in the first repeat. */
static u32 *write_marks[MAX_REGIONS];
static size_t write_marks_cap[MAX_REGIONS];

static void writes_mark(void) {
    for (int i = S.case_regions_from; i < S.nregions; i++) {
        region_t *r = &S.regions[i];
        if (r->role != ROLE_OUTPUT && r->role != ROLE_SCRATCH) continue;
        if (r->count > write_marks_cap[i]) {
            xfree(write_marks[i]);
            write_marks[i] = xcalloc(r->count, sizeof(u32));
            write_marks_cap[i] = r->count;
        }
        for (size_t e = 0; e < r->count; e++) write_marks[i][e] = r->shadow[e * r->elem].writes;
    }
}

/* Kind 4, per output and scratch buffer the launch wrote: the most writes this launch
 * made to one element, that element, and the buffer's name. */
static void writes_out(void) {
    for (int i = S.case_regions_from; i < S.nregions; i++) {
        region_t *r = &S.regions[i];
        if ((r->role != ROLE_OUTPUT && r->role != ROLE_SCRATCH) || r->count > write_marks_cap[i]) continue;
        u32 most = 0;
        size_t at = 0;
        for (size_t e = 0; e < r->count; e++) {
            u32 made = r->shadow[e * r->elem].writes - write_marks[i][e];
            if (made > most) most = made, at = e;
        }
        if (!most) continue;
        int32_t header[4] = {4, S.case_index, S.launch_in_case, (int32_t)most};
        put(S.counters_fd, header, sizeof header);
        int32_t element = (int32_t)at;
        put(S.counters_fd, &element, sizeof element);
        char name[48] = {0};
        snprintf(name, sizeof name, "%s", r->name);
        put(S.counters_fd, name, sizeof name);
    }
}

/* Kind 5, the launch's methods (M_COUNT counts); kind 6, per buffer it used, its USE_*
 * counts and its name. */
static void methods_out(void) {
    record(S.counters_fd, 5, S.case_index, S.launch_in_case, M_COUNT, S.method, sizeof S.method);
    for (int i = S.case_regions_from; i < S.nregions; i++) {
        u32 *use = S.buffer_use[i];
        if (!use[USE_LOADS] && !use[USE_STORES] && !use[USE_ASYNC]) continue;
        record(S.counters_fd, 6, S.case_index, S.launch_in_case, USES, use, USES * sizeof(u32));
        char name[48] = {0};
        snprintf(name, sizeof name, "%s", S.regions[i].name);
        put(S.counters_fd, name, sizeof name);
    }
}

static void counters_out(void) {
    if (S.rep != 0 || !S.counts) return;
    writes_out();
    int32_t header[8] = {3, S.case_index, S.launch_in_case, S.nthreads * S.gx * S.gy * S.gz, S.bx, S.by, S.bz, 0};
    put(S.counters_fd, header, sizeof header);
    put(S.counters_fd, S.counts, (size_t)S.nthreads * S.gx * S.gy * S.gz * 8 * sizeof(u32));
    char label[48] = {0};
    snprintf(label, sizeof label, "%s", S.label);
    put(S.counters_fd, label, sizeof label);
    methods_out();
}
