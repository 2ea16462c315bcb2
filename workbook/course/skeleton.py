"""Skeletons are derived from solutions, so the two can never drift.

A solution file marks each gap:

    # FILL IN: what to write (about N lines)
    #ko FILL IN: 무엇을 쓸지 (N줄 정도)
    #| placeholder code for the skeleton
    ...the solution...
    # END FILL IN

and says every comment a learner reads in both languages: a run of `#ko`
lines is the Korean for the run of comment lines just above it (`#ko` reads
as `#` in the Korean file). A message in the code (an assert's, an error's)
is said the same way: a `#ko= ` line under a line of code is that line in
Korean, and may differ from it only inside string literals, so both files
compile to the same program. (Docstrings are written as comments: a learner
reads them, and comments are what `#ko` translates.) The learner's file is
written in the learner's language, because the instructions are where a
learner reads most; a file is the skeleton in either language.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.i18n import LANGUAGES

BEGIN = re.compile(r"^(\s*)# FILL IN\b")
END = re.compile(r"^\s*# END FILL IN\s*$")
PLACEHOLDER = re.compile(r"^(\s*)#\| ?(.*)$")
KOREAN = re.compile(r"^(\s*)#ko(?=\s|$)")
KOREAN_CODE = re.compile(r"^(\s*)#ko= (.*?)(\n?)$")
COMMENT = re.compile(r"^\s*#")
# A string literal of Mojo or Python: triple-quoted first, then one-line ones with escapes.
STRING = re.compile(r'[rbf]*("""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')')
WORDS = re.compile(r"[A-Za-z]{2,}")


class MarkerError(ValueError):
    pass


def _is_comment(line: str) -> bool:
    """A comment line that may have a translation: not a placeholder, END or a translation itself."""
    return bool(COMMENT.match(line)) and not (PLACEHOLDER.match(line) or END.match(line) or KOREAN.match(line)
                                              or KOREAN_CODE.match(line))


def without_strings(line: str) -> str:
    """A line of code with every string literal emptied: what the two languages must share."""
    return STRING.sub('""', line)


def _code(line: str) -> str:
    """A line's code without its strings' words and its trailing comment."""
    return without_strings(_before_comment(line.rstrip("\n"))).rstrip()


PROSE = re.compile(r"[A-Za-z]{2,}[,:;.']? +[A-Za-z]{2,}")


def _prose(line: str) -> bool:
    """Whether a line of code holds words a learner reads: a docstring, or a string of
    several words (an assert's or an error's message); a name such as "softmax" is not."""
    code = _before_comment(line)
    if '"""' in code or "'''" in code:
        return True
    return any(PROSE.search(m.group(0)) for m in STRING.finditer(code))


def _before_comment(line: str) -> str:
    """The line up to its trailing comment (a # inside a string is not one)."""
    at = 0
    for m in STRING.finditer(line):
        if "#" in line[at:m.start()]:
            break
        at = m.end()
    cut = line.find("#", at)
    return line if cut < 0 else line[:cut]

def _code_runs(lines: list[str]) -> list[int]:
    """The lines of code a `#ko= ` line (the index after each) says in Korean; checked."""
    found = []
    for i, line in enumerate(lines):
        korean = KOREAN_CODE.match(line)
        if not korean:
            continue
        above = lines[i - 1] if i else ""
        placeholder = PLACEHOLDER.match(above)
        if placeholder:  # the skeleton's code, written after #|
            above = placeholder[1] + placeholder[2]
        elif not above.strip() or COMMENT.match(above):
            raise MarkerError(f"line {i + 1}: a #ko= line must follow the line of code it says in Korean")
        if _code(korean[1] + korean[2]) != _code(above):
            raise MarkerError(f"line {i + 1}: a #ko= line may differ from the code above it only inside strings")
        found.append(i - 1)
    return found


TRAILING = re.compile(r"^(?P<code>\s*[^\s#].*?\S)(?P<gap>\s+)# (?P<comment>.*?)(?P<newline>\n?)$")


def _runs(lines: list[str]) -> list[tuple[int, int, int]]:
    """Each translation as (first English line, first Korean line, end of the Korean run).
    A single `#ko` line under a line of code translates that line's trailing comment."""
    runs = []
    i = 0
    while i < len(lines):
        if not KOREAN.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and KOREAN.match(lines[i]):
            i += 1
        first = start
        while first > 0 and _is_comment(lines[first - 1]):
            first -= 1
        if first == start:
            if start > 0 and TRAILING.match(lines[start - 1]) and i == start + 1:
                runs.append((start - 1, start, i))
                continue
            raise MarkerError(f"line {start + 1}: #ko lines must follow the comment lines they translate")
        english = sum(bool(BEGIN.match(line)) for line in lines[first:start])
        korean = sum(bool(re.match(r"^\s*#ko FILL IN\b", line)) for line in lines[start:i])
        if english != korean:
            raise MarkerError(f"line {start + 1}: the Korean must keep the FILL IN line of the comment it translates")
        runs.append((first, start, i))
    return runs


def _korean(lines: list[str], first: int, start: int, end: int) -> list[str]:
    """The Korean lines that replace lines[first:start]."""
    if _is_comment(lines[first]):
        return [KOREAN.sub(r"\1#", line, count=1) for line in lines[start:end]]
    code = TRAILING.match(lines[first])
    text = KOREAN.sub("", lines[start], count=1).strip()
    return [f"{code['code']}{code['gap']}# {text}{code['newline']}"]


