"""Game review's engine side: a move that turns a won position into a lost one is a blunder, with a winning move
as the best one, in each reviewed game; values are in the units people read; the report adds up per seat."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gamenight.server.ai.analysis import assess, assess_plain, win_chance
from gamenight.server.ai.othello_ai import EndgameSolver
from gamenight.server.games import REGISTRY
from gamenight.server.review_report import analyse, label, positions

BUDGET_MS = 30  # tiny: the positions that matter are solved exactly at any budget


def review(game: str, moves: list[str], options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The analysis of a game, every position assessed at the test budget."""
    options = options or {}
    values = [assess_plain(game, options, moves, ply, BUDGET_MS) for ply in range(len(moves) + 1)]
    return analyse(game, options, moves, values, BUDGET_MS)


def test_connect4_missing_the_win_and_the_block_is_a_blunder_with_the_win_as_best():
    """Red, with three in the bottom row and the fourth cell open, plays elsewhere and loses: that move is a
    blunder whose best move is the winning column, and the values say who wins in how many moves."""
    moves = ["a", "g", "b", "g", "c", "g", "e", "g"]  # red's e (ply 7) lets yellow's g column win
    analysis = review("connect4", moves)
    blunder = analysis["moves"][6]
    assert (blunder["played"], blunder["label"], blunder["best"]) == ("e", "blunder", "d")
    assert blunder["eval_before"] == {"chance": 1.0, "exact": True, "text": "red wins in 1"}
    assert blunder["eval_after"] == {"chance": -1.0, "exact": True, "text": "yellow wins in 1"}
    assert analysis["moves"][5]["label"] == "blunder", "yellow's g at ply 6 left d open"
    assert analysis["summary"][0]["blunders"] >= 1 and analysis["summary"][0]["accuracy"] < 100


def test_pentago_missing_a_five_is_a_blunder_with_a_winning_best_move():
    """Black, with four in a row and the fifth cell free, turns elsewhere and white completes its own five: a
    blunder, and the best move shown wins at once."""
    moves = [f"{col}{row} br cw" for col in "abcd" for row in "12"]  # black a1-d1, white a2-d2
    moves += ["f6 bl cw", "e2"]  # black plays away (ply 9), white makes five
    analysis = review("pentago", moves)
    blunder = analysis["moves"][8]
    assert blunder["label"] == "blunder" and blunder["eval_before"]["text"] == "black wins in 1"
    rules = REGISTRY["pentago"].rules
    before = positions("pentago", {}, moves[:8])[-1]
    after = rules.apply(before, {0: rules.parse_move(before, blunder["best"])})
    outcome = rules.outcome(after)
    assert outcome is not None and outcome.winners == (0,), f"best move {blunder['best']} wins at once"


def _exact(state: Any) -> int:
    """The perfect-play final disc difference of an Othello position, for black (seat 0)."""
    rules = REGISTRY["othello"].rules
    outcome = rules.outcome(state)
    if outcome is not None:
        return outcome.scores[0] - outcome.scores[1]
    own, opp = state.sides()
    diff = EndgameSolver(state.size).solve(own, opp)
    return diff if state.turn == 0 else -diff


def _othello_blunder_game() -> tuple[list[str], int, set[str]]:
    """A game of random play to 10 empty squares, then perfect play but for one move that turns a won position
    into a lost one: the moves, the blunder's index and the squares that would have kept the win."""
    rules = REGISTRY["othello"].rules
    rng = random.Random(36)
    while True:
        state, moves = rules.initial_state(rules.validate_options({})), []
        while 64 - state.ply - 4 > 10 and rules.outcome(state) is None:
            move = rng.choice(rules.legal_moves(state, state.turn))
            moves.append(rules.format_move(state, move))
            state = rules.apply(state, {state.turn: move})
        if rules.outcome(state) is not None:
            continue
        sign = 1 if state.turn == 0 else -1
        values = {}
        for move in rules.legal_moves(state, state.turn):
            values[rules.format_move(state, move)] = sign * _exact(rules.apply(state, {state.turn: move}))
        winning = {text for text, value in values.items() if value == max(values.values()) and value > 0}
        losing = [text for text, value in values.items() if value < 0]
        if not winning or not losing:
            continue
        blunder_at = len(moves)
        moves.append(losing[0])
        state = rules.apply(state, {state.turn: rules.parse_move(state, losing[0])})
        while rules.outcome(state) is None:  # perfect play to the end
            own, opp = state.sides()
            square, _ = EndgameSolver(state.size).best_move(own, opp)
            assert square is not None
            moves.append(rules.format_move(state, square))
            state = rules.apply(state, {state.turn: square})
        return moves, blunder_at, winning


def test_othello_turning_a_won_endgame_into_a_lost_one_is_a_blunder_with_the_best_square():
    """In a solved endgame, the move that throws the win away is a blunder; the best move shown is the square
    with the best perfect-play margin, and the values are exact final disc differences."""
    moves, at, winning = _othello_blunder_game()
    analysis = review("othello", moves)
    blunder = analysis["moves"][at]
    assert blunder["label"] == "blunder" and blunder["best"] in winning
    assert blunder["eval_before"]["exact"] and blunder["eval_after"]["exact"]
    mover = ("black", "white")[blunder["seat"]]
    assert blunder["eval_before"]["text"].startswith(mover + " +")
    assert not blunder["eval_after"]["text"].startswith(mover)
    perfect = [move for move in analysis["moves"][at + 1 :] if move["eval_before"]["exact"]]
    assert perfect and all(move["label"] is None for move in perfect), "perfect play after it is never labelled"


