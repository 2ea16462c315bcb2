"""The first failing case, drawn: where its errors are (the error map), the values beside the
expected ones, and who wrote each element (the simulator's picture, shared memory's too).
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..core.i18n import pick, t
from ..core.results import (
    CaseResult,
    OutputCheck,
    Picture,
    SharedPicture,
)
from .style import CELL, CELL_KEYS, MAP_WIDTH, PICTURE_ROWS, indented

# ---------------------------------------------------------------------------
# The first failing case: where the errors are, and who wrote them
# ---------------------------------------------------------------------------


def case_name(case: CaseResult) -> str:
    return pick(case.label) if case.label else case.name


def map_legend() -> Text:
    text = Text()
    for (glyph, style), key in zip(CELL, CELL_KEYS):
        text.append(glyph, style=style)
        text.append(" " + t("report.map." + key) + "   ", style="dim")
    text.rstrip()
    return text


def _cells(out: OutputCheck) -> tuple[list[int], list[int]]:
    shape = out.map_shape or [len(out.error_map)]
    step = out.map_step or [1] * len(shape)
    return shape, step


def _row_label(out: OutputCheck, row: int) -> str:
    """A matrix row's index; for more dimensions, the indexes before the last one."""
    if len(out.shape) <= 2:
        return str(row)
    index, rest = [], row
    for size in reversed(out.shape[:-1]):
        rest, i = divmod(rest, size)
        index.append(str(i))
    return ",".join(reversed(index))


def error_map(out: OutputCheck) -> Group:
    """Where the errors are, at a glance: one glyph per element (or per run or block of
    elements), a matrix drawn as a matrix with its row and column numbers."""
    shape, step = _cells(out)
    lines: list[RenderableType] = []
    if len(shape) == 2:
        rows, cols = shape
        labels = [_row_label(out, r * step[0]) for r in range(rows)]
        gutter = max(len(x) for x in labels) + 4
        lines.append(indented(t("report.map.axes", output=out.name), style="dim"))
        head = Text(" " * gutter, style="dim")
        for c in range(0, cols, 4):
            head.append(f"{c * step[1]:<8}", style="dim")
        head.rstrip()
        lines.append(head)
        for r in range(rows):
            text = Text(f"  {labels[r]:>{gutter - 3}} ", style="dim")
            for cell in out.error_map[r * cols:(r + 1) * cols]:
                glyph, style = CELL[cell]
                text.append(glyph + " ", style=style)
            text.rstrip()
            lines.append(text)
        many = step[0] > 1 or step[1] > 1
        per_cell = t("report.map.per_block", rows=step[0], cols=step[1]) if many else ""
    else:
        per = step[0]
        for row in range(0, len(out.error_map), MAP_WIDTH):
            text = Text(f"  {row * per:>6} ", style="dim")
            for cell in out.error_map[row:row + MAP_WIDTH]:
                glyph, style = CELL[cell]
                text.append(glyph + " ", style=style)
            text.rstrip()
            lines.append(text)
        per_cell = t("report.map.per_cell", n=per) if per > 1 else ""
    lines.append(indented(map_legend(), 2))
    if per_cell:
        lines.append(indented(per_cell, style="dim"))
    return Group(*lines)


def element(index: int, shape: list[int]) -> str:
    """A flat index as the learner indexes the output: [i], or [row, col]."""
    if len(shape) < 2:
        return f"[{index}]"
    parts, rest = [], index
    for size in reversed(shape):
        rest, i = divmod(rest, size)
        parts.append(str(i))
    return "[" + ", ".join(reversed(parts)) + "]"


