/* wbsim.c: the simulator's runtime, and the harness of the host launcher.
 *
 * The learner's kernels are compiled by the real Mojo compiler with
 * `--sanitize thread`: every load and store the compiled code makes, at its
 * own width, first calls a `__tsan_*` function. No ThreadSanitizer runtime is
 * linked; the functions below are ours. They see every access of every
 * simulated thread to the memory the simulator hands out (the buffers of a
 * case and each block's shared memory), with the address of the instruction
 * that made it, which the workbook turns into the learner's file and line.
 *
 * What a launch does (wbsim_launch):
 * - clusters of blocks run one after another (a launch without clusters has
 *   clusters of one block); the blocks of a cluster run together, interleaved,
 *   so that a cluster barrier can hold them all. Every thread has its own
 *   stack and registers (a ucontext), so it can stop in the middle of the
 *   kernel at barrier(), cluster_wait() or an mbarrier wait and resume there
 *   later;
 * - one thread runs at a time, in a chosen order (forward, or in reverse:
 *   blocks of the cluster and threads alike), until its next barrier(), its
 *   next cluster_wait(), an mbarrier wait whose phase has not completed, or
 *   its end. When every thread of a block is at a barrier(), it opens: the
 *   block's next round begins. A cluster_wait() opens when every thread of
 *   the cluster has arrived (cluster_arrive()); an mbarrier wait when its
 *   phase has all its arrivals (see "mbarriers");
 * - every byte of simulator memory has a shadow: who wrote it last and when
 *   (launch, block, round), who read it, whether anything wrote it at all.
 *   From it come the findings: two threads of a block touching one byte in
 *   one round where one of them writes, unless an mbarrier phase orders them
 *   (a race, whatever the values); two blocks of one launch doing so in
 *   global memory, unless they are blocks of one cluster that a cluster
 *   barrier orders; a read of memory nothing wrote; a read or a write outside
 *   every buffer or shared array; a barrier some threads never reach, or
 *   different barriers in one round (cluster barriers alike); an mbarrier
 *   phase no arrival can complete, or one misused; a load or store at an address
 *   that is not a multiple of the alignment its instruction needs (see "Alignment").
 *   An access that runs out of a buffer or shared array is named after the one it
 *   began in (outside()), and each shared array has a gap after it (wbsim_shared),
 *   so that an overflow is never taken for an access to what lies next.
 * What ThreadSanitizer's pass leaves out, so nothing here sees: a load whose
 * address a later store of the same basic block writes, with no call between
 * (LLVM's tsan-instrument-read-before-write is off): in `x[i] = x[i] + y` only
 * the store calls __tsan_*. That read is not counted (traffic, per-thread
 * reads, budgets) and not checked as a read of memory nothing wrote; its
 * bounds and races are still seen through the store to the same address in
 * the same round (a race with another thread's write is reported as two
 * writes; tests/test_sim.py). Nor are accesses wider than 16 bytes seen.
 * Memory outside the buffers is readable (it holds 0xFF bytes, NaN as a
 * float), so a kernel that reads past an end goes on, and every thread that
 * does the same is counted, not only the first.
 *
 * The learner's code runs in this process, beside the records the verdict is
 * judged from, so they are kept where it cannot reach them unseen:
 * - every byte the simulator writes for itself (S, T, sites, findings,
 *   shadows, counters, threads and their stacks, the result's buffer) lives
 *   in the vault, one private mapping of known bounds (see "The vault"); S
 *   and T are reached through a page of roots that is read-only once set;
 * - the store guard sees each store of the learner's code before it lands
 *   (see "The store guard"): a simulated GPU thread may write only what it
 *   was handed (the case's buffers, its block's shared memory, its own stack,
 *   its own exchange slots, what it allocated: "The device heap"); host code
 *   of the learner's (an op's CPU kernel, a host function) may use the
 *   process's heap but never the vault nor a program's writable data. A
 *   refused store is a finding (wild_write, harness_write) and the case stops
 *   before it lands, as at a fault.
 *
 * The harness side reads the cases' inputs (inputs.bin), hands out buffers,
 * and writes outputs.bin, writers.bin, counters.bin and result.json for the
 * workbook (workbook/kernelrun.py reads them), through the descriptors the
 * workbook opened for them (wbrun.h: WORKBOOK_FDS).
 *
 * How a launcher is started (launcher RUN_DIR MODE REPEATS SECONDS [CASES]) and
 * the inputs file are wbrun.h's, shared with the GPU's harness. MODE is cpu (an
 * op's CPU kernel, called directly) or sim (GPU kernels, simulated).
 * WORKBOOK_SIM_STRETCH (seconds, default 5): longest one simulated thread may
 * run without reaching a barrier or its end before it counts as endless.
 */

