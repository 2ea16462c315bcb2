/* wbsim_parts/threads.c: the scheduler: threads (ucontext), warps, blocks and clusters run in
 * launch order, forward or in reverse (wbsim_launch), and the launches made inside the
 * learner's host code.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* Launching                                                                 */
/* ------------------------------------------------------------------------- */

/* The kernel returned: back to the scheduler, trusting nothing the thread's stack or
 * registers hold (the kernel could write its stack: its callers' saved registers too). */
__attribute__((noinline, noreturn)) static void thread_done(void) {
    FENCE_OPEN();
    thread_t *t = S.cur;
    t->state = ST_FINISHED;
    S.progress++;
    setcontext(&S.main_ctx);
    _exit(SIM_MISUSE);
}

static void trampoline(void) {
    thread_t *t = S.cur;
    /* Its own frame and what makecontext put above it are not the kernel's to write. */
    t->stack_hi = (uintptr_t)__builtin_frame_address(0);
    void (*entry)(i64) = S.entry;
    i64 kbox = S.kbox;
    FENCE_CLOSE(); /* the learner's code */
    entry(kbox);
    thread_done();
}

/* What the running thread sees of the simulator: its block's shared memory, round and
 * epoch, named in findings. */
static void enter_block(int rank) {
    S.arena = S.arenas[rank];
    S.block_linear = S.cluster_blocks[rank];
    S.round = S.rounds[rank];
    S.epoch = EP(S.launch_serial, S.block_linear, S.round);
}

/* One stretch of one thread: until its next barrier(), cluster_wait() or its end. */
__attribute__((noinline)) static void run_thread(thread_t *t) {
    t->state = ST_RUNNING;
    t->stretch_started = now();
    enter_block(t->rank);
    S.cur = t;
    S.last_ran = t;
    swapcontext(&S.main_ctx, &t->ctx);
    S.cur = NULL;
}

/* The lanes of warp w of the block at S.threads[base] still in the kernel: they run until
 * each waits at a barrier(), a cluster_wait() or an mbarrier wait whose phase has not
 * completed (parked), or has finished; on the way, every warp
 * operation they meet completes when all of them are there. Returns 1 when the warp
 * can't go on (its lanes parted ways at a warp operation: on a GPU that hangs or gives
 * anything). */
static int run_warp(int base, int w, int reverse) {
    int first = base + w * WARP, last = base + (w * WARP + WARP < S.nthreads ? w * WARP + WARP : S.nthreads);
    for (;;) {
        for (int n = first; n < last; n++) {
            thread_t *t = &S.threads[reverse ? last - 1 - (n - first) : n];
            if (!t->ready) continue;
            t->ready = 0;
            run_thread(t);
        }
        int at_op = 0, elsewhere = 0, finished = 0, mixed = 0, parked = 0;
        u32 site = 0;
        for (int i = first; i < last; i++) {
            thread_t *t = &S.threads[i];
            if (t->state == ST_AT_WARP) {
                if (at_op == 0) site = t->warp_site;
                else if (t->warp_site != site) mixed = 1;
                at_op++;
            } else if (t->state == ST_FINISHED) {
                finished++;
            } else if (t->state == ST_AT_MBAR) {
                parked++;
            } else {
                elsewhere++;
            }
        }
        if (at_op == 0) return 0; /* all at a barrier, or done */
        if (parked && !mixed) return 0; /* the lanes at an mbarrier wait may come later */
        if (elsewhere || mixed) {
            enter_block(S.threads[first].rank);
            warp_stuck(base, w, at_op, elsewhere, finished);
            return 1;
        }
        /* Everyone still in the kernel is here: the operation completes. What each lane
         * brought is what every lane may read; lanes that finished took no part. */
        for (int i = first; i < last; i++) {
            thread_t *t = &S.threads[i];
            t->took_part = t->state == ST_AT_WARP;
            memcpy(S.warp_out + (size_t)i * WARP_SLOT, S.warp_in + (size_t)i * WARP_SLOT, WARP_SLOT);
            if (t->took_part) {
                t->state = ST_RUNNING;
                t->ready = 1;
            }
        }
        S.progress++;
    }
}

