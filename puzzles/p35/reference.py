"""Puzzle 35 reference: output[i] = 2 * a[offset + i] + b[offset + i], for i < size.

a and b hold size + offset floats; the output holds size. Which input makes each
part of the kernels decide the answer:
- `offset`: every case but the first has one, so reading a[i] instead of
  a[offset + i] is wrong everywhere. Part 2's offsets (1, 2, 3) are not
  multiples of WIDTH: its vectors straddle 16-byte lines, which is the point
  of the part; part 3's (0, 4, 8) are, so its alignment claim is true;
- the remainder: sizes that are not multiples of WIDTH leave a last vector
  partly past the end, with 1 (1, 4101), 2 (10) or 3 (7, 103) outputs left. A kernel that drops it leaves NaN
  at the tail; one that loads a whole vector there reads past a and b and
  writes past the output, which the simulator names with the line. Sizes that
  are (4, 64) show that the remainder loop does not touch a whole vector;
- WIDTH per thread: "4101, beyond a grid of 32 blocks" needs more blocks
  than a block has threads (ceildiv(ceildiv(4101, 4), 32) = 33), and parts
  2 and 3 give each thread 4 outputs: a thread that takes one output, or
  strides by 1, leaves most of them NaN;
- an index past 16 bits: "70000, past 16 bits" has outputs (and inputs) past
  what a 16-bit index counts: such an index wraps around, writes over the first
  outputs and leaves the last ones unwritten;
- values: normal with a spread of 100, all different and off the 16-bit
  grids; 2 * a is exact in float32, so one rounding at the addition, as the
  kernel's (a fused multiply-add rounds the same).
One size is drawn from the seed among a few ("random size n"), so repeated
runs meet more sizes than a fixed list.

The special points (the manifest's [[parts.special]], found in a case's params by
`hits`) are the remainders, the offsets and the counts above; each has a case
named for it.
"""

import numpy as np

WIDTH = 4
TPB = 32
PAST_16_BITS = 70000  # outputs: more than a 16-bit index counts (65536)
# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (509, 1022, 2047, 3001)


def _offsets(part: str) -> tuple[int, int, int]:
    """Part 3's offsets keep the vectors on 16-byte lines; the others' break them."""
    return (0, 4, 8) if part == "aligned" else (1, 2, 3)


def _case(rng: np.random.Generator, name: str, ko: str, size: int, offset: int, seeded: bool = False,
          special: tuple = ()) -> dict:
    total = size + offset
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size, "offset": offset},
            "inputs": {"a": rng.normal(0, 100, total).astype(np.float32),
                       "b": rng.normal(0, 100, total).astype(np.float32)},
            "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    o1, o2, o3 = _offsets(part)
    n = int(rng.choice(SEEDED_SIZES))

    def pts(*names: str) -> tuple:
        # Part scalar has no vectors: what is left after the whole ones is not its point.
        return tuple(p for p in names if part != "scalar" or not p.endswith(("_left", "_only")))

    return [
        _case(rng, f"one vector and 3 left, 7, offset {o1}", f"벡터 하나와 3개 남음, 7개, offset {o1}", 7, o1,
              special=pts("three_left")),
        _case(rng, f"one element, offset {o2}", f"원소 1개, offset {o2}", 1, o2, special=pts("one_element")),
        _case(rng, f"whole vectors only, 64, offset {o3}", f"온전한 벡터만, 64개, offset {o3}", 64, o3,
              special=pts("whole_vectors_only")),
        _case(rng, f"two vectors and 2 left, 10, offset {o3}", f"벡터 둘과 2개 남음, 10개, offset {o3}", 10, o3,
              special=pts("two_left")),
        _case(rng, f"partial last block, 103, offset {o2}", f"마지막 블록이 덜 참, 103개, offset {o2}", 103, o2),
        _case(rng, f"4101, beyond a grid of 32 blocks, offset {o3}",
              f"4101개, 블록 32개를 넘는 그리드, offset {o3}", 4101, o3,
              special=pts("one_left", "more_blocks_than_threads")),
        _case(rng, f"{PAST_16_BITS}, past 16 bits, offset {o1}", f"{PAST_16_BITS}개, 16비트를 넘음, offset {o1}",
              PAST_16_BITS, o1, special=("index_past_16_bits",)),
        _case(rng, f"random size {n}", f"무작위 크기 {n}", n, o1, seeded=True),
    ]


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) a case's params reach."""
    size = case["params"]["size"]
    found = set()
    if size == 1:
        found.add("one_element")
    if part != "scalar":
        left = size % WIDTH
        if size > WIDTH:
            found.add({0: "whole_vectors_only", 1: "one_left", 2: "two_left", 3: "three_left"}[left])
        threads = -(-size // WIDTH)
    else:
        threads = size
    if -(-threads // TPB) > TPB:
        found.add("more_blocks_than_threads")
    if size > 2**16:
        found.add("index_past_16_bits")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    offset = case["params"]["offset"]
    return {"output": (np.float32(2) * a[offset:] + b[offset:]).astype(np.float64)}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 8 Mi floats, so that the 96 MiB
    a run moves are more than the L2 cache holds, at the part's first offset."""
    offset = _offsets(part)[0]
    return _case(rng, f"timing: 8 Mi floats, offset {offset}", f"시간 재기: float 8 Mi개, offset {offset}",
                 1 << 23, offset)
