"""Manifests, ids and the skeleton derivation: fast tests, no compiler."""

from __future__ import annotations

import pytest

from workbook import catalog, skeleton
from workbook.commands.author import drift


def test_every_puzzle_loads_with_parts_files_and_hints(root):
    puzzles = catalog.all_puzzles()
    assert [p.id for p in puzzles][:1] == ["p18"]
    for p in puzzles:
        assert p.parts and p.edit and p.hints
        assert (p.dir / p.reference).exists()
        for part in p.parts:
            assert part.inputs and part.outputs and part.atol >= 0 and part.rtol >= 0
        for f in p.solution_files():
            assert skeleton.count_gaps(f.read_text()) >= 1, f


def test_committed_skeletons_match_their_solutions():
    """The skeletons under puzzles/ are exactly what the solutions' markers derive."""
    assert drift(catalog.all_puzzles()) == []


def test_drift_is_caught(root):
    path = root / "puzzles/p18/op/softmax.mojo"
    path.write_text(path.read_text().replace("comptime SIZE = 128", "comptime SIZE = 256"))
    assert drift(catalog.all_puzzles()) == ["puzzles/p18/op/softmax.mojo"]


@pytest.mark.parametrize("typed,expected", [("p18", ("p18", None)), ("18", ("p18", None)),
                                            ("P18", ("p18", None)), ("p27.broadcast", ("p27", "broadcast"))])
def test_ids_are_resolved(root, typed, expected):
    assert catalog.resolve_id(typed) == expected


def test_unknown_id_suggests_the_closest(root):
    with pytest.raises(catalog.CatalogError, match="Closest: p18"):
        catalog.resolve_id("p19")


def test_a_path_where_an_id_belongs_is_explained(root):
    with pytest.raises(catalog.CatalogError, match="looks like a path.*p18"):
        catalog.resolve_id("puzzles/p18/op/softmax.mojo")


def test_missing_and_malformed_manifests_are_reported(root):
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\nedit = [\n")
    with pytest.raises(catalog.CatalogError, match="malformed manifest"):
        catalog.load("p18")
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\n")
    with pytest.raises(catalog.CatalogError, match="missing 'edit'"):
        catalog.load("p18")
    with pytest.raises(catalog.CatalogError, match="manifest is missing"):
        catalog.load("p99")


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
