"""Why the simulator's counts and Nsight Compute's differ, line by line: evidence without a GPU.

    python tools/ncu_explain.py [ID ...] [--seed 12] [--json OUT.json] [--ptx-dir DIR] [--ncu docs/ncu.md]

The simulator counts the accesses of the CPU build (ThreadSanitizer's instrumentation,
one site per instruction); the GPU runs the NVPTX build. For each kernel of the case
tools/ncu_table.py measures (same seed, same case), per line of the solution:

- cpu: how many instructions of the CPU build access memory there (the simulator's sites)
  and the requests the simulator counted for them;
- ptx: the memory instructions the NVPTX build has there (workbook.ptx.memory_lines: the
  PTX's `.loc` line table, inlined library code on the line that called it), by kind and
  vector width;
- expected: the requests the GPU makes there if each PTX instruction runs as often as the
  CPU build's instructions of that line do (requests / cpu instructions x ptx
  instructions). A line the CPU build makes no access on has no expectation ("?").

Summed over the lines, expected against ncu's count (read from docs/ncu.md's table, which
a GPU run wrote) says whether the two builds' instructions account for the difference.
PTX is not SASS: ptxas may still merge or split (tools/ncu_sass.sh counts SASS per line on
a machine with ptxas; --ptx-dir writes the PTX modules it takes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbook.check import engine  # noqa: E402
from workbook.child.processes import Children  # noqa: E402
from workbook.compile import build, launcher, ptx  # noqa: E402
from workbook.core import toolchain  # noqa: E402

_spec = importlib.util.spec_from_file_location("ncu_table", REPO / "tools" / "ncu_table.py")
ncu_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ncu_table)

KINDS = ("global_load", "global_store", "shared_load", "shared_store")
# The table's puzzles with a difference (docs/ncu.md, seed 12): the default selection.
DIFFERING = ("p08", "p12", "p13", "p14", "p15", "p16", "p28", "p29", "p30", "p31", "p33", "p34", "p92")
ROW = re.compile(r"^\| (p\d+) \| [^|]* \| `([\w]+)` \| (global load|global store|shared load|shared store) \| "
                 r"([\d.–]+) / ([\d.–]+)[ ≈≠]* \| ([\d.–]+) / ([\d.–]+)[ ≈≠]* \|")


def kind_of(instruction: str) -> str | None:
    """Which of the table's access kinds a PTX memory instruction counts under on the GPU
    (`ld.global.nc.v4` -> global_load; an atomic as a store, as the simulator counts it;
    generic addressing, cp.async and ldmatrix under their own names)."""
    op, _, rest = instruction.partition(".")
    space = rest.split(".")[0]
    if space in ("global", "shared") and op in ("ld", "st", "atom", "red"):
        return f"{space}_{'load' if op == 'ld' else 'store'}"
    return instruction


def ncu_counts(docs: Path) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """(puzzle, kernel, kind) -> the table's simulator and ncu counts (requests, cost)."""
    found = {}

    def num(text: str) -> float | None:
        return None if text == "–" else float(text)

    for line in docs.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            pid, kernel, kind = m.group(1), m.group(2), m.group(3).replace(" ", "_")
            found[(pid, kernel, kind)] = {"sim_requests": num(m.group(4)), "ncu_requests": num(m.group(5)),
                                          "sim_cost": num(m.group(6)), "ncu_cost": num(m.group(7))}
    return found


def sub_plan(prep, index: int) -> launcher.Plan:
    """A plan of the one case (its part, its inputs): the GPU build then holds that case's
    kernel instantiations only."""
    spec = prep.plan.cases[index]
    first = next(s.index for s in prep.plan.cases if s.part.id == spec.part.id)
    case = prep.cases[spec.part.id][index - first]
    reference = engine.load_reference(prep.puzzle)
    return launcher.make_plan(prep.puzzle, [(spec.part, [case], [reference.expected(case, spec.part.id)])])


def gpu_lines(prep, index: int, children: Children, ptx_dir: Path | None) -> dict[str, dict]:
    """Per kernel the case launches: its PTX entry and memory instructions per line."""
    plan = sub_plan(prep, index)
    built = build.launcher(children, prep.src, plan, "gpu", toolchain.gpu_target(), lines=True)
    if not built.ok:
        raise RuntimeError(f"the GPU build failed: {(built.output or str(built.problem))[-500:]}")
    names = prep.kernels(index)
    sources = tuple(n for n in prep.puzzle.edit if n.endswith(".mojo")) or tuple(prep.puzzle.mojo_files())
    found: dict[str, dict] = {}
    for module in ptx.modules(built.binary.read_bytes()):
        for entry, per_line in ptx.memory_lines(module, sources).items():
            kernel = ptx.kernel_of(entry, prep.puzzle.module, names)
            if kernel is None:
                continue
            found.setdefault(kernel, {"entries": [], "lines": {}})
            found[kernel]["entries"].append(entry)
            if len(found[kernel]["entries"]) == 1:  # the case's first instantiation of it
                found[kernel]["lines"] = per_line
                if ptx_dir is not None:
                    ptx_dir.mkdir(parents=True, exist_ok=True)
                    (ptx_dir / f"{prep.puzzle.id}-{kernel}.ptx").write_text(module, encoding="utf-8")
    return found


