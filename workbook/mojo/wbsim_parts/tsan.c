/* wbsim_parts/tsan.c: the instrumentation's entry points (__tsan_*: loads, stores, ranges,
 * memcpy, function entry and exit, atomics), each through watch().
 * Part of the simulator's runtime: wbsim.c includes it; wbsim.c's header explains the design. */

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
