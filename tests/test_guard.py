"""The source guard (workbook/grade/guard.py): in `grade`, submitted code is read before it is compiled.

Every rule refuses a small hostile file and names its line and column; comments and strings
never trip it; every solution, skeleton and wrong kernel of the repository passes it (a false
refusal of honest work is a false FAIL); `grade` refuses a submission that calls into C before
anything of it is compiled, while `run` in a learner's folder still compiles and runs the very
same file."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, WRONG
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from workbook.child import sandbox
from workbook.cli import app as cli
from workbook.compile import build
from workbook.core import exitcodes, i18n
from workbook.course import catalog, manifest, skeleton
from workbook.course.manifest import CatalogError
from workbook.grade import guard

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")

HEAD = "from max.gpu import thread_idx\n# a comment\n"  # two honest lines: each hostile line is line 3

# (what, the hostile line(s) after HEAD, (line, column, rule) the guard must name)
MOJO_HOSTILE = [
    ("import of external_call", "from std.ffi import external_call\n", (3, 21, "ffi")),
    ("external_call through std, no import", 'var x = std.ffi.external_call["getpid", Int32]()\n', (3, 9, "ffi")),
    ("external_call's own name", 'var x = ffi.external_call["getpid", Int32]()\n', (3, 13, "ffi")),
    ("a library loaded", 'var lib = OwnedDLHandle("libc.so.6")\n', (3, 11, "ffi")),
    ("the old DLHandle", 'var lib = DLHandle("libc.so.6")\n', (3, 11, "ffi")),
    ("a C function declared", '@extern("getpid")\ndef pid() abi("C") -> Int32:\n    ...\n', (3, 1, "ffi")),
    ("the C ABI", 'def pid() abi("C") -> Int32:\n    ...\n', (3, 11, "ffi")),
    ("a symbol exported", '@export("puts")\ndef f():\n    pass\n', (3, 1, "export")),
    ("inline assembly", 'from std.sys import inlined_assembly\n', (3, 21, "assembly")),
    ("an LLVM intrinsic", 'var x = llvm_intrinsic["llvm.x", Int32]()\n', (3, 9, "assembly")),
    ("inline MLIR", "var x = __mlir_op.`pop.external_call`()\n", (3, 9, "assembly")),
    ("an MLIR type", "var x: __mlir_type.index\n", (3, 8, "assembly")),
    ("GPU assembly loaded", 'var k = ctx.load_function[f](function_name="k", asm="...")\n', (3, 13, "assembly")),
    ("a compiler builtin", "__get_address_as_lvalue(p) = 5\n", (3, 1, "internals")),
    ("open, from the prelude", 'var f = open("/etc/passwd", "r")\n', (3, 9, "system")),
    ("a file handle", "var f: FileHandle\n", (3, 8, "system")),
    ("the environment", "from std.os import getenv\n", (3, 20, "system")),
    ("the environment through std", 'print(std.os.getenv("HOME"))\n', (3, 7, "system")),
    ("a process", 'from std.subprocess import run\n', (3, 6, "system")),
    ("a process through std", 'std.subprocess.run("ls")\n', (3, 1, "system")),
    ("Python", "from std.python import Python\n", (3, 24, "system")),
    ("paths", "import std.pathlib\n", (3, 8, "system")),
    ("exit", "exit(3)\n", (3, 1, "system")),
    ("assembly written to a path", 'var f = ctx.compile_function[k, dump_asm=Path("/x")]()\n', (3, 33, "system")),
    ("a pointer from a number", "var p = UnsafePointer[Int, MutAnyOrigin](unsafe_from_address=4096)\n",
     (3, 42, "address")),
    ("an unchecked launch", "ctx.enqueue_function_unchecked[k](out, grid_dim=1, block_dim=1)\n", (3, 5, "address")),
    ("a private module", "from std.sys._assembly import foo\n", (3, 6, "private")),
    ("a private name", "from max.gpu.host import _nvidia_cuda\n", (3, 26, "private")),
    ("a private name through an alias", "import std.utils as u\nu._hidden()\n", (4, 1, "private")),
    ("a module no puzzle uses", "import std.time\n", (3, 8, "import")),
    ("MAX's graph in a kernel", "from max.graph import Graph\n", (3, 6, "import")),
    ("std as a whole", "import std\n", (3, 8, "import")),
    ("std bound to a name", "comptime S = std\n", (3, 14, "import")),
    ("std in parentheses", "comptime S = (std)\n", (3, 15, "import")),
    ("std bound after a colon", "if True: comptime S = std; S.subprocess.run('ls')\n", (3, 23, "import")),
    ("what it was bound to", "if True: comptime S = std.utils; S._x()\n", (3, 34, "private")),
    ("std as a parameter", "f[std]()\n", (3, 3, "import")),
    ("a relative import", "from .other import helper\n", (3, 6, "import")),
    ("code in a t-string", 'print(t"{open("/etc/passwd")}")\n', (3, 10, "system")),
    ("a t-string in a t-string", 'print(t"{t"{std.os.getenv("X")}"}")\n', (3, 13, "system")),
    ("names in backticks", '`std`.`os`.`getenv`("HOME")\n', (3, 1, "system")),
    ("an import on several lines", "from std.os import (\n    path,\n    getenv,\n)\n", (5, 5, "system")),
    ("an import after a semicolon", "var x = 1; from std.os import getenv\n", (3, 31, "system")),
    ("an import after a colon", "if True: import std.subprocess\n", (3, 17, "system")),
    ("a continued line", "import std.\\\nos\n", (3, 8, "system")),
    ("std rebound in another function", 'def a():\n    import layout as std\ndef b():\n    std.subprocess.run("ls")\n',
     (6, 5, "system")),
    ("a name after a number's exponent", 'var x = 0x1e-external_call["system", Int32](c)\n', (3, 14, "ffi")),
    ("a qualified decorator", "@std.builtin.export\ndef f():\n    pass\n", (3, 1, "export")),
    ("a string left open", 'print("abc)\nopen()\n', (3, 7, "unreadable")),
    ("a comment in a t-string", 'print(t"""{x # }\n}""")\n', (3, 14, "unreadable")),
    ("a name in backticks left open", "var `x = 1\n", (3, 5, "unreadable")),
]


