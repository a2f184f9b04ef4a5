"""A small scripted protocol client for tests: real websockets, real codec, helpers to wait for replies."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME, from_wire
from gamenight.protocol.identity import Identity
from gamenight.protocol.messages import (
    AddAi,
    Batch,
    CreateRoom,
    Event,
    Hello,
    HelloNonce,
    Join,
    LobbyUpdate,
    Message,
    Moved,
    State,
    Tick,
    TournamentInfo,
    TournamentUpdate,
    Welcome,
    fold,
    fold_tournament,
)
from gamenight.protocol.vocab import PlayerInfo

TIMEOUT = 10.0


def identity_of(key: str) -> Identity:
    """The test identity named by `key`: its private key is sha256(key), so equal keys are the same person."""
    return Identity.from_secret(hashlib.sha256(key.encode()).hexdigest())


class Peer:
    """One test client: sends typed messages, keeps everything it receives, waits for what it expects.

    Protocol 2 sends one `moved` (or `tick`) per change and carries events inside it; so that tests can wait for
    "the state after the move" or "the game_over event" as they happen, the peer also hands out, after each
    `moved`/`tick`/`state` it receives, the events it carries as `event` messages and, for a `moved`/`tick`,
    the full state it folds into (`protocol.messages.fold`, checked against the server's own snapshots in
    tests/server/test_fold.py). These derived messages are not in `seen`, which holds only what arrived. So is the
    whole `tournament` after each `tournament_update` of one it holds (`protocol.messages.fold_tournament`).

    A `batch` frame (a spectator's room traffic, server/fanout.py) is read as the messages it carries, in order:
    they are in `seen`; `frames` holds every frame as it arrived (a batch as one `Batch`).
    """

    _ids = itertools.count(1)

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: list[Message] = []
        self.seen: list[Message] = []  # every message ever received, in order (a batch's messages one by one)
        self.frames: list[Message] = []  # every frame ever received, decoded (a batch as one `Batch`)
        self._batched: list[Message] = []  # the rest of the last batch, not yet handed out
        self.welcome: Welcome | None = None
        self.url = ""  # the address it dialed (what a claiming hello signs)
        self.nonce: HelloNonce | None = None  # the server's first frame: what a hello on this connection signs
        self.positions: dict[str, State] = {}  # each room's full state: the last `state`, with later moves folded in
        self.tournaments: dict[str, TournamentInfo] = {}  # each tournament: the last `tournament`, updates folded in
        self.presence: dict[str, PlayerInfo] = {}  # each name's latest entry in the `lobby` pushes received
        self._derived: list[Message] = []  # events carried inside the last change, then its folded state
        # Read continuously, as a real client does, so unread frames never stall the connection.
        self._frames: asyncio.Queue[bytes | str | None] = asyncio.Queue()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        """Move every frame from the socket to the queue; None marks the end of the connection."""
        try:
            async for frame in self.ws:
                self._frames.put_nowait(frame)
        except ConnectionClosed:
            pass
        finally:
            self._frames.put_nowait(None)

    @classmethod
    async def open(cls, url: str, *, address: str | None = None) -> Peer:
        """Open a connection (from the loopback `address`, e.g. 127.0.0.2, to be another address to the server)
        and read the server's `hello_nonce` (kept as `nonce`); no hello yet."""
        local = {"local_addr": (address, 0)} if address is not None else {}
        ws = await connect(url, max_size=2**20, **local)
        peer = cls(ws)
        peer.url = url
        peer.nonce = await peer.expect("hello_nonce")
        return peer

    @classmethod
    async def connect(
        cls,
        url: str,
        name: str = "tester",
        *,
        address: str | None = None,
        key: str | None = None,
        identity: Identity | None = None,
        **hello: Any,
    ) -> Peer:
        """Open a connection and complete the hello / welcome exchange.

        `identity` claims the name (the nonce signed); `key` is a test's short way to name one: the identity whose
        private key is derived from that text, so the same `key` is the same person (`identity_of`)."""
        peer = await cls.open(url, address=address)
        await peer.send(peer.hello(name, identity or (identity_of(key) if key is not None else None), **hello))
        peer.welcome = await peer.expect("welcome")
        return peer

    def hello(self, name: str, identity: Identity | None, **fields: Any) -> Hello:
        """A hello for this connection, claiming with `identity` (its signature of this connection's nonce)."""
        assert self.nonce is not None
        if identity is not None:
            fields["public_key"] = identity.public_key
            fields.setdefault("url", self.url)
            fields["signature"] = identity.sign(self.nonce.server, fields["url"], self.nonce.nonce)
        return Hello(protocol=PROTOCOL_VERSION, name=name, **fields)

    async def send(self, msg: Message) -> None:
        """Send one message."""
        await self.ws.send(encode(msg))

    async def send_raw(self, data: bytes | str) -> None:
        """Send arbitrary bytes (or text) as they are."""
        await self.ws.send(data)

    async def request(self, msg_cls: type[Message], **fields: Any) -> Message:
        """Send a request with a fresh id and return the first reply echoing that id."""
        rid = next(self._ids)
        await self.send(msg_cls(id=rid, **fields))
        return await self.wait(lambda m: m.id == rid)

    async def _next(self) -> Message:
        """The next message from the server (or one derived from the last, see the class)."""
        if self._derived:
            return self._derived.pop(0)
        if self._batched:
            msg = self._batched.pop(0)
        else:
            frame = await asyncio.wait_for(self._frames.get(), TIMEOUT)
            if frame is None:
                self._frames.put_nowait(None)
                raise ConnectionClosedOK(None, None)
            msg = decode(frame, MAX_SERVER_FRAME)
            self.frames.append(msg)
            if isinstance(msg, Batch):
                msg, *self._batched = msg.messages
        self.seen.append(msg)
        if isinstance(msg, (State, Moved, Tick)):
            self._derived = [Event(room=msg.room, kind=n.kind, seq=msg.seq, data=n.data) for n in msg.events]
        if isinstance(msg, TournamentInfo):
            self.tournaments[msg.tournament] = msg
        elif isinstance(msg, TournamentUpdate) and msg.tournament in self.tournaments:
            self.tournaments[msg.tournament] = whole = fold_tournament(self.tournaments[msg.tournament], msg)
            self._derived.append(whole)
        if isinstance(msg, LobbyUpdate):
            self.presence.update((info.name, info) for info in msg.players)
        if isinstance(msg, State):
            self.positions[msg.room] = msg
        elif isinstance(msg, (Moved, Tick)):
            known = self.positions.get(msg.room)
            if known is not None and msg.seq == known.seq + 1:
                self.positions[msg.room] = folded = fold(known, msg)
                self._derived.append(folded)
        return msg

    async def state_after(self, room: str, seq: int) -> State:
        """The room's full state once its seq passed `seq` (a `state`, or a `moved`/`tick` folded in)."""
        return await self.at(room, seq + 1)

    async def at(self, room: str, seq: int) -> State:
        """The room's full state once it reached `seq` (messages read meanwhile stay buffered for `wait`)."""
        while True:
            position = self.positions.get(room)
            if position is not None and position.seq >= seq:
                return position
            self.inbox.append(await self._next())

    async def player(self, name: str, **where: Any) -> PlayerInfo:
        """`name`'s latest entry in the lobby's pushes once its fields equal `where` (messages read meanwhile stay
        buffered for `wait`)."""
        while True:
            info = self.presence.get(name)
            if info is not None and all(getattr(info, k) == v for k, v in where.items()):
                return info
            self.inbox.append(await self._next())

    async def wait(self, match: Any) -> Message:
        """Return (and remove) the first message, buffered or new, for which `match(msg)` is true."""
        for i, msg in enumerate(self.inbox):
            if match(msg):
                return self.inbox.pop(i)
        while True:
            msg = await self._next()
            if match(msg):
                return msg
            self.inbox.append(msg)

    async def expect(self, type_: str, **where: Any) -> Any:
        """Wait for a message of `type_` whose fields equal `where`."""
        return await self.wait(lambda m: m.type == type_ and all(getattr(m, k) == v for k, v in where.items()))

    def drop(self, type_: str) -> None:
        """Forget buffered messages of one type."""
        self.inbox = [m for m in self.inbox if m.type != type_]

    async def close(self) -> None:
        """Close the connection and stop reading."""
        await self.ws.close()
        await self._reader


async def seat_pair(
    first: Peer, second: Peer, game: str = "othello", options: dict[str, Any] | None = None
) -> tuple[str, State]:
    """`first` creates a room and takes seat 0, `second` seat 1; returns the room code and the first state."""
    room = await first.request(CreateRoom, game=game, options=options or {})
    await first.request(Join, room=room.room, seat=0)
    await second.request(Join, room=room.room, seat=1)
    return room.room, await first.expect("state")


async def ai_has_moved(peer: Peer) -> None:
    """`peer` takes seat 1 of a new small Othello room with a quick AI in seat 0, and waits for the AI's first move:
    a search ran on one of the server's AI workers, and the warm-up of the workers is over."""
    room = await peer.request(CreateRoom, game="othello", options={"size": 6, "ai_ms": 60, "ai_pace_ms": 0})
    await peer.request(Join, room=room.room, seat=1)
    await peer.request(AddAi, room=room.room, seat=0, level=5)
    await peer.wait(lambda m: m.type == "moved" and m.seat == 0)


def raw_message(**fields: Any) -> Message:
    """Build a message from a plain map (handy for wire-level tests)."""
    return from_wire(fields)