#include "wbrun.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <dlfcn.h>
#include <stddef.h>
#include <link.h>
#include <sys/syscall.h>

typedef int64_t i64;
typedef uint64_t u64;
typedef uint32_t u32;

/* ------------------------------------------------------------------------- */
/* Limits and constants                                                      */
/* ------------------------------------------------------------------------- */

#define SHARED_LIMIT (48 * 1024)   /* static shared memory a block may use */
#define SHARED_ARENA (64 * 1024)   /* room for a kernel that asks for more: reported */
#define SHARED_GAP 512             /* bytes nobody owns after each shared array (see wbsim_shared) */
#define MAX_CLUSTER 8              /* blocks in a cluster: the portable limit on NVIDIA GPUs */
#define MAX_REGIONS 64
#define MAX_ALLOCS 64
#define MAX_FINDINGS 64
#define FIRST_THREADS 8
#define STACK_BYTES (256 * 1024)
#define SHADOW_DEPTH 32
#define HEAP_RESERVE (256ULL << 30) /* address space only: buffers sit in the middle */
#define PAGE 4096ULL
#define POISON_WORD 0x7FFEFEFEu     /* a NaN arithmetic never makes: "never written" */
#define SIM_MISUSE 70
#define EXIT_FAULT 71
#define EXIT_TIMEOUT 72

enum { ROLE_INPUT, ROLE_OUTPUT, ROLE_SCRATCH, ROLE_SHARED };
/* AT_MBAR: parked at an mbarrier wait */
enum { ST_RUNNING, ST_AT_BARRIER, ST_FINISHED, ST_AT_WARP, ST_AT_CLUSTER, ST_AT_MBAR };

#define WARP 32                 /* lanes of a warp, as on NVIDIA GPUs */
#define WARP_SLOT 64            /* bytes each lane may put into a warp operation */
#define BLOCK_SLOT 64           /* bytes each thread may put into a block.* exchange (wbsim.mojo's _SLOT) */
#define DHEAP_CLASSES 27        /* sizes of the kernels' heap's blocks: 16 bytes to 1 GiB */
#define MAX_SEGMENTS 64         /* writable segments of the loaded programs the guard keeps learner code out of */
enum { F_INIT = 1, F_ATOMIC = 2, F_OTHER_BLOCK_READ = 4, F_PENDING = 8 }; /* PENDING: an async copy's, not landed */

/* Methods: what a launch did besides its reads and writes, counted in the first repeat
 * (see "Methods"). Warp operations are counted per lane that brings its value, in
 * wbwarp.mojo's numbering (shuffles 1-4, vote 5, elect 6, wbmma's mma 7). */
enum { M_SHUFFLE_DOWN, M_SHUFFLE_UP, M_SHUFFLE_XOR, M_SHUFFLE_IDX, M_VOTE, M_ELECT, M_MMA, M_ASYNC_COPY,
       M_ASYNC_WAIT, M_BARRIER, M_MBAR_INIT, M_MBAR_ARRIVE, M_MBAR_WAIT, M_CLUSTER_ARRIVE, M_CLUSTER_WAIT, M_OPS };
#define WIDTHS 6                      /* access widths: 1, 2, 4, 8, 16 bytes, and wider */
#define M_WIDTH M_OPS                 /* then per kind (global loads, global stores, shared loads, shared
                                         stores) how many accesses of each width */
