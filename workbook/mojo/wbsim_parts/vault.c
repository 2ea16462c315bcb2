/* wbsim_parts/vault.c: the vault (the simulator's own records, in one mapping), the fence
 * (memory protection keys), the vault's allocator (xcalloc, xfree, xrealloc), and
 * vault_open, which opens the vault, S, T and the device heap before anything runs.
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* The vault: the simulator's own records, in one mapping of their own       */
/* ------------------------------------------------------------------------- */

/* Every byte the simulator writes for itself (the state S, the traffic tables T, sites,
 * findings, shadows, counters, threads and their stacks, the result's buffer) is handed
 * out here, never by malloc: the vault is one address range the store guard knows, in
 * which no learner code may write (see "The store guard"). Small blocks come in classes
 * of powers of two and are kept for reuse; larger ones are whole pages, given back to
 * the system when freed and their address range kept for the next. The range is
 * reserved without memory; pages are made writable as they are handed out, so only
 * what is used counts against the memory limit. The roots (where the vault, S and T
 * are) sit in a page of their own that is made read-only once they are set. */

#define VAULT_RESERVE (256ULL << 30)
#define VAULT_CLASSES 15             /* small blocks: 32 bytes to 512 KiB, with their header */
#define VAULT_SMALL (32ULL << (VAULT_CLASSES - 1))
#define VAULT_CHUNK (256ULL << 10)   /* small blocks are cut from chunks of this size */
#define VAULT_HOLES 1024

typedef struct {
    size_t bytes;                    /* what the block can hold */
    size_t klass;                    /* its class, or BIG_BLOCK */
} vhead_t;
#define BIG_BLOCK ((size_t)-1)

typedef struct {
    uintptr_t next;                  /* the first page never handed out */
    uintptr_t chunk, chunk_end;      /* what is left of the chunk small blocks are cut from */
    vhead_t *free[VAULT_CLASSES];    /* small blocks given back, by class */
    uintptr_t hole_at[VAULT_HOLES];  /* page ranges given back, in address order */
    size_t hole_bytes[VAULT_HOLES];
    int nholes;
} vault_t;

static union {
    struct {
        uintptr_t lo, hi;            /* the vault */
        state_t *state;
        void *traffic;
        vault_t *vault;
        int fence, key;              /* the fence is up (see "The fence"); its protection key */
        uint32_t allow, deny;        /* PKRU with the vault writable, and not */
    } r;
    char page[4096];
} roots __attribute__((aligned(4096)));

#define S (*roots.r.state)
#define V (*roots.r.vault)

/* ------------------------------------------------------------------------- */
/* The fence                                                                 */
/* ------------------------------------------------------------------------- */

/* The store guard sees the stores the instrumentation reports, and it reports loads
 * and stores of 1, 2, 4, 8 and 16 bytes: a wider one (a SIMD value of 32 bytes or more
 * stored at once, a masked store) is never reported, nor is a store made by a library
 * function that was not built with it. Where the processor has memory protection keys
 * (x86 PKU), the vault's pages carry a key of their own and the simulator's own code is
 * the only code that runs with that key writable: each of its entry points opens the
 * fence (WRPKRU) and closes it again when it returns to the learner's code, so any other
 * store into the vault faults, and the fault is a harness_write like the guard's. The
 * parts of the vault that the learner's threads may write (their stacks, their exchange
 * slots) carry no key. Each crossing costs about 30 ns (a quarter more time for a
 * kernel that does nothing but access memory), so the fence goes up only when the
 * workbook asks (WORKBOOK_SIM_FENCE=1: `workbook grade` does); without it, or without
 * keys on this processor, only the guard stands. */

