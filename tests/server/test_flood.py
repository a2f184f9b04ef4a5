"""Floods below the message level: pings never read, fragments, raw bytes, oversized chat to a foreign room."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
from dataclasses import replace

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Frame, Opcode

from gamenight.protocol import PROTOCOL_VERSION, encode
from gamenight.protocol.messages import Chat, Hello, ListRooms, MakeMove
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.guard import SLICE_BYTES, FrameLimits, GuardedConnection
from tests.peer import Peer, seat_pair
from tests.waiting import eventually


def _raw_websocket(port: int, rcvbuf: int | None = None) -> socket.socket:
    """A websocket opened by hand over a plain socket (so it can send anything and read nothing)."""
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(1)
    assert b" 101 " in reply
    return sock


def _frame(opcode: Opcode, data: bytes, fin: bool = True) -> bytes:
    """One client frame (masked, as clients must)."""
    return Frame(opcode, data, fin=fin).serialize(mask=True)


def _send_until_dropped(port: int, frame: bytes, limit: int, rcvbuf: int | None = None, seconds: float = 20.0) -> int:
    """Open a raw websocket and send `frame` over and over, never reading; returns how many went out before the
    server dropped the connection (run it in a thread: it blocks).

    `limit` frames bound the loop. A send blocked for `seconds` means the server stopped reading but kept the
    connection: that fails the test, it is not counted as a drop."""
    sock = _raw_websocket(port, rcvbuf)
    sock.settimeout(seconds)
    sent = 0
    try:
        while sent < limit:
            sock.sendall(frame)
            sent += 1
    except TimeoutError:
        raise AssertionError(f"the server stopped reading after {sent} frames but kept the connection") from None
    except OSError:  # reset or broken pipe: the server aborted the connection
        return sent
    finally:
        sock.close()
    raise AssertionError(f"the server still took frames after {sent} of them")


@pytest.fixture
async def limited():
    """A factory of servers with given frame limits, all stopped after the test."""
    started: list[GameServer] = []

    async def make(**limits: object) -> GameServer:
        server = GameServer(ServerConfig(port=0, ai_workers=1, frame_limits=replace(FrameLimits(), **limits)))
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


async def _honest_round_trip(alice: Peer, bob: Peer, code: str, state):
    """One move of an honest game; returns the state after it."""
    mover = alice if state.to_move == [0] else bob
    legal = (await mover.at(code, state.seq)).legal
    await mover.send(MakeMove(room=code, move=legal[0], seq=state.seq))
    return await alice.expect("state", seq=state.seq + 1)


async def test_a_ping_flood_is_dropped_and_a_game_goes_on(game_server, url):
    """A client sending pings faster than the ping limit, never reading the pongs, is dropped; a game goes on."""
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob)
    sent = await asyncio.to_thread(_send_until_dropped, game_server.port, _frame(Opcode.PING, b"p" * 125), 100_000)
    assert sent < 20_000  # what the socket buffers took after the server dropped it
    for _ in range(3):
        state = await _honest_round_trip(alice, bob, code, state)
    with pytest.raises(InvalidStatus) as refused:  # the flooder's address waits before it may connect again
        await Peer.connect(url, "flooder again")
    assert refused.value.response.status_code == 429
    await alice.close()
    await bob.close()


async def test_pongs_left_unread_are_bounded_by_the_backlog(limited):
    """With pings allowed at any rate, a client that never reads is dropped once its unread pongs pass the backlog."""
    server = await limited(pings_per_s=1e9, frames_per_s=1e9, bytes_per_s=1e12, max_backlog=256 * 1024)
    ping = _frame(Opcode.PING, b"p" * 125)
    sent = await asyncio.to_thread(_send_until_dropped, server.port, ping, 2_000_000, 4096)
    assert sent < 2_000_000

    async def forgotten() -> bool:  # the client sees the reset before the server's handler has run its cleanup
        return not server.connections and len(server._server.connections) == 0  # type: ignore[union-attr]

    await eventually(forgotten, "the dropped connection to be forgotten")


async def test_a_client_whose_socket_stays_full_is_dropped_after_the_stall_time(limited):
    """With the backlog check off, a client that never reads what the server writes (its pongs) is still dropped
    once the server's writes have been held up for `write_stall_s`, instead of being kept for ever."""
    server = await limited(pings_per_s=1e9, frames_per_s=1e9, bytes_per_s=1e12, max_backlog=0, write_stall_s=0.5)
    ping = _frame(Opcode.PING, b"p" * 125)
    sent = await asyncio.to_thread(_send_until_dropped, server.port, ping, 2_000_000, 4096)
    assert sent < 2_000_000


