"""English and Korean: every message the CLI shows comes from locales/<lang>.toml.

The language is `--lang`, else WORKBOOK_LANG, else the locale (LANG=ko_KR.UTF-8
means Korean), else English. A test fails when a key lacks a translation.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LANGUAGES = ("en", "ko")
LOCALES = Path(__file__).with_name("locales")
_current = "en"


def detect(explicit: str | None = None) -> str:
    for value in (explicit, os.environ.get("WORKBOOK_LANG")):
        if value:
            return value.lower()[:2] if value.lower()[:2] in LANGUAGES else "en"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    return "en"


def set_language(lang: str) -> None:
    global _current
    _current = lang if lang in LANGUAGES else "en"


def language() -> str:
    return _current


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    return tomllib.loads((LOCALES / f"{lang}.toml").read_text(encoding="utf-8"))


def t(key: str, **values) -> str:
    """The message `key` in the current language, with `{name}` fields filled in."""
    text = catalog(_current).get(key) or catalog("en").get(key) or key
    return text.format(**values) if values else text


def pick(texts: dict[str, str]) -> str:
    """A manifest's per-language text ({"en": ..., "ko": ...}) in the current language."""
    return texts.get(_current) or texts.get("en", "")
