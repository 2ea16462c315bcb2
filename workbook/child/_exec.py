"""Start a program that dies with the workbook, within limits:

    python -I -S .../workbook/child/_exec.py PARENT_PID [--cgroup=DIR]... [--rlimit=NAME:VALUE]... [--uid=UID]
                                   [--nice=N] [--] PROGRAM ARGS...

It joins the cgroups it was given (its containment: workbook/child/containment.py),
so that everything the program starts is counted and bounded together; asks
the kernel to kill it when its parent dies (PR_SET_PDEATHSIG, which survives
exec), checks that the parent is still there (it may have died in between;
PARENT_PID 0 skips that, inside a sandbox where the parent has another pid),
takes on the resource limits it was given (memory, file size, processes, core
files: workbook/child/limits.py says which and why), becomes UID where asked (the
sandbox of a grader running as root), lowers its priority by N where asked (a
compile whose result comes after the first verdict), then becomes PROGRAM.
See workbook/child/processes.py.

Standard library only, and no imports from the package: it runs as a plain
file without `site` (`-I -S`), so each child costs one bare Python start-up
(about 0.02 s), not the package's; inside a sandbox the same way.
"""

import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
RLIMITS = {"data": resource.RLIMIT_DATA, "fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC,
           "core": resource.RLIMIT_CORE}


def die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the parent's own cleanup still applies
        return
    if parent and os.getppid() != parent:
        os._exit(1)


def limit(name: str, value: int) -> None:
    """Lower soft and hard limit alike, so the program can't raise it back."""
    which = RLIMITS[name]
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def become(uid: int) -> None:
    """Drop to an unprivileged user with no groups (the sandbox of a grader running as root:
    root is exempt from the process limit, and may read what the grader can)."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def lower_priority(nice: int) -> None:
    """Run `nice` lower: the process's own nice value, and its autogroup's. Where the kernel
    groups processes by session (sched_autogroup), groups share the CPU as equals and a
    nice value only ranks the processes within one, so a child in a session of its own
    (every child: processes.py) yields to the others only once its group does. Either may
    be refused; only ever lowered, it needs no privilege."""
    os.nice(nice)  # survives exec, and the compiler's threads inherit it
    try:
        with open("/proc/self/autogroup", "w") as group:
            group.write(str(nice))
    except OSError:
        pass


def join(folder: str) -> None:
    """Move this process into a cgroup (before it becomes the program: nothing it starts
    is ever outside)."""
    with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
        procs.write(str(os.getpid()))


def parse(argv: list[str]) -> tuple[int, dict[str, int], int | None, int, list[str], list[str]]:
    parent, rest = int(argv[0]), argv[1:]
    limits: dict[str, int] = {}
    uid = None
    nice = 0
    groups: list[str] = []
    while rest and rest[0].startswith(("--rlimit=", "--uid=", "--nice=", "--cgroup=")):
        option = rest.pop(0)
        if option.startswith("--cgroup="):
            groups.append(option[len("--cgroup="):])
        elif option.startswith("--uid="):
            uid = int(option[len("--uid="):])
        elif option.startswith("--nice="):
            nice = int(option[len("--nice="):])
        else:
            name, _, value = option[len("--rlimit="):].partition(":")
            limits[name] = int(value)
    if rest and rest[0] == "--":
        rest = rest[1:]
    return parent, limits, uid, nice, rest, groups


if __name__ == "__main__":
    parent, limits, uid, nice, program, groups = parse(sys.argv[1:])
    try:
        for group in groups:
            join(group)
    except OSError as exc:
        print(f"could not join the cgroup that bounds {program[0]}: {exc}", file=sys.stderr)
        os._exit(126)
    try:
        if nice > 0:
            lower_priority(nice)
        if uid is not None:
            become(uid)  # before the limits: a change of user also clears the death signal
        for name, value in limits.items():
            limit(name, value)
    except (OSError, ValueError) as exc:
        print(f"could not set the limits of {program[0]}: {exc}", file=sys.stderr)
        os._exit(126)
    die_with_parent(parent)
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        print(f"could not start {program[0]}: {exc}", file=sys.stderr)
        os._exit(127)
