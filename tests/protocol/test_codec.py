"""The codec: every message round-trips, and `decode` rejects everything that is not a valid message."""

from __future__ import annotations

import contextlib

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gamenight.protocol import ProtocolError, decode, encode
from gamenight.protocol.codec import MAX_FRAME, from_wire
from gamenight.protocol.messages import (
    CLIENT_MESSAGES,
    FIELD_SPECS,
    MESSAGE_TYPES,
    Error,
    Join,
    MakeMove,
    Moved,
    State,
    Tick,
)
from gamenight.protocol.schema import plain, read_fields
from gamenight.protocol.vocab import Clock, EventKind, EventNote


def test_round_trip_keeps_every_field():
    """A message decodes to an equal message, including the request id and renamed wire keys."""
    for msg in (
        Join(room="ABCDE", role="spectator", id=4),
        MakeMove(room="X", move="d3", seq=7),
        State(room="X", seq=3, game="othello", status="playing", view={"board": ["."]}, legal=["d3"]),
        Error(code="illegal_move", message="no", id=9),
    ):
        assert decode(encode(msg)) == msg


def test_join_uses_as_on_the_wire():
    """`join` carries the role under the documented key `as`."""
    wire = msgpack.unpackb(encode(Join(room="R", role="spectator")))
    assert wire["as"] == "spectator" and "role" not in wire


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "move", "room": "R"},
        {"type": "move", "room": "R", "move": 5},
        {"type": "hello", "protocol": "1", "name": "x"},
        {"type": "hello", "protocol": True, "name": "x"},
        {"type": "join", "room": None},
        {"type": 3},
        {"kind": "move"},
    ],
)
def test_wrong_or_missing_fields_are_rejected(raw):
    """Missing, null or wrongly typed fields raise ProtocolError (bools are not ints)."""
    with pytest.raises(ProtocolError):
        decode(msgpack.packb(raw))


def test_oversize_frame_is_rejected_before_parsing():
    """A frame over the size limit is refused without being unpacked."""
    with pytest.raises(ProtocolError):
        decode(b"\x00" * (MAX_FRAME + 1))


def test_deep_nesting_is_rejected():
    """Absurdly nested values become a ProtocolError, not a crash."""
    head = msgpack.packb({"type": "chat", "room": "R", "text": "x"})
    nested = b"\x84" + head[1:] + msgpack.packb("extra") + b"\x91" * 5000 + b"\x01"
    with pytest.raises(ProtocolError):
        decode(nested)


@given(st.binary(max_size=200))
def test_random_bytes_never_escape_as_other_errors(data):
    """Any byte string either decodes to a message or raises ProtocolError, never anything else."""
    with contextlib.suppress(ProtocolError):
        decode(data)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=10),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
        max_leaves=20,
    ),
    st.sampled_from([cls.type for cls in CLIENT_MESSAGES]),
)
def test_random_values_under_a_real_type(value, type_):
    """Random fields under a real message type either validate or raise ProtocolError."""
    raw = {"type": type_, "room": value, "move": value, "name": value, "protocol": value, "game": value}
    with contextlib.suppress(ProtocolError):
        decode(msgpack.packb(raw, use_bin_type=True))


def test_a_busy_lobby_welcome_fits_what_clients_accept():
    """A welcome listing 1,000 rooms is over the request limit but decodes at the limit clients use."""
    from gamenight.protocol.codec import MAX_SERVER_FRAME
    from gamenight.protocol.messages import Welcome

    room = {
        "room": "ABCDE",
        "game": "othello",
        "options": {"size": 8, "first": "black", "ai_ms": 1000},
        "seats": [
            {"seat": i, "label": "black", "kind": "human", "name": "somebody", "connected": True} for i in range(2)
        ],
        "spectators": 0,
        "status": "playing",
        "private": False,
        "host": "x",
    }
    frame = encode(Welcome(protocol=1, session="s", server="g", games=[], token="t", rooms=[room] * 1000))
    assert MAX_FRAME < len(frame) < MAX_SERVER_FRAME
    with pytest.raises(ProtocolError):
        decode(frame)
    assert len(decode(frame, MAX_SERVER_FRAME).rooms) == 1000


def _reference_wire(message):
    """The wire map by the documented rule: `type`, then each field in table order under its wire key, `id` only
    when set, an omittable field only when it is not null or empty, payloads and tuples made plain."""
    wire = {"type": message.type}
    for spec in FIELD_SPECS[type(message)]:
        value = getattr(message, spec.name)
        if spec.name == "id" and value is None:
            continue
        if spec.omit and (value is None or value == [] or value == () or value == {}):
            continue
        wire[spec.wire] = plain(value) if spec.nested else value
    return wire


@pytest.mark.parametrize(
    "msg",
    [
        Moved(room="R", seq=3, seat=0, move="f5", cells=[[3, 4, "B"]], view={"scores": [4, 1]}, to_move=[1]),
        Moved(room="R", seq=3, seat=0, move="f5", to_move=[1], legal=["d6", "f4"], id=12),
        Moved(
            room="R",
            seq=9,
            seat=1,
            move="c4",
            clock=Clock(remaining_ms=(1000, 2000), running=0),
            events=(EventNote(EventKind.PASS, {"seat": 0}),),
            ai={"depth": 3},
        ),
        Tick(room="R", seq=2, cells=[[1, 1, "0"]], view={"tick": 1}, move="E W", next_tick_ms=100),
        State(room="X", seq=3, game="othello", status="playing", view={"board": ["."]}, legal=["d3"], moves=["f5"]),
        Error(code="illegal_move", message="no", id=0),
        Join(room="R", role="spectator"),
        MakeMove(room="X", move="d3", seq=None, id=5),
    ],
)
def test_encoding_follows_the_field_table_exactly(msg):
    """Every message's bytes are the wire map of its field table, key order included (the compiled encoders)."""
    assert encode(msg) == msgpack.packb(_reference_wire(msg), use_bin_type=True)
    assert decode(encode(msg)) == msg


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=6),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8,
)


def _outcome(build):
    """What building gives: the message, or the text of its ProtocolError."""
    try:
        return build()
    except ProtocolError as exc:
        return f"error: {exc} ({exc.request_id})"


@given(st.data(), st.sampled_from(sorted(MESSAGE_TYPES)))
def test_reading_fields_follows_the_field_table_exactly(data, type_):
    """Every message type's fields are checked as the field table says: the same message, or the same error."""
    cls = MESSAGE_TYPES[type_]
    raw = {"type": type_}
    for spec in FIELD_SPECS[cls]:
        if data.draw(st.booleans()):
            raw[spec.wire] = data.draw(_VALUES)
    rid = raw.get("id") if isinstance(raw.get("id"), int) and not isinstance(raw.get("id"), bool) else None
    if rid is not None and not -(2**53) <= rid <= 2**53:
        return  # out of range: refused after the fields are read, by both
    assert _outcome(lambda: from_wire(raw)) == _outcome(lambda: cls(**read_fields(cls, raw, rid, type_)))