#define M_ROUNDS (M_WIDTH + 4 * WIDTHS) /* then the most barrier() rounds one block went through */
#define M_COUNT (M_ROUNDS + 1)
enum { USE_LOADS, USE_STORES, USE_ASYNC, USES }; /* per buffer: plain loads, plain stores, async copies' reads */

/* ------------------------------------------------------------------------- */
/* State                                                                     */
/* ------------------------------------------------------------------------- */

typedef struct {
    u64 w_ep, r_ep;          /* epoch (launch, block, round) of the last write, of the recorded read */
    int32_t w_tid, r_tid, r2_tid; /* threads: the last writer, the first reader and another reader of r_ep */
    u32 w_site, r_site, r2_site;
    u32 w_clk, r_clk, r2_clk;  /* each one's own clock then (mbarriers order threads within a round) */
    u32 writes;              /* writes since the repeat began (writes per element) */
    uint16_t w_cl, r_cl, r2_cl; /* the cluster arrivals each of those threads had made then */
    uint16_t xrel;           /* reads by other blocks of the reader's cluster, folded: the
                                cluster phase by whose wait all of them are released */
    uint8_t flags;
} cell_t;

typedef struct {
    uintptr_t base;
    size_t bytes, elem, count;
    int role, zero, rank;
    i64 shape[3];
    char name[48];
    cell_t *shadow;          /* one cell per byte */
} region_t;

typedef struct {
    size_t offset, bytes, elem;
    size_t gpu_offset;       /* where a GPU puts it (arrays back to back); `offset` is ours, after a gap */
    int rank;
    i64 shape[3];
    u32 site;                /* where stack_allocation was called */
} alloc_t;

typedef struct {
    ucontext_t ctx;
    int x, y, z, linear, gtid, state;
    int block, rank, index;  /* its block (linear), that block's rank in the cluster, its slot in S.threads */
    int arrived, waited;     /* cluster barrier: arrivals made, waits completed */
    u64 relaxed;             /* bit n-1: arrival n was cluster_arrive_relaxed() (releases nothing) */
    u32 cluster_site;        /* the cluster_wait() it waits at */
    int ready;               /* may run in this round (not waiting anywhere) */
    int warp_op;             /* the warp operation it waits at (wbwarp.mojo's numbers) */
    u32 warp_site;
    int took_part;           /* in the last completed warp operation of its warp */
    void *barrier_pc;
    void *last_pc;           /* the last access it made: where it is, if it never ends */
    uintptr_t stack_lo, stack_hi; /* the part of its stack its kernel may write */
    u32 barrier_site;
    int alloc_index;
    size_t shared_offset;
    int committed;           /* async-copy groups this thread committed */
    u32 clk;                 /* its own clock: one more at each mbarrier arrive (see "mbarriers") */
    int mbar;                /* parked: which mbarrier of the block (index), */
    i64 mbar_phase;          /* the phase it waits to see completed, */
    int mbar_gen, mbar_blocking; /* the barrier's init then; a blocking wait (never polled) */
    u32 mbar_site;           /* and the line of the wait */
    void *stack[SHADOW_DEPTH];
    int depth;
    double stretch_started;
} thread_t;

typedef struct {
    uintptr_t pc, caller;    /* relative to the executable's base; 0 for a source site */
    const char *file;        /* a source site: where the compiler says the call is */
    int file_len, line, col;
    u64 accesses[4];         /* the first repeat's: global reads, global writes, shared reads, shared writes */
    char launch[48];         /* the kernel that first made them */
    /* The first repeat's traffic (see "Memory traffic"): warp-wide requests, and what they
     * cost a GPU against what they would cost at best: 32-byte sectors of global memory,
     * wavefronts of shared memory (a wavefront past the best is a bank conflict). */
    u64 g_requests, g_sectors, g_ideal, s_requests, s_wavefronts, s_ideal;
    u64 bytes[4];            /* the first repeat's bytes, as accesses: their width is bytes / accesses */
    u32 ops[M_OPS];          /* a source site: the first repeat's methods there (see "Methods") */
    char buffer[48];         /* the first buffer of the case it read or wrote in global memory */
} site_t;

