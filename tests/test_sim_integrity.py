"""The simulator's store guard, through the real compiler and the real simulator.

The learner's code runs in the simulator's process, beside the records the verdict is
judged from (findings, per-thread counts, who wrote each output). wbsim.c keeps those
records in a vault of their own and sees every store before it lands: a simulated GPU
thread that writes anywhere but its buffers, its block's shared memory and its own
stack is a `wild_write`; code of the learner's (a kernel, an op's CPU kernel, a host
function) that writes into the simulator's records is a `harness_write`. Both stop
the case before the store lands and fail the device with the learner's line.

The hostile kernels here find the records as a forger would, with nothing but
pointers: the program's headers (getauxval), its writable segments, the roots page in
them (the vault's bounds and where S is), and the offsets of S's fields (the C
compiler says them, from wbsim.c itself)."""

from __future__ import annotations

import ctypes
import platform
import re
import subprocess
from pathlib import Path

import pytest
from conftest import put_solution

from workbook.check import engine
from workbook.core import settings, toolchain
from workbook.core.results import Status
from workbook.course import catalog

pytestmark = pytest.mark.slow

# Finds the simulator's state S with loads only (they are never refused), as a learner's
# file could: after it, a store into S is what the guard must refuse.
FINDER = '''
from std.ffi import external_call


@always_inline
def _peek(address: Int) -> Int:
    return Pointer[Int, MutUntrackedOrigin](unsafe_from_address=address)[]


@always_inline
def _peek32(address: Int) -> Int:
    return Int(Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=address)[])


def simulator_state() -> Int:
    var phdr = external_call["getauxval", Int](3)
    var count = external_call["getauxval", Int](5)
    var base = 0
    for k in range(count):
        if _peek32(phdr + k * 56) == 6:
            base = phdr - _peek(phdr + k * 56 + 16)
    for k in range(count):
        var h = phdr + k * 56
        if _peek32(h) != 1 or (_peek32(h + 4) & 2) == 0:
            continue
        var start = base + _peek(h + 16)
        var page = start - start % 4096
        var end = start + _peek(h + 40)
        while page + 40 <= end:
            if _peek(page + 8) - _peek(page) == 256 << 30 and _peek(page + 32) == _peek(page):
                return _peek(page + 16)
            page += 4096
    return 0


def forge(field: Int):
    """Zero 4 bytes of S at `field` (a plain 4-byte store: the instrumentation sees it)."""
    var state = simulator_state()
    Pointer[Int32, MutUntrackedOrigin](unsafe_from_address=state + field)[] = 0


def forge_wide(field: Int):
    """Zero 32 bytes of S at `field` in one SIMD store, which the instrumentation never
    reports (it reports 1 to 16 bytes), after a while: past a few of the simulator's
    200 ms ticks, whose signal handler must leave the fence as it found it."""
    var state = simulator_state()
    for _ in range(5):
        _ = external_call["usleep", Int32](Int32(100000))
    Pointer[SIMD[DType.int32, 8], MutUntrackedOrigin](unsafe_from_address=state + field)[] = SIMD[DType.int32, 8](0)


def forge_counts(field: Int):
    """Zero the first thread's counters: S.counts points at them."""
    var state = simulator_state()
    var counts = _peek(state + field)
    Pointer[UInt32, MutUntrackedOrigin](unsafe_from_address=counts)[] = 0
'''


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> dict[str, int]:
    """Where wbsim.c's state keeps the findings' count and the counters' pointer: the C
    compiler says, from wbsim.c itself (as constants in its assembly: nothing is run)."""
    cc = toolchain.c_compiler()
    assert cc, "no C compiler"
    folder = tmp_path_factory.mktemp("layout")
    source = folder / "layout.c"
    source.write_text('#include "wbsim.c"\n'
                      'const size_t at_nfindings = offsetof(state_t, nfindings);\n'
                      'const size_t at_counts = offsetof(state_t, counts);\n')
    subprocess.run([cc, "-S", "-O0", "-I", str(settings.MOJO_SUPPORT), str(source), "-o", str(folder / "layout.s")],
                   check=True, capture_output=True)
    text = (folder / "layout.s").read_text()
    found = {name: int(re.search(rf"^at_{name}:\s*\n\s*\.quad\s+(\d+)", text, re.M).group(1))
             for name in ("nfindings", "counts")}
    assert 0 < found["nfindings"] < 1 << 20 and 0 < found["counts"] < 1 << 20, found
    return found


def edit(root: Path, puzzle: str, file: str, *changes: tuple[str, str], finder: bool = False) -> str:
    """The solution of `puzzle` as the learner's file, with `changes`; FINDER after its
    imports when asked. Returns the new text."""
    put_solution(root, puzzle)
    path = root / "puzzles" / puzzle / file
    text = path.read_text()
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    if finder:
        imports = [m.end() for m in re.finditer(r"^(from|import) .*$", text, re.M)]
        text = text[:imports[-1]] + "\n" + FINDER + text[imports[-1]:]
    path.write_text(text)
    return text


