"""Protocol 2 over real websockets: `rate_limited` echoes the refused request's id with `retry_after_ms` (and 60 in
a row close the connection), a session keeps its id across a server restart, and the places where
docs/protocol.md and the server disagreed (issue 31): `moved.view` left out when empty, no `events` in the states
that start, pause and resume a game, `sync` for members only."""

from __future__ import annotations

import asyncio
import contextlib

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.codec import encode
from gamenight.protocol.messages import CreateRoom, Hello, Join, ListPlayers, MakeMove, Rematch, Resign, State, Sync
from gamenight.server.app import GameServer, ServerConfig
from tests.peer import TIMEOUT, Peer, seat_pair


async def test_rate_limited_echoes_the_request_id_with_retry_after(peers):
    """Past the burst, each refused request gets `rate_limited` with its own id and how long to wait."""
    alice: Peer = await peers("alice")
    sent = list(range(1000, 1050))  # 50 requests at once: the burst is 40
    for rid in sent:
        await alice.ws.send(encode(ListPlayers(id=rid)))
    replies = [await alice.wait(lambda m, r=rid: m.id == r) for rid in sent]
    limited = [m for m in replies if m.type == "error" and m.code == "rate_limited"]
    assert limited, "the burst was exceeded, so some requests were refused"
    assert all(m.retry_after_ms is not None and 0 < m.retry_after_ms <= 1000 for m in limited)
    assert len({m.id for m in replies}) == len(sent), "every request got exactly one reply carrying its id"


async def test_session_survives_a_restart(server_process):
    """A seated player resuming after a server restart gets the same `session` as before."""
    first = server_process()
    alice = await Peer.connect(first.url, "alice")
    room = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=room.room, seat=0)
    assert alice.welcome is not None
    session, token = alice.welcome.session, alice.welcome.token
    first.kill()
    await alice.close()
    second = server_process()
    back = await Peer.connect(second.url, "alice", resume=token)
    assert back.welcome is not None and back.welcome.session == session and back.welcome.token == token
    joined = await back.expect("joined", room=room.room)
    assert joined.seat == 0
    await back.close()
    assert second.stop() == 0


async def _raw_player(url: str, name: str) -> ClientConnection:
    """A player's bare connection after its hello (its frames are read as plain msgpack maps, after the
    server's `hello_nonce`, read here)."""
    ws = await connect(url, max_size=2**20)
    await ws.recv()
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
    return ws


async def _raw_until(ws: ClientConnection, type_: str, **where: object) -> dict:
    """The next map of `type_` whose fields equal `where`, read from a bare connection (others are skipped)."""
    while True:
        frame = await asyncio.wait_for(ws.recv(), TIMEOUT)
        msg = msgpack.unpackb(frame, raw=False)
        if msg["type"] == type_ and all(msg.get(k) == v for k, v in where.items()):
            return msg


async def _raw_game(url: str, game: str, alice: Peer) -> tuple[str, ClientConnection, State]:
    """`alice` (seat 0) and a bare connection (seat 1) seated in a new room of `game`; the code, the bare
    connection and alice's first state."""
    room = await alice.request(CreateRoom, game=game, options={})
    await alice.request(Join, room=room.room, seat=0)
    bob = await _raw_player(url, "bob")
    await bob.send(encode(Join(room=room.room, seat=1)))
    return room.room, bob, await alice.expect("state", room=room.room)


async def test_a_moved_carries_view_only_when_a_view_key_changed(peers, url):
    """A client reads a missing `moved.view` as `{}`: Connect Four moves before the win and Pentago moves before a
    five leave it out, the winning Connect Four move carries `winning_line`."""
    alice: Peer = await peers("alice")
    code, bob, state = await _raw_game(url, "connect4", alice)
    for ply, column in enumerate("aabbccd"):
        if ply % 2 == 0:
            await alice.send(MakeMove(room=code, move=column, seq=state.seq))
        else:
            await bob.send(encode(MakeMove(room=code, move=column, seq=state.seq)))
        moved = await _raw_until(bob, "moved", seq=state.seq + 1)
        state = await alice.expect("state", seq=state.seq + 1)
        if column != "d":
            assert "view" not in moved, f"move {ply + 1} changed no view key but the board"
    assert moved["view"] == {"winning_line": [[5, 0], [5, 1], [5, 2], [5, 3]]}
    assert state.view["winning_line"] == [[5, 0], [5, 1], [5, 2], [5, 3]], "the folded view has it too"
    await bob.close()
    code, bob, state = await _raw_game(url, "pentago", alice)
    await alice.send(MakeMove(room=code, move="a1 br cw", seq=state.seq))
    moved = await _raw_until(bob, "moved", seq=state.seq + 1)
    assert moved["cells"] and "view" not in moved and moved["move"] == "a1 br cw"
    await bob.close()


