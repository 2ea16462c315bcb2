"""English and Korean: every message a learner can see comes from locales/<lang>.toml.

The core never builds sentences: it returns a `Msg` (a key and its values),
and the view translates it. The language is `--lang`, else WORKBOOK_LANG, else
the language the workspace was made in, else the locale (LANG=ko_KR.UTF-8
means Korean), else English. A test fails when a key lacks a translation.

Korean particles follow the word before them: a message says `{who}이(가)`
and reads `스레드 3이` or `스레드 2가`, by the value's last syllable.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LANGUAGES = ("en", "ko")
LOCALES = Path(__file__).resolve().parent.parent / "locales"
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


# A WORKBOOK_LANG that names no language we have: (variable, value), said once by the CLI.
unknown_setting: tuple[str, str] | None = None


def known(value: str | None) -> str | None:
    """The language a setting names ("ko", "ko_KR.UTF-8", "Korean"), or None."""
    code = (value or "").strip().lower()[:2]
    return code if code in LANGUAGES else None


def detect(explicit: str | None = None) -> str:
    from . import settings  # settings raises WorkbookError: imported here, not at the top

    global unknown_setting
    unknown_setting = None
    if known(explicit):
        return known(explicit)
    value = settings.language()
    if value:
        if known(value):
            return known(value)
        unknown_setting = ("WORKBOOK_LANG", value)
    chosen = known(settings.workspace_language())
    if chosen:
        return chosen
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
    if lang == "ko" and values:
        text = _PARTICLE_AFTER.sub(lambda m: m[0][:-len(m[3])] + particle(str(values.get(m[1], "")), m[3])
                                   if m[1] in values else m[0], text)
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


# ---------------------------------------------------------------------------
# Korean particles
# ---------------------------------------------------------------------------

# Each written form, and the particle after a final consonant and after a vowel.
PARTICLES = {"이(가)": ("이", "가"), "을(를)": ("을", "를"), "은(는)": ("은", "는"),
             "과(와)": ("과", "와"), "와(과)": ("과", "와"), "(으)로": ("으로", "로"), "(이)라는": ("이라는", "라는")}
_PARTICLE_AFTER = re.compile(r"\{(\w+)\}(['\"`)\]]*)(" + "|".join(re.escape(p) for p in PARTICLES) + ")")
RIEUL = 8  # the final ㄹ: "(으)로" reads "로" after it
# How the last digit of a number is read: 일, 이, 삼...; its final consonant.
_DIGIT_FINAL = {"1": RIEUL, "2": 0, "3": 16, "4": 0, "5": 0, "6": 1, "7": RIEUL, "8": RIEUL, "9": 0}
# A Latin letter read alone (엘, 엠, 엔, 알) or at the end of an English word.
_LETTER_FINAL = {"l": RIEUL, "m": 16, "n": 4, "r": RIEUL}
_WORD_FINAL = {"l": RIEUL, "m": 16, "n": 4, "k": 1, "p": 17, "t": 19, "b": 17, "g": 21}


def final_consonant(word: str) -> int | None:
    """The final consonant of how `word` is read (0: none, 8: ㄹ, other: another one);
    None when it can't be told."""
    stripped = word.rstrip(" '\"`)]}>.,:;!?")
    if not stripped:
        return None
    last = stripped[-1]
    if "가" <= last <= "힣":
        return (ord(last) - ord("가")) % 28
    if last.isdigit():
        digits = re.search(r"\d+$", stripped)[0]
        if last != "0":
            return _DIGIT_FINAL[last]
        return 21 if digits.strip("0") == "" and len(digits) == 1 else 17  # 영; 십, 백, 천, 만 end in one too
    if last.isascii() and last.isalpha():
        letters = re.search(r"[A-Za-z]+$", stripped)[0].lower()
        if len(letters) == 1:
            return _LETTER_FINAL.get(letters, 0)
        if letters.endswith("ng"):
            return 21
        if letters.endswith("le"):  # puzzle, file, table: the e is silent
            return RIEUL
        return _WORD_FINAL.get(letters[-1], 0)
    return None


def particle(word: str, form: str) -> str:
    """The particle `form` ("이(가)", "을(를)", "(으)로"...) as it reads after `word`."""
    after_consonant, after_vowel = PARTICLES[form]
    final = final_consonant(word)
    if final is None:
        return form
    if form == "(으)로":
        return after_vowel if final in (0, RIEUL) else after_consonant
    return after_consonant if final else after_vowel


def pick(texts: dict[str, str] | str, lang: str | None = None) -> str:
    """A per-language text ({"en": ..., "ko": ...}) in the current language."""
    if isinstance(texts, str):
        return texts
    lang = lang or _current
    return texts.get(lang) or texts.get("en", "")
