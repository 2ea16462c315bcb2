/* wbsim_parts/barriers.c: barrier(), cluster barriers and mbarriers, and the findings of a
 * barrier that can never open (divergent, mismatched, deadlocked).
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* The end of a thread's stretch: it resumes when every thread of the block got here. */
void wbsim_barrier(const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    t->barrier_pc = __builtin_return_address(0);
    t->barrier_site = source_site(file, file_len, line, col);
    method_count(M_BARRIER, t->barrier_site);
    t->state = ST_AT_BARRIER;
    S.progress++;
    swapcontext(&t->ctx, &S.main_ctx);
}

/* ------------------------------------------------------------------------- */
/* Clusters (max.gpu.primitives.cluster)                                      */
/* ------------------------------------------------------------------------- */

/* The cluster barrier counts arrivals and waits per thread: a cluster_wait() opens once
 * every thread of every block of the cluster has made as many arrivals as the waiter has
 * made (cluster_sync() is an arrival and a wait). What a thread did before an arrival is
 * seen by every thread after its next wait, unless the arrival was relaxed: then only
 * by a wait after its next arrival that is not. An arrival, or a wait, out of pairs is a
 * finding: on a GPU that is undefined. */
i64 wbsim_cluster_rank(void) { return current()->rank; }

static void unpaired(thread_t *t, const char *which, u32 site) {
    finding_t *f = finding("cluster_unpaired", -1, -1, site, 0, which);
    saw(f, t->gtid, 0);
}

void wbsim_cluster_arrive(i64 relaxed, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    if (t->arrived > t->waited) {
        unpaired(t, "arrive-twice", source_site(file, file_len, line, col));
        return; /* on a GPU, undefined; here, the arrival it already made stands */
    }
    t->arrived++;
    if (relaxed && t->arrived <= 64) t->relaxed |= 1ULL << (t->arrived - 1);
    method_count(M_CLUSTER_ARRIVE, source_site(file, file_len, line, col));
    S.progress++;
}

void wbsim_cluster_wait(const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    if (t->arrived == t->waited) {
        unpaired(t, "wait-without-arrive", site);
        t->arrived++; /* go on as if it had arrived, to find what else there is */
    }
    t->cluster_site = site;
    method_count(M_CLUSTER_WAIT, site);
    t->barrier_pc = __builtin_return_address(0);
    t->state = ST_AT_CLUSTER;
    S.progress++;
    swapcontext(&t->ctx, &S.main_ctx);
}

/* ------------------------------------------------------------------------- */
/* mbarriers (mbarrier_init, mbarrier_arrive, mbarrier_test_wait and          */
/* mbarrier_try_wait_parity_shared, from max.gpu.sync)                         */
/* ------------------------------------------------------------------------- */

/* An mbarrier is 8 bytes of shared memory that counts arrivals, as PTX says:
 * mbarrier_init(bar, count) starts phase 0 needing `count` arrivals; each
 * mbarrier_arrive takes one, and returns a token naming the phase it arrived in;
 * the arrival that makes `count` completes the phase, and the barrier starts the
 * next one needing `count` again (it re-arms itself). mbarrier_test_wait(bar,
 * token) says whether the token's phase has completed, and never blocks: a
 * kernel spins on it. mbarrier_try_wait_parity_shared(bar, parity, ticks)
 * blocks until the phase of that parity completes (the current one when its
 * parity matches, else the one before, which has). PTX allows a token from the
 * current phase or the one just before it, nothing else.
 *
 * Here the barrier's state lives in a table, keyed by its address in the block's
 * shared memory; each block of a cluster has its own table and clocks (the blocks
 * of a cluster are alive at once, each with its own shared memory). A thread that
 * waits on a phase not complete yet is parked: the others run (a spin never hangs
 * the simulator), and it resumes when the phase completes. A test_wait that parked
 * returns false even so, as a GPU would have when it was called: a kernel that
 * tests once and goes on without looping is not waiting. When nothing else can
 * run, a parked test_wait is resumed once more to poll; if nothing moved since,
 * the wait can never complete: a finding (mbarrier_deadlock), never a timeout.
 *
 * Ordering: within a round (between two barrier() calls) the race detector knows
 * nothing is ordered. With mbarriers each thread has a clock, one more at each
 * arrival, and knows the clocks of the others of its block it waited for (vector
 * clocks): an arrival brings what its thread knows into the phase, a completed
 * wait takes what the phase's arrivals brought. An access is then ordered after
 * another thread's when the other's clock at that access is known. A wait that
 * returned false, or none at all, orders nothing: the reads after it race. (A
 * cluster barrier orders accesses on its own terms, see unordered(); an order
 * that needs both, one after the other, is not followed through.) */