def line_of(text: str, needle: str) -> int:
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def check(puzzle: str, device: str, part: str | None = None):
    result = engine.check_puzzle(catalog.load(puzzle), engine.Options(part=part, seed=1, quick=True,
                                                                       devices=(device,), cache=False))
    assert result.status != Status.COMPILE_ERROR, (result.diagnostics, result.compiler_output)
    parts = [p for p in result.parts if part is None or p.id == part]
    return parts[0].kernels[device]


def found(dev, kind: str):
    hits = [f for f in dev.findings or [] if f.kind == kind]
    assert hits, (kind, [(f.kind, f.message.text("en")) for f in dev.findings or []])
    return hits[0]


def said(dev) -> list[tuple[str, str]]:
    return [(f.kind, f.message.text("en")) for f in dev.findings or []]


# --- a GPU thread's store outside what it was given --------------------------------------

P01_STORE = "    output[i] = a[i] + 10\n"


def test_a_store_into_another_thread_s_stack_is_a_wild_write_and_later_cases_run(root):
    """Thread 1 of one case writes into thread 0's stack (a local's address, one stack
    down): never its memory. That case stops before the store lands, named at its line;
    the cases before and after it run and pass."""
    text = edit(root, "p01", "map.mojo", (P01_STORE, P01_STORE + (
        "    if size == 32 and i == 1:\n"
        "        var x = Int64(0)\n"
        "        var mine = Int(Pointer(to=x))\n"
        "        Pointer[Int64, MutUntrackedOrigin](unsafe_from_address=mine - 260 * 1024)[] = 7  # wild\n")))
    sim = check("p01", "sim")
    assert sim.status == Status.FAIL, said(sim)
    wild = found(sim, "wild_write")
    assert wild.line == line_of(text, "# wild") and wild.kernel == "add_ten"
    words = wild.message.text("en")
    assert "thread 1 of `add_ten`" in words and "never given" in words and "illegal address" in words, words
    assert "harness_write" not in {f.kind for f in sim.findings}
    stopped = [c for c in sim.cases if not c.ran]
    assert [c.name for c in stopped] == ["32 different values"]
    assert all(c.passed for c in sim.cases if c.ran) and len(sim.cases) - len(stopped) >= 6


def test_a_store_to_a_computed_address_far_away_is_a_wild_write(root):
    """An address far below the buffers, computed from a pointer: outside every mapping
    the simulator made. Refused before it faults, and said in both languages."""
    text = edit(root, "p01", "map.mojo", (P01_STORE, "    output.ptr[unsafe_offset=i - (1 << 36)] = a[i] + 10\n"))
    sim = check("p01", "sim")
    assert sim.status == Status.FAIL
    wild = found(sim, "wild_write")
    assert wild.line == line_of(text, "unsafe_offset=i - (1 << 36)")
    assert "invalid_write" not in {f.kind for f in sim.findings}
    assert "GPU" in wild.message.text("ko") and "주소" in wild.message.text("ko")


# --- forging the verdict -----------------------------------------------------------------


def test_a_kernel_that_erases_its_race_finding_is_stopped(root, layout):
    """Two threads write output[0] in one round (the same value: still a race); after a
    barrier, thread 0 zeroes the findings' count. The store is refused: the race stays
    and the forgery is a finding of its own."""
    imports = "from max.gpu import thread_idx\n"
    text = edit(root, "p01", "map.mojo", (imports, imports + "from max.gpu.sync import barrier\n"),
                (P01_STORE, P01_STORE + (
                    "    if i == 1:\n"
                    "        output[0] = a[0] + 10\n"
                    "    barrier()\n"
                    f"    if i == 0:\n        forge({layout['nfindings']})  # forge\n")), finder=True)
    sim = check("p01", "sim")
    assert sim.status == Status.FAIL, said(sim)
    forged = found(sim, "harness_write")
    assert "simulator's own records" in forged.message.text("en")
    store = line_of(text, "unsafe_from_address=state + field)[] = 0")
    assert forged.file.endswith("map.mojo") and forged.line in (line_of(text, "# forge"), store)
    found(sim, "global_race")
    assert not all(c.ran for c in sim.cases)


def test_a_kernel_that_zeroes_its_counters_is_stopped(root, layout):
    """Per-thread counts decide the access budgets: a kernel that writes them is stopped."""
    forged = f"    if i == 0:\n        forge_counts({layout['counts']})\n"
    edit(root, "p01", "map.mojo", (P01_STORE, P01_STORE + forged), finder=True)
    sim = check("p01", "sim")
    assert sim.status == Status.FAIL, said(sim)
    found(sim, "harness_write")


def test_an_op_s_cpu_kernel_that_forges_the_findings_is_stopped(root, layout):
    """p18's CPU kernel computes the right softmax, then zeroes the findings' count."""
    text = edit(root, "p18", "op/softmax.mojo",
                ("        output[i] = output[i][0] / total\n",
                 f"        output[i] = output[i][0] / total\n    forge({layout['nfindings']})  # forge\n"),
                finder=True)
    cpu = check("p18", "cpu", "softmax")
    assert cpu.status == Status.FAIL, said(cpu)
    forged = found(cpu, "harness_write")
    assert forged.message.text("en").startswith("your CPU kernel wrote into the simulator's own records")
    assert forged.line in (line_of(text, "# forge"), line_of(text, "unsafe_from_address=state + field)[] = 0"))


