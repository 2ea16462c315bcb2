"""The map of who wrote each element of a shared array (issue 40, item 5): the array is
named as the learner's code names it, a 2D array is drawn by rows and columns, and a
thread is named by the block size of the kernel that wrote the array, not of the case's
last launch. The runs are real (the simulator, through the real compiler); the maps are
drawn at 80 columns, in English and Korean, without colour."""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO, put_wrong
from rich.cells import cell_len
from rich.console import Console

from workbook.check import engine
from workbook.core import i18n
from workbook.core.results import OutputCheck, Picture, SharedPicture
from workbook.course import catalog
from workbook.view import casemap


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A copy of the workbook, one for this module's real runs."""
    copy = tmp_path_factory.mktemp("wb")
    for name in ("puzzles", "solutions"):
        shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBOOK_ROOT", str(copy))
        yield copy


def sim_picture(book, puzzle: str, variant: str, part: str | None = None):
    put_wrong(book, puzzle, variant)
    result = engine.check_puzzle(catalog.load(puzzle), engine.Options(part=part, seed=1, quick=True,
                                                                       devices=("sim",), cache=False))
    dev = result.parts[0].kernels["sim"]
    case = next(c for c in dev.cases if c.ran and not c.passed)
    out = next(o for o in case.outputs if not o.passed)
    return case.picture, out


def render(picture: Picture, out: OutputCheck) -> list[str]:
    console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
    casemap.render_picture(console, picture, out)
    return console.export_text().splitlines()


@pytest.fixture(scope="module")
def p12(book):
    """p12's two kernels: partial_dots (blocks of 128 threads) fills the shared array, then
    add_partials (one thread) writes the output."""
    return sim_picture(book, "p12", "writes_own_product")


@pytest.fixture(scope="module")
def p16(book):
    """p16's tiled part: two 2D shared tiles, 8 x 8 threads per block."""
    return sim_picture(book, "p16", "tile_loop_short", "tiled")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_p12_names_products_and_its_writers_by_partial_dots_block(p12, lang):
    picture, out = p12
    assert picture.block == (1, 1, 1)  # the output's writer: add_partials
    [shared] = picture.shared
    assert (shared.name, shared.kernel, shared.block, shared.shape) == ("products", "partial_dots", (128, 1, 1), [128])
    assert shared.file.endswith("p12/dot.mojo") and shared.line > 0
    assert shared.writers == list(range(128))  # after the tree, slot t was last written by thread t
    i18n.set_language(lang)
    try:
        lines = render(picture, out)
    finally:
        i18n.set_language("en")
    text = " ".join(" ".join(lines).split())
    assert max(cell_len(line) for line in lines) <= 80
    assert "`products`" in text and "partial_dots" in text
    cells = [word for line in lines[lines.index(next(x for x in lines if "`products`" in x)):]
             for word in line.split()[1:] if word.isdigit()]
    assert "127" in cells and len(set(cells)) > 100  # each slot its own thread, never "thread 0 wrote all"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_p16_draws_its_2d_tiles_as_rows_and_columns(p16, lang):
    picture, out = p16
    names = [s.name for s in picture.shared]
    assert names == ["a_tile", "b_tile"]
    assert all(s.shape == [8, 8] and s.block == (8, 8, 1) for s in picture.shared)
    i18n.set_language(lang)
    try:
        lines = render(picture, out)
        axes = i18n.t("report.picture_cells_shared")
    finally:
        i18n.set_language("en")
    assert max(cell_len(line) for line in lines) <= 80
    start = next(i for i, line in enumerate(lines) if "`a_tile`" in line)
    header = next(i for i in range(start, len(lines)) if lines[i].split() == [str(c) for c in range(8)])
    assert axes.split()[0] in " ".join(lines[start:header])
    rows = lines[header + 1:header + 9]
    assert [row.split()[0] for row in rows] == [str(r) for r in range(8)]
    assert rows[2].split()[1:] == [f"{x},2" for x in range(8)]  # a_tile[2, x] by thread (x, 2)


def wide_picture() -> tuple[Picture, OutputCheck]:
    """A 32 x 32 tile written by a 32 x 32 block: wider than 80 columns."""
    ids = list(range(32 * 32))
    shared = SharedPicture("tile", "transpose", (32, 32, 1), (2, 2, 1), [32, 32], ids, 1, "p/x.mojo", 12)
    picture = Picture((32, 32, 1), (2, 2, 1), outputs={"out": ([4], [0, 1, 2, -1])}, shared=[shared])
    out = OutputCheck("out", [4], 1.0, 1.0, 1, 4, 0, 0, False, [0.0] * 4, [1.0] * 4, error_map=[0, 0, 0, 2])
    return picture, out


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_tile_wider_than_the_screen_says_which_columns_and_rows_it_shows(lang):
    picture, out = wide_picture()
    i18n.set_language(lang)
    try:
        lines = render(picture, out)
        note = i18n.t("report.picture_columns", shown=12, cols=32)
    finally:
        i18n.set_language("en")
    assert max(cell_len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert "`tile`" in text and "p/x.mojo:12" in text
    assert note.split()[0] in text and "32" in text
    start = next(i for i, line in enumerate(lines) if "`tile`" in line)
    header = next(i for i in range(start, len(lines)) if lines[i].split()[:3] == ["0", "1", "2"])
    assert lines[header + 1].split()[1:4] == ["0,0", "1,0", "2,0"]  # block 0's own threads: no "0:" before them
