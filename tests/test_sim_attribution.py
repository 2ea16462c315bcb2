"""What the simulator blames, and where (issues 39 and 40): the wrong kernels of
tests/wrong run on the simulator, and their findings read as a learner reads them,
rendered at 80 columns in English and Korean.

- A vector that begins inside a buffer and runs past its end names that buffer and the
  elements past its end (p23: it was blamed on whatever lay next in the simulator's
  memory: `shared[196608..196616]`, `b[33792..33794]`).
- A vector load at an address its alignment claim does not hold is the simulator's own
  finding, `misaligned_access`, with the buffer, element, width, the address's offset and
  the alignment needed (p35: it was "far outside every buffer", from the host's fault).
- A shared array's overflow is that array's, not an access to the next one (p13)."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from workbook.author import curriculum
from workbook.core import i18n
from workbook.core.results import PuzzleResult
from workbook.course import catalog
from workbook.view import report

pytestmark = pytest.mark.slow
LANGS = ["en", "ko"]


@pytest.fixture(scope="module")
def sandbox():
    with curriculum.Sandbox() as box:
        yield box


@pytest.fixture(scope="module")
def runs(sandbox):
    """Each wrong kernel, run once for the module: (result, verdicts)."""
    kept: dict[str, tuple] = {}

    def run(kernel_id: str):
        if kernel_id not in kept:
            pid = kernel_id.split("/")[0]
            kernel = next(k for k in curriculum.wrong_kernels(catalog.load(pid)) if k.id == kernel_id)
            kept[kernel_id] = curriculum.run_wrong(sandbox, kernel)
        return kept[kernel_id]
    return run


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


def sim_findings(result: PuzzleResult):
    return [f for part in result.parts for name, dev in part.kernels.items() if name == "sim"
            for f in dev.findings or []]


def rendered(result: PuzzleResult, lang: str) -> str:
    i18n.set_language(lang)
    console = Console(width=80, record=True, force_terminal=False, no_color=True, highlight=False)
    report.render_result(console, result, "title")
    text = console.export_text()
    assert all(cell_len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=cell_len)
    return text


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def expectations_hold(verdicts) -> None:
    assert all(v.ok for v in verdicts), [(v.what, v.detail) for v in verdicts if not v.ok]


@pytest.mark.parametrize("lang", LANGS)
def test_a_vector_past_the_end_names_the_buffer_it_began_in(runs, lang):
    result, verdicts = runs("p23/stores_simd_width")
    expectations_hold(verdicts)
    found = sim_findings(result)
    read = next(f for f in found if f.kind == "read_out_of_bounds")
    wrote = next(f for f in found if f.kind == "out_of_bounds")
    assert read.line == wrote.line == 70
    # The first case: 3 values, every call of width 1 moves 4: a[0..2] on, a[3..5] past the end.
    assert read.message.key == "finding.sim_vector_read_outside"
    assert (read.message.values["start"], read.message.values["element"], read.message.values["lanes"]) == \
        ("a[0..2]", "a[3..5]", 4)
    assert read.message.values["where"].values == {"buffer": "a", "size": 3}
    assert wrote.message.key == "finding.sim_vector_write_outside"
    assert wrote.message.values["element"] == "output[3..5]"
    assert wrote.message.values["where"].values["buffer"] == "output"
    # Nothing is blamed on memory the kernel never named.
    assert not any(f.kind.startswith("shared") for f in found)
    assert all("b" != f.message.values.get("buffer") or f.kind == "read_out_of_bounds" for f in found)
    text = squeezed(rendered(result, lang))
    if lang == "en":
        assert squeezed("read 4 elements at once from a[0..2] on: a[3..5] lie past the end of `a` (3 elements)") \
            in text
        assert squeezed("output[3..5] lie past the end of `output`") in text
    else:
        assert squeezed("a[0..2]부터 원소 4개를 한 번에 읽기. 그중 a[3..5]는 `a`(원소 3개)의 끝을 넘습니다") in text
    assert "shared[" not in text and "b[33792" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_a_false_alignment_claim_is_a_misaligned_access_with_its_numbers(runs, lang):
    result, verdicts = runs("p35/false_alignment_claim")
    expectations_hold(verdicts)
    found = [f for f in sim_findings(result) if f.kind == "misaligned_access"]
    assert found and not any(f.kind.startswith("invalid") for f in sim_findings(result))
    f = found[0]
    values = f.message.values
    assert f.line == 112 and f.kernel == "combine_vector"
    assert values["what"].values == {"buffer": "a"} and re.fullmatch(r"a\[\d+\]", values["element"])
    index = int(values["element"][2:-1])
    # a starts on a 16-byte line: a[index]'s address is 4 * index bytes into it.
    assert (values["bytes"], values["align"], values["misalign"]) == (16, 16, 4 * index % 16)
    assert values["misalign"] in (4, 8, 12)
    text = squeezed(rendered(result, lang))
    if lang == "en":
        assert squeezed(f"in `combine_vector` (line 112), thread 0 read 16 bytes at once from {values['element']} "
                        f"of `a`: that address is {values['misalign']} bytes past a multiple of 16") in text
    else:
        assert squeezed(f"`combine_vector`의 줄 112에서 `a`의 {values['element']}부터 16바이트를 한 번에 읽기. "
                        f"그 주소는 16의 배수에서 {values['misalign']}바이트 벗어나 있는데") in text
    assert "far outside" not in text and "멀리 벗어난" not in text


@pytest.mark.parametrize("lang", LANGS)
def test_a_shared_array_s_overflow_is_its_own_not_the_next_array_s(runs, lang):
    result, verdicts = runs("p13/shared_a_without_halo")
    expectations_hold(verdicts)
    found = sim_findings(result)
    wrote = next(f for f in found if f.kind == "shared_out_of_bounds")
    read = next(f for f in found if f.kind == "shared_read_out_of_bounds")
    assert (wrote.line, read.line) == (125, 140)
    assert (wrote.message.values["buffer"], wrote.message.values["element"], wrote.message.values["size"]) == \
        ("shared_a", "shared_a[64..66]", 64)
    assert read.message.values["element"] == "shared_a[64..66]"
    # shared_b, where a GPU keeps those slots, is not blamed.
    assert not any(f.kind in ("shared_race", "uninitialized_read") for f in found)
    assert not any(f.message.values.get("buffer") == "shared_b" for f in found)
    text = squeezed(rendered(result, lang))
    if lang == "en":
        assert squeezed("wrote shared_a[64..66], outside the shared array `shared_a` (64 elements)") in text
    else:
        assert squeezed("shared_a[64..66] 쓰기. 공유 배열 `shared_a`(원소 64개)의 범위 밖입니다") in text


@pytest.mark.parametrize("lang", LANGS)
def test_a_vector_before_a_shared_array_s_start_is_told_in_the_learner_s_terms(lang):
    """The raw finding as wbsim.c writes it (no build): a vector of 4 floats at tile[-2]
    (begun in the gap before the array) is about `tile`, its elements before the start."""
    from types import SimpleNamespace

    from workbook.run import simfindings
    raw = {"kind": "shared_read_out_of_bounds", "case": -1, "launch": "k", "allocation": 0,
           "array": {"rank": 1, "shape": [32, 1, 1]}, "index": -2, "index_min": -2, "index_max": -1,
           "size": 32, "bytes": 16, "elem": 4, "start_min": -2, "start_max": -2, "before": True,
           "threads": [0], "count": 1}
    found = simfindings.describe(raw, SimpleNamespace(cases=[]), "case")
    i18n.set_language(lang)
    text = found.message.text(lang)
    assert found.message.key == "finding.sim_vector_read_outside"
    assert found.message.values["start"] == "shared1[-2]" and found.message.values["element"] == "shared1[-2..-1]"
    expected = {"en": "read 4 elements at once from shared1[-2] on: shared1[-2..-1] lie before the start of the "
                      "shared array `shared1` (32 elements)",
                "ko": "shared1[-2]부터 원소 4개를 한 번에 읽기. 그중 shared1[-2..-1]은 "
                      "공유 배열 `shared1`(원소 32개)의 시작보다 앞입니다"}[lang]
    assert expected in text
