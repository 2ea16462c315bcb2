/* wbsim_parts/shadow.c: sites, findings, simulator memory (regions and their shadows), what
 * orders two accesses, and on_access, which checks each access against the shadow:
 * races, reads of memory nothing wrote, accesses outside every buffer or array.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* Sites: where in the compiled code an access or a barrier was              */
/* ------------------------------------------------------------------------- */

static u32 site_of(void *pc, void *caller) {
    uintptr_t p = (uintptr_t)pc - S.exe_base, c = caller ? (uintptr_t)caller - S.exe_base : 0;
    if (S.site_hash_cap == 0 || S.nsites * 2 >= S.site_hash_cap) {
        u32 cap = S.site_hash_cap ? S.site_hash_cap * 2 : 4096;
        u32 *table = xcalloc(cap, sizeof(u32));
        for (u32 i = 1; i <= S.nsites; i++) {
            u64 h = (S.sites[i].pc * 0x9E3779B97F4A7C15ULL) ^ (S.sites[i].caller * 0xC2B2AE3D27D4EB4FULL);
            u32 k = (u32)(h >> 20) & (cap - 1);
            while (table[k]) k = (k + 1) & (cap - 1);
            table[k] = i;
        }
        xfree(S.site_hash);
        S.site_hash = table;
        S.site_hash_cap = cap;
    }
    u64 h = (p * 0x9E3779B97F4A7C15ULL) ^ (c * 0xC2B2AE3D27D4EB4FULL);
    u32 k = (u32)(h >> 20) & (S.site_hash_cap - 1);
    while (S.site_hash[k]) {
        site_t *s = &S.sites[S.site_hash[k]];
        if (s->pc == p && s->caller == c) return S.site_hash[k];
        k = (k + 1) & (S.site_hash_cap - 1);
    }
    if (S.nsites + 1 >= S.sites_cap) {
        S.sites_cap = S.sites_cap ? S.sites_cap * 2 : 1024;
        S.sites = xrealloc(S.sites, S.sites_cap * sizeof(site_t));
    }
    S.nsites++;
    memset(&S.sites[S.nsites], 0, sizeof(site_t));
    S.sites[S.nsites].pc = p;
    S.sites[S.nsites].caller = c;
    S.site_hash[k] = S.nsites;
    return S.nsites;
}

/* A site the compiler named (call_location in wbsim.mojo): barriers and shared arrays,
 * whose identity must not depend on how the optimiser laid out the code. */
static u32 source_site(const char *file, i64 file_len, i64 line, i64 col) {
    for (u32 i = S.nsites; i >= 1 && i + 64 > S.nsites; i--) {
        site_t *s = &S.sites[i];
        if (s->file == file && s->line == line && s->col == col) return i;
    }
    u32 id = site_of((void *)(uintptr_t)(S.exe_base + ((u64)line << 32) + (u64)col + 0x8000000000000000ULL),
                     (void *)(uintptr_t)(S.exe_base + (uintptr_t)file));
    site_t *s = &S.sites[id];
    s->file = file;
    s->file_len = (int)file_len;
    s->line = (int)line;
    s->col = (int)col;
    return id;
}

static void *caller_of(thread_t *t) {
    return t && t->depth > 0 && t->depth <= SHADOW_DEPTH ? t->stack[t->depth - 1] : NULL;
}

/* ------------------------------------------------------------------------- */
/* Findings                                                                  */
/* ------------------------------------------------------------------------- */

static finding_t *finding(const char *kind, int region, int alloc, u32 site, u32 other_site, const char *hazard) {
    for (int i = 0; i < S.nfindings; i++) {
        finding_t *f = &S.findings[i];
        if (f->case_index == S.case_index && f->region == region && f->alloc == alloc && f->site == site &&
            f->other_site == other_site && !strcmp(f->kind, kind) && !strcmp(f->hazard, hazard ? hazard : ""))
            return f;
    }
    if (S.nfindings >= MAX_FINDINGS) {
        S.dropped++;
        return NULL;
    }
    finding_t *f = &S.findings[S.nfindings++];
    memset(f, 0, sizeof *f);
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    snprintf(f->hazard, sizeof f->hazard, "%s", hazard ? hazard : "");
    snprintf(f->launch, sizeof f->launch, "%s", S.label);
    f->case_index = S.case_index;
    f->region = region;
    f->alloc = alloc;
    f->site = site;
    f->other_site = other_site;
    f->other_thread = -1;
    f->block = S.block_linear;
    f->round = S.round;
    f->tid_min = INT64_MAX;
    f->tid_max = -1;
    f->index_min = INT64_MAX;
    f->index_max = INT64_MIN;
    f->start_min = INT64_MAX;
    f->start_max = INT64_MIN;
    if (alloc >= 0 && alloc < S.nallocs) {
        alloc_t *a = &S.allocs[alloc];
        f->array_rank = a->rank;
        memcpy(f->array_shape, a->shape, sizeof f->array_shape);
        f->array_elem = a->elem;
        f->array_site = a->site;
        f->size = (i64)(a->bytes / a->elem);
    } else if (region >= 0 && region < S.nregions) {
        f->size = (i64)S.regions[region].count;
    }
    return f;
}

