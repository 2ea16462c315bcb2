"""The simulator fixture's answers."""

import numpy as np

SHAPES = {"1d": (3, 1, 1, 4, 1, 1), "2d": (2, 3, 1, 3, 2, 1), "3d": (2, 2, 2, 2, 3, 2)}


def _warp_cases(rng):
    return [{"name": f"size {n}", "label": {"en": f"size {n}", "ko": f"크기 {n}"}, "params": {"size": n},
             "inputs": {"a": rng.integers(0, 8, n).astype(np.float32)}} for n in (64, 50, 100)]


def _warps(a: np.ndarray) -> np.ndarray:
    """What an NVIDIA GPU gives each thread (blocks of 64: two warps of 32)."""
    threads = -(-a.size // 64) * 64
    v = np.zeros(threads, dtype=np.float64)
    v[:a.size] = a
    out = np.zeros((threads, 8))
    for w in range(0, threads, 32):
        lanes = v[w:w + 32]
        for lane in range(32):
            down = lanes[lane + 1] if lane + 1 < 32 else lanes[lane]
            big = [k for k in range(32) if lanes[k] > 3]
            full = sum(1 << k for k in big)
            ballot = (full & 0xFFF) + (full >> 20) * 4096  # as the kernel packs it, exact in float32
            out[w + lane] = [lane, lanes.sum(), down, lanes[lane ^ 2], lanes[:lane + 1].sum(), lanes[0],
                             lanes.max(), ballot]  # warp.max: every lane (an H100 says so)
    return out


def cases(rng, part):
    if part in ("warps", "partial_warps"):
        return _warp_cases(rng)
    if part == "traffic":
        return [{"name": "two warps", "label": {"en": "two warps", "ko": "워프 두 개"}, "params": {},
                 "inputs": {"a": rng.permutation(2048).astype(np.float32)}}]
    if part == "ids":
        return [{"name": name, "label": {"en": name, "ko": name},
                 "params": dict(zip(("gx", "gy", "gz", "dx", "dy", "dz"), dims)), "inputs": {}}
                for name, dims in SHAPES.items()]
    return [{"name": f"size {n}", "label": {"en": f"size {n}", "ko": f"크기 {n}"}, "params": {"size": n},
             "inputs": {"a": rng.permutation(n).astype(np.float32) + 1}} for n in (9, 4, 3)]


def expected(case, part):
    p = case["params"]
    if part == "ids":
        rows = []
        for bz in range(p["gz"]):
            for by in range(p["gy"]):
                for bx in range(p["gx"]):
                    for tz in range(p["dz"]):
                        for ty in range(p["dy"]):
                            for tx in range(p["dx"]):
                                rows.append([tx, ty, tz, bx, by, bz, p["dx"], p["dy"], p["dz"], p["gx"], p["gy"],
                                             bx * p["dx"] + tx])
        return {"ids": np.array(rows, dtype=np.float64)}
    a = case["inputs"]["a"].astype(np.float32)
    if part == "traffic":
        i = np.arange(64)
        s = np.zeros(4352, dtype=np.float32)
        s[i] = a[i]
        s[64 + 2 * i], s[192 + 32 * i], s[2240 + 33 * i] = 1, 2, 3
        return {"output": np.stack([a[i], a[2 * i], np.full(64, a[0]), a[i + 1], a[32 * i], np.full(64, s[0]),
                                    s[i], s[(i + 32) % 64]], axis=1).astype(np.float64)}
    if part == "warps":
        return {"output": _warps(a.astype(np.float64))}
    if part == "partial_warps":  # not meant to pass: what lanes with no thread give is undefined
        return {"output": np.zeros((-(-a.size // 40) * 40, 8))}
    if part == "sum":
        return {"result": np.array([a.astype(np.float64).sum()])}
    out = np.empty_like(a)
    for start in range(0, a.size, 4):
        block = a[start:start + 4]
        out[start:start + 4] = block + np.roll(block, -1)
    return {"output": out.astype(np.float64)}
