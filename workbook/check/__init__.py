"""One puzzle's check end to end, and many at once.

engine (manifest -> build -> run per device -> judge -> result), pipelines (one per device
family: host, gpu, graph), verdicts (a check with nothing changed answered at once),
scheduler (`check --all --jobs N`).

Imports: every layer below (core, course, child, compile, run, judging).
"""
