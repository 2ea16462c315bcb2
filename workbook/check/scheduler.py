"""Checking many puzzles at once (`workbook check --all --jobs N`).

Each puzzle is an engine check of its own, in a thread of a pool, with its own
children (compilers, launchers, graph workers). The results come back in the
order they were asked for, whatever order they finish in. What the machine
shares is rationed: the Mojo compiler is told to use its share of the cores,
and runs on the GPU go through a few slots (kernelrun.gpu_slot), with
compute-sanitizer's slow runs in slots of their own so that they never starve
the plain runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import psutil

from ..child import processes
from ..compile import build
from ..core import settings
from ..core.results import PuzzleResult
from ..course.manifest import Puzzle
from . import engine
from .pipelines import graph as graph_pipeline

T = TypeVar("T")
GIB = 1024**3
# Memory one check may take at its peak: a Mojo compile, or a MAX graph compile.
MEMORY_PER_JOB = 3 * GIB


def default_jobs() -> int:
    """As many checks at once as the cores (two each: a check builds two programs side by
    side) and the memory (MEMORY_PER_JOB each) allow; at least one."""
    cores = settings.cores()
    try:
        memory = psutil.virtual_memory().available
    except (OSError, RuntimeError):
        memory = MEMORY_PER_JOB
    return max(1, min(cores // 2, int(memory // MEMORY_PER_JOB)))


def run_all(tasks: list[Callable[[], T]], jobs: int, done: Callable[[T], None] | None = None) -> list[T]:
    """Run every task with `jobs` at a time; `done` hears of each result as it comes.
    Results in the order of `tasks`. Ctrl-C (or a task that raises) stops everything now,
    children included, not at their limits."""
    jobs = max(1, min(jobs, len(tasks)))
    if jobs == 1:
        results = []
        for task in tasks:
            results.append(task())
            if done:
                done(results[-1])
        return results
    build.compile_threads = max(1, settings.cores() // jobs)
    graph_pipeline.crowded = True
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(task) for task in tasks]
            if done:
                for future in futures:
                    future.add_done_callback(lambda f: f.exception() is None and done(f.result()))
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                processes.kill_everything()
                raise
    finally:
        build.compile_threads = None
        graph_pipeline.crowded = False


def check_many(targets: list[tuple[Puzzle, engine.Options]], jobs: int,
               done: Callable[[PuzzleResult], None] | None = None) -> list[PuzzleResult]:
    """Check every (puzzle, options) with `jobs` at a time; results in the order of `targets`.
    The longest start first (an op puzzle builds MAX graphs, a minute or two cold), so that
    the last to finish is not a long one started late."""
    order = sorted(range(len(targets)), key=lambda i: (-expected_cost(targets[i][0]), i))
    tasks = [functools.partial(engine.check_puzzle, *targets[i]) for i in order]
    results = run_all(tasks, jobs, done)
    back: list[PuzzleResult] = [None] * len(targets)  # type: ignore[list-item]
    for i, result in zip(order, results):
        back[i] = result
    return back


def expected_cost(puzzle: Puzzle) -> int:
    """A rough rank of how long a cold check takes: a graph per shape of every op part."""
    if puzzle.kind != "op":
        return 0
    return 1 + sum(len(p.devices) for p in puzzle.parts if p.graph)
