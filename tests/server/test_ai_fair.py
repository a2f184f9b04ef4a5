"""The AI workers are shared fairly: exhibitions (all-AI rooms) cannot starve a person's AI opponent."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from gamenight.protocol.messages import AddAi, CreateRoom, Join, MakeMove
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from tests.peer import Peer


@pytest.fixture
async def server_with():
    """A factory of servers (one AI worker unless told) with given lobby limits; stopped after the test."""
    started: list[GameServer] = []

    async def make(workers: int = 1, **limits: object) -> GameServer:
        config = ServerConfig(port=0, ai_workers=workers)
        server = GameServer(replace(config, lobby_limits=replace(LobbyLimits(), **limits)))
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


async def _exhibition(url: str, name: str, ai_ms: int, watch: bool = True) -> tuple[Peer, str]:
    """A host opens an Othello room, watches it (or not) and seats two level-5 AIs; returns the host and code."""
    host = await Peer.connect(url, name)
    room = await host.request(CreateRoom, game="othello", options={"ai_ms": ai_ms, "ai_pace_ms": 0})
    if watch:
        await host.request(Join, room=room.room, role="spectator")
    for _ in range(2):
        reply = await host.request(AddAi, room=room.room, level=5)
        if reply.type == "error":
            raise AssertionError(reply.code)
    return host, room.room


async def test_a_persons_ai_opponent_does_not_wait_behind_exhibitions(server_with):
    """With the only worker busy with three level-5 exhibitions, a person's AI answers with a searched move, not a
    fallback: it waits for one exhibition search at most, and its time limit starts when its own search does."""
    server = await server_with(ai_rooms_per_ip=0)
    url = f"ws://127.0.0.1:{server.port}"
    for n in range(3):
        await _exhibition(url, f"show{n}", ai_ms=2500)
    await asyncio.sleep(0.5)  # the exhibitions' searches hold and queue for the worker
    player = await Peer.connect(url, "player")
    room = await player.request(CreateRoom, game="othello", options={"ai_ms": 200})
    await player.request(Join, room=room.room, seat=0)
    await player.request(AddAi, room=room.room, level=1)
    state = await player.expect("state")
    await player.send(MakeMove(room=room.room, move=state.legal[0], seq=state.seq))
    answer = await player.wait(lambda m: m.type == "moved" and m.seat == 1)
    assert answer.ai is not None and not answer.ai.get("fallback")


async def test_a_free_worker_goes_to_a_persons_ai_while_exhibitions_queue(server_with):
    """With two workers and three exhibitions (which may hold only one), a person's AI takes the free worker at
    once: it answers before any exhibition has finished its first search."""
    server = await server_with(workers=2, ai_rooms_per_ip=0)
    url = f"ws://127.0.0.1:{server.port}"
    shows = [(await _exhibition(url, f"show{n}", ai_ms=3000))[1] for n in range(3)]
    player = await Peer.connect(url, "player")
    room = await player.request(CreateRoom, game="othello", options={"ai_ms": 200})
    await player.request(Join, room=room.room, seat=0)
    await player.request(AddAi, room=room.room, level=1)
    state = await player.expect("state")
    await player.send(MakeMove(room=room.room, move=state.legal[0], seq=state.seq))
    await player.wait(lambda m: m.type == "moved" and m.seat == 1)
    assert [server.lobby.rooms[code].moves for code in shows] == [[], [], []]


async def test_an_address_runs_a_bounded_number_of_exhibitions(server_with):
    """The AI that would fill an address's all-AI room past `ai_rooms_per_ip` is refused with `too_many`."""
    server = await server_with(ai_rooms_per_ip=1)
    url = f"ws://127.0.0.1:{server.port}"
    await _exhibition(url, "first", ai_ms=100)
    with pytest.raises(AssertionError, match="too_many"):
        await _exhibition(url, "second", ai_ms=100)


async def test_an_exhibition_nobody_watches_stops_promptly(server_with, monkeypatch):
    """An all-AI room with nobody watching closes after a few seconds instead of playing on for nobody."""
    monkeypatch.setattr("gamenight.server.directory.EMPTY_AI_ROOM_GRACE_S", 0.2)
    monkeypatch.setattr("gamenight.server.app.SWEEP_INTERVAL_S", 0.1)
    server = await server_with()
    host, code = await _exhibition(f"ws://127.0.0.1:{server.port}", "host", ai_ms=100, watch=False)
    for _ in range(100):
        if code not in server.lobby.rooms:
            break
        await asyncio.sleep(0.05)
    assert code not in server.lobby.rooms
    await host.close()
