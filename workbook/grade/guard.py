"""The source guard: in `workbook grade`, submitted code is read before it is compiled.

Graded kernel platforms check a submission against rules before they build it;
so does `grade`. Only the learner's files of a puzzle (the manifest's `edit`)
are checked; the workbook's own harness is trusted. A file that breaks a rule
fails its puzzle with a message that names the file, the line and the
construct, and nothing of that puzzle is compiled or run. Learners' own runs
(`run`, `check`, `watch`) never call this: they keep every construct.

The guard is one wall among several (the sandbox, the verdict channel, the
simulator's store checks, the limits), not the only one: what it refuses is
what no puzzle needs and what would let compiled code reach past the others.

Mojo is tokenised first (`_Scanner`): comments, and string literals of every
form Mojo 1.2 reads ('...', "...", triple-quoted, r-raw), are skipped, so a
comment or a string that mentions `open` is never refused; t-strings
(`t"{expr}"`) interpolate code, so what is between their braces is scanned as
code. A `name` in backticks is that name. What the scanner cannot read (a
string left open, a comment inside a t-string's braces) is refused rather than
guessed at: the compiler and the guard must see the same code.

The rules, each with why (checked against Mojo 1.2.0's compiler on this
project's machines; its stdlib ships compiled, so its names were looked up in
Modular's published stdlib sources and each route below was compiled for real):

- imports: `import X`, `import X as Y`, `from X import a, b` (parenthesised,
  on several lines) must name a module the puzzles use (ALLOWED_MODULES, and
  a module's submodules), plus a puzzle's own `[grade] imports` in its
  manifest. Relative imports and private names (`_x`) are refused: no puzzle
  uses them. Found by reading every skeleton, solution and wrong kernel.
- `std` needs no import in Mojo 1.2 (`std.ffi.external_call[...]()` compiles
  in a file without imports), and a module can be bound to a name
  (`comptime S = std`): every dotted use of a module (std, or a name an import
  or such a `comptime` binds) must stay inside an allowed module, and `std`
  itself may not be bound to a name or passed as a parameter.
- denied everywhere, whatever was imported (DENIED_NAMES):
  calls into C: `external_call` (std.ffi), `DLHandle`, `OwnedDLHandle`,
  `_get_global`, `_get_global_or_null`, `_get_dylib_function`, and the
  `@extern("symbol")` decorator with an `abi("C")` effect, which declares a C
  function without any import;
  symbols for the linker: `@export` (an exported `puts` or `__tsan_write4`
  would replace the libc's or the simulator's own for the whole launcher);
  inline assembly and MLIR: `inlined_assembly`, `llvm_intrinsic`, every
  `__mlir_*` name (`__mlir_op`, `__mlir_type`, `__mlir_attr`) and every other
  compiler builtin spelled `__name` (`__get_address_as_lvalue`...), and a
  DeviceContext's `load_function(asm=...)` / `DeviceExternalFunction`, which
  load raw GPU assembly;
  files, processes, the environment: `open`, `FileHandle`, `FileDescriptor`
  (all three in the prelude, no import needed), `getenv`, `setenv`,
  `unsetenv`, `exit` (std.sys, whose `is_gpu` and `size_of` kernels use),
  `Python`, `PythonObject`, a kernel compile's `dump_asm=` / `dump_llvm=`
  (which write the assembly to a path), and the modules std.os,
  std.subprocess, std.pathlib, std.tempfile, std.io, std.python, std.runtime;
  raw addresses: `unsafe_from_address` (a pointer made from a number),
  `enqueue_function_unchecked` / `compile_function_unchecked` (a launch whose
  arguments are not checked against the kernel's types).
  A construct a puzzle's own solution needs is allowed for that puzzle only,
  by its manifest's `[grade] allow` (p36: `__llvm_arg_metadata`).

Every route past the imports named above (std without an import, a module
bound by `comptime`, backticks, `@extern`/`@export`, a name right after a
number's exponent `0x1e-external_call[...]()`, code in a t-string) is built
and run with the real compiler in tests/test_guard.py before the guard is
shown to refuse it.

What the guard does not stop: pointer arithmetic from a pointer the code was
given reaches any address without making one from a number (the simulator's
store checks and the sandbox are the walls there), and compile-time code still
runs in the compiler, outside the sandbox, though now without FFI, files or
processes: it can only spend time, up to the compile limit.

Python graph files (p17, p18) run in the sandbox and only hand over graph text
the grader checks, so the guard is not the barrier there; still, what a graph
never needs is refused, read with Python's own `ast`: imports outside
PY_ALLOWED_MODULES (os, sys, subprocess, ctypes, socket, importlib...), the
builtins that run or reach code by name (`eval`, `exec`, `compile`,
`__import__`, `getattr`...), file access (`open`, a Path's `read_text`...),
NumPy's file functions, and dunder attributes (`x.__class__.__subclasses__`).
Python offers more ways round an AST check than a list can close (that is why
the graph's text, not the file, is what the grader trusts): these rules only
keep the plain ones out of graded work.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import asdict, dataclass

from ..core.i18n import Msg, msg
from ..course.manifest import Puzzle

# ---------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------

# What a rule is about, as the message says it (guard.rule.<rule> in the locales).
RULES = ("import", "ffi", "export", "assembly", "internals", "system", "address", "private", "dynamic",
         "unreadable")

# Modules graded Mojo may import: each with the modules below it. Derived from every skeleton,
# solution and wrong kernel in puzzles/, solutions/ and tests/wrong/ (test_guard checks they all
# pass), plus what a kernel may reasonably reach for that those happen not to use.
ALLOWED_MODULES = {
    "max.gpu": "thread ids, barriers, shared memory, warps, clusters, tensor cores, DeviceContext",
    "max.algorithm": "elementwise (p23)",
    "layout": "TileTensor, LayoutTensor, layouts, TMA tiles, TensorCore",
    "extensibility": "custom ops (p17-p22, p27)",
    "std.math": "exp, sqrt, ceildiv...",
    "std.bit": "pop_count, log2_ceil...",
    "std.utils": "numerics (nan, inf), Index, coord",
    "std.algorithm": "vectorize (p23)",
    "std.atomic": "Atomic (p22)",
    "std.memory": "pointers, stack_allocation, memcpy, bitcast",
    "std.sys": "is_gpu, size_of, simd_width_of (its exit, llvm_intrinsic and private modules are refused by name)",
    "std.random": "random values on the host",
    "std.collections": "InlineArray, List (in the prelude already)",
    "std.complex": "complex numbers",
}
# Modules refused with the reason they are refused (any other module: "import").
DENIED_MODULES = {
    "std.ffi": "ffi",
    "std.os": "system", "std.subprocess": "system", "std.pathlib": "system",
    "std.tempfile": "system", "std.io": "system", "std.python": "system", "std.runtime": "system",
}
# Names refused wherever they appear (a call, a type, an attribute, a keyword argument).
DENIED_NAMES = {
    "external_call": "ffi", "DLHandle": "ffi", "OwnedDLHandle": "ffi", "_get_global": "ffi",
    "_get_global_or_null": "ffi", "_get_dylib_function": "ffi", "_external_call_const": "ffi", "abi": "ffi",
    "inlined_assembly": "assembly", "llvm_intrinsic": "assembly", "load_function": "assembly",
    "DeviceExternalFunction": "assembly",
    "open": "system", "FileHandle": "system", "FileDescriptor": "system", "getenv": "system", "setenv": "system",
    "unsetenv": "system", "exit": "system", "Python": "system", "PythonObject": "system", "dump_asm": "system",
    "dump_llvm": "system",
    "unsafe_from_address": "address", "enqueue_function_unchecked": "address",
    "compile_function_unchecked": "address",
}
# Decorators refused: they hand a symbol to the linker, or declare one from outside.
DENIED_DECORATORS = {"export": "export", "extern": "ffi"}

# Python graph files (op puzzles): modules a graph may import, each with those below it. The
# graph files import pathlib, MAX and NumPy; __future__, math and typing are for annotations and
# sizes. Nothing that reaches code by a name (operator.attrgetter, importlib) is here.
PY_ALLOWED_MODULES = ("max.driver", "max.dtype", "max.engine", "max.graph", "numpy", "pathlib", "__future__",
                      "math", "typing")
PY_DENIED_NAMES = {
    "eval": "dynamic", "exec": "dynamic", "compile": "dynamic", "__import__": "dynamic", "getattr": "dynamic",
    "setattr": "dynamic", "delattr": "dynamic", "globals": "dynamic", "locals": "dynamic", "vars": "dynamic",
    "__builtins__": "dynamic", "get_type_hints": "dynamic", "ForwardRef": "dynamic",
    "open": "system", "input": "system", "breakpoint": "system", "exit": "system", "quit": "system",
}
# Attributes refused on anything: a file's contents, in or out (Path, arrays).
PY_DENIED_ATTRIBUTES = {name: "system" for name in (
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmdir", "mkdir", "rename",
    "symlink_to", "hardlink_to", "touch", "chmod", "iterdir", "glob", "rglob", "tofile")}
# NumPy's own file functions, however numpy was imported.
PY_DENIED_NUMPY = {"load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
                   "fromregex", "memmap", "ctypeslib", "lib", "DataSource", "f2py", "distutils", "testing"}
PY_DUNDERS_ALLOWED = {"__init__"}


@dataclass(frozen=True)
class Refusal:
    """One construct the guard refuses: where, which rule, and the text it refused."""

    file: str  # relative to the puzzle folder, as the manifest's `edit` names it
    line: int
    column: int
    rule: str  # one of RULES
    text: str  # the offending construct, as written (a name, a module); for "unreadable", what was not read

    def message(self, puzzle_id: str, listed: bool = False) -> Msg:
        """The refusal as a sentence that stands alone (the puzzle's problem), or `listed`: one
        line of several, which guard.nothing_compiled follows once."""
        where = f"{puzzle_id}/{self.file}"
        tail = "_line" if listed else ""
        if self.rule == "unreadable":  # `text` says what could not be read: guard.unreadable.<text>
            return msg(f"guard.refused_unreadable{tail}", file=where, line=self.line,
                       what=msg(f"guard.unreadable.{self.text}"))
        return msg(f"guard.refused{tail}", file=where, line=self.line, text=_shorten(self.text),
                   what=msg(f"guard.rule.{self.rule}"))

    def to_dict(self) -> dict:
        return asdict(self)


def _shorten(text: str, most: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[:most - 1] + "…"


def check(puzzle: Puzzle, files: dict[str, bytes]) -> list[Refusal]:
    """Every refusal in the learner's files of `puzzle` (name relative to its folder -> bytes), in
    file and line order. Files that are not Mojo or Python are not the guard's to read."""
    allow, imports = set(puzzle.grade_allow), puzzle.grade_imports
    found: list[Refusal] = []
    for name in sorted(files):
        data = files[name]
        if name.endswith(".mojo"):
            found += check_mojo(name, data, allow=allow, imports=imports)
        elif name.endswith(".py"):
            found += check_python(name, data, allow=allow, imports=imports)
    return found


def _within(path: str, modules) -> str | None:
    """The entry of `modules` that `path` is (or lies below), or None."""
    for module in modules:
        if path == module or path.startswith(module + "."):
            return module
    return None


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__") and len(part) > 4)


# ---------------------------------------------------------------------------
# Reading Mojo: tokens
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: str  # "name", "op", "number", "newline"
    text: str
    pos: int
    quoted: bool = False  # a `backticked` name: a name, never a keyword


class Unreadable(Exception):
    """Source the scanner cannot read as the compiler would: refused, never guessed at.
    `what`: string, name, template_comment, template_open (guard.unreadable.<what>)."""

    def __init__(self, pos: int, what: str):
        super().__init__(what)
        self.pos = pos
        self.what = what


_NAME_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | set("0123456789")
_STRING_PREFIXES = {"r", "t", "rt", "tr"}  # case-insensitive; b"" and f"" do not exist in Mojo 1.2
_OPEN, _CLOSE = "([{", ")]}"
# 0x1F, 0o17, 0b1, 1_000, 1.5, .5, 1.5e-3: an exponent's sign is followed by digits only, so
# `0x1e-external_call[...]()` is a number, a minus and a name.
_NUMBER = re.compile(r"0[xX][0-9a-fA-F_]*|0[oO][0-7_]*|0[bB][01_]*"
                     r"|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?")


class _Scanner:
    """Mojo source -> tokens, with what t-strings interpolate inlined as code."""

    def __init__(self, text: str):
        self.src = text
        self.n = len(text)

    def tokens(self) -> list[Token]:
        found, _ = self._code(0, in_template=False)
        return found

    def _code(self, pos: int, in_template: bool) -> tuple[list[Token], int]:
        src, n = self.src, self.n
        out: list[Token] = []
        depth: list[str] = []
        while pos < n:
            c = src[pos]
            if c in " \t\f\v":
                pos += 1
            elif c == "\\" and src.startswith(("\\\n", "\\\r"), pos):
                pos += 2 + src.startswith("\\\r\n", pos)
            elif c in "\r\n" or (c == ";" and not depth):
                if not depth and not in_template and (not out or out[-1].kind != "newline"):
                    out.append(Token("newline", c, pos))
                pos += 1
            elif c == "#":
                if in_template:
                    raise Unreadable(pos, "template_comment")
                end = src.find("\n", pos)
                pos = n if end < 0 else end
            elif c in "'\"":
                out += self._string(pos, "")
                pos = self._after_string
            elif c in _NAME_START:
                end = pos
                while end < n and src[end] in _NAME_CHARS:
                    end += 1
                word = src[pos:end]
                if word.lower() in _STRING_PREFIXES and end < n and src[end] in "'\"":
                    out += self._string(end, word.lower())
                    pos = self._after_string
                else:
                    out.append(Token("name", word, pos))
                    pos = end
            elif c == "`":
                end = src.find("`", pos + 1)
                if end < 0 or "\n" in src[pos:end]:
                    raise Unreadable(pos, "name")
                out.append(Token("name", src[pos + 1:end], pos, quoted=True))
                pos = end + 1
            elif c.isdigit() or (c == "." and pos + 1 < n and src[pos + 1].isdigit()):
                end = _NUMBER.match(src, pos).end()  # only the number: a name after it is a name
                out.append(Token("number", src[pos:end], pos))
                pos = end
            else:
                if c in _OPEN:
                    depth.append(c)
                elif c in _CLOSE:
                    if not depth and in_template and c == "}":
                        return out, pos + 1
                    if depth:
                        depth.pop()
                out.append(Token("op", c, pos))
                pos += 1
        if in_template:
            raise Unreadable(pos, "template_open")
        return out, pos

    def _string(self, pos: int, prefix: str) -> list[Token]:
        """Skip the string at `pos` (its quote); return the tokens of what it interpolates."""
        src, n = self.src, self.n
        quote = src[pos]
        delim = quote * 3 if src.startswith(quote * 3, pos) else quote
        start = pos
        pos += len(delim)
        template = "t" in prefix
        inner: list[Token] = []
        while True:
            if pos >= n:
                raise Unreadable(start, "string")
            c = src[pos]
            if src.startswith(delim, pos):
                self._after_string = pos + len(delim)
                return inner
            if c == "\\":
                # An escaped quote never ends the string (raw or not); an escaped brace is still
                # read as the start of code: the guard reads more as code, never less.
                pos += 1 if (pos + 1 < n and src[pos + 1] in "{}") else 2
            elif c == "\n" and len(delim) == 1:
                raise Unreadable(start, "string")
            elif template and c == "{":
                if src.startswith("{{", pos):
                    pos += 2
                else:
                    found, pos = self._code(pos + 1, in_template=True)
                    inner += found
            elif template and src.startswith("}}", pos):
                pos += 2
            else:
                pos += 1


# ---------------------------------------------------------------------------
# Checking Mojo
# ---------------------------------------------------------------------------


def _comptimes(tokens: list[Token]) -> list[int]:
    """Where the keyword `comptime` is in a statement."""
    return [k for k, t in enumerate(tokens) if t.kind == "name" and t.text == "comptime" and not t.quoted]


class _MojoCheck:
    def __init__(self, name: str, text: str, allow: set[str], imports: tuple[str, ...]):
        self.name = name
        self.text = text
        self.allow = allow
        self.allowed = (*ALLOWED_MODULES, *imports)
        self.lines = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.found: dict[tuple[int, int, str], Refusal] = {}
        # A name bound to a module (or to something in one): name -> its dotted path.
        self.roots: dict[str, set[str]] = {"std": {"std"}}

    def where(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.lines, pos)
        return line, pos - self.lines[line - 1] + 1

    def refuse(self, pos: int, rule: str, text: str) -> None:
        line, column = self.where(pos)
        self.found.setdefault((line, column, rule), Refusal(self.name, line, column, rule, text))

    def module_rule(self, path: str) -> str | None:
        """Why a module may not be used, or None when it may."""
        parts = path.split(".")
        if any(_private(p) for p in parts):
            return "private"
        if _within(path, self.allowed):
            return None
        denied = _within(path, DENIED_MODULES)
        return DENIED_MODULES[denied] if denied else "import"

    def run(self) -> list[Refusal]:
        try:
            tokens = _Scanner(self.text).tokens()
        except Unreadable as exc:
            self.refuse(exc.pos, "unreadable", exc.what)
            return self.result()
        statements = self.statements(tokens)
        for statement in statements:
            self.imports(statement)
        self.aliases(statements)
        for statement in statements:
            self.uses(statement)
        self.names(tokens)
        return self.result()

    def result(self) -> list[Refusal]:
        return sorted(self.found.values(), key=lambda r: (r.line, r.column, r.rule))

    @staticmethod
    def statements(tokens: list[Token]) -> list[list[Token]]:
        out: list[list[Token]] = [[]]
        for token in tokens:
            if token.kind == "newline":
                out.append([])
            else:
                out[-1].append(token)
        return [s for s in out if s]

    # -- imports ----------------------------------------------------------

    def imports(self, tokens: list[Token]) -> None:
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.kind == "name" and not token.quoted and token.text in ("from", "import"):
                i = self.import_statement(tokens, i)
            else:
                i += 1

    def import_statement(self, tokens: list[Token], i: int) -> int:
        """Read the import at tokens[i] (its `from` or `import`); the index after it."""
        start = tokens[i]
        if start.text == "from":
            j = i + 1
            while j < len(tokens) and tokens[j].kind == "op" and tokens[j].text == ".":
                j += 1
            if j > i + 1:  # relative: no puzzle's file imports another
                self.refuse(tokens[i + 1].pos, "import", "".join(t.text for t in tokens[i + 1:j + 1]))
                return len(tokens)
            module, j = self.dotted(tokens, j)
            if not module or j >= len(tokens) or tokens[j].text != "import" or tokens[j].quoted:
                self.refuse(start.pos, "unreadable", "import")
                return len(tokens)
            where = tokens[i + 1].pos
            rule = self.module_rule(module)
            names, j = self.names_list(tokens, j + 1)
            if names is None:
                self.refuse(start.pos, "unreadable", "import")
                return len(tokens)
            # `from std import math` is std.math: a module above allowed ones is judged by each name.
            parent = rule == "import" and any(m.startswith(module + ".") for m in self.allowed)
            for name, alias, pos in names:
                named = self.name_rule(name)
                full = f"{module}.{name}"
                if named:
                    self.refuse(pos, named, name)
                elif _private(name):
                    self.refuse(pos, "private", full)
                elif rule is None:
                    self.bind(alias or name, full)
                elif not parent or name == "*":
                    self.refuse(where, rule, module)
                elif self.module_rule(full) is None:
                    self.bind(alias or name, full)
                else:
                    self.refuse(pos, self.module_rule(full) or rule, full)
            return j
        j = i + 1  # import a.b [as c], d
        while True:
            where = tokens[j].pos if j < len(tokens) else start.pos
            module, j = self.dotted(tokens, j)
            if not module:
                self.refuse(start.pos, "unreadable", "import")
                return len(tokens)
            alias = None
            if j + 1 < len(tokens) and tokens[j].text == "as" and tokens[j + 1].kind == "name":
                alias = tokens[j + 1].text
                j += 2
            rule = self.module_rule(module)
            if rule:
                self.refuse(where, rule, module)
            elif alias:
                self.bind(alias, module)
            else:  # `import max.gpu` binds `max`: its uses are checked as dotted paths
                self.bind(module.split(".")[0], module.split(".")[0])
            if j < len(tokens) and tokens[j].text == ",":
                j += 1
                continue
            return j

    @staticmethod
    def dotted(tokens: list[Token], j: int) -> tuple[str, int]:
        parts: list[str] = []
        while j < len(tokens) and tokens[j].kind == "name":
            parts.append(tokens[j].text)
            j += 1
            if j < len(tokens) and tokens[j].text == "." and tokens[j].kind == "op":
                j += 1
            else:
                break
        return ".".join(parts), j

    @staticmethod
    def names_list(tokens: list[Token], j: int):
        """`a, b as c` or `(a,\\n b)` or `*` -> ([(name, alias, pos)], the index after), or (None, j)."""
        found: list[tuple[str, str | None, int]] = []
        parens = j < len(tokens) and tokens[j].kind == "op" and tokens[j].text == "("
        j += parens
        while True:
            if parens and j < len(tokens) and tokens[j].text == ")":
                return (found or None), j + 1
            if j >= len(tokens):
                return (None if parens or not found else found), j
            token = tokens[j]
            if token.kind == "op" and token.text == "*":
                found.append(("*", None, token.pos))
                j += 1
            elif token.kind == "name":
                if j + 1 < len(tokens) and tokens[j + 1].text == "as" and not tokens[j + 1].quoted:
                    if j + 2 >= len(tokens) or tokens[j + 2].kind != "name":
                        return None, j
                    found.append((token.text, tokens[j + 2].text, token.pos))
                    j += 3
                else:
                    found.append((token.text, None, token.pos))
                    j += 1
            else:
                return None, j
            if j < len(tokens) and tokens[j].text == ",":
                j += 1
            elif not parens:
                return found, j

    # -- uses of modules --------------------------------------------------

    def aliases(self, statements: list[list[Token]]) -> None:
        """`comptime NAME = <a module or something in one>` binds NAME like an import."""
        changed = True
        while changed:
            changed = False
            for tokens in statements:
                for k in _comptimes(tokens):  # `comptime` may follow `if x:` on its line
                    if k + 3 >= len(tokens) or tokens[k + 1].kind != "name" or tokens[k + 2].text != "=":
                        continue
                    j = k + 3
                    while j < len(tokens) and tokens[j].text == "(":
                        j += 1
                    if j < len(tokens) and tokens[j].kind == "name" and tokens[j].text in self.roots:
                        paths, end = self.chain(tokens, j)
                        if end < len(tokens) and tokens[end].text in ("(", "["):
                            continue  # a value made from it (`max(1, 2)`), not the module
                        for path in paths:
                            changed |= self.bind(tokens[k + 1].text, path)

    def bind(self, name: str, path: str) -> bool:
        """`name` may stand for `path` (a module, or something in one); whether that is new.
        A name keeps every binding it is given anywhere in the file: where each one holds is the
        compiler's to know (scopes), so every use is checked against all of them."""
        bound = self.roots.setdefault(name, set())
        if path in bound:
            return False
        bound.add(path)
        return True

    def chain(self, tokens: list[Token], j: int) -> tuple[list[str], int]:
        """The dotted paths that tokens[j:] may spell, from a root (one per binding of it); the
        index after them."""
        rest: list[str] = []
        start = j
        j += 1
        while j + 1 < len(tokens) and tokens[j].text == "." and tokens[j].kind == "op" \
                and tokens[j + 1].kind == "name":
            rest.append(tokens[j + 1].text)
            j += 2
        return sorted(".".join([base, *rest]) for base in self.roots[tokens[start].text]), j

    def uses(self, tokens: list[Token]) -> None:
        if tokens[0].kind == "name" and not tokens[0].quoted and tokens[0].text in ("from", "import"):
            return
        comptimes = _comptimes(tokens)
        brackets: list[str] = []
        j = 0
        while j < len(tokens):
            token = tokens[j]
            compile_time = bool(comptimes) and comptimes[0] < j
            if token.kind == "op":
                if token.text in _OPEN:
                    brackets.append(token.text)
                elif token.text in _CLOSE and brackets:
                    brackets.pop()
                j += 1
                continue
            after_dot = j > 0 and tokens[j - 1].text == "." and tokens[j - 1].kind == "op"
            defined = j - 1 in comptimes  # the name `comptime NAME = ...` defines
            if token.kind != "name" or after_dot or defined or token.text not in self.roots:
                j += 1
                continue
            paths, end = self.chain(tokens, j)
            bare = end == j + 1
            called = end < len(tokens) and tokens[end].text in ("(", "[")
            if bare and (called or not (compile_time or "[" in brackets)):
                j = end  # a variable, or the builtin `max`: a module is never a runtime value
                continue
            for path in paths:
                if any(_private(part) for part in path.split(".")):
                    self.refuse(token.pos, "private", path)
                    break
                if not _within(path, self.allowed):
                    denied = _within(path, DENIED_MODULES)
                    self.refuse(token.pos, DENIED_MODULES[denied] if denied else "import", path)
                    break
            j = end

    # -- names ------------------------------------------------------------

    def name_rule(self, name: str) -> str | None:
        if name in self.allow:
            return None
        if name in DENIED_NAMES:
            return DENIED_NAMES[name]
        if name.startswith("__mlir"):
            return "assembly"
        if name.startswith("__") and not name.endswith("__"):
            return "internals"
        return None

    def names(self, tokens: list[Token]) -> None:
        for i, token in enumerate(tokens):
            if token.kind != "name":
                continue
            rule = self.name_rule(token.text)
            if rule:
                self.refuse(token.pos, rule, token.text)
            if i > 0 and tokens[i - 1].text == "@" and tokens[i - 1].kind == "op":
                k = i  # every name of `@a.b.c`
                while True:
                    name = tokens[k].text
                    if name in DENIED_DECORATORS and name not in self.allow:
                        self.refuse(tokens[i - 1].pos, DENIED_DECORATORS[name], "@" + name)
                        break
                    if k + 2 < len(tokens) and tokens[k + 1].text == "." and tokens[k + 2].kind == "name":
                        k += 2
                    else:
                        break


def check_mojo(name: str, data: bytes, *, allow: set[str] | frozenset = frozenset(),
               imports: tuple[str, ...] = ()) -> list[Refusal]:
    """The refusals in one Mojo file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Refusal(name, data[:exc.start].count(b"\n") + 1, 1, "unreadable", "utf8")]
    return _MojoCheck(name, text.removeprefix("\ufeff"), set(allow), imports).run()


# ---------------------------------------------------------------------------
# Checking Python graph files
# ---------------------------------------------------------------------------


class _PythonCheck(ast.NodeVisitor):
    def __init__(self, name: str, allow: set[str], imports: tuple[str, ...]):
        self.name = name
        self.allow = allow
        self.allowed = (*PY_ALLOWED_MODULES, *imports)
        self.found: list[Refusal] = []
        self.numpy: set[str] = set()  # names bound to numpy

    def refuse(self, node: ast.AST, rule: str, text: str) -> None:
        line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
        if isinstance(node, ast.Attribute) and node.end_lineno and node.end_col_offset is not None:
            line, column = node.end_lineno, node.end_col_offset - len(node.attr) + 1  # the attribute's own name
        self.found.append(Refusal(self.name, line, column, rule, text))

    def module(self, node: ast.AST, path: str) -> bool:
        if any(_private(p) for p in path.split(".")):
            self.refuse(node, "private", path)
            return False
        if not _within(path, self.allowed):
            self.refuse(node, "import", path)
            return False
        return True

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self.module(node, alias.name) and alias.name.split(".")[0] == "numpy":
                self.numpy.add(alias.asname or "numpy")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.refuse(node, "import", "." * node.level + (node.module or ""))
            return
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                self.module(node, module)
                continue
            if alias.name in PY_DENIED_NAMES and alias.name not in self.allow:
                self.refuse(node, PY_DENIED_NAMES[alias.name], alias.name)
                continue
            if module == "numpy" and alias.name in PY_DENIED_NUMPY:
                self.refuse(node, "system", f"numpy.{alias.name}")
                continue
            full = f"{module}.{alias.name}"
            if _within(module, self.allowed) and not _private(alias.name):
                continue
            parent = any(allowed.startswith(module + ".") for allowed in self.allowed)  # `from max import graph`
            self.module(node, full if parent or _private(alias.name) else module)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in PY_DENIED_NAMES and node.id not in self.allow:
            self.refuse(node, PY_DENIED_NAMES[node.id], node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr not in self.allow:
            if attr.startswith("__") and attr not in PY_DUNDERS_ALLOWED:
                self.refuse(node, "internals", attr)
            elif attr in PY_DENIED_ATTRIBUTES:
                self.refuse(node, PY_DENIED_ATTRIBUTES[attr], attr)
            elif attr in PY_DENIED_NAMES:
                self.refuse(node, PY_DENIED_NAMES[attr], attr)
            elif attr in PY_DENIED_NUMPY and isinstance(node.value, ast.Name) and node.value.id in self.numpy:
                self.refuse(node, "system", f"{node.value.id}.{attr}")
        self.generic_visit(node)


def check_python(name: str, data: bytes, *, allow: set[str] | frozenset = frozenset(),
                 imports: tuple[str, ...] = ()) -> list[Refusal]:
    """The refusals in one Python graph file."""
    try:
        tree = ast.parse(data.decode("utf-8"), filename=name)
    except UnicodeDecodeError as exc:
        return [Refusal(name, data[:exc.start].count(b"\n") + 1, 1, "unreadable", "utf8")]
    except (SyntaxError, ValueError) as exc:
        return [Refusal(name, getattr(exc, "lineno", None) or 1, getattr(exc, "offset", None) or 1, "unreadable",
                        "python")]
    visitor = _PythonCheck(name, set(allow), imports)
    visitor.visit(tree)
    return sorted(visitor.found, key=lambda r: (r.line, r.column, r.rule))
