"""Tests of the Pentago rules engine: moves, rotations, fives, endings, notation, and Irving's reference data."""

from __future__ import annotations

import dataclasses
import pickle
import random
from collections import Counter
from pathlib import Path

import pytest

from gamenight.server.games.base import BadOptions, GameError, IllegalMove, Outcome
from gamenight.server.games.pentago import (
    CELL_BY_NAME,
    FULL,
    LINES5,
    QUADRANT_MASKS,
    QUADRANTS,
    Pentago,
    PentagoMove,
    PentagoState,
    fives_result,
    generate_moves,
    has_five,
    perft,
    play,
    rotate,
    state_from_boards,
    winning_cells,
)

DATA = Path(__file__).resolve().parent.parent / "data"
GAME = Pentago()
SEATS = {"X": 0, "O": 1}

# Irving's rotation children come in the order qx, qy in 0..1, then d = -1 ("right" = clockwise), +1.
# His x runs along a drawn row and y runs up, so (qx, qy) = (0, 0) is our bottom-left quadrant.
IRVING_ROTATION_ORDER = tuple(
    (quadrant, clockwise)
    for quadrant in (QUADRANTS.index("bl"), QUADRANTS.index("tl"), QUADRANTS.index("br"), QUADRANTS.index("tr"))
    for clockwise in (True, False)
)


# -- helpers ------------------------------------------------------------------------------------
def cell(name: str) -> int:
    """The cell index of a name like "b3"."""
    return CELL_BY_NAME[name]


def boards(text: str) -> tuple[int, int]:
    """(black, white) bitboards from rows like "XO..../...", first row = our row 0 = rank 1 drawn on top."""
    rows = text.split("/")
    assert len(rows) == 6 and all(len(row) == 6 for row in rows), text
    black = white = 0
    for r, row in enumerate(rows):
        for c, char in enumerate(row):
            if char == "X":
                black |= 1 << (r * 6 + c)
            elif char == "O":
                white |= 1 << (r * 6 + c)
            else:
                assert char == ".", text
    return black, white


def position(text: str, turn: int) -> PentagoState:
    """A state from drawn rows with `turn` to place next."""
    return state_from_boards(*boards(text), turn)


def irving_rows(name: str) -> str:
    """Decode Irving's board name (4 x 16-bit quadrants, each 9 base-3 digits) into drawn rows.

    Follows `board_t` in web/client/src/board.js: grid[6x + y], quadrant index 2qx + qy, x to the right
    and y upwards, so drawn row 5 - y holds Irving's y.
    """
    number = int(name.rstrip("m"))
    grid = [0] * 36
    for qx in range(2):
        for qy in range(2):
            quad = number >> (16 * (2 * qx + qy)) & 0xFFFF
            for x in range(3):
                for y in range(3):
                    quad, grid[6 * (3 * qx + x) + 3 * qy + y] = divmod(quad, 3)
    return "/".join("".join(".XO"[grid[6 * x + (5 - row)]] for x in range(6)) for row in range(6))


def data_lines(filename: str) -> list[list[str]]:
    """The whitespace-split non-comment lines of a copied reference file."""
    text = (DATA / filename).read_text()
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def value_for(outcome: Outcome, seat: int) -> int:
    """Irving's value of a finished game for `seat`: 1 win, 0 tie, -1 loss."""
    if not outcome.winners:
        return 0
    return 1 if outcome.winners == (seat,) else -1


def solve(state: PentagoState) -> int:
    """Exact value for the seat to move, by brute force over the engine (only for a few empty cells)."""
    result = GAME.outcome(state)
    if result is not None:
        return value_for(result, state.turn)
    return max(-solve(GAME.apply(state, {state.turn: move})) for move in GAME.legal_moves(state, state.turn))


def move(state: PentagoState, text: str) -> PentagoState:
    """The state after the seat to move plays the move written `text`."""
    return GAME.apply(state, {state.turn: GAME.parse_move(state, text)})


def random_board(rng: random.Random) -> int:
    """A random set of cells, dense enough that fives are common."""
    return rng.getrandbits(36) | rng.getrandbits(36)


