/* wbsim_parts/heap.c: the device heap, what a simulated GPU thread allocates from (Mojo's
 * KGEN_CompilerRT_AlignedAlloc and KGEN_CompilerRT_AlignedFree, for the program's calls).
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

/* ------------------------------------------------------------------------- */
/* The device heap                                                           */
/* ------------------------------------------------------------------------- */

/* A kernel may allocate (a String it prints, a List): on a GPU, from the device's malloc
 * heap. Every allocation of Mojo code goes through KGEN_CompilerRT_AlignedAlloc and
 * KGEN_CompilerRT_AlignedFree, which are defined here in place of the runtime's for the
 * program's own calls. What a simulated GPU thread allocates comes from a mapping of its
 * own, the device heap: memory handed out, which every GPU thread may write. Nothing
 * about it is kept in it (its blocks have no headers, its free lists live in the vault),
 * so a kernel that writes all over it can't make the simulator write elsewhere. Blocks
 * come in powers of two from 16 bytes, each 64 KiB chunk serving one size (a larger block
 * takes whole chunks); a freed block is kept for the next of its size. The heap lasts as
 * long as the program: the runtime may keep what a kernel allocated (a global the
 * standard library makes on first use). Everyone else allocates from the runtime. */

#define DHEAP_RESERVE (16ULL << 30)
#define DHEAP_CHUNK (64ULL << 10)
#define DHEAP_COMMIT (1ULL << 20)

static void dheap_open(void) {
    void *p = mmap(NULL, DHEAP_RESERVE + DHEAP_CHUNK, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("could not reserve address space for the kernels' heap");
    /* chunks start at multiples of their size: a block is aligned to its size, up to 64 KiB */
    S.dheap_lo = S.dheap_next = S.dheap_committed = ((uintptr_t)p + DHEAP_CHUNK - 1) & ~(uintptr_t)(DHEAP_CHUNK - 1);
    S.dheap_hi = S.dheap_lo + DHEAP_RESERVE;
    S.dheap_class = xcalloc(DHEAP_RESERVE / DHEAP_CHUNK, 1);
    S.real_alloc = (void *(*)(i64, i64))dlsym(RTLD_NEXT, "KGEN_CompilerRT_AlignedAlloc");
    S.real_free = (void (*)(void *))dlsym(RTLD_NEXT, "KGEN_CompilerRT_AlignedFree");
    if (!S.real_alloc || !S.real_free) die("the Mojo runtime's allocator was not found");
}

/* `bytes` (whole chunks) never handed out before. */
static uintptr_t dheap_chunks(size_t bytes) {
    if (bytes > S.dheap_hi - S.dheap_next) die("the kernels allocated more than the simulator's heap holds (%llu GiB)",
                                               (unsigned long long)(DHEAP_RESERVE >> 30));
    uintptr_t at = S.dheap_next;
    S.dheap_next += bytes;
    if (S.dheap_next > S.dheap_committed) {
        uintptr_t to = (S.dheap_next + DHEAP_COMMIT - 1) & ~(uintptr_t)(DHEAP_COMMIT - 1);
        if (mprotect((void *)S.dheap_committed, to - S.dheap_committed, PROT_READ | PROT_WRITE) != 0)
            die("could not map memory for the kernels' heap");
        S.dheap_committed = to;
    }
    return at;
}

static void *dheap_alloc(size_t align, size_t size) {
    size_t need = size > align ? size : align;
    int k = 0;
    while ((16ULL << k) < need) {
        if (++k == DHEAP_CLASSES) die("a kernel asked for %zu bytes at once", size);
    }
    size_t block = 16ULL << k;
    if (S.dheap_nfree[k]) return (void *)S.dheap_free[k][--S.dheap_nfree[k]];
    uintptr_t at;
    if (block <= DHEAP_CHUNK) {
        if (S.dheap_carve_end[k] - S.dheap_carve[k] < block) {
            S.dheap_carve[k] = dheap_chunks(DHEAP_CHUNK);
            S.dheap_carve_end[k] = S.dheap_carve[k] + DHEAP_CHUNK;
            S.dheap_class[(S.dheap_carve[k] - S.dheap_lo) / DHEAP_CHUNK] = (uint8_t)(k + 1);
        }
        at = S.dheap_carve[k];
        S.dheap_carve[k] += block;
    } else {
        at = dheap_chunks(block);
        S.dheap_class[(at - S.dheap_lo) / DHEAP_CHUNK] = (uint8_t)(k + 1);
    }
    return (void *)at;
}

/* A block of the device heap back, for the next of its size: only one that can be a block
 * (a chunk of its size, at a block's start) is kept, so a forged pointer changes nothing
 * but that heap. */
static void dheap_free(uintptr_t p) {
    if (p >= S.dheap_next) return;
    size_t chunk = (p - S.dheap_lo) / DHEAP_CHUNK;
    int k = (int)S.dheap_class[chunk] - 1;
    size_t off = p - S.dheap_lo, block = 16ULL << (k < 0 ? 0 : k);
    if (k < 0 || off % (block <= DHEAP_CHUNK ? block : DHEAP_CHUNK) != 0) return;
    if (S.dheap_nfree[k] == S.dheap_capfree[k]) {
        S.dheap_capfree[k] = S.dheap_capfree[k] ? S.dheap_capfree[k] * 2 : 64;
        S.dheap_free[k] = xrealloc(S.dheap_free[k], S.dheap_capfree[k] * sizeof(uintptr_t));
    }
    S.dheap_free[k][S.dheap_nfree[k]++] = p;
}

/* Hidden: the program's own calls come here, the runtime's calls to itself stay its own. */
__attribute__((visibility("hidden"))) void *KGEN_CompilerRT_AlignedAlloc(i64 align, i64 size) {
    if (align <= 0) align = 64; /* as the runtime's own */
    if (S.cur && S.cur != &S.cpu) {
        FENCED;
        return dheap_alloc((size_t)align, size < 0 ? 0 : (size_t)size);
    }
    return S.real_alloc(align, size);
}

__attribute__((visibility("hidden"))) void KGEN_CompilerRT_AlignedFree(void *p) {
    if ((uintptr_t)p - S.dheap_lo < DHEAP_RESERVE) {
        FENCED;
        dheap_free((uintptr_t)p);
        return;
    }
    S.real_free(p);
}
