"""Stated methods: where a part's text says how a kernel works, the checks hold it.

Right values can come from a method the text does not ask for: a scalar loop where it
asks for SIMD width, a shuffle-down tree where it asks for a butterfly, plain loads
where it asks for async copies, barrier() where it asks for an mbarrier, the stores of
a pipeline made by the wrong thread group. Chapter 2's access budgets count accesses;
these rules ([[parts.method]], manifest.MethodRule) look at how each launch worked:

- on the simulator, from what it recorded in each launch's first repeat (kernelrun's
  METHODS and USES: warp operations by kind, async copies and waits, barrier() rounds,
  mbarrier arrivals and completed waits, every access by its width; per buffer its
  plain loads and async copies' reads), from who wrote each output element and block
  0's shared arrays (writers.bin), and per line, from the operations each source line
  made and the width and buffer of each access line (result.json's sites);
- on the GPU, where the compiled code shows it: the PTX of the GPU build the workbook
  makes anyway (workbook/compile/ptx.py) has `shfl.sync.bfly` or `.down`, `cp.async`,
  `mbarrier.arrive`, `ld.global.v4` or not. Which thread wrote what, which buffer a
  load read and how many barrier() rounds ran are the simulator's alone; so is a rule
  with `gpu = false`, where the compiler's choices hide it (p23: the vectors' alignment).

A broken rule is a `method` finding in the learner's language: that the values were
right (when every case passed: the method is all that failed), the rule (its why), the
kernel, what it did instead, and on the simulator the lines that did it, the busiest
first; the finding names that line. A PTX finding names the kernel and the instructions,
and says that the simulator names the line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..compile import launcher, ptx
from ..compile.symbols import Place
from ..core.i18n import Msg, msg
from ..core.results import DeviceResult, Finding, LaunchAccess
from ..course import manifest
from ..course.manifest import MethodRule, Part
from ..run import kernelrun, simfindings

if TYPE_CHECKING:
    from ..check.engine import Check

# result.json's sites (kernelrun): a source site's kernel and operations, an access site's
# counts (global reads, global writes, shared reads, shared writes), bytes and buffer.
SOURCE_KERNEL, SOURCE_OPS = kernelrun.SOURCE_OPS - 1, kernelrun.SOURCE_OPS
ACCESSES, BYTES = 3, kernelrun.SITE_BYTES
BUFFER = BYTES + 4
GLOBAL_KINDS = {"load": ("global_load",), "store": ("global_store",), "": ("global_load", "global_store")}

# What the PTX of a kernel shows of each method (counted per instruction in the text).
PTX_OPS = {
    "shuffle_down": re.compile(r"\bshfl\.sync\.down\b"),
    "shuffle_up": re.compile(r"\bshfl\.sync\.up\b"),
    "shuffle_xor": re.compile(r"\bshfl\.sync\.bfly\b"),
    "shuffle_idx": re.compile(r"\bshfl\.sync\.idx\b"),
    "vote": re.compile(r"\bvote\.sync\.(?:ballot|any|all|uni)\b"),
    "mma": re.compile(r"\b(?:wgmma\.mma_async|mma\.sync)\b"),
    "async_copy": re.compile(r"\bcp\.async\.(?:ca|cg)\b|\bcp\.async\.bulk\b"),
    "mbarrier_arrive": re.compile(r"\bmbarrier\.arrive\b"),
    "mbarrier_wait": re.compile(r"\bmbarrier\.(?:test_wait|try_wait)\b"),
}
PTX_NAMES = {"shuffle_down": "shfl.sync.down", "shuffle_up": "shfl.sync.up", "shuffle_xor": "shfl.sync.bfly",
             "shuffle_idx": "shfl.sync.idx", "vote": "vote.sync", "mma": "mma.sync", "async_copy": "cp.async",
             "mbarrier_arrive": "mbarrier.arrive", "mbarrier_wait": "mbarrier.test_wait/try_wait"}
PTX_KINDS = ("warp_ops", "access_width", "async_copy", "mbarrier")  # what the PTX can show at all
# Which of a rule's breaks is told first, when launches break it in different ways.
PRIORITY = {"finding.method_required": 1, "finding.method_no_mbarrier": 1}


# ---------------------------------------------------------------------------
# The simulator
# ---------------------------------------------------------------------------


def sim_findings(check: Check, part: Part, dev: DeviceResult, raw: kernelrun.KernelRun) -> list[Finding]:
    """One finding per broken rule of the part, at the first case (and launch) that breaks it."""
    found: list[Finding] = []
    values_right = bool(dev.cases) and all(c.passed for c in dev.cases)
    launches = sorted(dev.access, key=lambda a: (a.index, a.launch))
    for rule in part.methods:
        if rule.kind == "writers":
            broken = _writers(check, part, rule, raw)
        else:
            # The first launch that breaks the rule, what it did in its stead first: the
            # shuffles a rule forbids before one it misses, barrier() rounds before a
            # missing mbarrier (a launch of one step may have none too many).
            seen = [b for a in launches if not rule.kernel or a.kernel == rule.kernel
                    if (b := _launch_rule(check, rule, a, raw)) is not None]
            broken = min(seen, key=lambda b: PRIORITY.get(b[0], 0)) if seen else None
        if broken is None:
            continue
        key, values, kernel, case, place = broken
        message = msg(key, values=msg("budget.values_right") if values_right else "", kernel=kernel,
                      why=rule.why, case=case, **values)
        found.append(Finding("sim", "method", message, kernel=kernel, case=case, file=place.file if place else "",
                             line=place.line if place else None, source=place.text if place else ""))
    return found


def _launch_rule(check: Check, rule: MethodRule, access: LaunchAccess, raw: kernelrun.KernelRun):
    """(message key, its values, kernel, case, the busiest line's place) if one launch breaks
    a rule; None if it keeps it (or there is nothing to judge it by)."""
    counts, kernel, case = access.methods, access.kernel, access.case
    spec = check.plan.cases[access.index] if 0 <= access.index < len(check.plan.cases) else None
    if rule.kind == "warp_ops":
        for op in rule.forbidden:
            if counts.get(op):
                where, place = _op_lines(check, raw, kernel, (op,))
                return ("finding.method_forbidden", {"op": msg("method.op_" + op), "count": counts[op],
                                                     "where": where}, kernel, case, place)
        for op in rule.required:
            if not counts.get(op):
                used = [o for o in manifest.WARP_OPS if counts.get(o)]
                where, place = _op_lines(check, raw, kernel, tuple(used))
                instead = msg("method.instead", ops=[msg("method.op_" + o) for o in used],
                              where=where) if used else ""
                return ("finding.method_required", {"op": msg("method.op_" + op), "instead": instead},
                        kernel, case, place)
        return None
    if rule.kind == "access_width":
        kinds = GLOBAL_KINDS[rule.access]
        narrow = sum(counts.get(f"{k}_{w}", 0) for k in kinds for w in kernelrun.WIDTHS if w < rule.min_bytes)
        most = _limit(rule.max_narrow, spec)
        if most is None or narrow <= most:
            return None
        where, place = _narrow_lines(check, raw, kernel, kinds, rule.min_bytes)
        return ("finding.method_narrow", {"count": narrow, "limit": most, "bytes": rule.min_bytes,
                                          "what": msg("method.access_" + (rule.access or "both")),
                                          "where": where}, kernel, case, place)
    if rule.kind == "async_copy":
        use = access.buffers.get(rule.buffer, {})
        if use.get("loads"):
            where, place = _access_lines(check, raw, kernel, 0, rule.buffer)
            return ("finding.method_plain_load", {"buffer": rule.buffer, "count": use["loads"], "where": where},
                    kernel, case, place)
        if not use.get("async_reads"):
            return ("finding.method_no_async", {"buffer": rule.buffer}, kernel, case, None)
        return None
    if rule.kind == "mbarrier":
        rounds, most = counts.get("barrier_rounds", 0), _limit(rule.max_barriers, spec)
        if most is not None and rounds > most:
            where, place = _op_lines(check, raw, kernel, ("barrier",))
            return ("finding.method_barriers", {"count": rounds, "limit": most, "where": where}, kernel, case, place)
        if not counts.get("mbarrier_arrive") or not counts.get("mbarrier_wait"):
            what = "method.no_arrive" if not counts.get("mbarrier_arrive") else "method.no_wait"
            where, place = _op_lines(check, raw, kernel, ("barrier",)) if counts.get("barrier") else ("", None)
            return ("finding.method_no_mbarrier", {"what": msg(what), "where": msg("method.waits_at", where=where)
                                                   if place else ""}, kernel, case, place)
    return None


def _limit(limit: int | str, spec: launcher.CaseSpec | None) -> int | None:
    if isinstance(limit, int):
        return limit
    return None if spec is None else manifest.evaluate(limit, spec.names())


def _writers(check: Check, part: Part, rule: MethodRule, raw: kernelrun.KernelRun):
    """The first case in which an element of the rule's output (or block 0's shared array)
    was last written by a thread outside the stated group, or in which the group never
    wrote the array at all."""
    for index in check.indices(part):
        spec = check.plan.cases[index]
        launch = next((ln for ln in reversed(spec.launches) if not rule.kernel or ln.name == rule.kernel), None)
        if launch is None:
            continue
        per_block = launch.block[0] * launch.block[1] * launch.block[2]
        first, last = (manifest.evaluate(t, spec.names()) if isinstance(t, str) else t for t in rule.threads)
        case = check.case_name(index)
        if rule.output:
            ids = raw.writers.get((index, list(part.outputs).index(rule.output)))
            shape = list(spec.buffers[rule.output].shape)
            name = rule.output
        else:
            at = next(n for n, ln in enumerate(spec.launches) if ln is launch)
            ids = _shared_writers(raw, index, rule.array, at)
            shape = []
            name = rule.array
            if ids is None:
                continue  # no shared array of that name: nothing here to judge by
        if ids is None:
            continue
        written = [(e, int(w)) for e, w in enumerate(ids) if w >= 0]
        if rule.array and not written:
            return ("finding.method_unwritten", {"array": name, "first": first, "last": last},
                    launch.name, case, None)
        wrong = next(((e, w) for e, w in written if not first <= w % per_block <= last), None)
        if wrong is None:
            continue
        element, who = wrong
        if rule.output:
            where, place = _access_lines(check, raw, launch.name, 1, rule.output)
        else:
            where, place = _shared_store_lines(check, raw, launch.name, rule.array)
        return ("finding.method_writers", {"element": simfindings.element(name, shape, element, element),
                                           "who": simfindings.global_thread(launch, who), "first": first,
                                           "last": last, "where": where}, launch.name, case, place)
    return None


def _shared_writers(raw: kernelrun.KernelRun, index: int, array: str, launch: int):
    """Who wrote each element of block 0's shared array `array` (by its name in the kernel)
    in case `index`: after launch number `launch` of the case where the simulator mapped it
    then, else after its last launch that used an array of that name."""
    maps = [m for m in raw.shared.get(index, [])
            if (found := simfindings.array_name(m.place)) and found.group(1) == array]
    chosen = next((m for m in maps if m.launch == launch), maps[-1] if maps else None)
    return None if chosen is None else chosen.writers


# --- the lines that did it -----------------------------------------------------------


def _lines(check: Check, raw: kernelrun.KernelRun, weights: dict[int, int],
           keep=None) -> tuple[Msg | str, Place | None]:
    """Sites (id -> how much they did) as the learner's lines, the busiest first, and the
    busiest line's place; `keep` may pass over places (a line that names another array)."""
    if not weights or raw.binary is None:
        return msg("budget.line", line="?"), None
    places = check.symbolize(raw.binary, raw.sites, set(weights), {})
    made: dict[int, int] = {}
    where: dict[int, Place] = {}
    for sid, place in places.items():
        if keep is not None and not keep(place):
            continue
        made[place.line] = made.get(place.line, 0) + weights[sid]
        where.setdefault(place.line, place)
    order = sorted(made, key=lambda line: (-made[line], line))
    if not order:
        return msg("budget.line", line="?"), None
    text = ", ".join(map(str, order))
    return (msg("budget.lines", lines=text) if len(order) > 1 else msg("budget.line", line=text)), where[order[0]]


