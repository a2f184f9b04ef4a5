"""Tournaments in a cluster: each one runs on one node (its owner) with the rooms of its games in progress.

A tournament is run by the node it was created on, as on a lone server (server/tournament_host.py): that node's
lobby opens its games' rooms, seats entrants connected to any node (everyone is present on every node), scores
the results and pushes the standings. What this module adds is what rooms have already, for tournaments:

- **Ownership**: a lease in Redis per tournament (`Leases` under their own key prefix), renewed with the node's
  heartbeat, and an owner epoch in the store (`Store.claim_tournament`): every write of a tournament carries its
  epoch as a fence (`tournament_fence`), so a node that lost a tournament without knowing it cannot store a
  change of it (nor, therefore, tell anyone about one).
- **A directory** (`Directory` under the same prefix): tournament id -> {owner, listing summary}, mirrored in
  memory on every node. `list_tournaments` on any node lists every node's tournaments from it; a
  `join_tournament` / `leave_tournament` / `get_tournament` from a client on another node is forwarded to the
  owner as room requests are (the owner's replies and pushes reach the client through its relay).
- **Failover**: when a tournament's owner is dead (or its lease is free), another node takes its lease, raises its
  epoch, loads its state from the store and then takes over the rooms of its games in progress (the other nodes
  leave those rooms alone: the summary lists them). The tournament goes on there: finished games and standings as
  stored, the games in progress in their restored rooms, the schedule after them.
- **Co-location**: a tournament's rooms always run on its owner (its host code needs its games' rooms in its own
  lobby). A node asked to hand such a room over (it took it in a race) lets it go; the owner claims it next.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

from gamenight.protocol import ErrorCode, ProtocolError, decode
from gamenight.protocol.messages import (
    CancelTournament,
    Error,
    GetTournament,
    JoinTournament,
    LeaveTournament,
    Moderate,
)
from gamenight.server.cluster.coord import Directory, Entry, Keys, Leases
from gamenight.server.cluster.wire import pack, unpack
from gamenight.server.outgoing import Relay
from gamenight.server.records import Record, StoreError, TournamentSaved, tournament_fence

if TYPE_CHECKING:
    from gamenight.server.cluster.node import ClusterNode

log = logging.getLogger("gamenight.server.cluster")

TOURNAMENT_REQUESTS = (JoinTournament, LeaveTournament, GetTournament, CancelTournament)
"""Requests about one tournament: carried out by its owner, wherever the client is connected."""
MOVING_TEXT = "tournament {tid} is moving to another server node; try again in a moment"


class Tours:
    """A node's part in running the cluster's tournaments (see the module's text)."""

    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.host = node.lobby.tournaments
        self.keys = Keys(node.keys.prefix + "t:")  # gn:t:lease:<id>, gn:t:dir
        self.leases = Leases(node.redis, self.keys, node.id)
        self.directory = Directory(node.redis, self.keys, node.id, self._directory_changed, node.records)
        self.epochs: dict[str, int] = {}  # tournaments run here -> the store epoch their writes carry
        self.lost: set[str] = set()  # rooms of tournaments run here that are closed or cannot be restored
        self.claiming: set[str] = set()
        self.claims = 0  # tournaments taken over from other nodes (or found ownerless at start)
        self.host.changed = set()
        self.host.room_gone = lambda code: code not in node.lobby.rooms and code in self.lost
        self.host.taken = lambda tid: tid in self.directory.entries
        node.bus.channels.append(self.keys.directory)
        rooms = node.server.outgoing.fences

        def fences(records: list[Record]) -> dict[str, int]:
            found = rooms(records) if rooms is not None else {}
            for record in records:
                if isinstance(record, TournamentSaved) and record.id in self.epochs:
                    found[tournament_fence(record.id)] = self.epochs[record.id]
            return found

        node.server.outgoing.fences = fences

    # -- the edge: requests naming a tournament ----------------------------------------------------------------
    async def route(
        self,
        session: str,
        msg: JoinTournament | LeaveTournament | GetTournament | CancelTournament | Moderate,
        frame: Any,
    ) -> bool:
        """Forward a request about a tournament run elsewhere to its owner (True), or leave it to this node."""
        tid = (msg.tournament or "").strip().lower()
        owner = await self.owner(tid)
        if owner is None or owner == self.node.id:
            return False
        ws = self.node.server.connections.get(session)
        if owner == "":
            if ws is not None:
                error = Error(code=ErrorCode.UNAVAILABLE, message=MOVING_TEXT.format(tid=tid), id=msg.id)
                self.node.server.outgoing.add_frame([ws], _encode(error))
            return True
        self._forward(owner, session, tid, frame if isinstance(frame, bytes) else _encode(msg))
        return True

    def _forward(self, owner: str, session: str, tid: str, body: bytes) -> None:
        from gamenight.server.cluster.node import _identity

        client = self.node.lobby.clients[session]
        header = {"t": "m", "e": self.node.id, "s": session, **_identity(client, self.node.lobby), "tr": tid}
        self.node.bus.publish(self.node.keys.inbox(owner), pack(header, body), reach=True)

    async def owner(self, tid: str) -> str | None:
        """Who runs the tournament: this node, another live node, None (unknown), "" (its owner died and nobody
        took it over in time). Waits while it is being taken over."""
        from gamenight.server.cluster.node import OWNER_WAIT_S

        loop = asyncio.get_running_loop()
        deadline = loop.time() + OWNER_WAIT_S
        while True:
            if tid in self.host.tournaments:
                return self.node.id
            owner = self.directory.owner(tid)
            if owner is None:
                return None
            if owner != self.node.id and owner in self.node.registry.live:
                return owner
            if loop.time() > deadline:
                return ""
            await asyncio.sleep(0.05)

    async def reroute(self, data: bytes) -> None:
        """A request held for a node that died before it received it: sent on to the tournament's new owner."""
        header, body = unpack(data)
        session, tid = str(header.get("s")), str(header.get("tr"))
        ws = self.node.server.connections.get(session)
        if ws is None or isinstance(ws, Relay):
            return
        try:
            msg = decode(body)
        except ProtocolError:
            return
        owner = await self.owner(tid)
        if owner is None or owner == self.node.id:
            self.node.server.handle_message(ws, session, msg)
        elif owner:
            self.node.bus.publish(self.node.keys.inbox(owner), data, reach=True)

    # -- publishing this node's tournaments --------------------------------------------------------------------
    def publish(self) -> None:
        """After a decision: the directory entries of this node's tournaments that changed (in bus order, before
        the entries of the rooms it opened, so no node takes those rooms for ordinary ones)."""
        changed = self.host.changed
        if not changed:
            return
        ids = list(changed)
        changed.clear()
        for tid in ids:
            t = self.host.tournaments.get(tid)
            if t is None:
                continue
            new = tid not in self.epochs
            if new:
                self.epochs[tid] = 0  # a new tournament: stored under epoch 0 until someone claims it
            self.node.bus.call(functools.partial(self._put, tid, self.host.summary(t), new))

    async def _put(self, tid: str, summary: dict[str, Any], new: bool) -> None:
        if new and not await self.leases.acquire(tid):
            self.drop(tid, "its id is leased by another node")
            return
        if not await self.directory.put(tid, summary) and tid in self.epochs:
            self.drop(tid, "its lease is another node's")

    def _directory_changed(self, tid: str, before: Entry | None, after: Entry | None) -> None:
        """A tournament of the cluster appeared, changed or moved: the listing follows; one run here that another
        node published as its own is let go here."""
        if after is not None and after.owner != self.node.id and tid in self.epochs:
            self.drop(tid, f"node {after.owner} runs it now")
        if after is None or after.owner == self.node.id or after.summary is None:
            self.host.remote.pop(tid, None)
        else:
            self.host.remote[tid] = after.summary

    # -- ownership ---------------------------------------------------------------------------------------------
    def drop(self, tid: str, why: str) -> None:
        """This node does not run the tournament any more: forget it and the rooms of its games (nothing written,
        nothing sent); their leases are given up, so its new owner takes them at once."""
        log.warning("tournament %s let go: %s", tid, why)
        self.epochs.pop(tid, None)
        for code in self.host.drop(tid):
            if code in self.node.epochs:
                self.node.let_go(code, f"its tournament {tid} is not run here")
                self.node.bus.call(functools.partial(self.node.leases.release, code))
        self.node.bus.call(functools.partial(self.leases.release, tid))
        entry = self.directory.entries.get(tid)
        if entry is not None and entry.owner != self.node.id and entry.summary is not None:
            self.host.remote[tid] = entry.summary

    def fenced(self, records: list[Record]) -> None:
        """A batch was refused because another node claimed one of its rooms or tournaments: the tournaments of
        the batch are behind the store here now, so they are let go (the store's state is taken over again)."""
        for record in records:
            if isinstance(record, TournamentSaved) and record.id in self.epochs:
                self.drop(record.id, "a write of it was fenced")

    def may_claim(self, code: str) -> bool:
        """False for a room of a game of a tournament another node runs (or will run): that node takes it."""
        if code in self.host.by_room:
            return True
        for tid, entry in self.directory.entries.items():
            if tid not in self.epochs and entry.summary is not None and code in entry.summary.get("rooms", ()):
                return False
        return True

    def room_lost(self, code: str) -> None:
        """A room of a game of a tournament run here is closed in the store or cannot be restored: the game is
        played again (round robin) or forgotten (arena), as on a lone server."""
        if code in self.host.by_room:
            self.lost.add(code)

    def hand_over(self, header: dict[str, Any]) -> None:
        """The owner of a tournament asks for the room of one of its games, which this node took in a race."""
        code = header.get("r")
        if isinstance(code, str) and code in self.node.epochs and code not in self.host.by_room:
            self.node.let_go(code, f"its tournament runs on node {header.get('e')}")
            self.node.bus.call(functools.partial(self.node.leases.release, code))

    async def beat(self) -> None:
        """Renew the leases of this node's tournaments (one another node holds is let go)."""
        for tid in await self.leases.renew(list(self.epochs)):
            if tid in self.epochs:
                self.drop(tid, "its lease is another node's")

    async def failover(self) -> None:
        """Take over the tournaments of dead owners, and gather the rooms of this node's tournaments' games."""
        live, me = self.node.registry.live, self.node.id
        entries = self.directory.entries
        stale = [tid for tid, e in entries.items() if e.owner == me and tid not in self.epochs]
        others = [tid for tid, e in entries.items() if e.owner != me]
        leases = await self.node.redis.mget([self.keys.lease(tid) for tid in others]) if others else []
        for tid, lease in zip(others, leases, strict=True):
            entry = entries.get(tid)
            if entry is not None and entry.owner != me and (entry.owner not in live or lease is None):
                await self.claim(tid)
        for tid in stale:
            await self.claim(tid)
        for tid in list(self.epochs):
            await self._gather(tid)
        self.lost &= set(self.host.by_room)

    async def _gather(self, tid: str) -> None:
        """The rooms of a tournament's games in progress run here: each one that does not is claimed (its owner
        died) or asked for (another node took it in a race)."""
        node = self.node
        for code, (owner_tid, _) in list(self.host.by_room.items()):
            if owner_tid != tid or code in node.lobby.rooms or code in node.claiming or code in self.lost:
                continue
            owner = node.directory.owner(code)
            if owner is not None and owner != node.id and owner in node.registry.live:
                node.bus.publish(node.keys.inbox(owner), pack({"t": "tg", "r": code, "e": node.id}))
                continue
            await node.claim(code)

    async def claim(self, tid: str) -> None:
        """Take a tournament over: its lease, a new epoch in the store, its state from the store, then its rooms."""
        store = self.node.server.store
        if store is None or tid in self.claiming or tid in self.host.tournaments:
            return
        self.claiming.add(tid)
        try:
            if not await self.leases.acquire(tid):
                return
            try:
                claimed = store.claim_tournament(tid)
            except StoreError as exc:
                log.error("cannot take tournament %s over: %s", tid, exc)
                await self.leases.release(tid)
                return
            t = self.host.adopt(claimed[1]) if claimed is not None else None
            if claimed is None or t is None:  # not in the store (or unreadable): nothing to run; unlisted
                log.error("tournament %s cannot be taken over: not readable in the store", tid)
                await self.directory.put(tid, None)
                await self.directory.delete(tid)
                await self.leases.release(tid)
                return
            self.epochs[tid] = claimed[0]
            self.claims += 1
            assert self.host.changed is not None
            self.host.changed.discard(tid)
            await self.directory.put(tid, self.host.summary(t))
            log.info("took tournament %s over (epoch %d)", tid, claimed[0])
            await self._gather(tid)
            self.node.server.deliver(self.host.sweep(self.node.server.clock.now()))
        finally:
            self.claiming.discard(tid)

    async def adopt_orphans(self) -> None:
        """At start: tournaments in the store that no node lists (the whole cluster was down) are claimed."""
        store = self.node.server.store
        if store is None:
            return
        try:
            stored = store.tournaments()
        except StoreError as exc:
            log.error("cannot read the stored tournaments: %s", exc)
            return
        for raw in stored:
            tid = raw.get("id")
            if isinstance(tid, str) and tid not in self.directory.entries:
                await self.claim(tid)

    async def connected(self, again: bool) -> None:
        """Subscribed (again): after a reconnect this node's leases are taken back and its entries published
        again (Redis may have restarted empty); then the directory is read whole."""
        if again:
            for tid in list(self.epochs):
                if not await self.leases.acquire(tid):
                    self.drop(tid, "its lease was taken while redis was away")
            for tid in list(self.epochs):
                t = self.host.tournaments.get(tid)
                if t is not None:
                    await self.directory.put(tid, self.host.summary(t))
        await self.directory.load()

    async def leave(self) -> None:
        """A clean stop: the leases go now (other nodes take the tournaments at once)."""
        for tid in list(self.epochs):
            await self.leases.release(tid)


def _encode(msg: Any) -> bytes:
    from gamenight.protocol import encode

    return encode(msg)
