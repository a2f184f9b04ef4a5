"""Integration: malformed frames get `bad_message` and the connection (and its game) carries on."""

from __future__ import annotations

import msgpack
import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import CreateRoom, Hello, ListRooms
from tests.peer import Peer

BAD_FRAMES = {
    "not msgpack": b"\xc1\xc1\xc1",
    "not a map": msgpack.packb([1, 2, 3]),
    "unknown type": msgpack.packb({"type": "teleport", "id": 5}),
    "wrong field type": msgpack.packb({"type": "create_room", "game": 42, "id": 6}),
    "missing field": msgpack.packb({"type": "join", "id": 7}),
    "text frame": "hello there",
    "two values": msgpack.packb({"type": "list_rooms"}) + msgpack.packb(1),
}


@pytest.mark.parametrize("frame", BAD_FRAMES.values(), ids=BAD_FRAMES.keys())
async def test_bad_frame_gets_bad_message_and_connection_survives(peers, frame):
    """Each kind of malformed frame is answered with `bad_message`; the next good request still works."""
    peer: Peer = await peers()
    await peer.send_raw(frame)
    error = await peer.expect("error")
    assert error.code == "bad_message" and error.message
    reply = await peer.request(ListRooms)
    assert reply.type == "rooms"


async def test_bad_message_echoes_request_id(peers):
    """A rejected request that carried an id gets it back, so the client knows which one failed."""
    peer: Peer = await peers()
    await peer.send_raw(msgpack.packb({"type": "join", "room": 3, "id": 99}))
    error = await peer.expect("error")
    assert error.code == "bad_message" and error.id == 99


async def test_requests_before_hello_are_refused(url):
    """Anything before hello gets `not_ready`, and hello still works afterwards."""
    peer = Peer(await __import__("websockets").asyncio.client.connect(url))
    try:
        await peer.send(ListRooms(id=1))
        error = await peer.expect("error")
        assert error.code == "not_ready" and error.id == 1
        await peer.send(Hello(protocol=PROTOCOL_VERSION, name="late"))
        assert (await peer.expect("welcome")).session
    finally:
        await peer.close()


async def test_wrong_protocol_version(url):
    """A hello with another protocol version gets `unsupported_protocol`."""
    from websockets.asyncio.client import connect

    peer = Peer(await connect(url))
    try:
        await peer.send(Hello(protocol=99, name="future", id=3))
        error = await peer.expect("error")
        assert error.code == "unsupported_protocol" and error.id == 3
    finally:
        await peer.close()


async def test_welcome_describes_games_and_options(peers):
    """`welcome.games` lists each game with typed options and defaults, enough to build a form."""
    peer: Peer = await peers()
    games = {g.name: g for g in peer.welcome.games}
    size = games["othello"].option("size")
    assert size is not None
    assert size.kind == "int" and size.default == 8 and sorted(size.choices or ()) == [6, 8, 10]


async def test_bad_options_keep_connection(peers):
    """A bad option value is refused and the same client can create a valid room right after."""
    peer: Peer = await peers()
    error = await peer.request(CreateRoom, game="othello", options={"size": "big"})
    assert error.type == "error" and error.code == "bad_options"
    room = await peer.request(CreateRoom, game="othello", options={"size": 6})
    assert room.type == "room" and room.options["size"] == 6
