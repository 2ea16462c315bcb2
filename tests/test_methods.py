"""Stated methods ([[parts.method]], workbook/judging/methods.py): where a text says how a kernel
works, a kernel that gets the right values another way fails, and the finding says, in
English and Korean within 80 columns, that the values were right, which stated method
the kernel breaks, the kernel, the case and the line. Each kind of rule on real kernels
(the puzzles' wrong kernels, the real compiler and simulator), and on the PTX of a real
GPU build (sm_90, no GPU needed)."""

from __future__ import annotations

import struct
import subprocess

import pytest
from conftest import REPO
from rich.console import Console

from workbook.author import curriculum
from workbook.core import i18n
from workbook.core.results import Finding, Status
from workbook.course import catalog, manifest
from workbook.course.manifest import MethodRule
from workbook.judging import methods
from workbook.run import kernelrun
from workbook.view import report

WHY = {"en": "The method.", "ko": "방법."}


def _run(pid: str, name: str):
    """A wrong kernel, run for its stated reason: the result and its part's simulator result."""
    puzzle = catalog.load(pid, REPO)
    kernel = next(k for k in curriculum.wrong_kernels(puzzle, REPO) if k.name == name)
    with curriculum.Sandbox(REPO) as sandbox:
        result, verdicts = curriculum.run_wrong(sandbox, kernel)
    assert all(v.ok for v in verdicts), [v.detail for v in verdicts if not v.ok]
    return next(p for p in result.parts if kernel.part in (None, p.id)).kernels["sim"]


def _said(finding: Finding) -> dict[str, str]:
    """The finding in both languages, each shown line within 80 columns."""
    said = {}
    for lang in ("en", "ko"):
        i18n.set_language(lang)
        console = Console(width=80, record=True, force_terminal=False)
        console.print(report.finding_line(finding))
        shown = console.export_text()
        assert max(console.measure(line).maximum for line in shown.splitlines()) <= 80, shown
        said[lang] = finding.message.text(lang)
    i18n.set_language("en")
    return said


def _method(sim) -> Finding:
    found = [f for f in sim.findings or [] if f.kind == "method"]
    assert len(found) == 1, [f.kind for f in sim.findings or []]
    return found[0]


# --- the manifest ---------------------------------------------------------------------


@pytest.mark.parametrize("rule, problem", [
    ('kind = "warp_ops"\nrequired = ["shuffle_sideways"]', "required"),
    ('kind = "warp_ops"', "required and/or forbidden"),
    ('kind = "warp_ops"\nrequired = ["shuffle_xor"]\nforbidden = ["shuffle_xor"]', "both required and forbidden"),
    ('kind = "access_width"\nmin_bytes = 12', "min_bytes"),
    ('kind = "async_copy"\nbuffer = "output"', "one of the part's inputs"),
    ('kind = "mbarrier"\nmax_barriers = "import os"', "max_barriers"),
    ('kind = "writers"\nthreads = [0, 31]', "one output"),
    ('kind = "writers"\noutput = "maxes"\nthreads = [0]', "threads"),
    ('kind = "barriers"', "kind must be one of"),
    ('kind = "async_copy"\nbuffer = "a"\nlines = 3', "unknown keys"),
    ('kind = "warp_ops"\nrequired = ["shuffle_xor"]\nkernel = "warp_scan"', "not one this part launches"),
])
def test_a_stated_method_must_say_what_it_holds(root, rule, problem):
    path = root / "puzzles/p26/puzzle.toml"
    text = path.read_text()
    anchor = '[[parts]]\nid = "scan"'
    rule += '\nwhy.en = "x"\nwhy.ko = "x"\n' if "why" not in rule else "\n"
    path.write_text(text.replace(anchor, f"[[parts.method]]\n{rule}\n{anchor}", 1))
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.load("p26", root)
    assert problem in str(caught.value)


def test_a_method_needs_its_why_in_both_languages(root):
    path = root / "puzzles/p26/puzzle.toml"
    text = path.read_text()
    path.write_text(text.replace('why.ko = "최댓값과 최솟값은', 'why.kr = "최댓값과 최솟값은'))
    with pytest.raises(manifest.CatalogError):
        catalog.load("p26", root)


