"""The simulator's findings in the learner's terms.

wbsim.c reports what it saw in its own terms: a kind, a global thread number,
a byte's element index, sites already turned into places (kernelrun). Here a
finding becomes what a learner can act on: `shared[8]` or `output[2, 3]`,
"threads 13-15 of block 1", the line of the access and, for a race, the line
of the other access, and how many threads did the same.
"""

from __future__ import annotations

import re

from ..compile.launcher import CaseSpec, LaunchSpec, Plan
from ..compile.symbols import Place
from ..core.i18n import Msg, msg
from ..core.results import Finding

ARRAY_NAME = re.compile(r"\b(?:var\s+)?([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*stack_allocation\b")
RACES = ("shared_race", "global_race")


def describe(raw: dict, plan: Plan, case_name: str) -> Finding:
    """One raw finding (a dict from result.json, places attached) as a Finding."""
    index = raw.get("case", -1)
    spec = plan.cases[index] if 0 <= index < len(plan.cases) else None
    launch = _launch(spec, raw.get("launch", ""))
    kind = raw.get("kind", "")
    place: Place | None = raw.get("place")
    other: Place | None = raw.get("other_place")
    who = threads(raw, launch)
    values: dict = {"who": who, "line": place.label if place else "?", "other_line": other.label if other else "?"}
    if kind in ("read_out_of_bounds", "out_of_bounds", "shared_read_out_of_bounds", "shared_out_of_bounds",
                "uninitialized_read", "async_read_before_wait", *RACES):
        name, shape, shared = _target(raw, spec)
        values.update(buffer=name, size=raw.get("size", 0),
                      element=element(name, shape, raw.get("index_min", raw.get("index", 0)),
                                      raw.get("index_max", raw.get("index", 0))))
    if kind in ("read_out_of_bounds", "out_of_bounds", "shared_read_out_of_bounds", "shared_out_of_bounds"):
        key = {"read_out_of_bounds": "finding.sim_read_outside", "out_of_bounds": "finding.sim_write_outside",
               "shared_read_out_of_bounds": "finding.sim_shared_read_outside",
               "shared_out_of_bounds": "finding.sim_shared_write_outside"}[kind]
        message = _vector_outside(raw, spec, values) or msg(key, **values)
    elif kind == "misaligned_access":
        message = _misaligned(raw, spec, values)
    elif kind == "uninitialized_read":
        shared = raw.get("allocation", -1) >= 0
        message = msg("finding.sim_unwritten_shared" if shared else "finding.sim_unwritten", **values)
    elif kind in RACES:
        message = _race(raw, values, launch)
    elif kind == "async_read_before_wait":
        other_thread = raw.get("other_thread", -1)
        message = msg("finding.sim_async_read_before_wait", copier=global_thread(launch, other_thread)
                      if other_thread >= 0 else msg("sim.no_thread"), **values)
    elif kind.startswith("mbarrier_"):
        message = _mbarrier(raw, values, launch)
    elif kind in ("divergent_barrier", "barrier_mismatch"):
        message, place = _barrier(raw, launch)
    elif kind in ("invalid_read", "invalid_write", "invalid_access"):
        message = msg("finding.sim_" + kind, who=threads(raw, launch) if raw.get("thread", -1) >= 0 or
                      raw.get("threads") else msg("sim.cpu_kernel"), line=values["line"])
    elif kind in ("wild_write", "harness_write"):
        message = msg("finding.sim_" + kind, who=writer(raw, launch), line=values["line"],
                      address=f"{int(raw.get('address', 0) or 0):#x}")
    elif kind in ("warp_lane_missing", "warp_lane_finished"):
        message = msg("finding.sim_" + kind, who=who, line=values["line"], src=raw.get("source_lane", "?"),
                      lanes=raw.get("lanes", raw.get("size", "?")))
    elif kind == "warp_divergence":
        message, place = _warp_divergence(raw, launch)
    elif kind in ("divergent_cluster_barrier", "cluster_barrier_mismatch"):
        message, place = _cluster_barrier(raw, launch, values)
    elif kind == "cluster_unpaired":
        message = msg("finding.cluster_arrive_twice" if raw.get("hazard") == "arrive-twice"
                      else "finding.cluster_wait_without_arrive", who=who, line=values["line"])
    elif kind in ("host_read", "host_write"):
        name, shape, _ = _target(raw, spec)
        message = msg("finding.sim_" + kind, kernel=raw.get("launch", ""), buffer=name,
                      element=element(name, shape, raw.get("index_min", raw.get("index", 0)),
                                      raw.get("index_max", raw.get("index", 0))))
    elif kind == "shared_overflow":
        message = msg("finding.sim_shared_overflow", limit=raw.get("limit", 0) // 1024)
    elif kind == "shared_calls_differ":
        message = msg("finding.sim_shared_calls_differ")
    else:
        message = msg("finding.other", what=str({k: v for k, v in raw.items() if "place" not in k}))
    found = Finding("sim", kind, message, kernel=raw.get("launch", ""), case=case_name,
                    threads=int(raw.get("count", 1)))
    locate(found, place, other)
    return found


def timeout(info: dict, plan: Plan, case_name: str, limit: float) -> Finding:
    """Where an endless loop was when the simulator stopped it."""
    index = info.get("case", -1)
    spec = plan.cases[index] if 0 <= index < len(plan.cases) else None
    launch = _launch(spec, info.get("launch", ""))
    place: Place | None = info.get("place")
    if info.get("cpu"):
        who: Msg = msg("sim.cpu_kernel")
    elif info.get("thread", -1) >= 0:
        who = global_thread(launch, info["thread"])
    else:
        who = msg("sim.no_thread")
    line = place.label if place else "?"
    if info.get("why") == "stretch":
        message = msg("finding.sim_endless", who=who, seconds=f"{info.get('seconds', 0):.0f}", line=line)
    else:
        message = msg("finding.sim_too_long", who=who, limit=f"{limit:g}", line=line)
    found = Finding("sim", "endless_loop", message, kernel=info.get("launch", ""), case=case_name)
    locate(found, place, None)
    return found


def merge(findings: list[Finding]) -> list[Finding]:
    """One finding per bug: the same race seen from its two sides (a read after a write
    in one thread order, the write after the read in the other) is one race, a read of
    unwritten memory that a race explains is that race, a race between a read before an
    async copy's wait and that copy landing is the early read, and what every case shows is
    told once (with the first case that showed it, and the number of cases: one case may
    report the same line from several sites, buffers or thread orders, and that is one case)."""
    races = [f for f in findings if f.kind in RACES]
    early = {(f.case, f.file, tuple(sorted((f.line or 0, f.other_line or 0))))
             for f in findings if f.kind == "async_read_before_wait"}
    kept: list[Finding] = []
    seen: dict[tuple, Finding] = {}
    cases: dict[tuple, set[str]] = {}  # a finding's count is its cases: one case reports a bug from many sites
    for f in findings:
        if f.kind in RACES and (f.case, f.file, tuple(sorted((f.line or 0, f.other_line or 0)))) in early:
            continue  # the copy landing after that early read: the same bug, told once
        if f.kind == "uninitialized_read" and any(r.case == f.case and f.line in (r.line, r.other_line)
                                                  and r.file == f.file for r in races):
            continue
        lines = tuple(sorted((f.line or 0, f.other_line or 0))) if f.kind in RACES else (f.line, f.other_line)
        key = (f.kind, f.kernel, f.file, lines)
        if key in seen:
            cases[key].add(f.case)
            seen[key].count = len(cases[key])
            continue
        seen[key] = f
        cases[key] = {f.case}
        kept.append(f)
    return kept


# ---------------------------------------------------------------------------
# Threads and elements
# ---------------------------------------------------------------------------


def _launch(spec: CaseSpec | None, label: str) -> LaunchSpec | None:
    if spec is None or not spec.launches:
        return None
    return next((lau for lau in spec.launches if lau.name == label), spec.launches[0])


def split(linear: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return linear % x, (linear // x) % y, linear // (x * y)


def coords(values: tuple[int, int, int], dims: tuple[int, int, int]) -> str:
    rank = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
    return str(values[0]) if rank == 1 else "(" + ", ".join(map(str, values[:rank])) + ")"


def block_id(launch: LaunchSpec | None, linear) -> str:
    if launch is None or not isinstance(linear, int) or linear < 0:
        return str(linear)
    return coords(split(linear, launch.grid), launch.grid)


def thread_in_block(launch: LaunchSpec | None, linear: int) -> Msg:
    if launch is None:
        return msg("sim.thread", t=linear)
    return msg("sim.thread", t=coords(split(linear, launch.block), launch.block))


def global_thread(launch: LaunchSpec | None, me: int) -> Msg:
    """A thread named by its block and thread, from the simulator's block * threads + thread."""
    if launch is None:
        return msg("sim.thread", t=me)
    per_block = launch.block[0] * launch.block[1] * launch.block[2]
    block, thread = divmod(me, per_block)
    if launch.grid == (1, 1, 1):
        return msg("sim.thread", t=coords(split(thread, launch.block), launch.block))
    return msg("sim.thread_in_block", t=coords(split(thread, launch.block), launch.block),
               b=coords(split(block, launch.grid), launch.grid))


def threads(raw: dict, launch: LaunchSpec | None) -> Msg:
    """"thread 3", "threads 13-15 of block 1", or "40 threads, such as thread 4 of block 0"."""
    first = [t for t in raw.get("threads", []) if isinstance(t, int) and t >= 0]
    count = int(raw.get("count", len(first)) or len(first))
    if not first:
        return msg("sim.cpu_kernel") if raw.get("launch") == "cpu" else msg("sim.no_thread")
    if count <= 1:
        return global_thread(launch, first[0])
    lo, hi = raw.get("thread_min", min(first)), raw.get("thread_max", max(first))
    if launch is not None and hi - lo + 1 == count:
        per_block = launch.block[0] * launch.block[1] * launch.block[2]
        if lo // per_block == hi // per_block and launch.block[1] == launch.block[2] == 1:
            block = lo // per_block
            if launch.grid == (1, 1, 1):
                return msg("sim.thread_range", first=lo % per_block, last=hi % per_block, n=count)
            return msg("sim.thread_range_in_block", first=lo % per_block, last=hi % per_block, n=count,
                       b=coords(split(block, launch.grid), launch.grid))
    return msg("sim.threads_such_as", n=count, such=global_thread(launch, first[0]))


def writer(raw: dict, launch: LaunchSpec | None) -> Msg:
    """Who made a store the simulator refused: threads of a kernel (named), the CPU
    kernel, or a learner's host function (named by its launch)."""
    label = raw.get("launch", "")
    if any(isinstance(t, int) and t >= 0 for t in raw.get("threads", [])):
        return msg("sim.in_kernel", who=threads(raw, launch), kernel=label)
    if label == "cpu":
        return msg("sim.cpu_kernel")
    return msg("sim.host_function", kernel=label)


def element(name: str, shape: list[int], lo: int, hi: int) -> str:
    """`a[13]`, `a[13..15]`, `output[2, 3]`: elements as the learner indexes them."""
    def at(flat: int) -> str:
        if len(shape) <= 1 or flat < 0 or flat >= _size(shape):
            return str(flat)
        parts = []
        for dim in reversed(shape):
            flat, rest = divmod(flat, dim)
            parts.append(rest)
        return ", ".join(map(str, reversed(parts)))
    if lo == hi:
        return f"{name}[{at(lo)}]"
    if len(shape) <= 1:
        return f"{name}[{lo}..{hi}]"
    return f"{name}[{at(lo)}] … {name}[{at(hi)}]"


def _size(shape: list[int]) -> int:
    total = 1
    for d in shape:
        total *= d
    return total


def _target(raw: dict, spec: CaseSpec | None) -> tuple[str, list[int], bool]:
    """(name, shape, shared) of what a finding is about."""
    array = raw.get("array")
    if isinstance(array, dict) or raw.get("allocation", -1) >= 0:
        array = array if isinstance(array, dict) else {}
        place: Place | None = array.get("place")
        found = array_name(place)
        name = found.group(1) if found else f"shared{raw.get('allocation', 0) + 1}"
        rank = int(array.get("rank", 1)) or 1
        return name, [int(d) for d in array.get("shape", [raw.get("size", 0)])[:rank]], True
    name = raw.get("buffer", "")
    buf = spec.buffers.get(name) if spec else None
    return name, list(buf.shape) if buf else [int(raw.get("size", 0))], False


def array_name(place: Place | None) -> re.Match | None:
    """`products` in `var products = stack_allocation[...]`, which may span lines: on the
    allocation's own line, else the nearest one above it (two arrays allocated one after
    the other: the line above may hold the first one's)."""
    if place is None:
        return None
    found = ARRAY_NAME.search(place.text)
    if found is None:
        found = next(reversed(list(ARRAY_NAME.finditer(f"{place.before} {place.text}"))), None)
    return found


def _vector_outside(raw: dict, spec: CaseSpec | None, values: dict) -> Msg | None:
    """A vector access (several elements at once) that began in a buffer or shared array
    and ran past its end (or began before its start): which elements it began at, and
    which of its elements lie outside. None for a single element's access."""
    elem, width = int(raw.get("elem", 0) or 0), int(raw.get("bytes", 0) or 0)
    if elem <= 0 or width <= elem or "start_min" not in raw:
        return None
    name, shape, shared = _target(raw, spec)
    where = msg(("sim.before_start_of" if raw.get("before") else "sim.past_end_of") + ("_shared" if shared else ""),
                buffer=name, size=values["size"])
    start = element(name, shape, raw["start_min"], raw["start_max"])
    key = "finding.sim_vector_write_outside" if raw.get("kind", "").endswith("out_of_bounds") and \
        not raw.get("kind", "").endswith("read_out_of_bounds") else "finding.sim_vector_read_outside"
    return msg(key, who=values["who"], lanes=width // elem, start=start, element=values["element"], where=where,
               line=values["line"])


def _misaligned(raw: dict, spec: CaseSpec | None, values: dict) -> Msg:
    """A load or store at an address that is not a multiple of the alignment its
    instruction needs: the buffer and element, the width, and how far off the address is."""
    name, shape, shared = _target(raw, spec)
    index = raw.get("index", 0)
    elem, width = int(raw.get("elem", 0) or 1), int(raw.get("bytes", 0) or 0)
    return msg("finding.sim_misaligned_write" if raw.get("write") else "finding.sim_misaligned_read",
               who=values["who"], kernel=raw.get("launch", ""), line=values["line"],
               element=element(name, shape, index, index), lanes=max(1, width // elem), bytes=width,
               align=raw.get("align", "?"), misalign=raw.get("misalign", "?"),
               what=msg("sim.shared_array" if shared else "sim.buffer", buffer=name))


def _race(raw: dict, values: dict, launch: LaunchSpec | None) -> Msg:
    hazard = raw.get("hazard", "")
    other = raw.get("other_thread", -1)
    other_who = global_thread(launch, other) if other >= 0 else msg("sim.another_block")
    blocks = raw.get("kind") == "global_race" and other >= 0 and launch is not None and (
        other // max(1, launch.block[0] * launch.block[1] * launch.block[2])
        != (raw.get("threads") or [0])[0] // max(1, launch.block[0] * launch.block[1] * launch.block[2]))
    blocks = blocks or (raw.get("kind") == "global_race" and other < 0)
    suffix = "_blocks" if blocks else ""
    if blocks and other >= 0 and launch is not None and launch.clustered:
        per_block = max(1, launch.block[0] * launch.block[1] * launch.block[2])
        mine = (raw.get("threads") or [0])[0] // per_block
        if cluster_of(launch, mine) == cluster_of(launch, other // per_block):
            suffix = "_cluster"  # a cluster barrier could have ordered them
    if hazard == "write-write":
        ranged = values["who"].key in ("sim.thread_range", "sim.thread_range_in_block")
        if ranged and raw.get("site") == raw.get("other_site") and other >= 0 and \
                raw.get("thread_min", other) - 1 <= other <= raw.get("thread_max", other) + 1:
            return msg("finding.sim_race_ww_all" + suffix, **values)  # one line, every thread of a range
        return msg("finding.sim_race_ww" + suffix, other=other_who, **values)
    if hazard == "read-after-write":  # this access read; the other wrote
        return msg("finding.sim_race_rw" + suffix, writer=other_who, reader=values["who"],
                   write_line=values["other_line"], read_line=values["line"], element=values["element"],
                   who=values["who"])
    return msg("finding.sim_race_rw" + suffix, writer=values["who"], reader=other_who, write_line=values["line"],
               read_line=values["other_line"], element=values["element"], who=values["who"])


def _mbarrier(raw: dict, values: dict, launch: LaunchSpec | None) -> Msg:
    """An mbarrier's misuse: where it was initialised, what its phase has, who used it."""
    kind = raw.get("kind", "")
    values = {**values, "init_line": values["other_line"], "needs": raw.get("needs", "?"),
              "arrived": raw.get("arrived", "?"), "phase": raw.get("phase", "?"),
              "block": block_id(launch, raw.get("block", 0))}
    if kind == "mbarrier_deadlock":
        places: list[Place | None] = raw.get("wait_places", [])
        where = [msg("sim.waits_at", n=w[1], line=places[k].line if k < len(places) and places[k] else "?")
                 for k, w in enumerate(raw.get("waits", []))]
        return msg("finding.sim_mbarrier_deadlock", parked=raw.get("parked", 0), finished=raw.get("finished", 0),
                   at_barrier=raw.get("at_barrier", 0), where=where, **values)
    if kind == "mbarrier_incomplete":
        return msg("finding.sim_mbarrier_incomplete_reinit" if raw.get("reinit") else
                   "finding.sim_mbarrier_incomplete", **values)
    if kind == "mbarrier_wrong_phase":
        key = "old_token" if raw.get("reinit") else "stale_token" if raw.get("token") else "not_token"
        return msg("finding.sim_mbarrier_" + key, token_phase=raw.get("token_phase", "?"), **values)
    if kind == "mbarrier_race":
        other = raw.get("other_thread", -1)
        return msg("finding.sim_mbarrier_race_reinit" if raw.get("reinit") else "finding.sim_mbarrier_race",
                   other=global_thread(launch, other) if other >= 0 else msg("sim.no_thread"), **values)
    if kind == "mbarrier_count":
        return msg("finding.sim_mbarrier_count", given=raw.get("given", "?"), **values)
    return msg("finding.sim_mbarrier_uninitialized", **values)


def _barrier(raw: dict, launch: LaunchSpec | None) -> tuple[Msg, Place | None]:
    """Which barrier() the waiting threads wait at; for several, each with its threads."""
    per_block = launch.block[0] * launch.block[1] * launch.block[2] if launch else 1
    block = raw.get("block", 0)
    waits = raw.get("waits", [])
    places: list[Place | None] = raw.get("wait_places", [])
    def line_of(k: int) -> str:
        place = places[k] if k < len(places) else None
        return str(place.line) if place else "?"
    first_place = places[0] if places else None
    if raw.get("kind") == "divergent_barrier":
        stuck = waits[0][2] if waits else 0
        done = raw.get("finished_thread", -1)
        message = msg("finding.divergent_barrier" if len(waits) <= 1 else "finding.divergent_barriers",
                      finished=raw.get("finished", 0), waiting=raw.get("waiting", 0),
                      block=block_id(launch, block), done=thread_in_block(launch, done % per_block if done >= 0 else 0),
                      stuck=thread_in_block(launch, stuck), line=line_of(0),
                      where=[msg("sim.waits_at", n=w[1], line=line_of(k)) for k, w in enumerate(waits)])
        return message, first_place
    where = [msg("sim.waits_at", n=w[1], line=line_of(k)) for k, w in enumerate(waits)]
    return msg("finding.barrier_mismatch", block=block_id(launch, block), where=where), first_place


def cluster_of(launch: LaunchSpec, block: int) -> tuple[int, int, int]:
    """The cluster a block (its linear number) belongs to."""
    x, y, z = split(block, launch.grid)
    return x // launch.cluster[0], y // launch.cluster[1], z // launch.cluster[2]


def _cluster_barrier(raw: dict, launch: LaunchSpec | None, values: dict) -> tuple[Msg, Place | None]:
    """A cluster barrier some threads never reach, or threads of a cluster waiting for each
    other at different barriers."""
    places: list[Place | None] = raw.get("wait_places", [])
    waits = raw.get("waits", [])
    first_place = places[0] if places else None

    def line_of(k: int) -> str:
        place = places[k] if k < len(places) else None
        return str(place.line) if place else "?"
    if raw.get("hazard") == "phase":
        return msg("finding.cluster_barrier_mismatch_phase", line=values["line"],
                   other_line=values["other_line"]), raw.get("place")
    if raw.get("kind") == "divergent_cluster_barrier":
        done = raw.get("finished_thread", -1)
        message = msg("finding.divergent_cluster_barrier", finished=raw.get("finished", 0),
                      waiting=waits[0][1] if waits else raw.get("waiting", 0), line=line_of(0),
                      stuck=global_thread(launch, waits[0][2] if waits else 0),
                      done=global_thread(launch, done) if done >= 0 else msg("sim.no_thread"))
        return message, first_place
    # Cluster waits come first in `waits`; a barrier() waited at has no cluster waits after it.
    where = []
    for k, w in enumerate(waits):
        key = "sim.cluster_waits_at" if k < int(raw.get("cluster_waits", len(waits))) else "sim.waits_at"
        where.append(msg(key, n=w[1], line=line_of(k)))
    return msg("finding.cluster_barrier_mismatch", where=where), first_place


def _warp_divergence(raw: dict, launch: LaunchSpec | None) -> tuple[Msg, Place | None]:
    """Lanes of one warp that parted ways at a warp operation."""
    places: list[Place | None] = raw.get("wait_places", [])
    waits = raw.get("waits", [])
    where = [msg("sim.waits_at", n=w[1], line=places[k].line if k < len(places) and places[k] else "?")
             for k, w in enumerate(waits)]
    first = (raw.get("threads") or [0])[0]
    message = msg("finding.sim_warp_divergence", warp=raw.get("warp", 0), block=block_id(launch, raw.get("block", 0)),
                  at_op=raw.get("at_op", 0), elsewhere=raw.get("elsewhere", 0), where=where,
                  line=places[0].line if places and places[0] else "?", who=global_thread(launch, first))
    return message, places[0] if places else None


def locate(found: Finding, place: Place | None, other: Place | None) -> None:
    """Put a finding on its places: file, line, the lines merged into it, and why a line is uncertain."""
    if place is not None:
        found.file, found.line, found.column, found.source = place.file, place.line, place.column, place.text
        found.also = list(place.also)
    if other is not None:
        found.other_file, found.other_line, found.other_source = other.file, other.line, other.text
        found.other_also = list(other.also)
    notes = [line_note(p) for p in (place, other) if p is not None and p.given is not None]
    found.line_notes = list({n.text("en"): n for n in notes}.values())


def line_note(place: Place) -> Msg:
    """Why a place's line is uncertain, or was moved from the compiler's (accesslines.py)."""
    given, text, own = place.given or (place.line, place.text, True)
    if place.also:
        return msg("lines.merged" if own else "lines.merged_unlined", lines=place.label, given=given, text=text)
    if place.about:
        return msg("lines.about", line=place.line, text=text)
    return msg("lines.moved" if own else "lines.moved_unlined", line=place.line, given=given, text=text)
