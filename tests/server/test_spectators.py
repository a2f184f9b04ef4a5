"""Spectators get their room's traffic coalesced (server/fanout.py) over real websockets: one frame per window
holding every move and chat line in order, folded by the bundled client into exactly the server's snapshot;
players still get each move at once. Frames are counted, never time: a window longer than any test is ended
by the spectator's own request."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from gamenight.client.state import ClientState
from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import (
    AddAi,
    Batch,
    Chat,
    CreateRoom,
    Error,
    Event,
    Hello,
    Join,
    MakeMove,
    Message,
    Moved,
    State,
    Sync,
    fold,
)
from gamenight.protocol.vocab import EventKind, RoomStatus
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.fanout import split
from gamenight.server.outbox import Send
from tests.peer import Peer, seat_pair

COMPARED = ("seq", "game", "status", "view", "to_move", "legal", "last_move", "moves", "result", "clock")
LONG_WINDOW_MS = 3_600_000  # an hour: no window ends by itself during a test


@pytest.fixture
async def server_with():
    """A factory of in-process servers with a given spectator window (and lobby limits); stopped after the test."""
    started: list[GameServer] = []

    async def make(window_ms: int, db: str | None = None, **limits: Any) -> GameServer:
        config = ServerConfig(port=0, ai_workers=1, spectator_batch_ms=window_ms, db=db)
        server = GameServer(replace(config, lobby_limits=replace(LobbyLimits(), **limits)))
        await server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        await server.stop()


def _url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def _play(alice: Peer, bob: Peer, code: str, first: State, count: int) -> list[str]:
    """The two seated players make `count` moves, each as soon as it is their turn; returns the moves."""
    seats = {0: alice, 1: bob}
    state, played = first, []
    for _ in range(count):
        (seat,) = state.to_move
        mover = seats[seat]
        mine = await mover.at(code, state.seq)  # the mover's own copy carries its legal moves
        move = str(mine.legal[0])
        reply = await mover.request(MakeMove, room=code, move=move, seq=state.seq)
        assert isinstance(reply, Moved) and reply.seq == state.seq + 1
        played.append(move)
        state = await alice.at(code, reply.seq)
    return played


def _same_state(folded: State, snapshot: State) -> None:
    """Two states of the same seq agree on everything a client draws."""
    for name in COMPARED:
        assert getattr(folded, name) == getattr(snapshot, name), name


async def test_a_spectator_gets_every_move_and_chat_line_of_a_window_in_one_frame_in_order(server_with):
    """However much a window holds, a spectator gets it as one `batch` frame, in the order decided, and folds it
    into exactly the state `sync` returns; the `sync` reply comes after what waited (order kept)."""
    server = await server_with(LONG_WINDOW_MS)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    watcher = await Peer.connect(url, "watcher")
    await watcher.request(Join, room=code, role="spectator")
    start = await watcher.expect("state")  # a joiner's state comes with its `joined`, not a window later
    await watcher.expect("room")  # and the room's new summary (one more spectator), in the same decision
    assert start.seq == first.seq
    joined_at = len(watcher.frames)
    played = await _play(alice, bob, code, first, 12)
    await alice.send(Chat(room=code, text="good game so far"))
    await bob.wait(lambda m: m.type == "event" and m.kind == EventKind.CHAT)
    played += await _play(alice, bob, code, await alice.at(code, first.seq + 12), 2)

    reply = await watcher.request(Sync, room=code, seq=start.seq)

    frames = watcher.frames[joined_at:]
    assert [f.type for f in frames] == ["batch", "state"], "one frame for the whole window, then the reply"
    batch = frames[0]
    assert isinstance(batch, Batch) and batch.room == code
    kinds = [m.type if m.type != "event" else m.kind for m in batch.messages]
    assert kinds == ["moved"] * 12 + [EventKind.CHAT] + ["moved"] * 2, "every message, in the order decided"
    moves = [m for m in batch.messages if isinstance(m, Moved)]
    assert [m.seq for m in moves] == list(range(start.seq + 1, start.seq + 15))
    assert [m.move for m in moves] == played
    folded = start
    for moved in moves:
        folded = fold(folded, moved)
    assert isinstance(reply, State)
    _same_state(folded, reply)
    for player in (alice, bob):
        assert not [f for f in player.frames if isinstance(f, Batch)], "players are never batched"
    for peer in (alice, bob, watcher):
        await peer.close()


async def test_players_get_each_move_at_once_while_spectators_wait(server_with):
    """With a spectator window that never ends by itself, the players' game still runs move by move: each
    `moved` reaches both players in a frame of its own before the next move is made."""
    server = await server_with(LONG_WINDOW_MS)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    watchers = [await Peer.connect(url, f"w{n}") for n in range(5)]
    for watcher in watchers:
        await watcher.request(Join, room=code, role="spectator")
    played = await _play(alice, bob, code, first, 10)
    for player in (alice, bob):
        moved = [f for f in player.frames if isinstance(f, Moved)]
        assert [m.move for m in moved] == played, "every move, each in its own frame"
    for watcher in watchers:
        assert not [f for f in watcher.frames if isinstance(f, (Moved, Batch))], "spectators' window is still open"
    for peer in (alice, bob, *watchers):
        await peer.close()


async def test_the_window_holds_under_a_chat_flood(server_with):
    """Spectators chatting flat out while the players move: each spectator still gets one room frame for the
    window (the relayed lines inside it, the same for everyone), plus only the refusals of its own lines."""
    server = await server_with(LONG_WINDOW_MS, spectator_chat_per_s=2.0)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    watchers = [await Peer.connect(url, f"w{n}") for n in range(6)]
    for watcher in watchers:
        await watcher.request(Join, room=code, role="spectator")
        await watcher.expect("room")
    marks = [len(w.frames) for w in watchers]
    for n in range(5):
        for watcher in watchers:
            await watcher.send(Chat(room=code, text=f"spam {n}"))
    played = await _play(alice, bob, code, first, 8)
    await alice.send(Chat(room=code, text="still here"))
    await bob.wait(lambda m: m.type == "event" and m.kind == EventKind.CHAT and m.data["text"] == "still here")
    batches = []
    for watcher, mark in zip(watchers, marks, strict=True):
        reply = await watcher.request(Sync, room=code, seq=first.seq)
        assert isinstance(reply, State) and reply.seq == first.seq + len(played)
        frames = [f for f in watcher.frames[mark:] if not isinstance(f, Error)]
        assert [f.type for f in frames] == ["batch", "state"], "one room frame for the window, then the reply"
        batches.append(frames[0])
    texts = [[m.data["text"] for m in b.messages if isinstance(m, Event)] for b in batches]  # type: ignore[attr-defined]
    assert all(t == texts[0] for t in texts), "every spectator gets the same lines in the same order"
    assert texts[0][-1] == "still here" and 1 <= len(texts[0]) <= 6, "the room's chat allowance still holds"
    for peer in (alice, bob, *watchers):
        await peer.close()


async def _raw_spectator(url: str, name: str) -> tuple[ClientConnection, ClientState]:
    """A connection read by the bundled client's reducer, as the TUI reads it (a `batch` included)."""
    ws = await connect(url, max_size=MAX_SERVER_FRAME)
    await ws.recv()  # the hello_nonce (the bundled client's connection reads it before its hello)
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
    client = ClientState(name)
    client.apply(decode(await ws.recv(), MAX_SERVER_FRAME))
    return ws, client


