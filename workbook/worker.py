"""The child process that runs a puzzle's graph on one device.

Kept apart from the workbook's own process on purpose: the learner's code may
crash, fault the GPU or loop forever, and the parent only reads the files this
process leaves behind (`result.json`, `outputs.npz`, `phase`).

Usage: python -m workbook.worker RUN_DIR   (RUN_DIR/request.json says what to do)
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
import traceback
from pathlib import Path

import numpy as np

COMPILE_ERROR = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ", re.MULTILINE)


def _phase(run_dir: Path, name: str) -> None:
    (run_dir / "phase").write_text(f"{name} {time.time()}")


def _load_function(workspace: Path, entry: str):
    file_name, _, func_name = entry.partition(":")
    path = workspace / file_name
    sys.path.insert(0, str(workspace))
    spec = importlib.util.spec_from_file_location(f"puzzle_graph_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, func_name)


def _learner_trace(exc: BaseException, workspace: Path) -> str:
    """The traceback frames in the puzzle's own files, then the error itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(workspace) in f.filename]
    lines = [f"{Path(f.filename).relative_to(workspace)}:{f.lineno} in {f.name}: {f.line}" for f in frames]
    return "\n".join(lines + [f"{type(exc).__name__}: {exc}"])


def main(run_dir: Path) -> int:
    request = json.loads((run_dir / "request.json").read_text())
    workspace = Path(request["workspace"])
    result: dict = {"status": "ok", "loads": [], "device_name": ""}
    _phase(run_dir, "loading")
    try:
        from max.driver import CPU, Accelerator, Buffer
        from max.engine import InferenceSession

        device = Accelerator() if request["device"] == "gpu" else CPU()
        result["device_name"] = getattr(device, "label", request["device"])
        session = InferenceSession(devices=[device])
        load = _load_function(workspace, request["graph"])
        inputs = np.load(run_dir / "inputs.npz")
        outputs: dict[str, np.ndarray] = {}
        for group in request["groups"]:
            _phase(run_dir, "loading")
            start = time.perf_counter()
            model = load(session, device, Path(request["kernels"]), **group["params"])
            result["loads"].append(time.perf_counter() - start)
            _phase(run_dir, "running")
            for case in group["cases"]:
                names = request["inputs"]
                buffers = [Buffer.from_numpy(np.ascontiguousarray(inputs[f"{case}/{n}"])).to(device)
                           for n in names]
                for rep in range(request["repeats"]):
                    got = model.execute(*buffers)
                    if len(got) != request["outputs"]:
                        raise ValueError(f"the graph returned {len(got)} outputs; "
                                         f"this puzzle expects {request['outputs']}")
                    for k, value in enumerate(got):
                        outputs[f"{case}/{rep}/{k}"] = value.to(CPU()).to_numpy().copy()
        np.savez(run_dir / "outputs.npz", **outputs)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a status for the report
        text = f"{exc}"
        if COMPILE_ERROR.search(text):
            result.update(status="compile_error", message=text)
        else:
            result.update(status="crash", message=_learner_trace(exc, workspace))
    (run_dir / "result.json").write_text(json.dumps(result))
    _phase(run_dir, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
