"""Checking many puzzles at once, and the verdict cache: the same verdicts, sooner.

The cache may only give back a verdict whose every input is the same: these
tests change one input at a time and expect a fresh run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import put_solution, put_wrong

from workbook.check import engine, scheduler, verdicts
from workbook.compile import build
from workbook.core import results
from workbook.core.results import Status
from workbook.course import catalog

pytestmark = pytest.mark.slow


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of this test's own: the user's folder in it (cachetrust.py)."""
    monkeypatch.setenv("WORKBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"u{os.geteuid()}"


def quick(**more) -> engine.Options:
    return engine.Options(quick=True, devices=("sim",), **more)


def test_the_same_check_again_is_a_cache_hit_and_any_change_is_not(root, cache):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    first = engine.check_puzzle(puzzle, quick())
    assert first.status == Status.PASS and not first.cached
    # Its CPU-seconds per program (a cold check's floor is made of these): built, then run.
    assert first.cpu.get("mojo build", 0) > 0.5 and first.cpu.get("launcher", 0) > 0
    # Beside the program built, how it was built (the benchmark times each compile again with it).
    recorded = [json.loads(c.read_text()) for c in cache.glob("build/p01-*/launch/*/host.cmd")]
    assert len(recorded) == 1 and recorded[0]["args"][0] == "build" and "--sanitize" in recorded[0]["args"]
    assert [a for a in recorded[0]["args"] if a.endswith("launch_host.mojo") and Path(a).is_file()]
    assert Path(recorded[0]["cwd"]).is_dir() and "-o" not in recorded[0]["args"]
    again = engine.check_puzzle(puzzle, quick())
    assert again.cached and again.status == Status.PASS and again.seed == first.seed
    # The same facts, less the per-thread counts the judging used (most of a kept verdict's bytes).
    judged_with = [a for part in first.parts for dev in part.kernels.values() for a in dev.access]
    assert judged_with and all(a.per_thread is not None for a in judged_with)
    kept = [a for part in again.parts for dev in part.kernels.values() for a in dev.access]
    assert kept and all(a.per_thread is None for a in kept)
    assert results.to_dict(again) | {"cached": False} == results.to_dict(first) | {"cached": False}
    fresh = engine.check_puzzle(puzzle, quick(cache=False))  # --no-cache
    assert not fresh.cached and "mojo build" not in fresh.cpu and fresh.cpu.get("launcher", 0) > 0  # built before
    assert not engine.check_puzzle(puzzle, quick(seed=first.seed + 1)).cached  # another seed
    assert not engine.check_puzzle(puzzle, engine.Options(quick=True)).cached  # other devices
    learner = puzzle.learner_files()[0]
    learner.write_text(learner.read_text() + "\n# a comment is a change\n")
    changed = engine.check_puzzle(puzzle, quick())
    assert not changed.cached and changed.seed != first.seed  # each version of the code meets its own values
    reference = puzzle.dir / "reference.py"
    reference.write_text(reference.read_text() + "\n# the puzzle changed\n")
    assert not engine.check_puzzle(puzzle, quick()).cached


def test_a_wrong_kernel_s_verdict_is_kept_as_a_failure(root, cache):
    put_wrong(root, "p01", "forgets_ten")
    puzzle = catalog.load("p01")
    assert engine.check_puzzle(puzzle, quick()).status == Status.FAIL
    again = engine.check_puzzle(puzzle, quick())
    assert again.cached and again.status == Status.FAIL


def test_a_timeout_is_never_kept(root, cache):
    put_solution(root, "p18")
    put_wrong(root, "p18", "endless_loop")
    puzzle = catalog.load("p18")
    options = engine.Options(quick=True, devices=("cpu",), run_timeout=3, seed=1)
    assert engine.check_puzzle(puzzle, options).status == Status.TIMEOUT
    assert not list((cache / "verdicts").glob("*.json")) if (cache / "verdicts").exists() else True


def test_a_verdict_kept_by_another_version_of_the_workbook_is_not_used(root, cache, monkeypatch):
    put_solution(root, "p01")
    puzzle = catalog.load("p01")
    engine.check_puzzle(puzzle, quick())
    verdicts.workbook_digest.cache_clear()
    monkeypatch.setattr(verdicts, "workbook_digest", lambda: "another version")
    assert not engine.check_puzzle(puzzle, quick()).cached


def test_the_gpu_compile_check_waits_for_the_simulators_build_and_not_after_a_compile_error(root, cache,
                                                                                          monkeypatch):
    """Where no GPU runs it, the GPU's build is only a compile check: where someone waits for
    the first verdict (events: run, watch) it starts once the simulator's build has ended (so
    it never slows that verdict, and is never starved of CPU by it), at the workbook's own
    priority; after a compile error in that build it does not start at all. In a batch (check
    of several puzzles) the builds run side by side, as where nobody listens (grade)."""
    put_solution(root, "p01")
    asked: list[tuple] = []
    real = build.launcher

    def recording(children, src, plan, which, target=None, tick=None, lines=False, nice=0):
        asked.append((which, "start", time.monotonic(), nice))
        try:
            return real(children, src, plan, which, target, tick, lines, nice)
        finally:
            asked.append((which, "end", time.monotonic(), nice))

    monkeypatch.setattr(build, "launcher", recording)
    monkeypatch.setenv("WORKBOOK_NO_GPU", "1")
    learner = root / "puzzles/p01/map.mojo"
    learner.write_text(learner.read_text() + f"\n# {time.time_ns()}\n")  # both builds cold
    heard = []
    result = engine.check_puzzle(catalog.load("p01"), engine.Options(cache=False), events=heard.append)
    assert result.status == Status.PASS and result.device_statuses()["gpu"] == Status.COMPILED
    assert [e.phase.key for e in heard if e.device == "stage"] == ["phase.gpu_check_next"]  # the first verdict, early
    when = {(which, what): at for which, what, at, _ in asked}
    assert when[("host", "end")] <= when[("gpu", "start")]
    assert {nice for *_, nice in asked} == {0}
    asked.clear()
    learner.write_text(learner.read_text().replace("var i", "i", 1))  # a name without `var`
    broken = engine.check_puzzle(catalog.load("p01"), engine.Options(cache=False), events=heard.append)
    assert broken.status == Status.COMPILE_ERROR and broken.diagnostics
    assert [which for which, what, *_ in asked if what == "start"] == ["host"]
    # In a batch the whole check's time counts: both build at once.
    asked.clear()
    put_solution(root, "p01")
    assert engine.check_puzzle(catalog.load("p01"), engine.Options(cache=False, batch=True)).status == Status.PASS
    assert sorted(which for which, what, *_ in asked if what == "start") == ["gpu", "host"]


def test_many_puzzles_at_once_give_the_verdicts_one_at_a_time_gives_in_the_order_asked(root, cache):
    for pid in ("p01", "p02", "p03"):
        put_solution(root, pid)
    put_wrong(root, "p02", "subtracts")
    asked = [(catalog.load(pid), quick(cache=False)) for pid in ("p03", "p01", "p02")]
    heard = []
    together = scheduler.check_many(asked, jobs=3, done=heard.append)
    assert [r.id for r in together] == ["p03", "p01", "p02"]
    assert [r.status for r in together] == [Status.PASS, Status.PASS, Status.FAIL]
    assert sorted(r.id for r in heard) == ["p01", "p02", "p03"]
    alone = [engine.check_puzzle(p, o) for p, o in asked]
    assert [r.status for r in alone] == [r.status for r in together]


def test_check_jobs_json_is_in_curriculum_order(root, cache, capsys):
    from test_cli import invoke

    for pid in ("p01", "p02", "p03"):
        put_solution(root, pid)
    code, out, _ = invoke(capsys, "check", "p03", "p01", "p02", "--jobs", "2", "--json", "--device", "sim",
                          "--quick")
    doc = json.loads(out)
    assert code == 0 and [p["id"] for p in doc["puzzles"]] == ["p03", "p01", "p02"]
    code, out, _ = invoke(capsys, "check", "p03", "p01", "p02", "--jobs", "2", "--json", "--device", "sim",
                          "--quick")
    assert all(p["cached"] for p in json.loads(out)["puzzles"])


def test_graph_cases_are_sharded_by_shape_and_merged_back_under_their_own_indices():
    """An op's graphs are built by several workers at once, one shape never split (MAX
    compiles a graph per shape), and the outputs come back under each case's own index."""
    import numpy as np

    from workbook.check.pipelines.graph import merge, shard
    from workbook.run.graphrun import GraphRun

    cases = [{"params": {"n": n}} for n in (4, 8, 4, 16, 8, 4)]
    shards = shard(cases, 2)
    assert sorted(i for s in shards for i in s) == list(range(6)) and len(shards) == 2
    for s in shards:  # a shape lives in one shard only
        assert all(cases[i]["params"] in [cases[j]["params"] for j in s] for i in s)
    assert {frozenset(cases[i]["params"]["n"] for i in s) for s in shards} == {frozenset({4}), frozenset({8, 16})}
    assert shard(cases, 1) == [list(range(6))] and len(shard(cases, 10)) == 3

    runs = [GraphRun("ok", outputs={local: [[np.full(1, i)]] for local, i in enumerate(s)}, seconds=1.0 + n)
            for n, s in enumerate(shards)]
    merged = merge(runs, shards)
    assert merged.status == "ok" and merged.seconds == 2.0
    assert {i: int(out[0][0][0]) for i, out in merged.outputs.items()} == {i: i for i in range(6)}
    runs[1].status = "crash"
    assert merge(runs, shards).status == "crash"  # one shard's crash is the part's


def test_parallel_work_is_sized_to_the_cores_this_process_may_use(monkeypatch):
    """taskset or a container's cpuset may allow fewer cores than the machine has: the
    graphs are built early, and sharded, only where the cores allowed are enough."""
    from workbook.core import settings

    for allowed, early, shards in ((set(range(2)), False, 1), (set(range(8)), True, 2), (set(range(16)), True, 4)):
        monkeypatch.setattr(settings.os, "sched_getaffinity", lambda pid, cpus=allowed: cpus)
        assert (settings.cores(), settings.graphs_early(), settings.graph_shards()) == (len(allowed), early, shards)
        assert not settings.graphs_early(crowded=True)  # several checks at once: not by default
    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "0")
    assert not settings.graphs_early()
    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "1")
    assert settings.graphs_early(crowded=True)


