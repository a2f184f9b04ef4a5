"""Tests of the Connect Four rules: published position counts, wins in every direction, draws, refusals, views."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gamenight.server.games.base import IllegalMove, Outcome
from gamenight.server.games.connect4 import (
    BOARD,
    COLS,
    ROWS,
    STRIDE,
    ConnectFour,
    ConnectFourState,
    has_four,
    positions_per_ply,
    state_from_board,
    threat_cells,
)

DATA = Path(__file__).resolve().parent.parent / "data"
GAME = ConnectFour()
RED, YELLOW = 0, 1
FAST_PLIES = 8
"""Position counts up to this many plies run in the default test run (about half a second)."""
DRAWN_GAME = "feaegagaafdgbgeadcdefgebadfcdcbbcbcdcfgbfe"
"""42 moves that fill the board without anyone making four (found by a seeded random playout)."""
DRAWN_BOARD = ["RYRYYRR", "YYRRRYY", "RYRYYRY", "YRYRRRY", "YYYRYYR", "RRYRYRR"]
"""The board `DRAWN_GAME` ends on, top row first."""


def published_counts() -> dict[int, int]:
    """OEIS A212693 from tests/data: plies -> distinct legal positions."""
    lines = (DATA / "connect4_positions.txt").read_text().splitlines()
    return {int(n): int(count) for n, count in (line.split() for line in lines if line.strip() and line[0] != "#")}


PUBLISHED = published_counts()


def play(moves: str, state: ConnectFourState | None = None) -> ConnectFourState:
    """The state after dropping discs into the columns lettered in `moves`, whoever is to move making each."""
    state = GAME.initial_state({}) if state is None else state
    for letter in moves:
        state = GAME.apply(state, {state.turn: GAME.parse_move(state, letter)})
    return state


# -- an independent statement of the rules -----------------------------------------------------------------


def grid_of(board: int) -> set[tuple[int, int]]:
    """The (col, row) cells set in a bitboard, row 0 at the bottom (sentinel bits ignored)."""
    return {(col, row) for col in range(COLS) for row in range(ROWS) if board >> (col * STRIDE + row) & 1}


def reference_fours(cells: set[tuple[int, int]]) -> list[set[tuple[int, int]]]:
    """Every line of four cells on the board held entirely in `cells`, by walking the grid."""
    found = []
    for col in range(COLS):
        for row in range(ROWS):
            for d_col, d_row in ((1, 0), (0, 1), (1, 1), (1, -1)):
                line = {(col + i * d_col, row + i * d_row) for i in range(4)}
                if all(0 <= c < COLS and 0 <= r < ROWS for c, r in line) and line <= cells:
                    found.append(line)
    return found


def reference_threats(own: set[tuple[int, int]], taken: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The empty cells that would complete a four of `own`, by trying each one."""
    empty = {(c, r) for c in range(COLS) for r in range(ROWS)} - taken
    return {cell for cell in empty if reference_fours(own | {cell})}


boards = st.integers(min_value=0, max_value=BOARD).map(lambda bits: bits & BOARD)


@settings(max_examples=300, deadline=None)
@given(boards)
def test_four_detection_follows_the_grid(board):
    """Any set of discs holds four in a line exactly when a walk over the grid finds one (no wrap-around)."""
    assert has_four(board) == bool(reference_fours(grid_of(board)))


def stacked(heights: list[int], colours: int) -> tuple[int, int]:
    """(discs of one colour, every disc) of a board obeying gravity: column heights and a colour per cell."""
    taken = sum(((1 << height) - 1) << col * STRIDE for col, height in enumerate(heights))
    return colours & taken, taken


stacked_boards = st.builds(stacked, st.lists(st.integers(0, ROWS), min_size=COLS, max_size=COLS), boards)


@settings(max_examples=300, deadline=None)
@given(stacked_boards)
def test_threat_cells_are_the_cells_that_complete_four(board):
    """On any board a game can reach, the threat cells are exactly the empty cells where one disc makes four."""
    own, taken = board
    assume(not has_four(own))  # a game is over once a side has four: nothing left to threaten
    assert grid_of(threat_cells(own, taken)) == reference_threats(grid_of(own), grid_of(taken))


# -- position counts -----------------------------------------------------------------------------------------


def test_position_counts_match_oeis_a212693():
    """Move generation from the empty board reaches exactly the published numbers of distinct positions."""
    assert positions_per_ply(FAST_PLIES) == [PUBLISHED[n] for n in range(FAST_PLIES + 1)]


@pytest.mark.slow
def test_deeper_position_counts_match_oeis_a212693():
    """Nine and ten plies deep, where ended games must stop being extended, the counts still match."""
    assert positions_per_ply(10) == [PUBLISHED[n] for n in range(11)]


def test_interface_reaches_the_same_positions_as_the_bitboards():
    """Walking legal_moves/apply and telling positions apart by their views gives the published counts too."""
    layer = {tuple(GAME.view(GAME.initial_state({}))["board"]): GAME.initial_state({})}
    for plies in range(1, 7):
        following = {}
        for state in layer.values():
            if GAME.outcome(state) is not None:
                continue
            for move in GAME.legal_moves(state, state.turn):
                child = GAME.apply(state, {state.turn: move})
                following[tuple(GAME.view(child)["board"])] = child
        assert len(following) == PUBLISHED[plies]
        layer = following


