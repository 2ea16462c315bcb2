"""Nsight Compute against the simulator, kernel by kernel: the table in docs/ncu.md.

    python tools/ncu_table.py OUT_DIR [ID ...] [--seed 12] [--jobs 4] [--sim-only] [--again]
    python tools/ncu_table.py OUT_DIR --table [--write-pins]

On a GPU host with Nsight Compute: for each puzzle (default: every puzzle of chapters 1, 2
and 5, every puzzle with a traffic table or limit, and the traffic-pattern fixture
tests/data/simbook/puzzles/p92), one case per part (the one with the most threads up to
CASE_THREADS), its reference solution run through the simulator (a process per case) and,
in one process for the whole puzzle, on the GPU under ncu. Each puzzle's result goes to
OUT_DIR/<id>.json as soon as it is in (a rerun skips the ones there, unless --again), so
the work can be split over several commands. Then, and with --table alone, every
OUT_DIR/*.json is put together in OUT_DIR/ncu.json and OUT_DIR/ncu.md (docs/ncu.md's
table). --write-pins writes ncu's counts of p92 into its counts.toml, which
tests/test_traffic_patterns.py holds the simulator to. --sim-only: the simulator's side
alone (no GPU needed), to try the tool anywhere.

The same case on both sides: the same seed, the same case index, the same inputs file.
Buffers are their own allocations on the GPU (ncu.ENVIRONMENT), as on the simulator, so
that a sector count does not depend on where a memory pool put a buffer.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
# The solutions are the project's own code: no learner limits on their runs, or on ncu's.
for _name in ("WORKBOOK_MEMORY_LIMIT_MB", "WORKBOOK_PROCESS_LIMIT", "WORKBOOK_FILE_LIMIT_MB"):
    os.environ.setdefault(_name, "0")

from workbook.check import engine  # noqa: E402
from workbook.child.channel import Sink  # noqa: E402
from workbook.child.processes import Children  # noqa: E402
from workbook.compile import build, launcher, symbols  # noqa: E402
from workbook.core import settings, toolchain  # noqa: E402
from workbook.course import catalog  # noqa: E402
from workbook.course.catalog import tomllib  # noqa: E402
from workbook.course.manifest import with_choices  # noqa: E402
from workbook.judging import ncu  # noqa: E402
from workbook.run import kernelrun  # noqa: E402

FIXTURE = REPO / "tests" / "data" / "simbook"
PINNED = "p92"
CHAPTERS = (1, 2, 5)
CASE_THREADS = 32768  # the largest case a part has up to this many threads (the simulator's time)
RUN_LIMIT = 600.0  # seconds for one run, the simulator's or ncu's
NCU_LOCK = threading.Lock()  # one process under ncu at a time: one GPU
BEGIN, END = "<!-- ncu_table: begin -->", "<!-- ncu_table: end -->"  # where --docs puts the table


def selection(ids: list[str]) -> list[tuple[str, Path | None]]:
    """(id, base) of the puzzles to measure: the ones named, else the default set."""
    if ids:
        return [(pid, FIXTURE if pid == PINNED else None) for pid in ids]
    chosen = [(p.id, None) for p in catalog.all_puzzles()
              if p.chapter in CHAPTERS or any(part.traffic or part.show_traffic for part in p.parts)]
    return [*chosen, (PINNED, FIXTURE)]


def threads(spec: launcher.CaseSpec) -> int:
    return sum(math.prod(ln.grid) * math.prod(ln.block) for ln in spec.launches)


def choose(plan: launcher.Plan) -> list[int]:
    """A case per part: the one with the most threads up to CASE_THREADS (else the
    smallest): enough warps to mean something, few enough for the simulator."""
    chosen = []
    for part in plan.puzzle.parts:
        specs = [s for s in plan.cases if s.part.id == part.id]
        if not specs:
            continue
        fits = [s for s in specs if threads(s) <= CASE_THREADS]
        pick = max(fits, key=threads) if fits else min(specs, key=threads)
        chosen.append(pick.index)
    return chosen


class Prepared:
    """A puzzle's solution, its cases for one seed, the launch plan and the inputs file."""

    def __init__(self, pid: str, base: Path | None, seed: int):
        puzzle = catalog.load(pid, base)
        self.src = build.sources(puzzle, solutions=True)
        self.puzzle = with_choices(puzzle, [self.src.src.joinpath(n).read_text(encoding="utf-8")
                                            for n in puzzle.edit if n.endswith(".mojo")])
        reference = engine.load_reference(self.puzzle)
        rng = np.random.default_rng(seed)  # drawn part by part, in order, as a check draws them
        self.cases = {p.id: reference.cases(rng, p.id) for p in self.puzzle.parts}
        expected = {p.id: [reference.expected(c, p.id) for c in self.cases[p.id]] for p in self.puzzle.parts}
        self.plan = launcher.make_plan(self.puzzle, [(p, self.cases[p.id], expected[p.id])
                                                     for p in self.puzzle.parts])
        self.chosen = choose(self.plan)
        self.folder = Path(tempfile.mkdtemp(prefix=f"ncu-{pid}-"))
        self.inputs = self.folder / "inputs.bin"
        launcher.write_inputs(self.plan, [c for p in self.puzzle.parts for c in self.cases[p.id]], self.inputs)

    def case_name(self, index: int) -> str:
        spec = self.plan.cases[index]
        first = next(s.index for s in self.plan.cases if s.part.id == spec.part.id)
        return self.cases[spec.part.id][index - first]["name"]

    def kernels(self, index: int) -> list[str]:
        """The kernels case `index` launches (its host functions' names too), in order, once each."""
        return list(dict.fromkeys(ln.name for ln in self.plan.cases[index].launches))


