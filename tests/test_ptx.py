"""The PTX check: reading each kernel's global loads and stores from a real GPU build
(the pinned compiler, target sm_90, no GPU needed), and the manifest's [[parts.ptx]]."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workbook.compile import ptx
from workbook.core import toolchain
from workbook.core.results import Access, DeviceResult, KernelPtx, Status
from workbook.course import catalog, manifest
from workbook.view import devices

REPO = Path(__file__).resolve().parent.parent
KERNELS = ["combine_scalar", "combine_vector", "combine_aligned"]

MAIN = """
import alignment as p
from max.gpu.host import DeviceContext
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32

def main() raises:
    var ctx = DeviceContext()
    var o = ctx.enqueue_create_buffer[dtype](103)
    var x = ctx.enqueue_create_buffer[dtype](107)
    var out = TileTensor[mut=True, dtype, p.Vector[103], MutAnyOrigin](
        ptr=Pointer[Scalar[dtype], MutAnyOrigin](unsafe_from_address=Int(o.unsafe_ptr())), layout=row_major[103]())
    var a = TileTensor[mut=False, dtype, p.Vector[107], ImmutAnyOrigin](
        ptr=Pointer[Scalar[dtype], ImmutAnyOrigin](unsafe_from_address=Int(x.unsafe_ptr())), layout=row_major[107]())
    ctx.enqueue_function[p.combine_scalar[103, 4]](out, a, a, grid_dim=1, block_dim=128)
    ctx.enqueue_function[p.combine_vector[103, 4]](out, a, a, grid_dim=1, block_dim=128)
    ctx.enqueue_function[p.combine_aligned[103, 4]](out, a, a, grid_dim=1, block_dim=128)
    var out3 = TileTensor[mut=True, dtype, p.Vector[3], MutAnyOrigin](
        ptr=Pointer[Scalar[dtype], MutAnyOrigin](unsafe_from_address=Int(o.unsafe_ptr())), layout=row_major[3]())
    var a7 = TileTensor[mut=False, dtype, p.Vector[7], ImmutAnyOrigin](
        ptr=Pointer[Scalar[dtype], ImmutAnyOrigin](unsafe_from_address=Int(x.unsafe_ptr())), layout=row_major[7]())
    ctx.enqueue_function[p.combine_aligned[3, 4]](out3, a7, a7, grid_dim=1, block_dim=128)
    ctx.synchronize()
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> bytes:
    """p35's solution, built for sm_90 by the real compiler, as the workbook's GPU launcher is."""
    mojo = toolchain.mojo_binary()
    if mojo is None:
        pytest.skip("no Mojo compiler")
    folder = tmp_path_factory.mktemp("ptx")
    (folder / "alignment.mojo").write_bytes((REPO / "solutions/p35/alignment.mojo").read_bytes())
    (folder / "main.mojo").write_text(MAIN)
    done = subprocess.run([str(mojo), "build", "--target-accelerator=sm_90", "-I", str(folder),
                           str(folder / "main.mojo"), "-o", str(folder / "main")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (folder / "main").read_bytes()


@pytest.mark.slow
def test_the_build_holds_a_ptx_module_per_instantiation(built):
    texts = ptx.modules(built)
    assert len(texts) == 4 and all(".target sm_90" in t for t in texts)
    names = [name for t in texts for name in ptx.entries(t)]
    assert all(n.startswith("alignment_combine_") for n in names)


@pytest.mark.slow
def test_loads_and_stores_per_kernel(built):
    found = ptx.kernels(built, "alignment", KERNELS)
    aligned, vector, scalar = found["combine_aligned"], found["combine_vector"], found["combine_scalar"]
    # A whole vector: one 128-bit load of a, one of b, one 128-bit store; the remainder stays scalar.
    assert aligned.loads.counts.get("v4") == 2 and aligned.stores.counts.get("v4") == 1
    assert aligned.loads.widest_bits == aligned.stores.widest_bits == 128
    # The size-3 instantiation has no whole vector (the compiler drops that path): the
    # fuller size-103 one stands for the kernel.
    assert aligned.instances == 2
    assert ptx.meets(aligned, "loads", "v4") and ptx.meets(aligned, "stores", "v4")
    # No alignment claimed: the same vectors become 4 loads of 32 bits each.
    assert vector.loads.counts == {"scalar": vector.loads.total} and vector.loads.total >= 8
    assert vector.loads.widest_bits == 32 and not ptx.meets(vector, "loads", "v4")
    assert not ptx.meets(vector, "stores", "v2")
    # Part 2's rule: no vector's alignment promised (met by the split vectors, not by v4).
    assert ptx.meets(vector, "loads", "scalar") and ptx.meets(vector, "stores", "scalar")
    assert not ptx.meets(aligned, "loads", "scalar") and not ptx.meets(aligned, "stores", "scalar")
    assert scalar.loads.summary() == "2 scalar" and scalar.stores.summary() == "1 scalar"


@pytest.mark.slow
def test_a_kernel_name_that_prefixes_another_is_not_confused(built):
    names = [n for t in ptx.modules(built) for n in ptx.entries(t)]
    for name in names:
        wanted = next(k for k in KERNELS if name.startswith(f"alignment_{k}_"))
        assert ptx.kernel_of(name, "alignment", ["combine", *KERNELS]) == wanted
    assert ptx.kernel_of(names[0], "other", KERNELS) is None


@pytest.mark.slow
def test_the_report_says_each_kernels_accesses(built):
    found = ptx.kernels(built, "alignment", KERNELS)
    dev = DeviceResult("ptx", Status.PASS, ptx=[found["combine_aligned"]])
    [line] = devices.ptx_lines(dev)
    assert line.startswith("combine_aligned: loads 2 v4 + ") and "(widest 128 bits)" in line


def test_a_ptx_rule_is_read_from_the_manifest(root):
    part = catalog.load("p35").part("aligned")
    [rule] = part.ptx
    assert (rule.kernel, rule.loads, rule.stores) == ("combine_aligned", "v4", "v4")
    assert (rule.min_loads, rule.min_stores) == (2, 1)
    assert rule.why["en"] and rule.why["ko"]


def _facts(loads: dict[str, int]) -> KernelPtx:
    access = Access()
    for width, n in loads.items():
        for _ in range(n):
            access.add(1 if width == "scalar" else int(width[1:]), 32)
    return KernelPtx("k", "e", 1, access, Access())


def test_a_rule_with_a_count_wants_that_many_vector_accesses():
    """p35's part 3 loads a and b: one v4 load (a's claim alone) with b's split into
    scalars met "v4 among the loads" and passed (tests/wrong/p35/one_load_without_claim)."""
    one, two = _facts({"v4": 1, "scalar": 6}), _facts({"v4": 2, "scalar": 2})
    assert ptx.meets(one, "loads", "v4") and not ptx.meets(one, "loads", "v4", 2)
    assert ptx.meets(two, "loads", "v4", 2) and not ptx.meets(two, "loads", "v4", 3)
    # v2 counts what moves 2 values or more; scalar ignores a count.
    assert ptx.meets(_facts({"v2": 1, "v4": 1}), "loads", "v2", 2)
    assert not ptx.meets(_facts({"v2": 1, "v4": 1}), "loads", "v4", 2)


@pytest.mark.parametrize("edit,message", [
    (('kernel = "combine_aligned"\nloads', 'kernel = "combine_vector"\nloads'), "is not one this part launches"),
    (('loads = "v4"', 'loads = "128"'), "loads must be one of"),
    (('loads = "v4"\nmin_loads = 2\nstores = "v4"\n', ''), "say what the PTX must show"),
    (('why.ko = "여기서는', 'why.kr = "여기서는'), "why.en = .* and why.ko"),
    (('loads = "v4"', 'loads = "v4"\nwidth = 4'), "unknown keys"),
    (('min_loads = 2', 'min_loads = 0'), "min_loads must be a whole number"),
    (('min_loads = 2', 'min_loads = "2"'), "min_loads must be a whole number"),
    (('loads = "v4"\nmin_loads = 2', 'min_loads = 2'), "min_loads counts vector loads"),
])
def test_ptx_rule_mistakes_name_the_key(root, edit, message):
    path = root / "puzzles/p35/puzzle.toml"
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(*edit))
    with pytest.raises(manifest.CatalogError, match=message):
        catalog.load("p35")


def test_a_name_the_compiler_cut_short_still_names_its_kernel():
    """Entry names as the sm_90 build of p21's launcher has them (Mojo 1.2): a long name keeps
    its first 30 or so characters and encodes the rest; another module's kernels are not ours."""
    names = ["embedding_coalesced", "embedding_2d"]
    assert ptx.kernel_of("op_embedding_embedding_coalesc6A6A6A6A_00ecce2eff2e60cc", "op.embedding", names) \
        == "embedding_coalesced"
    assert ptx.kernel_of("op_embedding_embedding_2d_SI6A6A6A6AcB6A6A_08fc2c806f482ed4", "op.embedding", names) \
        == "embedding_2d"
    assert ptx.kernel_of("wb_solution_op_embedding_embe6A6A6A6A6A6A_b57882f7b4e551e8", "op.embedding", names) is None
    assert ptx.kernel_of("walks_walk_SIMD_DType_int_16A6AcB6A6AcBuA_cbe1e5123474c14e", "walks",
                         ["walk", "walk_hub"]) == "walk"
    assert ptx.kernel_of("op_embedding_helper6A6A6A6A6A6A6A6A6A6A_00ecce2eff2e60cc", "op.embedding", names) is None