def test_checks_run_side_by_side_are_crowded_and_one_alone_is_not():
    """The scheduler says when several checks share the machine (graphs are then built
    after the kernels by default), and says so only while they run."""
    from workbook.check.pipelines import graph as graph_pipeline

    seen = scheduler.run_all([lambda: graph_pipeline.crowded] * 3, jobs=2)
    assert seen == [True] * 3 and graph_pipeline.crowded is False
    assert scheduler.run_all([lambda: graph_pipeline.crowded], jobs=4) == [False]


def test_check_many_starts_the_longest_first_and_reports_in_course_order(monkeypatch):
    from workbook.check import engine, scheduler
    from workbook.course import catalog

    started = []

    def fake_check(puzzle, options):  # the order the pool starts them in; a real check is not needed here
        started.append(puzzle.id)
        return puzzle.id

    monkeypatch.setattr(engine, "check_puzzle", fake_check)
    puzzles = [catalog.load(p) for p in ("p01", "p18", "p02", "p22")]
    results = scheduler.check_many([(p, engine.Options()) for p in puzzles], 1)
    assert results == ["p01", "p18", "p02", "p22"]
    assert set(started[:2]) == {"p18", "p22"}


@pytest.mark.slow
def test_a_check_stops_at_its_total_budget_and_says_what_did_not_run(root, monkeypatch):
    """A kernel that never ends: its run is cut at what is left of the check's budget (not
    the run's own, longer limit), and the report says the budget was spent and what it cost."""
    import shutil
    import time

    from workbook.check import engine
    from workbook.core.results import Status
    from workbook.course import catalog

    shutil.copyfile(Path(__file__).parent / "data" / "endless" / "map.mojo", root / "puzzles/p01/map.mojo")
    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "3")  # below the 5 s floor of the run's own limit
    monkeypatch.setenv("WORKBOOK_RUN_TIMEOUT", "300")
    monkeypatch.setenv("WORKBOOK_SIM_STRETCH", "300")  # the spinning thread's own watchdog would stop it first
    started = time.monotonic()
    result = engine.check_puzzle(catalog.load("p01"), engine.Options(devices=("sim",), quick=True, cache=False))
    assert time.monotonic() - started < 40
    assert result.status == Status.TIMEOUT
    assert result.budget_spent is not None and result.budget_spent.key == "check.budget_spent"


