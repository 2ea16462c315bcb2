"""Puzzle 3 reference: output = a * a, one block of THREADS = 8 threads for at
most 8 elements, so some threads have nothing to do.

Which input makes each part of the kernel decide the answer:
- the guard `i < size`: every case but one is shorter than the block, so a
  kernel without a guard (or with `i <= size`, or with `i < THREADS` or
  `block_dim.x`) makes a thread write past the end of `output`: the
  simulator reports the write outside the buffer (the elements inside are
  still right, so only that finding shows it; on a GPU compute-sanitizer
  does). "7 values, 1 spare thread" is the case where `<=` is one too many
  and nothing else is;
- not too strict: a guard that stops one early (`i < size - 1`) leaves the
  last element NaN in every case; "8 values, no spare thread" checks that
  the guard keeps every thread of a full block, "1 value, 7 spare threads"
  that thread 0 alone still works;
- `a[i] * a[i]`: values that all differ, negative ones among them (a square
  is never negative); zero;
- float32: the reference squares in float32, as the kernel does, so the
  check is exact; in "squares round" no square fits in float32 exactly, and
  the inputs and squares are off the float16 and bfloat16 grids (a square
  near 1e7 does not even fit in float16): squaring in 16 bits is wrong there;
- one thread per element: a thread that squares more than its own element
  breaks the part's access budget (one write per thread) on the simulator;
  spare threads that write the last element again (a "clamped" index,
  min(i, size - 1)) write it with the right value, but several threads at
  once: the simulator reports the race.
The sizes cannot go beyond the block of 8 (the text says so): one of them is
drawn from the seed ("random size n"), the rest are fixed.
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`): exactly one spare thread, none, a single value, an
element that is 0, a negative element, and squares past float16's largest
value; each has a case named for it.
"""

import numpy as np

THREADS = 8
FLOAT16_MAX = 65504.0


def _case(name: str, ko: str, values, seeded: bool = False, special: tuple = ()) -> dict:
    a = np.asarray(values, dtype=np.float32)
    assert a.size <= THREADS
    return {"name": name, "label": {"en": name, "ko": ko}, "params": {"size": int(a.size)}, "inputs": {"a": a},
            "seeded": seeded, "special": special}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice((2, 4, 6)))
    eight = rng.permutation(np.arange(-4, 4)).astype(np.float32) * 1.5 + 0.25  # 8 different values
    return [
        _case("5 values, 3 spare threads", "값 5개, 남는 스레드 3개", rng.uniform(-4, 4, 5).round(2)),
        _case("1 value, 7 spare threads", "값 1개, 남는 스레드 7개", [rng.uniform(-9, -1)],
              special=("single_value", "negative")),
        _case("7 values, 1 spare thread", "값 7개, 남는 스레드 1개",
              np.concatenate([[0.0], rng.uniform(-20, 20, 6)]), special=("one_spare_thread", "zero")),
        _case("8 values, no spare thread", "값 8개, 남는 스레드 없음", eight, special=("no_spare_thread",)),
        _case("3 values, squares round", "값 3개, 제곱이 반올림됨",
              rng.uniform(1000, 5000, 3) * rng.choice([-1.0, 1.0], 3), special=("beyond_float16",)),
        _case(f"random size {n}", f"무작위 크기 {n}", rng.uniform(-50, 50, n), seeded=True),
    ]


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    a = case["inputs"]["a"]
    return {"output": (a * a).astype(np.float64)}


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    a = case["inputs"]["a"].astype(np.float64)
    found = set()
    spare = THREADS - a.size
    if spare == 1:
        found.add("one_spare_thread")
    if spare == 0:
        found.add("no_spare_thread")
    if a.size == 1:
        found.add("single_value")
    if np.any(a == 0):
        found.add("zero")
    if np.any(a < 0):
        found.add("negative")
    if np.any(a * a > FLOAT16_MAX):
        found.add("beyond_float16")
    return found
