"""The `workbook` command: a Typer app whose commands live in workbook/cli/commands/.

Each command here only turns options into a call of its module's function
(keyword arguments, a `Context` saying where to print). Every way out goes
through `main()`: an exit code, a message in the learner's language (or one
JSON document under --json), and never a traceback: an internal error is
written to a log file that the message names.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from datetime import datetime
from pathlib import Path

import typer
from rich.text import Text

from ..child import processes
from ..core import exitcodes, i18n, prune, settings, sweep
from .commands.common import Context
from .helpview import HelpCommand, HelpGroup, usage_error


def _language_from_argv(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return None


def _lang_first(args: list[str]) -> list[str]:
    """`--lang` is the app's option, but `workbook list --lang ko` should work too:
    move it in front of the command, wherever it was typed. With nothing else typed,
    the help: `workbook` alone (in any language) is a question, not an error."""
    moved, rest = [], []
    i = 0
    while i < len(args):
        if args[i] == "--":
            rest += args[i:]
            break
        if args[i] == "--lang" and i + 1 < len(args):
            moved += args[i:i + 2]
            i += 2
            continue
        (moved if args[i].startswith("--lang=") else rest).append(args[i])
        i += 1
    return moved + (rest or ["--help"])


i18n.set_language(i18n.detect(_language_from_argv(sys.argv)))
t = i18n.t

app = typer.Typer(cls=HelpGroup, help=t("help.app"), no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False, rich_markup_mode="rich")
author_app = typer.Typer(cls=HelpGroup, help=t("help.author"), no_args_is_help=True)
app.add_typer(author_app, name="author")

PUZZLE = typer.Argument(..., help=t("help.arg.puzzle"), show_default=False)
PUZZLE_OPTIONAL = typer.Argument(None, help=t("help.arg.puzzle_optional"), show_default=False)
PUZZLES = typer.Argument(None, help=t("help.arg.puzzles"), show_default=False)
PART = typer.Option(None, "--part", help=t("help.opt.part"), metavar="help.value.part")  # a key (helpview)
SOLUTIONS = typer.Option(False, "--solutions", help=t("help.opt.solutions"))
JSON = typer.Option(False, "--json", help=t("help.opt.json"))
SEED = typer.Option(None, "--seed", help=t("help.opt.seed"), min=0, max=2**63 - 1)
YES = typer.Option(False, "--yes", "-y", help=t("help.opt.yes"))
SANITIZE = typer.Option(None, "--sanitize/--no-sanitize", help=t("help.opt.sanitize"), show_default=False)
QUICK = typer.Option(False, "--quick", help=t("help.opt.quick"))
NO_CACHE = typer.Option(False, "--no-cache", help=t("help.opt.no_cache"))
DEVICE = typer.Option(None, "--device", help=t("help.opt.device"), metavar="cpu|gpu|sim")


def _done(code: int) -> None:
    raise typer.Exit(code)


@app.callback()
def main_options(context: typer.Context,
                 lang: str | None = typer.Option(None, "--lang", help=t("help.opt.lang"), metavar="en|ko")) -> None:
    if lang is not None and lang not in i18n.LANGUAGES:
        raise i18n.WorkbookError("error.bad_lang", lang=lang)
    if lang is not None:
        i18n.set_language(lang)
    if context.invoked_subcommand not in ("init", "doctor", None):
        from .commands import init

        init.bring_up_to_date(Context(as_json="--json" in sys.argv))


@app.command(cls=HelpCommand, help=t("help.init"))
def init(folder: str = typer.Argument(..., help=t("help.arg.folder"), show_default=False, metavar="DIR")) -> None:
    from .commands import init as command

    _done(command.main(Context(), folder=folder))


@app.command("list", cls=HelpCommand, help=t("help.list"))
def list_cmd(as_json: bool = JSON) -> None:
    from .commands import list_

    _done(list_.main(Context(as_json=as_json)))


@app.command(cls=HelpCommand, help=t("help.show"))
def show(puzzle: str = PUZZLE) -> None:
    from .commands import show as command

    _done(command.main(Context(), puzzle=puzzle))


@app.command(cls=HelpCommand, help=t("help.run"))
def run(puzzle: str | None = PUZZLE_OPTIONAL, part: str | None = PART, solutions: bool = SOLUTIONS,
        seed: int | None = SEED, as_json: bool = JSON, sanitize: bool | None = SANITIZE, quick: bool = QUICK,
        device: list[str] | None = DEVICE, no_cache: bool = NO_CACHE) -> None:
    from .commands import run as command

    _done(command.main(Context(as_json=as_json), puzzle=puzzle, part=part, solutions=solutions, seed=seed,
                       sanitize=sanitize, quick=quick, devices=device, cache=not no_cache))


@app.command(cls=HelpCommand, help=t("help.check"))
def check(puzzles: list[str] | None = PUZZLES, every: bool = typer.Option(False, "--all", help=t("help.opt.all")),
          solutions: bool = SOLUTIONS, seed: int | None = SEED, as_json: bool = JSON,
          sanitize: bool | None = SANITIZE, quick: bool = QUICK, device: list[str] | None = DEVICE,
          no_cache: bool = NO_CACHE, jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, max=64,
                                                                      help=t("help.opt.jobs"))) -> None:
    from .commands import check as command

    _done(command.main(Context(as_json=as_json), puzzles=puzzles or [], every=every, solutions=solutions,
                       seed=seed, sanitize=sanitize, quick=quick, devices=device, cache=not no_cache, jobs=jobs))


@app.command(cls=HelpCommand, help=t("help.reveal"))
def reveal(puzzle: str = PUZZLE, yes: bool = YES,
           apply: bool = typer.Option(False, "--apply", help=t("help.opt.apply"))) -> None:
    from .commands import reveal as command

    _done(command.main(Context(), puzzle=puzzle, yes=yes, apply=apply))


@app.command(cls=HelpCommand, help=t("help.hint"))
def hint(puzzle: str = PUZZLE,
         number: int | None = typer.Argument(None, help=t("help.arg.hint_number"), show_default=False),
         show_all: bool = typer.Option(False, "--all", help=t("help.opt.all_hints")),
         part: str | None = PART, yes: bool = YES) -> None:
    from .commands import hint as command

    _done(command.main(Context(), puzzle=puzzle, number=number, show_all=show_all, part=part, yes=yes))


@app.command(cls=HelpCommand, help=t("help.watch"))
def watch(puzzle: str | None = PUZZLE_OPTIONAL, sanitize: bool | None = SANITIZE,
          device: list[str] | None = DEVICE, quick: bool = QUICK) -> None:
    from .commands import watch as command

    _done(command.main(Context(), puzzle=puzzle, sanitize=sanitize, devices=device, quick=quick))


@app.command(cls=HelpCommand, help=t("help.reset"))
def reset(puzzle: str = PUZZLE, yes: bool = YES) -> None:
    from .commands import reset as command

    _done(command.main(Context(), puzzle=puzzle, yes=yes))


@app.command(cls=HelpCommand, help=t("help.doctor"))
def doctor(as_json: bool = JSON) -> None:
    from .commands import doctor as command

    _done(command.main(Context(as_json=as_json)))


@app.command(cls=HelpCommand, help=t("help.backups"))
def backups(puzzle: str | None = PUZZLE_OPTIONAL) -> None:
    from .commands import backups_

    _done(backups_.list_backups(Context(), puzzle=puzzle))


@app.command(cls=HelpCommand, help=t("help.restore"))
def restore(backup: str = typer.Argument(..., help=t("help.arg.backup"), show_default=False)) -> None:
    from .commands import backups_

    _done(backups_.restore(Context(), backup=backup))


@app.command(cls=HelpCommand, help=t("help.grade"))
def grade(submissions: list[str] | None = typer.Argument(None, help=t("help.arg.submissions"), show_default=False),
          puzzle: list[str] | None = typer.Option(None, "--puzzle", "-p", help=t("help.opt.grade_puzzle"),
                                                     metavar="help.value.puzzle"),
          unsandboxed: bool = typer.Option(False, "--unsandboxed", help=t("help.opt.unsandboxed")),
          roster: str | None = typer.Option(None, "--roster", help=t("help.opt.roster"), show_default=False),
          out: str | None = typer.Option(None, "--out", help=t("help.opt.grade_out"), show_default=False),
          address: str | None = typer.Option(None, "--address", help=t("help.opt.address"), show_default=False),
          jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, max=4096, help=t("help.opt.grade_jobs"),
                                          show_default=False),
          seed: int | None = SEED, device: list[str] | None = DEVICE, as_json: bool = JSON) -> None:
    from .commands import grade as command

    _done(command.main(Context(as_json=as_json, lines=True), submissions=submissions or [], puzzles=puzzle or [],
                       unsandboxed=unsandboxed, seed=seed, devices=device, roster_file=roster, out=out,
                       address=address, jobs=jobs))


@author_app.command("sync", cls=HelpCommand, help=t("help.author_sync"))
def author_sync(puzzles: list[str] | None = PUZZLES) -> None:
    from .commands import author

    _done(author.sync(Context(), puzzles=puzzles or []))


@author_app.command("verify", cls=HelpCommand, help=t("help.author_verify"))
def author_verify(puzzles: list[str] | None = PUZZLES, run_them: bool = typer.Option(
        False, "--run", help=t("help.opt.verify_run")), seeds: int = typer.Option(
        40, "--seeds", min=0, help=t("help.opt.verify_seeds")), as_json: bool = JSON,
        jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, max=64, help=t("help.opt.jobs"))) -> None:
    from .commands import author

    _done(author.verify(Context(as_json=as_json), puzzles=puzzles or [], run=run_them, seeds=seeds, jobs=jobs))


# ---------------------------------------------------------------------------
# Every way out
# ---------------------------------------------------------------------------


def _report_error(ctx: Context, key: str, message: str, code: int, **extra) -> int:
    """Say what went wrong, as a line or (under --json) one JSON document. Printing itself
    may fail (a closed pipe, a strange encoding): then as plain ASCII, or not at all."""
    try:
        if ctx.as_json:
            from ..core.results import document

            ctx.json(document(error={"key": key, "message": message, "exit_code": code, **extra}))
        else:
            ctx.err.print(Text.assemble((t("error.prefix"), "bold red"), " ", message))
    except Exception:  # noqa: BLE001 - the exit code still says it
        with contextlib.suppress(Exception):
            print(f"{t('error.prefix')} {message}".encode("ascii", "backslashreplace").decode(), file=sys.stderr)
    return code


def _crash_log(exc: BaseException) -> str:
    """Write the traceback where the learner can find it (or send it), and say where: in a
    file of its own (two crashes in one second never share one), in the first folder that
    can be written, the temp folder last."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    text = "workbook " + " ".join(sys.argv[1:]) + "\n\n" + "".join(traceback.format_exception(exc))
    places = (settings.logs_dir, lambda: settings.cache_dir() / "logs", lambda: settings.private_temp("workbook-logs"))
    for folder in places:
        try:
            where = folder()
            where.mkdir(parents=True, exist_ok=True)
            path = where / f"crash-{stamp}-{os.getpid()}.log"
            with open(path, "x", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
            return str(path)
        except Exception:  # noqa: BLE001 - a home or a disk that fails: the next place
            continue
    return "(no log could be written)"


def _usage_error(exc: Exception) -> bool:
    """A bad option or argument, as click reports it (Typer may bundle its own click)."""
    return hasattr(exc, "format_message") and hasattr(exc, "exit_code") and type(exc).__name__ not in ("Exit",)


# What the system says when it refuses a file operation that is not the workbook's fault.
_OS_ADVICE = {errno.ENOSPC: "error.os.full", errno.EDQUOT: "error.os.full", errno.EROFS: "error.os.read_only",
              errno.EACCES: "error.os.denied", errno.EPERM: "error.os.denied"}


def _os_error(ctx: Context, exc: OSError) -> int:
    """A full disk, a read-only folder, a permission: bad input for the user to fix, named."""
    advice = _OS_ADVICE.get(exc.errno, "error.os.other")
    path = exc.filename or "-"
    return _report_error(ctx, "error.os", t("error.os", why=exc.strerror or str(exc), path=path, advice=t(advice)),
                         exitcodes.BAD_INPUT, errno=exc.errno)


def _plain_streams() -> None:
    """An output that can't take every character (LANG=C, PYTHONIOENCODING=ascii) gets a '?'
    for one it can't, not a UnicodeEncodeError halfway through a report."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="replace")


def main(argv: list[str] | None = None) -> None:
    """Entry point: an exit code for every way out, and never a traceback."""
    args = _lang_first(list(sys.argv[1:] if argv is None else argv))
    _plain_streams()
    ctx = Context(as_json="--json" in args, lines="grade" in args[:3])  # grade prints JSON Lines, errors too
    scratch = None
    if argv is not None and _language_from_argv(args):
        i18n.set_language(i18n.detect(_language_from_argv(args)))
    if i18n.unknown_setting:
        name, value = i18n.unknown_setting
        ctx.err.print(t("error.unknown_lang_setting", name=name, value=value), style="yellow", highlight=False)
    try:
        with processes.guard():
            scratch = _start_up()
            code = typer.main.get_command(app).main(args, prog_name="workbook", standalone_mode=False)
        if code == exitcodes.INTERRUPTED:  # Typer turns Ctrl-C into Exit(130) without a word
            code = _report_error(ctx, "error.interrupted", t("error.interrupted"), exitcodes.INTERRUPTED)
    except i18n.WorkbookError as exc:
        code = _report_error(ctx, exc.msg.key, exc.msg.text(), exc.exit_code)
    except KeyboardInterrupt:
        code = _report_error(ctx, "error.interrupted", t("error.interrupted"), exitcodes.INTERRUPTED)
    except OSError as exc:
        if exc.errno in _OS_ADVICE:
            code = _os_error(ctx, exc)
        else:
            code = _internal(ctx, exc)
    except ModuleNotFoundError as exc:  # a dependency missing from this Python: say which, and where to get it
        code = _report_error(ctx, "error.missing_module", t("error.missing_module", module=exc.name or str(exc),
                                                            python=sys.executable), exitcodes.TOOLCHAIN)
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if type(exc).__name__ == "NoArgsIsHelpError":  # `workbook` alone: the help, not an error
            print(exc.format_message(), end="", file=ctx.out.file)
            code = exitcodes.OK
        elif _usage_error(exc):
            message, help_command = usage_error(exc)
            code = _report_error(ctx, "error.usage", t("error.usage", detail=message, help=help_command),
                                 exitcodes.BAD_INPUT)
        elif type(exc).__name__ == "Abort":  # Ctrl-C at a prompt
            code = _report_error(ctx, "error.interrupted", t("error.interrupted"), exitcodes.INTERRUPTED)
        else:
            code = _internal(ctx, exc)
    finally:
        if scratch is not None:
            sweep.release(scratch)
    sys.exit(code if isinstance(code, int) else exitcodes.OK)


def _start_up() -> Path | None:
    """Sweep what killed workbooks left, prune what no command used for a month, and give
    this one a temp folder of its own."""
    with contextlib.suppress(OSError, i18n.WorkbookError):
        sweep.sweep()
        prune.prune()
    try:
        return sweep.temp_root()
    except OSError:
        return None  # the temp folder is not writable: runs will say so when they need it


def _internal(ctx: Context, exc: BaseException) -> int:
    log = _crash_log(exc)
    return _report_error(ctx, "error.internal", t("error.internal", log=log, error=f"{type(exc).__name__}: {exc}"),
                         exitcodes.INTERNAL, log=log)