typedef struct {
    char kind[32];
    int case_index, region, alloc;
    u32 site, other_site;
    char hazard[24];
    char launch[48];
    int write, access_bytes, block, round, other_thread;
    i64 index, index_min, index_max, size;
    i64 start_min, start_max; /* outside a buffer or array: the elements its accesses began at */
    int elem, before;        /* and its element's bytes; 1: before its start (else past its end) */
    i64 events, threads, tid_min, tid_max;
    int first[FIRST_THREADS], nfirst;
    int array_rank;          /* a shared array: its shape, element size and where it was made */
    i64 array_shape[3];
    size_t array_elem;
    u32 array_site;
    uint8_t *seen;           /* a bit per thread of the launch */
    size_t seen_bits;
    char extra[512];         /* more JSON fields, already formatted */
} finding_t;

#define MAX_MBARS 16
#define TOKEN_MAGIC 0x5B7ULL

typedef struct {
    uintptr_t addr;
    int gen;                     /* inits so far in this block */
    int count, arrived;          /* arrivals a phase needs; arrivals the current phase has */
    i64 phase;                   /* phases completed since the last init */
    u32 init_site, arrive_site;  /* the line of its last init, of its last arrival */
    u64 init_ep, use_ep;         /* the last init, and the last arrive or wait: who and when */
    int init_tid, use_tid;
    int init_cl, use_cl;         /* the cluster arrivals that thread had made then */
    u32 init_clk, use_clk, use_site;
    u32 *cur, *done;             /* clocks the current phase's arrivals brought; the last completed phase's */
    size_t cap;
} mbar_t;

/* Async copies not landed yet (see wbsim_async_copy). */
struct pending_s {
    uintptr_t dst;
    region_t *arena;          /* the copying thread's block's */
    int gtid, group;          /* group: -1 until committed, then the thread's group number */
    u32 site;
    int bytes;
    uint8_t data[16];
};