/* Thread i of the block of rank `rank` in the cluster (block `block` of the grid), ready
 * to start the kernel on a stack of its own. */
__attribute__((noinline)) static void new_thread(int i, int rank, int block) {
    int index = rank * S.nthreads + i;
    thread_t *t = &S.threads[index];
    memset(t, 0, offsetof(thread_t, stack));
    t->depth = 0;
    t->x = i % S.bx;
    t->y = (i / S.bx) % S.by;
    t->z = i / (S.bx * S.by);
    t->linear = i;
    t->gtid = block * S.nthreads + i;
    t->block = block;
    t->rank = rank;
    t->index = index;
    t->state = ST_RUNNING;
    t->clk = 1;
    getcontext(&t->ctx);
    t->ctx.uc_link = &S.main_ctx;
    t->ctx.uc_stack.ss_sp = S.stacks + (size_t)index * (STACK_BYTES + PAGE) + PAGE;
    t->ctx.uc_stack.ss_size = STACK_BYTES;
    t->stack_lo = (uintptr_t)t->ctx.uc_stack.ss_sp;
    t->stack_hi = t->stack_lo + STACK_BYTES; /* lowered to the trampoline's frame once it runs */
    makecontext(&t->ctx, trampoline, 0);
}

/* Threads' stacks and the slots they put values in for block.* and warp operations are
 * the parts of the vault the learner's threads write: pages without the vault's key. */
static void ensure_threads(int n) {
    if (n <= S.threads_cap) return;
    S.last_ran = NULL; /* it pointed into the array freed here */
    xfree(S.threads);
    if (S.stacks) {
        vault_unpages(S.stacks, (size_t)S.stacks_cap * (STACK_BYTES + PAGE));
        vault_unpages(S.scratch, S.scratch_cap);
        vault_unpages(S.warp_in, ((size_t)S.threads_cap + WARP) * WARP_SLOT);
    }
    S.threads = xcalloc((size_t)n, sizeof(thread_t));
    size_t each = STACK_BYTES + PAGE;
    S.stacks = vault_pages_as((size_t)n * each, 0);
    for (int i = 0; i < n; i++) mprotect(S.stacks + (size_t)i * each, PAGE, PROT_NONE);
    S.threads_cap = S.stacks_cap = n;
    S.scratch_cap = (size_t)n * BLOCK_SLOT;
    S.scratch = vault_pages_as(S.scratch_cap, 0);
    S.warp_in = vault_pages_as(((size_t)n + WARP) * WARP_SLOT, 0);
    xfree(S.warp_out);
    S.warp_out = xcalloc((size_t)n + WARP, WARP_SLOT);
}

/* Run the blocks of one cluster together (S.cluster_blocks), until every thread has
 * finished. Threads parked at an mbarrier wait run again when their phase completes, so
 * the warps go round while any thread is ready; then cluster waits and barrier() calls
 * open where they can. When none can and some threads are parked, a parked test_wait is
 * resumed once to poll (it returns false), and if nothing moved since the last such
 * poll, no wait can complete: a finding. Returns 1 when they could not finish (the case
 * stops there). */