# -- set-up and the first position ---------------------------------------------------------------
def test_seats_and_options():
    """Rooms show seats as black then white and refuse every option (Pentago has none)."""
    assert GAME.seat_names({}) == ["black", "white"]
    assert GAME.seat_count({}) == 2
    assert GAME.option_specs == ()
    assert GAME.validate_options({}) == {}
    with pytest.raises(BadOptions):
        GAME.validate_options({"size": 7})
    assert GAME.describe().name == "pentago"


def test_first_position_has_288_moves():
    """Black opens with any of 36 cells times 8 rotations; white may not move yet."""
    start = GAME.initial_state({})
    moves = GAME.legal_moves(start, 0)
    assert len(moves) == 288
    assert len(set(moves)) == 288
    assert GAME.to_move(start) == frozenset({0})
    assert GAME.legal_moves(start, 1) == []
    assert GAME.outcome(start) is None


def test_legal_moves_order_is_cell_then_quadrant_then_cw_first():
    """Move lists come in a fixed order (cell ascending, quadrant tl/tr/bl/br, cw before ccw)."""
    moves = GAME.legal_moves(GAME.initial_state({}), 0)
    assert moves[:3] == [PentagoMove(0, 0, True), PentagoMove(0, 0, False), PentagoMove(0, 1, True)]
    assert moves[8] == PentagoMove(1, 0, True)
    assert moves == sorted(moves, key=lambda m: (m.cell, m.quadrant, not m.clockwise))


def test_first_move_shows_on_the_board():
    """A marble placed on b3 and its quadrant turned clockwise ends on a2, drawn as B; white is to move."""
    after = move(GAME.initial_state({}), "b3 tl cw")
    view = GAME.view(after)
    assert view == {"board": ["......", "B.....", "......", "......", "......", "......"], "scores": None, "fives": []}
    assert GAME.to_move(after) == frozenset({1})
    assert after.ply == 1


# -- fives and endings ---------------------------------------------------------------------------
# Black has a1-d1; white has four scattered marbles; black to move.
FOUR_IN_ROW = "XXXX../....../....../....../....../OO.OO."


def test_placement_five_wins_before_any_rotation():
    """Completing five by placing ends the game at once, unrotated, and the bare placement is the only form."""
    state = position(FOUR_IN_ROW, 0)
    moves = GAME.legal_moves(state, 0)
    assert [m for m in moves if m.cell == cell("e1")] == [PentagoMove(cell("e1"))]
    assert len(moves) == 1 + 8 * 27
    after = move(state, "e1")
    assert GAME.outcome(after) == Outcome((0,), "five")
    assert GAME.to_move(after) == frozenset()
    assert GAME.legal_moves(after, 1) == []
    assert GAME.view(after)["board"][0] == "BBBBB."
    assert GAME.view(after)["fives"] == ["a1", "b1", "c1", "d1", "e1"]


def test_rotation_sent_with_a_winning_placement_is_refused():
    """Sending a rotation with a placement that already makes five is an error that says what to send."""
    state = position(FOUR_IN_ROW, 0)
    with pytest.raises(IllegalMove, match="placing on e1 already makes five; send 'e1' without a rotation"):
        move(state, "e1 tr cw")


def test_bare_placement_without_five_is_refused():
    """A placement that does not make five must come with a rotation."""
    state = position(FOUR_IN_ROW, 0)
    with pytest.raises(IllegalMove, match="a rotation is required"):
        move(state, "f6")


# White's left column of the top-left quadrant becomes its top row when that quadrant turns clockwise,
# next to white's d1 e1. Black's right column there becomes the quadrant's bottom row, next to d3.
# Black to move in each; e5 / e3 is where black places.
OPPONENT_FIVE = "O..OO./O...../O...../...X.X/.X..../...X.X"
BOTH_FIVES = "O.XOO./O.X.../O.XX../....../....../.....X"
MOVER_FIVE = "..X.../..X.../..XX../O...O./.O..../O.O..X"


def test_rotation_completing_only_the_opponents_five_loses():
    """Turning a quadrant that completes only the opponent's five hands the opponent the win."""
    state = position(OPPONENT_FIVE, 0)
    assert GAME.outcome(state) is None
    after = move(state, "e5 tl cw")
    assert GAME.outcome(after) == Outcome((1,), "five")
    assert GAME.view(after)["fives"] == ["a1", "b1", "c1", "d1", "e1"]


