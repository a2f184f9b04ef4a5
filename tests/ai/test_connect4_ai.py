"""Tests of the Connect Four AI: its engine agrees with the rules, it wins and blocks in one, every level and
bot returns a legal move, seeds repeat, and the strongest level beats the weakest."""

from __future__ import annotations

import random

import pytest

from gamenight.server.ai import connect4_ai
from gamenight.server.ai.connect4_ai import (
    ENGINE,
    choose_bot,
    choose_level,
    evaluate,
    position_of,
    quick_move,
)
from gamenight.server.ai.search import PROVEN, WIN
from gamenight.server.games.connect4 import ConnectFour, ConnectFourState, state_from_board

GAME = ConnectFour()
LEVELS = (1, 2, 3, 4, 5)
RED, YELLOW = 0, 1
BUDGET_MS = 200
ACCEPTANCE_GAMES = 20
ACCEPTANCE_MS = 300


def play(moves: str, state: ConnectFourState | None = None) -> ConnectFourState:
    """The state after dropping discs into the lettered columns, whoever is to move making each."""
    state = GAME.initial_state({}) if state is None else state
    for letter in moves:
        state = GAME.apply(state, {state.turn: GAME.parse_move(state, letter)})
    return state


def random_states(count: int, seed: int) -> list[ConnectFourState]:
    """States along seeded random games, game-over states left out."""
    rng = random.Random(seed)
    found: list[ConnectFourState] = []
    while len(found) < count:
        state = GAME.initial_state({})
        while GAME.outcome(state) is None and len(found) < count:
            found.append(state)
            state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
    return found


def every_choice(state: ConnectFourState) -> dict[str, int]:
    """The move of each level, of the greedy bot and of quick_move in `state`, by who chose it."""
    seat = state.turn
    moves = {f"level {level}": choose_level(state, seat, level, BUDGET_MS, random.Random(level))[0] for level in LEVELS}
    moves["greedy"] = choose_bot(state, seat, "greedy", BUDGET_MS, random.Random(0))[0]
    moves["quick"] = quick_move(state, seat)
    return moves


def play_out(red: int, yellow: int, seed: int, budget_ms: int) -> ConnectFourState:
    """A whole game from the empty board between two levels (red first), the players sharing one seeded rng."""
    rng = random.Random(seed)
    levels = {RED: red, YELLOW: yellow}
    state = GAME.initial_state({})
    while GAME.outcome(state) is None:
        move, _ = choose_level(state, state.turn, levels[state.turn], budget_ms, rng)
        state = GAME.apply(state, {state.turn: move})
    return state


# -- the engine against the rules --------------------------------------------------------------------------------


def test_engine_moves_are_legal_and_children_match_the_rules():
    """Along random games the engine offers only legal columns, and its children are the rules' states."""
    for state in random_states(300, seed=1):
        pos = position_of(state)
        legal = GAME.legal_moves(state, state.turn)
        assert ENGINE.moves(pos) and set(ENGINE.moves(pos)) <= set(legal)
        for move in legal:
            assert ENGINE.play(pos, move) == position_of(GAME.apply(state, {state.turn: move}))


def test_engine_terminal_agrees_with_the_outcome():
    """A finished game scores lost for the side to move after a four, 0 after a full-board draw."""
    won = play("dcdcdcd")
    assert ENGINE.terminal(position_of(won)) == -WIN
    drawn = play("feaegagaafdgbgeadcdefgebadfcdcbbcbcdcfgbfe")
    assert GAME.outcome(drawn) is not None and GAME.outcome(drawn).is_draw
    assert ENGINE.terminal(position_of(drawn)) == 0
    assert ENGINE.terminal(position_of(play("dd"))) is None


def test_engine_never_offers_a_move_under_the_opponents_winning_cell():
    """No player drops a disc right under a cell where the opponent completes four (it would hand them the win)."""
    # Yellow holds b2 c2 d2 and e1 is empty: a red disc on e1 would let yellow drop onto e2 and win.
    state = state_from_board([".......", ".......", ".......", ".......", "RYYY...", "YRRY.RR"])
    assert state.turn == RED
    assert 4 not in ENGINE.moves(position_of(state))
    assert all(move != 4 for move in every_choice(state).values())


