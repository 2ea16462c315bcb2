"""What the subcommands share: where they print, resolving a puzzle id, asking first.

Every command is a function of a `Context` and keyword-only options, returning
an exit code; errors are raised as WorkbookError and rendered in one place
(workbook/cli/app.py), as a message or, under --json, as a JSON document.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ...core.i18n import Msg, WorkbookError, msg, pick
from ...course import catalog, learner, manifest, state
from ...view import terminal


@dataclass
class Context:
    """Where a command prints, and how. Both consoles show what a puzzle or a learner's
    program says as text, never as terminal control sequences (workbook/view/terminal.py)."""

    out: Console = field(default_factory=lambda: terminal.console())
    err: Console = field(default_factory=lambda: terminal.console(stderr=True))
    as_json: bool = False
    lines: bool = False  # JSON Lines (grade): every document, an error too, on one line of its own
    warnings: list[Msg] = field(default_factory=list)  # said on the way, and in the JSON document

    def json(self, document: dict) -> None:
        if self.warnings and "warnings" not in document:
            document["warnings"] = [{"key": w.key, "text": w.text("en")} for w in self.warnings]
        text = terminal.json_text(document, self.out.file, indent=None if self.lines else 2)
        print(text, file=self.out.file, flush=True)

    def warn(self, message: Msg | None) -> None:
        """Something the learner should know that does not change the verdict (progress not saved)."""
        if message is None:
            return
        self.warnings.append(message)
        if not self.as_json:
            self.err.print(Text(message.text(), style="yellow"))


def resolve(text: str) -> tuple[manifest.Puzzle, str | None]:
    """The puzzle (and part) the user named; a WorkbookError names the closest ids."""
    pid, part = catalog.resolve_id(text)
    puzzle = catalog.load(pid)
    if part:
        puzzle.part(part)
    return puzzle, part


def require_learner_files(puzzle: manifest.Puzzle) -> None:
    """A learner file deleted by mistake, turned into a folder or a link, or not text is bad
    input with a way out, not a crash (workbook/course/learner.py says what is accepted)."""
    learner.require(puzzle)


def learner_files(puzzle: manifest.Puzzle) -> list[str]:
    """The learner's files as the learner finds them: relative to the workspace."""
    from ...course.backups import relative

    return [relative(path) for path in puzzle.learner_files()]


def title(puzzle: manifest.Puzzle) -> str:
    return pick(puzzle.title)


def load_state(ctx: Context) -> state.State:
    current = state.load()
    if current.warning:
        ctx.warn(msg("state.rebuilt", why=current.warning))
    if current.repaired:
        ctx.warn(msg("state.repaired", ids=", ".join(sorted(current.repaired))))
    return current


def confirm(ctx: Context, question: str, yes: bool) -> bool:
    """Ask before doing something a learner may regret; --yes answers for them.
    With no terminal to ask, nothing is done, and the command fails saying why (a script
    that left out --yes must not go on as if it had worked)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise WorkbookError("prompt.no_tty")
    return typer.confirm(wrapped(question, ctx.out.width), default=False)


PROMPT_TAIL = len(" [y/N]: ")


def wrapped(question: str, width: int) -> str:
    """A question broken between words to fit `width` (a terminal breaks it anywhere, inside a
    Korean word too), with room on its last line for the " [y/N]: " typer.confirm adds."""
    def lines(text: str, room: int) -> list[str]:
        room = max(room, 10)
        return [line.plain.rstrip() for line in Text(text).wrap(Console(width=room), room)]

    out = lines(question, width)
    if out and cell_len(out[-1]) + PROMPT_TAIL > width:
        out += lines(out.pop(), width - PROMPT_TAIL)
    return "\n".join(out)


def replace_files(puzzle: manifest.Puzzle, contents: dict[str, str | bytes], reason: str):
    """Replace learner files after a backup (workbook/course/backups.py), turning what stops it into
    a message that says exactly what changed: nothing, or which files (and where the backup is)."""
    from ...course import backups

    try:
        return backups.write_files(puzzle, contents, reason)
    except backups.PartlyWritten as exc:
        raise WorkbookError("files.partly_written", written=", ".join(exc.written) or "-", failed=exc.failed,
                            why=exc.strerror or str(exc.cause), backup=exc.backup.id) from None
    except OSError as exc:
        raise WorkbookError("files.cannot_write", file=learner.shown(Path(exc.filename)) if exc.filename else "-",
                            why=exc.strerror or str(exc)) from None
