"""A closed room leaves memory at once (issue 37's soak): nothing but the lobby holds a room, so a server whose
full garbage collections are rare (`GC_THRESHOLDS`) does not keep a room per finished game."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from gamenight.protocol.messages import CreateRoom, Join, Leave, Resign
from gamenight.protocol.vocab import RoomStatus
from gamenight.server.directory import EMPTY_ROOM_GRACE_S
from tests.server.test_lobby_v2 import _lobby


@pytest.fixture
def no_cyclic_collector() -> Iterator[None]:
    """The cyclic garbage collector off for the test (as good as never running, as in a busy server)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("game", ["othello", "connect4", "pentago", "tron"])
def test_a_closed_room_is_freed_without_the_cyclic_collector(game: str, no_cyclic_collector: None) -> None:
    """A room whose game ended and whose players left is gone from memory as soon as the lobby closes it."""
    lobby, ann, bob = _lobby()
    out = lobby.handle(ann, CreateRoom(game=game, options={}, id=1), 0.0)
    code = next(s.message.room for s in out.sends if s.message.type == "room")
    lobby.handle(ann, Join(room=code, seat=0, id=2), 0.0)
    lobby.handle(bob, Join(room=code, seat=1, id=3), 0.0)
    lobby.handle(bob, Resign(room=code, id=4), 1.0)
    assert lobby.rooms[code].status == RoomStatus.FINISHED
    lobby.handle(ann, Leave(room=code, id=5), 2.0)
    lobby.handle(bob, Leave(room=code, id=6), 2.0)
    freed = weakref.ref(lobby.rooms[code])
    del out
    lobby.sweep(2.0 + EMPTY_ROOM_GRACE_S + 1.0)
    assert code not in lobby.rooms
    assert freed() is None, [type(r).__name__ for r in gc.get_referrers(freed())]