def _op_lines(check: Check, raw: kernelrun.KernelRun, kernel: str, ops: tuple[str, ...]):
    """The source lines of `kernel` that made these operations (warp operations, barrier() ...)."""
    at = [SOURCE_OPS + kernelrun.OPS.index(op) for op in ops]
    weights = {n: sum(int(site[k]) for k in at) for n, site in enumerate(raw.sites, 1)
               if len(site) >= SOURCE_OPS + len(kernelrun.OPS) and site[0] == 0 and site[1] == 0
               and site[SOURCE_KERNEL] == kernel}
    return _lines(check, raw, {n: w for n, w in weights.items() if w})


def _is_access(site: list) -> bool:
    return len(site) > BUFFER and not (site[0] == 0 and site[1] == 0)


def _access_lines(check: Check, raw: kernelrun.KernelRun, kernel: str, write: int, buffer: str):
    """The lines of `kernel` that loaded (write 0) or stored (1) global memory of `buffer`."""
    weights = {n: int(site[ACCESSES + write]) for n, site in enumerate(raw.sites, 1)
               if _is_access(site) and site[2] == kernel and site[BUFFER] == buffer and site[ACCESSES + write]}
    return _lines(check, raw, weights)


def _narrow_lines(check: Check, raw: kernelrun.KernelRun, kernel: str, kinds: tuple[str, ...], least: int):
    """The lines of `kernel` whose global accesses of these kinds are narrower than `least` bytes."""
    columns = [kernelrun.ACCESS_KINDS.index(k) for k in kinds]
    weights = {}
    for n, site in enumerate(raw.sites, 1):
        if not _is_access(site) or site[2] != kernel:
            continue
        narrow = sum(int(site[ACCESSES + c]) for c in columns
                     if site[ACCESSES + c] and int(site[BYTES + c]) < least * int(site[ACCESSES + c]))
        if narrow:
            weights[n] = narrow
    return _lines(check, raw, weights)


