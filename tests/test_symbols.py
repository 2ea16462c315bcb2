"""Placing the simulator's accesses on the learner's lines: the pure-Python rules, without a compile
(tests/test_sim.py checks them through the real compiler)."""

from __future__ import annotations

from workbook.compile.symbols import Place, Resolver, _header

KERNEL = """def grand_total[blocks: Int](
    result: TileTensor[mut=True, dtype, Vector[1], MutAnyOrigin],
    totals: TileTensor[mut=False, dtype, Vector[blocks], ImmutAnyOrigin],
):
    if thread_idx.x == 0:
        var s: Float32 = 0
        for k in range(blocks):
            s += totals[k][0]
        result[0] = s


def other(totals: Int):
    totals[0] = 1
"""


def test_a_functions_signature_is_not_a_statement():
    lines = KERNEL.splitlines()
    before = lambda n: " ".join(lines[max(0, n - 4):n - 1])  # noqa: E731
    header = [n for n in range(1, 10) if _header(Place("k.mojo", n, 0, lines[n - 1].strip(), before(n)))]
    assert header == [1, 2, 3, 4]  # `def`, both parameters, `):`; `var s: Float32 = 0` is a statement


def test_an_access_put_on_the_signature_goes_to_the_first_line_that_indexes_its_array(tmp_path):
    source = tmp_path / "k.mojo"
    source.write_text(KERNEL)
    resolver = Resolver({str(source): source}, lambda p: p.name)
    found = resolver._first_touching((str(source), 4, 0), "totals")
    assert [p.line for p in found] == [8]  # not line 13, in the next function
    assert resolver._first_touching((str(source), 4, 0), "missing") == []
