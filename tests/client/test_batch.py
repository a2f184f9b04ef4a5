"""The client reducer reads a `batch` (a spectator's room traffic of one window) as its messages in order."""

from __future__ import annotations

from gamenight.client.state import ClientState
from gamenight.protocol.messages import Batch, Tick
from tests.client.recorded import games, othello_moved, othello_state, room_info, welcome, wire

CODE = "K7QXM"


def _watching() -> ClientState:
    """A spectator of an Othello game at its first state."""
    state = ClientState("ann")
    for message in (
        welcome(game_list=games()),
        room_info(CODE, status="playing"),
        wire("joined", room=CODE, **{"as": "spectator"}, seat=None, id=2),
        othello_state(CODE, 1, []),
    ):
        state.apply(message)
    return state


def _window() -> list:
    """Three moves and a chat line, as a spectator's window would hold them."""
    return [
        othello_moved(CODE, 2, ["f5"], mine=False),
        wire("event", room=CODE, kind="chat", seq=2, data={"name": "bob", "seat": 1, "text": "nice"}),
        othello_moved(CODE, 3, ["f5", "d6"], mine=False),
        othello_moved(CODE, 4, ["f5", "d6", "c3"], mine=False),
    ]


def test_a_batch_folds_exactly_like_its_messages_one_by_one():
    """Applying a `batch` leaves the room (state, seq, log) exactly as applying its messages one at a time, and
    its changes say the board and the log changed."""
    one_by_one, batched = _watching(), _watching()
    for message in _window():
        one_by_one.apply(message)
    changes = batched.apply(Batch(room=CODE, messages=_window()))
    assert one_by_one.room is not None and batched.room is not None
    assert batched.room.state == one_by_one.room.state and batched.room.seq == 4
    assert [line.text for line in batched.room.log] == [line.text for line in one_by_one.room.log]
    assert changes.board and changes.log and not changes.requests


def test_a_batch_with_a_gap_asks_for_the_state_once():
    """A batch whose moves skip a seq makes the client ask for a `sync` once, as a single missed `moved` does."""
    watching = _watching()
    changes = watching.apply(Batch(room=CODE, messages=_window()[2:]))
    assert [r.type for r in changes.requests] == ["sync"]


def test_two_ticks_in_one_batch_redraw_the_board():
    """Several ticks in one frame are not one delta: the changes ask for a redraw from the folded state."""
    state = ClientState("ann")
    state.apply(welcome(game_list=games()))
    state.apply(room_info(CODE, game="tron", status="playing"))
    state.apply(wire("joined", room=CODE, **{"as": "spectator"}, seat=None, id=2))
    board = ["...", "...", "..."]
    view = {"board": board, "tick": 0, "heads": [[0, 0], [2, 2]], "alive": [True, True], "dirs": ["E", "W"]}
    state.apply(wire("state", room=CODE, seq=1, game="tron", status="playing", view=view, to_move=[0, 1]))
    ticks = [
        Tick(room=CODE, seq=2, cells=[[0, 1, "1"], [2, 1, "2"]], view={"tick": 1, "heads": [[0, 1], [2, 1]]}),
        Tick(room=CODE, seq=3, cells=[[0, 2, "1"], [2, 0, "2"]], view={"tick": 2, "heads": [[0, 2], [2, 0]]}),
    ]
    changes = state.apply(Batch(room=CODE, messages=ticks))
    assert changes.tick is None and changes.board
    assert state.room is not None and state.room.state is not None
    assert state.room.seq == 3 and state.room.state.view["tick"] == 2
    single = state.apply(Batch(room=CODE, messages=[Tick(room=CODE, seq=4, view={"tick": 3})]))
    assert single.tick is not None and single.tick.seq == 4
