"""Tests of the Othello rules: published perft counts and positions, passes, endings, notation, views."""

from __future__ import annotations

import configparser
import pickle
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamenight.server.games.base import BadOptions, IllegalMove, Notice, Outcome
from gamenight.server.games.othello import (
    FULL_MASK,
    SIZES,
    Othello,
    OthelloState,
    flip_mask,
    legal_mask,
    parse_square,
    perft,
    square_name,
    state_from_board,
)

DATA = Path(__file__).resolve().parent.parent / "data"
GAME = Othello()
BLACK, WHITE = 0, 1
DEPTH_NEAR_END = 4
DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


# -- data files ---------------------------------------------------------------------------------------


def data_lines(name: str) -> list[list[str]]:
    """The whitespace-split data lines of a file in tests/data, comments left out."""
    text = (DATA / name).read_text()
    return [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]


PERFT = {int(depth): int(count) for depth, count, *_ in data_lines("othello_perft.txt")}
FFO = data_lines("othello_ffo_1_19.txt")
GAMES = configparser.ConfigParser()
GAMES.read_string((DATA / "othello_games.txt").read_text())


def ffo_state(line: list[str]) -> OthelloState:
    """The position of one FFO line (its board is a1..h8 row by row, 'X' black, 'O' white, '-' empty)."""
    cells = line[1].translate(str.maketrans("XO-", "BW."))
    rows = [cells[row : row + 8] for row in range(0, 64, 8)]
    return state_from_board(rows, BLACK if line[2] == "X" else WHITE)


# -- an independent statement of the rules ---------------------------------------------------------


def reference_flips(cells: str, size: int, sq: int, me: str) -> set[int]:
    """The discs `me` flips on `sq`, by walking the grid square by square (no bitboards involved)."""
    if cells[sq] != ".":
        return set()
    them = "W" if me == "B" else "B"
    row, col = divmod(sq, size)
    flipped: set[int] = set()
    for dr, dc in DIRECTIONS:
        r, c, line = row + dr, col + dc, []
        while 0 <= r < size and 0 <= c < size and cells[r * size + c] == them:
            line.append(r * size + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < size and 0 <= c < size and cells[r * size + c] == me:
            flipped.update(line)
    return flipped


def bits(squares: set[int] | list[int]) -> int:
    """A bit mask of the given squares."""
    return sum(1 << sq for sq in squares)


def masks(cells: str) -> tuple[int, int]:
    """(black, white) bit masks of a board written as one string of '.', 'B', 'W'."""
    return (
        bits([sq for sq, char in enumerate(cells) if char == "B"]),
        bits([sq for sq, char in enumerate(cells) if char == "W"]),
    )


def cells_of(state: OthelloState) -> str:
    """The state's board as one string, read through the public view."""
    return "".join(GAME.view(state)["board"])


def interface_perft(state: OthelloState, depth: int, seen: Counter | None = None) -> int:
    """Perft through the Game interface only, by the same convention as the published counts.

    `seen` (if given) counts the passes and finished games met on the way.
    """
    seen = Counter() if seen is None else seen
    if depth == 0 or GAME.outcome(state) is not None:
        return 1
    (seat,) = GAME.to_move(state)
    total = 0
    for move in GAME.legal_moves(state, seat):
        child = GAME.apply(state, {seat: move})
        seen["pass"] += child.passed is not None
        seen["over"] += child.over
        plies = depth - 1
        if child.passed is not None and plies:
            plies -= 1  # our apply makes the forced pass itself; the convention counts it as a ply
        total += interface_perft(child, plies, seen)
    return total


def game_moves(name: str) -> list[str]:
    """The moves of one published game in tests/data/othello_games.txt."""
    return re.findall(r"[a-hA-H][1-8]", GAMES[name]["moves"])


def play(moves: list[str]) -> OthelloState:
    """The state after playing named moves from the 8x8 start, whoever is on turn making each."""
    state = GAME.initial_state({})
    for text in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, {seat: GAME.parse_move(state, text)})
    return state


# -- perft -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", range(1, 8))
def test_perft_from_start_matches_published_counts(depth):
    """Move generation from the 8x8 start reaches exactly the published number of positions."""
    assert perft(GAME.initial_state({}), depth) == PERFT[depth]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [8, 9, 10])
def test_deep_perft_matches_published_counts_including_passes(depth):
    """Deeper perft matches too, including depths 9-10 where forced passes start to change the count."""
    assert perft(GAME.initial_state({}), depth) == PERFT[depth]