def refusals(text: str, **kwargs) -> set[tuple[int, int, str]]:
    return {(r.line, r.column, r.rule) for r in guard.check_mojo("k.mojo", text.encode(), **kwargs)}


@pytest.mark.parametrize("what, hostile, expected", MOJO_HOSTILE, ids=[c[0] for c in MOJO_HOSTILE])
def test_every_mojo_rule_refuses_and_names_the_line_and_column(what, hostile, expected):
    found = guard.check_mojo("k.mojo", (HEAD + hostile).encode())
    assert expected in {(r.line, r.column, r.rule) for r in found}, found
    last = HEAD.count("\n") + hostile.count("\n")
    assert all(3 <= r.line <= last for r in found), found  # the honest lines are never refused
    first = found[0].message("p01")
    assert first.key.startswith("guard.refused") and f"p01/k.mojo line {found[0].line}" in first.text("en")


PY_HEAD = "from max.graph import ops\n# a comment\n"
PY_HOSTILE = [
    ("os", "import os\n", (3, 1, "import")),
    ("a function of os", "from os import system\n", (3, 1, "import")),
    ("subprocess, renamed", "import subprocess as sp\n", (3, 1, "import")),
    ("ctypes", "from ctypes import CDLL\n", (3, 1, "import")),
    ("socket", "import socket\n", (3, 1, "import")),
    ("importlib", "import importlib\n", (3, 1, "import")),
    ("a name looked up by a string", "from operator import attrgetter\n", (3, 1, "import")),
    ("builtins", "import builtins\n", (3, 1, "import")),
    ("a relative import", "from . import other\n", (3, 1, "import")),
    ("a private MAX module", "from max import _core\n", (3, 1, "private")),
    ("MAX's server", "from max import serve\n", (3, 1, "import")),
    ("__import__", "m = __import__('os')\n", (3, 5, "dynamic")),
    ("eval", "eval('1 + 1')\n", (3, 1, "dynamic")),
    ("exec", "exec('x = 1')\n", (3, 1, "dynamic")),
    ("getattr", "f = getattr(ops, 'custom')\n", (3, 5, "dynamic")),
    ("open", "open('/etc/passwd').read()\n", (3, 1, "system")),
    ("a Path written", "from pathlib import Path\nPath('x').write_text('y')\n", (4, 11, "system")),
    ("NumPy's files", "import numpy as np\nnp.save('x', 1)\n", (4, 4, "system")),
    ("an array written", "x = ops\nx.tofile('y')\n", (4, 3, "system")),
    ("a NumPy file function imported", "from numpy import fromfile\n", (3, 1, "system")),
    ("the class tree", "().__class__.__bases__[0].__subclasses__()\n", (3, 4, "internals")),
    ("Python that does not parse", "def f(:\n", (3, 7, "unreadable")),
]


