"""How stable the speed verdicts are: p21's and p16's timed parts, each checked afresh ten
times on a GPU (no verdict cache), with the learner's files set to the reference solution
and, for p21, to a layout that is right but slow (tests/wrong/p21/strided_threads).

    python benchmarks/speed_stability.py OUT.json [--runs 10] [--seed 12]

Each check times its parts as a learner's check does (workbook/judging/speed.py: every timed run
after the L2 cache is flushed; the reference solution built into the same launcher and
timed alternately with the learner's kernels). Per run and part: the median, the fastest
and the middle half (first to third quartile) in µs, the solution's median and middle half
where the part has a verdict, their ratio, the verdict (pass, or too slow) and how the
solution ran. Then per subject and part, over the runs: the ratios' lowest, median and
highest, the medians' spread (highest over lowest), and how many runs gave each verdict;
`stable` is true where every run gave the same one. The expectation: p21 coalesced with the
solution's own kernel passes every run, its ratio near 1.0 (the noise floor of the verdict);
strided_threads fails every run as too slow (about 4x on an H200, the limit is 2x); p16's
tiled median moves by a few percent at most.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbook.author import curriculum  # noqa: E402
from workbook.check import engine  # noqa: E402
from workbook.core import toolchain  # noqa: E402
from workbook.course import catalog  # noqa: E402

SUBJECTS = [("p21", "solution", None), ("p21", "strided_threads", REPO / "tests" / "wrong" / "p21" / "strided_threads"),
            ("p16", "solution", None)]


def one(sandbox: curriculum.Sandbox, pid: str, overlay: Path | None, seed: int) -> dict:
    """One check of a puzzle on the GPU alone (no sanitizer, no verdict cache): its timed parts."""
    puzzle = sandbox.puzzle(pid, *([overlay] if overlay else []))
    started = time.perf_counter()
    result = engine.check_puzzle(puzzle, engine.Options(seed=seed, devices=("gpu",), sanitize="off", cache=False))
    parts = {}
    for part in result.parts:
        s = part.speed
        if s is None:
            continue
        parts[part.id] = {
            "measured": s.measured, "reason": s.reason.key if s.reason else "", "median_us": s.median_us,
            "min_us": s.min_us, "q1_us": s.q1_us, "q3_us": s.q3_us, "launches": s.launches,
            "solution_median_us": s.solution_median_us, "solution_q1_us": s.solution_q1_us,
            "solution_q3_us": s.solution_q3_us, "solution_timing": s.solution_timing,
            "ratio_to_solution": s.ratio_to_solution, "max_ratio_to_solution": s.max_ratio_to_solution,
            "verdict": "too_slow" if s.too_slow else ("pass" if s.ratio_to_solution is not None else "information"),
            "status": part.status.value}
    return {"status": result.status.value, "seconds": round(time.perf_counter() - started, 1), "parts": parts}


def summary(runs: list[dict]) -> dict:
    """Per part, over the runs: the ratios, the medians' spread, the verdicts."""
    found: dict[str, dict] = {}
    for part in sorted({p for run in runs for p in run["parts"]}):
        rows = [run["parts"][part] for run in runs if part in run["parts"] and run["parts"][part]["measured"]]
        medians = [r["median_us"] for r in rows]
        ratios = [r["ratio_to_solution"] for r in rows if r["ratio_to_solution"] is not None]
        verdicts: dict[str, int] = {}
        for r in rows:
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
        found[part] = {
            "runs": len(rows),
            "median_us": {"lowest": min(medians), "median": statistics.median(medians), "highest": max(medians),
                          "spread": max(medians) / min(medians)} if medians else None,
            "ratio_to_solution": {"lowest": min(ratios), "median": statistics.median(ratios),
                                  "highest": max(ratios)} if ratios else None,
            "verdicts": verdicts, "stable": len(verdicts) == 1,
            "solution_timing": sorted({r["solution_timing"] for r in rows if r["solution_timing"]})}
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--only", action="append", default=[],
                        help="one subject (p21/solution, p21/strided_threads, p16/solution); OUT keeps the others")
    args = parser.parse_args(argv)
    gpu = toolchain.gpu()
    if gpu is None:
        print("needs a GPU", file=sys.stderr)
        return 2
    doc = json.loads(args.out.read_text()) if args.out.exists() else {"subjects": {}}
    doc.update({"gpu": gpu.name, "target": gpu.target, "runs": args.runs, "seed": args.seed,
                "date": time.strftime("%Y-%m-%d")})
    with curriculum.Sandbox(catalog.root()) as sandbox:
        for pid, name, overlay in SUBJECTS:
            key = f"{pid}/{name}"
            if args.only and key not in args.only:
                continue
            runs = []
            for n in range(args.runs):
                runs.append(one(sandbox, pid, overlay, args.seed))
                parts = runs[-1]["parts"]
                print(f"{key} run {n + 1}: {runs[-1]['status']} {runs[-1]['seconds']} s  " + "  ".join(
                    f"{p} {v['median_us']:.1f} µs ({v['q1_us']:.1f}–{v['q3_us']:.1f})"
                    + (f" x{v['ratio_to_solution']:.2f} {v['verdict']}" if v["ratio_to_solution"] else "")
                    for p, v in parts.items() if v["measured"]), file=sys.stderr, flush=True)
                doc["subjects"][key] = {"runs": runs, "summary": summary(runs)}
                args.out.write_text(json.dumps(doc, indent=1))  # what is in so far, if the time runs out
    for key, subject in doc["subjects"].items():
        for part, s in subject["summary"].items():
            ratio = s["ratio_to_solution"]
            print(f"{key} {part}: medians {s['median_us']['lowest']:.1f}–{s['median_us']['highest']:.1f} µs "
                  f"(x{s['median_us']['spread']:.3f})"
                  + (f", ratio {ratio['lowest']:.3f}–{ratio['highest']:.3f}" if ratio else "")
                  + f", verdicts {s['verdicts']}, {'stable' if s['stable'] else 'NOT stable'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
