"""Protocol 2 against a real server: the client folds each per-move message into a full state that equals the
server's own snapshot (`sync`) after every move, for every game, for both players and a spectator."""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import pytest

from gamenight.client.state import ClientState
from gamenight.protocol.codec import encode
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import CreateRoom, Error, Join, MakeMove, Message, Moved, State, Sync, Tick
from gamenight.protocol.vocab import Role, RoomStatus
from tests.peer import Peer
from tests.server.serverproc import ServerProcess

SYNC_IDS = itertools.count(10_000)
COMPARED = (
    "seq",
    "game",
    "status",
    "view",
    "to_move",
    "legal",
    "last_move",
    "moves",
    "movers",
    "result",
    "next_tick_ms",
)


class Folder:
    """A peer whose every message goes through the bundled client's `ClientState`, keeping the folded state per
    seq; `sync` replies are not applied but compared with the folded state of their seq."""

    def __init__(self, peer: Peer, name: str) -> None:
        self.peer = peer
        self.client = ClientState(name)
        self.folded: dict[int, State] = {}
        self.syncs: set[int] = set()
        self.compared = 0
        self.frames_per_seq: dict[int, int] = {}

    async def pump_until(self, done: Any) -> Message:
        """Apply messages in order until one satisfies `done`; sync replies are checked on the way."""
        while True:
            msg = await self.peer.wait(lambda m: True)
            if isinstance(msg, State) and msg.id in self.syncs:
                self.syncs.discard(msg.id)
                self.check(msg)
            else:
                if isinstance(msg, (Moved, Tick)):
                    self.frames_per_seq[msg.seq] = self.frames_per_seq.get(msg.seq, 0) + 1
                self.client.apply(msg)
                room = self.client.room
                if room is not None and room.state is not None:
                    self.folded[room.state.seq] = room.state
            if done(msg):
                return msg

    def check(self, snapshot: State) -> None:
        """The folded state at the snapshot's seq equals it, field by field."""
        folded = self.folded.get(snapshot.seq)
        assert folded is not None, f"no folded state at seq {snapshot.seq}"
        for name in COMPARED:
            assert getattr(folded, name) == getattr(snapshot, name), (name, snapshot.seq)
        self.compared += 1

    async def sync(self, code: str) -> None:
        """Ask for the full state and wait until it was compared (after the wait a `rate_limited` asks for)."""
        assert self.client.room is not None
        while True:
            rid = next(SYNC_IDS)
            self.syncs.add(rid)
            await self.peer.send(Sync(room=code, seq=self.client.room.seq, id=rid))
            reply = await self.pump_until(lambda m, r=rid: m.id == r and m.type in ("state", "error"))
            if isinstance(reply, State):
                return
            assert isinstance(reply, Error) and reply.code == ErrorCode.RATE_LIMITED and reply.retry_after_ms
            await asyncio.sleep(reply.retry_after_ms / 1000)

    @property
    def state(self) -> State:
        """The folded current state."""
        assert self.client.room is not None and self.client.room.state is not None
        return self.client.room.state


async def _folders(url: str, count: int) -> list[Folder]:
    """`count` connected peers, each folding through a ClientState fed its welcome."""
    folders = []
    for i in range(count):
        peer = await Peer.connect(url, f"p{i}")
        folder = Folder(peer, f"p{i}")
        assert peer.welcome is not None
        folder.client.apply(peer.welcome)
        folders.append(folder)
    return folders


async def _seat(folders: list[Folder], game: str, options: dict[str, Any]) -> str:
    """Folder 0 creates the room; the others but the last take seats in order, the last one watches."""
    host = folders[0]
    await host.peer.send(CreateRoom(game=game, options=options, id=1))
    room = await host.pump_until(lambda m: m.type == "room" and m.id == 1)
    code = room.room  # type: ignore[attr-defined]
    host.client.created(room.summary)  # type: ignore[attr-defined]
    *players, watcher = folders
    for seat, folder in enumerate(players):
        await folder.peer.send(Join(room=code, seat=seat, id=2))
        await folder.pump_until(lambda m: m.type == "joined" and m.id == 2)
    await watcher.peer.send(Join(room=code, role=Role.SPECTATOR, id=2))
    await watcher.pump_until(lambda m: m.type == "joined" and m.id == 2)
    for folder in folders:
        if folder.client.room is None or folder.client.room.state is None:
            await folder.pump_until(lambda m: isinstance(m, State))
    return code


