"""What the subcommands share: the consoles, resolving a puzzle id, leaving with a code."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

from .. import catalog, exitcodes, state
from ..i18n import pick, t

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def fail(message: str, code: int = exitcodes.BAD_INPUT) -> NoReturn:
    err.print(f"[bold red]{t('error.prefix')}[/] {message}")
    raise typer.Exit(code)


def resolve(text: str) -> tuple[catalog.Puzzle, str | None]:
    """The puzzle (and part) the user named, or exit 2 with the closest ids."""
    try:
        pid, part = catalog.resolve_id(text)
        puzzle = catalog.load(pid)
        if part:
            puzzle.part(part)
        return puzzle, part
    except catalog.CatalogError as exc:
        fail(str(exc))


def require_learner_files(puzzle: catalog.Puzzle) -> None:
    """A learner file deleted by mistake is bad input with a way out, not a crash."""
    missing = [f for f in puzzle.learner_files() if not f.exists()]
    if missing:
        from ..backups import relative

        fail(t("error.missing_file", file=relative(missing[0]), id=puzzle.id))


def all_puzzles() -> list[catalog.Puzzle]:
    try:
        return catalog.all_puzzles()
    except catalog.CatalogError as exc:
        fail(str(exc))


def title(puzzle: catalog.Puzzle) -> str:
    return pick(puzzle.title)


def load_state() -> state.State:
    current = state.load()
    if current.warning:
        err.print(f"[yellow]{t('state.rebuilt', why=current.warning)}[/]")
    return current


def confirm(question: str, yes: bool) -> bool:
    """Ask before doing something a learner may regret; --yes answers for them.
    With no terminal to ask, the answer is no."""
    if yes:
        return True
    if not sys.stdin.isatty():
        err.print(t("prompt.no_tty"))
        return False
    return typer.confirm(question, default=False)
