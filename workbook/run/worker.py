"""The child process that compiles and runs an op puzzle's MAX graph on one device.

The second of a graph run's two processes (workbook/run/graphrun.py). It imports
nothing of the learner's: the learner's graph file ran in the first one
(workbook/run/graphbuild.py), which handed over each graph as MLIR text. Here, as
the workbook tells it over its control pipe:

1. it reads those texts as MAX reads them (one `mo.graph` each), names the
   workbook's own `.mojoc` as their kernel library, and hands them back printed
   by MLIR itself: the workbook checks what each graph computes on that (a
   pass must come from the learner's custom op, not MAX's softmax, say);
2. once the workbook approves, it compiles exactly what it parsed, with the
   workbook's `.mojoc`, and waits to be told to run (a held worker builds while
   the kernels are still being judged);
3. it runs each case and hands back the outputs and a result.

Everything goes through descriptors the workbook opened (workbook/child/channel.py):
the learner's op runs in this process, so nothing it could leave in the run
folder is read. It enforces its own time limits too, so it never outlives a
workbook that was killed.

Usage: python -m workbook.run.worker RUN_DIR   (RUN_DIR/request.json, RUN_DIR/inputs.npz;
WORKBOOK_FDS=control:N,graphs:N,outputs:N,result:N,phase:N)
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np

from ..child import protocol
from .graphbuild import descriptors, put

COMPILE_ERROR = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ", re.MULTILINE)
KERNEL_LIBRARIES = "_kernel_library_paths"
MESSAGE_CAP = 64 << 20  # the graphs' text, every shape's


class Stopped(Exception):
    """The workbook closed the control pipe: nothing more to do."""


class Worker:
    def __init__(self, run_dir: Path) -> None:
        self.fds = descriptors()
        self.request = json.loads((run_dir / protocol.REQUEST).read_text())
        self.run_dir = run_dir
        self.phase = ("starting", time.monotonic())
        self.lock = threading.Lock()

    def set_phase(self, phase: protocol.Phase, *values: int) -> None:
        with self.lock:
            self.phase = (phase.value, time.monotonic())
        put(self.fds["phase"], protocol.phase_text(phase, *values))

    def watchdog(self) -> None:
        """End this process past a phase's time limit, even if the workbook is gone."""
        limits = {"loading": self.request["load_timeout"], "checking": self.request["load_timeout"],
                  "running": self.request["run_timeout"], "waiting": self.request["wait_timeout"]}

        def watch() -> None:
            while True:
                with self.lock:
                    phase, since = self.phase
                limit = limits.get(phase)
                if limit and time.monotonic() - since > limit + 5:
                    os._exit(124)
                time.sleep(0.5)

        threading.Thread(target=watch, daemon=True).start()

    def expect(self, what: bytes) -> None:
        """Wait for the workbook's word on the control pipe (protocol.BUILT, BUILD, RUN);
        Stopped when it closed the pipe instead, or said something else."""
        if os.read(self.fds["control"], 1) != what:
            raise Stopped()

    def built(self) -> dict:
        """The first process's graphs, as the workbook passed them on (its `built` descriptor)."""
        fd = self.fds["built"]
        size = os.fstat(fd).st_size
        if size > MESSAGE_CAP:
            raise ValueError("the graphs' text is too large")
        data, done = bytearray(), 0
        while done < size:
            chunk = os.pread(fd, size - done, done)
            if not chunk:
                break
            data += chunk
            done += len(chunk)
        return json.loads(bytes(data))


def parse(text: str, kernels: str, context):
    """One graph's text, as MLIR reads it: (its module for MAX, its text as MLIR prints it).
    It must hold one `mo.graph` and nothing else; its kernel library is the workbook's."""
    from max import mlir
    from max.graph.graph import Operation

    module = mlir.Module.parse("module {\n" + text + "\n}", context)
    ops = list(module.body.operations)
    if len(ops) != 1 or ops[0].operation.name != "mo.graph":
        raise ValueError("the graph's text is not one graph")
    graph = ops[0].operation
    graph.attributes[KERNEL_LIBRARIES] = mlir.ArrayAttr.get([mlir.StringAttr.get(kernels, context)])
    printed = str(graph)
    bytecode = io.BytesIO()
    module.operation.write_bytecode(bytecode)
    return Operation.from_bytecode(bytecode.getvalue(), context), printed


