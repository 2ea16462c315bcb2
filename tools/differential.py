"""The differential check: every wrong kernel (tests/wrong) and right kernel (tests/right)
on the simulator alone and on the GPU alone, and whether their verdicts agree
(workbook/author/differential.py says how they are compared).

    python tools/differential.py [PUZZLE | PUZZLE/KERNEL ...] [--json OUT.json]
        [--markdown OUT.md] [--per-gpu 4] [--gpus N] [--jobs N] [--sanitize auto|all|off]
        [--check-limit SECONDS]
    python tools/differential.py --again RUN.json [RUN.json ...] [--json OUT.json] [--markdown OUT.md]

`--again`: no checks run; the recorded runs' verdicts (a GPU host's) merged and compared
again with today's wrong.toml and right.toml (a why written since, a kernel moved). Give
the runs oldest first: a kernel in more than one keeps the verdicts of the last.

Without names: every kernel. On a host with several GPUs the kernels are dealt out to one
worker process per GPU (CUDA_VISIBLE_DEVICES=k), each running `--per-gpu` GPU checks at
once and its share of the cores' simulator checks; their tables are merged. Without a GPU
the GPU column says "no GPU". Exit 0 when nothing is flagged, 1 when something is, 2 for
bad arguments. A line per kernel on stderr as it finishes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from workbook.author import differential
from workbook.core import settings, toolchain


def gpu_ids() -> list[str]:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES's list where it is set, else
    those nvidia-smi lists; none where no GPU runs here."""
    if toolchain.gpu() is None:
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if visible:
        return [v.strip() for v in visible.split(",") if v.strip()]
    smi = shutil.which("nvidia-smi")
    if smi:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
        count = sum(line.startswith("GPU ") for line in listed.splitlines())
        if count:
            return [str(k) for k in range(count)]
    return ["0"]


def said(row: differential.Row) -> None:
    mark = "!" if row.flag else " "
    print(f"{mark} {row.id:45} sim {row.sim.verdict:8} gpu {row.gpu.verdict:8} {row.agreement}"
          + (f": {row.flag}" if row.flag else ""), file=sys.stderr, flush=True)


def write(table: differential.Table, json_path: str | None, markdown_path: str | None) -> None:
    if json_path:
        Path(json_path).write_text(differential.to_json(table), encoding="utf-8")
    if markdown_path:
        Path(markdown_path).write_text(differential.to_markdown(table), encoding="utf-8")


def shards(args, chosen: list, ids: list[str]) -> differential.Table:
    """One worker process per GPU, each with every len(ids)-th kernel; their tables merged.
    The workers are this script again, on one GPU each; they end with it."""
    folder = Path(tempfile.mkdtemp(prefix="workbook-differential-"))
    workers = []
    jobs = max(1, (args.jobs or settings.cores() // 2) // len(ids))
    try:
        for k, gpu in enumerate(ids):
            mine = [c.id for c in chosen[k::len(ids)]]
            if not mine:
                continue
            out = folder / f"shard{k}.json"
            command = [sys.executable, __file__, *mine, "--json", str(out), "--per-gpu", str(args.per_gpu),
                       "--gpus", "1", "--jobs", str(jobs), "--sanitize", args.sanitize,
                       "--check-limit", str(args.check_limit)]
            workers.append((subprocess.Popen(command, env={**os.environ, "CUDA_VISIBLE_DEVICES": gpu}), out))
        for process, _ in workers:
            process.wait()
        return differential.merge([differential.from_json(out.read_text(encoding="utf-8"))
                                   for _, out in workers if out.exists()])
    finally:
        for process, _ in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="puzzles (p24) or kernels (p24/tree_in_shared); default: all")
    parser.add_argument("--json", help="write the rows and the per-puzzle counts here")
    parser.add_argument("--markdown", help="write the table for docs/verification.md here")
    parser.add_argument("--per-gpu", type=int, default=differential.PER_GPU, help="GPU checks at once per GPU")
    parser.add_argument("--gpus", type=int, default=None, help="GPUs to use (default: every one here)")
    parser.add_argument("--jobs", type=int, default=None, help="simulator checks at once (default: cores / 2)")
    parser.add_argument("--check-limit", type=float, default=differential.CHECK_LIMIT,
                        help="seconds one check may take before it is stopped and flagged")
    parser.add_argument("--sanitize", choices=("auto", "all", "off"), default="auto",
                        help="compute-sanitizer on the GPU side, as `check` runs it (auto), every tool, or none")
    parser.add_argument("--again", nargs="+", metavar="RUN.json", help="compare recorded runs again, run nothing")
    args = parser.parse_args(argv)
    if args.again:
        try:
            recorded = [differential.from_json(Path(f).read_text(encoding="utf-8")) for f in args.again]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"cannot read a recorded run: {exc}")
        table = differential.recompare(differential.merge(recorded, one_after_another=True))
        write(table, args.json, args.markdown)
        if not args.markdown:
            print(differential.to_markdown(table))
        return 1 if table.flagged() else 0
    if args.per_gpu < 1 or (args.jobs is not None and args.jobs < 1):
        parser.error("--per-gpu and --jobs take a number of at least 1")
    try:
        chosen = differential.kernels(args.names)
    except ValueError as exc:
        parser.error(str(exc))
    ids = gpu_ids()
    if args.gpus is not None:
        ids = ids[:max(0, args.gpus)]
    print(f"{len(chosen)} kernels; GPUs: {', '.join(ids) or 'none'}", file=sys.stderr)
    if len(ids) > 1:
        table = shards(args, chosen, ids)  # each worker says its own lines
    else:
        table = differential.run(chosen, per_gpu=args.per_gpu, jobs=args.jobs, sanitize=args.sanitize,
                                 use_gpu=bool(ids), limit=args.check_limit, done=said)
    write(table, args.json, args.markdown)
    if not args.markdown:
        print(differential.to_markdown(table))
    return 1 if table.flagged() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
