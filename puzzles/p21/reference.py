"""Puzzle 21 reference: output[b, s, :] = weights[indices[b, s], :].

Both parts compute the same lookup, with two thread layouts (see
op/embedding.mojo). Which input makes each step of a kernel decide the answer:
- the token number, not the position: indices are never the identity, and
  vocab differs from every other size, so a kernel that reads row p (or row
  b, or row s) copies the wrong row;
- the last row and repeats: '2 x 9 positions, 5 tokens, dim 33' uses 18
  positions over 5 rows, row 4 (the last) and row 0 among them; 'one position,
  the last row' reads only row vocab - 1;
- splitting a position into (b, s) by seq, not by batch: batch and seq
  differ in every case with batch > 1 ('3 x 5 positions' first);
- splitting an output number into (position, value) by dim: dim is 7, 16, 33,
  50 and 130, never equal to seq or batch;
- the guards: dim 33 and 130 leave partial blocks along y (BLOCK_Y = 8), and
  element counts that are not multiples of TPB (every case but 'one block,
  2 x 4 x 16') leave a partial last block: a missing guard writes past the
  output or reads past the indices (the simulator stops there);
- more blocks than a block has threads: '4 x 40 positions, dim 130' (20800
  values: 163 blocks of 128 in part coalesced, 10 x 17 in part 2d);
- past a 16-bit index: '2 x 300 positions, dim 120' has 72000 values, so a
  thread number (part coalesced) or a value's place (part 2d) kept in 16 bits
  wraps around, and the values past 65536 stay NaN
  (tests/wrong/p21/index_in_16_bits, place_in_16_bits_2d); part 2d got the
  case last, after the red team's place_in_16_bits_2d passed without it;
- a token number past 16 bits: 'tokens past 16 bits, vocab 70000' reads rows
  32768, 40000, 65535, 65536 and 69999 (and 0), so a token kept in Int16
  turns negative and one kept in UInt16 wraps to another row
  (tests/wrong/p21/token_in_16_bits passed every case before it);
- a size drawn from the seed among a few ("random seq n").
The special points (the manifest's [[parts.special]], found in a case's
inputs by `hits`) are those above: row 0, the last row, a repeated token,
batch, seq, vocab and dim all different, the partial blocks, exactly one
block, more blocks than a block has threads, more values than a 16-bit index
counts and a token past 16 bits; each has a case named for it.
The parts' access budgets hold each thread to one value: one read of
indices, one of weights, one write.

Exact comparison: a lookup copies values, so the right answer is the
weights' own float32 bits. The weights are normal random values with more
significant bits than float16 or bfloat16 hold: a copy through 16 bits
fails every case.
"""

import numpy as np

SEEDED_SEQ = (12, 25, 47, 64)
TPB = 128
BLOCK_X, BLOCK_Y = 16, 8
PAST_16_BITS = 2**16  # values: more than a 16-bit index counts
# Token numbers where 16 bits break: Int16 turns negative from 32768, UInt16 wraps at 65536.
TOKENS_PAST_16_BITS = (40000, 0, 65536, 32768, 69999, 65535)

# name, Korean, batch, seq, vocab, dim, the special points it is there for (by part)
_SHAPES = [
    ("one position, the last row", "위치 1개, 마지막 행", 1, 1, 10, 7, {"*": ("last_row",)}),
    ("2 x 9 positions, 5 tokens, dim 33", "위치 2 x 9개, 토큰 5개, dim 33", 2, 9, 5, 33,
     {"*": ("first_row", "repeated_tokens"), "coalesced": ("partial_block",),
      "2d": ("partial_block_of_positions", "partial_block_of_values")}),
    ("3 x 5 positions, every token different", "위치 3 x 5개, 모두 다른 토큰", 3, 5, 40, 16,
     {"*": ("sizes_all_differ",)}),
    ("one block, 2 x 4 x 16", "블록 하나, 2 x 4 x 16", 2, 4, 20, 16, {"coalesced": ("exactly_one_block",)}),
    ("4 x 40 positions, dim 130", "위치 4 x 40개, dim 130", 4, 40, 1000, 130, {"*": ("more_blocks_than_threads",)}),
]


