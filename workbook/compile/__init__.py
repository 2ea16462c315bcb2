"""Turning a puzzle into programs: the launchers, their builds, and what a build tells.

build (every artefact keyed by exactly what it is built from), launcher (the Mojo program that
runs a plan's cases), simimports (a learner's file pointed at the simulator), diagnostics
(compiler errors at the learner's lines), symbols and accesslines (an address back to the
learner's line), ptx and occupancy (what the GPU build's PTX and resources say).

Imports: core, course, child (the compiler runs as a child).
"""