typedef struct {
    /* harness */
    wbrun_t run;             /* the command line and inputs.bin (wbrun.h) */
    double stretch_limit;
    int out_fd, writers_fd, counters_fd;
    double started;
    int case_index, total_cases;
    int stopped;             /* some case's launch could not finish */
    int fatal;               /* this case's */
    char *inputs;
    size_t inputs_bytes;
    uintptr_t exe_base;
    /* memory */
    uintptr_t heap_lo, heap_hi, heap_next, heap_case_mark, committed_hi;
    region_t regions[MAX_REGIONS];
    int nregions, case_regions_from;
    region_t *arena;         /* the running thread's block's shared memory */
    region_t *arenas[MAX_CLUSTER]; /* one per block of a cluster, reused by each cluster in turn */
    alloc_t allocs[MAX_ALLOCS];
    int nallocs, shared_problem;
    size_t arena_used;
    /* launch */
    int launch_serial, launch_in_case, rep;
    char label[48];
    void (*entry)(i64);
    i64 kbox;
    int gx, gy, gz, bx, by, bz, block_linear, nthreads;
    int cx, cy, cz, csize, cluster; /* cluster shape, blocks in it, the cluster running now */
    int reverse;
    int rounds[MAX_CLUSTER]; /* each block's barrier() round */
    int cluster_blocks[MAX_CLUSTER];
    u32 phase_sites[64];     /* the cluster_wait() each phase was first waited at */
    int round;
    u64 epoch;
    thread_t *threads;
    int threads_cap;
    char *stacks;
    int stacks_cap;
    ucontext_t main_ctx;
    thread_t *cur;           /* the simulated thread running now, NULL in the launcher */
    thread_t *last_ran;      /* the thread that ran last: where a stop between two stretches was */
    thread_t cpu;            /* the CPU kernel, while it runs (mode cpu) */
    char *scratch;           /* block.* primitives exchange values here */
    char *warp_in, *warp_out; /* per thread: what it brought to a warp operation; what all brought, once complete */
    size_t scratch_cap;
    u32 *counts;             /* per thread of the launch: 8 counters */
    size_t counts_cap;
    u32 *vc[MAX_CLUSTER];    /* per block of the cluster, per thread of it: what it knows of each
                                thread's clock in its block (mbarriers) */
    size_t vc_cap[MAX_CLUSTER];
    int vc_on[MAX_CLUSTER];  /* this block uses mbarriers: the clocks order accesses within a round */
    u64 progress;            /* arrivals, inits, threads reaching a barrier or their end: a parked wait's hope */
    u32 method[M_COUNT];     /* the launch's methods, first repeat (see "Methods") */
    u32 buffer_use[MAX_REGIONS][USES]; /* per buffer of the case: this launch's USE_* counts, first repeat */
    int async_reading;       /* the access being watched is an async copy's read of its source */
    int keep_shared;         /* record block 0's shared writers (forward order, first repeat) */
    int32_t *shared_writers;
    char shared_table[2048]; /* extra members of result.json (the case a fault stopped) */
    /* findings and sites */
    finding_t findings[MAX_FINDINGS];
    int nfindings;
    i64 dropped;
    site_t *sites;
    u32 nsites, sites_cap;
    u32 *site_hash;
    u32 site_hash_cap;
    /* async copies not landed yet (see wbsim_async_copy) */
    struct pending_s *pendings;
    int npending, pending_cap;
    /* mbarriers, per block of the cluster, by rank (see "mbarriers") */
    mbar_t mbars[MAX_CLUSTER][MAX_MBARS];
    int nmbars[MAX_CLUSTER];
    /* a learner's host function (wbsim_host_label) */
    int host_calling;        /* inside it */
    char host_label[64];     /* the name its launches get */
    i64 host_label_len;
    /* the store guard (see "The store guard") */
    uintptr_t data_lo[MAX_SEGMENTS], data_hi[MAX_SEGMENTS]; /* the loaded programs' writable segments */
    int nsegments;
    /* the device heap (see "The device heap") */
    uintptr_t dheap_lo, dheap_hi, dheap_next, dheap_committed;
    uint8_t *dheap_class;    /* per chunk: 1 + the class of its blocks, 0 for none (or a large block's rest) */
    uintptr_t dheap_carve[DHEAP_CLASSES], dheap_carve_end[DHEAP_CLASSES]; /* the chunk each size is cut from */
    uintptr_t *dheap_free[DHEAP_CLASSES]; /* blocks given back, by size */
    size_t dheap_nfree[DHEAP_CLASSES], dheap_capfree[DHEAP_CLASSES];
    void *(*real_alloc)(i64, i64); /* the runtime's own */
    void (*real_free)(void *);
    /* the end */
    char timeout_json[1024];
} state_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stdout, "workbook-sim: %s\n", buf);
    fflush(stdout);
    _exit(SIM_MISUSE);
}

static size_t page_up(size_t n) { return (n + PAGE - 1) & ~(PAGE - 1); }

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

#define TRAFFIC_MAX_REQUESTS (1 << 17) /* per block; past it, the rest is not priced */

typedef struct {
    u64 key;                 /* warp, site, occurrence; 0 = empty */
    u32 site;
    uint8_t shared, write, lanes;
    u64 addr[WARP];          /* each lane's address (shared: from the arena's start) */
    u32 bytes[WARP];
    uint8_t lane[WARP];      /* which lane of its warp made it (shared memory's phases go by lane) */
} request_t;

typedef struct { u64 key; u32 value; } slot_t;

typedef struct {
    slot_t *seen;            /* (thread, site) -> how many accesses it made there: its occurrence */
    u32 seen_cap, seen_n;
    slot_t *index;           /* (warp, site, occurrence) -> its request, 1-based */
    u32 index_cap;
    request_t *requests;
    u32 n, cap;
    u64 unpriced;            /* accesses past TRAFFIC_MAX_REQUESTS */
} traffic_t;

