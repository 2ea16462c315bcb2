/* wbsim_parts/state.c: the limits and constants, the records the simulator keeps (the state S:
 * threads, regions and their shadows, sites, findings, mbarriers; the traffic tables T),
 * and the helpers everything uses (now, die, page_up).
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

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

/* The traffic tables T (see "Memory traffic", wbsim_parts/traffic.c). */
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
