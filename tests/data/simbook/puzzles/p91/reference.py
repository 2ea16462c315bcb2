"""The cluster fixture's answers."""

import numpy as np

TPB, CLUSTER, RING = 4, 4, 64
# grid (gx, gy) and cluster (cx, cy)
SHAPES = {"1d": (8, 1, 4, 1), "2d": (4, 4, 2, 2)}


def cases(rng, part):
    if part == "ids":
        return [{"name": name, "label": {"en": name, "ko": name},
                 "params": dict(zip(("gx", "gy", "cx", "cy"), dims)), "inputs": {}} for name, dims in SHAPES.items()]
    if part == "rings":
        return [{"name": f"{k} steps", "label": {"en": f"{k} steps", "ko": f"{k}단계"},
                 "params": {"size": 2 * CLUSTER * RING, "steps": k},
                 "inputs": {"a": rng.permutation(2 * CLUSTER * RING).astype(np.float32)}} for k in (3, 4)]
    if part == "elect":
        return [{"name": "2 blocks", "label": {"en": "2 blocks", "ko": "블록 2개"}, "params": {"size": 128},
                 "inputs": {"a": rng.permutation(128).astype(np.float32)}}]
    found = []
    for n in (16, 30, 50):
        blocks = -(-n // (TPB * CLUSTER)) * CLUSTER
        found.append({"name": f"size {n}", "label": {"en": f"size {n}", "ko": f"크기 {n}"},
                      "params": {"size": n, "blocks": blocks}, "inputs": {"a": rng.integers(1, 9, n).astype(np.float32)}})
    return found


def expected(case, part):
    p = case["params"]
    if part == "ids":
        rows = []
        for by in range(p["gy"]):
            for bx in range(p["gx"]):
                for _ in range(TPB):
                    rank = bx % p["cx"] + (by % p["cy"]) * p["cx"]
                    rows.append([rank, bx // p["cx"], by // p["cy"], bx % p["cx"], by % p["cy"], p["cx"], p["cy"]])
        return {"ids": np.array(rows, dtype=np.float64)}
    a = case["inputs"]["a"].astype(np.float64)
    if part == "rings":  # each block writes out the ring of the next block of its cluster, moved and added to
        rings = [np.roll(a[b * RING:(b + 1) * RING], -p["steps"]) + p["steps"] for b in range(a.size // RING)]
        return {"output": np.concatenate([rings[b - b % CLUSTER + (b % CLUSTER + 1) % CLUSTER]
                                          for b in range(a.size // RING)])}
    if part == "elect":
        return {"output": np.array([a[w * 32:(w + 1) * 32].sum() for w in range(a.size // 32)])}
    seg = TPB * CLUSTER
    return {"output": np.array([a[i // seg * seg:(i // seg + 1) * seg].sum() for i in range(a.size)])}