def test_a_host_function_that_forges_the_findings_is_stopped(root, layout):
    """p17's launch function, a learner's host code: it launches its kernel, then zeroes
    the findings' count."""
    edit(root, "p17", "op/conv1d.mojo",
         ("        output, a, b, grid_dim=ceildiv(size, TPB), block_dim=TPB\n    )\n",
          "        output, a, b, grid_dim=ceildiv(size, TPB), block_dim=TPB\n    )\n"
          f"    forge({layout['nfindings']})  # forge\n"), finder=True)
    sim = check("p17", "sim")
    assert sim.status == Status.FAIL, said(sim)
    forged = found(sim, "harness_write")
    assert forged.message.text("en").startswith("your function `conv1d_launch")


def protection_keys() -> bool:
    """Whether this processor and kernel give out memory protection keys (x86 PKU)."""
    libc = ctypes.CDLL(None, use_errno=True)
    key = libc.syscall(330, 0, 0)  # pkey_alloc on x86-64
    if key < 0 or platform.machine() != "x86_64":
        return False
    libc.syscall(331, key)  # pkey_free
    return True


def test_a_store_the_instrumentation_never_reports_is_caught_by_the_fence(root, layout, monkeypatch):
    """A 32-byte SIMD store into S is not reported to the guard (the instrumentation
    reports 1 to 16 bytes): with the fence up (`workbook grade` puts it up) the vault is
    write-protected while learner code runs, and the store faults into a harness_write
    at its line. The kernel waits half a second first: the simulator's timer signals
    come and go, and the fence must be up again after each."""
    if not protection_keys():
        pytest.skip("no memory protection keys here: the fence can't go up")
    monkeypatch.setenv("WORKBOOK_SIM_FENCE", "1")
    text = edit(root, "p01", "map.mojo", (P01_STORE, P01_STORE + (
        f"    if i == 0:\n        forge_wide({layout['nfindings']})  # forge\n")), finder=True)
    sim = check("p01", "sim")
    assert sim.status == Status.FAIL, said(sim)
    forged = found(sim, "harness_write")
    assert forged.line in (line_of(text, "# forge"), line_of(text, "unsafe_from_address=state + field)[] = SIMD"))


@pytest.mark.parametrize("fence", ["0", "1"])
def test_the_fence_refuses_what_the_guard_refuses_and_lets_a_host_function_run(root, layout, monkeypatch, fence):
    """Up or down, a host function that forges is stopped, and the solutions of p17 (a
    host function), p14 (block.*) and p34 (clusters, warps) pass."""
    monkeypatch.setenv("WORKBOOK_SIM_FENCE", fence)
    for puzzle in ("p14", "p17", "p34"):
        put_solution(root, puzzle)
        result = engine.check_puzzle(catalog.load(puzzle), engine.Options(seed=1, quick=True, devices=("sim",),
                                                                           cache=False))
        assert result.status == Status.PASS, [(p.id, said(d)) for p in result.parts for d in p.kernels.values()]


# --- what must still pass ---------------------------------------------------------------


def test_a_kernel_that_prints_still_runs_and_passes(root):
    """Learners debug with print(): its buffers live on the thread's stack and in the
    runtime, never refused."""
    edit(root, "p01", "map.mojo", (P01_STORE, P01_STORE + '    print("thread", i, "wrote", output[i])\n'))
    sim = check("p01", "sim")
    assert sim.status == Status.PASS, said(sim)


def test_a_kernel_that_allocates_and_frees_in_a_loop_passes(root, monkeypatch):
    """Strings built in a loop in every thread: the kernels' heap hands out and takes back
    the same blocks (a String lives past its 23 bytes on the heap), across cases."""
    monkeypatch.setenv("WORKBOOK_SIM_FENCE", "1")
    edit(root, "p01", "map.mojo", (P01_STORE, (
        "    var total = 0\n"
        "    for k in range(50):\n"
        '        var s = String("a string long enough to live on the heap, number ") + String(k)\n'
        "        total += s.byte_length()\n"
        "    output[i] = a[i] + Float32(10 + total - total)\n")))
    sim = check("p01", "sim")
    assert sim.status == Status.PASS, said(sim)


@pytest.mark.parametrize("puzzle, device", [("p14", "sim"), ("p17", "sim"), ("p18", "cpu"), ("p29", "sim")])
def test_solutions_pass_with_the_guard(root, puzzle, device):
    """block.* (p14), a host function (p17), an op's CPU kernel (p18), mbarriers and async
    copies (p29): nothing of theirs is refused."""
    put_solution(root, puzzle)
    result = engine.check_puzzle(catalog.load(puzzle), engine.Options(seed=1, quick=True, devices=(device,),
                                                                       cache=False))
    for part in result.parts:
        for dev in part.kernels.values():
            assert dev.status == Status.PASS, (part.id, said(dev))
            assert not {"wild_write", "harness_write"} & {f.kind for f in dev.findings or []}

