"""Tests of Othello's pattern evaluation (issue 38, session 2): the fitted tables ship with the package, the kernel
loads them for level 5, its evaluation equals the Python reference `othello_patterns.evaluate`, and it gives a
position and its mirror images the same value."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from gamenight.server.ai import _othellokernel, othello_ai, othello_patterns
from gamenight.server.ai.othello_patterns import PHASES, PatternTable, read_table
from gamenight.server.games.othello import legal_mask
from tests.ai.test_othello_kernel import positions


def evaluate(table: PatternTable, own: int, opp: int) -> int:
    """`othello_patterns.evaluate` with the position's hand-weighted score from the pure code's `evaluate_sides`."""
    hand = othello_ai.evaluate_sides(
        own, opp, legal_mask(own, opp, 8), othello_ai.geometry(8), othello_ai.phase_weights(8)
    )
    return othello_patterns.evaluate(table, own, opp, hand)


def _mirror(board: int, symmetry: int) -> int:
    """`board` under one of the 8 symmetries of the square (0 the identity): transpose, then flip rows / columns."""
    out = 0
    for sq in range(64):
        if board >> sq & 1:
            row, col = divmod(sq, 8)
            if symmetry & 4:
                row, col = col, row
            if symmetry & 1:
                col = 7 - col
            if symmetry & 2:
                row = 7 - row
            out |= 1 << (row * 8 + col)
    return out


def _sides() -> list[tuple[int, int]]:
    """(own, opp) of 150 random positions of every stage, both sides to move."""
    found = []
    for state in positions(75, seed=38):
        own, opp = state.sides()
        found += [(own, opp), (opp, own)]
    return found


@pytest.fixture
def shipped() -> Iterator[PatternTable]:
    """The shipped tables, loaded in the kernel and on; put back as found after the test."""
    table = read_table()
    _othellokernel.load_patterns(table.kernel_instances, table.block, table.weights.tobytes())
    yield table
    _load_as_othello_ai_did()


def _load_as_othello_ai_did() -> None:
    """The kernel's tables and switch as othello_ai's import left them."""
    if othello_ai.PATTERNS is not None:
        table = othello_ai.PATTERNS
        _othellokernel.load_patterns(table.kernel_instances, table.block, table.weights.tobytes())


def test_the_tables_ship_and_level_five_searches_with_them() -> None:
    """The package carries the fitted tables and the kernel's search uses them once othello_ai is imported."""
    assert othello_patterns.TABLE_FILE.is_file()
    assert othello_ai.PATTERNS is not None
    assert _othellokernel.use_patterns(True) is True  # it was on


def test_kernel_pattern_evaluation_equals_the_python_reference(shipped: PatternTable) -> None:
    """On random positions of every phase the kernel's pattern score equals `othello_patterns.evaluate`, with the
    shipped tables and with random tables (every entry, sign and the floor of negative sums exercised)."""
    sides = _sides()
    for own, opp in sides:
        assert _othellokernel.pattern_evaluate(own, opp) == evaluate(shipped, own, opp)
    rng = random.Random(7)
    noisy = PatternTable.from_fit(
        [[list(squares) for squares in shape] for shape in shipped.shapes],
        [rng.uniform(-8, 8) for _ in range(PHASES * shipped.block)],
    )
    _othellokernel.load_patterns(noisy.kernel_instances, noisy.block, noisy.weights.tobytes())
    values = [_othellokernel.pattern_evaluate(own, opp) for own, opp in sides]
    assert values == [evaluate(noisy, own, opp) for own, opp in sides]
    assert min(values) < 0 < max(values)


def test_mirror_images_have_the_same_pattern_value(shipped: PatternTable) -> None:
    """The 8 symmetries of the board give a position the same pattern score (every orientation of a shape shares
    its table)."""
    for own, opp in _sides()[:60]:
        values = {_othellokernel.pattern_evaluate(_mirror(own, s), _mirror(opp, s)) for s in range(8)}
        assert len(values) == 1


def test_search_with_patterns_scores_with_them(shipped: PatternTable) -> None:
    """A depth-1 search with the tables on scores its move by the pattern value of the child (negated), and with
    them off by the hand weights: the switch reaches the search's leaves."""
    own, opp = positions(1, seed=4)[0].sides()
    move, score, *_ = _othellokernel.search(own, opp, 1, -1.0)
    assert move is not None
    flips = _othellokernel.flips(own, opp, move)
    child = (opp ^ flips, own | flips | 1 << move)
    assert score == -_othellokernel.pattern_evaluate(*child)
    assert _othellokernel.use_patterns(False) is True
    move, score, *_ = _othellokernel.search(own, opp, 1, -1.0)
    assert move is not None
    flips = _othellokernel.flips(own, opp, move)
    assert score == -_othellokernel.evaluate(opp ^ flips, own | flips | 1 << move)


def test_a_missing_or_broken_table_file_leaves_the_hand_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: PatternTable
) -> None:
    """Without a readable pattern file, or with tables the kernel refuses, the kernel still loads and level 5
    searches with the hand weights."""
    broken = tmp_path / "broken.dat"
    broken.write_bytes(b"not a table")
    too_many = tmp_path / "too_many.dat"  # a well-formed file with more instances than the kernel holds (256)
    block = 3 + len(othello_patterns.EXTRAS)
    othello_patterns.write_table(
        PatternTable.from_fit([[[sq % 64] for sq in range(300)]], [0.0] * PHASES * block), too_many
    )
    for path in (tmp_path / "missing.dat", broken, too_many):
        monkeypatch.setattr(othello_patterns, "TABLE_FILE", path)
        _othellokernel.use_patterns(False)
        assert othello_ai._load_kernel() is _othellokernel
        assert othello_ai.PATTERNS is None
        assert _othellokernel.use_patterns(False) is False
    with pytest.raises(ValueError, match="not an Othello pattern file"):
        read_table(broken)
    monkeypatch.setattr(othello_ai, "PATTERNS", shipped)


def test_the_kernel_refuses_bad_tables_with_a_clear_error(shipped: PatternTable) -> None:
    """Malformed tables raise TypeError or ValueError and leave no half-loaded table in use."""
    with pytest.raises(ValueError, match="blocks of"):
        _othellokernel.load_patterns(shipped.kernel_instances, shipped.block, b"\0\0")
    with pytest.raises(ValueError, match="must fit in the block"):
        _othellokernel.load_patterns(((shipped.block, bytes([0, 1])),), shipped.block, shipped.weights.tobytes())
    with pytest.raises(ValueError, match=r"0\.\.63"):
        _othellokernel.load_patterns(((0, bytes([64])),), shipped.block, shipped.weights.tobytes())
    with pytest.raises(TypeError, match="instance"):
        _othellokernel.load_patterns(((0, [1, 2]),), shipped.block, shipped.weights.tobytes())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no pattern tables"):
        _othellokernel.pattern_evaluate(*positions(1, seed=1)[0].sides())
    with pytest.raises(ValueError, match="no pattern tables"):
        _othellokernel.use_patterns(True)
