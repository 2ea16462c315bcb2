"""What Click and Typer would say in English, said here in the learner's language.

Typer draws help with Rich, but its option help goes through a layout that
cuts Korean words at the edge of the column, and Typer's bundled Click has
its own words (Usage, Options, "Show this message and exit.", "No such
option") in English only. So the help screens are drawn here, wrapped at
word boundaries at any width, and a usage error's English is matched and
said again in the learner's language (anything not matched stays as Click
wrote it, rather than being lost).
"""

from __future__ import annotations

import io
import re

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from typer.core import TyperArgument, TyperCommand, TyperGroup

from ..core.i18n import t


def _console(buffer: io.StringIO) -> Console:
    """A console like the one stdout would get (width, colour, NO_COLOR), writing to `buffer`."""
    probe = Console()
    return Console(file=buffer, width=probe.width, color_system=probe.color_system, force_terminal=probe.is_terminal,
                   no_color=probe.no_color, highlight=False, emoji=False)


def _usage(command, ctx) -> Text:
    pieces = [ctx.command_path, f"[{t('help.usage_options')}]"]
    if isinstance(command, TyperGroup):
        pieces += [t("help.usage_command"), f"[{t('help.usage_args')}]..."]
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = (param.name or "").upper()
            many = "..." if param.nargs != 1 else ""
            pieces.append(f"{name}{many}" if param.required else f"[{name}]{many}")
    text = Text(t("help.usage") + " ", style="bold")
    text.append(" ".join(pieces), style="bold")
    return text


def _names(param) -> Text:
    names = Text(", ".join(param.opts), style="bold cyan")
    for other in param.secondary_opts:
        names.append("\n" + other, style="bold magenta")
    return names


def _help_of(param, command, ctx) -> Text:
    if param is command.get_help_option(ctx):
        return Text(t("help.opt.help"))
    text = Text(getattr(param, "help", None) or "")
    if param.required:
        text.append((" " if text else "") + t("help.required"), style="red")
    return text


def _panel(title: str, table: Table) -> Panel:
    return Panel(table, title=title, title_align="left", border_style="dim", box=box.ROUNDED)


def _table(*columns: dict) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1), expand=True)
    for column in columns:
        table.add_column(**column)
    return table


# Typer's and Click's words for a value's type (they differ by version), English in every
# language: each said in the learner's.
VALUE_WORDS = {"int": "help.value.int", "integer": "help.value.int", "int range": "help.value.int",
               "integer range": "help.value.int", "float": "help.value.number", "float range": "help.value.number",
               "str": "help.value.text", "text": "help.value.text", "list": "help.value.text",
               "list[str]": "help.value.text", "list[int]": "help.value.int",
               "path": "help.value.path", "file": "help.value.path", "directory": "help.value.path"}


def _value_of(param, ctx) -> str:
    """How an option's value is shown: the metavar the option names (cpu|gpu|sim), else a
    word for its type in the learner's language ("<int range>" and "<str>" are English)."""
    if getattr(param, "metavar", None):  # a message key (cli/app.py's PART), or words of no language (cpu|gpu|sim)
        return t(param.metavar) if param.metavar.startswith("help.value.") else param.metavar
    shown = _typer_value(param, ctx)
    word = VALUE_WORDS.get(shown.strip("<>[]. ").lower())
    return t(word) if word else shown


def _typer_value(param, ctx) -> str:
    """Typer's words where it has them (0.29 on), else Click's metavar (Typer 0.27 has no
    display_type_rich: --help crashed there), else the type's name."""
    for way in ("display_type_rich", "make_metavar"):
        shown = getattr(param, way, None)
        if shown is not None:
            try:
                return shown(ctx) or ""
            except TypeError:  # Click before 8.2 takes no context
                return shown() or ""
    return getattr(getattr(param, "type", None), "name", "") or ""


def render(command, ctx) -> str:
    """The help screen of `command`, as text for Click to print."""
    parts = [Padding(_usage(command, ctx), (1, 1, 0, 1))]
    if command.help:
        parts.append(Padding(Text(command.help), (1, 1, 0, 1)))
    params = command.get_params(ctx)
    arguments = [p for p in params if isinstance(p, TyperArgument)]
    options = [p for p in params if not isinstance(p, TyperArgument) and not getattr(p, "hidden", False)]
    if arguments:
        table = _table({"no_wrap": True, "style": "bold cyan"}, {"ratio": 1, "overflow": "fold"})
        for param in arguments:
            table.add_row(param.name.upper(), _help_of(param, command, ctx))
        parts.append(Padding(_panel(t("help.arguments"), table), (1, 0, 0, 0)))
    if options:
        table = _table({"no_wrap": True}, {"no_wrap": True, "style": "yellow"}, {"ratio": 1, "overflow": "fold"})
        for param in options:
            shown = "" if param.is_flag else _value_of(param, ctx)
            table.add_row(_names(param), shown, _help_of(param, command, ctx))
        parts.append(Padding(_panel(t("help.options"), table), (1, 0, 0, 0)))
    if isinstance(command, TyperGroup):
        table = _table({"no_wrap": True, "style": "bold cyan"}, {"ratio": 1, "overflow": "fold"})
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                table.add_row(name, Text(sub.help or ""))
        parts.append(Padding(_panel(t("help.commands"), table), (1, 0, 0, 0)))
    buffer = io.StringIO()
    _console(buffer).print(Group(*parts))
    return buffer.getvalue()


class HelpCommand(TyperCommand):
    def format_help(self, ctx, formatter) -> None:
        formatter.write(render(self, ctx))


class HelpGroup(TyperGroup):
    def format_help(self, ctx, formatter) -> None:
        formatter.write(render(self, ctx))


# ---------------------------------------------------------------------------
# Usage errors
# ---------------------------------------------------------------------------

# Click's English (as Typer's bundled copy words it) -> a message key; the groups are its values.
USAGE_ERRORS = [
    (re.compile(r"^No such command '(?P<name>.*)'\. Did you mean (?P<close>.+)\?$"), "usage.no_command_close"),
    (re.compile(r"^No such command '(?P<name>.*)'\.$"), "usage.no_command"),
    (re.compile(r"^No such option: (?P<name>\S+) \(Possible options: (?P<close>.+)\)$"), "usage.no_option_close"),
    (re.compile(r"^No such option: (?P<name>\S+)$"), "usage.no_option"),
    (re.compile(r"^Missing argument '(?P<name>.+)'\.$"), "usage.missing_argument"),
    (re.compile(r"^Missing command\.$"), "usage.missing_command"),
    (re.compile(r"^Got unexpected extra arguments? \((?P<extra>.*)\)$"), "usage.extra_arguments"),
    (re.compile(r"^Option '(?P<name>.+)' requires an argument\.$"), "usage.needs_value"),
    (re.compile(r"^Invalid value for '(?P<name>.+)': .*valid integer.*$"), "usage.not_integer"),
    (re.compile(r"^Invalid value for '(?P<name>.+)': (?P<why>.*)$"), "usage.invalid_value"),
]


def usage_error(exc) -> tuple[str, str]:
    """A Click usage error as (message, the help command to run), in the learner's language."""
    english = exc.format_message().strip()
    message = english
    for pattern, key in USAGE_ERRORS:
        found = pattern.match(english)
        if found:
            values = found.groupdict()
            if "name" in values and key == "usage.missing_argument":
                values["name"] = values["name"].upper()
            message = t(key, **values)
            break
    path = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "workbook"
    return message, f"{path} --help"