@pytest.mark.parametrize("depth", range(1, 6))
def test_game_interface_perft_matches_published_counts(depth):
    """The checked interface (legal_moves/apply) explores the same tree as the bitboard helpers."""
    assert interface_perft(GAME.initial_state({}), depth) == PERFT[depth]


def test_interface_and_bitboard_perft_agree_through_passes_and_endings():
    """Near the end of real games, the automatic passes of apply count the same as the bitboard perft."""
    positions = {f"ffo{line[0]}": ffo_state(line) for line in FFO}
    for name in GAMES.sections():
        moves = game_moves(name)
        positions[name] = play(moves[: len(moves) - DEPTH_NEAR_END])
    seen: Counter = Counter()
    for name, state in positions.items():
        assert interface_perft(state, DEPTH_NEAR_END, seen) == perft(state, DEPTH_NEAR_END), name
    # Without passes and endings on the way this would check nothing about them.
    assert seen["pass"] > 0 and seen["over"] > 0, seen


# -- the rules against an independent statement of them --------------------------------------------

boards = st.sampled_from(SIZES).flatmap(
    lambda size: st.text(alphabet=".BW", min_size=size * size, max_size=size * size).map(lambda cells: (size, cells))
)


@settings(max_examples=300, deadline=None)
@given(boards)
def test_legal_and_flip_masks_follow_the_textbook_rule(board):
    """On any board, the legal squares and the discs each move flips are those the rule book gives."""
    size, cells = board
    black, white = masks(cells)
    for me, own, opp in (("B", black, white), ("W", white, black)):
        expected_legal = set()
        for sq in range(size * size):
            expected = reference_flips(cells, size, sq, me)
            if expected:
                expected_legal.add(sq)
                assert flip_mask(own, opp, sq, size) == bits(expected), (me, square_name(sq, size))
            elif cells[sq] == ".":
                assert flip_mask(own, opp, sq, size) == 0, (me, square_name(sq, size))
        assert legal_mask(own, opp, size) == bits(expected_legal)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SIZES), st.sampled_from(["black", "white"]), st.randoms(use_true_random=False))
def test_random_games_keep_every_rule_invariant(size, first, rng):
    """Whole random games: apply leaves its input alone, flips what the rules say, passes and ends correctly."""
    state = GAME.initial_state({"size": size, "first": first})
    while not state.over:
        (seat,) = GAME.to_move(state)
        me = "BW"[seat]
        cells = cells_of(state)
        legal = GAME.legal_moves(state, seat)
        assert legal == sorted(sq for sq in range(size * size) if reference_flips(cells, size, sq, me))
        assert GAME.legal_moves(state, 1 - seat) == []
        move = rng.choice(legal)
        before = pickle.dumps(state)
        after = GAME.apply(state, {seat: move})
        assert pickle.dumps(state) == before
        expected = reference_flips(cells, size, move, me)
        assert after.last_flips == bits(expected)
        assert cells_of(after).count(me) == cells.count(me) + len(expected) + 1
        assert after.ply == state.ply + 1
        assert not after.black & after.white
        assert GAME.view(after)["scores"] == [cells_of(after).count("B"), cells_of(after).count("W")]
        opponent_can_move = any(reference_flips(cells_of(after), size, sq, "BW"[1 - seat]) for sq in range(size * size))
        mover_can_move = any(reference_flips(cells_of(after), size, sq, me) for sq in range(size * size))
        if opponent_can_move:
            assert (after.turn, after.passed, after.over) == (1 - seat, None, False)
        elif mover_can_move:
            assert (after.turn, after.passed, after.over) == (seat, 1 - seat, False)
        else:
            assert after.over and GAME.to_move(after) == frozenset()
        state = after
    black, white = GAME.view(state)["scores"]
    expected_winners = () if black == white else ((BLACK,) if black > white else (WHITE,))
    assert GAME.outcome(state) == Outcome(expected_winners, "discs", (black, white))


# -- published positions and games -----------------------------------------------------------------


@pytest.mark.parametrize("line", FFO, ids=[f"ffo{line[0]}" for line in FFO])
def test_ffo_positions_have_exactly_the_listed_legal_moves(line):
    """In each FFO endgame position the side to move has exactly the moves the published solution scores."""
    state = ffo_state(line)
    listed = {parse_square(entry.split(":")[0], 8) for entry in line[7].split(",")}
    assert GAME.to_move(state) == {BLACK if line[2] == "X" else WHITE}
    assert set(GAME.legal_moves(state, state.turn)) == listed


