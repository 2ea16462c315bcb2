"""From a puzzle's manifest and its cases to the Mojo program that runs them.

The workbook owns the launch: one generic generator, driven by the manifest,
writes a small Mojo program per puzzle and set of case shapes (never per
seed: the inputs are read from a file at run time). Why one generator rather
than a hand-written launcher per puzzle: the manifest already says everything
a launch needs (kernel, arguments, grid, block, buffers), the same launch
must exist three times (real GPU, simulator, CPU), and a rule like "fill the
outputs with NaN first" is then written once, not once per puzzle.

Two programs come out of one plan:
- `launch_gpu.mojo`: DeviceContext launches on a real GPU (built for the GPU
  target even where there is none, which type-checks every GPU kernel);
- `launch_host.mojo`: the op puzzles' CPU kernels called directly (mode
  `cpu`), and the GPU kernels run by the simulator (mode `sim`).

Both import the learner's module as `puzzle`, read `inputs.bin`, and append
every output to `outputs.bin` in plan order: case, repeat, output. See
workbook/mojo/wbio.c (the GPU's) and wbsim.c (the simulator's) for the other
side of that contract.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..child.channel import read_file
from ..course.manifest import Part, Puzzle, evaluate

MOJO_DTYPE = {"float32": "DType.float32", "float64": "DType.float64", "int32": "DType.int32", "int64": "DType.int64",
              "bfloat16": "DType.bfloat16"}
ITEMSIZE = {"bfloat16": 2}  # dtypes NumPy has no name for
ALIGN = 64
# Blocks in one thread-block cluster: the portable limit on NVIDIA GPUs (the simulator's too).
MAX_CLUSTER = 8
# The simulator runs every launch twice: threads and blocks forward, then in reverse.
SIM_ORDERS = 2
# Bytes written before each timed run, untimed, so that no run finds its data in the L2 cache
# that the one before left there: twice the largest L2 among the GPUs the course meets (an
# H200's 60 MB, a B200's 126 MB), as graded kernel platforms do (a 256 MB buffer zeroed).
FLUSH_BYTES = 256 << 20
# A timed case's solution times go into result.json under this plus the case's index.
SOLUTION_TIMES = 1_000_000


@dataclass(frozen=True)
class Buffer:
    name: str
    role: str  # input | output | scratch
    dtype: str
    shape: tuple[int, ...]
    offset: int = 0  # inputs: byte offset in inputs.bin
    zero: bool = False  # outputs the kernel adds into start at zero

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def elem(self) -> int:
        return ITEMSIZE.get(self.dtype) or np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.count * self.elem

    @property
    def var(self) -> str:
        """Its variable in the generated code (a buffer may be called `out`, a Mojo keyword)."""
        return "v_" + self.name

    def layout(self) -> str:
        return f"row_major[{', '.join(str(d) for d in self.shape) or '1'}]()"


@dataclass(frozen=True)
class LaunchSpec:
    kernel: str  # the Mojo expression, with case parameters by name
    args: tuple[str, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    name: str
    host: bool = False  # a host function that launches its own kernels, called with ctx
    cluster: tuple[int, int, int] = (1, 1, 1)  # blocks per thread-block cluster (sm_90)

    @property
    def clustered(self) -> bool:
        return self.cluster != (1, 1, 1)


@dataclass
class CaseSpec:
    index: int
    part: Part
    params: dict
    buffers: dict[str, Buffer]
    launches: list[LaunchSpec] = field(default_factory=list)
    constants: dict[str, int] = field(default_factory=dict)

    def outputs(self) -> list[Buffer]:
        return [self.buffers[name] for name in self.part.outputs]

    def names(self) -> dict[str, int]:
        """What a size expression of this case may name: the constants and its whole-number
        parameters."""
        params = {k: v for k, v in self.params.items() if isinstance(v, int) and not isinstance(v, bool)}
        return {**self.constants, **params}

    def twice(self) -> bool:
        """Outputs that are sums: zeroed once, the kernels run twice, halved by the
        workbook. A kernel that zeroes them itself loses the first run."""
        return bool(self.part.accumulate)


@dataclass
class Solution:
    """The reference solution, built into the GPU launcher beside the learner's kernels so
    that a timed case runs both in one process, alternately (`_timed_case`): its sources as a
    package of their own (build.solution_package), and its launches of each timed case, made
    with its own launch choices."""

    module: str  # the import path of its module in that package (wb_solution.op.embedding)
    folder: Path  # the folder that holds the package (given to the compiler with -I)
    digest: str  # of its sources: part of the generated text, so the build's key
    launches: dict[int, list[LaunchSpec]] = field(default_factory=dict)  # timed case -> its launches
    names: dict[int, dict[str, int]] = field(default_factory=dict)  # timed case -> what its sizes may name


@dataclass
class Plan:
    puzzle: Puzzle
    cases: list[CaseSpec]
    input_bytes: int
    timed: list[CaseSpec] = field(default_factory=list)  # GPU timing only, after the judged cases
    solution: Solution | None = None  # timed beside the learner's kernels (a speed verdict's reference)

    def timed_against_solution(self, spec: CaseSpec) -> bool:
        return self.solution is not None and spec.index in self.solution.launches


class PlanError(ValueError):
    """The manifest and the reference disagree (an author's mistake)."""


def _dims(exprs: tuple[str, ...], names: dict[str, int]) -> tuple[int, int, int]:
    values = [evaluate(e, names) for e in exprs] + [1, 1]
    return values[0], values[1], values[2]


def make_plan(puzzle: Puzzle, parts: list[tuple[Part, list[dict], list[dict]]],
              timed: list[tuple[Part, dict, dict]] = ()) -> Plan:
    """The launch plan for every case: `parts` pairs each part with its cases and
    their expected outputs (for the output shapes). Inputs are laid out in
    inputs.bin in this order. `timed`: (part, speed case, its outputs) for the
    parts timed on a GPU; numbered after the judged cases, only the GPU launcher
    runs them."""
    cases: list[CaseSpec] = []
    offset = 0
    for part, part_cases, expected in parts:
        for case, want in zip(part_cases, expected):
            spec, offset = _spec(puzzle, part, case, want, len(cases), offset)
            cases.append(spec)
    plan = Plan(puzzle, cases, offset)
    for part, case, want in timed:
        spec, plan.input_bytes = _spec(puzzle, part, case, want, len(cases) + len(plan.timed), plan.input_bytes)
        plan.timed.append(spec)
    return plan


def _spec(puzzle: Puzzle, part: Part, case: dict, want: dict, index: int, offset: int) -> tuple[CaseSpec, int]:
    params = {k: v for k, v in case["params"].items() if isinstance(v, int) and not isinstance(v, bool)}
    names = {**puzzle.launch_names(), **params}
    buffers: dict[str, Buffer] = {}
    for name in part.inputs:
        array = np.asarray(case["inputs"][name])
        buf = Buffer(name, "input", part.input_dtype(name, array.dtype.name), tuple(array.shape), offset)
        buffers[name] = buf
        offset += -(-buf.nbytes // ALIGN) * ALIGN
    for name in part.outputs:
        if name not in want:
            raise PlanError(f"{puzzle.id}.{part.id}: the reference gives no expected '{name}'")
        buffers[name] = Buffer(name, "output", part.output_dtype(name), tuple(np.shape(want[name])),
                               zero=name in part.accumulate)
    for s in part.scratch:
        buffers[s.name] = Buffer(s.name, "scratch", s.dtype, tuple(evaluate(d, names) for d in s.shape))
    spec = CaseSpec(index, part, dict(case["params"]), buffers, constants=puzzle.launch_names())
    spec.launches = _launches(puzzle, part, names, [*buffers, *params], str(case.get("name")))
    return spec, offset


def _launches(puzzle: Puzzle, part: Part, names: dict[str, int], arguments: list[str],
              case: str) -> list[LaunchSpec]:
    """A part's launches for one case: grid, block and cluster evaluated with `names`;
    `arguments`: what a launch may pass (the case's buffers and whole-number parameters)."""
    found = []
    for launch in part.launches:
        for arg in launch.args:
            if arg not in arguments:
                raise PlanError(f"{puzzle.id}.{part.id}: launch argument '{arg}' is neither a buffer "
                                "nor a whole-number case parameter")
        grid = _dims(launch.grid, names)
        cluster = _dims(launch.cluster, names) if launch.cluster else (1, 1, 1)
        if any(c < 1 or g % c for g, c in zip(grid, cluster)) or cluster[0] * cluster[1] * cluster[2] > MAX_CLUSTER:
            raise PlanError(f"{puzzle.id}.{part.id}: case '{case}': a grid of {grid} blocks is not a "
                            f"whole number of clusters of {cluster} (at most {MAX_CLUSTER} blocks)")
        found.append(LaunchSpec(launch.kernel, launch.args, grid, _dims(launch.block, names), launch.name,
                                launch.host, cluster))
    return found


def attach_solution(plan: Plan, solution: Puzzle, module: str, folder: Path, digest: str) -> None:
    """Time the reference solution beside the learner's kernels (`Solution`): each timed
    case of a part with a speed verdict gets the solution's launches, made with the
    solution's own launch choices (`solution` is the puzzle read with them). A case whose
    scratch buffers the solution would size otherwise keeps no solution launches (its
    solution is timed in a launcher of its own, as before)."""
    found = Solution(module, folder, digest)
    for spec in plan.timed:
        if not spec.part.speed or not spec.part.speed.max_ratio_to_solution:
            continue
        part = solution.part(spec.part.id)
        params = {k: v for k, v in spec.params.items() if isinstance(v, int) and not isinstance(v, bool)}
        names = {**solution.launch_names(), **params}
        if any(tuple(evaluate(d, names) for d in s.shape) != spec.buffers[s.name].shape for s in part.scratch):
            continue
        found.launches[spec.index] = _launches(solution, part, names, [*spec.buffers, *params], spec.part.id)
        found.names[spec.index] = names
    plan.solution = found if found.launches else None


def write_inputs(plan: Plan, parts_cases: list[dict], path, timed_cases: list[dict] = ()) -> None:
    """inputs.bin: every case's inputs at the offsets the plan gave them (the timed
    cases' after the judged ones)."""
    data = bytearray(plan.input_bytes)
    for spec, case in zip([*plan.cases, *plan.timed], [*parts_cases, *timed_cases]):
        for name in spec.part.inputs:
            buf = spec.buffers[name]
            raw = _stored(buf, case["inputs"][name])
            data[buf.offset:buf.offset + len(raw)] = raw
    path.write_bytes(bytes(data))


def _stored(buf: Buffer, values) -> bytes:
    """An input's bytes as the device holds them. bfloat16: the top half of each float32,
    which must hold the value exactly (the reference's promise; a rounded input would make
    the expected output wrong, not the kernel)."""
    if buf.dtype != "bfloat16":
        return np.ascontiguousarray(values).tobytes()
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    if np.any(bits & 0xFFFF):
        raise PlanError(f"input '{buf.name}' holds values bfloat16 can't hold exactly")
    return (bits >> 16).astype(np.uint16).tobytes()


def outputs_size(plan: Plan, selected: list[int], repeats: int) -> int:
    """The bytes outputs.bin holds once `selected` ran `repeats` times each: every output of
    every repeat behind its 16-byte header (a timed case's outputs are never written)."""
    return sum((16 + o.nbytes) * repeats for index in set(selected) if 0 <= index < len(plan.cases)
               for o in plan.cases[index].outputs())


def read_outputs(plan: Plan, raw: bytes | Path, selected: list[int], repeats: int) -> dict[int, list[list[np.ndarray]]]:
    """outputs.bin back into arrays: case -> repeats -> outputs. Each output comes behind
    a header that names it (case, repeat, output, bytes), so a case that stopped keeps
    no values, and never shows another case's: only cases with every repeat are given.
    `raw`: its bytes (read through the run's channel, up to `outputs_size`), or the file
    of a launcher run by hand (read the safe way, with the same cap)."""
    if isinstance(raw, Path):
        raw = read_file(raw, outputs_size(plan, selected, repeats)) or b""
    found: dict[tuple[int, int, int], np.ndarray] = {}
    position = 0
    while position + 16 <= len(raw):
        case, rep, k, nbytes = struct.unpack_from("<4i", raw, position)
        position += 16
        if nbytes < 0 or position + nbytes > len(raw) or not 0 <= case < len(plan.cases):
            break
        outputs = plan.cases[case].outputs()
        if 0 <= k < len(outputs) and outputs[k].nbytes == nbytes:
            buf = outputs[k]
            array = np.frombuffer(raw, dtype=buf.dtype, count=buf.count, offset=position).reshape(buf.shape)
            found[(case, rep, k)] = array / 2 if buf.zero and plan.cases[case].twice() else array.copy()
        position += nbytes
    result: dict[int, list[list[np.ndarray]]] = {}
    for index in selected:
        if not 0 <= index < len(plan.cases):
            continue  # a timed case (plan.timed): its outputs are never read back
        count = len(plan.cases[index].outputs())
        reps = [[found.get((index, r, k)) for k in range(count)] for r in range(repeats)]
        if all(a is not None for rep in reps for a in rep):
            result[index] = reps
    return result


# ---------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _kernel(expr: str, names: dict[str, int], owner: str = "puzzle") -> str:
    """'add_ten[size]' -> 'puzzle.add_ten[13]': the kernel lives in the learner's
    module (`owner`: or the reference solution's), and each compile-time parameter that
    is a size expression of the case's parameters and constants becomes its number
    (others, such as DType.float32, stay as written)."""
    name, bracket, rest = expr.strip().partition("[")
    name = name if name.startswith(owner + ".") else f"{owner}.{name}"
    if not bracket:
        return name
    values = []
    for arg in _split_top(rest.rsplit("]", 1)[0]):
        try:
            values.append(str(evaluate(arg, names)))
        except (ValueError, SyntaxError, KeyError, TypeError, ZeroDivisionError):
            values.append(arg)
    return f"{name}[{', '.join(values)}]"


def _tile(buf: Buffer, address: str, writable: bool) -> str:
    helper = "tile_mut" if writable else "tile"
    return f"{helper}[{MOJO_DTYPE[buf.dtype]}]({address}, {buf.layout()})"


def _arg(spec: CaseSpec, arg: str, address) -> str:
    if arg in spec.buffers:
        buf = spec.buffers[arg]
        return _tile(buf, address(buf), buf.role != "input")
    return f"Int32({spec.params[arg]})"


def _header(plan: Plan, imports: list[str]) -> list[str]:
    puzzle = plan.puzzle
    lines = [
        f"# Generated by the workbook for puzzle {puzzle.id}: runs your kernels on the cases.",
        "# Do not edit: it is written again whenever the plan changes.",
        f"import {puzzle.module} as puzzle",
        "from layout.tile_layout import row_major",
        *imports,
        "",
    ]
    return lines


def _constant_checks(plan: Plan) -> list[str]:
    fixed = [f'    comptime assert puzzle.{name} == {value}, "keep {name} = {value}: the workbook launches '
             f'your kernel with it"' for name, value in plan.puzzle.constants.items()]
    # A choice was read from the learner's file before the build: this says it was read right.
    chosen = [f'    comptime assert puzzle.{name} == {value}, "the workbook read {name} = {value} from your '
              f'file and launches with it: set it on one line of its own, comptime {name} = <a number>"'
              for name, value in plan.puzzle.choices.items()]
    return fixed + chosen


def _device_buffers(spec: CaseSpec, poison: bool, shared: bool = False) -> list[str]:
    """A case's buffers on the device: inputs copied from the inputs file, the rest
    created (and, with `poison`, filled with NaN, or zeros for sums, at once)."""
    lines = []
    for buf in spec.buffers.values():
        if buf.role == "input":
            kind = MOJO_DTYPE[buf.dtype]
            lines.append(f"    var {buf.var} = h.device_input[{kind}](ctx, {_at(buf, shared)}, {buf.count})")
            continue
        lines.append(f"    var {buf.var} = ctx.enqueue_create_buffer[{MOJO_DTYPE[buf.dtype]}]({buf.count})")
        if poison:
            lines.append(f"    poison_device({buf.var}, {'True' if buf.zero else 'False'})")
    return lines


def _enqueue(spec: CaseSpec, launch: LaunchSpec, address, indent: str, comment: bool,
             owner: str = "puzzle", names: dict[str, int] | None = None) -> list[str]:
    """One launch of a case: the learner's host function called, or a kernel enqueued
    (`owner` "solution": the reference solution's, with its own `names`)."""
    args = ", ".join(_arg(spec, a, address) for a in launch.args)
    called = _kernel(launch.kernel, spec.names() if names is None else names, owner)
    if launch.host:
        said = [f"{indent}# your function, which launches its own kernels: {launch.kernel}"
                f"({', '.join(launch.args)}, ctx)"] if comment else []
        return [*said, f"{indent}{called}({args}, ctx)"]
    said = [f"{indent}# your kernel: {launch.kernel}({', '.join(launch.args)})"] if comment else []
    cluster = [f"{indent}    cluster_dim=Dim{launch.cluster},"] if launch.clustered else []
    return [*said, f"{indent}ctx.enqueue_function[{called}](", f"{indent}    {args},",
            f"{indent}    grid_dim={launch.grid}, block_dim={launch.block},", *cluster, f"{indent})"]


def _gpu_case(spec: CaseSpec) -> list[str]:
    params = ", ".join(["mut h: Harness", "ctx: DeviceContext", "index: Int", *_offset_params(spec)])
    lines = [f"def case_{spec.index}({params}) raises:", *_device_buffers(spec, False, shared=True)]
    lines.append("    for rep in range(h.repeats):")
    for buf in spec.buffers.values():
        if buf.role != "input":
            lines.append(f"        poison_device({buf.var}, {'True' if buf.zero else 'False'})")
    for _ in range(2 if spec.twice() else 1):
        for launch in spec.launches:
            lines += _enqueue(spec, launch, lambda b: f"Int({b.var}.unsafe_ptr())", "        ", True)
    for k, buf in enumerate(spec.outputs()):
        lines.append(f"        h.save_device(ctx, {buf.var}, {buf.count}, index, rep, {k})")
    return lines + [""]


def _timed_case(spec: CaseSpec, solution: Solution | None = None) -> list[str]:
    """A case timed on the GPU, never judged: its launches once as a closure, `warmup`
    times untimed, then `launches` times one by one, each timed by the device
    (DeviceContext.execution_time: events around the work the closure enqueues), each
    after FLUSH_BYTES written, untimed, so that every run starts with its data out of the
    L2 cache. With `solution`: the reference solution's launches as a second closure on
    the same buffers, warmed up and timed alternately with the learner's (ABBA: the
    learner's first in even rounds, second in odd ones), so that both see the same GPU,
    clocks and neighbours; its times are recorded under SOLUTION_TIMES + the index."""
    speed = spec.part.speed
    lines = [f"def timed_{spec.index}(mut h: Harness, ctx: DeviceContext) raises:", *_device_buffers(spec, True)]
    for buf in spec.buffers.values():  # the closure captures addresses (copied), not the buffers
        lines.append(f"    var a_{buf.name} = Int({buf.var}.unsafe_ptr())")
    lines.append(f"    var flush = ctx.enqueue_create_buffer[DType.uint8]({FLUSH_BYTES})")
    lines.append("    def run_once(ctx: DeviceContext) raises {var}:")
    for launch in spec.launches:
        lines += _enqueue(spec, launch, lambda b: f"a_{b.name}", "        ", False)
    theirs = solution.launches.get(spec.index) if solution is not None else None
    if theirs is not None:
        lines.append("    def run_solution(ctx: DeviceContext) raises {var}:")
        for launch in theirs:
            lines += _enqueue(spec, launch, lambda b: f"a_{b.name}", "        ", False, "solution",
                              solution.names[spec.index])
    both = ["run_once", "run_solution"] if theirs is not None else ["run_once"]
    lines += [f"    for _ in range({speed.warmup}):", *[f"        {run}(ctx)" for run in both], "    ctx.synchronize()",
              "    var times = List[Int]()", "    var solution_times = List[Int]()",
              f"    for r in range({speed.launches}):"]
    if theirs is not None:
        lines += ["        if r % 2 == 1:", "            flush.enqueue_fill(0)",
                  "            solution_times.append(ctx.execution_time(run_solution, 1))"]
    lines += ["        flush.enqueue_fill(0)", "        times.append(ctx.execution_time(run_once, 1))"]
    if theirs is not None:
        lines += ["        if r % 2 == 0:", "            flush.enqueue_fill(0)",
                  "            solution_times.append(ctx.execution_time(run_solution, 1))",
                  f"    h.record_times({SOLUTION_TIMES + spec.index}, solution_times)"]
    lines.append(f"    h.record_times({spec.index}, times)")
    lines += [f"    _ = {buf.var}" for buf in spec.buffers.values()]  # alive until every launch is done
    lines.append("    _ = flush")
    return lines + [""]


def _at(buf: Buffer, shared: bool) -> str:
    """Where an input sits in inputs.bin: a parameter of a shared case function, else the number."""
    return f"o_{buf.name}" if shared else str(buf.offset)


def _offset_params(spec: CaseSpec) -> list[str]:
    """A shared case function's parameters: where each of its inputs sits (`_at`)."""
    return [f"o_{buf.name}: Int" for buf in spec.buffers.values() if buf.role == "input"]


def _offsets(spec: CaseSpec) -> list[str]:
    return [str(buf.offset) for buf in spec.buffers.values() if buf.role == "input"]


def _shared(cases: list[CaseSpec], render) -> tuple[list[str], dict[int, int]]:
    """One function for the cases whose code differs only in where their inputs sit in
    inputs.bin (the same shapes, parameters and launches: the same case of several seeds),
    each called with its own offsets. Code compiled per case grows a launcher's build;
    this way one of 10 seeds builds about as fast as one of a single seed.
    Returns the functions' lines and, per case, the case whose function it calls."""
    lines: list[str] = []
    owner: dict[int, int] = {}
    seen: dict[str, int] = {}
    for spec in cases:
        key = "\n".join(render(dataclasses.replace(spec, index=-1)))
        if key not in seen:
            seen[key] = spec.index
            lines += render(spec)
        owner[spec.index] = seen[key]
    return lines, owner


def _dispatch(cases: list[CaseSpec], total: int, owner: dict[int, int], suffix: str, args: str,
              indent: str, harness: str, begin: str) -> list[str]:
    """Each case the launcher was asked for: begun under its own index, run by its function."""
    lines = []
    for spec in cases:
        given = ", ".join([*([args.format(index=spec.index)] if args else []), *_offsets(spec)])
        lines += [f"{indent}if {harness}.wants({spec.index}):", f"{indent}    {harness}.{begin}({spec.index}, {total})",
                  f"{indent}    case_{owner[spec.index]}{suffix}({given})"]
    return lines + [f"{indent}pass"]


def generate_gpu(plan: Plan) -> str:
    """Mode gpu: the GPU kernels on a real GPU. Built for the GPU target even where
    there is none, which type-checks every GPU kernel."""
    clustered = any(launch.clustered for spec in [*plan.cases, *plan.timed] for launch in spec.launches)
    against = plan.solution is not None and any(plan.timed_against_solution(spec) for spec in plan.timed)
    solution = [f"import {plan.solution.module} as solution  # the reference solution ({plan.solution.digest}), "
                "timed beside yours"] if against and plan.solution else []
    lines = _header(plan, [
        "from max.gpu.host import DeviceContext" + (", Dim" if clustered else ""),
        "from wbio import Harness, tile, tile_mut, poison_device",
        *solution,
    ])
    gpu_cases = [s for s in plan.cases if "gpu" in s.part.devices]
    cpu_cases = [s for s in plan.cases if "cpu" in s.part.devices]
    functions, owner = _shared(gpu_cases, _gpu_case)
    lines += functions
    for spec in cpu_cases:
        lines += _cpu_check(spec)
    for spec in plan.timed:
        lines += _timed_case(spec, plan.solution if plan.timed_against_solution(spec) else None)
    lines += ["", "def main() raises:", *_constant_checks(plan), "    var h = Harness()"]
    if cpu_cases:  # never true: the CPU kernels only need to compile here
        lines += ['    if h.cpu_mode():', *[f"        case_{spec.index}_cpu_check()" for spec in cpu_cases]]
    lines += ["    var ctx = DeviceContext()"]
    lines += _dispatch(gpu_cases, len(plan.cases), owner, "", "h, ctx, {index}", "    ", "h", "phase")
    for spec in plan.timed:  # only when named: a plain run or a sanitizer's never times
        lines += [f"    if h.asked({spec.index}):", f"        h.phase({spec.index}, {len(plan.cases)})",
                  f"        timed_{spec.index}(h, ctx)"]
    lines.append('    h.finish()')
    return "\n".join(lines) + "\n"


def _cpu_check(spec: CaseSpec) -> list[str]:
    """An op's CPU kernel, compiled into the GPU launcher but never run there: a GPU-only
    call in it (barrier(), thread_idx) is then an error with its line, not a crash."""
    lines = [f"def case_{spec.index}_cpu_check():"]
    for call in spec.part.calls:
        args = ", ".join(_arg(spec, a, lambda b: "0") for a in call.args)
        lines.append(f"    {_kernel(call.function, spec.names())}({args})")
    return lines + [""]


def _shape(buf: Buffer) -> str:
    """rank, d0, d1, d2: how the simulator names an element (output[2, 3])."""
    dims = list(buf.shape) or [1]
    return ", ".join(str(v) for v in [len(dims), *(dims + [1, 1])[:3]])


def _host_buffers(spec: CaseSpec) -> list[str]:
    lines = []
    for buf in spec.buffers.values():
        if buf.role == "input":
            call = f'wb.input("{buf.name}", {_at(buf, True)}, {buf.count}, {buf.elem}, {_shape(buf)})'
        elif buf.role == "output":
            call = f'wb.output("{buf.name}", {buf.count}, {buf.elem}, {buf.zero}, {_shape(buf)})'
        else:
            call = f'wb.scratch("{buf.name}", {buf.count}, {buf.elem}, {_shape(buf)})'
        lines.append(f"    var {buf.var} = {call}")
    return lines


def _cpu_case(spec: CaseSpec) -> list[str]:
    lines = [f"def case_{spec.index}_cpu({', '.join(_offset_params(spec))}):", *_host_buffers(spec),
             "    wb.rep_begin(0)", "    wb.cpu_begin()"]
    for _ in range(2 if spec.twice() else 1):
        for call in spec.part.calls:
            args = ", ".join(_arg(spec, a, lambda b: b.var) for a in call.args)
            lines.append(f"    # your CPU kernel: {call.function}({', '.join(call.args)})")
            lines.append(f"    {_kernel(call.function, spec.names())}({args})")
    return lines + ["    wb.cpu_end()", "    wb.rep_end(0)", ""]


def _sim_struct(spec: CaseSpec, k: int, launch: LaunchSpec) -> list[str]:
    buffers = [a for a in launch.args if a in spec.buffers]
    lines = ["@fieldwise_init", f"struct Sim_{spec.index}_{k}(Kernel):"]
    lines += [f"    var {spec.buffers[name].var}: Int" for name in buffers] or ["    var unused: Int"]
    lines += ["", "    def run(self):"]
    args = ", ".join(_arg(spec, a, lambda b: f"self.{b.var}") for a in launch.args)
    lines += [f"        # your kernel: {launch.kernel}({', '.join(launch.args)})",
              f"        {_kernel(launch.kernel, spec.names())}({args})", ""]
    return lines


def _sim_host_call(spec: CaseSpec, launch: LaunchSpec) -> list[str]:
    """A host function that launches its own kernels (elementwise): called with a CPU
    DeviceContext, its launches run on the simulator under the manifest's name."""
    args = ", ".join(_arg(spec, a, lambda b: b.var) for a in launch.args)
    return [f'        host_launch("{launch.name}")',
            "        try:",
            f"            # your function, which launches its own kernels: {launch.kernel}"
            f"({', '.join(launch.args)}, ctx)",
            f"            {_kernel(launch.kernel, spec.names())}({args}, ctx)",
            "        except e:",
            "            host_done()",
            "            return  # the simulator stopped this case (see its findings)",
            "        host_done()"]


def _sim_case(spec: CaseSpec) -> list[str]:
    lines = []
    for k, launch in enumerate(spec.launches):
        if not launch.host:
            lines += _sim_struct(spec, k, launch)
    lines += [f"def case_{spec.index}_sim({', '.join(_offset_params(spec))}):", *_host_buffers(spec)]
    if any(launch.host for launch in spec.launches):
        lines += ["    var ctx: DeviceContext", "    try:", '        ctx = DeviceContext(api="cpu")',
                  "    except:", "        return"]
    lines.append("    for rep in range(wb.repeats()):")
    lines.append("        wb.rep_begin(rep)")
    for _ in range(2 if spec.twice() else 1):
        for k, launch in enumerate(spec.launches):
            if launch.host:
                lines += _sim_host_call(spec, launch)
                continue
            fields = [spec.buffers[a].var for a in launch.args if a in spec.buffers] or ["0"]
            cluster = f", Dim3{launch.cluster}" if launch.clustered else ""
            lines.append(f"        if not launch(Sim_{spec.index}_{k}({', '.join(fields)}), Dim3{launch.grid}, "
                         f'Dim3{launch.block}, rep % 2 == 1, "{launch.name}"{cluster}):')
            lines.append("            return  # the simulator stopped this case (see its findings)")
    lines.append("        wb.rep_end(rep)")
    return lines + [""]


def generate_host(plan: Plan, with_sim: bool = True) -> str:
    """Modes cpu (the CPU kernels) and sim (the GPU kernels on the simulator), built
    for this machine with the simulator's runtime (wbsim.c); `with_sim` False leaves
    the simulated cases out (code it can't run), and the learner's module keeps its
    real imports."""
    hosted = with_sim and any(launch.host for spec in plan.cases for launch in spec.launches)
    lines = _header(plan, ["from wbsim import wb, Kernel, Dim3, launch, tile, tile_mut",
                           *(["from wbhost import host_launch, host_done, DeviceContext"]
                             if hosted else [])])
    cpu_cases = [s for s in plan.cases if "cpu" in s.part.devices]
    sim_cases = [s for s in plan.cases if "gpu" in s.part.devices and s.part.sim] if with_sim else []
    cpu_functions, cpu_owner = _shared(cpu_cases, _cpu_case)
    sim_functions, sim_owner = _shared(sim_cases, _sim_case)
    lines += cpu_functions + sim_functions
    lines += ["", "def main():", *_constant_checks(plan), "    wb.begin()", "    if wb.cpu_mode():"]
    lines += _dispatch(cpu_cases, len(plan.cases), cpu_owner, "_cpu", "", "        ", "wb", "case_begin")
    lines += ["    else:"]
    lines += _dispatch(sim_cases, len(plan.cases), sim_owner, "_sim", "", "        ", "wb", "case_begin")
    lines += ["    wb.finish()"]
    return "\n".join(lines) + "\n"


def generate(plan: Plan, which: str, with_sim: bool = True) -> str:
    return generate_gpu(plan) if which == "gpu" else generate_host(plan, with_sim)