@pytest.mark.parametrize("first", [Status.PASS, Status.FAIL])
def test_a_budget_spent_before_a_run_started_is_a_timeout_unless_a_failure_came_first(root, monkeypatch, first):
    """The budget went on the build (a fast compile on a busy machine, say): the simulator never
    ran. That is a timeout saying so, never a pass on the CPU's word nor a bare `not_run`; a
    failure found before the budget ran out stays the verdict."""
    from workbook.judging import judge

    monkeypatch.setenv("WORKBOOK_CHECK_BUDGET", "0.5")  # spent as soon as it is asked

    def host_run(check, parts):
        for part in parts:
            check.kernels[part.id]["cpu"] = judge.device_result("cpu", first, "reason.kernels_first")
            if check.spent("sim"):
                check.kernels[part.id]["sim"] = judge.device_result("sim", Status.NOT_RUN, "reason.budget_spent")

    _stand_in_pipelines(monkeypatch)
    monkeypatch.setattr(engine.host, "run", host_run)
    result = engine.check_puzzle(catalog.load("p01"), engine.Options(solutions=True, cache=False))
    assert result.budget_spent is not None and result.budget_spent.key == "check.budget_spent"
    if first == Status.PASS:
        assert result.status == Status.TIMEOUT and result.problem == result.budget_spent
    else:
        assert result.status == Status.FAIL and result.problem is None