def test_published_wipeout_game_passes_where_the_source_says():
    """A real 55-move game: every forced pass happens automatically, with a notice, and White wipes Black out."""
    game = GAMES["wipeout_with_23_passes"]
    moves = game_moves("wipeout_with_23_passes")
    state = GAME.initial_state({})
    passes = []
    for text in moves:
        seat = BLACK if text.isupper() else WHITE
        assert GAME.to_move(state) == {seat}, f"{text}: the source has the other colour moving"
        after = GAME.apply(state, {seat: GAME.parse_move(state, text)})
        for notice in GAME.notices(state, after):
            assert notice == Notice("pass", {"seat": after.passed})
            passes.append(after.passed)
        state = after
    assert passes == [BLACK] * game.getint("passes")
    assert GAME.outcome(state) == Outcome((WHITE,), "discs", (game.getint("black"), 4 + len(moves)))


def test_published_game_ends_early_when_neither_side_can_move():
    """An 11-move game ends with 49 empty squares because nobody can move, and Black wins 14-1."""
    game = GAMES["early_end_after_11_moves"]
    state = play(game_moves("early_end_after_11_moves"))
    assert state.over and GAME.to_move(state) == frozenset()
    assert GAME.legal_moves(state, BLACK) == [] and GAME.legal_moves(state, WHITE) == []
    assert GAME.view(state)["board"] == game["board"].split()
    assert GAME.outcome(state) == Outcome((BLACK,), "discs", (game.getint("black"), game.getint("white")))


# -- constructed positions -------------------------------------------------------------------------

# Black to move; after a1 (flipping b1) White's only disc g8 has nothing to outflank, but Black can take it.
FORCED_PASS = [".WB.....", *["." * 8] * 6, "......WB"]


def test_forced_pass_keeps_the_mover_on_turn_and_is_announced():
    """When the opponent has no reply, it passes at once: same side to move, `passed` set, a pass notice."""
    before = state_from_board(FORCED_PASS, BLACK)
    after = GAME.apply(before, {BLACK: GAME.parse_move(before, "a1")})
    assert after.passed == WHITE and not after.over
    assert GAME.to_move(after) == {BLACK}
    assert GAME.legal_moves(after, WHITE) == []
    assert GAME.legal_moves(after, BLACK) == [parse_square("f8", 8)]
    assert GAME.notices(before, after) == [Notice("pass", {"seat": WHITE})]
    assert GAME.view(after)["passed"] == WHITE


def test_pass_is_not_repeated_after_the_next_move():
    """`passed` and the pass notice describe only the move just made, not an earlier one."""
    before = state_from_board(FORCED_PASS, BLACK)
    passed = GAME.apply(before, {BLACK: parse_square("a1", 8)})
    final = GAME.apply(passed, {BLACK: parse_square("f8", 8)})
    assert final.passed is None
    assert GAME.notices(passed, final) == []


def test_wiping_out_the_opponent_ends_the_game():
    """Taking the opponent's last disc ends the game at once, with empty squares left, won on discs."""
    passed = GAME.apply(state_from_board(FORCED_PASS, BLACK), {BLACK: parse_square("a1", 8)})
    final = GAME.apply(passed, {BLACK: parse_square("f8", 8)})
    assert final.over and GAME.to_move(final) == frozenset()
    assert GAME.outcome(final) == Outcome((BLACK,), "discs", (6, 0))
    assert GAME.view(final)["board"][7] == ".....BBB"


def test_equal_disc_counts_are_a_draw_even_with_empty_squares():
    """A game ending 4-4 with empty squares is a draw: nobody wins and the empties go to nobody."""
    board = [".WWB..", "......", "......", "......", "......", "..WWWW"]
    before = state_from_board(board, BLACK)
    assert GAME.legal_moves(before, BLACK) == [parse_square("a1", 6)]
    final = GAME.apply(before, {BLACK: parse_square("a1", 6)})
    assert final.over
    outcome = GAME.outcome(final)
    assert outcome == Outcome((), "discs", (4, 4))
    assert outcome.is_draw


def test_full_board_draw():
    """A full board split 32-32 is a finished game and a draw."""
    board = ["BBBBWWWW"] * 8
    state = state_from_board(board, BLACK)
    assert state.over
    assert GAME.outcome(state) == Outcome((), "discs", (32, 32))


def test_outcome_is_none_while_the_game_is_on():
    """No result is reported before the game is over."""
    state = play(["f5", "d6"])
    assert GAME.outcome(state) is None


def test_state_from_board_passes_for_a_side_without_moves():
    """A constructed position whose side to move cannot move is handed to the other side as a pass."""
    passed = GAME.apply(state_from_board(FORCED_PASS, BLACK), {BLACK: parse_square("a1", 8)})
    board = GAME.view(passed)["board"]
    state = state_from_board(board, WHITE)
    assert (state.turn, state.passed, state.over) == (BLACK, WHITE, False)