static int run_cluster(int reverse) {
    int result = 0, total = S.csize * S.nthreads;
    /* Each block's shared memory starts unwritten. */
    size_t used = S.arena_used + 1024 < SHARED_ARENA ? S.arena_used + 1024 : SHARED_ARENA;
    for (int r = 0; r < S.csize; r++) {
        memset((void *)S.arenas[r]->base, 0xFF, used);
        reset_shadow(S.arenas[r], 0, used, 0);
        S.rounds[r] = 0;
        mbar_block_begin(r);
    }
    memset(S.phase_sites, 0, sizeof S.phase_sites);
    S.nallocs = 0;
    S.npending = 0; /* a copy no thread waited for never lands */
    S.shared_problem = 0;
    S.arena_used = 0;
    for (int r = 0; r < S.csize; r++)
        for (int i = 0; i < S.nthreads; i++) new_thread(i, r, S.cluster_blocks[r]);
    for (int i = 0; i < total; i++) S.threads[i].ready = 1;
    int warps = (S.nthreads + WARP - 1) / WARP;
    u64 polled_at = ~0ULL;
    while (!result) {
        int ran;
        do {
            ran = 0;
            for (int nr = 0; nr < S.csize && !result; nr++) {
                int r = reverse ? S.csize - 1 - nr : nr, base = r * S.nthreads;
                for (int nw = 0; nw < warps && !result; nw++) {
                    int w = reverse ? warps - 1 - nw : nw, ready = 0;
                    for (int i = w * WARP; i < (w + 1) * WARP && i < S.nthreads && !ready; i++)
                        ready = S.threads[base + i].ready;
                    if (!ready) continue;
                    ran = 1;
                    result = run_warp(base, w, reverse);
                }
            }
        } while (ran && !result);
        if (result) break;
        int progress = 0, live = 0;
        /* A cluster_wait() opens once every thread of the cluster made the arrival it needs. */
        int fewest = INT32_MAX;
        for (int i = 0; i < total; i++)
            if (S.threads[i].arrived < fewest) fewest = S.threads[i].arrived;
        for (int i = 0; i < total; i++) {
            thread_t *t = &S.threads[i];
            if (t->state != ST_AT_CLUSTER || fewest < t->waited + 1) continue;
            if (t->waited < 64) {
                u32 *first = &S.phase_sites[t->waited];
                if (!*first) *first = t->cluster_site;
                else if (*first != t->cluster_site) {
                    /* Threads of one phase wait at different cluster_wait() calls. */
                    enter_block(t->rank);
                    finding_t *f = finding("cluster_barrier_mismatch", -1, -1, *first, t->cluster_site, "phase");
                    if (f && f->events == 0)
                        snprintf(f->extra, sizeof f->extra, "\"phase\": %d, \"cluster_size\": %d", t->waited,
                                 S.csize);
                    saw(f, t->gtid, 0);
                }
            }
            t->waited++;
            t->state = ST_RUNNING;
            t->ready = 1;
            progress = 1;
        }
        /* A barrier() opens once every thread of its block is there. */
        for (int r = 0; r < S.csize && !result; r++) {
            int waiting = 0, finished = 0, other = 0, mixed = 0;
            u32 first_site = 0;
            for (int i = 0; i < S.nthreads; i++) {
                thread_t *t = &S.threads[r * S.nthreads + i];
                if (t->state == ST_AT_BARRIER) {
                    if (waiting == 0) first_site = t->barrier_site;
                    else if (t->barrier_site != first_site) mixed = 1;
                    waiting++;
                } else if (t->state == ST_FINISHED) {
                    finished++;
                } else {
                    other++; /* at a cluster_wait() or an mbarrier wait, or released from one */
                }
            }
            live += waiting + other;
            if (waiting == 0 || other > 0) continue;
            if (finished > 0 || mixed) {
                stuck(r, waiting, finished);
                result = 1;
                break;
            }
            S.rounds[r]++;
            for (int i = 0; i < S.nthreads; i++) S.threads[r * S.nthreads + i].ready = 1;
            progress = 1;
        }
        if (result || live == 0) break;
        if (progress) continue;
        /* Nothing opened. Threads parked at a test_wait may poll once more (false), and
         * go on from there; when nothing moved since the last poll, no wait can complete. */
        int parked = 0, pollable = 0;
        for (int i = 0; i < total; i++) {
            thread_t *t = &S.threads[i];
            if (t->state != ST_AT_MBAR) continue;
            parked++;
            pollable += !t->mbar_blocking;
        }
        if (pollable && S.progress != polled_at) {
            polled_at = S.progress;
            for (int i = 0; i < total; i++) {
                thread_t *t = &S.threads[i];
                if (t->state == ST_AT_MBAR && !t->mbar_blocking) t->ready = 1;
            }
            continue;
        }
        if (parked) mbar_stuck(); /* named at the mbarrier wait, whatever else waits with it */
        else cluster_stuck();
        result = 1;
    }
    if (!result)
        for (int r = 0; r < S.csize; r++) mbar_block_end(r);
    /* Block 0's shared arrays, for the report (first repeat, forward order). */
    for (int r = 0; r < S.csize; r++)
        if (S.cluster_blocks[r] == 0 && !reverse && S.rep == 0 && S.nallocs > 0) {
            enter_block(r);
            shared_snapshot();
        }
    traffic_flush();
    for (int r = 0; r < S.csize; r++)
        if (S.rep == 0 && (u32)S.rounds[r] > S.method[M_ROUNDS]) S.method[M_ROUNDS] = (u32)S.rounds[r];
    if (S.shared_problem && !result) {
        finding_t *f = finding(S.shared_problem == 1 ? "shared_overflow" : "shared_calls_differ", -1, -1, 0, 0,
                               NULL);
        if (f) {
            snprintf(f->extra, sizeof f->extra, "\"limit\": %d", SHARED_LIMIT);
            saw(f, -1, 0);
        }
        result = 1;
    }
    return result;
}