def test_a_finished_position_is_exact_and_has_no_best_move():
    """The last position of a won game is the exact result, for the first seat, with no move to suggest."""
    rules = REGISTRY["connect4"].rules
    final = positions("connect4", {}, ["a", "g", "b", "g", "c", "g", "e", "g"])[-1]
    assert rules.outcome(final) is not None
    value = assess("connect4", final, BUDGET_MS)
    assert (value.chance, value.exact, value.best) == (-1.0, True, None)


def test_win_chances_and_labels_follow_lichess_scale():
    """A search score of one `SCALE_UNITS` game unit is lichess's 2.7-pawn mark: about 0.46 of win chance; the
    labels start at 0.1 (inaccuracy), 0.2 (mistake) and 0.3 (blunder) of win chance lost."""
    assert win_chance(27, 10) == pytest.approx(0.4621, abs=1e-4)
    assert [label(loss) for loss in (0.05, 0.1, 0.2, 0.3, 2.0)] == [None, "inaccuracy", "mistake", "blunder", "blunder"]


def test_a_move_reaching_the_best_moves_position_is_never_labelled():
    """In Pentago, turning an empty quadrant one way or the other gives the same position: the move is judged as
    the best one, however differently two searches valued it."""
    values = [
        {"chance": 0.5, "exact": False, "best": "a1 br cw", "margin": None},
        {"chance": 0.5, "exact": False, "best": "f6 tl cw", "margin": None},  # the opponent's view: 0.5 for them
    ]
    assert analyse("pentago", {}, ["a1 br ccw"], values, BUDGET_MS)["moves"][0]["label"] is None
    assert analyse("pentago", {}, ["a2 br ccw"], values, BUDGET_MS)["moves"][0]["label"] == "blunder"


# A position worked out by hand, breadth-first a layer at a time from both heads: rider 1 (top left) reaches 7
# squares first, rider 2 (right) 6, and both reach (2, 2) in their fourth layer.
SMALL_MAP = "6 3\n1  #  \n   # 2\n      \n"


def test_tron_territory_of_a_hand_checked_position_counts_squares_reached_first():
    """A Tron position's territory is each rider's squares reached strictly first (7 and 6 here, one square tied
    for nobody), with the compiled kernel or without; a rider who crashed has none."""
    from gamenight.server.ai.analysis import territory
    from gamenight.server.ai.tron import kernel
    from gamenight.server.games.tron import load_map, new_state

    state = new_state(load_map(SMALL_MAP))
    assert territory(state) == [7, 6]
    pure = pytest.MonkeyPatch()
    pure.setattr(kernel, "KERNEL", None)
    try:
        assert territory(state) == [7, 6]
    finally:
        pure.undo()
    from dataclasses import replace

    assert territory(replace(state, alive=(True, False))) == [14, 0], "alone, every open square (14) is its"


def test_tron_territory_for_any_number_of_riders_splits_as_the_ai_does():
    """The split for 3-4 riders is the AI's two-rider Voronoi split generalised: with two heads it gives exactly
    `tron_ai.voronoi`'s squares, on random positions."""
    from gamenight.server.ai import tron_ai
    from gamenight.server.ai.analysis import split_territory
    from gamenight.server.games.tron import Tron

    rules, rng = Tron(), random.Random(36)
    for seed in range(20):
        state = rules.initial_state(rules.validate_options({"width": 14, "height": 11, "seed": seed}))
        for _ in range(rng.randrange(12)):
            if rules.outcome(state) is not None:
                break
            state = rules.apply(state, {seat: rng.randrange(1, 5) for seat in rules.to_move(state)})
        grid = tron_ai.grid_of(state)
        split = tron_ai.voronoi(grid.open, grid.stride, *grid.heads)
        assert split_territory(grid.open, grid.stride, grid.heads) == [split.first, split.second]


def test_a_tron_review_counts_each_ticks_territory_in_spans_of_ticks(monkeypatch):
    """A Tron game's analysis has per tick the riders' territory before and after it, the same whichever span of
    ticks each piece of work covers; per rider its mean and the ticks after which it led."""
    from gamenight.server import review_report
    from gamenight.server.ai import analysis
    from gamenight.server.games.tron import Tron

    options = Tron().validate_options({"width": 10, "height": 8, "seed": 11})
    ticks = ["N W", "E S", "N W", "E W", "S E"]  # rider 2 rides back into its trail on the last tick
    whole = analyse("tron", options, ticks, [assess_plain("tron", options, ticks, 0, 0)], 0)
    assert [move["territory_after"] for move in whole["moves"]] == [[15, 15], [14, 14], [12, 13], [12, 11], [26, 0]]
    assert whole["moves"][0] == {"ply": 1, "played": "N W", "territory_before": [16, 16], "territory_after": [15, 15]}
    assert whole["summary"] == [
        {"seat": 0, "mean_territory": 15.8, "ticks_ahead": 2},
        {"seat": 1, "mean_territory": 11.5, "ticks_ahead": 1},
    ]
    for module in (review_report, analysis):
        monkeypatch.setattr(module, "TICK_SPAN", 2)
    pieces = review_report.units("tron", ticks)
    assert pieces == 3
    values = [assess_plain("tron", options, ticks, piece, 0) for piece in range(pieces)]
    assert analyse("tron", options, ticks, values, 0) == whole