async def _fold_until(ws: ClientConnection, client: ClientState, done: Any) -> list[Message]:
    """Apply every frame to the reducer until `done(client)`; returns the frames (a hang guard, not a timing)."""
    frames = []
    async with asyncio.timeout(60):
        while not done(client):
            frame = decode(await ws.recv(), MAX_SERVER_FRAME)
            frames.append(frame)
            changes = client.apply(frame)
            for request in changes.requests:
                await ws.send(encode(request))
    return frames


async def _sync_reply(ws: ClientConnection, code: str, client: ClientState) -> State:
    """Ask for the room's state and return the reply (what still waited is applied first)."""
    await ws.send(encode(Sync(room=code, seq=0, id=99)))
    while True:
        msg = decode(await ws.recv(), MAX_SERVER_FRAME)
        if isinstance(msg, State) and msg.id == 99:
            return msg
        client.apply(msg)


async def test_the_bundled_client_folds_a_spectators_batches_into_the_servers_state(server_with):
    """A spectator read through `ClientState` (the TUI's and gamenight-bot's reducer) with short windows (its room
    traffic in `batch` frames or alone) reaches the players' last move with exactly the server's state."""
    server = await server_with(50)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    ws, client = await _raw_spectator(url, "watcher")
    await ws.send(encode(Join(room=code, role="spectator", id=1)))
    await _fold_until(ws, client, lambda c: c.room is not None and c.room.state is not None)
    await _play(alice, bob, code, first, 20)
    final = await alice.at(code, first.seq + 20)
    frames = await _fold_until(ws, client, lambda c: c.room.state.seq == final.seq)  # type: ignore[union-attr]
    assert client.room is not None and client.room.state is not None and not client.room.syncing
    reply = await _sync_reply(ws, code, client)
    _same_state(client.room.state, reply)
    assert len([m for m in client.room.state.moves]) == len(final.moves)
    messages = sum(len(f.messages) if isinstance(f, Batch) else 1 for f in frames)
    assert messages >= 20 and all(f.type in ("batch", "moved", "event", "room") for f in frames)
    await ws.close()
    await alice.close()
    await bob.close()


