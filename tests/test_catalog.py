"""Manifests, ids and the skeleton derivation: fast tests, no compiler."""

from __future__ import annotations

import pytest

from workbook import catalog, skeleton


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
    with pytest.raises(catalog.CatalogError) as caught:
        catalog.resolve_id("p19")
    assert caught.value.msg.key == "catalog.unknown_puzzle_close" and "p18" in caught.value.msg.values["close"]


def test_a_path_where_an_id_belongs_is_explained(root):
    with pytest.raises(catalog.CatalogError) as caught:
        catalog.resolve_id("puzzles/p18/op/softmax.mojo")
    assert caught.value.msg.values["guess"] == "p18"


def test_missing_and_malformed_manifests_are_reported(root):
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\nedit = [\n")
    with pytest.raises(catalog.CatalogError, match="malformed manifest"):
        catalog.load("p18")
    (root / "puzzles/p18/puzzle.toml").write_text("id = 'p18'\n")
    with pytest.raises(catalog.CatalogError, match="missing 'edit'"):
        catalog.load("p18")
    with pytest.raises(catalog.CatalogError, match="manifest is missing"):
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
    with pytest.raises(catalog.CatalogError, match=message):
        catalog.load("p18")


def test_size_expressions():
    names = {"size": 13, "TPB": 4}
    assert catalog.evaluate("ceildiv(size, TPB)", names) == 4
    assert catalog.evaluate("size * 2 + 1", names) == 27
    assert catalog.evaluate("max(size, 20) // TPB", names) == 5
    for bad in ("size.x", "open('f')", "size ** 2", "nope"):
        with pytest.raises((catalog.ManifestError, SyntaxError)):
            catalog.evaluate(bad, names)


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
