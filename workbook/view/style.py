"""What every part of the view shares: a status's badge and colour, numbers and messages as
text, the glyphs of the error map, the order devices are shown in (see report.py's notes on
80 columns and colour).
"""

from __future__ import annotations

from rich.padding import Padding
from rich.text import Text

from ..core.i18n import Msg, t
from ..core.results import DeviceResult, PuzzleResult, Status

STYLE = {
    Status.PASS: "bold green",
    Status.FAIL: "bold red",
    Status.COMPILE_ERROR: "bold red",
    Status.CRASH: "bold red",
    Status.TIMEOUT: "bold red",
    Status.NOT_STARTED: "bold yellow",
    Status.NOT_RUN: "dim",
    Status.SKIPPED: "yellow",
    Status.COMPILED: "cyan",
}
ICON = {
    Status.PASS: "✔", Status.FAIL: "✘", Status.COMPILE_ERROR: "✘", Status.CRASH: "✘",
    Status.TIMEOUT: "⏱", Status.NOT_STARTED: "…", Status.NOT_RUN: "–", Status.SKIPPED: "–",
    Status.COMPILED: "◆",
}
# Error map cells: ok, close to the tolerance, wrong, NaN/Inf: a glyph each, and a colour.
CELL = [(".", "green"), ("~", "yellow"), ("X", "bold red"), ("?", "magenta")]
CELL_KEYS = ("ok", "close", "wrong", "nan")
MAP_WIDTH = 32  # cells per row of a vector's map
PICTURE_ROWS = 16  # rows of the who-wrote-what picture
DEVICE_ORDER = ("cpu", "sim", "gpu", "ptx", "occupancy")


def badge(status: Status, short: bool = False) -> Text:
    if short:
        return Text(ICON[status], style=STYLE[status])
    return Text(f"{ICON[status]} {t('status.' + status.value)}", style=STYLE[status])


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2e}"


def say(message: Msg | None) -> str:
    return message.text() if message else ""


def budget_line(result: PuzzleResult) -> Text | None:
    """The line saying the check's budget ran out, unless it is the problem already said."""
    if result.budget_spent and result.budget_spent != result.problem:
        return Text(say(result.budget_spent), style="bold yellow")
    return None


def reasons(dev: DeviceResult) -> str:
    return "; ".join(m.text() for m in dev.reasons)


def indented(text: Text | str, indent: int = 2, style: str = "") -> Padding:
    """A line that wraps under itself instead of back at column 0."""
    return Padding(text if isinstance(text, Text) else Text(text, style=style), (0, 0, 0, indent), expand=False)


def device_label(device: str, stage: str = "kernels") -> str:
    label = t("device." + device)
    return t("report.through_graph", device=label) if stage == "graph" else label
