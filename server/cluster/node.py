"""One node of a cluster: a `GameServer` whose rooms may live on other nodes (docs/architecture.md, "A cluster").

The node holding a client's websocket is its edge; the node running a room is its owner. A request naming a room
owned elsewhere is forwarded, as it came, to the owner's channel with the session's identity; the owner keeps a
`RemoteSession` for that session (a `Relay` in the server's connections), so its lobby and rooms treat it as any
other connection, and the frames it is sent (after their records are stored, as always) are published back to
the edge, which writes them to the socket. Rooms owned here take the single server's path unchanged.

This node also: publishes its rooms in the directory (deltas of `Lobby.cluster_changes`, after every decision)
and mirrors everyone's (listed ones join the lobby's listing), renews its room leases and its node key every
second, claims the rooms of nodes whose key expired (lease, then `Store.claim_room`, then `Store.open_room` and
the lobby's restore path), and re-attaches the sessions holding seats there. Every write of a room carries the
epoch this node claimed it under (`Outgoing.fences`): a room someone else claimed meanwhile is refused (`Fenced`)
and let go here, none of that decision's frames sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import secrets
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from redis.exceptions import AuthenticationError, ResponseError
from websockets.asyncio.server import ServerConnection

from gamenight.protocol import ErrorCode, ProtocolError, decode
from gamenight.protocol.messages import (
    Abort,
    Accept,
    AddAi,
    Chat,
    CreateRoom,
    Decline,
    Error,
    Hello,
    Invite,
    Join,
    Leave,
    MakeMove,
    Message,
    Moderate,
    MoreTime,
    Rematch,
    RemoveAi,
    Resign,
    Sync,
    Takeback,
    TakebackDecline,
)
from gamenight.protocol.vocab import Role, RoomSummary
from gamenight.server.cluster.access import shown
from gamenight.server.cluster.bus import DOWN_ERRORS, Bus, connect
from gamenight.server.cluster.coord import (
    BEAT_S,
    NODE_TTL_MS,
    Addresses,
    Directory,
    Entry,
    Keys,
    Leases,
    NodeInfo,
    Registry,
    place,
)
from gamenight.server.cluster.tours import TOURNAMENT_REQUESTS, Tours
from gamenight.server.cluster.trust import Records
from gamenight.server.cluster.wire import join_frames, pack, split_frames, unpack
from gamenight.server.directory import random_code
from gamenight.server.lobby import Lobby
from gamenight.server.outbox import Outbox
from gamenight.server.outgoing import Relay, write_frames
from gamenight.server.records import VOID, Fenced, Moderated, NameClaimed, Record, StoreError
from gamenight.server.room import Refusal
from gamenight.server.sessions import Client, Proof, hash_token
from gamenight.server.text import clean_name, name_key

if TYPE_CHECKING:
    from gamenight.server.app import GameServer

log = logging.getLogger("gamenight.server.cluster")

ROOM_REQUESTS = (
    Join,
    Leave,
    MakeMove,
    Chat,
    Resign,
    Rematch,
    MoreTime,
    Takeback,
    TakebackDecline,
    Abort,
    AddAi,
    RemoveAi,
    Sync,
    Invite,
)
"""Requests about one room: carried out by the room's owner, wherever the client is connected."""
RESERVED_CODES = 4  # room codes this node holds ready (leased and in the directory) for the rooms it opens next
CODE_WAIT_S = 5.0  # a new room waits this long for a reserved code (Redis away), then `unavailable`
OWNER_WAIT_S = 15.0  # a request for a room whose owner died waits this long for the new owner, then `unavailable`
READY_TIMEOUT_S = 10.0  # a node that cannot reach Redis at start-up gives up after this long
TOKEN_TTL_S = 7 * 24 * 3600  # how long another node accepts a resume token this node gave out
WHERE_TTL_S = 24 * 3600  # how long a session's edge is remembered (a hint: a wrong one is corrected)
_UNLIST = """
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and cjson.decode(v)['e'] == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
"""
_REPLACE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 0
"""
MOVING_TEXT = "room {code} is moving to another server node; try again in a moment"
NO_CODE_TEXT = "the cluster's directory cannot be reached, so no room can be opened now; try again in a moment"
ROOM_OPENERS = (CreateRoom, Accept)
"""Requests that may open a room (an accepted challenge opens its game's room on the challenge's node)."""


def advertised(nodes: Iterable[NodeInfo]) -> list[str]:
    """The live nodes' addresses clients can reconnect to, sorted (a node listening on every interface without a
    `--public-url` advertises ws://0.0.0.0:PORT, which names no machine: left out)."""
    wildcard = ("ws://0.0.0.0:", "wss://0.0.0.0:", "ws://[::]:", "wss://[::]:")
    return sorted(info.url for info in nodes if info.url and not info.url.startswith(wildcard))


class RemoteSession(Relay):
    """A session connected to another node (its edge), as this owner's server sees it: frames go to the edge."""

    def __init__(self, node: ClusterNode, edge: str, session: str) -> None:
        self.node, self.edge, self.session = node, edge, session

    def relay(self, frames: list[bytes]) -> None:
        """Publish the frames to the edge, which writes them to the session's socket in one go."""
        header = {"t": "f", "s": self.session, "o": self.node.id}
        self.node.bus.publish(self.node.keys.inbox(self.edge), pack(header, join_frames(frames)), reach=True)

    async def ping(self) -> None:
        """The edge measures its own connections' lag (the server's lag probe skips relays)."""
        raise RuntimeError("a remote session is not pinged by its owner")

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """The session resumed on another connection: the edge closes the old socket."""
        header = {"t": "x", "s": self.session, "o": self.node.id, "reason": reason}
        self.node.bus.publish(self.node.keys.inbox(self.edge), pack(header))


