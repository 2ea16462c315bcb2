"""Lines of accesses the compiler merged (issue 40, item 8): a store in both branches of an
`if` is one instruction in the optimised build, with no line of its own or the line of the
`if`, the loop or the next statement. The report names the lines that make the access and
says why, or marks the line as only about. The rules on source text first (no compile),
then p26's and p30's real runs on the simulator, drawn at 80 columns in both languages."""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO, put_wrong
from rich.cells import cell_len
from rich.console import Console

from workbook.check import engine
from workbook.compile import accesslines
from workbook.compile.accesslines import Access
from workbook.compile.symbols import Place
from workbook.core import i18n
from workbook.course import catalog
from workbook.view import devices

STORE = Access("global", True)
SHARED_STORE = Access("shared", True)
SHARED_LOAD = Access("shared", False)

PARTITION = """def k(output: T, a: T):
    var lows = 0
    if lane < size:
        if low:
            output[before] = v
        else:
            output[lows + lane - before] = v
    barrier()
"""

TILE = """def box(output: T, m: T):
    var tile = stack_allocation[dtype=dtype, address_space=AddressSpace.SHARED](
        row_major[TPB + 2]()
    )
    var col = first + t
    if col >= 0 and col < cols:
        tile[t] = m[r, col]
    else:
        tile[t] = 0
    if t < 2:
        var more = first + TPB + t
        if more < cols:
            tile[TPB + t] = m[r, more]
        else:
            tile[TPB + t] = 0
    barrier()
    var total: Scalar[dtype] = 0
    for k in range(t, t + 3):
        total += tile[k][0]
    output[r, c] = total
"""


def place(source: str, line: int) -> Place:
    return Place("k.mojo", line, 0, source.splitlines()[line - 1].strip())


def test_a_store_on_the_if_goes_to_the_stores_of_both_branches():
    src = PARTITION.splitlines()
    moved = accesslines.refine(place(PARTITION, 4), src, STORE, "output")
    assert (moved.line, moved.also, moved.label) == (5, ((7, "output[lows + lane - before] = v"),), "5/7")
    assert moved.given == (4, "if low:", True)


def test_a_line_that_makes_the_access_is_kept():
    src = PARTITION.splitlines()
    kept = accesslines.refine(place(PARTITION, 5), src, STORE, "output")
    assert kept == place(PARTITION, 5) and kept.label == "5"


def test_a_lineless_store_is_named_with_its_twin_in_the_other_branch():
    src = TILE.splitlines()
    first = accesslines.refine(place(TILE, 7), src, SHARED_STORE, lineless=True)
    assert first.label == "7/9" and first.given == (0, "", False)
    second = accesslines.refine(place(TILE, 13), src, SHARED_STORE, lineless=True)
    assert second.label == "13/15"


def test_a_store_put_on_barrier_goes_to_the_statement_before_it():
    moved = accesslines.refine(place(TILE, 16), TILE.splitlines(), SHARED_STORE)
    assert moved.label == "13/15" and moved.given[:2] == (16, "barrier()")


def test_shared_and_global_accesses_are_told_apart_without_a_name():
    src = TILE.splitlines()
    assert accesslines.refine(place(TILE, 18), src, SHARED_LOAD).label == "19"  # `for` -> tile[k]
    assert not accesslines.makes("var total: Scalar[dtype] = 0", STORE, None, {"tile"})  # a declaration
    assert not accesslines.makes("var before = Int(warp.prefix_sum[exclusive=True](flag))", Access("global", False),
                                 None, set())  # a parameter list, not an index
    assert accesslines.makes("out[idx[i]] = v", Access("global", False), {"idx"}, set())  # its index reads idx


def test_a_line_with_no_such_access_near_it_is_only_about():
    about = accesslines.refine(place(TILE, 5), TILE.splitlines(), Access("global", True), "missing")
    assert about.line == 5 and about.label == "≈5" and about.about


# --- the real runs -----------------------------------------------------------------


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    copy = tmp_path_factory.mktemp("wb")
    for name in ("puzzles", "solutions"):
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBOOK_ROOT", str(copy))
        yield copy


def sim(puzzle: str, part: str, solutions: bool = False):
    result = engine.check_puzzle(catalog.load(puzzle), engine.Options(part=part, seed=1, quick=True, devices=("sim",),
                                                                       solutions=solutions, cache=False))
    return result.parts[0].kernels["sim"]


@pytest.fixture(scope="module")
def p26(book):
    """An inclusive scan for `before`: low values land one place late, over the others."""
    put_wrong(book, "p26", "inclusive_positions")
    lines = (book / "puzzles/p26/warp_patterns.mojo").read_text().splitlines()
    stores = [n for n, text in enumerate(lines, 1) if text.strip().startswith("output[") and "= v" in text]
    return sim("p26", "partition"), stores


@pytest.fixture(scope="module")
def p30(book):
    return sim("p30", "fast", solutions=True), (book / "solutions/p30/profiling.mojo").read_text().splitlines()


def draw(lang: str, what) -> list[str]:
    i18n.set_language(lang)
    try:
        console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
        what(console)
        return console.export_text().splitlines()
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_p26_names_both_stores_of_the_partition_not_the_if(p26, lang):
    dev, stores = p26
    assert len(stores) == 2
    located = [f for f in dev.findings if f.line in stores]
    assert located and all(f.line == stores[0] and [n for n, _ in f.also] == [stores[1]] for f in located)
    assert all(f.line != stores[0] - 1 for f in dev.findings if f.line)  # never the `if low:`
    lines = draw(lang, lambda c: devices.render_findings(c, dev))
    text = "\n".join(lines)
    assert max(cell_len(line) for line in lines) <= 80
    label = f"{stores[0]}/{stores[1]}"
    assert f"warp_patterns.mojo:{stores[0]}" in text and f"warp_patterns.mojo:{stores[1]}" in text
    i18n.set_language(lang)
    try:
        note = i18n.t("lines.merged_unlined", lines=label)
    finally:
        i18n.set_language("en")
    assert " ".join(note.split()) in " ".join(text.split())
    assert "if low:" not in text


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_p30_counts_the_tile_stores_on_their_own_lines(p30, lang):
    dev, lines = p30
    tile_stores = [n for n, text in enumerate(lines, 1) if text.strip().startswith("tile[k] =")]
    shared = [x for x in dev.traffic if x.space == "shared" and x.access == "store"]
    assert [(x.line, x.also) for x in shared] == [(tile_stores[0], tile_stores[1:])]
    assert all(lines[x.line - 1].strip() and "barrier()" not in x.source and not x.source.startswith(("if", "for"))
               for x in dev.traffic)
    drawn = draw(lang, lambda c: devices.render_traffic(c, dev))
    assert max(cell_len(line) for line in drawn) <= 80
    label = f"{tile_stores[0]}/{tile_stores[1]}"
    row = next(line for line in drawn if line.split()[:1] == [label])
    i18n.set_language(lang)
    try:
        shared_word, note = i18n.t("report.traffic_shared"), i18n.t("report.traffic_merged", lines=label)
    finally:
        i18n.set_language("en")
    assert shared_word in row
    assert " ".join(note.split()) in " ".join(" ".join(drawn).split())