/* Run every cluster of one launch (a launch without clusters: clusters of one block),
 * forward or in reverse order (clusters, their blocks and threads). Returns 0, or 1
 * when the launch could not finish (the case stops there). */
static i64 launch_all(void (*entry)(i64), i64 kbox, i64 gx, i64 gy, i64 gz, i64 bx, i64 by, i64 bz, i64 cx,
                      i64 cy, i64 cz, i64 reverse, const char *label, i64 label_len) {
    S.launch_serial++;
    S.entry = entry;
    S.kbox = kbox;
    S.gx = (int)gx, S.gy = (int)gy, S.gz = (int)gz, S.bx = (int)bx, S.by = (int)by, S.bz = (int)bz;
    if (cx < 1 || cy < 1 || cz < 1 || gx % cx || gy % cy || gz % cz)
        die("a grid of (%lld, %lld, %lld) blocks is not a whole number of clusters of (%lld, %lld, %lld)",
            (long long)gx, (long long)gy, (long long)gz, (long long)cx, (long long)cy, (long long)cz);
    if (cx * cy * cz > MAX_CLUSTER)
        die("clusters of %lld blocks: the simulator runs clusters of at most %d (the portable limit)",
            (long long)(cx * cy * cz), MAX_CLUSTER);
    S.cx = (int)cx, S.cy = (int)cy, S.cz = (int)cz, S.csize = (int)(cx * cy * cz);
    S.reverse = (int)reverse;
    S.nthreads = (int)(bx * by * bz);
    int blocks = (int)(gx * gy * gz);
    if (label_len >= (i64)sizeof S.label) label_len = sizeof S.label - 1;
    memcpy(S.label, label, (size_t)label_len);
    S.label[label_len] = 0;
    ensure_threads(S.nthreads * S.csize);
    size_t total = (size_t)S.nthreads * (size_t)blocks;
    if (S.rep == 0) {
        if (total * 8 > S.counts_cap) {
            xfree(S.counts);
            S.counts_cap = total * 8;
            S.counts = xcalloc(S.counts_cap, sizeof(u32));
        }
        memset(S.counts, 0, total * 8 * sizeof(u32));
        memset(S.method, 0, sizeof S.method);
        memset(S.buffer_use, 0, sizeof S.buffer_use);
        writes_mark();
    }
    u32 *counts = S.counts;
    if (S.rep != 0) S.counts = NULL;
    int result = 0, nx = S.gx / S.cx, ny = S.gy / S.cy, clusters = blocks / S.csize;
    for (int nc = 0; nc < clusters && !result; nc++) {
        int c = reverse ? clusters - 1 - nc : nc;
        int ox = c % nx * S.cx, oy = c / nx % ny * S.cy, oz = c / (nx * ny) * S.cz;
        for (int r = 0; r < S.csize; r++) /* rank: x fastest, as %cluster_ctarank */
            S.cluster_blocks[r] = (ox + r % S.cx) + (oy + r / S.cx % S.cy) * S.gx + (oz + r / (S.cx * S.cy)) * S.gx * S.gy;
        S.cluster = c;
        result = run_cluster((int)reverse);
    }
    S.counts = counts;
    counters_out();
    S.launch_in_case++;
    if (result) {
        S.fatal = 1;
        S.stopped = 1;
    }
    return result;
}