@pytest.mark.parametrize("what, hostile, expected", PY_HOSTILE, ids=[c[0] for c in PY_HOSTILE])
def test_every_graph_file_rule_refuses_and_names_the_line_and_column(what, hostile, expected):
    found = guard.check_python("g.py", (PY_HEAD + hostile).encode())
    assert expected in {(r.line, r.column, r.rule) for r in found}, found
    assert all(r.line >= 3 for r in found), found


def test_comments_and_strings_never_trip_it():
    names = " ".join([*guard.DENIED_NAMES, "std.os.getenv", "import std.subprocess", "@export", "__mlir_op"])
    text = f'''{HEAD}# {names}
"""{names}
"""
def f():
    var a = "{names}"  # {names}
    var b = '{names}'
    var c = r"\\" {names}"
    var d = \'\'\'{names}\'\'\'
    var e = t"{{{{open}}}} {{a}} {{{{std.os}}}}"
    var g = "a\\
{names}"
'''
    assert refusals(text) == set()
    python = f"# {names}\nx = '{names}'\ny = '''{names}'''\n"
    assert guard.check_python("g.py", python.encode()) == []


def test_honest_variations_pass():
    """Spellings a learner may write that the puzzles happen not to: aliases, parentheses, a
    variable called std, every kind of number. (This very text compiles with the real compiler.)"""
    text = HEAD + '''import max.gpu
import std.math as m
from std.math import (
    sqrt,  # open()
    exp as e,
)
from std import math
from std.sys import is_gpu, size_of
from std.utils.numerics import nan
comptime M = std.math
def f(std: Float32, input: Float32) -> Float32:
    var x = 1.5e-3 + 0x1F + 1_000 + .5 + m.sqrt(2.0) + M.exp(0.0) + math.sqrt(Float64(std))
    comptime y = max.gpu.WARP_SIZE
    comptime if is_gpu():
        pass
    return std * 2 + input + Float32(size_of[Int32]()) + Float32(x)
'''
    assert refusals(text) == set()


# Routes past the imports that Mojo 1.2 really takes: `std` is bound in every file, a module can
# be bound to a name, @extern declares a C function, @export hands a symbol to the linker, names
# may be written in backticks, a name may follow a number's exponent, t-strings run code. The
# program below is built and run for real.
ROUTES = '''comptime S = std


@extern("getppid")
def c_getppid() abi("C") -> Int32:
    ...


@export("workbook_guard_probe")
def probe() -> Int32:
    return 7


def main() raises:
    var a = std.ffi.external_call["getpid", Int32]()
    var b = S.ffi.external_call["getpid", Int32]()
    var c = c_getppid()
    var d = `std`.`ffi`.`external_call`["getpid", Int32]()
    var e = 0x1e-std.ffi.external_call["getpid", Int32]()
    print(t"{std.os.getenv("WORKBOOK_GUARD_PROBE")}")
    print(a == b and b == d and c > 0 and e < 0 and probe() == 7)
'''


def test_the_routes_it_closes_are_real_and_each_is_refused(tmp_path):
    from workbook.core import toolchain

    found = toolchain.mojo_driver()
    if found is None:
        pytest.skip("no Mojo compiler")
    driver, env = found
    source = tmp_path / "routes.mojo"
    source.write_text(ROUTES)
    built = subprocess.run([str(driver), "build", str(source), "-o", str(tmp_path / "routes")], capture_output=True,
                           text=True, env={**os.environ, **env}, timeout=300)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "routes")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "WORKBOOK_GUARD_PROBE": "probed"})
    assert ran.stdout.split() == ["probed", "True"], ran
    lines = {r.line for r in guard.check_mojo("routes.mojo", ROUTES.encode())}
    assert lines == {1, 4, 5, 9, 15, 16, 18, 19, 20}  # each line that takes a route (17 calls the one of 4-5)


def test_an_op_puzzle_checks_its_graph_file_and_its_mojo_alike():
    p18 = catalog.load("p18", REPO)
    mojo = (p18.solution_dir / "op/softmax.mojo").read_bytes()
    files = {"op/softmax.mojo": mojo, "softmax_graph.py": b"from max.graph import ops\nimport os\n"}
    (refused,) = guard.check(p18, files)
    assert (refused.file, refused.line, refused.rule, refused.text) == ("softmax_graph.py", 2, "import", "os")
    assert "p18/softmax_graph.py line 2: `os`" in refused.message("p18").text("en")
    files = {"op/softmax.mojo": mojo + b"\ndef f():\n    _ = open('x')\n", "softmax_graph.py": b"x = 1\n"}
    assert [(r.file, r.rule) for r in guard.check(p18, files)] == [("op/softmax.mojo", "system")]


