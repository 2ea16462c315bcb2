"""The traffic-pattern fixture's one case: 512 floats in; `finish` writes 1."""

import numpy as np

SPAN = 512


def cases(rng, part):
    return [{"name": "one warp", "label": {"en": "one warp", "ko": "워프 하나"}, "params": {},
             "inputs": {"a": np.arange(SPAN, dtype=np.float32)}}]


def expected(case, part):
    return {"done": np.ones(1)}
