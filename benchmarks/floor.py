"""The floor: puzzle 18's softmax op run through MAX with nothing of the workbook in between.

This is also how the puzzle is run without the workbook ("the plain sequential
flow"): `mojo precompile` the op package, then build and run the graph on the
CPU, then on the GPU if there is one, one after the other, in one process.

    python benchmarks/floor.py [--work DIR] [--keep-mojoc] [--json]

It uses the reference solution (solutions/p18 over puzzles/p18) and the
solution's own `softmax_graph.load`, so MAX compiles the same graph the
workbook does. The op package is copied into --work (a temp folder unless
given) and precompiled there to op.mojoc; with --keep-mojoc an existing
op.mojoc in --work is reused (the warm case). Which caches are warm is up to
the caller: MAX's compiled graphs live in MODULAR_CACHE_DIR (~/.cache/modular).

Each output is checked against a NumPy softmax; the exit code is 0 only if all
devices matched. With --json, one JSON object with the phase timings is the
last line of stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = time.perf_counter()

import numpy as np  # noqa: E402 - timed from the very start of the script

ROOT = Path(__file__).resolve().parent.parent
SIZE = 128
ATOL, RTOL = 1e-6, 1e-4


def mojo_binary() -> str:
    beside = Path(sys.executable).parent / "mojo"
    return str(beside) if beside.exists() else (shutil.which("mojo") or "mojo")


def stage_op(work: Path, source: Path | None) -> Path:
    """The op package as work/op: `source` (an op folder), else puzzles/p18/op with
    the solution's files over it."""
    op = work / "op"
    shutil.rmtree(op, ignore_errors=True)
    if source is not None:
        shutil.copytree(source, op, ignore=shutil.ignore_patterns("__pycache__"))
        return op
    shutil.copytree(ROOT / "puzzles" / "p18" / "op", op, ignore=shutil.ignore_patterns("__pycache__"))
    for src in (ROOT / "solutions" / "p18" / "op").glob("*.mojo"):
        shutil.copyfile(src, op / src.name)
    return op


def precompile(work: Path) -> Path:
    mojoc = work / "op.mojoc"
    proc = subprocess.run([mojo_binary(), "precompile", "op", "-o", str(mojoc)], cwd=work,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"mojo precompile failed:\n{proc.stdout}{proc.stderr}")
    return mojoc


def graph_loader():
    path = ROOT / "solutions" / "p18" / "softmax_graph.py"
    spec = importlib.util.spec_from_file_location("p18_softmax_graph", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max())
    return (e / e.sum()).astype(np.float32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where op/ and op.mojoc go (default: a temp folder)")
    parser.add_argument("--keep-mojoc", action="store_true", help="reuse WORK/op.mojoc if it is there")
    parser.add_argument("--json", action="store_true", help="print the timings as JSON on the last line")
    parser.add_argument("--op", type=Path, help="the op folder to run (default: the p18 solution's)")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="floor-p18-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        return run(work, args.keep_mojoc, args.json, args.op)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def run(work: Path, keep_mojoc: bool, as_json: bool, source: Path | None = None) -> int:
    phases: dict[str, float] = {}

    start = time.perf_counter()
    mojoc = work / "op.mojoc"
    if not (keep_mojoc and mojoc.exists()):
        stage_op(work, source)
        mojoc = precompile(work)
    phases["precompile"] = time.perf_counter() - start

    start = time.perf_counter()
    from max.driver import CPU, Accelerator, Buffer, accelerator_count
    from max.engine import InferenceSession

    load = graph_loader()
    phases["import"] = time.perf_counter() - start

    devices = [("cpu", CPU)]
    if accelerator_count() > 0:
        devices.append(("gpu", Accelerator))
    x = np.random.default_rng(0).standard_normal(SIZE).astype(np.float32) * 4
    expected = softmax(x)
    ok = True
    for name, make in devices:
        start = time.perf_counter()
        device = make()
        session = InferenceSession(devices=[device])
        model = load(session, device, mojoc, size=SIZE)
        phases[f"{name}_load"] = time.perf_counter() - start
        start = time.perf_counter()
        got = model.execute(Buffer.from_numpy(x).to(device))[0].to(CPU()).to_numpy()
        phases[f"{name}_execute"] = time.perf_counter() - start
        matched = bool(np.allclose(got, expected, atol=ATOL, rtol=RTOL))
        ok = ok and matched
        print(f"{name}: {'ok' if matched else 'MISMATCH'}, max abs error {np.abs(got - expected).max():.2e}")
    phases["total"] = time.perf_counter() - T0
    if as_json:
        print(json.dumps({"ok": ok, "devices": [d for d, _ in devices], "phases": phases}))
    else:
        print("  ".join(f"{k} {v:.2f}s" for k, v in phases.items()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
