"""Manifests, ids and the skeleton derivation: fast tests, no compiler."""

from __future__ import annotations

import re

import pytest

from workbook.course import catalog, manifest, skeleton


def test_every_puzzle_loads_with_parts_files_and_hints(root):
    puzzles = catalog.all_puzzles()
    chapters = catalog.chapters()
    assert puzzles and [p.chapter for p in puzzles] == sorted(p.chapter for p in puzzles)
    for p in puzzles:
        assert p.parts and p.edit and p.hints and p.chapter in chapters
        assert (p.dir / p.reference).exists()
        for part in p.parts:
            assert part.inputs and part.outputs and part.atol >= 0 and part.rtol >= 0 and part.tolerance
            assert ("gpu" not in part.devices) or part.launches
        for f in p.solution_files():
            assert skeleton.count_gaps(f.read_text()) >= 1, f


@pytest.mark.parametrize("typed,expected", [("p18", ("p18", None)), ("18", ("p18", None)),
                                            ("P18", ("p18", None)), ("p27.broadcast", ("p27", "broadcast")),
                                            ("1", ("p01", None)), ("p1", ("p01", None))])
def test_ids_are_resolved(root, typed, expected):
    assert catalog.resolve_id(typed) == expected


def test_unknown_id_suggests_the_closest(root):
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.resolve_id("p37")
    close = caught.value.msg.values["close"].split(", ")
    assert caught.value.msg.key == "catalog.unknown_puzzle_close" and close
    assert set(close) <= set(catalog.puzzle_ids())


@pytest.mark.parametrize("typed", ["p20", "20", "P20"])
def test_an_id_the_course_leaves_out_says_why(root, typed):
    """Upstream's p20 calls its op from PyTorch, which is not in this stack: said, in both
    languages, with where its op is here, never the nearest ids as if it were a typo."""
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.resolve_id(typed)
    assert caught.value.msg.key == "catalog.left_out"
    assert "PyTorch" in caught.value.msg.text("en") and "p17" in caught.value.msg.text("en")
    assert "PyTorch" in caught.value.msg.text("ko") and "p20은 이 과정에 없습니다" in caught.value.msg.text("ko")


@pytest.mark.parametrize("typed,expected", [("softmax", "p18"), ("Softmax", "p18"), ("소프트맥스", "p18"),
                                            ("attention", "p19"), ("bank conflicts", "p32"), ("뱅크 충돌", "p32"),
                                            ("tma", "p36"), ("embedding", "p21")])
def test_a_name_or_words_of_a_title_find_the_puzzle(root, typed, expected):
    assert catalog.resolve_id(typed) == (expected, None)


def test_words_that_several_titles_hold_name_them_all(root):
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.resolve_id("warp")
    found = caught.value.msg.values["found"]
    assert caught.value.msg.key == "catalog.name_several" and "p24" in found and "p25" in found
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.resolve_id("zz")  # too short to be a name: the usual message
    assert caught.value.msg.key == "catalog.unknown_puzzle"


def test_a_path_where_an_id_belongs_is_explained(root):
    with pytest.raises(manifest.CatalogError) as caught:
        catalog.resolve_id("puzzles/p18/op/softmax.mojo")
    assert caught.value.msg.values["guess"] == "p18"


