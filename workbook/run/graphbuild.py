"""The child process that runs an op puzzle's graph file, and hands over its graphs as text.

The first of a graph run's two processes (workbook/run/graphrun.py): it imports
the learner's Python file and calls its `load(session, device, kernels,
**params)` for each shape, with a session whose `load` only records the graph
it is given (nothing is compiled here). Each graph's MLIR text, and which of
them `load` returned, go to the descriptor the workbook opened for them
(workbook/child/channel.py). The learner's Python may write anything there: the
workbook only ever runs the text it read there, after it checked that text as
MAX itself reads it (workbook/run/worker.py, the second process, imports nothing
of the learner's).

Usage: python -m workbook.run.graphbuild RUN_DIR   (RUN_DIR/request.json says what to do;
WORKBOOK_FDS=graphs:N,phase:N says where to write)
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path

from ..child import protocol
from ..child.channel import ENV

TEXT_CAP = 4 << 20  # one graph's text: p18's is under 1 kB; a graph past this is refused


def descriptors() -> dict[str, int]:
    """WORKBOOK_FDS, read and then removed from the environment (the learner's code runs next)."""
    found = {}
    for item in os.environ.pop(ENV, "").split(","):
        name, _, fd = item.partition(":")
        if name and fd.isdigit():
            found[name] = int(fd)
            os.set_inheritable(int(fd), False)
    return found


def put(fd: int, data: bytes) -> None:
    """`data` as all the descriptor's file holds."""
    os.ftruncate(fd, 0)
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], done)


def load_function(folder: Path, entry: str):
    file_name, _, func_name = entry.partition(":")
    path = folder / file_name
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"puzzle_graph_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, func_name)


def learner_frames(frames: list[traceback.FrameSummary], folder: Path) -> list[str]:
    """The frames in the puzzle's own files, one line each."""
    return [f"{Path(f.filename).relative_to(folder)}:{f.lineno} in {f.name}: {f.line}" for f in frames
            if str(folder) in f.filename]


def learner_trace(exc: BaseException, folder: Path) -> str:
    """The traceback frames in the puzzle's own files, then the error itself."""
    return "\n".join(learner_frames(traceback.extract_tb(exc.__traceback__), folder) + [f"{type(exc).__name__}: {exc}"])


class Built:
    """What the recording session's `load` returns: which graph it was given."""

    def __init__(self, index: int) -> None:
        self.index = index


class Recording:
    """The session the learner's load() sees: it keeps every graph it is given, and where in
    the learner's file it was given (a compile error is reported there), and compiles
    nothing (the workbook's own worker compiles the text, once checked)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.graphs: list = []
        self.where: list[str] = []

    def load(self, graph, *args, **kwargs) -> Built:  # noqa: ARG002 - the real session's signature
        self.graphs.append(graph)
        self.where.append("\n".join(learner_frames(traceback.extract_stack()[:-1], self.folder)))
        return Built(len(self.graphs) - 1)


def _watchdog(seconds: float) -> None:
    """End this process past its time limit, even if the workbook is gone."""
    def watch() -> None:
        time.sleep(seconds + 5)
        os._exit(124)

    threading.Thread(target=watch, daemon=True).start()


def main(run_dir: Path) -> int:
    fds = descriptors()
    request = json.loads((run_dir / protocol.REQUEST).read_text())
    folder = Path(request["graph_dir"])
    _watchdog(request["load_timeout"])
    if "phase" in fds:
        put(fds["phase"], protocol.phase_text(protocol.Phase.LOADING))
    result: dict = {"status": protocol.Status.OK.value, "groups": []}
    try:
        from max.driver import CPU, Accelerator

        device = Accelerator() if request["device"] == "gpu" else CPU()
        load = load_function(folder, request["graph"])
        for group in request["groups"]:
            session = Recording(folder)
            model = load(session, device, Path(request["kernels"]), **group["params"])
            texts = [str(graph) for graph in session.graphs]
            result["groups"].append({"graphs": texts, "model": model.index if isinstance(model, Built) else None,
                                     "returned": type(model).__name__, "where": session.where})
    except Exception as exc:  # noqa: BLE001 - every failure becomes a status for the report
        result = {"status": protocol.Status.ERROR.value, "message": learner_trace(exc, folder)}
    put(fds["graphs"], json.dumps(result).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