@contextlib.contextmanager
def prepared(pid: str, base: Path | None, seed: int):
    """A puzzle prepared (its inputs file written) and the children that run it; when the
    block ends, every child is stopped and the inputs file and its folder are gone."""
    prep = Prepared(pid, base, seed)
    children = Children()
    try:
        yield prep, children
    finally:
        children.kill_all()
        prep.inputs.unlink(missing_ok=True)
        prep.folder.rmdir()


def run_sim(prep: Prepared, children: Children, binary: Path) -> dict[int, dict]:
    """Each chosen case alone through the simulator (its sites carry no case): per kernel,
    its traffic (ncu.sim_counts) and per line what made it."""
    learner = {key: real for key, real in build.path_map(prep.src).items() if key.startswith("/")}
    resolver = symbols.Resolver(learner, settings.shown)
    found: dict[int, dict] = {}
    for index in prep.chosen:
        spec = prep.plan.cases[index]
        if not spec.part.sim or prep.src.sim_problem is not None:
            why = prep.src.sim_problem.what if prep.src.sim_problem else "the part is not run on the simulator"
            found[index] = {"status": "not_run", "why": why}
            continue
        raw = kernelrun.run(children, binary, prep.plan, prep.inputs, "sim", 1, [index], limit=RUN_LIMIT)
        wanted = {n for n, site in enumerate(raw.sites, 1)
                  if len(site) >= ncu.SITE_TRAFFIC + 6 and (site[ncu.SITE_TRAFFIC] or site[ncu.SITE_TRAFFIC + 3])}
        places = resolver.resolve(binary, raw.sites, wanted, {}) if wanted else {}
        lines: dict[str, list] = {}
        for n in sorted(wanted):
            site, place = raw.sites[n - 1], places.get(n)
            lines.setdefault(site[2], []).append({
                "line": place.line if place else 0, "text": place.text if place else "",
                "file": place.file if place else "", "counts": ncu.sim_counts([site], site[2])})
        found[index] = {"status": raw.status, "findings": sorted({f.get("kind", "") for f in raw.findings}),
                        "kernels": {k: ncu.sim_counts(raw.sites, k) for k in prep.kernels(index)},
                        "lines": lines}
    return found


