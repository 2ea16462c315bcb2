"""The child process that runs an op puzzle's MAX graph on one device.

Kept apart from the workbook's own process on purpose: the learner's code may
crash, fault the GPU or loop forever, and the parent only reads the files this
process leaves behind (workbook/protocol.py). It enforces its own time limits
too, so it never outlives a workbook that was killed.

It also checks what the graph is made of: a pass must come from the learner's
custom op, so a graph with any other computation in it (MAX's built-in
softmax, say) is reported rather than run.

Usage: python -m workbook.worker RUN_DIR   (RUN_DIR/request.json says what to do)
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

from . import protocol

COMPILE_ERROR = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ", re.MULTILINE)
OP_LINE = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?([\w.]+)")
CUSTOM = re.compile(r'mo\.custom \[symbol = "([^"]+)"')
STRUCTURE = {"mo.chain.create", "mo.output", "mo.graph"}


def _load_function(folder: Path, entry: str):
    file_name, _, func_name = entry.partition(":")
    path = folder / file_name
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"puzzle_graph_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, func_name)


def _learner_trace(exc: BaseException, folder: Path) -> str:
    """The traceback frames in the puzzle's own files, then the error itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(folder) in f.filename]
    lines = [f"{Path(f.filename).relative_to(folder)}:{f.lineno} in {f.name}: {f.line}" for f in frames]
    return "\n".join(lines + [f"{type(exc).__name__}: {exc}"])


def graph_problems(text: str, allowed: list[str]) -> dict:
    """What a graph computes besides the puzzle's custom ops, from its MLIR text:
    {"others": [op names], "missing": [ops never called], "unused": bool}."""
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


class _Recording:
    """The session the learner's load() sees: it keeps every graph it compiles."""

    def __init__(self, session):
        self._session = session
        self.graphs: list = []

    def load(self, graph, *args, **kwargs):
        self.graphs.append(graph)
        return self._session.load(graph, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._session, name)


def _watchdog(run_dir: Path, limits: dict[str, float]) -> None:
    """End this process past a phase's time limit, even if the parent is gone."""
    def watch() -> None:
        while True:
            phase, _, since = protocol.read_phase(run_dir)
            limit = limits.get(phase)
            if limit and since and protocol.since(since) > limit + 5:
                os._exit(124)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _await_go(run_dir: Path) -> None:
    """Hold the built graphs until the workbook writes GO (its kernels passed); a
    worker whose kernels failed is killed while it waits."""
    protocol.write_phase(run_dir, protocol.Phase.WAITING)
    while not (run_dir / protocol.GO).exists():
        time.sleep(0.02)


def main(run_dir: Path) -> int:
    request = json.loads((run_dir / protocol.REQUEST).read_text())
    folder = Path(request["graph_dir"])
    _watchdog(run_dir, {"loading": request["load_timeout"], "running": request["run_timeout"],
                        "waiting": request["wait_timeout"]})
    result: dict = {"status": protocol.Status.OK.value, "graphs": []}
    protocol.write_phase(run_dir, protocol.Phase.LOADING)
    started = time.monotonic()
    try:
        from max.driver import CPU, Accelerator, Buffer
        from max.engine import InferenceSession

        device = Accelerator() if request["device"] == "gpu" else CPU()
        result["device_name"] = getattr(device, "label", request["device"])
        session = _Recording(InferenceSession(devices=[device]))
        load = _load_function(folder, request["graph"])
        inputs = np.load(run_dir / protocol.INPUTS_NPZ)
        outputs: dict[str, np.ndarray] = {}
        models = []  # every shape's graph is built before any runs: a held worker builds early
        for group in request["groups"]:
            protocol.write_phase(run_dir, protocol.Phase.LOADING)
            model = load(session, device, Path(request["kernels"]), **group["params"])
            for graph in session.graphs[len(result["graphs"]):]:
                result["graphs"].append(graph_problems(str(graph), request["ops"]))
            if not session.graphs:
                result["graphs"].append({"others": [], "missing": request["ops"], "outputs_from_op": False})
            if any(g["others"] or g["missing"] or not g["outputs_from_op"] for g in result["graphs"]):
                models = []
                break  # a graph that bypasses the op is reported, not run
            models.append((group, model))
        if models and request["hold"]:
            waited = time.monotonic()
            _await_go(run_dir)
            started += time.monotonic() - waited  # the time it took is the graphs' own, not the wait
        for group, model in models:
            for case in group["cases"]:
                protocol.write_phase(run_dir, protocol.Phase.RUNNING, case + 1, request["total"])
                buffers = [Buffer.from_numpy(np.ascontiguousarray(inputs[f"{case}/{n}"])).to(device)
                           for n in request["inputs"]]
                for rep in range(request["repeats"]):
                    got = model.execute(*buffers)
                    if len(got) != request["outputs"]:
                        raise ValueError(f"the graph returned {len(got)} outputs; "
                                         f"this puzzle expects {request['outputs']}")
                    for k, value in enumerate(got):
                        outputs[f"{case}/{rep}/{k}"] = value.to(CPU()).to_numpy().copy()
        np.savez(run_dir / protocol.OUTPUTS_NPZ, **outputs)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a status for the report
        text = f"{exc}"
        if COMPILE_ERROR.search(text):
            result.update(status=protocol.Status.COMPILE_ERROR.value, message=text)
        else:
            result.update(status=protocol.Status.ERROR.value, message=_learner_trace(exc, folder))
    result["seconds"] = time.monotonic() - started
    (run_dir / protocol.RESULT).write_text(json.dumps(result))
    protocol.write_phase(run_dir, protocol.Phase.DONE)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