/* One more thread (and element) seen doing what `f` describes. */
static void saw(finding_t *f, int tid, i64 index) {
    if (!f) return;
    if (f->events == 0 && S.cur) f->block = S.cur == &S.cpu ? -1 : S.block_linear;
    f->events++;
    if (index < f->index_min) f->index_min = index;
    if (index > f->index_max) f->index_max = index;
    if (f->events == 1) f->index = index;
    if (tid < 0) {
        if (f->threads == 0) f->threads = 1;
        return;
    }
    size_t need = (size_t)tid + 1;
    if (need > f->seen_bits) {
        size_t bits = need < 1024 ? 1024 : need * 2;
        uint8_t *seen = xcalloc(bits / 8 + 1, 1);
        if (f->seen) {
            memcpy(seen, f->seen, f->seen_bits / 8 + 1);
            xfree(f->seen);
        }
        f->seen = seen;
        f->seen_bits = bits;
    }
    if (f->seen[tid / 8] & (1 << (tid % 8))) return;
    f->seen[tid / 8] |= (uint8_t)(1 << (tid % 8));
    f->threads++;
    if (tid < f->tid_min) f->tid_min = tid;
    if (tid > f->tid_max) f->tid_max = tid;
    if (f->nfirst < FIRST_THREADS) f->first[f->nfirst++] = tid;
}

/* ------------------------------------------------------------------------- */
/* Simulator memory                                                          */
/* ------------------------------------------------------------------------- */

static void commit(uintptr_t lo, uintptr_t hi) {
    lo &= ~(PAGE - 1);
    hi = page_up(hi);
    if (hi <= lo) return;
    if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) != 0) die("could not map simulator memory");
    memset((void *)lo, 0xFF, hi - lo);
}

