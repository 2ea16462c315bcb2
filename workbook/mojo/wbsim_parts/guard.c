/* wbsim_parts/guard.c: what is checked before an access lands: its alignment (a GPU's
 * misaligned address), and the store guard, which refuses a store of the learner's code
 * into the simulator's records or anywhere it was not handed.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* Alignment                                                                 */
/* ------------------------------------------------------------------------- */

/* A GPU's load or store of N bytes needs an address that is a multiple of the alignment
 * the compiler was given, up to N: a scalar its own size, a vector with `alignment=16`
 * 16 bytes (ld.global.v4), a vector with one float's alignment 4 (it is split into
 * scalars). Anything else is a "misaligned address" fault, which stops the kernel.
 * What the simulator knows of that alignment comes from the instrumentation's entry
 * point: LLVM's ThreadSanitizer calls the aligned one (__tsan_readN) when the alignment
 * is at least 8 or a multiple of N, the __tsan_unaligned_* one otherwise. So an
 * aligned N-byte access needs a multiple of N for N up to 8 (checked before it
 * happens), and of at least 8 for 16 bytes. Whether 16 was promised, the host's own
 * instruction tells: with 16 the compiler uses an aligned SSE move, which faults at an
 * address that is not a multiple of 16. So a 16-byte access at such an address is
 * staged; a fault right after it is the 16-byte rule broken, and without one (8 was
 * promised), an address that is not a multiple of 8 is reported at the thread's next
 * access or the launch's end. The case stops at either, as the GPU's kernel would. */
__attribute__((noreturn)) static void stop_case(void);
static size_t access_need; /* N while an aligned N-byte entry point runs, else 0 */
static struct {
    uintptr_t a;
    size_t n, need;          /* need: 8 when the address breaks the 8-byte rule too, else 0 */
    int write, gtid, staged;
    u32 site;
} staged;

__attribute__((noreturn, cold, noinline)) static void misaligned(uintptr_t a, size_t n, int write, u32 site,
                                                                 int gtid, size_t need) {
    region_t *r = region_at(a);
    int k = -1, region = -1;
    i64 index = 0;
    size_t elem = 1;
    if (r && r->role == ROLE_SHARED) {
        k = alloc_at(a - r->base);
        if (k >= 0) {
            elem = S.allocs[k].elem;
            index = (i64)((a - r->base - S.allocs[k].offset) / elem);
        }
    } else if (r) {
        region = (int)(r - S.regions);
        elem = r->elem;
        index = element_of(r, a);
    }
    finding_t *f = finding("misaligned_access", region, k, site, 0, NULL);
    if (f) {
        f->write = write;
        f->access_bytes = (int)n;
        f->elem = (int)elem;
        snprintf(f->extra, sizeof f->extra, "\"align\": %zu, \"misalign\": %llu", need,
                 (unsigned long long)(a % need));
        saw(f, gtid, index);
    }
    stop_case();
}

/* A staged 16-byte access that did not fault: the 8-byte rule, if it broke it. */
static void staged_flush(void) {
    if (!staged.staged) return;
    staged.staged = 0;
    if (staged.need) misaligned(staged.a, staged.n, staged.write, staged.site, staged.gtid, staged.need);
}

/* An aligned access of the running thread (not an op's CPU kernel), before it happens. */
static void check_alignment(thread_t *t, uintptr_t a, size_t n, int write, void *pc) {
    if (a % n == 0) return;
    u32 site = site_of(pc, caller_of(t));
    if (n <= 8) misaligned(a, n, write, site, t->gtid, n);
    staged.a = a, staged.n = n, staged.write = write, staged.gtid = t->gtid, staged.site = site;
    staged.need = a % 8 ? 8 : 0;
    staged.staged = 1;
}

/* ------------------------------------------------------------------------- */
/* The store guard                                                           */
/* ------------------------------------------------------------------------- */

