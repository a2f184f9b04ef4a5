"""A hostile or broken client cannot crash the server, take a seat, or disturb a game in another room."""

from __future__ import annotations

import asyncio
import itertools
import random

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.messages import CLIENT_MESSAGES, Hello, ListRooms, MakeMove
from tests.peer import Peer, seat_pair
from tests.server.serverproc import NO_ROOM_CAPS, ServerProcess

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=30)
    | st.binary(max_size=30),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=10), kids, max_size=5),
    max_leaves=25,
)
_typed = st.builds(
    lambda t, fields: {**fields, "type": t},
    st.sampled_from([cls.type for cls in CLIENT_MESSAGES] + ["welcome", "state", "nope"]),
    st.dictionaries(
        st.sampled_from(
            [
                "room",
                "move",
                "seq",
                "id",
                "game",
                "options",
                "as",
                "seat",
                "text",
                "protocol",
                "name",
                "level",
                "bot",
                "game_id",
            ]
        ),
        _values,
        max_size=6,
    ),
)
_frames = st.one_of(
    st.binary(max_size=300),
    _values.map(lambda v: msgpack.packb(v, use_bin_type=True)),
    _typed.map(lambda v: msgpack.packb(v, use_bin_type=True)),
    st.integers(1, 3000).map(lambda depth: b"\x91" * depth + b"\x00"),  # deep nesting
    st.just(b"\xcf" + b"\xff" * 8),  # the largest msgpack integer
    st.just(b"\x00" * 70_000),  # over the frame limit: the server closes with 1009
)


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """One real server process for the whole module."""
    # Every example opens a room from 127.0.0.1, more than one address may host, and an example that breaks a
    # frame limit must not lock the next ones out: the caps and the penalty are tested in test_caps / test_flood.
    extra = (*NO_ROOM_CAPS, "--limit", "abort_penalty_s=0")
    proc = ServerProcess(tmp_path_factory.mktemp("hostile") / "games.db", *extra).start()
    yield proc
    assert proc.stop() == 0, "the server did not shut down cleanly after the abuse"


async def _honest_game(url: str):
    """Two players seated in an Othello room; returns them, the room code and the first state."""
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob)
    return alice, bob, code, state


async def _one_move(players, code, state, rng):
    """Play one random legal move and return the new state as the mover's opponent saw it."""
    mover = players[state.to_move[0]]
    legal = (await mover.at(code, state.seq)).legal
    await mover.send(MakeMove(room=code, move=rng.choice(legal), seq=state.seq))
    return await players[0].wait(lambda m: m.type == "state" and m.seq == state.seq + 1)


async def _abuse(url: str, frames: list[bytes]) -> None:
    """Send frames from a hostile client between the moves of a game in another room."""
    alice, bob, code, state = await _honest_game(url)
    players, rng, made = {0: alice, 1: bob}, random.Random(len(frames)), []
    ws = await connect(url, max_size=2**20)
    await ws.recv()  # the hello_nonce
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="mallory")))
    decode(await ws.recv())
    ids = itertools.count(10_000)
    for frame in frames:
        sentinel = next(ids)
        try:
            await ws.send(frame)
            await ws.send(encode(ListRooms(id=sentinel)))
            replies = []
            while not replies or replies[-1].id != sentinel:
                replies.append(decode(await asyncio.wait_for(ws.recv(), 10)))
            assert len(replies) >= 2, "a frame got no answer at all"
        except ConnectionClosed:
            assert ws.close_code in (1009, 1008, 1002), ws.close_code
            break
        if state.status == "playing":
            state = await _one_move(players, code, state, rng)
            made.append(state.last_move)
    assert state.moves == made, "a move of the honest game was lost or duplicated"
    await ws.close()
    await alice.close()
    await bob.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(_frames, min_size=1, max_size=12))
def test_random_frames_never_crash_the_server(live_server, frames):
    """Random bytes and msgpack values get an error or a close, and a game elsewhere goes on intact."""
    asyncio.run(_abuse(live_server.url, frames))
    assert live_server.proc.poll() is None, "the server died"


async def test_flood_is_rate_limited_then_closed(peers, url):
    """A flooding client gets `rate_limited`, then is closed with 1008; another room's game keeps every move."""
    alice, bob, code, state = await _honest_game(url)
    flood = await connect(url)
    await flood.recv()  # the hello_nonce
    await flood.send(encode(Hello(protocol=PROTOCOL_VERSION, name="flood")))
    for _ in range(400):
        try:
            await flood.send(encode(ListRooms()))
        except ConnectionClosed:
            break
    codes = []
    try:
        async for frame in flood:
            msg = decode(frame)
            if msg.type == "error":
                codes.append(msg.code)
    except ConnectionClosed:
        pass
    assert "rate_limited" in codes and flood.close_code == 1008
    rng, made = random.Random(3), []
    for _ in range(6):
        state = await _one_move({0: alice, 1: bob}, code, state, rng)
        made.append(state.last_move)
    assert state.moves == made
    await alice.close()
    await bob.close()


async def test_no_hello_is_closed(url, monkeypatch):
    """A connection that never says hello is closed with 1008 after the hello timeout."""
    monkeypatch.setattr("gamenight.server.app.HELLO_TIMEOUT_S", 0.2)
    ws = await connect(url)
    assert decode(await asyncio.wait_for(ws.recv(), 5)).type == "hello_nonce"
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1008


async def test_idle_lobby_connection_is_closed(game_server, url):
    """A connection in no room that stays silent past the idle timeout is closed with 1001."""
    from dataclasses import replace

    game_server.config = replace(game_server.config, idle_timeout_s=0.3)
    ws = await connect(url)
    decode(await ws.recv())  # the hello_nonce
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="sleepy")))
    decode(await ws.recv())
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1001