async def test_a_tron_spectator_folds_every_tick_into_the_final_state(server_with):
    """In a live game (two AIs racing at 50 ms a tick) a spectator's window is half a tick; read through the
    bundled client it reaches the game's end with exactly the server's final state and no missed tick."""
    server = await server_with(200)
    url = _url(server)
    ws, client = await _raw_spectator(url, "host")
    options = {"width": 10, "height": 10, "tick_ms": 50, "countdown_ms": 0, "ai_ms": 50, "ai_pace_ms": 0}
    await ws.send(encode(CreateRoom(game="tron", options=options, id=1)))
    frames = await _fold_until(ws, client, lambda c: any(r.game == "tron" for r in c.lobby.rooms.values()))
    code = next(r.room for r in client.lobby.rooms.values() if r.game == "tron")
    await ws.send(encode(Join(room=code, role="spectator", id=2)))
    await ws.send(encode(AddAi(room=code, level=1, id=3)))
    await ws.send(encode(AddAi(room=code, level=1, id=4)))
    frames = await _fold_until(
        ws,
        client,
        lambda c: c.room is not None and c.room.state is not None and c.room.state.status == RoomStatus.FINISHED,
    )
    assert client.room is not None and client.room.state is not None
    assert not client.room.syncing, "no tick was missed"
    reply = await _sync_reply(ws, code, client)
    _same_state(client.room.state, reply)
    assert any(isinstance(f, (Batch, Message)) and f.type in ("tick", "batch") for f in frames)
    await ws.close()


