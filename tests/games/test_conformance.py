"""Every registered game obeys the one interface: random playouts end, never raise, never mutate, and travel."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from gamenight.protocol import decode, encode
from gamenight.protocol.messages import State
from gamenight.server.games import GAMES

PLAYOUTS = 150


def _options(name: str, rng: random.Random) -> dict:
    """Options for a playout: defaults, with a few variations that exercise each game's settings."""
    game = GAMES[name]
    raw: dict = {}
    if name == "othello":
        raw = {"size": rng.choice([6, 8, 10]), "first": rng.choice(["black", "white"])}
    if name == "tron":
        raw = rng.choice(
            [
                {"map": "random", "width": 12, "height": 12, "seed": rng.randrange(1000)},
                {"map": "joust"},
                {"map": "u"},
                {"map": "random", "width": 14, "height": 14, "players": 4, "seed": rng.randrange(1000)},
            ]
        )
    return game.validate_options(raw)


def _random_moves(game, state, rng: random.Random) -> dict:
    """One random legal move for every seat that must move."""
    return {seat: rng.choice(game.legal_moves(state, seat)) for seat in sorted(game.to_move(state))}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_random_playouts_reach_an_outcome(name):
    """Seeded random legal playouts always end with an outcome, and apply never changes its input."""
    game = GAMES[name]
    rng = random.Random(name)
    for _ in range(PLAYOUTS // (5 if name == "tron" else 1)):
        options = _options(name, rng)
        state = game.initial_state(options)
        for _ply in range(10_000):
            if game.outcome(state) is not None:
                break
            assert game.to_move(state), "a game that is not over must have someone to move"
            moves = _random_moves(game, state, rng)
            frozen = copy.deepcopy(state)
            after = game.apply(state, moves)
            assert state == frozen, "apply mutated its input"
            state = after
        outcome = game.outcome(state)
        assert outcome is not None and not game.to_move(state)
        assert all(0 <= w < game.seat_count(options) for w in outcome.winners)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_moves_round_trip_through_notation(name):
    """Every legal move formats to wire text that parses back to the same move."""
    game = GAMES[name]
    rng = random.Random(1)
    state = game.initial_state(_options(name, rng))
    for _ in range(20):
        if game.outcome(state) is not None:
            break
        for seat in game.to_move(state):
            for move in game.legal_moves(state, seat):
                assert game.parse_move(state, game.format_move(state, move)) == move
        state = game.apply(state, _random_moves(game, state, rng))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_listed_legal_moves_are_the_legal_moves(name):
    """The legal list a `state` message carries names exactly the legal moves, in order, for every seat."""
    game = GAMES[name]
    rng = random.Random(2)
    options = _options(name, rng)
    state = game.initial_state(options)
    for _ in range(40):
        for seat in range(game.seat_count(options)):
            expected = [game.format_move(state, move) for move in game.legal_moves(state, seat)]
            assert game.legal_notation(state, seat) == expected
        if game.outcome(state) is not None:
            break
        state = game.apply(state, _random_moves(game, state, rng))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_states_pickle_and_views_travel(name):
    """States pickle (the AI pool needs it) and every view goes through the wire codec unchanged."""
    game = GAMES[name]
    rng = random.Random(2)
    state = game.initial_state(_options(name, rng))
    for _ in range(12):
        assert pickle.loads(pickle.dumps(state)) == state
        msg = State(room="R", seq=1, game=name, status="playing", view=game.view(state))
        assert decode(encode(msg)).view == msg.view
        if game.outcome(state) is not None:
            break
        state = game.apply(state, _random_moves(game, state, rng))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_described_options_have_valid_defaults(name):
    """Each option a game declares validates at its default, so a client form starts valid."""
    game = GAMES[name]
    described = {o.name: o.default for o in game.describe().options}
    validated = game.validate_options({k: v for k, v in described.items() if v is not None})
    assert set(validated) == set(described)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_changes_rebuild_the_next_view_exactly(name):
    """Each move's `changes` applied to the view before give the view after exactly (what every `moved` relies on),
    and equal the generic view diff (so an override never says less than the views differ by)."""
    from gamenight.protocol.vocab import apply_changes
    from gamenight.server.games.base import diff_views

    game = GAMES[name]
    rng = random.Random(f"changes-{name}")
    for _ in range(20 if name == "tron" else 40):
        state = game.initial_state(_options(name, rng))
        view = game.view(state)
        while game.outcome(state) is None:
            after = game.apply(state, _random_moves(game, state, rng))
            changes = game.changes(state, after)
            expected = game.view(after)
            assert apply_changes(view, changes.cells, changes.keys) == expected
            generic = diff_views(view, expected)
            assert sorted(map(tuple, changes.cells)) == sorted(map(tuple, generic.cells)), "exactly the changed cells"
            assert set(generic.keys) <= set(changes.keys), "every changed key is sent"
            state, view = after, expected
