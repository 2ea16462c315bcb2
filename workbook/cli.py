"""The `workbook` command: a Typer app whose commands live in workbook/commands/.

The language is chosen before the app is built, so help texts are translated too.
"""

from __future__ import annotations

import sys

import typer

from . import exitcodes, i18n


def _language_from_argv(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return None


i18n.set_language(i18n.detect(_language_from_argv(sys.argv)))
t = i18n.t

app = typer.Typer(
    help=t("help.app"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
author_app = typer.Typer(help=t("help.author"), no_args_is_help=True)
app.add_typer(author_app, name="author")

PUZZLE = typer.Argument(..., help=t("help.arg.puzzle"), show_default=False)
PUZZLE_OPTIONAL = typer.Argument(None, help=t("help.arg.puzzle_optional"), show_default=False)
SOLUTIONS = typer.Option(False, "--solutions", help=t("help.opt.solutions"))
JSON = typer.Option(False, "--json", help=t("help.opt.json"))
SEED = typer.Option(None, "--seed", help=t("help.opt.seed"))
YES = typer.Option(False, "--yes", "-y", help=t("help.opt.yes"))
SANITIZE = typer.Option(None, "--sanitize/--no-sanitize", help=t("help.opt.sanitize"), show_default=False)


@app.callback()
def main_options(
    lang: str | None = typer.Option(None, "--lang", help=t("help.opt.lang"), metavar="en|ko"),
) -> None:
    if lang is not None and lang not in i18n.LANGUAGES:
        from .commands.common import fail

        fail(t("error.bad_lang", lang=lang))
    if lang is not None:
        i18n.set_language(lang)


@app.command("list", help=t("help.list"))
def list_cmd() -> None:
    from .commands.list_ import list_puzzles

    raise typer.Exit(list_puzzles())


@app.command(help=t("help.show"))
def show(puzzle: str = PUZZLE) -> None:
    from .commands.show import show as run_show

    raise typer.Exit(run_show(puzzle))


@app.command(help=t("help.run"))
def run(
    puzzle: str | None = PUZZLE_OPTIONAL,
    part: str | None = typer.Option(None, "--part", help=t("help.opt.part")),
    solutions: bool = SOLUTIONS,
    seed: int | None = SEED,
    as_json: bool = JSON,
    sanitize: bool | None = SANITIZE,
) -> None:
    from .commands.run import run as run_puzzle

    raise typer.Exit(run_puzzle(puzzle, part, solutions, seed, as_json, sanitize))


@app.command(help=t("help.check"))
def check(
    puzzles: list[str] | None = typer.Argument(None, help=t("help.arg.puzzles"), show_default=False),
    every: bool = typer.Option(False, "--all", help=t("help.opt.all")),
    solutions: bool = SOLUTIONS,
    seed: int | None = SEED,
    as_json: bool = JSON,
    sanitize: bool | None = SANITIZE,
) -> None:
    from .commands.check import check as run_check

    raise typer.Exit(run_check(puzzles or [], every, solutions, seed, as_json, sanitize))


@app.command(help=t("help.reveal"))
def reveal(
    puzzle: str = PUZZLE,
    yes: bool = YES,
    apply: bool = typer.Option(False, "--apply", help=t("help.opt.apply")),
) -> None:
    from .commands.reveal import reveal as run_reveal

    raise typer.Exit(run_reveal(puzzle, yes, apply))


@app.command(help=t("help.hint"))
def hint(
    puzzle: str = PUZZLE,
    show_all: bool = typer.Option(False, "--all", help=t("help.opt.all_hints")),
    part: str | None = typer.Option(None, "--part", help=t("help.opt.part")),
) -> None:
    from .commands.hint import hint as run_hint

    raise typer.Exit(run_hint(puzzle, show_all, part))


@app.command(help=t("help.watch"))
def watch(
    puzzle: str | None = PUZZLE_OPTIONAL,
) -> None:
    from .commands.watch import watch as run_watch

    raise typer.Exit(run_watch(puzzle))


@app.command(help=t("help.reset"))
def reset(puzzle: str = PUZZLE, yes: bool = YES) -> None:
    from .commands.reset import reset as run_reset

    raise typer.Exit(run_reset(puzzle, yes))


@app.command(help=t("help.doctor"))
def doctor() -> None:
    from .commands.doctor import doctor as run_doctor

    raise typer.Exit(run_doctor())


@app.command(help=t("help.backups"))
def backups(
    puzzle: str | None = PUZZLE_OPTIONAL,
) -> None:
    from .commands.backups_ import list_backups

    raise typer.Exit(list_backups(puzzle))


@app.command(help=t("help.restore"))
def restore(backup: str = typer.Argument(..., help=t("help.arg.backup"), show_default=False)) -> None:
    from .commands.backups_ import restore as run_restore

    raise typer.Exit(run_restore(backup))


@author_app.command("sync", help=t("help.author_sync"))
def author_sync(puzzles: list[str] | None = typer.Argument(None, help=t("help.arg.puzzles"))) -> None:
    from .commands.author import sync

    raise typer.Exit(sync(puzzles or []))


@author_app.command("verify", help=t("help.author_verify"))
def author_verify() -> None:
    from .commands.author import verify

    raise typer.Exit(verify())


def main() -> None:
    """Entry point: a Python traceback never reaches the learner."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001
        from .commands.common import err

        err.print(f"[bold red]{t('error.internal')}[/] {type(exc).__name__}: {exc}")
        sys.exit(exitcodes.FAILED)