static void enter_block(int rank);

/* The block at rank `rank` starts with no barriers, and its threads knowing nothing of
 * each other. */
static void mbar_block_begin(int rank) {
    S.nmbars[rank] = 0;
    S.vc_on[rank] = 0;
}

static void vc_enable(int rank) {
    if (S.vc_on[rank]) return;
    size_t need = (size_t)S.nthreads * S.nthreads;
    if (need > S.vc_cap[rank]) {
        xfree(S.vc[rank]);
        S.vc[rank] = xcalloc(need, sizeof(u32));
        S.vc_cap[rank] = need;
    }
    memset(S.vc[rank], 0, need * sizeof(u32));
    S.vc_on[rank] = 1;
}

static int mbar_index(int rank, uintptr_t addr) {
    for (int i = 0; i < S.nmbars[rank]; i++)
        if (S.mbars[rank][i].addr == addr) return i;
    return -1;
}

static i64 mbar_token(int index, const mbar_t *b) {
    return (i64)(((u64)(b->phase & 1) << 63) | (TOKEN_MAGIC << 52) | ((u64)(b->gen & 0xFF) << 44) |
                 ((u64)(index & 0xF) << 40) | ((u64)b->phase & 0xFFFFFFFFFFULL));
}

static finding_t *mbar_finding(const char *kind, u32 site, const mbar_t *b) {
    finding_t *f = finding(kind, -1, -1, site, b ? b->init_site : 0, NULL);
    if (f && f->events == 0 && b)
        snprintf(f->extra, sizeof f->extra, "\"needs\": %d, \"arrived\": %d, \"phase\": %lld", b->count, b->arrived,
                 (long long)b->phase);
    return f;
}

/* The phase's arrivals so far never completed it: when the block ends, or when the
 * barrier is initialised again (its count of arrivals starts afresh). */
static void mbar_leftover(mbar_t *b, int reinit) {
    if (b->gen == 0 || b->arrived == 0) return;
    finding_t *f = finding("mbarrier_incomplete", -1, -1, b->arrive_site, b->init_site, NULL);
    if (f && f->events == 0)
        snprintf(f->extra, sizeof f->extra, "\"needs\": %d, \"arrived\": %d, \"phase\": %lld, \"reinit\": %d",
                 b->count, b->arrived, (long long)b->phase, reinit);
    saw(f, S.block_linear * S.nthreads, 0);
}

/* The block at rank `rank` ended: arrivals its barriers still hold are findings. */
static void mbar_block_end(int rank) {
    enter_block(rank);
    for (int i = 0; i < S.nmbars[rank]; i++) mbar_leftover(&S.mbars[rank][i], 0);
}

/* The barrier at `addr`, used (arrive or wait) by the running thread: NULL when nothing
 * initialised it in this block. Its init must be ordered before the use. */
static mbar_t *mbar_use(uintptr_t addr, u32 site) {
    thread_t *t = current();
    int i = mbar_index(t->rank, addr);
    if (i < 0) {
        saw(finding("mbarrier_uninitialized", -1, -1, site, 0, NULL), t->gtid, 0);
        return NULL;
    }
    mbar_t *b = &S.mbars[t->rank][i];
    if (unordered(b->init_ep, b->init_tid, b->init_cl, b->init_clk)) {
        finding_t *f = mbar_finding("mbarrier_race", site, b);
        if (f && f->events == 0) f->other_thread = b->init_tid;
        saw(f, t->gtid, 0);
    }
    b->use_ep = S.epoch, b->use_tid = t->gtid, b->use_cl = t->arrived, b->use_clk = t->clk, b->use_site = site;
    return b;
}