def test_author_verify_wants_a_wrong_kernel_per_part_with_a_method(tmp_path):
    """p26's butterfly states a method; without a wrong kernel that breaks it, verify says so."""
    puzzle = catalog.load("p26", REPO)
    assert all(v.ok for v in curriculum._methods(puzzle, REPO))
    for name in ("puzzles", "solutions"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "tests/wrong").mkdir(parents=True)
    verdict, = curriculum._methods(puzzle, tmp_path)
    assert not verdict.ok and "finding = \"method\"" in verdict.detail


def test_the_size_expressions_of_a_method_are_evaluated_on_every_case(root):
    path = root / "puzzles/p23/puzzle.toml"
    path.write_text(path.read_text().replace('max_narrow = "3 * (size % SIMD_WIDTH)"',
                                             'max_narrow = "3 * (sise % SIMD_WIDTH)"', 1))
    found = curriculum._budget_sizes(catalog.load("p23", root))
    assert any(not v.ok and "unknown name 'sise'" in v.detail for v in found)
    assert all(v.ok for v in curriculum._budget_sizes(catalog.load("p23", REPO)))


# --- what the simulator hands back ----------------------------------------------------


def test_counters_read_back_a_launchs_methods_and_buffers():
    """counters.bin's kinds 5 (a launch's METHODS) and 6 (a buffer's USES), as wbsim.c writes them."""
    values = list(range(1, len(kernelrun.METHODS) + 1))
    raw = struct.pack("<4i", 5, 3, 1, len(values)) + struct.pack(f"<{len(values)}I", *values)
    raw += struct.pack("<4i", 6, 3, 1, 3) + struct.pack("<3I", 7, 0, 9) + b"a".ljust(48, b"\0")
    run = kernelrun.KernelRun("ok")
    kernelrun._read_counters(raw, run)
    got = run.methods[(3, 1)]
    assert got.counts["shuffle_down"] == 1 and got.counts["barrier_rounds"] == len(values)
    assert got.counts["global_load_16"] == values[kernelrun.METHODS.index("global_load_16")]
    assert got.buffers == {"a": {"loads": 7, "stores": 0, "async_reads": 9}}


def test_source_sites_of_two_processes_merge_by_their_line():
    ops = [0] * len(kernelrun.OPS)
    first = [[0, 0, "k.mojo", 10, 5, "k", 1, *ops[1:]], [7, 8, "k", 1, 0, 0, 0]]
    second = [[0, 0, "k.mojo", 12, 5, "k", 2, *ops[1:]], [0, 0, "k.mojo", 10, 5, "k", 3, *ops[1:]]]
    merged = kernelrun.merge_sites(first, second)
    assert [s[3] for s in merged if s[0] == 0] == [10, 12]
    assert merged[0][6] == 4 and merged[0][3] == 10


# --- each kind of rule, on real kernels ----------------------------------------------


def test_a_tree_where_the_text_asks_for_a_butterfly_names_its_shuffle():
    sim = _run("p26", "butterfly_as_tree_down")
    assert all(c.passed for c in sim.cases) and sim.status == Status.FAIL
    tree = next(a for a in sim.access if a.kernel == "warp_extremes")
    assert tree.methods.get("shuffle_down") and not tree.methods.get("shuffle_xor")
    finding = _method(sim)
    assert finding.kernel == "warp_extremes" and finding.line == 102 and "shuffle_down" in finding.source
    said = _said(finding)
    assert said["en"].startswith("The values were right, but warp_extremes does not work the way the puzzle "
                                 "states: The maximum and the minimum come from a butterfly")
    assert "warp.shuffle_down" in said["en"] and "(lines 102, 103)" in said["en"]
    assert said["ko"].startswith("값은 맞았지만 warp_extremes는 퍼즐이 밝힌 방식으로 동작하지 않습니다:")
    assert "102, 103번 줄" in said["ko"]