def _stand_in_pipelines(monkeypatch, *, gpu_after_plain=None, plain=Status.PASS):
    """Kernel pipelines that only set verdicts (`plain` for the host's): the engine's order
    is what is tested, not a build."""
    from workbook.judging import judge

    def host_run(check, parts):
        for part in parts:
            for device in ("cpu", "sim"):
                check.kernels[part.id][device] = judge.device_result(device, plain, "reason.kernels_first")

    def gpu_run(check, parts):
        for part in parts:
            check.kernels[part.id]["gpu"] = judge.device_result("gpu", Status.PASS, "reason.kernels_first")
        check.plain_in("gpu")
        if gpu_after_plain:
            gpu_after_plain(check, parts)

    monkeypatch.setattr(engine.host, "run", host_run)
    monkeypatch.setattr(engine.gpu, "run", gpu_run)
    monkeypatch.setattr(engine.Check, "gpu_runs", lambda self: True)


class _Packaged:
    ok = True


def test_an_op_s_graphs_start_on_the_plain_verdicts_and_a_tool_s_finding_still_settles_them(root, monkeypatch):
    """The graph stage waits for the plain runs, not for compute-sanitizer: here the GPU
    pipeline holds its 'sanitizer' until the graphs have started. When the tool then fails
    the kernels, the graphs are not judged, as if a plain run had failed them."""
    import threading

    from workbook.check.pipelines import graph as graph_pipeline
    from workbook.judging import judge

    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "0")
    put_solution(root, "p18")
    started = threading.Event()

    def sanitizer(check, parts):
        assert started.wait(30), "the graphs waited for the sanitizer"
        for part in parts:  # the tool's finding, after the graphs began
            check.kernels[part.id]["gpu"] = judge.device_result("gpu", Status.FAIL, "reason.kernels_first")

    def run(check, part, packaged, held=None):
        assert held is None and check.plain_verdicts.is_set()
        assert all(d.status == Status.PASS for d in check.kernels[part.id].values())
        started.set()
        return {"cpu": judge.device_result("cpu", Status.PASS, "reason.kernels_first")}

    _stand_in_pipelines(monkeypatch, gpu_after_plain=sanitizer)
    monkeypatch.setattr(graph_pipeline, "_package", lambda check, parts: _Packaged())
    monkeypatch.setattr(graph_pipeline, "run", run)
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(solutions=True, cache=False))
    part = result.parts[0]
    assert started.is_set() and part.kernels["gpu"].status == Status.FAIL
    assert part.graph["cpu"].status == Status.NOT_RUN and part.graph["cpu"].reasons[0].key == "reason.kernels_first"
    assert result.status == Status.FAIL


