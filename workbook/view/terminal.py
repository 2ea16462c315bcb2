"""What reaches the terminal is text: never a control sequence that came from a puzzle
or from a learner's program.

Titles, puzzle texts, hints, case labels, compiler messages, the source lines
around an error and a crashed kernel's output all come from files someone
else may have written (a submitted repository, a kernel that prints). An
escape sequence in them could set the window title, write the clipboard
(OSC 52), clear the screen or hide a line. Every console the commands print
to runs a render hook that turns control characters in content into visible
symbols (ESC becomes ␛) before Rich adds its own styling; JSON escapes them.
"""

from __future__ import annotations

import json
import re

from rich.console import Console, ConsoleOptions, RenderHook, RenderResult
from rich.segment import Segment

# C0 controls but tab and newline, DEL, and the C1 controls (0x9b is a one-byte CSI).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
C1 = re.compile(r"[\x80-\x9f]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures": ␛ for ESC
    return "␡" if code == 0x7F else "�"


def clean(text: str) -> str:
    """`text` with every control character but tab and newline made visible."""
    return CONTROL.sub(_visible, text)


class _Cleaned:
    """A renderable whose text segments are cleaned; Rich's own control segments pass."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control or not CONTROL.search(segment.text):
                yield segment
            else:
                yield Segment(clean(segment.text), segment.style)


class _Hook(RenderHook):
    def process_renderables(self, renderables: list) -> list:
        return [_Cleaned(r) for r in renderables]


def console(**options) -> Console:
    """A Rich console whose output carries no control sequence from its content, and reads no
    markup in it: `[...]` in a compiler message (TileTensor[mut=True, ...]) or in a path is text."""
    found = Console(highlight=False, markup=False, **options)
    found.push_render_hook(_Hook())
    return found


def json_text(document: dict, stream=None, indent: int | None = 2) -> str:
    """One JSON document, readable by any JSON parser and harmless on a terminal: the C1
    controls that json.dumps leaves as they are are escaped too, and where the output is
    not UTF-8, everything beyond ASCII is (nothing is lost to the encoding)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    text = json.dumps(document, indent=indent, ensure_ascii=not encoding.startswith("utf"))
    return C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

