"""Render the workbook's Rich views to SVG and PNG, in English and Korean.

Runs the real CLI in a temporary copy of the workbook (so nothing here is
touched), captures its colored output and lets Rich draw it as SVG;
`rsvg-convert` (Debian: librsvg2-bin, with fonts-noto-cjk for Hangul) turns
each SVG into a PNG for people to look at.

    python docs/screenshots/make.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

REPO = Path(__file__).resolve().parents[2]
WIDTH = 80  # every view is made for an 80-column terminal first
WRONG = REPO / "tests" / "wrong"

# (name, setup, command): setup puts files in place before the command runs:
# (puzzle, a folder laid over its learner files, or "solution" for the reference solution).
VIEWS = [
    ("help", None, ["--help"]),
    ("list", None, ["list"]),
    ("show", None, ["show", "p18"]),
    ("hint", None, ["hint", "p18"]),
    ("run-fail", ("p18", WRONG / "p18" / "skips_last"), ["run", "p18", "--seed", "3"]),
    ("run-fail-2d", ("p07", WRONG / "p07" / "forgets_block_row"), ["run", "p07", "--seed", "3", "--quick"]),
    ("run-compile-error", ("p18", WRONG / "p18" / "syntax_error"), ["run", "p18"]),
    ("run-explained", ("p12", REPO / "tests" / "data" / "compile_errors" / "int_accumulator.mojo"),
     ["run", "p12", "--quick"]),
    ("run-pass", ("p18", "solution"), ["run", "p18", "--seed", "3"]),
    ("check", None, ["check", "--all", "--solutions", "--seed", "3"]),
]


def prepare(root: Path, setup) -> None:
    shutil.rmtree(root, ignore_errors=True)
    for name in ("puzzles", "solutions"):
        shutil.copytree(REPO / name, root / name)
    if setup is None:
        return
    puzzle, over = setup
    shutil.copytree(REPO / "solutions" / puzzle, root / "puzzles" / puzzle, dirs_exist_ok=True)
    if over == "solution":
        return
    if over.is_file():  # one learner file, whole
        learner = next((root / "puzzles" / puzzle).glob(over.suffix and f"*{over.suffix}"))
        shutil.copyfile(over, learner)
    else:
        shutil.copytree(over, root / "puzzles" / puzzle, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("wrong.toml"))


def capture(root: Path, lang: str, args: list[str]) -> str:
    env = dict(os.environ, WORKBOOK_ROOT=str(root), FORCE_COLOR="1", COLUMNS=str(WIDTH), TERM="xterm-256color",
               WORKBOOK_NO_PROGRESS="1", PAGER="cat")
    out = subprocess.run([sys.executable, "-m", "workbook", "--lang", lang, *args],
                         capture_output=True, text=True, env=env, cwd=REPO)
    return out.stdout + out.stderr


def fix_wide_characters(svg: str) -> str:
    """Rich lays the text out on a grid of 12.2 px cells, a Hangul syllable taking two
    cells. The renderer ignores the runs' textLength, so the font itself must keep
    to the grid: Noto Sans Mono CJK has Latin glyphs of half an em and Hangul of a
    full em, so at 24.4 px every glyph fills exactly its cells. Its no-break space
    is narrower than a cell, so runs of spaces use plain, preserved spaces."""
    svg = svg.replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)
    return svg.replace("font-family: Fira Code, monospace;\n        font-size: 20px;",
                       'font-family: "Noto Sans Mono CJK KR", monospace;\n        font-size: 24.4px;')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--only", nargs="*", help="view names")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rsvg = shutil.which("rsvg-convert")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wb"
        for name, setup, command in VIEWS:
            if args.only and name not in args.only:
                continue
            for lang in ("en", "ko"):
                prepare(root, setup)  # afresh for each language: both see the same state
                console = Console(record=True, width=WIDTH, force_terminal=True, color_system="truecolor")
                console.print(Text.from_ansi(capture(root, lang, command)))
                svg = args.out / f"{name}.{lang}.svg"
                console.save_svg(str(svg), title=f"workbook {' '.join(command)}")
                svg.write_text(fix_wide_characters(svg.read_text(encoding="utf-8")), encoding="utf-8")
                if rsvg:
                    subprocess.run([rsvg, "-o", str(svg.with_suffix(".png")), str(svg)], check=True)
                    svg.unlink()
                print("wrote", svg.with_suffix(".png") if rsvg else svg)


if __name__ == "__main__":
    main()
