"""Running a built launcher on one device, and reading back what it handed over.

The launcher is a child process (workbook/child/processes.py) in a folder of its
own (workbook/child/protocol.py): inputs.bin in; its outputs, the simulator's maps
(writers) and counts (counters), result.json, its phase and its log out,
through descriptors opened here before it starts (workbook/child/channel.py), each
read back with a cap from what the plan says it writes. Nothing it leaves in
its folder is read. Nothing it does can hang or crash the workbook: a crash, a
fault or an endless loop becomes a status.

The simulator (and an op's CPU kernel, which runs in the same program) says
where things happened as sites, addresses in the program; they are turned
into the learner's lines here, right after the run (workbook/compile/symbols.py), so
that a finding leaves this module with its places attached.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import signal
import struct
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..child import gpulease, limits, protocol
from ..child.channel import ENV, Channel
from ..child.processes import Children
from ..compile.launcher import FLUSH_BYTES, Plan, outputs_size, read_outputs
from ..compile.symbols import Place
from ..core import settings
from ..core.i18n import Msg, msg
from . import simfindings

SIGNALS = {signal.SIGSEGV: "SIGSEGV", signal.SIGBUS: "SIGBUS", signal.SIGABRT: "SIGABRT", signal.SIGFPE: "SIGFPE",
           signal.SIGILL: "SIGILL", signal.SIGKILL: "SIGKILL", signal.SIGALRM: "SIGALRM"}
FAULT_EXIT = 71  # wbsim.c: the kernel touched memory far outside every buffer; its case stopped there
TIMEOUT_EXIT = 72  # wbsim.c: past the time limit, or one thread never reached a barrier or its end

# Per thread, what wbsim.c counts (counters.bin): accesses and bytes.
COUNTERS = ("global_reads", "global_read_bytes", "global_writes", "global_write_bytes",
            "shared_reads", "shared_read_bytes", "shared_writes", "shared_write_bytes")
# Per launch, how it did its work (counters.bin, kind 5; wbsim_parts/state.c's M_*): warp operations by
# kind (per lane), async copies and waits, barrier() calls, mbarrier inits, arrivals and
# completed waits, cluster arrivals and waits; then the accesses of each kind by width; then
# the most barrier() rounds one block went through.
OPS = ("shuffle_down", "shuffle_up", "shuffle_xor", "shuffle_idx", "vote", "elect", "mma", "async_copy",
       "async_wait", "barrier", "mbarrier_init", "mbarrier_arrive", "mbarrier_wait", "cluster_arrive",
       "cluster_wait")
ACCESS_KINDS = ("global_load", "global_store", "shared_load", "shared_store")
WIDTHS = (1, 2, 4, 8, 16, 32)  # bytes: an access counts under the widest of these it reaches
METHODS = (*OPS, *(f"{kind}_{w}" for kind in ACCESS_KINDS for w in WIDTHS), "barrier_rounds")
# Per launch and buffer it used (kind 6): plain loads, plain stores, reads by async copies.
USES = ("loads", "stores", "async_reads")
# A source site (a line the compiler named) in result.json: [0, 0, file, line, column,
# kernel, then its OPS]; an access site: [pc, caller, kernel, global reads, global writes,
# shared reads, shared writes, six traffic counts, then its bytes of each of the four, and
# the first buffer of the case it read or wrote in global memory].
SOURCE_OPS = 6
SITE_BYTES = 13

# A learner's runs on the GPU at once (several checks in parallel share one GPU), and
# compute-sanitizer's slow runs apart from them, so that they never hold up the plain runs.
GPU_SLOTS = threading.BoundedSemaphore(4)
SANITIZER_SLOTS = threading.BoundedSemaphore(2)
# The memory compute-sanitizer itself may take around a launcher (its records of every
# access): the tool's, not the learner's, and counted in the same containment as the
# launcher it runs (workbook/child/containment.py), so allowed on top of the learner's.
TOOL_MEMORY_MB = 4096
# Seconds a GPU run's process may take to be gone once it ended or was killed (the driver
# tears its context down first), before its GPU is handed on regardless. After a timeout
# only a moment: a deadlocked kernel's process may sit in the driver for minutes, and the
# check must end within its limit plus a few seconds (issue 39); processes.py reaps it later.
GPU_SETTLE = 30.0
GPU_SETTLE_AFTER_TIMEOUT = 2.0
# Seconds past the launcher's own limit (it stops itself then: SIGALRM) before it is killed.
GPU_GRACE = 2.0


@contextlib.contextmanager
def gpu_slot(mode: str, sanitizer: bool, children: Children | None = None):
    """A slot on the GPU for one run (nothing to wait for on the CPU or the simulator),
    with the environment that puts the run on it. A graded run holds a lease on its GPU
    (workbook/child/gpulease.py), waited for no longer than the run's deadline: gpulease.Busy
    past it; a learner's shares the GPU within this process's bound."""
    if mode != "gpu":
        yield {}
        return
    if children is not None and children.graded:
        with gpulease.hold(children.deadline, children.cancelled) as lease:
            yield lease.env
        return
    with SANITIZER_SLOTS if sanitizer else GPU_SLOTS:
        yield {}


# site ids -> places, for one program (with hints: what each site touched)
Symbolize = Callable[[Path, list, set[int], dict[int, str]], dict[int, Place]]


@dataclass
class LaunchCounts:
    """What every thread of one launch did, in the first repeat: COUNTERS per thread."""

    case: int
    launch: int  # its number within the case (0, 1, ...)
    label: str
    block: tuple[int, int, int]
    per_thread: np.ndarray  # shape (threads, len(COUNTERS))


@dataclass
class SharedMap:
    """Who wrote each element of one shared array in block 0, after one launch of a case
    (the simulator's first repeat, forward order): with the launch's own block and grid,
    since a thread id means nothing without them, and the array's shape and allocation
    site, whose line names its variable."""

    alloc: int  # the array's number in its launch, in allocation order
    launch: int  # the launch of the case that used it (0, 1, ...)
    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    shape: list[int]  # as allocated: [n], [rows, cols], ...
    site: int  # where stack_allocation was called (a site id)
    writers: np.ndarray  # per element, the writer's thread id in the launch (-1: nobody)
    place: Place | None = None  # the allocation's line in the learner's file


@dataclass
class LaunchMethods:
    """How one launch did its work, in the first repeat (see METHODS and USES)."""

    case: int
    launch: int
    counts: dict[str, int] = field(default_factory=dict)  # METHODS -> count
    buffers: dict[str, dict[str, int]] = field(default_factory=dict)  # buffer -> USES -> count


@dataclass
class KernelRun:
    """What came back from one launcher run."""

    status: str  # ok | fatal | crash | timeout | cancelled
    message: Msg | None = None
    output: str = ""  # the child's own words, for a crash
    outputs: dict[int, list[list[np.ndarray]]] = field(default_factory=dict)  # case -> repeats -> outputs
    findings: list[dict] = field(default_factory=list)  # the simulator's, with "place"/"other_place" attached
    writers: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (case, output) -> thread ids
    shared: dict[int, list[SharedMap]] = field(default_factory=dict)  # case -> block 0's shared arrays, per launch
    counts: list[LaunchCounts] = field(default_factory=list)
    methods: dict[tuple[int, int], LaunchMethods] = field(default_factory=dict)  # (case, launch) -> its methods
    most_writes: dict[tuple[int, int], int] = field(default_factory=dict)  # (case, output) -> writes to one element
    # (case, launch) -> buffer -> (the most writes that launch made to one element, that element)
    launch_writes: dict[tuple[int, int], dict[str, tuple[int, int]]] = field(default_factory=dict)
    sites: list = field(default_factory=list)  # the (last) process's sites, with what each read and wrote
    binary: Path | None = None
    timeout: dict | None = None  # where the threads were when the time ran out
    times: dict[int, list[int]] = field(default_factory=dict)  # timed case -> each launch's device time, ns
    limit: float = 0.0  # the time limit it ran under
    seconds: float = 0.0


def run(children: Children, binary: Path, plan: Plan, inputs: Path, mode: str, repeats: int,
        cases: list[int], prefix: list[str] | None = None, env: dict[str, str] | None = None,
        limit: float | Callable[[], float] | None = None, tick=None, symbolize: Symbolize | None = None,
        keep: tuple[int, ...] = ()) -> KernelRun:
    """Run `binary` in `mode` (gpu, cpu, sim) on `cases`, `repeats` times each. `limit`
    may be a function, asked as the run goes (timing.py: it can shrink once the
    solution's own time is known). `prefix`: a program that runs the launcher
    (compute-sanitizer), and `keep`: descriptors it is handed too (its report's).

    A fault (memory far outside every buffer) ends the process in its case: the
    case is reported, and the launcher runs again for the cases after it, so one
    faulting case does not hide the others."""
    total = KernelRun("ok")
    for chunk in chunks(plan, cases, repeats, mode, settings.file_limit_mb() * limits.MB // 2):
        _run_cases(total, children, binary, plan, inputs, mode, repeats, chunk, prefix, env, limit, tick, symbolize,
                   keep)
        if total.status not in ("ok", "fatal"):
            break
    return total


def chunks(plan: Plan, cases: list[int], repeats: int, mode: str, cap: int) -> list[list[int]]:
    """`cases` in runs whose files stay under `cap` bytes, half the per-file limit (workbook/child/limits.py).

    That limit is the learner's: it stops a kernel that prints without end. What a run
    writes for the workbook (every repeat's outputs, and on the simulator who wrote each
    element) grows with the cases asked for, 20 seeds of a large case in one go, so the
    workbook splits them rather than let its own files run into the limit (that lost cases
    without a word). A case alone over the cap still runs, alone."""
    if not cap:
        return [list(cases)]
    found: list[list[int]] = []
    size = 0
    for index in cases:
        cost = written(plan, index, repeats, mode)
        if not found or (size + cost > cap and found[-1]):
            found.append([])
            size = 0
        found[-1].append(index)
        size += cost
    return found


def written(plan: Plan, index: int, repeats: int, mode: str) -> int:
    """The bytes one case adds to the run's files: outputs.bin, every repeat; on the
    simulator also writers.bin (who wrote each output element) and counters.bin (each
    launch's threads, the first repeat)."""
    if not 0 <= index < len(plan.cases):
        return 0  # a timed case: nothing read back
    case = plan.cases[index]
    cost = sum((o.nbytes + 16) * repeats for o in case.outputs())
    if mode != "gpu":
        cost += sum(4 * o.count + 16 for o in case.outputs())
        for launch in case.launches:
            threads = math.prod(launch.grid) * math.prod(launch.block)
            cost += threads * len(COUNTERS) * 4 + 80
            cost += 16 + 4 * len(METHODS) + (16 + 4 * len(USES) + 48) * len(case.buffers)
    return cost


def _run_cases(total: KernelRun, children: Children, binary: Path, plan: Plan, inputs: Path, mode: str,
               repeats: int, cases: list[int], prefix, env, limit, tick, symbolize, keep) -> None:
    """One chunk of cases into `total`: a process, and another after each fault."""
    remaining = list(cases)
    while remaining:
        try:
            with gpu_slot(mode, prefix is not None, children) as on_gpu:
                got, stopped = _run_once(children, binary, plan, inputs, mode, repeats, remaining, prefix,
                                         {**(env or {}), **on_gpu}, limit, tick, symbolize, keep)
        except gpulease.Busy:
            total.status, total.message = "timeout", msg("gpu.busy")
            return
        total.seconds += got.seconds
        total.outputs.update(got.outputs)
        total.findings += got.findings
        total.writers.update(got.writers)
        total.shared.update(got.shared)
        total.counts += got.counts
        total.methods.update(got.methods)
        total.most_writes.update(got.most_writes)
        total.launch_writes.update(got.launch_writes)
        total.times.update(got.times)
        total.timeout = total.timeout or got.timeout
        total.sites, total.binary = merge_sites(total.sites, got.sites), got.binary or total.binary
        total.limit = got.limit or total.limit
        if got.status not in ("ok", "fatal") or stopped is None:
            if got.status != "ok":
                total.status = got.status
            total.message, total.output = got.message or total.message, got.output or total.output
            return
        total.status = "fatal"
        remaining = remaining[remaining.index(stopped) + 1:] if stopped in remaining else []


def extra_memory_mb(plan: Plan, cases: list[int], mode: str, prefix: list[str] | None) -> int:
    """What a launcher may hold on top of the learner's allowance: the workbook's own data,
    the GPU driver's own memory (limits.GPU_RUNTIME_MB) and a tool's around it."""
    return (own_memory_mb(plan, cases, mode) + limits.runtime_allowance_mb(mode)
            + (TOOL_MEMORY_MB if prefix else 0))


def own_memory_mb(plan: Plan, cases: list[int], mode: str) -> int:
    """What a launcher needs for the workbook's own data, on top of the learner's memory
    allowance: on a GPU it reads the whole inputs file (every case's, the timed ones'
    included, into a buffer that grows by doubling), stages the inputs in host buffers the
    driver pins and mirrors, and brings the outputs back the same way: about four times
    the bytes. p31's 272 MB timed tables took its launcher past a 4 GB limit (a 2 GB
    allocation failed). The simulator's buffers are the kernel's own memory there, and
    stay under the learner's allowance."""
    if mode != "gpu":
        return 0
    specs = [*plan.cases, *plan.timed]
    moved = plan.input_bytes + sum(b.nbytes for i in cases if 0 <= i < len(specs) for b in specs[i].outputs())
    flush = FLUSH_BYTES if any(i >= len(plan.cases) for i in cases) else 0  # a timed case's L2 flush
    return (4 * moved + flush) // limits.MB


def merge_sites(have: list, more: list) -> list:
    """Two processes' sites as one table: each process numbers its sites as it meets them,
    so the same instruction is matched by where it is (pc, caller, kernel; a source site by
    its file, line and column) and its counts (reads, writes, requests, sectors, ...; a
    source site's operations) are added up. Findings keep their own process's numbers:
    they are placed right after each run."""
    if not have:
        return list(more)
    merged = [list(site) for site in have]
    at = {_site_key(site): n for n, site in enumerate(merged)}
    for site in more:
        key = _site_key(site)
        n = at.get(key)
        if n is None:
            at[key] = len(merged)
            merged.append(list(site))
        else:
            first = len(key)
            merged[n][first:] = [a + b if isinstance(a, int) and isinstance(b, int) else a
                                 for a, b in zip(merged[n][first:], site[first:])]
    return merged


def _site_key(site: list) -> tuple:
    """What identifies a site across processes: a source site (pc and caller 0) by its file,
    line, column and kernel; an access site by its pc, caller and kernel."""
    if len(site) >= 5 and site[0] == 0 and site[1] == 0 and isinstance(site[2], str):
        return tuple(site[:SOURCE_OPS])
    return tuple(site[:3])


def _run_once(children: Children, binary: Path, plan: Plan, inputs: Path, mode: str, repeats: int,
              cases: list[int], prefix, env, limit, tick, symbolize, keep) -> tuple[KernelRun, int | None]:
    """One process over `cases`; the case a fault stopped it in, if one did."""
    folder = Path(tempfile.mkdtemp(prefix=f"workbook-{plan.puzzle.id}-{mode}-"))
    channel = Channel(*protocol.LAUNCHER_FILES, "log")
    try:
        (folder / protocol.INPUTS_BIN).symlink_to(inputs)
        fixed = limit if isinstance(limit, (int, float)) and limit > 0 else None
        ceiling = fixed or settings.run_timeout() * (10 if callable(limit) else 1)
        seconds = str(int(ceiling) + 1) if mode == "gpu" else f"{ceiling:.3f}"
        argv = [*(prefix or []), str(binary), str(folder), mode, str(repeats), seconds, ",".join(map(str, cases))]
        child_env = dict(env or {})
        if mode != "gpu":
            child_env["WORKBOOK_SIM_STRETCH"] = f"{settings.sim_stretch():g}"
            child_env["WORKBOOK_SIM_FENCE"] = "1" if settings.sim_fence() else "0"
        handed = {name: sink for name, sink in channel.sinks.items() if name != "log"}
        child_env[ENV] = ",".join(f"{name}:{sink.fd}" for name, sink in handed.items())
        # The launcher stops itself at its limit and says where it was; a limit given as a
        # function is this side's to keep, and SIGUSR1 asks the simulator where it was.
        child = children.start(argv, log=channel["log"], env=child_env, cwd=folder, learner=True,
                               memory_extra_mb=extra_memory_mb(plan, cases, mode, prefix),
                               pass_fds=(*(sink.fd for sink in handed.values()), *keep))
        waited = limit if callable(limit) else ceiling + (GPU_GRACE if mode == "gpu" else 5)
        outcome = children.wait(child, waited, (lambda: tick(channel["phase"])) if tick else None,
                                soft=None if mode == "gpu" else signal.SIGUSR1)
        if mode == "gpu":  # the GPU is handed on only once the driver let the process go
            child.gone(GPU_SETTLE_AFTER_TIMEOUT if outcome.timed_out or outcome.returncode in (
                -signal.SIGALRM, TIMEOUT_EXIT) else GPU_SETTLE)
        limit = limit() if callable(limit) else ceiling
        if outcome.cancelled:
            return KernelRun("cancelled", seconds=outcome.seconds), None
        result = protocol.read_result(channel["result"])
        log = child.log_text()
        if outcome.limit is not None:  # a resource limit stopped it: that, whatever it did next
            return KernelRun("crash", outcome.limit, _tail(log), seconds=outcome.seconds), None
        got = KernelRun("ok", seconds=outcome.seconds)
        if result is not None:
            _read_details(channel, result, plan, cases, repeats, mode, got, binary, symbolize)
        if outcome.timed_out or (result is not None and result.get("status") == "timeout") or (
                result is None and outcome.returncode in (-signal.SIGALRM, TIMEOUT_EXIT)):
            got.status = "timeout"
            got.limit = limit
            got.message = msg("run.timeout", seconds=round(limit))
            if mode == "gpu":
                got.timeout = _gpu_timeout(channel, plan)
            if got.timeout and got.timeout.get("why") == "stretch":
                got.message = msg("run.stuck_thread", seconds=round(settings.sim_stretch()))
            return got, None
        if result is None:
            return KernelRun("crash", _death(outcome.returncode, log), _tail(log), seconds=outcome.seconds), None
        got.status = str(result.get("status", "ok"))
        stopped = result.get("stopped_case")
        if outcome.returncode == FAULT_EXIT and isinstance(stopped, int):
            got.status = "fatal"
            return got, stopped
        if outcome.returncode not in (0, None) and got.status == "ok":
            return KernelRun("crash", _death(outcome.returncode, log), _tail(log), seconds=outcome.seconds), None
        return got, None
    finally:
        channel.close()
        shutil.rmtree(folder, ignore_errors=True)


def _gpu_timeout(channel: Channel, plan: Plan) -> dict | None:
    """Where a GPU run past its limit was: the case (the launcher's last phase) and that
    case's kernels. The GPU cannot say which thread hung, but the check names those."""
    phase, numbers, _ = protocol.read_phase(channel["phase"])
    index = numbers[0] - 1 if phase == "running" and numbers else -1
    if not 0 <= index < len(plan.cases):
        return None
    return {"case": index, "kernels": list(dict.fromkeys(launch.name for launch in plan.cases[index].launches))}


def maps_cap(plan: Plan, cases: list[int], mode: str) -> int:
    """The most the simulator's maps and counts of `cases` may take (writers.bin and
    counters.bin each): what the plan says (`written`), and room for the maps of shared
    arrays, which the kernel sizes; never past the learner's file limit where one is set."""
    if mode == "gpu":
        return 0
    planned = sum(written(plan, index, 1, mode) for index in cases)
    room = planned + (64 << 20)
    file_cap = settings.file_limit_mb() * limits.MB
    return min(room, file_cap) if file_cap else room


def _read_details(channel: Channel, result: dict, plan: Plan, cases: list[int], repeats: int, mode: str,
                  got: KernelRun, binary: Path, symbolize: Symbolize | None) -> None:
    got.outputs = read_outputs(plan, channel["outputs"].read(outputs_size(plan, cases, repeats)), cases, repeats)
    _read_writers(channel["writers"].read(maps_cap(plan, cases, mode)), got)
    _read_counters(channel["counters"].read(maps_cap(plan, cases, mode)), got)
    for key, value in result.items():
        if key.startswith("times_") and key[6:].isdigit() and isinstance(value, list):
            got.times[int(key[6:])] = [int(v) for v in value if isinstance(v, int) and v > 0]
    got.findings = [f for f in result.get("findings", []) if isinstance(f, dict)]
    got.timeout = result.get("timeout") if isinstance(result.get("timeout"), dict) else None
    sites = result.get("sites", [])
    got.sites, got.binary = sites if isinstance(sites, list) else [], binary
    if symbolize is None:
        return
    wanted: set[int] = set()
    timeout_sites: list[list] = []
    for f in got.findings:
        wanted |= {s for s in (f.get("site"), f.get("other_site")) if isinstance(s, int) and s > 0}
        for wait in f.get("waits", []):
            wanted.add(wait[0])
        if isinstance(f.get("array"), dict):
            wanted.add(f["array"].get("site", 0))
        if "pc" in f:  # a fault: where the instruction was
            timeout_sites += _where(f)
    allocated = {m.site for maps in got.shared.values() for m in maps}
    wanted |= allocated
    if got.timeout and "pc" in got.timeout:
        timeout_sites += _where(got.timeout)
    extra = {len(sites) + 1 + k: site for k, site in enumerate(timeout_sites)}
    # Shared arrays are named by the compiler's own line for them: those first, so that an
    # access the compiler gave no line can be matched to a line that touches its array.
    arrays = {f["array"].get("site", 0) for f in got.findings if isinstance(f.get("array"), dict)}
    arrays |= allocated
    named = symbolize(binary, sites, arrays, {}) if arrays else {}
    hints: dict[int, str] = {}
    for f in got.findings:
        name = f.get("buffer", "")
        if isinstance(f.get("array"), dict):
            match = simfindings.array_name(named.get(f["array"].get("site", 0)))
            name = match.group(1) if match else ""
        for key in ("site", "other_site"):
            if name and isinstance(f.get(key), int):
                hints[f[key]] = name
    places = symbolize(binary, [*sites, *extra.values()], wanted | set(extra), hints) if wanted or extra else {}
    for f in got.findings:
        f["place"] = places.get(f.get("site", 0))
        f["other_place"] = places.get(f.get("other_site", 0))
        f["wait_places"] = [places.get(w[0]) for w in f.get("waits", [])]
        if isinstance(f.get("array"), dict):
            f["array"]["place"] = places.get(f["array"].get("site", 0))
    for maps in got.shared.values():
        for m in maps:
            m.place = places.get(m.site)
    at = len(sites) + 1
    for f in got.findings:
        if "pc" in f:
            f["place"] = places.get(at) or places.get(at + 1)
            at += 2
    if got.timeout and "pc" in got.timeout:
        got.timeout["place"] = places.get(at) or places.get(at + 1)


def _where(info: dict) -> list[list[int]]:
    """Two sites for a stopped thread: the instruction it was at (with the call it is
    in), and the last access it made (the instruction may be in the simulator itself)."""
    return [[info["pc"], info.get("caller", 0)], [info.get("last", 0), info.get("caller", 0)]]


# The line the simulator prints before it stops a run it cannot go on with (wbsim's die and
# wbsim_misuse: block.sum[block_size=32] in a block of 128 threads, a grid not made of whole
# clusters, ...), and the one misuse the workbook says in the learner's language.
SIM_SAID = "workbook-sim: "
OUTSIDE_KERNEL = "outside a GPU kernel launch"


def _death(code: int | None, log: str) -> Msg:
    if code == protocol.SIM_MISUSE:
        said = [line[len(SIM_SAID):].strip() for line in log.splitlines() if line.startswith(SIM_SAID)]
        if said and OUTSIDE_KERNEL not in said[-1]:
            return msg("run.sim_stopped", said=said[-1][:400])
        return msg("run.sim_misuse")
    if code is not None and code < 0:
        return msg("run.died_signal", signal=SIGNALS.get(-code, str(-code)))
    return msg("run.died_code", code=code)


def _tail(log: str) -> str:
    lines = [line for line in log.splitlines() if line.strip() and "Crashpad" not in line]
    return "\n".join(lines[-30:])


def _read_writers(raw: bytes, run: KernelRun) -> None:
    """writers.bin: records of four Int32 (kind, case, index, count), then count Int32
    (kind 1: an output's writers); kind 4, a shared array's, has 16 Int32 and a 48-byte
    kernel name before them (wbsim_parts/harness.c, shared_snapshot)."""
    pos = 0
    while pos + 16 <= len(raw):
        kind, case, index, count = struct.unpack_from("<4i", raw, pos)
        pos += 16
        about = struct.unpack_from("<16i", raw, pos) if kind == 4 and pos + 112 <= len(raw) else None
        if kind == 4:
            if about is None:
                return
            kernel = raw[pos + 64:pos + 112].split(b"\0", 1)[0].decode(errors="replace")
            pos += 112
        if count < 0 or pos + 4 * count > len(raw) or kind not in (1, 4):
            return
        ids = np.frombuffer(raw, dtype=np.int32, count=count, offset=pos).copy()
        pos += 4 * count
        if about is None:
            run.writers[(case, index)] = ids
            continue
        launch, rank, *shape = about[:5]
        run.shared.setdefault(case, []).append(SharedMap(
            index, launch, kernel, tuple(about[7:10]), tuple(about[10:13]), list(shape[:max(1, min(rank, 3))]),
            about[5], ids))


def _read_counters(raw: bytes, run: KernelRun) -> None:
    """counters.bin: per launch (kind 3) its threads' COUNTERS; per output (kind 2) the
    most writes any one element of it got; per launch and buffer it wrote (kind 4) the
    most writes that launch made to one element, and which; per launch (kind 5) its
    METHODS, and per buffer it used (kind 6) its USES."""
    pos = 0
    while pos + 16 <= len(raw):
        kind, case, index, count = struct.unpack_from("<4i", raw, pos)
        if kind == 2:
            if pos + 20 > len(raw):
                return
            run.most_writes[(case, index)] = struct.unpack_from("<i", raw, pos + 16)[0]
            pos += 20
        elif kind == 4:  # (4, case, launch, most), element, name[48]
            if pos + 68 > len(raw):
                return
            element = struct.unpack_from("<i", raw, pos + 16)[0]
            name = raw[pos + 20:pos + 68].split(b"\0", 1)[0].decode(errors="replace")
            run.launch_writes.setdefault((case, index), {})[name] = (count, element)
            pos += 68
        elif kind == 5:  # (5, case, launch, n), n uint32: METHODS, in order
            if count < 0 or pos + 16 + 4 * count > len(raw):
                return
            values = struct.unpack_from(f"<{count}I", raw, pos + 16)
            mine = run.methods.setdefault((case, index), LaunchMethods(case, index))
            mine.counts = dict(zip(METHODS, values))
            pos += 16 + 4 * count
        elif kind == 6:  # (6, case, launch, n), n uint32: USES, name[48]
            if count < 0 or pos + 16 + 4 * count + 48 > len(raw):
                return
            values = struct.unpack_from(f"<{count}I", raw, pos + 16)
            pos += 16 + 4 * count
            name = raw[pos:pos + 48].split(b"\0", 1)[0].decode(errors="replace")
            pos += 48
            mine = run.methods.setdefault((case, index), LaunchMethods(case, index))
            mine.buffers[name] = dict(zip(USES, values))
        elif kind == 3:
            bx, by, bz, _ = struct.unpack_from("<4i", raw, pos + 16)
            pos += 32
            size = count * len(COUNTERS) * 4
            if count < 0 or pos + size + 48 > len(raw):
                return
            table = np.frombuffer(raw, dtype=np.uint32, count=count * len(COUNTERS), offset=pos)
            pos += size
            label = raw[pos:pos + 48].split(b"\0", 1)[0].decode(errors="replace")
            pos += 48
            run.counts.append(LaunchCounts(case, index, label, (bx, by, bz),
                                           table.reshape(count, len(COUNTERS)).copy()))
        else:
            return
