"""English and Korean: every message a learner can see comes from locales/<lang>.toml.

The core never builds sentences: it returns a `Msg` (a key and its values),
and the view translates it. The language is `--lang`, else WORKBOOK_LANG, else
the locale (LANG=ko_KR.UTF-8 means Korean), else English. A test fails when a
key lacks a translation.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LANGUAGES = ("en", "ko")
LOCALES = Path(__file__).with_name("locales")
_current = "en"


@dataclass(frozen=True)
class Msg:
    """A message to show: its key in the locale files and the values it names."""

    key: str
    values: dict = field(default_factory=dict)

    def text(self, lang: str | None = None) -> str:
        return t(self.key, lang, **self.values)

    def __str__(self) -> str:  # English, for logs and JSON
        return self.text("en")


def msg(key: str, **values) -> Msg:
    return Msg(key, values)


class WorkbookError(Exception):
    """Bad input or a broken setup: a message for the learner and an exit code, never a traceback."""

    def __init__(self, key: str, exit_code: int | None = None, **values):
        from . import exitcodes

        self.msg = Msg(key, values)
        self.exit_code = exitcodes.BAD_INPUT if exit_code is None else exit_code
        super().__init__(self.msg.text("en"))


def detect(explicit: str | None = None) -> str:
    from . import settings  # settings raises WorkbookError: imported here, not at the top

    for value in (explicit, settings.language()):
        if value:
            return value.lower()[:2] if value.lower()[:2] in LANGUAGES else "en"
    return "ko" if settings.locale_language().lower().startswith("ko") else "en"


def set_language(lang: str) -> None:
    global _current
    _current = lang if lang in LANGUAGES else "en"


def language() -> str:
    return _current


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    return tomllib.loads((LOCALES / f"{lang}.toml").read_text(encoding="utf-8"))


def t(key: str, lang: str | None = None, /, **values) -> str:
    """The message `key` in the current language (or `lang`), with `{name}` fields filled in.
    A value that is itself a Msg is translated too."""
    lang = lang or _current
    text = catalog(lang).get(key) or catalog("en").get(key) or key
    values = {k: _say(v, lang) for k, v in values.items()}
    try:
        return text.format(**values) if values else text
    except (KeyError, IndexError):
        return text


def _say(value, lang: str):
    """A value as it goes into a sentence: messages translated, lists of them joined."""
    if isinstance(value, Msg):
        return value.text(lang)
    if isinstance(value, dict):
        return pick(value, lang)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Msg) for v in value):
        return ", ".join(v.text(lang) for v in value)
    return value


def pick(texts: dict[str, str] | str, lang: str | None = None) -> str:
    """A per-language text ({"en": ..., "ko": ...}) in the current language."""
    if isinstance(texts, str):
        return texts
    lang = lang or _current
    return texts.get(lang) or texts.get("en", "")
