"""Running a puzzle part on one device, in an isolated child process with time limits.

Two limits: building the graph (MAX's compile, slow when cold) may take up to
`load_timeout`; once built, running the kernels may take `run_timeout`, so an
endless loop is stopped quickly without cutting a cold compile short.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .build import Workspace
from .catalog import Part

LOAD_TIMEOUT = float(os.environ.get("WORKBOOK_LOAD_TIMEOUT", 600))
RUN_TIMEOUT = float(os.environ.get("WORKBOOK_RUN_TIMEOUT", 60))


@dataclass
class RawRun:
    """What came back from the child: outputs per case and repeat, or why there are none."""

    status: str  # ok | compile_error | crash | timeout
    message: str = ""
    outputs: dict[int, list[list[np.ndarray]]] = field(default_factory=dict)  # case -> reps -> outputs
    seconds: float = 0.0
    device_name: str = ""


class DeviceRun:
    """A child process running one part on one device; started now, collected later.

    Starting CPU and GPU runs before collecting either lets them build in parallel."""

    def __init__(self, ws: Workspace, part: Part, device: str, cases: list[dict], repeats: int,
                 prefix: list[str] | None = None, env: dict[str, str] | None = None):
        """`prefix` runs the child under another program (compute-sanitizer), with `env` added."""
        self.part, self.device, self.cases, self.repeats = part, device, cases, repeats
        self.dir = Path(tempfile.mkdtemp(prefix=f"workbook-{ws.puzzle.id}-{device}-"))
        groups: dict[str, dict] = {}
        arrays = {}
        for index, case in enumerate(cases):
            key = json.dumps(case["params"], sort_keys=True)
            groups.setdefault(key, {"params": case["params"], "cases": []})["cases"].append(index)
            for name in part.inputs:
                arrays[f"{index}/{name}"] = case["inputs"][name]
        np.savez(self.dir / "inputs.npz", **arrays)
        request = {
            "workspace": str(ws.dir), "kernels": str(ws.mojoc), "graph": part.graph,
            "device": device, "inputs": list(part.inputs), "outputs": len(part.outputs),
            "groups": list(groups.values()), "repeats": repeats,
        }
        (self.dir / "request.json").write_text(json.dumps(request))
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        self.start = time.perf_counter()
        # The child's output goes to a file: a pipe nobody reads until the end would
        # fill up and stall a chatty compile.
        with open(self.dir / "log.txt", "wb") as log:
            self.proc = subprocess.Popen(
                [*(prefix or []), sys.executable, "-m", "workbook.worker", str(self.dir)],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                cwd=str(Path(__file__).resolve().parent.parent),
            )

    def _phase(self) -> tuple[str, float]:
        try:
            name, stamp = (self.dir / "phase").read_text().split()
            return name, float(stamp)
        except (OSError, ValueError):
            return "starting", self.start_wall

    @property
    def start_wall(self) -> float:
        return time.time() - (time.perf_counter() - self.start)

    def cancel(self) -> None:
        """Stop the child and everything it started (watch mode calls this on a newer save)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def collect(self) -> RawRun:
        timed_out = ""
        while self.proc.poll() is None:
            phase, since = self._phase()
            limit = RUN_TIMEOUT if phase == "running" else LOAD_TIMEOUT
            if time.time() - since > limit:
                timed_out = (f"still running the kernels after {RUN_TIMEOUT:.0f} s: an endless loop, "
                             "or a barrier that not every thread reaches?" if phase == "running"
                             else f"building the graph took over {LOAD_TIMEOUT:.0f} s")
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - self.start
        if timed_out:
            self.cancel()
            return RawRun("timeout", timed_out, seconds=seconds)
        log = (self.dir / "log.txt").read_text(errors="replace")
        result_file = self.dir / "result.json"
        if not result_file.exists():
            code = self.proc.returncode
            why = f"the run died (signal {-code})" if code and code < 0 else f"the run died (exit code {code})"
            self.cancel()
            return RawRun("crash", f"{why}\n{log[-2000:]}".strip(), seconds=seconds)
        result = json.loads(result_file.read_text())
        raw = RawRun(result["status"], result.get("message", ""), seconds=seconds,
                     device_name=result.get("device_name", ""))
        if raw.status == "ok":
            with np.load(self.dir / "outputs.npz") as data:
                for index in range(len(self.cases)):
                    raw.outputs[index] = [
                        [data[f"{index}/{rep}/{k}"] for k in range(len(self.part.outputs))]
                        for rep in range(self.repeats)
                    ]
        self.cancel()
        return raw