def test_a_decision_holds_only_room_pushes_for_that_rooms_spectators():
    """The split (pure): pushes wait for spectators; players, replies and errors do not; a spectator sent a reply
    gets the decision's pushes directly; a room nobody watches needs no split at all."""
    watched = {"ROOM1": {"w1", "w2"}, "ROOM2": set()}
    moved = Moved(room="ROOM1", seq=2, seat=0, move="d3")
    chat = Event(room="ROOM1", kind=EventKind.CHAT, seq=2, data={"text": "hi"})
    sends = [
        Send(frozenset({"alice", "bob", "w1", "w2"}), moved),
        Send(frozenset({"w2"}), Error(code="rate_limited", message="slow down", room="ROOM1")),  # type: ignore[arg-type]
        Send(frozenset({"w1"}), State(room="ROOM1", seq=2, game="othello", status="playing", view={}, id=7)),  # type: ignore[arg-type]
        Send(frozenset({"alice", "bob", "w1", "w2"}), chat),
    ]
    plan = split(sends, watched.get, holding=False)
    assert plan is not None
    assert plan.held == {0: frozenset({"w2"}), 3: frozenset({"w2"})}, "w1 got a reply: its pushes go with it"
    assert plan.ahead == {"w1"}
    unwatched = [Send(frozenset({"alice", "bob"}), replace(moved, room="ROOM2"))]
    assert split(unwatched, watched.get, holding=False) is None
    assert split(unwatched, watched.get, holding=True) is not None, "something waits somewhere: replies must check"


def test_the_window_is_a_limit_set_from_the_command_line():
    """`--limit spectator_batch_ms=N` sets the spectators' window (0 sends them every message at once)."""
    from gamenight.server.__main__ import apply_limits, parse_args

    config = apply_limits(ServerConfig(), parse_args(["--limit", "spectator_batch_ms=100"]).limit)
    assert config.spectator_batch_ms == 100 and ServerConfig().spectator_batch_ms == 200
    off = apply_limits(ServerConfig(), parse_args(["--limit", "spectator_batch_ms=0"]).limit)
    assert off.spectator_batch_ms == 0


async def test_with_the_window_off_spectators_get_each_move_in_its_own_frame(server_with):
    """`spectator_batch_ms=0`: spectators get every `moved` at once, in a frame of its own, as players do."""
    server = await server_with(0)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    watcher = await Peer.connect(url, "watcher")
    await watcher.request(Join, room=code, role="spectator")
    played = await _play(alice, bob, code, first, 6)
    await watcher.at(code, first.seq + 6)
    assert [f.move for f in watcher.frames if isinstance(f, Moved)] == played
    assert not [f for f in watcher.frames if isinstance(f, Batch)]
    for peer in (alice, bob, watcher):
        await peer.close()


async def test_a_move_that_is_not_stored_never_reaches_a_spectator(server_with, tmp_path):
    """A move whose records cannot be stored is not in any spectator's batch (only stored moves join a window):
    when the spectator's next reply sends what waited for it, the stored move is there and the lost one is not."""
    server = await server_with(LONG_WINDOW_MS, db=str(tmp_path / "games.db"))
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, first = await seat_pair(alice, bob)
    other, _ = await seat_pair(await Peer.connect(url, "carol"), await Peer.connect(url, "dave"))
    watcher = await Peer.connect(url, "watcher")
    await watcher.request(Join, room=code, role="spectator")
    await watcher.expect("room")
    mark = len(watcher.frames)
    (stored,) = await _play(alice, bob, code, first, 1)
    assert server.store is not None

    def full_disk(records: Any) -> None:
        raise OSError(28, "No space left on device")

    real_write, server.store.write = server.store.write, full_disk  # type: ignore[method-assign]
    mover = bob if first.to_move == [0] else alice
    mine = await mover.at(code, first.seq + 1)
    lost = await mover.request(MakeMove, room=code, move=str(mine.legal[0]), seq=first.seq + 1)
    assert isinstance(lost, Error) and lost.code == "unavailable"
    server.store.write = real_write  # type: ignore[method-assign]
    joined = await watcher.request(Join, room=other, role="spectator")  # a reply: what waited goes first
    assert joined.type == "joined"
    before = watcher.frames[mark : watcher.frames.index(joined)]
    moves = [m for f in before for m in (f.messages if isinstance(f, Batch) else [f]) if isinstance(m, Moved)]
    assert [(m.seq, m.move) for m in moves] == [(first.seq + 1, stored)], "the stored move only"