def test_no_butterfly_at_all_says_what_the_kernel_did_instead():
    finding = _method(_run("p26", "butterfly_from_every_lane"))
    said = _said(finding)
    assert finding.line == 103 and "made no warp.shuffle_xor" in said["en"]
    assert "only warp.shuffle_idx (warp.broadcast) (lines 103, 104)" in said["en"]
    assert "대신 warp.shuffle_idx(warp.broadcast)만 했습니다(103, 104번 줄)" in said["ko"]


def test_block_sum_where_the_text_asks_for_a_fold_counts_the_gpus_shuffles():
    """The simulator's block.sum exchanges values plainly; it counts the xor shuffles the GPU's
    makes, so p15's rule sees it (the red team's block_sum_instead_of_fold passed before)."""
    sim = _run("p15", "block_sum_instead_of_fold")
    assert all(c.passed for c in sim.cases) and sim.status == Status.FAIL
    assert all(a.methods.get("shuffle_xor") for a in sim.access if a.kernel == "axis_sum")
    finding = _method(sim)
    assert finding.kernel == "axis_sum" and finding.line == 67 and "block.sum" in finding.source
    said = _said(finding)
    assert "not with block.sum or warp.sum" in said["en"] and "(line 67)" in said["en"], said["en"]
    assert "block.sum" in said["ko"] and "67번 줄" in said["ko"], said["ko"]


def test_scalar_accesses_where_the_text_asks_for_simd_width():
    sim = _run("p23", "simd_width_one")
    finding = _method(sim)
    assert finding.kernel == "simd_add" and finding.line == 70
    values = finding.message.values
    assert values["bytes"] == 16 and values["count"] > values["limit"]
    said = _said(finding)
    assert said["en"].startswith("The values were right, but simd_add does not work the way the puzzle states")
    assert "narrower than 16 bytes, where the leftover elements allow" in said["en"]


def test_a_plain_load_where_the_text_asks_for_async_copies_names_the_buffer_and_line():
    sim = _run("p28", "plain_halo")
    used = [a.buffers["a"] for a in sim.access]
    assert all(u["async_reads"] for u in used) and any(u.get("loads") for u in used)
    finding = _method(sim)
    assert finding.line == 110 and "a[h]" in finding.source
    said = _said(finding)
    assert "read a with plain loads, 1 of them (line 110)" in said["en"]
    assert "a을(를)" not in said["ko"] and "110번 줄" in said["ko"]


def test_barrier_rounds_that_grow_with_the_steps_where_the_text_asks_for_an_mbarrier():
    sim = _run("p29", "stencil_barrier_between_steps")
    finding = _method(sim)
    assert finding.line == 194 and finding.source == "barrier()"
    values = finding.message.values
    assert values["limit"] == 2 and values["count"] > 2
    assert "rounds of barrier()" in _said(finding)["en"]


def test_the_pipelines_stores_from_the_wrong_group_name_the_element_and_the_thread():
    finding = _method(_run("p29", "pipeline_compute_group_stores"))
    said = _said(finding)
    assert finding.line == 140 and "output[" in said["en"] and "not by threads 96 to 127" in said["en"]
    assert "스레드 96~127" in said["ko"]


def test_a_stage_that_vanished_into_another_is_told_as_a_shared_array_its_group_never_wrote():
    finding = _method(_run("p29", "pipeline_store_group_blurs"))
    said = _said(finding)
    assert "In case '1 value', threads 32 to 95 never wrote blurred" in said["en"]


# --- the PTX of a GPU build ----------------------------------------------------------