async def test_a_message_in_too_many_fragments_is_dropped(limited):
    """A hello in 4 fragments is welcomed; a request cut into more fragments than allowed closes with 1008."""
    server = await limited(max_fragments=8)
    ws = await connect(f"ws://127.0.0.1:{server.port}")
    hello = encode(Hello(protocol=PROTOCOL_VERSION, name="frag"))
    await ws.send([hello[i : i + 4] for i in range(0, 16, 4)] + [hello[16:]])
    assert (await asyncio.wait_for(ws.recv(), 5))[:1]
    request = encode(ListRooms(id=1))
    with pytest.raises(ConnectionClosed):
        await ws.send([request[i : i + 1] for i in range(len(request))] * 1)
        await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1008 or ws.close_code is None


async def test_a_fragment_flood_costs_the_server_one_slice_and_an_honest_game_plays_on(game_server, url, monkeypatch):
    """A message cut into 20,000 one-byte fragments, sent in one write, is dropped with "too many fragments" once
    its 17th fragment is counted; the server parses at most one slice of frames past it (not the whole read: a
    burst of them stalled every game), and an honest game goes on."""
    parsed: dict[int, int] = {}  # connection -> frames its parser handed to the guard
    dropped: dict[int, str] = {}  # connection -> why the guard dropped it
    count, abort = GuardedConnection.process_event, GuardedConnection.abort

    def counted(ws: GuardedConnection, event: object) -> None:
        parsed[id(ws)] = parsed.get(id(ws), 0) + isinstance(event, Frame)
        count(ws, event)  # type: ignore[arg-type]

    def noted(ws: GuardedConnection, reason: str) -> None:
        dropped.setdefault(id(ws), reason)
        abort(ws, reason)

    monkeypatch.setattr(GuardedConnection, "process_event", counted)
    monkeypatch.setattr(GuardedConnection, "abort", noted)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob)
    request = encode(ListRooms(id=1)).ljust(20_000, b"\x00")
    flood = b"".join(
        _frame(Opcode.BINARY if i == 0 else Opcode.CONT, request[i : i + 1], fin=False) for i in range(20_000)
    )
    await asyncio.to_thread(_send_until_dropped, game_server.port, flood, 100)
    assert list(dropped.values()) == ["too many fragments"]
    (flooder,) = dropped
    assert parsed[flooder] <= FrameLimits().max_fragments + SLICE_BYTES // 6, parsed[flooder]
    for _ in range(3):
        state = await _honest_round_trip(alice, bob, code, state)
    await alice.close()
    await bob.close()


async def test_a_byte_flood_is_dropped(game_server, url):
    """A client sending maximum-size frames back to back, faster than the byte limit allows, is dropped."""
    chat = encode(Chat(room="ABCDE", text="x" * 60_000))
    sent = await asyncio.to_thread(_send_until_dropped, game_server.port, _frame(Opcode.BINARY, chat), 1000)
    assert sent < 100


async def test_oversized_chat_to_a_foreign_room_is_refused_before_cleaning(peers, monkeypatch):
    """A 60,000-character chat line to a room the sender is not in gets `not_in_room`, and is never cleaned."""
    cleaned: list[int] = []
    from gamenight.server import room_requests

    original = room_requests.clean_text
    monkeypatch.setattr(room_requests, "clean_text", lambda text: cleaned.append(len(text)) or original(text))
    alice, bob, mallory = await peers("alice"), await peers("bob"), await peers("mallory")
    code, _ = await seat_pair(alice, bob)
    refused = await mallory.request(Chat, room=code, text="x" * 60_000)
    assert refused.type == "error" and refused.code == "not_in_room"
    assert cleaned == []
    await alice.send(Chat(room=code, text="hi " * 20_000))
    said = await bob.expect("event", kind="chat")
    assert said.data["text"].startswith("hi hi") and len(said.data["text"]) <= 300 and cleaned == [60_000]