#if defined(__x86_64__) && !defined(WBSIM_NO_FENCE)
static inline void wrpkru(uint32_t v) { __asm__ volatile(".byte 0x0f,0x01,0xef" ::"a"(v), "c"(0), "d"(0) : "memory"); }
static inline uint32_t rdpkru(void) {
    uint32_t eax, edx;
    __asm__ volatile(".byte 0x0f,0x01,0xee" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}
#define FENCE_OPEN() do { if (roots.r.fence) wrpkru(roots.r.allow); } while (0)
#define FENCE_CLOSE() do { if (roots.r.fence) wrpkru(roots.r.deny); } while (0)
#else
static inline uint32_t rdpkru(void) { return 0; }
#define FENCE_OPEN() do { } while (0)
#define FENCE_CLOSE() do { } while (0)
#endif

static inline int fence_open(void) {
    FENCE_OPEN();
    return 0;
}
static inline void fence_close(int *unused) {
    (void)unused;
    FENCE_CLOSE();
}
/* The first statement of an entry point the learner's code calls that writes the vault:
 * the fence is open until it returns. */
#define FENCED int fence_ __attribute__((cleanup(fence_close), unused)) = fence_open()

/* Pages of the vault: with the vault's key (`keyed`), or none (what learner code writes). */
static void vault_commit_as(uintptr_t at, size_t bytes, int keyed) {
    int ok = roots.r.fence && keyed
                 ? syscall(SYS_pkey_mprotect, at, bytes, PROT_READ | PROT_WRITE, roots.r.key) == 0
                 : mprotect((void *)at, bytes, PROT_READ | PROT_WRITE) == 0;
    if (!ok) die("could not map the simulator's own memory");
}

static void vault_commit(uintptr_t at, size_t bytes) { vault_commit_as(at, bytes, 1); }

/* `bytes` (whole pages) of fresh zeroed memory, with the vault's key or without. */
static void *vault_pages_as(size_t bytes, int keyed) {
    bytes = page_up(bytes ? bytes : 1);
    for (int i = 0; i < V.nholes; i++) {
        if (V.hole_bytes[i] < bytes) continue;
        uintptr_t at = V.hole_at[i];
        V.hole_at[i] += bytes;
        V.hole_bytes[i] -= bytes;
        if (!V.hole_bytes[i]) {
            memmove(&V.hole_at[i], &V.hole_at[i + 1], (size_t)(V.nholes - i - 1) * sizeof V.hole_at[0]);
            memmove(&V.hole_bytes[i], &V.hole_bytes[i + 1], (size_t)(V.nholes - i - 1) * sizeof V.hole_bytes[0]);
            V.nholes--;
        }
        vault_commit_as(at, bytes, keyed);
        return (void *)at;
    }
    if (bytes > roots.r.hi - V.next) die("the simulator ran out of room for its own records");
    uintptr_t at = V.next;
    V.next += bytes;
    vault_commit_as(at, bytes, keyed);
    return (void *)at;
}

static void *vault_pages(size_t bytes) { return vault_pages_as(bytes, 1); }

/* Pages back to the system (their memory is freed, the range is kept). */
static void vault_unpages(void *p, size_t bytes) {
    uintptr_t at = (uintptr_t)p;
    bytes = page_up(bytes ? bytes : 1);
    if (mmap(p, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        die("could not give memory back");
    int i = 0;
    while (i < V.nholes && V.hole_at[i] < at) i++;
    if (i > 0 && V.hole_at[i - 1] + V.hole_bytes[i - 1] == at) {
        V.hole_bytes[i - 1] += bytes;
        if (i < V.nholes && at + bytes == V.hole_at[i]) {
            V.hole_bytes[i - 1] += V.hole_bytes[i];
            memmove(&V.hole_at[i], &V.hole_at[i + 1], (size_t)(V.nholes - i - 1) * sizeof V.hole_at[0]);
            memmove(&V.hole_bytes[i], &V.hole_bytes[i + 1], (size_t)(V.nholes - i - 1) * sizeof V.hole_bytes[0]);
            V.nholes--;
        }
        return;
    }
    if (i < V.nholes && at + bytes == V.hole_at[i]) {
        V.hole_at[i] = at;
        V.hole_bytes[i] += bytes;
        return;
    }
    if (V.nholes == VAULT_HOLES) return; /* forgotten: address space only */
    memmove(&V.hole_at[i + 1], &V.hole_at[i], (size_t)(V.nholes - i) * sizeof V.hole_at[0]);
    memmove(&V.hole_bytes[i + 1], &V.hole_bytes[i], (size_t)(V.nholes - i) * sizeof V.hole_bytes[0]);
    V.hole_at[i] = at;
    V.hole_bytes[i] = bytes;
    V.nholes++;
}

/* calloc, free and realloc, in the vault. */
static void *xcalloc(size_t n, size_t size) {
    n = n ? n : 1;
    size = size ? size : 1;
    if (n > (SIZE_MAX - 2 * PAGE) / size) die("out of memory");
    size_t need = n * size + sizeof(vhead_t);
    vhead_t *h;
    if (need > VAULT_SMALL) {
        h = vault_pages(need);
        h->bytes = page_up(need) - sizeof(vhead_t);
        h->klass = BIG_BLOCK;
        return h + 1;
    }
    int k = 0;
    while ((32ULL << k) < need) k++;
    size_t block = 32ULL << k;
    h = V.free[k];
    if (h) {
        V.free[k] = *(vhead_t **)(h + 1);
        memset(h + 1, 0, h->bytes);
        return h + 1;
    }
    if (V.chunk_end - V.chunk < block) {
        size_t bytes = block > VAULT_CHUNK ? block : VAULT_CHUNK;
        V.chunk = (uintptr_t)vault_pages(bytes);
        V.chunk_end = V.chunk + bytes;
    }
    h = (vhead_t *)V.chunk; /* never used: zeroed */
    V.chunk += block;
    h->bytes = block - sizeof(vhead_t);
    h->klass = (size_t)k;
    return h + 1;
}

static void xfree(void *p) {
    if (!p) return;
    vhead_t *h = (vhead_t *)p - 1;
    if (h->klass == BIG_BLOCK) {
        vault_unpages(h, h->bytes + sizeof(vhead_t));
        return;
    }
    *(vhead_t **)p = V.free[h->klass];
    V.free[h->klass] = h;
}

/* Grown (the new bytes zeroed), or the same block when it has room. */
static void *xrealloc(void *p, size_t bytes) {
    if (!p) return xcalloc(1, bytes);
    vhead_t *h = (vhead_t *)p - 1;
    if (bytes <= h->bytes) return p;
    void *q = xcalloc(1, bytes);
    memcpy(q, p, h->bytes);
    xfree(p);
    return q;
}


static void dheap_open(void);

/* The vault, S and T, before any instrumented code needs them (__tsan_init, which the
 * instrumentation's constructor calls first, or our own constructor). */
static void vault_open(void) {
    if (roots.r.state) return;
    void *p = mmap(NULL, VAULT_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("could not reserve address space for the simulator's own records");
    uintptr_t lo = (uintptr_t)p;
#if defined(__x86_64__) && !defined(WBSIM_NO_FENCE)
    const char *fence = getenv("WORKBOOK_SIM_FENCE");
    int key = fence && !strcmp(fence, "1") ? (int)syscall(SYS_pkey_alloc, 0, 0) : -1;
    if (key > 0 && key < 16) {
        roots.r.fence = 1;
        roots.r.key = key;
        roots.r.allow = rdpkru() & ~(3u << (2 * key));
        roots.r.deny = roots.r.allow | (2u << (2 * key)); /* write-disable: reads stay open */
    }
#endif
    vault_commit(lo, page_up(sizeof(vault_t)));
    roots.r.lo = lo;
    roots.r.hi = lo + VAULT_RESERVE;
    roots.r.vault = (vault_t *)lo;
    V.next = lo + page_up(sizeof(vault_t));
    roots.r.state = vault_pages(sizeof(state_t));
    roots.r.traffic = vault_pages(sizeof(traffic_t));
    if (mprotect(&roots, sizeof roots, PROT_READ) != 0) die("could not protect the simulator's roots");
    dheap_open();
    FENCE_OPEN(); /* the program starts in the launcher's code: wb_begin closes it */
}

__attribute__((constructor)) static void vault_boot(void) { vault_open(); }
