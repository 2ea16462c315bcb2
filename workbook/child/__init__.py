"""Every child process the workbook starts: owned, bounded, sandboxed, heard from.

processes (the one owner of every child), _exec (the stdlib-only program each child becomes
first, to take its limits), limits and containment (memory and processes, a cgroup for the
whole tree), sandbox (bubblewrap, when grading), channel and protocol (what a child hands back,
through descriptors it cannot replace), gpulease (a graded run's hold on its GPU).

Imports: core.
"""
