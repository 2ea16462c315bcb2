"""What the subcommands share: where they print, resolving a puzzle id, asking first.

Every command is a function of a `Context` and keyword-only options, returning
an exit code; errors are raised as WorkbookError and rendered in one place
(workbook/cli.py), as a message or, under --json, as a JSON document.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import typer
from rich.console import Console

from .. import catalog, state
from ..i18n import WorkbookError, pick, t


@dataclass
class Context:
    """Where a command prints, and how."""

    out: Console = field(default_factory=lambda: Console(highlight=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))
    as_json: bool = False

    def json(self, document: dict) -> None:
        print(json.dumps(document, indent=2, ensure_ascii=False), file=self.out.file)


def resolve(text: str) -> tuple[catalog.Puzzle, str | None]:
    """The puzzle (and part) the user named; a WorkbookError names the closest ids."""
    pid, part = catalog.resolve_id(text)
    puzzle = catalog.load(pid)
    if part:
        puzzle.part(part)
    return puzzle, part


def require_learner_files(puzzle: catalog.Puzzle) -> None:
    """A learner file deleted by mistake is bad input with a way out, not a crash."""
    missing = [f for f in puzzle.learner_files() if not f.exists()]
    if missing:
        from ..backups import relative

        raise WorkbookError("error.missing_file", file=relative(missing[0]), id=puzzle.id)


def learner_files(puzzle: catalog.Puzzle) -> list[str]:
    """The learner's files as the learner finds them: relative to the workspace."""
    from ..backups import relative

    return [relative(path) for path in puzzle.learner_files()]


def title(puzzle: catalog.Puzzle) -> str:
    return pick(puzzle.title)


def load_state(ctx: Context) -> state.State:
    current = state.load()
    if current.warning:
        ctx.err.print(f"[yellow]{t('state.rebuilt', why=current.warning)}[/]")
    return current


def confirm(ctx: Context, question: str, yes: bool) -> bool:
    """Ask before doing something a learner may regret; --yes answers for them.
    With no terminal to ask, the answer is no."""
    if yes:
        return True
    if not sys.stdin.isatty():
        ctx.err.print(t("prompt.no_tty"))
        return False
    return typer.confirm(question, default=False)