def test_rotation_the_other_way_does_not_give_the_opponent_five():
    """The same quadrant turned anticlockwise sends white's column to the third rank; play goes on."""
    after = move(position(OPPONENT_FIVE, 0), "e5 tl ccw")
    assert GAME.outcome(after) is None
    assert GAME.view(after)["board"][2] == "WWW..."
    assert GAME.view(after)["board"][4] == ".B..B."


def test_rotation_completing_both_fives_draws():
    """Turning a quadrant that completes fives for both colours is a draw, with both fives highlighted."""
    state = position(BOTH_FIVES, 0)
    assert GAME.outcome(state) is None
    after = move(state, "e3 tl cw")
    assert GAME.outcome(after) == Outcome((), "five_both")
    assert GAME.outcome(after).is_draw
    assert sorted(GAME.view(after)["fives"]) == sorted(["a1", "b1", "c1", "d1", "e1", "a3", "b3", "c3", "d3", "e3"])


def test_rotation_completing_the_movers_five_wins():
    """Turning a quadrant that completes only the mover's five wins for the mover."""
    state = position(MOVER_FIVE, 0)
    assert GAME.outcome(state) is None
    after = move(state, "e3 tl cw")
    assert GAME.outcome(after) == Outcome((0,), "five")
    assert GAME.view(after)["fives"] == ["a3", "b3", "c3", "d3", "e3"]


# 35 marbles, no five anywhere; the top-left quadrant (XOX/OXO/XOX) looks the same after any turn.
# f5 is empty and white is to move; filling it completes the board without a five.
NEARLY_FULL = "XOXXOX/OXOXXX/XOXXOO/OXOOOX/OXOOO./OXXXXO"


@pytest.mark.parametrize("text", ["f5 tl cw", "f5 tl ccw"])
def test_full_board_without_five_draws_after_the_last_rotation(text):
    """The 36th marble is placed and a quadrant turned; with no five the game is a draw on a full board."""
    state = position(NEARLY_FULL, 1)
    assert GAME.outcome(state) is None
    assert len(GAME.legal_moves(state, 1)) == 8
    after = move(state, text)
    assert after.black | after.white == FULL
    assert GAME.outcome(after) == Outcome((), "full")
    assert GAME.view(after)["fives"] == []


def test_random_games_end_with_a_result_that_matches_the_board():
    """Random games always finish within 36 moves, and the result is what the final board shows."""
    rng = random.Random(2024)
    for _ in range(200):
        state = GAME.initial_state({})
        while GAME.outcome(state) is None:
            assert state.ply < 36
            state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
        result = GAME.outcome(state)
        fives = (has_five(state.black), has_five(state.white))
        if result.reason == "full":
            assert state.black | state.white == FULL and fives == (False, False)
        elif result.reason == "five_both":
            assert fives == (True, True)
        else:
            assert result.reason == "five" and fives[result.winners[0]] and not fives[1 - result.winners[0]]


# -- rotations and lines -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start", "quadrant", "clockwise", "end"),
    [
        ("a1", "tl", True, "c1"),
        ("a1", "tl", False, "a3"),
        ("b1", "tl", True, "c2"),
        ("d1", "tr", True, "f1"),
        ("f6", "br", True, "d6"),
        ("a4", "bl", False, "a6"),
        ("b2", "tl", True, "b2"),
    ],
)
def test_rotation_direction_as_drawn(start, quadrant, clockwise, end):
    """Clockwise means clockwise on the board as drawn, rank 1 at the top."""
    turned = rotate(1 << cell(start), QUADRANTS.index(quadrant), clockwise)
    assert turned == 1 << cell(end)


@pytest.mark.parametrize("quadrant", range(4))
def test_rotation_round_trips(quadrant):
    """A turn and its reverse, or four turns one way, give back the board; other quadrants never move."""
    rng = random.Random(quadrant)
    outside = FULL ^ QUADRANT_MASKS[quadrant]
    for _ in range(500):
        board = rng.getrandbits(36)
        cw = rotate(board, quadrant, True)
        assert rotate(cw, quadrant, False) == board
        assert rotate(rotate(board, quadrant, False), quadrant, True) == board
        assert rotate(rotate(rotate(cw, quadrant, True), quadrant, True), quadrant, True) == board
        assert rotate(cw, quadrant, True) == rotate(rotate(board, quadrant, False), quadrant, False)
        assert cw & outside == board & outside
        assert cw.bit_count() == board.bit_count()


