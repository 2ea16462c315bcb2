"""Running an op puzzle's MAX graph on one device, in a worker child process.

Two limits: building the graph (MAX's compile, slow when cold) may take up to
the load limit; once built, running the kernels may take the run limit, so an
endless loop is stopped quickly without cutting a cold compile short.

A graded run's GPU worker builds its graphs on the GPU it was given, then waits
(held) until the workbook holds a lease on that GPU (workbook/gpulease.py), and
only then runs them: MAX's compiles go on side by side, the runs one at a time.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import gpulease, protocol, settings
from .catalog import Part, Puzzle
from .i18n import Msg, msg
from .kernelrun import GPU_SETTLE, _death, _tail
from .processes import Children


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


class GraphWorker:
    """A worker running one part's graph on one device: started now, collected later,
    by the same thread (see workbook/processes.py). A worker started with `hold` builds
    its graphs and waits: `release` lets it run them, `drop` ends it unrun."""

    def __init__(self, children: Children, puzzle: Puzzle, part: Part, device: str, graph_dir: Path, kernels: Path,
                 cases: list[dict], repeats: int, left=None, hold: bool = False):
        self.children, self.part, self.cases, self.repeats = children, part, cases, repeats
        self.left = left  # seconds left of the whole check's budget, asked as the run goes
        # A graded GPU worker runs only once it holds its GPU: it is held until then.
        self.gpu = gpulease.choose() if device == "gpu" and children.graded else None
        self.lease: gpulease.Lease | None = None
        self.may_run = not hold
        hold = hold or self.gpu is not None
        self.dir = Path(tempfile.mkdtemp(prefix=f"workbook-{puzzle.id}-graph-{device}-"))
        groups: dict[str, dict] = {}
        arrays = {}
        for index, case in enumerate(cases):
            key = json.dumps(case["params"], sort_keys=True)
            groups.setdefault(key, {"params": case["params"], "cases": []})["cases"].append(index)
            for name in part.inputs:
                arrays[f"{index}/{name}"] = case["inputs"][name]
        np.savez(self.dir / protocol.INPUTS_NPZ, **arrays)
        request = {
            "graph_dir": str(graph_dir), "kernels": str(kernels), "graph": part.graph, "device": device,
            "inputs": list(part.inputs), "outputs": len(part.outputs), "groups": list(groups.values()),
            "repeats": repeats, "ops": list(part.ops), "total": len(cases),
            "load_timeout": settings.load_timeout(), "run_timeout": settings.run_timeout(),
            "hold": hold, "wait_timeout": settings.check_budget(),
        }
        (self.dir / protocol.REQUEST).write_text(json.dumps(request))
        env = {"PYTHONUNBUFFERED": "1"}
        if self.gpu is not None and self.gpu.visible:
            env["CUDA_VISIBLE_DEVICES"] = self.gpu.visible
        self.child = children.start([sys.executable, "-m", "workbook.worker", str(self.dir)],
                                    log=self.dir / protocol.LOG, env=env,
                                    cwd=settings.PACKAGE.parent, learner=True, scratch=self.dir,
                                    reads=(graph_dir, kernels))

    def release(self) -> None:
        """Let a held worker run its graphs (once they are built; a graded GPU worker once
        its GPU is held too)."""
        self.may_run = True
        if self.gpu is None:
            (self.dir / protocol.GO).touch()

    def _take_gpu(self) -> None:
        """At each look while collecting: a graded GPU worker whose graphs are built gets
        its GPU's lease as soon as one is free, and runs."""
        if self.gpu is None or self.lease is not None or not self.may_run:
            return
        if protocol.read_phase(self.dir)[0] == protocol.Phase.WAITING.value:
            self.lease = gpulease.try_hold([self.gpu])
            if self.lease is not None:
                (self.dir / protocol.GO).touch()

    def _free_gpu(self) -> None:
        if self.lease is not None:
            self.child.gone(GPU_SETTLE)  # the GPU is handed on once the driver let the worker go
            self.lease.release()
            self.lease = None

    def drop(self) -> None:
        """End the worker without its results (the op's kernels failed)."""
        self.children.kill(self.child)
        self._free_gpu()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _limit(self) -> float:
        phase, _, since = protocol.read_phase(self.dir)
        limit = {"running": settings.run_timeout(),
                 "waiting": settings.check_budget()}.get(phase, settings.load_timeout())
        # The child's time counts from the start of its phase.
        value = self.child_age() - protocol.since(since) + limit if since else limit
        return min(value, self.child_age() + max(0.1, self.left())) if self.left else value

    def child_age(self) -> float:
        return time.monotonic() - self.child.started

    def collect(self, tick=None) -> GraphRun:
        def look() -> None:
            self._take_gpu()
            if tick:
                tick(self.dir)

        try:
            outcome = self.children.wait(self.child, self._limit, look)
            self._free_gpu()
            if outcome.cancelled:
                return GraphRun("cancelled")
            phase, _, _ = protocol.read_phase(self.dir)
            if outcome.timed_out and phase == "waiting" and self.gpu is not None:
                return GraphRun("timeout", msg("gpu.busy"), seconds=outcome.seconds)
            if outcome.timed_out:
                key = "run.timeout" if phase == "running" else "run.load_timeout"
                limit = settings.run_timeout() if phase == "running" else settings.load_timeout()
                return GraphRun("timeout", msg(key, seconds=int(limit)), seconds=outcome.seconds)
            result = protocol.read_result(self.dir)
            log = self.child.log_text()
            if result is None or outcome.limit is not None:
                return GraphRun("crash", outcome.limit or _death(outcome.returncode, log), _tail(log),
                                seconds=outcome.seconds)
            run = GraphRun(result["status"], output=result.get("message", ""),
                           seconds=result.get("seconds", outcome.seconds),
                           graphs=result.get("graphs", []), device_name=result.get("device_name", ""))
            if run.status == "ok" and (self.dir / protocol.OUTPUTS_NPZ).exists():
                with np.load(self.dir / protocol.OUTPUTS_NPZ) as data:
                    for index in range(len(self.cases)):
                        if f"{index}/0/0" not in data:
                            continue
                        run.outputs[index] = [[data[f"{index}/{rep}/{k}"] for k in range(len(self.part.outputs))]
                                              for rep in range(self.repeats)]
            return run
        finally:
            self._free_gpu()
            shutil.rmtree(self.dir, ignore_errors=True)
