"""Building a puzzle: every artefact keyed by exactly what it is built from.

- `sources()` copies the puzzle's Mojo files (the learner's or the solution's)
  into a folder named by their hash: `src/` as written, `sim/` with the
  imports pointed at the simulator. An edit to a Python file, the text or the
  reference leaves this folder, and everything built in it, untouched.
- `launcher()` writes a generated launcher (workbook/compile/launcher.py) and builds it
  with `mojo build`, keyed by the generated text, the support code and the
  target: unchanged code is never rebuilt. Beside each program built, its
  `.cmd` holds the compiler's arguments, to build it again by hand.
- `precompile()` packages an op puzzle's Mojo code as a `.mojoc` for MAX,
  whose graph cache is keyed by that file's path: the same Mojo, the same path.
- `python_files()` copies an op puzzle's Python files (the graph) into a
  folder named by their hash, for the graph stage.

Everything here lies in the user's own cache folder (cachetrust.py), and is
used only while it is ours and as we built it: a finished folder's `.complete`
records the SHA-256 of every file written into it; beside each program, `.mojoc`
and runtime object, its `.ok` records its own. A build found otherwise (another
user's, a link, other bytes) is never run or loaded: it is set aside (or, ours,
removed) and built again, and `doctor` says so. MAX's own graph cache stays
where MAX keeps it (the user's own, or a graded run's throw-away one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..child.processes import Children
from ..core import cachetrust, settings, toolchain
from ..core.i18n import Msg, WorkbookError, msg
from ..core.results import Diagnostic
from ..course.manifest import Puzzle
from . import diagnostics, simimports
from .launcher import Plan, generate


@dataclass
class Sources:
    """A puzzle's Mojo sources as they will be compiled, in a folder of their own."""

    puzzle: Puzzle
    dir: Path
    digest: str
    files: dict[str, Path]  # name relative to the puzzle -> the file shown to the learner
    sim_problem: simimports.Unsupported | None = None  # why the simulator can't run this code

    @property
    def src(self) -> Path:
        return self.dir / "src"

    @property
    def sim(self) -> Path:
        return self.dir / "sim"

    @property
    def mojoc(self) -> Path:
        return self.dir / f"{self.puzzle.package}.mojoc"


@dataclass
class Built:
    ok: bool
    seconds: float = 0.0
    cached: bool = False
    binary: Path | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    output: str = ""  # the compiler's words when no diagnostic could be parsed
    problem: Msg | None = None  # a failure that is not the learner's code (a timeout, no compiler)
    link_seconds: float = 0.0  # of `seconds`, linking (the simulator's launcher is linked by the workbook)


def _chosen(puzzle: Puzzle, solutions: bool, names: list[str]) -> dict[str, Path]:
    """Each file from the puzzle folder, except the learner files: from solutions/ if asked."""
    chosen = {}
    for name in names:
        chosen[name] = (puzzle.solution_dir if solutions and name in puzzle.edit else puzzle.dir) / name
    return chosen


# Threads each Mojo compile may use (None: all): set while several checks run at once.
compile_threads: int | None = None

# Part of every key: bump it when what a build folder holds changes shape.
LAYOUT = "2"