def test_there_are_32_lines_of_five():
    """Wins are counted on exactly the 32 rows, columns and diagonals of five cells on a 6x6 board."""
    assert len(set(LINES5)) == 32
    assert all(mask.bit_count() == 5 and mask & ~FULL == 0 for mask in LINES5)


def test_has_five_agrees_with_the_line_masks():
    """The fast five test finds a five exactly when one of the 32 lines is complete, and never wraps edges."""
    rng = random.Random(7)
    for board in [random_board(rng) for _ in range(5000)] + [rng.getrandbits(36) for _ in range(5000)]:
        assert has_five(board) == any(mask & board == mask for mask in LINES5)
    for mask in LINES5:
        assert has_five(mask)
        for bit in range(36):
            if mask >> bit & 1:
                assert not has_five(mask ^ 1 << bit)
    # A run that wraps from the end of one row to the start of the next is not a five.
    assert not has_five(sum(1 << cell(name) for name in ("c1", "d1", "e1", "f1", "a2")))


def test_winning_cells_are_exactly_the_placements_that_make_five():
    """The quick search for winning placements finds every empty cell that completes a five, and no other."""
    rng = random.Random(11)
    for _ in range(3000):
        own = rng.getrandbits(36) & rng.getrandbits(36)
        if has_five(own):
            continue
        taken = own | rng.getrandbits(36) & rng.getrandbits(36)
        expected = sum(1 << c for c in range(36) if not taken >> c & 1 and has_five(own | 1 << c))
        assert winning_cells(own, taken) == expected


def test_perft_from_the_start():
    """Move counts from the empty board are 36*8, 35*8, 34*8 per position (no five is possible so early)."""
    start = GAME.initial_state({})
    assert [perft(start, depth) for depth in range(4)] == [1, 288, 288 * 280, 288 * 280 * 272]


def test_states_and_moves_pickle():
    """States and moves survive pickling, so the AI can hand them to worker processes."""
    state = move(position(BOTH_FIVES, 0), "e3 tl cw")
    assert pickle.loads(pickle.dumps(state)) == state
    assert pickle.loads(pickle.dumps(generate_moves(GAME.initial_state({})))) == GAME.legal_moves(
        GAME.initial_state({}), 0
    )