void wbsim_mbar_init(i64 addr, i64 count, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    region_t *r = region_at((uintptr_t)addr);
    if (r != S.arena || alloc_at((uintptr_t)addr - S.arena->base) < 0)
        die("mbarrier_init (line %lld) must be given an mbarrier in shared memory: a stack_allocation with "
            "address_space=AddressSpace.SHARED", (long long)line);
    int i = mbar_index(t->rank, (uintptr_t)addr);
    if (i < 0) {
        if (S.nmbars[t->rank] == MAX_MBARS) die("more than %d mbarriers in one block", MAX_MBARS);
        i = S.nmbars[t->rank]++;
        memset(&S.mbars[t->rank][i].addr, 0, offsetof(mbar_t, cur));
        S.mbars[t->rank][i].addr = (uintptr_t)addr;
    }
    mbar_t *b = &S.mbars[t->rank][i];
    vc_enable(t->rank);
    if (b->cap < (size_t)S.nthreads) {
        xfree(b->cur);
        xfree(b->done);
        b->cur = xcalloc((size_t)S.nthreads, sizeof(u32));
        b->done = xcalloc((size_t)S.nthreads, sizeof(u32));
        b->cap = (size_t)S.nthreads;
    }
    if (b->gen > 0) {
        /* Initialised again: no other thread may still be using it, or initialising it. */
        u32 other = 0;
        int who = -1;
        if (unordered(b->use_ep, b->use_tid, b->use_cl, b->use_clk)) other = b->use_site, who = b->use_tid;
        else if (unordered(b->init_ep, b->init_tid, b->init_cl, b->init_clk)) other = b->init_site, who = b->init_tid;
        if (other) {
            finding_t *f = finding("mbarrier_race", -1, -1, site, other, NULL);
            if (f && f->events == 0) {
                f->other_thread = who;
                snprintf(f->extra, sizeof f->extra, "\"reinit\": 1");
            }
            saw(f, t->gtid, 0);
        }
        mbar_leftover(b, 1);
    }
    if (count < 1 || count >= (1 << 20)) {
        finding_t *f = finding("mbarrier_count", -1, -1, site, 0, NULL);
        if (f && f->events == 0) snprintf(f->extra, sizeof f->extra, "\"given\": %lld", (long long)count);
        saw(f, t->gtid, 0);
        if (count < 1) count = 1;
    }
    method_count(M_MBAR_INIT, site);
    b->gen++;
    b->count = (int)count;
    b->arrived = 0;
    b->phase = 0;
    b->init_site = site;
    b->arrive_site = 0;
    b->init_ep = S.epoch, b->init_tid = t->gtid, b->init_cl = t->arrived, b->init_clk = t->clk;
    b->use_ep = 0, b->use_tid = -1;
    memset(b->cur, 0, b->cap * sizeof(u32));
    memset(b->done, 0, b->cap * sizeof(u32));
    S.progress++;
}

