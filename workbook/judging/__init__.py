"""Judging what a run left: a verdict per part and device, and the reasons for it.

judge (a DeviceResult from a run), compare (outputs against the reference), methods (a stated
method held: the kernel works as its text says), speed (device times to a speed verdict),
sourcenumbers (what can be said of code nothing here runs), ncu (Nsight Compute's counters
beside the simulator's).

Imports: core, course, child, compile, run. (judge and methods name engine.Check in type
hints only.)
"""