static void heap_init(void) {
    void *p = mmap(NULL, HEAP_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("could not reserve address space for the simulator");
    S.heap_lo = (uintptr_t)p;
    S.heap_hi = S.heap_lo + HEAP_RESERVE;
    S.heap_next = S.heap_lo + HEAP_RESERVE / 2; /* far from both ends: a wild index still lands inside */
}

/* A region of `bytes` with gaps before and after that hold 0xFF and belong to nobody. */
static region_t *new_region(const char *name, size_t name_len, int role, size_t count, size_t elem, int rank,
                            const i64 *shape) {
    if (S.nregions >= MAX_REGIONS) die("too many buffers in one case");
    size_t bytes = count * elem;
    size_t gap = page_up(bytes) > 65536 ? page_up(bytes) : 65536;
    uintptr_t data = S.heap_next + gap;
    uintptr_t end = data + page_up(bytes ? bytes : 1);
    if (end + gap >= S.heap_hi) die("the simulator ran out of address space");
    commit(S.heap_next, end + gap);
    S.heap_next = end + gap;
    region_t *r = &S.regions[S.nregions++];
    memset(r, 0, sizeof *r);
    r->base = data;
    r->bytes = bytes;
    r->elem = elem;
    r->count = count;
    r->role = role;
    r->rank = rank;
    for (int i = 0; i < 3; i++) r->shape[i] = shape[i];
    if (name_len >= sizeof r->name) name_len = sizeof r->name - 1;
    memcpy(r->name, name, name_len);
    r->shadow = xcalloc(bytes ? bytes : 1, sizeof(cell_t));
    return r;
}

static void reset_shadow(region_t *r, size_t from, size_t to, int initialized) {
    for (size_t i = from; i < to; i++) {
        cell_t *c = &r->shadow[i];
        memset(c, 0, sizeof *c);
        c->w_tid = c->r_tid = c->r2_tid = -1;
        c->flags = initialized ? F_INIT : 0;
    }
}

static region_t *region_at(uintptr_t a) {
    int lo = 0, hi = S.nregions - 1;
    while (lo <= hi) { /* regions are in address order: the heap only grows within a case */
        int mid = (lo + hi) / 2;
        region_t *r = &S.regions[mid];
        if (a < r->base) hi = mid - 1;
        else if (a >= r->base + (r->bytes ? r->bytes : 1)) lo = mid + 1;
        else return r;
    }
    return NULL;
}

/* The region an address outside every region belongs with: the nearest one. */
static region_t *nearest(uintptr_t a) {
    region_t *best = NULL;
    u64 best_d = UINT64_MAX;
    for (int i = 0; i < S.nregions; i++) {
        region_t *r = &S.regions[i];
        u64 d = a < r->base ? r->base - a : a < r->base + r->bytes ? 0 : a - (r->base + r->bytes);
        if (d < best_d) {
            best_d = d;
            best = r;
        }
    }
    return best;
}

static i64 element_of(region_t *r, uintptr_t a) {
    i64 off = (i64)(a - r->base);
    i64 e = (i64)r->elem;
    return off >= 0 ? off / e : -((-off + e - 1) / e);
}

/* Shared arrays: which allocation of the block's arena an offset lies in. */
static int alloc_at(size_t offset) {
    for (int k = 0; k < S.nallocs; k++)
        if (offset >= S.allocs[k].offset && offset < S.allocs[k].offset + S.allocs[k].bytes) return k;
    return -1;
}

static int alloc_nearest(size_t offset) {
    int best = -1;
    size_t best_d = SIZE_MAX;
    for (int k = 0; k < S.nallocs; k++) {
        alloc_t *al = &S.allocs[k];
        size_t d = offset < al->offset                ? al->offset - offset
                   : offset < al->offset + al->bytes ? 0
                                                     : offset - (al->offset + al->bytes);
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

/* ------------------------------------------------------------------------- */
/* Watching accesses                                                         */
/* ------------------------------------------------------------------------- */

#define EP(launch, block, round) (((u64)(launch) << 40) | ((u64)(block) << 20) | (u64)(round))
#define EP_LAUNCH(ep) ((ep) >> 40)
#define EP_BLOCK(ep) (((ep) >> 20) & 0xFFFFF)
#define EP_ROUND(ep) ((ep) & 0xFFFFF)

/* The cluster a block (linear number) belongs to, in this launch. */
static int cluster_of(int block) {
    int bx = block % S.gx, by = (block / S.gx) % S.gy, bz = block / (S.gx * S.gy);
    int nx = S.gx / S.cx, ny = S.gy / S.cy;
    return bx / S.cx + (by / S.cy) * nx + (bz / S.cz) * nx * ny;
}

/* A thread of the cluster running now, by its global number; NULL for another cluster's. */
static thread_t *thread_of(int gtid) {
    int block = gtid / S.nthreads;
    if (cluster_of(block) != S.cluster) return NULL;
    int bx = block % S.gx, by = (block / S.gx) % S.gy, bz = block / (S.gx * S.gy);
    int rank = bx % S.cx + (by % S.cy) * S.cx + (bz % S.cz) * S.cx * S.cy;
    return &S.threads[rank * S.nthreads + gtid % S.nthreads];
}

/* The cluster phase whose wait makes visible what thread `t` did when it had made
 * `arrived` arrivals: its next arrival that releases (cluster_arrive(), not the relaxed
 * one). One it has not made yet is past every wait that can have completed. */
static int next_release(const thread_t *t, int arrived) {
    for (int n = arrived + 1; n <= t->arrived; n++)
        if (n > 64 || !(t->relaxed & (1ULL << (n - 1)))) return n;
    return t->arrived + 1;
}

/* What thread t knows of the clock of each thread of its block (see "mbarriers"). */
static u32 *vc_row(const thread_t *t) { return S.vc[t->rank] + (size_t)t->linear * S.nthreads; }

/* Whether an earlier access (epoch, thread, the cluster arrivals it had made, its own
 * mbarrier clock) and this one may happen in either order on a GPU: another thread, in
 * the same launch, and either another cluster's block, or no barrier between them: not
 * a barrier() of their block (another round), nor an mbarrier phase of their block that
 * the other thread arrived at after its access and this one waited for since (this
 * thread's clocks know the other's clock), nor a cluster barrier whose wait this thread
 * passed after the other thread's arrival released the access. */
static int unordered(u64 ep, int tid, int arrived, u32 clk) {
    if (tid < 0 || tid == S.cur->gtid || ep == 0) return 0;
    if (EP_LAUNCH(ep) != EP_LAUNCH(S.epoch)) return 0;
    if (EP_BLOCK(ep) == EP_BLOCK(S.epoch)) {
        if (EP_ROUND(ep) != EP_ROUND(S.epoch)) return 0;
        if (S.vc_on[S.cur->rank] && vc_row(S.cur)[tid % S.nthreads] >= clk) return 0;
    } else if (cluster_of((int)EP_BLOCK(ep)) != S.cluster) {
        return 1;
    }
    const thread_t *other = thread_of(tid);
    if (!other) return 1;
    return next_release(other, arrived) > S.cur->waited;
}

static uint16_t arrivals(void) { return (uint16_t)(S.cur->arrived < 65535 ? S.cur->arrived : 65535); }

static i64 floor_div(i64 x, i64 e) { return x >= 0 ? x / e : -((-x + e - 1) / e); }

/* One more access [a, a + n) seen outside the buffer or array [base, base + bytes) it
 * began in or belongs with: the elements of it that lie outside (a vector that starts
 * inside and runs past the end: only its elements past the end), and where it began. */
static void saw_outside(finding_t *f, int tid, uintptr_t base, size_t bytes, size_t elem, uintptr_t a, size_t n) {
    if (!f) return;
    i64 e = (i64)(elem ? elem : 1), rel = (i64)(a - base), end = rel + (i64)n, lo, hi;
    int before = rel < 0;
    if (before) {
        lo = floor_div(rel, e);
        hi = floor_div((end < 0 ? end : 0) - 1, e);
    } else {
        lo = floor_div(rel > (i64)bytes ? rel : (i64)bytes, e);
        hi = floor_div(end - 1, e);
    }
    if (f->events == 0) f->before = before;
    saw(f, tid, lo);
    if (hi > f->index_max) f->index_max = hi;
    i64 start = floor_div(rel, e);
    if (start < f->start_min) f->start_min = start;
    if (start > f->start_max) f->start_max = start;
    f->elem = (int)e;
    if ((int)n > f->access_bytes) f->access_bytes = (int)n;
}

/* An access that is not wholly inside one buffer or shared array. `from`, `from_alloc`:
 * the region (and shared array) its first byte lies in, if any: a vector that begins
 * in `a` and runs past its end is about `a`, whatever lies after it. */
static void outside(uintptr_t a, size_t n, int write, u32 site, region_t *from, int from_alloc) {
    thread_t *t = S.cur;
    if (a - S.heap_lo < HEAP_RESERVE && n <= S.heap_lo + HEAP_RESERVE - a &&
        (a + n > S.committed_hi || a < S.heap_lo + HEAP_RESERVE / 2)) {
        /* Wild, but inside the reservation: give the pages to the kernel (0xFF) so it goes on. */
        uintptr_t lo = a & ~(PAGE - 1), hi = page_up(a + n);
        if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) == 0) memset((void *)lo, 0xFF, hi - lo);
    }
    region_t *arena = from && from->role == ROLE_SHARED ? from : S.arena;
    int shared = from ? from->role == ROLE_SHARED
                      : arena && !S.run.cpu_mode && a + n > arena->base - 65536 &&
                            a < arena->base + arena->bytes + 65536;
    if (shared && !S.run.cpu_mode) {
        size_t off = a < arena->base ? 0 : a - arena->base;
        int k = from_alloc >= 0 ? from_alloc : alloc_nearest(off);
        finding_t *f = finding(write ? "shared_out_of_bounds" : "shared_read_out_of_bounds", -1, k, site, 0, NULL);
        if (f && k >= 0) {
            alloc_t *al = &S.allocs[k];
            f->size = (i64)(al->bytes / al->elem);
            f->write = write;
            saw_outside(f, t->gtid, arena->base + al->offset, al->bytes, al->elem, a, n);
        } else {
            saw(f, t->gtid, (i64)off);
        }
        return;
    }
    region_t *r = from ? from : nearest(a);
    if (!r) return;
    finding_t *f = finding(write ? "out_of_bounds" : "read_out_of_bounds", (int)(r - S.regions), -1, site, 0, NULL);
    if (f) {
        f->size = (i64)r->count;
        f->write = write;
    }
    saw_outside(f, t->gtid, r->base, r->bytes, r->elem, a, n);
}

static const struct pending_s *pending_at(uintptr_t a) {
    for (int i = S.npending - 1; i >= 0; i--)
        if (a >= S.pendings[i].dst && a < S.pendings[i].dst + (uintptr_t)S.pendings[i].bytes) return &S.pendings[i];
    return NULL;
}

/* Counted as it is checked: count() is in wbsim_parts/traffic.c. */
static u32 count(int shared, int write, uintptr_t a, size_t n, void *pc, u32 given);

/* One access of the running thread. `given` is its site when the simulator knows it
 * already (an async copy landing: the line of the copy), else 0: from `pc`. */
static void on_access(uintptr_t a, size_t n, int write, int atomic, void *pc, u32 given) {
    thread_t *t = S.cur;
    region_t *r = region_at(a);
    u32 site = given;
    if (!r || a + n > r->base + r->bytes) {
        if (!site) site = site_of(pc, caller_of(t));
        outside(a, n, write, site, r, r && r->role == ROLE_SHARED ? alloc_at(a - r->base) : -1);
        count(0, write, a, n, pc, site);
        return;
    }
    int shared = r->role == ROLE_SHARED;
    size_t off = a - r->base;
    int k = -1;
    if (shared) {
        k = alloc_at(off);
        if (k < 0 || r != S.arena || off + n > S.allocs[k].offset + S.allocs[k].bytes) {
            if (!site) site = site_of(pc, caller_of(t));
            outside(a, n, write, site, r, k);
            count(1, write, a, n, pc, site);
            return;
        }
    }
    site = count(shared, write, a, n, pc, site);
    int in_kernel = !S.run.cpu_mode;
    int region_id = shared ? -1 : (int)(r - S.regions);
    int reported = 0;
    for (size_t i = 0; i < n; i++) {
        cell_t *c = &r->shadow[off + i];
        if (!write) {
            if ((c->flags & F_PENDING) && in_kernel && !reported) {
                /* An async copy's destination, read before the copying thread waited for it:
                 * on a GPU the old bytes or the new ones, whenever it lands (NaN here). */
                if (!site) site = site_of(pc, caller_of(t));
                const struct pending_s *p = pending_at(a + i);
                finding_t *f = finding("async_read_before_wait", region_id, k, site, p ? p->site : 0, NULL);
                if (f && f->events == 0 && p) f->other_thread = p->gtid;
                saw(f, t->gtid, (i64)((off - S.allocs[k].offset) / S.allocs[k].elem));
                reported = 1;
            }
            if (!(c->flags & F_INIT) && !reported) {
                if (!site) site = site_of(pc, caller_of(t));
                finding_t *f = finding("uninitialized_read", region_id, k, site, 0, NULL);
                if (f) f->size = shared ? (i64)(S.allocs[k].bytes / S.allocs[k].elem) : (i64)r->count;
                saw(f, t->gtid, shared ? (i64)((off - S.allocs[k].offset) / S.allocs[k].elem) : element_of(r, a));
                reported = 1;
            }
            if (in_kernel && !reported && unordered(c->w_ep, c->w_tid, c->w_cl, c->w_clk) &&
                !(atomic && (c->flags & F_ATOMIC))) {
                if (!site) site = site_of(pc, caller_of(t));
                finding_t *f = finding(shared ? "shared_race" : "global_race", region_id, k, site, c->w_site,
                                       "read-after-write");
                if (f && f->events == 0) f->other_thread = c->w_tid;
                saw(f, t->gtid, shared ? (i64)((off - S.allocs[k].offset) / S.allocs[k].elem) : element_of(r, a));
                reported = 1;
            }
            if (in_kernel) {
                if (!site) site = site_of(pc, caller_of(t));
                if (c->r_ep != S.epoch) {
                    if (EP_LAUNCH(c->r_ep) == EP_LAUNCH(S.epoch) && c->r_ep && EP_BLOCK(c->r_ep) != EP_BLOCK(S.epoch)) {
                        /* Another block read it in this launch. Of this block's cluster: a
                         * cluster barrier may order a later write after it (folded into
                         * xrel); of another cluster: nothing can. */
                        const thread_t *r1 = cluster_of((int)EP_BLOCK(c->r_ep)) == S.cluster ? thread_of(c->r_tid)
                                                                                              : NULL;
                        if (r1) {
                            int n = next_release(r1, c->r_cl);
                            const thread_t *r2 = c->r2_tid >= 0 ? thread_of(c->r2_tid) : NULL;
                            if (r2 && next_release(r2, c->r2_cl) > n) n = next_release(r2, c->r2_cl);
                            if (n > c->xrel) c->xrel = (uint16_t)(n < 65535 ? n : 65535);
                        } else {
                            c->flags |= F_OTHER_BLOCK_READ;
                        }
                    } else if (EP_LAUNCH(c->r_ep) != EP_LAUNCH(S.epoch)) {
                        c->flags &= (uint8_t)~F_OTHER_BLOCK_READ;
                        c->xrel = 0;
                    }
                    c->r_ep = S.epoch;
                    c->r_tid = t->gtid;
                    c->r_site = site;
                    c->r_cl = arrivals();
                    c->r_clk = t->clk;
                    c->r2_tid = -1;
                } else if (c->r_tid == t->gtid) {
                    c->r_cl = arrivals(); /* its latest read is the one a later write must come after */
                    c->r_clk = t->clk;
                } else if (c->r2_tid < 0 || c->r2_tid == t->gtid) {
                    c->r2_tid = t->gtid;
                    c->r2_site = site;
                    c->r2_cl = arrivals();
                    c->r2_clk = t->clk;
                } else if (S.vc_on[t->rank]) {
                    /* Both kept readers: one an mbarrier ordered before this read gives way to it. */
                    if (!unordered(c->r_ep, c->r_tid, c->r_cl, c->r_clk)) {
                        c->r_tid = t->gtid, c->r_site = site, c->r_cl = arrivals(), c->r_clk = t->clk;
                    } else if (!unordered(c->r_ep, c->r2_tid, c->r2_cl, c->r2_clk)) {
                        c->r2_tid = t->gtid, c->r2_site = site, c->r2_cl = arrivals(), c->r2_clk = t->clk;
                    }
                }
            }
        } else {
            if (in_kernel && !reported) {
                const char *hazard = NULL;
                int other = -1;
                u32 other_site = 0;
                if (unordered(c->w_ep, c->w_tid, c->w_cl, c->w_clk) && !(atomic && (c->flags & F_ATOMIC))) {
                    hazard = "write-write", other = c->w_tid, other_site = c->w_site;
                } else if (c->r_ep && EP_LAUNCH(c->r_ep) == EP_LAUNCH(S.epoch)) {
                    if (unordered(c->r_ep, c->r_tid, c->r_cl, c->r_clk))
                        hazard = "write-after-read", other = c->r_tid, other_site = c->r_site;
                    else if (c->r2_tid >= 0 && unordered(c->r_ep, c->r2_tid, c->r2_cl, c->r2_clk))
                        hazard = "write-after-read", other = c->r2_tid, other_site = c->r2_site;
                    else if (!shared && ((c->flags & F_OTHER_BLOCK_READ) || c->xrel > t->waited))
                        hazard = "write-after-read", other = -1, other_site = c->r_site;
                }
                if (hazard) {
                    if (!site) site = site_of(pc, caller_of(t));
                    finding_t *f = finding(shared ? "shared_race" : "global_race", region_id, k, site, other_site,
                                           hazard);
                    if (f && f->events == 0) f->other_thread = other;
                    saw(f, t->gtid, shared ? (i64)((off - S.allocs[k].offset) / S.allocs[k].elem) : element_of(r, a));
                    reported = 1;
                }
            }
            if (!site) site = site_of(pc, caller_of(t));
            c->w_ep = S.epoch;
            c->w_tid = t->gtid;
            c->w_clk = t->clk;
            c->w_site = site;
            c->w_cl = arrivals();
            c->writes++;
            c->flags = (uint8_t)((c->flags | F_INIT) & ~F_ATOMIC) | (atomic ? F_ATOMIC : 0);
        }
    }
}
