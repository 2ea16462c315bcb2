/* wbsim_parts/traffic.c: memory traffic (each warp-wide request priced by NVIDIA's rules),
 * methods (how a launch did its work), and count(), which counts every access of the
 * first repeat per thread and per site. Its tables are in wbsim_parts/state.c.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* Memory traffic: what each warp-wide access would cost a GPU               */
/* ------------------------------------------------------------------------- */

/* A GPU serves the 32 lanes of a warp that execute one load or store together, as one
 * request. The simulator runs one thread at a time, so it puts the request back
 * together: the k-th access a lane makes at one instruction belongs with the k-th
 * access of every other lane of its warp at that instruction. When the block is done,
 * each request is priced by NVIDIA's rules, as Nsight Compute counts them (docs/ncu.md
 * has the GPU's own counts beside these):
 * - global memory moves in 32-byte sectors: a request costs the distinct sectors its
 *   lanes touch (l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st); at best, its
 *   distinct bytes packed into whole sectors;
 * - shared memory has 32 banks of 4 bytes and moves 128 bytes a wavefront: a request
 *   of 4 bytes a lane (or less) is one phase of 32 lanes, of 8 bytes two phases of 16
 *   lanes, of 16 bytes four phases of 8; each phase takes as many wavefronts as its
 *   busiest bank has distinct 4-byte words (lanes reading one word share it)
 *   (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st). At best, one wavefront a
 *   phase: a 128-bit load of a whole warp needs 4 and has no conflict; a load of one
 *   address by the whole warp (a broadcast) takes 1 wavefront up to 8 bytes and 2 at 16,
 *   as ncu counted on an H200 (stores are phased as above). Every wavefront
 *   past that is a bank conflict (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st).
 * One access is one instruction of a GPU only where a GPU could make it so: an access
 * wider than 16 bytes is split into 16-byte pieces (the widest a thread moves at once),
 * a global one the compiler did not know to be aligned (TSan's __tsan_unaligned_*) into
 * 4-byte pieces (NVPTX splits such a vector into its floats; a shared array's alignment it
 * knows: ncu on an H200 saw one instruction there), and one whose address is not a multiple of its width into pieces as wide as the address allows
 * (a misaligned vector access is a fault on a GPU: the compiler must have split it).
 * Each piece is a request of its own. Counted in the first repeat, like the budgets'. */

/* Set by TSan's __tsan_unaligned_* entry points around their access: the compiler did not
 * know it to be aligned to its width (a GPU build splits such a vector into its floats). */
static int traffic_unaligned;