@pytest.mark.parametrize("game", ["othello", "pentago", "connect4"])
async def test_folded_turn_game_equals_the_server_snapshot_after_every_move(server_process, game):
    """Each `moved` folds into exactly the state `sync` returns (view, legal for the mover only, moves, result)."""
    proc: ServerProcess = server_process()
    rng = random.Random(f"fold-{game}")
    folders = await _folders(proc.url, 3)
    code = await _seat(folders, game, {})
    players, everyone = folders[:2], folders
    moves = 0
    while folders[0].state.status == RoomStatus.PLAYING:
        (seat,) = folders[0].state.to_move
        mover = players[seat]
        assert mover.state.legal, "the seat to move knows its legal moves"
        assert all(not f.state.legal for f in everyone if f is not mover), "only the mover gets legal"
        seq = mover.state.seq
        move = rng.choice(mover.state.legal)
        while True:  # the test sends faster than the 20 messages/s a connection may: wait when told to
            rid = next(SYNC_IDS)
            await mover.peer.send(MakeMove(room=code, move=move, seq=seq, id=rid))
            reply = await mover.pump_until(lambda m, r=rid: m.id == r)
            if isinstance(reply, Moved):
                break
            assert isinstance(reply, Error) and reply.code == ErrorCode.RATE_LIMITED and reply.retry_after_ms
            await asyncio.sleep(reply.retry_after_ms / 1000)
        assert reply.seq == seq + 1 and reply.move == move, "the mover's copy echoes the move request's id"
        for folder in everyone:
            if folder is not mover:
                await folder.pump_until(lambda m, s=seq: isinstance(m, Moved) and m.seq == s + 1)
            assert folder.frames_per_seq[seq + 1] == 1, "one frame per member per move"
            await folder.sync(code)
        moves += 1
    for folder in everyone:
        assert folder.state.status == RoomStatus.FINISHED and folder.state.result is not None
        assert len(folder.state.moves) == moves
        await folder.sync(code)
        assert folder.compared == moves + 1
    for folder in folders:
        await folder.peer.close()


async def test_folded_tron_equals_the_server_snapshot_after_ticks(server_process):
    """Each `tick` (the last one too) folds into exactly the state `sync` returns at that seq."""
    proc: ServerProcess = server_process()
    rng = random.Random("fold-tron")
    folders = await _folders(proc.url, 3)
    code = await _seat(folders, "tron", {"width": 10, "height": 10, "tick_ms": 200, "countdown_ms": 0})
    while folders[0].state.status != RoomStatus.FINISHED:
        for folder in folders[:2]:
            if folder.state.status == RoomStatus.PLAYING:
                await folder.peer.ws.send(encode(MakeMove(room=code, move=rng.choice("NESW"))))
        for folder in folders:
            if folder.state.status != RoomStatus.FINISHED:
                seq = folder.state.seq
                await folder.pump_until(lambda m, s=seq: isinstance(m, (Tick, State)) and m.seq > s)
                await folder.sync(code)
    for folder in folders:
        if not any(isinstance(m, State) and m.status == RoomStatus.FINISHED for m in folder.peer.seen):
            await folder.pump_until(lambda m: isinstance(m, State) and m.status == RoomStatus.FINISHED)
        last = [m for m in folder.peer.seen if isinstance(m, (Tick, State)) and m.id is None][-2:]
        assert isinstance(last[0], Tick) and isinstance(last[1], State), "the last tick is a tick, then the state"
        assert any(n.kind == "game_over" for n in last[0].events)
        await folder.sync(code)  # the final state too
        assert folder.compared >= 2
        await folder.peer.close()
