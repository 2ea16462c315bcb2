/* wbsim_parts/kernel.c: what a kernel calls besides barriers: its ids, warp operations,
 * shared memory (wbsim_shared) and async copies.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* What a kernel calls                                                       */
/* ------------------------------------------------------------------------- */

static thread_t *current(void) {
    if (!S.cur || S.cur == &S.cpu)
        die("thread_idx, block_idx, barrier() or shared memory was used outside a GPU kernel launch "
            "(in a CPU function?)");
    return S.cur;
}

i64 wbsim_id(i64 which) {
    thread_t *t = current();
    int bz = t->block / (S.gx * S.gy), by = (t->block / S.gx) % S.gy, bx = t->block % S.gx;
    switch (which) {
    case 0: return t->x;
    case 1: return t->y;
    case 2: return t->z;
    case 3: return bx;
    case 4: return by;
    case 5: return bz;
    case 6: return S.bx;
    case 7: return S.by;
    case 8: return S.bz;
    case 9: return S.gx;
    case 10: return S.gy;
    case 11: return S.gz;
    case 12: return bx * S.bx + t->x;
    case 13: return by * S.by + t->y;
    case 14: return bz * S.bz + t->z;
    case 15: return S.cx;          /* cluster_dim */
    case 16: return S.cy;
    case 17: return S.cz;
    case 18: return bx / S.cx;     /* cluster_idx */
    case 19: return by / S.cy;
    case 20: return bz / S.cz;
    case 21: return bx % S.cx;     /* block_id_in_cluster */
    case 22: return by % S.cy;
    case 23: return bz % S.cz;
    }
    return 0;
}

i64 wbsim_linear(void) { return current()->linear; }
i64 wbsim_threads(void) { return S.nthreads; }
i64 wbsim_slot(i64 k, i64 slot_bytes) {
    thread_t *t = current();
    return (i64)(S.scratch + (size_t)(t->index - t->linear + k) * (size_t)slot_bytes); /* its block's */
}
i64 wbsim_address(void *f) { return (i64)(uintptr_t)f; }

/* block.sum, block.max and block.min: on a GPU each is two rounds of warp reductions,
 * xor shuffles (max 26.7's PTX for sm_90: shfl.sync.bfly), around an exchange in shared
 * memory. The simulator exchanges the values plainly (wbsim.mojo's _reduce); this counts
 * the shuffles the GPU makes, once per thread, so that a method rule sees what the PTX
 * shows (p15 folds in shared memory: block.sum passed its budget with the right sums). */
void wbsim_block_reduce(const char *file, i64 file_len, i64 line, i64 col) {
    method_count(M_SHUFFLE_XOR, source_site(file, file_len, line, col));
}

/* A warp operation (a shuffle, a vote, and the reductions and scans made of them):
 * this lane has put its value at wbsim_warp_in(), and waits until every lane of its
 * warp still in the kernel has put theirs. `op` tells the operations apart, and the
 * line names it. (Values go through memory the compiler can't see into.) */
i64 wbsim_warp_in(void) { return (i64)(S.warp_in + (size_t)current()->index * WARP_SLOT); }

void wbsim_warp_arrive(i64 op, const char *file, i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    t->warp_op = (int)op;
    t->warp_site = source_site(file, file_len, line, col);
    if (op >= 1 && op <= M_MMA + 1) method_count((int)op - 1, t->warp_site);
    t->state = ST_AT_WARP;
    swapcontext(&t->ctx, &S.main_ctx);
}

/* This thread's lane, and how many lanes its warp has (a block of 8 threads has a warp
 * of 8: the other 24 lanes have no thread). */
i64 wbsim_lane(void) { return current()->linear % WARP; }

i64 wbsim_warp_lanes(void) {
    thread_t *t = current();
    int first = t->linear / WARP * WARP;
    return S.nthreads - first < WARP ? S.nthreads - first : WARP;
}

/* Where what lane `src` brought to the operation just completed lies, or 0 when it
 * brought nothing: no thread has that lane (a partial warp), or it had finished the
 * kernel. Both are findings: on a GPU the value is whatever the hardware holds. */