def _place_merged(cpu: dict[int, dict], lines: dict[int, dict[str, int]]) -> dict[int, dict[str, int]]:
    """Instructions the PTX line table gives line 0 (LLVM's mark for an instruction merged
    from several lines: the stores of both branches of an `if`, one select and one
    store) are moved, in place, to the lines where the CPU build has more instructions of
    that kind than the PTX (first such line first); what none needs stays on line 0."""
    left = dict(lines.get(0, {}))
    placed: dict[int, dict[str, int]] = {}
    for line in sorted(k for k in cpu if k):
        short = cpu[line]["instructions"] - sum(lines.get(line, {}).values())
        for name in list(left):
            take = min(short, left[name])
            if take > 0:
                placed.setdefault(line, {})[name] = take
                left[name] -= take
                short -= take
    lines[0] = {k: n for k, n in left.items() if n}
    return placed


def explain_kernel(sim_lines: list[dict], gpu: dict[int, dict[str, int]]) -> dict[str, dict]:
    """Per access kind: per line, the CPU build's instructions and requests, the PTX's
    instructions, and the requests expected on the GPU; and their totals."""
    per_kind: dict[str, dict] = {}
    cpu: dict[str, dict[int, dict]] = {}
    for site in sim_lines:
        for kind in KINDS:
            requests = site["counts"].get(f"{kind}.requests", 0.0)
            if requests:
                at = cpu.setdefault(kind, {}).setdefault(site["line"], {"instructions": 0, "requests": 0.0,
                                                                          "text": site["text"]})
                at["instructions"] += 1
                at["requests"] += requests
    ptx_by: dict[str, dict[int, dict[str, int]]] = {}
    for line, kinds in gpu.items():
        for name, n in kinds.items():
            ptx_by.setdefault(kind_of(name), {}).setdefault(line, {})[name] = n
    for kind in sorted(set(cpu) | set(ptx_by), key=lambda k: (k not in KINDS, k)):
        rows, expected, unknown = [], 0.0, False
        lines = ptx_by.get(kind, {})
        merged = _place_merged(cpu.get(kind, {}), lines)
        for line in sorted(set(cpu.get(kind, {})) | set(lines)):
            if line == 0 and not lines.get(0):
                continue
            c = cpu.get(kind, {}).get(line, {"instructions": 0, "requests": 0.0, "text": ""})
            g = {**lines.get(line, {})}
            for name, n in merged.get(line, {}).items():
                g[f"{name} (line 0)"] = n
            n = sum(g.values())
            guess = c["requests"] / c["instructions"] * n if c["instructions"] else (0.0 if not n else None)
            unknown |= guess is None
            expected += guess or 0.0
            rows.append({"line": line, "text": c["text"].strip(), "cpu_instructions": c["instructions"],
                         "sim_requests": c["requests"], "ptx": g, "expected": guess})
        per_kind[kind] = {"lines": rows, "sim_requests": sum(r["sim_requests"] for r in rows),
                          "expected": expected, "expected_complete": not unknown}
    return per_kind


def explain(pid: str, seed: int, table: dict, ptx_dir: Path | None) -> dict:
    base = ncu_table.FIXTURE if pid == ncu_table.PINNED else None
    with ncu_table.prepared(pid, base, seed) as (prep, children):
        host = build.launcher(children, prep.src, prep.plan, "host")
        if not host.ok:
            raise RuntimeError(f"the simulator's build failed: {(host.output or str(host.problem))[-500:]}")
        sim = ncu_table.run_sim(prep, children, host.binary)
        result = {"puzzle": pid, "seed": seed, "cases": []}
        for index in prep.chosen:
            gpu = gpu_lines(prep, index, children, ptx_dir)
            case = {"index": index, "name": prep.case_name(index), "kernels": []}
            for kernel in prep.kernels(index):
                lines = sim.get(index, {}).get("lines", {}).get(kernel, [])
                kinds = explain_kernel(lines, gpu.get(kernel, {}).get("lines", {}))
                for kind, got in kinds.items():
                    got["table"] = table.get((pid, kernel, kind))
                case["kernels"].append({"kernel": kernel, "entries": gpu.get(kernel, {}).get("entries", []),
                                        "kinds": kinds})
            result["cases"].append(case)
        return result


def show(result: dict) -> str:
    """The evidence as text: per kernel and kind, line by line."""
    out = []
    for case in result["cases"]:
        for k in case["kernels"]:
            out.append(f"{result['puzzle']} {k['kernel']} ({case['name']}); PTX entries: {len(k['entries'])}")
            for kind, got in k["kinds"].items():
                t = got.get("table") or {}
                ncu_req = t.get("ncu_requests")
                out.append(f"  {kind}: simulator {got['sim_requests']:g}, expected from the PTX "
                           f"{got['expected']:g}{'' if got['expected_complete'] else ' (+ lines with ?)'}"
                           f"{'' if ncu_req is None else f', ncu {ncu_req:g}'}")
                for r in got["lines"]:
                    g = " + ".join(f"{n} {name}" for name, n in sorted(r["ptx"].items())) or "none"
                    e = "?" if r["expected"] is None else f"{r['expected']:g}"
                    out.append(f"    line {r['line']:>4}: cpu {r['cpu_instructions']} instr, {r['sim_requests']:g} "
                               f"req | ptx {g} -> {e}   {r['text'][:60]}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--json", type=Path, help="write the evidence here as JSON")
    parser.add_argument("--ptx-dir", type=Path, help="write each kernel's PTX module here (for tools/ncu_sass.sh)")
    parser.add_argument("--ncu", type=Path, default=REPO / "docs" / "ncu.md", help="the table with ncu's counts")
    args = parser.parse_args(argv)
    table = ncu_counts(args.ncu) if args.ncu.exists() else {}
    results = []
    for pid in args.ids or DIFFERING:
        try:
            result = explain(pid, args.seed, table, args.ptx_dir)
        except Exception as exc:  # noqa: BLE001 - one puzzle's failure is said, the rest go on
            print(f"{pid}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        results.append(result)
        print(show(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