def _case(name: str, korean: str, rng: np.random.Generator, batch: int, seq: int, vocab: int, dim: int,
          **extra) -> dict:
    positions = batch * seq
    if name.startswith("one position"):
        tokens = np.array([vocab - 1])
    elif name.startswith("tokens past 16 bits"):
        tokens = np.array(TOKENS_PAST_16_BITS)
    elif positions <= vocab:
        tokens = rng.permutation(vocab)[:positions]
        tokens[rng.integers(positions)] = vocab - 1  # the last row, once at least
    else:
        tokens = rng.integers(0, vocab, positions)
        spots = rng.choice(positions, 2, replace=False)
        tokens[spots] = [0, vocab - 1]
    weights = rng.normal(size=(vocab, dim)).astype(np.float32)
    return {"name": name, "label": {"en": name, "ko": korean},
            "params": {"batch": batch, "seq": seq, "vocab": vocab, "dim": dim},
            "inputs": {"indices": tokens.reshape(batch, seq).astype(np.int32), "weights": weights}, **extra}


def cases(rng: np.random.Generator, part: str) -> list[dict]:
    n = int(rng.choice(SEEDED_SEQ))
    found = [_case(name, ko, rng, *shape, special=points.get("*", ()) + points.get(part, ()))
             for name, ko, *shape, points in _SHAPES]
    if part == "coalesced":
        # 72000 values (the graph does not run it: graph_cases in the manifest)
        found.append(_case("2 x 300 positions, dim 120, past a 16-bit index", "위치 2 x 300개, dim 120, 16비트 인덱스를 넘음",
                           rng, 2, 300, 1000, 120, special=("past_16_bits",)))
    found.append(_case(f"random seq {n}", f"무작위 seq {n}", rng, 3, n, 300, 50, seeded=True))
    # Appended last, so that the cases above keep their values: part 2d's 72000 values, and
    # token numbers past 16 bits (both parts), found missing by the red team.
    if part == "2d":
        found.append(_case("2 x 300 positions, dim 120, past a 16-bit index", "위치 2 x 300개, dim 120, 16비트 인덱스를 넘음",
                           rng, 2, 300, 1000, 120, special=("past_16_bits",)))
    found.append(_case("tokens past 16 bits, vocab 70000", "16비트를 넘는 토큰, vocab 70000",
                       rng, 2, 3, 70000, 5, special=("token_past_16_bits",)))
    return found


def hits(case: dict, part: str) -> set[str]:
    """The special points (the manifest's [[parts.special]]) this case's inputs reach."""
    batch, seq, vocab, dim = (case["params"][k] for k in ("batch", "seq", "vocab", "dim"))
    tokens = np.asarray(case["inputs"]["indices"]).reshape(-1)
    values = batch * seq * dim
    found = set()
    if np.any(tokens == 0):
        found.add("first_row")
    if np.any(tokens == vocab - 1):
        found.add("last_row")
    if np.unique(tokens).size < tokens.size:
        found.add("repeated_tokens")
    if batch > 1 and len({batch, seq, vocab, dim}) == 4:
        found.add("sizes_all_differ")
    if values > PAST_16_BITS:
        found.add("past_16_bits")
    if tokens.size and tokens.max() >= 2**16 and tokens.max() < vocab:
        found.add("token_past_16_bits")
    if part == "coalesced":
        if values > TPB and values % TPB:
            found.add("partial_block")
        if values == TPB:
            found.add("exactly_one_block")
        if -(-values // TPB) > TPB:
            found.add("more_blocks_than_threads")
    else:
        blocks = (-(-(batch * seq) // BLOCK_X), -(-dim // BLOCK_Y))
        if blocks[0] > 1 and batch * seq % BLOCK_X:
            found.add("partial_block_of_positions")
        if blocks[1] > 1 and dim % BLOCK_Y:
            found.add("partial_block_of_values")
        if blocks[0] * blocks[1] > TPB:
            found.add("more_blocks_than_threads")
    return found


def expected(case: dict, part: str) -> dict[str, np.ndarray]:
    return {"output": case["inputs"]["weights"][case["inputs"]["indices"]]}


def speed_case(rng: np.random.Generator, part: str) -> dict:
    """Timed on a GPU only, never judged nor run on the simulator ([parts.speed] in the
    manifest): 16 x 2048 positions of dim 1024 from 8192 rows, 256 MiB of output and
    rows read, so that the launch itself is a small part of the time."""
    return _case("timing: 16 x 2048 positions, dim 1024", "시간 재기: 위치 16 x 2048개, dim 1024",
                 rng, 16, 2048, 8192, 1024)