i64 wbsim_warp_fetch(i64 src) {
    FENCED;
    thread_t *t = current();
    int first = t->linear / WARP * WARP, base = t->index - t->linear;
    int lanes = S.nthreads - first < WARP ? S.nthreads - first : WARP;
    int why = src < 0 || src >= lanes ? 1 : !S.threads[base + first + src].took_part ? 2 : 0;
    if (why == 0) return (i64)(S.warp_out + (size_t)(base + first + src) * WARP_SLOT);
    finding_t *f = finding(why == 1 ? "warp_lane_missing" : "warp_lane_finished", -1, -1, t->warp_site, 0, NULL);
    if (f) {
        f->size = lanes;
        snprintf(f->extra, sizeof f->extra, "\"lane\": %d, \"source_lane\": %lld, \"lanes\": %d",
                 t->linear % WARP, (long long)src, lanes);
    }
    saw(f, t->gtid, src);
    return 0;
}

/* A ballot over the operation just completed: bit i is set where lane i brought a
 * nonzero byte. Lanes with no thread, or finished, vote 0 (no finding: that is a ballot). */
i64 wbsim_warp_ballot(void) {
    thread_t *t = current();
    int first = t->index - t->linear + t->linear / WARP * WARP;
    int lanes = S.nthreads - t->linear / WARP * WARP < WARP ? S.nthreads - t->linear / WARP * WARP : WARP;
    u32 mask = 0;
    for (int i = 0; i < lanes; i++)
        if (S.threads[first + i].took_part && S.warp_out[(size_t)(first + i) * WARP_SLOT]) mask |= 1u << i;
    return mask;
}

/* elect_one_sync(), once its warp has met: the lane it elects. A GPU names no rule for
 * which lane: here the lowest lane that took part in forward order, the highest in
 * reverse, so a kernel that counts on one lane shows it. */
i64 wbsim_warp_elected(void) {
    thread_t *t = current();
    int first = t->index - t->linear + t->linear / WARP * WARP;
    int lanes = S.nthreads - t->linear / WARP * WARP < WARP ? S.nthreads - t->linear / WARP * WARP : WARP;
    for (int k = 0; k < lanes; k++) {
        int i = S.reverse ? lanes - 1 - k : k;
        if (S.threads[first + i].took_part) return i;
    }
    return -1;
}

/* The lanes of warp w parted ways at a warp operation: some wait there while others
 * wait at a barrier() (or at another warp operation). */
static void warp_stuck(int base, int w, int at_op, int elsewhere, int finished) {
    int first = base + w * WARP, last = base + (w * WARP + WARP < S.nthreads ? w * WARP + WARP : S.nthreads);
    u32 sites[4] = {0};
    int counts[4] = {0}, nsites = 0, other = -1;
    for (int i = first; i < last; i++) {
        thread_t *t = &S.threads[i];
        u32 site = t->state == ST_AT_WARP ? t->warp_site : t->state == ST_AT_BARRIER ? t->barrier_site
                 : t->state == ST_AT_CLUSTER ? t->cluster_site : t->state == ST_AT_MBAR ? t->mbar_site : 0;
        if (!site) continue;
        int j = 0;
        while (j < nsites && sites[j] != site) j++;
        if (j == nsites && nsites < 4) sites[nsites++] = site;
        if (j < nsites) counts[j]++;
        if (t->state != ST_AT_WARP && other < 0) other = i;
    }
    finding_t *f = finding("warp_divergence", -1, -1, sites[0], nsites > 1 ? sites[1] : 0, NULL);
    if (!f) return;
    int n = snprintf(f->extra, sizeof f->extra, "\"warp\": %d, \"at_op\": %d, \"elsewhere\": %d, \"finished\": %d, "
                     "\"waits\": [", w, at_op, elsewhere, finished);
    for (int j = 0; j < nsites && n < 400; j++)
        n += snprintf(f->extra + n, sizeof f->extra - (size_t)n, "%s[%u, %d, 0]", j ? ", " : "", sites[j], counts[j]);
    snprintf(f->extra + n, sizeof f->extra - (size_t)n, "]");
    saw(f, S.threads[first].gtid, 0);
}

/* Shared memory: every thread of the block makes the same calls in the same order, so
 * the k-th call of each gets the same bytes. Never-written bytes are 0xFF. */
