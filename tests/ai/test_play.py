"""Tests of the AI entry point the server calls: wire moves by level and bot, the fallback, worker processes."""

from __future__ import annotations

import random
from concurrent.futures import ProcessPoolExecutor
from itertools import pairwise

import pytest

from gamenight.server.ai import play
from gamenight.server.ai.levels import LEVELS, level, limits_for, noise_for
from gamenight.server.games import REGISTRY, bots
from gamenight.server.games.othello import Othello, OthelloState

GAME = Othello()


def midgame(seed: int = 4, plies: int = 20) -> OthelloState:
    """An Othello state after some random moves."""
    rng = random.Random(seed)
    state = GAME.initial_state({})
    for _ in range(plies):
        state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
    return state


def assert_legal_wire(state: OthelloState, wire: str) -> None:
    """`wire` parses to a legal move of the side to move."""
    assert isinstance(wire, str)
    assert GAME.parse_move(state, wire) in GAME.legal_moves(state, state.turn)


@pytest.mark.parametrize("number", sorted(LEVELS))
def test_choose_move_by_level_is_a_legal_wire_move(number: int) -> None:
    """Every level answers an Othello position with a legal move in wire form and an info map."""
    state = midgame()
    wire, info = play.choose_move("othello", state, state.turn, level=number, budget_ms=80, seed=1)
    assert_legal_wire(state, wire)
    assert info["level"] == number
    assert info["pv"][0] == wire


@pytest.mark.parametrize("bot", ["classic", "quantum"])
def test_choose_move_by_bot_is_a_legal_wire_move(bot: str) -> None:
    """Every Othello bot answers a legal wire move, the same one for the same seed."""
    state = midgame()
    wire, info = play.choose_move("othello", state, state.turn, bot=bot, seed=3)
    assert_legal_wire(state, wire)
    assert info["bot"] == bot
    assert play.choose_move("othello", state, state.turn, bot=bot, seed=3)[0] == wire


def test_fallback_move_is_legal() -> None:
    """The instant fallback answers a legal wire move on positions across a game."""
    for plies in (0, 10, 30, 50):
        state = midgame(seed=plies, plies=plies)
        if not state.over:
            assert_legal_wire(state, play.fallback_move("othello", state, state.turn))


@pytest.mark.parametrize("game", sorted(name for name, entry in REGISTRY.items() if entry.ai))
def test_the_registry_lists_each_ai_modules_bots(game: str) -> None:
    """The bots the server offers for a game (read from the registry, without loading the AI) are exactly the
    ones its AI module plays."""
    assert REGISTRY[game].bots == tuple(play.game_ai(game).BOTS)


def test_bots_lists_each_bot_with_its_games() -> None:
    """The bot list names each bot with the games it plays."""
    listed = bots()
    assert listed["classic"] == ["othello"] and listed["greedy"] == ["connect4"] and listed["voronoi"] == ["tron"]


def test_exactly_one_of_level_and_bot() -> None:
    """Asking for both a level and a bot, or neither, is refused."""
    state = midgame()
    with pytest.raises(ValueError):
        play.choose_move("othello", state, state.turn)
    with pytest.raises(ValueError):
        play.choose_move("othello", state, state.turn, level=1, bot="classic")


def test_unknown_game_or_level_is_refused() -> None:
    """A game without an AI and a level outside 1-5 raise ValueError, not something obscure."""
    state = midgame()
    with pytest.raises(ValueError):
        play.choose_move("chess", state, 0, level=1)
    with pytest.raises(ValueError):
        play.choose_move("othello", state, state.turn, level=9)


def test_choose_move_runs_in_a_worker_process() -> None:
    """choose_move's arguments and answer cross a process boundary, as in the server's pool."""
    state = midgame()
    with ProcessPoolExecutor(max_workers=1) as pool:
        wire, info = pool.submit(play.choose_move, "othello", state, state.turn, level=3, budget_ms=50).result()
    assert_legal_wire(state, wire)
    assert info["level"] == 3


def test_levels_get_stronger_settings() -> None:
    """Higher levels get at least as much time and depth and no more noise; level 5 uses the whole budget."""
    numbers = sorted(LEVELS)
    for lower, higher in pairwise(numbers):
        low, high = level(lower), level(higher)
        assert low.time_fraction <= high.time_fraction
        assert high.max_depth is None or (low.max_depth is not None and low.max_depth <= high.max_depth)
        assert low.noise >= high.noise
    assert limits_for(5, 1000).time_ms == 1000
    assert limits_for(5, 1000).depth is None
    assert noise_for(5, 100) == 0
    assert limits_for(1, 1).time_ms >= 1
    with pytest.raises(ValueError):
        level(0)
