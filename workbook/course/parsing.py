"""Reading a manifest: puzzle.toml's tables into course/manifest.py's records.

Every key is checked as it is read, and a problem is a ManifestError that names the key and
where it is (catalog.load turns it into the learner's message naming the file).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

from .manifest import (
    BUDGET_LIMITS,
    DEVICES,
    DTYPES,
    INPUT_DTYPES,
    KINDS,
    MAX_TOLERANCE,
    METHOD_KEYS,
    METHOD_KINDS,
    NAME,
    PRECISIONS,
    PTX_RULES,
    SPEED_KEYS,
    TRAFFIC_LIMITS,
    WARP_OPS,
    Budget,
    Call,
    GpuNeeds,
    Launch,
    ManifestError,
    MethodRule,
    OccupancyRule,
    Part,
    PtxRule,
    Puzzle,
    Scratch,
    SourceNumbers,
    SpecialPoint,
    Speed,
    TrafficLimit,
    check_expression,
    read_choices,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


# ---------------------------------------------------------------------------
# Reading a manifest
# ---------------------------------------------------------------------------


def _require(data: dict, key: str, kind: type, where: str):
    if key not in data:
        raise ManifestError(f"missing '{key}' in {where}")
    value = data[key]
    if not isinstance(value, kind):
        raise ManifestError(f"'{key}' in {where} must be {kind.__name__}")
    return value


def _title(value, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or "en" not in value:
        raise ManifestError(f"{where} needs an English title: title.en = \"...\"")
    return {k: str(v) for k, v in value.items()}


def _names(values, where: str) -> tuple[str, ...]:
    values = tuple(values)
    for v in values:
        if not isinstance(v, str) or not NAME.match(v):
            raise ManifestError(f"{where}: '{v}' is not a name")
    return values


def _dims(value, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not 1 <= len(items) <= 3:
        raise ManifestError(f"{where} must have 1 to 3 sizes")
    dims = tuple(str(v) for v in items)
    for d in dims:
        check_expression(d, where)
    return dims


def _tools(values, where: str) -> tuple[str, ...]:
    tools = tuple(values)
    if not set(tools) <= {"memcheck", "racecheck", "initcheck"}:
        raise ManifestError(f"{where}.sanitizers must name memcheck, racecheck or initcheck")
    return tools


def _inside(name, where: str) -> str:
    """A path the manifest names, relative to the puzzle folder and inside it: no absolute
    path, no '..', no backslash (a manifest saying edit = ["../../.bashrc"] would have
    `reveal` print that file and `reset` overwrite it)."""
    if not isinstance(name, str) or not name or len(name) > 200:
        raise ManifestError(f"{where}: '{name}' is not a file name")
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(part in ("", ".", "..") for part in parts) \
            or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ManifestError(f"{where}: '{name}' must be a plain path inside the puzzle folder")
    return name


def _tolerance(value, where: str) -> float:
    """atol and rtol: finite, not negative, at most 1. A tolerance larger than the values
    it compares (atol = 1e30) passes any kernel at all."""
    number = float(value)
    if not math.isfinite(number) or not 0 <= number <= MAX_TOLERANCE:
        raise ManifestError(f"{where}: a tolerance must be between 0 and {MAX_TOLERANCE}, not {value}")
    return number


def _launch(raw: dict, where: str) -> Launch:
    launch = Launch(
        kernel=_require(raw, "kernel", str, where),
        args=tuple(_require(raw, "args", list, where)),
        grid=_dims(raw.get("grid", [1]), f"{where}.grid"),
        block=_dims(_require(raw, "block", (list, int, str), where), f"{where}.block"),
        host=bool(raw.get("host", False)),
        cluster=_dims(raw["cluster"], f"{where}.cluster") if "cluster" in raw else (),
    )
    if launch.cluster and launch.host:
        raise ManifestError(f"{where}: a host function makes its own launches: it can't be given a cluster")
    return launch


def _why(raw: dict, where: str, both: bool = False) -> dict[str, str]:
    """A limit's or rule's `why`, in the learner's words: English at least (`both`: and Korean)."""
    why = raw.get("why", {})
    if not isinstance(why, dict) or not ({"en", "ko"} if both else {"en"}) <= set(why):
        raise ManifestError(f"{where}: say why in the learner's words: why.en = \"...\" "
                            + ("and why.ko = \"...\"" if both else "(and why.ko)"))
    return {str(k): str(v) for k, v in why.items()}