i64 wbsim_shared(i64 bytes, i64 elem, i64 align, i64 rank, i64 d0, i64 d1, i64 d2, const char *file,
                 i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    size_t al = align < 16 ? 16 : (size_t)align;
    size_t gpu = (t->shared_offset + al - 1) / al * al; /* as a GPU lays them out: back to back */
    int index = t->alloc_index++;
    /* Ours: the same bytes mod 128 (banks: the traffic model reads offsets), with SHARED_GAP
     * bytes nobody owns after each array, so that an index past one array's end is an
     * overflow of that array (shared_out_of_bounds), not an access to the next one. */
    size_t shift = index > 0 && index <= S.nallocs ? S.allocs[index - 1].offset - S.allocs[index - 1].gpu_offset : 0;
    size_t period = al > 128 ? al : 128, gap = (shift + SHARED_GAP + period - 1) / period * period;
    size_t offset = gpu + (index > 0 && gpu + gap + (size_t)bytes <= SHARED_ARENA ? gap : shift);
    u32 site = source_site(file, file_len, line, col);
    if (index < S.nallocs) {
        if (S.allocs[index].gpu_offset != gpu || S.allocs[index].bytes != (size_t)bytes) S.shared_problem = 2;
        offset = S.allocs[index].offset;
    } else if (index < MAX_ALLOCS) {
        alloc_t *a = &S.allocs[S.nallocs++];
        a->offset = offset;
        a->gpu_offset = gpu;
        a->bytes = (size_t)bytes;
        a->elem = (size_t)elem;
        a->rank = (int)rank;
        a->shape[0] = d0;
        a->shape[1] = d1;
        a->shape[2] = d2;
        a->site = site;
        if (offset + (size_t)bytes > S.arena_used) S.arena_used = offset + (size_t)bytes;
    }
    t->shared_offset = gpu + (size_t)bytes;
    if (gpu + (size_t)bytes > SHARED_LIMIT) S.shared_problem = 1;
    if (offset + (size_t)bytes > SHARED_ARENA) offset = 0;
    return (i64)(S.arena->base + offset); /* the running thread's block's arena */
}

/* Async copies (`async_copy` from max.gpu.memory, cp.async on NVIDIA GPUs). A copy a
 * thread issues is pending: its bytes are in shared memory only after that thread's
 * matching wait (async_copy_wait_group, async_copy_wait_all), and a barrier() alone
 * does not make them land. Here they land exactly at the wait, whatever the thread
 * order, and until then the destination holds 0xFF (NaN) and is marked pending in its
 * shadow: a read of it, by any thread, is a finding (async_read_before_wait) naming
 * the read's line and the copy's. Landing is a write by the copying thread, in the
 * wait's round, at the copy's line: another thread that reads it before a barrier()
 * is a race like any other. */
/* The copy reads `have` bytes of `src` now, watched as a read at the copy's line (the
 * line the compiler gave wbsim.mojo); `fill` holds what goes past them (zeros, or the
 * copy's fill value). wbsim.mojo's async_copy says how many bytes the GPU's code reads
 * (with no fill value, src_size is never passed to cp.async: all of them). `now`: not a
 * copy at all but the GPU's plain store of a fill value (a value fill, predicate False):
 * it lands at once, as a write at the copy's line. */