def test_missing_and_malformed_manifests_are_reported(root):
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\nedit = [\n")
    with pytest.raises(manifest.CatalogError, match="malformed manifest"):
        catalog.load("p18")
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\n")
    with pytest.raises(manifest.CatalogError, match="missing 'edit'"):
        catalog.load("p18")
    with pytest.raises(manifest.CatalogError, match="manifest is missing"):
        catalog.load("p99")


@pytest.mark.parametrize("edit,message", [
    (("tolerance = ", "why = "), "say why atol and rtol"),
    (('grid = [1]', 'grid = ["size +"]'), "not a size expression"),
    (('devices = ["cpu", "gpu"]', 'devices = ["tpu"]'), "devices must be"),
    (('fixed_size = "The op', 'fixed_size = " " # "The op'), "fixed_size says why"),
])
def test_manifest_mistakes_name_the_key(root, edit, message):
    path = root / "puzzles/p18/puzzle.toml"
    path.write_text(path.read_text().replace(*edit))
    with pytest.raises(manifest.CatalogError, match=message):
        catalog.load("p18")


def test_size_expressions():
    names = {"size": 13, "TPB": 4}
    assert manifest.evaluate("ceildiv(size, TPB)", names) == 4
    assert manifest.evaluate("size * 2 + 1", names) == 27
    assert manifest.evaluate("max(size, 20) // TPB", names) == 5
    for bad in ("size.x", "open('f')", "size ** 2", "nope"):
        with pytest.raises((manifest.ManifestError, SyntaxError)):
            manifest.evaluate(bad, names)


def test_skeleton_keeps_instructions_and_placeholders_only():
    solution = (
        "def f():\n"
        "    # FILL IN: add one (1 line)\n"
        "    # more instruction\n"
        "    #| return 0\n"
        "    # a solution comment\n"
        "    return 1\n"
        "    # END FILL IN\n"
    )
    assert skeleton.derive_skeleton(solution) == (
        "def f():\n    # FILL IN: add one (1 line)\n    # more instruction\n    return 0\n"
    )
    assert skeleton.clean_solution(solution) == (
        "def f():\n    # FILL IN: add one (1 line)\n    # more instruction\n    # a solution comment\n    return 1\n"
    )


@pytest.mark.parametrize("bad", ["# FILL IN: x\n", "# END FILL IN\n", "# FILL IN: a\n# FILL IN: b\n# END FILL IN\n"])
def test_unbalanced_markers_are_errors(bad):
    with pytest.raises(skeleton.MarkerError):
        skeleton.derive_skeleton(bad)


KOREAN_SOLUTION = (
    "# Puzzle: add one.\n"
    "#ko 퍼즐: 하나 더하기.\n"
    "LIMIT = 4  # the most\n"
    "#ko 최대값\n"
    "def f():\n"
    "    # Read the value.\n"
    "    # FILL IN: add one (1 line)\n"
    "    #ko 값을 읽습니다.\n"
    "    #ko FILL IN: 하나를 더합니다 (1줄)\n"
    "    #| return 0\n"
    "    # a solution comment\n"
    "    #ko 정답의 주석\n"
    "    return 1\n"
    "    # END FILL IN\n"
)


def test_a_solution_carries_its_comments_in_korean_and_each_skeleton_is_one_language():
    assert skeleton.derive_skeleton(KOREAN_SOLUTION) == (
        "# Puzzle: add one.\nLIMIT = 4  # the most\ndef f():\n"
        "    # Read the value.\n    # FILL IN: add one (1 line)\n    return 0\n"
    )
    assert skeleton.derive_skeleton(KOREAN_SOLUTION, "ko") == (
        "# 퍼즐: 하나 더하기.\nLIMIT = 4  # 최대값\ndef f():\n"
        "    # 값을 읽습니다.\n    # FILL IN: 하나를 더합니다 (1줄)\n    return 0\n"
    )
    assert skeleton.clean_solution(KOREAN_SOLUTION, "ko").endswith("    # 정답의 주석\n    return 1\n")
    assert skeleton.untranslated(KOREAN_SOLUTION) == []
    english_only = "\n".join(line for line in KOREAN_SOLUTION.splitlines() if "최대값" not in line) + "\n"
    assert skeleton.untranslated(english_only) == [3]  # the trailing comment has no Korean


MESSAGE_SOLUTION = (
    "def f(n: Int):\n"
    "    comptime assert n < 4, \"n is at most 3\"  # a check\n"
    "    #ko= comptime assert n < 4, \"n은 3 이하입니다\"  # 확인\n"
    "    # FILL IN: return n (1 line)\n"
    "    #ko FILL IN: n을 돌려줍니다 (1줄)\n"
    "    #| raise Error(\"not written yet\")\n"
    "    #ko= raise Error(\"아직 쓰지 않았습니다\")\n"
    "    return n\n"
    "    # END FILL IN\n"
)


def test_a_message_in_the_code_is_said_in_korean_and_only_its_words_differ(tmp_path):
    english = skeleton.derive_skeleton(MESSAGE_SOLUTION)
    korean = skeleton.derive_skeleton(MESSAGE_SOLUTION, "ko")
    assert english == ("def f(n: Int):\n    comptime assert n < 4, \"n is at most 3\"  # a check\n"
                       "    # FILL IN: return n (1 line)\n    raise Error(\"not written yet\")\n")
    assert korean == ("def f(n: Int):\n    comptime assert n < 4, \"n은 3 이하입니다\"  # 확인\n"
                      "    # FILL IN: n을 돌려줍니다 (1줄)\n    raise Error(\"아직 쓰지 않았습니다\")\n")
    assert skeleton.clean_solution(MESSAGE_SOLUTION, "ko").endswith("    return n\n")
    assert skeleton.untranslated(MESSAGE_SOLUTION) == []
    assert skeleton.untranslated(MESSAGE_SOLUTION.replace("    #ko= comptime", "    #ko_ comptime")) == [2]
    assert skeleton.untranslated("def f():\n    \"\"\"Says what f does.\"\"\"\n    pass\n") == [2]
    assert skeleton.untranslated("x = ops.custom(name=\"softmax\")\n") == []  # a name is not words
    solution = tmp_path / "s.mojo"
    solution.write_text(MESSAGE_SOLUTION)
    learner = tmp_path / "l.mojo"
    learner.write_text(korean)  # the Korean skeleton is not started, though its strings differ
    assert skeleton.is_skeleton(learner, skeleton.skeleton_of(solution))
    assert skeleton.language_of(learner, solution) == "ko"


@pytest.mark.parametrize("bad", [
    "x = 1\n#ko= x = 2\n",  # more than the words of a string differ
    "# a comment\n#ko= x = 1\n",  # nothing of code above it
])
def test_a_korean_line_of_code_that_changes_the_code_is_an_error(bad):
    with pytest.raises(skeleton.MarkerError):
        skeleton.derive_skeleton(bad, "ko")


@pytest.mark.parametrize("bad", [
    "x = 1\n#ko 한국어\n#ko 둘\n",  # no comment above it (two lines can't be a trailing comment)
    "# FILL IN: a\n#ko 한국어\n#| pass\n# END FILL IN\n",  # the Korean drops the FILL IN line
])
def test_korean_that_translates_nothing_is_an_error(bad):
    with pytest.raises(skeleton.MarkerError):
        skeleton.derive_skeleton(bad, "ko")


def test_a_skeleton_in_either_language_is_untouched_and_anything_else_is_not(tmp_path):
    solution = tmp_path / "solution.mojo"
    solution.write_text(KOREAN_SOLUTION)
    learner = tmp_path / "learner.mojo"
    for lang in ("en", "ko"):
        learner.write_text(skeleton.derive_skeleton(KOREAN_SOLUTION, lang))
        assert skeleton.language_of(learner, solution) == lang
        assert skeleton.is_skeleton(learner, skeleton.skeleton_of(solution))
    learner.write_text(learner.read_text() + "# my note\n")
    assert skeleton.language_of(learner, solution) is None  # not exactly a skeleton: author verify says so
    assert skeleton.is_skeleton(learner, skeleton.skeleton_of(solution))  # but nothing is started
    learner.write_text(learner.read_text().replace("return 0", "return 2"))
    assert not skeleton.is_skeleton(learner, skeleton.skeleton_of(solution))


def test_every_solution_is_translated_and_both_skeletons_hold_the_same_code():
    """The same code, up to the words of its messages (an assert's, said in Korean by #ko=)."""
    from conftest import REPO

    def shape(text: str) -> list[str]:
        return [skeleton.without_strings(line) for line in skeleton.code_of(text)]

    for puzzle in catalog.all_puzzles(REPO):
        for path in puzzle.solution_files():
            text = path.read_text()
            assert skeleton.untranslated(text) == [], path
            english, korean = skeleton.derive_skeleton(text), skeleton.derive_skeleton(text, "ko")
            assert shape(english) == shape(korean), path
            assert skeleton.count_gaps(english) == skeleton.count_gaps(korean) >= 1, path
            assert len(re.findall(r"[가-힣]", korean)) > 20, path


@pytest.mark.parametrize("edit,message", [
    (("max_sectors_per_request = 8", "max_sectors_per_request = -1"), "a number of at least 0"),
    (("max_sectors_per_request = 8", "max_sectors = 8"), "unknown traffic keys"),
    (("max_sectors_per_request = 8", "access = \"both\"\nmax_sectors_per_request = 8"), "\"load\" or \"store\""),
    (("max_sectors_per_request = 8\nwhy.en", "max_sectors_per_request = 8\nwhy.fr"), "say why"),
])
def test_traffic_limit_mistakes_name_the_key(root, edit, message):
    path = root / "puzzles/p21/puzzle.toml"
    assert edit[0] in path.read_text()
    path.write_text(path.read_text().replace(*edit))
    with pytest.raises(manifest.CatalogError, match=message):
        catalog.load("p21")


def test_traffic_limits_are_read(root):
    part = catalog.load("p21").parts[0]
    assert [(t.kernel, t.access, t.limits) for t in part.traffic] == [
        ("embedding_coalesced", "", (("max_sectors_per_request", 8.0),))]
    assert catalog.load("p21").parts[1].show_traffic


@pytest.mark.parametrize("dtypes, message", [
    ('{ a = "float64", w = "bfloat16" }', r"dtypes.a must be one of \('bfloat16',\)"),
    ('{ a = "bfloat16", w = "bfloat16", output = "bfloat16" }', "dtypes.output must be one of"),
])
def test_only_bfloat16_is_said_of_an_input_and_never_of_an_output(root, dtypes, message):
    """An input's dtype is its reference array's; dtypes may only make it bfloat16 (whose
    bits the launcher writes). Any other would be one type's bytes read as another."""
    path = root / "puzzles/p36/puzzle.toml"
    path.write_text(path.read_text().replace('dtypes = { a = "bfloat16", w = "bfloat16" }', f"dtypes = {dtypes}"))
    with pytest.raises(manifest.CatalogError, match=message):
        catalog.load("p36")