def _budget(raw: dict, where: str) -> Budget:
    unknown = set(raw) - {*BUDGET_LIMITS, "kernel", "why"}
    if unknown:
        raise ManifestError(f"{where}: unknown budget keys {sorted(unknown)}; use {BUDGET_LIMITS}")
    limits = tuple((k, _budget_limit(raw[k], f"{where}.{k}")) for k in BUDGET_LIMITS if k in raw)
    if not limits:
        raise ManifestError(f"{where}: a budget needs at least one of {BUDGET_LIMITS}")
    return Budget(str(raw.get("kernel", "")), limits, _why(raw, where))


def _budget_limit(value, where: str) -> int | str:
    """A whole number, or a size expression of the case's parameters and the constants
    ("ceildiv(ceildiv(size, 32), 32)": a lane's share of the warp sums), evaluated per case."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, int) and value < 0):
        raise ManifestError(f"{where}: a whole number of at least 0, or a size expression, not {value!r}")
    if isinstance(value, str):
        check_expression(value, where)
    return value


def _traffic(raw: dict, where: str) -> TrafficLimit:
    unknown = set(raw) - {*TRAFFIC_LIMITS, "kernel", "access", "why"}
    if unknown:
        raise ManifestError(f"{where}: unknown traffic keys {sorted(unknown)}; use {TRAFFIC_LIMITS}")
    limits = []
    for key in TRAFFIC_LIMITS:
        if key in raw:
            value = raw[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ManifestError(f"{where}.{key}: a number of at least 0, not {value!r}")
            limits.append((key, float(value)))
    if not limits:
        raise ManifestError(f"{where}: a traffic limit needs at least one of {TRAFFIC_LIMITS}")
    access = str(raw.get("access", ""))
    if access not in ("", "load", "store"):
        raise ManifestError(f"{where}.access: \"load\" or \"store\", not {access!r}")
    return TrafficLimit(str(raw.get("kernel", "")), access, tuple(limits), _why(raw, where))


def _method(raw: dict, where: str, launches: tuple[Launch, ...], inputs: tuple[str, ...],
            outputs: tuple[str, ...]) -> MethodRule:
    """One [[parts.method]]: its kind, the keys that kind takes, and its why in both languages."""
    if not isinstance(raw, dict):
        raise ManifestError(f"{where} must be a table: [[parts.method]] kind = \"...\"")
    kind = raw.get("kind")
    if kind not in METHOD_KINDS:
        raise ManifestError(f"{where}.kind must be one of {METHOD_KINDS}, not {kind!r}")
    allowed = {"kind", "kernel", "why", "gpu", *METHOD_KEYS[kind]}
    unknown = set(raw) - allowed
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)} for a {kind} rule; use {sorted(allowed)}")
    kernel = str(raw.get("kernel", ""))
    names = sorted({ln.name for ln in launches})
    if kernel and kernel not in names:
        raise ManifestError(f"{where}: kernel '{kernel}' is not one this part launches ({', '.join(names) or 'none'})")
    if not isinstance(raw.get("gpu", True), bool):
        raise ManifestError(f"{where}.gpu: true or false")
    rule = {"kind": kind, "kernel": kernel, "why": _why(raw, where, both=True), "gpu": raw.get("gpu", True)}
    if kind == "warp_ops":
        for key in ("required", "forbidden"):
            ops = raw.get(key, [])
            if not isinstance(ops, list) or not all(op in WARP_OPS for op in ops):
                raise ManifestError(f"{where}.{key}: a list of {WARP_OPS}, not {ops!r}")
            rule[key] = tuple(ops)
        if not rule["required"] and not rule["forbidden"]:
            raise ManifestError(f"{where}: a warp_ops rule names required and/or forbidden operations")
        if set(rule["required"]) & set(rule["forbidden"]):
            raise ManifestError(f"{where}: an operation both required and forbidden")
    elif kind == "access_width":
        least = raw.get("min_bytes")
        if least not in (2, 4, 8, 16, 32):
            raise ManifestError(f"{where}.min_bytes: the least bytes an access moves, 2, 4, 8, 16 or 32, "
                                f"not {least!r}")
        access = raw.get("access", "")
        if access not in ("", "load", "store"):
            raise ManifestError(f"{where}.access: \"load\" or \"store\" (both when left out), not {access!r}")
        rule.update(min_bytes=least, access=access,
                    max_narrow=_budget_limit(raw.get("max_narrow", 0), f"{where}.max_narrow"))
    elif kind == "async_copy":
        buffer = _require(raw, "buffer", str, where)
        if buffer not in inputs:
            raise ManifestError(f"{where}.buffer: one of the part's inputs ({', '.join(inputs)}), not {buffer!r}")
        rule["buffer"] = buffer
    elif kind == "mbarrier":
        rule["max_barriers"] = _budget_limit(_require(raw, "max_barriers", (int, str), where),
                                             f"{where}.max_barriers")
    else:  # writers
        output, array = raw.get("output", ""), raw.get("array", "")
        if bool(output) == bool(array) or not isinstance(output, str) or not isinstance(array, str):
            raise ManifestError(f"{where}: a writers rule names one output = \"...\" or one shared array = \"...\"")
        if output and output not in outputs:
            raise ManifestError(f"{where}.output: one of the part's outputs ({', '.join(outputs)}), not {output!r}")
        threads = raw.get("threads")
        if not isinstance(threads, list) or len(threads) != 2:
            raise ManifestError(f"{where}.threads: [first, last], the block's threads that write it "
                                "(numbers or size expressions)")
        rule.update(output=output, array=array,
                    threads=tuple(_budget_limit(t, f"{where}.threads") for t in threads))
    return MethodRule(**rule)


def _launched_kernel(raw: dict, where: str, launches: tuple[Launch, ...], keys: tuple[str, ...]) -> str:
    """A per-kernel rule's kernel (PTX, occupancy): only `keys` allowed, and the kernel one
    this part launches itself."""
    unknown = set(raw) - set(keys)
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}; use {', '.join(keys)}")
    kernel = _require(raw, "kernel", str, where)
    kernels = sorted({ln.name for ln in launches if not ln.host})
    if kernel not in kernels:
        launched = ", ".join(kernels) or "none"
        raise ManifestError(f"{where}: kernel '{kernel}' is not one this part launches ({launched})")
    return kernel


def _ptx_rule(raw: dict, where: str, launches: tuple[Launch, ...]) -> PtxRule:
    kernel = _launched_kernel(raw, where, launches, ("kernel", "loads", "stores", "min_loads", "min_stores", "why"))
    rules = {k: raw.get(k, "") for k in ("loads", "stores")}
    for key, value in rules.items():
        if value and value not in PTX_RULES:
            raise ManifestError(f"{where}.{key} must be one of {PTX_RULES}, not {value!r}")
    if not any(rules.values()):
        raise ManifestError(f"{where}: say what the PTX must show: loads = \"v4\" and/or stores = \"v4\"")
    least = {}
    for key in ("loads", "stores"):
        count = raw.get(f"min_{key}", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ManifestError(f"{where}.min_{key} must be a whole number of 1 or more, not {count!r}")
        if count > 1 and rules[key] in ("", "scalar"):
            raise ManifestError(f"{where}.min_{key} counts vector {key}: it needs {key} = \"v4\" or \"v2\"")
        least[key] = count
    return PtxRule(kernel, rules["loads"], rules["stores"], _why(raw, where, both=True), least["loads"],
                   least["stores"])


def _occupancy_rule(raw: dict, where: str, launches: tuple[Launch, ...]) -> OccupancyRule:
    kernel = _launched_kernel(raw, where, launches, ("kernel", "min_occupancy", "why"))
    least = raw.get("min_occupancy")
    if isinstance(least, bool) or not isinstance(least, (int, float)) or not 0 < least <= 1:
        raise ManifestError(f"{where}.min_occupancy is the share of an SM's warp slots, more than 0 and at most "
                            f"1 (0.75: 48 of 64 warps), not {least!r}")
    return OccupancyRule(kernel, float(least), _why(raw, where, both=True))


def _special(values, where: str) -> tuple[SpecialPoint, ...]:
    if not isinstance(values, list):
        raise ManifestError(f"{where} is a list of tables: [[parts.special]] name = \"...\", why.en, why.ko")
    points = []
    for i, raw in enumerate(values):
        here = f"{where}[{i}]"
        if not isinstance(raw, dict):
            raise ManifestError(f"{here} must be a table: [[parts.special]]")
        unknown = set(raw) - {"name", "why"}
        if unknown:
            raise ManifestError(f"{here}: unknown keys {sorted(unknown)}; use name and why")
        name = _require(raw, "name", str, here)
        if not NAME.match(name):
            raise ManifestError(f"{here}.name: '{name}' is not a name (letters, digits and _)")
        points.append(SpecialPoint(name, _why(raw, here, both=True)))
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise ManifestError(f"{where}: a special point is named twice")
    return tuple(points)


def _fixed_size(raw: dict, where: str) -> str:
    if "fixed_size" not in raw:
        return ""
    value = raw["fixed_size"]
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{where}.fixed_size says why the sizes are fixed: fixed_size = \"...\"")
    return value.strip()


def _speed(raw, where: str) -> Speed | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ManifestError(f"{where} must be a table: [parts.speed]")
    unknown = set(raw) - set(SPEED_KEYS)
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}; use {SPEED_KEYS}")
    if not raw.get("bytes") and not raw.get("flops"):
        raise ManifestError(f"{where} declares what one run does: bytes = \"...\" and/or flops = \"...\"")
    for key in ("bytes", "flops"):
        if key in raw:
            if not isinstance(raw[key], (str, int)) or isinstance(raw[key], bool):
                raise ManifestError(f"{where}.{key} must be a size expression, like \"2 * m * k * n\"")
            check_expression(str(raw[key]), f"{where}.{key}")
    counts = {}
    for key, low, high in (("warmup", 0, 100), ("launches", 3, 1000)):
        value = raw.get(key, getattr(Speed, key))
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ManifestError(f"{where}.{key} must be a whole number from {low} to {high}, not {value!r}")
        counts[key] = value
    precision = raw.get("precision", "fp32")
    if precision not in PRECISIONS:
        raise ManifestError(f"{where}.precision must be one of {PRECISIONS}, not {precision!r}")
    ratio = raw.get("max_ratio_to_solution", 0.0)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not (ratio == 0 or ratio >= 1):
        raise ManifestError(f"{where}.max_ratio_to_solution must be a number of at least 1 (the solution's "
                            f"own time), not {ratio!r}")
    return Speed(str(raw.get("bytes", "")), str(raw.get("flops", "")), precision, **counts,
                 max_ratio_to_solution=float(ratio))


def _part(raw: dict, where: str, kind: str, default_graph: str, defaults: dict, ops: tuple[str, ...]) -> Part:
    devices = tuple(raw.get("devices", ["gpu"] if kind == "kernel" else DEVICES))
    if not devices or any(d not in DEVICES for d in devices):
        raise ManifestError(f"{where}.devices must be a list of {DEVICES}")
    if kind == "kernel" and devices != ("gpu",):
        raise ManifestError(f"{where}: a kernel puzzle's parts run on the GPU: devices = [\"gpu\"]")
    launches = tuple(_launch(r, f"{where}.launch[{i}]") for i, r in enumerate(raw.get("launch", [])))
    calls = tuple(Call(_require(r, "function", str, f"{where}.call[{i}]"),
                       tuple(_require(r, "args", list, f"{where}.call[{i}]")))
                  for i, r in enumerate(raw.get("call", [])))
    if "gpu" in devices and not launches:
        raise ManifestError(f"{where} runs on the GPU: it needs at least one [[parts.launch]]")
    if "cpu" in devices and not calls:
        raise ManifestError(f"{where} runs on the CPU: it needs a [[parts.call]] naming the CPU kernel")
    graph = raw.get("graph", default_graph)
    if kind == "op" and ":" not in graph:
        raise ManifestError(f"{where}.graph must look like 'file.py:function'")
    if graph:
        _inside(graph.partition(":")[0], f"{where}.graph")
    graph_cases = raw.get("graph_cases", [])
    if not isinstance(graph_cases, list) or not all(isinstance(c, str) and c.strip() for c in graph_cases):
        raise ManifestError(f"{where}.graph_cases must be a list of the reference's case names")
    graph_cases = tuple(graph_cases)
    if graph_cases and kind != "op":
        raise ManifestError(f"{where}.graph_cases: only an op puzzle's part has a graph stage")
    if "speed" in raw and "gpu" not in devices:
        raise ManifestError(f"{where}.speed: only a part that runs on the GPU is timed")
    tolerance = raw.get("tolerance", defaults.get("tolerance", ""))
    if not isinstance(tolerance, str) or not tolerance.strip():
        raise ManifestError(f"{where}: say why atol and rtol are what they are: tolerance = \"...\"")
    outputs = _names(_require(raw, "outputs", list, where), f"{where}.outputs")
    dtypes = {str(k): str(v) for k, v in raw.get("dtypes", {}).items()}
    inputs_named = [str(n) for n in raw.get("inputs", [])]
    for name, dtype in dtypes.items():
        allowed = INPUT_DTYPES if name in inputs_named else DTYPES
        if dtype not in allowed:
            raise ManifestError(f"{where}.dtypes.{name} must be one of {allowed}")
    accumulate = _names(raw.get("accumulate", []), f"{where}.accumulate")
    if not set(accumulate) <= set(outputs):
        raise ManifestError(f"{where}.accumulate must name outputs")
    scratch = tuple(Scratch(_require(s, "name", str, f"{where}.scratch"),
                            _dims(_require(s, "shape", list, f"{where}.scratch"), f"{where}.scratch.shape"),
                            str(s.get("dtype", "float32")))
                    for s in raw.get("scratch", []))
    return Part(
        id=_require(raw, "id", str, where),
        title=_title(raw.get("title", {"en": raw.get("id", "")}), where),
        devices=devices,
        inputs=_names(_require(raw, "inputs", list, where), f"{where}.inputs"),
        outputs=outputs,
        atol=_tolerance(raw.get("atol", defaults.get("atol", 1e-6)), f"{where}.atol"),
        rtol=_tolerance(raw.get("rtol", defaults.get("rtol", 1e-5)), f"{where}.rtol"),
        tolerance=tolerance.strip(),
        launches=launches,
        calls=calls,
        graph=graph,
        graph_cases=graph_cases,
        dtypes=dtypes,
        accumulate=accumulate,
        scratch=scratch,
        exact_repeats=bool(raw.get("exact_repeats", True)),
        sim=bool(raw.get("sim", True)),
        ops=tuple(raw.get("ops", ops)),
        sanitizers=_tools(raw.get("sanitizers", []), where),
        budgets=tuple(_budget(b, f"{where}.budget[{i}]") for i, b in enumerate(raw.get("budget", []))),
        methods=tuple(_method(m, f"{where}.method[{i}]", launches, tuple(raw.get("inputs", [])), outputs)
                      for i, m in enumerate(raw.get("method", []))),
        traffic=tuple(_traffic(b, f"{where}.traffic[{i}]") for i, b in enumerate(raw.get("traffic", []))),
        show_traffic=bool(raw.get("show_traffic", False)),
        ptx=tuple(_ptx_rule(r, f"{where}.ptx[{i}]", launches) for i, r in enumerate(raw.get("ptx", []))),
        occupancy=tuple(_occupancy_rule(r, f"{where}.occupancy[{i}]", launches)
                        for i, r in enumerate(raw.get("occupancy", []))),
        show_occupancy=bool(raw.get("show_occupancy", False)),
        fixed_size=_fixed_size(raw, where),
        speed=_speed(raw.get("speed"), f"{where}.speed"),
        special=_special(raw.get("special", []), f"{where}.special"),
    )


def from_dict(data: dict, folder: Path, solution_dir: Path) -> Puzzle:
    pid = _require(data, "id", str, "the manifest")
    if pid != folder.name:
        raise ManifestError(f"id '{pid}' does not match its folder '{folder.name}'")
    kind = data.get("kind", "kernel")
    if kind not in KINDS:
        raise ManifestError(f"kind must be one of {KINDS}")
    edit = tuple(_inside(name, "edit") for name in _require(data, "edit", list, "the manifest"))
    if len(set(edit)) != len(edit):
        raise ManifestError("edit names a file twice")
    for name in edit:  # the learner's copy may be missing: `workbook reset` puts it back
        solution = solution_dir / name
        if solution.is_symlink() or not solution.is_file():
            raise ManifestError(f"edit file '{name}' has no solution in {solution_dir} (a regular file)")
    package = data.get("package", "")
    if package:
        _inside(package, "package")
    if kind == "op":
        if not package or not (folder / package / "__init__.mojo").exists():
            raise ManifestError("an op puzzle needs package = \"DIR\", a folder with an __init__.mojo")
        if not data.get("ops") and not all(raw.get("ops") for raw in data.get("parts", [])):
            raise ManifestError("an op puzzle names the custom ops its graph must call: ops = [\"...\"]")
    mojo_edits = [name for name in edit if name.endswith(".mojo")]
    module = data.get("module") or (mojo_edits[0][:-5].replace("/", ".") if mojo_edits else "")
    if not module:
        raise ManifestError("name the Mojo module the kernels live in: module = \"...\"")
    constants = data.get("constants", {})
    if not all(isinstance(v, int) for v in constants.values()):
        raise ManifestError("constants must be whole numbers")
    choice_names = data.get("choices", [])
    if not isinstance(choice_names, list) or not all(isinstance(n, str) and n.isidentifier() for n in choice_names):
        raise ManifestError("choices must be a list of names: choices = [\"BLOCK\"]")
    if set(choice_names) & set(constants):
        raise ManifestError("a name is either a constant (fixed) or a choice (the learner's), not both")
    solution_texts = [(solution_dir / n).read_text(encoding="utf-8") for n in edit if n.endswith(".mojo")]
    choices = read_choices(solution_texts, choice_names)
    if len(choices) != len(choice_names):
        missing = ", ".join(n for n in choice_names if n not in choices)
        raise ManifestError(f"the solution sets no plain `comptime NAME = <number>` for the choices {missing}")
    defaults = data.get("tolerance", {}) if isinstance(data.get("tolerance"), dict) else {}
    parts = [_part(raw, f"parts[{i}]", kind, data.get("graph", ""), defaults, tuple(data.get("ops", ())))
             for i, raw in enumerate(_require(data, "parts", list, "the manifest"))]
    if not parts:
        raise ManifestError("a puzzle needs at least one part")
    if len({p.id for p in parts}) != len(parts):
        raise ManifestError("part ids must differ")
    hints_file = folder / "hints.toml"
    hints = list(data.get("hints", []))
    if hints_file.exists():
        hints += tomllib.loads(hints_file.read_text(encoding="utf-8")).get("hints", [])
    gpu = data.get("gpu", {})
    grade_imports, grade_allow = _grade(data.get("grade", {}))
    return Puzzle(
        id=pid,
        kind=kind,
        chapter=int(data.get("chapter", 0)),
        order=int(data.get("order", pid[1:] if pid[1:].isdigit() else 0)),
        title=_title(data.get("title"), "the manifest"),
        dir=folder,
        solution_dir=solution_dir,
        edit=edit,
        module=module,
        reference=_inside(data.get("reference", "reference.py"), "reference"),
        parts=tuple(parts),
        constants={str(k): int(v) for k, v in constants.items()},
        choices=choices,
        package=package,
        ops=tuple(data.get("ops", ())),
        hints=tuple(hints),
        gpu=GpuNeeds(gpu.get("vendor"), gpu.get("min_compute_capability")),
        repeats=int(data.get("repeats", 3)),
        skeleton_runs=bool(data.get("skeleton_runs", False)),
        grade_imports=grade_imports,
        grade_allow=grade_allow,
        source_numbers=tuple(_source_numbers(raw, f"source_numbers[{i}]", edit)
                             for i, raw in enumerate(data.get("source_numbers", []))),
    )


DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _grade(raw) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """[grade]: imports = ["module", ...] and allow = ["name", ...] for the source guard."""
    if not isinstance(raw, dict):
        raise ManifestError("grade must be a table: [grade]")
    unknown = set(raw) - {"imports", "allow"}
    if unknown:
        raise ManifestError(f"grade: unknown keys {sorted(unknown)}; use imports, allow")
    found = []
    for key, pattern in (("imports", DOTTED), ("allow", NAME)):
        values = raw.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and pattern.match(v) for v in values):
            raise ManifestError(f"grade.{key} must be a list of {'module names' if key == 'imports' else 'names'}")
        found.append(tuple(values))
    return found[0], found[1]


def _source_numbers(raw: dict, where: str, edit: tuple[str, ...]) -> SourceNumbers:
    code = _require(raw, "code", str, where)
    expect = _require(raw, "expect", dict, where)
    slots = re.findall(r"\{([A-Za-z_]\w*)\}", code)
    if not slots or set(slots) != set(expect) or len(slots) != len(set(slots)):
        raise ManifestError(f"{where}: the names in code ({', '.join(slots) or 'none'}) and in expect must be the same")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in expect.values()):
        raise ManifestError(f"{where}: expect gives whole numbers")
    file = raw.get("file", "")
    if file and file not in edit:
        raise ManifestError(f"{where}: file '{file}' is not one of the learner's files")
    what = raw.get("what", {})
    if not isinstance(what, dict) or not {"en", "ko"} <= set(what):
        raise ManifestError(f"{where}: say what the numbers are: what.en = \"...\" and what.ko = \"...\"")
    return SourceNumbers(code, {str(k): int(v) for k, v in expect.items()}, {str(k): str(v) for k, v in what.items()},
                         file)