async def test_the_states_that_start_pause_and_resume_a_game_carry_no_events(peers, url):
    """The state that starts a game or a rematch, and those that pause and resume Tron, are changes with the next
    seq and no `events` (the state itself says what changed)."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    code, first = await seat_pair(alice, bob)
    assert first.seq == 1 and first.events == () and first.moves == [] and first.result is None
    await bob.send(Resign(room=code))
    final = await alice.wait(lambda m: m.type == "state" and m.status == "finished")
    assert [note.kind for note in final.events] == ["game_over"]
    for peer in (alice, bob):
        await peer.send(Rematch(room=code))
    again = await alice.wait(lambda m: m.type == "state" and m.status == "playing" and m.seq > final.seq)
    assert again.seq == final.seq + 1 and again.events == () and again.moves == [] and again.result is None
    tron = await alice.request(CreateRoom, game="tron", options={"countdown_ms": 10_000, "tick_ms": 2000})
    await alice.request(Join, room=tron.room, seat=0)
    await bob.request(Join, room=tron.room, seat=1)
    started = await alice.wait(lambda m: m.type == "state" and m.room == tron.room)
    assert started.events == () and started.next_tick_ms == 12_000  # no tick before the pause below
    token = bob.welcome.token
    await bob.close()
    paused = await alice.wait(lambda m: m.type == "state" and m.room == tron.room and m.status == "paused")
    assert paused.seq == started.seq + 1 and paused.events == ()
    back = await Peer.connect(url, "bob", resume=token)
    resumed = await alice.wait(lambda m: m.type == "state" and m.room == tron.room and m.status == "playing")
    assert resumed.seq == paused.seq + 1 and resumed.events == ()
    await back.close()


async def test_sixty_refusals_in_a_row_close_the_connection():
    """A client that keeps sending through `rate_limited` gets 60 refusals, each with its id and `retry_after_ms`,
    and is then closed with 1008 "too many messages" (docs/protocol.md, "Rate limits")."""
    # A bucket that refills at most a few thousandths of a token during the test: 3 messages pass, then none.
    server = GameServer(ServerConfig(host="127.0.0.1", port=0, ai_workers=1, rate=0.001, burst=3))
    await server.start()
    try:
        ws = await _raw_player(f"ws://127.0.0.1:{server.port}", "eager")
        try:
            for rid in range(1, 101):
                await ws.send(encode(ListPlayers(id=rid)))
        except ConnectionClosed:
            pass
        replies = []
        with contextlib.suppress(ConnectionClosed):
            async for frame in ws:
                replies.append(msgpack.unpackb(frame, raw=False))
        assert [m["type"] for m in replies[:3]] == ["welcome", "players", "players"]
        refused = replies[3:]
        assert [m["id"] for m in refused] == list(range(3, 63)), "requests 3 to 62 refused, one answer each"
        assert all(m["code"] == "rate_limited" and m["retry_after_ms"] > 0 for m in refused)
        assert ws.close_code == 1008 and ws.close_reason == "too many messages"
    finally:
        await server.stop()


async def test_sync_needs_membership_even_for_the_host(peers):
    """A host that has not joined its room gets `not_in_room` for `sync` (with its id); once watching, the room."""
    alice: Peer = await peers("alice")
    room = await alice.request(CreateRoom, game="othello", options={})
    refused = await alice.request(Sync, room=room.room, seq=0)
    assert refused.type == "error" and refused.code == "not_in_room" and refused.room == room.room
    await alice.request(Join, room=room.room, role="spectator")
    answered = await alice.request(Sync, room=room.room, seq=0)
    assert answered.type == "room" and answered.room == room.room
