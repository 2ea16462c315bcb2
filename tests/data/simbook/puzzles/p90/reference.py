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


def tf32(x: np.ndarray) -> np.ndarray:
    """What a tensor core reads of float32 data given as tf32: the low 13 bits dropped."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32).astype(np.float64)


def a_loads(g: int, t: int) -> list[tuple[int, int]]:
    """Where the fixture's kernel loads each element of lane 4g + t's A fragment from
    (tests/test_sim.py changes it together with the kernel)."""
    return [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]


def b_loads(g: int, t: int) -> list[tuple[int, int]]:
    """Where it loads lane 4g + t's B fragment from."""
    return [(t, g), (t + 4, g)]


def hardware(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D as an NVIDIA GPU computes it from the fragments the kernel loaded: element i of
    lane 4g + t's A fragment is A[g + 8 * (i % 2), t + 4 * (i // 2)] to the tensor core,
    element i of its B fragment B[t + 4i, g] (PTX ISA, m16n8k8 .tf32), wherever the
    kernel loaded them from."""
    seen_a, seen_b = np.zeros((16, 8)), np.zeros((8, 8))
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i, (r, col) in enumerate(a_loads(g, t)):
            seen_a[g + 8 * (i % 2), t + 4 * (i // 2)] = tf32(a[r:r + 1, col])[0]
        for i, (r, col) in enumerate(b_loads(g, t)):
            seen_b[t + 4 * i, g] = tf32(b[r:r + 1, col])[0]
    return seen_a @ seen_b + c.astype(np.float64)


def lane_rows(d: np.ndarray) -> np.ndarray:
    """D (16 x 8) as the lanes hold it (PTX ISA, m16n8k8 C/D fragments): lane 4g + t has
    d[i] = D[g + 8 * (i // 2), 2t + i % 2]."""
    out = np.zeros((32, 4))
    for lane in range(32):
        g, t = divmod(lane, 4)
        for i in range(4):
            out[lane, i] = d[g + 8 * (i // 2), 2 * t + i % 2]
    return out


def _mma_cases(rng):
    code_a = (np.arange(128).reshape(16, 8) + 1).astype(np.float32)  # A[r, c] = 8r + c + 1
    code_b = (np.arange(64).reshape(8, 8) + 1).astype(np.float32)
    eye_b = np.eye(8, dtype=np.float32)
    eye_a = np.vstack([np.eye(8), 2 * np.eye(8)]).astype(np.float32)
    zeros = np.zeros((16, 8), dtype=np.float32)
    # 1 + 3 * 2^-12: tf32 keeps 10 fraction bits, so truncation reads 1, rounding 1 + 2^-10.
    fine = np.full((16, 8), 1 + 3 * 2.0 ** -12, dtype=np.float32)
    mixed = rng.integers(-8, 9, (16, 8)).astype(np.float32)
    return [_case("A's lane map", code_a, eye_b, zeros), _case("B's lane map", eye_a, code_b, zeros),
            _case("C's lane map", zeros, eye_b, code_a), _case("tf32 truncation", fine, eye_b, zeros),
            _case("all three", mixed, rng.integers(-8, 9, (8, 8)).astype(np.float32), code_a)]


def _case(name, a, b, c):
    return {"name": name, "label": {"en": name, "ko": name}, "params": {}, "inputs": {"a": a, "b": b, "c": c}}


def cases(rng, part):
    if part in ("mma", "tensor_core"):
        return _mma_cases(rng)
    if part in ("warps", "partial_warps"):
        return _warp_cases(rng)
    if part == "traffic":
        return [{"name": "two warps", "label": {"en": "two warps", "ko": "워프 두 개"}, "params": {},
                 "inputs": {"a": rng.permutation(2048).astype(np.float32)}}]
    if part == "ring":
        return [{"name": f"{k} steps", "label": {"en": f"{k} steps", "ko": f"{k}단계"}, "params": {"size": 64, "steps": k},
                 "inputs": {"a": rng.permutation(64).astype(np.float32)}} for k in (3, 4)]
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
    if part in ("mma", "tensor_core"):
        i = case["inputs"]
        if part == "mma":
            return {"output": lane_rows(hardware(i["a"], i["b"], i["c"]))}
        return {"output": tf32(i["a"]) @ tf32(i["b"]) + i["c"].astype(np.float64)}
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
    if part == "ring":
        return {"output": (np.roll(a, -p["steps"]) + p["steps"]).astype(np.float64)}
    if part == "sum":
        return {"result": np.array([a.astype(np.float64).sum()])}
    out = np.empty_like(a)
    for start in range(0, a.size, 4):
        block = a[start:start + 4]
        out[start:start + 4] = block + np.roll(block, -1)
    return {"output": out.astype(np.float64)}