i64 wbsim_mbar_arrive(i64 addr, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    mbar_t *b = mbar_use((uintptr_t)addr, site);
    if (!b) return 0;
    int index = (int)(b - S.mbars[t->rank]);
    i64 token = mbar_token(index, b);
    method_count(M_MBAR_ARRIVE, site);
    b->arrive_site = site;
    u32 *mine = vc_row(t);
    for (int u = 0; u < S.nthreads; u++)
        if (mine[u] > b->cur[u]) b->cur[u] = mine[u];
    if (t->clk > b->cur[t->linear]) b->cur[t->linear] = t->clk;
    t->clk++;
    b->arrived++;
    S.progress++;
    if (b->arrived >= b->count) {
        /* The phase completes; the barrier re-arms itself for the next one. Its waiters
         * are threads of this block. */
        memcpy(b->done, b->cur, (size_t)S.nthreads * sizeof(u32));
        memset(b->cur, 0, (size_t)S.nthreads * sizeof(u32));
        b->phase++;
        b->arrived = 0;
        thread_t *block = &S.threads[t->index - t->linear];
        for (int i = 0; i < S.nthreads; i++) {
            thread_t *w = &block[i];
            if (w->state == ST_AT_MBAR && w->mbar == index && (w->mbar_gen != b->gen || w->mbar_phase < b->phase))
                w->ready = 1;
        }
    }
    return token;
}

/* What a completed wait teaches the waiting thread: every clock the phase's arrivals brought. */
static void mbar_learn(thread_t *t, const mbar_t *b) {
    u32 *mine = vc_row(t);
    for (int u = 0; u < S.nthreads; u++)
        if (b->done[u] > mine[u]) mine[u] = b->done[u];
}

/* 1 once phase `target` of b has completed; else the thread parks until it has (or, for a
 * test_wait, until nothing else can run) and gets 0 back from a test_wait. */
static int mbar_wait(thread_t *t, mbar_t *b, i64 target, int blocking, u32 site) {
    if (target < b->phase) {
        mbar_learn(t, b);
        return 1;
    }
    t->state = ST_AT_MBAR;
    t->mbar = (int)(b - S.mbars[t->rank]);
    t->mbar_phase = target;
    t->mbar_gen = b->gen;
    t->mbar_blocking = blocking;
    t->mbar_site = site;
    swapcontext(&t->ctx, &S.main_ctx);
    if (blocking && b->gen == t->mbar_gen && target < b->phase) {
        mbar_learn(t, b);
        return 1;
    }
    return 0; /* a test_wait that had to park: false, as it was when called */
}

i64 wbsim_mbar_test_wait(i64 addr, i64 state, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    mbar_t *b = mbar_use((uintptr_t)addr, site);
    if (!b) return 1;
    int self = (int)(b - S.mbars[t->rank]);
    u64 s = (u64)state;
    i64 k = (i64)(s & 0xFFFFFFFFFFULL);
    int token = ((s >> 52) & 0x7FF) == TOKEN_MAGIC, index = (int)((s >> 40) & 0xF), gen = (int)((s >> 44) & 0xFF);
    int ok = token && index == self && gen == (b->gen & 0xFF) && (i64)(s >> 63) == (k & 1) &&
             k <= b->phase && k >= b->phase - 1;
    i64 target = k;
    if (!ok) {
        /* Not a token of this barrier's current or previous phase: PTX leaves the answer
         * undefined. A GPU reads a phase parity out of it (the top bit); so does this. */
        int mine = token && index == self, reinit = mine && gen != (b->gen & 0xFF);
        finding_t *f = finding("mbarrier_wrong_phase", -1, -1, site, reinit ? b->init_site : 0, NULL);
        if (f && f->events == 0)
            snprintf(f->extra, sizeof f->extra,
                     "\"needs\": %d, \"arrived\": %d, \"phase\": %lld, \"token\": %d, \"token_phase\": %lld, "
                     "\"reinit\": %d", b->count, b->arrived, (long long)b->phase, mine, mine ? (long long)k : -1LL,
                     reinit);
        saw(f, t->gtid, 0);
        target = (i64)(s >> 63) == (b->phase & 1) ? b->phase : b->phase - 1;
    }
    int done = mbar_wait(t, b, target, 0, site);
    if (done) method_count(M_MBAR_WAIT, site);
    return done;
}

void wbsim_mbar_wait_parity(i64 addr, i64 parity, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    mbar_t *b = mbar_use((uintptr_t)addr, site);
    if (!b) return;
    i64 target = (parity & 1) == (b->phase & 1) ? b->phase : b->phase - 1;
    if (mbar_wait(t, b, target, 1, site)) method_count(M_MBAR_WAIT, site);
}