def write_array(out, key: tuple[int, int, int], array: np.ndarray) -> None:
    """One output behind a line that names it (case, repeat, output) and says its type and shape."""
    array = np.ascontiguousarray(array)
    head = {"key": list(key), "dtype": array.dtype.str, "shape": list(array.shape)}
    out.write(json.dumps(head).encode() + b"\n")
    out.write(array.tobytes())


def main(run_dir: Path) -> int:
    worker = Worker(run_dir)
    request = worker.request
    worker.watchdog()
    result: dict = {"status": protocol.Status.OK.value}
    started = time.monotonic()
    try:
        from max.driver import CPU, Accelerator, Buffer
        from max.engine import InferenceSession
        from max.graph import Module
        from max.graph.graph import _graph, default_mlir_context

        device = Accelerator() if request["device"] == "gpu" else CPU()
        result["device_name"] = getattr(device, "label", request["device"])
        session = InferenceSession(devices=[device])
        inputs = np.load(run_dir / protocol.INPUTS_NPZ)
        context = default_mlir_context()
        _graph._init_and_register_max_context(context)

        worker.expect(protocol.BUILT)
        built = worker.built()  # the first process's graphs, as it wrote them
        started = time.monotonic()  # the graphs' own time starts here (the first process's is added)
        worker.set_phase(protocol.Phase.LOADING)
        modules, printed = [], []
        with context:
            for group in built["groups"]:
                parsed = [parse(text, request["kernels"], context) for text in group["graphs"]]
                modules.append(parsed[group["model"]][0] if group["model"] is not None else None)
                printed.append([text for _, text in parsed])
        put(worker.fds["graphs"], json.dumps({"groups": printed}).encode())
        worker.set_phase(protocol.Phase.CHECKING)
        worker.expect(protocol.BUILD)  # approved: nothing in them but the learner's op

        models = []
        for index, (group, module, raw) in enumerate(zip(request["groups"], modules, built["groups"])):
            result["group"] = index  # an error now is this graph's: the workbook says where load() gave it
            worker.set_phase(protocol.Phase.LOADING)
            if module is None:
                raise AttributeError(f"'{raw.get('returned', 'NoneType')}' object has no attribute 'execute'")
            models.append((group, session.load(Module(module), custom_extensions=[Path(request["kernels"])])))
        result.pop("group", None)
        worker.set_phase(protocol.Phase.WAITING)
        waited = time.monotonic()
        worker.expect(protocol.RUN)  # go: the op's kernels passed
        started += time.monotonic() - waited  # the time it took is the graphs' own, not the wait
        with os.fdopen(os.dup(worker.fds["outputs"]), "wb") as out:
            for group, model in models:
                for case in group["cases"]:
                    worker.set_phase(protocol.Phase.RUNNING, case + 1, request["total"])
                    buffers = [Buffer.from_numpy(np.ascontiguousarray(inputs[f"{case}/{n}"])).to(device)
                               for n in request["inputs"]]
                    for rep in range(request["repeats"]):
                        got = model.execute(*buffers)
                        if len(got) != request["outputs"]:
                            raise ValueError(f"the graph returned {len(got)} outputs; "
                                             f"this puzzle expects {request['outputs']}")
                        for k, value in enumerate(got):
                            write_array(out, (case, rep, k), value.to(CPU()).to_numpy())
    except Stopped:
        return 0
    except Exception as exc:  # noqa: BLE001 - every failure becomes a status for the report
        text = f"{exc}"
        status = protocol.Status.COMPILE_ERROR if COMPILE_ERROR.search(text) else protocol.Status.ERROR
        result.update(status=status.value, message=text if status == protocol.Status.COMPILE_ERROR
                      else f"{type(exc).__name__}: {exc}")
    result["seconds"] = time.monotonic() - started
    put(worker.fds["result"], json.dumps(result).encode())
    worker.set_phase(protocol.Phase.DONE)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