KERNELS = """
from max.gpu import thread_idx, WARP_SIZE
from max.gpu.primitives import warp
from max.gpu.sync import barrier, mbarrier_init, mbarrier_arrive, mbarrier_test_wait
from max.gpu.memory import AddressSpace, async_copy, async_copy_wait_all
from layout import TileTensor
from layout.tile_layout import row_major
from layout.tile_tensor import stack_allocation

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())
comptime Out = TileTensor[mut=True, dtype, Vector[32], MutAnyOrigin]
comptime In = TileTensor[mut=False, dtype, Vector[32], ImmutAnyOrigin]


def butterfly(output: Out, a: In):
    var i = Int(thread_idx.x)
    var hi = a[i][0]
    var k = WARP_SIZE // 2
    while k > 0:
        hi = max(hi, warp.shuffle_xor(hi, UInt32(k)))
        k //= 2
    output[i] = hi


def tree(output: Out, a: In):
    var i = Int(thread_idx.x)
    var hi = a[i][0]
    var k = WARP_SIZE // 2
    while k > 0:
        hi = max(hi, warp.shuffle_down(hi, UInt32(k)))
        k //= 2
    output[i] = warp.broadcast(hi)


def library(output: Out, a: In):
    var i = Int(thread_idx.x)
    output[i] = warp.max(a[i][0]) + warp.prefix_sum(a[i][0])


def copies(output: Out, a: In):
    var t = thread_idx.x
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[32]())
    async_copy[4]((a.ptr + t).address_space_cast[AddressSpace.GLOBAL](), tile.ptr + t)
    async_copy_wait_all()
    barrier()
    output[t] = tile[(t + 1) % 32]


def stepped(output: Out, a: In):
    var t = thread_idx.x
    var buf = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](row_major[32]())
    var bar = stack_allocation[dtype=DType.int64, address_space=AddressSpace.SHARED](row_major[1]())
    if t == 0:
        mbarrier_init(bar.ptr, 32)
    buf[t] = a[t]
    barrier()
    var token = mbarrier_arrive(bar.ptr)
    while not mbarrier_test_wait(bar.ptr, token):
        pass
    output[t] = buf[(t + 1) % 32]


def vectors(output: Out, a: In):
    var i = Int(thread_idx.x) * 4
    output.ptr.unsafe_store[alignment=16](i, a.ptr.unsafe_load[width=4, alignment=16](i) * 2)
"""

MAIN = """
import method_kernels as k
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major

def main() raises:
    var ctx = DeviceContext()
    var o = ctx.enqueue_create_buffer[DType.float32](32)
    var x = ctx.enqueue_create_buffer[DType.float32](32)
    var out = k.Out(ptr=Pointer[Float32, MutAnyOrigin](unsafe_from_address=Int(o.unsafe_ptr())),
                    layout=row_major[32]())
    var a = k.In(ptr=Pointer[Float32, ImmutAnyOrigin](unsafe_from_address=Int(x.unsafe_ptr())),
                 layout=row_major[32]())
    ctx.enqueue_function[k.butterfly](out, a, grid_dim=1, block_dim=32)
    ctx.enqueue_function[k.tree](out, a, grid_dim=1, block_dim=32)
    ctx.enqueue_function[k.library](out, a, grid_dim=1, block_dim=32)
    ctx.enqueue_function[k.copies](out, a, grid_dim=1, block_dim=32)
    ctx.enqueue_function[k.stepped](out, a, grid_dim=1, block_dim=32)
    ctx.enqueue_function[k.vectors](out, a, grid_dim=1, block_dim=8)
    ctx.synchronize()
"""
NAMES = ["butterfly", "tree", "library", "copies", "stepped", "vectors"]