static u64 mix(u64 k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

/* The slot for `key` in an open-addressed table of `cap` (a power of two). */
static slot_t *slot(slot_t *table, u32 cap, u64 key) {
    u32 k = (u32)mix(key) & (cap - 1);
    while (table[k].key && table[k].key != key) k = (k + 1) & (cap - 1);
    return &table[k];
}

static slot_t *grow(slot_t *table, u32 *cap) {
    u32 old = *cap, bigger = old ? old * 2 : 4096;
    slot_t *fresh = xcalloc(bigger, sizeof(slot_t));
    for (u32 i = 0; i < old; i++)
        if (table[i].key) *slot(fresh, bigger, table[i].key) = table[i];
    xfree(table);
    *cap = bigger;
    return fresh;
}

/* One piece of an access: the k-th the thread made at this site joins the k-th of its warp's other lanes. */
static void traffic_piece(int shared, int write, uintptr_t a, size_t n, u32 site) {
    thread_t *t = S.cur;
    if (T.seen_n * 2 >= T.seen_cap) T.seen = grow(T.seen, &T.seen_cap);
    slot_t *mine = slot(T.seen, T.seen_cap, ((u64)(t->index + 1) << 32) | site);
    if (!mine->key) {
        mine->key = ((u64)(t->index + 1) << 32) | site;
        T.seen_n++;
    }
    u32 occurrence = mine->value++;
    /* A warp is 32 threads of one block: numbered across the blocks of the cluster. */
    u64 warp = (u64)t->rank * (u64)((S.nthreads + WARP - 1) / WARP) + (u64)(t->linear / WARP);
    /* Shared and global apart: one CPU instruction may load from either (p31's walk_hub:
     * `hub[at] if at < HUB else table[at]` is one load through a chosen pointer in the CPU
     * build, an ld.shared and an ld.global in the GPU's, and a warp whose lanes go both
     * ways issues both). One request mixing the two would be priced as the first lane's. */
    u64 key = ((warp + 1) << 54) | ((u64)(site & 0x3FFFFF) << 32) | ((u64)(shared != 0) << 31)
              | (occurrence & 0x7FFFFFFFu);
    if (T.n * 2 >= T.index_cap) {
        if (T.n >= TRAFFIC_MAX_REQUESTS) {
            T.unpriced++;
            return;
        }
        T.index = grow(T.index, &T.index_cap);
    }
    slot_t *where = slot(T.index, T.index_cap, key);
    if (!where->key) {
        if (T.n == T.cap) {
            T.cap = T.cap ? T.cap * 2 : 1024;
            T.requests = xrealloc(T.requests, (size_t)T.cap * sizeof(request_t));
        }
        request_t *r = &T.requests[T.n];
        r->key = key, r->site = site, r->shared = (uint8_t)shared, r->write = (uint8_t)write, r->lanes = 0;
        where->key = key;
        where->value = ++T.n;
    }
    request_t *r = &T.requests[where->value - 1];
    if (r->lanes < WARP) {
        r->addr[r->lanes] = shared ? a - S.arena->base : a;
        r->bytes[r->lanes] = (u32)n;
        r->lane[r->lanes] = (uint8_t)(t->linear % WARP);
        r->lanes++;
    }
}

/* One access, in the pieces a GPU would move it in (see above). */
static void traffic_access(int shared, int write, uintptr_t a, size_t n, u32 site) {
    size_t piece = traffic_unaligned && !shared ? 4 : 16;
    while (piece > 1 && (piece > n || a % piece)) piece >>= 1;
    for (size_t off = 0; off < n; off += piece) traffic_piece(shared, write, a + off, n - off < piece ? n - off : piece, site);
}

static int by_u64(const void *x, const void *y) {
    u64 a = *(const u64 *)x, b = *(const u64 *)y;
    return a < b ? -1 : a > b;
}

/* The distinct units (of 1 << shift bytes) that the lanes of a request in [lo, hi) touch,
 * sorted, in `out`. */
static size_t units_of(const request_t *r, int shift, u64 *out, size_t cap, int lo, int hi) {
    size_t m = 0;
    for (int l = 0; l < r->lanes; l++) {
        if (r->lane[l] < lo || r->lane[l] >= hi) continue;
        u64 first = r->addr[l] >> shift, last = (r->addr[l] + (r->bytes[l] ? r->bytes[l] : 1) - 1) >> shift;
        for (u64 u = first; u <= last && m < cap; u++) out[m++] = u;
    }
    qsort(out, m, sizeof(u64), by_u64);
    size_t d = 0;
    for (size_t i = 0; i < m; i++)
        if (d == 0 || out[i] != out[d - 1]) out[d++] = out[i];
    return d;
}

static size_t units(const request_t *r, int shift, u64 *out, size_t cap) { return units_of(r, shift, out, cap, 0, WARP); }

/* A shared-memory request's wavefronts, and the fewest its width allows (one a phase
 * with a lane in it): 128 bytes a wavefront, so 32 lanes a phase at 4 bytes or less,
 * 16 at 8 bytes, 8 at 16; in a phase, the busiest bank's distinct words. */
static void wavefronts(const request_t *r, u64 *unit, size_t cap, u64 *cost, u64 *ideal) {
    u32 widest = 4;
    int uniform = r->lanes > 0 && !r->write;
    for (int l = 0; l < r->lanes; l++) {
        if (r->bytes[l] > widest) widest = r->bytes[l];
        uniform &= r->addr[l] == r->addr[0] && r->bytes[l] == r->bytes[0];
    }
    if (uniform) {  /* a load of one address by the whole warp: on an H200, 8 bytes take 1, 16 take 2 */
        u64 passes = widest > 8 ? widest / 8 : 1;
        *cost += passes;
        *ideal += passes;
        return;
    }
    int per_phase = widest <= 4 ? WARP : widest <= 8 ? WARP / 2 : WARP / 4;
    for (int lo = 0; lo < WARP; lo += per_phase) {
        size_t words = units_of(r, 2, unit, cap, lo, lo + per_phase);
        if (!words) continue;
        u32 per_bank[WARP] = {0}, busiest = 0;
        for (size_t w = 0; w < words; w++)
            if (++per_bank[unit[w] % WARP] > busiest) busiest = per_bank[unit[w] % WARP];
        *cost += busiest;
        *ideal += 1;
    }
}

/* The block is done: price its requests into their sites, and start afresh. */
static void traffic_flush(void) {
    static u64 unit[WARP * 64];
    for (u32 i = 0; i < T.n; i++) {
        request_t *r = &T.requests[i];
        site_t *site = &S.sites[r->site];
        if (r->shared) {
            site->s_requests++;
            wavefronts(r, unit, sizeof unit / sizeof unit[0], &site->s_wavefronts, &site->s_ideal);
        } else {
            size_t sectors = units(r, 5, unit, sizeof unit / sizeof unit[0]);
            size_t bytes = units(r, 0, unit, sizeof unit / sizeof unit[0]);
            site->g_requests++;
            site->g_sectors += sectors;
            site->g_ideal += (bytes + 31) / 32;
        }
    }
    if (T.n && T.index) memset(T.index, 0, (size_t)T.index_cap * sizeof(slot_t));
    if (T.seen_n && T.seen) memset(T.seen, 0, (size_t)T.seen_cap * sizeof(slot_t));
    T.n = 0;
    T.seen_n = 0;
}

/* ------------------------------------------------------------------------- */
/* Methods: how a launch did its work, for the rules a puzzle's text states  */
/* ------------------------------------------------------------------------- */

/* Values can come out right by a method the text does not ask for: a scalar loop where
 * it asks for SIMD width, a shuffle-down tree where it asks for a butterfly, plain loads
 * where it asks for async copies, barrier() where it asks for an mbarrier. So the first
 * repeat of each launch counts, besides its reads and writes (counters.bin, kind 5):
 * its warp operations by kind, async copies and waits, barrier() calls and the most
 * rounds one block went through, mbarrier inits, arrivals and completed waits, cluster
 * arrivals and waits, and every access by its width; per buffer (kind 6), its plain
 * loads and stores and the async copies that read it. A source site counts its own
 * operations (result.json's sites), so that a broken rule names the line. */
static void method_count(int what, u32 site) {
    if (S.rep != 0 || S.run.cpu_mode) return;
    S.method[what]++;
    if (!site) return;
    site_t *s = &S.sites[site];
    s->ops[what]++;
    if (!s->launch[0]) snprintf(s->launch, sizeof s->launch, "%s", S.label);
}

static int width_of(size_t n) {
    return n >= 32 ? 5 : n >= 16 ? 4 : n >= 8 ? 3 : n >= 4 ? 2 : n >= 2 ? 1 : 0;
}

/* One access of the first repeat (count() has already seen it): its width, and for a
 * buffer of the case, what kind of use it was. */
static void method_access(int shared, int write, uintptr_t a, size_t n, site_t *site) {
    S.method[M_WIDTH + ((shared ? 2 : 0) + (write ? 1 : 0)) * WIDTHS + width_of(n)]++;
    if (shared) return;
    region_t *r = region_at(a);
    if (!r || r->role == ROLE_SHARED) return;
    S.buffer_use[r - S.regions][S.async_reading ? USE_ASYNC : write ? USE_STORES : USE_LOADS]++;
    if (!site->buffer[0]) snprintf(site->buffer, sizeof site->buffer, "%s", r->name);
}

/* Per thread (counters.bin) and per site (result.json's sites): what the first repeat
 * read and wrote, so that a part's access budget can be checked and its lines named.
 * Returns the access's site where it had to find it (else `given`, 0 if none was): the
 * caller looks it up once. */
static u32 count(int shared, int write, uintptr_t a, size_t n, void *pc, u32 given) {
    thread_t *t = S.cur;
    if (!S.counts || t->gtid < 0) return given;
    u32 *c = &S.counts[(size_t)t->gtid * 8];
    int k = (shared ? 4 : 0) + (write ? 2 : 0);
    c[k] += 1;
    c[k + 1] += (u32)n;
    u32 id = given ? given : site_of(pc, caller_of(t)); /* first: it may move the table */
    site_t *site = &S.sites[id];
    if (!site->launch[0]) snprintf(site->launch, sizeof site->launch, "%s", S.label);
    site->accesses[(shared ? 2 : 0) + (write ? 1 : 0)]++;
    site->bytes[(shared ? 2 : 0) + (write ? 1 : 0)] += n;
    if (!S.run.cpu_mode) {
        traffic_access(shared, write, a, n, id);
        method_access(shared, write, a, n, site);
    }
    return id;
}