# -- input checking and immutability --------------------------------------------------------------
def test_apply_never_changes_its_input():
    """Applying a move leaves the old state intact, so the server and the AI can keep and share states."""
    state = move(GAME.initial_state({}), "c4 br ccw")
    snapshot = dataclasses.replace(state)
    moves = {state.turn: PentagoMove(cell("d2"), 3, True)}
    after = GAME.apply(state, moves)
    assert state == snapshot and after != state
    assert moves == {1: PentagoMove(cell("d2"), 3, True)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.black = 1  # type: ignore[misc]


def test_play_trusts_and_matches_apply():
    """The fast unchecked path used by search gives the same states as the checked one."""
    state = position(OPPONENT_FIVE, 0)
    for m in GAME.legal_moves(state, 0):
        assert play(state, m) == GAME.apply(state, {0: m})


@pytest.mark.parametrize(
    ("moves", "message"),
    [
        ({1: PentagoMove(0, 0, True)}, "only black"),
        ({0: PentagoMove(0, 0, True), 1: PentagoMove(1, 0, True)}, "only black"),
        ({0: "a1 tl cw"}, "not a Pentago move"),
        ({0: PentagoMove(cell("d4"), 0, True)}, "d4 is already taken"),
    ],
)
def test_apply_refuses_bad_moves(moves, message):
    """Wrong seat, a move given as text, or an occupied cell each get an error saying what is wrong."""
    state = position(OPPONENT_FIVE, 0)
    with pytest.raises(IllegalMove, match=message):
        GAME.apply(state, moves)


def test_no_moves_after_the_game_is_over():
    """Once the game is over nobody may move."""
    over = move(position(FOUR_IN_ROW, 0), "e1")
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(over, {1: PentagoMove(cell("f6"), 0, True)})


@pytest.mark.parametrize(
    "fields", [(36, 0, True), (-1, 0, True), (0, 4, True), (0, -1, False), (0, None, True), ("a1", 0, True)]
)
def test_move_objects_must_describe_a_real_move(fields):
    """A move object naming a cell or quadrant that does not exist cannot be built."""
    with pytest.raises(IllegalMove):
        PentagoMove(*fields)


def test_positions_with_impossible_counts_are_refused():
    """A position whose marble counts do not fit the seat to move, or with overlapping boards, is refused."""
    with pytest.raises(GameError):
        position("X...../....../....../....../....../......", 0)
    with pytest.raises(GameError):
        position("....../....../....../....../....../......", 1)
    with pytest.raises(GameError):
        state_from_boards(1, 1, 0)


# -- notation ------------------------------------------------------------------------------------
def test_notation_round_trips_for_every_legal_move():
    """Every legal move, written and read back, is the same move, and no two moves are written alike."""
    states = [GAME.initial_state({}), position(FOUR_IN_ROW, 0), position(BOTH_FIVES, 0), position(NEARLY_FULL, 1)]
    for state in states:
        moves = GAME.legal_moves(state, state.turn)
        texts = [GAME.format_move(state, m) for m in moves]
        assert len(set(texts)) == len(moves)
        assert [GAME.parse_move(state, t) for t in texts] == moves


def test_notation_examples():
    """Wire moves read as documented: file a-f, rank 1-6 from the top, quadrant names and directions."""
    start = GAME.initial_state({})
    assert GAME.parse_move(start, "b3 tr cw") == PentagoMove(2 * 6 + 1, QUADRANTS.index("tr"), True)
    assert GAME.parse_move(start, "  B3   TR\tCCW ") == PentagoMove(13, 1, False)
    assert GAME.parse_move(start, "f6 br cw") == PentagoMove(35, 3, True)
    assert GAME.parse_move(start, "a1") == PentagoMove(0)
    assert GAME.format_move(start, PentagoMove(13, 2, False)) == "b3 bl ccw"
    assert GAME.format_move(start, PentagoMove(4)) == "e1"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "b3 tr", "b3 tr cw now", "g1 tl cw", "b7 tl cw", "b0", "b3 xx cw", "b3 tr left", "3b tr cw",
     "b3, tr, cw", None, 42, b"b3 tr cw", ["b3", "tr", "cw"]],
)  # fmt: skip
def test_bad_notation_says_what_is_expected(text):
    """Malformed or non-text moves are refused with a message showing the expected form."""
    with pytest.raises(IllegalMove, match="expected a move like 'b3 tr cw'"):
        GAME.parse_move(GAME.initial_state({}), text)


def test_transcript_separates_moves_with_commas():
    """A finished game's record lists moves separated by commas, since moves contain spaces."""
    assert GAME.transcript(["b3 tr cw", "a1 tl ccw", "e1"]) == "b3 tr cw, a1 tl ccw, e1"


# -- reference data (Irving's strong-solution test vectors) -----------------------------------------
def all_reference_boards() -> list[tuple[str, str, str, str]]:
    """(file, Irving name, drawn board, stone count or '') for every board in the three copied files."""
    found = []
    for filename in ("pentago_done_vectors.txt", "pentago_move_vectors.txt", "pentago_game_paths.txt"):
        for fields in data_lines(filename):
            if fields[0] == "GAME":
                continue
            if fields[0] in ("PARENT", "CHILD"):
                found.append((filename, fields[1], fields[2], ""))
            else:
                found.append((filename, fields[0], fields[1], fields[4]))
    return found


def test_reference_boards_are_decoded_as_their_source_names_them():
    """Our reading of the reference boards (rows, colours, stone counts) matches Irving's own board numbers."""
    found = all_reference_boards()
    assert Counter(filename for filename, *_ in found) == {
        "pentago_done_vectors.txt": 88,
        "pentago_move_vectors.txt": 15 + sum(len(block[3]) for block in move_vector_blocks()),
        "pentago_game_paths.txt": 72 + 58 + 4,
    }
    for _, name, board, stones in found:
        assert irving_rows(name) == board
        if stones:
            assert 36 - board.count(".") == int(stones)


