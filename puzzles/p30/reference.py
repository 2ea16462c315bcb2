"""Puzzle 30 reference: a box filter along each row of a rows x cols matrix m,
output[r, c] = sum of m[r, k] for c - RADIUS <= k <= c + RADIUS, 0 <= k < cols.

Parts a, b and c run three given kernels; part fast is the learner's; part
explain reads the learner's three answers. Which input makes each term decide
the answer:
- the window's two ends: values that all differ and no zeros, so a window one
  column short on either side, or shifted, changes every output;
- the row's ends: columns 0 .. RADIUS - 1 and the last RADIUS columns have a
  window cut by the edge, so a tile that is not zero-filled there reads the
  next row (wrong values) or past the matrix (the simulator names the read);
  '1 x 7' is narrower than the window itself;
- the block's ends: cols that are not multiples of TPB = 128 (7, 200, 300, 181,
  and the seeded ones), so the last block is partial and the tile's right halo
  lies past the row, and several blocks per row, so the halo of a block is
  its neighbour's columns: a tile without its halo is wrong at every block
  edge;
- the rows: several in most cases and rows != cols, so r and c swapped reads
  the wrong element or leaves outputs NaN; part b's warps only fill 32 lanes
  with 32 rows or more ('70 x 300'), and only more rows than a block has
  threads ('130 x 9') give part b a second block down a column: a part b that
  takes its row from the thread alone leaves rows 128 and 129 unwritten
  (tests/wrong/p30/columns_ignore_block);
- more blocks than a block has threads: '70 x 300' (3 x 70 = 210 blocks in
  parts a, c and fast; 300 in part b), beyond TPB and RADIUS;
- part fast only: '1 x 66000, columns past 16 bits', a row whose columns go past
  what 16 bits count: a column kept in 16 bits writes the row's first outputs
  again and leaves the last ones unwritten (the given kernels are not the
  learner's, and the case would cost them seconds each);
- values: odd multiples of 2^-12 between 1 and 2, times a nonzero multiple of
  1/2 up to 2 in size, with a random sign (13 significant bits: off the
  float16 and bfloat16 grids, so a tile kept in 16 bits fails). A window sum
  of at most 9 of them, and part c's running sum plus or minus one more, is a
  multiple of 2^-13 below 2^6: exact in float32 in any order.
One row count and column count are drawn from the seed ("random r x c").
The special points of part fast (the manifest's [[parts.special]], found in a
case's shape by `hits`) are the row's ends, the block's ends and the counts above;
each has a case named for it.
Part explain has one case: 12 keys drawn from the seed, 4 per question; the
given kernel copies the key the learner's answer picks, so a wrong answer
shows as a wrong number, not as the right answer.
"""

import numpy as np

RADIUS = 4
TPB = 128
PAST_16_BITS = 66000  # columns: more than 16 bits count (65536)
# The seeded case's shapes: a few, so that a run of another seed reuses a build.
SEEDED_SHAPES = ((3, 130), (5, 257), (2, 389), (4, 511))
# Part explain: the right answer to each question (1: part a, 2: b, 3: c).
QUESTIONS = ("MOST_SECTORS", "MOST_READS", "SLOWEST")
RIGHT = {"MOST_SECTORS": 2, "MOST_READS": 3, "SLOWEST": 3}