#define T (*(traffic_t *)roots.r.traffic)

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

static const struct pending_s *pending_at(uintptr_t a) {
    for (int i = S.npending - 1; i >= 0; i--)
        if (a >= S.pendings[i].dst && a < S.pendings[i].dst + (uintptr_t)S.pendings[i].bytes) return &S.pendings[i];
    return NULL;
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

static void host_access(uintptr_t a, size_t n, int write, void *pc);

static inline void watch(void *addr, size_t n, int write, int atomic, void *pc) {
    uintptr_t a = (uintptr_t)addr;
    thread_t *t = S.cur;
    int buffers = a - S.heap_lo < HEAP_RESERVE && n <= S.heap_lo + HEAP_RESERVE - a; /* the reservation */
    if (__builtin_expect(t == NULL, 1)) {
        if (__builtin_expect(S.host_calling, 0)) { /* a learner's host function */
            FENCE_OPEN();
            if (buffers) host_access(a, n, write, pc);
            else if (write) host_store(a, n, pc);
            FENCE_CLOSE();
        }
        return;
    }
    FENCE_OPEN();
    t->last_pc = pc;
    if (staged.staged) staged_flush();
    if (access_need > 1 && buffers && t != &S.cpu && !S.run.cpu_mode) check_alignment(t, a, n, write, pc);
    if (!buffers) {
        if (write) {
            if (t == &S.cpu) host_store(a, n, pc);
            else thread_store(t, a, n, pc);
        }
    } else {
        on_access(a, n, write, atomic, pc, 0);
    }
    FENCE_CLOSE();
}

/* The instrumentation's entry points. */
#define RA __builtin_return_address(0)
/* An access the compiler did not know to be aligned to its width (see "Memory traffic"). */
#define UNALIGNED(call) (traffic_unaligned = 1, (call), traffic_unaligned = 0)
/* An access the compiler took to be aligned (see "Alignment"). */
#define ALIGNED(N, call) (access_need = (N), (call), access_need = 0)
#define ACCESS(N)                                                                   \
    void __tsan_read##N(void *a) { ALIGNED(N, watch(a, N, 0, 0, RA)); }             \
    void __tsan_write##N(void *a) { ALIGNED(N, watch(a, N, 1, 0, RA)); }            \
    void __tsan_unaligned_read##N(void *a) { UNALIGNED(watch(a, N, 0, 0, RA)); }    \
    void __tsan_unaligned_write##N(void *a) { UNALIGNED(watch(a, N, 1, 0, RA)); }   \
    void __tsan_volatile_read##N(void *a) { ALIGNED(N, watch(a, N, 0, 0, RA)); }    \
    void __tsan_volatile_write##N(void *a) { ALIGNED(N, watch(a, N, 1, 0, RA)); }   \
    void __tsan_unaligned_volatile_read##N(void *a) { UNALIGNED(watch(a, N, 0, 0, RA)); } \
    void __tsan_unaligned_volatile_write##N(void *a) { UNALIGNED(watch(a, N, 1, 0, RA)); } \
    void __tsan_read##N##_pc(void *a, void *pc) { ALIGNED(N, watch(a, N, 0, 0, pc)); } \
    void __tsan_write##N##_pc(void *a, void *pc) { ALIGNED(N, watch(a, N, 1, 0, pc)); }
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

void __tsan_read_range(void *a, size_t n) { watch(a, n, 0, 0, RA); }
void __tsan_write_range(void *a, size_t n) { watch(a, n, 1, 0, RA); }
void __tsan_read_range_pc(void *a, size_t n, void *pc) { watch(a, n, 0, 0, pc); }
void __tsan_write_range_pc(void *a, size_t n, void *pc) { watch(a, n, 1, 0, pc); }

void *__tsan_memcpy(void *d, const void *s, size_t n) {
    watch((void *)s, n, 0, 0, RA);
    watch(d, n, 1, 0, RA);
    return memcpy(d, s, n);
}
void *__tsan_memmove(void *d, const void *s, size_t n) {
    watch((void *)s, n, 0, 0, RA);
    watch(d, n, 1, 0, RA);
    return memmove(d, s, n);
}
void *__tsan_memset(void *d, int v, size_t n) {
    watch(d, n, 1, 0, RA);
    return memset(d, v, n);
}

void __tsan_func_entry(void *caller) {
    thread_t *t = S.cur;
    if (!t) return;
    FENCE_OPEN();
    if (t->depth < SHADOW_DEPTH) t->stack[t->depth] = caller;
    t->depth++;
    FENCE_CLOSE();
}
void __tsan_func_exit(void) {
    thread_t *t = S.cur;
    if (t && t->depth > 0) {
        FENCE_OPEN();
        t->depth--;
        FENCE_CLOSE();
    }
}
void __tsan_init(void) { vault_open(); }
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}
void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { (void)mo; }