def done_vectors() -> list[tuple[str, str, int, int]]:
    """(board, phase, seat to act, expected) for the 88 terminal-status vectors."""
    return [(f[1], f[2], SEATS[f[3]], int(f[5])) for f in data_lines("pentago_done_vectors.txt")]


def test_done_vectors_awaiting_placement():
    """Positions where a seat must place are over exactly when Irving's solver says, with its value."""
    checked = 0
    for board, phase, seat, expected in done_vectors():
        if phase == "P":
            result = GAME.outcome(position(board, seat))
            assert (2 if result is None else value_for(result, seat)) == expected, board
            checked += 1
    assert checked == 50


def test_done_vectors_awaiting_rotation():
    """Right after a placement only fives count (a full board still rotates), as in Irving's solver."""
    checked = 0
    for board, phase, seat, expected in done_vectors():
        if phase == "R":
            result = fives_result(*boards(board))
            assert (2 if result is None else value_for(result, seat)) == expected, board
            checked += 1
    assert checked == 38


def predecessors(board: str, seat: int) -> list[tuple[PentagoState, int]]:
    """Live states (and the cell) from which `seat` placing one marble reaches the drawn post-placement board."""
    black, white = boards(board)
    own = white if seat else black
    found = []
    for c in range(36):
        if own >> c & 1:
            before = state_from_boards(black & ~(1 << c), white & ~(1 << c), seat)
            if GAME.outcome(before) is None:
                found.append((before, c))
    return found


def test_done_vectors_awaiting_rotation_through_apply():
    """Where play can reach a rotation-phase vector, the engine's placement there gives Irving's status."""
    # Vectors where the opponent already has five (values 0 and -1) cannot arise in play, since the game
    # would have ended; the others are reached from every live position one marble earlier.
    for board, phase, seat, expected in done_vectors():
        if phase != "R":
            continue
        earlier = predecessors(board, seat)
        assert bool(earlier) == (expected in (1, 2)), board
        for before, c in earlier:
            cell_moves = [m for m in GAME.legal_moves(before, seat) if m.cell == c]
            if expected == 1:
                assert cell_moves == [PentagoMove(c)]
                assert value_for(GAME.outcome(GAME.apply(before, {seat: cell_moves[0]})), seat) == 1
            else:
                assert expected == 2, board
                assert len(cell_moves) == 8


def move_vector_blocks() -> list[tuple[str, str, int, list[str]]]:
    """(parent board, phase, seat to act, child boards in order) for the 15 move-generation vectors."""
    blocks: list[tuple[str, str, int, list[str]]] = []
    declared: list[int] = []
    for fields in data_lines("pentago_move_vectors.txt"):
        if fields[0] == "PARENT":
            blocks.append((fields[2], fields[3], SEATS[fields[4]], []))
            declared.append(int(fields[5]))
        else:
            assert fields[0] == "CHILD" and fields[3] == ("R" if blocks[-1][1] == "P" else "P")
            blocks[-1][3].append(fields[2])
    assert [len(block[3]) for block in blocks] == declared
    assert len(blocks) == 15
    return blocks


def drawn(black: int, white: int) -> str:
    """Bitboards back to the reference files' drawn rows."""

    def char(c: int) -> str:
        return "X" if black >> c & 1 else "O" if white >> c & 1 else "."

    return "/".join("".join(char(r * 6 + c) for c in range(6)) for r in range(6))


def test_move_vectors_placements():
    """From a placement position, the engine's moves place exactly Irving's children, one per empty cell."""
    checked = 0
    for parent, phase, seat, children in move_vector_blocks():
        if phase != "P":
            continue
        state = position(parent, seat)
        placed = set()
        for m in GAME.legal_moves(state, seat):
            after = GAME.apply(state, {seat: m})
            black, white = after.black, after.white
            if m.quadrant is not None:
                black, white = rotate(black, m.quadrant, not m.clockwise), rotate(white, m.quadrant, not m.clockwise)
            placed.add(drawn(black, white))
        assert sorted(placed) == sorted(children), parent
        checked += 1
    assert checked == 8