def _values(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    odd = 2 * rng.integers(2048, 4096, rows * cols) + 1  # odd multiples of 2^-12 in [1, 2)
    scale = rng.choice([-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0], rows * cols)
    return (odd / 4096.0 * scale).reshape(rows, cols).astype(np.float32)


def _case(rng: np.random.Generator, name: str, ko: str, rows: int, cols: int, seeded: bool = False,
          special: tuple = ()) -> dict:
    case = {"name": name, "label": {"en": name, "ko": ko}, "params": {"rows": rows, "cols": cols},
            "inputs": {"m": _values(rng, rows, cols)}, "seeded": seeded}
    if special:
        case["special"] = special
    return case


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    if part == "explain":
        keys = rng.choice(np.arange(1000, 1_000_000), 12, replace=False).astype(np.int32)
        return [{"name": "your answers", "label": {"en": "your answers", "ko": "여러분의 답"},
                 "params": {}, "inputs": {"keys": keys}}]
    rows, cols = SEEDED_SHAPES[int(rng.integers(len(SEEDED_SHAPES)))]
    # The special points each case is there for: part fast's, the learner's kernel.
    def points(*names: str) -> tuple:
        return names if part == "fast" else ()
    found = [
        _case(rng, "1 x 7, narrower than the window", "1 x 7, 창보다 좁음", 1, 7,
              special=points("row_narrower_than_window")),
        _case(rng, "5 x 200, a partial second block", "5 x 200, 덜 찬 두 번째 블록", 5, 200,
              special=points("halo_in_next_block", "partial_last_block")),
        _case(rng, "40 x 128, one whole block a row", "40 x 128, 행마다 온전한 블록 하나", 40, 128,
              special=points("row_ends_at_block_edge")),
        _case(rng, "70 x 300, beyond 128 blocks", "70 x 300, 블록 128개를 넘음", 70, 300,
              special=points("more_blocks_than_threads")),
        _case(rng, "33 x 181, non-square", "33 x 181, 정사각형이 아님", 33, 181),
        _case(rng, f"random {rows} x {cols}", f"무작위 {rows} x {cols}", rows, cols, seeded=True),
        # Last, so that the cases before it keep their values: part b's only case with two
        # blocks down a column (every other case has at most 70 rows).
        _case(rng, "130 x 9, more rows than a block", "130 x 9, 블록보다 많은 행", 130, 9),
    ]
    if part == "fast":
        found.append(_case(rng, f"1 x {PAST_16_BITS}, columns past 16 bits", f"1 x {PAST_16_BITS}, 16비트를 넘는 열",
                           1, PAST_16_BITS, special=("index_past_16_bits",)))
    return found


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]], part fast's) a case's shape reaches."""
    if part != "fast":
        return set()
    rows, cols = case["params"]["rows"], case["params"]["cols"]
    blocks = -(-cols // TPB)  # a row's blocks
    found = set()
    if cols < 2 * RADIUS + 1:
        found.add("row_narrower_than_window")
    if blocks > 1:
        found.add("halo_in_next_block")
    if cols % TPB:
        found.add("partial_last_block")
    else:
        found.add("row_ends_at_block_edge")
    if blocks * rows > TPB:
        found.add("more_blocks_than_threads")
    if cols > 2**16:
        found.add("index_past_16_bits")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    if part == "explain":
        keys = case["inputs"]["keys"]
        return {"answers": np.array([keys[4 * q + RIGHT[name]] for q, name in enumerate(QUESTIONS)],
                                    dtype=np.int32)}
    m = case["inputs"]["m"].astype(np.float64)
    rows, cols = m.shape
    padded = np.zeros((rows, cols + 2 * RADIUS))
    padded[:, RADIUS:RADIUS + cols] = m
    out = sum(padded[:, d:d + cols] for d in range(2 * RADIUS + 1))
    return {"output": out}


_PARTS = {1: "a", 2: "b", 3: "c"}


def invariants(case: dict, outputs: dict[str, np.ndarray], part: str):
    """Part explain: each answer in words (which part it names, right or not), without
    saying the right one."""
    if part != "explain":
        return []
    keys = case["inputs"]["keys"]
    checks = []
    for q, name in enumerate(QUESTIONS):
        got = int(outputs["answers"][q])
        picked = [j for j in range(4) if int(keys[4 * q + j]) == got]
        ok = bool(picked) and picked[0] == RIGHT[name]
        if not picked:
            detail = {"en": "not an answer the workbook knows", "ko": "워크북이 모르는 답"}
        elif picked[0] == 0:
            detail = {"en": "not answered yet (0)", "ko": "아직 답하지 않음 (0)"}
        elif ok:
            detail = {"en": f"part {_PARTS[picked[0]]}: right", "ko": f"파트 {_PARTS[picked[0]]}: 맞음"}
        else:
            detail = {"en": f"part {_PARTS[picked[0]]}: not what the reports say; read them again",
                      "ko": f"파트 {_PARTS[picked[0]]}: 보고서가 말하는 것과 다릅니다. 다시 읽어 보세요"}
        checks.append(({"en": name, "ko": name}, ok, detail))
    return checks


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged ([parts.speed]): 8192 x 1024 floats, 32 MiB in and
    32 MiB out, more than the L2 cache holds."""
    return _case(rng, "timing: 8192 x 1024", "시간 재기: 8192 x 1024", 8192, 1024)