def learner_texts(puzzle: manifest.Puzzle, name: str) -> dict[str, bytes]:
    """What a learner's file can be: the solution, the skeleton in the repository, the skeleton
    and the revealed solution in each language."""
    solution = (puzzle.solution_dir / name).read_text(encoding="utf-8")
    texts = {"solution": solution, "repository skeleton": (puzzle.dir / name).read_text(encoding="utf-8")}
    for lang in i18n.LANGUAGES:
        texts[f"skeleton ({lang})"] = skeleton.derive_skeleton(solution, lang)
        texts[f"solution ({lang})"] = skeleton.clean_solution(solution, lang)
    return {k: v.encode() for k, v in texts.items()}


@pytest.mark.parametrize("pid", catalog.puzzle_ids(REPO))
def test_every_solution_and_skeleton_passes(pid):
    puzzle = catalog.load(pid, REPO)
    for name in puzzle.edit:
        for what, data in learner_texts(puzzle, name).items():
            assert guard.check(puzzle, {name: data}) == [], f"{pid}/{name}, {what}"


def wrong_kernels() -> list[tuple[str, Path]]:
    return sorted((folder.parent.name, folder) for folder in WRONG.glob("p*/*") if (folder / "wrong.toml").is_file())


def test_every_wrong_kernel_passes():
    """None of tests/wrong/ is hostile: each is honest work that computes the wrong thing, and a
    refusal would fail it for the wrong reason."""
    checked = 0
    for pid, folder in wrong_kernels():
        puzzle = catalog.load(pid, REPO)
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
                 if p.is_file() and p.name != "wrong.toml"}
        assert set(files) <= set(puzzle.edit), folder
        refused = guard.check(puzzle, files)
        if '"wild_write"' in (folder / "wrong.toml").read_text():
            # An attack on the simulator's own memory (its store guard's test): grade refuses it first.
            assert refused, folder
        else:
            assert refused == [], folder
        checked += 1
    assert checked > 300


def test_a_manifest_allows_only_what_its_solution_needs():
    """[grade] allow is per puzzle, and each name in it is one its solution would be refused for."""
    allowing = [p for p in catalog.all_puzzles(REPO) if p.grade_allow]
    assert [p.id for p in allowing] == ["p36"]
    for puzzle in allowing:
        files = {n: (puzzle.solution_dir / n).read_bytes() for n in puzzle.edit}
        refused = {r.text for r in guard.check(dataclasses.replace(puzzle, grade_allow=()), files)}
        assert set(puzzle.grade_allow) <= refused
    # ...and nowhere else: p36's builtin in p01's file is refused.
    p01 = catalog.load("p01", REPO)
    text = (REPO / "solutions/p01/map.mojo").read_text() + "\n@__llvm_arg_metadata(a, `nvvm.grid_constant`)\n"
    assert [r.rule for r in guard.check(p01, {"map.mojo": text.encode()})] == ["internals"]


def test_a_manifest_may_add_a_module(root):
    manifest = root / "puzzles/p01/puzzle.toml"
    original = manifest.read_text()

    def with_grade(table: str) -> str:
        return original.replace("\n[[parts]]", "\n" + table + "\n[[parts]]", 1)

    text = "from std.time import perf_counter_ns\n"
    assert [r.rule for r in guard.check(catalog.load("p01", root), {"map.mojo": text.encode()})] == ["import"]
    manifest.write_text(with_grade('[grade]\nimports = ["std.time"]\n'))
    assert guard.check(catalog.load("p01", root), {"map.mojo": text.encode()}) == []
    for bad in (with_grade('[grade]\nimports = ["std time"]\n'), with_grade("[grade]\nallow = [3]\n"),
                with_grade("[grade]\nexports = []\n"), "grade = 1\n" + original):
        manifest.write_text(bad)
        with pytest.raises(CatalogError) as refused:
            catalog.load("p01", root)
        assert "grade" in str(refused.value)


