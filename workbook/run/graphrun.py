"""Running an op puzzle's MAX graph on one device, in two child processes.

A check that runs in the process that imported the learner's graph file, that
file can undo (two lines replaced "your graph calls your op" and a graph that
called MAX's own softmax passed). So a graph run is two processes, and the
check sits here, between them:

1. `python -m workbook.run.graphbuild` imports the learner's file and calls its
   load() for each shape with a session that only records graphs; it hands
   over each graph's MLIR text.
2. `python -m workbook.run.worker`, started at the same time (its imports overlap
   the first's), imports nothing of the learner's: it reads those texts as MAX
   does and hands them back as MLIR prints them. Here `graph_problems` checks
   what they compute, and that their kernel library is the workbook's `.mojoc`;
   approved, the worker compiles exactly what it read, waits for go (a held
   run builds while the kernels are judged), runs the cases and hands back the
   outputs.

Every hand-over is a descriptor opened here (workbook/child/channel.py) or a pipe
from here; nothing either process leaves in its folder is read. Both run the
way every child runs (workbook/child/processes.py), started and waited for by one
thread of this object's own. Two limits: building (MAX's compile, slow when
cold) may take up to the load limit; once built, running the kernels may take
the run limit, so an endless loop is stopped quickly without cutting a cold
compile short.

A graded run's GPU worker builds its graphs on the GPU it was given, then waits
(held) until the workbook holds a lease on that GPU (workbook/child/gpulease.py), and
only then runs them: MAX's compiles go on side by side, the runs one at a time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..child import gpulease, limits, protocol
from ..child.channel import ENV, Channel, Sink
from ..child.processes import Cancelled, Child, Children, Outcome
from ..core import settings
from ..core.i18n import Msg, msg
from ..course.manifest import Part, Puzzle
from .graphbuild import TEXT_CAP
from .kernelrun import GPU_SETTLE, _death, _tail

OP_LINE = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?([\w.]+)")
CUSTOM = re.compile(r'mo\.custom \[symbol = "([^"]+)"')
STRUCTURE = {"mo.chain.create", "mo.output", "mo.graph"}
LIBRARIES = re.compile(r"_kernel_library_paths = \[([^\]]*)\]")
BUILT_CAP = 64 << 20  # what the first process hands over, every graph of every shape
ARRAY_DTYPES = "biuf"  # outputs are numbers: bool, int, unsigned, float


@dataclass
class GraphRun:
    """What came back from the worker: outputs per case and repeat, or why there are none."""

    status: str  # ok | compile_error | error | crash | timeout | cancelled
    message: Msg | None = None
    output: str = ""
    outputs: dict[int, list[list[np.ndarray]]] = field(default_factory=dict)  # case -> repeats -> outputs
    graphs: list[dict] = field(default_factory=list)  # what each graph computes besides the op
    seconds: float = 0.0
    device_name: str = ""


def graph_problems(text: str, allowed: list[str]) -> dict:
    """What a graph computes besides the puzzle's custom ops, from its MLIR text (as MLIR
    printed it: one operation per line): {"others": [op names], "missing": [ops never
    called], "outputs_from_op": bool}."""
    others, called, results, outputs = [], set(), set(), []
    for line in text.splitlines():
        m = OP_LINE.match(line)
        if not m or line.strip().startswith(("}", "mo.graph")):
            continue
        op = m.group(1)
        custom = CUSTOM.search(line)
        if custom and custom.group(1) in allowed:
            called.add(custom.group(1))
            results.update(re.findall(r"%[\w#]+", line.split("=")[0]))
        elif op == "mo.output":
            outputs = re.findall(r"%[\w#]+", line.split(":")[0])
        elif op not in STRUCTURE:
            others.append(custom.group(1) if custom else op)
    from_op = all(o.split("#")[0] in {r.split("#")[0] for r in results} for o in outputs)
    return {"others": sorted(set(others)), "missing": sorted(set(allowed) - called), "outputs_from_op": from_op}


def libraries(text: str) -> list[str]:
    """The kernel libraries a graph's text names (its `_kernel_library_paths`)."""
    found = LIBRARIES.search(text.split("\n", 1)[0])
    return re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1)) if found else []


def check_graph(text: str, allowed: list[str], kernels: Path) -> dict:
    """graph_problems, and a kernel library other than the workbook's own `.mojoc` counts
    as something else the graph calls."""
    found = graph_problems(text, allowed)
    named = libraries(text)
    foreign = [n for n in named if n != str(kernels)] if named else ["(none)"]
    if foreign:
        found["others"] = sorted({*found["others"], *(f"kernel library {n}" for n in foreign)})
    return found


def bypasses(graph: dict) -> bool:
    return bool(graph["others"] or graph["missing"] or not graph["outputs_from_op"])


