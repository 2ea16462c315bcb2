"""The package's layers (docs/architecture.md): a module imports only from its own layer and
the layers below it, so a newcomer knows from a path what a module may touch. Imports inside
`if TYPE_CHECKING:` are type hints, not imports at run time, and are allowed upwards."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "workbook"
# Bottom first. A layer may import from the layers before it in this list.
LAYERS = ["core", "course", "child", "compile", "run", "judging", "check", "view", "author", "grade", "cli"]
MOST_LINES = 900


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_curriculum" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def imported(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, module) of every workbook import in a file, TYPE_CHECKING blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hints = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
             for n in ast.walk(node)}
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in hints:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, name) for line, name in found if name.startswith("workbook.")]


def test_every_module_is_in_a_layer():
    loose = [m for m in modules() if m.count(".") and layer_of(m) is None and m != "workbook.__main__"]
    assert not loose, f"modules outside every layer (put each in one of {LAYERS}): {loose}"


def test_imports_only_go_down_the_layers():
    upward = []
    for module, path in modules().items():
        mine = layer_of(module)
        if mine is None:
            continue
        for line, name in imported(module, path):
            theirs = layer_of(name)
            if theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({mine}) imports {name} ({theirs})")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path):
    """The check above is not blind: a core module that imports the view is caught."""
    path = tmp_path / "settings.py"
    path.write_text("from ..view import report\nfrom typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from ..check import engine\n")
    assert imported("workbook.core.settings", path) == [(1, "workbook.view.report")]


def test_every_module_imports_and_no_file_is_over_900_lines():
    for module in modules():
        if module != "workbook.__main__":  # it runs the command
            importlib.import_module(module)
    sources = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".c", ".h", ".mojo")
               and "_curriculum" not in p.parts]
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in sources}
    long = {name: n for name, n in lines.items() if n > MOST_LINES}
    assert not long, f"over {MOST_LINES} lines: {long}"