def render_case_detail(console: Console, case: CaseResult) -> None:
    for out in case.outputs:
        if out.passed:
            continue
        console.print(indented(Text.assemble(
            (t("report.first_failure", case=case_name(case), output=out.name), "bold"),
            ("  " + t("report.shape", shape="×".join(map(str, out.shape))), "dim"))))
        if out.nan_count or out.inf_count:
            key = "report.nan_written" if _nan_written(out, case.picture) else "report.nan_inf"
            console.print(indented(t(key, nan=out.nan_count, inf=out.inf_count), style="magenta"))
        console.print(error_map(out))
        console.print(values_table(out))
        if case.picture:
            render_picture(console, case.picture, out)
        return  # one output in detail is enough; the table lists the rest


def values_table(out: OutputCheck) -> Padding:
    """The first values, then the first wrong ones, each with its element as [i] or [row, col]."""
    values = Table(box=None, pad_edge=False)
    values.add_column(t("report.col.element"), justify="right", style="dim", no_wrap=True)
    values.add_column(t("report.col.got"), justify="right", no_wrap=True)
    values.add_column(t("report.col.expected"), justify="right", no_wrap=True)
    bad = {i for i, _, _ in out.first_wrong}
    shown = list(enumerate(zip(out.first_got, out.first_expected)))
    later = [(i, (g, e)) for i, g, e in out.first_wrong if i >= len(shown)]
    for number, (i, (g, e)) in enumerate(shown + later):
        if number == len(shown):
            values.add_row("…", "", "")
        got = Text(f"{g:.6g}", style="red" if i in bad else "")
        if i in bad:
            got.append(" ✘", style="red")
        values.add_row(f"{out.name}{element(i, out.shape)}", got, f"{e:.6g}")
    return Padding(values, (0, 0, 0, 2), expand=False)


def _nan_written(out: OutputCheck, picture: Picture | None) -> bool:
    """Whether every NaN element of `out` was written by some thread (the simulator's
    picture says so): then it was computed from a NaN, not forgotten."""
    if picture is None or out.name not in picture.outputs:
        return False
    _, ids = picture.outputs[out.name]
    if len(out.error_map) != len(ids):
        return False
    nan = [k for k, cell in enumerate(out.error_map) if cell == 3]
    return bool(nan) and all(ids[k] >= 0 for k in nan)


Dims = tuple[int, int, int]


def _thread_label(thread_id: int, block: Dims, grid: Dims, blocks: bool) -> str:
    """A simulator writer id (block * threads + thread) as the learner names it:
    thread_idx.x, or x,y; with `blocks`, the block's the same way, then ':'."""
    if thread_id < 0:
        return "·"
    per_block = block[0] * block[1] * block[2]
    index, thread = divmod(thread_id, per_block)
    tx, ty = thread % block[0], thread // block[0]
    label = f"{tx},{ty}" if block[1] > 1 else str(tx)
    if blocks:
        bx, by = index % grid[0], index // grid[0]
        label = (f"{bx},{by}" if grid[1] > 1 else str(bx)) + ":" + label
    return label


def _who(block: Dims, blocks: bool) -> str:
    """How a cell names its writer, in words."""
    return t(("report.picture_who_xy" if block[1] > 1 else "report.picture_who_x") + ("_blocks" if blocks else ""))


def picture_legend(picture: Picture, matrix: bool) -> str:
    """What a cell of the picture says, in words: which axis is which, and how a thread is named."""
    blocks = picture.grid[0] * picture.grid[1] * picture.grid[2] > 1
    parts = [t("report.picture_cells_matrix")] if matrix else []
    parts.append(_who(picture.block, blocks))
    parts.append(t("report.picture_marks"))
    return " ".join(parts)


def render_picture(console: Console, picture: Picture, out: OutputCheck) -> None:
    """Which simulated thread wrote each element of the failing output (and of
    the first block's shared memory): a wrong element next to its writer."""
    if out.name not in picture.outputs:
        return
    shape, ids = picture.outputs[out.name]
    console.print(indented(t("report.picture", output=out.name), style="bold"))
    console.print(indented(picture_legend(picture, len(shape) >= 2), style="dim"))
    wrong = out.error_map if len(out.error_map) == len(ids) else None
    blocks = picture.grid[0] * picture.grid[1] * picture.grid[2] > 1
    console.print(_grid(shape, [_thread_label(i, picture.block, picture.grid, blocks) for i in ids],
                        [i >= 0 for i in ids], wrong, console.width))
    for shared in picture.shared:
        render_shared_picture(console, shared, picture)