def run_gpu(prep: Prepared, children: Children, binary: Path, tool: Path, metrics: list[str]) -> dict:
    """Every chosen case in one launcher process under ncu (once each, no repeats)."""
    log = Sink()
    try:
        with NCU_LOCK:
            raw = kernelrun.run(children, binary, prep.plan, prep.inputs, "gpu", 1, sorted(prep.chosen),
                                prefix=ncu.command(tool, metrics, log.fd), env=ncu.ENVIRONMENT, limit=RUN_LIMIT,
                                keep=(log.fd,))
        text = log.read(64 << 20).decode("utf-8", errors="replace")
    finally:
        log.close()
    profiled = ncu.parse(text)
    expected = []
    for index in sorted(prep.chosen):
        spec = prep.plan.cases[index]
        launches = [ln for _ in range(2 if spec.twice() else 1) for ln in spec.launches]
        expected += [ncu.Expected(index, k, ln.name, ln.host) for k, ln in enumerate(launches)]
    matched, other = ncu.assign(expected, profiled, prep.puzzle.module)
    kernel_of = {(e.case, e.launch): e.kernel for e in expected}
    per_case: dict[int, dict[str, dict[str, float]]] = {}
    for (index, launch), kernels in matched.items():  # a kernel launched twice in a case: both added
        into = per_case.setdefault(index, {}).setdefault(kernel_of[(index, launch)], {})
        for p in kernels:
            for key, value in ncu.ours(p).items():
                into[key] = into.get(key, 0.0) + value
    tail = [line for line in text.splitlines() if line.startswith("==") and "PROF" not in line][-20:]
    return {"status": raw.status, "message": raw.message.key if raw.message else "",
            "output": raw.output[-2000:], "profiled": len(profiled), "missing_launches": len(expected) - len(matched),
            "other_kernels": [p.name for p in other], "per_case": per_case, "ncu_messages": tail}


def measure(pid: str, base: Path | None, seed: int, gpu: bool, tool: Path | None, metrics: list[str]) -> dict:
    """One puzzle, both ways: its JSON."""
    with prepared(pid, base, seed) as (prep, children):
        result: dict = {"puzzle": pid, "title": prep.puzzle.title["en"], "chapter": prep.puzzle.chapter,
                        "seed": seed, "module": prep.puzzle.module, "cases": []}
        host = build.launcher(children, prep.src, prep.plan, "host")
        sim = run_sim(prep, children, host.binary) if host.ok else {}
        result["sim_build"] = "ok" if host.ok else (host.output or str(host.problem))[-2000:]
        gpu_side: dict = {}
        if gpu and tool is not None:
            target = toolchain.gpu().target if toolchain.gpu() else toolchain.gpu_target()
            built = build.launcher(children, prep.src, prep.plan, "gpu", target)
            result["gpu_build"] = "ok" if built.ok else (built.output or str(built.problem))[-2000:]
            if built.ok:
                gpu_side = run_gpu(prep, children, built.binary, tool, metrics)
        result["gpu_run"] = {k: v for k, v in gpu_side.items() if k != "per_case"}
        for index in prep.chosen:
            spec = prep.plan.cases[index]
            case = {"index": index, "part": spec.part.id, "name": prep.case_name(index), "threads": threads(spec),
                    "sim": {k: v for k, v in sim.get(index, {}).items() if k not in ("kernels", "lines")},
                    "kernels": []}
            for kernel in prep.kernels(index):
                got_sim = sim.get(index, {}).get("kernels", {}).get(kernel)
                got_gpu = gpu_side.get("per_case", {}).get(index, {}).get(kernel) if gpu_side else None
                rows = ncu.compare(kernel, got_sim, got_gpu)
                case["kernels"].append({
                    "kernel": kernel, "sim": got_sim, "ncu": got_gpu,
                    "rows": [{"kind": r.kind, "quantity": r.quantity, "sim": r.sim, "ncu": r.ncu,
                              "ratio": None if r.ratio is None or math.isinf(r.ratio) else round(r.ratio, 4),
                              "verdict": r.verdict, "metric": r.metric} for r in rows],
                    "hints": ncu.hints(got_sim, got_gpu),
                    "lines": sim.get(index, {}).get("lines", {}).get(kernel, [])})
            result["cases"].append(case)
        return result