/* Nothing can run, and threads are parked at mbarrier waits no arrival can complete any
 * more: say where the first of them (in the cluster) waits, what its barrier has, and
 * where the others of its block are (at_barrier counts barrier() and cluster_wait()
 * alike: neither lets a thread arrive). */
static void mbar_stuck(void) {
    int total = S.csize * S.nthreads, first = -1;
    for (int i = 0; i < total && first < 0; i++)
        if (S.threads[i].state == ST_AT_MBAR) first = i;
    if (first < 0) return;
    int rank = S.threads[first].rank, base = rank * S.nthreads;
    u32 sites[8] = {0};
    int counts[8] = {0}, firsts[8] = {0}, nsites = 0, parked = 0, finished = 0, at_barrier = 0;
    for (int i = 0; i < S.nthreads; i++) {
        thread_t *t = &S.threads[base + i];
        u32 site = 0;
        if (t->state == ST_AT_MBAR) {
            site = t->mbar_site;
            parked++;
        } else if (t->state == ST_FINISHED) {
            finished++;
        } else if (t->state == ST_AT_BARRIER) {
            site = t->barrier_site;
            at_barrier++;
        } else if (t->state == ST_AT_CLUSTER) {
            site = t->cluster_site;
            at_barrier++;
        } else if (t->state == ST_AT_WARP) {
            site = t->warp_site;
        }
        if (!site) continue;
        int j = 0;
        while (j < nsites && sites[j] != site) j++;
        if (j == nsites && nsites < 8) sites[nsites] = site, counts[nsites] = 0, firsts[nsites++] = i;
        if (j < nsites) counts[j]++;
    }
    enter_block(rank);
    mbar_t *b = &S.mbars[rank][S.threads[first].mbar];
    finding_t *f = finding("mbarrier_deadlock", -1, -1, S.threads[first].mbar_site, b->init_site, NULL);
    if (!f) return;
    int n = snprintf(f->extra, sizeof f->extra,
                     "\"needs\": %d, \"arrived\": %d, \"phase\": %lld, \"parked\": %d, \"finished\": %d, "
                     "\"at_barrier\": %d, \"waits\": [", b->count, b->arrived, (long long)b->phase, parked, finished,
                     at_barrier);
    for (int j = 0; j < nsites && n < 400; j++)
        n += snprintf(f->extra + n, sizeof f->extra - (size_t)n, "%s[%u, %d, %d]", j ? ", " : "", sites[j], counts[j],
                      firsts[j]);
    snprintf(f->extra + n, sizeof f->extra - (size_t)n, "]");
    f->block = S.block_linear;
    f->round = S.round;
    saw(f, S.threads[first].gtid, 0);
}

/* ------------------------------------------------------------------------- */
/* Barriers that never open: barrier() and cluster_wait() (mbarriers: above) */
/* ------------------------------------------------------------------------- */

/* Which barrier() the waiting threads of the block at rank `rank` wait at, and where the
 * finished ones ended. */
static void stuck(int rank, int waiting, int finished) {
    char extra[512];
    int n = 0, base = rank * S.nthreads;
    u32 sites[8] = {0};
    int counts[8] = {0}, firsts[8] = {0}, nsites = 0;
    enter_block(rank);
    for (int i = 0; i < S.nthreads; i++) {
        thread_t *t = &S.threads[base + i];
        if (t->state != ST_AT_BARRIER) continue;
        int j = 0;
        while (j < nsites && sites[j] != t->barrier_site) j++;
        if (j == nsites && nsites < 8) {
            sites[nsites] = t->barrier_site;
            counts[nsites] = 0;
            firsts[nsites] = i;
            nsites++;
        }
        if (j < nsites) counts[j]++;
    }
    int first_finished = -1;
    for (int i = 0; i < S.nthreads && first_finished < 0; i++)
        if (S.threads[base + i].state == ST_FINISHED) first_finished = i;
    const char *kind = finished > 0 ? "divergent_barrier" : "barrier_mismatch";
    finding_t *f = finding(kind, -1, -1, sites[0], nsites > 1 ? sites[1] : 0, NULL);
    if (!f) return;
    n += snprintf(extra + n, sizeof extra - (size_t)n,
                  "\"finished\": %d, \"waiting\": %d, \"finished_thread\": %d, \"waits\": [", finished, waiting,
                  first_finished);
    for (int j = 0; j < nsites && n < 400; j++)
        n += snprintf(extra + n, sizeof extra - (size_t)n, "%s[%u, %d, %d]", j ? ", " : "", sites[j], counts[j],
                      firsts[j]);
    snprintf(extra + n, sizeof extra - (size_t)n, "]");
    snprintf(f->extra, sizeof f->extra, "%s", extra);
    f->block = S.block_linear;
    f->round = S.round;
    saw(f, S.block_linear * S.nthreads + firsts[0], 0);
}

