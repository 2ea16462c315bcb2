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
 * workbook (workbook/run/kernelrun.py reads them), through the descriptors the
 * workbook opened for them (wbrun.h: WORKBOOK_FDS).
 *
 * How a launcher is started (launcher RUN_DIR MODE REPEATS SECONDS [CASES]) and
 * the inputs file are wbrun.h's, shared with the GPU's harness. MODE is cpu (an
 * op's CPU kernel, called directly) or sim (GPU kernels, simulated).
 * WORKBOOK_SIM_STRETCH (seconds, default 5): longest one simulated thread may
 * run without reaching a barrier or its end before it counts as endless.
 *
 * The runtime is one translation unit, in parts that this file includes in this
 * order (every static stays static, and `cc -c wbsim.c` builds it all):
 * - wbsim_parts/state.c: limits and constants, the state S and the traffic tables T;
 * - wbsim_parts/vault.c: "The vault", "The fence", and vault_open;
 * - wbsim_parts/heap.c: "The device heap";
 * - wbsim_parts/shadow.c: sites, findings, "Simulator memory", "Watching accesses" (on_access,
 *   where races, reads of memory nothing wrote and bounds are found);
 * - wbsim_parts/traffic.c: "Memory traffic", "Methods", and count();
 * - wbsim_parts/guard.c: "Alignment", "The store guard";
 * - wbsim_parts/tsan.c: the instrumentation's entry points (watch, __tsan_*, atomics);
 * - wbsim_parts/harness.c: "Files" (result.json), "Faults and time limits", "The harness",
 *   and what a launch hands back (writers.bin, counters.bin);
 * - wbsim_parts/kernel.c: "What a kernel calls" (ids, warp operations, shared memory, async
 *   copies);
 * - wbsim_parts/barriers.c: barrier(), "Clusters", "mbarriers", and barriers that never open;
 * - wbsim_parts/threads.c: "Launching" (the scheduler), and launches in the learner's host code.
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

#include "wbsim_parts/state.c"
#include "wbsim_parts/vault.c"
#include "wbsim_parts/heap.c"
#include "wbsim_parts/shadow.c"
#include "wbsim_parts/traffic.c"
#include "wbsim_parts/guard.c"
#include "wbsim_parts/tsan.c"
#include "wbsim_parts/harness.c"
#include "wbsim_parts/kernel.c"
#include "wbsim_parts/barriers.c"
#include "wbsim_parts/threads.c"