def test_evaluation_prefers_the_centre_and_sees_unstoppable_double_threats():
    """An early centre disc scores better than an edge one, and two open cells to block score as lost."""
    assert -evaluate(*position_of(play("d"))) > -evaluate(*position_of(play("a")))
    # Red's b1 c1 d1 can be finished on a1 or e1: yellow, to move, cannot block both.
    doomed = state_from_board([".......", ".......", ".......", ".......", "..Y....", ".RRR..Y"])
    assert doomed.turn == YELLOW
    assert evaluate(*position_of(doomed)) <= -connect4_ai.LOST_AT_HORIZON


# -- tactics ---------------------------------------------------------------------------------------------------


def test_every_player_takes_an_immediate_win():
    """With three in a row and the fourth cell playable, every level, the bot and quick_move complete it."""
    state = play("ddeeff")  # red d1 e1 f1, yellow d2 e2 f2: red to move wins on c1 or g1
    for who, move in every_choice(state).items():
        after = GAME.apply(state, {RED: move})
        assert GAME.outcome(after) is not None and GAME.outcome(after).winners == (RED,), who


def test_every_player_blocks_an_immediate_loss():
    """When the opponent would complete four next move, every level, the bot and quick_move block it."""
    state = play("agbgc")  # red a1 b1 c1, yellow g1 g2: yellow must block d1
    assert state.turn == YELLOW
    for who, move in every_choice(state).items():
        assert move == 3, who


def test_level_five_proves_a_forced_win():
    """Level 5 finds a win that needs a double threat two moves ahead and reports it as a proven score."""
    state = play("ddee")  # red d1 e1 with c1 and f1 open: c1 or f1 makes an open three, unstoppable
    move, info = choose_level(state, RED, 5, 1000, random.Random(0))
    assert move in (2, 5)
    assert info["score"] >= PROVEN


# -- the GameAI interface --------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_returns_a_legal_move_with_search_info(level):
    """From many positions, each level returns a legal column and the info map clients show."""
    for state in random_states(12, seed=level):
        move, info = choose_level(state, state.turn, level, 50, random.Random(0))
        assert move in GAME.legal_moves(state, state.turn)
        assert {"depth", "nodes", "score", "pv", "ms", "level"} <= set(info)
        assert info["level"] == level and info["pv"][0] == GAME.format_move(state, move)
        assert all(letter in "abcdefg" for letter in info["pv"])


def test_quick_move_and_greedy_bot_are_legal():
    """The instant fallback and the greedy bot always pick a column that is not full."""
    for state in random_states(200, seed=3):
        legal = GAME.legal_moves(state, state.turn)
        assert quick_move(state, state.turn) in legal
        move, info = choose_bot(state, state.turn, "greedy", 10, random.Random(0))
        assert move in legal and info["bot"] == "greedy" and info["pv"] == [GAME.format_move(state, move)]


def test_same_seed_same_choice():
    """A capped level with noise makes the same choice for the same seed (games can be replayed)."""
    for state in random_states(10, seed=4):
        for level in (1, 2, 3):
            first = choose_level(state, state.turn, level, 1000, random.Random(9))
            again = choose_level(state, state.turn, level, 1000, random.Random(9))
            assert first[0] == again[0] and first[1]["pv"] == again[1]["pv"]
        assert (
            choose_bot(state, state.turn, "greedy", 10, random.Random(9))[0]
            == choose_bot(state, state.turn, "greedy", 10, random.Random(9))[0]
        )


def test_refusals():
    """An unknown bot, an unknown level and a seat that is not to move are errors, not moves."""
    state = GAME.initial_state({})
    with pytest.raises(ValueError, match="greedy"):
        choose_bot(state, RED, "nobody", 100, random.Random(0))
    with pytest.raises(ValueError, match="level"):
        choose_level(state, RED, 9, 100, random.Random(0))
    with pytest.raises(ValueError, match="not to move"):
        choose_level(state, YELLOW, 3, 100, random.Random(0))
    with pytest.raises(ValueError, match="not to move"):
        quick_move(play("dcdcdcd"), YELLOW)
    assert set(connect4_ai.BOTS) == {"greedy"}


# -- strength --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_level_four_beats_level_one_as_red(seed):
    """Depth-capped level 4 (no noise) beats level 1 from the empty board: levels are ordered by strength."""
    state = play_out(4, 1, seed, 1000)
    assert GAME.outcome(state).winners == (RED,)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(ACCEPTANCE_GAMES))
def test_level_five_wins_every_game_as_red_against_level_one(seed):
    """Acceptance: level 5 at 300 ms, moving first from the empty board, wins each of 20 seeded games vs level 1."""
    state = play_out(5, 1, seed, ACCEPTANCE_MS)
    assert GAME.outcome(state).winners == (RED,)