def shared_title(shared: SharedPicture, several_kernels: bool) -> str:
    """The array as the learner's code names it (and where), or its number where no line says."""
    where = f"{shared.file}:{shared.line}" if shared.file and shared.line else ""
    if shared.name:
        key = "report.picture_shared_in" if several_kernels else "report.picture_shared_named"
        return t(key, name=shared.name, kernel=shared.kernel, where=where or "?")
    return t("report.picture_shared_unnamed", n=shared.number, kernel=shared.kernel)


def render_shared_picture(console: Console, shared: SharedPicture, picture: Picture) -> None:
    """One shared array of block 0, laid out as it was allocated (a 2D array by rows and
    columns), its writers named by the block size of the kernel that used it."""
    several = len({s.kernel for s in picture.shared}) > 1 or shared.block != picture.block
    console.print(indented(shared_title(shared, several), style="bold"))
    matrix = len(shared.shape) >= 2
    outside = any(i >= shared.block[0] * shared.block[1] * shared.block[2] for i in shared.writers)  # a cluster's
    who = _who(shared.block, outside)
    same = who == _who(picture.block, picture.grid[0] * picture.grid[1] * picture.grid[2] > 1)
    legend = ([t("report.picture_cells_shared")] if matrix else []) + ([] if same else [who])
    if legend:
        console.print(indented(" ".join(legend), style="dim"))
    console.print(_grid(shared.shape, [_thread_label(i, shared.block, shared.grid, outside) for i in shared.writers],
                        [i >= 0 for i in shared.writers], None, console.width))


def _grid(shape: list[int], labels: list[str], written: list[bool], cells: list[int] | None, width: int) -> Text:
    """The writers laid out as the buffer is: a matrix by rows and columns (numbered), a
    vector in rows of as many cells as fit. Columns that don't fit are said, not hidden."""
    marked = cells is not None and any(c >= 2 and w for c, w in zip(cells, written))
    matrix = len(shape) >= 2
    cols = shape[-1] if matrix else len(labels)
    rows = len(labels) // max(cols, 1) if matrix else 1
    cell = max([len(x) for x in labels] + [1]) + (1 if marked else 0)  # a wrong value's writer gets a "!"
    gutter = 8
    if matrix:  # the column numbers above must fit their cells too
        cell = max(cell, len(str(cols - 1)))
    fit = max(1, (width - gutter) // (cell + 1))
    if not matrix:  # a vector: rows of `fit` cells, each row labelled with its first index
        cols, rows = fit, -(-len(labels) // fit)
    shown = min(cols, fit)
    text = Text()
    if matrix:
        text.append(" " * gutter, style="dim")
        for c in range(shown):
            text.append(f"{c:>{cell}} ", style="dim")
        text.rstrip()
        text.append("\n")
    for r in range(min(rows, PICTURE_ROWS)):
        text.append(f"  {r if matrix else r * cols:>5} ", style="dim")
        for c in range(shown):
            k = r * cols + c
            if k >= len(labels):
                break
            bad = cells is not None and cells[k] >= 2 and written[k]
            style = "magenta" if not written[k] else ("red" if bad else "")
            text.append((labels[k] + ("!" if bad else "")).rjust(cell) + " ", style=style)
        text.rstrip()
        text.append("\n")
    notes = []
    if matrix and shown < cols:
        notes.append(t("report.picture_columns", shown=shown, cols=cols))
    if rows > PICTURE_ROWS:
        notes.append(t("report.picture_rows", shown=PICTURE_ROWS, rows=rows))
    if notes:
        text.append("  " + " ".join(notes) + "\n", style="dim")
    text.rstrip()
    return text