def localize(solution: str, lang: str = "en") -> str:
    """The solution with every comment in one language: English as written, or each
    translated comment replaced by its `#ko` lines."""
    lines = solution.splitlines(keepends=True)
    runs = _runs(lines)
    _code_runs(lines)
    if lang != "ko":
        return "".join(line for line in lines if not KOREAN.match(line) and not KOREAN_CODE.match(line))
    out: list[str] = []
    done = 0
    for first, start, end in runs:
        out += lines[done:first]
        out += _korean(lines, first, start, end)
        done = end
    out += lines[done:]
    said: list[str] = []
    for line in out:  # each #ko= line takes the place of the line of code (or placeholder) above it
        korean = KOREAN_CODE.match(line)
        if korean:
            placeholder = PLACEHOLDER.match(said[-1])
            said[-1] = korean[1] + ("#| " if placeholder else "") + korean[2] + korean[3]
        else:
            said.append(line)
    return "".join(said)


def _derive(solution: str) -> list[tuple[int, str]]:
    """The skeleton's lines, each with the number of the solution line it comes from."""
    out: list[tuple[int, str]] = []
    inside = False
    instruction = False  # still in the comment block that opens the gap
    for number, line in enumerate(solution.splitlines(keepends=True), 1):
        if END.match(line):
            if not inside:
                raise MarkerError(f"line {number}: END FILL IN without FILL IN")
            inside = instruction = False
        elif BEGIN.match(line):
            if inside:
                raise MarkerError(f"line {number}: FILL IN inside another FILL IN")
            inside = instruction = True
            out.append((number, line))
        elif inside:
            placeholder = PLACEHOLDER.match(line)
            if placeholder:
                instruction = False
                newline = "\n" if line.endswith("\n") else ""
                out.append((number, placeholder.group(1) + placeholder.group(2) + newline))
            elif instruction and line.lstrip().startswith("#"):
                out.append((number, line))
            else:
                instruction = False
        else:
            out.append((number, line))
    if inside:
        raise MarkerError("FILL IN without END FILL IN")
    return out


def derive_skeleton(solution: str, lang: str = "en") -> str:
    """The learner's starting file, in `lang`: instructions and placeholders, no solution."""
    return "".join(line for _, line in _derive(localize(solution, lang)))


def clean_solution(solution: str, lang: str = "en") -> str:
    """The solution as a learner should read it, in `lang`: without placeholder and END lines."""
    return "".join(
        line for line in localize(solution, lang).splitlines(keepends=True)
        if not PLACEHOLDER.match(line) and not END.match(line)
    )


def untranslated(solution: str) -> list[int]:
    """Lines where a comment the skeleton shows has no Korean (a run of only
    punctuation, such as a rule of dashes, needs none), and lines of code whose words
    a learner reads (a message, a docstring) with no `#ko= ` line."""
    lines = solution.splitlines(keepends=True)
    translated = {n for first, start, _ in _runs(lines) for n in range(first, start)}
    shown = {number - 1 for number, _ in _derive(solution)}
    said = set(_code_runs(lines))  # lines of code a #ko= line says in Korean
    missing = []
    i = 0
    while i < len(lines):
        placeholder = PLACEHOLDER.match(lines[i])
        if placeholder and _prose(placeholder[1] + placeholder[2]) and i not in said:
            missing.append(i + 1)
        if not _is_comment(lines[i]):
            code = not (placeholder or KOREAN_CODE.match(lines[i]) or KOREAN.match(lines[i]))
            if code and i in shown and i not in said and (
                    (TRAILING.match(lines[i]) and i not in translated) or _prose(lines[i])):
                missing.append(i + 1)
            i += 1
            continue
        start = i
        while i < len(lines) and _is_comment(lines[i]):
            i += 1
        run = range(start, i)
        words = any(re.search(r"[^\W\d_]", lines[n].lstrip()[1:]) for n in run)
        if words and any(n in shown for n in run) and not all(n in translated for n in run):
            missing.append(start + 1)
    return missing


def count_gaps(text: str) -> int:
    return sum(1 for line in text.splitlines() if BEGIN.match(line) and not END.match(line))


def code_of(text: str) -> list[str]:
    """A file's lines without its comments: what the compiler sees, whatever the language."""
    code = []
    for line in text.splitlines():
        if not COMMENT.match(line):
            trailing = TRAILING.match(line)
            code.append(trailing["code"] if trailing else line.rstrip())
    return code


def skeleton_of(solution: Path, lang: str = "en") -> str:
    """The skeleton a solution file derives, in `lang`: what the learner starts from."""
    return derive_skeleton(solution.read_text(encoding="utf-8"), lang)


def language_of(learner: Path, solution: Path) -> str | None:
    """The language whose skeleton the learner's file is, exactly; None when it is anything else."""
    if not learner.exists():
        return None
    text = learner.read_text(encoding="utf-8")
    source = solution.read_text(encoding="utf-8")
    return next((lang for lang in LANGUAGES if derive_skeleton(source, lang) == text), None)


def is_skeleton(learner: Path, text: str) -> bool:
    """True when the learner's file holds the skeleton's code: comments and the words of its
    messages aside, so the skeleton in either language (or with only notes added) is not
    started yet."""
    if not learner.exists():
        return False
    return [without_strings(x) for x in code_of(learner.read_text(encoding="utf-8"))] == \
        [without_strings(x) for x in code_of(text)]
