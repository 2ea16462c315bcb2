"""Start a program that dies with the workbook: `python -m workbook._exec PARENT_PID PROGRAM ARGS...`.

It asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG, which
survives exec), checks that the parent is still there (it may have died in
between), then becomes PROGRAM. See workbook/processes.py.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the parent's own cleanup still applies
        return
    if os.getppid() != parent:
        os._exit(1)


if __name__ == "__main__":
    die_with_parent(int(sys.argv[1]))
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        print(f"could not start {sys.argv[2]}: {exc}", file=sys.stderr)
        os._exit(127)