def test_move_vectors_rotations():
    """From a placed position, the eight rotations give exactly Irving's children, in his order and direction."""
    checked = 0
    for parent, phase, _, children in move_vector_blocks():
        if phase != "R":
            continue
        black, white = boards(parent)
        turned = [drawn(rotate(black, q, cw), rotate(white, q, cw)) for q, cw in IRVING_ROTATION_ORDER]
        assert turned == children, parent
        checked += 1
    assert checked == 7


def test_move_vectors_rotations_through_apply():
    """Where a rotation vector is reachable by play, applying the eight moves reaches Irving's children."""
    for parent, phase, seat, children in move_vector_blocks():
        if phase != "R" or fives_result(*boards(parent)) is not None:
            continue
        earlier = predecessors(parent, seat)
        assert earlier, parent
        for before, c in earlier:
            after = [GAME.apply(before, {seat: PentagoMove(c, q, cw)}) for q, cw in IRVING_ROTATION_ORDER]
            assert [drawn(s.black, s.white) for s in after] == children, parent


def game_paths() -> dict[int, list[tuple[str, str, int, int, int]]]:
    """Game number -> its records (board, phase, seat to act, stones, value)."""
    games: dict[int, list[tuple[str, str, int, int, int]]] = {}
    for fields in data_lines("pentago_game_paths.txt"):
        if fields[0] == "GAME":
            games[int(fields[1])] = []
        else:
            games[max(games)].append((fields[1], fields[2], SEATS[fields[3]], int(fields[4]), int(fields[5])))
    return games


def placed_cell(state: PentagoState, placed: str) -> int:
    """The one cell that is empty in `state` and taken on the drawn post-placement board."""
    black, white = boards(placed)
    new = (black | white) & ~(state.black | state.white)
    assert new.bit_count() == 1 and (black | white) & (state.black | state.white) == state.black | state.white
    return new.bit_length() - 1


def rotation_between(placed: str, turned: str) -> tuple[int, bool]:
    """The first (quadrant, clockwise) that turns the drawn board `placed` into `turned`."""
    black, white = boards(placed)
    rotations = [(q, cw) for q in range(4) for cw in (True, False)]
    return next((q, cw) for q, cw in rotations if drawn(rotate(black, q, cw), rotate(white, q, cw)) == turned)


def replay(path: list[tuple[str, str, int, int, int]]) -> list[PentagoState]:
    """Replay a reference game through notation and apply; the state before each of its placements."""
    state = GAME.initial_state({})
    states = [state]
    for (placed, phase, seat, _, _), (turned, next_phase, *_) in zip(path[1::2], path[2::2], strict=False):
        assert (phase, next_phase, seat) == ("R", "P", state.turn)
        quadrant, clockwise = rotation_between(placed, turned)
        state = move(state, GAME.format_move(state, PentagoMove(placed_cell(state, placed), quadrant, clockwise)))
        assert drawn(state.black, state.white) == turned
        assert GAME.outcome(state) is None
        states.append(state)
    return states


def test_reference_games_replay():
    """Both complete reference games replay move by move through notation, never ending early."""
    games = game_paths()
    assert [len(games[0]), len(games[1])] == [72, 58]
    for number in (0, 1):
        states = replay(games[number])
        assert len(states) == (len(games[number]) + 1) // 2
        assert states[-1].ply == games[number][-1][3] - 1


def test_reference_game_ending_values():
    """The last moves of reference game 0 have the values Irving's solver gives them (a tie at the end)."""
    path = game_paths()[0]
    states = replay(path)
    for index, (board, phase, seat, stones, value) in enumerate(path):
        if stones < 33:
            continue
        # Record 2k is the k-th placement position; record 2k + 1 is the board after that placement.
        before = states[index // 2]
        assert before.turn == seat
        if phase == "P":
            assert solve(before) == value, index
        else:
            options = [m for m in GAME.legal_moves(before, seat) if m.cell == placed_cell(before, board)]
            assert max(-solve(GAME.apply(before, {seat: m})) for m in options) == value, index