@pytest.mark.parametrize(
    ("board", "turn"),
    [
        (["...."] * 4, BLACK),
        (["." * 8] * 7, BLACK),
        (["." * 8] * 7 + ["." * 7], BLACK),
        (["X" * 6] * 6, BLACK),
        (["." * 6] * 6, 2),
    ],
)
def test_state_from_board_rejects_malformed_boards(board, turn):
    """Boards of the wrong shape, unknown square characters and impossible turns are refused."""
    with pytest.raises(ValueError):
        state_from_board(board, turn)


# -- start positions and options -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "white", "black", "moves"),
    [
        (6, ["c3", "d4"], ["d3", "c4"], ["c2", "b3", "e4", "d5"]),
        (8, ["d4", "e5"], ["e4", "d5"], ["d3", "c4", "f5", "e6"]),
        (10, ["e5", "f6"], ["f5", "e6"], ["e4", "d5", "g6", "f7"]),
    ],
)
def test_start_position_of_each_size(size, white, black, moves):
    """Each board size starts with the four centre discs, Black to move, and Black's four standard replies."""
    state = GAME.initial_state({"size": size})
    cells = cells_of(state)
    assert sorted(sq for sq, char in enumerate(cells) if char == "W") == sorted(parse_square(s, size) for s in white)
    assert sorted(sq for sq, char in enumerate(cells) if char == "B") == sorted(parse_square(s, size) for s in black)
    assert GAME.to_move(state) == {BLACK}
    assert [GAME.format_move(state, sq) for sq in GAME.legal_moves(state, BLACK)] == moves
    assert GAME.view(state)["size"] == size and len(GAME.view(state)["board"]) == size


def test_start_board_is_drawn_rank_one_first():
    """The view draws row 0 (rank 1) first: on 8x8, d4 = White and e4 = Black sit on the fourth line."""
    view = GAME.view(GAME.initial_state({}))
    assert view["board"][3] == "...WB..."
    assert view["board"][4] == "...BW..."
    assert view["scores"] == [2, 2] and view["passed"] is None and view["flipped"] == []


def test_white_first_option():
    """With first=white, White moves first and has its own four opening moves."""
    state = GAME.initial_state({"first": "white"})
    assert GAME.to_move(state) == {WHITE}
    assert GAME.legal_moves(state, BLACK) == []
    assert [GAME.format_move(state, sq) for sq in GAME.legal_moves(state, WHITE)] == ["e3", "f4", "c5", "d6"]
    after = GAME.apply(state, {WHITE: parse_square("f4", 8)})
    assert GAME.to_move(after) == {BLACK}
    assert GAME.view(after)["scores"] == [1, 4]


@pytest.mark.parametrize("raw", [{"size": 7}, {"size": "8"}, {"first": "red"}, {"colour": "black"}])
def test_bad_options_are_refused(raw):
    """Room options outside the declared choices are refused with BadOptions."""
    with pytest.raises(BadOptions):
        GAME.validate_options(raw)
    with pytest.raises(BadOptions):
        GAME.initial_state(raw)


def test_description_and_seats():
    """The lobby sees the game's name, its two options with their choices, and the seats black and white."""
    described = GAME.describe()
    assert (described.name, described.title, described.simultaneous) == ("othello", "Othello", False)
    options = {option.name: option for option in described.options}
    assert options["size"].choices == (6, 8, 10) and options["size"].default == 8
    assert options["first"].choices == ("black", "white") and options["first"].default == "black"
    assert GAME.seat_names(GAME.validate_options({})) == ["black", "white"]
    assert GAME.seat_count(GAME.validate_options({})) == 2


# -- moves: application, errors, views -------------------------------------------------------------


def test_a_move_flips_and_is_shown_in_the_view():
    """After f5 from the start, e5 turns black and the view reports it as flipped."""
    state = play(["f5"])
    view = GAME.view(state)
    assert view["scores"] == [4, 1]
    assert view["flipped"] == ["e5"]
    assert view["board"][4] == "...BBB.."
    assert GAME.to_move(state) == {WHITE}


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        (parse_square("d4", 8), "d4 is already taken"),
        (parse_square("a1", 8), "a1 does not outflank"),
        (64, "off the"),
        (-1, "off the"),
        (True, "not a bool"),
        ("f5", "not a str"),
    ],
)
def test_illegal_moves_are_refused_with_a_reason(move, reason):
    """Occupied, non-flipping, off-board and non-integer moves raise IllegalMove saying what is wrong."""
    state = GAME.initial_state({})
    with pytest.raises(IllegalMove, match=reason):
        GAME.apply(state, {BLACK: move})


