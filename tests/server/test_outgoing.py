"""The flush of each loop iteration: records on disk before frames go out, frames in decision order."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest
from websockets.frames import Frame, Opcode
from websockets.protocol import State as ConnectionState
from websockets.server import ServerProtocol

from gamenight.protocol.messages import Error, Event, MakeMove, Moved, State
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.outgoing import Batcher, Outgoing, frame, write_frames
from gamenight.server.records import GameStarted, MoveRecorded, RoomSaved
from gamenight.server.store import Store
from tests.peer import Peer, seat_pair


async def test_a_move_is_on_disk_when_its_state_arrives(tmp_path):
    """Whoever sees a move's state can rely on the move being stored (a crash right after loses nothing)."""
    path = tmp_path / "g.db"
    server = GameServer(ServerConfig(port=0, db=str(path)))
    await server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}"
        alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
        code, state = await seat_pair(alice, bob)
        for ply in range(6):
            mover = alice if state.to_move == [0] else bob
            legal = (await mover.at(code, state.seq)).legal
            await mover.send(MakeMove(room=code, move=legal[0], seq=state.seq))
            state = await bob.state_after(code, state.seq)
            reader = sqlite3.connect(path)
            stored = reader.execute("SELECT move FROM moves WHERE room = ? ORDER BY ply", (code,)).fetchall()
            reader.close()
            assert [m for (m,) in stored] == state.moves and len(stored) == ply + 1
        await alice.close()
        await bob.close()
    finally:
        await server.stop()


async def test_a_players_messages_arrive_in_the_order_decided(peers):
    """A move and a refused move sent back to back: the mover sees the move's `moved`, then the error."""
    alice: Peer = await peers("alice")
    code, state = await seat_pair(alice, await peers("bob"))
    alice.seen.clear()
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    await alice.send(MakeMove(room=code, move=state.legal[1], seq=state.seq))
    await alice.expect("error")
    kinds = [
        (type(m).__name__, getattr(m, "kind", None) or getattr(m, "code", None))
        for m in alice.seen
        if isinstance(m, Event | State | Moved | Error)
    ]
    assert kinds == [("Moved", None), ("Error", "not_your_turn")]


async def test_one_bad_decision_does_not_lose_the_others(tmp_path):
    """If one decision's records cannot be stored, the other rooms' moves of the same flush still are."""
    store = Store(str(tmp_path / "g.db"))
    store.write(
        [
            RoomSaved("A", "othello", {}, {}, "ann", False),
            RoomSaved("B", "othello", {}, {}, "bo", False),
            GameStarted("A", 1),
            GameStarted("B", 1),
        ]
    )
    store.write([MoveRecorded("A", 1, 0, "f5")])
    outgoing = Outgoing(store)
    outgoing.add_records([MoveRecorded("A", 1, 0, "d6")])  # ply 0 of room A again: refused by the schema
    outgoing.add_records([MoveRecorded("B", 1, 0, "c4")])
    outgoing.flush()
    rooms = {room.code: room.moves for room in store.unfinished_rooms()}
    assert rooms == {"A": ["f5"], "B": ["c4"]}
    store.close()


class _Transport:
    """A transport stand-in that keeps what is written; `drains` says whether the network takes it."""

    def __init__(self, drains: bool) -> None:
        self.drains, self.written = drains, b""

    def write(self, data: bytes) -> None:
        self.written += data

    def get_write_buffer_size(self) -> int:
        return 0 if self.drains else len(self.written)


class _Connection:
    """A connection stand-in: a real websockets Sans-I/O protocol over a `_Transport`."""

    def __init__(self, drains: bool) -> None:
        self.protocol = ServerProtocol(state=ConnectionState.OPEN)
        self.transport = _Transport(drains)


async def test_a_client_that_stops_reading_is_reported_and_the_others_still_get_their_frames():
    """A connection whose unsent data passes the cap is handed to the server to close; readers are unaffected."""
    reported = []
    outgoing = Outgoing(None, on_backlog=reported.append, max_backlog=1000)
    reader, sleeper = _Connection(drains=True), _Connection(drains=False)
    for n in range(3):
        outgoing.add_frame([reader, sleeper], bytes([n]) * 400)
        outgoing.flush()
    assert reported == [sleeper]  # only once its backlog (3 x ~400 bytes) passed 1000
    assert reader.transport.written == sleeper.transport.written
    assert reader.transport.written.count(b"\x82\x7e\x01\x90") == 3  # three binary frames of 400 bytes, in one each


async def test_the_batcher_runs_once_for_every_poke_of_an_interval():
    """Many changes in one interval cost one lobby push; a change during the push arms exactly one more."""
    runs: list[int] = []
    done = asyncio.Event()

    def emit() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            batcher.poke()  # changes left for the next frame
        else:
            done.set()

    batcher = Batcher(0.01, emit)
    for _ in range(100):
        batcher.poke()
    await asyncio.wait_for(done.wait(), 60)
    assert runs == [0, 1]


@pytest.mark.parametrize("size", [0, 1, 125, 126, 400, 65535, 65536, 70000])
def test_frames_are_the_bytes_websockets_would_send(size):
    """A message framed once for all its connections is byte for byte what websockets' own send would write."""
    message = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert frame(message) == Frame(Opcode.BINARY, message).serialize(mask=False, extensions=[])
    connection = _Connection(drains=True)
    write_frames(connection, [frame(message), frame(b"x")])
    reference = ServerProtocol(state=ConnectionState.OPEN)
    reference.send_binary(message)
    reference.send_binary(b"x")
    assert connection.transport.written == b"".join(reference.data_to_send())


def test_frames_follow_what_websockets_queued_and_are_logged_when_it_logs():
    """A pong websockets queued goes out before the frames; with frame logging on, the frames go through it."""
    connection = _Connection(drains=True)
    connection.protocol.send_pong(b"p")
    write_frames(connection, [frame(b"one")])
    assert connection.transport.written == b"\x8a\x01p" + b"\x82\x03one"
    logged = _Connection(drains=True)
    logged.protocol.logger = logging.getLogger("test.frames")
    logged.protocol.debug = True
    write_frames(logged, [frame(b"two"), frame(b"three")])
    assert logged.transport.written == b"\x82\x03two\x82\x05three"