def _shared_store_lines(check: Check, raw: kernelrun.KernelRun, kernel: str, array: str):
    """The lines of `kernel` that stored to shared memory, those that name `array` first."""
    weights = {n: int(site[ACCESSES + 3]) for n, site in enumerate(raw.sites, 1)
               if _is_access(site) and site[2] == kernel and site[ACCESSES + 3]}
    naming = _lines(check, raw, weights, keep=lambda p: f"{array}[" in p.text.replace(" [", "["))
    return naming if naming[1] is not None else _lines(check, raw, weights)


# ---------------------------------------------------------------------------
# The GPU build's PTX
# ---------------------------------------------------------------------------


def ptx_rules(part: Part) -> list[MethodRule]:
    """The part's rules the PTX can show."""
    return [r for r in part.methods if r.gpu and r.kind in PTX_KINDS]


def ptx_facts(data: bytes, module: str, names: list[str]) -> dict[str, dict[str, int]]:
    """Per kernel named, over all its instantiations: how many instructions of each PTX_OPS
    kind it has, and its widest global load and store in bytes ("load_bytes", "store_bytes")."""
    found: dict[str, dict[str, int]] = {}
    for text in ptx.modules(data):
        for entry, body in ptx.entries(text).items():
            name = ptx.kernel_of(entry, module, names)
            if name is None:
                continue
            facts = found.setdefault(name, {})
            for op, pattern in PTX_OPS.items():
                facts[op] = facts.get(op, 0) + len(pattern.findall(body))
            loads, stores = ptx.accesses(body)
            facts["load_bytes"] = max(facts.get("load_bytes", 0), loads.widest_bits // 8)
            facts["store_bytes"] = max(facts.get("store_bytes", 0), stores.widest_bits // 8)
    return found


def ptx_findings(check: Check, part: Part, data: bytes, values_right: bool) -> list[Finding]:
    """The part's rules on the GPU build's PTX (`data`: the built program): one finding per
    broken rule and kernel. A kernel whose PTX is not found is not judged here."""
    rules = ptx_rules(part)
    if not rules:
        return []
    kernels = [ln.name for ln in part.launches if not ln.host]
    # Every kernel of the module is named, so that another part's kernel is never taken for one
    # of this part's (a long name's entry is matched by its start: p26's scan and its butterfly).
    every = sorted({ln.name for p in check.puzzle.parts for ln in p.launches if not ln.host})
    facts = ptx_facts(data, check.puzzle.module, every)
    found: list[Finding] = []
    for rule in rules:
        for kernel in [rule.kernel] if rule.kernel else kernels:
            have = facts.get(kernel)
            if have is None:
                continue
            key, values = _ptx_rule(rule, have)
            if key:
                message = msg(key, values=msg("budget.values_right") if values_right else "", kernel=kernel,
                              why=rule.why, **values)
                found.append(Finding("ptx", "method", message, kernel=kernel))
    return found


def _ptx_rule(rule: MethodRule, have: dict[str, int]) -> tuple[str, dict]:
    """The message key and values for a rule the PTX breaks ("" where it keeps it)."""
    if rule.kind == "warp_ops":
        for op in rule.forbidden:
            if have.get(op):
                return "finding.method_ptx_has", {"instr": PTX_NAMES[op], "count": have[op]}
        for op in rule.required:
            if not have.get(op):
                return "finding.method_ptx_lacks", {"instr": PTX_NAMES[op]}
    elif rule.kind == "access_width":
        for what in ("load", "store") if not rule.access else (rule.access,):
            if have.get(f"{what}_bytes", 0) < rule.min_bytes:
                return "finding.method_ptx_narrow", {"what": msg("method.ptx_" + what), "bytes": rule.min_bytes,
                                                     "widest": have.get(f"{what}_bytes", 0)}
    elif rule.kind == "async_copy":
        if not have.get("async_copy"):
            return "finding.method_ptx_lacks", {"instr": PTX_NAMES["async_copy"]}
    elif rule.kind == "mbarrier":
        for op in ("mbarrier_arrive", "mbarrier_wait"):
            if not have.get(op):
                return "finding.method_ptx_lacks", {"instr": PTX_NAMES[op]}
    return "", {}