i64 wbsim_launch(void (*entry)(i64), i64 kbox, i64 gx, i64 gy, i64 gz, i64 bx, i64 by, i64 bz, i64 cx, i64 cy,
                 i64 cz, i64 reverse, const char *label, i64 label_len) {
    FENCED;
    i64 rc = launch_all(entry, kbox, gx, gy, gz, bx, by, bz, cx, cy, cz, reverse, label, label_len);
    staged_flush();
    return rc;
}

/* A kernel used the simulator in a way it can't go on from (block.sum with the
 * wrong block_size, say): say so and stop. */
void wbsim_misuse(const char *message, i64 len) {
    fprintf(stdout, "workbook-sim: %.*s\n", (int)len, message);
    fflush(stdout);
    _exit(SIM_MISUSE);
}

/* ------------------------------------------------------------------------- */
/* Launches made inside the learner's host code (elementwise, in wbhost.mojo)  */
/* ------------------------------------------------------------------------- */

/* The generated launcher names them before it calls the learner's function;
 * they run forward in even repeats and in reverse in odd ones, as its own do. */
void wbsim_host_label(const char *label, i64 len) {
    FENCED;
    if (len >= (i64)sizeof S.host_label) len = sizeof S.host_label - 1;
    memcpy(S.host_label, label, (size_t)len);
    S.host_label_len = len;
    S.host_calling = 1;
}

void wbsim_host_done(void) {
    FENCED;
    S.host_calling = 0;
}

/* The host function itself read or wrote a buffer, outside every launch. On a GPU
 * that memory is the device's and the host can't touch it (the program crashes), so
 * output computed on the host must never pass here either. */
static void host_access(uintptr_t a, size_t n, int write, void *pc) {
    (void)n;
    region_t *r = region_at(a);
    if (!r || r->role == ROLE_SHARED) return;
    snprintf(S.label, sizeof S.label, "%.*s", (int)S.host_label_len, S.host_label);
    finding_t *f = finding(write ? "host_write" : "host_read", (int)(r - S.regions), -1, site_of(pc, NULL), 0, NULL);
    saw(f, -1, element_of(r, a));
}

i64 wbsim_host_launch(void (*entry)(i64), i64 kbox, i64 blocks, i64 threads) {
    FENCED;
    i64 rc = launch_all(entry, kbox, blocks, 1, 1, threads, 1, 1, 1, 1, 1, S.rep % 2, S.host_label, S.host_label_len);
    staged_flush();
    return rc;
}

/* ctx.enqueue_function in a learner's host function (wbhost.mojo's DeviceContext):
 * the grid and block it asks for, under the same name and order. */
i64 wbsim_host_launch3(void (*entry)(i64), i64 kbox, i64 gx, i64 gy, i64 gz, i64 bx, i64 by, i64 bz) {
    FENCED;
    i64 rc = launch_all(entry, kbox, gx, gy, gz, bx, by, bz, 1, 1, 1, S.rep % 2, S.host_label, S.host_label_len);
    staged_flush();
    return rc;
}