def read_arrays(raw: bytes) -> dict[tuple[int, int, int], np.ndarray]:
    """The worker's outputs (worker.write_array): each behind a line naming it, its type a
    number type and its bytes all there; reading stops at anything else."""
    found: dict[tuple[int, int, int], np.ndarray] = {}
    at = 0
    while at < len(raw):
        end = raw.find(b"\n", at, at + 4096)
        if end < 0:
            break
        try:
            head = json.loads(raw[at:end])
            key = tuple(int(k) for k in head["key"])
            dtype = np.dtype(str(head["dtype"]))
            shape = tuple(int(d) for d in head["shape"])
        except (ValueError, TypeError, KeyError, RecursionError):
            break
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        nbytes = count * dtype.itemsize
        if len(key) != 3 or dtype.kind not in ARRAY_DTYPES or min(shape, default=0) < 0 or len(shape) > 8 \
                or nbytes > len(raw) - end - 1:
            break
        found[key] = np.frombuffer(raw, dtype=dtype, count=count, offset=end + 1).reshape(shape).copy()
        at = end + 1 + nbytes
    return found


class Dropped(Exception):
    """The worker was dropped (its kernels failed) while it was being started."""


class GraphWorker:
    """A graph run of one part on one device: started now, collected later. Its own thread
    starts both processes and waits for them (see workbook/child/processes.py). A worker started
    with `hold` builds its graphs and waits: `release` lets it run them, `drop` ends it unrun."""

    def __init__(self, children: Children, puzzle: Puzzle, part: Part, device: str, graph_dir: Path, kernels: Path,
                 cases: list[dict], repeats: int, left=None, hold: bool = False):
        self.children, self.part, self.cases, self.repeats = children, part, cases, repeats
        self.device, self.kernels, self.graph_dir, self.hold = device, kernels, graph_dir, hold
        self.left = left  # seconds left of the whole check's budget, asked as the run goes
        # A graded GPU worker runs only once it holds its GPU's lease (its compiles go on before).
        self.gpu = gpulease.choose() if device == "gpu" and children.graded else None
        self.lease: gpulease.Lease | None = None
        self.started: list[Child] = []  # its processes, as they start
        self.result: GraphRun | None = None
        self._groups_built: list[dict] = []
        self._error: BaseException | None = None
        self._tick = None
        self._released = threading.Event()
        self._dropped = threading.Event()
        self._lock = threading.Lock()
        self._build_dir = Path(tempfile.mkdtemp(prefix=f"workbook-{puzzle.id}-graphbuild-{device}-"))
        self._work_dir = Path(tempfile.mkdtemp(prefix=f"workbook-{puzzle.id}-graph-{device}-"))
        groups: dict[str, dict] = {}
        arrays = {}
        for index, case in enumerate(cases):
            key = json.dumps(case["params"], sort_keys=True)
            groups.setdefault(key, {"params": case["params"], "cases": []})["cases"].append(index)
            for name in part.inputs:
                arrays[f"{index}/{name}"] = case["inputs"][name]
        self.groups = list(groups.values())
        np.savez(self._work_dir / protocol.INPUTS_NPZ, **arrays)
        timeouts = {"load_timeout": settings.load_timeout(), "run_timeout": settings.run_timeout()}
        (self._build_dir / protocol.REQUEST).write_text(json.dumps({
            "graph_dir": str(graph_dir), "kernels": str(kernels), "graph": part.graph, "device": device,
            "groups": [{"params": g["params"]} for g in self.groups], **timeouts}))
        (self._work_dir / protocol.REQUEST).write_text(json.dumps({
            "kernels": str(kernels), "device": device, "inputs": list(part.inputs), "outputs": len(part.outputs),
            "groups": [{"cases": g["cases"]} for g in self.groups], "repeats": repeats, "total": len(cases),
            "wait_timeout": settings.check_budget(), **timeouts}))
        self._thread = threading.Thread(target=self._drive, name=f"graph-{puzzle.id}-{device}", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Let a held worker run its graphs (once they are built and approved)."""
        self._released.set()

    def drop(self) -> None:
        """End the worker without its results (the op's kernels failed)."""
        with self._lock:
            self._dropped.set()
            started = list(self.started)
        for child in started:
            self.children.kill(child)
        self._thread.join()

    def collect(self, tick=None) -> GraphRun:
        self._tick = tick
        self._released.set()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self.result is not None
        return self.result

    # --- its own thread ---------------------------------------------------------

    def _drive(self) -> None:
        channels: list[Channel] = []
        try:
            self.result = self._run(channels)
        except (Cancelled, Dropped):
            self.result = GraphRun("cancelled")
        except BaseException as exc:  # noqa: BLE001 - raised again by collect(), in the caller's thread
            self._error = exc
        finally:
            for child in self.started:
                self.children.kill(child)
            self._free_gpu()
            for channel in channels:
                channel.close()
            shutil.rmtree(self._build_dir, ignore_errors=True)
            shutil.rmtree(self._work_dir, ignore_errors=True)

    def _start(self, module: str, folder: Path, channel: Channel, reads: tuple[Path, ...],
               extra: tuple[int, ...] = ()) -> Child:
        handed = {name: sink for name, sink in channel.sinks.items() if name != "log"}
        fds = ",".join([*(f"{n}:{s.fd}" for n, s in handed.items()), *(f"control:{fd}" for fd in extra)])
        with self._lock:
            if self._dropped.is_set():
                raise Dropped()
            env = {"PYTHONUNBUFFERED": "1", ENV: fds}
            if self.gpu is not None and self.gpu.visible:
                env["CUDA_VISIBLE_DEVICES"] = self.gpu.visible
            child = self.children.start([sys.executable, "-m", module, str(folder)], log=channel["log"],
                                        env=env, cwd=settings.PACKAGE.parent,
                                        memory_extra_mb=limits.runtime_allowance_mb(self.device),
                                        learner=True, scratch=folder, reads=reads,
                                        pass_fds=(*(s.fd for s in handed.values()), *extra))
            self.started.append(child)
        return child

    def _wait(self, child: Child, phase: Sink, until=None) -> Outcome:
        def limit() -> float:
            name, _, since = protocol.read_phase(phase)
            seconds = {"running": settings.run_timeout(),
                       "waiting": settings.check_budget()}.get(name, settings.load_timeout())
            age = time.monotonic() - child.started
            # The child's time counts from the start of its phase.
            value = age - protocol.since(since) + seconds if since else seconds
            return min(value, age + max(0.1, self.left())) if self.left else value

        def tick() -> None:
            if self._tick is not None:
                self._tick(phase)

        outcome = self.children.wait(child, limit, tick, until=until)
        if self._dropped.is_set():
            raise Dropped()
        return outcome

    def _run(self, channels: list[Channel]) -> GraphRun:
        work = Channel("built", "graphs", "outputs", "result", "phase", "log")
        channels.append(work)
        build = Channel("graphs", "phase", "log")
        channels.append(build)
        control, control_w = os.pipe()
        try:
            worker = self._start("workbook.run.worker", self._work_dir, work, (self.kernels,), (control,))
        finally:
            os.close(control)
        try:
            return self._through(worker, work, build, control_w)
        finally:
            os.close(control_w)

    def _through(self, worker: Child, work: Channel, build: Channel, control: int) -> GraphRun:
        builder = self._start("workbook.run.graphbuild", self._build_dir, build, (self.graph_dir, self.kernels))
        outcome = self._wait(builder, build["phase"])
        built_seconds = outcome.seconds
        if outcome.cancelled:
            return GraphRun("cancelled")
        if outcome.timed_out:
            return GraphRun("timeout", msg("run.load_timeout", seconds=int(settings.load_timeout())),
                            seconds=outcome.seconds)
        built = self._built(build["graphs"])
        log = builder.log_text()
        if built is None or outcome.limit is not None:
            why = outcome.limit or (_death(outcome.returncode, log) if outcome.returncode else msg("graph.unreadable"))
            return GraphRun("crash", why, _tail(log), seconds=outcome.seconds)
        if built["status"] == "error":
            return GraphRun("error", output=built["message"], seconds=outcome.seconds)

        self._groups_built = built["groups"]
        _put(work["built"], json.dumps({"groups": built["groups"]}).encode())
        _say(control, protocol.BUILT)
        outcome = self._wait(worker, work["phase"], until=lambda: protocol.read_phase(work["phase"])[0] == "checking")
        if not outcome.reached:
            return self._ended(worker, work, outcome, built_seconds)
        printed = _json(work["graphs"], BUILT_CAP)
        groups = printed.get("groups") if isinstance(printed, dict) else None
        if not isinstance(groups, list) or len(groups) != len(built["groups"]):
            return GraphRun("crash", msg("graph.unreadable"), _tail(worker.log_text()), seconds=outcome.seconds)
        graphs = []
        for texts in groups:
            graphs += [check_graph(str(t), list(self.part.ops), self.kernels) for t in texts]
            if not texts:  # load() never built a graph
                graphs.append({"others": [], "missing": list(self.part.ops), "outputs_from_op": False})
        if any(bypasses(g) for g in graphs):
            return GraphRun("ok", graphs=graphs)  # a graph that bypasses the op is reported, not run
        _say(control, protocol.BUILD)
        if self.hold:
            outcome = self._wait(worker, work["phase"], until=self._released.is_set)
            if not outcome.reached:
                return self._ended(worker, work, outcome, built_seconds, graphs)
        if self.gpu is not None:  # a graded run: its GPU's lease first, held till the worker is gone
            outcome = self._wait(worker, work["phase"], until=self._take_gpu)
            if not outcome.reached:
                if outcome.timed_out:
                    return GraphRun("timeout", msg("gpu.busy"), seconds=outcome.seconds)
                return self._ended(worker, work, outcome, built_seconds, graphs)
        _say(control, protocol.RUN)
        outcome = self._wait(worker, work["phase"])
        if self.lease is not None:
            worker.gone(GPU_SETTLE)  # the GPU is handed on once the driver let the worker go
            self._free_gpu()
        return self._ended(worker, work, outcome, built_seconds, graphs)

    def _take_gpu(self) -> bool:
        """One try at this worker's GPU's lease (asked at each look while it waits)."""
        if self.lease is None:
            self.lease = gpulease.try_hold([self.gpu])
        return self.lease is not None

    def _free_gpu(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def _built(self, sink: Sink) -> dict | None:
        """What the first process handed over, if it is what it should be: every shape's
        graphs as text, and which of them load() returned."""
        found = _json(sink, BUILT_CAP)
        if not isinstance(found, dict) or found.get("status") not in ("ok", "error"):
            return None
        if found["status"] == "error":
            return {"status": "error", "message": str(found.get("message", ""))}
        groups = found.get("groups")
        if not isinstance(groups, list) or len(groups) != len(self.groups):
            return None
        for group in groups:
            texts = group.get("graphs") if isinstance(group, dict) else None
            if not isinstance(texts, list) or not all(isinstance(t, str) and len(t) <= TEXT_CAP for t in texts):
                return None
            model = group.get("model")
            if model is not None and not (isinstance(model, int) and 0 <= model < len(texts)):
                return None
        return {"status": "ok", "groups": [{"graphs": g["graphs"], "model": g.get("model"),
                                            "returned": str(g.get("returned", ""))[:100],
                                            "where": _where(g.get("where"), g.get("model"))} for g in groups]}

    def _ended(self, worker: Child, work: Channel, outcome: Outcome, built_seconds: float,
               graphs: list[dict] | None = None) -> GraphRun:
        """The worker's run, from what it handed back once it ended."""
        if outcome.cancelled:
            return GraphRun("cancelled")
        phase, _, _ = protocol.read_phase(work["phase"])
        if outcome.timed_out:
            key = "run.timeout" if phase == "running" else "run.load_timeout"
            limit = settings.run_timeout() if phase == "running" else settings.load_timeout()
            return GraphRun("timeout", msg(key, seconds=int(limit)), seconds=outcome.seconds)
        result = protocol.read_result(work["result"])
        log = worker.log_text()
        if result is None or outcome.limit is not None or result.get("status") not in (
                "ok", "error", "compile_error"):
            return GraphRun("crash", outcome.limit or _death(outcome.returncode, log), _tail(log),
                            seconds=outcome.seconds)
        seconds = result.get("seconds")
        output = str(result.get("message", ""))
        group = result.get("group")
        if result["status"] != "ok" and isinstance(group, int) and 0 <= group < len(self._groups_built):
            where = self._groups_built[group]["where"]  # the line of the learner's file that asked for it
            output = f"{where}\n{output}" if where else output
        run = GraphRun(result["status"], output=output,
                       seconds=built_seconds + (seconds if isinstance(seconds, (int, float)) else outcome.seconds),
                       graphs=graphs or [], device_name=str(result.get("device_name", "")))
        if run.status == "ok":
            file_cap = settings.file_limit_mb() * limits.MB
            arrays = read_arrays(work["outputs"].read(file_cap or BUILT_CAP * 16))
            count = len(self.part.outputs)
            for index in range(len(self.cases)):
                reps = [[arrays.get((index, rep, k)) for k in range(count)] for rep in range(self.repeats)]
                if all(a is not None for rep in reps for a in rep):
                    run.outputs[index] = reps
        return run


def _where(where, model) -> str:
    """Where load() gave the graph it returned, as the first process said (shown, never acted on)."""
    if not isinstance(where, list) or not isinstance(model, int) or not 0 <= model < len(where):
        return ""
    return str(where[model])[:2000]


def _json(sink: Sink, cap: int):
    raw = sink.read(cap)
    if sink.size() > cap:
        return None
    try:
        return json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return None


def _put(sink: Sink, data: bytes) -> None:
    os.ftruncate(sink.fd, 0)
    done = 0
    while done < len(data):
        done += os.pwrite(sink.fd, data[done:], done)


def _say(control: int, what: bytes) -> None:
    """One byte on the worker's control pipe (never blocks: the pipe holds three at most);
    a worker that ended is found by the wait that follows."""
    try:
        os.write(control, what)
    except OSError:
        pass
