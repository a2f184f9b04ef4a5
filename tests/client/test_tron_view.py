"""The client's Tron tick fold: a full view plus the server's tick deltas is the server's own view of each tick."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gamenight.client.tron_view import apply_tick, fold_ticks
from gamenight.server.games.tron import Tron

RULES = Tron()


def ride(options: dict[str, Any], seed: int) -> list[tuple[Any, Any]]:
    """A whole game with random steering: (state before, state after) per tick."""
    rng = random.Random(seed)
    state = RULES.initial_state(RULES.validate_options(options))
    ticks = []
    while RULES.outcome(state) is None:
        moves = {
            seat: rng.choice(RULES.legal_moves(state, seat)) for seat in RULES.to_move(state) if rng.random() < 0.4
        }
        after = RULES.apply(state, moves)
        ticks.append((state, after))
        state = after
    return ticks


@pytest.mark.parametrize(
    "options",
    [
        {"map": "random", "width": 12, "height": 9, "seed": 7},
        {"map": "random", "width": 10, "height": 10, "seed": 3, "players": 4},
        {"map": "joust"},
    ],
    ids=["two", "four", "joust"],
)
@pytest.mark.parametrize("seed", range(5))
def test_each_tick_folds_to_the_servers_view(options: dict[str, Any], seed: int) -> None:
    """A client that folds every tick's delta into the last full view sees the board, heads, riders, directions
    and tick the server's own view shows after that tick (crashes and multi-rider games included)."""
    ticks = ride(options, seed)
    view = RULES.view(ticks[0][0])
    for before, after in ticks:
        view = apply_tick(view, RULES.delta(before, after))
        expected = RULES.view(after)
        assert view["board"] == expected["board"]
        assert view["heads"] == expected["heads"] and view["alive"] == expected["alive"]
        assert view["tick"] == expected["tick"]
        riding = [seat for seat, alive in enumerate(expected["alive"]) if alive]
        assert [view["dirs"][s] for s in riding] == [expected["dirs"][s] for s in riding]


def test_fold_leaves_the_view_it_was_given_unchanged() -> None:
    """Folding is pure: the view handed in (the reducer's state) is not modified."""
    (before, after), *_ = ride({"map": "random", "width": 8, "height": 8, "seed": 1}, 1)
    view = RULES.view(before)
    copy = {key: list(value) if isinstance(value, list) else value for key, value in view.items()}
    apply_tick(view, RULES.delta(before, after))
    assert view == copy


def test_fold_ticks_applies_deltas_in_order() -> None:
    """fold_ticks over a list of deltas is the same as folding them one by one (a replay's position)."""
    ticks = ride({"map": "random", "width": 9, "height": 9, "seed": 4}, 2)
    start = RULES.view(ticks[0][0])
    deltas = [RULES.delta(b, a) for b, a in ticks]
    assert fold_ticks(start, deltas)["board"] == RULES.view(ticks[-1][1])["board"]