# -- wins and draws --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "winner", "line"),
    [
        ("ddeeffg", RED, [[5, 3], [5, 4], [5, 5], [5, 6]]),
        ("dcdcdcd", RED, [[2, 3], [3, 3], [4, 3], [5, 3]]),
        ("adcdcdcd", YELLOW, [[2, 3], [3, 3], [4, 3], [5, 3]]),
    ],
)
def test_horizontal_and_vertical_fours_win(moves, winner, line):
    """Four in a row across or up ends the game for that colour, and the view marks the four cells."""
    state = play(moves[:-1])
    assert GAME.outcome(state) is None
    state = play(moves[-1], state)
    assert GAME.outcome(state) == Outcome((winner,), "four")
    assert GAME.to_move(state) == frozenset()
    assert GAME.legal_moves(state, state.turn) == []
    assert GAME.view(state)["winning_line"] == line


@pytest.mark.parametrize(
    ("board", "winner", "line"),
    [
        # Rising to the right: red's a1 b2 c3, then d4.
        ([".......", ".......", ".......", "..RY...", ".RYR...", "RYRY..Y"], RED, [[2, 3], [3, 2], [4, 1], [5, 0]]),
        # Falling to the right: yellow's e3 f2 g1, then d4.
        ([".......", ".......", ".......", "...RY..", "...YRY.", "...RRRY"], YELLOW, [[2, 3], [3, 4], [4, 5], [5, 6]]),
    ],
)
def test_diagonal_fours_win(board, winner, line):
    """Four along either diagonal wins, for either colour; the view marks the diagonal."""
    state = state_from_board(board)
    assert state.turn == winner and GAME.outcome(state) is None
    state = play("d", state)
    assert GAME.outcome(state) == Outcome((winner,), "four")
    assert GAME.view(state)["winning_line"] == line


def test_full_board_without_four_is_a_draw():
    """A game that fills all 42 cells with no four in a line ends drawn, nobody winning."""
    state = play(DRAWN_GAME[:-1])
    assert GAME.outcome(state) is None
    state = play(DRAWN_GAME[-1], state)
    assert GAME.view(state)["board"] == DRAWN_BOARD
    assert GAME.outcome(state) == Outcome((), "draw")
    assert GAME.to_move(state) == frozenset()
    assert GAME.view(state)["winning_line"] == []


# -- refusals ------------------------------------------------------------------------------------------------


def test_full_column_is_refused_and_not_offered():
    """A seventh disc in one column is refused with a message naming it, and the column leaves the legal list."""
    state = play("ddaddadd")
    assert GAME.outcome(state) is None
    assert 3 not in GAME.legal_moves(state, state.turn)
    assert "d" not in GAME.legal_notation(state, state.turn)
    with pytest.raises(IllegalMove, match="column d is full"):
        GAME.apply(state, {state.turn: 3})


def test_moves_after_the_end_are_refused():
    """Once a side has four, any further move is refused as the game being over."""
    state = play("dcdcdcd")
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(state, {YELLOW: 2})


@pytest.mark.parametrize("text", ["h", "", "dd", "1", "d4", "column d", " ", "ä"])
def test_text_that_names_no_column_is_refused(text):
    """Anything but one letter a-g is refused when parsed, with a message saying what a move looks like."""
    with pytest.raises(IllegalMove, match="a to g"):
        GAME.parse_move(GAME.initial_state({}), text)


@pytest.mark.parametrize("move", [None, 3.0, True, "d", -1, 7])
def test_move_objects_that_are_no_column_are_refused(move):
    """apply refuses anything but a column number 0-6, whatever a caller passes."""
    with pytest.raises(IllegalMove):
        GAME.apply(GAME.initial_state({}), {RED: move})


def test_the_wrong_seat_may_not_move():
    """Yellow cannot move when it is red's turn, nor may both move at once."""
    state = GAME.initial_state({})
    with pytest.raises(IllegalMove, match="red"):
        GAME.apply(state, {YELLOW: 3})
    with pytest.raises(IllegalMove, match="red"):
        GAME.apply(state, {RED: 3, YELLOW: 2})
    assert GAME.legal_moves(state, YELLOW) == []


# -- notation, views, states -----------------------------------------------------------------------------------


def test_notation_round_trips_in_any_case():
    """Every column formats to its letter, and the letter parses back in either case and with spaces."""
    state = GAME.initial_state({})
    for col in range(COLS):
        letter = GAME.format_move(state, col)
        assert letter == "abcdefg"[col]
        assert GAME.parse_move(state, letter) == col
        assert GAME.parse_move(state, f" {letter.upper()} ") == col


def test_legal_moves_are_centre_first():
    """The legal list starts at the centre column, the order the AI and clients may rely on for hints."""
    assert GAME.legal_notation(GAME.initial_state({}), RED) == list("dcebfag")


def test_view_shape():
    """The view has six rows of seven cells, top row first, no scores, and no winning line mid-game."""
    view = GAME.view(play("ddc"))
    assert view == {
        "board": [".......", ".......", ".......", ".......", "...Y...", "..RR..."],
        "scores": None,
        "winning_line": [],
    }


def test_state_from_board_reads_views_back():
    """A view's board builds the same state back, the side to move following from the counts."""
    state = play("dcdee")
    assert state_from_board(GAME.view(state)["board"]) == state
    with pytest.raises(ValueError, match="floats"):
        state_from_board([".......", ".......", ".......", ".......", "...R...", "......."])
    with pytest.raises(ValueError, match="red moves first"):
        state_from_board([".......", ".......", ".......", ".......", ".......", "...YY.."])


def test_apply_never_mutates_its_input():
    """apply returns a new state and leaves the one it was given as it was (states are frozen values)."""
    state = play("dcdee")
    frozen = copy.deepcopy(state)
    after = GAME.apply(state, {state.turn: 3})
    assert state == frozen and after != state
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.red = 0  # type: ignore[misc]


def test_no_options_and_seat_names():
    """Connect Four takes no options (anything given is refused) and seats are red then yellow."""
    assert GAME.validate_options({}) == {}
    assert GAME.seat_names({}) == ["red", "yellow"]
    assert GAME.describe().options == ()