/* No thread of the cluster can go on, and some wait at a cluster_wait(): some threads
 * finished without the arrival the waiters need (divergent_cluster_barrier), or threads
 * wait at barriers that wait for each other (cluster_barrier_mismatch). `waits` lists
 * each place threads wait at (cluster waits and barrier() calls alike) with how many
 * wait there and the first of them (a global thread number). */
static void cluster_stuck(void) {
    int total = S.csize * S.nthreads, need = INT32_MAX, finished = 0, waiting = 0, first_finished = -1;
    for (int i = 0; i < total; i++) {
        thread_t *t = &S.threads[i];
        if (t->state == ST_AT_CLUSTER && t->waited + 1 < need) need = t->waited + 1;
    }
    for (int i = 0; i < total; i++) {
        thread_t *t = &S.threads[i];
        if (t->state == ST_FINISHED && t->arrived < need) {
            finished++;
            if (first_finished < 0) first_finished = t->gtid;
        }
    }
    u32 sites[8] = {0};
    int counts[8] = {0}, firsts[8] = {0}, nsites = 0, cluster_first = -1, cluster_sites = 0;
    for (int pass = 0; pass < 2; pass++) { /* cluster waits first: the finding is named by one */
        if (pass == 1) cluster_sites = nsites;
        for (int i = 0; i < total; i++) {
            thread_t *t = &S.threads[i];
            int at_cluster = t->state == ST_AT_CLUSTER;
            if (pass == 0 ? !at_cluster : t->state != ST_AT_BARRIER) continue;
            u32 site = at_cluster ? t->cluster_site : t->barrier_site;
            if (at_cluster && cluster_first < 0) cluster_first = i;
            waiting++;
            int j = 0;
            while (j < nsites && sites[j] != site) j++;
            if (j == nsites && nsites < 8) {
                sites[nsites] = site;
                counts[nsites] = 0;
                firsts[nsites] = t->gtid;
                nsites++;
            }
            if (j < nsites) counts[j]++;
        }
    }
    enter_block(cluster_first >= 0 ? S.threads[cluster_first].rank : 0);
    const char *kind = finished > 0 ? "divergent_cluster_barrier" : "cluster_barrier_mismatch";
    finding_t *f = finding(kind, -1, -1, sites[0], nsites > 1 ? sites[1] : 0, NULL);
    if (!f) return;
    int n = snprintf(f->extra, sizeof f->extra,
                     "\"finished\": %d, \"waiting\": %d, \"finished_thread\": %d, \"cluster_size\": %d, "
                     "\"cluster_waits\": %d, \"waits\": [",
                     finished, waiting, first_finished, S.csize, cluster_sites);
    for (int j = 0; j < nsites && n < 400; j++)
        n += snprintf(f->extra + n, sizeof f->extra - (size_t)n, "%s[%u, %d, %d]", j ? ", " : "", sites[j],
                      counts[j], firsts[j]);
    snprintf(f->extra + n, sizeof f->extra - (size_t)n, "]");
    saw(f, firsts[0], 0);
}
