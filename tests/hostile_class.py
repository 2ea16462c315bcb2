"""The hostile class of issue 38, made in a folder: at least 20 submissions of p01 (and p02),
honest, wrong, hostile and broken, each with its right grade. tests/test_class.py grades it;
benchmarks/class_grade.py times it, one process against Ray.

The right grade of a hostile submission (forging, leaking, memory-hungry, fork-bombing) is
"fail" or, once the source guard refuses its foreign calls, "refused": never "pass". The
leaking one prints the grader's secrets it can find (WORKBOOK_CLASS_SECRET, MODULAR_AUTH, the
file named by make_class's `secret_file`): none may be there to print.
"""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
WRONG = TESTS / "wrong"
DATA = TESTS / "data"
SOLUTION = (REPO / "solutions/p01/map.mojo").read_text()
HOSTILE_NAME = "=1+1 <img src=x onerror=alert(1)>"
NEVER_PASS = {"fail", "refused"}


def put(folder: Path, pid: str, name: str, data: bytes | str) -> None:
    target = folder / "puzzles" / pid / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)


def make_class(base: Path, secret_file: Path) -> dict[str, dict[str, set[str]]]:
    """The hostile class in `base`; for each submission, the right grades of p01 and p02."""
    expected: dict[str, dict[str, set[str]]] = {}

    def sub(name: str, p01: set[str] | str, p02: set[str] | str = "missing") -> Path:
        folder = base / name
        (folder / "puzzles").mkdir(parents=True)
        expected[name] = {"p01": {p01} if isinstance(p01, str) else p01, "p02": {p02} if isinstance(p02, str) else p02}
        return folder

    for name in ("honest-1", "honest-2"):  # the same bytes: one build between them
        folder = sub(name, "pass", "pass")
        put(folder, "p01", "map.mojo", SOLUTION)
        put(folder, "p02", "zip.mojo", (REPO / "solutions/p02/zip.mojo").read_bytes())
    own = SOLUTION.replace("var i = thread_idx.x", "var i = thread_idx.x  # mine")  # other bytes, as right
    put(sub("honest-3", "pass"), "p01", "map.mojo", own)
    put(sub(HOSTILE_NAME, "pass"), "p01", "map.mojo", SOLUTION)  # a name that is markup and a formula
    for variant in sorted(p.name for p in (WRONG / "p01").iterdir()):
        # fail, or refused where the source guard refuses what it does (unsafe_from_address)
        put(sub(f"wrong-{variant}", NEVER_PASS), "p01", "map.mojo", (WRONG / "p01" / variant / "map.mojo").read_bytes())
    put(sub("compile-error", "fail"), "p01", "map.mojo", SOLUTION.replace("a[i] + 10", "a[i] +"))
    put(sub("forging", NEVER_PASS), "p01", "map.mojo", (DATA / "class/forging.mojo").read_bytes())
    leaking = (DATA / "class/leaking.mojo").read_text().replace("SECRET_FILE", str(secret_file))
    put(sub("leaking", NEVER_PASS), "p01", "map.mojo", leaking)
    put(sub("hanging", "timeout"), "p01", "map.mojo", (DATA / "endless/map.mojo").read_bytes())
    # Where a limit holds them, the fork bomb's retries of a fork and the hoard's reclaim at its
    # cgroup's memory limit (slow on a busy machine) may keep either past its time limit: a
    # timeout is an honest grade for both, as long as neither passes.
    held = NEVER_PASS | {"timeout"}
    put(sub("memory-hungry", held), "p01", "map.mojo", (DATA / "class/hoarding.mojo").read_bytes())
    put(sub("fork-bombing", held), "p01", "map.mojo", (DATA / "class/forkbomb.mojo").read_bytes())
    link = sub("link", "refused")
    (link / "puzzles/p01").mkdir()
    (link / "puzzles/p01/map.mojo").symlink_to(secret_file)
    linked_folder = sub("linked-folder", "refused")
    (base / ".elsewhere").mkdir()  # hidden: not a submission of the class
    put(base / ".elsewhere", "p01", "map.mojo", SOLUTION)
    (linked_folder / "puzzles/p01").symlink_to(base / ".elsewhere/puzzles/p01", target_is_directory=True)
    fifo = sub("fifo", "refused")
    (fifo / "puzzles/p01").mkdir()
    os.mkfifo(fifo / "puzzles/p01/map.mojo")  # reading it would block the grader forever
    sub("missing", "missing")
    put(sub("not-utf8", "refused"), "p01", "map.mojo", SOLUTION.encode() + b"\n# caf\xe9\n")
    put(sub("binary", "refused"), "p01", "map.mojo", SOLUTION.encode() + b"\0")
    put(sub("huge", "refused"), "p01", "map.mojo", SOLUTION + "#" * (2 << 20))
    return expected