class ClusterNode:
    """A server's part in a cluster: routing, relays, directory, leases, heartbeat and failover (the server's
    `NodeHooks`, server/hooks.py)."""

    restores_rooms = False  # each stored room is restored by the node that claims it

    def __init__(self, server: GameServer, url: str) -> None:
        self.server = server
        self.lobby = server.lobby
        config = server.config
        self.id = config.node_id or f"{config.host}-{os.getpid()}-{secrets.token_hex(3)}"
        self.keys = Keys()
        if not config.cluster_secret:
            raise ValueError("a cluster node needs the cluster secret (ServerConfig.cluster_secret)")
        self.records = Records(config.cluster_secret)  # what grants identity in Redis is signed (trust.py)
        self.redis = connect(url, config.redis_password, config.redis_ca)
        self.url = shown(url)  # for messages: no password
        self.registry = Registry(self.redis, self.keys, self.id, "")
        self.leases = Leases(self.redis, self.keys, self.id)
        self.addresses = Addresses(self.redis, self.keys, self.registry.run)
        self.counted: dict[str, int] = {}  # client address -> its connections here counted in Redis
        self.directory = Directory(self.redis, self.keys, self.id, self._directory_changed, self.records)
        channels = [self.keys.inbox(self.id), self.keys.directory, self.keys.everyone]
        self.bus = Bus(
            self.redis,
            channels,
            self._on_message,
            self._on_connected,
            inboxes=self.keys.inbox(""),
            records=self.records,
        )
        self.epochs: dict[str, int] = {}  # rooms this node owns -> the store epoch it writes them under
        self.remotes: dict[str, RemoteSession] = {}  # sessions connected elsewhere that use rooms owned here
        self.routes: dict[str, set[str]] = {}  # sessions connected here -> rooms of other nodes they used
        self.watching: dict[str, set[str]] = {}  # rooms of other nodes -> sessions here that asked to watch them
        self.claiming: set[str] = set()
        self.boot: bytes | str | None = None  # Redis's boot marker as last read (it changes when Redis restarts empty)
        self.settle_until = 0.0  # no takeovers before this (loop time): after a Redis restart, nodes re-register
        self.dead: set[str] = set()  # nodes whose key expired, until their rooms and sessions are cleared
        self.vanished: dict[str, float] = {}  # rooms missing from the directory re-read after a reconnect -> when
        self.claims = 0  # rooms taken over from dead nodes (or found ownerless at start)
        # Codes leased and listed (with no summary) before any room uses them: a room is routable, and another
        # node can take it over, from the moment its creator hears of it (see `_reserve`).
        self.reserved: list[str] = []
        self._reserving: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.lobby.listing.cluster_changes = {}
        self.lobby.directory.code_taken = lambda code: code in self.directory.entries
        self.lobby.directory.take_code = self._take_code
        server.outgoing.fences = self._fences
        self.tag = _tag(self.id)
        self.lobby.challenges.tag = self.tag + "-"
        self._unlist = self.redis.register_script(_UNLIST)
        self._replace = self.redis.register_script(_REPLACE)  # a forged claim, by a true one (`_claim_name`)
        self._rate_from_the_store()
        self.tours = Tours(self)  # the cluster's tournaments (server/cluster/tours.py)

    def _rate_from_the_store(self) -> None:
        """Rated games on any node see every node's results: the ratings are read again from the shared store
        just before a game is rated (each node's book was loaded at its start; others rated games since)."""
        book, store = self.lobby.ratings, self.server.store

        def refresh() -> None:
            if store is not None:
                with contextlib.suppress(StoreError):
                    book.load(store.ratings())

        book.refresh = refresh

    # -- lifecycle ----------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Join the cluster: subscribe, read the directory, beat once, take the rooms nobody owns."""
        self.registry.url = self.server.config.public_url or f"ws://{self.server.config.host}:{self.server.port}"
        await self._log_in()
        self.bus.start()
        try:
            await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT_S)
        except TimeoutError:
            await self.bus.stop()
            raise OSError(f"cannot reach redis at {self.url}") from None
        await self._beat()
        await self._fresh_start()
        await self._present()
        await self.tours.adopt_orphans()  # before the rooms: a tournament's node takes its games' rooms
        await self._adopt_orphans()
        await self._reserve()
        self._tasks.append(asyncio.get_running_loop().create_task(self._beats()))
        log.info("node %s joined the cluster (%d rooms known)", self.id, len(self.directory.entries))

    async def _log_in(self) -> None:
        """Refuse to start (OSError, one line) if Redis refuses this node: a wrong or missing password, an ACL user
        without the rights, a TLS certificate that does not verify. Redis not answering yet is left to the bus."""
        try:
            await self.redis.ping()
        except (AuthenticationError, ResponseError) as exc:  # (before DOWN_ERRORS: AuthenticationError is one)
            await self.redis.aclose()
            raise OSError(f"redis at {self.url} refused this node: {exc} (check its user and password)") from None
        except DOWN_ERRORS as exc:
            if _tls_refused(exc):
                await self.redis.aclose()
                raise OSError(f"redis at {self.url}: its TLS certificate does not verify: {exc}") from None

    async def stop(self) -> None:
        """Leave cleanly: what is queued goes out, leases and the node key go now (others take the rooms at once)."""
        tasks = [*self._tasks, *([self._reserving] if self._reserving is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            await asyncio.wait_for(self.bus.drain(), 2.0)
            for code in list(self.epochs):
                await self.leases.release(code)
            for code in self.reserved:
                await self.directory.delete(code)
                await self.leases.release(code)
            await self.tours.leave()
            await self.registry.leave()
        except (*DOWN_ERRORS, TimeoutError):
            log.warning("could not leave the cluster cleanly; others take this node's rooms when its keys expire")
        await self.bus.stop()
        await self.redis.aclose()

    def health(self) -> str:
        """Lines for /healthz: this node, whether Redis is reachable, the live nodes it knows, its rooms."""
        live = " ".join(sorted(self.registry.live))
        redis = "connected" if self.bus.connected else "reconnecting"
        return f"node {self.id}: redis {redis}; live nodes: {live}; rooms owned: {len(self.epochs)}\n"

    # -- the edge: requests from this node's connections ----------------------------------------------------
    async def receive(self, ws: ServerConnection, session: str | None, frame: Any) -> str | None:
        """Handle one frame from a connection here: forwarded to the owner when it names a room owned elsewhere."""
        try:
            msg = decode(frame)
        except ProtocolError:
            return self.server.receive(ws, session, frame)  # the usual error reply
        if session is None:
            await self._before_hello(msg, self.server.proof(ws))
            return self.server.handle_message(ws, session, msg)
        if await self._forwarded(session, msg, frame):
            return session
        if isinstance(msg, CreateRoom | Accept):
            return await self._open(ws, session, msg)
        if isinstance(msg, Moderate) and msg.action == "close_room" and msg.room:
            return await self._room_request(ws, session, msg, frame)  # the room's owner closes it
        if not isinstance(msg, ROOM_REQUESTS):
            return self.server.handle_message(ws, session, msg)
        return await self._room_request(ws, session, msg, frame)

    async def _before_hello(self, msg: Message, proof: Proof | None) -> None:
        """A hello's token or claimed name may be another node's: learn it from the cluster first (a claim only for
        a hello whose signature holds, so nobody takes a name in the cluster without its key)."""
        if isinstance(msg, Hello) and msg.resume is not None:
            await self._known_token(msg.resume)
            here = self.lobby.sessions.by_token.get(hash_token(msg.resume))
            if here is not None and here.remote:  # present here as another node's: it connects here now
                here.connected = here.remote = False
        elif isinstance(msg, Hello) and msg.public_key is not None and proof is not None:
            with contextlib.suppress(Refusal):  # a bad signature: the lobby refuses the hello itself
                self.lobby.sessions.proved_key(msg, proof)
                await self._claim_name(msg)

    async def _forwarded(self, session: str, msg: Message, frame: Any) -> bool:
        """True if a lobby request goes to another node: a new room placed there, an answer to a challenge made
        there, a tournament run there."""
        if isinstance(msg, CreateRoom):
            target = place(self.registry.live, self.id, len(self.lobby.rooms))
            if target == self.id:
                return False
            self._forward(target, session, msg, frame)
            return True
        if isinstance(msg, Accept | Decline) and not msg.challenge.startswith(self.lobby.challenges.tag):
            holder = next((n for n in self.registry.live if _tag(n) + "-" == msg.challenge[:7]), None)
            if holder is not None and holder != self.id:
                self._forward(holder, session, msg, frame)
                return True
        if isinstance(msg, Moderate) and msg.action == "cancel_tournament" and msg.tournament:
            return await self.tours.route(session, msg, frame)  # the tournament's node calls it off
        return isinstance(msg, TOURNAMENT_REQUESTS) and await self.tours.route(session, msg, frame)

    async def _room_request(self, ws: ServerConnection, session: str, msg: Any, frame: Any) -> str | None:
        """A request for one room: handled here if this node owns it, else forwarded to its owner."""
        code = msg.room.strip().upper()
        owner = await self._owner(code)
        if owner is None or owner == self.id:
            return self.server.handle_message(ws, session, msg)
        if owner == "":
            error = Error(code=ErrorCode.UNAVAILABLE, message=MOVING_TEXT.format(code=code), id=msg.id, room=code)
            self.server.outgoing.add_frame([ws], _encode(error))
            return session
        self.routes.setdefault(session, set()).add(code)
        if isinstance(msg, Join | Leave):
            self._watch(code, session, isinstance(msg, Join) and msg.role == Role.SPECTATOR)
        self._forward(owner, session, msg, frame)
        return session

    def _watch(self, code: str, session: str, watching: bool) -> None:
        """Note whether a session here watches a room owned elsewhere (so that it goes on watching after a takeover)."""
        if watching:
            self.watching.setdefault(code, set()).add(session)
        elif (sessions := self.watching.get(code)) is not None:
            sessions.discard(session)
            if not sessions:
                del self.watching[code]

    async def _open(self, ws: ServerConnection, session: str, msg: CreateRoom | Accept) -> str | None:
        """Carry out a request that may open a room here, once a reserved code is ready for it (or refuse it)."""
        if not await self._code_ready():
            error = Error(code=ErrorCode.UNAVAILABLE, message=NO_CODE_TEXT, id=msg.id)
            self.server.outgoing.add_frame([ws], _encode(error))
            return session
        return self.server.handle_message(ws, session, msg)

    async def _owner(self, code: str) -> str | None:
        """Who runs the room now: this node, another live node, None (no such room), "" (its owner died and
        nobody took it over within OWNER_WAIT_S). Waits while the room is being taken over."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OWNER_WAIT_S
        while True:
            if code in self.lobby.rooms:
                return self.id
            owner = self.directory.owner(code)
            if owner is None:
                since = self.vanished.get(code)
                if since is None or loop.time() - since > OWNER_WAIT_S:
                    return None  # no such room (closed, or never was)
                # Gone from the directory with Redis's restart: its owner is about to publish it again.
            elif owner != self.id and owner in self.registry.live:
                return owner
            if loop.time() > deadline:
                return ""
            await asyncio.sleep(0.05)

    def _forward(self, owner: str, session: str, msg: Message, frame: Any) -> None:
        """Publish a request to the owner, with who sent it (the owner trusts its nodes, not the client)."""
        client = self.lobby.clients[session]
        body = frame if isinstance(frame, bytes) else _encode(msg)
        header = {"t": "m", "e": self.id, "s": session, **_identity(client)}
        if isinstance(msg, ROOM_REQUESTS) or (isinstance(msg, Moderate) and msg.room):
            header["r"] = (msg.room or "").strip().upper()
        elif isinstance(msg, CreateRoom):
            header["r"] = ""
        self.bus.publish(self.keys.inbox(owner), pack(header, body), reach=True)

    async def _reroute(self, data: bytes) -> None:
        """A request held for a node that died before it was subscribed to receive it (so never carried out):
        sent on to the room's new owner (or, for a new room, to the node placement picks now)."""
        header, body = unpack(data)
        if "tr" in header:  # a tournament request
            await self.tours.reroute(data)
            return
        session, code = str(header.get("s")), header.get("r")
        ws = self.server.connections.get(session)
        if ws is None or isinstance(ws, Relay) or not isinstance(code, str):
            return  # the client left, or a challenge answer (its challenge died with the node)
        try:
            msg = decode(body)
        except ProtocolError:
            return
        target = place(self.registry.live, self.id, len(self.lobby.rooms)) if not code else await self._owner(code)
        if target == self.id:
            self.server.handle_message(ws, session, msg)
        elif target:
            self.bus.publish(self.keys.inbox(target), data, reach=True)

    def welcomed(self, client: Client, resumed: bool) -> None:
        """A hello succeeded here: the token works on every node, and owners holding its seats attach them here."""
        client.remote = False
        old = self.remotes.pop(client.session, None)
        if old is not None:
            self.bus.publish(self.keys.inbox(old.edge), pack({"t": "x", "s": client.session, "o": self.id}))
        token_key, where_key = self.keys.token(client.token_hash), self.keys.where(client.session)
        identity = self.records.seal(token_key, {"name": client.name, "claimed": client.claimed, "bot": client.bot})
        header = {"t": "h", "e": self.id, "s": client.session, **_identity(client, self.lobby)}
        online = self.records.seal(self._online(client.session), header)

        async def note() -> None:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(token_key, identity, ex=TOKEN_TTL_S)
                pipe.set(where_key, self.id, ex=WHERE_TTL_S)
                pipe.hset(self.keys.online, client.session, online)
                await pipe.execute()

        self.bus.call(note)
        self.bus.publish(self.keys.everyone, pack(header))

    async def admit(self, ip: str) -> bool | None:
        """A new connection from `ip`: False if the address has the per-address cap of connections open over the
        whole cluster already; True if admitted and counted; None if admitted uncounted (no cap, or Redis away:
        then this node's own cap is all that holds). Each counted connection is `depart`ed when it closes."""
        cap = self.server.config.max_connections_per_ip
        if not cap or not ip or not self.bus.connected:
            return None
        runs = [info.run for info in self.registry.live.values()]
        try:
            admitted = await self.addresses.admit(ip, cap, runs)
        except DOWN_ERRORS as exc:
            log.debug("connection from %s not counted: redis away (%s)", ip, exc)
            return None
        if admitted:
            self.counted[ip] = self.counted.get(ip, 0) + 1
        return admitted

    def depart(self, ip: str) -> None:
        """A counted connection from `ip` closed."""
        left = self.counted.get(ip, 0) - 1
        if left > 0:
            self.counted[ip] = left
        else:
            self.counted.pop(ip, None)
        self.bus.call(functools.partial(self.addresses.depart, ip))

    def disconnected(self, session: str) -> None:
        """A connection here closed: the owners of rooms it used elsewhere apply their seat policies."""
        for code in self.routes.pop(session, ()):
            self._watch(code, session, False)
        self.bus.publish(self.keys.everyone, pack({"t": "g", "e": self.id, "s": session}))
        self.bus.call(functools.partial(self._offline, session))

    def _online(self, session: str) -> str:
        """Where a connected session's entry is stored (what its signature is bound to)."""
        return f"{self.keys.online}/{session}"

    async def _offline(self, session: str) -> None:
        await self._unlist(keys=[self.keys.online], args=[session, self.id])

    def routed(self, session: str) -> bool:
        """True if the session uses rooms of other nodes (its connection is then never idle-closed)."""
        return bool(self.routes.get(session))

    async def _claim_name(self, msg: Hello) -> None:
        """Before a hello with a key: the name's claim as the cluster knows it (the store, then Redis as the
        arbiter of two first claims at once), so every node holds a name for the same key."""
        name = clean_name(msg.name)
        key = name_key(name)
        if key in self.lobby.sessions.claims or msg.public_key is None:
            return
        if self.server.store is not None:
            with contextlib.suppress(StoreError):  # unreadable now: Redis still arbitrates
                self.lobby.sessions.load_claims(self.server.store.claimed_names())
        if key in self.lobby.sessions.claims:
            return
        where = f"{self.keys.claims}/{key}"
        first = {"name": name, "key_hash": "", "public_key": msg.public_key.lower(), "bot": msg.bot}
        try:
            if await self.redis.hsetnx(self.keys.claims, key, self.records.seal(where, first)):
                return  # this hello claims it: the lobby makes and stores the claim as usual
            raw = await self.redis.hget(self.keys.claims, key)
        except DOWN_ERRORS:
            return
        found = self.records.open(where, raw)
        if found is None:  # forged or moved here (logged): this hello's claim takes its place, if nobody's did
            with contextlib.suppress(*DOWN_ERRORS):
                await self._replace(keys=[self.keys.claims], args=[key, raw or b"", self.records.seal(where, first)])
            return
        first = found
        self.lobby.sessions.load_claims(
            [
                NameClaimed(
                    key,
                    str(first["name"]),
                    str(first["key_hash"]),
                    bool(first["bot"]),
                    str(first.get("public_key", "")),
                )
            ]
        )

    async def _known_token(self, token: str) -> None:
        """A resume token this node does not know: if another node gave it out, the session becomes known here."""
        token_hash = hash_token(token)
        if token_hash in self.lobby.sessions.by_token:
            return
        try:
            raw = await self.redis.get(self.keys.token(token_hash))
        except DOWN_ERRORS:
            return  # answered as an unknown token; the client may try again
        identity = self.records.open(self.keys.token(token_hash), raw)
        if identity is None:
            return  # none, or forged (logged): an unknown token
        try:
            self.lobby.sessions.adopt(
                token_hash, str(identity["name"]), bool(identity["claimed"]), bool(identity["bot"])
            )
        except (ValueError, KeyError, TypeError):
            log.warning("a broken token record in redis; ignored")

    # -- the bus ------------------------------------------------------------------------------------------------
    def _on_message(self, channel: str, data: bytes) -> None:
        """One message from Redis (on the bus listener's task, in the order Redis delivered them)."""
        if channel == self.keys.directory:
            self.directory.apply(data)
            return
        if channel == self.tours.keys.directory:
            self.tours.directory.apply(data)
            return
        header, body = unpack(data)
        kind = header.get("t")
        if kind == "f":
            self._frames_for(header, body)
        elif kind == "m":
            self._request(header, body)
        elif kind == "x":
            self._kicked(header)
        elif kind == "tg":  # a tournament's node asks for the room of one of its games
            self.tours.hand_over(header)
        elif header.get("e") == self.id:
            return  # this node's own broadcast
        elif kind == "h":
            self._back(header)
        elif kind == "g":
            self._gone(str(header.get("s")), str(header.get("e")))
        elif kind == "r":
            self._resync(str(header.get("e")))
        elif kind == "a":
            self._moderated(header)
        elif kind == "z":  # a node (re)started: nobody is connected to it yet
            edge = str(header.get("e"))
            for session in [s for s, r in self.remotes.items() if r.edge == edge]:
                self._gone(session, edge)

    def _frames_for(self, header: dict[str, Any], body: bytes) -> None:
        """Frames an owner sends to a session connected here: written to its socket (or the owner learns it left)."""
        session = str(header.get("s"))
        ws = self.server.connections.get(session)
        if ws is None or isinstance(ws, Relay):
            owner = str(header.get("o"))
            self.bus.publish(self.keys.inbox(owner), pack({"t": "g", "e": self.id, "s": session}))
            return
        unsent = write_frames(ws, split_frames(body))
        backlog = self.server.config.frame_limits.max_backlog
        if backlog and unsent > backlog:
            self.server.not_reading(ws)

    def _kicked(self, header: dict[str, Any]) -> None:
        """The session resumed on another node: its connection here closes, as on a single server."""
        ws = self.server.connections.get(str(header.get("s")))
        if ws is not None and not isinstance(ws, Relay):
            self.server.spawn(self.server.close_connection(ws, 1000, "resumed on another connection"))

    def moderated(self, action: Moderated) -> None:
        """An admin's action is stored: every other node carries it out on its own connections (`_moderated`)."""
        fields = {"at": action.at, "admin": action.admin, "action": action.action, "target": action.target}
        sanction = {"reason": action.reason, "kind": action.kind, "key": action.key, "until": action.until}
        self.bus.publish(self.keys.everyone, pack({"t": "a", "e": self.id, **fields, **sanction}))

    def _moderated(self, header: dict[str, Any]) -> None:
        """Another node's admin acted (stored there): its ban or mute holds here, a kick or ban closes the sessions
        connected here that it covers, a void's ratings are read again. The bus's messages are signed by the
        cluster's secret (server/cluster/trust.py), so only a node sends this."""
        try:
            action = Moderated(
                at=float(header["at"]),
                admin=str(header["admin"]),
                action=str(header["action"]),
                target=str(header["target"]),
                reason=str(header["reason"]),
                kind=None if header.get("kind") is None else str(header["kind"]),
                key=None if header.get("key") is None else str(header["key"]),
                until=None if header.get("until") is None else float(header["until"]),
            )
        except (KeyError, TypeError, ValueError):
            log.warning("a moderation message from node %s could not be read", header.get("e"))
            return
        if action.action == VOID:
            with contextlib.suppress(StoreError):
                self.server.reload_ratings()
        self.server.deliver(self.lobby.moderation.carry_out(action))

    def _request(self, header: dict[str, Any], body: bytes) -> None:
        """A request an edge forwarded for a room owned here (or a new room placed here)."""
        session, edge = str(header.get("s")), str(header.get("e"))
        remote = self._attach(session, edge, header)
        try:
            msg = decode(body)
        except ProtocolError:
            return  # the edge decoded it already; a node of another version: nothing sensible to answer
        if isinstance(msg, ROOM_OPENERS) and not self.reserved:
            self.server.spawn(self._open(cast(ServerConnection, remote), session, msg))
            return
        self.server.handle_message(cast(ServerConnection, remote), session, msg)

    def _attach(self, session: str, edge: str, identity: dict[str, Any]) -> RemoteSession:
        """The session (connected at `edge`) as this node's server knows it: a relay in its connections."""
        remote = self.remotes.get(session)
        if remote is None or remote.edge != edge:
            remote = self.remotes[session] = RemoteSession(self, edge, session)
        current: object = self.server.connections.get(session)
        if current is not None and current is not remote:
            self.server.spawn(
                self.server.close_connection(cast(ServerConnection, current), 1000, "resumed on another connection")
            )
        self.server.connections[session] = cast(ServerConnection, remote)
        accepts = identity.get("a")
        claim_hash, public_key, name = identity.get("k"), identity.get("p", ""), str(identity.get("n", "player"))
        if isinstance(claim_hash, str) and name_key(name) not in self.lobby.sessions.claims:  # claimed on another node
            claim = NameClaimed(name_key(name), name, claim_hash, bool(identity.get("b")), str(public_key))
            self.lobby.sessions.load_claims([claim])
        self.lobby.sessions.attach(
            session,
            str(identity.get("n", "player")),
            str(identity.get("h", "")),
            bool(identity.get("b")),
            bool(identity.get("c")),
            str(identity.get("ip", "")),
            tuple(str(g) for g in accepts) if isinstance(accepts, list) else None,
        )
        return remote

    def _back(self, header: dict[str, Any]) -> None:
        """A session said hello on another node: present here too (players, challenges), and the seats it holds
        in rooms owned here go to it there."""
        session, edge = str(header.get("s")), str(header.get("e"))
        self._attach(session, edge, header)
        client = self.lobby.clients.get(session)
        if client is None:
            return
        out = self.lobby.reattach(session, self.server.clock.now()) if client.rooms else Outbox()
        self.lobby.presence.changed(client.name)  # this node's lobby watchers see the arrival (in their next push)
        self.server.deliver(out)

    def _gone(self, session: str, edge: str) -> None:
        """A session's connection at `edge` closed: as a disconnect here (if it still lives there)."""
        remote = self.remotes.get(session)
        if remote is None or remote.edge != edge:
            return
        del self.remotes[session]
        current: object = self.server.connections.get(session)
        if current is remote:
            del self.server.connections[session]
            self.server.deliver(self.lobby.disconnect(session, self.server.clock.now()))

    def _resync(self, edge: str) -> None:
        """An edge lost Redis for a while (frames to it may be lost): its sessions get fresh snapshots."""
        self._snapshots({s for s, r in self.remotes.items() if r.edge == edge})

    def _snapshots(self, sessions: set[str]) -> None:
        """Send each of these sessions the full state of every room owned here that it is in."""
        out = Outbox()
        for code in list(self.epochs):
            room = self.lobby.rooms.get(code)
            if room is None or room.state is None:
                continue
            for session in room.audience() & sessions:
                out.send({session}, room.snapshot(viewer=session))
        self.server.deliver(out)

    async def _on_connected(self, again: bool) -> None:
        """Subscribed (again): say this node lives, take its leases back, publish its rooms, re-read the directory.

        After a reconnect, a room whose lease another node took meanwhile is not ours any more (dropped here), and
        everyone in this node's rooms gets a fresh snapshot: frames published while Redis was away may be lost.
        """
        if again:
            self.settle_until = asyncio.get_running_loop().time() + NODE_TTL_MS / 1000
            await self._beat()
            for code in list(self.epochs):
                if not await self.leases.acquire(code):
                    self.let_go(code, "its lease was taken while redis was away")
            for code in list(self.epochs):
                await self.directory.put(code, self._summary(code), self.lobby.directory.hosts.get(code))
            for code in list(self.reserved):
                if not await self.leases.acquire(code) or not await self.directory.put(code, None):
                    self.reserved.remove(code)
            await self.addresses.restore(self.counted)  # (Redis may have come back empty) this run's true counts
        await self.tours.connected(again)  # before the rooms' directory: which rooms are tournaments' games
        known = set(self.directory.entries)
        await self.directory.load()
        now = asyncio.get_running_loop().time()
        self.vanished = {c: t for c, t in self.vanished.items() if now - t <= OWNER_WAIT_S}
        self.vanished.update(dict.fromkeys(known - set(self.directory.entries), now))
        self._ready.set()
        if again:
            self._snapshots(set(self.remotes))
            self.bus.publish(self.keys.everyone, pack({"t": "r", "e": self.id}))

    # -- room codes -------------------------------------------------------------------------------------------
    def _take_code(self) -> str | None:
        """The code for a room opened now (the lobby's `take_code`): a reserved one, and more reserved meanwhile."""
        code = self.reserved.pop(0) if self.reserved else None
        if self._reserving is None and not self.server.closing:
            self._reserving = asyncio.get_running_loop().create_task(self._reserve())
        return code

    async def _code_ready(self) -> bool:
        """Wait (up to CODE_WAIT_S) until a reserved code is there for a room opened here."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CODE_WAIT_S
        while not self.reserved:
            if self._reserving is None:
                self._reserving = loop.create_task(self._reserve())
            if loop.time() > deadline:
                return False
            await asyncio.wait({self._reserving}, timeout=max(0.0, deadline - loop.time()))
            if not self.reserved:
                await asyncio.sleep(0.05)  # Redis is away: try again shortly
        return True

    async def _reserve(self) -> None:
        """Hold RESERVED_CODES codes ready: each leased to this node and listed in the directory without a summary.

        A room's creator hears of it (its `created`, after its record is stored) only once its code is in the
        directory under this node: if the node dies a moment later, the room is found, claimed and restored
        like any other. A reserved code no room used is dropped by whoever claims it (no such room is stored).
        """
        try:
            while len(self.reserved) < RESERVED_CODES and not self.server.closing:
                code = random_code()
                if code in self.directory.entries or code in self.lobby.rooms or code in self.lobby.directory.offline:
                    continue
                if not await self.leases.acquire(code):
                    continue
                if await self.directory.put(code, None):
                    self.reserved.append(code)
                else:
                    await self.leases.release(code)
        except DOWN_ERRORS as exc:
            log.debug("room codes not reserved: redis away (%s)", exc)
        finally:
            self._reserving = None

    # -- the directory ----------------------------------------------------------------------------------------
    def _directory_changed(self, code: str, before: Entry | None, after: Entry | None) -> None:
        """A room of the cluster appeared, changed owner or summary, or went: the lobby's listing follows."""
        if after is not None and after.owner != self.id and code in self.epochs:
            self.let_go(code, f"node {after.owner} owns it now")
        if before is not None and after is not None and before.owner != after.owner and code in self.watching:
            self._watch_again(code, after.owner)
        if after is not None and after.owner != self.id and after.host is not None:
            self.lobby.directory.remote_hosts[code] = after.host
        else:
            self.lobby.directory.remote_hosts.pop(code, None)
        if after is None or after.owner == self.id:
            self.lobby.listing.remote_room(code, None)
            self._poke()
            return
        summary = None
        if after.summary is not None:
            try:
                summary = RoomSummary.from_plain(after.summary)
            except Exception:
                log.warning("a broken summary of room %s in the directory; not listed", code)
        self.lobby.listing.remote_room(code, summary)
        self._poke()

    def _watch_again(self, code: str, owner: str) -> None:
        """A room watched from here was taken over (spectators are not stored, so the new owner does not know
        them): each of its spectators connected here joins it again as a spectator, and gets its state."""
        for session in sorted(self.watching.pop(code, ())):
            ws = self.server.connections.get(session)
            if ws is None or isinstance(ws, Relay):
                continue
            msg = Join(room=code, role=Role.SPECTATOR)
            if owner == self.id:
                self.server.handle_message(ws, session, msg)
            else:
                self._watch(code, session, True)
                self._forward(owner, session, msg, _encode(msg))

    def _poke(self) -> None:
        """The lobby's watchers here get the change in their next `lobby` push."""
        if self.lobby.listing.pending() and not self.server.closing:
            self.server.lobby_pushes.poke()

    def publish_changes(self) -> None:
        """After a decision: publish the directory entries of this node's rooms that changed (in bus order)."""
        self.tours.publish()  # a tournament's entry (naming its new rooms) before the rooms' own entries
        changes = self.lobby.listing.cluster_changes
        if not changes:
            return
        codes = list(changes)
        changes.clear()
        for code in codes:
            if code in self.lobby.rooms:
                summary = self._summary(code)
                new = code not in self.epochs
                if new:
                    self.epochs[code] = 0  # a new room: its stored epoch is 0 until someone claims it
                self.bus.call(functools.partial(self._put, code, summary, new))
            elif code in self.epochs:
                del self.epochs[code]
                self.bus.call(functools.partial(self._remove, code))

    async def _put(self, code: str, summary: dict[str, Any] | None, new: bool) -> None:
        if new and not await self.leases.acquire(code):
            log.error("room code %s is leased by another node; this node's room of that code is dropped", code)
            self.let_go(code, "code collision")
            return
        if not await self.directory.put(code, summary, self.lobby.directory.hosts.get(code)) and code in self.epochs:
            self.let_go(code, "its lease is another node's")

    async def _remove(self, code: str) -> None:
        await self.directory.delete(code)
        await self.leases.release(code)

    def _summary(self, code: str) -> dict[str, Any] | None:
        """A room's directory summary: its lobby summary while it is listed, else none (still routable)."""
        room = self.lobby.rooms.get(code)
        if room is None or not self.lobby.listing.offered(room):
            return None
        return self.lobby.listing.summary(room).to_plain()

    # -- ownership ----------------------------------------------------------------------------------------------
    def _fences(self, records: list[Record]) -> dict[str, int]:
        """The epochs a batch of records is written under: every room of the batch this node owns."""
        fences = {}
        for record in records:
            code = getattr(record, "code", None)
            if isinstance(code, str) and code in self.epochs:
                fences[code] = self.epochs[code]
        return fences

    def fenced(self, records: list[Record], exc: Exception | None) -> bool:
        """A write refused because another node claimed the room: let it go here (True), nothing else to do."""
        if not isinstance(exc, Fenced):
            return False
        self.tours.fenced(records)
        for code in {getattr(r, "code", None) for r in records} - {None}:
            if isinstance(code, str) and code in self.epochs:
                self.let_go(code, "another node claimed it (fenced write)")
        return True

    def let_go(self, code: str, why: str) -> None:
        """This node does not own the room any more: stop its timers and forget it (nothing written, nothing sent)."""
        log.warning("room %s let go: %s", code, why)
        self.epochs.pop(code, None)
        self.lobby.drop_room(code)
        self.server.timers.forget(code)

    async def _beat(self) -> None:
        """Renew this node's key (with its counts) and its leases; read who is alive."""
        connections = sum(1 for ws in self.server.connections.values() if not isinstance(ws, Relay))
        await self.registry.beat(len(self.lobby.rooms), connections)
        for code in await self.leases.renew([*self.epochs, *self.reserved]):
            if code in self.epochs:
                self.let_go(code, "its lease is another node's")
            elif code in self.reserved:
                self.reserved.remove(code)
        await self.tours.beat()
        live, self.dead = await self.registry.refresh()
        self.lobby.nodes = advertised(live.values())
        elsewhere = sum(info.connections for node, info in live.items() if node != self.id)
        if elsewhere != self.lobby.listing.online_elsewhere:
            self.lobby.listing.online_elsewhere, self.lobby.listing.counts_changed = elsewhere, True
            self._poke()
        await self._boot_marker()

    async def _boot_marker(self) -> None:
        """Notice that Redis restarted empty (its boot marker is new): every node's key went with it, so nobody
        counts as dead until the nodes have had a heartbeat's TTL to register again."""
        await self.redis.set(self.keys.boot, secrets.token_hex(8), nx=True)
        marker = await self.redis.get(self.keys.boot)
        if marker != self.boot:
            if self.boot is not None:
                self.settle_until = asyncio.get_running_loop().time() + NODE_TTL_MS / 1000
            self.boot = marker

    async def _beats(self) -> None:
        """Every BEAT_S: heartbeat, leases, and the takeover of rooms whose owner is dead."""
        while True:
            await asyncio.sleep(BEAT_S)
            try:
                await self._beat()
                await self._failover()
            except DOWN_ERRORS as exc:
                log.debug("heartbeat skipped: redis away (%s)", exc)
            except Exception:
                log.exception("bug in the cluster heartbeat")

    async def _failover(self) -> None:
        """Sessions forwarded from dead nodes are disconnected; rooms of dead owners are claimed (lease first)."""
        if asyncio.get_running_loop().time() < self.settle_until or not self.bus.connected:
            return  # Redis restarted a moment ago (or is away): a missing key says nothing about its node yet
        live = self.registry.live
        for session, remote in list(self.remotes.items()):
            if remote.edge not in live:
                self._gone(session, remote.edge)
        await self.tours.failover()  # tournaments first: their games' rooms go to the tournament's new node
        await self._claim_orphaned_rooms()
        self._reroute_held()
        await self._forget_dead_nodes()

    async def _claim_orphaned_rooms(self) -> None:
        """Claim the rooms listed as this node's by a previous run, and those whose owner is dead or let them go."""
        mine = set(self.epochs) | set(self.reserved)
        stale = [c for c, e in self.directory.entries.items() if e.owner == self.id and c not in mine]
        for code in stale:
            await self.claim(code)  # listed as this node's by a previous run under the same --node-id
        others = [code for code, entry in self.directory.entries.items() if entry.owner != self.id]
        leases = await self.redis.mget([self.keys.lease(code) for code in others]) if others else []
        live = self.registry.live
        for code, lease in zip(others, leases, strict=True):
            entry = self.directory.entries.get(code)
            if entry is not None and entry.owner != self.id and (entry.owner not in live or lease is None):
                await self.claim(code)  # its owner is dead, or let it go: whoever takes the lease first runs it

    def _reroute_held(self) -> None:
        """Requests held for a dead node go to the rooms' new owners (frames held for a dead edge are dropped)."""
        inbox = self.keys.inbox("")
        for channel in self.bus.held_channels():
            if not channel.startswith(inbox) or channel[len(inbox) :] in self.registry.live:
                continue
            for data in self.bus.take_held(channel):
                if data.startswith(b'{"t":"m"'):
                    self.server.spawn(self._reroute(data))

    async def _forget_dead_nodes(self) -> None:
        """A dead node none of whose rooms is still listed under it is forgotten, with its sessions."""
        owners = {entry.owner for entry in self.directory.entries.values()}
        for node in self.dead - owners:  # every room of the dead node is someone's now: forget the node
            for listed, raw in (await self.redis.hgetall(self.keys.online)).items():
                if json.loads(raw).get("e") == node:
                    await self.redis.hdel(self.keys.online, listed)
            await self.registry.forget(node)

    async def _fresh_start(self) -> None:
        """A node starting under the id of an earlier run: the sessions that run had are gone, here and elsewhere."""
        for session, raw in (await self.redis.hgetall(self.keys.online)).items():
            with contextlib.suppress(ValueError, AttributeError):
                if json.loads(raw).get("e") == self.id:
                    await self.redis.hdel(self.keys.online, session)
        self.bus.publish(self.keys.everyone, pack({"t": "z", "e": self.id}))

    async def _present(self) -> None:
        """At start: everyone connected to the other live nodes is present here (players, challenges)."""
        for field, raw in (await self.redis.hgetall(self.keys.online)).items():
            session = field.decode() if isinstance(field, bytes) else str(field)
            header = self.records.open(self._online(session), raw)
            if header is not None and header.get("e") in self.registry.live and header.get("e") != self.id:
                self._attach(session, str(header["e"]), header)

    async def _adopt_orphans(self) -> None:
        """At start: rooms open in the store that no node lists (the whole cluster was down) are claimed."""
        if self.server.store is None:
            return
        for stored in self.server.store.unfinished_rooms():
            if stored.code not in self.directory.entries:
                await self.claim(stored.code)

    async def claim(self, code: str) -> None:
        """Take a room over: its lease, a new epoch in the store, its state from the store, its players back."""
        store = self.server.store
        if store is None or code in self.claiming or code in self.lobby.rooms or not self.tours.may_claim(code):
            return
        self.claiming.add(code)
        try:
            if not await self.leases.acquire(code):
                return
            try:
                epoch = store.claim_room(code)
                stored = store.open_room(code) if epoch is not None else None
            except StoreError as exc:
                log.error("cannot take room %s over: %s", code, exc)
                await self.leases.release(code)
                return
            if stored is None:  # closed meanwhile: nothing to run; the directory forgets it
                self.tours.room_lost(code)
                await self.directory.put(code, None)
                await self.directory.delete(code)
                await self.leases.release(code)
                return
            skipped = len(self.lobby.directory.skipped)
            out = self.lobby.restore([stored], self.server.clock.now())
            if len(self.lobby.directory.skipped) > skipped:
                log.error("room %s cannot be restored: %s", code, self.lobby.directory.skipped[-1][1])
                self.tours.room_lost(code)
                await self.leases.release(code)
                return
            assert epoch is not None
            self.epochs[code] = epoch
            self.claims += 1
            if self.lobby.listing.cluster_changes is not None:
                self.lobby.listing.cluster_changes.pop(code, None)
            await self.directory.put(code, self._summary(code), self.lobby.directory.hosts.get(code))
            self.server.deliver(out)
            log.info("took room %s over (epoch %d)", code, epoch)
            await self._attach_holders(code)
        finally:
            self.claiming.discard(code)

    async def _attach_holders(self, code: str) -> None:
        """The people holding seats in a room just taken over get them back where they are connected now."""
        room = self.lobby.rooms.get(code)
        if room is None:
            return
        for seat in room.seats:
            if seat.holder is None:
                continue
            session = seat.holder.session
            ws = self.server.connections.get(session)
            if ws is not None and not isinstance(ws, Relay):
                self.server.deliver(self.lobby.reattach(session, self.server.clock.now()))
                continue
            edge = await self.redis.get(self.keys.where(session))
            edge_id = edge.decode() if isinstance(edge, bytes) else edge
            if not edge_id or edge_id == self.id or edge_id not in self.registry.live:
                continue  # not connected anywhere now: the seat waits for a resume
            client = self.lobby.clients.get(session)
            if client is None:
                continue
            self._attach(session, edge_id, _identity(client))
            self.server.deliver(self.lobby.reattach(session, self.server.clock.now()))


def _tls_refused(exc: BaseException) -> bool:
    """True if a connection failed because the server's TLS certificate did not verify (not a passing outage)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _tag(node: str) -> str:
    """A node's tag: the prefix of the challenge ids it gives out (answers are forwarded to it)."""
    return hashlib.sha256(node.encode()).hexdigest()[:6]


def _identity(client: Client, lobby: Lobby | None = None) -> dict[str, Any]:
    """Who a session is, as forwarded to an owner (short keys: it rides on every forwarded request); with the
    lobby, also the public key (or protocol 2's key hash) that claimed its name (other nodes then know the claim)."""
    claim = lobby.sessions.claims.get(name_key(client.name)) if lobby is not None and client.claimed else None
    extra = {"k": claim.key_hash, "p": claim.public_key} if claim is not None else {}
    return extra | {
        "n": client.name,
        "h": client.token_hash,
        "b": client.bot,
        "c": client.claimed,
        "ip": client.ip,
        "a": list(client.accepts),
    }


def _encode(msg: Message) -> bytes:
    """A message in the wire's encoding (the protocol's codec)."""
    from gamenight.protocol import encode

    return encode(msg)
