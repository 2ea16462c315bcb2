"""The device pipelines of one check: each builds what it needs, runs it on its
devices, and puts a DeviceResult per part and device into `check.kernels`.

- host.py: an op's CPU kernels, and the GPU kernels on the simulator (one build);
- gpu.py: the GPU kernels on a real GPU (or compiled only), and compute-sanitizer;
- graph.py: the second stage of an op puzzle, the op through a MAX graph.

A pipeline is a function `run(check, parts)`; check/engine.Check holds the state they
share (the plan, the cases, the sources, the events) and judging/judge.py turns what a
run left into a verdict. Adding a device is a module here and a line in
engine.Check's kernel stage.
"""