def test_only_the_side_to_move_may_move():
    """A move for the seat not on turn, or extra moves for other seats, raise IllegalMove."""
    state = GAME.initial_state({})
    with pytest.raises(IllegalMove, match="black"):
        GAME.apply(state, {WHITE: parse_square("e3", 8)})
    with pytest.raises(IllegalMove):
        GAME.apply(state, {BLACK: parse_square("f5", 8), WHITE: parse_square("e3", 8)})
    with pytest.raises(IllegalMove):
        GAME.apply(state, {})


def test_no_moves_after_the_game_is_over():
    """A finished game accepts no further moves and lists none."""
    state = play(game_moves("early_end_after_11_moves"))
    assert GAME.legal_moves(state, state.turn) == []
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(state, {state.turn: parse_square("a1", 8)})


def test_transcript_runs_moves_together():
    """A finished game is written in the usual run-together form."""
    assert GAME.transcript(["f5", "d6", "c3"]) == "f5d6c3"


def test_states_pickle():
    """States survive pickling, so the AI can send them to worker processes."""
    state = play(["f5", "d6", "c3"])
    assert pickle.loads(pickle.dumps(state)) == state


# -- notation --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_every_square_name_round_trips(size):
    """Every square of every board size prints as a file letter and rank, and parses back, in any case."""
    state = GAME.initial_state({"size": size})
    names = set()
    for sq in range(size * size):
        name = GAME.format_move(state, sq)
        names.add(name)
        assert name == square_name(sq, size)
        assert name == "abcdefghij"[sq % size] + str(sq // size + 1)
        assert GAME.parse_move(state, name) == sq
        assert GAME.parse_move(state, f"  {name.upper()}\n") == sq
    assert len(names) == size * size


def test_corner_names():
    """a1 is square 0 and the far corner is h8 / f6 / j10, as in the brief's coordinate system."""
    assert [square_name(FULL_MASK[size].bit_length() - 1, size) for size in SIZES] == ["f6", "h8", "j10"]
    assert parse_square("a1", 8) == 0 and parse_square("h1", 8) == 7 and parse_square("a2", 8) == 8


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (8, ""),
        (8, "  "),
        (8, "z9"),
        (8, "i1"),
        (8, "a9"),
        (8, "a0"),
        (8, "a01"),
        (8, "f5f6"),
        (8, "5f"),
        (6, "g1"),
        (6, "a7"),
        (10, "k1"),
        (10, "a11"),
        (8, "j10"),
        (8, "f5" + "x" * 1000),
        (8, "f\u0665"),
    ],
)
def test_bad_notation_is_refused(size, text):
    """Garbage and squares off this board raise IllegalMove rather than naming some other square."""
    state = GAME.initial_state({"size": size})
    with pytest.raises(IllegalMove) as caught:
        GAME.parse_move(state, text)
    assert len(str(caught.value)) < 120


@pytest.mark.parametrize("value", [None, 5, 5.0, b"f5", ["f5"], {"sq": "f5"}])
def test_non_text_moves_are_refused(value):
    """A wire move that is not a string raises IllegalMove naming its type."""
    with pytest.raises(IllegalMove, match=type(value).__name__):
        GAME.parse_move(GAME.initial_state({}), value)


def test_square_name_refuses_off_board_squares():
    """Formatting a square number off the board is a programming error, not a wrapped-around name."""
    with pytest.raises(ValueError):
        square_name(-1, 8)
    with pytest.raises(ValueError):
        square_name(64, 8)


def test_legal_squares_kept_in_a_state_never_go_stale():
    """The legal squares a state keeps are those of its own discs, however the state was built."""
    state = GAME.initial_state({})
    state = GAME.apply(state, {BLACK: parse_square("f5", 8)})
    assert state.move_mask == legal_mask(*state.sides(), state.size)
    # A copy with other discs (dataclasses.replace) and a state built directly work their squares out afresh.
    swapped = replace(state, black=state.white, white=state.black)
    assert swapped.move_mask == legal_mask(*swapped.sides(), swapped.size) != state.move_mask
    built = OthelloState(8, state.black, state.white, WHITE, False, None, 0, 1)
    assert GAME.legal_notation(built, WHITE) == GAME.legal_notation(state, WHITE) == ["f4", "d6", "f6"]
    settled = replace(state, last_flips=0)
    assert built == settled and hash(built) == hash(settled)  # the kept squares are not part of the position
    assert GAME.legal_moves(replace(state, over=True), WHITE) == []