@pytest.mark.parametrize("plain", [Status.PASS, Status.FAIL])
def test_an_op_s_graphs_built_early_run_only_once_its_kernels_pass(root, monkeypatch, plain):
    """Where cores are to spare, the graphs' workers start with the kernels' builds and hold
    what they built: released when every plain run passed, dropped unrun when one failed."""
    from workbook.check.pipelines import graph as graph_pipeline
    from workbook.judging import judge

    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "1")
    put_solution(root, "p18")
    seen = []

    class Held(graph_pipeline.Started):
        def release(self):
            seen.append("release")

        def drop(self):
            seen.append("drop")

    def start(check, part, packaged, hold=False):
        assert hold and not check.plain_verdicts.is_set(), "the graphs were not started early"
        seen.append("start")
        return Held([], {d: judge.device_result(d, Status.PASS, "reason.kernels_first") for d in ("cpu", "gpu")})

    def host_run(check, parts):  # the host's plain verdicts wait until the graphs were started
        deadline = time.monotonic() + 30
        while "start" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
        for part in parts:
            for device in ("cpu", "sim"):
                check.kernels[part.id][device] = judge.device_result(device, plain, "reason.kernels_first")

    _stand_in_pipelines(monkeypatch, plain=plain)
    monkeypatch.setattr(engine.host, "run", host_run)
    monkeypatch.setattr(graph_pipeline, "_package", lambda check, parts: _Packaged())
    monkeypatch.setattr(graph_pipeline, "start", start)
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(solutions=True, cache=False))
    graph = result.parts[0].graph["cpu"]
    if plain == Status.PASS:
        assert seen == ["start", "release"] and graph.status == Status.PASS
    else:
        assert seen == ["start", "drop"]
        assert graph.status == Status.NOT_RUN and graph.reasons[0].key == "reason.kernels_first"


def test_a_real_graph_worker_built_early_is_ended_unrun_when_the_kernels_fail(root, monkeypatch):
    """The real worker and MAX: started with the builds, holding, and ended when the CPU
    kernel fails its plain run; the report says the graphs wait for the kernels. (The
    host's pipeline starts once the worker did: on two busy cores the kernels' verdict
    may otherwise come before the op is packaged, and no worker is started at all.)"""
    import psutil

    from workbook.run import graphrun

    monkeypatch.setenv("WORKBOOK_GRAPHS_EARLY", "1")
    put_wrong(root, "p18", "cpu_max_starts_at_zero")
    workers = []
    real_init, real_drop = graphrun.GraphWorker.__init__, graphrun.GraphWorker.drop

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        deadline = time.monotonic() + 60
        while not self.started and time.monotonic() < deadline:  # its own thread starts its processes
            time.sleep(0.01)
        workers.append((self, kwargs.get("hold"), [psutil.Process(c.pid) for c in self.started]))

    real_host = engine.host.run

    def host_after_the_worker(check, parts):  # the real pipeline, once a worker was started
        deadline = time.monotonic() + 120
        while not workers and time.monotonic() < deadline:
            time.sleep(0.05)
        real_host(check, parts)

    dropped = []
    monkeypatch.setattr(graphrun.GraphWorker, "__init__", init)
    monkeypatch.setattr(graphrun.GraphWorker, "drop", lambda self: (dropped.append(self), real_drop(self)))
    monkeypatch.setattr(engine.host, "run", host_after_the_worker)
    result = engine.check_puzzle(catalog.load("p18"), engine.Options(devices=("cpu",), cache=False))
    part = result.parts[0]
    assert part.kernels["cpu"].status == Status.FAIL, (part.kernels["cpu"], result.problem)
    assert part.graph["cpu"].status == Status.NOT_RUN and part.graph["cpu"].reasons[0].key == "reason.kernels_first"
    assert [hold for _, hold, _ in workers] == [True] and dropped == [workers[0][0]]
    assert workers[0][2] and all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in workers[0][2])
    assert all(child.proc.returncode is not None for child in workers[0][0].started)  # each reaped


def test_an_op_s_graph_stage_does_not_wait_forever_on_a_kernel_stage_that_broke(root, monkeypatch):
    """The graph stage waits for the plain verdicts; a kernel stage that raises before any
    pipeline starts must still let it go, so the error comes back instead of a hang."""
    import threading

    put_solution(root, "p18")

    def broken(*args, **kwargs):
        raise OSError("no room for the inputs")

    monkeypatch.setattr(engine.launcher, "write_inputs", broken)
    raised = []

    def check() -> None:
        try:
            engine.check_puzzle(catalog.load("p18"), engine.Options(solutions=True, cache=False))
        except OSError as exc:
            raised.append(exc)

    thread = threading.Thread(target=check, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the check hangs"
    assert raised and "no room" in str(raised[0])