def _read_all(files: dict[str, Path], given: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Every file's bytes, read once: what is hashed is exactly what is written and built,
    even if the learner saves again in between (an editor saving as `run` starts).
    `given`: bytes already read (a check reads the learner's files once for all its uses)."""
    given = given or {}
    return {name: given[name] if name in given else files[name].read_bytes() for name in sorted(files)}


def learner_bytes(puzzle: Puzzle, solutions: bool = False) -> dict[str, bytes]:
    """The learner's files (or the solution's), read once: the seed, the verdict cache's key,
    the build and the graph all use these very bytes."""
    files = _chosen(puzzle, solutions, list(puzzle.edit))
    return {name: path.read_bytes() for name, path in sorted(files.items()) if path.is_file()}


def _digest(contents: dict[str, bytes], *extra: str) -> str:
    h = hashlib.sha256("\0".join((toolchain.toolchain_id(), LAYOUT, *extra)).encode())
    for name in sorted(contents):
        h.update(name.encode() + b"\0" + contents[name] + b"\0")
    return h.hexdigest()[:16]


def _holds(folder: Path, sub: str, contents: dict[str, bytes]) -> bool:
    """Whether a finished folder still holds exactly these files: an entry that a temp
    cleaner thinned out, or one filled by another writer, is never trusted."""
    try:
        return all((folder / sub / name).read_bytes() == data for name, data in contents.items())
    except OSError:
        return False


def _record(folder: Path) -> dict | None:
    """A finished folder's record (`.complete`), if it is ours and reads as one."""
    raw = cachetrust.read(folder / ".complete", 1 << 20)
    try:
        return json.loads(raw) if raw is not None else None
    except ValueError:
        return None


def _materialize(folder: Path, write, intact=None, closed: tuple[str, ...] = ()) -> None:
    """Fill a content-addressed folder once, atomically (another process may race us).
    An existing entry is used only if it is ours and every file its record names is
    unchanged, and `intact(folder)` (whether it holds what is wanted) says yes; one
    that isn't is removed (set aside, if not ours) with everything built in it, and
    filled again. `closed`: its folders that hold only what was written (an extra file
    there could be picked up by an include or an import)."""
    if os.path.lexists(folder):
        record = _record(folder)
        if record is not None and cachetrust.holds(folder, record) and (intact is None or intact(folder)):
            with contextlib.suppress(OSError):
                os.utime(folder / ".complete", follow_symlinks=False)  # its last use: prune.py keeps a month
                if os.lstat(folder).st_mode & 0o055 != 0o055:
                    os.chmod(folder, 0o755)  # made 0700 before 2026-11-28: a sandbox's user could not read it
            return
        ours = cachetrust.trusted(folder)
        if record is None and ours:
            free = discard(folder)  # unfinished or thinned out by a temp cleaner: ours, rebuilt quietly
        else:
            free = cachetrust.ignore(folder, "not as built" if ours else "not yours")
        if not free:
            raise WorkbookError("cache.stuck", path=str(folder))
    staging = folder.with_name(folder.name + f".tmp{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(staging, ignore_errors=True)
    cachetrust.make_dirs(staging.parent)
    # Readable inside: a sandbox running as another user (a root grader's) is handed the entry
    # itself; our u<uid> folder above it, 0700, keeps it from anyone else.
    os.mkdir(staging, 0o755)
    write(staging)
    cachetrust.tighten_tree(staging)
    record = {"files": cachetrust.contents(staging), "closed": list(closed)}
    cachetrust.write(staging / ".complete", json.dumps(record).encode())
    try:
        staging.rename(folder)
    except OSError:  # another process built the same folder first
        shutil.rmtree(staging, ignore_errors=True)
        record = _record(folder)
        if record is None or not cachetrust.holds(folder, record):
            raise WorkbookError("cache.stuck", path=str(folder)) from None


def discard(folder: Path) -> bool:
    """Remove a cache entry of ours (moved aside first, so no reader sees it half removed);
    one that is not all ours is set aside instead, never deleted. Whether its name is free."""
    if cachetrust.remove(folder):
        return True
    return cachetrust.set_aside(folder)


def sources(puzzle: Puzzle, solutions: bool = False, given: dict[str, bytes] | None = None) -> Sources:
    names = puzzle.mojo_files()
    for name in puzzle.edit:  # a learner file the puzzle folder lacks still counts (from solutions/)
        if name.endswith(".mojo") and name not in names:
            names.append(name)
    files = _chosen(puzzle, solutions, names)
    contents = _read_all(files, given)
    # The simulator's copy depends on the rewriting rules too.
    digest = _digest(contents, hashlib.sha256(Path(simimports.__file__).read_bytes()).hexdigest())
    folder = settings.cache_dir() / "build" / f"{puzzle.id}-{digest}"
    problem: list[simimports.Unsupported] = []

    def write(staging: Path) -> None:
        for name, data in contents.items():
            text = data.decode("utf-8")
            for sub, content in (("src", text), ("sim", _sim_text(text, name, problem))):
                target = staging / sub / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content, encoding="utf-8")
        if problem:
            (staging / "sim-unsupported.txt").write_text(f"{problem[0].line}\n{problem[0].file}\n{problem[0].what}")

    _materialize(folder, write, lambda f: _holds(f, "src", contents), closed=("src", "sim"))
    found = None
    marker = folder / "sim-unsupported.txt"
    if marker.exists():
        line, file, what = (marker.read_text().split("\n", 2) + ["", ""])[:3]
        found = simimports.Unsupported(int(line) if line.strip().isdigit() else 0, what, file)
    return Sources(puzzle, folder, digest, files, found)


# The package the reference solution's sources take in a GPU launcher that times it beside
# the learner's kernels (launcher.Solution): its module is `wb_solution.<the puzzle's module>`.
SOLUTION_PACKAGE = "wb_solution"


def solution_package(puzzle: Puzzle) -> tuple[str, Path, str, list[str]]:
    """The reference solution's Mojo files as a package of their own, in a folder named by
    their content: (its module's import path, the folder to give the compiler with -I, the
    digest, the texts of its .mojo files that a learner edits, where its launch choices
    are read). Its kernels then compile under names of their own
    (`wb_solution_<module>_<kernel>_...`), beside the learner's in one program."""
    src = sources(puzzle, solutions=True)
    folder = settings.cache_dir() / "build" / f"{puzzle.id}-solution-{src.digest}"
    contents = {name: (src.src / name).read_bytes() for name in src.files}

    def write(staging: Path) -> None:
        package = staging / SOLUTION_PACKAGE
        package.mkdir(parents=True)
        (package / "__init__.mojo").write_text("# The reference solution, timed beside the learner's kernels.\n")
        for name, data in contents.items():
            target = package / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        for sub in package.rglob("*"):  # every folder a package, as the puzzle's own are
            if sub.is_dir() and not (sub / "__init__.mojo").exists():
                (sub / "__init__.mojo").write_text("")

    _materialize(folder, write, lambda f: _holds(f, SOLUTION_PACKAGE, contents))
    texts = [data.decode("utf-8") for name, data in contents.items() if name in puzzle.edit and name.endswith(".mojo")]
    return f"{SOLUTION_PACKAGE}.{puzzle.module}", folder, src.digest, texts


def _sim_text(text: str, name: str, problem: list) -> str:
    try:
        return simimports.rewrite(text)
    except simimports.Unsupported as exc:
        if not problem:
            exc.file = name
            problem.append(exc)
        return text


def python_files(puzzle: Puzzle, solutions: bool = False, given: dict[str, bytes] | None = None) -> Path:
    """The graph stage's Python files, in a folder named by their content."""
    contents = _read_all(_chosen(puzzle, solutions, puzzle.python_files()), given)
    folder = settings.cache_dir() / "py" / f"{puzzle.id}-{_digest(contents)}"

    def write(staging: Path) -> None:
        for name, data in contents.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    _materialize(folder, write, lambda f: _holds(f, ".", contents), closed=(".",))
    return folder


# ---------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------


def support_digest() -> str:
    h = hashlib.sha256()
    for pattern in ("*.mojo", "*.c", "*.h", "*/*.c"):  # */*.c: the runtime's parts (wbsim_parts/)
        for path in sorted(settings.MOJO_SUPPORT.glob(pattern)):
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


RUNTIME = settings.MOJO_SUPPORT / "wbsim.c"  # the simulator and the host launcher's harness
GPU_HARNESS = settings.MOJO_SUPPORT / "wbio.c"  # the GPU launcher's harness


def runtime_object(children: Children, source: Path = RUNTIME) -> tuple[Path | None, str]:
    """A launcher's C support (the simulator's runtime, the GPU harness), compiled
    once per content (its own, the parts it includes from the folder beside it,
    wbsim_parts/*.c, and its headers', wbrun.h) and C compiler, and linked into launchers
    only while it is ours and as it was built."""
    cc = toolchain.c_compiler()
    if cc is None:
        return None, "no C compiler (cc) found: Mojo needs one to link programs too"
    headers = b"".join(h.read_bytes() for h in sorted(source.parent.glob("*.h")))
    parts = b"".join(p.read_bytes() for p in sorted((source.parent / f"{source.stem}_parts").glob("*.c")))
    key = hashlib.sha256(source.read_bytes() + parts + headers + cc.encode()).hexdigest()[:16]
    output = settings.cache_dir() / "runtime" / f"{source.stem}-{key}.o"
    record = output.with_name(output.name + ".ok")
    if _kept(output, record):
        return output, ""
    cachetrust.make_dirs(output.parent)
    staging = output.parent / f".tmp{os.getpid()}-{threading.get_ident()}"
    shutil.rmtree(staging, ignore_errors=True)
    os.mkdir(staging, 0o700)
    partial, log = staging / output.name, staging / "cc.log"
    try:
        outcome = children.run([cc, "-O2", "-fPIC", "-c", str(source), "-o", str(partial)],
                               timeout=settings.compile_timeout(), log=log)
        children.check()
        if outcome.returncode != 0 or not partial.exists():
            return None, log.read_text(errors="replace") if log.exists() else "the C compiler failed"
        _publish(partial, output, record)
        return output, ""
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _kept(output: Path, record: Path) -> bool:
    """Whether a built file can be used as it is: ours, and what we recorded when we built
    it. What is there otherwise and not ours (a link, another user's) is set aside, never
    run; ours and changed, it is noted, and built again over."""
    if not (os.path.lexists(output) or os.path.lexists(record)):
        return False
    if cachetrust.sealed(output, record):
        return True
    for path in (output, record):
        if os.path.lexists(path) and not cachetrust.trusted(path):
            cachetrust.ignore(path, "not yours")
    if os.path.lexists(output) and cachetrust.read(record, 4096) is not None:
        cachetrust.note(output, "not as built")
    return False


def _publish(partial: Path, output: Path, record: Path) -> None:
    """Move a file just built into place, then record what it holds (`_kept` checks it)."""
    cachetrust.tighten(partial)
    digest, size = cachetrust.sha256(partial), os.lstat(partial).st_size
    os.replace(partial, output)
    cachetrust.write(record, json.dumps({"sha256": digest, "size": size}).encode())


def _sim_link(children: Children):
    """How the host launcher's object becomes a program: linked by hand against Mojo's
    runtime libraries and the simulator's runtime, the way `mojo build` links, less
    the ThreadSanitizer runtime it would add for `--sanitize thread`."""
    runtime, why = runtime_object(children)
    libs = toolchain.mojo_libs()
    cc = toolchain.c_compiler()
    if runtime is None or libs is None or cc is None:
        return None, why or "Mojo's runtime libraries were not found beside the compiler"

    def command(obj: Path, out: Path) -> list[str]:
        return [cc, str(obj), str(runtime), str(libs / "libKGENCompilerRTShared.so"),
                str(libs / "libAsyncRTMojoBindings.so"), f"-Wl,-rpath,{libs}", "-Wl,--gc-sections",
                "-lm", "-ldl", "-o", str(out)]
    return command, ""


def path_map(src: Sources) -> dict[str, Path]:
    """Build-folder paths of the learner's files -> the files themselves. Only those:
    an error reported elsewhere is moved to the learner's line where a note allows."""
    mapping: dict[str, Path] = {}
    for name, real in src.files.items():
        if name not in src.puzzle.edit:
            continue
        for sub in ("src", "sim"):
            mapping[str(src.dir / sub / name)] = real
            mapping[f"{sub}/{name}"] = real
    return mapping


def _compile(children: Children, src: Sources, args: list[str], output: Path, tick=None, link=None,
             nice: int = 0) -> Built:
    """Run the Mojo compiler once (and `link(object, program)`'s command after it, for a
    program Mojo only compiles to an object); a marker beside the output records a success.

    The compiler writes into a folder of this process's own, under the output's
    own name (a .mojoc's module name comes from its file name), and the result
    is moved into place: two processes building the same thing never mix."""
    marker = output.with_name(output.name + ".ok")
    if _kept(output, marker):
        return Built(True, cached=True, binary=output)
    driver = toolchain.mojo_driver()
    if driver is None:
        return Built(False, problem=msg("build.no_compiler"))
    mojo, env = driver
    staging = output.parent / f".tmp{os.getpid()}-{threading.get_ident()}"
    cachetrust.make_dirs(output.parent)
    shutil.rmtree(staging, ignore_errors=True)
    os.mkdir(staging, 0o700)
    partial = staging / output.name
    compiled = staging / (output.name + ".o") if link else partial
    log = staging / (output.name + ".log")  # in our own folder: never written through a link
    try:
        threads = [f"--num-threads={compile_threads}"] if compile_threads and args and args[0] in ("build",) else []
        command = [args[0], *threads, *args[1:]]
        outcome = children.run([str(mojo), *command, "-o", str(compiled)],
                               timeout=settings.compile_timeout(), log=log, cwd=src.dir, env=env, tick=tick, nice=nice)
        children.check()
        text = log.read_text(errors="replace") if log.exists() else ""
        if outcome.timed_out:
            return Built(False, outcome.seconds, problem=msg("build.compile_timeout", seconds=int(outcome.seconds)))
        if outcome.returncode == 0 and compiled.exists() and link:
            linked = children.run(link(compiled, partial), timeout=settings.compile_timeout(), log=log, cwd=src.dir)
            children.check()
            if linked.returncode != 0 or not partial.exists():
                words = diagnostics.tail(log.read_text(errors="replace") if log.exists() else "")
                return Built(False, outcome.seconds + linked.seconds, output=words)
            outcome.seconds += linked.seconds
        if outcome.returncode == 0 and partial.exists():
            _publish(partial, output, marker)
            # How it was built, for a rebuild by hand (benchmarks/bench.py times each
            # compile's stages with it): the arguments, less the compiler and the output.
            cachetrust.write(output.with_name(output.name + ".cmd"),
                             json.dumps({"cwd": str(src.dir), "args": command}).encode())
            return Built(True, outcome.seconds, binary=output, link_seconds=linked.seconds if link else 0.0)
    finally:
        with contextlib.suppress(OSError):
            if log.exists():
                os.replace(log, output.with_name(output.name + ".log"))  # kept beside it, to read by hand
        shutil.rmtree(staging, ignore_errors=True)
    generated = [a for a in args if a.endswith(".mojo")]
    found = diagnostics.parse(text, path_map(src), settings.root(), generated=[Path(g) for g in generated])
    return Built(False, outcome.seconds, diagnostics=found, output="" if found else diagnostics.tail(text))


def _launcher_job(src: Sources, plan: Plan, which: str, target: str | None,
                  lines: bool) -> tuple[Path, list[str], Path]:
    """Where a launcher is built (the source it writes, the compiler arguments, the
    binary), without building it."""
    with_sim = which == "host" and src.sim_problem is None
    if which == "gpu":
        target = target or toolchain.gpu_target()
    text = generate(plan, which, with_sim=with_sim)
    key = hashlib.sha256((text + support_digest() + (target or "")).encode()).hexdigest()[:16]
    folder = src.dir / "launch" / key
    source = folder / f"launch_{which}.mojo"
    if os.path.lexists(folder) and not cachetrust.trusted(folder):
        cachetrust.ignore(folder, "not yours")  # with every program in it: none is run
    cachetrust.make_dirs(folder)
    if not _same_text(source, text):  # written whole or not at all: a truncated source is never compiled
        cachetrust.write(source, text.encode("utf-8"))
    args = ["build", "-I", str(src.sim if with_sim else src.src), "-I", str(settings.MOJO_SUPPORT)]
    if which == "gpu" and plan.solution is not None:  # the reference solution, timed beside the learner's
        args += ["-I", str(plan.solution.folder)]
    name = "host"
    if which == "host":
        # Every access of the compiled code calls the simulator first (wbsim.c), and
        # line tables let it name the learner's line.
        args[1:1] = ["--sanitize", "thread", "-g1", "--emit", "object"] if settings.sim_watches() else \
            ["--emit", "object"]
        name = "host" if settings.sim_watches() else "host-unwatched"
    if which == "gpu":
        args.insert(1, f"--target-accelerator={target}")
        name = f"gpu-{target}"
    if lines:
        args.insert(1, "-g1")
        name += "-g1"
    return source, args, folder / name


def _same_text(path: Path, text: str) -> bool:
    """Whether a file of ours holds `text` (one not ours never counts: it is written over)."""
    return cachetrust.read(path, 1 << 24) == text.encode("utf-8")


def solution_failed(built: Built) -> bool:
    """Whether a failed GPU launcher that holds the reference solution (solution_package)
    may have failed for the solution's sake, not the learner's: built again without it."""
    words = built.output + " ".join(f"{d.file} {d.message} {' '.join(d.notes)}" for d in built.diagnostics)
    return SOLUTION_PACKAGE in words or not blames_learner(built)


def blames_learner(built: Built) -> bool:
    """Whether a failed build points at the learner's own files. Anything else (an error
    in a launcher, no parsable error at all) may be a damaged cache entry, which is
    rebuilt once before anyone is told their code does not compile."""
    return built.problem is None and any(d.hint is None and not d.file.startswith(diagnostics.LAUNCHER)
                                         for d in built.diagnostics)


def launcher_binary(src: Sources, plan: Plan, which: str, target: str | None = None) -> Path:
    """The path the launcher's binary has (or will have): markers about it live beside it."""
    return _launcher_job(src, plan, which, target, False)[2]


def launcher(children: Children, src: Sources, plan: Plan, which: str, target: str | None = None,
             tick=None, lines: bool = False, nice: int = 0) -> Built:
    """Generate and build the `gpu` or `host` launcher for this plan (cached). `lines`
    adds line tables (-g1), so compute-sanitizer names the learner's line; they make
    the compile about half as long again, so only the sanitizer's build has them.
    `nice`: how much lower than the workbook the compiler runs."""
    link, linked = None, []
    if which == "host":
        link, why = _sim_link(children)
        if link is None:
            return Built(False, problem=msg("build.no_linker", why=why))
    else:  # the harness's C half (wbio.c), linked in by Mojo's own link
        harness, why = runtime_object(children, GPU_HARNESS)
        if harness is None:
            return Built(False, problem=msg("build.no_linker", why=why))
        linked = ["-Xlinker", str(harness)]
    source, args, binary = _launcher_job(src, plan, which, target, lines)
    built = _compile(children, src, [*args, *linked, str(source)], binary, tick, link, nice)
    if built.ok or blames_learner(built):
        return built
    # Not the learner's code: perhaps a damaged entry. Build it once more from scratch.
    discard(source.parent)
    source, args, binary = _launcher_job(src, plan, which, target, lines)
    return _compile(children, src, [*args, *linked, str(source)], binary, tick, link, nice)


def precompile(children: Children, src: Sources, tick=None) -> Built:
    """Package an op puzzle's Mojo code as a .mojoc that MAX loads fast."""
    return _compile(children, src, ["precompile", str(src.src / src.puzzle.package)], src.mojoc, tick)


def digest_of(files: list[Path]) -> str:
    """A hash of some files' contents (watch mode uses it to ignore saves that changed nothing)."""
    h = hashlib.sha256()
    for path in files:
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<missing>")
    return h.hexdigest()
