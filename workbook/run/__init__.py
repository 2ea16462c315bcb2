"""Running what was built on one device, and reading back what it handed over.

kernelrun (a launcher on the CPU, the simulator or the GPU), simfindings (the simulator's
findings in the learner's terms), graphrun with its children graphbuild and worker (an op
puzzle's MAX graph), sanitizer (compute-sanitizer), timing (how long a run may take).

Imports: core, course, child, compile.
"""
