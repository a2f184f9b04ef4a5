"""The replay model: history entries read for people, and stepping through a game's frames (Tron's deltas too)."""

from __future__ import annotations

from typing import Any

from gamenight.client.model import Lobby
from gamenight.client.replay import HistoryEntry, Replay
from gamenight.client.widgets.tron import fold_deltas
from gamenight.protocol.vocab import GameDescription
from gamenight.server.games.othello import Othello
from gamenight.server.games.tron import Tron
from gamenight.server.history_service import replay_frames
from tests.client.recorded import OTHELLO_REASONS, game_plain


def _record(game: Any, options: dict[str, Any], moves: list[str], result: dict[str, Any]) -> dict[str, Any]:
    """A replay record as `get_game` returns it."""
    return {
        "game_id": 5,
        "game": game.name,
        "options": game.validate_options(options),
        "moves": moves,
        "players": [
            {"seat": 0, "label": "black", "name": "ann", "ai": False},
            {"seat": 1, "label": "white", "name": "bob", "ai": False},
        ],
        "result": result,
        "finished_at": 0,
    }


def test_tron_steps_fold_the_tick_deltas_like_live_ticks():
    """Every step of a Tron replay draws exactly the position the rules reach after that many ticks."""
    game = Tron()
    ticks = ["E W", "S N", "S N", "W E"]
    record = _record(
        game, {"width": 12, "height": 10, "seed": 3}, ticks, {"winner": None, "winners": [], "reason": "crash"}
    )
    replay = Replay(record, replay_frames(record), fold=fold_deltas)
    state = game.initial_state(record["options"])
    letters = {"N": 1, "E": 2, "S": 3, "W": 4}
    for step, joint in enumerate(["", *ticks]):
        if joint:
            state = game.apply(state, {seat: letters[d] for seat, d in enumerate(joint.split())})
        replay.go(step)
        expected = game.view(state)
        shown = replay.view()
        assert shown["board"] == expected["board"] and [list(h) for h in expected["heads"]] == shown["heads"]
    replay.go(1)  # back again: rebuilt from the start, not from where it was
    assert replay.view()["tick"] == 1 and replay.last_move == "E W"


def test_steps_are_clamped_and_described():
    """Stepping stops at the start and the end; the step line says where the replay is."""
    record = _record(Othello(), {}, ["f5", "d6"], {"winner": 1, "winners": [1], "reason": "resign"})
    replay = Replay(record, replay_frames(record))
    assert not replay.go(-3) and replay.status_text() == "Start (2 moves)"
    assert replay.go(1) and replay.status_text() == "Move 1 of 2: f5" and replay.view()["board"][4][5] == "B"
    assert replay.go(99) and replay.at_end and replay.step == 2
    assert replay.status_text() == "End after 2 moves: white (bob) wins (resignation)"


def test_history_entry_texts():
    """A listed game reads: players in seat order, who won and why (in the game's words when it gives them)."""
    entry = HistoryEntry.from_wire(
        {
            "game_id": 9,
            "game": "othello",
            "finished_at": 0,
            "players": [
                {"seat": 0, "label": "black", "name": "ann", "ai": False},
                {"seat": 1, "label": "white", "name": "AI level 5", "ai": True},
            ],
            "result": {"winner": 0, "winners": [0], "reason": "discs", "scores": [40, 24]},
        }
    )
    assert entry.players_text() == "ann · AI level 5"
    othello = GameDescription.from_plain(game_plain(Othello(), reasons=OTHELLO_REASONS))
    assert entry.result_text(othello) == "black (ann) wins 40-24 (most discs)"
    assert entry.result_text() == "black (ann) wins 40-24 (discs)"


def test_games_bring_their_bots_and_seat_labels():
    """The create form's bots and seat names come from `welcome.games`, not from a list in the client."""
    lobby = Lobby()
    lobby.set_games(
        GameDescription.from_plain(g) for g in [game_plain(Othello(), bots=["classic", "quantum"]), game_plain(Tron())]
    )
    othello, tron = lobby.games["othello"], lobby.games["tron"]
    assert othello.bots == ("classic", "quantum") and tron.bots == ()
    assert othello.seat_label(1) == "white" and tron.seat_label(2) == "player 3"
    assert tron.seat_count({"players": 3}) == 3 and othello.seat_count({}) == 2