def ncu_version(tool: Path | None) -> str:
    if tool is None:
        return ""
    try:
        out = subprocess.run([str(tool), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"Version ([0-9][0-9.]*)", out)  # "... Version 2025.3.1.0 (build ...)"
    return found.group(1) if found else " ".join(out.split())[-200:]


def usable_metrics(tool: Path) -> tuple[list[str], list[str]]:
    """The metrics this ncu knows on this GPU (ncu --query-metrics), and the ones it does not."""
    wanted = list(ncu.ALL_METRICS.values())
    try:
        out = subprocess.run([str(tool), "--query-metrics"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return wanted, []
    if out.returncode != 0 or "__" not in out.stdout:
        return wanted, []
    known = ncu.known_metrics(out.stdout, wanted)
    return known, [m for m in wanted if m not in known]


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=4, help="puzzles prepared and built at once")
    parser.add_argument("--sim-only", action="store_true")
    parser.add_argument("--again", action="store_true", help="measure puzzles already in OUT")
    parser.add_argument("--table", action="store_true", help="only put OUT/*.json together")
    parser.add_argument("--write-pins", action="store_true", help="write ncu's p92 counts into its counts.toml")
    parser.add_argument("--docs", type=Path, help="put the table into this Markdown file, between its markers "
                        f"({BEGIN} ... {END})")
    parser.add_argument("--record", action="store_true",
                        help="write the course's summary into workbook/judging/ncu_record.json "
                             "(the traffic tables' note)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tool = None if args.sim_only else ncu.locate()
    gpu = toolchain.gpu()
    if not args.table:
        if not args.sim_only and (tool is None or gpu is None):
            print("needs a GPU and Nsight Compute (ncu); --sim-only runs the simulator's side alone", file=sys.stderr)
            return 2
        metrics, dropped = usable_metrics(tool) if tool else ([], [])
        meta = {"gpu": gpu.name if gpu else "", "target": gpu.target if gpu else "", "ncu": ncu_version(tool),
                "metrics": metrics, "dropped_metrics": dropped, "seed": args.seed, "commit": commit(),
                "date": datetime.date.today().isoformat(), "sim_only": args.sim_only}
        (args.out / "meta.json").write_text(json.dumps(meta, indent=1))
        todo = [(pid, base) for pid, base in selection(args.ids)
                if args.again or not (args.out / f"{pid}.json").exists()]

        def one(item: tuple[str, Path | None]) -> None:
            pid, base = item
            started = datetime.datetime.now()
            try:
                row = measure(pid, base, args.seed, not args.sim_only, tool, metrics)
            except Exception as exc:  # noqa: BLE001 - one puzzle's failure is written down, the rest go on
                row = {"puzzle": pid, "error": f"{type(exc).__name__}: {exc}"}
            row["seconds"] = round((datetime.datetime.now() - started).total_seconds(), 1)
            (args.out / f"{pid}.json").write_text(json.dumps(row, indent=1))
            print(f"{pid}: {row['seconds']} s{' ' + row['error'] if 'error' in row else ''}", file=sys.stderr,
                  flush=True)

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(one, todo))
    meta = json.loads((args.out / "meta.json").read_text()) if (args.out / "meta.json").exists() else {}
    puzzles = [json.loads(p.read_text()) for p in sorted(args.out.glob("p*.json"))]
    puzzles.sort(key=lambda r: (r.get("puzzle") == PINNED, int(re.sub(r"\D", "", r.get("puzzle", "0")) or 0)))
    pins = pinned_against(puzzles)
    course = [p for p in puzzles if p.get("puzzle") != PINNED]
    table = {**meta, "command": " ".join(["python tools/ncu_table.py", *argv]), "legend": ncu.METRICS,
             "extra_metrics": ncu.EXTRA, "summary": ncu.summary(course),
             "patterns": ncu.summary([p for p in puzzles if p.get("puzzle") == PINNED]), "pins": pins,
             "puzzles": puzzles, "explanations": explanations()}
    (args.out / "ncu.json").write_text(json.dumps(table, indent=1))
    (args.out / "ncu.md").write_text(ncu.markdown(table))
    if args.docs:
        text = args.docs.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            print(f"{args.docs} has no {BEGIN} ... {END}", file=sys.stderr)
            return 2
        head, rest = text.split(BEGIN, 1)
        generated = ncu.markdown(table).split("\n", 2)[2].replace("\n## ", "\n### ")  # under the page's own heading
        args.docs.write_text(f"{head}{BEGIN}\n{generated}{END}{rest.split(END, 1)[1]}", encoding="utf-8")
    if args.write_pins:
        write_pins(puzzles, meta)
    if args.record:
        if not meta.get("gpu") or meta.get("sim_only"):
            print("--record needs a run on a GPU", file=sys.stderr)
            return 2
        summary = table["summary"]
        ncu.RECORD.write_text(json.dumps({"gpu": meta["gpu"], "date": meta.get("date", ""), "ncu": meta.get("ncu", ""),
                                          "commit": meta.get("commit", ""), "kernels": summary["kernels"],
                                          "kernels_equal": summary["kernels_equal"], "rows": summary["rows"]},
                                         indent=1) + "\n")
    print(json.dumps(table["summary"]), file=sys.stderr)
    return 0


EXPLANATIONS = REPO / "tools" / "ncu_explanations.toml"  # why each difference is (tools/ncu_explain.py's evidence)


def explanations() -> dict[str, dict]:
    """"p12.partial_dots.shared_load" -> {"why": ..., "settled": ...}: docs/ncu.md's "why:" lines."""
    data = tomllib.loads(EXPLANATIONS.read_text(encoding="utf-8")) if EXPLANATIONS.exists() else {}
    return {f"{pid}.{kernel}.{kind}": told for pid, kernels in data.items() for kernel, kinds in kernels.items()
            for kind, told in kinds.items()}


def _pinned_counts() -> dict:
    path = FIXTURE / "puzzles" / PINNED / "counts.toml"
    return {k: v for k, v in tomllib.loads(path.read_text(encoding="utf-8")).items() if isinstance(v, dict)}


def _shaped(counts: dict[str, float] | None, kind: str) -> list[int] | None:
    """ncu's (or the simulator's) counts of one kind in counts.toml's shape."""
    if not counts or f"{kind}.requests" not in counts:
        return None
    keys = ("requests", "sectors") if kind.startswith("global") else ("requests", "wavefronts", "conflicts")
    return [int(round(counts.get(f"{kind}.{k}", 0.0))) for k in keys]


def pinned_against(puzzles: list[dict]) -> list[dict]:
    """p92's kernels: the pinned counts (counts.toml) against ncu's and the simulator's."""
    found = []
    pins = _pinned_counts()
    for row in puzzles:
        if row.get("puzzle") != PINNED:
            continue
        for case in row.get("cases", []):
            for k in case["kernels"]:
                for kind, want in pins.get(k["kernel"], {}).items():
                    gpu, sim = _shaped(k["ncu"], kind), _shaped(k["sim"], kind)
                    found.append({"kernel": k["kernel"], "kind": kind, "pinned": want, "ncu": gpu, "sim": sim,
                                  "ncu_agrees": gpu == want if gpu is not None else None})
    return found


def write_pins(puzzles: list[dict], meta: dict) -> None:
    """counts.toml with ncu's own counts wherever ncu measured the kernel."""
    path = FIXTURE / "puzzles" / PINNED / "counts.toml"
    measured = {(p["kernel"], p["kind"]): p["ncu"] for p in pinned_against(puzzles) if p["ncu"] is not None}
    if not measured:
        print("no ncu counts of p92 to write", file=sys.stderr)
        return
    out, section = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        head = re.match(r"^\[(\w+)\]", line)
        if head:
            section = head.group(1)
        key = re.match(r"^(\w+) = \[", line)
        if key and (section, key.group(1)) in measured:
            line = f"{key.group(1)} = {measured[(section, key.group(1))]}"
        elif line.startswith("source = "):
            line = (f'source = "Nsight Compute {meta.get("ncu", "")[:60]} on {meta.get("gpu", "a GPU")}, '
                    f'{meta.get("date", "")} (tools/ncu_table.py --write-pins)"')
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {len(measured)} counts into {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