void wbsim_async_copy(i64 dst, i64 src, uint8_t *fill, i64 bytes, i64 have, i64 now, const char *file,
                      i64 file_len, i64 line, i64 col) {
    FENCED;
    thread_t *t = current();
    u32 site = source_site(file, file_len, line, col);
    /* `fill` is this thread's own exchange slot (wbsim.mojo's async_copy): nothing else. */
    uintptr_t own = (uintptr_t)S.scratch + (size_t)t->index * BLOCK_SLOT;
    if ((uintptr_t)fill != own || bytes < 0 || bytes > 16 || have > bytes)
        refuse(harness_memory((uintptr_t)fill, 16) ? "harness_write" : "wild_write", (uintptr_t)fill, 16, NULL, site);
    if (!now) method_count(M_ASYNC_COPY, site);
    if (have > 0) {
        uintptr_t s = (uintptr_t)src;
        if (s - S.heap_lo < HEAP_RESERVE) {
            S.async_reading = 1; /* its source is read by the copy, not by a plain load */
            on_access(s, (size_t)have, 0, 0, NULL, site);
            S.async_reading = 0;
            memcpy(fill, (const void *)s, (size_t)have);
        } else {
            memset(fill, 0xFF, (size_t)have); /* not simulator memory: never read it */
        }
    }
    const uint8_t *data = fill;
    region_t *r = region_at((uintptr_t)dst);
    size_t off = r ? (uintptr_t)dst - r->base : 0;
    int k = r && r == S.arena ? alloc_at(off) : -1;
    if (!r || r != S.arena) {
        if (r) die("async_copy's destination (line %lld) must be shared memory (stack_allocation with "
                   "address_space=AddressSpace.SHARED)", (long long)line);
        uintptr_t d = (uintptr_t)dst;
        if (d - S.heap_lo >= HEAP_RESERVE || (size_t)bytes > S.heap_lo + HEAP_RESERVE - d) /* never given */
            refuse(harness_memory(d, (size_t)bytes) ? "harness_write" : "wild_write", d, (size_t)bytes, NULL, site);
        outside((uintptr_t)dst, (size_t)bytes, 1, site, NULL, -1);
        return;
    }
    if (k < 0 || off + (size_t)bytes > S.allocs[k].offset + S.allocs[k].bytes) {
        outside((uintptr_t)dst, (size_t)bytes, 1, site, r, k);
        return;
    }
    if (now) {
        memcpy((void *)dst, data, (size_t)bytes);
        on_access((uintptr_t)dst, (size_t)bytes, 1, 0, NULL, site);
        return;
    }
    if (S.npending == S.pending_cap) {
        S.pending_cap = S.pending_cap ? S.pending_cap * 2 : 1024;
        S.pendings = xrealloc(S.pendings, (size_t)S.pending_cap * sizeof *S.pendings);
    }
    struct pending_s *p = &S.pendings[S.npending++];
    p->dst = (uintptr_t)dst;
    p->gtid = t->gtid;
    p->arena = S.arena;
    p->group = -1;
    p->site = site;
    p->bytes = (int)(bytes > 16 ? 16 : bytes);
    memcpy(p->data, data, (size_t)p->bytes);
    memset((void *)p->dst, 0xFF, (size_t)p->bytes); /* not there yet: NaN, in every thread order */
    for (int i = 0; i < p->bytes; i++) r->shadow[off + i].flags |= F_PENDING;
}

static void async_commit(thread_t *t) {
    for (int i = 0; i < S.npending; i++)
        if (S.pendings[i].gtid == t->gtid && S.pendings[i].group < 0) S.pendings[i].group = t->committed;
    t->committed++;
}

void wbsim_async_commit(void) {
    FENCED;
    async_commit(current());
}

/* The copies of this thread's groups but the newest `keep` land (all = every copy, the
 * uncommitted ones too: cp.async.wait_all commits first). */
void wbsim_async_wait(i64 keep, i64 all) {
    FENCED;
    thread_t *t = current();
    method_count(M_ASYNC_WAIT, 0);
    if (all) async_commit(t);
    int j = 0;
    for (int i = 0; i < S.npending; i++) {
        struct pending_s p = S.pendings[i];
        if (p.gtid != t->gtid || p.group < 0 || p.group >= t->committed - (int)keep) {
            S.pendings[j++] = p;
            continue;
        }
        size_t off = p.dst - p.arena->base;
        for (int b = 0; b < p.bytes; b++) p.arena->shadow[off + b].flags &= (uint8_t)~F_PENDING;
        memcpy((void *)p.dst, p.data, (size_t)p.bytes);
        on_access(p.dst, (size_t)p.bytes, 1, 0, NULL, p.site);
    }
    S.npending = j;
    /* A byte another pending copy also targets stays pending. */
    for (int i = 0; i < S.npending; i++) {
        size_t off = S.pendings[i].dst - S.pendings[i].arena->base;
        for (int b = 0; b < S.pendings[i].bytes; b++) S.pendings[i].arena->shadow[off + b].flags |= F_PENDING;
    }
}
