"""Puzzle 35 reference: output[i] = 2 * a[offset + i] + b[offset + i], for i < size.

a and b hold size + offset floats; the output holds size. Which input makes each
part of the kernels decide the answer:
- `offset`: every case but the first has one, so reading a[i] instead of
  a[offset + i] is wrong everywhere. Part 2's offsets (1, 2, 3) are not
  multiples of WIDTH: its vectors straddle 16-byte lines, which is the point
  of the part; part 3's (0, 4, 8) are, so its alignment claim is true;
- the remainder: sizes that are not multiples of WIDTH (1, 7, 103, 4101)
  leave a last vector partly past the end. A kernel that drops it leaves NaN
  at the tail; one that loads a whole vector there reads past a and b and
  writes past the output, which the simulator names with the line. Sizes that
  are (4, 64) show that the remainder loop does not touch a whole vector;
- WIDTH per thread: "4101, beyond a grid of 32 blocks" needs more blocks
  than a block has threads (ceildiv(ceildiv(4101, 4), 32) = 33), and parts
  2 and 3 give each thread 4 outputs: a thread that takes one output, or
  strides by 1, leaves most of them NaN;
- values: normal with a spread of 100, all different and off the 16-bit
  grids; 2 * a is exact in float32, so one rounding at the addition, as the
  kernel's (a fused multiply-add rounds the same).
One size is drawn from the seed among a few ("random size n"), so repeated
runs meet more sizes than a fixed list.
"""

import numpy as np

WIDTH = 4
# The seeded case's sizes: a few, so that a run of another seed reuses a build.
SEEDED_SIZES = (509, 1022, 2047, 3001)


def _offsets(part: str) -> tuple[int, int, int]:
    """Part 3's offsets keep the vectors on 16-byte lines; the others' break them."""
    return (0, 4, 8) if part == "aligned" else (1, 2, 3)


def _case(rng: np.random.Generator, name: str, ko: str, size: int, offset: int, seeded: bool = False) -> dict:
    total = size + offset
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": size, "offset": offset},
            "inputs": {"a": rng.normal(0, 100, total).astype(np.float32),
                       "b": rng.normal(0, 100, total).astype(np.float32)},
            "seeded": seeded}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    o1, o2, o3 = _offsets(part)
    n = int(rng.choice(SEEDED_SIZES))
    return [
        _case(rng, f"one vector and 3 left, 7, offset {o1}", f"벡터 하나와 3개 남음, 7개, offset {o1}", 7, o1),
        _case(rng, f"one element, offset {o2}", f"원소 1개, offset {o2}", 1, o2),
        _case(rng, f"whole vectors only, 64, offset {o3}", f"온전한 벡터만, 64개, offset {o3}", 64, o3),
        _case(rng, f"partial last block, 103, offset {o2}", f"마지막 블록이 덜 참, 103개, offset {o2}", 103, o2),
        _case(rng, f"4101, beyond a grid of 32 blocks, offset {o3}",
              f"4101개, 블록 32개를 넘는 그리드, offset {o3}", 4101, o3),
        _case(rng, f"random size {n}", f"무작위 크기 {n}", n, o1, seeded=True),
    ]


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