/* The learner's code runs in this process, beside the simulator's records. The guard
 * sees each of its stores before it lands (the instrumentation calls watch() first) and
 * refuses those that could reach the records. By who is storing:
 * - a simulated GPU thread may write the case's buffers and its block's shared memory
 *   (the reservation: a write past them is an out_of_bounds finding and lands in pages
 *   nobody uses), its own stack below the frame it started in, and its own slots of the
 *   block's and the warp's exchange (block.*, warp operations, async copies write there
 *   for it). Anything else is memory it was never given, on a GPU an illegal address:
 *   `wild_write`, or `harness_write` when it is the simulator's own records;
 * - an op's CPU kernel and a learner's host function are host code, which may use the
 *   process's heap (a List, a String): a store into the vault, or into a loaded
 *   program's writable data (wbsim's statics, the launcher's, the libraries'), is a
 *   `harness_write`.
 * A refused store never lands: the finding is recorded, result.json written, and the
 * case stops there (exit 71, as a fault: the workbook runs the next cases afresh).
 * Loads are not refused: a read forges nothing. The generated launcher's own code and
 * wbsim.mojo's harness calls are trusted and not checked. */

__attribute__((noreturn)) static void stop_case(void);

static int segment(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || S.nsegments == MAX_SEGMENTS) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        S.data_lo[S.nsegments] = lo & ~(PAGE - 1);
        S.data_hi[S.nsegments] = page_up(lo + ph->p_memsz);
        S.nsegments++;
    }
    return 0;
}

/* Where the loaded programs keep their writable data. */
static void guard_open(void) { dl_iterate_phdr(segment, NULL); }

/* The end of [a, a + n), or the end of memory when it would wrap. */
static uintptr_t end_of(uintptr_t a, size_t n) { return a + n < a ? UINTPTR_MAX : a + n; }

static int in_vault(uintptr_t a, size_t n) { return a < roots.r.hi && end_of(a, n) > roots.r.lo; }

static int in_stacks(uintptr_t a, size_t n) {
    uintptr_t lo = (uintptr_t)S.stacks, hi = lo + (size_t)S.stacks_cap * (STACK_BYTES + PAGE);
    return S.stacks && a >= lo && end_of(a, n) <= hi;
}

/* Whether [a, a + n) reaches the simulator's records: the vault (but the threads'
 * stacks), or a loaded program's writable data. */
static int harness_memory(uintptr_t a, size_t n) {
    if (in_vault(a, n) && !in_stacks(a, n)) return 1;
    for (int i = 0; i < S.nsegments; i++)
        if (a < S.data_hi[i] && end_of(a, n) > S.data_lo[i]) return 1;
    return 0;
}

/* A store the guard refuses: a finding, and the case stops before the store lands.
 * `site` when the simulator knows the line already, else from `pc`. */
__attribute__((noinline, cold, noreturn)) static void refuse(const char *kind, uintptr_t a, size_t n, void *pc, u32 site) {
    thread_t *t = S.cur;
    if (!t) snprintf(S.label, sizeof S.label, "%.*s", (int)S.host_label_len, S.host_label);
    if (!site) site = site_of(pc, t ? caller_of(t) : NULL);
    const char *target = in_stacks(a, n) ? "stack" : in_vault(a, n) ? "records" : harness_memory(a, n) ? "data"
                                                                                                        : "elsewhere";
    finding_t *f = finding(kind, -1, -1, site, 0, NULL);
    if (f) {
        f->write = 1;
        f->access_bytes = n < INT32_MAX ? (int)n : INT32_MAX;
        snprintf(f->extra, sizeof f->extra, "\"address\": %llu, \"target\": \"%s\"", (unsigned long long)a, target);
        saw(f, t && t != &S.cpu ? t->gtid : -1, 0);
    }
    stop_case();
}

/* A simulated GPU thread's store outside the reservation. */
static inline void thread_store(thread_t *t, uintptr_t a, size_t n, void *pc) {
    if (a - t->stack_lo < t->stack_hi - t->stack_lo && n <= t->stack_hi - a) return; /* its own stack */
    if (a - S.dheap_lo < S.dheap_next - S.dheap_lo && n <= S.dheap_next - a) return; /* the device heap */
    uintptr_t own = (uintptr_t)S.scratch + (size_t)t->index * BLOCK_SLOT;
    if (a - own < BLOCK_SLOT && n <= own + BLOCK_SLOT - a) return;
    own = (uintptr_t)S.warp_in + (size_t)t->index * WARP_SLOT;
    if (a - own < WARP_SLOT && n <= own + WARP_SLOT - a) return;
    refuse(harness_memory(a, n) ? "harness_write" : "wild_write", a, n, pc, 0);
}

/* A store by host code (an op's CPU kernel, a learner's host function) outside the
 * reservation. */
static inline void host_store(uintptr_t a, size_t n, void *pc) {
    if (in_vault(a, n) || harness_memory(a, n)) refuse("harness_write", a, n, pc, 0);
}