@pytest.fixture(scope="module")
def facts(tmp_path_factory) -> dict[str, dict[str, int]]:
    """Six small kernels built for sm_90 by the real compiler, and what their PTX shows."""
    from workbook.core import toolchain

    mojo = toolchain.mojo_binary()
    if mojo is None:
        pytest.skip("no Mojo compiler")
    folder = tmp_path_factory.mktemp("methods")
    (folder / "method_kernels.mojo").write_text(KERNELS)
    (folder / "main.mojo").write_text(MAIN)
    done = subprocess.run([str(mojo), "build", "--target-accelerator=sm_90", "-I", str(folder),
                           str(folder / "main.mojo"), "-o", str(folder / "main")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return methods.ptx_facts((folder / "main").read_bytes(), "method_kernels", NAMES)


def _rule(kind: str, **keys) -> MethodRule:
    return MethodRule(kind, WHY, **keys)


@pytest.mark.slow
def test_the_ptx_tells_a_butterfly_from_a_tree(facts):
    butterfly = _rule("warp_ops", required=("shuffle_xor",), forbidden=("shuffle_down", "shuffle_up"))
    assert facts["butterfly"]["shuffle_xor"] and not facts["butterfly"]["shuffle_down"]
    assert methods._ptx_rule(butterfly, facts["butterfly"]) == ("", {})
    key, values = methods._ptx_rule(butterfly, facts["tree"])
    assert key == "finding.method_ptx_has" and values["instr"] == "shfl.sync.down"
    assert facts["tree"]["shuffle_idx"]  # warp.broadcast
    # warp.max is the same butterfly; warp.prefix_sum shuffles up.
    assert facts["library"]["shuffle_xor"] and facts["library"]["shuffle_up"]
    assert methods._ptx_rule(_rule("warp_ops", required=("shuffle_xor",)), facts["library"])[0] == ""


@pytest.mark.slow
def test_the_ptx_shows_async_copies_mbarriers_and_vector_widths(facts):
    assert methods._ptx_rule(_rule("async_copy", buffer="a"), facts["copies"])[0] == ""
    key, values = methods._ptx_rule(_rule("async_copy", buffer="a"), facts["butterfly"])
    assert key == "finding.method_ptx_lacks" and values["instr"] == "cp.async"
    assert methods._ptx_rule(_rule("mbarrier", max_barriers=1), facts["stepped"])[0] == ""
    assert methods._ptx_rule(_rule("mbarrier", max_barriers=1), facts["copies"])[1]["instr"] == "mbarrier.arrive"
    wide = _rule("access_width", min_bytes=16)
    assert methods._ptx_rule(wide, facts["vectors"])[0] == ""
    key, values = methods._ptx_rule(wide, facts["butterfly"])
    assert key == "finding.method_ptx_narrow" and values["widest"] == 4


@pytest.mark.slow
def test_a_ptx_finding_says_the_values_were_right_and_the_kernel_in_both_languages(facts):
    key, values = methods._ptx_rule(_rule("warp_ops", forbidden=("shuffle_down",)), facts["tree"])
    from workbook.core.i18n import msg

    finding = Finding("ptx", "method", msg(key, values=msg("budget.values_right"), kernel="tree",
                                           why=WHY, **values), kernel="tree")
    said = _said(finding)
    assert said["en"].startswith("The values were right, but tree does not work the way the puzzle states: The "
                                 "method. Its GPU build (the PTX) has 1 shfl.sync.down instruction(s)")
    assert said["ko"].startswith("값은 맞았지만 tree는 퍼즐이 밝힌 방식으로 동작하지 않습니다: 방법.")


def test_another_parts_kernel_is_never_taken_for_this_ones_in_the_ptx():
    """p26 on an H200: the butterfly part's rule (no shuffle up) failed the reference solution,
    because warp_scan's entry, whose long name the compiler cut, was matched to warp_extremes
    by their common start. Named among all the module's kernels, each entry finds its own."""
    from workbook.compile import ptx

    def entry(kernel: str, body: str) -> str:
        name = f"warp_patterns_{kernel}_" + "A" * 30  # past ptx.CUT: a name the compiler cut
        return f".visible .entry {name}(\n.param .u64 p\n)\n{{\n{body}\n}}\n"

    module = (ptx.HEADER.decode() + " 8.5\n.target sm_90\n"
              + entry("warp_extremes", "shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;")
              + entry("warp_scan", "shfl.sync.up.b32 %r1, %r2, 1, 0, -1;"))
    data = module.encode() + b"\0"
    alone = methods.ptx_facts(data, "warp_patterns", ["warp_extremes"])
    assert alone["warp_extremes"]["shuffle_up"]  # the slip: warp_scan's entry counted as warp_extremes'
    every = methods.ptx_facts(data, "warp_patterns", ["warp_extremes", "warp_scan", "warp_partition"])
    assert every["warp_extremes"]["shuffle_xor"] and not every["warp_extremes"]["shuffle_up"]
    assert every["warp_scan"]["shuffle_up"]
