"""The `batch` message: a room's messages in one frame, built around their encoded bytes, checked on decoding."""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]  # only to build frames a server would never send
import pytest

from gamenight.protocol import ProtocolError, decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME, encode_batch, to_wire
from gamenight.protocol.messages import Batch, Event, Moved, RoomInfo, State, Tick, Welcome
from gamenight.protocol.vocab import EventKind, RoomStatus

MOVED = Moved(room="K7QXP", seq=2, seat=0, move="d3", cells=[[2, 3, "B"], [3, 3, "B"]], to_move=[1])
CHAT = Event(room="K7QXP", kind=EventKind.CHAT, seq=2, data={"name": "ann", "seat": None, "text": "hi"})
TICK = Tick(room="K7QXP", seq=3, cells=[[1, 1, "1"]], view={"tick": 1})
SUMMARY = RoomInfo(room="K7QXP", game="othello", options={}, seats=[], spectators=3, status=RoomStatus.PLAYING)
STATE = State(room="K7QXP", seq=3, game="othello", status=RoomStatus.PLAYING, view={"board": ["."]})


def test_a_batch_built_from_encoded_messages_decodes_to_them_in_order():
    """`encode_batch` wraps already-encoded messages; decoding gives the same messages, in the same order, and the
    same bytes as encoding the `Batch` itself."""
    parts = [MOVED, CHAT, TICK, SUMMARY, STATE]
    frame = encode_batch("K7QXP", [encode(m) for m in parts])
    batch = decode(frame, MAX_SERVER_FRAME)
    assert isinstance(batch, Batch) and batch.room == "K7QXP"
    assert batch.messages == parts
    assert frame == encode(Batch(room="K7QXP", messages=parts))
    assert to_wire(batch)["messages"][0] == to_wire(MOVED)


def test_a_batch_of_many_messages_keeps_their_count():
    """An array header past 15 items (msgpack's short form) still frames every message."""
    parts = [Event(room="R", kind=EventKind.CHAT, seq=1, data={"text": str(n)}) for n in range(300)]
    batch = decode(encode_batch("R", [encode(m) for m in parts]), MAX_SERVER_FRAME)
    assert isinstance(batch, Batch) and [m.data["text"] for m in batch.messages] == [str(n) for n in range(300)]


@pytest.mark.parametrize(
    ("inner", "why"),
    [
        ({"type": "welcome"}, "may not carry"),
        ({"type": "batch", "room": "K7QXP", "messages": []}, "may not carry"),
        ({**{k: v for k, v in to_wire(MOVED).items()}, "room": "OTHER"}, "its own room"),
        ({"type": "moved", "room": "K7QXP"}, "needs field"),
        ("moved", "may not carry"),
    ],
)
def test_a_batch_carries_only_its_rooms_own_traffic(inner, why):
    """A nested batch, another room's message, a non-room type or a broken message inside a batch is a
    protocol error (bad_message), not something the client half-applies."""
    frame = msgpack.packb({"type": "batch", "room": "K7QXP", "messages": [to_wire(CHAT), inner]}, use_bin_type=True)
    with pytest.raises(ProtocolError, match=why):
        decode(frame, MAX_SERVER_FRAME)


def test_welcome_is_not_batchable():
    """Only room pushes travel in a batch (the server's list and the codec's agree)."""
    from gamenight.protocol.messages import BATCHED_TYPES

    assert Welcome.type not in BATCHED_TYPES and Batch.type not in BATCHED_TYPES
    assert {m.type for m in (MOVED, CHAT, TICK, SUMMARY, STATE)} == BATCHED_TYPES