def test_every_rule_speaks_both_languages_in_80_columns():
    for lang in i18n.LANGUAGES:
        keys = i18n.catalog(lang)
        for rule in guard.RULES:
            assert f"guard.rule.{rule}" in keys
        for what in ("string", "name", "template_comment", "template_open", "import", "utf8", "python"):
            assert f"guard.unreadable.{what}" in keys
    refusal = guard.Refusal("op/layernorm_linear.mojo", 123, 9, "address", "enqueue_function_unchecked")
    for lang in i18n.LANGUAGES:
        console = Console(width=80, record=True, force_terminal=False)
        console.print(Text("  " + refusal.message("p22").text(lang)))
        lines = console.export_text().splitlines()
        assert len(lines) > 1 and max(cell_len(line) for line in lines) <= 80
        assert "p22/op/layernorm_linear.mojo" in lines[0] and "123" in lines[0]


# ---------------------------------------------------------------------------
# grade refuses, run compiles
# ---------------------------------------------------------------------------

# p01 done right, which also asks C for its process id on the host (discarded): honest in a
# learner's own run, refused in graded work.
P01_WITH_FFI = '''from max.gpu import thread_idx
from layout import TileTensor
from layout.tile_layout import row_major
from std.ffi import external_call
from std.sys import is_gpu

comptime dtype = DType.float32
comptime Vector[n: Int] = type_of(row_major[n]())


def add_ten[size: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size], ImmutAnyOrigin],
):
    var i = thread_idx.x
    output[i] = a[i] + 10
    comptime if not is_gpu():
        _ = external_call["getpid", Int32]()
'''


def invoke(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    return exited.value.code, out, err


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """Every puzzle whose sources were laid out for a compile (build.sources), in order."""
    seen: list[str] = []
    real = build.sources

    def spy(puzzle, *args, **kwargs):
        seen.append(puzzle.id)
        return real(puzzle, *args, **kwargs)

    monkeypatch.setattr(build, "sources", spy)
    return seen


@needs_bwrap
def test_grade_refuses_a_kernel_that_calls_into_c_before_compiling_it(root, capsys, tmp_path, compiles):
    from test_grade import HOSTILE_KERNEL  # issue 17's kernel: system() from thread 0

    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / "PWNED"
    sub = tmp_path / "hostile"
    (sub / "puzzles/p01").mkdir(parents=True)
    (sub / "puzzles/p01/map.mojo").write_text(HOSTILE_KERNEL.replace("MARKER", str(marker)).replace("SLEEP", "1"))
    (sub / "puzzles/p02").mkdir()
    (sub / "puzzles/p02/zip.mojo").write_text(P01_WITH_FFI.replace("add_ten", "add"))  # another puzzle, refused too
    started = time.monotonic()
    code, out, err = invoke(capsys, "grade", str(sub), "--json", "-p", "p01", "-p", "p02")
    seconds = time.monotonic() - started
    assert code == exitcodes.FAILED, err
    (doc,) = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert doc["guard"] is True
    assert {p["id"]: p["status"] for p in doc["puzzles"]} == {"p01": "fail", "p02": "fail"}
    p01 = doc["puzzles"][0]
    assert p01["files"] == {"map.mojo": "refused"}
    assert [(r["line"], r["column"], r["rule"], r["text"]) for r in p01["refusals"]] == [
        (5, 21, "ffi", "external_call"), (21, 37, "ffi", "external_call")]
    assert p01["problem"]["key"] == "guard.refused"
    assert p01["problem"]["text"].startswith("p01/map.mojo line 5: `external_call` (calls into C")
    assert doc["puzzles"][1]["refusals"][0]["line"] == 4
    assert all(p["parts"] == [] for p in doc["puzzles"])  # no stage of either puzzle ran...
    assert compiles == [] and seconds < 30  # ...nor were their sources laid out for a compile
    assert not marker.exists()

    # The table names each refusal under it, in 80 columns.
    code, out, err = invoke(capsys, "grade", str(sub), "-p", "p01")
    assert code == exitcodes.FAILED
    assert "p01/map.mojo line 21: `external_call` (calls into C or loads a library) is not allowed" in " ".join(
        out.split())
    assert max(cell_len(line) for line in out.splitlines()) <= 80


def test_run_in_a_learners_folder_compiles_the_same_file(root, capsys, compiles):
    """Learners keep their freedom: the guard is grade's alone."""
    (root / "puzzles/p01/map.mojo").write_text(P01_WITH_FFI)
    code, out, err = invoke(capsys, "run", "p01", "--json", "--device", "sim", "--quick", "--no-cache")
    doc = json.loads(out)
    assert code == exitcodes.OK, err
    assert doc["status"] == "pass" and compiles == ["p01"]