/* Atomics: done for real (one thread runs at a time, so plainly), and watched
 * as atomic accesses: atomics never race with each other. Every store they make lands
 * after watch() saw it (a compare-exchange's expected value too, when it fails). */
#define ATOMIC_OPS(N, T)                                                                            \
    T __tsan_atomic##N##_load(const volatile T *a, int mo) {                                        \
        (void)mo; watch((void *)a, sizeof(T), 0, 1, RA); return *a;                                 \
    }                                                                                               \
    void __tsan_atomic##N##_store(volatile T *a, T v, int mo) {                                     \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); *a = v;                                    \
    }                                                                                               \
    T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo) {                                     \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = v; return o;                \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_add(volatile T *a, T v, int mo) {                                    \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = o + v; return o;            \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_sub(volatile T *a, T v, int mo) {                                    \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = o - v; return o;            \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_and(volatile T *a, T v, int mo) {                                    \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = o & v; return o;            \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_or(volatile T *a, T v, int mo) {                                     \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = o | v; return o;            \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_xor(volatile T *a, T v, int mo) {                                    \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = o ^ v; return o;            \
    }                                                                                               \
    T __tsan_atomic##N##_fetch_nand(volatile T *a, T v, int mo) {                                   \
        (void)mo; watch((void *)a, sizeof(T), 1, 1, RA); T o = *a; *a = (T)~(o & v); return o;     \
    }                                                                                               \
    int __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo) {    \
        (void)mo; (void)fmo; watch((void *)a, sizeof(T), 1, 1, RA);                                 \
        if (*a == *c) { *a = v; return 1; } watch(c, sizeof(T), 1, 0, RA); *c = *a; return 0;       \
    }                                                                                               \
    int __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo) {      \
        (void)mo; (void)fmo; watch((void *)a, sizeof(T), 1, 1, RA);                                 \
        if (*a == *c) { *a = v; return 1; } watch(c, sizeof(T), 1, 0, RA); *c = *a; return 0;       \
    }                                                                                               \
    T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo) {          \
        (void)mo; (void)fmo; watch((void *)a, sizeof(T), 1, 1, RA);                                 \
        T o = *a; if (o == c) *a = v; return o;                                                     \
    }
ATOMIC_OPS(8, uint8_t)
ATOMIC_OPS(16, uint16_t)
ATOMIC_OPS(32, uint32_t)
ATOMIC_OPS(64, uint64_t)
ATOMIC_OPS(128, unsigned __int128)

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
/* Launches made inside the learner's host code (elementwise, in wbsim.mojo)   */
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

/* ctx.enqueue_function in a learner's host function (wbsim.mojo's DeviceContext):
 * the grid and block it asks for, under the same name and order. */
i64 wbsim_host_launch3(void (*entry)(i64), i64 kbox, i64 gx, i64 gy, i64 gz, i64 bx, i64 by, i64 bz) {
    FENCED;
    i64 rc = launch_all(entry, kbox, gx, gy, gz, bx, by, bz, 1, 1, 1, S.rep % 2, S.host_label, S.host_label_len);
    staged_flush();
    return rc;
}
